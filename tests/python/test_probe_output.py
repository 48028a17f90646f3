"""bspprobe's output, checked against docs/probe-format.md: the built bspprobe runs each suite
small (the same arguments the ctest tests had when these checks were CMake scripts), and its
JSON lines are read with the probe-format reader (bspkit.measure.rawdata.load_raw) and line by line.

ctest runs each test here as probe.<case>.<backend>.p<P> on every back end it tests (see
probe/CMakeLists.txt), also under the sanitizers; they are marked probe_run, so that a pytest
run after ctest can leave them out (-m "not probe_run"). Without BSPKIT_BUILD_DIR they skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit.measure.rawdata import RawRun, load_raw

from conftest import BUILD, built_program, missing_dependency, needs_programs

PROBE = BUILD / "probe" / "bspprobe" if BUILD else None
pytestmark = [
    pytest.mark.probe_run,
    needs_programs("bsprun"),
    pytest.mark.skipif(not (PROBE and PROBE.is_file()), reason="BSPKIT_BUILD_DIR is not set or has no probe/bspprobe"),
]

BACKENDS = ("threads", "procs", "mpi", "mpi-rma")
BUILT_IN = ("threads", "procs")
Record = dict[str, Any]


def backend_built(backend: str) -> bool:
    """threads and procs are always there; the MPI back ends are a plugin in <build>/lib/bspkit."""
    if backend in BUILT_IN:
        return True
    return BUILD is not None and any((BUILD / "lib" / "bspkit").glob("*mpi*"))


def runs(procs: tuple[int, ...], backends: tuple[str, ...] = BACKENDS) -> list[Any]:
    """(backend, p) for every back end and process count, with ids "<backend>-p<P>"."""
    return [
        pytest.param(
            b,
            p,
            id=f"{b}-p{p}",
            marks=pytest.mark.skipif(
                not backend_built(b),
                reason=f"the {b} back end is not built"
                if b in BUILT_IN
                else missing_dependency("Open MPI", f"the {b} back end is not built"),
            ),
        )
        for b in backends
        for p in procs
    ]


def bsprun(backend: str | None, p: int, *probe_args: str) -> list[str]:
    """The command line of bsprun [-b backend] -n p bspprobe ARGS."""
    cmd = [str(built_program("bsprun"))]
    if backend:
        cmd += ["-b", backend]
    return [*cmd, "-n", str(p), str(PROBE), *probe_args]


def run_probe_ok(cmd: list[str], out: Path, timeout: float) -> None:
    """Runs bspprobe; fails unless it exits 0 and wrote OUT."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"bspprobe failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    assert out.is_file(), f"bspprobe wrote no file {out}"


def read_records(path: Path) -> list[Record]:
    """The file's records in order: one JSON object per line, no empty line."""
    lines = path.read_text().rstrip("\n").split("\n")
    assert lines != [""], f"empty file {path}"
    records = []
    for i, line in enumerate(lines):
        assert line.strip(), f"empty line {i + 1} in {path}"
        rec = json.loads(line)  # one value per line: a line with two would not parse
        assert isinstance(rec, dict) and "type" in rec, f"line {i + 1} is not a JSON record: {line}"
        records.append(rec)
    return records


def read_run(path: Path) -> tuple[list[Record], RawRun]:
    """The records in order, and the file as the analysis reads it (header to footer)."""
    records = read_records(path)
    run = load_raw(path)
    assert run.footer is not None and not run.read_warnings, run.read_warnings
    return records, run


def is_positive(v: Any) -> bool:
    """A positive number (bspprobe writes %.6g or %.9g), not 0."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def check_samples(rec: Record, what: str) -> int:
    """At least one sample in rec["samples_s"], every one positive; returns their number."""
    samples = rec["samples_s"]
    assert isinstance(samples, list) and samples, f"no samples in {what}: {rec}"
    assert all(is_positive(s) for s in samples), f"a sample is not > 0 in {what}: {rec}"
    return len(samples)


def refused(cmd: list[str], status: int, message: str, not_written: Path, timeout: float = 60) -> None:
    """The command ends with STATUS, says MESSAGE on stderr and writes no file NOT_WRITTEN."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == status and message in r.stderr, (
        f"expected exit status {status} and '{message}', got {r.returncode}:\n{r.stdout}\n{r.stderr}"
    )
    assert not not_written.exists(), f"{not_written} was written all the same"


def check_header_footer(records: list[Record], p: int) -> None:
    assert records[0]["type"] == "header" and records[0]["p"] == p, records[0]
    assert records[-1]["type"] == "footer", records[-1]


# ------------------------------------------------------------------ g and l (the smoke test)


