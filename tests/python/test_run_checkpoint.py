"""`bspkit run ALG --checkpoint-dir DIR` and `--restart DIR`: passed on to bsprun, a killed run
restarted through the command gives the result of an uninterrupted one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import needs_programs, run_bspkit


@needs_programs("bsprun", "bspalg-rdxsort")
def test_run_restarts_from_a_checkpoint_through_the_command(tmp_path: Path) -> None:
    common = ["run", "rdxsort", "-n", "2", "--size", "20000"]
    whole = run_bspkit(*common, "--json", str(tmp_path / "whole.json"))
    assert whole.returncode == 0, whole.stderr
    expected = json.loads((tmp_path / "whole.json").read_text())
    assert expected["restarted"] is False

    saving = run_bspkit(*common, "--checkpoint-dir", str(tmp_path / "first"), "--json", str(tmp_path / "saving.json"))
    assert saving.returncode == 0, saving.stderr
    saved = json.loads((tmp_path / "saving.json").read_text())
    assert saved["result_digest"] == expected["result_digest"]
    steps = saved["checkpoints"]
    assert steps["saved"] >= 2, steps
    middle = (steps["first_superstep"] + steps["last_superstep"]) // 2

    ckpt = tmp_path / "ckpt"
    killed = run_bspkit(*common, "--checkpoint-dir", str(ckpt), env={"BSPKIT_KILL_AT": f"1:{middle}"})
    assert killed.returncode == 1, killed.stdout + killed.stderr
    assert "rdxsort failed" in killed.stderr
    assert any((g / "MANIFEST").exists() for g in ckpt.glob("superstep-*")), "no complete checkpoint"

    again = run_bspkit(*common, "--restart", str(ckpt), "--json", str(tmp_path / "again.json"))
    assert again.returncode == 0, again.stderr
    restarted = json.loads((tmp_path / "again.json").read_text())
    assert restarted["restarted"] is True
    assert restarted["verified"] is expected["verified"] is True
    assert restarted["result_digest"] == expected["result_digest"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--checkpoint-every", "60s"], "--checkpoint-every needs --checkpoint-dir"),
        (["--checkpoint-dir", "/tmp/x", "--checkpoint-every", "5x"], "is not a time"),
        (
            ["--checkpoint-dir", "/tmp/x", "--checkpoint-every", "60s", "--checkpoint-mtbf", "10h"],
            "--checkpoint-every and --checkpoint-mtbf exclude each other",
        ),
    ],
)
@needs_programs("bsprun", "bspalg-rdxsort")
def test_run_passes_bspruns_checkpoint_errors_on(args: list[str], message: str) -> None:
    bad = run_bspkit("run", "rdxsort", "-n", "2", "--size", "2000", *args)
    assert bad.returncode == 1, bad.stderr
    assert message in bad.stderr
