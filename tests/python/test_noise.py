"""The machine's noise measured in every run (issue 39): the canary beside every batch marks a
planted slowdown and names it, the sentinels' visits give a known time-to-time spread back, the
adaptive rule stops points where its model says, and files without any of it still fit.

Synthetic raw files need nothing built; the tests of the C rule (bspprobe-adaptive-test) and of
a driver's canary need BSPKIT_BUILD_DIR and skip without it. The probe's own records (the
canary's lists, sentinel records, a planted slowdown in a real run) are checked in
test_probe_output.py.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit.measure import machine_state as ms
from bspkit.measure.rawdata import load_raw, median_ci, median_ci_rel
from bspkit.model.fit import fit_run
from bspkit.model.params import Params

from conftest import BUILD, built_program
from synth import SynthSpec, synthetic_records

CANARY_S = 50e-6  # the synthetic canary's usual time


def quiet_state(p: int, canary: list[tuple[float, float]] | None) -> dict[str, Any]:
    """A state object in which every process held its core, with the canary's times (before,
    after) per process when given."""
    wall = 0.01
    state: dict[str, Any] = {
        "wall_s": wall,
        "cpu_s": [wall] * p,
        "waited_s": [0.0] * p,
        "involuntary": [0] * p,
        "cpus": list(range(p)),
        "migrated": [False] * p,
        "steal_s": 0.0,
        "cpu_pressure_s": 0.0,
        "running": p,
        "cores_online": p,
    }
    if canary is not None:
        state["canary_before_s"] = [b for b, _a in canary]
        state["canary_after_s"] = [a for _b, a in canary]
    return state


def with_canary(
    records: list[dict[str, Any]], p: int, slow: dict[int, tuple[int, str, float]], seed: int = 3
) -> list[dict[str, Any]]:
    """The records with a state object on every timed batch (f alone on process 0) and the
    canary in it: log-normal around CANARY_S with a 2% sd, and for the g record with seq k in
    `slow` (process, "before"|"after", factor) that canary slowed by the factor. The g and
    validation records get their seq in file order."""
    rng = np.random.default_rng(seed)
    seq = 0
    out = []
    for rec in records:
        rec = dict(rec)
        if rec["type"] in ("g", "validation"):
            rec["seq"] = seq
            seq += 1
        if rec["type"] in ("f", "g", "validation", "l", "as"):
            procs = 1 if rec["type"] == "f" else p
            times = [tuple(CANARY_S * math.exp(rng.normal(0, 0.02)) for _ in range(2)) for _ in range(procs)]
            if rec["type"] == "g" and rec["seq"] in slow:
                pid, when, factor = slow[rec["seq"]]
                b, a = times[pid]
                times[pid] = (b * factor, a) if when == "before" else (b, a * factor)
            rec["state"] = quiet_state(procs, [(b, a) for b, a in times])
        out.append(rec)
    return out


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ------------------------------------------------------------------------------ the canary


def test_the_canary_marks_exactly_the_slowed_batch_and_names_it(tmp_path: Path) -> None:
    """One g batch whose canary ran 1.8x its median on process 1 (after the batch): the reader
    marks that batch and no other, the fit leaves its point out of put/alltoall (the sample stays
    in the raw data) and lists it under noise.canary with the evidence."""
    spec = SynthSpec(p=2, validation=0)
    records = with_canary(synthetic_records(spec), 2, {17: (1, "after", 1.8)})
    run = load_raw(write(tmp_path / "raw.jsonl", records))
    assert run.canary is not None and run.canary.threshold == pytest.approx(ms.CANARY_MIN_RATIO)
    assert run.canary.median_s == pytest.approx(CANARY_S, rel=0.02)
    marked = [pt for pt in run.g if pt.mark is not None]
    assert len(marked) == 1 and marked[0].seq == 17 and marked[0].mark is not None
    mark = marked[0].mark
    assert mark.kind == "canary" and mark.worst_process == 1 and mark.canary_ratio == pytest.approx(1.8, rel=0.06)
    assert mark.evidence.startswith("canary 1.8x its median on process 1 (after the batch")
    params = fit_run(run)
    canary = params.noise["canary"]
    assert canary["slowed_count"] == 1
    (row,) = canary["slowed"]
    assert row["record"] == "g" and row["seq"] == 17 and row["process"] == 1
    want = next(r for r in records if r.get("seq") == 17)
    assert row["label"] == f"g {want['primitive']}/{want['pattern']} h*={want['msg_words']} c={want['count']}"
    assert row["where"].endswith(f":{records.index(want) + 1}")  # the record's line in the raw file
    key = f"{want['primitive']}/{want['pattern']}"
    assert params.machine_state["left_out_points"][key] == 1 and params.machine_state["canary_marked"] == 1
    assert params.g[key].points == len(run.g_points(key)) - 1  # the fit left it out ...
    assert any(pt.seq == 17 for pt in run.g)  # ... the raw data keep it
    # the parameter file reads back with the noise object as written
    again = Params.from_json(json.loads(params.dumps()))
    assert again.noise["canary"]["slowed"][0]["evidence"] == row["evidence"]


def test_a_canary_marked_l_is_kept_and_named_apart_from_the_cores_marks(tmp_path: Path) -> None:
    """l is measured once per variant: the fit keeps it although the canary marked it and names
    it in machine_state.canary_kept, not in kept_marked (which says a process lost its core)."""
    records = with_canary(synthetic_records(SynthSpec(p=2, validation=0)), 2, {})
    empty = next(r for r in records if r["type"] == "l" and r["variant"] == "empty")
    empty["state"]["canary_after_s"][0] *= 2.0
    params = fit_run(load_raw(write(tmp_path / "raw.jsonl", records)))
    ms_json = params.machine_state
    assert ms_json["kept_marked"] == [] and len(ms_json["canary_kept"]) == 1, ms_json
    assert ms_json["canary_kept"][0].startswith("l empty: canary 2.0x its median on process 0 (after the batch")
    assert params.l["empty"] is not None
    assert [row["label"] for row in params.noise["canary"]["slowed"]] == ["l empty"]


def test_a_slowdown_within_the_canarys_own_noise_marks_nothing(tmp_path: Path) -> None:
    """1.1x is below the 1.2x floor, and a jittery canary raises its own threshold (1 + 4 sd)."""
    records = with_canary(synthetic_records(SynthSpec(p=2, validation=0)), 2, {5: (0, "before", 1.1)})
    run = load_raw(write(tmp_path / "raw.jsonl", records))
    assert not run.canary_slowed and all(pt.mark is None for pt in run.g)
    rng = np.random.default_rng(1)
    jittery = ms.canary_reference(
        quiet_state(1, [(CANARY_S * math.exp(b), CANARY_S * math.exp(a))]) for b, a in rng.normal(0, 0.1, (400, 2))
    )
    assert jittery is not None and 1.33 < jittery.threshold < 1.47  # 1 + 4 x 0.1


def test_a_core_mark_keeps_its_evidence_and_adds_the_canarys() -> None:
    slow = quiet_state(2, [(CANARY_S, CANARY_S), (CANARY_S, 2.5 * CANARY_S)])
    slow["waited_s"] = [0.0, 0.004]
    ref = ms.canary_reference([quiet_state(2, [(CANARY_S, CANARY_S)] * 2)] * 20)
    mark = ms.batch_mark(slow, ref)
    assert mark is not None and mark.kind == "core" and mark.held_share == pytest.approx(0.6)
    assert (
        "process 1 waited 4 ms for a core" in mark.evidence and "; canary 2.5x its median on process 1" in mark.evidence
    )
    assert mark.as_dict()["canary_ratio"] == pytest.approx(2.5)


def test_a_drivers_repetitions_are_checked_against_the_probes_canary() -> None:
    """repetition_canary_marks: against the probe's canary (params.noise.canary) or, without
    it, the run's own repetitions; [] for a driver run without a canary."""
    reps = [quiet_state(2, [(CANARY_S, CANARY_S)] * 2) for _ in range(5)]
    reps[3] = quiet_state(2, [(CANARY_S, CANARY_S), (CANARY_S, 3 * CANARY_S)])
    marks = ms.repetition_canary_marks({"state": reps})
    assert [m is not None for m in marks] == [False, False, False, True, False]
    assert marks[3] is not None and marks[3].evidence.startswith("canary 3.0x its median on process 1")
    probe = ms.CanaryReference.from_json({"median_s": CANARY_S / 2, "threshold": 1.3, "per_process_median_s": []})
    assert all(m is not None for m in ms.repetition_canary_marks({"state": reps}, probe))  # a slower machine now
    assert ms.repetition_canary_marks({"state": [quiet_state(2, None)]}) == []
    assert ms.repetition_canary_marks({}) == []


