"""The short calibration's model (issue 17): how far the machine has moved since its probe.

A calibration is one `calibration` round of bspprobe (docs/probe-format.md): two f kernels (a
plain-loop and a BLAS dot product, on every process at once), a put h-relation at two sizes, an empty sync and one after a
one-word shift, each measured as the matching part of the full probe with fewer repetitions, in
two passes (each quantity: the smaller of the passes' medians). Its ratio to the parameter
file, quantity by quantity, is the **drift** (1.0: no change; 2.0: twice as slow):

- against the probe's own calibration rounds where the parameter file has them
  (`params.calibration`, the median over the 11 rounds bspprobe runs among its g and
  validation points): the same quantities measured the same way, so a quiet machine gives 1;
- else against its fitted values: f per kernel, the time the fit of put/alltoall gives for
  the same (h, c) (eq. 2.6 at that h: `comm_models.predict_time_levels`), l per variant.

The headline parameters: f (the geometric mean of the two kernels), g (the larger h: the
bandwidth regime), g_small (the smaller: latency and per-message overheads), l (the empty
sync), l_shift.

`scaled(params, drift)` is the parameter file as the machine is now: f times the f drift, every
g surface's level fits times the g drift at their h (log-linear between the two calibrated
sizes, constant beyond them), Bisseling's g times g's and his l times the shifted sync's, the
empty sync times l's. Predicting a run with it (bspkit.model.supersteps, unchanged) is the calibrated
prediction.

Pure functions over records: running a calibration and its file are bspkit.measure.calibration's.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from bspkit.fileformat import JsonObject
from bspkit.model import comm_models
from bspkit.model import supersteps as pd
from bspkit.model.comm_models import predict_time_levels
from bspkit.model.params import LinregRecord, Lsq25Record, LsqRecord, Params, Surface

# The surface the g drift is measured against (the calibration puts on this pattern).
G_SURFACE = "put/alltoall"
F_KERNELS = ("dot_double_naive", "dot_double_blas")
# A run whose predicted time with the calibration before it and with the one after it differ
# by more than this factor is flagged: the machine moved during the run, so no one set of
# parameters describes it. In the run's own terms (l may double without consequence for a run
# of three supersteps), and above what a quiet machine shows: there the median run's
# prediction moved 12% between its two calibrations (README, Measurements), so a bound at
# the 10% target would flag half the runs of a quiet sweep.
WITHIN_RUN_FLAG = 1.2
HEADLINE = ("f", "g", "l")


class CalibrationError(Exception):
    """The data are not a calibration this version reads, or it cannot be compared."""


@dataclass
class GPoint:
    """One calibrated h-relation: put/alltoall with c requests of h* words per process."""

    msg_words: int
    count: int
    h: int
    time_s: float  # median time of the whole superstep (max over processes)

    def to_json(self) -> JsonObject:
        return {"msg_words": self.msg_words, "count": self.count, "h": self.h, "time_s": self.time_s}


def f_key(entry: Mapping[str, Any]) -> str:
    """A calibration's f kernel as the drift names it: timed on every process at once
    (`procs` > 1) it is not the probe's f (process 0 alone) and is compared with the probe's
    own calibration rounds only."""
    procs = entry.get("procs")
    return str(entry["kernel"]) + (f" x{procs}" if isinstance(procs, int) and procs > 1 else "")


@dataclass
class Calibration:
    """One calibration round, as `bspkit calibrate` writes it (units: seconds; f per operation)."""

    date: str | None
    f: dict[str, float]  # kernel -> seconds per operation
    g: list[GPoint]
    l: dict[str, float]  # variant -> seconds per superstep
    elapsed_s: float | None = None  # the round itself (process 0)
    seq: int | None = None  # in a probe: the position in the section's order it preceded
    t_s: float | None = None  # in a probe: seconds since the probe's start
    loadavg: list[float] | None = None
    extra: JsonObject = field(default_factory=dict)  # backend, p, mode, host, cpu, ...

    @classmethod
    def from_record(cls, rec: Mapping[str, Any], date: str | None = None) -> Calibration:
        """A bspprobe `calibration` record: medians taken, f divided by its operations."""

        def median(entry: Mapping[str, Any], what: str) -> float:
            samples = entry.get("samples_s")
            if not isinstance(samples, list) or not samples:
                raise CalibrationError(f"calibration record: {what} has no samples")
            return float(statistics.median(float(s) for s in samples))

        def smallest(values: dict[Any, float], key: Any, v: float) -> None:
            """The smaller of the passes' medians: a pause that hit one pass is not the machine."""
            values[key] = min(values.get(key, math.inf), v)

        f: dict[str, float] = {}
        g_t: dict[tuple[int, int, int], float] = {}
        l_s: dict[str, float] = {}
        try:
            for e in rec.get("f") or []:
                smallest(f, f_key(e), median(e, e["kernel"]) / float(e["ops"]))
            for e in rec.get("g") or []:
                smallest(g_t, (int(e["h"]), int(e["msg_words"]), int(e["count"])), median(e, f"g h = {e['h']}"))
            for e in rec.get("l") or []:
                smallest(l_s, e["variant"], median(e, f"l {e['variant']}"))
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(f"calibration record: missing or bad key {e}") from None
        g = [GPoint(hs, c, h, t) for (h, hs, c), t in sorted(g_t.items())]
        return cls(
            date=date,
            f=f,
            g=g,
            l=l_s,
            elapsed_s=rec.get("elapsed_s"),
            seq=rec.get("seq"),
            t_s=rec.get("t_s"),
            loadavg=rec.get("loadavg"),
        )

    def to_json(self) -> JsonObject:
        return {
            "date": self.date,
            "elapsed_s": self.elapsed_s,
            "seq": self.seq,
            "t_s": self.t_s,
            "loadavg": self.loadavg,
            **self.extra,
            "f_s_per_op": self.f,
            "g": [p.to_json() for p in self.g],
            "l_s": self.l,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Calibration:
        known = {"date", "elapsed_s", "seq", "t_s", "loadavg", "f_s_per_op", "g", "l_s"}
        try:
            return cls(
                date=d.get("date"),
                f={k: float(v) for k, v in (d.get("f_s_per_op") or {}).items()},
                g=[GPoint(int(e["msg_words"]), int(e["count"]), int(e["h"]), float(e["time_s"])) for e in d["g"]],
                l={k: float(v) for k, v in (d.get("l_s") or {}).items()},
                elapsed_s=d.get("elapsed_s"),
                seq=d.get("seq"),
                t_s=d.get("t_s"),
                loadavg=d.get("loadavg"),
                extra={k: v for k, v in d.items() if k not in known},
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(f"not a calibration: missing or bad key {e}") from None


def _geomean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


@dataclass
class Drift:
    """Each calibrated quantity now / in the parameter file (1.0: no change; 2.0: twice as slow)."""

    f: dict[str, float]  # kernel -> ratio
    g: list[tuple[int, float]]  # (h, ratio), ascending h
    l: dict[str, float]  # variant -> ratio

    @property
    def headline(self) -> dict[str, float | None]:
        """f (geometric mean of the kernels), g (the larger h), g_small, l (empty), l_shift."""
        return {
            "f": _geomean(list(self.f.values())),
            "g": self.g[-1][1] if self.g else None,
            "g_small": self.g[0][1] if len(self.g) > 1 else None,
            "l": self.l.get("empty"),
            "l_shift": self.l.get("shift"),
        }

    def g_at(self, h: float) -> float:
        """The g drift at h: log-linear in h between the calibrated sizes, constant beyond."""
        if not self.g:
            return 1.0
        if h <= self.g[0][0] or len(self.g) == 1:
            return self.g[0][1]
        if h >= self.g[-1][0]:
            return self.g[-1][1]
        for (h0, d0), (h1, d1) in zip(self.g, self.g[1:], strict=False):
            if h0 <= h <= h1:
                w = math.log(h / h0) / math.log(h1 / h0)
                return math.exp((1 - w) * math.log(d0) + w * math.log(d1))
        return self.g[-1][1]

    def to_json(self) -> JsonObject:
        return {
            "headline": self.headline,
            "f": self.f,
            "g": [{"h": h, "ratio": d} for h, d in self.g],
            "l": self.l,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Drift:
        return cls(
            f=dict(d.get("f") or {}),
            g=[(int(e["h"]), float(e["ratio"])) for e in d.get("g") or []],
            l=dict(d.get("l") or {}),
        )


def reference_of(rounds: Sequence[Calibration]) -> JsonObject:
    """The probe's own calibration: the median over its rounds of each quantity (the
    parameter file's `calibration`, what later calibrations are compared with)."""

    def med(values: list[float]) -> float:
        return float(statistics.median(values))

    f: dict[str, list[float]] = {}
    g: dict[tuple[int, int, int], list[float]] = {}
    l_s: dict[str, list[float]] = {}
    for r in rounds:
        for k, v in r.f.items():
            f.setdefault(k, []).append(v)
        for p in r.g:
            g.setdefault((p.h, p.msg_words, p.count), []).append(p.time_s)
        for k, v in r.l.items():
            l_s.setdefault(k, []).append(v)
    return {
        "rounds": len(rounds),
        "statistic": "median over the probe's calibration rounds (each the smaller of its passes' medians)",
        "f_s_per_op": {k: med(v) for k, v in f.items()},
        "g": [GPoint(hs, c, h, med(v)).to_json() for (h, hs, c), v in sorted(g.items())],
        "l_s": {k: med(v) for k, v in l_s.items()},
    }


def _ratios(now: Mapping[str, float], then: Mapping[str, float | None]) -> dict[str, float]:
    return {k: now[k] / v for k, v in then.items() if k in now and v and v > 0 and now[k] > 0}


def drift_of(cal: Calibration, params: Params) -> Drift:
    """The calibration against the parameter file: against the probe's own calibration rounds
    where it has them (`params.calibration`: the same quantities measured the same way, so a
    quiet machine gives 1), else against its fitted f, l and put/alltoall surface at the same
    (h, c). CalibrationError when they share nothing."""
    ref = params.calibration
    if ref and ref.get("rounds"):
        then = Calibration.from_json(ref)
        f = _ratios(cal.f, then.f)
        times = {(p.h, p.count): p.time_s for p in then.g}
        g = [(p.h, p.time_s / times[p.h, p.count]) for p in cal.g if times.get((p.h, p.count)) and p.time_s > 0]
        l_s = _ratios(cal.l, then.l)
    else:
        f = _ratios(cal.f, params.f)
        surface = params.g.get(G_SURFACE)
        g = []
        if surface is not None and surface.levels:
            for pt in cal.g:
                model = predict_time_levels(surface.levels, pt.h, pt.count)
                if model and model > 0 and pt.time_s > 0:
                    g.append((pt.h, pt.time_s / model))
        l_s = _ratios(cal.l, params.l)
    if not (f or g or l_s):
        raise CalibrationError(
            "the calibration and the parameter file have no quantity in common "
            f"(f kernels {', '.join(F_KERNELS)}, {G_SURFACE} levels, l empty/shift)"
        )
    return Drift(f=f, g=sorted(g), l=l_s)


def mean_drift(before: Drift, after: Drift | None) -> Drift:
    """The drift over a run: the geometric mean of the calibrations before and after it."""
    if after is None:
        return before

    def mean(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
        return {k: math.sqrt(a[k] * b[k]) for k in a if k in b}

    after_g = dict(after.g)
    return Drift(
        f=mean(before.f, after.f),
        g=[(h, math.sqrt(d * after_g[h])) for h, d in before.g if h in after_g],
        l=mean(before.l, after.l),
    )


def within_run(before: Drift, after: Drift) -> dict[str, float | None]:
    """after / before of each headline parameter: how much the machine moved during a run."""
    a, b = after.headline, before.headline
    return {k: (a[k] / b[k]) if a[k] and b[k] else None for k in HEADLINE}


FitRecord = TypeVar("FitRecord", LsqRecord, Lsq25Record, LinregRecord)


def _scale_record(rec: FitRecord, names: Sequence[str], factor: float) -> FitRecord:
    """A fit record ({name: value or [value, lo, hi]}) with those entries times factor."""
    out = copy.deepcopy(rec)
    values = cast(dict[str, Any], out)  # the entries are named at run time
    for name in names:
        v = values.get(name)
        if isinstance(v, list):
            values[name] = [x * factor if isinstance(x, (int, float)) else x for x in v]
        elif isinstance(v, (int, float)):
            values[name] = v * factor
    return out


def _scaled_surface(s: Surface, drift: Drift, l_factor: float) -> Surface:
    out = copy.deepcopy(s)
    for lv in out.levels:
        d = drift.g_at(lv.h)
        lv.A_s, lv.B_s, lv.g_h = lv.A_s * d, lv.B_s * d, lv.g_h * d
    g_large = drift.g_at(math.inf)
    out.linreg = _scale_record(out.linreg, ["g"], g_large)
    out.linreg = _scale_record(out.linreg, ["l"], l_factor)
    out.lsq_25 = _scale_record(out.lsq_25, ["g_inf"], g_large)
    out.lsq = _scale_record(out.lsq, ["g_inf"], g_large)
    if out.predict is not None:
        out.predict.g_inf *= g_large
    if out.g_inf is not None:
        out.g_inf *= g_large
    return out


def scaled(params: Params, drift: Drift, scale_f: bool = True) -> Params:
    """The parameter file as the machine is now (see the module's docstring). scale_f=False
    leaves f alone (for predictions whose f was measured in the run itself)."""
    out = copy.deepcopy(params)
    head = drift.headline
    f_factor = head["f"] or 1.0
    if scale_f:
        out.f = {k: (v * drift.f.get(k, f_factor) if v is not None else None) for k, v in out.f.items()}
        out.f_average = {k: v * f_factor for k, v in out.f_average.items()}
    l_empty = head["l"] or 1.0
    l_comm = head["l_shift"] or l_empty
    out.l = {k: (v * drift.l.get(k, l_comm) if v is not None else None) for k, v in out.l.items()}
    out.g = {k: _scaled_surface(s, drift, l_comm) for k, s in out.g.items()}
    return out


def calibrated_prediction(
    measured_s: float, data: Mapping[str, Any], params: Params, before: Drift, after: Drift | None
) -> JsonObject:
    """A run's prediction with the parameters scaled by the machine's drift over the run (the
    calibrations before and after it; before only when a sweep stopped after it), with its
    errors against the measured time. g and l: the probe's, times the drift over the run. f:
    the driver timed its own kernel after its repetitions, at the moment of the calibration
    after it; over the repetitions it was the f drift over the run relative to that moment,
    sqrt(f before / f after). PredictionError when the parameters cannot predict the run."""
    drift = mean_drift(before, after)
    f_run = data.get("f_all_s_per_unit") or data.get("f_s_per_unit")
    f_b, f_a = before.headline["f"], after.headline["f"] if after is not None else None
    f_factor = math.sqrt(f_b / f_a) if f_b and f_a else 1.0
    pred = pd.predict(scaled(params, drift, scale_f=False), data, f_run * f_factor if f_run else None)
    moved = _prediction_moved(data, params, before, after) if after is not None else None
    return {
        "predicted_s": {m: pred[m] for m in comm_models.NAMES},
        "rel_error": {m: pd.relative_error(pred[m], measured_s) for m in comm_models.NAMES},
        "drift": drift.headline,
        "f_factor": f_factor,
        "within_run": within_run(before, after) if after is not None else None,
        "within_run_prediction": moved,
        "flagged": moved is not None and not 1 / WITHIN_RUN_FLAG <= moved <= WITHIN_RUN_FLAG,
        "after": after is not None,
    }


def _prediction_moved(data: Mapping[str, Any], params: Params, before: Drift, after: Drift) -> float | None:
    """The run's predicted time with the calibration after it / before it; its work too moves
    with f, whose drift the run's own f (timed once, at one moment) cannot see."""
    pb = pd.predict(scaled(params, before, scale_f=False), data)
    pa = pd.predict(scaled(params, after, scale_f=False), data)
    f_b, f_a = before.headline["f"], after.headline["f"]
    f_moved = f_a / f_b if f_a and f_b else 1.0
    m = comm_models.best({k: v for k in comm_models.NAMES if (v := pa[k]) and pb[k]})
    if m is None:
        return None
    return float((pa["work_s"] * f_moved + pa[m + " comm_s"]) / pb[m])
