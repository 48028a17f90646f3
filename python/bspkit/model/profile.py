"""The superstep profile of a BSPlib program (`BSPKIT_PROFILE=out.jsonl`, format in
docs/profile-format.md): reading it, the BSP cost of the run, and its predicted time on a
machine whose parameters a probe measured.

Per superstep, over the processes: compute time (max, mean, min; load imbalance = max /
mean), time waiting in the back end's arrival and inside bsp_sync, the h-relation of thesis
eq. (2.1) (the words a process sends are its own `out` plus what others got from it with
`in_get`; the words it receives, others' `out` naming it plus its own `in_get`), h_inout of
thesis eq. (2.2) (the max over processes of sent + received), the message
count (max over processes of the messages sent), the mean message size h* = words / messages,
the primitive that moved most bytes, and the bsp_sync call site.

Totals: W = sum over supersteps of the max compute time (seconds, not operations: the
profile times work, it does not count it), H = sum of h, S = the supersteps that end in
bsp_sync; the measured time is the max over processes of bsp_begin .. bsp_end.

A prediction (`predict_run`) is T = sum over supersteps of (compute max x scale +
comm(h, count, h*; primitive)) under each of predict.MODELS, comm as for the drivers
(predict.superstep_comm_s, l alone for a superstep without communication, nothing for the
last one, which ends at bsp_end). The scale carries the compute over to another machine:
given, or the ratio of the two machines' computing rates r (params.computing_rate).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict, cast

from bspkit.fileformat import JsonObject, format_problem
from bspkit.measure import sites as st
from bspkit.model import comm_models
from bspkit.model import supersteps as pd
from bspkit.model.params import Params, computing_rate
from bspkit.units import quantity
from bspkit.version import __version__

FORMAT_VERSION = 1
TOOL = "bspkit-profile"
ANALYSIS_TOOL = "bspkit-profile-analysis"

# bspkit's collectives move their data as puts: their communication is predicted as put's
PRIMITIVE_FOR_PREDICTION = {"coll": "put"}

Record = JsonObject  # a record of the profile file, as read


class StepGroup(TypedDict):
    """Supersteps grouped by their bsp_sync site or by phase (Analysis.by_site, by_phase)."""

    site: NotRequired[str | None]  # the key grouped by: one of site and phase
    phase: NotRequired[str | None]
    supersteps: int
    first_step: int
    time_s: float
    compute_max_s: float
    wait_max_s: float
    H: int
    messages: int


class PredictedStep(TypedDict):
    """One superstep of a Prediction: compute max x scale, and per model its comm + sync and
    its time (None: the model has no fit for it)."""

    step: int
    compute_s: float
    comm_s: dict[str, float | None]
    time_s: dict[str, float | None]


class ProfileError(Exception):
    """The file is not a profile, or not a complete one; the message says why."""


def number_ranges(pids: Iterable[int]) -> str:
    """Process ids or section numbers: [0, 1, 2, 5] -> "0-2, 5"."""
    out: list[str] = []
    run: list[int] = []
    for pid in sorted(set(pids)):
        if run and pid == run[-1] + 1:
            run.append(pid)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [pid]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)


# ----------------------------------------------------------------------- reading


@dataclass
class Profile:
    """One SPMD section of a profile file: its header, and per superstep and process the
    record (steps[k][pid]), per process its closing record."""

    path: Path
    header: Record
    section: int
    sections: list[int]  # every section the file holds
    steps: list[list[Record]]
    processes: list[Record]

    @property
    def p(self) -> int:
        return len(self.processes)

    def site_key(self, rec: Record) -> st.SiteKey | None:
        """The call site of a superstep record, or None where the library could not tell."""
        site = rec.get("site")
        if not site:
            return None
        objects = self.processes[rec["pid"]].get("objects") or []
        index, offset = site
        if not 0 <= index < len(objects):
            raise ProfileError(
                f"{self.path}: process {rec['pid']} step {rec['step']}: site object {index} is not listed"
            )
        obj = objects[index]
        return st.SiteKey(str(obj["path"]), int(str(obj["base"]), 16), int(str(offset), 16))


def _records(path: Path) -> list[Record]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ProfileError(f"{path} is a directory, not a profile") from None
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not a bspkit profile (not text)") from None
    except OSError as e:
        raise ProfileError(f"cannot read {path}: {e.strerror or e}") from None
    if not text.strip():
        raise ProfileError(
            f"{path} is empty: not a bspkit profile (the program's process 0 writes the header in bsp_begin)"
        )
    out: list[Record] = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        if not isinstance(rec, dict) or "type" not in rec:
            if not out:
                raise ProfileError(f"{path}: not a bspkit profile (line {n} is not a JSON record with a type)")
            last = n == len(lines) and not text.endswith("\n")
            why = "a record cut short: the program was killed while writing it?" if last else "not a JSON record"
            raise ProfileError(f"{path}: line {n}: {why}")
        out.append(rec)
    first = out[0]
    if first.get("type") != "header" or first.get("tool") != TOOL:
        raise ProfileError(
            f"{path}: not a bspkit profile (its first record is not the header of {TOOL}: "
            "a profile is what BSPKIT_PROFILE=FILE makes a BSPlib program write)"
        )
    problem = format_problem(first, "profile", FORMAT_VERSION)
    if problem:
        raise ProfileError(f"{path}: {problem}")
    return out


def read_profile(path: str | Path, section: int | None = None) -> Profile:
    """One section of a profile file (default: the first); ProfileError when the file is
    not a profile, or the program did not reach bsp_end on every process."""
    path = Path(path)
    records = _records(path)
    headers = {int(r.get("section", 0)): r for r in records if r.get("type") == "header"}
    sections = sorted(headers)
    chosen = sections[0] if section is None else section
    if chosen not in headers:
        raise ProfileError(f"{path}: no section {chosen} (the profile holds sections {number_ranges(sections)})")
    header = headers[chosen]
    p = header.get("nprocs")
    if not isinstance(p, int) or p < 1:
        raise ProfileError(f"{path}: the header of section {chosen} has no number of processes (nprocs)")
    mine = [r for r in records if int(r.get("section", 0)) == chosen and r.get("type") != "header"]
    processes: dict[int, Record] = {}
    per_pid: dict[int, list[Record]] = {pid: [] for pid in range(p)}
    for rec in mine:
        pid = rec.get("pid")
        if not isinstance(pid, int) or not 0 <= pid < p:
            raise ProfileError(f"{path}: a {rec.get('type')} record of process {pid!r}, but p = {p}")
        if rec["type"] == "process":
            processes[pid] = rec
        elif rec["type"] == "superstep":
            per_pid[pid].append(rec)
    missing = [pid for pid in range(p) if pid not in processes]
    if missing:
        what = "the profile holds only its header" if not mine else f"{p - len(missing)} of {p} finished"
        raise ProfileError(
            f"{path}: the program did not reach bsp_end on processes {number_ranges(missing)} ({what}): "
            "it ended in bsp_abort or an error, or was killed"
        )
    counts = {pid: len(recs) for pid, recs in per_pid.items()}
    for pid, recs in per_pid.items():
        if processes[pid].get("supersteps") != len(recs):
            raise ProfileError(
                f"{path}: process {pid} lists {processes[pid].get('supersteps')} supersteps but has {len(recs)} records"
            )
        recs.sort(key=lambda r: r["step"])
    if len(set(counts.values())) != 1:
        detail = ", ".join(f"{pid}: {n}" for pid, n in counts.items())
        raise ProfileError(f"{path}: the processes ran different numbers of supersteps ({detail})")
    steps = [[per_pid[pid][k] for pid in range(p)] for k in range(counts[0])]
    return Profile(path, header, chosen, sections, steps, [processes[pid] for pid in range(p)])


# ----------------------------------------------------------------------- analysis


@dataclass
class Spread:
    """A quantity over the processes."""

    max: float
    mean: float
    min: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(max(values), sum(values) / len(values), min(values))

    def to_json(self) -> dict[str, float]:
        return {"max": self.max, "mean": self.mean, "min": self.min}


@dataclass
class StepStats:
    """One superstep of the run."""

    step: int
    end: str  # "bsp_sync", or "bsp_end" for the last one
    start_s: float  # when its first process began it, on the shared clock from the run's start
    time_s: float  # max over processes of compute + sync: what the superstep cost
    compute: Spread
    wait: Spread
    sync: Spread
    sent: list[int]  # words per process to others
    received: list[int]
    messages: list[int]  # messages sent per process (a get's by the owner of the data)
    issued: list[int]  # requests issued per process: puts, sends and gets (a get's by its caller)
    h: int
    count: int  # max over processes of the requests issued (docs/profile-format.md)
    words: int  # all words moved between processes
    msg_words: float  # h*: words / messages (0 without)
    primitive: str | None  # the primitive that moved most bytes (collectives: "coll")
    pattern: str | None  # the probe's pattern its traffic has (communication_pattern)
    ops: dict[str, list[int]]  # per primitive: [calls, bytes], summed over processes
    self_words: int
    push_reg: int  # max over processes
    pop_reg: int
    set_tagsize: int
    phase: str | None = None  # the program's name for this part of the run (bspk_profile_phase)
    site: str = ""  # the bsp_sync call site(s), resolved
    # the compute on the processes' CPU clocks (cpu_s); None where a record has none (a file
    # written before the library recorded it)
    cpu: Spread | None = None
    # the parts of the compute spent packing (pack_s) and moving data at the call (direct_s:
    # hpput, hpget); None where the records have none (a file written before libbsp timed them)
    pack: Spread | None = None
    direct: Spread | None = None
    site_keys: list[st.SiteKey | None] = field(default_factory=list)

    @property
    def h_inout(self) -> int:
        """Thesis eq. (2.2): the max over processes of words sent + words received."""
        return max((s + r for s, r in zip(self.sent, self.received, strict=True)), default=0)

    @property
    def imbalance(self) -> float | None:
        """max / mean of the compute time over the processes (1: balanced)."""
        return self.compute.max / self.compute.mean if self.compute.mean > 0 else None

    @property
    def synced(self) -> bool:
        return self.end == "bsp_sync"

    def to_json(self) -> JsonObject:
        return {
            "step": self.step,
            "end": self.end,
            "start_s": self.start_s,
            "time_s": self.time_s,
            "compute_s": self.compute.to_json(),
            "cpu_s": self.cpu.to_json() if self.cpu is not None else None,
            "pack_s": self.pack.to_json() if self.pack is not None else None,
            "direct_s": self.direct.to_json() if self.direct is not None else None,
            "imbalance": self.imbalance,
            "wait_s": self.wait.to_json(),
            "sync_s": self.sync.to_json(),
            "h": self.h,
            "h_inout": self.h_inout,
            "count": self.count,
            "words": self.words,
            "msg_words": self.msg_words,
            "primitive": self.primitive,
            "pattern": self.pattern,
            "sent_words": self.sent,
            "received_words": self.received,
            "messages": self.messages,
            "issued": self.issued,
            "ops": self.ops,
            "self_words": self.self_words,
            "push_reg": self.push_reg,
            "pop_reg": self.pop_reg,
            "set_tagsize": self.set_tagsize,
            "phase": self.phase,
            "site": self.site,
        }


@dataclass
class ProcessStats:
    pid: int
    total_s: float
    compute_s: float
    wait_s: float
    sync_s: float
    sent_words: int
    received_words: int

    def to_json(self) -> JsonObject:
        return dict(self.__dict__)


@dataclass
class Analysis:
    """The BSP cost of a profiled run, or of one phase of it."""

    profile: Profile
    records: list[list[Record]]  # the supersteps analysed: the profile's, or one phase's
    steps: list[StepStats]
    processes: list[ProcessStats]
    sites: dict[st.SiteKey, st.Site]
    # the whole run: bsp_begin .. bsp_end, max over processes; a phase: from its first
    # superstep's start to its last one's end
    measured_s: float
    phase: str | None = None  # the phase analysed (None: every superstep)

    @property
    def p(self) -> int:
        return self.profile.p

    @property
    def S(self) -> int:
        return sum(s.synced for s in self.steps)

    @property
    def W_s(self) -> float:
        return sum(s.compute.max for s in self.steps)

    @property
    def H(self) -> int:
        return sum(s.h for s in self.steps)

    @property
    def wait_s(self) -> float:
        """Sum over supersteps of the longest wait."""
        return sum(s.wait.max for s in self.steps)

    def costliest(self, n: int) -> list[StepStats]:
        return sorted(self.steps, key=lambda s: (-s.time_s, s.step))[:n]

    @property
    def has_phases(self) -> bool:
        return any(s.phase is not None for s in self.steps)

    def by_site(self) -> list[StepGroup]:
        """Supersteps grouped by their bsp_sync site, costliest first: a loop's sync is one row."""
        return _grouped(self.steps, "site", lambda s: s.site, costliest_first=True)

    def by_phase(self) -> list[StepGroup]:
        """Supersteps grouped by the phase the program named (bspk_profile_phase), in the
        order the phases first came; [] where it named none."""
        return _grouped(self.steps, "phase", lambda s: s.phase, costliest_first=False) if self.has_phases else []

    def to_json(self) -> JsonObject:
        h = self.profile.header
        return {
            "format": 1,
            "tool": ANALYSIS_TOOL,
            "bspkit_version": __version__,
            "profile": str(self.profile.path),
            "section": self.profile.section,
            "phase": self.phase,
            "program": h.get("program"),
            "argv": h.get("argv"),
            "host": h.get("host"),
            "date": h.get("date"),
            "backend": h.get("backend"),
            "p": self.p,
            "S": self.S,
            "W_s": self.W_s,
            "H": self.H,
            "measured_s": self.measured_s,
            "supersteps": [s.to_json() for s in self.steps],
            "by_phase": self.by_phase(),
            "by_site": self.by_site(),
            "processes": [ps.to_json() for ps in self.processes],
            "sites": [site.to_json() for site in self.sites.values()],
        }


