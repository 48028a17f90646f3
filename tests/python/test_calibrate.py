"""The short calibration (issue 17): the record and file format, the drift against a parameter
file, the scaled parameters and the predictions they give, the flags past the threshold, and
the report's drift section. Deterministic: synthetic parameters and calibrations, no timing."""

from __future__ import annotations

import copy
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bspkit import cli
from bspkit.measure import calibration as cb
from bspkit.model import drift as cm
from bspkit.model import supersteps as pd
from bspkit.model.params import Params

from conftest import BUILD, needs_programs, run_bspkit
from synth import PARAMS_JSON, calibration_record


def params_with_f() -> Params:
    d = copy.deepcopy(PARAMS_JSON)
    d["f"] = {"dot_double_naive": 1.0e-9, "dot_double_blas": 0.5e-9, "matmul_double_blas": 2.0e-11}
    d["machine"] = {"mode": "full", "date": "2026-11-25T09:00:00Z"}
    return Params.from_json(d)


def test_a_calibration_record_reads_as_medians_in_seconds() -> None:
    rec = {
        "type": "calibration",
        "round": 0,
        "seq": 12,
        "t_s": 3.5,
        "elapsed_s": 0.21,
        "f": [{"kernel": "dot_double_naive", "n": 100, "ops": 200, "samples_s": [4e-7, 2e-7, 3e-7]}],
        "g": [
            {
                "primitive": "put",
                "pattern": "alltoall",
                "msg_words": 4096,
                "count": 64,
                "h": 262144,
                "samples_s": [1e-3, 3e-3, 2e-3],
            },
            {"primitive": "put", "pattern": "alltoall", "msg_words": 256, "count": 8, "h": 2048, "samples_s": [5e-5]},
        ],
        "l": [{"variant": "empty", "samples_s": [1e-6, 9e-6, 2e-6], "batch": 100}],
    }
    cal = cm.Calibration.from_record(rec, "2026-11-25T10:00:00Z")
    assert cal.f == {"dot_double_naive": pytest.approx(3e-7 / 200)}  # median / ops: seconds per operation
    assert [(p.h, p.time_s) for p in cal.g] == [(2048, 5e-5), (262144, 2e-3)]  # ascending h
    assert cal.l == {"empty": 2e-6}
    assert (cal.seq, cal.t_s, cal.date) == (12, 3.5, "2026-11-25T10:00:00Z")
    back = cm.Calibration.from_json(json.loads(json.dumps(cal.to_json())))
    assert back.f == cal.f and back.l == cal.l and [p.to_json() for p in back.g] == [p.to_json() for p in cal.g]
    with pytest.raises(cm.CalibrationError, match="no samples"):
        cm.Calibration.from_record({**rec, "l": [{"variant": "empty", "samples_s": []}]})


def test_drift_is_each_quantity_now_over_the_probe() -> None:
    params = params_with_f()
    cal = cm.Calibration.from_record(calibration_record(params, g_factor=1.5, l_factor=2.0, f_factor=1.2))
    drift = cm.drift_of(cal, params)
    head = drift.headline
    assert head["g"] == pytest.approx(1.5) and head["g_small"] == pytest.approx(1.5)
    assert head["l"] == pytest.approx(2.0) and head["l_shift"] == pytest.approx(2.0)
    assert head["f"] == pytest.approx(1.2)
    assert set(drift.f) == {"dot_double_naive", "dot_double_blas"}  # the kernels both have
    # a parameter file that shares nothing with the calibration
    empty = Params.from_json({"format": 1, "g": {}})
    with pytest.raises(cm.CalibrationError, match="nothing|no quantity"):
        cm.drift_of(cal, empty)


def test_g_drift_is_log_linear_between_the_calibrated_sizes() -> None:
    drift = cm.Drift(f={}, g=[(2048, 1.0), (262144, 4.0)], l={})
    assert drift.g_at(100) == 1.0 and drift.g_at(1e9) == 4.0  # constant beyond the two sizes
    mid = math.sqrt(2048 * 262144)  # halfway in log h: halfway in log drift
    assert drift.g_at(mid) == pytest.approx(2.0)


