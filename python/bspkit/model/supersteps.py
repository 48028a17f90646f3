"""Predicted times of a run whose supersteps were counted (a driver's JSON, a profile, a
closed form's supersteps): T = sum over supersteps of (w f + comm(h, c, h*) + l), the
communication and synchronization of each superstep under each model of
bspkit.model.comm_models. The drivers' JSON is described in docs/algorithm-output.md.

A superstep's g surface is the probe's fit for its primitive and pattern, else the nearest one
measured (the same primitive on another pattern, then put on all-to-all) that the model can
use. A superstep without communication costs l (the probe's empty sync).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bspkit.model import comm_models
from bspkit.model.comm_models import CommModel
from bspkit.model.params import Params, Surface

# A driver's JSON object (docs/algorithm-output.md) and one entry of its "supersteps".
DriverRun = Mapping[str, Any]
Superstep = Mapping[str, Any]


class PredictionError(Exception):
    """A run cannot be predicted from these parameters (no f, no l)."""


# ---------------------------------------------------------- a superstep, a run


def _surface_for(params: Params, primitive: str | None, pattern: str | None, model: CommModel) -> Surface | None:
    """The probe's fit for this primitive and pattern usable by the model, else the nearest
    one measured: the same primitive on another pattern, then put on all-to-all."""
    prim = primitive or "put"
    tries = [f"{prim}/{pattern or 'alltoall'}"]
    tries += [f"{prim}/{pat}" for pat in ("alltoall", "permutation", "shift")]
    tries += ["put/alltoall", "put/permutation", "put/shift"]
    for key in tries:
        surface = params.g.get(key)
        if surface is not None and model.usable(surface):
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
    return [m.name for m in comm_models.REGISTRY if _surface_for(params, None, None, m) is None]


def superstep_comm_s(params: Params, step: Superstep, model: str) -> float | None:
    """Time of one superstep's communication and synchronization under a model (its name)."""
    h = float(step.get("h") or 0.0)
    if h <= 0:
        return empty_sync_s(params)
    m = comm_models.get(model)
    surface = _surface_for(params, step.get("primitive"), step.get("pattern"), m)
    if surface is None:
        return None
    return m.superstep_s(surface, h, float(step.get("count") or 0.0), lambda: empty_sync_s(params))


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
    for model in comm_models.NAMES:
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
