"""The notebook API (bspkit.api, re-exported by bspkit): load_run, load_params,
predict_supersteps, plot_g_surface, plot_prediction."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

import bspkit
from bspkit.measure.rawdata import load_raw
from bspkit.model.fit import fit_run
from bspkit.model.params import ParamsError

from conftest import PYDIR
from synth import L_EMPTY, PARAMS_JSON, SynthSpec, write_synthetic

F = 1.0e-9  # seconds per work unit in the predictions below


@pytest.fixture
def params_file(tmp_path: Path) -> Path:
    path = tmp_path / "params.json"
    path.write_text(json.dumps(PARAMS_JSON))
    return path


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir()
    write_synthetic(d / "raw.jsonl", SynthSpec(as_suite=False))
    return d


@pytest.mark.slow
def test_importing_bspkit_loads_no_numpy_until_the_api_is_used() -> None:
    code = (
        "import sys, bspkit\n"
        "assert 'numpy' not in sys.modules and 'bspkit.api' not in sys.modules, 'imported too early'\n"
        "assert callable(bspkit.load_run) and 'numpy' in sys.modules\n"
        "assert 'predict_supersteps' in dir(bspkit)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(PYDIR)}, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    with pytest.raises(AttributeError, match="module 'bspkit' has no attribute 'nosuch'"):
        _ = bspkit.nosuch  # type: ignore[attr-defined]
    # bspkit re-exports exactly the API (its list is kept apart so that the import stays lazy)
    from bspkit import api

    assert sorted(bspkit._API) == sorted(api.__all__)


def test_load_run_fits_the_samples_or_reads_params_json(run_dir: Path) -> None:
    run = bspkit.load_run(run_dir)
    assert run.path == run_dir / "raw.jsonl"
    assert run.raw.g_keys() == ["put/alltoall", "get/permutation"]
    reference = fit_run(load_raw(run_dir / "raw.jsonl"))
    assert run.params.g["put/alltoall"].lsq_value("g_inf") == reference.g["put/alltoall"].lsq_value("g_inf")
    assert run.params.g["put/alltoall"].lsq_value("g_inf") == pytest.approx(1.0e-9, rel=0.1)  # synth's truth
    # a params.json beside raw.jsonl is read, not refitted (unless refit=True)
    (run_dir / "params.json").write_text(json.dumps(PARAMS_JSON))
    assert bspkit.load_run(run_dir).params.empty_sync_s() == L_EMPTY
    assert bspkit.load_run(run_dir / "raw.jsonl", refit=True).params.empty_sync_s() == pytest.approx(1.0e-6, rel=0.1)
    with pytest.raises(FileNotFoundError, match="no such file"):
        bspkit.load_run(run_dir / "nosuch")


def test_load_params(params_file: Path) -> None:
    params = bspkit.load_params(params_file)
    assert params.p == 2
    assert sorted(params.g) == ["get/permutation", "get/shift", "put/alltoall"]
    params_file.write_text('{"format": 99}')
    with pytest.raises(ParamsError):
        bspkit.load_params(params_file)


def test_predict_supersteps_against_hand_computed_times(params_file: Path) -> None:
    params = bspkit.load_params(params_file)
    steps = [
        {"w": 1000, "h": 1024, "count": 4, "primitive": "put", "pattern": "alltoall"},
        {"work": 500, "h": 0},  # no communication: the empty sync
        {"w": 10, "sync": False},  # local work after the last sync: w f only
    ]
    pred = bspkit.predict_supersteps(params, steps, f_s_per_unit=F)
    assert pred.work_s == pytest.approx([1000 * F, 500 * F, 10 * F])
    # put/alltoall: g const = Bisseling's g h + l (1.1e-9, 5e-6); g(h) and g(h,h*) = the per-h
    # fit at h = 1024: A = 9e-6, B = 3e-8 per message
    first = {"g const": 1.1e-9 * 1024 + 5.0e-6, "g(h)": 9.0e-6, "g(h,h*)": 9.0e-6 + 4 * 3.0e-8}
    # the seeds': the global fit (1e-9, 1500, 20) plus l0; the all-to-all g_inf plus l after an
    # all-to-all (4 us) in every superstep; eq. 2.2's h at h_inout / 2 (here 2048 / 2: balanced)
    first["g(h,h*)+l0"] = 1.0e-9 * (1024 + 1500.0 + 20.0 * 4) + L_EMPTY
    first["thesis g const"] = 1.0e-9 * 1024 + 4.0e-6
    first["g(h,h*) [in+out]"] = first["g(h,h*)"]
    steps[0]["h_inout"] = 2048
    pred = bspkit.predict_supersteps(params, steps, f_s_per_unit=F)
    for model in bspkit.MODELS:
        empty = 4.0e-6 if model == "thesis g const" else L_EMPTY
        expected = [1000 * F + first[model], 500 * F + empty, 10 * F]
        assert pred.per_superstep[model] == pytest.approx(expected, rel=1e-12)
        assert pred.total[model] == pytest.approx(sum(expected), rel=1e-12)


def test_predict_supersteps_unusable_surface_and_bad_input(params_file: Path) -> None:
    params = bspkit.load_params(params_file)
    params.g = {"get/shift": params.g["get/shift"]}  # nothing usable for any primitive
    pred = bspkit.predict_supersteps(params, [{"h": 100, "primitive": "get", "pattern": "shift"}, {"h": 0}])
    assert pred.per_superstep["g(h)"] == [None, L_EMPTY]
    assert pred.total["g(h)"] is None
    with pytest.raises(ValueError, match=r"superstep 0 has work w = 5: give f_s_per_unit"):
        bspkit.predict_supersteps(params, [{"w": 5}])
    with pytest.raises(ValueError, match=r"superstep 1: h = -3 is not a non-negative number"):
        bspkit.predict_supersteps(params, [{"h": 0}, {"h": -3}])


def test_plot_g_surface_draws_the_samples_and_the_model(run_dir: Path) -> None:
    run = bspkit.load_run(run_dir)
    fig, ax = plt.subplots()
    assert bspkit.plot_g_surface(run, "put/alltoall", ax) is ax
    counts = sorted({pt.count for pt in run.raw.g_points("put/alltoall")})
    measured = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    assert [line.get_label() for line in measured] == [f"c = {c}" for c in counts]
    first = sorted((pt for pt in run.raw.g_points("put/alltoall") if pt.count == counts[0]), key=lambda pt: pt.h)
    assert list(measured[0].get_ydata()) == pytest.approx([pt.g_tilde * 1e9 for pt in first])
    assert sum(line.get_linestyle() == "--" for line in ax.get_lines()) == len(counts)
    with pytest.raises(ValueError, match="put/shift: not measured"):
        bspkit.plot_g_surface(run, "put/shift", ax)
    plt.close(fig)


def test_plot_prediction_puts_each_model_against_the_measurement() -> None:
    fig, ax = plt.subplots()
    bspkit.plot_prediction([1.0, 2.0], {"g(h)": [1.5, None], "g const": [0.5, 2.5]}, ax)
    offsets = [coll.get_offsets().tolist() for coll in ax.collections]
    assert offsets == [[[1.0, 1.5]], [[1.0, 0.5], [2.0, 2.5]]]
    diagonal = ax.get_lines()[0]
    assert (list(diagonal.get_xdata()), list(diagonal.get_ydata())) == ([0.5, 2.5], [0.5, 2.5])
    with pytest.raises(ValueError, match="g const: 1 predictions for 2 measurements"):
        bspkit.plot_prediction([1.0, 2.0], {"g const": [1.0]}, ax)
    plt.close(fig)
