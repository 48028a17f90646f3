"""Predicted times from a parameter file: one h-relation (eq. 2.5/2.6, globally or per value of
h) and a whole algorithm run, T = sum over supersteps of (w f + comm(h, c, h*) + l).

The drivers and their JSON output are described in docs/algorithm-output.md. Three models of
the communication cost of a superstep with h words, c messages per process of mean size h*,
as in the thesis' Appendices D-G:

- "g const": the BSP cost g h + l, with g and l from Bisseling's regression T = g h + l over
  the probe's h-relations (the classic model: one g); where that regression failed, g is
  the time per word of the largest h-relations measured (g(h) at the grid's largest h) and
  l the empty sync;
- "g(h)": eq. (2.5), T = g_inf (h + h_half): the bandwidth depends on the size of the
  h-relation (h_half is fitted on whole supersteps, so it holds the synchronization);
- "g(h,h*)": eq. (2.6), T = g_inf (h + h_half + o c): plus a per-message overhead o.

Both are taken from the probe's fit at each value of h (`levels`, estimators.level_fits: A(h) and
A(h) + B(h) c, interpolated between the grid's h, growing in proportion to h beyond it); an
older parameter file without levels falls back to the one global fit.

A superstep without communication costs l (the probe's empty sync).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bspkit.model.params import Level, Params, PredictModel, Surface

MODELS = ("g const", "g(h)", "g(h,h*)")

# A driver's JSON object (docs/algorithm-output.md) and one entry of its "supersteps".
DriverRun = Mapping[str, Any]
Superstep = Mapping[str, Any]


class PredictionError(Exception):
    """A run cannot be predicted from these parameters (no f, no l)."""


# ------------------------------------------------------------- one h-relation


def model_t(h: Any, c: Any, g_inf: float, h_half: float, o: float = 0.0) -> Any:
    """Eq. (2.6) times h: T = g_inf (h + h_half + o c)."""
    return g_inf * (np.asarray(h, dtype=float) + h_half + o * np.asarray(c, dtype=float))


def model_g(h: Any, hstar: Any, g_inf: float, h_half: float, o: float = 0.0) -> Any:
    """Eq. (2.6): g(h, h*) = (h_half/h + o/h* + 1) g_inf (o = 0: eq. 2.5)."""
    return (h_half / np.asarray(h, dtype=float) + o / np.asarray(hstar, dtype=float) + 1.0) * g_inf


def predict_time(pm: PredictModel, h: float, c: float) -> float:
    """T(h, c) of the one global fit."""
    return float(model_t(h, c, pm.g_inf, pm.h_half, pm.o))


def predict_time_levels(levels: Sequence[Level], h: float, c: float, with_o: bool = True) -> float | None:
    """T(h, c) = A(h) + B(h) c between the grid's values of h (log-linear in A, linear in B);
    beyond the largest h, A grows in proportion to h (the bandwidth of the largest
    h-relations measured); below the smallest, A and B of the smallest."""
    if not levels or h <= 0:
        return None
    lo = max((v for v in levels if v.h <= h), key=lambda v: v.h, default=None)
    hi = min((v for v in levels if v.h >= h), key=lambda v: v.h, default=None)
    if lo is None:
        a, b = levels[0].A_s, levels[0].B_s
    elif hi is None:
        a, b = lo.A_s * h / lo.h, lo.B_s
    elif hi.h == lo.h:
        a, b = lo.A_s, lo.B_s
    else:
        w = math.log(h / lo.h) / math.log(hi.h / lo.h)
        a = math.exp((1 - w) * math.log(lo.A_s) + w * math.log(hi.A_s))
        b = (1 - w) * lo.B_s + w * hi.B_s
    return a + (b * c if with_o else 0.0)


# ---------------------------------------------------------- a superstep, a run


def _usable(surface: Surface, model: str) -> bool:
    if model == "g const":
        return surface.bisseling_g_l() is not None or bool(surface.levels)
    return bool(surface.levels or surface.predict)


def _surface_for(params: Params, primitive: str | None, pattern: str | None, model: str) -> Surface | None:
    """The probe's fit for this primitive and pattern usable by the model, else the nearest
    one measured: the same primitive on another pattern, then put on all-to-all."""
    prim = primitive or "put"
    tries = [f"{prim}/{pattern or 'alltoall'}"]
    tries += [f"{prim}/{pat}" for pat in ("alltoall", "permutation", "shift")]
    tries += ["put/alltoall", "put/permutation", "put/shift"]
    for key in tries:
        surface = params.g.get(key)
        if surface is not None and _usable(surface, model):
            return surface
    return None


def empty_sync_s(params: Params) -> float:
    v = params.empty_sync_s()
    if v is None:
        raise PredictionError("the parameter file has no l (empty sync): run `bspkit probe` without --only")
    return v


def check_usable(params: Params) -> list[str]:
    """Raises PredictionError when the parameters cannot predict any run (no l, no g surface
    with a fit); returns the models they cannot serve (their predictions will be '-')."""
    sections = params.machine.get("sections")
    # --only is to blame only where the probe's header says it left the section out
    left_out = {sec for sec in ("l", "g") if isinstance(sections, list) and sec not in sections}
    missing = []
    if params.empty_sync_s() is None:
        missing.append("l (the empty sync)" + (" (the probe ran without its l section)" if "l" in left_out else ""))
    if not params.g:
        missing.append("g surface" + (" (the probe ran without its g section)" if "g" in left_out else ""))
    if missing:
        fix = (
            "run `bspkit probe` without --only"
            if left_out
            else "the probe measured none: was it cut short? (`bspkit fit` says what the raw file holds)"
        )
        raise PredictionError(f"the parameter file has no {' and no '.join(missing)}: {fix}")
    return [m for m in MODELS if _surface_for(params, None, None, m) is None]


def superstep_comm_s(params: Params, step: Superstep, model: str) -> float | None:
    """Time of one superstep's communication and synchronization under a model."""
    h = float(step.get("h") or 0.0)
    if h <= 0:
        return empty_sync_s(params)
    surface = _surface_for(params, step.get("primitive"), step.get("pattern"), model)
    if surface is None:
        return None
    c = float(step.get("count") or 0.0)
    if model == "g const":
        regression = surface.bisseling_g_l()
        # no usable regression: the bandwidth of the largest h-relations measured
        g, l_s = regression if regression is not None else (surface.levels[-1].g_h, None)
        return g * h + (l_s if l_s is not None and l_s > 0 else empty_sync_s(params))
    with_o = model == "g(h,h*)"
    if surface.levels:  # eq. 2.5 / 2.6 fitted at each h of the grid, interpolated (estimators.level_fits)
        return predict_time_levels(surface.levels, h, c, with_o=with_o)
    pm = surface.predict  # only the one global fit: an older parameter file
    if pm is None:
        return None
    if not with_o:
        eq25 = surface.eq25_fit()
        if eq25 is not None:
            g_inf, h_half = eq25
            return g_inf * (h + h_half)
        return pm.g_inf * (h + pm.h_half)
    return pm.g_inf * (h + pm.h_half + pm.o * c)


