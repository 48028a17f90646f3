"""The machine's state beside a measurement: did every process hold its core, and if not, who
took it? (issue 29)

bspprobe, the algorithm drivers and the superstep profile write a `state` object around every
timed batch (docs/probe-format.md, "The machine's state"): per process its CPU time, the time it
was runnable but waited for a core (the scheduler's run delay), its involuntary context switches
and its core; for the machine the VM's stolen time, the CPU pressure (PSI) and the runnable tasks.

A batch is *marked* when a process did not hold its core: it waited for a core for at least
`LOST_MARK` of the batch, or the hypervisor stole at least `LOST_MARK` of the cores' time.
Marked batches are the machine's, not the model's: fits leave them out, checks score the model
on the unmarked ones and report the marked ones apart, with the evidence, and with a prediction
of the run on the machine *as it was*: the time stretched by 1 / (the share of its core the
slowest process held).

What no scheduler counter shows (issue 39): a process that held its core may still have run
slower (the core's clock, a sibling hyperthread, the last-level cache and memory bandwidth
shared with other guests). The canary, a fixed piece of work every process times right before
and after every batch (`canary_before_s`, `canary_after_s` in the state object), shows it: a
batch whose canary took more than `threshold` x its median over the run on some process
(`CanaryReference`: the median x (1 + 4 robust sd of log), at least `CANARY_MIN_RATIO`) is
marked too (kind "canary"), with the evidence ("canary 1.8x its median on process 1").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bspkit.units import quantity

# A process that lost this share of a batch (waiting for a core, or stolen by the hypervisor)
# did not hold its core. 10%: a loss that moves a median by less is within the run-to-run
# spread of this kind of VM (docs/measurements.md); one that moves it by more must be named.
LOST_MARK = 0.10

# The largest share of a batch taken as lost: a batch that lost more is stretched 20x at most.
MOST_LOST = 0.95

# A canary must be at least this much slower than its median to mark a batch, however steady
# the canary was in the run: below it, the canary's own jitter on a VM.
CANARY_MIN_RATIO = 1.2
# ... and at least its median x (1 + CANARY_SDS robust sd of its log) over the run.
CANARY_SDS = 4.0
# 1.4826 x the median absolute deviation: the sd of a normal distribution
MAD_TO_SD = 1.4826

# /proc/stat counts steal in ticks of 1/USER_HZ (10 ms) per core: a batch shorter than a few
# ticks sees 0 or whole ticks. One tick per core is taken off as the counter's resolution.
STEAL_TICK_S = 0.01


def _numbers(v: Any) -> tuple[float | None, ...]:
    if not isinstance(v, list):
        return ()
    return tuple(float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None for x in v)


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class BatchState:
    """One `state` object as read: per-process tuples in pid order (None: unknown)."""

    wall_s: float
    cpu_s: tuple[float | None, ...]
    waited_s: tuple[float | None, ...]
    involuntary: tuple[float | None, ...]
    cpus: tuple[float | None, ...]
    steal_s: float | None
    cpu_pressure_s: float | None
    running: float | None
    cores_online: float | None

    @classmethod
    def from_json(cls, obj: Any) -> BatchState | None:
        """The state object of a record, or None where there is none (older files) or it is
        not usable (no positive wall time)."""
        if not isinstance(obj, Mapping):
            return None
        wall = _number(obj.get("wall_s"))
        if wall is None or wall <= 0:
            return None
        return cls(
            wall_s=wall,
            cpu_s=_numbers(obj.get("cpu_s")),
            waited_s=_numbers(obj.get("waited_s")),
            involuntary=_numbers(obj.get("involuntary")),
            cpus=_numbers(obj.get("cpus")),
            steal_s=_number(obj.get("steal_s")),
            cpu_pressure_s=_number(obj.get("cpu_pressure_s")),
            running=_number(obj.get("running")),
            cores_online=_number(obj.get("cores_online")),
        )

    @property
    def steal_share(self) -> float | None:
        """The share of the cores' time the hypervisor stole during the batch."""
        if self.steal_s is None or not self.cores_online:
            return None
        resolved = max(0.0, self.steal_s - STEAL_TICK_S * self.cores_online)
        return min(1.0, resolved / (self.wall_s * self.cores_online))

    @property
    def pressure_share(self) -> float | None:
        """The share of the batch in which some task waited for a core (PSI "some")."""
        return None if self.cpu_pressure_s is None else max(0.0, self.cpu_pressure_s / self.wall_s)

    def waited_shares(self) -> list[float | None]:
        """Per process: the share of the batch it was runnable but waited for a core."""
        return [None if w is None else min(1.0, max(0.0, w / self.wall_s)) for w in self.waited_s]

    def cpu_shares(self) -> list[float | None]:
        """Per process: its CPU time over the batch's wall time (waiting in a sync lowers it too)."""
        return [None if c is None else min(1.0, max(0.0, c / self.wall_s)) for c in self.cpu_s]

    def lost_shares(self) -> list[float]:
        """Per process: the share of the batch it did not hold its core: its own wait for a
        core plus its part of the stolen time (the cores' steal spread evenly over them)."""
        steal = self.steal_share or 0.0
        waited = self.waited_shares() or [None]
        return [min(1.0, (w or 0.0) + steal) for w in waited]

    @property
    def held_share(self) -> float:
        """The share of its core the slowest process held: 1 - the largest lost share (at
        least 1 - MOST_LOST). Each process computes at the pace of the share it holds and a
        superstep waits for the slowest, so the batch takes 1 / held_share as long. (Adding the
        processes' waits instead, as if each wait held up all of them, overshot by 2-10x with a
        second BSP job on both cores, whose waits overlap: docs/measurements.md.)"""
        return max(1.0 - MOST_LOST, 1.0 - max(self.lost_shares(), default=0.0))


