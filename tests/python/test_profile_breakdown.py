"""bspkit.model.breakdown and `bspkit profile`'s breakdown of the time into Horvitz &
Bisseling's five parts (seed 004, lines 217-219): on a synthetic profile whose per-process
compute, packing, data moved at the call and sync times are known, computed here from the
definitions, not from the module's formulas."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from synth_profile import StepSpec, records, write_profile

from bspkit.model import breakdown as bd
from bspkit.model import profile as pf
from bspkit.model.params import Params

from conftest import bspkit_in_process
from synth import L_EMPTY, PARAMS_JSON

P = 3
# 0: puts (communicates); the slowest process arrives last, the others wait for it
# 1: moves nothing (an empty sync: 10 ms past the last arrival)
# 2: puts again, phase "b"
# 3: local work, ended by bsp_end
COMPUTE = [[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [0.4, 0.1, 0.1], [0.2, 0.1, 0.3]]
SYNC = [[2.6, 1.6, 0.6], [0.01, 0.01, 0.01], [0.3, 0.6, 0.6], [0.002, 0.1, 0.002]]
PACK = [[0.2, 0.4, 0.6], [0.0, 0.0, 0.0], [0.1, 0.05, 0.0], [0.0, 0.0, 0.0]]
DIRECT = [[0.0, 0.3, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
PUTS = {0: [(1, 1, 10)], 1: [(2, 1, 10)], 2: [(0, 1, 10)]}
PHASES = ["a", "a", "b", "b"]


def steps(pack: bool = True, empty_sync: bool = True) -> list[StepSpec]:
    out = []
    for k in range(4):
        out.append(
            StepSpec(
                COMPUTE[k],
                SYNC[k],
                out=PUTS if k in (0, 2) or (k == 1 and not empty_sync) else {},
                end="bsp_end" if k == 3 else "bsp_sync",
                site=None if k == 3 else (0, 0x100 * (k + 1)),
                phase=PHASES[k],
                pack=PACK[k] if pack else None,
                direct=DIRECT[k] if pack else None,
            )
        )
    return out


def analysis(tmp_path: Path, **kw: bool) -> pf.Analysis:
    path = write_profile(tmp_path / "run.jsonl", records(P, steps(**kw)))
    return pf.analyze(pf.read_profile(path), addr2line="")


def params(p: int = P) -> Params:
    d = copy.deepcopy(PARAMS_JSON)
    d["p"] = p
    d["machine"] = {"host": "synthhost", "backend": "threads"}
    return Params.from_json(d)


def mean(v: list[float]) -> float:
    return sum(v) / len(v)


def expected(k: int, l_s: float | None) -> dict[str, float | None]:
    """Superstep k's five parts from the definitions (the module docstring)."""
    c, sy, pk, d = COMPUTE[k], SYNC[k], PACK[k], DIRECT[k]
    time = max(ci + si for ci, si in zip(c, sy, strict=True))
    after_arrival = time - max(c)
    moved = k in (0, 2)
    sync = None if l_s is None else min(l_s, after_arrival) if moved else after_arrival
    return {
        "computation": mean([ci - pi - di for ci, pi, di in zip(c, pk, d, strict=True)]),
        "packing": mean(pk),
        # H&B: the average time a process waits for the others to finish their computation
        "idle": mean([max(c) - ci for ci in c]),
        "communication": after_arrival - (sync or 0.0) + mean(d),
        "synchronisation": sync,
        "total": time,
    }


def check_parts(b: bd.Breakdown, l_s: float | None) -> None:
    for k, parts in enumerate(b.steps):
        want = expected(k, l_s)
        for name, value in want.items():
            got = getattr(parts, name)
            assert (got is None) == (value is None), (k, name)
            if value is not None:
                assert got == pytest.approx(value, abs=1e-12), (k, name)
        # the five add up to the superstep's measured time
        assert sum(getattr(parts, n) or 0.0 for n in bd.PARTS) == pytest.approx(b.analysis.steps[k].time_s, abs=1e-12)
    total = b.total
    assert sum(getattr(total, n) or 0.0 for n in bd.PARTS) == pytest.approx(
        sum(s.time_s for s in b.analysis.steps), abs=1e-12
    )


def test_idle_is_the_mean_wait_for_the_slowest_compute(tmp_path: Path) -> None:
    """Superstep 0: compute 1, 2, 3 s: the processes wait 2, 1 and 0 s for the slowest, 1 s
    on average; the waits in the sync while data moves are not idle time."""
    b = bd.breakdown(analysis(tmp_path), params(), "here.json")
    assert b.steps[0].idle == pytest.approx(1.0)
    assert b.steps[2].idle == pytest.approx(0.4 - 0.2)
    assert b.packing_recorded
    check_parts(b, L_EMPTY)
    assert b.latency is not None and b.latency.source == "params" and "here.json" in b.latency.detail


def test_synchronisation_from_the_profiles_empty_syncs_or_not_separated(tmp_path: Path) -> None:
    """Without a parameter file, l is the median time past the last arrival of the profile's
    supersteps that moved nothing (here the one, 10 ms); without those, it stays in
    communication. A parameter file of another p says so."""
    b = bd.breakdown(analysis(tmp_path))
    assert b.latency is not None and b.latency.source == "profile"
    assert b.latency.seconds == pytest.approx(0.01)
    check_parts(b, 0.01)
    b = bd.breakdown(analysis(tmp_path, empty_sync=False))
    assert b.latency is None and b.total.synchronisation is None
    check_parts(b, None)
    b = bd.breakdown(analysis(tmp_path), params(p=8), "cluster.json")
    assert b.latency is not None and "this run has p = 3" in b.latency.detail


def test_a_profile_without_packing_counts_it_as_computation(tmp_path: Path) -> None:
    b = bd.breakdown(analysis(tmp_path, pack=False))
    assert not b.packing_recorded and b.total.packing == 0.0
    assert b.steps[0].computation == pytest.approx(mean(COMPUTE[0]))


def test_command_text_json_and_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = write_profile(tmp_path / "run.jsonl", records(P, steps()))
    here = tmp_path / "here.json"
    here.write_text(params().dumps())
    js, html = tmp_path / "a.json", tmp_path / "a.html"
    rc, out, err = bspkit_in_process(
        capsys, "profile", str(prof), "--params", str(here), "--json", str(js), "-o", str(html)
    )
    assert rc == 0, err
    assert "where the time goes" in out and f"the empty sync of {here}" in out
    d = json.loads(js.read_text())["breakdown"]
    assert d["parts"] == list(bd.PARTS) and d["l_s"] == L_EMPTY and d["l_source"] == "params"
    for k, row in enumerate(d["supersteps"]):
        for name, value in expected(k, L_EMPTY).items():
            assert row[f"{name}_s"] == pytest.approx(value, abs=1e-12)
    # per phase: the supersteps' parts summed
    by_phase = {row["phase"]: row for row in d["by_phase"]}
    assert by_phase["a"]["idle_s"] == pytest.approx(1.0 + 0.0) and by_phase["b"]["total_s"] == pytest.approx(
        d["supersteps"][2]["total_s"] + d["supersteps"][3]["total_s"]
    )
    assert d["total"]["total_s"] == pytest.approx(sum(row["total_s"] for row in d["supersteps"]))
    page = html.read_text()
    assert 'id="breakdown"' in page and "Horvitz &amp; Bisseling" in page
