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
small-h and large-h regimes of log(visit median / the regime's median over the run). The run's
state is the window of +-sqrt(STATE_RATIO) (1.41x) that holds the most visits; a visit outside
it is in a faster or a slower state, and such a state counts where MIN_STATE_VISITS of its visits
lie a median of STATE_RATIO or more from the run's (fewer, or nearer: a tail of the noise, or
visits that straddled a switch). Seen on this VM: one run with visits at 0.42x, 1x and 3.5-4x in
sync. Each grid and validation point takes the state of the visits around it in the probe's
order (`seq`; g and validation share one random order): the state of both, or "between" where
they differ (a switch came while it was measured). Where another state counts, the fit leaves
the points outside the run's state out (a Mark of kind "state", as it leaves out a batch in
which a process lost its core), the check scores them apart, and the noise of each regime is
that of the run's state's visits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bspkit.measure.machine_state import Mark

# a visit more than sqrt(STATE_RATIO) from the run's state is in another; another state is
# told apart where its visits lie STATE_RATIO or more from the run's (their median)
STATE_RATIO = 2.0
# another state seen at this many visits at least (fewer: visits that straddled a switch)
MIN_STATE_VISITS = 3
COMM_REGIMES = ("sync", "small_h", "large_h")
RUN, FASTER, SLOWER, BETWEEN = "run", "faster", "slower", "between"


@dataclass
class Visit:
    """One sentinel visit: when (t_s, and seq inside the grid's order), its communication factor
    (log, against the run's median) and its state (RUN, FASTER, SLOWER; None with one state)."""

    visit: int
    t_s: float
    seq: int | None
    factor_log: float
    state: str | None = None


@dataclass
class States:
    """The states of the machine the sentinels found: `count` 1 (nothing to do), or the run's
    state (the one most visits were in) and a faster and/or a slower one."""

    count: int
    visits: list[Visit] = field(default_factory=list)
    # per other state: per regime, that state's median over the run state's
    ratio: dict[str, dict[str, float]] = field(default_factory=dict)
    others: dict[str, int] = field(default_factory=dict)  # visits per other state
    points: dict[str, int] = field(default_factory=dict)  # grid points: run, faster, slower, between

    def state_of(self, seq: int | None) -> str | None:
        """The state around a point measured at seq: that of the visits before and after it
        where they agree; BETWEEN where they differ; None with one state or no seq."""
        if self.count < 2 or seq is None:
            return None
        placed = [v for v in self.visits if v.seq is not None]
        before = [v for v in placed if v.seq <= seq]
        after = [v for v in placed if v.seq > seq]
        states = {v.state for v in (before[-1:] + after[:1])}
        return states.pop() if len(states) == 1 else BETWEEN

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "state_ratio": STATE_RATIO,
            "ratio": {k: dict(v) for k, v in self.ratio.items()},
            "other_visits": dict(self.others),
            "points": dict(self.points),
            "visits": [[v.t_s, v.seq, v.state] for v in self.visits],
            "note": "the sentinels' communication (sync, small h, large h) per visit against the state most visits "
            "were in (the run's); a visit more than sqrt(state_ratio) from it is in another state, told apart where "
            "its visits lie state_ratio or more away; the fit and its check are of the run's state, the points of "
            "the others and those measured across a switch (between) are left out of the fit and scored apart",
        }

    def sentence(self) -> str:
        """states_sentence of to_json()."""
        return states_sentence(self.to_json())


_NAMES = {"sync": "sync", "small_h": "small h", "large_h": "large h"}


def _apart(ratio: dict[str, float]) -> str:
    return ", ".join(f"{_NAMES.get(k, k)} {v:.1f}x" for k, v in ratio.items())


def states_sentence(states: Any) -> str:
    """params.json's noise.states in words: "the machine ran in 2 states (the sentinels'
    communication in a faster one than the run's at 20 visits: sync 0.3x, small h 0.3x, large h
    0.2x): 2,187 grid points in the run's state, which the fit is of; 555 in the other and 723
    across a switch are left out"; "" with one state (or no record of it)."""
    if not isinstance(states, dict) or not isinstance(states.get("count"), int) or states["count"] < 2:
        return ""
    ratio = {k: r for k, r in (states.get("ratio") or {}).items() if isinstance(r, dict)}
    visits = states.get("other_visits") or {}
    parts = [f"a {name} one than the run's at {visits.get(name, 0)} visits: {_apart(r)}" for name, r in ratio.items()]
    points = states.get("points") or {}
    others = sum(points.get(k, 0) for k in (FASTER, SLOWER))
    return (
        f"the machine ran in {states['count']} states (the sentinels' communication in {'; in '.join(parts)}): "
        f"{points.get(RUN, 0):,} grid points in the run's state, which the fit is of; {others:,} in the "
        f"other{'s' if states['count'] > 2 else ''} and {points.get(BETWEEN, 0):,} across a switch are left out"
    )


