"""Machine parameters at a p that was not probed (issue 28): `params_at` fits each quantity
bspkit.model.supersteps reads over the p of several probes of one machine and evaluates it at the
target p, a hand-written parameter file among them (its format: bspkit.model.params.read_params_file;
what a prediction needs of it: bspkit.model.supersteps.check_hand_written); `parameter_spread` says how far each parameter may be off, for prediction intervals.

Laws over p (each fitted by least squares on relative residuals, so that a 10 % miss at p = 2
counts as much as one at p = 16):

- "a" (constant): what f is (it is per core: the probe times it on process 0 alone) and what
  g is on a machine whose network does not care how many talk;
- "a + b log2 p": a synchronization along a tree or a dissemination barrier (log2 p rounds);
- "a + b p": a central barrier, or one process that handles a message per process.

The law of a quantity: a two-coefficient law is a candidate only where its slope b stands
out of the scatter (|b| at least the 99 % quantile times its standard error: a file has ~100
quantities, and at 95 % a few that do not depend on p would show a trend by chance, to be
extrapolated far), and beyond the largest p probed only where it grows (a machine does not
synchronize or move a word faster because more processes take part) and stays > 0. Among
the candidates and the constant, the law is the one with the smallest leave-one-out error
(each probe predicted from the others: the fit that extrapolates best, not the one that bends
most), with 2 values of p the least-squares residual (both two-coefficient laws then fit
exactly; the tie goes to "a + b log2 p", and the warning gives what "a + b p" would say).
Errors within the points' own scatter (their 95 % intervals in the files) do not count, and
near ties (within `NEAR_TIE`) go to the simpler law.

The error of a fitted value at the target p (`ParamFit.error_rel`) is the standard error of the
chosen law there (from its residuals, at least the points' own scatter) and the spread between
the laws at the target p, each law weighted as the data support it (model averaging: weight
exp(-n/2 (e / e_best)^2) for a law whose error over the n points is e, the best law's e_best),
in quadrature: with 2 values of p, where log2 p and p fit equally, it is their disagreement.
"""

from __future__ import annotations

import copy
import datetime as _dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from bspkit.model import trust
from bspkit.model.estimators import CONFIDENCE
from bspkit.model.params import (
    LatencyDetail,
    Level,
    LinregRecord,
    Lsq25Record,
    LsqRecord,
    Params,
    PredictModel,
    Surface,
    is_hand_written,
    value_of,
)
from bspkit.model.probe_validation import probe_split
from bspkit.units import quantity

LAW_CONSTANT = "a"
LAW_LOG = "a + b log2 p"
LAW_LINEAR = "a + b p"
LAWS = (LAW_CONSTANT, LAW_LOG, LAW_LINEAR)  # simplest first: near ties go to the earlier one
NEAR_TIE = 1.05  # a law within this factor of the best error counts as as good
ERROR_FLOOR = 1e-6  # relative: errors below this are rounding, not a difference between laws

# the header's machine fields that name the machine: files that differ in one are of different machines
MACHINE_IDENTITY = ("host", "cpu", "library", "backend")

Z_CI = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)  # a 95 % interval is +- Z_CI sd
# A slope over p counts at this confidence: a file has ~100 quantities, so at 95 % a few of
# those that do not depend on p would show a trend by chance (and be extrapolated far).
SLOPE_CONFIDENCE = 0.99
Z_SLOPE = NormalDist().inv_cdf(0.5 + SLOPE_CONFIDENCE / 2)
IQR_PER_SD = 2 * NormalDist().inv_cdf(0.75)  # the interquartile range of a normal sample: 1.349 sd
Z_10_90 = NormalDist().inv_cdf(0.9)  # the 10-90 % range of a normal sample: +- 1.2816 sd


class MachineScalingError(Exception):
    """The files cannot give parameters at that p (different machines, a file without p, ...)."""


# ------------------------------------------------------------------- one quantity


@dataclass(frozen=True)
class ParamFit:
    """One quantity fitted over p: `law` with `coefficients` (a,) or (a, b) in `unit`, made on
    `points` ((p, value) of each file that has it), and its value at the target p.

    `criterion` is how the law was chosen ("leave-one-out", "least squares (2 values of p)",
    "one value of p", "per core: f does not depend on p"); `errors` the criterion's relative
    rms error of each law it could judge; `residual_rel_rms` the chosen law's relative rms
    residual at its points (for f: the relative rms scatter of f between the files, the
    machine's run-to-run variation); `alternatives` each law's value at the target p;
    `slope_t` each two-coefficient law's |b| over its standard error (a candidate from the 99 %
    quantile on). `error_rel` is the relative standard error of `value` (module docstring),
    None where one value of p cannot tell it; `notes` why a law whose slope counts was not
    used (it decreases beyond the p probed, or reaches 0)."""

    name: str  # "l", "put/alltoall linreg g", "put/alltoall level h=1024 A_s", "f dot_double_blas"
    unit: str  # bspkit.units' unit: "s", "s/word", "words", "s/op"
    law: str
    coefficients: tuple[float, ...]
    points: tuple[tuple[int, float], ...]
    residual_rel_rms: float | None
    criterion: str
    errors: dict[str, float]
    p: int  # the target
    value: float
    error_rel: float | None
    alternatives: dict[str, float] = field(default_factory=dict)
    slope_t: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def at(self, p: float) -> float:
        """The law at p."""
        return float((_basis(self.law, np.array([float(p)])) @ np.array(self.coefficients))[0])

    def describe(self) -> str:
        """One line: the law, its coefficients and points, and the value at the target p."""
        a = quantity(self.coefficients[0], self.unit)
        coef = f"a = {a}"
        if len(self.coefficients) > 1:
            coef += f", b = {quantity(self.coefficients[1], self.unit)}"
        ps = ", ".join(str(p) for p in sorted({p for p, _ in self.points}))
        fit = f"{self.criterion}" + (
            f", rms {quantity(self.residual_rel_rms, '%', 2)}" if self.residual_rel_rms is not None else ""
        )
        err = f" (± {quantity(self.error_rel, '%', 2)})" if self.error_rel is not None else ""
        return (
            f"{self.name}: {self.law} with {coef} (p = {ps}; {fit}) -> "
            f"{quantity(self.value, self.unit)}{err} at p = {self.p}"
        )