def run_with(h: int, count: int, w: float = 0.0) -> dict[str, Any]:
    return {
        "algorithm": "toy",
        "time_s": 1.0,
        "f_all_s_per_unit": 1e-9,
        "supersteps": [
            {
                "w": w,
                "h": h,
                "count": count,
                "msg_words": h // count,
                "primitive": "put",
                "pattern": "alltoall",
                "sync": True,
            },
            {"w": 0.0, "h": 0, "count": 0, "sync": True},
        ],
    }


def test_scaled_parameters_give_the_known_scaled_prediction() -> None:
    params = params_with_f()
    drift = cm.Drift(
        f={"dot_double_naive": 1.2, "dot_double_blas": 1.2},
        g=[(2048, 1.5), (262144, 1.5)],
        l={"empty": 2.0, "shift": 3.0},
    )
    scaled = cm.scaled(params, drift)
    run = run_with(4096, 16, w=1e6)
    raw, cal = pd.predict(params, run), pd.predict(scaled, run)
    empty = PARAMS_JSON["l"]["empty"]
    for model in ("g(h)", "g(h,h*)"):
        comm_raw = raw[model + " comm_s"] - empty
        assert cal[model + " comm_s"] == pytest.approx(1.5 * comm_raw + 2.0 * empty)
    # g const: Bisseling's g times g's drift, his l times the shift sync's
    g, l_s = 1.1e-9, 5.0e-6
    assert raw["g const comm_s"] == pytest.approx(g * 4096 + l_s + empty)
    assert cal["g const comm_s"] == pytest.approx(1.5 * g * 4096 + 3.0 * l_s + 2.0 * empty)
    # the work is the run's own f, not the parameter file's
    assert cal["work_s"] == raw["work_s"] == pytest.approx(1e6 * 1e-9)
    assert scaled.f["dot_double_naive"] == pytest.approx(1.2e-9)
    assert cm.scaled(params, drift, scale_f=False).f == params.f
    assert params.l["empty"] == empty  # the original is untouched


def test_within_run_ratios_and_the_mean_over_a_run() -> None:
    before = cm.Drift(f={"k": 1.0}, g=[(2048, 1.0), (262144, 1.0)], l={"empty": 1.0})
    after = cm.Drift(f={"k": 1.1}, g=[(2048, 1.0), (262144, 1.3)], l={"empty": 0.7})
    assert cm.within_run(before, after) == pytest.approx({"f": 1.1, "g": 1.3, "l": 0.7})
    mean = cm.mean_drift(before, after)
    assert mean.headline["g"] == pytest.approx(math.sqrt(1.3)) and mean.headline["l"] == pytest.approx(math.sqrt(0.7))
    assert cm.mean_drift(before, None) is before  # no calibration after: the one before


def write_calibration(path: Path, params: Params, factor: float) -> Path:
    cal = cm.Calibration.from_record(calibration_record(params, factor, factor), "2026-11-25T10:00:00Z")
    path.write_text(json.dumps(cb.calibration_file(cal, None, None)))
    return path


def test_calibration_file_round_trip_and_refusals(tmp_path: Path) -> None:
    params = params_with_f()
    path = write_calibration(tmp_path / "cal.json", params, 2.0)
    cal = cb.read_calibration(path)
    assert cm.drift_of(cal, params).headline["g"] == pytest.approx(2.0)
    data = json.loads(path.read_text())
    assert data["format"] == cb.CALIBRATION_FORMAT and data["kind"] == "bspkit calibration"
    (tmp_path / "params.json").write_text(json.dumps(PARAMS_JSON))
    with pytest.raises(cb.Failure, match="not a calibration file"):
        cb.read_calibration(tmp_path / "params.json")
    (tmp_path / "newer.json").write_text(json.dumps({**data, "format": 99}))
    with pytest.raises(cb.Failure, match="format"):
        cb.read_calibration(tmp_path / "newer.json")


def test_the_verdict_says_when_the_machine_moved() -> None:
    still = cm.Drift(f={}, g=[(2048, 1.05), (262144, 0.95)], l={"empty": 1.1})
    assert "still describe" in cb.verdict(still)
    moved = cm.Drift(f={}, g=[(2048, 1.0), (262144, 1.6)], l={"empty": 1.0})
    assert "g x1.60" in cb.verdict(moved)