def test_smoke(tmp_path: Path) -> None:
    """A tiny grid at p = 2: header (format 1), footer, g records as the format says, 3 l variants."""
    out = tmp_path / "smoke.jsonl"
    args = ["--quick", "--only", "g,l", "--primitives", "put,send", "--patterns", "shift"]
    args += ["--max-words", "64", "--reps", "2", "--seed", "7", "--output", str(out)]
    run_probe_ok(bsprun(None, 2, *args), out, 100)
    records, run = read_run(out)
    assert records[0]["type"] == "header" and records[0]["format"] == 1 and records[0]["p"] == 2, records[0]
    assert records[-1]["type"] == "footer", records[-1]
    g, variants = [], []
    for rec in records[1:-1]:
        if rec["type"] == "g":
            g.append(rec)
            assert rec["primitive"] in ("put", "send") and rec["pattern"] == "shift", rec
            assert rec["h"] == rec["msg_words"] * rec["count"] <= 64 and rec["reps"] == 2, rec
            assert len(rec["samples_s"]) == 2, rec
        elif rec["type"] == "l":
            assert len(rec["samples_s"]) == 2, rec
            variants.append(rec["variant"])
        else:
            assert rec["type"] == "load", f"unexpected record {rec}"
    # quick grid at --max-words 64: h* in {1, 16}, c in {1, 8, 64}, c h* <= 64: 4 points per
    # primitive and pattern; 2 primitives x 1 pattern
    assert len(g) == 8
    assert len(run.g) == 8 and all(len(pt.samples) == 2 for pt in run.g)  # no point twice
    assert sorted(variants) == ["alltoall", "empty", "shift"]


# ------------------------------------------------------------------ pp (Kang et al. 4.2.2)


@pytest.mark.parametrize(("backend", "p"), runs((1, 2, 3, 4)))
def test_pp(backend: str, p: int, tmp_path: Path) -> None:
    """All four patterns, every power of two from 8 to 65536 bytes once, 2 positive samples,
    the supersteps (broadcast ceil(lg P), 1 at P = 1), root 0 or null; bspprobe itself checks
    the data every receiver got. Then --pp-max-bytes 4 is refused."""
    out = tmp_path / "pp.jsonl"
    args = ["--quick", "--only", "pp", "--pp-max-bytes", "65536", "--reps", "2", "--output", str(out)]
    run_probe_ok(bsprun(backend, p, *args), out, 150)
    records, run = read_run(out)
    check_header_footer(records, p)
    assert "pp" in records[-1]["section_s"], "the footer has no section_s.pp"
    lg = max(1, (p - 1).bit_length())
    steps = {"permutation": 1, "pingpong": 2, "scatter": 1, "broadcast": lg}
    seen: dict[str, list[int]] = {pat: [] for pat in steps}
    for rec in records[1:-1]:
        if rec["type"] != "pp":
            assert rec["type"] == "load", f"unexpected record {rec}"
            continue
        pat = rec["pattern"]
        assert pat in steps, f"unknown pattern: {rec}"
        assert rec["primitive"] == "hpput" and rec["reps"] == 2 and rec["supersteps"] == steps[pat], rec
        size = rec["bytes"]
        assert isinstance(size, int) and 8 <= size <= 65536 and size % 8 == 0, rec
        if pat in ("scatter", "broadcast"):
            assert rec["root"] == 0, f"the quick mode's root must be 0: {rec}"
        else:
            assert "root" in rec and rec["root"] is None, f"root must be null for {pat}: {rec}"
        assert check_samples(rec, "pp") == 2, rec
        assert size not in seen[pat], f"{pat} of {size} bytes twice"
        seen[pat].append(size)
    for pat, sizes in seen.items():
        missing = [1 << k for k in range(3, 17) if 1 << k not in sizes]
        assert not missing, f"no {pat} record of {missing} bytes (has: {sizes})"
    assert len(run.pp) == sum(len(sizes) for sizes in seen.values())
    bad = tmp_path / "pp.bad.jsonl"
    refused(
        bsprun(backend, p, "--only", "pp", "--pp-max-bytes", "4", "--output", str(bad)),
        2,
        "--pp-max-bytes needs an integer from 8",
        bad,
    )


# ------------------------------------------------------------------ mem (Kang et al. 4.2.1)

MEM_MAX_BYTES = 1048576


