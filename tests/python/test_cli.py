"""The bspkit command end to end: fit, report, compare on synthetic runs; probe on a tiny
grid with the real bspprobe when the build has one; usage errors."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import assert_self_contained, report_pngs, run_bspkit

from bspkit.synth import GTruth, SynthSpec, write_synthetic

BUILD = Path(os.environ["BSPKIT_BUILD_DIR"]) if os.environ.get("BSPKIT_BUILD_DIR") else None
PROBE = BUILD / "probe" / "bspprobe" if BUILD else None
BSPRUN = BUILD / "bin" / "bsprun" if BUILD else None
HAVE_PROBE = bool(PROBE and PROBE.is_file() and BSPRUN and BSPRUN.is_file())
NO_PROBE = (
    "BSPKIT_BUILD_DIR is not set"
    if BUILD is None
    else f"no bspprobe built in {BUILD} ({PROBE} or {BSPRUN} missing): run scripts/build.sh first"
)
# a tiny grid: two primitives, one pattern each way, h <= 256 words, 3 repetitions
TINY = ["--primitives", "put,get", "--patterns", "alltoall,shift", "--max-words", "256", "--reps", "3", "--seed", "5"]


def expected_plots(params: dict) -> int:
    """One g surface per primitive/pattern, plus latency, f, As total exchange, validation, memcpy."""
    n = len(params["g"])
    n += bool(params["l_detail"] or params["as"]["tests"])
    n += any(d.get("s_per_op") for d in params["f_detail"].values())
    n += bool(params["as"]["total_exchange"])
    n += bool(params["validation"]["used"])
    n += bool(params["memcpy_detail"] and params["memcpy_s_per_word"] and any(e.get("predict") for e in params["g"].values()))
    return n


def check_report(path: Path, params: dict) -> str:
    html = path.read_text()
    assert_self_contained(html)
    pngs = report_pngs(html)
    assert len(pngs) == expected_plots(params)
    return html


# --------------------------------------------------------------- fit and report


def test_fit_and_report_on_synthetic_run(synth_run: Path) -> None:
    r = run_bspkit("fit", str(synth_run / "raw.jsonl"))
    assert r.returncode == 0, r.stderr
    assert "parameters written to" in r.stdout and "put/alltoall" in r.stdout
    assert "bspkit: fitting" in r.stderr  # progress on stderr
    params = json.loads((synth_run / "params.json").read_text())
    assert params["format"] == 1 and params["p"] == 2
    assert set(params) >= {"format", "source", "machine", "p", "f", "l", "memcpy_s_per_word", "g", "validation"}
    assert params["machine"]["blas_coretype"] == "Haswell" and params["machine"]["backend"] == "threads"
    assert set(params["l"]) == {"empty", "shift", "alltoall"}
    assert set(params["g"]) == {"put/alltoall", "get/permutation"}
    e = params["g"]["put/alltoall"]
    for k in ("g_inf", "g_small", "h_half", "g_mm", "o", "lsq", "error_bsp", "error_bspstar", "flags"):
        assert k in e
    assert set(e["lsq"]) >= {"g_inf", "h_half", "o", "l0", "model", "residual_rel_rms"}
    assert e["lsq"]["model"] == "2.6"
    assert e["lsq"]["g_inf"][0] == pytest.approx(1e-9, rel=0.03)
    assert e["lsq"]["h_half"][0] == pytest.approx(2000, rel=0.05)
    assert e["lsq"]["o"][0] == pytest.approx(16, rel=0.1)
    assert params["validation"]["pass"] is True

    r = run_bspkit("report", str(synth_run))
    assert r.returncode == 0, r.stderr
    html = check_report(synth_run / "report.html", params)
    assert len(report_pngs(html)) == 7
    for text in ("Machine and build", "Haswell", "Table C.1", "Table C.2", "Table C.3", "As suite", "Total exchange: t/h",
                 "Validation", "memcpy", "ε_BSP*", "Random Permutation", "All-to-all"):
        assert text in html, text


def test_fit_to_stdout_and_named_output(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "probe-a.jsonl", SynthSpec(validation=0))
    r = run_bspkit("fit", str(raw), "-o", "-")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["g"]["put/alltoall"]["lsq"]["g_inf"][0] > 0
    r = run_bspkit("fit", str(raw))
    assert r.returncode == 0 and (tmp_path / "probe-a.params.json").is_file()
    r = run_bspkit("report", str(raw), "--write-params")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "probe-a.report.html").is_file()


def test_report_of_failed_fit_shows_reason(tmp_path: Path) -> None:
    spec = SynthSpec(g={"put/alltoall": GTruth(1e-9, 2000.0, 0.0)}, noise=0.05, seed=3, validation=4)
    d = tmp_path / "run"
    write_synthetic(d / "raw.jsonl", spec)
    assert run_bspkit("fit", str(d)).returncode == 0
    params = json.loads((d / "params.json").read_text())
    assert params["g"]["put/alltoall"]["lsq"]["o"] is None
    r = run_bspkit("report", str(d), "-o", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
    html = check_report(tmp_path / "r.html", params)
    assert "failed fit: lsq (2.6) o" in html


def test_report_of_several_runs_in_one_file(tmp_path: Path) -> None:
    a = write_synthetic(tmp_path / "a" / "raw.jsonl", SynthSpec(seed=1))
    b = write_synthetic(tmp_path / "b" / "raw.jsonl", SynthSpec(seed=2, validation=0, as_suite=False))
    out = tmp_path / "both.html"
    r = run_bspkit("report", str(a.parent), str(b), "-o", str(out))
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 7 + 5  # b: no As total exchange, no validation
    assert "Run 1:" in html and "Run 2:" in html


# ---------------------------------------------------------------------- compare


def test_compare_two_runs(tmp_path: Path) -> None:
    fast = write_synthetic(tmp_path / "fast" / "raw.jsonl", SynthSpec(seed=1, library="bspkit"))
    slow_spec = SynthSpec(
        seed=2,
        library="otherbsp",
        backend="unknown",
        g={"put/alltoall": GTruth(3e-9, 5000.0, 40.0), "get/permutation": GTruth(2.1e-9, 820.0, 118.0)},
        l={"empty": 5e-6, "shift": 8e-6, "alltoall": 9e-6},
    )
    slow = write_synthetic(tmp_path / "slow" / "raw.jsonl", slow_spec)
    assert run_bspkit("fit", str(slow)).returncode == 0
    out = tmp_path / "cmp.html"
    # one run given as a directory (refit), one as its params.json
    r = run_bspkit("compare", str(fast.parent), str(slow.parent / "params.json"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "R1: bspkit/threads" in r.stdout and "R2: otherbsp/unknown" in r.stdout
    lines = {ln.split("  ")[0].strip(): ln for ln in r.stdout.splitlines()}
    assert re.search(r"Latency\s+●●●\s+●\s*$", lines["Latency"])
    assert re.search(r"Communication gap \(put/get\)\s+●●●\s+●\s*$", lines["Communication gap (put/get)"])
    assert re.search(r"Computation speed \(f\)\s+●●●\s+●●●", lines["Computation speed (f)"])  # same f: both best
    html = out.read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 3
    for text in ("Ranking", "Table 6.1", "g_inf [ns/word]", "h_half [words]", "o [words]", "latency l", "As total exchange"):
        assert text in html, text


# ------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "a command is needed"),
        (["frobnicate"], "invalid choice"),
        (["fit"], "the following arguments are required"),
        (["compare", "only-one"], "at least two runs"),
        (["probe", "-n", "0"], "-n must be a positive integer"),
        (["probe", "-n", "two"], "invalid int value"),
        (["probe", "--bspcc", "x", "--probe-binary", "y"], "exclude each other"),
        (["report"], "the following arguments are required"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    r = run_bspkit(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert message in r.stderr
    assert "usage:" in r.stderr


def test_failures_exit_1(tmp_path: Path) -> None:
    r = run_bspkit("fit", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 1 and "no such file or directory" in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "g"}\n')
    r = run_bspkit("fit", str(bad))
    assert r.returncode == 1 and "bspkit: error:" in r.stderr and "bad.jsonl:1" in r.stderr
    r = run_bspkit("report", str(tmp_path))
    assert r.returncode == 1 and "no raw.jsonl" in r.stderr
    r = run_bspkit("probe", "--probe-binary", str(tmp_path / "nope"), "--output-dir", str(tmp_path / "o"))
    assert r.returncode == 1 and "no such file" in r.stderr


def test_help_of_every_command() -> None:
    for cmd in ([], ["probe"], ["fit"], ["report"], ["compare"]):
        r = run_bspkit(*cmd, "--help")
        assert r.returncode == 0 and "usage: bspkit" in r.stdout
    r = run_bspkit("probe", "--help")
    for opt in ("--quick", "--bspcc", "--launcher", "--probe-binary", "--output-dir", "--library-name", "-- "):
        assert opt in r.stdout, opt


# -------------------------------------------------------------- probe, for real


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
def test_probe_quick_tiny_grid(tmp_path: Path) -> None:
    out = tmp_path / "probe-run"
    r = run_bspkit(
        "probe", "--quick", "-n", "2", "--probe-binary", str(PROBE), "--build-dir", str(BUILD), "--output-dir", str(out),
        "--", *TINY,
        timeout=180,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bspprobe:" in r.stderr  # bspprobe's progress is passed through
    assert "report:" in r.stdout
    for f in ("raw.jsonl", "params.json", "report.html"):
        assert (out / f).is_file(), f
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2 and params["machine"]["mode"] == "quick"
    assert params["machine"]["library"] == "bspkit" and params["machine"]["backend"] == "threads"
    assert set(params["g"]) == {"put/alltoall", "put/shift", "get/alltoall", "get/shift"}
    assert set(params["l"]) == {"empty", "shift", "alltoall"}
    assert all(v is None or v > 0 for v in params["l"].values())
    assert params["f"] and params["memcpy_s_per_word"] and params["memcpy_s_per_word"] > 0
    for key, e in params["g"].items():
        t = e["lsq"]["g_inf"]
        assert t is None or 0 < t[1] <= t[0] <= t[2], key
    check_report(out / "report.html", params)


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
def test_probe_through_a_launcher(tmp_path: Path) -> None:
    """--launcher: bspprobe runs through a user command with {p} replaced (here: env)."""
    out = tmp_path / "launched"
    r = run_bspkit(
        "probe", "-n", "2", "--probe-binary", str(PROBE), "--launcher", "env BSPKIT_NPROCS={p}",
        "--library-name", "launched-lib", "--output-dir", str(out),
        "--", "--only", "l,g", "--primitives", "put", "--patterns", "shift", "--max-words", "64", "--reps", "3",
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "running: BSPKIT_NPROCS=2 BSP_NPROCS=2 env BSPKIT_NPROCS=2" in r.stderr
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2 and params["machine"]["library"] == "launched-lib"
    assert set(params["g"]) == {"put/shift"}


@pytest.mark.skipif(not (HAVE_PROBE and BUILD and (BUILD / "bin" / "bspcc").is_file() and shutil.which("cc")),
                    reason="no bspcc in the build directory (or no C compiler) to stand in for another BSPlib")
def test_probe_against_another_library_with_bspcc(tmp_path: Path) -> None:
    """--bspcc: compiles probe/*.c with a library's compiler wrapper (bspkit's own bspcc
    stands in for another BSPlib) and runs the binary directly with BSPKIT_NPROCS/BSP_NPROCS."""
    out = tmp_path / "other"
    r = run_bspkit(
        "probe", "-n", "2", "--bspcc", str(BUILD / "bin" / "bspcc"), "--library-name", "stand-in",
        "--output-dir", str(out),
        "--", "--only", "l,g", "--primitives", "put", "--patterns", "shift", "--max-words", "64", "--reps", "3",
        timeout=180,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "bspprobe-other").is_file()
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2 and params["machine"]["library"] == "stand-in"
    assert params["machine"]["backend"] == "unknown"  # built without bspkit's extensions
    check_report(out / "report.html", params)