def test_profile_prediction_with_a_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from synth_profile import StepSpec, records, write_profile

    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(PARAMS_JSON))
    params = Params.from_json(PARAMS_JSON)
    steps = [
        StepSpec([1.0, 2.0, 3.0], [0.5, 0.5, 0.5], out={0: [(1, 2, 10), (2, 1, 5)], 1: [(2, 3, 3000)]}),
        StepSpec([0.4, 0.2, 0.2], [0.1, 0.1, 0.1], in_get={0: [(1, 4, 40)]}),
        StepSpec([0.1, 0.1, 0.1], [0.01, 0.01, 0.01]),
        StepSpec([0.2, 0.3, 0.1], [0.001, 0.001, 0.001], end="bsp_end", site=None),
    ]
    prof = write_profile(tmp_path / "run.jsonl", records(3, steps))
    assert cli.main(["profile", str(prof), "--params", str(params_path), "--json", str(tmp_path / "a.json")]) == 0
    cal = write_calibration(tmp_path / "cal.json", params, 3.0)
    args = ["profile", str(prof), "--params", str(params_path), "--calibration", str(cal)]
    assert cli.main([*args, "--json", str(tmp_path / "b.json")]) == 0
    raw = json.loads((tmp_path / "a.json").read_text())["prediction"]
    calibrated = json.loads((tmp_path / "b.json").read_text())["prediction"]
    for model in ("g(h)", "g(h,h*)"):  # drift x3 in g and l everywhere: communication x3, compute alone
        assert calibrated["comm_s"][model] == pytest.approx(3.0 * raw["comm_s"][model])
    assert "calibrated by" in calibrated["params"]
    # usage: a calibration needs the parameters it scales
    assert cli.main(["profile", str(prof), "--calibration", str(cal)]) == 2
    assert "--calibration" in capsys.readouterr().err
    # a file that is not a calibration: one message, exit 1
    assert cli.main(["profile", str(prof), "--params", str(params_path), "--calibration", str(params_path)]) == 1
    assert "not a calibration file" in capsys.readouterr().err


def test_run_calibrate_needs_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "inprod", "-n", "2", "--calibrate"]) == 2
    assert "--calibrate" in capsys.readouterr().err


def test_the_smaller_pass_is_the_machine_and_the_probe_s_rounds_are_the_reference() -> None:
    params = params_with_f()
    rec = calibration_record(params, 1.0, 1.0)
    # a second pass that a pause hit: twice as slow everywhere; the first pass is kept
    slow = calibration_record(params, 2.0, 2.0, 2.0)
    for kind in ("f", "g", "l"):
        rec[kind] = [{**e, "pass": 0} for e in rec[kind]] + [{**e, "pass": 1} for e in slow[kind]]
    cal = cm.Calibration.from_record(rec)
    assert cm.drift_of(cal, params).headline == pytest.approx(
        {"f": 1.0, "g": 1.0, "g_small": 1.0, "l": 1.0, "l_shift": 1.0}
    )
    # the probe's own rounds (x1, x3, x1.2) are the reference: their median is x1.2
    rounds = [cm.Calibration.from_record(calibration_record(params, k, k, k)) for k in (1.0, 3.0, 1.2)]
    ref = cm.reference_of(rounds)
    assert ref["rounds"] == 3
    with_ref = copy.deepcopy(params)
    with_ref.calibration = ref
    now = cm.Calibration.from_record(calibration_record(params, 2.4, 1.2, 0.6))
    head = cm.drift_of(now, with_ref).headline
    assert head["g"] == pytest.approx(2.0) and head["l"] == pytest.approx(1.0) and head["f"] == pytest.approx(0.5)
    # and it survives the parameter file's JSON
    assert Params.from_json(with_ref.to_json()).calibration == json.loads(json.dumps(ref))


def test_f_on_every_process_is_compared_with_the_probe_s_rounds_only() -> None:
    params = params_with_f()
    rec = calibration_record(params, 1.0, 1.0, 2.0)
    for e in rec["f"]:
        e["procs"] = 2  # timed on every process at once: not the probe's f (process 0 alone)
    cal = cm.Calibration.from_record(rec)
    assert set(cal.f) == {"dot_double_naive x2", "dot_double_blas x2"}
    assert cm.drift_of(cal, params).headline["f"] is None  # no such f in the fitted values
    with_ref = copy.deepcopy(params)
    with_ref.calibration = cm.reference_of([cm.Calibration.from_record(calibration_record(params, 1.0, 1.0, 1.0))])
    with_ref.calibration["f_s_per_op"] = {f"{k} x2": v for k, v in with_ref.calibration["f_s_per_op"].items()}
    assert cm.drift_of(cal, with_ref).headline["f"] == pytest.approx(2.0)


