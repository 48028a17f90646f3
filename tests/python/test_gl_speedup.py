"""Gerbessiotis & Lee's speedup of MatMul/MatMulG (bspkit.model.gl_speedup; seed 002 sec. 4,
line 212) against the paper's own worked example: p = 16, n = 320, f = 1/70 us, g read from
their Fig. 6 (lost in the seed's text: the g their "around 8 and 5" imply, and the g the seed
gives in prose, data/machines/gl-pccluster-bsplib-nonsmp-p16.json). The formula is checked
against their time expressions, not against the paper's rounding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bspkit.model import gl_speedup as gl

REPO = Path(__file__).resolve().parents[2]
P, N = 16, 320
F = 1e-6 / 70  # s per flop: "Let f = 1/70" (us), line 212


def test_f_is_the_sequential_time_they_measured() -> None:
    """f = 1/70 us makes the sequential product of n = 320, 2 n^2 (n - 1) flops, the 0.93 s
    they measured (line 212; Table 1's "Time p = 1")."""
    assert round(gl.sequential_s(N, F), 2) == 0.93


@pytest.mark.parametrize("g", [0.0, 1e-7, 1.18e-6, 2.5e-6, 1e-4])
def test_the_formula_is_their_times_ratio(g: float) -> None:
    """p / (1 + sqrt(p) g / (f (n - 1))) is their sequential time over their parallel time,
    2 n^2 (n - 1) f over 2 n^2 (n - 1) f / p + 2 (n^2 / p) sqrt(p) g, for any g."""
    assert gl.speedup(P, N, F, g) == pytest.approx(gl.sequential_s(N, F) / gl.parallel_s(P, N, F, g), rel=1e-12)
    assert gl.speedup(P, N, F, 0.0) == P  # no communication: p
    assert gl.exchange_words(P, N) * 2 == 25600  # their h = 4 n^2 / p ints, twice the doubles


@pytest.mark.parametrize("stated", [8.0, 5.0, 6.0, 4.6])
def test_the_g_their_speedups_imply(stated: float) -> None:
    """Their expected speedups ("around 8 and 5" without SMP, "6 and 4.6" with it) solved for
    g: the formula gives the speedup back, and the g per 32-bit int (half the per-double g of
    the formula) is the order of Fig. 6's, tenths of a microsecond to about 1.5."""
    g = gl.g_implied(P, N, F, stated)
    assert gl.speedup(P, N, F, g) == pytest.approx(stated, rel=1e-12)
    assert 0.1e-6 < g / 2 < 1.5e-6


def test_the_seeds_own_g_gives_their_around_8() -> None:
    """The g the seed gives in prose for BSPlib without SMP (0.59 per int, line 299; the seed
    machine file holds it per 8-byte word): the formula's speedup rounds to their 8."""
    machine = json.loads((REPO / "data/machines/gl-pccluster-bsplib-nonsmp-p16.json").read_text())
    g = machine["g"]["put/alltoall"]["linreg"]["g"]
    assert g == pytest.approx(2 * 0.59e-6)
    assert round(gl.speedup(P, N, F, g)) == 8
    assert g == pytest.approx(gl.g_implied(P, N, F, gl.speedup(P, N, F, g)), rel=1e-12)
