"""The parameter file (`params.json`, docs/probe-format.md) as typed objects.

`bspkit fit` returns a `Params`; `predict`, `report`, `compare` and `validate` read it. A
`Surface` is the fit of one g surface (one primitive/pattern), a `Level` the fit of eq. (2.6)
at one grid value of h, a `PredictModel` the global (g_inf, h_half, o) used for prediction.

`to_json` writes the keys in the order `bspkit fit` always wrote them, so the file is the same
text as before these classes existed. `from_json` reads older and hand-written files too: a
key the file lacks reads as null (or empty), keys this version does not know are kept.
The nested fit records (`lsq`, `lsq_2.5`, `linreg`) and the detail records (f_detail,
validation, noise, ...) are typed dicts (TypedDict): JSON objects as the file holds them,
their keys named and typed here.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict, TypeVar

import numpy as np

from bspkit.fileformat import JsonObject, format_problem
from bspkit.measure.rawdata import SampleStats
from bspkit.version import __version__

FORMAT_VERSION = 1

R = TypeVar("R")  # a record read from JSON (Surface, Params)


class ParamsError(Exception):
    """The data are not a bspkit parameter file of a format this version reads."""


def json_safe(obj: Any) -> Any:
    """JSON-safe copy: tuples to lists, numpy scalars to Python, NaN/inf to None."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return finite_or_none(obj)
    return obj


def finite_or_none(v: Any) -> float | None:
    """A float for JSON, or None for NaN/inf/None."""
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def value_of(v: Any) -> float | None:
    """A parameter as the file holds it: a number, [value, ci_low, ci_high], or null."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return None if not v or v[0] is None else float(v[0])
    return float(v)


def _known_keys(cls: type, renamed: Mapping[str, str]) -> list[tuple[str, str]]:
    """(attribute, JSON key) of a record's fields in file order; `extra` holds the rest."""
    return [(f.name, renamed.get(f.name, f.name)) for f in dataclasses.fields(cls) if f.name != "extra"]


def _read_record(record: R, d: Mapping[str, Any], renamed: Mapping[str, str], value: Callable[[str, Any], Any]) -> R:
    """Sets the record's fields from the keys d has (value(attr, v) converts nested records);
    a null where an object or a list belongs reads as empty; unknown keys go to `extra`."""
    known = _known_keys(type(record), renamed)
    for attr, key in known:
        if key not in d:
            continue
        v = value(attr, d[key])
        if v is None and isinstance(getattr(record, attr), (dict, list)):
            v = type(getattr(record, attr))()
        setattr(record, attr, v)
    keys = {key for _attr, key in known}
    record.extra = {k: v for k, v in d.items() if k not in keys}  # type: ignore[attr-defined]
    return record


# --------------------------------------------------------------- the file's records


class LatencyDetail(SampleStats):
    """`l_detail`: one variant's samples (all its records) and the interval of their median."""

    ci: list[float]  # [low, high], 95 %


class AsTest(SampleStats):
    """`as.tests`: one latency test of the As suite."""

    note: str | None


class TotalExchangeRow(TypedDict):
    """`as.total_exchange`: the As suite's total exchange at one h (words per pair)."""

    h: int
    t_s: float
    q1: float
    q3: float
    t_per_h_s: float
    samples: int
    note: str | None


class AsSuite(TypedDict, total=False):
    """`as`: the As suite of Gerbessiotis & Lee ({} where it did not run)."""

    tests: dict[str, AsTest]
    total_exchange: list[TotalExchangeRow]


class FKernel(TypedDict):
    """`f_detail`: one kernel's time per operation."""

    n: int | None
    ops: float
    median_s: float
    s_per_op: float | None
    ops_per_s: float | None
    samples: int
    spread: float
    note: str | None


class MemcpyRow(TypedDict):
    """`memcpy_detail`: one copy size; `reference` marks the one g is compared with."""

    bytes: int
    procs: int
    median_s: float
    s_per_word: float | None
    spread: float
    note: str | None
    reference: NotRequired[bool]


# `checks.memcpy`: put's time per word against memcpy's ("pass" is a keyword: the functional form)
MemcpyCheck = TypedDict(
    "MemcpyCheck",
    {
        "key": str,
        "g_inf": float | None,
        "memcpy_s_per_word": float,
        "g_inf_global": float | None,
        "h": int | None,
        "ratio": float | None,
        "pass": bool | None,
    },
)


class Checks(TypedDict, total=False):
    """`checks`: the memcpy check and its factor."""

    memcpy: list[MemcpyCheck]
    memcpy_factor: float


