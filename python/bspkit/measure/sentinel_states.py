"""The machine's states, from the sentinels (issue 39): a VM whose communication runs in two
states several-fold apart, switching during a run.

Seen on the 2-core VM of these sessions (2026-11-28): in some runs the sentinels' sync, small-h
and large-h times sit at one level for the whole run (sync 97 ns); in others at about 4-6 times
that (sync 350-510 ns, large h 470-510 µs for 2^17 words against 86 µs), and in some the run
starts in one and ends in the other, while the compute sentinel does not move (a placement of the
virtual cores that shares no cache, by the look of it: only what crosses between cores slows).
No scheduler counter and no canary (a kernel in one core's cache) sees it. A fit over such a run
mixes two machines and fits neither; its check is then off by 50-65%, beyond any noise.

What this module does: per sentinel visit, its communication factor, the median over the sync,
small-h and large-h regimes of log(visit median / the regime's median over the run); sorted, the
widest gap between neighbours splits the visits in two states where it is at least STATE_RATIO
and each side holds MIN_STATE_VISITS visits. Each grid and validation point takes the state of
the visits around it in the probe's order (`seq`; g and validation share one random order): the
state of both, or "between" where they differ (the switch came while it was measured). The state
that holds more grid points is the run's; the fit leaves the points of the other state and those
between out (a Mark of kind "state", as it leaves out a batch in which a process lost its core),
the check scores them apart, and the noise of each regime is that of the run's state's visits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bspkit.measure.machine_state import Mark

# two states at least this far apart (the ratio of their communication times)
STATE_RATIO = 2.0
# each state seen at this many visits at least (one slow visit is an outlier, not a state)
MIN_STATE_VISITS = 3
COMM_REGIMES = ("sync", "small_h", "large_h")


@dataclass
class Visit:
    """One sentinel visit: when (t_s, and seq inside the grid's order), its communication factor
    (log, against the run's median) and its state (0 faster, 1 slower; None with one state)."""

    visit: int
    t_s: float
    seq: int | None
    factor_log: float
    state: int | None = None


@dataclass
class States:
    """Two states of the machine found by the sentinels, or one (`count` 1: nothing to do)."""

    count: int
    visits: list[Visit] = field(default_factory=list)
    run_state: int | None = None  # the state that holds more grid points
    ratio: dict[str, float] = field(default_factory=dict)  # per regime: slower state / faster state
    gap_ratio: float | None = None  # the widest gap of the visits' factors, as a ratio
    points: dict[str, int] = field(default_factory=dict)  # grid points per state: "run", "other", "between"

    def state_of(self, seq: int | None) -> int | None:
        """The state around a point measured at seq: that of the visits before and after it
        where they agree; -1 (between) where they differ; None with one state or no seq."""
        if self.count < 2 or seq is None:
            return None
        placed = [v for v in self.visits if v.seq is not None]
        before = [v for v in placed if v.seq <= seq]
        after = [v for v in placed if v.seq > seq]
        states = {v.state for v in (before[-1:] + after[:1])}
        return states.pop() if len(states) == 1 else -1

    def to_json(self) -> dict[str, Any]:
        names = {0: "faster", 1: "slower"}
        return {
            "count": self.count,
            "state_ratio": STATE_RATIO,
            "gap_ratio": self.gap_ratio,
            "ratio": dict(self.ratio),
            "run_state": names.get(self.run_state) if self.run_state is not None else None,
            "points": dict(self.points),
            "visits": [[v.t_s, v.seq, names.get(v.state) if v.state is not None else None] for v in self.visits],
            "note": "the sentinels' communication (sync, small h, large h) in two states at least state_ratio "
            "apart; the fit and its check are of the state that holds more grid points (run_state), the points of "
            "the other state and those measured across a switch (between) are left out of the fit and scored apart",
        }

    def sentence(self) -> str:
        """states_sentence of to_json()."""
        return states_sentence(self.to_json())


def states_sentence(states: Any) -> str:
    """params.json's noise.states in words: "the machine ran in two states (the sentinels'
    communication: sync 3.4x, small h 3.4x, large h 6.0x apart): 2,187 grid points in the slower
    one, which the fit is of; 555 in the faster one and 723 across a switch are left out"; ""
    where there was one state (or no record of it)."""
    if not isinstance(states, dict) or states.get("count") != 2 or states.get("run_state") not in ("faster", "slower"):
        return ""
    names = {"sync": "sync", "small_h": "small h", "large_h": "large h"}
    ratio = states.get("ratio") or {}
    apart = ", ".join(f"{names.get(k, k)} {v:.1f}x" for k, v in ratio.items())
    points = states.get("points") or {}
    run = states["run_state"]
    other = "faster" if run == "slower" else "slower"
    return (
        f"the machine ran in two states (the sentinels' communication: {apart} apart): "
        f"{points.get('run', 0):,} grid points in the {run} one, which the fit is of; "
        f"{points.get('other', 0):,} in the {other} one and {points.get('between', 0):,} across a switch are "
        "left out"
    )


def states_advice(states: Any) -> str:
    """What the two states mean for a prediction; "" with one state."""
    if not states_sentence(states):
        return ""
    run = states["run_state"]
    worst = max((states.get("ratio") or {}).values(), default=STATE_RATIO)
    other = "faster" if run == "slower" else "slower"
    return (
        f"These parameters are of the machine's {run} state; in its {other} one, communication and "
        f"synchronization are up to {worst:.1f}x {other} (the sentinels). A program run later may meet either: "
        "probe again before trusting a prediction of a communication-bound run, and compare the new "
        "probe's noise.states."
    )


def _visit_factors(sentinels: Sequence[dict[str, Any]]) -> list[Visit]:
    by_regime: dict[str, list[float]] = {}
    for rec in sentinels:
        if rec.get("regime") in COMM_REGIMES and rec["_stats"].median > 0:
            by_regime.setdefault(rec["regime"], []).append(math.log(rec["_stats"].median))
    centre = {k: float(np.median(v)) for k, v in by_regime.items()}
    visits: dict[int, dict[str, Any]] = {}
    for rec in sentinels:
        n = rec.get("visit")
        if not isinstance(n, int):
            continue
        v = visits.setdefault(n, {"t_s": rec.get("t_s") or 0.0, "seq": rec.get("seq"), "logs": []})
        regime = rec.get("regime")
        if regime in centre and rec["_stats"].median > 0:
            v["logs"].append(math.log(rec["_stats"].median) - centre[regime])
    out = [
        Visit(n, float(v["t_s"]), v["seq"] if isinstance(v["seq"], int) else None, float(np.median(v["logs"])))
        for n, v in sorted(visits.items())
        if v["logs"]
    ]
    return sorted(out, key=lambda v: v.t_s)


def find_states(sentinels: Sequence[dict[str, Any]]) -> States:
    """The states of the sentinels' visits (the module's docstring); one state where the visits'
    factors have no gap of STATE_RATIO with MIN_STATE_VISITS on each side."""
    visits = _visit_factors(sentinels)
    if len(visits) < 2 * MIN_STATE_VISITS:
        return States(1, visits)
    logs = sorted(v.factor_log for v in visits)
    gaps = [(logs[i + 1] - logs[i], i) for i in range(MIN_STATE_VISITS - 1, len(logs) - MIN_STATE_VISITS)]
    if not gaps:
        return States(1, visits)
    gap, i = max(gaps)
    if gap < math.log(STATE_RATIO):
        return States(1, visits, gap_ratio=math.exp(gap))
    cut = (logs[i] + logs[i + 1]) / 2
    for v in visits:
        v.state = int(v.factor_log > cut)
    # a visit before the grid (no seq) just before its first placed visit stands at its start
    placed = [v for v in visits if v.seq is not None]
    if placed:
        first = placed[0]
        earlier = [v for v in visits if v.seq is None and v.t_s < first.t_s]
        if earlier:
            earlier[-1].seq = -1
    ratio: dict[str, float] = {}
    for regime in COMM_REGIMES:
        per_state: dict[int, list[float]] = {0: [], 1: []}
        state_of_visit = {v.visit: v.state for v in visits}
        for rec in sentinels:
            st = state_of_visit.get(rec.get("visit"))
            if rec.get("regime") == regime and st is not None and rec["_stats"].median > 0:
                per_state[st].append(math.log(rec["_stats"].median))
        if per_state[0] and per_state[1]:
            ratio[regime] = math.exp(float(np.median(per_state[1]) - np.median(per_state[0])))
    return States(2, visits, ratio=ratio, gap_ratio=math.exp(gap))


def state_mark(states: States, state: int | None) -> Mark | None:
    """The mark of a point in `state` (-1: measured across a switch): None in the run's state."""
    if states.count < 2 or state is None or state == states.run_state:
        return None
    apart = max(states.ratio.values()) if states.ratio else states.gap_ratio or STATE_RATIO
    if state == -1:
        evidence = "measured across a switch of the machine's state (the sentinels before and after it disagree)"
    else:
        which = "faster" if state == 0 else "slower"
        evidence = f"measured in the machine's {which} state (the sentinels around it, up to {apart:.1f}x apart)"
    return Mark(held_share=1.0, worst_process=None, evidence=evidence, kind="state")


def mark_points(run: Any, states: States) -> None:
    """Marks run.g and run.validation points measured outside the run's state (state_mark), and
    sets states.run_state and states.points. A point already marked keeps its mark."""
    if states.count < 2:
        return

    def state_of_point(pt: Any) -> int | None:
        seen = {states.state_of(s) for s in (pt.seqs or ((pt.seq,) if pt.seq is not None else ()))}
        if not seen or None in seen:
            return None
        return seen.pop() if len(seen) == 1 else -1

    g_states = [state_of_point(pt) for pt in run.g]
    counts = {0: g_states.count(0), 1: g_states.count(1)}
    states.run_state = max(counts, key=lambda s: counts[s])
    states.points = {
        "run": counts[states.run_state],
        "other": counts[1 - states.run_state],
        "between": g_states.count(-1),
    }
    for name in ("g", "validation"):
        pts = getattr(run, name)
        out = []
        for pt, st in zip(pts, g_states if name == "g" else [state_of_point(p) for p in pts], strict=True):
            mark = state_mark(states, st)
            out.append(replace(pt, mark=mark) if mark is not None and pt.mark is None else pt)
        setattr(run, name, out)


def run_state_sentinels(sentinels: Sequence[dict[str, Any]], states: States) -> list[dict[str, Any]]:
    """The sentinel records of the run's state's visits (all of them with one state): the
    machine's noise of the state the fit is of."""
    if states.count < 2 or states.run_state is None:
        return list(sentinels)
    keep = {v.visit for v in states.visits if v.state == states.run_state}
    return [rec for rec in sentinels if rec.get("visit") in keep]