def _grouped(
    steps: Sequence[StepStats], name: str, key: Callable[[StepStats], str | None], costliest_first: bool
) -> list[StepGroup]:
    groups: dict[str | None, list[StepStats]] = {}
    for s in steps:
        groups.setdefault(key(s), []).append(s)
    # cast: the key `name` (site or phase) is chosen at run time
    rows = cast(
        list[StepGroup],
        [
            {
                name: value,
                "supersteps": len(group),
                "first_step": group[0].step,
                "time_s": sum(s.time_s for s in group),
                "compute_max_s": sum(s.compute.max for s in group),
                "wait_max_s": sum(s.wait.max for s in group),
                "H": sum(s.h for s in group),
                "messages": sum(s.count for s in group),
            }
            for value, group in groups.items()
        ],
    )
    return sorted(rows, key=lambda r: -r["time_s"]) if costliest_first else rows


def _words_of(entries: Sequence[Sequence[int]] | None) -> Iterable[tuple[int, int, int]]:
    for peer, messages, words in entries or []:
        yield int(peer), int(messages), int(words)


def dominant_primitive(ops: Mapping[str, Sequence[int]]) -> str | None:
    """The primitive that moved most bytes (then the most calls); None without any."""
    used = [(-int(v[1]), -int(v[0]), name) for name, v in ops.items() if v and (v[0] or v[1])]
    return min(used)[2] if used else None


