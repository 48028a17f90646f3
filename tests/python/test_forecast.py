"""bspkit.model.predict: a closed-form cost evaluated with a machine's parameters. The totals must be
what bspkit.model.supersteps gives for the same supersteps written out as a driver run (the reference:
the prediction `bspkit run --params` makes), the parts must add up to the total, the band must
hold the total and widen with the spread, speedup and efficiency follow eq. 4.11-4.12, and -n
lists parse as written."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from bspkit.commands._args import parse_procs
from bspkit.model import comm_models
from bspkit.model import supersteps as pd
from bspkit.model.costs import Cost, StepKind
from bspkit.model.params import Params
from bspkit.model.predict import (
    ForecastError,
    Machine,
    Rate,
    Spread,
    point,
    rate_from_run,
    rate_of,
    run_band,
    sweep,
)

from synth import L_EMPTY, PARAMS_JSON

PARAMS = Params.from_json(PARAMS_JSON)
F = 2.0e-9


def toy_cost(problem: Mapping[str, Any], p: int) -> Cost:
    """A made-up algorithm: n^2 / p work in 3 supersteps, an all-to-all of n / p words in the
    middle one (p - 1 messages), local work after the last sync."""
    n = int(problem["n"])
    h = 0 if p == 1 else n // p
    steps = (
        StepKind("setup", 1, float(n), 0, 0, 0, h_inout=0),
        # every process sends and receives h words: eq. 2.2's h_inout is 2 h
        StepKind("exchange", 2, n * n / p, h, p - 1, h / max(p - 1, 1), "put", "alltoall", h_inout=2 * h),
        StepKind("finish", 1, float(n) / p, 0, 0, 0, sync=False, h_inout=0),
    )
    return Cost("toy", p, {"n": n}, "flop", "dot_double_naive", steps)


def machine(spread: Spread | None = None) -> Machine:
    return Machine(PARAMS, "synthetic probe at p = 2", spread or Spread())


@pytest.mark.parametrize("p", [1, 2, 4, 16])
def test_the_totals_are_those_of_predict_on_the_written_out_run(p: int) -> None:
    cost = toy_cost({"n": 4096}, p)
    pt = point(cost, machine(), Rate(F, "given"))
    reference = pd.predict(PARAMS, {"supersteps": cost.supersteps(), "f_s_per_unit": F})
    for model in comm_models.NAMES:
        assert pt.models[model] == pytest.approx(reference[model], rel=1e-12)
    assert pt.work_s == pytest.approx(cost.W * F)


def test_the_parts_add_up_and_the_latency_is_l_per_superstep() -> None:
    pt = point(toy_cost({"n": 4096}, 4), machine(), Rate(F, "given"))
    assert pt.work_s + pt.bandwidth_s + pt.latency_s == pytest.approx(pt.predicted_s, rel=1e-12)
    assert pt.latency_s == pytest.approx(3 * L_EMPTY)  # S = 3 (the finish is not synchronized)
    assert sum(pt.shares().values()) == pytest.approx(1.0)


def test_what_if_halves_each_part() -> None:
    pt = point(toy_cost({"n": 4096}, 4), machine(), Rate(F, "given"))
    t = pt.predicted_s
    halved = {name.split()[0]: value for name, value, _ in pt.what_if()}
    assert halved["f"] == pytest.approx(t - pt.work_s / 2)
    assert halved["g"] == pytest.approx(t - pt.bandwidth_s / 2)
    assert halved["l"] == pytest.approx(t - pt.latency_s / 2)


def test_the_best_model_is_the_most_detailed_one_served() -> None:
    pt = point(toy_cost({"n": 4096}, 4), machine(), Rate(F, "given"))
    assert pt.best_model == "g(h,h*)"
    no_levels = Params.from_json(
        {**PARAMS_JSON, "g": {k: {**v, "levels": [], "predict": None} for k, v in PARAMS_JSON["g"].items()}}
    )
    assert point(toy_cost({"n": 4096}, 4), Machine(no_levels, "x"), Rate(F, "given")).best_model == "g const"


def test_the_band_holds_the_total_and_widens_with_the_spread() -> None:
    cost = toy_cost({"n": 4096}, 4)
    exact = point(cost, machine(), Rate(F, "given"))
    assert exact.interval_s == pytest.approx((exact.predicted_s, exact.predicted_s))
    narrow = point(cost, machine(Spread(0.02, 0.05, 0.1)), Rate(F, "given"))
    wide = point(cost, machine(Spread(0.1, 0.25, 0.5)), Rate(F, "given"))
    for pt in (narrow, wide):
        low, high = pt.interval_s
        assert low < pt.predicted_s < high
    assert wide.interval_s[1] - wide.interval_s[0] > 3 * (narrow.interval_s[1] - narrow.interval_s[0])


def test_the_kinds_sum_to_the_cost() -> None:
    cost = toy_cost({"n": 1000}, 8)
    pt = point(cost, machine(), Rate(F, "given"))
    assert sum(k.S for k in pt.kinds) == cost.S == 3
    assert sum(k.W for k in pt.kinds) == pytest.approx(cost.W)
    assert sum(k.H for k in pt.kinds) == pytest.approx(cost.H)
    assert sum(k.time_s or 0 for k in pt.kinds) == pytest.approx(pt.predicted_s)


def test_speedup_and_efficiency_over_p() -> None:
    result = sweep("toy", [{"n": 4096}], [1, 2, 4, 8], toy_cost, {p: machine() for p in (1, 2, 4, 8)}, Rate(F, "given"))
    one = result.points[0]
    assert one.speedup == pytest.approx(1.0)
    assert one.efficiency == pytest.approx(toy_cost({"n": 4096}, 1).W * F / one.predicted_s)
    for pt in result.points[1:]:
        assert pt.speedup == pytest.approx(one.predicted_s / pt.predicted_s)
        assert pt.efficiency == pytest.approx(toy_cost({"n": 4096}, 1).W * F / (pt.p * pt.predicted_s))
    assert result.target().p == 8


def test_the_json_contract() -> None:
    result = sweep("toy", [{"n": 1024}, {"n": 4096}], [1, 4], toy_cost, {1: machine(), 4: machine()}, Rate(F, "given"))
    out = result.to_json()
    assert out["p"] == 4 and out["problem"] == {"n": 4096}
    assert out["predicted_s"] == out["models"][out["best_model"]]
    assert set(out["models"]) == set(comm_models.NAMES)
    low, high = out["interval_s"]
    assert low <= out["predicted_s"] <= high
    assert [s["kind"] for s in out["supersteps"]] == ["setup", "exchange", "finish"]
    assert {"W", "H", "S", "source"} <= set(out["supersteps"][1])
    assert len(out["table"]) == 4


def test_f_from_the_parameter_file_a_run_or_an_error_saying_how() -> None:
    cost = toy_cost({"n": 10}, 2)
    assert rate_of(cost, Params.from_json({**PARAMS_JSON, "f": {"dot_double_naive": 3e-9}})).s_per_unit == 3e-9
    with pytest.raises(
        ForecastError, match="--f SECONDS_PER_FLOP, or --f-from RUN.json, a driver.s run on one process"
    ):
        rate_of(cost, Params.from_json({**PARAMS_JSON, "f": {}}))
    run = {"algorithm": "inprod", "p": 1, "params": {"n": 100}, "f_s_per_unit": 1e-9, "f_all_s_per_unit": 2e-9}
    assert rate_from_run(run, "inprod").s_per_unit == 2e-9
    assert rate_from_run(run, "inprod").spread is None  # no repetitions: the machine's spread of f
    timed = rate_from_run({**run, "times_s": [1.0, 1.1, 0.9, 1.0]}, "inprod")
    assert timed.spread == pytest.approx(float(np.std(np.log([1.0, 1.1, 0.9, 1.0]), ddof=1)))
    with pytest.raises(ForecastError, match="--measure-f"):
        rate_from_run({"algorithm": "inprod", "p": 2, "f_s_per_unit": None, "time_s": 1.0, "W": 1e9}, "inprod")
    alone = rate_from_run({"algorithm": "inprod", "p": 1, "time_s": 2.0, "W": 1e9, "times_s": [2.0, 2.2, 1.9]}, "x")
    assert alone.s_per_unit == pytest.approx(2e-9) and "time over its W" in alone.source
    assert alone.spread == pytest.approx(float(np.std(np.log([2.0, 2.2, 1.9]), ddof=1)))


@pytest.mark.parametrize(
    "text, procs",
    [
        ("4", [4]),
        ("1,2,4,8", [1, 2, 4, 8]),
        ("1,2,4,...,1024", [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]),
        ("1,4,16,...,1000", [1, 4, 16, 64, 256, 1000]),
        ("2,4,...,10", [2, 4, 8, 10]),
        ("4,8,12,...,20", [4, 8, 12, 16, 20]),
        ("1-5", [1, 2, 3, 4, 5]),
    ],
)
def test_procs_lists(text: str, procs: list[int]) -> None:
    assert parse_procs(text) == procs


@pytest.mark.parametrize("text", ["0", "a", "4-2", "1,...,8", "4,2,...,1", "1,2,...", ""])
def test_bad_procs_lists_say_what_is_wrong(text: str) -> None:
    with pytest.raises(ValueError, match="-n"):
        parse_procs(text)


def test_no_model_served_is_an_error() -> None:
    empty_g = Params.from_json({**PARAMS_JSON, "g": {}})
    with pytest.raises((ForecastError, pd.PredictionError)):
        point(toy_cost({"n": 4096}, 4), Machine(empty_g, "x"), Rate(F, "given"))
    assert math.isfinite(point(toy_cost({"n": 4096}, 1), Machine(empty_g, "x"), Rate(F, "given")).predicted_s)


def test_processes_beyond_the_cores_take_turns() -> None:
    cost = toy_cost({"n": 4096}, 8)
    alone = point(cost, machine(), Rate(F, "given"))
    shared = point(cost, Machine(PARAMS, "two cores", cores=2), Rate(F, "given"))
    assert shared.work_s == pytest.approx(4 * alone.work_s)
    assert shared.predicted_s - alone.predicted_s == pytest.approx(3 * alone.work_s)
    assert point(toy_cost({"n": 4096}, 2), Machine(PARAMS, "two cores", cores=2), Rate(F, "g")).work_s == (
        pytest.approx(toy_cost({"n": 4096}, 2).W * F)
    )


def test_a_driver_runs_band_is_that_of_its_most_detailed_model() -> None:
    cost = toy_cost({"n": 4096}, 4)
    run = {"supersteps": cost.supersteps(), "f_s_per_unit": F}
    prediction = pd.predict(PARAMS, run)
    spread = Spread(0.05, 0.1, 0.2)
    model, (low, high) = run_band(PARAMS, prediction, cost.S, spread) or ("", (0.0, 0.0))
    assert model == "g(h,h*)"
    same = point(cost, machine(spread), Rate(F, "given"))
    assert (low, high) == pytest.approx(same.interval_s)


def test_validate_counts_the_runs_inside_their_band() -> None:
    from bspkit.measure.validation import summarize

    def row(measured: float, inside: bool | None) -> dict[str, Any]:
        r: dict[str, Any] = {"measured_s": measured, "rel_error": dict.fromkeys(comm_models.NAMES, 0.1)}
        if inside is not None:
            r["in_band"] = inside
        return r

    rows = [row(1.0, True), row(1.0, False), row(1.0, True), row(1.0, None), row(0.01, False)]
    out = summarize(rows)  # type: ignore[arg-type]
    assert out["band_runs"] == 3  # the run below the shortest scored time and the one without a band left out
    assert out["band_coverage"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("spread", [None, Spread(0.05, 0.1, 0.2)])
def test_the_tables_and_the_page(spread: Spread | None) -> None:
    from bspkit.pages import predict_report as fr

    result = sweep(
        "toy", [{"n": 1024}, {"n": 4096}], [1, 2, 4], toy_cost, {p: machine(spread) for p in (1, 2, 4)}, Rate(F, "g")
    )
    lines = fr.text(result)
    text = "\n".join(lines)
    target = result.target()
    assert "at p = 4 (n = 4096)" in text
    assert ("no band" in text) == (spread is None)
    assert "speedup T(1)/T(p), best model, by problem and p:" in text
    rows = [line.split() for line in lines if line.strip().startswith("4 ")]
    assert len(rows) == 2  # a row for p = 4 in each problem's table
    for name, _, _ in target.what_if():
        assert name in text
    page = fr.html(result)
    assert page.count("<img") == 2 and "toy" in page


def test_the_spread_of_a_given_f_replaces_the_kernels() -> None:
    cost = toy_cost({"n": 4096}, 1)
    wide = machine(Spread(f=0.3, f_kernels={"dot_double_naive": 0.3}))
    kernels = point(cost, wide, Rate(F, "probe")).interval_s
    given = point(cost, wide, Rate(F, "given", spread=0.0)).interval_s
    assert kernels[1] > 1.3 * kernels[0]
    assert given[0] == pytest.approx(given[1])


def test_drawn_parameter_files_spread_as_asked() -> None:
    from bspkit.model.predict import params_draw

    big = {"w": 0, "h": 1 << 20, "count": 64, "msg_words": 1 << 14, "primitive": "put", "pattern": "alltoall"}
    still = params_draw(PARAMS, Spread())
    rng = np.random.default_rng(3)
    base = pd.superstep_comm_s(PARAMS, big, "g const")
    assert pd.superstep_comm_s(still(rng), big, "g const") == pytest.approx(base)
    draw = params_draw(PARAMS, Spread(g=0.2, l=0.0))
    times = [pd.superstep_comm_s(draw(rng), big, "g const") for _ in range(400)]
    logs = np.log(np.array(times) / base)
    # the step is almost all bandwidth: its time spreads as g does
    assert float(np.std(logs)) == pytest.approx(0.2, rel=0.15)
    assert abs(float(np.median(logs))) < 0.05
    assert pd.empty_sync_s(draw(rng)) == pytest.approx(L_EMPTY)  # l's spread 0: l stays
