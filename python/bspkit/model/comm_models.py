"""The models of communication: how long a superstep's communication and synchronization take
from the machine's parameters. One record per model in `REGISTRY`; every command, fit, report
and verdict reads it (the names in tables and JSON, the order of preference, the spread a band
uses, the label and style of plots). Adding a model is one entry here and its test.

A superstep has h words (the max over processes of max(sent, received), thesis eq. 2.1), c
requests per process of mean size h*, a primitive and a pattern. The models, as the thesis'
Appendices D-G compare them:

- "g const": the BSP cost g h + l, with g and l from Bisseling's regression T = g h + l over
  the probe's h-relations (the classic model: one g); where that regression failed, g is the
  time per word of the largest h-relations measured (g(h) at the grid's largest h) and l the
  empty sync;
- "g(h)": eq. (2.5), T = g_inf (h + h_half): the bandwidth depends on the size of the
  h-relation (h_half is fitted on whole supersteps, so it holds the synchronization);
- "g(h,h*)": eq. (2.6), T = g_inf (h + h_half + o c): plus a per-message overhead o.

g(h) and g(h,h*) are taken from the probe's fit at each value of h (`levels`,
estimators.level_fits: A(h) and A(h) + B(h) c, interpolated between the grid's h, growing in
proportion to h beyond it); an older parameter file without levels falls back to the one
global fit. A superstep without communication costs l (the empty sync) under every model.

This module imports no numeric package, so the command line can offer the models' names
without loading numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bspkit.model.params import Level, PredictModel, Surface


# ------------------------------------------------------------ one h-relation


def predict_time(pm: PredictModel, h: float, c: float) -> float:
    """T(h, c) of the one global fit: eq. (2.6) times h, g_inf (h + h_half + o c)."""
    return pm.g_inf * (h + pm.h_half + pm.o * c)


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


# ------------------------------------------------------------ the record


@dataclass(frozen=True)
class CommModel:
    """One model of a superstep's communication and synchronization time."""

    name: str  # its key in every table, JSON object and option ("g const")
    detail: int  # order of preference: of the models a parameter file serves, the most detailed is "best"
    needs: str  # what of a g surface it needs, in words (for errors and docs)
    usable: Callable[[Surface], bool]  # can this surface serve it
    # seconds of a superstep with h > 0 words and c requests on this surface, given the empty
    # sync l (asked only by a model that charges it); None where the surface cannot say
    superstep_s: Callable[[Surface, float, float, Callable[[], float]], float | None]
    # the relative spread of its time from a surface's spreads (a machine_scaling.SurfaceSpread,
    # which imports this module: Any here)
    spread: Callable[[Any], float | None]
    formula: str  # one line for tables and pages: what it charges
    style: tuple[str, str]  # matplotlib colour and marker of its points in plots

    @property
    def label(self) -> str:
        """Its name as tables and plots show it."""
        return self.name


def _g_const_usable(surface: Surface) -> bool:
    return surface.bisseling_g_l() is not None or bool(surface.levels)


def _g_const_s(surface: Surface, h: float, c: float, empty_sync_s: Callable[[], float]) -> float | None:
    regression = surface.bisseling_g_l()
    # no usable regression: the bandwidth of the largest h-relations measured
    g, l_s = regression if regression is not None else (surface.levels[-1].g_h, None)
    return g * h + (l_s if l_s is not None and l_s > 0 else empty_sync_s())


def _per_h_usable(surface: Surface) -> bool:
    return bool(surface.levels or surface.predict)


def _per_h_s(surface: Surface, h: float, c: float, with_o: bool) -> float | None:
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
    return predict_time(pm, h, c)


REGISTRY: tuple[CommModel, ...] = (
    CommModel(
        name="g const",
        detail=0,
        needs='Bisseling\'s regression ("linreg": g and l) or a per-h fit ("levels")',
        usable=_g_const_usable,
        superstep_s=_g_const_s,
        spread=lambda s: s.linreg_g,
        formula="Bisseling's g h + l",
        style=("tab:blue", "o"),
    ),
    CommModel(
        name="g(h)",
        detail=1,
        needs='the per-h fit ("levels") or the global fit ("predict")',
        usable=_per_h_usable,
        superstep_s=lambda surface, h, c, empty_sync_s: _per_h_s(surface, h, c, with_o=False),
        spread=lambda s: s.g_h,
        formula="eq. (2.5) g_inf (h + h_half), fitted per value of h and interpolated",
        style=("tab:orange", "s"),
    ),
    CommModel(
        name="g(h,h*)",
        detail=2,
        needs='the per-h fit ("levels") or the global fit ("predict")',
        usable=_per_h_usable,
        superstep_s=lambda surface, h, c, empty_sync_s: _per_h_s(surface, h, c, with_o=True),
        spread=lambda s: s.g_h_hstar,
        formula="eq. (2.6) g_inf (h + h_half + o c): plus the per-message overhead",
        style=("tab:green", "^"),
    ),
)


def indexes(registry: Sequence[CommModel]) -> tuple[Mapping[str, CommModel], tuple[str, ...], tuple[str, ...]]:
    """BY_NAME, NAMES and BEST_FIRST of a registry (a test builds them for a registry of its own)."""
    by_name = {m.name: m for m in registry}
    if len(by_name) != len(registry) or len({m.detail for m in registry}) != len(registry):
        raise ValueError("the models of communication need distinct names and distinct details")
    return by_name, tuple(m.name for m in registry), tuple(m.name for m in sorted(registry, key=lambda m: -m.detail))


# by name; every table's columns, in the registry's order; the most detailed first (the first
# a parameter file serves is "best"). Read them at call time (comm_models.NAMES), not at import.
BY_NAME, NAMES, BEST_FIRST = indexes(REGISTRY)
# the model every parameter file must serve: a hand-written one gives at least its g and l
CLASSIC = "g const"


class UnknownModel(ValueError):
    """A model name that is not in the registry."""


def get(name: str) -> CommModel:
    """The model of this name, else UnknownModel naming the models there are."""
    model = BY_NAME.get(name)
    if model is None:
        raise UnknownModel(f"no model '{name}' (the models: {', '.join(NAMES)})")
    return model


def best(values: Mapping[str, Any], order: Iterable[str] | None = None) -> str | None:
    """The first model of `order` (default: the most detailed first) with a value (not None)
    in `values`, else None."""
    return next((m for m in (BEST_FIRST if order is None else order) if values.get(m) is not None), None)


def best_spread(spread: Any) -> float | None:
    """The spread of the most detailed model this surface has one for."""
    return next((v for name in BEST_FIRST if (v := BY_NAME[name].spread(spread)) is not None), None)


def legend_html() -> str:
    """The models, one clause each, for a page's note."""
    return "; ".join(f"<b>{m.label}</b>: {m.formula}" for m in REGISTRY)
