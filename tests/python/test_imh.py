"""The IMH model's fits (bspkit.imh) recover known parameters from synthetic probe runs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bspkit import imh
from bspkit.fit import fit_run
from bspkit.params import Params
from bspkit.rawdata import load_raw

from synth import ImhTruth, SynthSpec, write_synthetic


@pytest.fixture(scope="module")
def truth() -> ImhTruth:
    return ImhTruth()


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory, truth: ImhTruth) -> Params:
    raw = write_synthetic(tmp_path_factory.mktemp("imh") / "raw.jsonl", SynthSpec(p=4, imh=truth, noise=0.01))
    return fit_run(load_raw(raw))


def close(v: float | None, want: float, tol: float) -> bool:
    return v is not None and abs(v - want) <= tol * want


def test_nonneg_lsq_recovers_a_linear_model_with_intervals() -> None:
    x1 = [float(i) for i in range(1, 40)]
    x2 = [float((i * 7) % 11 + 1) for i in range(1, 40)]
    y = [3.0 * a + 0.5 * b for a, b in zip(x1, x2, strict=True)]
    f = imh.nonneg_lsq({"a": x1, "b": x2}, y)
    assert close(f["model"]["a"], 3.0, 1e-9) and close(f["model"]["b"], 0.5, 1e-9)
    assert f["coef"]["a"][1] <= 3.0 <= f["coef"]["a"][2]
    assert f["residual_rel_max"] < 1e-9


def test_nonneg_lsq_drops_a_negative_coefficient_and_says_so() -> None:
    x = [float(i) for i in range(1, 30)]
    y = [2.0 * v - 0.5 for v in x]  # a negative intercept: never reported
    f = imh.nonneg_lsq({"c": [1.0] * len(x), "slope": x}, y)
    assert f["model"]["c"] == 0.0 and f["coef"]["c"] is None
    assert any(fl.startswith("c: dropped") for fl in f["flags"])
    assert f["model"]["slope"] > 0


def test_nonneg_lsq_refuses_too_few_points() -> None:
    f = imh.nonneg_lsq({"a": [1.0], "b": [2.0]}, [1.0])
    assert "error" in f and f["model"] == {"a": None, "b": None}


def test_eq4_per_level_recovers_the_truth_and_predicts_held_out_points(fitted: Params, truth: ImhTruth) -> None:
    mem = fitted.imh["mem"]
    for level, (tn, tc, _te) in truth.eq4.items():
        cache = "cold" if level == "memory" else "warm"
        f = mem["fits"][f"read/double/{cache}/p1"][level]
        assert close(f["model"]["T_n"], tn, 0.15), (level, f["model"])
        assert close(f["model"]["T_c"], tc, 0.15), (level, f["model"])
        assert f["heldout"], "points must be held out of the fit"
    assert mem["heldout_mean_rel_error"] < 0.03  # noise 1 %: the model is exact


def test_writes_fit_their_own_parameters(fitted: Params, truth: ImhTruth) -> None:
    f = fitted.imh["mem"]["fits"]["write/int/cold/p4"]["memory"]
    assert close(f["model"]["T_c"], truth.eq4["memory"][1] * truth.write_factor, 0.15)


def test_sysfs_cpu_lists_are_counted() -> None:
    assert imh.cpus_in("0-1") == 2 and imh.cpus_in("0,4-7") == 5 and imh.cpus_in("3") == 1 and imh.cpus_in(4) == 4
    assert imh.cpus_in(None) == 1


def test_level_assignment_splits_a_shared_cache_between_processes() -> None:
    levels = [{"level": 1, "size_bytes": 32768}, {"level": 3, "size_bytes": 1 << 20, "shared_cpus": "0-3"}]
    assert imh.level_name(32768, 1, levels) == "L1"
    assert imh.level_name(600_000, 1, levels) == "L3"
    assert imh.level_name(600_000, 4, levels) == "memory"  # a quarter of the L3 each


def test_stream_check_compares_the_models_copy_with_stream(fitted: Params) -> None:
    rows = fitted.imh["mem"]["stream"]
    assert {r["procs"] for r in rows} == {1, 4}
    for r in rows:
        assert r["within_target"] is True and abs(r["ratio"] - 1) < 0.05


def test_pp_permutation_gives_ts_and_tau_and_table5(fitted: Params, truth: ImhTruth) -> None:
    pp = fitted.imh["pp"]
    assert close(pp["tau_d"], truth.tau_d, 0.05)
    assert close(pp["T_s"], truth.T_s, 0.2)
    rows = {r["pattern"]: r for r in pp["table5"]}
    assert set(rows) == {"permutation", "pingpong", "scatter", "broadcast"}
    for r in rows.values():
        assert abs(r["error_supersteps"]) < 0.05 and r["within_target"]
    # the paper's ping-pong formula leaves out the second superstep's start-up: here it is
    # still within a few per cent at the largest message
    assert abs(rows["pingpong"]["error_paper"]) < 0.05


def test_pp_predictions_follow_sec_522() -> None:
    T_s, tau, m = 1e-5, 1e-9, 1e6
    pred = imh.pp_predictions("scatter", m, 8, T_s, tau)
    assert math.isclose(pred["paper"], T_s + 7 * m * tau / 2)
    pred = imh.pp_predictions("broadcast", m, 8, T_s, tau)
    assert math.isclose(pred["paper"], T_s + 3 * m * tau / 2)
    assert math.isclose(pred["supersteps"], 3 * (T_s + m * tau / 2))
    assert imh.lg(1) == 0 and imh.lg(5) == 3


def test_disk_fits_table6(fitted: Params, truth: ImhTruth) -> None:
    fits = fitted.imh["disk"]["fits"]
    for key, (t0, bw) in truth.disk.items():
        op, cache = key.split("/")
        f = fits[f"{op}/sequential/{cache}"]
        assert close(f["bandwidth_Bps"], bw, 0.05), key
        assert close(f["model"]["T_0"], t0, 0.3), key
    model = fitted.imh["model"]
    assert close(model["tau_r"], 1 / truth.disk["read/direct"][1], 0.05)
    reads = [(1 << 20, 10)]
    want = 10 * (truth.disk["read/direct"][0] + (1 << 20) / truth.disk["read/direct"][1])
    assert close(imh.disk_time(fitted.imh, reads, "read"), want, 0.1)


def test_the_parameter_file_keeps_the_imh_object(fitted: Params, tmp_path: Path) -> None:
    path = tmp_path / "params.json"
    path.write_text(fitted.dumps())
    again = Params.read(path)
    assert again.imh["model"]["tau_d"] == pytest.approx(fitted.imh["model"]["tau_d"])


def test_a_run_without_the_suites_has_no_imh(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "raw.jsonl", SynthSpec())
    assert fit_run(load_raw(raw)).imh == {}
