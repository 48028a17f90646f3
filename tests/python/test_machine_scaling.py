"""bspkit.model.machine_scaling: parameters at a p that was not probed, fitted over the p of several
probes (each quantity as a, a + b log2 p or a + b p), hand-written parameter files, and the
spread of the parameters for prediction intervals.

References: parameter files made from known laws over p (the fit must give back the law, and
at p = 1024 the value the law gives); probes made by the real fit (bspkit.model.fit) from synthetic
raw samples whose l follows a known law, with lognormal noise; the hand-written example of
docs/probe-format.md; the spreads against the fields they are made of."""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

import numpy as np
import pytest

from bspkit.measure.rawdata import load_raw
from bspkit.model.fit import fit_run
from bspkit.model.machine_scaling import (
    IQR_PER_SD,
    LAW_CONSTANT,
    LAW_LINEAR,
    LAW_LOG,
    MachineScalingError,
    Spread,
    fit_over_p,
    parameter_spread,
    params_at,
)
from bspkit.model.params import Params, expand_shorthand, read_params_file
from bspkit.model.supersteps import check_hand_written, check_usable, superstep_comm_s

from conftest import REPO
from synth import SynthSpec, write_synthetic

PS = (2, 4, 8, 16)
G = 1.0e-9  # s/word, the same at every p
B = 2.0e-8  # s per message of the per-h fit
H_LEVELS = (1024, 8192)
F_BLAS = 1.2e-10


def log_law(p: float) -> float:
    return 1.0e-5 + 2.0e-6 * math.log2(p)


def linear_law(p: float) -> float:
    return 1.0e-5 + 3.0e-7 * p


def params_json(p: int, l_of: Any, host: str = "node", fitted: str | None = "2026-11-26T00:00:00Z") -> dict[str, Any]:
    """A parameter file whose l follows l_of(p): l.empty, Bisseling's l = 2 l.empty, the per-h
    fit's A = l.empty + g h; g and f the same at every p; 1 % intervals."""
    l_s = l_of(p)
    return {
        "format": 1,
        "fitted": fitted,
        "source": f"probe-p{p}.jsonl",
        "machine": {"host": host, "cpu": "Test CPU", "library": "bspkit", "backend": "threads", "cores": 16, "p": p},
        "p": p,
        "f": {"matmul_double_blas": F_BLAS, "dot_double_naive": 5.0e-10},
        "f_detail": {
            "matmul_double_blas": {
                "n": 512,
                "ops": 2.7e8,
                "median_s": 0.03,
                "s_per_op": F_BLAS,
                "samples": 7,
                "spread": 0.04,
            },
        },
        "l": {"empty": l_s},
        "l_detail": {
            "empty": {
                "n": 21,
                "median": l_s,
                "q1": 0.97 * l_s,
                "q3": 1.03 * l_s,
                "min": 0.9 * l_s,
                "max": 1.2 * l_s,
                "outliers": 0,
                "spread": 0.06,
                "ci": [0.99 * l_s, 1.01 * l_s],
            }
        },
        "g": {
            "put/alltoall": {
                "linreg": {"msg_words": 1, "g": [G, 0.99 * G, 1.01 * G], "l": [2 * l_s, 1.98 * l_s, 2.02 * l_s]},
                "levels": [
                    {
                        "h": h,
                        "points": 9,
                        "A_s": l_s + G * h,
                        "B_s": B,
                        "g_h": (l_s + G * h) / h,
                        "residual_rel_rms": 0.02,
                    }
                    for h in H_LEVELS
                ],
            }
        },
    }


def probes(l_of: Any, ps: tuple[int, ...] = PS) -> list[Params]:
    return [Params.from_json(params_json(p, l_of)) for p in ps]


PUT = {"h": 4096, "count": 16, "msg_words": 256, "primitive": "put", "pattern": "alltoall"}


# ------------------------------------------------------------- laws from exact data


