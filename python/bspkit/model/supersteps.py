"""Predicted times of a run whose supersteps were counted (a driver's JSON, a profile, a
closed form's supersteps): T = sum over supersteps of (w f + comm(h, c, h*) + l), the
communication and synchronization of each superstep under each model of
bspkit.model.comm_models. The drivers' JSON is described in docs/algorithm-output.md.

A superstep's g surface is the probe's fit for its primitive and pattern (a model's own
pattern where it names one: CommModel.surface_pattern), else the nearest one measured (the same
primitive on another pattern, then put on all-to-all) that the model can use. Its h is the one
the model reads (comm_models.step_h: h, or eq. 2.2's h_inout). A superstep without
communication costs the model's l (CommModel.l_variant: the probe's empty sync, or the thesis'
l after an all-to-all).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from bspkit.model import comm_models
from bspkit.model.comm_models import CommModel
from bspkit.model.params import PATTERNS, PRIMITIVES, Params, Surface, value_of

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
    pattern = model.surface_pattern or pattern
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


def model_l_s(params: Params, model: CommModel) -> float | None:
    """The l the model charges (CommModel.l_variant) from the parameter file: the empty sync
    (PredictionError where the file has none, as empty_sync_s), or another variant (None where
    the file lacks it: the model cannot predict)."""
    if model.l_variant == "empty":
        return empty_sync_s(params)
    return _number(params.l.get(model.l_variant)) if isinstance(params.l, Mapping) else None


def empty_superstep_s(params: Params, model: str) -> float | None:
    """What a superstep without communication costs under a model (its name): its l."""
    return model_l_s(params, comm_models.get(model))


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
    return [
        m.name
        for m in comm_models.REGISTRY
        if _surface_for(params, None, None, m) is None or (m.l_variant != "empty" and model_l_s(params, m) is None)
    ]


def superstep_comm_s(params: Params, step: Superstep, model: str) -> float | None:
    """Time of one superstep's communication and synchronization under a model (its name):
    its l where it communicates nothing, else what the model makes of its surface at the h
    the model reads (comm_models.step_h); None where the model cannot say (no surface, no l of
    its variant, no h_inout counted)."""
    m = comm_models.get(model)
    h = comm_models.step_h(m, step)
    if h is None:
        return None
    if m.l_variant == "empty":  # asked only where charged: a file without it raises then

        def l_s() -> float:
            return empty_sync_s(params)
    else:
        value = model_l_s(params, m)
        if value is None:
            return None

        def l_s() -> float:
            return value

    if h <= 0:
        return l_s()
    surface = _surface_for(params, step.get("primitive"), step.get("pattern"), m)
    if surface is None:
        return None
    return m.superstep_s(surface, h, float(step.get("count") or 0.0), l_s)


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


# ----------------------------------------------------- a hand-written file


def _number(v: Any) -> float | None:
    """A parameter as a file holds it (a number or a triplet) as a number, None where it is none."""
    try:
        return value_of(v)
    except (TypeError, ValueError):
        return None


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def check_hand_written(params: Params, primitives: Collection[str] | None = None) -> list[str]:
    """What a parameter file lacks to predict a run at its p (one line each, naming the key and
    what it is for); [] when nothing is missing: f of at least one kernel, l.empty, p, and g
    surfaces bspkit.model.supersteps can use under "g const" (Bisseling's g, or a per-h fit).
    Which surfaces: for each primitive of `primitives` (those the run communicates with), one of
    that primitive or a put/* one (_surface_for's fallback); without `primitives`, put/* among
    them (the fallback of every primitive). The models the file cannot serve ("g(h)" and
    "g(h,h*)" need `levels` or `predict`) are not missing: bspkit.model.supersteps gives them none."""
    missing = []
    if not isinstance(params.p, int) or isinstance(params.p, bool) or params.p < 1:
        missing.append("p: the number of processes the parameters are for (an integer >= 1)")
    if not isinstance(params.f, Mapping) or not any(_positive(v) for v in params.f.values()):
        missing.append(
            'f: the seconds per operation of at least one kernel, e.g. {"matmul_double_blas": 1.2e-10} '
            "(the work of a run is costed with it)"
        )
    else:
        missing += [
            f"f.{k}: {v!r} is not a positive number (seconds per operation)"
            for k, v in params.f.items()
            if not _positive(v)
        ]
    if not isinstance(params.l, Mapping):
        missing.append(
            'l: an object {variant: seconds}, e.g. {"empty": 2e-5} '
            '(read the file with read_params_file for the shorthand "l": 2e-5)'
        )
    elif not _positive(_number(params.l.get("empty"))):
        missing.append("l.empty: the seconds of a superstep without communication (the empty sync)")
    usable = []
    for key, s in params.g.items():
        prim, _, pattern = key.partition("/")
        if prim not in PRIMITIVES or pattern not in PATTERNS:
            missing.append(
                f"g.{key}: not a <primitive>/<pattern> key (primitives {', '.join(PRIMITIVES)}; "
                f"patterns {', '.join(PATTERNS)}), so no superstep uses it"
            )
            continue
        if not comm_models.get(comm_models.CLASSIC).usable(s):
            hint = " (a shorthand: read the file with read_params_file)" if "g" in s.extra else ""
            missing.append(
                f'g.{key}: no g for "{comm_models.CLASSIC}": give "linreg": {{"g": seconds per word, "l": seconds}}{hint}'
            )
            continue
        usable.append(key)
    if primitives is not None:
        has_put = any(k.startswith("put/") for k in usable)
        for prim in sorted(set(primitives)):
            if not has_put and not any(k.startswith(prim + "/") for k in usable):
                missing.append(
                    f'g: no surface for {prim}, which the run communicates with: give "{prim}/alltoall" (or '
                    f'{prim}/permutation, {prim}/shift, or a put/* surface to fall back on) with {{"linreg": '
                    '{"g": seconds per word, "l": seconds}}'
                )
    elif not params.g:
        missing.append('g: no surface: give at least "put/alltoall": {"linreg": {"g": seconds per word, "l": seconds}}')
    elif usable and not any(k.startswith("put/") for k in usable):
        missing.append(
            "g: no put surface (put/alltoall, put/permutation or put/shift): the supersteps of other "
            "primitives than those given have none to fall back on"
        )
    return missing