def _common_phase(records: Sequence[Record]) -> str | None:
    """The phase of a superstep: the processes' name for it, "a | b" where they differ."""
    names = list(dict.fromkeys(r.get("phase") for r in records))
    if names == [None]:
        return None
    return " | ".join(str(n) if n is not None else "none" for n in names)


def communication_pattern(flows: Iterable[tuple[int, int]], p: int) -> str | None:
    """The probe's pattern (docs/probe-format.md) that data flows src -> dest have: "shift"
    when every process sends to the one k places on, "permutation" when each sends to at
    most one and receives from at most one, else "alltoall" (the probe's surface of many
    partners); None without traffic. It picks the g surface, as a driver's own pattern does."""
    dests: dict[int, set[int]] = {}
    srcs: dict[int, set[int]] = {}
    for src, dest in flows:
        dests.setdefault(src, set()).add(dest)
        srcs.setdefault(dest, set()).add(src)
    if not dests:
        return None
    if any(len(d) > 1 for d in dests.values()) or any(len(s) > 1 for s in srcs.values()):
        return "alltoall"
    offsets = {(next(iter(d)) - src) % p for src, d in dests.items()}
    return "shift" if len(dests) == p and len(offsets) == 1 else "permutation"


def step_stats(records: Sequence[Record], origin: Sequence[float]) -> StepStats:
    """One superstep from its records, one per process in pid order; origin[pid]: the
    process' bsp_begin on the shared clock, relative to the run's first."""
    p = len(records)
    sent = [0] * p
    received = [0] * p
    messages = [0] * p
    issued = [0] * p
    flows: list[tuple[int, int]] = []
    for rec in records:
        me = rec["pid"]
        flows += [(me, dest) for dest, _, _ in _words_of(rec.get("out"))]
        flows += [(src, me) for src, _, _ in _words_of(rec.get("in_get"))]
        for dest, n, words in _words_of(rec.get("out")):
            sent[me] += words
            messages[me] += n
            issued[me] += n
            received[dest] += words
        for src, n, words in _words_of(rec.get("in_get")):
            received[me] += words
            sent[src] += words  # the owner of gotten data sends it
            messages[src] += n
            issued[me] += n
    ops: dict[str, list[int]] = {}
    for rec in records:
        for name, (calls, nbytes) in (rec.get("ops") or {}).items():
            acc = ops.setdefault(name, [0, 0])
            acc[0] += int(calls)
            acc[1] += int(nbytes)
    words = sum(sent)
    total_requests = sum(issued)
    ends = {rec.get("end") for rec in records}
    cpu = [r.get("cpu_s") for r in records]

    def optional_spread(key: str) -> Spread | None:
        values = [r.get(key) for r in records]
        return Spread.of([float(v) for v in values]) if all(isinstance(v, (int, float)) for v in values) else None

    return StepStats(
        step=int(records[0]["step"]),
        end="bsp_end" if "bsp_end" in ends else "bsp_sync",
        start_s=min(origin[r["pid"]] + float(r["t_start_s"]) for r in records),
        time_s=max(float(r["compute_s"]) + float(r["sync_s"]) for r in records),
        compute=Spread.of([float(r["compute_s"]) for r in records]),
        wait=Spread.of([float(r.get("wait_s") or 0.0) for r in records]),
        sync=Spread.of([float(r["sync_s"]) for r in records]),
        sent=sent,
        received=received,
        messages=messages,
        issued=issued,
        h=max(max(s, r) for s, r in zip(sent, received, strict=True)),
        count=max(issued),
        words=words,
        msg_words=words / total_requests if total_requests else 0.0,
        primitive=dominant_primitive(ops),
        pattern=communication_pattern(flows, p),
        ops=ops,
        self_words=sum(int(r.get("self_words") or 0) for r in records),
        push_reg=max(int(r.get("push_reg") or 0) for r in records),
        pop_reg=max(int(r.get("pop_reg") or 0) for r in records),
        set_tagsize=max(int(r.get("set_tagsize") or 0) for r in records),
        phase=_common_phase(records),
        cpu=Spread.of([float(c) for c in cpu]) if all(isinstance(c, (int, float)) for c in cpu) else None,
        pack=optional_spread("pack_s"),
        direct=optional_spread("direct_s"),
    )


