"""The IMH model's fits (bspkit.model.imh) recover known parameters from synthetic probe runs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bspkit.measure.rawdata import load_raw
from bspkit.model import imh
from bspkit.model.fit import fit_run
from bspkit.model.params import Params

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
    mem = fitted.imh["mem"]  # the synthetic times follow eq. (4) as the paper writes it
    for level, (tn, tc, _te) in truth.eq4.items():
        cache = "cold" if level == "memory" else "warm"
        f = mem["fits_paper"][f"read/double/{cache}/p1"][level]
        assert close(f["model"]["T_n"], tn, 0.15), (level, f["model"])
        assert close(f["model"]["T_c"], tc, 0.15), (level, f["model"])
        assert f["heldout"], "points must be held out of the fit"
        assert f["form"] == "paper" and mem["fits"][f"read/double/{cache}/p1"][level]["form"] == "lines"
    assert mem["heldout_mean_rel_error_paper"] < 0.03  # noise 1 %: the model is exact


def test_the_lines_form_recovers_its_own_truth() -> None:
    """Passes timed by the per-line form of eq. (4) (the one bspkit predicts with)."""
    line, page = 64, 4096
    truth = {"T_n": 0.3e-9, "T_c": 4e-9, "T_e": 1.5e-9, "T_p": 3e-9}
    pts = []
    for n in (512, 768, 1024, 1536, 2048, 3072, 4096, 6144):
        for stride in (1, 2, 4, 8, 16, 64, 256, 512, 1024):
            lines = imh.lines_of(n, stride, 8, line)
            t = imh.predict_linear(truth, imh.pass_columns(n, stride, 8, lines, line, page, "lines"))
            pts.append(imh.MemPoint("read", "double", 8, "cold", 1, n, stride, int(lines), int(lines) * line, t))
    f = imh.fit_eq4(pts, line, page, "lines")
    for k, v in truth.items():
        assert close(f["model"][k], v, 1e-6), (k, f["model"])
    assert f["heldout_mean_rel_error"] < 1e-9
    assert imh.predict_pass(f, 1000, 700, 8, line, page) == pytest.approx(
        imh.predict_linear(truth, imh.pass_columns(1000, 700, 8, 1000, line, page, "lines"))
    )


def test_writes_fit_their_own_parameters(fitted: Params, truth: ImhTruth) -> None:
    f = fitted.imh["mem"]["fits_paper"]["write/int/cold/p4"]["memory"]
    assert close(f["model"]["T_c"], truth.eq4["memory"][1] * truth.write_factor, 0.15)


def test_sysfs_cpu_lists_are_counted() -> None:
    assert imh.cpus_in("0-1") == 2 and imh.cpus_in("0,4-7") == 5 and imh.cpus_in("3") == 1 and imh.cpus_in(4) == 4
    assert imh.cpus_in(None) == 1


def test_level_assignment_splits_a_shared_cache_between_processes() -> None:
    levels = [{"level": 1, "size_bytes": 32768}, {"level": 3, "size_bytes": 1 << 20, "shared_cpus": "0-3"}]
    assert imh.level_name(32768, 1, levels) == "L1"
    assert imh.level_name(600_000, 1, levels) == "L3"
    assert imh.level_name(600_000, 4, levels) == "memory"  # a quarter of the L3 each
    # a stride of 8 lines uses one set in 8 of an 8-way 32 KiB L1 (64 sets): 4 KiB of it; a
    # stride of a page one set: 8 lines
    l1 = [{"level": 1, "size_bytes": 32768, "line_bytes": 64, "ways": 8}, {"level": 2, "size_bytes": 1 << 19}]
    assert imh.level_name(4096, 1, l1, 8 * 64) == "L1"
    assert imh.level_name(8192, 1, l1, 8 * 64) == "L2"
    assert imh.level_name(512, 1, l1, 4096) == "L1" and imh.level_name(1024, 1, l1, 4096) == "L2"
    assert imh.level_name(8192, 1, l1, 64) == "L1"  # one line apart: every set
    assert imh.level_name(8192, 1, l1, 75 * 64) == "L1"  # 75 lines apart: every set too (gcd 1)


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
        assert abs(r["error_bsp"]) < 0.05 and r["within_target"]
    # the paper's formulas halve one-way transfers: a machine whose processes copy their own
    # data (as the synthetic one) takes twice as long for a scatter at p = 2
    assert rows["pingpong"]["error_paper"] == pytest.approx(-0.5, abs=0.05)
    assert rows["scatter"]["error_paper"] == pytest.approx(-0.5, abs=0.05)


def test_pp_predictions_follow_sec_522() -> None:
    T_s, tau, m = 1e-5, 1e-9, 1e6
    pred = imh.pp_predictions("scatter", m, 8, T_s, tau)
    assert math.isclose(pred["paper"], T_s + 7 * m * tau / 2)
    assert math.isclose(pred["bsp"], T_s + 7 * m * tau)
    pred = imh.pp_predictions("broadcast", m, 8, T_s, tau)
    assert math.isclose(pred["paper"], T_s + 3 * m * tau / 2)
    assert math.isclose(pred["bsp"], 3 * (T_s + m * tau))
    assert math.isclose(imh.pp_predictions("pingpong", m, 2, T_s, tau)["bsp"], 2 * (T_s + m * tau))
    assert imh.lg(1) == 0 and imh.lg(5) == 3


def test_startup_and_rate_reads_the_small_and_the_large_sizes() -> None:
    sizes = [8 * 2**k for k in range(20)]
    # in cache (2x faster per byte) up to 64 KiB: one line through all sizes would bend
    times = [2e-6 + m * (0.5e-10 if m <= 65536 else 1e-10) for m in sizes]
    f = imh.startup_and_rate(sizes, times)
    assert f["model"]["T_0"] == pytest.approx(2e-6, rel=1e-3)
    assert f["model"]["tau"] == pytest.approx(1e-10, rel=0.02)
    assert f["tau_sizes"][0] == sizes[-1] / 16
    assert f["coef"]["T_0"][1] <= f["model"]["T_0"] <= f["coef"]["T_0"][2]


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
