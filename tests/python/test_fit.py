"""The fitting code on synthetic data from known parameters (bspkit.model.fit): the thesis' estimators,
the least squares of eq. (2.5)/(2.6) with their intervals, the null rule, eq. (2.6) fitted per
value of h (level_fits), the machine's drift during a run dated by the probe's random order
(machine_drift / validate), the memcpy check, and the raw reader.

Surfaces are T(h, c) = g_inf (h + h_half + o c): at fixed h that is T = A + B c with
A = g_inf (h + h_half) and B = g_inf o. The raw files for the drift tests are written in the
format of docs/probe-format.md (g and validation records share one random order, `seq`)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit.measure.rawdata import RawDataError, RawRun, load_raw, stats
from bspkit.model.comm_models import predict_time_levels
from bspkit.model.estimators import level_fits, lsq_fit, model_t, weighted_estimators
from bspkit.model.fit import fit_run, fit_surface, memcpy_check, prediction_model
from bspkit.model.params import Surface
from bspkit.model.probe_validation import (
    DRIFT_STABLE,
    DRIFT_WINDOW,
    VALIDATION_THRESHOLD,
    machine_drift,
    run_point_visits,
    validate,
)

from synth import (
    C_GRID,
    H_GRID,
    GTruth,
    SynthSpec,
    cache_t,
    grid_points,
    points_from,
    write_synthetic,
)


def run_of(tmp_path: Path, spec: SynthSpec, name: str = "raw.jsonl") -> RawRun:
    return load_raw(write_synthetic(tmp_path / name, spec))


def fitted_file(tmp_path: Path, spec: SynthSpec, name: str = "raw.jsonl") -> dict[str, Any]:
    """The parameter file's JSON object for a synthetic run."""
    return fit_run(run_of(tmp_path, spec, name)).to_json()