@pytest.mark.parametrize(("l_of", "law", "b"), [(log_law, LAW_LOG, 2.0e-6), (linear_law, LAW_LINEAR, 3.0e-7)])
def test_the_law_of_l_is_recovered_and_gives_p_1024(l_of: Any, law: str, b: float) -> None:
    m = params_at(probes(l_of), 1024)
    fit = m.fit("l")
    assert fit is not None
    assert fit.law == law
    assert fit.coefficients == pytest.approx((1.0e-5, b), rel=1e-9)
    assert fit.criterion == "leave-one-out"
    assert [q for q, _ in fit.points] == list(PS)
    assert fit.residual_rel_rms == pytest.approx(0.0, abs=1e-9)
    assert m.params.p == 1024
    assert m.params.l["empty"] == pytest.approx(l_of(1024), rel=1e-9)
    assert m.params.empty_sync_s() == pytest.approx(l_of(1024), rel=1e-9)
    # Bisseling's l (2 l) and the per-h fit's A (l + g h) follow the same law
    assert m.fit("put/alltoall linreg l").law == law  # type: ignore[union-attr]
    assert m.fit("put/alltoall level h=1024 A_s").law == law  # type: ignore[union-attr]
    # a superstep at p = 1024 costs what the law gives, under each model
    g_const = superstep_comm_s(m.params, PUT, "g const")
    assert g_const == pytest.approx(G * 4096 + 2 * l_of(1024), rel=1e-9)
    a_8192 = l_of(1024) + G * 8192
    a_1024 = l_of(1024) + G * 1024
    w = math.log(4096 / 1024) / math.log(8192 / 1024)
    a_4096 = math.exp((1 - w) * math.log(a_1024) + w * math.log(a_8192))
    assert superstep_comm_s(m.params, PUT, "g(h)") == pytest.approx(a_4096, rel=1e-9)
    assert superstep_comm_s(m.params, PUT, "g(h,h*)") == pytest.approx(a_4096 + 16 * B, rel=1e-9)
    assert superstep_comm_s(m.params, {"h": 0}, "g const") == pytest.approx(l_of(1024), rel=1e-9)
    assert m.source == "extrapolated from p = 2, 4, 8, 16"
    assert any("64x the largest p probed (16)" in w for w in m.warnings)
    assert any("more than the 16 cores" in w for w in m.warnings)


def test_g_and_f_that_do_not_depend_on_p_stay_constant() -> None:
    m = params_at(probes(log_law), 1024)
    g_fit = m.fit("put/alltoall linreg g")
    assert g_fit is not None and g_fit.law == LAW_CONSTANT
    assert g_fit.value == pytest.approx(G, rel=1e-12)
    assert m.params.g["put/alltoall"].bisseling_g_l() == pytest.approx((G, 2 * log_law(1024)), rel=1e-9)
    b_fit = m.fit("put/alltoall level h=8192 B_s")
    assert b_fit is not None and b_fit.law == LAW_CONSTANT and b_fit.value == pytest.approx(B, rel=1e-12)
    f_fit = m.fit("f matmul_double_blas")
    assert f_fit is not None and f_fit.criterion == "per core: f does not depend on p"
    assert m.params.f == {"matmul_double_blas": F_BLAS, "dot_double_naive": 5.0e-10}
    assert m.params.f_detail["matmul_double_blas"]["spread"] == 0.04


def test_interpolation_at_p_6() -> None:
    m = params_at(probes(log_law), 6)
    assert m.source == "interpolated from p = 2, 4, 8, 16"
    assert m.params.l["empty"] == pytest.approx(log_law(6), rel=1e-9)
    assert not any("largest p probed" in w for w in m.warnings)
    m_lin = params_at(probes(linear_law), 6)
    assert m_lin.params.l["empty"] == pytest.approx(linear_law(6), rel=1e-9)


def test_the_fitted_file_round_trips_and_keeps_the_nearest_probes_intervals() -> None:
    m = params_at(probes(log_law), 1024)
    again = Params.from_json(json.loads(m.params.dumps()))
    assert superstep_comm_s(again, PUT, "g(h,h*)") == pytest.approx(superstep_comm_s(m.params, PUT, "g(h,h*)"))
    assert again.machine["p"] == 1024 and again.machine["p_probed"] == list(PS)
    # the relative interval of the probe at p = 16, scaled to the fitted value
    g_triplet = again.g["put/alltoall"].linreg["g"]
    assert g_triplet == pytest.approx([G, 0.99 * G, 1.01 * G], rel=1e-9)
    detail = again.l_detail["empty"]
    assert detail["median"] == pytest.approx(log_law(1024))
    assert detail["q3"] / detail["median"] == pytest.approx(1.03)
    # the synthetic probes have no global fit (`predict`): the seeds' models that read it are not served
    assert check_usable(again) == ["g(h,h*)+l0", "thesis g const"]