def process_origins(profile: Profile) -> list[float]:
    """Each process' bsp_begin on the shared clock (t0_s), from the earliest one; zeros where
    the clocks are not comparable: a t0 missing, or bsp_begins further apart than the whole
    run lasted (processes on several hosts, whose monotonic clocks start at each boot)."""
    t0 = [proc.get("t0_s") for proc in profile.processes]
    if any(not isinstance(t, (int, float)) for t in t0):
        return [0.0] * profile.p
    times = [float(t) for t in t0]  # type: ignore[arg-type]
    longest = max(float(proc.get("total_s") or 0.0) for proc in profile.processes)
    if max(times) - min(times) > longest:
        return [0.0] * profile.p
    return [t - min(times) for t in times]


def end_s(rec: Record) -> float:
    """When a superstep record's bsp_sync returned, on its process' clock."""
    return float(rec["t_start_s"]) + float(rec["compute_s"]) + float(rec["sync_s"])


def phase_records(profile: Profile, phase: str) -> list[list[Record]]:
    """The supersteps of one phase; ProfileError naming the phases there are where it has none."""
    chosen = [recs for recs in profile.steps if _common_phase(recs) == phase]
    if not chosen:
        names = [n for n in dict.fromkeys(_common_phase(recs) for recs in profile.steps) if n is not None]
        there = f"its phases: {', '.join(names)}" if names else "the program named no phases (bspk_profile_phase)"
        raise ProfileError(f"{profile.path}: no superstep of phase '{phase}' ({there})")
    return chosen


