"""The BSP cost of each algorithm in closed form: its supersteps' work w, h-relation h,
messages c and mean message size h* as functions of the problem (n, q, alpha, ...) and p,
without a run (`bspkit predict`).

Each algorithm's module (`bspkit.model.costs.<module>`) has one function
`cost(algorithm, problem, p) -> Cost`; the formulas and their sources (thesis eq. 4.5-4.10,
5.2-5.5, Gerbessiotis & Lee, Horvitz & Bisseling) are in its docstring. The algorithm's
record in bspkit.algorithms.REGISTRY holds it (its `cost`), and
bspkit.algorithms.closed_form(algorithm, problem, p) evaluates it: this package names no
algorithm. A `Cost` lists the supersteps in the order the driver meets them, consecutive
equal ones as one `StepKind` with `repeat`, so a run at p = 1024 stays a short list while
`supersteps()` gives the driver's own per-superstep list (docs/algorithm-output.md) for small
runs. Where the data decides a count (radix sort's key exchange, LU's row interchanges), the
step's `source` says so and its value is the expectation over the driver's random inputs,
with `h_low`/`h_high` bounds.

A step's `h_inout` is thesis eq. (2.2)'s h, the max over processes of words sent + words
received, as the drivers count it (docs/algorithm-output.md): a balanced exchange 2 h, a
one-sided one (a broadcast's root, a gather) h. Every module fills it: where h is an
expectation (radix sort's key exchange, LU's swaps) h_inout is the same kind of expectation
(the max over processes of the expected words). None would say that a step's closed form
cannot tell it; the models that read it (comm_models.CommModel.h_of) then predict nothing.

tests/python/test_closed_forms_*.py check every model against the drivers' counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# What a step's numbers are: exact for every input, the mean over the driver's random inputs
# (with bounds), or only a bound.
SOURCES = ("closed form", "expected", "bound")


class CostError(Exception):
    """No closed form for this algorithm, or the problem is outside the model (p < 1, ...)."""


@dataclass(frozen=True)
class StepKind:
    """`repeat` consecutive equal supersteps; w, h, count: max over processes (thesis eq. 2.1),
    msg_words: all words / all requests (h*), as the drivers count them."""

    kind: str  # what the superstep does, e.g. "fetch blocks", "pivot", "key exchange"
    repeat: int
    w: float  # work, in the algorithm's unit (flop, cell, key)
    h: float  # words
    count: float  # requests
    msg_words: float  # h*, 0 without requests
    primitive: str | None = None  # as the driver labels it: put, hpput, get, hpget, send
    pattern: str | None = None  # alltoall, permutation, shift
    sync: bool = True  # False only for local work after the last bsp_sync (costs w f, no l)
    source: str = "closed form"  # one of SOURCES
    h_low: float | None = None  # bounds of h where source is not "closed form"
    h_high: float | None = None
    h_inout: float | None = None  # max over processes of sent + received (eq. 2.2); None: not known

    def as_superstep(self) -> dict[str, Any]:
        """One of these supersteps as a driver's JSON lists it (plus its kind)."""
        return {
            "kind": self.kind,
            "w": self.w,
            "h": self.h,
            "h_inout": self.h_inout,
            "count": self.count,
            "msg_words": self.msg_words,
            "primitive": self.primitive,
            "pattern": self.pattern,
            "sync": self.sync,
        }


@dataclass(frozen=True)
class Cost:
    """The closed-form cost of one run: its supersteps in order."""

    algorithm: str
    p: int
    problem: Mapping[str, Any]  # the driver's "params" this models, defaults filled in
    work_unit: str  # flop, cell, key
    f_kernel: str | None  # the probe's f kernel nearest the driver's (params.f), None if none
    steps: tuple[StepKind, ...]
    notes: tuple[str, ...] = field(default=())  # where the model is a bound or an expectation

    @property
    def S(self) -> int:
        """Supersteps (bsp_sync calls) of one repetition."""
        return sum(k.repeat for k in self.steps if k.sync)

    @property
    def W(self) -> float:
        return sum(k.repeat * k.w for k in self.steps)

    @property
    def H(self) -> float:
        return sum(k.repeat * k.h for k in self.steps)

    @property
    def H_inout(self) -> float | None:
        """Sum of h_inout (eq. 2.2's H), None where a step does not know it."""
        if any(k.h_inout is None for k in self.steps):
            return None
        return sum(k.repeat * (k.h_inout or 0.0) for k in self.steps)

    @property
    def exact(self) -> bool:
        return all(k.source == "closed form" for k in self.steps)

    def supersteps(self) -> list[dict[str, Any]]:
        """Every superstep in order, as the driver's JSON lists them (repeats expanded)."""
        return [k.as_superstep() for k in self.steps for _ in range(k.repeat)]