def walk_numbers(obj: Any, path: str = ""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk_numbers(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from walk_numbers(v, f"{path}[{i}]")
    else:
        yield path, obj


# ------------------------------------------------------------------ recovery


def test_lsq_recovers_known_parameters_within_ci(tmp_path: Path) -> None:
    spec = SynthSpec(seed=1, noise=0.03)
    params = fitted_file(tmp_path, spec)
    for key, truth in spec.g.items():
        e = params["g"][key]
        assert e["flags"] == [], e["flags"]
        for name, tv, tol in (
            ("g_inf", truth.g_inf, 0.02),
            ("h_half", truth.h_half, 0.05),
            ("o", truth.o, 0.08),
        ):
            v, lo, hi = e["lsq"][name]
            assert lo <= tv <= hi, f"{key} {name}: truth {tv} outside [{lo}, {hi}]"
            assert abs(v / tv - 1) < tol, f"{key} {name}: {v} vs truth {tv}"
            assert lo > 0 and lo < v < hi
        assert e["lsq"]["residual_rel_rms"] < 0.03
        assert e["predict"]["model"] == "2.6 lsq"
        # eq. (2.5) cannot describe per-message overhead: it fits worse
        assert e["lsq_2.5"]["residual_rel_rms"] > e["lsq"]["residual_rel_rms"]
        assert e["error_bspstar"] < e["error_bsp"]


@pytest.mark.slow
def test_confidence_intervals_are_calibrated(tmp_path: Path) -> None:
    """Over 30 noisy data sets the 95 % intervals hold the truth most of the time."""
    hits: dict[tuple[str, str], int] = {}
    n = 30
    for seed in range(n):
        spec = SynthSpec(seed=100 + seed, as_suite=False, validation=0, f={}, l={})
        run = run_of(tmp_path, spec, f"raw{seed}.jsonl")
        for key, truth in spec.g.items():
            e = fit_surface(run.g_points(key))
            for name in ("g_inf", "h_half", "o"):
                t = e.lsq[name]
                ok = t is not None and t[1] <= getattr(truth, name) <= t[2]
                hits[(key, name)] = hits.get((key, name), 0) + int(ok)
    for k, h in hits.items():
        assert h >= 0.8 * n, f"{k}: interval held the truth in only {h} of {n} fits"


def test_exact_data_is_fitted_exactly() -> None:
    g, hh, o = 3e-9, 700.0, 40.0
    pts = points_from(lambda h, c: g * (h + hh + o * c), [1, 8, 64, 512], [1, 4, 16, 64])
    f6 = lsq_fit(pts)
    assert f6["g_inf"][0] == pytest.approx(g, rel=1e-6)
    assert f6["h_half"][0] == pytest.approx(hh, rel=1e-6)
    assert f6["o"][0] == pytest.approx(o, rel=1e-6)
    assert f6["residual_rel_rms"] < 1e-8


def test_weighted_estimators_match_the_thesis_formulas() -> None:
    g, hh, o = 1e-9, 1000.0, 10.0
    hs_list, c_list = [1, 4, 16, 256], [1, 2, 8]
    pts = points_from(lambda h, c: g * (h + hh + o * c), hs_list, c_list)
    est = weighted_estimators(pts)
    gt = np.array([p.g_tilde for p in pts])
    h = np.array([p.h for p in pts], float)
    c = np.array([p.count for p in pts], float)
    hs = np.array([p.msg_words for p in pts], float)
    g_inf = np.sum(gt * h**3) / np.sum(h**3)  # (3.2)
    g_small = np.sum(gt * h**-3.0) / np.sum(h**-3.0)  # (3.3)
    sel = hs == 1
    g_mm = np.sum(gt[sel] * c[sel] ** 2) / np.sum(c[sel] ** 2)  # (3.5)
    assert est["g_inf"] == pytest.approx(g_inf)
    assert est["g_small"] == pytest.approx(g_small)
    assert est["h_half"] == pytest.approx((g_small / g_inf - 1) * 1)  # (3.4), h_min = 1
    assert est["g_mm"] == pytest.approx(g_mm)
    assert est["o"] == pytest.approx((g_mm / g_inf - 1) * 1)  # (3.6), h*_min = 1


def test_weighted_estimators_give_sane_values(tmp_path: Path) -> None:
    spec = SynthSpec(seed=3)
    params = fitted_file(tmp_path, spec)
    for key, truth in spec.g.items():
        e = params["g"][key]
        assert e["g_inf"] == pytest.approx(truth.g_inf, rel=0.05)
        assert truth.g_inf < e["g_small"] and truth.g_inf < e["g_mm"] < e["g_small"]
        assert 0.5 * truth.h_half < e["h_half"] < 1.5 * truth.h_half
        # eq. (3.6) takes g at the smallest message size, where h_half/c adds to o: biased up
        assert truth.o * 0.8 < e["o"] < truth.o + truth.h_half / min(spec.counts[-1], 64) * 2
        assert e["error_bsp"] > 0 and e["error_bspstar"] > 0


def test_linear_regression_and_latency(tmp_path: Path) -> None:
    spec = SynthSpec(seed=4)
    params = fitted_file(tmp_path, spec)
    e = params["g"]["put/alltoall"]
    t = spec.g["put/alltoall"]
    lr = e["linreg"]
    # bspbench's range: one-word messages, h = p..2048 (the grid has c = 2, 8, 32, 128 there)
    assert (lr["msg_words"], lr["h_min"], lr["h_max"], lr["points"]) == (1, 2, 128, 4)
    assert lr["excluded_h"] == [] and lr["range"] == "h* = 1 word(s) per message, 2 <= h <= 2048 (bspbench: p..MAXH)"
    # one word per message, c = h: T = g_inf (h + h_half + o h), slope g_inf (1 + o), intercept g_inf h_half
    assert lr["g"][0] == pytest.approx(t.g_inf * (1 + t.o), rel=0.05)
    assert lr["l"][0] == pytest.approx(t.g_inf * t.h_half, rel=0.1)
    assert not any(f.startswith("linreg") for f in e["flags"])
    for v, truth in spec.l.items():
        assert params["l"][v] == pytest.approx(truth, rel=0.03)
    lo, hi = params["l_detail"]["empty"]["ci"]
    assert lo <= params["l"]["empty"] <= hi
    # l0 and h_half_net: the same fit written T = l0 + g_inf (h + h_half_net + o c)
    q = e["lsq"]
    assert q["l0"][0] == params["l"]["empty"]
    assert q["h_half_net"] == pytest.approx(q["h_half"][0] - q["l0"][0] / q["g_inf"][0])


def test_linear_regression_recovers_l() -> None:
    g, hh, o = 1e-9, 2000.0, 8.0
    pts = points_from(
        lambda h, c: g * (h + hh + o * c),
        [16, 64],
        [1, 2, 4, 8, 16],
        noise=0.01,
        seed=2,
    )
    lr = fit_surface(pts).linreg
    # the smallest message size, h = 16..256 words
    assert lr["msg_words"] == 16 and lr["points"] == 5 and (lr["h_min"], lr["h_max"]) == (16, 256)
    assert lr["g"][1] < g * (1 + o / 16) < lr["g"][2]
    assert lr["l"][1] < g * hh < lr["l"][2]
    assert lr["l"][0] == pytest.approx(g * hh, rel=0.1)


def cache_regimes_t(h_break: int) -> Callable[[float, float], float]:
    """T = l + g h with g three times larger beyond h_break words (the h-relation left a
    cache) and again beyond 64 Ki words; one-word messages cost 0.5 ns more per message."""
    l_s, g1 = 5e-6, 2e-9

    def t(h: float, c: float) -> float:
        g = g1 if h <= h_break else (3 * g1 if h <= 1 << 16 else 8 * g1)
        return l_s + g * h + 0.5e-9 * c

    return t


@pytest.mark.parametrize(
    ("h_break", "h_max", "excluded"),
    [(1 << 14, 2048, []), (2048, 2048, []), (512, 512, [1024, 2048])],
)
def test_g_const_regression_keeps_to_bspbench_range(h_break: int, h_max: int, excluded: list[int]) -> None:
    """Bisseling's T = g h + l recovers g and l where cache regimes lie outside its range
    (h <= 2048) and where one begins inside it (the top points off the line are dropped)."""
    pts = points_from(cache_regimes_t(h_break), [1 << k for k in range(0, 11)], [1 << k for k in range(0, 15)], 0.01, 7)
    e = fit_surface(pts, p=4)
    lr = e.linreg
    assert lr["msg_words"] == 1 and lr["h_min"] == 4 and lr["h_max"] == h_max
    assert lr["excluded_h"] == excluded and lr["points"] == len([h for h in range(2, 12) if 1 << h <= h_max])
    assert lr["g"][0] == pytest.approx(2.5e-9, rel=0.03)  # g1 + the per-message 0.5 ns (c = h)
    assert lr["l"][0] == pytest.approx(5e-6, rel=0.05)
    assert e.bisseling_g_l() == (lr["g"][0], lr["l"][0])
    assert not any(f.startswith("linreg") for f in e.flags)


def test_g_const_regression_needs_three_h_in_range() -> None:
    pts = points_from(lambda h, c: 1e-6 + 1e-9 * h, [4096], [1, 2, 4])
    lr = fit_surface(pts, p=2).linreg
    assert lr["g"] is None and lr["l"] is None
    assert lr["error"] == "fewer than 3 h-relations with h* = 4096 and 4096 <= h <= 2048 in the grid"


def test_f_memcpy_as_validation(tmp_path: Path) -> None:
    spec = SynthSpec(seed=5)
    params = fitted_file(tmp_path, spec)
    for k, (_n, _ops, f) in spec.f.items():
        assert params["f"][k] == pytest.approx(f, rel=0.05)
    assert params["f_average"]["double"] == pytest.approx(1 / np.mean([1 / 4e-10, 1 / 2e-11]), rel=0.05)
    assert params["memcpy_s_per_word"] == pytest.approx(spec.memcpy_s_per_word, rel=0.05)
    chk = params["checks"]["memcpy"]
    assert [c["key"] for c in chk] == ["put/alltoall"]
    assert chk[0]["pass"] is True and chk[0]["ratio"] == pytest.approx(1.0 / 0.8, rel=0.05)
    assert set(params["as"]["tests"]) == {"Empty", "Comp", "Full", "Simple", "Scatter"}
    te = params["as"]["total_exchange"]
    assert te[0]["h"] == spec.p and all(a["h"] * 2 == b["h"] for a, b in itertools.pairwise(te))
    val = params["validation"]
    assert val["used"] + val["skipped"] == spec.validation
    assert val["used"] >= 6
    assert val["pass"] is True and val["mean_abs_rel_error"] < 0.05
    for r in val["points"]:
        hh = params["g"][r["key"]]["predict"]["h_half"]
        assert ("rel_error" in r) == (r["h"] >= hh)


def test_noise_is_reported(tmp_path: Path) -> None:
    spec = SynthSpec(seed=6, outliers=2, extra_header={"loadavg_start": [5.0, 4.0, 3.0]})
    params = fitted_file(tmp_path, spec)
    nz = params["noise"]
    assert nz["g_outliers"] >= 2 * len(spec.msg_words) * len(spec.counts) * len(spec.g)
    assert any("load average 5.00 > 2 cores" in w for w in nz["warnings"])
    assert any("1.5 IQR" in w for w in nz["warnings"])
    # medians and the robust loss keep the fit close despite 2 spikes of 20x in 9 samples
    e = params["g"]["put/alltoall"]
    assert e["lsq"]["g_inf"][0] == pytest.approx(1e-9, rel=0.05)


# ------------------------------------------------------------- the null rule


def test_negative_g_is_flagged_not_reported() -> None:
    # time falls with h: any g would be negative
    pts = points_from(lambda h, c: 1e-3 - 1e-9 * h, [1, 16, 256, 4096], [1, 4, 16])
    e = fit_surface(pts)
    # the weighted mean of g~ = T/h cannot be negative; the least-squares fits show the problem
    assert e.lsq["g_inf"] is None and e.lsq_25["g_inf"] is None
    assert any(f.startswith("lsq (2.6) g_inf") for f in e.flags)
    assert e.linreg["g"] is None
    assert e.predict is None


def test_negative_h_half_is_flagged() -> None:
    pts = points_from(
        lambda h, c: 1e-9 * (h - 500 + 5 * c),
        [1024, 2048, 4096],
        [1, 2, 4, 8],
        noise=0.002,
    )
    e = fit_surface(pts)
    assert e.lsq["h_half"] is None
    assert any(f.startswith("lsq (2.6) h_half") and "negative" in f for f in e.flags)
    assert e.lsq["g_inf"] is not None  # the rest is still reported


def test_o_interval_spanning_zero_is_flagged_and_model_falls_back() -> None:
    pts = points_from(
        lambda h, c: 1e-9 * (h + 800),
        [1, 8, 64, 512],
        [1, 4, 16, 64],
        noise=0.03,
        seed=11,
    )
    e = fit_surface(pts)
    assert e.lsq["o"] is None
    assert any(f.startswith("lsq (2.6) o") and ("spans zero" in f or "negative" in f) for f in e.flags)
    assert e.predict is not None and e.predict.model == "2.5 lsq" and e.predict.o == 0.0
    assert e.predict.g_inf == pytest.approx(1e-9, rel=0.05)


def test_prediction_model_order_of_fallbacks() -> None:
    """(2.6) with a significant o, else (2.5), else (2.6)'s g_inf with o as 0, else eq. 3.2
    only where no least-squares fit could be made; CI once saw (2.5)'s g_inf span zero while
    (2.6)'s did not, and the surface had no prediction at all."""
    g6, g5, hh, o = [2e-9, 1e-10, 3e-9], [3e-9, 1e-10, 4e-9], [50.0, 10.0, 90.0], [7.0, 1.0, 9.0]
    full = prediction_model({"lsq": {"g_inf": g6, "h_half": hh, "o": o}, "lsq_2.5": {"g_inf": g5}})
    assert full is not None and (full.model, full.g_inf, full.o) == ("2.6 lsq", 2e-9, 7.0)
    no_o = prediction_model({"lsq": {"g_inf": g6, "h_half": hh, "o": None}, "lsq_2.5": {"g_inf": g5}})
    assert no_o is not None and (no_o.model, no_o.g_inf, no_o.h_half) == ("2.5 lsq", 3e-9, 0.0)
    only6 = prediction_model({"lsq": {"g_inf": g6, "h_half": hh, "o": None}, "lsq_2.5": {"g_inf": None}})
    assert only6 is not None and (only6.model, only6.g_inf, only6.h_half, only6.o) == ("2.6 lsq", 2e-9, 50.0, 0.0)
    insignificant = {"g_inf": 1e-9, "lsq": {"g_inf": None}, "lsq_2.5": {"g_inf": None}}
    assert prediction_model(insignificant) is None
    too_few = {"g_inf": 1e-9, "lsq": {"g_inf": None, "error": "too few"}, "lsq_2.5": {"error": "too few"}}
    fallback = prediction_model(too_few)
    assert fallback is not None and fallback.model == "2.6 eq. 3.2-3.6"


def test_ill_posed_grid_is_flagged() -> None:
    pts = points_from(lambda h, c: 1e-9 * (h + 100 + 3 * c), [64], [4])  # one point
    e = fit_surface(pts)
    assert e.lsq["g_inf"] is None and e.lsq["h_half"] is None and e.lsq["o"] is None
    assert any("too few grid points" in f for f in e.flags)
    pts = points_from(lambda h, c: 1e-9 * (h + 100 + 3 * c), [1, 4, 16, 64, 256], [4])  # one c only
    e = fit_surface(pts)
    assert e.lsq["o"] is None
    assert any("varies too little" in f for f in e.flags)


def test_parameter_file_never_holds_a_negative_parameter(tmp_path: Path) -> None:
    spec = SynthSpec(
        seed=7,
        g={
            "put/alltoall": GTruth(1e-9, 2000.0, 0.0),  # o = 0: interval spans zero
            "get/permutation": GTruth(2e-9, 50.0, 3.0),
        },
        noise=0.05,
    )
    params = fitted_file(tmp_path, spec)
    json.dumps(params, allow_nan=False)
    names = {
        "g_inf",
        "g_small",
        "g_mm",
        "h_half",
        "o",
        "o_eq31",
        "g",
        "l",
        "l0",
        "h_half_net",
    }
    for path, v in walk_numbers(params):
        leaf = path.rsplit("/", 1)[-1].split("[")[0]
        if leaf in names and isinstance(v, (int, float)) and not path.endswith(("[1]", "[2]")):
            assert v >= 0, f"{path} = {v}"
    for key, e in params["g"].items():
        for name in ("g_inf", "h_half", "o"):
            t = e["lsq"][name]
            assert t is None or (t[0] > 0 and t[1] > 0), f"{key} lsq {name} = {t}"
    assert params["g"]["put/alltoall"]["lsq"]["o"] is None


# ------------------------------------------------------- the default spec, whole files


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lsq_recovers_known_parameters_within_its_intervals(tmp_path: Path, seed: int) -> None:
    truth = {
        "put/alltoall": GTruth(1.0e-9, 2000.0, 16.0),
        "get/permutation": GTruth(2.0e-9, 800.0, 120.0),
    }
    params = fitted_file(tmp_path, SynthSpec(g=truth, seed=seed))
    for key, t in truth.items():
        lsq = params["g"][key]["lsq"]
        for name, value in (("g_inf", t.g_inf), ("h_half", t.h_half), ("o", t.o)):
            est, lo, hi = lsq[name]
            assert lo <= value <= hi, f"{key} {name}: truth {value} outside [{lo}, {hi}]"
            assert abs(est - value) <= 0.05 * value, f"{key} {name}: {est} vs {value}"


def test_weighted_estimators_and_validation_on_the_default_spec(tmp_path: Path) -> None:
    params = fitted_file(tmp_path, SynthSpec())
    g = params["g"]["put/alltoall"]
    # eq. (3.2) weights large h: close to g_inf; eq. (3.3) small h: far above it.
    assert 0.9e-9 < g["g_inf"] < 1.2e-9
    assert g["g_small"] > 100 * g["g_inf"]
    assert g["h_half"] > 0 and g["o"] > 0
    text = json.dumps(params["validation"])
    assert '"pass": true' in text.lower() or "PASS" in text


def test_negative_h_half_of_a_whole_file_is_flagged_not_reported(
    tmp_path: Path,
) -> None:
    # g~ falling with h faster than the model allows: h_half would come out negative.
    bad = {"put/alltoall": GTruth(1.0e-9, -900.0, 0.0)}
    params = fitted_file(tmp_path, SynthSpec(g=bad, validation=0))
    entry = params["g"]["put/alltoall"]
    h_half = entry["lsq"]["h_half"]
    assert h_half is None or h_half[0] is None, f"negative h_half reported: {h_half}"
    assert "h_half" in json.dumps(entry.get("flags", []))


# ---------------------------------------------------------------- per value of h

G_INF, H_HALF, O = 1.0e-9, 2000.0, 40.0


def truth(h: float, c: float) -> float:
    return float(model_t(h, c, G_INF, H_HALF, O))


def test_level_fits_exact_data_gives_A_and_B_per_h() -> None:
    pts = grid_points(truth, H_GRID, C_GRID)
    levels = level_fits(pts)
    assert [v.h for v in levels] == H_GRID  # one level per grid value of h, sorted
    for v in levels:
        h = v.h
        assert v.points == sum(1 for c in C_GRID if c <= h)
        assert v.A_s == pytest.approx(G_INF * (h + H_HALF), rel=1e-9)
        assert v.B_s == pytest.approx(G_INF * O, rel=1e-6)
        assert v.g_h == v.A_s / h
        assert v.g_h == pytest.approx(G_INF * (1 + H_HALF / h), rel=1e-9)  # eq. (2.5)'s g(h)
        assert v.residual_rel_rms < 1e-9


def test_level_fits_with_noise_recover_A_and_B() -> None:
    pts = grid_points(truth, H_GRID, C_GRID, noise=0.03, seed=11)
    levels = level_fits(pts)
    assert [v.h for v in levels] == H_GRID
    by_h = {v.h: v for v in levels}
    checked_b = 0
    for v in levels:
        h = v.h
        a_true, b_true = G_INF * (h + H_HALF), G_INF * O
        assert v.A_s == pytest.approx(a_true, rel=0.03), f"h = {h}"
        assert v.g_h == v.A_s / h
        # B is identifiable only where the messages' cost is a fair part of T
        if b_true * max(c for c in C_GRID if c <= h) >= 0.4 * a_true:
            assert v.B_s == pytest.approx(b_true, rel=0.2), f"h = {h}"
            checked_b += 1
        assert v.A_s > 0 and v.B_s >= 0
    assert checked_b >= 5
    # every grid point's median is reproduced by A + B c of its level
    for p in pts:
        lv = by_h[p.h]
        assert lv.A_s + lv.B_s * p.count == pytest.approx(p.stats.median, rel=0.06)


def test_level_with_one_count_takes_the_median_and_no_B() -> None:
    """Fewer than 3 points or a single c at one h: A = median time there, B = 0."""
    pts = grid_points(truth, [256], [4]) + grid_points(truth, [1024], [1, 8])
    levels = level_fits(pts)
    assert [v.h for v in levels] == [256, 1024]
    assert levels[0].A_s == pytest.approx(truth(256, 4), rel=1e-12)
    assert levels[0].B_s == 0.0 and levels[0].residual_rel_rms is None
    assert levels[1].A_s == pytest.approx((truth(1024, 1) + truth(1024, 8)) / 2, rel=1e-12)
    assert levels[1].B_s == 0.0


def test_level_fits_never_negative_on_noisy_data() -> None:
    """Surfaces whose true A or B is 0, with 20 % noise: an unconstrained per-h fit would give
    negative values; level_fits keeps A > 0 (a level with A = 0 is dropped) and B >= 0."""

    def pure_msgs(h: float, c: float) -> float:
        return 1e-7 * c  # T = B c: A = 0

    def no_o(h: float, c: float) -> float:
        return 1e-9 * (h + 100.0)  # T = A: B = 0

    for fn in (pure_msgs, no_o):
        pts = grid_points(fn, H_GRID, C_GRID, noise=0.2, seed=5)
        # the unconstrained least squares of T = A + B c per h does go negative here
        neg = 0
        for h in H_GRID:
            sel = [p for p in pts if p.h == h]
            c = np.array([p.count for p in sel], dtype=float)
            t = np.array([p.stats.median for p in sel])
            a, b = np.linalg.lstsq(np.column_stack([np.ones_like(c), c]), t, rcond=None)[0]
            neg += int(a < 0) + int(b < 0)
        assert neg >= 2, "the data do not exercise the bound"
        levels = level_fits(pts)
        assert levels
        for v in levels:
            assert v.A_s > 0 and v.B_s >= 0, v
            assert v.g_h > 0
            for c in (1, 64, 1000):
                assert predict_time_levels(levels, v.h * 1.3, c) > 0


# ------------------------------------------------------------- drift (seq)

DRIFT_KEYS = ("put/alltoall", "get/permutation")
DG, DH, DO = 1.0e-9, 1000.0, 50.0


def drift_t(h: float, c: float) -> float:
    return DG * (h + DH + DO * c)


def write_drift_run(
    path: Path,
    slow: tuple[float, float] | None,
    factor: float = 3.0,
    noise: float = 0.0,
    seed: int = 7,
    n_validation: int = 40,
) -> tuple[RawRun, int, int, int]:
    """A raw file (header, g and validation records with seq, footer) whose grid and validation
    points are measured in one random order; the points with seq in [lo, hi) (the share `slow`
    of the run) took `factor` times the model's time. Returns (run, points, lo, hi)."""
    rng = np.random.default_rng(seed)
    todo: list[tuple[str, str, int, int]] = []
    for key in DRIFT_KEYS:
        for k in range(4, 21):
            h = 2**k
            for c in (1, 2, 4, 8, 16, 32, 64, 128):
                if c <= h:
                    todo.append(("g", key, h // c, c))
    for i in range(n_validation):
        while True:  # random h* and c (not powers of two), 4096 <= h <= 2^20 as bspprobe
            hs, c = int(rng.integers(3, 3000)), int(rng.integers(3, 100))
            if 4096 <= hs * c <= 2**20:
                break
        todo.append(("validation", DRIFT_KEYS[i % 2], hs, c))
    n = len(todo)
    lo, hi = (int(slow[0] * n), int(slow[1] * n)) if slow else (n, n)
    recs: list[dict] = [
        {
            "type": "header",
            "format": 1,
            "tool": "bspprobe",
            "version": "test",
            "host": "drifthost",
            "p": 2,
            "cores": 2,
            "library": "bspkit",
            "backend": "threads",
            "mode": "quick",
            "seed": seed,
        }
    ]
    for seq, i in enumerate(rng.permutation(n)):
        rtype, key, hs, c = todo[int(i)]
        h = hs * c
        t = drift_t(h, c) * (factor if lo <= seq < hi else 1.0)
        x = t * np.exp(rng.normal(0.0, noise, 7)) if noise else np.full(7, t)
        prim, pat = key.split("/")
        recs.append(
            {
                "type": rtype,
                "primitive": prim,
                "pattern": pat,
                "msg_words": hs,
                "count": c,
                "h": h,
                "samples_s": [float(v) for v in x],
                "reps": 7,
                "warmup": 1,
                "seq": seq,
            }
        )
    recs.append(
        {
            "type": "footer",
            "elapsed_s": 3.0,
            "loadavg_end": [0.1, 0.1, 0.1],
            "warnings": [],
        }
    )
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    run = load_raw(path)
    assert run.read_warnings == []
    assert all(p.seq is not None for p in run.g + run.validation)
    assert len(run.validation) == n_validation
    return run, n, lo, hi


def fit_g(run: RawRun) -> dict[str, Surface]:
    return {key: fit_surface(run.g_points(key)) for key in run.g_keys()}


def test_machine_drift_finds_a_slow_middle_range(tmp_path: Path) -> None:
    run, n, lo, hi = write_drift_run(tmp_path / "raw.jsonl", slow=(0.35, 0.60))
    g = fit_g(run)
    curve, factor_at = machine_drift(run, g)
    assert len(curve) >= 100
    assert [s for s, _f in curve] == sorted(s for s, _f in curve)
    m = 12  # seqs next to the range's ends see both states in their window
    inside = [f for s, f in curve if lo + m <= s < hi - m]
    outside = [f for s, f in curve if s < lo - m or s >= hi + m]
    assert len(inside) >= 20 and len(outside) >= 50
    for f in inside:
        assert 2.5 < f < 3.3
    for f in outside:
        assert 0.95 < f < 1.05
    assert factor_at((lo + hi) // 2) == pytest.approx(3.0, rel=0.1)
    assert factor_at(0) == pytest.approx(1.0, abs=0.05)
    assert factor_at(n - 1) == pytest.approx(1.0, abs=0.05)
    assert factor_at(None) is None


def test_validate_tells_drift_from_model_error(tmp_path: Path) -> None:
    run, n, lo, hi = write_drift_run(tmp_path / "raw.jsonl", slow=(0.35, 0.60))
    v = validate(run, fit_g(run))
    assert v["used"] == 40 and v["skipped"] == 0
    d = v["drift"]
    assert d["window"] == DRIFT_WINDOW
    assert d["share_off"] == pytest.approx((hi - lo) / n, abs=0.06)
    assert d["max_factor"] == pytest.approx(3.0, rel=0.1)
    assert d["min_factor"] == pytest.approx(1.0, abs=0.05)
    m = 12
    slow_rows = [r for r in v["points"] if lo <= r["seq"] < hi]
    fast_rows = [r for r in v["points"] if not lo <= r["seq"] < hi]
    assert len(slow_rows) >= 5 and len(fast_rows) >= 20
    for r in slow_rows:
        # predicted from the grid's (robust) fit: a third of what was measured
        assert r["rel_error"] == pytest.approx(-2 / 3, abs=0.05)
        assert r["pass"] is False
        if lo + m <= r["seq"] < hi - m:
            assert r["drift_factor"] > DRIFT_STABLE
    for r in fast_rows:
        assert abs(r["rel_error"]) < VALIDATION_THRESHOLD
        if r["seq"] < lo - m or r["seq"] >= hi + m:
            assert 1 / DRIFT_STABLE <= r["drift_factor"] <= DRIFT_STABLE
    # the check over all points fails; over the points measured in the fit's state it passes
    assert v["mean_abs_rel_error"] > VALIDATION_THRESHOLD and v["pass"] is False
    st = v["stable_state"]
    assert st["factor_bound"] == DRIFT_STABLE
    assert len(fast_rows) - 2 <= st["points"] <= len(fast_rows)
    assert st["mean_abs_rel_error"] < 0.05 and st["pass"] is True
    assert st["within_threshold"] == st["points"]


def test_no_drift_share_off_zero_and_validation_passes(tmp_path: Path) -> None:
    run, _n, _lo, _hi = write_drift_run(tmp_path / "raw.jsonl", slow=None, noise=0.03, seed=8)
    v = validate(run, fit_g(run))
    d = v["drift"]
    assert d["curve"] and d["share_off"] == 0
    assert 1 / DRIFT_STABLE < d["min_factor"] <= d["max_factor"] < DRIFT_STABLE
    assert v["used"] == 40
    assert v["pass"] is True and v["mean_abs_rel_error"] < 0.05
    assert v["stable_state"]["points"] == v["used"]
    assert v["stable_state"]["mean_abs_rel_error"] == pytest.approx(v["mean_abs_rel_error"])
    for r in v["points"]:
        assert r["pass"] is True and abs(r["drift_factor"] - 1) < 0.1


def test_drift_needs_seq_and_enough_points(tmp_path: Path) -> None:
    # synthetic files without seq: no curve, no factor, no stable-state check
    run = load_raw(write_synthetic(tmp_path / "noseq.jsonl", SynthSpec(seed=2)))
    assert all(p.seq is None for p in run.g)
    v = validate(run, fit_g(run))
    assert v["used"] > 0
    assert v["drift"]["curve"] == [] and v["drift"]["share_off"] is None
    assert all(r["drift_factor"] is None for r in v["points"])
    assert v["stable_state"]["points"] == 0 and v["stable_state"]["pass"] is None
    # fewer than 2 * DRIFT_WINDOW dated grid points: no curve either
    small = RawRun(path=tmp_path / "x", header={"format": 1})
    small.g = grid_points(drift_t, [2**k for k in range(4, 16)], [1, 2, 4, 8, 16, 32], key="put/alltoall")
    for i, p in enumerate(small.g):
        p.seq = i
    assert len(small.g) < 2 * DRIFT_WINDOW
    curve, factor_at = machine_drift(small, fit_g(small))
    assert curve == [] and factor_at(3) is None


# ------------------------------------------------------------------ memcpy


def test_memcpy_check_uses_the_largest_h() -> None:
    u = 2.0**-30  # exact binary fractions: the ratio 1.5 is exactly 1.5

    def level(h: int, g_h: float) -> dict[str, float]:
        return {"h": h, "g_h": g_h, "A_s": h * g_h, "B_s": 0.0}

    entry = {
        "predict": {"model": "2.6 lsq", "g_inf": 0.1 * u, "h_half": 100.0, "o": 1.0},
        "levels": [level(64, 40 * u), level(4096, 0.2 * u), level(1 << 20, 1.5 * u)],
    }
    g_json = {
        "put/alltoall": entry,
        "hpput/shift": {**entry, "levels": [level(1 << 18, 2.0 * u)]},
        "get/alltoall": {**entry, "levels": [level(1 << 18, 100.0 * u)]},
        "put/shift": {**entry, "levels": [level(1 << 18, 0.5 * u)]},
        "put/permutation": {"predict": None, "levels": []},
    }
    g = {k: Surface.from_json(e) for k, e in g_json.items()}
    rows = {r["key"]: r for r in memcpy_check(g, u)}
    assert set(rows) == {
        "put/alltoall",
        "hpput/shift",
        "put/shift",
        "put/permutation",
    }  # put and hpput only
    r = rows["put/alltoall"]
    assert r["h"] == 1 << 20 and r["g_inf"] == 1.5 * u and r["g_inf_global"] == 0.1 * u
    assert r["ratio"] == 1.5 and r["pass"] is True  # the bound itself passes
    assert rows["hpput/shift"]["ratio"] == 2.0 and rows["hpput/shift"]["pass"] is False
    assert rows["put/shift"]["ratio"] == 0.5 and rows["put/shift"]["pass"] is True  # faster than memcpy
    assert rows["put/permutation"]["ratio"] is None and rows["put/permutation"]["pass"] is None
    just_over = {"put/alltoall": Surface.from_json({**entry, "levels": [level(1 << 20, 1.5 * u * (1 + 1e-9))]})}
    assert memcpy_check(just_over, u)[0]["pass"] is False
    assert memcpy_check(g, None) == [] and memcpy_check(g, 0.0) == []


def test_memcpy_check_on_a_fitted_two_regime_surface() -> None:
    e = fit_surface(grid_points(cache_t, H_GRID, C_GRID, noise=0.03, seed=4))
    memcpy = 1.2e-9
    (row,) = memcpy_check({"put/alltoall": e}, memcpy)
    top = e.levels[-1]
    assert row["h"] == H_GRID[-1] and row["g_inf"] == top.g_h
    assert row["ratio"] == pytest.approx(top.g_h / memcpy, rel=1e-12)
    assert row["ratio"] == pytest.approx(1.5e-9 / memcpy, rel=0.03) and row["pass"] is True
    # the one global fit is dominated by the cache regime: it would look faster than memcpy
    assert row["g_inf_global"] < 0.5 * memcpy
    # slower memory: 1.5 ns/word against a 0.9 ns/word memcpy fails
    (slow,) = memcpy_check({"put/alltoall": e}, 0.9e-9)
    assert slow["ratio"] == pytest.approx(1.5 / 0.9, rel=0.03) and slow["pass"] is False


# ------------------------------------------------------------------ raw files


def test_raw_reader_errors_and_truncation(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "raw.jsonl", SynthSpec(validation=0, as_suite=False))
    lines = raw.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:15] + "\n")
    run = load_raw(cut)
    assert any("cut short" in w for w in run.read_warnings)
    assert any("no footer" in w for w in run.read_warnings)
    assert fit_run(run).noise["warnings"]
    bad = tmp_path / "bad.jsonl"
    rec = json.loads(lines[5])
    del rec["samples_s"]
    bad.write_text("\n".join(lines[:5] + [json.dumps(rec)] + lines[6:]) + "\n")
    with pytest.raises(RawDataError, match=r"bad.jsonl:6: .* without samples_s"):
        load_raw(bad)
    fmt = tmp_path / "fmt.jsonl"
    fmt.write_text(lines[0].replace('"format": 1', '"format": 9') + "\n")
    with pytest.raises(
        RawDataError, match=r"raw format 9 \(written by bspkit .*\) is not supported: this bspkit .* reads raw format 1"
    ):
        load_raw(fmt)
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(lines[0] + '\n{"type": "future_thing", "x": 1}\n' + "\n".join(lines[1:]) + "\n")
    assert len(load_raw(unknown).g) == len(load_raw(raw).g)


def test_stats_outliers() -> None:
    st = stats([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 5.0])
    assert st.median == 1.0 and st.outliers == 1 and st.n == 7
    assert math.isclose(st.spread, (st.q3 - st.q1) / st.median)


def test_calibration_rounds_among_the_points_calibrate_the_validation(tmp_path: Path) -> None:
    """bspprobe's calibration rounds (issue 17) measured in the slow range see it: the
    validation points there, predicted x3 by the g drift around them, pass; the points whose
    rounds before and after differ are flagged and left out."""
    path = tmp_path / "raw.jsonl"
    run, n, lo, hi = write_drift_run(path, slow=(0.35, 0.60))
    rounds = [n * k // 10 for k in range(11)]
    with path.open("a", encoding="utf-8") as fh:
        for r, seq in enumerate(rounds):
            factor = 3.0 if lo <= seq < hi else 1.0
            g = [
                {
                    "primitive": "put",
                    "pattern": "alltoall",
                    "msg_words": hs,
                    "count": c,
                    "h": hs * c,
                    "samples_s": [drift_t(hs * c, c) * factor] * 5,
                }
                for hs, c in ((256, 8), (4096, 64))
            ]
            fh.write(json.dumps({"type": "calibration", "round": r, "seq": seq, "t_s": r, "f": [], "g": g, "l": []}))
            fh.write("\n")
    run = load_raw(path)
    assert len(run.calibration) == 11
    g = fit_g(run)
    v = validate(run, g)
    cal = v["calibrated"]
    assert [r["seq"] for r in cal["rounds"]] == rounds
    assert v["mean_abs_rel_error"] > VALIDATION_THRESHOLD  # raw: the slow range misses by 2/3
    assert cal["flagged"] >= 1 and cal["mean_abs_rel_error"] < 0.05 and cal["pass"] is True
    for row in v["points"]:
        c = row["calibrated"]
        inside = all(lo <= s < hi for s in run_point_visits(run, row))
        if inside and not c["flagged"]:
            assert c["g_drift"] == pytest.approx(3.0, rel=0.05)
    # without rounds: no calibrated check
    run2, *_ = write_drift_run(tmp_path / "plain.jsonl", slow=None)
    assert "calibrated" not in validate(run2, fit_g(run2))