def test_the_file_at_the_target_p_is_used_as_it_is() -> None:
    files = probes(log_law)
    m = params_at(files, 8)
    assert m.source == "probe at p = 8"
    assert m.fits == []
    assert m.params.to_json() == files[2].to_json()
    assert m.params is not files[2]


def test_one_file_at_another_p_is_used_unchanged_with_a_warning() -> None:
    m = params_at(probes(log_law, (8,)), 1000)
    assert m.source == "probe at p = 8 (used unchanged at p = 1000)"
    assert m.params.p == 1000
    assert m.params.l["empty"] == log_law(8)
    assert any("l and g are those of p = 8" in w for w in m.warnings)


def test_two_values_of_p_choose_by_residual_and_say_the_laws_disagree() -> None:
    m = params_at(probes(log_law, (2, 16)), 1024)
    fit = m.fit("l")
    assert fit is not None
    assert fit.criterion == "least squares (2 values of p)"
    assert fit.law == LAW_LOG  # both fit exactly: the tie goes to log2 p
    assert fit.value == pytest.approx(log_law(1024), rel=1e-9)
    # the line through (2, l(2)) and (16, l(16)), at 1024
    slope = (log_law(16) - log_law(2)) / 14
    linear = log_law(2) + slope * (1024 - 2)
    assert fit.alternatives[LAW_LINEAR] == pytest.approx(linear, rel=1e-9)
    # the error is the laws' disagreement, both weighted 1/2: sqrt(1/2 (linear - log)^2) / value
    assert fit.error_rel == pytest.approx(abs(linear - fit.value) / math.sqrt(2) / fit.value, rel=0.05)
    assert any("only 2 values of p (2, 16)" in w and "a + b p" in w for w in m.warnings)


def test_files_of_different_machines_are_refused_unless_forced() -> None:
    files = [Params.from_json(params_json(p, log_law, host="a" if p < 8 else "b")) for p in PS]
    with pytest.raises(MachineScalingError, match=r"different machines.*host \(a, b\)"):
        params_at(files, 1024)
    forced = params_at(files, 1024, force=True)
    assert any("host (a, b)" in w and "forced" in w for w in forced.warnings)
    other_backend = probes(log_law)
    other_backend[0].machine["backend"] = "mpi"
    with pytest.raises(MachineScalingError, match="backend"):
        params_at(other_backend, 1024)


def test_files_without_p_and_bad_targets_are_refused() -> None:
    files = probes(log_law)
    files[1].p = None
    with pytest.raises(MachineScalingError, match="has no p"):
        params_at(files, 1024)
    with pytest.raises(MachineScalingError, match="at least 1"):
        params_at(probes(log_law), 0)
    with pytest.raises(MachineScalingError, match="no parameter file"):
        params_at([], 64)


# ---------------------------------------------------------------------- one quantity


def relative_mean(ys: list[float]) -> float:
    """The constant a of least squares on relative residuals, sum ((a - y) / y)^2."""
    inv = 1.0 / np.array(ys)
    return float(inv.sum() / (inv**2).sum())


def test_fit_over_p_keeps_a_trend_within_the_scatter_constant() -> None:
    # a constant with +-1 % noise that happens to rise with p: no law extrapolates it
    noisy = [(2, 0.98, 0.01), (4, 0.99, 0.01), (8, 1.0, 0.01), (16, 1.01, 0.01)]
    fit = fit_over_p("g", noisy, 1024)
    assert fit.law == LAW_CONSTANT
    assert fit.value == pytest.approx(relative_mean([v for _, v, _ in noisy]))
    assert fit.slope_t[LAW_LOG] < 3  # the slope is within the scatter
    # the same rise measured to 0.1 % is a trend
    assert fit_over_p("g", [(q, v, 0.001) for q, v, _ in noisy], 1024).law == LAW_LOG
    # the same fall measured exactly (no scatter) is a trend, but a decreasing one is not
    # extrapolated beyond the p probed; inside them it is used
    exact = [(q, 1.0 - 0.01 * math.log2(q), None) for q in (2, 4, 8, 16)]
    beyond = fit_over_p("g", exact, 1024)
    assert beyond.law == LAW_CONSTANT and beyond.notes
    inside = fit_over_p("g", exact, 6)
    assert inside.law == LAW_LOG and inside.value == pytest.approx(1.0 - 0.01 * math.log2(6))