def analyze(profile: Profile, addr2line: str | None = None, phase: str | None = None) -> Analysis:
    """The BSP cost of the run, or of the supersteps of one phase, with its sync sites
    resolved (sites.resolve; addr2line: the program to use, "" for none)."""
    origin = process_origins(profile)
    records = profile.steps if phase is None else phase_records(profile, phase)
    steps = [step_stats(recs, origin) for recs in records]
    for s, recs in zip(steps, records, strict=True):
        s.site_keys = [profile.site_key(r) for r in recs]
    sites = st.resolve((k for s in steps for k in s.site_keys if k is not None), addr2line)
    for s in steps:
        s.site = st.describe(sites, s.site_keys)
    processes = []
    for pid, proc in enumerate(profile.processes):
        mine = [recs[pid] for recs in records]
        span = end_s(mine[-1]) - float(mine[0]["t_start_s"])
        processes.append(
            ProcessStats(
                pid=pid,
                total_s=float(proc.get("total_s") or 0.0) if phase is None else span,
                compute_s=sum(float(r["compute_s"]) for r in mine),
                wait_s=sum(float(r.get("wait_s") or 0.0) for r in mine),
                sync_s=sum(float(r["sync_s"]) for r in mine),
                sent_words=sum(s.sent[pid] for s in steps),
                received_words=sum(s.received[pid] for s in steps),
            )
        )
    if phase is None:
        measured = max(ps.total_s for ps in processes)
    else:  # on the shared clock where there is one (else origin is 0: the longest process)
        start = min(o + float(r["t_start_s"]) for o, r in zip(origin, records[0], strict=True))
        measured = max(o + end_s(r) for o, r in zip(origin, records[-1], strict=True)) - start
    return Analysis(profile, records, steps, processes, sites, measured, phase)


