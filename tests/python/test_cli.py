"""The bspkit command line end to end: fit's outputs, usage errors (exit 2) and failures
(exit 1), every command's --help, and probe on a tiny grid with the real bspprobe when the
build has one (the reports themselves: test_report.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bspkit import __version__

from conftest import BUILD, check_report, run_bspkit
from synth import SynthSpec, write_synthetic

PROBE = BUILD / "probe" / "bspprobe" if BUILD else None
BSPRUN = BUILD / "bin" / "bsprun" if BUILD else None
HAVE_PROBE = bool(PROBE and PROBE.is_file() and BSPRUN and BSPRUN.is_file())
NO_PROBE = (
    "BSPKIT_BUILD_DIR is not set"
    if BUILD is None
    else f"no bspprobe built in {BUILD} ({PROBE} or {BSPRUN} missing): run scripts/build.sh first"
)
# a tiny grid: two primitives, one pattern each way, h <= 256 words, 3 repetitions; and the
# memory-hierarchy suites on small arrays, messages and files
TINY = [
    "--primitives",
    "put,get",
    "--patterns",
    "alltoall,shift",
    "--max-words",
    "256",
    "--reps",
    "3",
    "--seed",
    "5",
    "--mem-max-bytes",
    "1048576",
    "--pp-max-bytes",
    "65536",
    "--disk-max-bytes",
    "262144",
]


# bspprobe's own options for a probe of seconds: l and one g surface (put, shift) up to 64 words.
TINY_PROBE = ("--", "--only", "l,g", "--primitives", "put", "--patterns", "shift", "--max-words", "64", "--reps", "3")


# --------------------------------------------------------------- fit and report


@pytest.mark.slow
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


# ------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "a command is needed"),
        (["frobnicate"], "invalid choice"),
        (["fit"], "the following arguments are required"),
        (["compare", "only-one"], "at least two runs"),
        # one rule for -n in every command: a positive integer
        (["probe", "-n", "0"], "argument -n/--nprocs: '0' is not a positive integer (at least 1)"),
        (["probe", "-n", "two"], "argument -n/--nprocs: 'two' is not a positive integer"),
        (["run", "inprod", "-n", "0"], "argument -n/--nprocs: '0' is not a positive integer (at least 1)"),
        (["run", "inprod", "-n", "-3"], "argument -n/--nprocs: '-3' is not a positive integer"),
        (["run", "inprod", "-n", "2.5"], "argument -n/--nprocs: '2.5' is not a positive integer"),
        (["validate", "inprod", "-n", "0"], "argument -n/--nprocs: '0' is not a positive integer (at least 1)"),
        (["validate", "inprod", "-n", "x"], "argument -n/--nprocs: 'x' is not a positive integer"),
        (["run", "inprod", "--size", "0"], "argument --size: '0' is not a positive integer"),
        (["validate", "inprod", "--timeout", "0"], "argument --timeout: '0' is not a positive number"),
        (
            ["run", "inprod", "--params", "p.json", "--predict"],
            "argument --predict: not allowed with argument --params",
        ),
        (["probe", "--bspcc", "x", "--probe-binary", "y"], "exclude each other"),
        (["probe", "--suites", "mem,nope"], "--suites: unknown suite 'nope'; choose from bsp, mem, pp, disk, all"),
        (["probe", "--suites", "mem,"], "an empty name in the list"),
        (
            ["probe", "--suites", "pp", "--", "--only", "g"],
            "--suites and bspprobe's --only (after --) exclude each other",
        ),
        (["probe", "--disk-dir", "/nonexistent-bspkit-dir"], "--disk-dir /nonexistent-bspkit-dir: no such directory"),
        (["report"], "the following arguments are required"),
        (["no-such-command"], "invalid choice"),
    ],
)
@pytest.mark.slow
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    r = run_bspkit(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert message in r.stderr
    assert "usage:" in r.stderr


@pytest.mark.slow
def test_failures_exit_1(tmp_path: Path) -> None:
    r = run_bspkit("fit", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 1 and "no such file or directory" in r.stderr
    r = run_bspkit("fit", "/nonexistent/raw.jsonl")
    assert r.returncode == 1 and "nonexistent" in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "g"}\n')
    r = run_bspkit("fit", str(bad))
    assert r.returncode == 1 and "bspkit fit: error:" in r.stderr and "bad.jsonl:1" in r.stderr
    r = run_bspkit("report", str(tmp_path))
    assert r.returncode == 1 and "no raw.jsonl" in r.stderr
    r = run_bspkit(
        "probe",
        "--probe-binary",
        str(tmp_path / "nope"),
        "--output-dir",
        str(tmp_path / "o"),
    )
    assert r.returncode == 1 and "no such file" in r.stderr


@pytest.mark.slow
def test_help_of_every_command() -> None:
    for cmd in ([], ["probe"], ["fit"], ["report"], ["compare"]):
        r = run_bspkit(*cmd, "--help")
        assert r.returncode == 0 and "usage: bspkit" in r.stdout
    r = run_bspkit("probe", "--help")
    for opt in (
        "--quick",
        "--bspcc",
        "--launcher",
        "--probe-binary",
        "--output-dir",
        "--library-name",
        "-- ",
    ):
        assert opt in r.stdout, opt


# -------------------------------------------------------------- probe, for real


# ---------------------------------------------------- what a successful probe's file holds
#
# docs/probe-format.md: a value that came out negative, or whose interval spans zero, is null
# with the reason in `flags` (the file's for f and l, the surface's for g); an IMH fit's model
# value is 0 when its coefficient was dropped (flagged), and a time per byte is null where no
# size took longer than the start-up (flagged). Every null and every 0 below must come with
# that reason in the file: none is taken on trust.


def flagged(flags: list[str], name: str) -> bool:
    """Whether `flags` has a line about the value called `name` (the fit's own prefix)."""
    return any(f.startswith(name + ":") or f.startswith(name + " ") for f in flags)


def positive(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def check_triplet(t: object, what: str) -> None:
    assert isinstance(t, list) and len(t) == 3 and 0 < t[1] <= t[0] <= t[2], f"{what}: {t}"


# The surface estimators (eq. 3.1-3.6), the name each one's flag starts with.
SURFACE_ESTIMATORS = {
    "g_small": "g_small (eq. 3.3)",
    "h_half": "h_half (eq. 3.4)",
    "g_mm": "g_mm (eq. 3.5)",
    "o": "o (eq. 3.6)",
    "o_eq31": "o (eq. 3.1)",
}


def check_surface(key: str, e: dict) -> None:
    flags = e["flags"]
    # eq. (3.2) is a weighted mean of measured times per word: always made, always > 0
    assert positive(e["g_inf"]), (key, e["g_inf"], flags)
    for name, flag in SURFACE_ESTIMATORS.items():
        v = e[name]
        assert (v is not None and v >= 0) or flagged(flags, flag), (key, name, v, flags)
    for fit, label, names in (
        ("lsq", "lsq (2.6)", ("g_inf", "h_half", "o")),
        ("lsq_2.5", "lsq (2.5)", ("g_inf", "h_half")),
    ):
        rec = e[fit]
        for name in names:
            if rec[name] is None:  # a failed fit, or this value's interval spans zero: said so
                assert "error" in rec or flagged(flags, f"{label} {name}"), (key, fit, name, flags)
            else:
                check_triplet(rec[name], f"{key} {fit} {name}")
    pm = e["predict"]
    if pm is None:  # "null when no usable g": neither least-squares g_inf, each flagged
        assert e["lsq"]["g_inf"] is None and e["lsq_2.5"]["g_inf"] is None, (key, e["lsq"], e["lsq_2.5"])
    else:
        assert pm["model"] in ("2.6 lsq", "2.5 lsq", "2.6 eq. 3.2-3.6") and positive(pm["g_inf"]), (key, pm)


def imh_null_reason(fit: dict, name: str) -> bool:
    """Whether an IMH fit says why its `name` is null (failed fit) or 0 (dropped)."""
    return "error" in fit or any(f.startswith(name + ":") or f == "no size above the start-up" for f in fit["flags"])


def check_imh_model(imh: dict, p: int) -> None:
    model = imh["model"]
    assert set(model) == {"T_n", "T_c", "T_e", "T_p", "T_s", "tau_d", "T_r", "tau_r", "T_w", "tau_w"}, model
    # eq. (4): the cold double reads by every process, out of cache: a value > 0, or 0 where
    # the fit dropped it, or null where it failed; the last two with the reason
    mem_fit = imh["mem"]["fits"][f"read/double/cold/p{p}"]["memory"]
    for k in ("T_n", "T_c", "T_e", "T_p"):
        assert positive(model[k]) or (model[k] in (0, None) and imh_null_reason(mem_fit, k)), (k, model[k], mem_fit)
    # eq. (5) from the permutation: T_s a median time (> 0); tau_d null only with the reason
    perm = imh["pp"]["fits"]["permutation"]
    assert positive(model["T_s"]) or (model["T_s"] is None and imh_null_reason(perm, "tau")), (model, perm)
    assert positive(model["tau_d"]) or (model["tau_d"] is None and imh_null_reason(perm, "tau")), (model, perm)
    # the disk: T_r, T_w are the medians of the smallest files' times; tau null only with the reason
    disk = imh["disk"]["fits"]
    for op, short in (("read", "r"), ("write", "w")):
        fit = disk.get(f"{op}/sequential/direct") or disk[f"{op}/sequential/page"]
        assert positive(model[f"T_{short}"]), (op, model, fit)
        tau = model[f"tau_{short}"]
        assert positive(tau) or (tau is None and imh_null_reason(fit, "tau")), (op, tau, fit)


def check_probe_params(params: dict) -> None:
    """The values every successful probe writes are there and > 0; a null is only where
    docs/probe-format.md allows one, and then the file says why."""
    file_flags = params["flags"]
    assert positive(params["l"]["empty"]), params["l"]  # a median of timed empty syncs
    for variant, v in params["l"].items():
        assert positive(v) or (v is None and flagged(file_flags, f"l {variant}")), (variant, v, file_flags)
    assert params["f"], "no f"
    for kernel, v in params["f"].items():
        assert positive(v) or (v is None and flagged(file_flags, f"f {kernel}")), (kernel, v, file_flags)
    assert positive(params["memcpy_s_per_word"]), params["memcpy_s_per_word"]
    for key, e in params["g"].items():
        check_surface(key, e)
    check_imh_model(params["imh"], params["p"])


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_probe_quick_tiny_grid(tmp_path: Path) -> None:
    out = tmp_path / "probe-run"
    r = run_bspkit(
        "probe",
        "--quick",
        "-n",
        "2",
        "--probe-binary",
        str(PROBE),
        "--build-dir",
        str(BUILD),
        "--output-dir",
        str(out),
        "--",
        *TINY,
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
    assert set(params["g"]) == {
        "put/alltoall",
        "put/shift",
        "get/alltoall",
        "get/shift",
    }
    assert set(params["l"]) == {"empty", "shift", "alltoall"}
    check_probe_params(params)
    check_report(out / "report.html", params)


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_probe_through_a_launcher(tmp_path: Path) -> None:
    """--launcher: bspprobe runs through a user command with {p} replaced (here: env)."""
    out = tmp_path / "launched"
    r = run_bspkit(
        "probe",
        "-n",
        "2",
        "--probe-binary",
        str(PROBE),
        "--launcher",
        "env BSPKIT_NPROCS={p}",
        "--library-name",
        "launched-lib",
        "--output-dir",
        str(out),
        *TINY_PROBE,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "running: BSPKIT_NPROCS=2 BSP_NPROCS=2 env BSPKIT_NPROCS=2" in r.stderr
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2 and params["machine"]["library"] == "launched-lib"
    assert set(params["g"]) == {"put/shift"}


@pytest.mark.skipif(
    not (HAVE_PROBE and BUILD and (BUILD / "bin" / "bspcc").is_file() and shutil.which("cc")),
    reason="no bspcc in the build directory (or no C compiler) to stand in for another BSPlib",
)
@pytest.mark.slow
def test_probe_against_another_library_with_bspcc(tmp_path: Path) -> None:
    """--bspcc: builds bspprobe with a library's compiler wrapper (bspkit's own bspcc stands in
    for another BSPlib) in the portable build's cache and runs the binary directly with
    BSPKIT_NPROCS/BSP_NPROCS."""
    out = tmp_path / "other"
    r = run_bspkit(
        "probe",
        "-n",
        "2",
        "--bspcc",
        str(BUILD / "bin" / "bspcc"),
        "--library-name",
        "stand-in",
        "--output-dir",
        str(out),
        *TINY_PROBE,
        timeout=180,
        env={"BSPKIT_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(list((tmp_path / "cache" / "portable").glob("stand-in-*/probe/bspprobe"))) == 1
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2 and params["machine"]["library"] == "stand-in"
    assert params["machine"]["backend"] == "unknown"  # built without bspkit's extensions
    check_report(out / "report.html", params)


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_probe_put_and_send_on_a_shift(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = run_bspkit(
        "probe",
        "--quick",
        "-n",
        "2",
        "--build-dir",
        str(BUILD),
        "--probe-binary",
        str(PROBE),
        "--output-dir",
        str(out),
        "--",
        "--only",
        "g,l,memcpy",
        "--primitives",
        "put,send",
        "--patterns",
        "shift",
        "--max-words",
        "256",
        "--reps",
        "2",
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2
    assert {"put/shift", "send/shift"} <= set(params["g"])
    assert params["l"]["empty"] is None or params["l"]["empty"] > 0
    assert (out / "report.html").stat().st_size > 10_000
    header = json.loads((out / "raw.jsonl").read_text().splitlines()[0])
    assert header["type"] == "header" and header["backend"] == "threads"


# ------------------------------------------------------- a run directory is never lost


@pytest.mark.slow
def test_probe_refuses_a_directory_that_holds_a_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    first = '{"type": "header"}\n{"type": "footer"}\n'  # the first run's samples, whole
    (out / "raw.jsonl").write_text(first)
    for name in ("params.json", "report.html"):
        (out / name).write_text("the first run's\n")
    r = run_bspkit("probe", "-n", "2", "--output-dir", str(out), *TINY_PROBE)
    assert r.returncode == 2, r.stderr
    assert (
        f"--output-dir {out} holds a run (raw.jsonl, params.json, report.html): give another directory, or --force "
        "to overwrite it"
    ) in r.stderr
    assert (out / "raw.jsonl").read_text() == first


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_probe_force_overwrites_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "raw.jsonl").write_text("the first run's samples\n")
    r = run_bspkit(
        "probe", "-n", "2", "--probe-binary", str(PROBE), "--build-dir", str(BUILD), "--output-dir", str(out),
        "--force", *TINY_PROBE, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    header = json.loads((out / "raw.jsonl").read_text().splitlines()[0])
    assert header["type"] == "header" and header["format"] == 1 and header["version"] == __version__
    params = json.loads((out / "params.json").read_text())
    assert params["format"] == 1 and params["bspkit_version"] == __version__


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.parametrize(
    "args, message",
    [
        (["-b", "nosuch"], "-b nosuch -n 2: unknown back end in -b nosuch: use threads"),
        (["--probe-binary", "/nonexistent/bspprobe"], "--probe-binary /nonexistent/bspprobe: no such file"),
    ],
)
@pytest.mark.slow
def test_a_probe_refused_makes_no_directory(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "results" / "run"
    opts = ["--probe-binary", str(PROBE)] if "--probe-binary" not in args else []
    r = run_bspkit("probe", "-n", "2", *opts, "--build-dir", str(BUILD), "--output-dir", str(out), *args)
    assert r.returncode in (1, 2) and message in r.stderr, r.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_a_probe_that_fails_leaves_no_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = run_bspkit(
        "probe", "-n", "2", "--probe-binary", "/bin/false", "--build-dir", str(BUILD), "--output-dir", str(out)
    )
    assert r.returncode == 1 and "bspprobe failed (exit status 1; its messages are above)" in r.stderr
    assert not out.exists()


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_bspprobe_output_dash_writes_the_samples_to_stdout() -> None:
    assert BSPRUN and PROBE
    r = subprocess.run(
        [str(BSPRUN), "-n", "2", str(PROBE), "--quick", "--only", "l", "--output", "-"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]  # stdout: the JSON lines alone
    assert records[0]["type"] == "header" and records[-1]["type"] == "footer"
    assert {rec["type"] for rec in records[1:-1]} == {"l", "load"}
    assert "bspprobe: done" in r.stderr  # progress stays on stderr


@pytest.mark.skipif(not HAVE_PROBE, reason=NO_PROBE)
@pytest.mark.slow
def test_a_probe_killed_by_a_signal_is_named(tmp_path: Path) -> None:
    killer = tmp_path / "killed-probe"
    killer.write_text("#!/bin/sh\nkill -KILL $$\n")
    killer.chmod(0o755)
    r = run_bspkit(
        "probe",
        "-n",
        "2",
        "--probe-binary",
        str(killer),
        "--build-dir",
        str(BUILD),
        "--output-dir",
        str(tmp_path / "run"),
    )
    assert r.returncode == 1
    assert "bspprobe failed (killed by SIGKILL (killed, most likely out of memory); its messages are above)" in r.stderr
