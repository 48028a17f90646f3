"""The fitting code on synthetic data from known parameters (bspkit.fit)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit.fit import fit_run, fit_surface, lsq_fit, weighted_estimators
from bspkit.rawdata import GPoint, RawDataError, load_raw, stats
from bspkit.synth import GTruth, SynthSpec, write_synthetic


def points_from(fn: Any, msg_words: list[int], counts: list[int], noise: float = 0.0, seed: int = 0) -> list[GPoint]:
    """Grid points whose median time is fn(h, c) (times lognormal noise)."""
    rng = np.random.default_rng(seed)
    pts = []
    for hs in msg_words:
        for c in counts:
            t = fn(hs * c, c) * np.exp(rng.normal(0, noise, 9)) if noise else np.full(3, fn(hs * c, c))
            pts.append(GPoint("put", "alltoall", hs, c, hs * c, t, stats(t)))
    return pts


def run_of(tmp_path: Path, spec: SynthSpec, name: str = "raw.jsonl"):
    return load_raw(write_synthetic(tmp_path / name, spec))


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
    params = fit_run(run_of(tmp_path, spec))
    for key, truth in spec.g.items():
        e = params["g"][key]
        assert e["flags"] == [], e["flags"]
        for name, tv, tol in (("g_inf", truth.g_inf, 0.02), ("h_half", truth.h_half, 0.05), ("o", truth.o, 0.08)):
            v, lo, hi = e["lsq"][name]
            assert lo <= tv <= hi, f"{key} {name}: truth {tv} outside [{lo}, {hi}]"
            assert abs(v / tv - 1) < tol, f"{key} {name}: {v} vs truth {tv}"
            assert lo > 0 and lo < v < hi
        assert e["lsq"]["residual_rel_rms"] < 0.03
        assert e["predict"]["model"] == "2.6 lsq"
        # eq. (2.5) cannot describe per-message overhead: it fits worse
        assert e["lsq_2.5"]["residual_rel_rms"] > e["lsq"]["residual_rel_rms"]
        assert e["error_bspstar"] < e["error_bsp"]


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
                t = e["lsq"][name]
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
    params = fit_run(run_of(tmp_path, spec))
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
    params = fit_run(run_of(tmp_path, spec))
    e = params["g"]["put/alltoall"]
    t = spec.g["put/alltoall"]
    lr = e["linreg"]
    assert lr["msg_words"] == max(spec.msg_words)
    # T = g h + l at fixed h*: slope g_inf (1 + o/h*), intercept g_inf h_half
    assert lr["g"][0] == pytest.approx(t.g_inf * (1 + t.o / lr["msg_words"]), rel=0.03)
    # l = g_inf h_half = 2 us is tiny next to T at h = 4096 x 128 words: not significant
    assert lr["l"] is None
    assert any(f.startswith("linreg l:") and "spans zero" in f for f in e["flags"])
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
    pts = points_from(lambda h, c: g * (h + hh + o * c), [16, 64], [1, 2, 4, 8, 16], noise=0.01, seed=2)
    lr = fit_surface(pts)["linreg"]
    assert lr["msg_words"] == 64 and lr["points"] == 5
    assert lr["g"][1] < g * (1 + o / 64) < lr["g"][2]
    assert lr["l"][1] < g * hh < lr["l"][2]
    assert lr["l"][0] == pytest.approx(g * hh, rel=0.1)


def test_f_memcpy_as_validation(tmp_path: Path) -> None:
    spec = SynthSpec(seed=5)
    params = fit_run(run_of(tmp_path, spec))
    for k, (_n, _ops, f) in spec.f.items():
        assert params["f"][k] == pytest.approx(f, rel=0.05)
    assert params["f_average"]["double"] == pytest.approx(1 / np.mean([1 / 4e-10, 1 / 2e-11]), rel=0.05)
    assert params["memcpy_s_per_word"] == pytest.approx(spec.memcpy_s_per_word, rel=0.05)
    chk = params["checks"]["memcpy"]
    assert [c["key"] for c in chk] == ["put/alltoall"]
    assert chk[0]["pass"] is True and chk[0]["ratio"] == pytest.approx(1.0 / 0.8, rel=0.05)
    assert set(params["as"]["tests"]) == {"Empty", "Comp", "Full", "Simple", "Scatter"}
    te = params["as"]["total_exchange"]
    assert te[0]["h"] == spec.p and all(a["h"] * 2 == b["h"] for a, b in zip(te, te[1:]))
    val = params["validation"]
    assert val["used"] + val["skipped"] == spec.validation
    assert val["used"] >= 6
    assert val["pass"] is True and val["mean_abs_rel_error"] < 0.05
    for r in val["points"]:
        hh = params["g"][r["key"]]["predict"]["h_half"]
        assert ("rel_error" in r) == (r["h"] >= hh)


def test_noise_is_reported(tmp_path: Path) -> None:
    spec = SynthSpec(seed=6, outliers=2, extra_header={"loadavg_start": [5.0, 4.0, 3.0]})
    params = fit_run(run_of(tmp_path, spec))
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
    assert e["lsq"]["g_inf"] is None and e["lsq_2.5"]["g_inf"] is None
    assert any(f.startswith("lsq (2.6) g_inf") for f in e["flags"])
    assert e["linreg"]["g"] is None
    assert e["predict"] is None


def test_negative_h_half_is_flagged() -> None:
    pts = points_from(lambda h, c: 1e-9 * (h - 500 + 5 * c), [1024, 2048, 4096], [1, 2, 4, 8], noise=0.002)
    e = fit_surface(pts)
    assert e["lsq"]["h_half"] is None
    assert any(f.startswith("lsq (2.6) h_half") and "negative" in f for f in e["flags"])
    assert e["lsq"]["g_inf"] is not None  # the rest is still reported


def test_o_interval_spanning_zero_is_flagged_and_model_falls_back() -> None:
    pts = points_from(lambda h, c: 1e-9 * (h + 800), [1, 8, 64, 512], [1, 4, 16, 64], noise=0.03, seed=11)
    e = fit_surface(pts)
    assert e["lsq"]["o"] is None
    assert any(f.startswith("lsq (2.6) o") and ("spans zero" in f or "negative" in f) for f in e["flags"])
    assert e["predict"]["model"] == "2.5 lsq" and e["predict"]["o"] == 0.0
    assert e["predict"]["g_inf"] == pytest.approx(1e-9, rel=0.05)


def test_ill_posed_grid_is_flagged() -> None:
    pts = points_from(lambda h, c: 1e-9 * (h + 100 + 3 * c), [64], [4])  # one point
    e = fit_surface(pts)
    assert e["lsq"]["g_inf"] is None and e["lsq"]["h_half"] is None and e["lsq"]["o"] is None
    assert any("too few grid points" in f for f in e["flags"])
    pts = points_from(lambda h, c: 1e-9 * (h + 100 + 3 * c), [1, 4, 16, 64, 256], [4])  # one c only
    e = fit_surface(pts)
    assert e["lsq"]["o"] is None
    assert any("varies too little" in f for f in e["flags"])


def test_parameter_file_never_holds_a_negative_parameter(tmp_path: Path) -> None:
    spec = SynthSpec(
        seed=7,
        g={
            "put/alltoall": GTruth(1e-9, 2000.0, 0.0),  # o = 0: interval spans zero
            "get/permutation": GTruth(2e-9, 50.0, 3.0),
        },
        noise=0.05,
    )
    params = fit_run(run_of(tmp_path, spec))
    json.dumps(params, allow_nan=False)
    names = {"g_inf", "g_small", "g_mm", "h_half", "o", "o_eq31", "g", "l", "l0", "h_half_net"}
    for path, v in walk_numbers(params):
        leaf = path.rsplit("/", 1)[-1].split("[")[0]
        if leaf in names and isinstance(v, (int, float)) and not path.endswith(("[1]", "[2]")):
            assert v >= 0, f"{path} = {v}"
    for key, e in params["g"].items():
        for name in ("g_inf", "h_half", "o"):
            t = e["lsq"][name]
            assert t is None or (t[0] > 0 and t[1] > 0), f"{key} lsq {name} = {t}"
    assert params["g"]["put/alltoall"]["lsq"]["o"] is None


# ------------------------------------------------------------------ raw files


def test_raw_reader_errors_and_truncation(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "raw.jsonl", SynthSpec(validation=0, as_suite=False))
    lines = raw.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:15] + "\n")
    run = load_raw(cut)
    assert any("cut short" in w for w in run.read_warnings)
    assert any("no footer" in w for w in run.read_warnings)
    assert fit_run(run)["noise"]["warnings"]
    bad = tmp_path / "bad.jsonl"
    rec = json.loads(lines[5])
    del rec["samples_s"]
    bad.write_text("\n".join(lines[:5] + [json.dumps(rec)] + lines[6:]) + "\n")
    with pytest.raises(RawDataError, match=r"bad.jsonl:6: .* without samples_s"):
        load_raw(bad)
    fmt = tmp_path / "fmt.jsonl"
    fmt.write_text(lines[0].replace('"format": 1', '"format": 9') + "\n")
    with pytest.raises(RawDataError, match="format 9 is not supported"):
        load_raw(fmt)
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(lines[0] + '\n{"type": "future_thing", "x": 1}\n' + "\n".join(lines[1:]) + "\n")
    assert len(load_raw(unknown).g) == len(load_raw(raw).g)


def test_stats_outliers() -> None:
    st = stats([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 5.0])
    assert st.median == 1.0 and st.outliers == 1 and st.n == 7
    assert math.isclose(st.spread, (st.q3 - st.q1) / st.median)
