"""Reading the raw-sample JSON lines that bspprobe writes (docs/probe-format.md).

Every record is one JSON object with a "type". Unknown types and unknown keys are ignored
(the format may grow); a record of a known type that lacks a key the analysis needs is an
error naming the file and line. A last line cut short (a run that was killed) is dropped
with a warning, so that what was measured before it can still be fitted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict, TypeVar, cast

import numpy as np

from bspkit.fileformat import JsonObject, format_problem
from bspkit.measure.machine_state import CanaryReference, Mark, batch_mark, canary_mark, canary_reference

FORMAT_VERSION = 1

T = TypeVar("T")

# Keys each record type must have for the analysis (the rest is optional).
REQUIRED: dict[str, tuple[str, ...]] = {
    "f": ("kernel", "ops", "samples_s"),
    "memcpy": ("bytes", "samples_s"),
    "g": ("primitive", "pattern", "msg_words", "count", "samples_s"),
    "l": ("variant", "samples_s"),
    "as": ("test", "samples_s"),
    "validation": ("primitive", "pattern", "msg_words", "count", "samples_s"),
    "load": ("t_s", "loadavg"),
    "calibration": ("f", "g", "l"),
    # the memory-hierarchy suites of Kang et al. (bspprobe --only mem,pp,disk)
    "mem": ("op", "elem", "elem_bytes", "n", "stride", "cache", "procs", "lines", "samples_s"),
    "stream": ("kernel", "bytes", "bytes_moved", "procs", "samples_s"),
    "pp": ("pattern", "bytes", "samples_s"),
    "disk": ("op", "access", "cache", "bytes", "samples_s"),
    # a fixed point of one regime re-measured through the run (issue 39)
    "sentinel": ("regime", "samples_s"),
}
# Records that describe the run once (the last one wins); no samples.
SINGLE = ("caches", "disk_info")
# The hardware references (bspprobe's section hw): kept as read, with "_where" (file:line)
# added, in RawRun.hardware; bspkit.measure.hardware reads and checks them.
HARDWARE = ("memcpy_h", "hw_barrier", "hw_pingpong")


class RawDataError(Exception):
    """The raw file cannot be used (unreadable, wrong format, a record without its keys)."""


class SampleStats(TypedDict):
    """A measurement point's samples summarised, as the parameter file holds it (Stats.as_dict)."""

    n: int
    median: float
    q1: float
    q3: float
    min: float
    max: float
    outliers: int  # samples more than 1.5 IQR from the median
    spread: float  # IQR / median


@dataclass
class Stats:
    """Robust summary of the samples of one measurement point."""

    n: int
    median: float
    q1: float
    q3: float
    min: float
    max: float
    outliers: int  # samples more than 1.5 IQR away from the median
    spread: float  # IQR / median (0 when the median is 0)

    def as_dict(self) -> SampleStats:
        return cast(SampleStats, asdict(self))  # the fields in this order, as the parameter file has them


def stats(samples: Any) -> Stats:
    """Median, quartiles, min/max and the number of outliers of a list of samples."""
    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        raise ValueError("no finite samples")
    med = float(np.median(x))
    q1, q3 = (float(v) for v in np.percentile(x, [25, 75]))
    iqr = q3 - q1
    outliers = int(np.count_nonzero(np.abs(x - med) > 1.5 * iqr)) if iqr > 0 else 0
    spread = iqr / med if med > 0 else 0.0
    return Stats(int(x.size), med, q1, q3, float(x.min()), float(x.max()), outliers, spread)


