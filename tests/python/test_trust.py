"""How far to trust a number (bspkit.model.trust, issue 39): a check's error split into the
machine's noise and the model's error by regime, the verdict that trusts a model within its noise
or names where it is biased, and the bands judged by their coverage (Wilson interval).

Synthetic checks with a known truth: points whose prediction is the truth and whose measurement
is the truth times the machine's time-to-time noise (a planted sd, given as params.json's
`noise.regimes`) times the median of repeat samples with their own noise."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit import cli
from bspkit.measure import validation as va
from bspkit.measure.rawdata import load_raw
from bspkit.model import predict as fc
from bspkit.model import probe_validation as pv
from bspkit.model import trust, verdict
from bspkit.model.fit import fit_run
from bspkit.model.params import Params

from synth import PARAMS_JSON, SynthSpec, write_synthetic

MACHINE_SD = 0.06  # the planted time-to-time variability (sd of log)
SAMPLE_SD = 0.05  # each repeat sample's own noise
REPS = 15
PRIMITIVES = ("put", "get", "send")
SIZES = (8, 256, 8192)  # one h* in each message size band


def synthetic_check(
    seed: int = 7,
    per_cell: int = 24,
    bias: float = 0.0,
    biased_cell: tuple[str, int] = ("send", 8),
    machine_sd: float = MACHINE_SD,
    scatter: float = 0.0,
    scattered_cell: tuple[str, int] = ("put", 8192),
) -> list[dict[str, Any]]:
    """Validation rows as probe_validation.validate writes them: per primitive x message size,
    per_cell points; the prediction is the truth (times 1 + bias in biased_cell, and times a
    log-normal factor of sd `scatter` in scattered_cell: a model error that averages out)."""
    rng = np.random.default_rng(seed)
    rows = []
    for prim in PRIMITIVES:
        for msg in SIZES:
            for _ in range(per_cell):
                count = int(rng.integers(2, 64))
                h = msg * count
                truth = 1e-9 * (h + 2000)
                moment = truth * math.exp(rng.normal(0.0, machine_sd))
                samples = moment * np.exp(rng.normal(0.0, SAMPLE_SD, REPS))
                measured = float(np.median(samples))
                predicted = truth * (1 + bias if (prim, msg) == biased_cell else 1.0)
                if (prim, msg) == scattered_cell and scatter:
                    predicted *= math.exp(rng.normal(0.0, scatter))
                rel = (predicted - measured) / measured
                rows.append(
                    {
                        "key": f"{prim}/alltoall",
                        "msg_words": msg,
                        "count": count,
                        "h": h,
                        "measured_s": measured,
                        "seq": None,
                        "drift_factor": None,
                        "median_rse": trust.median_rel_se(samples),
                        "predicted_s": predicted,
                        "rel_error": rel,
                        "pass": abs(rel) <= 0.1,
                    }
                )
    return rows


def noise_regimes(sd: float = MACHINE_SD) -> dict[str, Any]:
    return {"regimes": {r: {"rel_sd": sd, "visits": 12} for r in trust.REGIMES}}


def expected_noise_sd() -> float:
    """The noise of one point: the machine's sd and its median's standard error in quadrature."""
    return math.hypot(MACHINE_SD, math.sqrt(math.pi / 2) * SAMPLE_SD / math.sqrt(REPS))


# ------------------------------------------------------------------ the noise of one point


def test_the_medians_standard_error_from_its_samples_is_normal_theory() -> None:
    rng = np.random.default_rng(3)
    for n in (3, 15, 31):
        sets = np.exp(rng.normal(0.0, 0.1, (4000, n)))
        estimated = math.sqrt(np.mean([trust.median_rel_se(s) ** 2 for s in sets]))  # type: ignore[operator]
        actual = float(np.std(np.log(np.median(sets, axis=1))))
        assert estimated == pytest.approx(actual, rel=0.2), n
    assert trust.median_rel_se([1.0]) is None and trust.median_rel_se([]) is None


def test_a_run_over_regimes_has_its_shares_noise() -> None:
    sds = {"compute": 0.04, "sync": 0.3}
    assert trust.mixed_sd({"compute": 3.0, "sync": 1.0}, sds) == pytest.approx(math.hypot(0.75 * 0.04, 0.25 * 0.3))
    assert trust.mixed_sd({"small_h": 1.0}, sds) is None  # no regime with time has a known sd
    assert trust.comm_regime(100) == "small_h" and trust.comm_regime(1 << 20) == "large_h"
    # where the sentinels give their h, the nearer (in log) decides
    near = {"regimes": {"small_h": {"rel_sd": 0.1, "h": 64}, "large_h": {"rel_sd": 0.1, "h": 1 << 20}}}
    assert trust.comm_regime(4000, near) == "small_h" and trust.comm_regime(16384, near) == "large_h"
    assert trust.regimes_of(noise_regimes(0.05)) == dict.fromkeys(trust.REGIMES, 0.05)
    assert trust.regimes_of(None) == {} and trust.regimes_of({"warnings": []}) == {}


# ------------------------------------------------------------------ the split


def test_a_known_noise_gives_the_known_split() -> None:
    """Bias ~ 0 (its interval holds 0), noise ~ the planted sd, model scatter ~ 0, nothing
    flagged: trust, within the planted noise's 10-90 % band."""
    sp = pv.probe_split({"points": synthetic_check()}, noise_regimes())
    assert sp is not None and sp.judged and sp.machine_known
    o = sp.overall
    assert o.n == 9 * 24
    assert o.bias_ci is not None and o.bias_ci[0] < 0 < o.bias_ci[1]
    assert abs(o.bias) < 0.015
    assert o.noise_sd == pytest.approx(expected_noise_sd(), rel=0.1)
    assert o.machine_sd == pytest.approx(MACHINE_SD)
    assert o.scatter_sd is not None and o.scatter_sd < 0.3 * o.noise_sd
    assert o.shares["noise"] > 0.9
    assert sp.flagged == [] and sp.within_noise
    assert sp.trust_within == pytest.approx(math.expm1(trust.Z_10_90 * expected_noise_sd()), rel=0.15)
    dims = {st.dimension for st in sp.regimes}
    assert dims == {"primitive x size", "primitive", "size", "h"}
    assert "send, h* < 64 words" in {st.regime for st in sp.regimes}


