"""What a new user hit (issue 29, item 5): errors that name the subcommand, a probe that
cannot write its directory or was interrupted, a cut raw file, numbers without e-notation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import bspkit_in_process

# every subcommand (and cluster action) with the arguments it needs to get past argparse
SUBCOMMANDS = [
    ("probe", []),
    ("fit", ["raw.jsonl"]),
    ("report", ["run"]),
    ("compare", ["a", "b"]),
    ("run", ["inprod"]),
    ("validate", ["inprod"]),
    ("predict", ["inprod"]),
    ("calibrate", []),
    ("imh", ["inprod"]),
    ("profile", ["prof.json"]),
    ("cluster up", ["--hosts", "2", "--rate", "100mbit"]),
    ("cluster down", []),
    ("cluster status", []),
]


@pytest.mark.parametrize("command, needed", SUBCOMMANDS, ids=[c for c, _ in SUBCOMMANDS])
def test_an_unknown_option_is_the_subcommands_usage_error(
    capsys: pytest.CaptureFixture[str], command: str, needed: list[str]
) -> None:
    rc, out, err = bspkit_in_process(capsys, *command.split(), *needed, "--nosuch")
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"usage: bspkit {command} "), err  # the subcommand's usage, not the top level's
    assert lines[-1] == f"bspkit {command}: error: unrecognized arguments: --nosuch"


def test_the_top_levels_errors_stay_bspkits(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = bspkit_in_process(capsys, "--nosuch")
    assert rc == 2 and err.splitlines()[-1].startswith("bspkit: error: ")
    rc, _out, err = bspkit_in_process(capsys)
    assert rc == 2 and err.splitlines()[-1].startswith("bspkit: error: a command is needed")


@pytest.mark.parametrize(
    "args, status, message",
    [
        # argparse's usage error, bspkit's usage error (console.UsageError) and a failure: one form
        (["run", "inprod", "-n", "0"], 2, "argument -n/--nprocs: '0' is not a positive integer (at least 1)"),
        (["compare", "only-one"], 2, "compare needs at least two runs"),
        (["probe", "--suites", "nope"], 2, "--suites: unknown suite 'nope'"),
        (["fit", "/nonexistent/raw.jsonl"], 1, "/nonexistent/raw.jsonl: no such file or directory"),
        (["report", "/nonexistent-run"], 1, "/nonexistent-run: no such file or directory"),
    ],
)
def test_every_error_names_its_subcommand(
    capsys: pytest.CaptureFixture[str], args: list[str], status: int, message: str
) -> None:
    rc, _out, err = bspkit_in_process(capsys, *args)
    assert rc == status, err
    last = err.splitlines()[-1]
    assert last.startswith(f"bspkit {args[0]}: error: ") and message in last, err
    if status == 2:
        assert err.startswith(f"usage: bspkit {args[0]} "), err
    assert "bspkit: error" not in err


# ------------------------------------------------------ a probe's output directory


def test_a_probe_into_a_directory_it_cannot_write_is_one_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A path under a regular file cannot be made, root or not: one error line, exit status 1,
    nothing run (the binary given does not exist: it is never looked at)."""
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "sub"
    rc, _out, err = bspkit_in_process(
        capsys, "probe", "-n", "2", "--probe-binary", str(tmp_path / "nope"), "--output-dir", str(out)
    )
    assert rc == 1, err
    assert err.splitlines() == [
        f"bspkit probe: error: cannot write the run in {out}: {tmp_path / 'file'} is not a directory"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_probe_into_a_read_only_directory_is_one_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    rc, _out, err = bspkit_in_process(capsys, "probe", "-n", "2", "--output-dir", str(ro / "run"))
    assert rc == 1 and err.splitlines() == [
        f"bspkit probe: error: cannot write the run in {ro / 'run'}: {ro} is not writable"
    ]