@dataclass(frozen=True)
class Mark:
    """A batch during which a process did not hold its core, or (kind "canary") during which
    the canary ran slower than the run's canary marks (issue 39), with the evidence."""

    held_share: float  # the share of its core the slowest process held (BatchState.held_share);
    # for a canary mark the pace the canary kept, 1 / its ratio to its median
    worst_process: int | None  # pid of that process (None: the steal alone, all alike)
    evidence: str  # one line a reader can check against the numbers
    kind: str = "core"  # "core": a process lost its core; "canary": only the canary says so
    canary_ratio: float | None = None  # the slowest canary over its median, where it marked too

    @property
    def stretch(self) -> float:
        """How much longer the batch ran than on a quiet machine, as far as the evidence says."""
        return 1.0 / max(self.held_share, 1.0 - MOST_LOST)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "held_share": self.held_share,
            "worst_process": self.worst_process,
            "stretch": self.stretch,
            "evidence": self.evidence,
        }
        if self.kind != "core" or self.canary_ratio is not None:
            out["kind"] = self.kind
            out["canary_ratio"] = self.canary_ratio
        return out


def _pct(v: float) -> str:
    return f"{100 * v:.0f}%"


def evidence_of(state: BatchState) -> str:
    """The state in one line: who waited for a core and how long, steal, pressure, runnable."""
    parts: list[str] = []
    waited = state.waited_shares()
    worst = max(range(len(waited)), key=lambda i: waited[i] or 0.0, default=None)
    if worst is not None and waited[worst] is not None:
        w_s = state.waited_s[worst] or 0.0
        cpu = state.cpu_shares()
        ran = f", on a CPU {_pct(c)} of it" if worst < len(cpu) and (c := cpu[worst]) is not None else ""
        switches = state.involuntary[worst] if worst < len(state.involuntary) else None
        sw = f", {switches:.0f} involuntary switches" if switches is not None else ""
        who = f"process {worst}" if len(waited) > 1 else "the process"
        took = f"{_pct(waited[worst] or 0.0)} of the {quantity(state.wall_s, 's', 3)}"
        parts.append(f"{who} waited {quantity(w_s, 's', 3)} for a core ({took}{ran}{sw})")
    steal = state.steal_share
    if steal is not None:
        parts.append(f"steal {_pct(steal)}")
    pressure = state.pressure_share
    if pressure is not None:
        parts.append(f"CPU pressure {_pct(pressure)}")
    if state.running is not None:
        cores = f" on {state.cores_online:.0f} cores" if state.cores_online else ""
        parts.append(f"{state.running:.0f} runnable tasks{cores}")
    return "; ".join(parts) if parts else "no evidence recorded"