def predict(params: Params, run: DriverRun, f_s_per_unit: float | None = None) -> dict[str, float | None]:
    """Predicted time of a driver run under each model, with its parts (work, comm): keys
    "work_s", "f_s_per_unit", and per model M, M (the time) and "M comm_s" (None where the
    model cannot predict a superstep).

    f: the argument, else the kernel timed on every process at once (`f_all_s_per_unit`: the
    rate a process has while the others compute too, which is what the run sees: they share
    caches and memory bandwidth), else on process 0 alone (`f_s_per_unit`, thesis 3.1)."""
    f = f_s_per_unit if f_s_per_unit is not None else (run.get("f_all_s_per_unit") or run.get("f_s_per_unit"))
    if not f:
        raise PredictionError(f"no f for {run.get('algorithm')}: run the driver with --measure-f")
    steps = run.get("supersteps") or []
    work_s = sum(float(s.get("w") or 0.0) for s in steps) * float(f)
    out: dict[str, float | None] = {"work_s": work_s, "f_s_per_unit": float(f)}
    for model in MODELS:
        total = 0.0
        for s in steps:
            if not s.get("sync", True):
                continue  # local work after the last sync: no communication, no l
            c = superstep_comm_s(params, s, model)
            if c is None:
                total = math.nan
                break
            total += c
        out[model] = None if math.isnan(total) else work_s + total
        out[model + " comm_s"] = None if math.isnan(total) else total
    return out


def relative_error(pred: float | None, measured: float) -> float | None:
    return None if pred is None or measured <= 0 else (pred - measured) / measured