def check_mem_record(rec: Record, line_bytes: int, p: int, max_bytes: int = MEM_MAX_BYTES) -> None:
    """Every key, 2 positive samples, the values allowed, lines and footprint_bytes as the line
    size gives them for an array that fits --mem-max-bytes."""
    for key in ("op", "elem", "elem_bytes", "n", "stride", "cache", "procs", "lines", "footprint_bytes", "reps", "seq"):
        assert key in rec, f"key {key} missing in: {rec}"
    assert len(rec["samples_s"]) == rec["reps"] == 2, rec
    check_samples(rec, "mem")
    assert rec["op"] in ("read", "write", "multiply", "divide") and rec["cache"] in ("cold", "warm"), rec
    assert (rec["elem"], rec["elem_bytes"]) in (("int", 4), ("float", 4), ("double", 8)), rec
    assert rec["procs"] in (1, p) and rec["n"] >= 1 and rec["stride"] >= 1, rec
    if rec["cache"] == "warm":
        assert rec["passes"] >= 1, f"warm record without passes >= 1: {rec}"
    array = rec["n"] * rec["stride"] * rec["elem_bytes"]
    step = rec["stride"] * rec["elem_bytes"]
    lines = (array + line_bytes - 1) // line_bytes if step < line_bytes else rec["n"]
    assert array <= max_bytes and rec["lines"] == lines, rec
    assert rec["footprint_bytes"] == lines * line_bytes, rec


@pytest.mark.parametrize(("backend", "p"), runs((2, 3)))
def test_mem(backend: str, p: int, tmp_path: Path) -> None:
    """One caches record first, then mem and stream records as docs/probe-format.md says,
    covering both ops, element types, cache states and procs 1 and P, with distinct seq."""
    out = tmp_path / "mem.jsonl"
    args = ["--quick", "--only", "mem", "--mem-max-bytes", str(MEM_MAX_BYTES), "--reps", "2", "--seed", "11"]
    run_probe_ok(bsprun(backend, p, *args, "--output", str(out)), out, 200)
    records, run = read_run(out)
    assert len(records) >= 3
    assert records[0]["type"] == "header" and records[0]["p"] == p, records[0]
    line_bytes: int | None = None
    mem: list[Record] = []
    stream_procs: list[int] = []
    ncaches = 0
    for rec in records[1:]:
        if rec["type"] == "caches":
            ncaches += 1
            assert not mem, "caches record after the first mem record"
            assert rec["page_bytes"] >= 512 and "source" in rec, rec
            line_bytes = 64  # the suite's assumption when no cache is known
            for k, level in enumerate(rec["levels"]):
                assert "line_bytes" in level and "shared_cpus" in level, f"level {k} of {rec}"
                assert level["type"] in ("Data", "Unified") and level["size_bytes"] >= 1024, f"level {k} of {rec}"
                assert level["level"] >= 1, f"level {k} of {rec}"
                if k == 0:
                    line_bytes = level["line_bytes"]
        elif rec["type"] == "mem":
            assert line_bytes is not None, "mem record before the caches record"
            check_mem_record(rec, line_bytes, p)
            mem.append(rec)
        elif rec["type"] == "stream":
            for key in ("kernel", "bytes", "bytes_moved", "procs", "reps", "note"):
                assert key in rec, f"key {key} missing in: {rec}"
            assert rec["kernel"] == "copy" and rec["bytes_moved"] == 2 * rec["bytes"], rec
            assert 4096 <= rec["bytes"] <= MEM_MAX_BYTES and len(rec["samples_s"]) == rec["reps"] == 2, rec
            check_samples(rec, "stream")
            stream_procs.append(rec["procs"])
        elif rec["type"] == "footer":
            assert "mem" in rec["section_s"], "the footer has no section_s.mem"
        else:
            assert rec["type"] == "load", f"unexpected record: {rec}"
    assert ncaches == 1, f"expected one caches record, found {ncaches}"
    seen = {v for rec in mem for v in (rec["op"], rec["elem"], rec["cache"], f"procs{rec['procs']}")}
    assert seen == {"cold", "double", "int", "read", "warm", "write", "procs1", f"procs{p}"}
    seqs = [rec["seq"] for rec in mem]
    assert len(mem) >= 40 and len(set(seqs)) == len(seqs), f"{len(mem)} mem records, {len(set(seqs))} distinct seq"
    assert sorted(stream_procs) == [1, p]
    assert len(run.mem) == len(mem) and run.caches is not None