@needs_programs("bsprun", "bspalg-inprod")
@pytest.mark.slow
def test_a_driver_calibrates_inside_its_run_and_validate_predicts_from_it(tmp_path: Path) -> None:
    """The real driver with --calibrate: two calibration records (before the repetitions, after
    them and f) that read as calibrations, f timed on every process at once; bspkit run
    --calibrate prints the calibrated prediction from them."""
    assert BUILD is not None
    out = tmp_path / "run.json"
    cmd = [str(BUILD / "bin" / "bsprun"), "-n", "2", str(BUILD / "bin" / "bspalg-inprod"), "--size", "100000"]
    cmd += ["--calibrate", "quick", "--measure-f", "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cal = json.loads(out.read_text())["calibration"]
    assert cal["seconds"] > 0
    recs = [cal["before"], cal["after"]]
    assert [r["type"] for r in recs] == ["calibration", "calibration"] and [r["round"] for r in recs] == [0, 1]
    for r in recs:
        c = cm.Calibration.from_record(r)
        assert set(c.f) == {"dot_double_naive x2", "dot_double_blas x2"} or set(c.f) == {"dot_double_naive x2"}
        assert [(p.msg_words, p.count) for p in c.g] == [(256, 8), (4096, 64)]
        assert set(c.l) == {"empty", "shift"} and all(v > 0 for v in c.l.values())
    # a usage error names the choices
    bad = subprocess.run([*cmd[:-5], "--calibrate", "fast"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--calibrate must be full or quick, not 'fast'" in bad.stderr
    # bspkit run --calibrate: both predictions, from the run's own calibrations
    params = params_with_f()
    params.calibration = cm.reference_of([cm.Calibration.from_record(cal["before"])])
    (tmp_path / "params.json").write_text(params.dumps())
    res = run_bspkit(
        "run",
        "inprod",
        "-n",
        "2",
        "--size",
        "100000",
        "--params",
        str(tmp_path / "params.json"),
        "--calibrate",
        env={"BSPKIT_BUILD_DIR": str(BUILD)},
    )
    assert res.returncode == 0, res.stderr
    assert "calibrated (the run's own calibrations, before and after its repetitions: drift f x" in res.stdout


@needs_programs("bsprun")
@pytest.mark.slow
def test_bspkit_calibrate_writes_the_file_and_the_drift(tmp_path: Path) -> None:
    """`bspkit calibrate` end to end: bspprobe --calibrate through bsprun, the file, the drift
    against a parameter file whose reference it made itself (1 by construction within noise is
    not asserted: only that every headline quantity is there and the verdict is printed)."""
    assert BUILD is not None
    # a source tree of its own: no probe under results/probe/ to be found by itself
    env = {"BSPKIT_BUILD_DIR": str(BUILD), "BSPKIT_SOURCE_DIR": str(tmp_path)}
    first = tmp_path / "first.json"
    res = run_bspkit("calibrate", "-n", "2", "--quick", "-o", str(first), env=env)
    assert res.returncode == 0, res.stderr
    assert "no parameter file to compare with" in res.stdout
    cal = cb.read_calibration(first)
    assert cal.extra["mode"] == "quick" and cal.extra["p"] == 2 and cal.date
    params = params_with_f()
    params.calibration = cm.reference_of([cal])
    (tmp_path / "params.json").write_text(params.dumps())
    res = run_bspkit(
        "calibrate", "-n", "2", "--params", str(tmp_path / "params.json"), "-o", str(tmp_path / "c.json"), env=env
    )
    assert res.returncode == 0, res.stderr
    assert all(label in res.stdout for label in ("f (dot products)", "g (large h)", "l (empty sync)"))
    assert "describe this machine" in res.stdout or "the machine has moved" in res.stdout
    saved = json.loads((tmp_path / "c.json").read_text())
    assert saved["params_file"] == str(tmp_path / "params.json") and saved["drift"]["headline"]["g"] > 0
    # a parameter file that cannot be read: one message, exit 1
    (tmp_path / "bad.json").write_text("{")
    res = run_bspkit("calibrate", "-n", "2", "--params", str(tmp_path / "bad.json"), env=env)
    assert res.returncode == 1 and "not JSON" in res.stderr