def mark_of(state: BatchState | None, threshold: float = LOST_MARK) -> Mark | None:
    """The batch's mark, or None when every process held its core (or nothing was recorded)."""
    if state is None:
        return None
    lost = state.lost_shares()
    worst_lost = max(lost, default=0.0)
    if worst_lost < threshold:
        return None
    known = any(w is not None for w in state.waited_shares())
    worst = lost.index(worst_lost) if known else None
    return Mark(held_share=state.held_share, worst_process=worst, evidence=evidence_of(state))


def mark_of_json(obj: Any) -> Mark | None:
    return mark_of(BatchState.from_json(obj))


# ------------------------------------------------------------------------------ the canary


def canary_times(obj: Any) -> list[list[float]]:
    """Per process (pid order), the canary's times around the batch of one state object (before
    and after; either may be missing); [] where the state has none (older files, the profile)."""
    if not isinstance(obj, Mapping):
        return []
    before, after = _numbers(obj.get("canary_before_s")), _numbers(obj.get("canary_after_s"))
    out: list[list[float]] = []
    for i in range(max(len(before), len(after))):
        out.append(
            [t for t in (before[i] if i < len(before) else None, after[i] if i < len(after) else None) if t and t > 0]
        )
    return out if any(out) else []


def robust_sd_log(values: Iterable[float]) -> float | None:
    """1.4826 x the median absolute deviation of log(values): the relative spread of values
    that a few far ones do not move; None for fewer than 3 positive values."""
    logs = [math.log(v) for v in values if v > 0]
    if len(logs) < 3:
        return None
    mid = statistics.median(logs)
    return MAD_TO_SD * statistics.median(abs(v - mid) for v in logs)


@dataclass(frozen=True)
class CanaryReference:
    """The canary's usual time in one run: its median per process and over all, the robust sd
    of its log, and the ratio to the median above which a batch is marked."""

    median_s: float
    per_process_s: tuple[float, ...]
    sd_log: float
    threshold: float
    timings: int  # canary times it is made of
    batches: int  # batches with a canary

    def median_of(self, pid: int) -> float:
        return self.per_process_s[pid] if pid < len(self.per_process_s) else self.median_s

    def as_dict(self) -> dict[str, Any]:
        return {
            "median_s": self.median_s,
            "per_process_median_s": list(self.per_process_s),
            "sd_log": self.sd_log,
            "threshold": self.threshold,
            "min_ratio": CANARY_MIN_RATIO,
            "sds": CANARY_SDS,
            "timings": self.timings,
            "batches": self.batches,
        }

    @classmethod
    def from_json(cls, obj: Any) -> CanaryReference | None:
        """From params.json's noise.canary (a driver's repetitions checked against the probe's
        canary), or None where it has none."""
        if not isinstance(obj, Mapping):
            return None
        med, thr = _number(obj.get("median_s")), _number(obj.get("threshold"))
        if not med or not thr:
            return None
        per = tuple(v for v in _numbers(obj.get("per_process_median_s")) if v)
        return cls(
            med, per, _number(obj.get("sd_log")) or 0.0, thr, int(obj.get("timings") or 0), int(obj.get("batches") or 0)
        )