@pytest.mark.parametrize(("backend", "p"), runs((2,)))
def test_mem_ops(backend: str, p: int, tmp_path: Path) -> None:
    """--mem-ops and --mem-elems with every name (Kang et al.'s Fig. 45-56): the caches record
    lists them, every operation x element type has its records, each as the format says, and
    the IMH fit reads them and fits eq. (4) for each."""
    from bspkit.model import imh  # scipy: only this test of the file fits

    out = tmp_path / "mem.jsonl"
    args = ["--quick", "--only", "mem", "--mem-max-bytes", "262144", "--reps", "2", "--seed", "5"]
    args += ["--mem-ops", "divide,multiply,read,write", "--mem-elems", "float,int,double"]
    run_probe_ok(bsprun(backend, p, *args, "--output", str(out)), out, 120)
    records, run = read_run(out)
    check_header_footer(records, p)
    (caches,) = [r for r in records if r["type"] == "caches"]
    ops, elems = ["read", "write", "multiply", "divide"], ["int", "double", "float"]
    assert caches["mem_ops"] == ops and caches["mem_elems"] == elems, caches
    line_bytes = caches["levels"][0]["line_bytes"] if caches["levels"] else 64
    mem = [r for r in records if r["type"] == "mem"]
    for rec in mem:
        check_mem_record(rec, line_bytes, p, 262144)
    combos = {(r["op"], r["elem"]) for r in mem}
    assert combos == {(o, e) for o in ops for e in elems}, combos
    fits = imh.fit_mem(run)["fits"]
    for o in ops:
        for e in elems:
            groups = [g for g in fits if g.startswith(f"{o}/{e}/")]
            assert any("model" in f for g in groups for f in fits[g].values()), (o, e, groups)


def test_mem_bad_option(tmp_path: Path) -> None:
    """--mem-max-bytes below one page, and an operation or element type the suite does not
    know, are refused, and nothing is written."""
    out = tmp_path / "mem.jsonl"
    cmd = [str(PROBE), "--only", "mem", "--mem-max-bytes", "12", "--output", str(out)]
    refused(cmd, 2, "--mem-max-bytes needs an integer from 4096", out, timeout=30)
    cmd = [str(PROBE), "--only", "mem", "--mem-ops", "read,add", "--output", str(out)]
    refused(cmd, 2, "--mem-ops: unknown name 'add'; choose from read, write, multiply, divide", out, timeout=30)
    cmd = [str(PROBE), "--only", "mem", "--mem-elems", "single", "--output", str(out)]
    refused(cmd, 2, "--mem-elems: unknown name 'single'; choose from int, double, float", out, timeout=30)


# ------------------------------------------------------------------ the short calibration


def check_calibration(rec: Record, want_g: list[str]) -> None:
    """The keys of every calibration record: each list holds the entries of pass 0, then those
    of pass 1; f the dot products, g exactly the points WANT_G ("256x8"), l empty and shift."""
    assert is_positive(rec["t_s"]) and is_positive(rec["elapsed_s"]), rec
    assert len(rec["loadavg"]) == 3, f"loadavg is not [1, 5, 15] in: {rec}"
    assert rec["passes"] == 2, rec
    f = rec["f"]
    assert len(f) in (2, 4), f"expected 1 or 2 f kernels in each of 2 passes: {rec}"
    per_pass = len(f) // 2
    for k, e in enumerate(f):
        kernel = "dot_double_blas" if k % per_pass == 1 else "dot_double_naive"
        assert e["kernel"] == kernel and e["n"] == 1048576 and e["ops"] == 2 * e["n"], f"f[{k}]: {rec}"
        assert e["pass"] == k // per_pass, f"f[{k}]: {rec}"
        check_samples(e, f"f[{k}]")
    g = rec["g"]
    points = []
    for k, e in enumerate(g):
        ns = check_samples(e, f"g[{k}]")
        assert e["primitive"] == "put" and e["pattern"] == "alltoall", f"g[{k}]: {rec}"
        assert e["h"] == e["msg_words"] * e["count"] and e["reps"] == ns and e["warmup"] in (1, 2), f"g[{k}]: {rec}"
        assert e["pass"] == k // (len(g) // 2), f"g[{k}]: {rec}"
        if e["pass"] == 0:
            points.append(f"{e['msg_words']}x{e['count']}")
    assert points == want_g, rec
    assert len(rec["l"]) == 4, f"expected 2 l entries in each of 2 passes: {rec}"
    for k, e in enumerate(rec["l"]):
        check_samples(e, f"l[{k}]")
        assert e["variant"] == ("shift" if k % 2 else "empty") and e["batch"] > 0 and e["pass"] == k // 2, rec


# ------------------------------------------------------------------ the machine's state (issue 29)


def check_state(state: Any, procs: int, where: str) -> None:
    """A `state` object (docs/probe-format.md): per-process lists of `procs` entries, CPU time
    and run delay within the batch's wall time, the machine's counters non-negative or null."""
    assert isinstance(state, dict) and state["wall_s"] > 0, f"{where}: {state}"
    for key in ("cpu_s", "waited_s", "involuntary", "cpus", "migrated"):
        assert isinstance(state[key], list) and len(state[key]) == procs, f"{where}: {key} of {state}"
    for cpu, waited in zip(state["cpu_s"], state["waited_s"], strict=True):
        assert cpu is None or 0 <= cpu <= 1.05 * state["wall_s"] + 1e-4, f"{where}: {state}"
        assert waited is None or 0 <= waited <= 1.05 * state["wall_s"] + 1e-4, f"{where}: {state}"
    assert all(c is None or (isinstance(c, int) and c >= 0) for c in state["cpus"]), f"{where}: {state}"
    for key in ("steal_s", "cpu_pressure_s"):
        assert state[key] is None or state[key] >= 0, f"{where}: {key} of {state}"
    assert state["cores_online"] >= 1 and (state["running"] is None or state["running"] >= 1), f"{where}: {state}"


