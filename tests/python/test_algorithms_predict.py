"""bspkit.algorithms: the predicted time of a driver run from a parameter file under the three
communication models, the summary of a validation sweep, the efficiency, and `bspkit run`
end to end (when the drivers are built).

The prediction is T = sum(w) f + sum over synchronized supersteps of comm, with comm per
model (algorithms.superstep_comm_s):
  g const:  g h + l         (linreg's g and l; l empty where linreg has no l)
  g(h):     A(h) of the per-h fit (`levels`: log-linear between the grid's h), else the
            global g_inf (h + h_half) of eq. (2.5) (lsq_2.5's where the predict model is 2.6)
  g(h,h*):  A(h) + B(h) c of the per-h fit, else g_inf (h + h_half + o c) of `predict`
and l empty for a superstep without communication (h = 0)."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import run_bspkit

from bspkit.algorithms import (
    ALGORITHMS,
    MIN_VALIDATED_TIME_S,
    MODELS,
    AlgorithmError,
    efficiency,
    find_algorithm,
    predict,
    relative_error,
    summarize,
    superstep_comm_s,
)

L_EMPTY = 2.0e-6
F = 2.0e-9

PARAMS: dict[str, Any] = {
    "format": 1,
    "p": 2,
    "l": {"empty": L_EMPTY, "shift": 3.0e-6, "alltoall": 4.0e-6},
    "g": {
        "put/alltoall": {
            "predict": {"model": "2.6 lsq", "g_inf": 1.0e-9, "h_half": 1500.0, "o": 20.0},
            "lsq_2.5": {"g_inf": [1.2e-9, 1.1e-9, 1.3e-9], "h_half": [3000.0, 2500.0, 3500.0]},
            "linreg": {"msg_words": 256, "g": [1.1e-9, 1.0e-9, 1.2e-9], "l": [5.0e-6, 4.0e-6, 6.0e-6]},
            # the per-h fit: what g(h) and g(h,h*) use where it exists
            "levels": [{"h": 1024, "A_s": 9.0e-6, "B_s": 3.0e-8, "g_h": 8.8e-9},
                       {"h": 8192, "A_s": 2.0e-5, "B_s": 3.0e-8, "g_h": 2.4e-9}],
        },
        "get/permutation": {
            "predict": {"model": "2.5 lsq", "g_inf": 3.0e-9, "h_half": 800.0, "o": 0.0},
            "lsq_2.5": {"g_inf": [3.0e-9, 2.9e-9, 3.1e-9], "h_half": [800.0, 700.0, 900.0]},
            "linreg": {"msg_words": 64, "g": [2.5e-9, 2.4e-9, 2.6e-9], "l": None},  # no l: l empty
        },
        # measured but nothing usable: skipped by the fallback
        "get/shift": {"predict": None, "linreg": {"g": None, "l": None}},
    },
}

PUT = {"w": 1.0e6, "h": 4096, "count": 16, "msg_words": 256, "primitive": "put", "pattern": "alltoall", "sync": True}
EMPTY = {"w": 5.0e5, "h": 0, "count": 0, "msg_words": 0, "primitive": None, "pattern": None, "sync": True}
GET = {"w": 2.0e5, "h": 1000, "count": 250, "msg_words": 4, "primitive": "get", "pattern": "permutation", "sync": True}
TAIL = {"w": 3.0e5, "h": 0, "count": 0, "msg_words": 0, "primitive": None, "pattern": None, "sync": False}

# per superstep and model, by hand: put/alltoall from its levels (h = 4096 is 2/3 of the way
# from 1024 to 8192 in log h), get/permutation (no levels) from the global fits
A_4096 = (9.0e-6 ** (1 / 3)) * (2.0e-5 ** (2 / 3))
EXPECT = {
    "g const": {"put": 1.1e-9 * 4096 + 5.0e-6, "get": 2.5e-9 * 1000 + L_EMPTY},
    "g(h)": {"put": A_4096, "get": 3.0e-9 * (1000 + 800.0)},
    "g(h,h*)": {"put": A_4096 + 3.0e-8 * 16, "get": 3.0e-9 * (1000 + 800.0 + 0.0 * 250)},
}


def run_of(steps: list[dict[str, Any]], f: float | None = F) -> dict[str, Any]:
    return {"algorithm": "test", "p": 2, "time_s": 0.01, "f_s_per_unit": f, "supersteps": steps}


# ------------------------------------------------------------------ predict


def test_superstep_comm_per_model() -> None:
    for m in MODELS:
        assert superstep_comm_s(PARAMS, PUT, m) == pytest.approx(EXPECT[m]["put"], rel=1e-12), m
        assert superstep_comm_s(PARAMS, GET, m) == pytest.approx(EXPECT[m]["get"], rel=1e-12), m
        # no communication: the empty sync, whatever the model and the primitive named
        assert superstep_comm_s(PARAMS, EMPTY, m) == L_EMPTY
        assert superstep_comm_s(PARAMS, {**PUT, "h": 0}, m) == L_EMPTY
        assert superstep_comm_s(PARAMS, {"w": 1.0}, m) == L_EMPTY


def test_predict_sums_work_and_communication() -> None:
    pred = predict(PARAMS, run_of([PUT, EMPTY, GET, TAIL]))
    work = (1.0e6 + 5.0e5 + 2.0e5 + 3.0e5) * F  # every entry's work, the trailing one included
    assert pred["work_s"] == pytest.approx(work, rel=1e-12)
    assert pred["f_s_per_unit"] == F
    for m in MODELS:
        comm = EXPECT[m]["put"] + L_EMPTY + EXPECT[m]["get"]  # the trailing entry: no l
        assert pred[m + " comm_s"] == pytest.approx(comm, rel=1e-12), m
        assert pred[m] == pytest.approx(work + comm, rel=1e-12), m
    # the three models differ on this run (the test tells them apart)
    assert len({round(pred[m], 12) for m in MODELS}) == 3


def test_non_sync_entry_costs_only_its_work() -> None:
    base = predict(PARAMS, run_of([PUT, GET]))
    for tail in (TAIL, {**TAIL, "h": 500, "count": 5, "primitive": "put", "pattern": "alltoall"}):
        with_tail = predict(PARAMS, run_of([PUT, GET, tail]))
        for m in MODELS:
            assert with_tail[m] - base[m] == pytest.approx(tail["w"] * F, rel=1e-9), m
            assert with_tail[m + " comm_s"] == pytest.approx(base[m + " comm_s"], rel=1e-12)
    # a synchronized empty superstep costs its work and l
    with_sync = predict(PARAMS, run_of([PUT, GET, {**TAIL, "sync": True}]))
    for m in MODELS:
        assert with_sync[m] - base[m] == pytest.approx(TAIL["w"] * F + L_EMPTY, rel=1e-9)


def test_f_is_needed_and_an_argument_overrides_the_runs() -> None:
    for f in (None, 0.0):
        with pytest.raises(AlgorithmError, match="no f"):
            predict(PARAMS, run_of([PUT], f=f))
    run = run_of([PUT], f=None)
    del run["f_s_per_unit"]
    with pytest.raises(AlgorithmError):
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
    params = copy.deepcopy(PARAMS)
    params["g"]["put/shift"] = {"predict": {"model": "2.5 lsq", "g_inf": 9e-9, "h_half": 1.0, "o": 0.0},
                                "linreg": {"g": [9e-9, 8e-9, 1e-8], "l": [1e-6, 0.5e-6, 1.5e-6]}}
    assert superstep_comm_s(params, {**GET, "pattern": "shift"}, "g(h,h*)") == pytest.approx(EXPECT["g(h,h*)"]["get"])
    assert superstep_comm_s(params, {**PUT, "pattern": "shift"}, "g(h,h*)") == pytest.approx(9e-9 * (4096 + 1.0))


def test_g_of_h_without_lsq_2_5_uses_predict_without_o() -> None:
    # an older parameter file: no per-h levels, only the global fits
    params = copy.deepcopy(PARAMS)
    del params["g"]["put/alltoall"]["levels"]
    params["g"]["put/alltoall"]["lsq_2.5"] = {"g_inf": None, "h_half": None}
    assert superstep_comm_s(params, PUT, "g(h)") == pytest.approx(1.0e-9 * (4096 + 1500.0), rel=1e-12)
    # lsq_2.5 with a null h_half: h_half 0
    params["g"]["put/alltoall"]["lsq_2.5"] = {"g_inf": [1.2e-9, 1.1e-9, 1.3e-9], "h_half": None}
    assert superstep_comm_s(params, PUT, "g(h)") == pytest.approx(1.2e-9 * 4096, rel=1e-12)


def test_missing_parameters() -> None:
    # no usable g anywhere: no prediction under any model, but no exception
    params = {**PARAMS, "g": {"get/shift": PARAMS["g"]["get/shift"]}}
    pred = predict(params, run_of([PUT, EMPTY]))
    for m in MODELS:
        assert pred[m] is None and pred[m + " comm_s"] is None
    assert pred["work_s"] == pytest.approx(1.5e6 * F)
    # only empty supersteps need no g
    pred = predict(params, run_of([EMPTY, EMPTY, TAIL]))
    for m in MODELS:
        assert pred[m] == pytest.approx((2 * 5.0e5 + 3.0e5) * F + 2 * L_EMPTY, rel=1e-12)
    # linreg without g: g const takes the time per word of the largest h measured (the last
    # level's g(h)) and l empty; without levels either it has no prediction
    params = copy.deepcopy(PARAMS)
    params["g"]["put/alltoall"]["linreg"] = {"g": None, "l": None}
    pred = predict(params, run_of([PUT]))
    assert pred["g const"] == pytest.approx(1.0e6 * F + 2.4e-9 * 4096 + L_EMPTY, rel=1e-12)
    assert pred["g(h,h*)"] == pytest.approx(1.0e6 * F + EXPECT["g(h,h*)"]["put"], rel=1e-12)
    del params["g"]["put/alltoall"]["levels"]
    pred = predict(params, run_of([PUT]))
    assert pred["g const"] is None
    assert pred["g(h,h*)"] == pytest.approx(1.0e6 * F + 1.0e-9 * (4096 + 1500.0 + 20.0 * 16), rel=1e-12)
    # an empty superstep without the probe's l: an error that says so
    with pytest.raises(AlgorithmError, match="empty sync"):
        predict({**PARAMS, "l": {}}, run_of([PUT, EMPTY]))


# --------------------------------------------------- summary, efficiency, errors


def row(measured: float, **errs: float | None) -> dict[str, Any]:
    names = {"const": "g const", "h": "g(h)", "hh": "g(h,h*)"}
    return {"measured_s": measured, "rel_error": {names[k]: v for k, v in errs.items()}}


def test_summarize_uses_long_runs_and_picks_least_error() -> None:
    rows = [
        row(1.0, const=0.30, h=-0.10, hh=0.05),
        row(MIN_VALIDATED_TIME_S, const=-0.20, h=0.20, hh=-0.07),  # exactly the bound: counted
        row(0.05, const=0.0, h=0.0, hh=5.0),  # too short: left out (else g(h) would be best)
        row(2.0, const=0.10, h=None, hh=0.03),  # no g(h) prediction for this one
    ]
    s = summarize(rows)
    assert s["min_time_s"] == MIN_VALIDATED_TIME_S == 0.1
    assert s["runs"] == 4 and s["runs_used"] == 3
    assert s["g const"] == pytest.approx(0.2, rel=1e-12)
    assert s["g(h)"] == pytest.approx(0.15, rel=1e-12)
    assert s["g(h,h*)"] == pytest.approx(0.05, rel=1e-12)
    assert s["best_model"] == "g(h,h*)" and s["best_error"] == pytest.approx(0.05)
    s2 = summarize([row(0.5, const=0.4, h=-0.02, hh=0.1), row(0.3, const=-0.1, h=0.04, hh=-0.1)])
    assert s2["best_model"] == "g(h)" and s2["best_error"] == pytest.approx(0.03)
    s3 = summarize([row(0.05, const=0.1, h=0.1, hh=0.1)])
    assert s3["runs_used"] == 0 and s3["best_model"] is None and all(s3[m] is None for m in MODELS)


def test_efficiency_is_one_process_work_over_p_T() -> None:
    n, p, t, f = 1000, 4, 2.0, 1.0e-10
    for name in ("matmul-blockcyclic", "matmul-static2d", "cannon-put", "cannon-get"):
        run = {"params": {"n": n, "q": 8}, "p": p, "time_s": t}
        assert efficiency(ALGORITHMS[name], run, f) == pytest.approx(2 * n**3 * f / (p * t), rel=1e-12)
    assert efficiency(ALGORITHMS["inprod"], {"params": {"n": 10**6}, "p": 2, "time_s": 1e-3}, 4e-10) == pytest.approx(
        2e6 * 4e-10 / (2 * 1e-3), rel=1e-12)
    assert efficiency(ALGORITHMS["llcs-dp"], {"params": {"m": 300, "n": 500}, "p": 3, "time_s": 0.5}, 1e-9) == pytest.approx(
        300 * 500 * 1e-9 / (3 * 0.5), rel=1e-12)
    run = {"params": {"n": n}, "p": p, "time_s": t}
    assert efficiency(ALGORITHMS["matmul-blockcyclic"], run, None) is None
    assert efficiency(ALGORITHMS["matmul-blockcyclic"], {**run, "time_s": 0}, f) is None
    assert efficiency(ALGORITHMS["matmul-blockcyclic"], {**run, "params": {}}, f) is None


def test_relative_error_and_unknown_algorithm() -> None:
    assert relative_error(1.1, 1.0) == pytest.approx(0.1)
    assert relative_error(0.5, 2.0) == pytest.approx(-0.75)
    assert relative_error(None, 1.0) is None and relative_error(1.0, 0.0) is None
    assert find_algorithm("inprod").driver == "bspalg-inprod"
    with pytest.raises(AlgorithmError) as e:
        find_algorithm("nosuchalg")
    assert "nosuchalg" in str(e.value)
    for name in ALGORITHMS:
        assert name in str(e.value)


# ------------------------------------------------------------- end to end

BUILD = Path(os.environ["BSPKIT_BUILD_DIR"]) if os.environ.get("BSPKIT_BUILD_DIR") else None
HAVE_INPROD = bool(BUILD and (BUILD / "bin" / "bspalg-inprod").is_file() and (BUILD / "bin" / "bsprun").is_file())
needs_inprod = pytest.mark.skipif(not HAVE_INPROD, reason="$BSPKIT_BUILD_DIR/bin/bspalg-inprod (and bsprun) not built")


@needs_inprod
def test_run_inprod_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    r = run_bspkit("run", "inprod", "-n", "2", "--size", "100000", "--json", str(out),
                   env={"BSPKIT_BUILD_DIR": str(BUILD)}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "check: passed" in r.stdout
    assert "inprod on 2 processes" in r.stdout
    d = json.loads(out.read_text())
    assert d["algorithm"] == "inprod" and d["p"] == 2 and d["params"]["n"] == 100000
    assert d["verified"] is True
    assert d["S"] == sum(1 for s in d["supersteps"] if s["sync"])
    assert d["W"] == sum(s["w"] for s in d["supersteps"])
    # cyclic distribution: each of the 2 processes multiplies and adds its n / 2 pairs
    assert d["supersteps"][0]["w"] == 2 * 100000 // 2


@needs_inprod
def test_run_inprod_with_params_prints_the_predictions(tmp_path: Path) -> None:
    pfile = tmp_path / "params.json"
    pfile.write_text(json.dumps(PARAMS))
    out = tmp_path / "run.json"
    r = run_bspkit("run", "inprod", "-n", "2", "--size", "100000", "--params", str(pfile), "--json", str(out),
                   env={"BSPKIT_BUILD_DIR": str(BUILD)}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "check: passed" in r.stdout
    d = json.loads(out.read_text())
    f = d["f_s_per_unit"]
    assert f and f > 0  # --params makes the run measure f
    m = re.search(r"efficiency .*: ([0-9.]+)%", r.stdout)
    assert m and float(m.group(1)) / 100 == pytest.approx(2 * 100000 * f / (2 * d["time_s"]), abs=6e-4)
    pred = predict(PARAMS, d)
    for model in MODELS:
        m = re.search(rf"^  {re.escape(model)}\s+([0-9.eE+-]+) s \(", r.stdout, re.M)
        assert m, f"no prediction line for {model}:\n{r.stdout}"
        assert float(m.group(1)) == pytest.approx(pred[model], rel=1e-3)


def test_run_unknown_algorithm_is_a_usage_error() -> None:
    r = run_bspkit("run", "nosuchalg", timeout=60)
    assert r.returncode == 2
    assert "unknown algorithm 'nosuchalg'" in r.stderr
    for name in ALGORITHMS:
        assert name in r.stderr
