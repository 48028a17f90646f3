"""The processor-memory suite's operations and element types beyond read/write of int/double
(Kang et al. `003_...` sec. 4.3.1, Fig. 45-56: multiply, divide, single precision): their
records are read, fitted per operation and type like read and write, and shown by
`bspkit imh mem`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bspkit.measure.rawdata import load_raw
from bspkit.model import imh
from bspkit.model.fit import fit_run
from bspkit.model.params import Params

from conftest import run_bspkit
from synth import ImhTruth, SynthSpec, synthetic_records

# in cache (warm) a divide costs this much more per element than a read; out of cache the
# operation does not matter (the paper's finding, sec. 4.3.1 line 519)
DIVIDE_EXTRA_S = 2e-9
MULTIPLY_EXTRA_S = 0.2e-9


def derived(rec: dict[str, Any], op: str, elem: str | None = None) -> dict[str, Any]:
    """A read record as another operation (and element type) would give it: the in-cache
    passes pay the operation's extra time per element."""
    extra = {"multiply": MULTIPLY_EXTRA_S, "divide": DIVIDE_EXTRA_S}[op] if rec["cache"] == "warm" else 0.0
    out = dict(rec, op=op, samples_s=[s + extra * rec["n"] for s in rec["samples_s"]])
    if elem:
        out.update(elem=elem, elem_bytes=4)
    return out


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Params, Path]:
    """A synthetic probe run with multiply and divide of every type, and float reads and writes
    (the int records as float ones: the same element size), fitted; the parameter file."""
    spec = SynthSpec(p=2, imh=ImhTruth(), noise=0.01, validation=0, as_suite=False)
    recs = synthetic_records(spec)
    mem = [r for r in recs if r["type"] == "mem"]
    extra = [dict(r, elem="float") for r in mem if r["elem"] == "int"]
    reads = [r for r in mem + extra if r["op"] == "read"]
    extra += [derived(r, op) for r in reads for op in ("multiply", "divide")]
    footer = recs.pop()
    path = tmp_path_factory.mktemp("imh_ops") / "raw.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*recs, *extra, footer]), encoding="utf-8")
    params = fit_run(load_raw(path))
    out = path.with_name("params.json")
    out.write_text(params.dumps())
    return params, out


def test_every_operation_and_type_is_fitted(fitted: tuple[Params, Path]) -> None:
    fits = fitted[0].imh["mem"]["fits_paper"]
    truth = ImhTruth()
    for op in imh.MEM_OPS:
        for elem in imh.MEM_ELEMS:
            assert f"{op}/{elem}/cold/p2" in fits and f"{op}/{elem}/warm/p1" in fits, (op, elem)
    tn, tc, _ = truth.eq4["L1"]
    for elem in imh.MEM_ELEMS:
        warm = fits[f"divide/{elem}/warm/p1"]["L1"]["model"]
        assert warm["T_n"] == pytest.approx(tn + DIVIDE_EXTRA_S, rel=0.1), (elem, warm)
        warm = fits[f"multiply/{elem}/warm/p1"]["L1"]["model"]
        assert warm["T_n"] == pytest.approx(tn + MULTIPLY_EXTRA_S, rel=0.15), (elem, warm)
        # out of cache: the data path's cost, whatever the operation
        cold, read = fits[f"divide/{elem}/cold/p2"]["memory"]["model"], fits[f"read/{elem}/cold/p2"]["memory"]["model"]
        assert cold["T_c"] == pytest.approx(read["T_c"], rel=0.05), (elem, cold, read)


def test_rows_follow_the_papers_figures(fitted: tuple[Params, Path]) -> None:
    """Fig. 45-56's order: READ, WRITE, MULTIPLY, DIVIDE, each Integer, Single, Double."""
    rows = imh.mem_fit_rows(fitted[0].imh["mem"])
    pairs = list(dict.fromkeys((r["op"], r["elem"]) for r in rows))
    assert pairs == [(op, elem) for op in imh.MEM_OPS for elem in imh.MEM_ELEMS]
    only = imh.mem_fit_rows(fitted[0].imh["mem"], ops=["divide"], elems=["float"])
    assert only and {(r["op"], r["elem"]) for r in only} == {("divide", "float")}


def test_bspkit_imh_mem_shows_the_fits(fitted: tuple[Params, Path]) -> None:
    params, path = fitted
    r = run_bspkit("imh", "mem", "--params", str(path), "--ops", "divide", "--elems", "float,double")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    shown = [ln.split() for ln in lines if ln.startswith("divide ")]
    want = imh.mem_fit_rows(params.imh["mem"], ["divide"], ["float", "double"])
    assert [(s[1], s[2], int(s[3]), s[4]) for s in shown] == [
        (w["elem"], w["cache"], w["procs"], w["level"]) for w in want
    ]
    for s, w in zip(shown, want, strict=True):  # T_n in ns, 3 digits; a level of too few points says so
        if w["model"] is None:
            assert s[6:8] == ["fit", "failed:"], (s, w)
        else:
            assert float(s[6]) == pytest.approx(w["model"]["T_n"] * 1e9, rel=0.01), (s, w)
    bad = run_bspkit("imh", "mem", "--params", str(path), "--ops", "add")
    assert bad.returncode == 2 and "--ops: unknown name 'add'" in bad.stderr
