"""The parameter file (`params.json`, docs/probe-format.md) as typed objects.

`bspkit fit` returns a `Params`; `predict`, `report`, `compare` and `validate` read it. A
`Surface` is the fit of one g surface (one primitive/pattern), a `Level` the fit of eq. (2.6)
at one grid value of h, a `PredictModel` the global (g_inf, h_half, o) used for prediction.

`to_json` writes the keys in the order `bspkit fit` always wrote them, so the file is the same
text as before these classes existed. `from_json` reads older and hand-written files too: a
key the file lacks reads as null (or empty), keys this version does not know are kept.
The nested fit records `lsq`, `lsq_2.5` and `linreg` and the detail records (validation,
noise, ...) stay JSON objects: the report shows them, nothing computes with their layout.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bspkit import __version__
from bspkit.fileformat import JsonObject, format_problem

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
    lsq: JsonObject = field(default_factory=dict)
    lsq_25: JsonObject = field(default_factory=dict)
    linreg: JsonObject = field(default_factory=dict)
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
    f_detail: JsonObject = field(default_factory=dict)
    l: dict[str, float | None] = field(default_factory=dict)
    l_detail: JsonObject = field(default_factory=dict)
    memcpy_s_per_word: float | None = None
    memcpy_detail: list[JsonObject] = field(default_factory=list)
    g: dict[str, Surface] = field(default_factory=dict)  # "<primitive>/<pattern>": its fits
    as_suite: JsonObject = field(default_factory=dict)
    validation: JsonObject = field(default_factory=dict)
    # the probe's own short calibration (bspkit.calibration.reference_of): what drift is measured against
    calibration: JsonObject = field(default_factory=dict)
    checks: JsonObject = field(default_factory=dict)
    noise: JsonObject = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    fit_settings: JsonObject = field(default_factory=dict)
    imh: JsonObject = field(default_factory=dict)  # Kang et al.'s IMH model (bspkit.imh); {} without the suites
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