def _basis(law: str, p: np.ndarray) -> np.ndarray:
    ones = np.ones_like(p, dtype=float)
    if law == LAW_CONSTANT:
        return ones[:, None]
    if law == LAW_LOG:
        return np.column_stack([ones, np.log2(p)])
    if law == LAW_LINEAR:
        return np.column_stack([ones, p.astype(float)])
    raise ValueError(f"unknown law '{law}' (known: {', '.join(LAWS)})")


@dataclass
class _Solved:
    coef: np.ndarray
    resid: np.ndarray  # relative to each point's scale
    unit_cov: np.ndarray  # (Xw^T Xw)^-1: the coefficients' covariance per unit relative variance


def _solve(law: str, p: np.ndarray, y: np.ndarray, scale: np.ndarray) -> _Solved | None:
    """Least squares of y over the law's basis, on residuals relative to `scale`; None where the
    points cannot fix the coefficients (fewer distinct p than coefficients)."""
    X = _basis(law, p) / scale[:, None]
    if np.linalg.matrix_rank(X) < X.shape[1]:
        return None
    coef = np.linalg.lstsq(X, y / scale, rcond=None)[0]
    return _Solved(coef, X @ coef - y / scale, np.linalg.inv(X.T @ X))


def _loo_error(law: str, p: np.ndarray, y: np.ndarray, scale: np.ndarray) -> float | None:
    """Relative rms error of each point predicted by the law fitted to the others."""
    errs = []
    for i in range(p.size):
        keep = np.arange(p.size) != i
        s = _solve(law, p[keep], y[keep], scale[keep])
        if s is None:
            return None
        errs.append(float((_basis(law, p[i : i + 1]) @ s.coef)[0] - y[i]) / scale[i])
    return float(np.sqrt(np.mean(np.square(errs))))