def canary_reference(states: Iterable[Any]) -> CanaryReference | None:
    """The canary's usual time over the state objects of one run (None: no canary in them)."""
    per: list[list[float]] = []
    batches = 0
    for obj in states:
        times = canary_times(obj)
        if not times:
            continue
        batches += 1
        for pid, ts in enumerate(times):
            while len(per) <= pid:
                per.append([])
            per[pid].extend(ts)
    every = [t for ts in per for t in ts]
    if not every:
        return None
    medians = tuple(statistics.median(ts) if ts else statistics.median(every) for ts in per)
    ratios = [t / medians[pid] for pid, ts in enumerate(per) for t in ts]
    sd = robust_sd_log(ratios) or 0.0
    return CanaryReference(
        median_s=statistics.median(every),
        per_process_s=medians,
        sd_log=sd,
        threshold=max(CANARY_MIN_RATIO, 1.0 + CANARY_SDS * sd),
        timings=len(every),
        batches=batches,
    )


def canary_mark(obj: Any, ref: CanaryReference | None) -> Mark | None:
    """The batch's canary mark: its slowest canary (before or after it, on any process) above
    ref.threshold x that process's median; None otherwise or without a canary."""
    if ref is None:
        return None
    worst: tuple[float, int, float, str] | None = None  # ratio, pid, time, when
    for pid, ts in enumerate(_canary_pairs(obj)):
        for t, when in ts:
            ratio = t / ref.median_of(pid)
            if worst is None or ratio > worst[0]:
                worst = (ratio, pid, t, when)
    if worst is None or worst[0] <= ref.threshold:
        return None
    ratio, pid, t, when = worst
    evidence = (
        f"canary {ratio:.1f}x its median on process {pid} ({when} the batch: {quantity(t, 's', 3)} against "
        f"{quantity(ref.median_of(pid), 's', 3)}; marked above {ref.threshold:.2f}x)"
    )
    return Mark(held_share=1.0 / ratio, worst_process=pid, evidence=evidence, kind="canary", canary_ratio=ratio)


def _canary_pairs(obj: Any) -> list[list[tuple[float, str]]]:
    if not isinstance(obj, Mapping):
        return []
    before, after = _numbers(obj.get("canary_before_s")), _numbers(obj.get("canary_after_s"))
    out: list[list[tuple[float, str]]] = []
    for i in range(max(len(before), len(after))):
        pair = [(before[i] if i < len(before) else None, "before"), (after[i] if i < len(after) else None, "after")]
        out.append([(t, when) for t, when in pair if t and t > 0])
    return out


def batch_mark(obj: Any, ref: CanaryReference | None = None) -> Mark | None:
    """The batch's mark from all the evidence: a process lost its core (mark_of), else the
    canary says the machine was slower (canary_mark); where both, the first with the canary's
    evidence added."""
    core = mark_of_json(obj)
    canary = canary_mark(obj, ref)
    if core is None:
        return canary
    if canary is None:
        return core
    return replace(core, evidence=f"{core.evidence}; {canary.evidence}", canary_ratio=canary.canary_ratio)


def repetition_canary_marks(run: Mapping[str, Any], reference: CanaryReference | None = None) -> list[Mark | None]:
    """Per repetition of a driver's run (its JSON, docs/algorithm-output.md), the canary's mark:
    against `reference` (the probe's canary, CanaryReference.from_json(params.noise["canary"]))
    or, without one, the run's own canary over its repetitions; [] where the run recorded no
    canary (older drivers, other BSPlibs' builds)."""
    states = run.get("state")
    if not isinstance(states, list) or not any(canary_times(s) for s in states):
        return []
    ref = reference or canary_reference(states)
    return [canary_mark(s, ref) for s in states]