def test_a_planted_bias_is_found_in_its_regime_and_nowhere_else() -> None:
    sp = pv.probe_split({"points": synthetic_check(bias=0.15)}, noise_regimes())
    assert sp is not None
    assert [st.regime for st in sp.flagged] == ["send, h* < 64 words"]
    st = sp.flagged[0]
    assert st.biased and st.dimension == "primitive x size"
    assert st.bias_ci is not None and 0 < st.bias_ci[0] < 0.15 < st.bias_ci[1]
    assert st.bias == pytest.approx(0.15, abs=0.04)
    assert st.bias_beyond_noise > 0
    # the coarser regimes that hold it are judged on their other points: not biased
    send = next(r for r in sp.regimes if r.regime == "send")
    small = next(r for r in sp.regimes if r.regime == "h* < 64 words")
    assert send.bias > 0.03 and not send.biased and send.judged_on == 2 * 24
    assert not small.biased and small.judged_on == 2 * 24
    assert not sp.within_noise
    text = trust.split_sentence(sp, "eq. (2.6)")
    assert "send, h* < 64 words: +1" in text and "beyond the noise of" in text and " ± " in text


def test_a_negative_bias_beyond_the_noise_stays_above_minus_100_percent() -> None:
    """Predictions at half the measurement with a noise of 11 %: the part beyond the band is
    exp(log 0.5 + 1.2816 x 0.11) - 1, about -43 %, and symmetric in log to the same bias upward."""

    def st(bias: float) -> trust.RegimeStats:
        pts = [trust.CheckPoint(1.0 + bias, 1.0, {}, None, 0.11) for _ in range(8)]
        return trust.regime_stats("all", "all", pts)

    down, up = st(-0.5), st(1.0)
    assert down.bias_beyond_noise == pytest.approx(math.expm1(math.log(0.5) + trust.Z_10_90 * 0.11))
    assert -1 < down.bias_beyond_noise < -0.4
    assert math.log1p(down.bias_beyond_noise) == pytest.approx(-math.log1p(up.bias_beyond_noise))