def fit_over_p(
    name: str,
    points: Sequence[tuple[int, float, float | None]],
    p: int,
    unit: str = "s",
    positive: bool = True,
) -> ParamFit:
    """Fits one quantity over p and evaluates it at `p` (module docstring: the laws, the choice,
    the error). points: (p, value, relative sd of the value or None) of each file; positive:
    the quantity must be > 0 at the target (a time, g), else >= 0 (B_s, o may be 0)."""
    if not points:
        raise ValueError(f"{name}: no points to fit")
    ps = np.array([float(q) for q, _, _ in points])
    y = np.array([float(v) for _, v, _ in points])
    sds = [s for _, _, s in points if s is not None and math.isfinite(s)]
    noise = max(float(np.sqrt(np.mean(np.square(sds)))) if sds else 0.0, ERROR_FLOOR)
    pts = tuple((int(q), float(v)) for q, v, _ in points)
    if np.all(y > 0):
        scale = y.copy()  # relative residuals
    else:  # a zero (B_s, o): residuals relative to the mean size instead
        mean = float(np.mean(np.abs(y)))
        if mean == 0.0:
            return ParamFit(name, unit, LAW_CONSTANT, (0.0,), pts, 0.0, "all values 0", {}, p, 0.0, 0.0)
        scale = np.full_like(y, mean)
    distinct = np.unique(ps).size
    solved = {law: _solve(law, ps, y, scale) for law in LAWS}
    x0 = np.array([float(p)])
    values = {law: float((_basis(law, x0) @ s.coef)[0]) for law, s in solved.items() if s is not None}
    if distinct == 1:
        s = solved[LAW_CONSTANT]
        assert s is not None
        resid = float(np.sqrt(np.mean(s.resid**2)))
        return ParamFit(
            name,
            unit,
            LAW_CONSTANT,
            (float(s.coef[0]),),
            pts,
            resid,
            "one value of p",
            {},
            p,
            values[LAW_CONSTANT],
            None,
        )
    if distinct >= 3:
        criterion = "leave-one-out"
        errors = {law: e for law in LAWS if (e := _loo_error(law, ps, y, scale)) is not None}
    else:
        criterion = "least squares (2 values of p)"
        errors = {law: float(np.sqrt(np.mean(s.resid**2))) for law, s in solved.items() if s is not None}
    n = ps.size
    # a law's slope counts only where it stands out of the scatter: |b| at least q standard
    # errors (the residual variance where the points overdetermine the law, at least the
    # points' own scatter; q the 99 % t quantile, the normal one with fewer than 2 degrees of
    # freedom); beyond the largest p probed a decreasing law is not used (a machine does not
    # synchronize or move a word faster because more processes take part)
    slope_t: dict[str, float] = {}
    for lw in (LAW_LOG, LAW_LINEAR):
        sol = solved[lw]
        if sol is None or lw not in errors:
            continue
        dof = n - 2
        s2 = max(float(np.sum(sol.resid**2)) / dof if dof > 0 else 0.0, noise**2)
        se_b = math.sqrt(max(float(sol.unit_cov[1, 1]), 0.0) * s2)
        slope_t[lw] = abs(float(sol.coef[1])) / se_b if se_b > 0 else math.inf
    notes = []
    usable = [LAW_CONSTANT]
    for lw in (LAW_LOG, LAW_LINEAR):
        if lw not in slope_t:
            continue
        from scipy import stats as sstats  # here, not on import: scipy takes half a second (bspkit predict)

        q = float(sstats.t.ppf(0.5 + SLOPE_CONFIDENCE / 2, n - 2)) if n - 2 >= 2 else Z_SLOPE
        if slope_t[lw] < q:
            continue  # a trend within the scatter: not extrapolated
        sol = solved[lw]
        assert sol is not None
        if sol.coef[1] < 0 and p > ps.max():
            notes.append(f"{lw} not used: it decreases with p, and p = {p} is beyond the p probed")
        elif values[lw] > 0 or (not positive and values[lw] >= 0):
            usable.append(lw)
        else:
            notes.append(f"{lw} not used: it gives {quantity(values[lw], unit)} at p = {p}")
    effective = {law: math.hypot(errors[law], noise) for law in usable if law in errors}
    if not effective:
        effective = {LAW_CONSTANT: noise}
    best = min(effective.values())
    law = next(lw for lw in LAWS if lw in effective and effective[lw] <= best * NEAR_TIE)
    chosen = solved[law]
    assert chosen is not None
    value = values[law]
    # the chosen law's own standard error at p: residual variance (where the points overdetermine
    # it), at least the points' own scatter
    k = chosen.coef.size
    s2 = max(float(np.sum(chosen.resid**2)) / (n - k) if n > k else 0.0, noise**2)
    x0_row = _basis(law, x0)[0]
    stat_sd = math.sqrt(max(float(x0_row @ chosen.unit_cov @ x0_row), 0.0) * s2)
    # the laws' disagreement at p, each weighted as the points support it
    # (the Gaussian likelihood of each law's errors, at the scale of the best law's: a law twice
    # as far off as the best over 4 points weighs e^-6 of it)
    weights = {lw: math.exp(-0.5 * n * ((effective[lw] / best) ** 2 - 1.0)) for lw in effective}
    total = sum(weights.values())
    law_sd = math.sqrt(sum(w / total * (values[lw] - value) ** 2 for lw, w in weights.items()))
    error_rel = math.hypot(stat_sd, law_sd) / abs(value) if value != 0 else None
    return ParamFit(
        name=name,
        unit=unit,
        law=law,
        coefficients=tuple(float(c) for c in chosen.coef),
        points=pts,
        residual_rel_rms=float(np.sqrt(np.mean(chosen.resid**2))),
        criterion=criterion,
        errors=errors,
        p=p,
        value=value,
        error_rel=error_rel,
        alternatives={lw: values[lw] for lw in errors},
        slope_t=slope_t,
        notes=tuple(notes),
    )


