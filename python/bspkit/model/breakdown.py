"""Where the time of a profiled run goes: Horvitz & Bisseling's breakdown into
synchronisation, communication, packing, computation and idle time (seed
004_9153cb2414fc3490.txt, sec. 3, lines 217-219, and Fig. 2, line 224), per superstep, per
phase and in total, from a superstep profile (bspkit.model.profile).

Per superstep, with c_i the compute time of process i (its wall time from the superstep's
start to its call of bsp_sync), k_i the part of it spent packing (pack_s: the buffering
primitives' time at the call and the program's marked regions) and d_i the part spent moving
data at the call (direct_s: hpput, hpget where the engine moves it there and then), and T
the superstep's time (max over processes of compute + bsp_sync):

- computation = mean_i (c_i - k_i - d_i): the work itself;
- packing = mean_i k_i: "the time each process spent in packing and unpacking data,
  including the time spent in local swaps" (line 218);
- idle = mean_i (max_j c_j - c_i): "the average time a process waits for the others to
  finish their computation" (line 219), not the waits while others communicate;
- synchronisation: l, "a theoretical estimate of the synchronisation time provided by the
  BSP cost model" (line 217), taken from a probe's parameter file (its empty sync) or else
  measured in the profile (the median, over its supersteps that moved nothing, of T - max_j
  c_j), at most the superstep's communication + synchronisation; a superstep that moved
  nothing (and the last one, ended by bsp_end) synchronises all of it;
- communication = T - max_j c_j - synchronisation + mean_i d_i: the rest of bsp_sync after
  the last process arrived, and the data moved at the call.

The five add up to T exactly: mean(c - k - d) + mean(k) + (max c - mean c) + (T - max c)
+ mean(d) = T. Summed over the supersteps they make the run's time in supersteps, which the
measured time (bsp_begin .. bsp_end) matches up to the processes' different ends.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from bspkit.fileformat import JsonObject
from bspkit.model import profile as pf
from bspkit.model.params import Params

PARTS = ("synchronisation", "communication", "packing", "computation", "idle")


@dataclass
class Parts:
    """One superstep's (or a group's) time in Horvitz & Bisseling's five parts, seconds;
    synchronisation None where it could not be separated (then communication holds both)."""

    computation: float
    packing: float
    idle: float
    communication: float
    synchronisation: float | None
    total: float

    def add(self, other: Parts) -> Parts:
        sync = (
            None
            if self.synchronisation is None or other.synchronisation is None
            else self.synchronisation + other.synchronisation
        )
        return Parts(
            self.computation + other.computation,
            self.packing + other.packing,
            self.idle + other.idle,
            self.communication + other.communication,
            sync,
            self.total + other.total,
        )

    def to_json(self) -> JsonObject:
        return {f"{name}_s": getattr(self, name) for name in (*PARTS, "total")}


ZERO = Parts(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass
class Latency:
    """The l that separates synchronisation from communication, and where it came from."""

    seconds: float
    source: str  # "params" or "profile"
    detail: str  # in words: which l


@dataclass
class Breakdown:
    analysis: pf.Analysis
    latency: Latency | None  # None: synchronisation not separated
    steps: list[Parts]
    packing_recorded: bool  # the profile has pack_s (libbsp timed packing)

    @property
    def total(self) -> Parts:
        out = ZERO
        for parts in self.steps:
            out = out.add(parts)
        return out

    def by_phase(self) -> list[tuple[str | None, Parts]]:
        """The parts summed per phase (bspk_profile_phase), in the order the phases first came."""
        groups: dict[str | None, Parts] = {}
        for s, parts in zip(self.analysis.steps, self.steps, strict=True):
            groups[s.phase] = groups.get(s.phase, ZERO).add(parts)
        return list(groups.items())

    def to_json(self) -> JsonObject:
        lat = self.latency
        return {
            "parts": list(PARTS),
            "l_s": lat.seconds if lat else None,
            "l_source": lat.source if lat else None,
            "l_detail": lat.detail if lat else None,
            "packing_recorded": self.packing_recorded,
            "total": self.total.to_json(),
            "measured_s": self.analysis.measured_s,
            "supersteps": [
                {"step": s.step, "phase": s.phase, **parts.to_json()}
                for s, parts in zip(self.analysis.steps, self.steps, strict=True)
            ],
            "by_phase": [{"phase": phase, **parts.to_json()} for phase, parts in self.by_phase()]
            if self.analysis.has_phases
            else [],
        }


def moved_nothing(s: pf.StepStats) -> bool:
    """No data between processes, no registration, no tag size: the sync only synchronised."""
    return s.words == 0 and not any(s.issued) and not (s.push_reg or s.pop_reg or s.set_tagsize)


def measured_empty_sync(profile: pf.Profile) -> tuple[float, int] | None:
    """The median over the profile's supersteps that ended in bsp_sync and moved nothing of
    their time past the longest compute (the sync of the last process to arrive), and how
    many there were; None without any. The whole run's, whichever phase is analysed."""
    origin = pf.process_origins(profile)
    times = []
    for records in profile.steps:
        s = pf.step_stats(records, origin)
        if s.synced and moved_nothing(s) and not s.self_words:
            times.append(max(s.time_s - s.compute.max, 0.0))
    return (statistics.median(times), len(times)) if times else None


