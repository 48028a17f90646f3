"""Eq. (2.6) fitted per value of h (bspkit.fit.level_fits / predict_time_levels), the machine's
drift during a run dated by the probe's random order (machine_drift / validate), and the
memcpy check, on synthetic data from known truth.

Surfaces are T(h, c) = g_inf (h + h_half + o c): at fixed h that is T = A + B c with
A = g_inf (h + h_half) and B = g_inf o. The raw files for the drift tests are written in the
format of docs/probe-format.md (g and validation records share one random order, `seq`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from bspkit.fit import (
    DRIFT_STABLE,
    DRIFT_WINDOW,
    VALIDATION_THRESHOLD,
    fit_surface,
    level_fits,
    machine_drift,
    memcpy_check,
    model_t,
    predict_time,
    predict_time_levels,
    validate,
)
from bspkit.rawdata import GPoint, RawRun, load_raw, stats
from bspkit.synth import SynthSpec, write_synthetic

TimeFn = Callable[[float, float], float]

G_INF, H_HALF, O = 1.0e-9, 2000.0, 40.0
H_GRID = [2**k for k in range(6, 21)]  # 64 .. 2^20 words
C_GRID = [1, 2, 4, 8, 16, 32, 64]


def truth(h: float, c: float) -> float:
    return float(model_t(h, c, G_INF, H_HALF, O))


def grid_points(fn: TimeFn, hs: list[int], counts: list[int], noise: float = 0.0, seed: int = 0,
                key: str = "put/alltoall") -> list[GPoint]:
    """Grid points at exactly the values h of `hs` (c divides h: h* = h / c), median time fn(h, c)
    (9 samples with lognormal noise, or 3 equal samples without)."""
    rng = np.random.default_rng(seed)
    prim, pat = key.split("/")
    pts = []
    for h in hs:
        for c in counts:
            if c > h or h % c:
                continue
            t = fn(h, c)
            x = t * np.exp(rng.normal(0.0, noise, 9)) if noise else np.full(3, t)
            pts.append(GPoint(prim, pat, h // c, c, h, x, stats(x)))
    return pts


# ------------------------------------------------------------------ level_fits


def test_level_fits_exact_data_gives_A_and_B_per_h() -> None:
    pts = grid_points(truth, H_GRID, C_GRID)
    levels = level_fits(pts)
    assert [v["h"] for v in levels] == H_GRID  # one level per grid value of h, sorted
    for v in levels:
        h = v["h"]
        assert v["points"] == sum(1 for c in C_GRID if c <= h)
        assert v["A_s"] == pytest.approx(G_INF * (h + H_HALF), rel=1e-9)
        assert v["B_s"] == pytest.approx(G_INF * O, rel=1e-6)
        assert v["g_h"] == v["A_s"] / h
        assert v["g_h"] == pytest.approx(G_INF * (1 + H_HALF / h), rel=1e-9)  # eq. (2.5)'s g(h)
        assert v["residual_rel_rms"] < 1e-9


def test_level_fits_with_noise_recover_A_and_B() -> None:
    pts = grid_points(truth, H_GRID, C_GRID, noise=0.03, seed=11)
    levels = level_fits(pts)
    assert [v["h"] for v in levels] == H_GRID
    by_h = {v["h"]: v for v in levels}
    checked_b = 0
    for v in levels:
        h = v["h"]
        a_true, b_true = G_INF * (h + H_HALF), G_INF * O
        assert v["A_s"] == pytest.approx(a_true, rel=0.03), f"h = {h}"
        assert v["g_h"] == v["A_s"] / h
        # B is identifiable only where the messages' cost is a fair part of T
        if b_true * max(c for c in C_GRID if c <= h) >= 0.4 * a_true:
            assert v["B_s"] == pytest.approx(b_true, rel=0.2), f"h = {h}"
            checked_b += 1
        assert v["A_s"] > 0 and v["B_s"] >= 0
    assert checked_b >= 5
    # every grid point's median is reproduced by A + B c of its level
    for p in pts:
        lv = by_h[p.h]
        assert lv["A_s"] + lv["B_s"] * p.count == pytest.approx(p.stats.median, rel=0.06)


def test_level_with_one_count_takes_the_median_and_no_B() -> None:
    """Fewer than 3 points or a single c at one h: A = median time there, B = 0."""
    pts = grid_points(truth, [256], [4]) + grid_points(truth, [1024], [1, 8])
    levels = level_fits(pts)
    assert [v["h"] for v in levels] == [256, 1024]
    assert levels[0]["A_s"] == pytest.approx(truth(256, 4), rel=1e-12)
    assert levels[0]["B_s"] == 0.0 and levels[0]["residual_rel_rms"] is None
    assert levels[1]["A_s"] == pytest.approx((truth(1024, 1) + truth(1024, 8)) / 2, rel=1e-12)
    assert levels[1]["B_s"] == 0.0


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
            assert v["A_s"] > 0 and v["B_s"] >= 0, v
            assert v["g_h"] > 0
            for c in (1, 64, 1000):
                assert predict_time_levels(levels, v["h"] * 1.3, c) > 0


# ------------------------------------------------------ predict_time_levels


def cache_g(h: float) -> float:
    """Two regimes: 0.2 ns/word while the h-relation fits a cache, 1.5 ns/word beyond."""
    return 0.2e-9 if h <= 2**14 else 1.5e-9


def cache_t(h: float, c: float) -> float:
    return cache_g(h) * (h + 500.0 + 30.0 * c)


def test_levels_follow_a_two_regime_surface_where_one_fit_cannot() -> None:
    pts = grid_points(cache_t, H_GRID, C_GRID)
    levels = level_fits(pts)
    pm = fit_surface(pts)["predict"]
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
        predict_time_levels(levels, 50000, c) / cache_t(50000, c) - 1)


def test_predict_time_levels_interpolation_and_extrapolation() -> None:
    levels = [
        {"h": 100, "A_s": 1.0e-6, "B_s": 2.0e-8, "g_h": 1.0e-8},
        {"h": 10000, "A_s": 4.0e-6, "B_s": 6.0e-8, "g_h": 4.0e-10},
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
    assert top["h"] == H_GRID[-1] and bottom["h"] == H_GRID[0]
    for c in (1, 10):
        p2 = predict_time_levels(levels, 2 * top["h"], c)
        p8 = predict_time_levels(levels, 8 * top["h"], c)
        assert p2 == pytest.approx(2 * top["A_s"] + top["B_s"] * c, rel=1e-12)
        assert p8 - p2 == pytest.approx(6 * top["A_s"], rel=1e-9)
        # and that is the upper regime's bandwidth
        assert (p8 - p2) / (6 * top["h"]) == pytest.approx(1.5e-9, rel=0.03)
        assert predict_time_levels(levels, 10, c) == pytest.approx(bottom["A_s"] + bottom["B_s"] * c, rel=1e-12)
        assert predict_time_levels(levels, 1, c) == predict_time_levels(levels, 63, c)


# ------------------------------------------------------------- drift (seq)

DRIFT_KEYS = ("put/alltoall", "get/permutation")
DG, DH, DO = 1.0e-9, 1000.0, 50.0


def drift_t(h: float, c: float) -> float:
    return DG * (h + DH + DO * c)


def write_drift_run(path: Path, slow: tuple[float, float] | None, factor: float = 3.0, noise: float = 0.0,
                    seed: int = 7, n_validation: int = 40) -> tuple[RawRun, int, int, int]:
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
    recs: list[dict] = [{"type": "header", "format": 1, "tool": "bspprobe", "version": "test", "host": "drifthost",
                         "p": 2, "cores": 2, "library": "bspkit", "backend": "threads", "mode": "quick", "seed": seed}]
    for seq, i in enumerate(rng.permutation(n)):
        rtype, key, hs, c = todo[int(i)]
        h = hs * c
        t = drift_t(h, c) * (factor if lo <= seq < hi else 1.0)
        x = t * np.exp(rng.normal(0.0, noise, 7)) if noise else np.full(7, t)
        prim, pat = key.split("/")
        recs.append({"type": rtype, "primitive": prim, "pattern": pat, "msg_words": hs, "count": c, "h": h,
                     "samples_s": [float(v) for v in x], "reps": 7, "warmup": 1, "seq": seq})
    recs.append({"type": "footer", "elapsed_s": 3.0, "loadavg_end": [0.1, 0.1, 0.1], "warnings": []})
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    run = load_raw(path)
    assert run.read_warnings == []
    assert all(p.seq is not None for p in run.g + run.validation)
    assert len(run.validation) == n_validation
    return run, n, lo, hi


def fit_g(run: RawRun) -> dict:
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
    entry = {
        "predict": {"model": "2.6 lsq", "g_inf": 0.1 * u, "h_half": 100.0, "o": 1.0},
        "levels": [{"h": 64, "g_h": 40 * u, "A_s": 64 * 40 * u, "B_s": 0.0},
                   {"h": 4096, "g_h": 0.2 * u, "A_s": 4096 * 0.2 * u, "B_s": 0.0},
                   {"h": 1 << 20, "g_h": 1.5 * u, "A_s": 1.5 * u * (1 << 20), "B_s": 0.0}],
    }
    g = {"put/alltoall": entry,
         "hpput/shift": {**entry, "levels": [{"h": 1 << 18, "g_h": 2.0 * u}]},
         "get/alltoall": {**entry, "levels": [{"h": 1 << 18, "g_h": 100.0 * u}]},
         "put/shift": {**entry, "levels": [{"h": 1 << 18, "g_h": 0.5 * u}]},
         "put/permutation": {"predict": None, "levels": []}}
    rows = {r["key"]: r for r in memcpy_check(g, u)}
    assert set(rows) == {"put/alltoall", "hpput/shift", "put/shift", "put/permutation"}  # put and hpput only
    r = rows["put/alltoall"]
    assert r["h"] == 1 << 20 and r["g_inf"] == 1.5 * u and r["g_inf_global"] == 0.1 * u
    assert r["ratio"] == 1.5 and r["pass"] is True  # the bound itself passes
    assert rows["hpput/shift"]["ratio"] == 2.0 and rows["hpput/shift"]["pass"] is False
    assert rows["put/shift"]["ratio"] == 0.5 and rows["put/shift"]["pass"] is True  # faster than memcpy
    assert rows["put/permutation"]["ratio"] is None and rows["put/permutation"]["pass"] is None
    just_over = {"put/alltoall": {**entry, "levels": [{"h": 1 << 20, "g_h": 1.5 * u * (1 + 1e-9)}]}}
    assert memcpy_check(just_over, u)[0]["pass"] is False
    assert memcpy_check(g, None) == [] and memcpy_check(g, 0.0) == []


def test_memcpy_check_on_a_fitted_two_regime_surface() -> None:
    e = fit_surface(grid_points(cache_t, H_GRID, C_GRID, noise=0.03, seed=4))
    memcpy = 1.2e-9
    (row,) = memcpy_check({"put/alltoall": e}, memcpy)
    top = e["levels"][-1]
    assert row["h"] == H_GRID[-1] and row["g_inf"] == top["g_h"]
    assert row["ratio"] == pytest.approx(top["g_h"] / memcpy, rel=1e-12)
    assert row["ratio"] == pytest.approx(1.5e-9 / memcpy, rel=0.03) and row["pass"] is True
    # the one global fit is dominated by the cache regime: it would look faster than memcpy
    assert row["g_inf_global"] < 0.5 * memcpy
    # slower memory: 1.5 ns/word against a 0.9 ns/word memcpy fails
    (slow,) = memcpy_check({"put/alltoall": e}, 0.9e-9)
    assert slow["ratio"] == pytest.approx(1.5 / 0.9, rel=0.03) and slow["pass"] is False