def test_without_the_machines_noise_the_split_is_the_points_own_sampling() -> None:
    sp = pv.probe_split({"points": synthetic_check()}, None)
    assert sp is not None and not sp.machine_known
    assert sp.overall.noise_sd < 0.5 * MACHINE_SD  # the machine's part is missing
    # a file from before the points kept their noise: nothing to split by
    old = [{k: v for k, v in r.items() if k != "median_rse"} for r in synthetic_check()]
    assert pv.probe_split({"points": old}, None) is None


def test_too_few_points_are_reported_never_flagged() -> None:
    rows = synthetic_check(per_cell=1, bias=0.5)[:3]
    sp = pv.probe_split({"points": rows}, noise_regimes())
    assert sp is not None and not sp.judged and sp.flagged == [] and not sp.within_noise
    assert "too few points (3)" in trust.split_sentence(sp, "eq. (2.6)")


def test_the_split_reads_back_from_its_json() -> None:
    sp = pv.probe_split({"points": synthetic_check(bias=0.15)}, noise_regimes())
    assert sp is not None
    again = trust.Split.from_json(json.loads(json.dumps(sp.to_json())))
    assert again is not None
    assert [st.regime for st in again.flagged] == ["send, h* < 64 words"]
    assert trust.split_sentence(again, "x") == trust.split_sentence(sp, "x")
    assert trust.Split.from_json({}) is None


# ------------------------------------------------------------------ coverage


def test_the_wilson_interval_by_hand() -> None:
    # 8 of 10, z = 1.96: centre (0.8 + 1.96^2 / 20) / (1 + 1.96^2 / 10), half-width
    # 1.96 / (1 + 1.96^2 / 10) sqrt(0.8 * 0.2 / 10 + 1.96^2 / 400)
    z = 1.959963984540054
    denom = 1 + z * z / 10
    centre = (0.8 + z * z / 20) / denom
    half = z / denom * math.sqrt(0.016 + z * z / 400)
    lo, hi = trust.wilson(8, 10) or (0.0, 0.0)
    assert (lo, hi) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert (lo, hi) == pytest.approx((0.4902, 0.9433), abs=1e-4)  # the published value
    lo0, hi0 = trust.wilson(0, 30) or (1.0, 0.0)
    assert lo0 == pytest.approx(0.0, abs=1e-15) and hi0 == pytest.approx(z * z / (30 + z * z))
    assert trust.wilson(0, 0) is None


def test_coverage_is_judged_over_30_runs_or_more() -> None:
    narrow = trust.coverage([True] * 20 + [False] * 20)
    assert narrow is not None and narrow["judged"] and narrow["too_narrow"] and not narrow["too_wide"]
    assert "too narrow" in trust.coverage_text(narrow)
    few = trust.coverage([True] * 5 + [False] * 24)  # 29 runs: reported, not judged
    assert few is not None and not few["judged"] and not few["too_narrow"]
    wide = trust.coverage([True] * 100)
    assert wide is not None and wide["too_wide"] and not wide["too_narrow"]
    fine = trust.coverage([True] * 32 + [False] * 8)
    assert fine is not None and fine["coverage"] == 0.8 and not fine["too_narrow"] and not fine["too_wide"]
    assert trust.coverage([]) is None