def test_validate_scores_a_run_on_the_repetitions_the_canary_did_not_mark() -> None:
    """measure/validation: a repetition whose canary ran 3x slower leaves the score (the run's
    median over the other four), named with the canary's evidence; a state mark still wins."""
    from bspkit.measure import validation as va

    from synth import PARAMS_JSON

    params = Params.from_json(PARAMS_JSON)
    reps = [quiet_state(2, [(CANARY_S, CANARY_S)] * 2) for _ in range(5)]
    reps[1] = quiet_state(2, [(CANARY_S, 3 * CANARY_S), (CANARY_S, CANARY_S)])
    marks = va.repetition_marks({"state": reps}, params)
    assert [m is not None for m in marks] == [False, True, False, False, False]
    held = ms.run_verdict([1.0, 3.0, 1.1, 0.9, 1.2], marks)
    assert held.times_s == (1.0, 1.1, 0.9, 1.2) and held.marked_reps == 1
    assert held.evidence is not None and held.evidence.startswith("canary 3.0x its median on process 0")
    # no canary recorded: the state's marks alone (none here)
    assert va.repetition_marks({"state": [quiet_state(2, None)] * 3}, params) == [None, None, None]


# --------------------------------------------------------------------------- the sentinels


def sentinel_records(sd: dict[str, float], visits: int, seed: int = 7) -> list[dict[str, Any]]:
    """Visits of the four regimes whose medians are log-normal with the given sd around a fixed
    time, each visit 9 samples within 0.5% of its median (the median exact)."""
    rng = np.random.default_rng(seed)
    base = {"compute": 30e-6, "sync": 0.3e-6, "small_h": 2e-6, "large_h": 400e-6}
    recs = []
    for v in range(visits):
        for regime, s in sd.items():
            med = base[regime] * math.exp(rng.normal(0.0, s))
            samples = sorted(med * (1 + 0.005 * rng.uniform(-1, 1)) for _ in range(8))
            samples.insert(4, med)  # the middle one of 9
            recs.append(
                {
                    "type": "sentinel",
                    "regime": regime,
                    "visit": v,
                    "where": "in g",
                    "seq": 25 * v,
                    "t_s": 0.5 * v,
                    "samples_s": samples,
                    "reps": 9,
                    "median_s": med,
                    **({"h": 64 if regime == "small_h" else 131072} if regime.endswith("_h") else {}),
                }
            )
    return recs