# ----------------------------------------------------------------------- prediction


def prediction_step(s: StepStats) -> pd.Superstep:
    """The superstep as predict.superstep_comm_s reads a driver's, its pattern inferred from
    the traffic (communication_pattern)."""
    prim = PRIMITIVE_FOR_PREDICTION.get(s.primitive or "", s.primitive)
    return {
        "h": s.h,
        "h_inout": s.h_inout,
        "count": s.count,
        "msg_words": s.msg_words,
        "primitive": prim,
        "pattern": s.pattern,
    }


@dataclass
class Prediction:
    """The run's predicted time on the machine of a parameter file, per model."""

    params_path: str
    compute_scale: float
    scale_note: str
    compute_s: float  # sum over supersteps of compute max x scale
    steps: list[PredictedStep]
    total: dict[str, float | None]
    comm: dict[str, float | None]
    same_machine: bool  # the parameter file is of the machine, back end and p that ran it

    def to_json(self) -> JsonObject:
        return {
            "params": self.params_path,
            "compute_scale": self.compute_scale,
            "compute_scale_note": self.scale_note,
            "same_machine": self.same_machine,
            "compute_s": self.compute_s,
            "total_s": self.total,
            "comm_s": self.comm,
            "supersteps": self.steps,
        }


def same_machine(analysis: Analysis, params: Params) -> bool:
    """Whether the parameter file was measured where the profile was taken: host, back end, p."""
    m = params.machine
    h = analysis.profile.header
    return (
        m.get("host") is not None
        and m.get("host") == h.get("host")
        and m.get("backend") == h.get("backend")
        and params.p == analysis.p
    )


def predict_run(
    analysis: Analysis, params: Params, params_path: str, compute_scale: float = 1.0, scale_note: str = ""
) -> Prediction:
    """Predicted time per superstep and in total under each model (None where the model has
    no fit for a superstep: then the total is None too)."""
    steps: list[PredictedStep] = []
    total: dict[str, float | None] = dict.fromkeys(comm_models.NAMES, 0.0)
    comm_total: dict[str, float | None] = dict.fromkeys(comm_models.NAMES, 0.0)
    compute_total = 0.0
    for s in analysis.steps:
        compute = s.compute.max * compute_scale
        compute_total += compute
        comms: dict[str, float | None] = {}
        times: dict[str, float | None] = {}
        for model in comm_models.NAMES:
            # the last superstep ends at bsp_end: no communication, no l
            comm = pd.superstep_comm_s(params, prediction_step(s), model) if s.synced else 0.0
            comms[model] = comm
            times[model] = None if comm is None else compute + comm
            t, c = total[model], comm_total[model]
            total[model] = None if t is None or comm is None else t + compute + comm
            comm_total[model] = None if c is None or comm is None else c + comm
        steps.append(PredictedStep(step=s.step, compute_s=compute, comm_s=comms, time_s=times))
    return Prediction(
        params_path,
        compute_scale,
        scale_note,
        compute_total,
        steps,
        total,
        comm_total,
        same_machine(analysis, params),
    )


def rate_scale(target: Params, here: Params) -> tuple[float, str]:
    """The factor from compute time here to compute time on the target: r_here / r_target,
    r the computing rate of each parameter file (params.computing_rate)."""
    r_target, r_here = computing_rate(target), computing_rate(here)
    if r_target is None or r_here is None:
        which = "--params" if r_target is None else "--compute-from"
        raise pd.PredictionError(f"the {which} file has no f of a double kernel: no computing rate r to scale by")
    scale = r_here[0] / r_target[0]
    rates = f"r here {quantity(r_here[0], 'flop/s')} ({r_here[1]}) / r there {quantity(r_target[0], 'flop/s')} ({r_target[1]})"
    return scale, rates