def test_fit_over_p_zeros_and_a_single_p() -> None:
    zeros = fit_over_p("B_s", [(2, 0.0, None), (4, 0.0, None)], 64, positive=False)
    assert zeros.value == 0.0 and zeros.law == LAW_CONSTANT
    some = fit_over_p("B_s", [(2, 0.0, None), (4, 1e-8, None), (8, 2e-8, None)], 16, positive=False)
    assert some.value >= 0
    one = fit_over_p("l", [(8, 3e-5, None), (8, 5e-5, None)], 64)
    assert one.criterion == "one value of p" and one.error_rel is None
    assert one.value == pytest.approx(relative_mean([3e-5, 5e-5]))


# ----------------------------------------------------------- from the real fit, noisy


@pytest.fixture(scope="module")
def noisy_probes(tmp_path_factory: pytest.TempPathFactory) -> list[Params]:
    """Probes at p = 2..16 fitted by bspkit.model.fit from raw samples with 3 % lognormal noise:
    l.empty follows log_law, the g surfaces are the same at every p."""
    d = tmp_path_factory.mktemp("probes")
    out = []
    for i, p in enumerate(PS):
        spec = SynthSpec(p=p, seed=11 + i, l={"empty": log_law(p), "shift": 1.5 * log_law(p)}, as_suite=False)
        out.append(fit_run(load_raw(write_synthetic(d / f"p{p}.jsonl", spec))))
    return out


def test_noisy_probes_give_the_law_of_l_within_its_error(noisy_probes: list[Params]) -> None:
    m = params_at(noisy_probes, 1024)
    fit = m.fit("l")
    assert fit is not None and fit.law == LAW_LOG
    assert fit.coefficients[1] == pytest.approx(2.0e-6, rel=0.15)
    truth = log_law(1024)
    assert fit.error_rel is not None and 0 < fit.error_rel < 0.1
    assert abs(fit.value - truth) / truth < 3 * fit.error_rel
    # the g surfaces do not depend on p: (almost) no quantity of them takes a trend
    g_fits = [f for f in m.fits if not f.name.startswith(("l", "f "))]
    assert len(g_fits) > 50
    trends = [f.name for f in g_fits if f.law != LAW_CONSTANT]
    assert len(trends) <= 2, trends
    assert check_hand_written(m.params) == []
    assert check_usable(m.params) == ["thesis g const"]  # the synthetic probes measured no l.alltoall


def test_spread_of_a_probe_file(noisy_probes: list[Params]) -> None:
    params = noisy_probes[1]
    s = parameter_spread(params)
    for kernel, detail in params.f_detail.items():
        assert s.f[kernel] == pytest.approx(detail["spread"] / IQR_PER_SD)
    empty = params.l_detail["empty"]
    assert s.l == pytest.approx((empty["q3"] - empty["q1"]) / empty["median"] / IQR_PER_SD)
    assert 0.01 < s.l < 0.06  # the samples' 3 % lognormal noise
    put = s.g["put/alltoall"]
    lo, hi = params.g["put/alltoall"].linreg["g"][1:]  # type: ignore[index]
    assert put.linreg_g == pytest.approx((hi - lo) / (2 * 1.959964) / params.g["put/alltoall"].linreg["g"][0], rel=1e-4)  # type: ignore[index]
    errors = [r["rel_error"] for r in params.validation["points"] if r["key"] == "put/alltoall" and "rel_error" in r]
    assert len(errors) >= 3
    assert put.g_h_hstar == pytest.approx(math.sqrt(np.mean(np.square(errors))))
    assert put.g_h == params.g["put/alltoall"].lsq_25["residual_rel_rms"]
    assert s.at_target == {}
    low, high = Spread.range_10_90(0.1)
    assert low == pytest.approx(math.exp(-0.128155), rel=1e-4) and high * low == pytest.approx(1.0)