def test_a_band_of_the_planted_noise_covers_80_percent() -> None:
    """Runs of compute, communication in both regimes and syncs, each part varying with its
    regime's planted sd: the band of those sds holds ~80 % of them (binomial tolerance); the
    parameters' spread alone (a tight f) holds far fewer, and the coverage says so."""
    noise = {"compute": 0.08, "sync": 0.3, "small_h": 0.15, "large_h": 0.05}
    spread = fc.Spread(f=0.005, noise=noise)
    work, bandwidth, latency = 1.0, 0.4, 0.1
    regimes = {"small_h": 0.1, "large_h": 0.3}
    low, high = fc.band(work, bandwidth, latency, spread, bandwidth_regimes=regimes)
    rng = np.random.default_rng(11)
    runs = 600

    def part(t: float, sd: float) -> Any:
        return t * np.exp(rng.normal(0.0, sd, runs))

    measured = (
        part(work, math.hypot(noise["compute"], 0.005))
        + part(regimes["small_h"], noise["small_h"])
        + part(regimes["large_h"], noise["large_h"])
        + part(latency, noise["sync"])
    )
    cov = trust.coverage(list((low <= measured) & (measured <= high)))
    assert cov is not None
    tolerance = 3 * math.sqrt(0.8 * 0.2 / runs)
    assert cov["coverage"] == pytest.approx(0.8, abs=tolerance)
    assert not cov["too_narrow"] and not cov["too_wide"]
    bare_low, bare_high = fc.band(work, bandwidth, latency, fc.Spread(f=0.005))
    bare = trust.coverage(list((bare_low <= measured) & (measured <= bare_high)))
    assert bare is not None and bare["coverage"] < 0.4 and bare["too_narrow"]


def test_a_spread_without_noise_gives_the_band_it_gave() -> None:
    spread = fc.Spread(0.05, 0.1, 0.2)
    assert fc.band(1.0, 0.5, 0.1, spread) == fc.band(1.0, 0.5, 0.1, fc.Spread(0.05, 0.1, 0.2, noise={}, model=0.0))
    wider = fc.band(1.0, 0.5, 0.1, fc.Spread(0.05, 0.1, 0.2, noise={"compute": 0.1}, model=0.1))
    assert wider[0] < fc.band(1.0, 0.5, 0.1, spread)[0] and wider[1] > fc.band(1.0, 0.5, 0.1, spread)[1]


# ------------------------------------------------------------------ the verdicts


def probe_params(rows: list[dict[str, Any]], noise: dict[str, Any] | None) -> Params:
    """A parameter file whose check is `rows`, measured while every process held its core."""
    errs = [abs(r["rel_error"]) for r in rows]
    data = copy.deepcopy(PARAMS_JSON)
    data["validation"] = {
        "threshold": 0.1,
        "points": rows,
        "used": len(rows),
        "skipped": 0,
        "mean_abs_rel_error": float(np.mean(errs)),
        "max_abs_rel_error": float(np.max(errs)),
        "pass": bool(np.mean(errs) <= 0.1),
    }
    data["machine_state"] = {"summary": {"batches": 200, "marked": 0}}
    if noise is not None:
        data["noise"] = noise
    return Params.from_json(data)


def test_the_probe_verdict_trusts_within_the_noise() -> None:
    v = verdict.probe_verdict(probe_params(synthetic_check(), noise_regimes()))
    assert v.level == "trust"
    assert v.sentence.startswith("These f, g and l can be trusted: eq. (2.6) is")
    assert "bias is within the machine's noise in every regime" in v.sentence
    assert "trust, within ±" in v.sentence and "Use them within ±" in v.advice


def test_a_noisy_machine_is_trusted_within_its_noise_above_the_threshold() -> None:
    """The issue's case: a mean |error| above 10 % that the machine's noise explains."""
    params = probe_params(synthetic_check(machine_sd=0.2), noise_regimes(0.2))
    assert not params.validation["pass"]
    v = verdict.probe_verdict(params)
    assert v.level == "trust" and "(above the threshold 10%), but" in v.sentence
    assert "trust, within ±3" in v.sentence