@pytest.mark.parametrize(("backend", "p"), runs((1, 2)))
def test_state(backend: str, p: int, tmp_path: Path) -> None:
    """Every timed batch carries the machine's state: f (process 0 alone), each l variant and
    g point (every process), and the fit summarizes them in params' machine_state."""
    out = tmp_path / "state.jsonl"
    args = ["--quick", "--only", "f,l,g", "--primitives", "put", "--patterns", "alltoall"]
    run_probe_ok(bsprun(backend, p, *args, "--max-words", "4096", "--reps", "3", "--output", str(out)), out, 100)
    records, run = read_run(out)
    timed = [r for r in records if r["type"] in ("f", "l", "g")]
    assert {r["type"] for r in timed} == {"f", "l", "g"}, [r["type"] for r in records]
    for rec in timed:
        check_state(rec.get("state"), 1 if rec["type"] == "f" else p, f"{rec['type']} record")
    assert len(run.states) == len(timed)
    from bspkit.model.fit import fit_run

    summary = fit_run(run).machine_state["summary"]
    assert summary["batches"] == len(timed) and 0 <= summary["marked"] <= len(timed)


# ------------------------------------------------------------------ the machine's noise (issue 39)


def check_canary(state: dict[str, Any], procs: int, where: str) -> None:
    """The canary's times before and after the batch, one per process, each > 0."""
    for key in ("canary_before_s", "canary_after_s"):
        assert len(state[key]) == procs and all(is_positive(t) for t in state[key]), f"{where}: {key} of {state}"


@pytest.mark.parametrize(("backend", "p"), runs((2,), ("threads",)))
def test_canary_planted(backend: str, p: int, tmp_path: Path) -> None:
    """Without --reps every g point runs under the adaptive rule (at least 6 repetitions, its
    interval's half-width and why it stopped recorded, the half-width that of its samples) and
    every batch carries the canary; BSPKIT_CANARY_SLOW=5 triples the canary's work around the
    sixth batch, which the reader then lists as slowed with the evidence."""
    from bspkit.measure.rawdata import median_ci_rel

    out = tmp_path / "canary.jsonl"
    args = ["--quick", "--only", "g", "--primitives", "put", "--patterns", "alltoall", "--max-words", "4096"]
    cmd = bsprun(backend, p, *args, "--no-sentinels", "--seed", "3", "--output", str(out))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=100, env={**os.environ, "BSPKIT_CANARY_SLOW": "5"})
    assert r.returncode == 0, r.stderr
    records, run = read_run(out)
    header = records[0]
    assert header["repetitions"]["rule"] == "adaptive" and header["repetitions"]["target_ci_rel"] == 0.05, header
    assert header["canary"]["bytes"] == 128 << 10 and header["sentinels"] is None, header
    g = [rec for rec in records if rec["type"] == "g"]
    assert [rec["seq"] for rec in g] == list(range(10))
    for rec in g:
        check_canary(rec["state"], p, f"g seq {rec['seq']}")
        assert rec["reps"] >= 6 and rec["stop"] in ("ci", "max_reps", "time"), rec
        ci = rec["median_ci_rel"]
        # the samples are written rounded: relative agreement (a sanitizer build's half-widths are large)
        assert ci == pytest.approx(median_ci_rel(rec["samples_s"]), rel=1e-4, abs=1e-4), rec
        if rec["stop"] == "ci":
            assert ci <= 0.05, rec
    slowed = {row["seq"]: row for row in run.canary_slowed}
    assert 5 in slowed and slowed[5]["ratio"] > 2, run.canary_slowed
    assert slowed[5]["evidence"].startswith("canary "), slowed[5]
    assert next(pt for pt in run.g if pt.seq == 5).mark is not None