class NoisyPoint(TypedDict):
    """`noise.noisy_points`: a g or validation point whose spread is above 10 %."""

    key: str
    msg_words: int
    count: int
    spread: float
    outliers: int


class SentinelRegime(TypedDict):
    """`noise.regimes`: one regime's sentinel visits (issue 39): the machine's time-to-time
    variability there."""

    what: str  # the point re-measured
    h: NotRequired[int]  # small_h and large_h: the words per process of the sentinel's h-relation
    visits: int
    median_s: float  # the median of the visits' medians
    rel_sd: float | None  # robust sd of log(visit median): 1.4826 x MAD; None below 3 visits
    max_over_min: float | None  # the slowest visit's median over the fastest's
    within_spread: float  # the visits' own IQR / median (their median): the noise of one moment
    marked_visits: int  # visits in which a process lost its core or the canary was slow
    series: list[list[float | None]]  # [t_s, median_s] per visit, in time order


class CanarySlowed(TypedDict):
    """`noise.canary.slowed`: one batch the canary marked."""

    record: str  # the record type
    label: str  # "g put/alltoall h*=64 c=8"
    seq: int | None
    ratio: float | None  # its slowest canary over that process's median
    process: int | None
    evidence: str
    where: str  # file:line of the record


class CanaryNoise(TypedDict, total=False):
    """`noise.canary`: the fixed-work canary around every batch (issue 39)."""

    median_s: float
    per_process_median_s: list[float]
    sd_log: float  # robust sd of log(time / its process's median)
    threshold: float  # a batch is marked above this x its median: max(min_ratio, 1 + sds x sd_log)
    min_ratio: float
    sds: float
    timings: int
    batches: int
    slowed_count: int
    slowed: list[CanarySlowed]  # the first 50
    note: str


class Noise(TypedDict, total=False):
    """`noise`: outliers, spread, load and the run's warnings; since issue 39 also the
    sentinels' variability per regime (`regimes`), the canary and how the adaptive rule ended
    the points (all three absent in files without them)."""

    samples: int
    outliers: int
    g_samples: int
    g_outliers: int
    points: int
    noisy_points: list[NoisyPoint]
    noisy_point_count: int
    loadavg_start: list[float] | None
    loadavg_end: list[float] | None
    loadavg_max: float | None
    warnings: list[str]
    regimes: dict[str, SentinelRegime]
    states: JsonObject  # two states of the machine found by the sentinels (bspkit.measure.sentinel_states)
    canary: CanaryNoise
    adaptive: JsonObject


# The statistics of the validation's relative errors (in `validation`, its `global`,
# `stable_state` and `calibrated`); "pass" is a keyword, hence the functional form.
ErrorStats = TypedDict(
    "ErrorStats",
    {
        "mean_abs_rel_error": float | None,
        "max_abs_rel_error": float | None,
        "within_threshold": int,
        "pass": bool | None,  # the mean within the threshold; None without points
    },
)


class CalibratedPoint(TypedDict):
    """A validation point's prediction scaled by the g drift of the calibration rounds around it."""

    g_drift: float
    predicted_s: float
    rel_error: float
    flagged: bool  # most of its visits lay between rounds that differ by more than WITHIN_RUN_FLAG


# `validation.points`: one off-grid h-relation; where it was predicted, the prediction's keys
ValidationPoint = TypedDict(
    "ValidationPoint",
    {
        "key": str,
        "msg_words": int,
        "count": int,
        "h": int,
        "measured_s": float,
        "seq": int | None,
        "drift_factor": float | None,
        # the relative standard error of measured_s, from the point's own samples (bspkit.model.trust)
        "median_rse": NotRequired[float],
        "skipped": NotRequired[str],  # why it was not predicted
        "predicted_s": NotRequired[float],  # eq. (2.6) per h
        "rel_error": NotRequired[float],
        "model": NotRequired[str],
        "pass": NotRequired[bool],
        "predicted_global_s": NotRequired[float],  # the one fit over the whole grid
        "rel_error_global": NotRequired[float],
        "model_global": NotRequired[str],
        "calibrated": NotRequired[CalibratedPoint],
        # a process did not hold its core while the point was measured (bspkit.measure.machine_state):
        # the evidence, and the prediction on the machine as it was (predicted_s * stretch)
        "marked": NotRequired[JsonObject],
        "as_it_was_s": NotRequired[float],
        "measured_mean_s": NotRequired[float],  # the mean sample: what as_it_was_s predicts
        "rel_error_as_it_was": NotRequired[float],
    },
)