def median_ci(samples: Any, conf: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval for the median from order statistics: [x_(j), x_(n-1-j)], j
    the largest with P(B <= j) < (1 - conf) / 2 for B binomial(n, 1/2) (at least 0); the whole
    range below 6 samples."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = int(x.size)
    if n < 6:
        return float(x[0]), float(x[-1])
    tail = (1 - conf) / 2
    cdf, j = 0.0, 0
    for k in range(n // 2 + 1):  # the binomial's cdf, exactly (no scipy on a reader's import)
        cdf += math.comb(n, k) / (1 << n)
        if cdf >= tail:
            break
        j = k
    return float(x[j]), float(x[n - 1 - j])


def median_ci_rel(samples: Any) -> float | None:
    """Half the width of median_ci's 95% interval over the median: what bspprobe's adaptive rule
    stops on (its records' `median_ci_rel`); None for fewer than 6 samples or a median that is
    not positive."""
    x = np.asarray(samples, dtype=float)
    if x.size < 6:
        return None
    lo, hi = median_ci(x)
    med = float(np.median(x))
    return float((hi - lo) / (2 * med)) if med > 0 else None


@dataclass
class GPoint:
    """One grid point of a g surface (or one validation point)."""

    primitive: str
    pattern: str
    msg_words: int  # h*
    count: int  # c
    h: int  # c * h*
    samples: np.ndarray
    stats: Stats
    seq: int | None = None  # position in the probe's random order (g and validation share one)
    seqs: tuple[int, ...] = ()  # every visit's seq, where the point was measured more than once
    # the machine's state (bspkit.measure.machine_state): the point's mark when every visit was marked;
    # marked visits of a point with unmarked ones are left out of `samples` and counted here
    mark: Mark | None = None
    marked_visits: int = 0
    # the adaptive rule (issue 39): the achieved interval's half-width over the median of the
    # samples kept, as bspprobe wrote it (None in older files) and why the point stopped
    median_ci_rel: float | None = None
    stop: str | None = None

    @property
    def key(self) -> str:
        return f"{self.primitive}/{self.pattern}"

    @property
    def g_tilde(self) -> float:
        """g~(h*, c) = median T / h (seconds per word)."""
        return self.stats.median / self.h


@dataclass
class RawRun:
    """Everything in one raw file, grouped for the analysis."""

    path: Path
    header: JsonObject
    footer: JsonObject | None = None
    f: list[JsonObject] = field(default_factory=list)
    memcpy: list[JsonObject] = field(default_factory=list)
    g: list[GPoint] = field(default_factory=list)
    l: list[JsonObject] = field(default_factory=list)
    as_tests: list[JsonObject] = field(default_factory=list)
    validation: list[GPoint] = field(default_factory=list)
    load: list[JsonObject] = field(default_factory=list)
    calibration: list[JsonObject] = field(default_factory=list)  # the short calibration's rounds, as read
    # the memory-hierarchy suites: records as read, with "_samples" and "_stats" added
    mem: list[JsonObject] = field(default_factory=list)
    stream: list[JsonObject] = field(default_factory=list)
    pp: list[JsonObject] = field(default_factory=list)
    disk: list[JsonObject] = field(default_factory=list)
    caches: JsonObject | None = None
    disk_info: JsonObject | None = None
    hardware: list[JsonObject] = field(default_factory=list)  # hook: the HARDWARE records, for bspkit.measure.hardware
    read_warnings: list[str] = field(default_factory=list)
    # every record's machine state, in file order: (record type, the state object as read)
    states: list[tuple[str, Any]] = field(default_factory=list)
    # the sentinels (issue 39): records as read, with "_samples", "_stats" and "_mark" added
    sentinels: list[JsonObject] = field(default_factory=list)
    # the canary's usual time in this run (None: no canary recorded) and the batches it marked,
    # one row each (record type, label, seq, ratio, process, evidence, where: file:line)
    canary: CanaryReference | None = None
    canary_slowed: list[JsonObject] = field(default_factory=list)

    def g_keys(self) -> list[str]:
        """The primitive/pattern pairs measured, in the order first seen."""
        keys: list[str] = []
        for pt in self.g:
            if pt.key not in keys:
                keys.append(pt.key)
        return keys

    def g_points(self, key: str) -> list[GPoint]:
        return [pt for pt in self.g if pt.key == key]

    @property
    def p(self) -> int | None:
        p = self.header.get("p")
        return int(p) if isinstance(p, (int, float)) else None

    def label(self) -> str:
        """Short name of the run for tables: library/backend host p=P."""
        h = self.header
        lib = h.get("library") or "?"
        backend = h.get("backend") or "?"
        return f"{lib}/{backend} {h.get('host', '?')} p={h.get('p', '?')}"


def _samples(rec: JsonObject, where: str) -> np.ndarray:
    s = rec.get("samples_s")
    if not isinstance(s, list) or not s:
        raise RawDataError(f"{where}: samples_s must be a non-empty list of seconds")
    try:
        x = np.asarray([float(v) for v in s], dtype=float)
    except (TypeError, ValueError):
        raise RawDataError(f"{where}: samples_s holds something that is not a number") from None
    if not np.all(np.isfinite(x)):
        raise RawDataError(f"{where}: samples_s holds a non-finite value")
    return x


def _gpoint(rec: JsonObject, where: str, canary: CanaryReference | None = None) -> GPoint:
    x = _samples(rec, where)
    try:
        hstar = int(rec["msg_words"])
        c = int(rec["count"])
    except (TypeError, ValueError):
        raise RawDataError(f"{where}: msg_words and count must be integers") from None
    if hstar <= 0 or c <= 0:
        raise RawDataError(f"{where}: msg_words and count must be positive (got {hstar}, {c})")
    h = rec.get("h")
    h = int(h) if isinstance(h, (int, float)) and h > 0 else hstar * c
    seq = rec.get("seq")
    mark = batch_mark(rec.get("state"), canary)
    ci = rec.get("median_ci_rel")
    return GPoint(
        str(rec["primitive"]),
        str(rec["pattern"]),
        hstar,
        c,
        h,
        x,
        stats(x),
        int(seq) if isinstance(seq, (int, float)) else None,
        mark=mark,
        marked_visits=1 if mark else 0,
        median_ci_rel=float(ci) if isinstance(ci, (int, float)) and not isinstance(ci, bool) else None,
        stop=str(rec["stop"]) if isinstance(rec.get("stop"), str) else None,
    )


def _converted(rec: JsonObject, key: str, to: Callable[[Any], T], error: str) -> T:
    """rec[key] as a number of the type `to` makes, or RawDataError(error)."""
    try:
        return to(rec[key])
    except (TypeError, ValueError):
        raise RawDataError(error) from None


def merged_mark(*visits: tuple[Mark, int]) -> Mark:
    """The mark of marked visits merged into one point: the stretch of the merged samples' mean
    (each visit's stretch weighted by its samples), the evidence of the worst visit."""
    n = sum(k for _m, k in visits)
    stretch = sum(m.stretch * k for m, k in visits) / n
    worst = min((m for m, _k in visits), key=lambda m: m.held_share)
    return replace(worst, held_share=1.0 / stretch)


def _merge_points(points: list[GPoint]) -> list[GPoint]:
    """Points measured more than once (same key, h*, c) are merged into one. Visits during
    which a process did not hold its core (marked) count only where no unmarked one exists:
    then the point is marked (merged_mark: the stretch of its samples' mean)."""
    merged: dict[tuple[str, int, int], GPoint] = {}
    for pt in points:
        k = (pt.key, pt.msg_words, pt.count)
        if k in merged:
            old = merged[k]
            seqs = old.seqs + ((pt.seq,) if pt.seq is not None else ())
            visits = old.marked_visits + pt.marked_visits
            if (old.mark is None) != (pt.mark is None):  # keep the unmarked visits only
                keep = old if old.mark is None else pt
                merged[k] = replace(keep, seq=old.seq, seqs=seqs, marked_visits=visits)
                continue
            x = np.concatenate([old.samples, pt.samples])
            mark = None
            if old.mark is not None and pt.mark is not None:
                mark = merged_mark((old.mark, old.samples.size), (pt.mark, pt.samples.size))
            merged[k] = GPoint(
                old.primitive, old.pattern, old.msg_words, old.count, old.h, x, stats(x), old.seq, seqs, mark, visits
            )
        else:
            merged[k] = pt
            if pt.seq is not None:
                pt.seqs = (pt.seq,)
    return list(merged.values())


def record_label(rtype: str, rec: JsonObject) -> str:
    """A timed batch named as a reader finds it in the file: "g put/alltoall h*=64 c=8", "l empty"."""
    if rtype in ("g", "validation"):
        return f"{rtype} {rec.get('primitive')}/{rec.get('pattern')} h*={rec.get('msg_words')} c={rec.get('count')}"
    if rtype == "sentinel":
        return f"sentinel {rec.get('regime')} (visit {rec.get('visit')}, {rec.get('where')})"
    name = rec.get({"f": "kernel", "l": "variant", "as": "test"}.get(rtype, "type"))
    h = f" h={rec['h']}" if rtype == "as" and rec.get("h") else ""
    return f"{rtype} {name}{h}"


def _note_canary(run: RawRun, rtype: str, rec: JsonObject, where: str) -> None:
    """A batch the canary marks, listed in run.canary_slowed (whatever else marked it too)."""
    mark = canary_mark(rec.get("state"), run.canary)
    if mark is None:
        return
    run.canary_slowed.append(
        {
            "record": rtype,
            "label": record_label(rtype, rec),
            "seq": rec.get("seq"),
            "ratio": mark.canary_ratio,
            "process": mark.worst_process,
            "evidence": mark.evidence,
            "where": where,
        }
    )


def load_raw(path: str | Path) -> RawRun:
    """Reads a raw-sample file; raises RawDataError with file:line for what cannot be used."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise RawDataError(f"cannot read {path}: {e.strerror or e}") from None
    lines = text.splitlines()
    run: RawRun | None = None
    read_warnings: list[str] = []
    pending: list[tuple[str, JsonObject, str]] = []
    header: JsonObject | None = None
    footer: JsonObject | None = None
    last_nonblank = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"{path}:{i + 1}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            if i == last_nonblank and i > 0:
                read_warnings.append(f"{where}: last line is cut short ({e.msg}); dropped (was the run killed?)")
                continue
            raise RawDataError(f"{where}: not a JSON object: {e.msg}") from None
        if not isinstance(rec, dict) or "type" not in rec:
            raise RawDataError(f'{where}: every line must be a JSON object with a "type"')
        rtype = rec["type"]
        if rtype == "header":
            if header is not None:
                raise RawDataError(f"{where}: a second header (two runs in one file?)")
            problem = format_problem(rec, "raw", FORMAT_VERSION)
            if problem:
                raise RawDataError(f"{where}: {problem}")
            header = rec
            continue
        if rtype == "footer":
            footer = rec
            continue
        if rtype in SINGLE or rtype in HARDWARE:
            pending.append((rtype, rec, where))
            continue
        if rtype in REQUIRED:
            missing = [k for k in REQUIRED[rtype] if k not in rec]
            if missing:
                raise RawDataError(f"{where}: {rtype} record without {', '.join(missing)}")
            pending.append((rtype, rec, where))
        # unknown types are ignored
    if header is None:
        raise RawDataError(f"{path}: no header record: not a bspprobe raw file")
    if footer is None:
        read_warnings.append(f"{path}: no footer record: the run did not finish; fitting what is there")
    run = RawRun(path=path, header=header, footer=footer, read_warnings=read_warnings)
    # the canary's usual time over the whole run first: a batch's canary is judged against it
    run.canary = canary_reference(rec.get("state") for _t, rec, _w in pending)
    g_points: list[GPoint] = []
    v_points: list[GPoint] = []
    for rtype, rec, where in pending:
        if isinstance(rec.get("state"), dict):
            run.states.append((rtype, rec["state"]))
            _note_canary(run, rtype, rec, where)
        if rtype == "g":
            g_points.append(_gpoint(rec, where, run.canary))
        elif rtype == "validation":
            v_points.append(_gpoint(rec, where, run.canary))
        elif rtype in ("load", "calibration"):
            getattr(run, rtype).append(rec)
        elif rtype in SINGLE:
            setattr(run, rtype, rec)
        elif rtype in HARDWARE:
            run.hardware.append({**rec, "_where": where})
        else:
            rec = dict(rec)
            rec["_samples"] = _samples(rec, where)
            rec["_stats"] = stats(rec["_samples"])
            rec["_mark"] = batch_mark(rec.get("state"), run.canary)
            if rtype == "f":
                rec["ops"] = _converted(rec, "ops", float, f"{where}: ops must be a number")
                run.f.append(rec)
            elif rtype == "memcpy":
                rec["bytes"] = _converted(rec, "bytes", int, f"{where}: bytes must be an integer")
                run.memcpy.append(rec)
            elif rtype == "l":
                run.l.append(rec)
            elif rtype == "as":
                run.as_tests.append(rec)
            elif rtype in ("mem", "stream", "pp", "disk"):
                getattr(run, rtype).append(rec)
            elif rtype == "sentinel":
                run.sentinels.append(rec)
    run.g = _merge_points(g_points)
    run.validation = _merge_points(v_points)
    return run