@pytest.mark.parametrize(("backend", "p"), runs((2,), ("threads",)))
def test_sentinels(backend: str, p: int, tmp_path: Path) -> None:
    """--sentinels with sections l and g: a visit at the start and after each section, each with
    the four regimes (compute, sync, small h of 64 words, large h of min(2^17, H_MAX) words) as
    `sentinel` records with their samples, median, time and the state with the canary; the
    footer counts the visits and the fit gives each regime's spread over them."""
    out = tmp_path / "sentinels.jsonl"
    args = ["--quick", "--only", "l,g", "--primitives", "put", "--patterns", "alltoall", "--max-words", "4096"]
    run_probe_ok(bsprun(backend, p, *args, "--sentinels", "--output", str(out)), out, 100)
    records, run = read_run(out)
    assert records[0]["sentinels"]["regimes"] == ["compute", "sync", "small_h", "large_h"], records[0]
    sentinels = [rec for rec in records if rec["type"] == "sentinel"]
    assert [(rec["visit"], rec["regime"]) for rec in sentinels] == [
        (v, regime) for v in range(3) for regime in ("compute", "sync", "small_h", "large_h")
    ]
    assert [rec["where"] for rec in sentinels[::4]] == ["start", "after l", "after g"]
    times = [rec["t_s"] for rec in sentinels]
    assert times == sorted(times) and all(rec["seq"] is None for rec in sentinels)
    for rec in sentinels:
        n = check_samples(rec, "sentinel")
        assert n == rec["reps"] == {"compute": 15, "sync": 15, "small_h": 15, "large_h": 9}[rec["regime"]], rec
        assert rec["median_s"] == pytest.approx(float(np.median(rec["samples_s"])), rel=1e-5), rec
        check_state(rec["state"], p, "sentinel")
        check_canary(rec["state"], p, "sentinel")
        if rec["regime"] == "compute":
            assert rec["kernel"] == "dot_double_naive" and rec["n"] == 32768 and rec["procs"] == p, rec
        elif rec["regime"].endswith("_h"):
            want = 64 if rec["regime"] == "small_h" else 4096
            assert rec["h"] == want and rec["count"] == p - 1 and rec["primitive"] == "put", rec
    assert records[-1]["sentinels"]["visits"] == 3, records[-1]
    assert len(run.sentinels) == 12
    from bspkit.model.fit import fit_run

    noise = fit_run(run).noise["regimes"]
    assert list(noise) == ["compute", "sync", "small_h", "large_h"] and all(r["visits"] == 3 for r in noise.values())
    assert noise["small_h"]["h"] == 64 and noise["large_h"]["h"] == 4096 and "h" not in noise["sync"]


# ------------------------------------------------------------------ hw (the hardware references)


@pytest.mark.parametrize(("backend", "p"), runs((1, 2)))
def test_hw(backend: str, p: int, tmp_path: Path) -> None:
    """--only hw --quick: one memcpy_h record per h of the planned grid (every process copying,
    --reps samples, each > 0), then hw_barrier and hw_pingpong: measured (samples > 0, a batch,
    the cores) where the processes share memory (threads) and can each have a core, else a
    record with the reason; the reader keeps them in RawRun.hardware."""
    out = tmp_path / "hw.jsonl"
    args = ["--quick", "--only", "hw", "--max-words", "4096", "--reps", "3", "--output", str(out)]
    run_probe_ok(bsprun(backend, p, *args), out, 100)
    records, run = read_run(out)
    check_header_footer(records, p)
    assert records[0]["sections"] == ["hw"] and "hw" in records[-1]["section_s"], records[0]
    grid = records[0]["grid"]
    want_h = sorted({m * c for m in grid["msg_words"] for c in grid["count"] if m * c <= 4096})
    memcpy_h = [r for r in records if r["type"] == "memcpy_h"]
    assert [r["h"] for r in memcpy_h] == want_h and want_h[-1] == 4096, memcpy_h
    for rec in memcpy_h:
        assert check_samples(rec, "memcpy_h") == 3 and rec["reps"] == 3 and rec["procs"] == p, rec
        assert rec["bytes"] == 8 * rec["h"] and rec["warmup"] in (1, 2), rec
    (barrier,) = [r for r in records if r["type"] == "hw_barrier"]
    (pingpong,) = [r for r in records if r["type"] == "hw_pingpong"]
    cores = len(os.sched_getaffinity(0))
    shared = backend == "threads" and p <= (os.cpu_count() or 1)
    if p == 1:
        assert "samples_s" not in barrier and "no other process" in barrier["skipped"], barrier
    elif shared:
        assert check_samples(barrier, "hw_barrier") == 3 and barrier["batch"] >= 1, barrier
        assert len(barrier["cpus"]) == p and all(isinstance(c, int) for c in barrier["cpus"]), barrier
    else:
        assert "samples_s" not in barrier and "do not share memory" in barrier["skipped"], barrier
    if (p == 1 and cores >= 2) or (p > 1 and shared):
        assert check_samples(pingpong, "hw_pingpong") == 3 and pingpong["batch"] >= 1, pingpong
        assert len(pingpong["cpus"]) == 2 and pingpong["cpus"][0] != pingpong["cpus"][1], pingpong
        assert pingpong["between"] == ("processes 0 and 1" if p > 1 else "process 0 and a thread of its own")
    elif p > 1:
        assert "do not share memory" in pingpong["skipped"], pingpong
    assert [r["type"] for r in run.hardware] == [
        r["type"] for r in records if r["type"] in ("memcpy_h", "hw_barrier", "hw_pingpong")
    ]


