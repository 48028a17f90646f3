"""bspkit.model.comm_models and bspkit.model.supersteps: the time of one h-relation from the per-h fit (predict_time_levels: log-linear
between the grid's h, in proportion to h beyond it) and from the one global fit, and the
predicted time of a driver run from a parameter file under the three communication models.

The prediction of a run is T = sum(w) f + sum over synchronized supersteps of comm, with comm
per model (supersteps.superstep_comm_s):
  g const:  g h + l         (linreg's g and l; l empty where linreg has no l)
  g(h):     A(h) of the per-h fit (`levels`: log-linear between the grid's h), else the
            global g_inf (h + h_half) of eq. (2.5) (lsq_2.5's where the predict model is 2.6)
  g(h,h*):  A(h) + B(h) c of the per-h fit, else g_inf (h + h_half + o c) of `predict`
and l empty for a superstep without communication (h = 0); the seeds' definitions beside them
(test_seed_models.py has their own hand computations):
  g(h,h*)+l0:        g_inf (h + h_half + o c) of `predict`, plus l empty
  thesis g const:    g_inf of the primitive's all-to-all `predict` times h, plus l after an
                     all-to-all, also for a superstep without communication
  g(h,h*) [in+out]:  g(h,h*) at h_inout / 2 (here balanced supersteps: h_inout = 2 h)."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

from bspkit.model.comm_models import NAMES as MODELS
from bspkit.model.comm_models import predict_time, predict_time_levels
from bspkit.model.estimators import level_fits
from bspkit.model.fit import fit_surface
from bspkit.model.params import Level, Params
from bspkit.model.supersteps import PredictionError, predict, relative_error, superstep_comm_s

from synth import C_GRID, H_GRID, L_EMPTY, PARAMS_JSON, cache_t, grid_points

L_A2A = PARAMS_JSON["l"]["alltoall"]

F = 2.0e-9

PARAMS = Params.from_json(PARAMS_JSON)

PUT = {
    "w": 1.0e6,
    "h": 4096,
    "h_inout": 8192,
    "count": 16,
    "msg_words": 256,
    "primitive": "put",
    "pattern": "alltoall",
    "sync": True,
}
EMPTY = {
    "w": 5.0e5,
    "h": 0,
    "count": 0,
    "msg_words": 0,
    "primitive": None,
    "pattern": None,
    "sync": True,
}
GET = {
    "w": 2.0e5,
    "h": 1000,
    "h_inout": 2000,
    "count": 250,
    "msg_words": 4,
    "primitive": "get",
    "pattern": "permutation",
    "sync": True,
}
TAIL = {
    "w": 3.0e5,
    "h": 0,
    "count": 0,
    "msg_words": 0,
    "primitive": None,
    "pattern": None,
    "sync": False,
}

# per superstep and model, by hand: put/alltoall from its levels (h = 4096 is 2/3 of the way
# from 1024 to 8192 in log h), get/permutation (no levels) from the global fits
A_4096 = (9.0e-6 ** (1 / 3)) * (2.0e-5 ** (2 / 3))
EXPECT = {
    "g const": {"put": 1.1e-9 * 4096 + 5.0e-6, "get": 2.5e-9 * 1000 + L_EMPTY},
    "g(h)": {"put": A_4096, "get": 3.0e-9 * (1000 + 800.0)},
    "g(h,h*)": {
        "put": A_4096 + 3.0e-8 * 16,
        "get": 3.0e-9 * (1000 + 800.0 + 0.0 * 250),
    },
    "g(h,h*)+l0": {"put": 1.0e-9 * (4096 + 1500.0 + 20.0 * 16) + L_EMPTY, "get": 3.0e-9 * (1000 + 800.0) + L_EMPTY},
    "thesis g const": {"put": 1.0e-9 * 4096 + L_A2A, "get": 3.0e-9 * 1000 + L_A2A},
}
EXPECT["g(h,h*) [in+out]"] = EXPECT["g(h,h*)"]  # balanced: h_inout / 2 = h
# what a superstep without communication costs: l empty, but for the thesis' g const
L_OF = {m: L_A2A if m == "thesis g const" else L_EMPTY for m in MODELS}
OURS = ("g const", "g(h)", "g(h,h*)")


def run_of(steps: list[dict[str, Any]], f: float | None = F) -> dict[str, Any]:
    return {
        "algorithm": "test",
        "p": 2,
        "time_s": 0.01,
        "f_s_per_unit": f,
        "supersteps": steps,
    }


# ------------------------------------------------------------------ a run


def test_superstep_comm_per_model() -> None:
    for m in MODELS:
        assert superstep_comm_s(PARAMS, PUT, m) == pytest.approx(EXPECT[m]["put"], rel=1e-12), m
        assert superstep_comm_s(PARAMS, GET, m) == pytest.approx(EXPECT[m]["get"], rel=1e-12), m
        # no communication: the model's l (the empty sync but for the thesis' g const), whatever
        # the primitive named
        assert superstep_comm_s(PARAMS, EMPTY, m) == L_OF[m]
        assert superstep_comm_s(PARAMS, {**PUT, "h": 0}, m) == L_OF[m]
        assert superstep_comm_s(PARAMS, {"w": 1.0}, m) == L_OF[m]


def test_predict_sums_work_and_communication() -> None:
    pred = predict(PARAMS, run_of([PUT, EMPTY, GET, TAIL]))
    work = (1.0e6 + 5.0e5 + 2.0e5 + 3.0e5) * F  # every entry's work, the trailing one included
    assert pred["work_s"] == pytest.approx(work, rel=1e-12)
    assert pred["f_s_per_unit"] == F
    for m in MODELS:
        comm = EXPECT[m]["put"] + L_OF[m] + EXPECT[m]["get"]  # the trailing entry: no l
        assert pred[m + " comm_s"] == pytest.approx(comm, rel=1e-12), m
        assert pred[m] == pytest.approx(work + comm, rel=1e-12), m
    # our three models differ on this run (the test tells them apart)
    assert len({round(pred[m], 12) for m in OURS}) == 3


def test_non_sync_entry_costs_only_its_work() -> None:
    base = predict(PARAMS, run_of([PUT, GET]))
    for tail in (
        TAIL,
        {**TAIL, "h": 500, "count": 5, "primitive": "put", "pattern": "alltoall"},
    ):
        with_tail = predict(PARAMS, run_of([PUT, GET, tail]))
        for m in MODELS:
            assert with_tail[m] - base[m] == pytest.approx(tail["w"] * F, rel=1e-9), m
            assert with_tail[m + " comm_s"] == pytest.approx(base[m + " comm_s"], rel=1e-12)
    # a synchronized empty superstep costs its work and l
    with_sync = predict(PARAMS, run_of([PUT, GET, {**TAIL, "sync": True}]))
    for m in MODELS:
        assert with_sync[m] - base[m] == pytest.approx(TAIL["w"] * F + L_OF[m], rel=1e-9)


def test_f_is_needed_and_an_argument_overrides_the_runs() -> None:
    for f in (None, 0.0):
        with pytest.raises(PredictionError, match="no f"):
            predict(PARAMS, run_of([PUT], f=f))
    run = run_of([PUT], f=None)
    del run["f_s_per_unit"]
    with pytest.raises(PredictionError):
        predict(PARAMS, run)
    p = predict(PARAMS, run, f_s_per_unit=4.0e-9)
    assert p["work_s"] == pytest.approx(1.0e6 * 4.0e-9, rel=1e-12)
    q = predict(PARAMS, run_of([PUT], f=F), f_s_per_unit=4.0e-9)
    assert q["f_s_per_unit"] == 4.0e-9 and q["g(h,h*)"] == pytest.approx(p["g(h,h*)"], rel=1e-12)


def test_fallback_to_another_pattern_of_the_same_primitive() -> None:
    for m in MODELS:
        # get/shift is there but has nothing usable, get/alltoall is missing: get/permutation
        assert superstep_comm_s(PARAMS, {**GET, "pattern": "shift"}, m) == pytest.approx(EXPECT[m]["get"], rel=1e-12)
        assert superstep_comm_s(PARAMS, {**GET, "pattern": "alltoall"}, m) == pytest.approx(EXPECT[m]["get"], rel=1e-12)
        # put on a pattern not measured: put/alltoall
        assert superstep_comm_s(PARAMS, {**PUT, "pattern": "shift"}, m) == pytest.approx(EXPECT[m]["put"], rel=1e-12)
        # a primitive not measured at all (and none named): put/alltoall
        for prim in ("hpget", None):
            step = {**PUT, "primitive": prim, "pattern": "permutation"}
            assert superstep_comm_s(PARAMS, step, m) == pytest.approx(EXPECT[m]["put"], rel=1e-12)
    # same primitive is preferred over put: with put/shift present, get/shift still goes to get
    params_json = copy.deepcopy(PARAMS_JSON)
    params_json["g"]["put/shift"] = {
        "predict": {"model": "2.5 lsq", "g_inf": 9e-9, "h_half": 1.0, "o": 0.0},
        "linreg": {"g": [9e-9, 8e-9, 1e-8], "l": [1e-6, 0.5e-6, 1.5e-6]},
    }
    params = Params.from_json(params_json)
    assert superstep_comm_s(params, {**GET, "pattern": "shift"}, "g(h,h*)") == pytest.approx(EXPECT["g(h,h*)"]["get"])
    assert superstep_comm_s(params, {**PUT, "pattern": "shift"}, "g(h,h*)") == pytest.approx(9e-9 * (4096 + 1.0))


def test_g_of_h_without_lsq_2_5_uses_predict_without_o() -> None:
    # an older parameter file: no per-h levels, only the global fits
    params_json = copy.deepcopy(PARAMS_JSON)
    del params_json["g"]["put/alltoall"]["levels"]
    params_json["g"]["put/alltoall"]["lsq_2.5"] = {"g_inf": None, "h_half": None}
    params = Params.from_json(params_json)
    assert superstep_comm_s(params, PUT, "g(h)") == pytest.approx(1.0e-9 * (4096 + 1500.0), rel=1e-12)
    # lsq_2.5 with a null h_half: h_half 0
    params_json["g"]["put/alltoall"]["lsq_2.5"] = {
        "g_inf": [1.2e-9, 1.1e-9, 1.3e-9],
        "h_half": None,
    }
    params = Params.from_json(params_json)
    assert superstep_comm_s(params, PUT, "g(h)") == pytest.approx(1.2e-9 * 4096, rel=1e-12)


def test_missing_parameters() -> None:
    # no usable g anywhere: no prediction under any model, but no exception
    params = Params.from_json({**PARAMS_JSON, "g": {"get/shift": PARAMS_JSON["g"]["get/shift"]}})
    pred = predict(params, run_of([PUT, EMPTY]))
    for m in MODELS:
        assert pred[m] is None and pred[m + " comm_s"] is None
    assert pred["work_s"] == pytest.approx(1.5e6 * F)
    # only empty supersteps need no g
    pred = predict(params, run_of([EMPTY, EMPTY, TAIL]))
    for m in MODELS:
        assert pred[m] == pytest.approx((2 * 5.0e5 + 3.0e5) * F + 2 * L_OF[m], rel=1e-12)
    # linreg without g: g const takes the time per word of the largest h measured (the last
    # level's g(h)) and l empty; without levels either it has no prediction
    params_json = copy.deepcopy(PARAMS_JSON)
    params_json["g"]["put/alltoall"]["linreg"] = {"g": None, "l": None}
    pred = predict(Params.from_json(params_json), run_of([PUT]))
    assert pred["g const"] == pytest.approx(1.0e6 * F + 2.4e-9 * 4096 + L_EMPTY, rel=1e-12)
    assert pred["g(h,h*)"] == pytest.approx(1.0e6 * F + EXPECT["g(h,h*)"]["put"], rel=1e-12)
    del params_json["g"]["put/alltoall"]["levels"]
    pred = predict(Params.from_json(params_json), run_of([PUT]))
    assert pred["g const"] is None
    assert pred["g(h,h*)"] == pytest.approx(1.0e6 * F + 1.0e-9 * (4096 + 1500.0 + 20.0 * 16), rel=1e-12)
    # an empty superstep without the probe's l: an error that says so
    with pytest.raises(PredictionError, match="empty sync"):
        predict(Params.from_json({**PARAMS_JSON, "l": {}}), run_of([PUT, EMPTY]))


def test_relative_error() -> None:
    assert relative_error(1.1, 1.0) == pytest.approx(0.1)
    assert relative_error(0.5, 2.0) == pytest.approx(-0.75)
    assert relative_error(None, 1.0) is None and relative_error(1.0, 0.0) is None


# ------------------------------------------------------ one h-relation, per h


def test_levels_follow_a_two_regime_surface_where_one_fit_cannot() -> None:
    pts = grid_points(cache_t, H_GRID, C_GRID)
    levels = level_fits(pts)
    pm = fit_surface(pts).predict
    assert pm is not None
    rng = np.random.default_rng(2024)
    # points between the grid's values of h, in both regimes (not inside the step 2^14 .. 2^15,
    # where no interpolation can know where the step is), and the examples h = 3000, 50000
    hs = [3000, 50000] + [int(v) for v in np.exp(rng.uniform(math.log(70), math.log(2**20), 60))]
    hs = [h for h in hs if not 2**14 < h < 2**15 and h not in H_GRID][:40]
    assert len(hs) >= 30
    lv_err, gl_err = [], []
    for h in hs:
        c = int(rng.integers(1, 65))
        t = cache_t(h, c)
        e_lv = abs(predict_time_levels(levels, h, c) / t - 1)
        e_gl = abs(predict_time(pm, h, c) / t - 1)
        assert e_lv < 0.05, f"per-h prediction at h = {h}, c = {c}: {e_lv:.1%}"
        lv_err.append(e_lv)
        gl_err.append(e_gl)
    assert np.mean(gl_err) > 2 * np.mean(lv_err)
    assert max(gl_err) > 0.5  # one g_inf cannot hold both regimes
    # the example of the upper regime: one fit is far off, the levels are not
    c = 17
    assert abs(predict_time(pm, 50000, c) / cache_t(50000, c) - 1) > 2 * abs(
        predict_time_levels(levels, 50000, c) / cache_t(50000, c) - 1
    )


def test_predict_time_levels_interpolation_and_extrapolation() -> None:
    levels = [
        Level(h=100, A_s=1.0e-6, B_s=2.0e-8, g_h=1.0e-8),
        Level(h=10000, A_s=4.0e-6, B_s=6.0e-8, g_h=4.0e-10),
    ]
    # at a grid value: that level's A + B c (with_o=False: A alone)
    assert predict_time_levels(levels, 100, 5) == pytest.approx(1.0e-6 + 5 * 2.0e-8, rel=1e-12)
    assert predict_time_levels(levels, 10000, 5) == pytest.approx(4.0e-6 + 5 * 6.0e-8, rel=1e-12)
    assert predict_time_levels(levels, 10000, 5, with_o=False) == pytest.approx(4.0e-6, rel=1e-12)
    # half way in log h (h = 1000): A geometric mean, B arithmetic mean
    assert predict_time_levels(levels, 1000, 3) == pytest.approx(2.0e-6 + 3 * 4.0e-8, rel=1e-12)
    # a quarter of the way (h = 10^2.5)
    a = math.exp(0.75 * math.log(1.0e-6) + 0.25 * math.log(4.0e-6))
    assert predict_time_levels(levels, 10**2.5, 0) == pytest.approx(a, rel=1e-12)
    # beyond the largest h: A grows in proportion to h, B stays the largest level's
    for k in (1.5, 2.0, 10.0):
        assert predict_time_levels(levels, k * 10000, 7) == pytest.approx(k * 4.0e-6 + 7 * 6.0e-8, rel=1e-12)
    # below the smallest: the smallest level's A + B c, whatever h
    for h in (1, 10, 99.5):
        assert predict_time_levels(levels, h, 7) == pytest.approx(1.0e-6 + 7 * 2.0e-8, rel=1e-12)
    assert predict_time_levels(levels, 0, 1) is None
    assert predict_time_levels([], 100, 1) is None


def test_fitted_levels_extrapolate_in_proportion_to_h() -> None:
    levels = level_fits(grid_points(cache_t, H_GRID, C_GRID, noise=0.03, seed=3))
    top, bottom = levels[-1], levels[0]
    assert top.h == H_GRID[-1] and bottom.h == H_GRID[0]
    for c in (1, 10):
        p2 = predict_time_levels(levels, 2 * top.h, c)
        p8 = predict_time_levels(levels, 8 * top.h, c)
        assert p2 == pytest.approx(2 * top.A_s + top.B_s * c, rel=1e-12)
        assert p8 - p2 == pytest.approx(6 * top.A_s, rel=1e-9)
        # and that is the upper regime's bandwidth
        assert (p8 - p2) / (6 * top.h) == pytest.approx(1.5e-9, rel=0.03)
        assert predict_time_levels(levels, 10, c) == pytest.approx(bottom.A_s + bottom.B_s * c, rel=1e-12)
        assert predict_time_levels(levels, 1, c) == predict_time_levels(levels, 63, c)