def test_the_sentinels_give_the_known_spread_per_regime(tmp_path: Path) -> None:
    """Visit medians log-normal with sd 2%, 5%, 7% and 20%: noise.regimes gives each regime's
    robust sd of log within a quarter of it (200 visits), the visit count and max/min, and a
    warning for the regimes that moved by more than 10%."""
    sd = {"compute": 0.05, "sync": 0.20, "small_h": 0.07, "large_h": 0.02}
    records = synthetic_records(SynthSpec(p=2))
    records[-1:-1] = sentinel_records(sd, 200)
    params = fit_run(load_raw(write(tmp_path / "raw.jsonl", records)))
    sentinels = params.noise["regimes"]
    assert list(sentinels) == ["compute", "sync", "small_h", "large_h"]
    for regime, want in sd.items():
        row = sentinels[regime]
        assert row["visits"] == 200 and len(row["series"]) == 200, row
        assert row["rel_sd"] == pytest.approx(want, rel=0.25), (regime, row["rel_sd"])
        assert row["max_over_min"] == pytest.approx(
            max(m for _t, m in row["series"]) / min(m for _t, m in row["series"])  # type: ignore[type-var]
        )
        assert row["within_spread"] < 0.01 and row["marked_visits"] == 0
        assert row.get("h") == {"small_h": 64, "large_h": 131072}.get(regime)
    moved = [w for w in params.noise["warnings"] if w.startswith("the sentinel ")]
    assert len(moved) == 1 and moved[0].startswith("the sentinel sync (bsp_sync alone (batched)) moved by "), moved