@pytest.mark.parametrize(("backend", "p"), runs((2,)))
def test_calibrate(backend: str, p: int, tmp_path: Path) -> None:
    """bspprobe --calibrate --quick: header (mode calibrate), one calibration record (round 0,
    seq null, g at (256, 8) and (4096, 64)), footer; --calibrate with --only is refused."""
    out = tmp_path / "calibrate.jsonl"
    run_probe_ok(bsprun(backend, p, "--calibrate", "--quick", "--output", str(out)), out, 100)
    records, run = read_run(out)
    assert [r["type"] for r in records] == ["header", "calibration", "footer"]
    header, rec = records[0], records[1]
    assert header["mode"] == "calibrate" and header["sections"] == ["calibration"] and header["p"] == p, header
    assert rec["round"] == 0 and "seq" in rec and rec["seq"] is None, rec
    check_calibration(rec, ["256x8", "4096x64"])
    # at least 5 repetitions per g point, 30 samples per l variant
    assert len(rec["g"][1]["samples_s"]) >= 5 and len(rec["l"][0]["samples_s"]) == 30, rec
    assert run.calibration == [rec]
    no_file = tmp_path / "refused.jsonl"
    cmd = [str(PROBE), "--calibrate", "--only", "g", "--output", str(no_file)]
    refused(cmd, 2, "--only does not apply to --calibrate", no_file, timeout=30)


@pytest.mark.parametrize(("backend", "p"), runs((2,), ("threads",)))
def test_calibration_rounds(backend: str, p: int, tmp_path: Path) -> None:
    """A small quick probe with validation holds 11 rounds among its 34 points (seq rising, the
    last after every point), the g point above --max-words left out with a warning; with
    none without --calibration (the default) or with --no-calibration. (threads: measure_points
    places the rounds, whatever the back end)"""
    out = tmp_path / "rounds.jsonl"
    args = ["--quick", "--only", "g,validation", "--primitives", "put", "--patterns", "alltoall"]
    args += ["--max-words", "4096", "--reps", "2", "--seed", "7"]
    run_probe_ok(bsprun(backend, p, *args, "--calibration", "--output", str(out)), out, 100)
    records, run = read_run(out)
    npoints, rounds, prev_seq = 0, 0, -1
    for rec in records:
        if rec["type"] in ("g", "validation"):
            npoints += 1
        elif rec["type"] == "calibration":
            assert rec["round"] == rounds and rec["seq"] == npoints and rec["seq"] > prev_seq, (
                f"round {rounds} after {npoints} points (seq above {prev_seq}) expected: {rec}"
            )
            check_calibration(rec, ["256x8"])
            rounds += 1
            prev_seq = rec["seq"]
    # 10 grid points and 3 x 8 validation visits: rounds before points 0, 3, 6, ..., 30 and after 34
    assert (rounds, prev_seq, npoints) == (11, 34, 34)
    assert len(run.calibration) == 11
    warnings = records[-1].get("warnings", [])
    assert any("calibration: put/alltoall h*=4096 c=64 left out" in w for w in warnings), warnings
    for off in ([], ["--no-calibration"], ["--calibration", "--no-calibration"]):
        run_probe_ok(bsprun(backend, p, *args, *off, "--output", str(out)), out, 100)
        assert all(rec["type"] != "calibration" for rec in read_records(out)), f"{off} wrote calibration records"


# ------------------------------------------------------------------ disk (Kang et al. 4.2.3)


def leftovers(workdir: Path) -> list[Path]:
    """bspprobe's temporary directories still in WORKDIR."""
    return sorted(workdir.glob("bspprobe-*"))