def latency_of(analysis: pf.Analysis, params: Params | None, params_path: str | None) -> Latency | None:
    """l from the parameter file's empty sync where given, else the profile's empty syncs."""
    if params is not None:
        l_s = params.empty_sync_s()
        if l_s is not None:
            where = ", ".join(
                str(v)
                for v in (params.machine.get("host"), params.machine.get("backend"), f"p = {params.p}")
                if v is not None
            )
            other_p = f"; this run has p = {analysis.p}" if params.p is not None and params.p != analysis.p else ""
            return Latency(l_s, "params", f"the empty sync of {params_path} ({where}{other_p})")
    measured = measured_empty_sync(analysis.profile)
    if measured is None:
        return None
    l_s, n = measured
    return Latency(
        l_s,
        "profile",
        f"the median of the profile's {n} supersteps that moved nothing (their time past the longest compute)",
    )


def step_parts(s: pf.StepStats, l_s: float | None) -> Parts:
    """One superstep in the five parts (the module docstring)."""
    pack = min(s.pack.mean, s.compute.mean) if s.pack is not None else 0.0
    direct = min(s.direct.mean, s.compute.mean - pack) if s.direct is not None else 0.0
    idle = s.compute.max - s.compute.mean
    after_arrival = max(s.time_s - s.compute.max, 0.0)  # bsp_sync past the last arrival
    sync: float | None
    if l_s is None:
        sync = None  # not separated: communication holds it
    elif not s.synced or moved_nothing(s):
        sync = after_arrival
    else:
        sync = min(l_s, after_arrival)
    comm = after_arrival - (sync or 0.0) + direct
    # the five add up to T = max c + after_arrival (the module docstring)
    return Parts(s.compute.mean - pack - direct, pack, idle, comm, sync, s.time_s)


def breakdown(analysis: pf.Analysis, params: Params | None = None, params_path: str | None = None) -> Breakdown:
    """The run's (or the analysed phase's) time in Horvitz & Bisseling's five parts."""
    latency = latency_of(analysis, params, params_path)
    l_s = latency.seconds if latency else None
    steps = [step_parts(s, l_s) for s in analysis.steps]
    recorded = bool(analysis.steps) and all(s.pack is not None for s in analysis.steps)
    return Breakdown(analysis, latency, steps, recorded)


def shares(parts: Parts) -> Sequence[tuple[str, float | None, float | None]]:
    """(part, seconds, fraction of the total) in the order of PARTS."""
    out = []
    for name in PARTS:
        v = getattr(parts, name)
        out.append((name, v, v / parts.total if v is not None and parts.total > 0 else None))
    return out