def states_advice(states: Any) -> str:
    """What the states mean for a prediction; "" with one state."""
    if not states_sentence(states):
        return ""
    ratio = {k: r for k, r in (states.get("ratio") or {}).items() if isinstance(r, dict) and r}
    told = []
    if FASTER in ratio:
        told.append(f"up to {1 / min(ratio[FASTER].values()):.1f}x faster")
    if SLOWER in ratio:
        told.append(f"up to {max(ratio[SLOWER].values()):.1f}x slower")
    return (
        "These parameters are of the state the machine was in most of the run; in the other state"
        f"{'s' if len(told) > 1 else ''}, communication and synchronization are {' or '.join(told)} (the "
        "sentinels). A program run later may meet any of them: probe again before trusting a prediction of a "
        "communication-bound run, and compare the new probe's noise.states."
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
    """The states of the sentinels' visits (the module's docstring): the run's state is the
    window of +-sqrt(STATE_RATIO) that holds the most visits' factors; a visit outside it is in a
    faster or a slower state, which counts where MIN_STATE_VISITS of its visits lie at a median
    STATE_RATIO or more from the run's. One state where none does."""
    visits = _visit_factors(sentinels)
    if len(visits) < 2 * MIN_STATE_VISITS:
        return States(1, visits)
    half = math.log(STATE_RATIO) / 2
    logs = np.array([v.factor_log for v in visits])
    centre = float(max(logs, key=lambda c: (int(np.sum(np.abs(logs - c) <= half)), -abs(c))))
    inside = np.abs(logs - centre) <= half
    centre = float(np.median(logs[inside]))  # the run state's own centre
    told: dict[str, list[Visit]] = {FASTER: [], SLOWER: []}
    for v in visits:
        d = v.factor_log - centre
        v.state = RUN if abs(d) <= half else (FASTER if d < 0 else SLOWER)
        if v.state != RUN:
            told[v.state].append(v)
    real = {
        name: vs
        for name, vs in told.items()
        if len(vs) >= MIN_STATE_VISITS and abs(float(np.median([v.factor_log for v in vs])) - centre) >= 2 * half
    }
    if not real:
        for v in visits:
            v.state = None
        return States(1, visits)
    # a visit before the grid (no seq) just before its first placed visit stands at its start
    placed = [v for v in visits if v.seq is not None]
    if placed:
        earlier = [v for v in visits if v.seq is None and v.t_s < placed[0].t_s]
        if earlier:
            earlier[-1].seq = -1
    state_of_visit = {v.visit: v.state for v in visits}
    ratio: dict[str, dict[str, float]] = {}
    for name in real:
        for regime in COMM_REGIMES:
            logs_by: dict[str, list[float]] = {RUN: [], name: []}
            for rec in sentinels:
                st = state_of_visit.get(rec.get("visit"))
                if rec.get("regime") == regime and st in logs_by and rec["_stats"].median > 0:
                    logs_by[st].append(math.log(rec["_stats"].median))
            if logs_by[RUN] and logs_by[name]:
                ratio.setdefault(name, {})[regime] = math.exp(float(np.median(logs_by[name]) - np.median(logs_by[RUN])))
    return States(1 + len(real), visits, ratio=ratio, others={k: len(v) for k, v in told.items() if v})


def state_mark(states: States, state: str | None) -> Mark | None:
    """The mark of a point in `state`: None in the run's state (or with one state)."""
    if states.count < 2 or state is None or state == RUN:
        return None
    if state == BETWEEN:
        evidence = "measured across a switch of the machine's state (the sentinels before and after it disagree)"
    else:
        evidence = f"measured while the machine was in a {state} state than the run's (the sentinels around it)"
    return Mark(held_share=1.0, worst_process=None, evidence=evidence, kind="state")


def mark_points(run: Any, states: States) -> None:
    """Marks run.g and run.validation points measured outside the run's state (state_mark), and
    sets states.points. A point already marked keeps its mark."""
    if states.count < 2:
        return

    def state_of_point(pt: Any) -> str | None:
        seen = {states.state_of(s) for s in (pt.seqs or ((pt.seq,) if pt.seq is not None else ()))}
        if not seen or None in seen:
            return None
        return seen.pop() if len(seen) == 1 else BETWEEN

    for name in ("g", "validation"):
        pts = getattr(run, name)
        found = [state_of_point(pt) for pt in pts]
        if name == "g":
            states.points = {k: found.count(k) for k in (RUN, FASTER, SLOWER, BETWEEN)}
        out = []
        for pt, st in zip(pts, found, strict=True):
            mark = state_mark(states, st)
            out.append(replace(pt, mark=mark) if mark is not None and pt.mark is None else pt)
        setattr(run, name, out)


def run_state_sentinels(sentinels: Sequence[dict[str, Any]], states: States) -> list[dict[str, Any]]:
    """The sentinel records of the run's state's visits (all of them with one state): the
    machine's noise of the state the fit is of."""
    if states.count < 2:
        return list(sentinels)
    keep = {v.visit for v in states.visits if v.state == RUN}
    return [rec for rec in sentinels if rec.get("visit") in keep]