def _per_core(name: str, points: Sequence[tuple[int, float]], p: int) -> tuple[ParamFit, int]:
    """f over the files: not fitted (f is per core), the median file's value; returns the fit
    and the index of the point used."""
    order = sorted(range(len(points)), key=lambda i: points[i][1])
    median_i = order[(len(order) - 1) // 2]
    v = points[median_i][1]
    ys = np.array([y for _, y in points])
    scatter = float(np.sqrt(np.mean(((ys - v) / v) ** 2))) if len(points) > 1 else None
    fit = ParamFit(
        name=name,
        unit="s/op",
        law=LAW_CONSTANT,
        coefficients=(v,),
        points=tuple((int(q), float(y)) for q, y in points),
        residual_rel_rms=scatter,
        criterion="per core: f does not depend on p",
        errors={},
        p=p,
        value=v,
        error_rel=scatter,
    )
    return fit, median_i


# ---------------------------------------------------------------- the machine at p


@dataclass(frozen=True)
class MachineAtP:
    """Parameters at p: `params` is a parameter file bspkit.model.supersteps costs supersteps with at p;
    `source` says where it comes from ("probe at p = 16", "hand-written", "interpolated from
    p = 2, 4, 8", "extrapolated from p = 2, 4, 8, 16"); `fits` each quantity's law over p
    (empty when a file at p was used as it is); `warnings` what the caller should show."""

    params: Params
    source: str
    fits: list[ParamFit]
    warnings: list[str]

    @property
    def p(self) -> int:
        assert self.params.p is not None
        return self.params.p

    def fit(self, name: str) -> ParamFit | None:
        """The fit of one quantity by name ("l", "put/alltoall linreg g", ...), or None."""
        return next((f for f in self.fits if f.name == name), None)


def _describe(params: Params) -> str:
    return params.source or ("a hand-written file" if is_hand_written(params) else "a parameter file")


def _check_same_machine(files: Sequence[Params], force: bool) -> list[str]:
    """Names the MACHINE_IDENTITY fields on which the files differ (fields a file lacks are not
    compared); MachineScalingError unless forced, else the warning."""
    differ = []
    for key in MACHINE_IDENTITY:
        seen = {str(f.machine[key]) for f in files if f.machine.get(key) not in (None, "", "unknown")}
        if len(seen) > 1:
            differ.append(f"{key} ({', '.join(sorted(seen))})")
    if not differ:
        return []
    text = f"the parameter files are of different machines: they differ in {'; '.join(differ)}"
    if not force:
        raise MachineScalingError(text + " (force to fit them together anyway)")
    return [text + ": fitted together because forced"]


def _rel_sd_of_triplet(v: Any) -> float | None:
    """The relative sd of a [value, low, high] 95 % interval, None for a number, null or
    [v, v, v] (no interval known)."""
    if not isinstance(v, (list, tuple)) or len(v) < 3 or v[0] is None or not v[0]:
        return None
    lo, hi = v[1], v[2]
    if lo is None or hi is None or hi == lo:
        return None
    return abs(float(hi) - float(lo)) / (2 * Z_CI * abs(float(v[0])))


def _latency_rel_sd(detail: Mapping[str, Any] | None) -> float | None:
    """The relative sd of an l median from its 95 % interval (`l_detail[...].ci`)."""
    if not detail or not detail.get("ci") or not detail.get("median"):
        return None
    lo, hi = detail["ci"]
    return abs(float(hi) - float(lo)) / (2 * Z_CI * float(detail["median"]))


def _scaled_triplet(v: Any, like: Any) -> list[float]:
    """[v, low, high] with the relative interval of `like` (the nearest probe's triplet);
    [v, v, v] where it has none."""
    ref = value_of(like)
    if isinstance(like, (list, tuple)) and len(like) >= 3 and ref and like[1] is not None and like[2] is not None:
        return [v, v * float(like[1]) / ref, v * float(like[2]) / ref]
    return [v, v, v]


def _nearest(files: Sequence[Params], p: int) -> Params:
    """The file nearest to p in log p (the largest p beyond the range)."""
    return min(files, key=lambda f: (abs(math.log2(f.p or 1) - math.log2(p)), -(f.p or 0)))


# reads one quantity of a file: (its value, its relative sd), (None, None) where the file has none
Getter = Callable[[Params], tuple[float | None, float | None]]


class _Fitter:
    """Fits the quantities of several files over p and records each fit."""

    def __init__(self, files: Sequence[Params], p: int) -> None:
        self.files = files
        self.p = p
        self.fits: list[ParamFit] = []
        self.single: list[str] = []  # quantities only one p had

    def fit(
        self,
        name: str,
        get: Getter,
        unit: str,
        positive: bool = True,
    ) -> ParamFit | None:
        """get(file) -> (value, its relative sd): the quantity over the files that have it."""
        pts = []
        for f in self.files:
            v, sd = get(f)
            if v is not None and math.isfinite(v) and (v > 0 or (not positive and v >= 0)):
                assert f.p is not None
                pts.append((f.p, float(v), sd))
        if not pts:
            return None
        out = fit_over_p(name, pts, self.p, unit, positive)
        if len({q for q, _, _ in pts}) == 1 and len({f.p for f in self.files}) > 1:
            self.single.append(f"{name} (p = {pts[0][0]})")
        self.fits.append(out)
        return out


def _triplet_getter(record: str, key: str, surface_key: str) -> Getter:
    def get(f: Params) -> tuple[float | None, float | None]:
        s = f.g.get(surface_key)
        if s is None:
            return None, None
        rec: Mapping[str, Any] = {"linreg": s.linreg, "lsq": s.lsq, "lsq_2.5": s.lsq_25}[record]
        return value_of(rec.get(key)), _rel_sd_of_triplet(rec.get(key))

    return get


def _predict_getter(key: str, name: str) -> Getter:
    """A surface's one global model's g_inf, h_half or o, with the interval of the least-squares
    fit the model is (where it is one)."""

    def get(f: Params) -> tuple[float | None, float | None]:
        pm = f.g[key].predict if key in f.g else None
        if pm is None:
            return None, None
        fits: dict[str, Mapping[str, Any]] = {"2.6 lsq": f.g[key].lsq, "2.5 lsq": f.g[key].lsq_25}
        fit = fits.get(pm.model)
        return float(getattr(pm, name)), _rel_sd_of_triplet(fit.get(name)) if fit is not None else None

    return get


def _level_getter(key: str, h: int, attr: str) -> Getter:
    """A_s (with its sd: the scatter of the level's points about A + B c over sqrt(points)) or
    B_s of a surface's per-h fit at h."""

    def get(f: Params) -> tuple[float | None, float | None]:
        lv = next((lv for lv in f.g[key].levels if lv.h == h), None) if key in f.g else None
        if lv is None:
            return None, None
        if attr == "B_s":
            return lv.B_s, None
        sd = lv.residual_rel_rms / math.sqrt(lv.points) if lv.residual_rel_rms is not None and lv.points else None
        return lv.A_s, sd

    return get


def _latency_getter(variant: str) -> Getter:
    def get(f: Params) -> tuple[float | None, float | None]:
        return value_of(f.l.get(variant)), _latency_rel_sd(f.l_detail.get(variant))

    return get


def _fit_surface(fitter: _Fitter, key: str, nearest: Params, warnings: list[str]) -> Surface:
    """The quantities bspkit.model.supersteps reads of one surface, fitted over p."""
    files = [f for f in fitter.files if key in f.g]
    ref = nearest.g.get(key) or _nearest(files, fitter.p).g[key]
    out = Surface(msg_words=list(ref.msg_words), count=list(ref.count))
    out.flags = [f"fitted over p = {', '.join(str(f.p) for f in files)} by bspkit.model.machine_scaling"]

    def value(name: str, getter: Getter, unit: str, positive: bool = True) -> float | None:
        fit = fitter.fit(f"{key} {name}", getter, unit, positive)
        return fit.value if fit is not None else None

    # Bisseling's g and l ("g const")
    g = value("linreg g", _triplet_getter("linreg", "g", key), "s/word")
    l_s = value("linreg l", _triplet_getter("linreg", "l", key), "s")
    out.linreg = LinregRecord(
        msg_words=ref.linreg.get("msg_words", 1),
        range=f"fitted over p from the probes' {ref.linreg.get('range', 'regressions')}",
    )
    out.linreg["g"] = _scaled_triplet(g, ref.linreg.get("g")) if g is not None else None
    out.linreg["l"] = _scaled_triplet(l_s, ref.linreg.get("l")) if l_s is not None else None
    # eq. (2.5) and (2.6), global
    lsq5 = Lsq25Record(model="2.5", residual_rel_rms=ref.lsq_25.get("residual_rel_rms"))
    for name, unit in (("g_inf", "s/word"), ("h_half", "words")):
        v = value(f"lsq_2.5 {name}", _triplet_getter("lsq_2.5", name, key), unit)
        lsq5[name] = _scaled_triplet(v, ref.lsq_25.get(name)) if v is not None else None  # type: ignore[literal-required]
    out.lsq_25 = lsq5
    lsq = LsqRecord(model="2.6", residual_rel_rms=ref.lsq.get("residual_rel_rms"))
    for name, unit in (("g_inf", "s/word"), ("h_half", "words"), ("o", "words")):
        v = value(f"lsq {name}", _triplet_getter("lsq", name, key), unit)
        lsq[name] = _scaled_triplet(v, ref.lsq.get(name)) if v is not None else None  # type: ignore[literal-required]
    out.lsq = lsq
    # the one global model of older files (predict falls back on it without levels)
    with_pm = [f for f in files if f.g[key].predict is not None]
    if with_pm:
        pm_values: dict[str, float] = {}
        for name, unit, positive in (("g_inf", "s/word", True), ("h_half", "words", False), ("o", "words", False)):
            v = value(f"predict {name}", _predict_getter(key, name), unit, positive)
            pm_values[name] = v if v is not None else 0.0
        model = (ref.predict or with_pm[-1].g[key].predict or PredictModel("2.5 lsq", 0, 0, 0)).model
        if pm_values["g_inf"] > 0:
            out.predict = PredictModel(model=model, **pm_values)
    # eq. (2.6) per h: the h every file with levels has
    with_levels = [f for f in files if f.g[key].levels]
    if with_levels:
        common = set.intersection(*({lv.h for lv in f.g[key].levels} for f in with_levels))
        every = set.union(*({lv.h for lv in f.g[key].levels} for f in with_levels))
        if every - common:
            warnings.append(
                f"{key}: {len(every - common)} of the {len(every)} values of h of the per-h fit are not in every "
                f"probe (another grid): left out, so h-relations there are interpolated from their neighbours"
            )
        ref_levels = {lv.h: lv for lv in (ref.levels or with_levels[-1].g[key].levels)}
        for h in sorted(common):
            a = value(f"level h={h} A_s", _level_getter(key, h, "A_s"), "s")
            b = value(f"level h={h} B_s", _level_getter(key, h, "B_s"), "s", positive=False)
            if a is None:
                continue
            like = ref_levels.get(h)
            out.levels.append(
                Level(
                    h=h,
                    A_s=a,
                    B_s=b or 0.0,
                    g_h=a / h,
                    points=None,
                    residual_rel_rms=like.residual_rel_rms if like else None,
                )
            )
    return out


def params_at(files: Sequence[Params], p: int, *, force: bool = False) -> MachineAtP:
    """Parameters of the machine the files measured, at p processes.

    A file at p (a probe or a hand-written file) is used as it is. Otherwise each quantity
    bspkit.model.supersteps reads is fitted over the files' p (module docstring): l (every variant; the
    empty sync is "l"), and per surface Bisseling's g and l, the eq. (2.5)/(2.6) fits' g_inf,
    h_half and o, the one global model, and A_s and B_s of each h of the per-h fit (g_h = A_s/h);
    f is not fitted: it is per core (the probe times it on one process alone), so it is the
    median file's. A probe at p = 1 (a process alone: no communication) is left out of the fits
    of l and g where two other values of p remain. The rest of the file (validation, As suite, memcpy, IMH) is left empty: it
    describes the probes' runs, not a run at p. One file at another p is used unchanged, with a
    warning. The fitted file keeps the measured relative intervals of the probe nearest in p
    (its triplets, l_detail, the levels' residuals); the fits' own errors are in `fits`.

    MachineScalingError: no files, a file without p, p < 1, files of different machines (their
    header's host, cpu, library or backend differ; `force` fits them anyway, with a warning)."""
    if p < 1:
        raise MachineScalingError(f"p must be at least 1, not {p}")
    if not files:
        raise MachineScalingError("no parameter file given")
    for f in files:
        if not isinstance(f.p, int) or f.p < 1:
            raise MachineScalingError(
                f'{_describe(f)} has no p (the number of processes it was measured at): give it "p"'
            )
    warnings = _check_same_machine(files, force)
    at_p = [f for f in files if f.p == p]
    if at_p:
        chosen = max(at_p, key=lambda f: f.fitted or "")
        if len(at_p) > 1:
            warnings.append(f"{len(at_p)} files are at p = {p}: used {_describe(chosen)} (the last fitted)")
        source = "hand-written" if is_hand_written(chosen) else f"probe at p = {p}"
        return MachineAtP(copy.deepcopy(chosen), source, [], warnings)
    ps = sorted({f.p for f in files if f.p is not None})
    if len(ps) == 1:
        only = max(files, key=lambda f: f.fitted or "")
        what = "hand-written" if is_hand_written(only) else f"probe at p = {ps[0]}"
        warnings.append(
            f"only p = {ps[0]} was measured: l and g are those of p = {ps[0]}, not of p = {p} "
            "(probe at two or more p to fit them over p)"
        )
        out = copy.deepcopy(only)
        out.p = p
        return MachineAtP(out, f"{what} (used unchanged at p = {p})", [], warnings)
    # p = 1 times a process alone: its l and g are no communication between processes
    comm_files = list(files)
    if ps[0] == 1:
        if len(ps) >= 3:
            comm_files = [f for f in files if f.p != 1]
            ps = ps[1:]
            warnings.append(
                "p = 1 left out of the fits of l and g: a process alone does not communicate (its f is used)"
            )
        else:
            warnings.append(
                f"l and g at p = 1 are of a process alone, which does not communicate: fitted with p = {ps[1]} "
                f"they say little of p = {p} (probe at two or more p > 1)"
            )
    inside = ps[0] <= p <= ps[-1]
    source = f"{'interpolated' if inside else 'extrapolated'} from p = {', '.join(str(q) for q in ps)}"
    hand = sorted({f.p for f in comm_files if is_hand_written(f) and f.p is not None})
    if hand:
        source += f" (hand-written: p = {', '.join(str(q) for q in hand)})"
    if p > ps[-1]:
        warnings.append(
            f"p = {p} is {quantity(p / ps[-1], 'x', 3)} the largest p probed ({ps[-1]}): "
            "l and g are extrapolated by their laws far beyond what was measured"
        )
    elif p < ps[0]:
        warnings.append(f"p = {p} is below the smallest p probed ({ps[0]}): l and g are extrapolated")
    cores = [int(c) for f in files if isinstance(c := f.machine.get("cores_online") or f.machine.get("cores"), int)]
    if cores and p > max(cores):
        warnings.append(
            f"p = {p} is more than the {max(cores)} cores of the machine probed: a run at p = {p} spans other "
            "nodes (or shares cores), whose communication no probe measured"
        )
    nearest = _nearest(comm_files, p)
    fitter = _Fitter(comm_files, p)
    result = Params(
        source=f"bspkit.model.machine_scaling: {source}; files: {'; '.join(_describe(f) for f in files)}",
        fitted=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        machine={**nearest.machine, "p": p, "p_probed": ps},
        p=p,
    )
    # the machine's time-to-time noise per regime (issue 39) is the machine's, not a law of p:
    # the nearest probe's, so that a band at an unprobed p holds it too
    regimes = nearest.noise.get("regimes") if isinstance(nearest.noise, Mapping) else None
    if regimes:
        result.noise["regimes"] = copy.deepcopy(regimes)
    # f: per core, the median file's value and detail
    for kernel in sorted({k for f in files for k, v in f.f.items() if v}):
        have = [f for f in files if f.f.get(kernel)]  # every file: f is per core
        f_fit, i = _per_core(f"f {kernel}", [(f.p or 0, float(f.f[kernel] or 0.0)) for f in have], p)
        fitter.fits.append(f_fit)
        result.f[kernel] = f_fit.value
        if kernel in have[i].f_detail:
            result.f_detail[kernel] = copy.deepcopy(have[i].f_detail[kernel])
    for kind in ("double", "int"):
        rates = [1.0 / v for k, v in result.f.items() if v and f"_{kind}" in k]
        if rates:
            result.f_average[kind] = 1.0 / float(np.mean(rates))
    # l: each variant; its detail is the nearest probe's, scaled to the fitted value
    for variant in sorted({k for f in comm_files for k in f.l}, key=lambda v: (v != "empty", v)):
        fit = fitter.fit(
            "l" if variant == "empty" else f"l {variant}",
            _latency_getter(variant),
            "s",
        )
        if fit is None:
            continue
        result.l[variant] = fit.value
        detail = next(
            (
                f.l_detail[variant]
                for f in sorted(comm_files, key=lambda f: f is not nearest)
                if variant in f.l_detail and f.l_detail[variant].get("median")
            ),
            None,
        )
        if detail is not None:
            result.l_detail[variant] = _scaled_detail(detail, fit.value)
    for key in sorted({k for f in comm_files for k in f.g}):
        result.g[key] = _fit_surface(fitter, key, nearest, warnings)
    # what the caller should know about the choices
    l_fit = next((f for f in fitter.fits if f.name == "l"), None)
    if len(ps) == 2:
        line = f"only 2 values of p ({ps[0]}, {ps[1]}): {LAW_LOG} and {LAW_LINEAR} fit both exactly, so the laws are a guess"
        if l_fit is not None and LAW_LINEAR in l_fit.alternatives and LAW_LOG in l_fit.alternatives:
            line += (
                f"; l at p = {p} is {quantity(l_fit.alternatives[LAW_LOG], 's')} by {LAW_LOG}, "
                f"{quantity(l_fit.alternatives[LAW_LINEAR], 's')} by {LAW_LINEAR} (used: {l_fit.law})"
            )
        warnings.append(line)
    if fitter.single:
        warnings.append(
            f"measured at one p only, so used unchanged: {', '.join(fitter.single[:5])}"
            + (f" and {len(fitter.single) - 5} more" if len(fitter.single) > 5 else "")
        )
    dropped = [f for f in fitter.fits if f.notes]
    if dropped:
        warnings.append(
            f"{len(dropped)} quantities have a trend over p that was not extrapolated (it decreases, or "
            f"reaches 0 at p = {p}): "
            + "; ".join(f"{f.name}: {f.notes[0]}" for f in dropped[:3])
            + (" ..." if len(dropped) > 3 else "")
        )
    result.flags = [
        f"parameters at p = {p} {source} by bspkit.model.machine_scaling: only what bspkit.model.supersteps reads"
    ]
    result.flags += warnings
    return MachineAtP(result, source, fitter.fits, warnings)


def _scaled_detail(detail: LatencyDetail, value: float) -> LatencyDetail:
    """The nearest probe's l detail scaled to the fitted value: its relative spread kept."""
    factor = value / float(detail["median"])
    out = copy.deepcopy(detail)
    for k in ("median", "q1", "q3", "min", "max"):
        if isinstance(out.get(k), (int, float)):
            out[k] = float(out[k]) * factor
    if out.get("ci"):
        out["ci"] = [float(v) * factor for v in out["ci"]]
    return out


# ---------------------------------------------------------------------- spread


@dataclass(frozen=True)
class SurfaceSpread:
    """Relative sds (module `Spread`) of what one g surface gives each model; None: unknown."""

    linreg_g: float | None  # "g const": Bisseling's g
    linreg_l: float | None  # "g const": Bisseling's l
    g_h: float | None  # "g(h)": the time of an h-relation (levels' A, or the eq. 2.5 fit)
    g_h_hstar: float | None  # "g(h,h*)": the time of an h-relation of c messages (A + B c)
    sources: dict[str, str] = field(default_factory=dict)  # field -> what it was made from


@dataclass(frozen=True)
class Spread:
    """How far each parameter may be off, as relative standard deviations: the sd of log(value)
    (for small values the relative sd), so that a sample is value * exp(N(0, sd)) and the
    10-90 % range is value * exp(+-1.2816 sd) (`range_10_90`). None: the file holds nothing to
    tell (a hand-written number without its interval).

    - f[kernel]: the scatter of one timing of the kernel: f_detail's spread (the interquartile
      range of its repetitions over their median) / 1.349 (a normal sample's IQR in sd);
    - l: the same of the empty sync (l_detail.empty: (q3 - q1) / median / 1.349; a sample is
      one sync, or the mean of a batch of them);
    - g[key] (SurfaceSpread): linreg_g and linreg_l, the sd of Bisseling's g and l as fitted
      (their 95 % intervals / (2 x 1.96)); g_h, the eq. (2.5) fit's relative rms residual over
      the grid (lsq_2.5.residual_rel_rms; else the per-h fit's); g_h_hstar, the rms relative
      error of the probe's validation (eq. 2.6 per h against h-relations off the grid, out of
      sample) where it has 3 points or more, else the rms of the per-h fits' relative residuals
      (levels' residual_rel_rms), else the eq. (2.6) fit's;
    - at_target[name]: for parameters fitted over p (MachineAtP), each fit's relative error at
      the target p (ParamFit.error_rel); the fields above then hold it too, added in quadrature
      (f: the scatter of f between the probes; l: the fit "l"; linreg_g/l: "<key> linreg g/l";
      g_h and g_h_hstar: the rms over the levels of the fits of A_s, else of the global fits'
      g_inf).
    `sources` names, per field ("f dot_double_blas", "l", "put/alltoall g_h", ...), what its
    number is made of.

    Beside the parameters (issue 39, bspkit.model.trust): `noise`, the machine's time-to-time
    variability per regime (params.json `noise.regimes`: compute, sync, small_h, large_h; {}
    where the probe did not measure it), and `model`, the sd of log of eq. (2.6)'s residual
    beyond that noise in the probe's check (its split's sqrt(max(0, rms^2 - noise^2)); None
    without a split or without the machine's noise). Where it is known, g_h_hstar is the per-h fits' residual, not
    the check's rms: that rms is the noise and the model's residual, which the band adds
    itself."""

    f: dict[str, float | None]
    l: float | None
    g: dict[str, SurfaceSpread]
    at_target: dict[str, float | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    noise: dict[str, float] = field(default_factory=dict)
    model: float | None = None

    @staticmethod
    def range_10_90(sd: float) -> tuple[float, float]:
        """The factors of the 10 % and 90 % quantiles of value * exp(N(0, sd))."""
        return math.exp(-Z_10_90 * sd), math.exp(Z_10_90 * sd)


def _rms(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.sqrt(np.mean(np.square(xs)))) if xs else None


def _plus(a: float | None, b: float | None) -> float | None:
    """Two relative sds in quadrature; None only where both are unknown."""
    if a is None:
        return b
    return a if b is None else math.hypot(a, b)


def _spread_of(value: Any) -> float | None:
    """A detail record's sample spread: (q3 - q1) / median, or its `spread`, over 1.349."""
    if not isinstance(value, Mapping):
        return None
    if all(isinstance(value.get(k), (int, float)) for k in ("q1", "q3", "median")) and value["median"] > 0:
        return (float(value["q3"]) - float(value["q1"])) / float(value["median"]) / IQR_PER_SD
    s = value.get("spread")
    return float(s) / IQR_PER_SD if isinstance(s, (int, float)) and math.isfinite(s) else None


def _surface_spread(key: str, s: Surface, validation: Mapping[str, Any], split: bool = False) -> SurfaceSpread:
    sources: dict[str, str] = {}
    lg = _rel_sd_of_triplet(s.linreg.get("g"))
    if lg is not None:
        sources["linreg_g"] = "linreg g's 95 % interval"
    elif s.bisseling_g_l() is None and s.levels and s.levels[-1].residual_rel_rms is not None:
        lg = s.levels[-1].residual_rel_rms  # "g const" falls back on the largest h's g_h
        sources["linreg_g"] = "the largest h's per-h fit residual (no linreg g)"
    ll = _rel_sd_of_triplet(s.linreg.get("l"))
    if ll is not None:
        sources["linreg_l"] = "linreg l's 95 % interval"
    levels_rms = _rms([lv.residual_rel_rms for lv in s.levels])
    g_h = s.lsq_25.get("residual_rel_rms")
    if g_h is not None:
        sources["g_h"] = "lsq_2.5 residual_rel_rms"
    elif levels_rms is not None:
        g_h = levels_rms
        sources["g_h"] = "rms of the levels' residual_rel_rms"
    rows = [r for r in validation.get("points") or [] if r.get("key") == key and "rel_error" in r]
    g_hh: float | None = None
    if split and levels_rms is not None:  # the check's residuals are the band's noise and model terms
        g_hh = levels_rms
        sources["g_h_hstar"] = "rms of the levels' residual_rel_rms (the check's residuals: noise and model)"
    elif len(rows) >= 3:
        g_hh = _rms([float(r["rel_error"]) for r in rows])
        sources["g_h_hstar"] = f"rms relative error of {len(rows)} validation points"
    elif levels_rms is not None:
        g_hh = levels_rms
        sources["g_h_hstar"] = "rms of the levels' residual_rel_rms"
    elif s.lsq.get("residual_rel_rms") is not None:
        g_hh = s.lsq.get("residual_rel_rms")
        sources["g_h_hstar"] = "lsq residual_rel_rms"
    return SurfaceSpread(lg, ll, g_h, g_hh, sources)


def parameter_spread(machine: Params | MachineAtP) -> Spread:
    """The relative spread of f per kernel, l and each surface's g (Spread: what each number
    is), from what the parameter file holds, and for parameters fitted over p their fits'
    errors at the target p."""
    params = machine.params if isinstance(machine, MachineAtP) else machine
    sources: dict[str, str] = {}
    f: dict[str, float | None] = {}
    for kernel in params.f:
        f[kernel] = _spread_of(params.f_detail.get(kernel))
        if f[kernel] is not None:
            sources[f"f {kernel}"] = "f_detail spread / 1.349"
    l_sd = _spread_of(params.l_detail.get("empty"))
    if l_sd is not None:
        sources["l"] = "l_detail.empty (q3 - q1) / median / 1.349"
    noise = trust.regimes_of(params.noise)
    if noise:
        sources["noise"] = "noise.regimes rel_sd (the probe's sentinels)"
    sp = probe_split(params.validation, params.noise) if params.validation.get("points") else None
    # the model's residual beyond the noise, where the noise holds the machine's (else the check's
    # rms is mostly that noise, and g's spread keeps it as it did)
    model = sp.overall.model_sd if sp is not None and sp.judged and sp.machine_known else None
    if model is not None:
        sources["model"] = f"the probe's check: residual beyond the noise over {sp.overall.n} points"  # type: ignore[union-attr]
    g = {key: _surface_spread(key, s, params.validation, model is not None) for key, s in params.g.items()}
    for key, ss in g.items():
        sources.update({f"{key} {k}": v for k, v in ss.sources.items()})
    if not isinstance(machine, MachineAtP) or not machine.fits:
        return Spread(f, l_sd, g, {}, sources, noise, model)
    at_target = {fit.name: fit.error_rel for fit in machine.fits}

    def added(name: str, what: str) -> None:
        sources[name] = f"{sources[name]} + {what}" if name in sources else what

    for kernel in f:
        err = at_target.get(f"f {kernel}")
        if err is not None:
            f[kernel] = _plus(f[kernel], err)
            added(f"f {kernel}", "the scatter of f between the probes")
    if at_target.get("l") is not None:
        l_sd = _plus(l_sd, at_target["l"])
        added("l", "the error of the fit over p at the target p")
    for key, ss in list(g.items()):
        levels = _rms(
            [e for name, e in at_target.items() if name.startswith(f"{key} level h=") and name.endswith(" A_s")]
        )
        glob = _rms([at_target.get(f"{key} {n} g_inf") for n in ("lsq_2.5", "lsq", "predict")])
        over_p = levels if levels is not None else glob
        g[key] = SurfaceSpread(
            linreg_g=_plus(ss.linreg_g, at_target.get(f"{key} linreg g")),
            linreg_l=_plus(ss.linreg_l, at_target.get(f"{key} linreg l")),
            g_h=_plus(ss.g_h, over_p),
            g_h_hstar=_plus(ss.g_h_hstar, over_p),
            sources={k: v + " + the error of the fits over p at the target p" for k, v in ss.sources.items()},
        )
        for name in ("linreg_g", "linreg_l", "g_h", "g_h_hstar"):
            added(f"{key} {name}", "the error of the fits over p at the target p")
    return Spread(f, l_sd, g, at_target, sources, noise, model)