def test_the_probe_verdict_names_the_biased_regime() -> None:
    params = probe_params(synthetic_check(bias=0.6), noise_regimes())
    v = verdict.probe_verdict(params)
    assert "send, h* < 64 words: +" in v.sentence and "beyond the noise of" in v.sentence
    assert v.level == ("band" if params.validation["pass"] else "re-run")
    # without the machine's noise the verdict is the one before the split
    old = verdict.probe_verdict(probe_params(synthetic_check(bias=0.6), None))
    assert "beyond the noise" not in old.sentence


def validation_rows(bias: float, runs: int = 12, seed: int = 5) -> list[dict[str, Any]]:
    """Driver runs as measured_row writes them: measured = truth x the machine's noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(runs):
        truth = 0.5 + 0.1 * i
        measured = truth * math.exp(rng.normal(0.0, MACHINE_SD))
        pred = truth * (1 + bias)
        err = (pred - measured) / measured
        rows.append(
            {
                "size": 1000 * (i + 1),
                "sweep_value": "4" if i % 2 else "8",
                "measured_s": measured,
                "times_s": [measured] * 3,
                "predicted_s": dict.fromkeys(("g const", "g(h)", "g(h,h*)"), pred),
                "comm_s": dict.fromkeys(("g const", "g(h)", "g(h,h*)"), 0.1 * pred),
                "rel_error": dict.fromkeys(("g const", "g(h)", "g(h,h*)"), err),
                "rel_error_f_alone": dict.fromkeys(("g const", "g(h)", "g(h,h*)"), err),
                "efficiency": None,
                "median_rse": 0.005,
                "machine_sd": MACHINE_SD,
                "in_band": bool(abs(math.log(measured / pred)) < trust.Z_10_90 * MACHINE_SD),
            }
        )
    return rows


def test_a_regime_that_scatters_without_bias_is_trusted_within_its_wider_band() -> None:
    """A model error that averages out (scatter beyond the noise, no bias) is named with its own
    band, and the check is still trusted within the band of all its errors; a bias is not."""
    rows = synthetic_check(scatter=0.3)
    sp = pv.probe_split({"points": rows}, noise_regimes())
    assert sp is not None
    assert [st.regime for st in sp.flagged] == ["put, h* >= 4,096 words"]
    st = sp.flagged[0]
    assert st.scattered and not st.biased
    assert not sp.within_noise and sp.unbiased
    # its own band holds the planted scatter and the noise: exp(1.28 sqrt(0.3^2 + noise^2)) - 1
    assert st.error_band == pytest.approx(math.expm1(trust.Z_10_90 * math.hypot(0.3, expected_noise_sd())), rel=0.3)
    assert st.error_band > sp.trust_within
    text = trust.split_sentence(sp, "eq. (2.6)")
    assert "bias is within the machine's noise in every regime" in text
    assert "; it scatters beyond the noise in: put, h* >= 4,096 words: scatters ±" in text
    assert f"wider where it scatters beyond the noise: put, h* >= 4,096 words ±{trust.pc(st.error_band)}" in text
    v = verdict.probe_verdict(probe_params(rows, noise_regimes()))
    assert v.level == "trust" and f"Use them within ±{trust.pc(sp.trust_within)}" in v.advice
    # the same scatter with a bias elsewhere: that bias is named and nothing is trusted
    biased = synthetic_check(scatter=0.3, bias=0.6)
    sp2 = pv.probe_split({"points": biased}, noise_regimes())
    assert sp2 is not None and not sp2.unbiased
    assert verdict.probe_verdict(probe_params(biased, noise_regimes())).level != "trust"


def test_the_validate_verdict_trusts_within_the_noise_or_names_the_bias() -> None:
    rows = validation_rows(0.0)
    summary = va.group_summary(rows, "toy, p = 2", "q")  # type: ignore[arg-type]
    assert summary["split"]["within_noise"] and summary["split"]["all"]["n"] == 12
    v = verdict.validate_verdict(summary)
    assert v.level == "trust" and "trust, within ±" in v.sentence and "Use the model within ±" in v.advice
    biased = va.group_summary(validation_rows(0.3), "toy, p = 2", "q")  # type: ignore[arg-type]
    v = verdict.validate_verdict(biased)
    assert v.level == "re-run" and "toy, p = 2" in v.sentence and "beyond the noise of" in v.sentence


def test_the_validate_verdict_says_when_the_band_is_too_narrow() -> None:
    rows = validation_rows(0.0, runs=40)
    for r in rows:
        r["in_band"] = r["size"] % 3000 == 0  # 13 of 40 inside
    summary = va.group_summary(rows, "toy, p = 2")  # type: ignore[arg-type]
    check = summary["band_check"]
    assert check["runs"] == 40 and check["inside"] == 13 and check["too_narrow"]
    v = verdict.validate_verdict(summary)
    assert "band held 3" in v.sentence and "of 40 run(s)" in v.sentence and "too narrow" in v.sentence


# ------------------------------------------------------------------ the JSON additions


def test_the_probes_parameter_file_holds_the_split(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "raw.jsonl", SynthSpec(validation=24, reps=9))
    params = fit_run(load_raw(raw))
    val = params.validation
    scored = [r for r in val["points"] if "rel_error" in r]
    assert scored and all(r["median_rse"] > 0 for r in scored)
    split = val["split"]  # type: ignore[typeddict-item]
    assert {"all", "regimes", "flagged", "within_noise", "trust_within", "noise_band", "dimensions"} <= set(split)
    assert {"bias", "bias_ci", "noise_sd", "scatter_sd", "model_sd", "shares", "biased"} <= set(split["all"])
    again = Params.from_json(json.loads(params.dumps()))
    assert again.validation["split"] == json.loads(json.dumps(split))  # type: ignore[typeddict-item]
    # the spread a prediction's band reads: the machine's noise and the model's residual
    data = json.loads(params.dumps())
    data["noise"] = {**data["noise"], **noise_regimes(0.07)}
    spread = fc.spread_of(Params.from_json(data))
    assert spread.noise == dict.fromkeys(trust.REGIMES, 0.07)
    assert set(spread.to_json()) >= {"f", "g", "l", "noise", "model"}


def test_validate_json_holds_the_noise_the_split_and_the_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_validate import fake_driver, stand_in_launch

    from bspkit import algorithms as al
    from bspkit.commands import _inputs as inputs

    monkeypatch.setattr(al, "run_driver", fake_driver)
    monkeypatch.setattr(inputs, "driver_launch", stand_in_launch)
    params = tmp_path / "params.json"
    params.write_text(json.dumps({**PARAMS_JSON, "noise": noise_regimes(0.05)}))
    rc = cli.main(
        ["validate", "inprod", "--sizes", "1000,2000,3000", "-n", "2", "--params", str(params), "--output-dir",
         str(tmp_path / "out")]
    )  # fmt: skip
    assert rc == 0
    result = json.loads((tmp_path / "out" / "validate.json").read_text())
    for row in result["rows"]:
        assert 0 < row["machine_sd"] <= 0.05
        assert set(row["regime_s"]) == set(trust.REGIMES)
        assert row["interval_s"][0] < row["interval_parameters_s"][0] <= row["interval_parameters_s"][1]
    summary = result["summary"]["all"]
    assert summary["band_check"]["runs"] == 3 and not summary["band_check"]["judged"]
    assert summary["split"]["all"]["n"] == 3 and summary["split"]["all"]["regime"] == "inprod, p = 2"
    assert "band_coverage" in summary and "band_runs" in summary  # the keys there were before
    html = (tmp_path / "out" / "validate.html").read_text()
    assert "How far to trust it" in html and "95% interval" in html