# `validation.stable_state`: the points measured while the machine ran as the grid's fit says
StableState = TypedDict(
    "StableState",
    {
        "points": int,
        "factor_bound": float,
        "mean_abs_rel_error": float | None,
        "max_abs_rel_error": float | None,
        "within_threshold": int,
        "pass": bool | None,
    },
)


class CalibrationRound(TypedDict):
    """`validation.calibrated.rounds`: one of the probe's calibration rounds and its drift."""

    seq: int
    t_s: float | None
    elapsed_s: float | None
    drift: dict[str, float | None]  # the headline: f, g, g_small, l, l_shift


# `validation.calibrated`: the check again with the drift of the probe's calibration rounds
CalibratedValidation = TypedDict(
    "CalibratedValidation",
    {
        "rounds": list[CalibrationRound],
        "flagged": int,
        "within_run_flag": float,
        "mean_abs_rel_error": float | None,
        "max_abs_rel_error": float | None,
        "within_threshold": int,
        "pass": bool | None,
    },
)


class MachineDrift(TypedDict):
    """`validation.drift`: the machine's speed during the run, from the grid (measured / model)."""

    window: int
    curve: list[tuple[int, float]]  # (seq, factor); lists in the file
    max_factor: float | None
    min_factor: float | None
    share_off: float | None


# `validation`: eq. (2.6) against the off-grid points ({} in a file without them)
Validation = TypedDict(
    "Validation",
    {
        "threshold": float,
        "model": str,
        "points": list[ValidationPoint],
        "used": int,
        "skipped": int,
        "mean_abs_rel_error": float | None,
        "max_abs_rel_error": float | None,
        "within_threshold": int,
        "pass": bool | None,
        "global": ErrorStats,
        "stable_state": StableState,
        "calibrated": CalibratedValidation,
        "drift": MachineDrift,
        # the points measured while a process did not hold its core, scored apart
        "marked": JsonObject,
        # the error split into the machine's noise and the model's, by regime (bspkit.model.trust)
        "split": JsonObject,
    },
    total=False,
)


class LsqRecord(TypedDict, total=False):
    """A surface's `lsq`: the robust least-squares fit of eq. (2.6); [value, low, high] or null."""

    model: str
    points: int
    loss: str
    error: str  # why it could not be made
    g_inf: list[float] | None
    h_half: list[float] | None
    o: list[float] | None
    residual_rel_rms: float | None
    residual_rel_max: float | None
    error_bspstar: float | None
    l0: list[float] | None  # the empty sync's [median, low, high]
    h_half_net: float | None


class Lsq25Record(TypedDict, total=False):
    """A surface's `lsq_2.5`: the same fit of eq. (2.5), without o."""

    model: str
    points: int
    loss: str
    error: str
    g_inf: list[float] | None
    h_half: list[float] | None
    residual_rel_rms: float | None
    error_bsp: float | None


class LinregRecord(TypedDict, total=False):
    """A surface's `linreg`: Bisseling's T = g h + l over bspbench's range, and the range used."""

    msg_words: int
    points: int
    range: str
    h_min: int
    h_max: int
    excluded_h: list[int]
    error: str
    g: list[float] | None
    l: list[float] | None