@dataclass(frozen=True)
class StateSummary:
    """How busy the machine was over many batches: for the first screen."""

    batches: int  # with a state recorded
    marked: int
    least_held: float | None  # the least held share of a marked batch
    median_pressure: float | None  # the median CPU pressure share over the batches
    steal_seen: bool

    @property
    def recorded(self) -> bool:
        return self.batches > 0

    @property
    def marked_share(self) -> float:
        return self.marked / self.batches if self.batches else 0.0

    def sentence(self, what: str = "batches") -> str:
        """'quiet: 0 of 320 batches ...' or 'busy: 41 of 320 batches ...'."""
        if not self.batches:
            return "the machine's state was not recorded (a file from before bspkit 0.x)"
        pressure = f", median CPU pressure {_pct(self.median_pressure)}" if self.median_pressure is not None else ""
        if not self.marked:
            return f"every process held its core in all {self.batches} {what}{pressure}"
        held = (
            f" (in the worst one a process held {_pct(self.least_held)} of its core)"
            if self.least_held is not None
            else ""
        )
        steal = "; the hypervisor stole time" if self.steal_seen else ""
        return (
            f"in {self.marked} of {self.batches} {what} ({_pct(self.marked_share)}) a process did not hold its "
            f"core{held}{pressure}{steal}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "batches": self.batches,
            "marked": self.marked,
            "least_held": self.least_held,
            "median_pressure": self.median_pressure,
            "steal_seen": self.steal_seen,
            "sentence": self.sentence(),
        }


def summarize(states: Iterable[Any]) -> StateSummary:
    """Summary over state objects as read from JSON (None and unusable ones are skipped)."""
    read = [s for s in (BatchState.from_json(o) for o in states) if s is not None]
    marks = [m for m in (mark_of(s) for s in read) if m is not None]
    pressures = sorted(p for s in read if (p := s.pressure_share) is not None)
    return StateSummary(
        batches=len(read),
        marked=len(marks),
        least_held=min((m.held_share for m in marks), default=None),
        median_pressure=pressures[len(pressures) // 2] if pressures else None,
        steal_seen=any((s.steal_share or 0.0) >= 0.01 for s in read),
    )


def repetition_marks(run: Mapping[str, Any]) -> list[Mark | None]:
    """Per repetition of a driver's run (its JSON, docs/algorithm-output.md), the mark; [] where
    the run recorded no state (older drivers, other BSPlibs' builds)."""
    states = run.get("state")
    if not isinstance(states, list):
        return []
    return [mark_of_json(s) for s in states]


@dataclass(frozen=True)
class RunVerdict:
    """What the machine's state says about one driver run: the repetitions to score the model on,
    and for a run in which every repetition was marked, the stretch of the machine as it was."""

    times_s: tuple[float, ...]  # the repetitions to score (all where none or all were marked)
    marked_reps: int  # repetitions left out (some were unmarked) or, when all were, their number
    all_marked: bool
    stretch: float | None  # all marked: the median stretch over the repetitions
    evidence: str | None  # the worst repetition's evidence

    def as_dict(self) -> dict[str, Any]:
        return {
            "marked_reps": self.marked_reps,
            "all_marked": self.all_marked,
            "stretch": self.stretch,
            "evidence": self.evidence,
        }


def run_verdict(times_s: Sequence[float], marks: Sequence[Mark | None]) -> RunVerdict:
    """The model is scored on the repetitions during which every process held its core; a run
    with none such is the machine's: it is predicted as the machine was (stretch)."""
    times = tuple(float(t) for t in times_s)
    if len(marks) != len(times) or not any(marks):
        return RunVerdict(times, 0, False, None, None)
    worst = min((m for m in marks if m is not None), key=lambda m: m.held_share)
    clean = tuple(t for t, m in zip(times, marks, strict=True) if m is None)
    if clean:
        return RunVerdict(clean, len(times) - len(clean), False, None, worst.evidence)
    stretches = sorted(m.stretch for m in marks if m is not None)
    return RunVerdict(times, len(times), True, stretches[len(stretches) // 2], worst.evidence)
