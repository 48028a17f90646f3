"""Gerbessiotis & Lee's speedup of their Cannon-style matrix products MatMul (put) and MatMulG
(get) (seed 002, sec. 4, line 212; the procedures: Fig. 7 and 8, lines 170-199), beside the
closed form's (`bspkit predict cannon-put --gl-speedup`):

    sequential time   2 n^2 (n - 1) f
    parallel time     2 n^2 (n - 1) f / p  +  2 (n^2 / p) sqrt(p) g
    speedup           p / (1 + sqrt(p) g / (f (n - 1)))

with their definitions (line 212): f the time of one floating-point operation (the sequential
product performs 2 n^2 (n - 1) of them), g "the cost in microseconds per double of a
total-exchange of 2 n^2 / p double data types": the time t of a total exchange of h words by
puts over h (their As suite's t/h, sec. 3, line 133; Fig. 6 plots it per p and h), read at
h = 2 n^2 / p doubles (4 n^2 / p of their 32-bit ints, the A and B blocks each process sends
per round). Their worked example: p = 16, n = 320, f = 1/70 us (0.93 s for the sequential
product), g read from Fig. 6 at h = 25600 ints; "around 8 and 5" for BSPlib and LAM MPI
without SMP (tests/python/test_gl_speedup.py checks the formula and the g those imply).

bspkit's g of a total exchange: the parameter file's put/alltoall surface (else the nearest,
bspkit.model.supersteps) under a model of communication, its time for an h-relation of h words
and p - 1 messages over h; for "g const" that is g + l / h (l: the regression's, else the
empty sync), or g alone where the file has no l at all (the seed's own files: its Fig. 5 is
lost).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bspkit.model import comm_models
from bspkit.model import supersteps as pd
from bspkit.model.params import Params

# the drivers of G & L's MatMul and MatMulG (bspkit.algorithms: cannon-put, cannon-get, cannon-send)
DRIVERS = ("bspalg-cannon",)
FORMULA = "p / (1 + sqrt(p) g / (f (n - 1)))"
CITATION = "seed 002 sec. 4, line 212"


class GLError(Exception):
    """The formula cannot be evaluated (no g of a total exchange in the parameter file)."""


def speedup(p: int, n: int, f: float, g: float) -> float:
    """p / (1 + sqrt(p) g / (f (n - 1))): seed 002 line 212, f and g in the same unit of time."""
    return p / (1.0 + math.sqrt(p) * g / (f * (n - 1)))


def sequential_s(n: int, f: float) -> float:
    """2 n^2 (n - 1) f: the sequential product's floating-point operations times f (line 212)."""
    return 2.0 * n * n * (n - 1) * f


def parallel_s(p: int, n: int, f: float, g: float) -> float:
    """2 n^2 (n - 1) f / p + 2 (n^2 / p) sqrt(p) g: computation and sqrt(p) rounds of
    exchanging the A and B blocks (line 212)."""
    return sequential_s(n, f) / p + 2.0 * (n * n / p) * math.sqrt(p) * g


def exchange_words(p: int, n: int) -> float:
    """h of the total exchange G & L read g at: 2 n^2 / p doubles (their 4 n^2 / p ints)."""
    return 2.0 * n * n / p


def g_implied(p: int, n: int, f: float, speedup_value: float) -> float:
    """The g that gives this speedup: (p / S - 1) f (n - 1) / sqrt(p), the formula solved for g."""
    return (p / speedup_value - 1.0) * f * (n - 1) / math.sqrt(p)


def g_of_exchange(params: Params, p: int, h: float, model: str) -> tuple[float, str]:
    """(seconds per word of a put total exchange of h words at p, how it was had): the model's
    time of that h-relation (p - 1 messages of h / (p - 1) words) over h; for a file with no l
    at all, the g const regression's g alone. GLError where the file has no put surface the
    model can use."""
    step: dict[str, Any] = {
        "h": h,
        "h_inout": 2 * h,
        "count": max(p - 1, 1),
        "msg_words": h / max(p - 1, 1),
        "primitive": "put",
        "pattern": "alltoall",
    }
    try:
        t = pd.superstep_comm_s(params, step, model)
    except pd.PredictionError:  # no l: g const's g alone, the seed's own files
        t = None
        if model == comm_models.CLASSIC:
            for key in ("put/alltoall", "put/permutation", "put/shift"):
                surface = params.g.get(key)
                regression = surface.bisseling_g_l() if surface is not None else None
                if regression is not None:
                    return regression[0], f"{key} {model}: g alone (the parameter file has no l)"
    if t is None:
        raise GLError(f"the parameter file has no put surface that {model} can use for G & L's g")
    return t / h, f"a put total exchange of h = 2 n^2 / p words under {model}: its time over h"


@dataclass(frozen=True)
class GLSpeedup:
    """G & L's speedup of one problem at p, and what it was computed from."""

    p: int
    n: int
    f_s: float  # seconds per flop
    g_s_per_word: float
    h_words: float
    g_source: str
    model: str

    @property
    def value(self) -> float:
        return speedup(self.p, self.n, self.f_s, self.g_s_per_word)

    def to_json(self) -> dict[str, Any]:
        return {
            "speedup": self.value,
            "formula": FORMULA,
            "seed": CITATION,
            "p": self.p,
            "n": self.n,
            "f_s_per_flop": self.f_s,
            "g_s_per_word": self.g_s_per_word,
            "h_words": self.h_words,
            "g_source": self.g_source,
            "model": self.model,
        }


def gl_speedup(params: Params, p: int, n: int, f: float, model: str) -> GLSpeedup:
    """G & L's speedup at p and n with f (seconds per flop) and the file's g of a put total
    exchange at h = 2 n^2 / p under `model`."""
    h = exchange_words(p, n)
    g, source = g_of_exchange(params, p, h, model)
    return GLSpeedup(p, n, f, g, h, source, model)