def test_spread_at_an_extrapolated_p_adds_the_fits_error(noisy_probes: list[Params]) -> None:
    m = params_at(noisy_probes, 1024)
    at_p = parameter_spread(m)
    measured = parameter_spread(m.params)
    l_fit = m.fit("l")
    assert l_fit is not None and l_fit.error_rel
    assert at_p.l == pytest.approx(math.hypot(measured.l or 0.0, l_fit.error_rel))
    assert at_p.at_target["l"] == l_fit.error_rel
    g_fit = m.fit("put/alltoall linreg g")
    assert g_fit is not None and g_fit.error_rel is not None
    assert at_p.g["put/alltoall"].linreg_g == pytest.approx(
        math.hypot(measured.g["put/alltoall"].linreg_g or 0.0, g_fit.error_rel)
    )
    # f: the scatter of f between the four probes, added to one probe's timing scatter
    f_fit = m.fit("f dot_double_naive")
    assert f_fit is not None and f_fit.residual_rel_rms
    assert at_p.f["dot_double_naive"] == pytest.approx(
        math.hypot(measured.f["dot_double_naive"] or 0.0, f_fit.residual_rel_rms)
    )
    # farther out, the error grows
    assert parameter_spread(params_at(noisy_probes, 1 << 16)).l > at_p.l  # type: ignore[operator]


def test_the_machines_noise_is_carried_to_an_unprobed_p() -> None:
    """The sentinels' time-to-time noise per regime is the machine's: a fit over p carries the
    nearest probe's, so the band at p = 1024 holds it; without it there is none."""
    files = []
    for p in PS:
        data = params_json(p, lambda q: 1e-5 * q)
        if p == PS[-1]:
            data["noise"] = {
                "regimes": {"compute": {"rel_sd": 0.05, "visits": 9}, "sync": {"rel_sd": 0.2, "visits": 9}}
            }
        files.append(Params.from_json(data))
    m = params_at(files, 1024)
    assert m.params.noise["regimes"]["compute"]["rel_sd"] == 0.05
    assert parameter_spread(m).noise == {"compute": 0.05, "sync": 0.2}
    assert parameter_spread(params_at(probes(lambda q: 1e-5 * q), 1024)).noise == {}


# -------------------------------------------------------------------- written by hand


def doc_example() -> dict[str, Any]:
    """The hand-written file of docs/probe-format.md (its `file: hand-params.json` block)."""
    text = (REPO / "docs" / "probe-format.md").read_text()
    m = re.search(r"<!-- file: hand-params.json -->\n```json\n(.*?)```", text, re.S)
    assert m, "docs/probe-format.md has no hand-params.json block"
    return json.loads(m.group(1))


def test_the_hand_written_example_of_the_docs_predicts_a_superstep() -> None:
    data = doc_example()
    params = Params.from_json(data)  # the plain reader takes it: no bspkit_version needed
    assert "bspkit_version" not in data and "fitted" not in data
    assert check_hand_written(params) == []
    g, l_s = data["g"]["put/alltoall"]["linreg"]["g"], data["g"]["put/alltoall"]["linreg"]["l"]
    assert superstep_comm_s(params, PUT, "g const") == pytest.approx(g * 4096 + l_s)
    assert superstep_comm_s(params, {"h": 0}, "g const") == data["l"]["empty"]
    assert superstep_comm_s(params, PUT, "g(h)") is None  # no levels: the models it cannot serve
    assert check_usable(params) == ["g(h)", "g(h,h*)", "g(h,h*)+l0", "thesis g const", "g(h,h*) [in+out]"]
    m = params_at([params], data["p"])
    assert m.source == "hand-written" and m.warnings == []
    other = params_at([params], 1000)
    assert other.source == "hand-written (used unchanged at p = 1000)"
    assert any(f"those of p = {data['p']}" in w for w in other.warnings)
    assert read_params_file(data).to_json() == params.to_json()


