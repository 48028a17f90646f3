"""The models of communication: how long a superstep's communication and synchronization take
from the machine's parameters. One record per model in `REGISTRY`; every command, fit, report
and verdict reads it (the names in tables and JSON, the order of preference, the spread a band
uses, the label and style of plots). Adding a model is one entry here and its test.

A superstep has h words (the max over processes of max(sent, received), thesis eq. 2.1),
h_inout words (the max over processes of sent + received, thesis eq. 2.2), c requests per
process of mean size h*, a primitive and a pattern. Ours, as the thesis' Appendices D-G
compare them:

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
global fit. A superstep without communication costs l (the empty sync).

The seeds' definitions, each one entry beside ours (docs/algorithms.md, "The models of
communication"):

- "thesis g const" (thesis sec. 3.3, 4.3): T = g_inf h + l_a2a, g_inf of the global fit of the
  primitive's all-to-all surface (eq. 2.5/2.6: `predict`, else `lsq_2.5`), l_a2a the probe's
  l after an all-to-all (`l.alltoall`), charged to every superstep, with or without
  communication ("values of l measured with communication are used whenever we assume that
  g is constant");
- "g(h,h*)+l0" (eq. 2.4 with 2.6): T = g(h, h*) h + l0 = g_inf (h + h_half + o c) + l0, the
  global fit's g_inf, h_half and o and l0 the empty sync;
- "g(h,h*) [in+out]": g(h,h*) with eq. 2.2's h: the probe's surfaces are indexed by the h of
  balanced h-relations, whose h_in + h_out is 2 h, so a superstep of h_inout words costs what
  the surface gives at h = h_inout / 2 (the same per-word rate; a superstep whose traffic is
  one-sided, a broadcast's root, costs half what eq. 2.1 charges it).

The record's axes (fields with defaults, so an entry names only where it differs): `h_of`,
which count of a superstep is its h ("h" or "h_inout"); `l_variant`, the probe's l the model
charges (a superstep without communication costs it; superstep_s receives it);
`surface_pattern`, a pattern whose surface the model uses whatever the superstep's;
`terminal`, whether the terminal's wide tables (`bspkit predict`'s row per p) give it a
column (the others are in JSON, the pages and validate's table, and in predict's table when
they are the model chosen). `detail` orders the models without evidence: ours first (the
most detailed the parameters serve is "best"); the seeds' entries have negative details, so
that they are chosen only by evidence (`bspkit validate`: bspkit.model.model_choice).

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
    # seconds of a superstep with h > 0 words (step_h) and c requests on this surface, given the
    # model's l (l_variant; asked only by a model that charges it); None where the surface
    # cannot say
    superstep_s: Callable[[Surface, float, float, Callable[[], float]], float | None]
    # the relative spread of its time from a surface's spreads (a machine_scaling.SurfaceSpread,
    # which imports this module: Any here)
    spread: Callable[[Any], float | None]
    formula: str  # one line for tables and pages: what it charges
    style: tuple[str, str]  # matplotlib colour and marker of its points in plots
    # which count of a superstep is its h: "h" (eq. 2.1, max over processes of max(sent,
    # received)) or "h_inout" (eq. 2.2, max over processes of sent + received; the surface is
    # read at h_inout / 2, the h of the balanced h-relation of that traffic: `step_h`)
    h_of: str = "h"
    # the probe's l (a key of the parameter file's `l`) the model charges: what a superstep
    # without communication costs, and the l handed to superstep_s
    l_variant: str = "empty"
    # the pattern whose surface the model reads whatever the superstep's pattern (None: the
    # superstep's own)
    surface_pattern: str | None = None
    # a column of the terminal's wide tables (`bspkit predict`'s row per p); False: in JSON, the
    # pages and validate's table, and in predict's table only when it is the model chosen
    terminal: bool = True

    def __post_init__(self) -> None:
        if self.h_of not in H_OF:
            raise ValueError(f"model {self.name}: h_of must be one of {', '.join(H_OF)}, not {self.h_of!r}")

    @property
    def label(self) -> str:
        """Its name as tables and plots show it."""
        return self.name


# the counts of a superstep a model may take for its h (CommModel.h_of)
H_OF = {
    "h": "max over processes of max(words sent, words received) (thesis eq. 2.1)",
    "h_inout": "max over processes of words sent + words received (thesis eq. 2.2)",
}


def step_h(model: CommModel, step: Mapping[str, Any]) -> float | None:
    """The h at which the model reads a superstep's surface: its h (eq. 2.1), or h_inout / 2
    (eq. 2.2: the probe's h-relations are balanced, each process sends and receives h words, so
    their h_inout is 2 h). 0 for a superstep without communication whatever the model; None
    where the model needs h_inout and the superstep does not carry it (a driver or profile
    written before it was counted, a closed form that cannot say)."""
    h = float(step.get("h") or 0.0)
    if model.h_of == "h" or h <= 0:
        return h
    inout = step.get("h_inout")
    return None if inout is None else float(inout) / 2.0


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


def global_fit(surface: Surface) -> tuple[float, float, float] | None:
    """(g_inf, h_half, o) of the surface's one global fit of eq. (2.6) (`predict`: the lsq fit,
    o 0 where the fit of eq. 2.5 was chosen), else of eq. (2.5) (`lsq_2.5`, o = 0); None where
    the probe made neither."""
    pm = surface.predict
    if pm is not None and pm.g_inf > 0:
        return pm.g_inf, pm.h_half, pm.o
    eq25 = surface.eq25_fit()
    return (eq25[0], eq25[1], 0.0) if eq25 is not None and eq25[0] > 0 else None


def _global_usable(surface: Surface) -> bool:
    return global_fit(surface) is not None


def _thesis_g_const_s(surface: Surface, h: float, c: float, l_s: Callable[[], float]) -> float | None:
    fit = global_fit(surface)
    return None if fit is None else fit[0] * h + l_s()


def _g_h_hstar_l0_s(surface: Surface, h: float, c: float, l_s: Callable[[], float]) -> float | None:
    fit = global_fit(surface)
    if fit is None:
        return None
    g_inf, h_half, o = fit
    return g_inf * (h + h_half + o * c) + l_s()


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
    # the seeds' definitions (thesis ch. 2-4), each beside ours
    CommModel(
        name="g(h,h*)+l0",
        detail=-1,
        needs='the global fit ("predict", or "lsq_2.5")',
        usable=_global_usable,
        superstep_s=_g_h_hstar_l0_s,
        spread=lambda s: s.g_h_hstar,
        formula="thesis eq. (2.4) with (2.6): g(h,h*) h + l0 = g_inf (h + h_half + o c) + l0, the global fit and the empty sync",
        style=("tab:purple", "D"),
        terminal=False,
    ),
    CommModel(
        name="thesis g const",
        detail=-2,
        needs='the global fit of the all-to-all surface ("predict", or "lsq_2.5") and l.alltoall',
        usable=_global_usable,
        superstep_s=_thesis_g_const_s,
        spread=lambda s: s.g_h,
        formula="thesis sec. 3.3, 4.3: g_inf h + l, g_inf of the primitive's all-to-all fit, l after an all-to-all, "
        "in every superstep",
        style=("tab:brown", "v"),
        l_variant="alltoall",
        surface_pattern="alltoall",
        terminal=False,
    ),
    CommModel(
        name="g(h,h*) [in+out]",
        detail=-3,
        needs='the per-h fit ("levels") or the global fit ("predict"), and h_inout counted',
        usable=_per_h_usable,
        superstep_s=lambda surface, h, c, empty_sync_s: _per_h_s(surface, h, c, with_o=True),
        spread=lambda s: s.g_h_hstar,
        formula="g(h,h*) with thesis eq. (2.2)'s h = max(h_in + h_out), read at h_inout / 2 (the probe's balanced h)",
        style=("tab:olive", "P"),
        h_of="h_inout",
        terminal=False,
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


def terminal_names(also: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The models a wide terminal table gives a column (CommModel.terminal), in the registry's
    order, with those of `also` (the model chosen) even where they are not."""
    extra = set(also)
    return tuple(m.name for m in REGISTRY if m.terminal or m.name in extra)


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