@dataclass
class Level:
    """Eq. (2.6) at one grid value of h: T(h, c) = A + B c (estimators.level_fits)."""

    h: int
    A_s: float  # time of the h-relation, sync included (s)
    B_s: float  # time of one more message (s)
    g_h: float  # A / h: time per word at this h (s/word)
    points: int | None = None
    residual_rel_rms: float | None = None

    def to_json(self) -> JsonObject:
        return {
            "h": self.h,
            "points": self.points,
            "A_s": self.A_s,
            "B_s": self.B_s,
            "g_h": self.g_h,
            "residual_rel_rms": self.residual_rel_rms,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Level:
        return cls(
            h=d["h"],
            A_s=d["A_s"],
            B_s=d["B_s"],
            g_h=d["g_h"],
            points=d.get("points"),
            residual_rel_rms=d.get("residual_rel_rms"),
        )


@dataclass
class PredictModel:
    """The one global fit used to predict times: eq. (2.6) or (2.5) (o = 0); `model` names
    which fit it is ("2.6 lsq", "2.5 lsq" or "2.6 eq. 3.2-3.6")."""

    model: str
    g_inf: float  # s/word
    h_half: float  # words
    o: float  # words per message

    def to_json(self) -> JsonObject:
        return {"model": self.model, "g_inf": self.g_inf, "h_half": self.h_half, "o": self.o}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PredictModel:
        return cls(model=d["model"], g_inf=d["g_inf"], h_half=d["h_half"], o=d["o"])


@dataclass
class Surface:
    """The fits of one g surface ("<primitive>/<pattern>" in the file's `g`)."""

    points: int | None = None
    msg_words: list[int] = field(default_factory=list)
    count: list[int] = field(default_factory=list)
    # thesis' weighted estimators, eq. (3.1)-(3.6), and squared errors (App. B.1)
    g_inf: float | None = None
    g_small: float | None = None
    h_half: float | None = None
    g_mm: float | None = None
    o: float | None = None
    o_eq31: float | None = None
    h_min: float | None = None
    hstar_min: float | None = None
    error_bsp: float | None = None
    error_bspstar: float | None = None
    # the fit records: lsq (eq. 2.6), lsq_2.5 and Bisseling's linreg, as in the file
    lsq: LsqRecord = field(default_factory=LsqRecord)
    lsq_25: Lsq25Record = field(default_factory=Lsq25Record)
    linreg: LinregRecord = field(default_factory=LinregRecord)
    predict: PredictModel | None = None
    levels: list[Level] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    extra: JsonObject = field(default_factory=dict)

    JSON_NAMES = {"lsq_25": "lsq_2.5"}

    # ----------------------------------------------------- what prediction reads

    def bisseling_g_l(self) -> tuple[float, float | None] | None:
        """Bisseling's regression T = g h + l: (g, l), l None where it failed; None where g
        failed or is not positive."""
        g = value_of(self.linreg.get("g"))
        if g is None or g <= 0:
            return None
        return g, value_of(self.linreg.get("l"))

    def eq25_fit(self) -> tuple[float, float] | None:
        """The least-squares fit of eq. (2.5): (g_inf, h_half), h_half 0 where it failed."""
        g_inf = value_of(self.lsq_25.get("g_inf"))
        if not g_inf:
            return None
        return g_inf, value_of(self.lsq_25.get("h_half")) or 0.0

    def lsq_value(self, name: str) -> float | None:
        """A parameter of the least-squares fit of eq. (2.6) (g_inf, h_half, o), or None."""
        return value_of(self.lsq.get(name))

    # ------------------------------------------------------------------- JSON

    def to_json(self) -> JsonObject:
        out: JsonObject = {}
        for attr, key in _known_keys(Surface, self.JSON_NAMES):
            v = getattr(self, attr)
            if attr == "predict":
                v = v.to_json() if v is not None else None
            elif attr == "levels":
                v = [lv.to_json() for lv in v]
            out[key] = v
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Surface:
        def value(attr: str, v: Any) -> Any:
            if attr == "predict":
                return PredictModel.from_json(v) if v else None
            if attr == "levels":
                return [Level.from_json(lv) for lv in v or []]
            return v

        return _read_record(cls(), d, cls.JSON_NAMES, value)


@dataclass
class Params:
    """A parameter file: what `bspkit fit` writes (docs/probe-format.md)."""

    format: int = FORMAT_VERSION
    bspkit_version: str | None = None  # the bspkit that wrote the file (dumps stamps this one)
    source: str | None = None  # the raw file fitted
    fitted: str | None = None  # when (ISO 8601 UTC)
    machine: JsonObject = field(default_factory=dict)  # the raw header's machine fields
    p: int | None = None
    f: dict[str, float | None] = field(default_factory=dict)  # kernel: seconds per operation
    f_average: dict[str, float] = field(default_factory=dict)
    f_detail: dict[str, FKernel] = field(default_factory=dict)
    l: dict[str, float | None] = field(default_factory=dict)
    l_detail: dict[str, LatencyDetail] = field(default_factory=dict)
    memcpy_s_per_word: float | None = None
    memcpy_detail: list[MemcpyRow] = field(default_factory=list)
    g: dict[str, Surface] = field(default_factory=dict)  # "<primitive>/<pattern>": its fits
    as_suite: AsSuite = field(default_factory=AsSuite)
    validation: Validation = field(default_factory=Validation)
    # the probe's own short calibration (bspkit.model.drift.reference_of): what drift is measured against
    calibration: JsonObject = field(default_factory=dict)
    checks: Checks = field(default_factory=Checks)
    noise: Noise = field(default_factory=Noise)
    flags: list[str] = field(default_factory=list)
    fit_settings: JsonObject = field(default_factory=dict)
    imh: JsonObject = field(default_factory=dict)  # Kang et al.'s IMH model (bspkit.model.imh); {} without the suites
    # the machine's state during the run and what the fit left out for it (bspkit.measure.machine_state)
    machine_state: JsonObject = field(default_factory=dict)
    # the hardware references and the library against them (bspkit.measure.hardware); {} without them
    hardware: JsonObject = field(default_factory=dict)
    extra: JsonObject = field(default_factory=dict)

    JSON_NAMES = {"as_suite": "as"}

    def empty_sync_s(self) -> float | None:
        """l of a superstep without communication (the probe's empty sync), or None."""
        return value_of(self.l.get("empty"))

    def all_flags(self) -> list[str]:
        """The run's flags, then each surface's prefixed by its primitive/pattern."""
        out = list(self.flags)
        for key, s in self.g.items():
            out += [f"{key}: {fl}" for fl in s.flags]
        return out

    def to_json(self) -> JsonObject:
        """The file's JSON object (JSON-safe: NaN and infinities are null)."""
        out: JsonObject = {}
        for attr, key in _known_keys(Params, self.JSON_NAMES):
            v = getattr(self, attr)
            out[key] = {k: s.to_json() for k, s in v.items()} if attr == "g" else v
        out.update(self.extra)
        return json_safe(out)

    def dumps(self) -> str:
        """The file's text, as `bspkit fit` writes it (stamped with this bspkit's version)."""
        return json.dumps({**self.to_json(), "bspkit_version": __version__}, indent=1, allow_nan=False) + "\n"

    @classmethod
    def read(cls, path: str | Path) -> Params:
        """A parameter file from disk; OSError, json.JSONDecodeError or ParamsError when it
        cannot be read or is not one."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_json(cls, d: Any) -> Params:
        """Reads a parameter file's object; ParamsError when it is not one (format 1, with g)."""
        if not isinstance(d, Mapping) or "g" not in d:
            raise ParamsError(f"not a bspkit parameter file (format {FORMAT_VERSION})")
        problem = format_problem(d, "parameter file", FORMAT_VERSION)
        if problem:
            raise ParamsError(problem)

        def value(attr: str, v: Any) -> Any:
            return {k: Surface.from_json(e) for k, e in (v or {}).items()} if attr == "g" else v

        return _read_record(cls(), d, cls.JSON_NAMES, value)


R_KERNELS = ("dot_double_naive", "dot_double_blas")  # nearest to bspbench's DAXPY, in this order


def computing_rate(params: Params) -> tuple[float, str] | None:
    """bspbench's r, the computing rate in flop/s that g and l are counted in: the rate of the
    double-precision vector kernel (bspbench times a DAXPY), as (r, kernel name)."""
    for kernel in R_KERNELS:
        f = params.f.get(kernel)
        if f:
            return 1.0 / f, kernel
    avg = params.f_average.get("double")
    return (1.0 / avg, "the mean rate of the double kernels") if avg else None


# ----------------------------------------------------------- hand-written files

# the keys of a g surface: <primitive>/<pattern>
PRIMITIVES = ("put", "hpput", "get", "hpget", "send")
PATTERNS = ("alltoall", "permutation", "shift")


def is_hand_written(params: Params) -> bool:
    """A parameter file written by hand: `bspkit fit` always writes `fitted`, a hand file has none."""
    return params.fitted is None


def expand_shorthand(data: Mapping[str, Any]) -> dict[str, Any]:
    """A hand-written file's shorthand in the full form (docs/probe-format.md): "l": 2e-5 for
    {"empty": 2e-5}, a surface {"g": 3e-9, "l": 2e-5} for {"linreg": {"g": 3e-9, "l": 2e-5}},
    a surface 3e-9 for {"linreg": {"g": 3e-9}}. Other data are returned as they are."""
    out = dict(data)
    if isinstance(out.get("l"), (int, float)) and not isinstance(out.get("l"), bool):
        out["l"] = {"empty": out["l"]}
    g = out.get("g")
    if isinstance(g, Mapping):
        surfaces: dict[str, Any] = {}
        for key, s in g.items():
            if isinstance(s, (int, float)) and not isinstance(s, bool):
                s = {"linreg": {"g": s}}
            elif isinstance(s, Mapping) and "g" in s and not {"linreg", "levels", "predict", "lsq", "lsq_2.5"} & set(s):
                s = {
                    "linreg": {k: s[k] for k in ("g", "l") if k in s},
                    **{k: v for k, v in s.items() if k not in ("g", "l")},
                }
            surfaces[key] = s
        out["g"] = surfaces
    return out


def read_params_file(source: str | Path | Mapping[str, Any]) -> Params:
    """A parameter file (a path, or its JSON object): one `bspkit fit` wrote or one written by
    hand, in the full form or the shorthand. OSError, json.JSONDecodeError or
    bspkit.model.params.ParamsError as Params.read."""
    data = source if isinstance(source, Mapping) else json.loads(Path(source).read_text(encoding="utf-8"))
    return Params.from_json(expand_shorthand(data) if isinstance(data, Mapping) else data)