def test_the_shorthand_reads_as_the_full_form(tmp_path: Any) -> None:
    short = {
        "format": 1,
        "p": 64,
        "f": {"dot_double_naive": 5e-10},
        "l": 2e-5,
        "g": {"put/alltoall": {"g": 3e-9, "l": 2.5e-5}, "get/alltoall": 4e-9},
    }
    full = expand_shorthand(short)
    assert full["l"] == {"empty": 2e-5}
    assert full["g"] == {"put/alltoall": {"linreg": {"g": 3e-9, "l": 2.5e-5}}, "get/alltoall": {"linreg": {"g": 4e-9}}}
    path = tmp_path / "short.json"
    path.write_text(json.dumps(short))
    params = read_params_file(path)
    assert check_hand_written(params) == []
    assert superstep_comm_s(params, PUT, "g const") == pytest.approx(3e-9 * 4096 + 2.5e-5)
    get = {**PUT, "primitive": "get"}
    assert superstep_comm_s(params, get, "g const") == pytest.approx(4e-9 * 4096 + 2e-5)  # l: the empty sync
    # a file bspkit fit wrote is not changed by the shorthand's reader
    probe = params_json(8, log_law)
    assert expand_shorthand(probe) == probe


def test_what_a_hand_written_file_lacks_is_named() -> None:
    assert check_hand_written(Params.from_json(params_json(8, log_law))) == []
    lacking = check_hand_written(Params.from_json({"format": 1, "g": {}}))
    assert [line.split(":")[0] for line in lacking] == ["p", "f", "l.empty", "g"]
    bad = Params.from_json(
        {
            "format": 1,
            "p": 0,
            "f": {"dot_double_naive": -1.0, "matmul_double_blas": 1e-10},
            "l": {"shift": 1e-5},
            "g": {
                "put/ring": {"linreg": {"g": 1e-9}},
                "get/alltoall": {"g": 1e-9, "l": 1e-5},  # the shorthand, read as the full form
                "hpget/shift": {"linreg": {"g": 2e-9, "l": 1e-5}},
            },
        }
    )
    lacking = check_hand_written(bad)
    text = "\n".join(lacking)
    assert "p: the number of processes" in text
    assert "f.dot_double_naive: -1.0 is not a positive number" in text
    assert "l.empty" in text
    assert "g.put/ring: not a <primitive>/<pattern> key" in text
    assert "g.get/alltoall: no g" in text and "read_params_file" in text
    assert "no put surface" in text
    assert len(lacking) == 6
    # the shorthand's number for l is named, not a crash
    shorthand_l = Params.from_json(
        {"format": 1, "p": 4, "f": {"x": 1e-9}, "l": 2e-5, "g": {"put/alltoall": {"linreg": {"g": 1e-9}}}}
    )
    assert [line.split(":")[0] for line in check_hand_written(shorthand_l)] == ["l"]


def test_a_hand_written_file_joins_probes_at_other_p() -> None:
    hand = copy.deepcopy(params_json(64, log_law, fitted=None))
    del hand["machine"]  # a hand file says nothing of the machine: nothing to compare
    files = [*probes(log_law, (2, 4, 8)), Params.from_json(hand)]
    m = params_at(files, 32)
    assert m.source == "interpolated from p = 2, 4, 8, 64 (hand-written: p = 64)"
    assert m.params.l["empty"] == pytest.approx(log_law(32), rel=1e-9)


def test_a_probe_at_p_1_gives_f_but_not_l_and_g() -> None:
    alone = params_json(1, lambda p: 3.0e-8)  # a sync of a process alone: no communication
    alone["f"]["matmul_double_blas"] = 1.1 * F_BLAS
    files = [Params.from_json(alone), *probes(log_law, (2, 4, 8))]
    m = params_at(files, 1024)
    assert m.source == "extrapolated from p = 2, 4, 8"
    assert any("p = 1 left out" in w for w in m.warnings)
    l_fit = m.fit("l")
    assert l_fit is not None and [q for q, _ in l_fit.points] == [2, 4, 8]
    assert m.params.l["empty"] == pytest.approx(log_law(1024), rel=1e-9)
    f_fit = m.fit("f matmul_double_blas")
    assert f_fit is not None and [q for q, _ in f_fit.points] == [1, 2, 4, 8]
    # with one other p only, p = 1 stays in, with a warning
    two = params_at(files[:2], 64)
    assert any("a process alone" in w for w in two.warnings)
    assert two.source == "extrapolated from p = 1, 2"