@pytest.mark.parametrize(("backend", "p"), runs((1, 2)))
def test_disk(backend: str, p: int, tmp_path: Path) -> None:
    """Files of 4 to 64 KiB, 2 repetitions: disk_info once, then a disk record for every op x
    access x cache x power of two, with its method and block size; no temporary directory left."""
    workdir = tmp_path
    out = workdir / "disk.jsonl"
    cmd = bsprun(backend, p, "--only", "disk", "--output", str(out))
    run_probe_ok([*cmd, "--disk-max-bytes", "65536", "--reps", "2", "--disk-dir", str(workdir)], out, 100)
    assert not leftovers(workdir), "the temporary directory is still there after a run"
    records, run = read_run(out)
    check_header_footer(records, p)
    info: Record | None = None
    seen: list[str] = []
    for rec in records[1:-1]:
        if rec["type"] == "disk_info":
            assert info is None, "two disk_info records"
            info = rec
            assert rec["dir"] == str(workdir) and rec["filesystem"] and rec["free_bytes"] > 0, rec
            assert rec["max_bytes"] == 65536 and rec["direct"] in ("O_DIRECT", "fadvise"), rec
        elif rec["type"] == "disk":
            assert info is not None, f"a disk record before disk_info: {rec}"
            direct_method = "O_DIRECT" if info["direct"] == "O_DIRECT" else "fadvise+fsync"
            assert rec["op"] in ("read", "write") and rec["access"] in ("sequential", "random"), rec
            assert rec["cache"] in ("page", "direct"), rec
            assert rec["method"] == (direct_method if rec["cache"] == "direct" else "buffered"), rec
            assert rec["block_bytes"] == (4096 if rec["access"] == "random" else rec["bytes"]), rec
            assert rec["reps"] == 2 and len(rec["samples_s"]) == 2 and 4096 <= rec["bytes"] <= 65536, rec
            check_samples(rec, "disk")
            key = f"{rec['op']}/{rec['access']}/{rec['cache']}/{rec['bytes']}"
            assert key not in seen, f"{key} twice"
            seen.append(key)
        else:
            assert rec["type"] == "load", f"unexpected record {rec}"
    assert info is not None, "no disk_info record"
    want = {
        f"{op}/{acc}/{cache}/{1 << k}"
        for k in range(12, 17)
        for op in ("write", "read")
        for acc in ("sequential", "random")
        for cache in ("page", "direct")
    }
    assert not want - set(seen), f"no disk record for {sorted(want - set(seen))}"
    assert len(run.disk) == len(seen) and run.disk_info == info


def expect_error(
    name: str, status: int, patterns: list[str], cmd: list[str], workdir: Path, *, per_process: bool = False
) -> None:
    """Exit status STATUS, exactly one "bspprobe: error" line on stderr (PER_PROCESS: one
    distinct line, which each process may print) matching every pattern; no directory left."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == status, f"{name}: exit status {r.returncode}, expected {status}:\n{r.stdout}\n{r.stderr}"
    lines = re.findall(r"bspprobe: error[^\n]*", r.stderr)
    if per_process:  # an option error: each MPI process parses its own command line
        lines = list(dict.fromkeys(lines))
    assert len(lines) == 1, f"{name}: {len(lines)} error messages, expected one:\n{r.stderr}"
    for pattern in patterns:
        assert re.search(pattern, lines[0]), f"{name}: the message does not match '{pattern}':\n{lines[0]}"
    assert not leftovers(workdir), f"{name}: the temporary directory is still there"


@pytest.mark.parametrize(("backend", "p"), runs((2,)))
def test_disk_errors(backend: str, p: int, tmp_path: Path) -> None:
    """Each error ends the program with one message naming the path (or the numbers) and the
    reason, and leaves no temporary directory: a --disk-dir that does not exist, a
    --disk-max-bytes above half the free space (status 1, as every error found while running)
    or below 4096 (status 2, a malformed option), and on threads a write that fails half-way
    (a file size limit with SIGXFSZ ignored: write returns EFBIG; not on MPI, whose runtime
    writes files of its own under it)."""
    workdir = tmp_path
    w = re.escape(str(workdir))
    run = bsprun(backend, p, "--only", "disk", "--output", str(workdir / "disk.jsonl"))
    missing = workdir / "nonexistent" / "x"
    expect_error(
        "missing-dir",
        1,
        [f"disk: cannot use the directory '{re.escape(str(missing))}': No such file"],
        [*run, "--disk-dir", str(missing)],
        workdir,
    )
    # 2^44 bytes, the most the option takes, is more than half the free space unless 8 TiB are free
    if shutil.disk_usage(workdir).free // 1024 < 8589934592:
        expect_error(
            "too-large",
            1,
            [
                "--disk-max-bytes 17592186044416 is more than half of the free space",
                rf"in '{w}' \([0-9]+ bytes free\); choose at most [0-9]+",
            ],
            [*run, "--disk-dir", str(workdir), "--disk-max-bytes", "17592186044416"],
            workdir,
        )
    expect_error(
        "too-small",
        2,
        ["--disk-max-bytes needs an integer from 4096"],
        [*run, "--disk-dir", str(workdir), "--disk-max-bytes", "100"],
        workdir,
        per_process=True,
    )
    if backend == "threads":
        # files up to 1 MiB fit under a 2048-block limit (512 or 1024 bytes per block), 4 MiB not
        limited = ["sh", "-c", "trap '' XFSZ\nulimit -f 2048\nexec \"$@\"", "sh", *run]
        expect_error(
            "write-fails",
            1,
            [f"disk: cannot write '{w}/bspprobe-[^/]+/data': File too large"],
            [*limited, "--disk-dir", str(workdir), "--disk-max-bytes", "4194304", "--reps", "1"],
            workdir,
        )