def test_a_file_without_sentinels_or_canary_fits_as_before(tmp_path: Path) -> None:
    """Older raw files: no sentinels, no canary, no adaptive keys: the noise object has none of
    the three, the machine's state counts no canary mark, and the fit is the same."""
    records = synthetic_records(SynthSpec(p=2))
    run = load_raw(write(tmp_path / "raw.jsonl", records))
    assert run.sentinels == [] and run.canary is None and run.canary_slowed == []
    params = fit_run(run)
    assert not {"regimes", "canary", "adaptive"} & set(params.noise)
    assert params.machine_state["canary_marked"] == 0 and params.machine_state["canary_threshold"] is None
    assert params.g["put/alltoall"].predict is not None


# ----------------------------------------------------------------------- the adaptive rule


def model_next(rule: tuple[int, int, float, float, float], x: list[float], n: int) -> tuple[int, str | None]:
    """A model of timing.c's bspp_adaptive_next: (0, why) to stop, else (the next count, None)."""
    min_reps, max_reps, min_s, target, max_s = rule
    elapsed = sum(x[:n])
    ci = median_ci_rel(x[:n])
    timed = elapsed >= min_s
    if timed and ci is not None and ci <= target:
        return 0, "ci"
    if n >= max_reps:
        return 0, "max_reps"
    if timed and elapsed >= max_s:
        return 0, "time"
    nxt = n + max(n // 2, 2)
    per = elapsed / n
    if per > 0:
        fit = max(1, math.ceil(((max_s if timed else min_s) - elapsed) / per))
        nxt = min(nxt, n + fit)
    return max(min(nxt, max_reps), n + 1), None


def model_stream(rule: tuple[int, int, float, float, float], x: list[float]) -> tuple[int, str]:
    n = rule[0]
    while True:
        nxt, why = model_next(rule, x, n)
        if why is not None:
            return n, why
        n = nxt


RULE = (6, 400, 0.0, 0.03, 0.02)  # the full probe's


def stream(kind: str, rng: np.random.Generator) -> list[float]:
    if kind == "steady":
        return [1e-5] * 1000
    if kind == "alternating":
        return [1.2e-6 if i % 2 else 1e-6 for i in range(1000)]
    if kind == "slow alternating":
        return [1.2e-4 if i % 2 else 1e-4 for i in range(1000)]
    if kind == "settles":
        return [1e-6 * (1 + 0.1 * i) if i < 6 else 1e-6 for i in range(1000)]
    if kind == "one gap":
        return [4e-3 if i == 3 else 2e-6 for i in range(1000)]
    sd = {"lognormal 1%": 0.01, "lognormal 5%": 0.05, "lognormal 20%": 0.2}[kind]
    return [float(v) for v in 3e-5 * np.exp(rng.normal(0, sd, 1000))]


# the counts worked out by hand (probe/adaptive_test.c says how)
BY_HAND = {
    "steady": (6, "ci"),
    "alternating": (400, "max_reps"),
    "slow alternating": (182, "time"),
    "settles": (28, "ci"),
    "one gap": (9, "ci"),
}


@pytest.mark.parametrize("kind", list(BY_HAND))
def test_the_model_of_the_rule_stops_where_worked_out(kind: str) -> None:
    assert model_stream(RULE, stream(kind, np.random.default_rng(0))) == BY_HAND[kind]


def test_the_ci_of_the_rule_is_the_fits_interval_of_the_median() -> None:
    """rawdata.median_ci_rel (the rule's, also of older files) is half the width of
    rawdata.median_ci (the fit's) over the median, for every n from 6 to 400."""
    rng = np.random.default_rng(5)
    assert median_ci_rel([1.0] * 5) is None
    for n in range(6, 401):
        x = rng.lognormal(0, 0.1, n)
        lo, hi = median_ci(x)
        assert median_ci_rel(x) == pytest.approx((hi - lo) / 2 / np.median(x), rel=1e-12), n


ADAPTIVE_TEST = BUILD / "probe" / "bspprobe-adaptive-test" if BUILD else None
needs_adaptive_test = pytest.mark.skipif(
    not (ADAPTIVE_TEST and ADAPTIVE_TEST.is_file()),
    reason="BSPKIT_BUILD_DIR is not set or has no bspprobe-adaptive-test",
)


@needs_adaptive_test
def test_the_c_rule_passes_its_self_checks_and_has_the_fits_ranks() -> None:
    assert ADAPTIVE_TEST is not None
    r = subprocess.run([str(ADAPTIVE_TEST)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "0 failed" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(ADAPTIVE_TEST), "--ranks", "400"], capture_output=True, text=True, timeout=30)
    ranks = dict(tuple(map(int, line.split())) for line in r.stdout.splitlines())
    for n in range(1, 401):
        x = np.arange(n, dtype=float)
        want = -1 if n < 6 else int(median_ci(x)[0])  # median_ci's lower end is x_(j) = j here
        assert ranks[n] == want, n


@needs_adaptive_test
@pytest.mark.parametrize("kind", [*BY_HAND, "lognormal 1%", "lognormal 5%", "lognormal 20%"])
@pytest.mark.parametrize(
    "rule", [RULE, (6, 200, 0.0, 0.05, 4e-3), (6, 50, 1e-4, 0.02, 1e-3)], ids=["full", "quick", "floor"]
)
def test_the_c_rule_stops_where_its_model_does(kind: str, rule: tuple[int, int, float, float, float]) -> None:
    """bspp_adaptive_next (timing.c) fed a stream as the probe takes it: the count, the reason
    and the interval of the model above."""
    assert ADAPTIVE_TEST is not None
    x = stream(kind, np.random.default_rng(11))
    text = " ".join(map(str, rule)) + "\n" + "\n".join(repr(v) for v in x) + "\n"
    r = subprocess.run([str(ADAPTIVE_TEST), "--stream"], input=text, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    reps, why, ci = r.stdout.split()
    assert (int(reps), why) == model_stream(rule, x)
    want_ci = median_ci_rel(x[: int(reps)])
    assert float(ci) == pytest.approx(want_ci if want_ci is not None else -1, abs=1e-12)


# -------------------------------------------------------------------- a driver's canary


DRIVER = built_program("bspalg-inprod")


@pytest.mark.skipif(not (DRIVER and DRIVER.is_file()), reason="BSPKIT_BUILD_DIR is not set or has no bspalg-inprod")
def test_a_driver_writes_the_canary_of_every_repetition_and_a_planted_one_is_marked() -> None:
    """bspalg-inprod with BSPKIT_CANARY_SLOW=2: every repetition's state has the canary before
    and after on each process, and the reader marks repetition 2 (3x the work), far above any
    other it may mark."""
    bsprun = built_program("bsprun")
    assert DRIVER and bsprun
    r = subprocess.run(
        [str(bsprun), "-n", "2", str(DRIVER), "--size", "100000", "--reps", "5", "--json", "-"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "BSPKIT_CANARY_SLOW": "2"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout.splitlines()[-1])
    assert len(run["state"]) == 5
    for state in run["state"]:
        assert len(state["canary_before_s"]) == 2 and all(
            t > 0 for t in state["canary_before_s"] + state["canary_after_s"]
        )
    marks = ms.repetition_canary_marks(run)
    assert marks[2] is not None and marks[2].canary_ratio is not None and marks[2].canary_ratio > 2
    # the machine's own jitter may mark another repetition too, never as far
    others = [m.canary_ratio for i, m in enumerate(marks) if m is not None and i != 2]
    assert all(r is not None and r < 2 for r in others), [m and m.evidence for m in marks]


# ------------------------------------------------------------------ two states of the machine


def two_state_run(tmp_path: Path, slow: tuple[float, float] = (0.3, 0.55), factor: float = 5.0) -> tuple[Path, int]:
    """A synthetic probe whose grid and validation points are measured in one random order
    (seq) and whose communication took `factor` times as long for the share `slow` of it, with
    sentinels visiting every 20 points that see the same (compute unchanged). Returns the raw
    file and the number of points measured in the slow state."""
    rng = np.random.default_rng(3)
    records = synthetic_records(SynthSpec(p=2))
    timed = [r for r in records if r.get("type") in ("g", "validation")]
    order = rng.permutation(len(timed))
    n = len(timed)
    lo, hi = int(slow[0] * n), int(slow[1] * n)
    for seq, i in enumerate(order):
        rec = timed[int(i)]
        rec["seq"] = seq
        if lo <= seq < hi:
            rec["samples_s"] = [t * factor for t in rec["samples_s"]]
    base = {"compute": 30e-6, "sync": 0.3e-6, "small_h": 2e-6, "large_h": 400e-6}
    sentinels = []
    for v, seq in enumerate(range(0, n, 4)):
        for regime, t in base.items():
            med = t * (factor if regime != "compute" and lo <= seq < hi else 1.0) * math.exp(rng.normal(0.0, 0.03))
            sentinels.append(
                {
                    "type": "sentinel",
                    "regime": regime,
                    "visit": v,
                    "where": "in g",
                    "seq": seq,
                    "t_s": 0.1 * seq,
                    "samples_s": [med] * 9,
                    "reps": 9,
                    "median_s": med,
                    **({"h": 64 if regime == "small_h" else 131072} if regime.endswith("_h") else {}),
                }
            )
    records[-1:-1] = sentinels
    return write(tmp_path / "raw.jsonl", records), hi - lo


def test_two_states_of_the_machine_are_found_and_the_fit_is_of_the_usual_one(tmp_path: Path) -> None:
    """Communication 5x slower for a quarter of the run: the sentinels find two states 5x apart,
    the points measured in the slower one and across a switch are left out, and the fit gives the
    faster state's g, which the same run without sentinels misses."""
    from bspkit.measure import sentinel_states as ss
    from bspkit.model import verdict

    path, slow_points = two_state_run(tmp_path)
    run = load_raw(path)
    states = ss.find_states(run.sentinels)
    assert states.count == 2
    for regime in ("sync", "small_h", "large_h"):
        assert states.ratio["slower"][regime] == pytest.approx(5.0, rel=0.1)
    params = fit_run(run)
    st = params.noise["states"]
    assert st["count"] == 2 and set(st["ratio"]) == {"slower"}
    g_slow = sum(1 for pt in run.g if pt.mark is not None and "a slower state" in pt.mark.evidence)
    assert st["points"]["slower"] == g_slow > 0 and st["points"]["faster"] == 0
    assert st["points"]["between"] >= 1  # the two switches fall between visits
    assert st["points"]["run"] + st["points"]["slower"] + st["points"]["between"] == len(run.g)
    # the noise of the state the fit is of: the planted 3 %, not the 5x jump
    assert params.noise["regimes"]["large_h"]["rel_sd"] < 0.06
    # the fit is of the faster state: put's g_inf as planted (1 ns/word), and the check passes
    g_inf = params.g["put/alltoall"].predict.g_inf  # type: ignore[union-attr]
    assert g_inf == pytest.approx(1.0e-9, rel=0.1)
    assert params.validation["mean_abs_rel_error"] < 0.1
    v = verdict.probe_verdict(params)
    assert "the machine ran in 2 states (the sentinels' communication in a slower one than the run's at " in v.sentence
    assert "grid points in the run's state, which the fit is of" in v.sentence
    notes = verdict.probe_notes(params, None)
    assert any("in the other state, communication and synchronization are up to 5." in n for n in notes), notes
    # without the sentinels the same points mix both states and the check fails
    plain = [json.loads(line) for line in path.read_text().splitlines()]
    no_sentinels = write(tmp_path / "plain.jsonl", [r for r in plain if r.get("type") != "sentinel"])
    mixed = fit_run(load_raw(no_sentinels))
    assert "states" not in mixed.noise
    assert mixed.validation["mean_abs_rel_error"] > 0.2


def test_one_state_with_noise_is_not_split(tmp_path: Path) -> None:
    """Sentinels that scatter (sd 20 %) but never jump: one state, nothing marked."""
    from bspkit.measure import sentinel_states as ss

    records = synthetic_records(SynthSpec(p=2))
    records[-1:-1] = sentinel_records({"compute": 0.02, "sync": 0.2, "small_h": 0.2, "large_h": 0.2}, 120)
    run = load_raw(write(tmp_path / "raw.jsonl", records))
    assert ss.find_states(run.sentinels).count == 1
    params = fit_run(run)
    assert "states" not in params.noise
    assert all(pt.mark is None for pt in run.g)


def test_three_states_and_a_visit_across_a_switch() -> None:
    """Visits as one run on this VM showed them: most at 1x, ten at 0.42x, sixteen at 4x, one
    at 1.8x (it straddled a switch): the run's state is the 1x one, the faster and the slower
    count as states, the straddling visit is another state's (its points are left out) but
    makes none of its own."""
    from bspkit.measure import sentinel_states as ss
    from bspkit.measure.rawdata import stats

    rng = np.random.default_rng(5)
    factors = [1.0] * 90 + [0.42] * 10 + [4.0] * 16 + [1.8]
    rng.shuffle(factors)
    recs = []
    for v, f in enumerate(factors):
        for regime, base in (("sync", 0.12e-6), ("small_h", 0.5e-6), ("large_h", 90e-6)):
            med = base * f * math.exp(rng.normal(0.0, 0.05))
            recs.append({"regime": regime, "visit": v, "seq": 30 * v, "t_s": 0.5 * v, "_stats": stats(np.full(3, med))})
    st = ss.find_states(recs)
    assert st.count == 3 and set(st.ratio) == {"faster", "slower"}
    assert st.ratio["faster"]["sync"] == pytest.approx(0.42, rel=0.1)
    assert st.ratio["slower"]["large_h"] == pytest.approx(4.0, rel=0.1)
    assert st.others == {"faster": 10, "slower": 17}
    straddler = next(v for v, f in zip(st.visits, factors, strict=True) if f == 1.8)
    assert straddler.state == "slower"
    assert [v.state for v in st.visits].count("run") == 90
    text = ss.states_sentence(st.to_json())
    assert text.startswith("the machine ran in 3 states (the sentinels' communication in a faster one than the run's")
    assert "in the others and" in text
