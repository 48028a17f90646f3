"""bspkit.measure.validation: the summary of a sweep (mean error per model over the runs long enough to
score, the best model), and `bspkit validate` end to end with a stand-in for the drivers:
the sweep each algorithm's record defines, the predictions, validate.json and the page. A
toy algorithm shows that one record is all the Python side needs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bspkit import __version__, cli
from bspkit import algorithms as al
from bspkit.commands import _inputs as inputs
from bspkit.measure import validation as va
from bspkit.measure.validation import MIN_VALIDATED_TIME_S, summarize
from bspkit.model.comm_models import NAMES as MODELS
from bspkit.model.params import Params
from bspkit.model.supersteps import predict
from bspkit.pages import validate_report

from conftest import assert_self_contained, report_pngs
from synth import PARAMS_JSON, calibration_record


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


def test_comm_matters_scores_only_communication_heavy_runs() -> None:
    """The runs where communication is at least 20 % of the predicted time (g const) get a
    summary of their own: there the models differ, and another may win than over all runs."""

    def comm_row(measured: float, share: float, **errs: float) -> dict[str, Any]:
        r = row(measured, **errs)
        r["predicted_s"] = {"g const": 1.0}
        r["comm_s"] = {"g const": share}
        r["rel_error_f_alone"] = r["rel_error"]
        r["efficiency"] = None
        return r

    rows = [
        comm_row(1.0, 0.05, const=0.01, h=0.02, hh=0.03),  # work-bound: g const wins here
        comm_row(1.0, 0.05, const=0.01, h=0.02, hh=0.03),
        comm_row(1.0, va.COMM_MATTERS_SHARE, const=0.30, h=0.10, hh=0.04),  # at the bound: counted
        comm_row(1.0, 0.60, const=0.20, h=0.06, hh=0.02),
        comm_row(0.05, 0.90, const=0.0, h=0.0, hh=9.0),  # too short to score
    ]
    s = va.group_summary(rows)
    assert s["best_model"] == "g(h,h*)" and s["runs_used"] == 4
    cm = s["comm_matters"]
    assert cm["runs"] == 3 and cm["runs_used"] == 2 and cm["min_share"] == 0.2
    assert cm["g const"] == pytest.approx(0.25) and cm["g(h,h*)"] == pytest.approx(0.03)
    assert cm["best_model"] == "g(h,h*)"
    sentence = validate_report.comm_matters_sentence(s)
    assert "2 run(s)" in sentence and "g(h,h*) predicts best" in sentence and "g const 25 %" in sentence
    none = va.group_summary([comm_row(1.0, 0.05, const=0.01, h=0.02, hh=0.03)])
    assert none["comm_matters"]["runs_used"] == 0
    assert "cannot tell the g models apart" in validate_report.comm_matters_sentence(none)
    assert va.comm_share({"predicted_s": {"g const": 2.0}}) is None  # an older validate.json


# ------------------------------------------------------- the command, drivers stood in


# where the stand-in drivers "are": nothing is started through it
STAND_IN_LAUNCH = al.DriverLaunch(Path("bin"), Path("bsprun"), "threads")


def stand_in_launch(
    build_dir: str | None, driver: str, backend: str, nprocs: int, hostfile: Path | None = None, library: Any = None
) -> al.DriverLaunch:
    """inputs.driver_launch without a build: the launch the command asked for."""
    return al.DriverLaunch(Path("bin"), Path("bsprun"), backend, hostfile, library)


def fake_driver(
    alg: al.Algorithm,
    launch: al.DriverLaunch,
    nprocs: int,
    args: list[str],
    timeout_s: float | None = None,
) -> al.RunResult:
    """A driver run whose cost and time follow from --size and the swept value."""
    n = int(args[args.index("--size") + 1])
    v = int(args[args.index(alg.sweep_option) + 1]) if alg.sweep_option and alg.sweep_option in args else 1
    steps = [
        {
            "w": 1e8 / v,
            "h": 4096,
            "h_inout": 8192,  # an all-to-all: each process sends and receives h (thesis eq. 2.2)
            "count": 16 * v,
            "msg_words": 256 // v,
            "primitive": "put",
            "pattern": "alltoall",
            "sync": True,
        },
        {
            "w": 1e7,
            "h": 0,
            "h_inout": 0,
            "count": 0,
            "msg_words": 0,
            "primitive": None,
            "pattern": None,
            "sync": True,
        },
    ]
    t = 0.2 * (1 + n / 1e6)
    data = {
        "algorithm": alg.name,
        "p": nprocs,
        "params": {"n": n} | ({alg.sweep_param: v} if alg.sweep_param else {}),
        "time_s": t,
        "times_s": [t],
        "W": 1e8 / v + 1e7,
        "H": 4096,
        "S": 2,
        "f_s_per_unit": 2e-9,
        "f_all_s_per_unit": 2.2e-9,
        "supersteps": steps,
        "work_unit": "flop",
    }
    return al.RunResult(alg.name, ["driver", *args], data, "")


@pytest.fixture
def stand_in_drivers(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Drivers replaced by fake_driver, the build by nothing; returns the argument lists run.
    With --calibrate, run k carries the calibrations of CALIBRATION (rounds k and k + 1)."""
    calls: list[list[str]] = []

    def run(alg: al.Algorithm, *rest: Any, **kw: Any) -> al.RunResult:
        calls.append(list(rest[2]))
        res = fake_driver(alg, *rest, **kw)
        if "--calibrate" in rest[2]:
            k = sum("--calibrate" in c for c in calls) - 1
            res.data["calibration"] = {
                "before": CALIBRATION.record(k),
                "after": CALIBRATION.record(k + 1),
                "seconds": 0.25,
            }
        return res

    monkeypatch.setattr(al, "run_driver", run)
    # the command imports these from bspkit.commands._inputs when it runs
    monkeypatch.setattr(inputs, "driver_launch", stand_in_launch)
    stand_in_calibration([1.0])
    return calls


class CalibrationRounds:
    """Calibration records whose round k finds g and l moved by factors[k] from params, f by
    f_factors[k] (the last factor repeats)."""

    def __init__(self, factors: list[float], f_factors: list[float] | None = None, params: Params | None = None):
        self.factors, self.f_factors = factors, f_factors or [1.0]
        self.params = params or Params.from_json(PARAMS_JSON)

    def record(self, k: int) -> dict[str, Any]:
        g = self.factors[min(k, len(self.factors) - 1)]
        f = self.f_factors[min(k, len(self.f_factors) - 1)]
        return {**calibration_record(self.params, g, g, f), "round": k, "t_s": 0.1}


CALIBRATION = CalibrationRounds([1.0])


def stand_in_calibration(
    factors: list[float], f_factors: list[float] | None = None, params: Params | None = None
) -> None:
    global CALIBRATION
    CALIBRATION = CalibrationRounds(factors, f_factors, params)


def validate_in_process(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    params = tmp_path / "params.json"
    params.write_text(json.dumps(PARAMS_JSON))
    out = tmp_path / "out"
    rc = cli.main(
        [
            "validate",
            *args,
            "-n",
            "2",
            "--params",
            str(params),
            "--output-dir",
            str(out),
        ]
    )
    return rc, json.loads((out / "validate.json").read_text()) if rc == 0 else {}


@pytest.mark.slow
def test_validate_sweeps_the_records_defaults(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    alg = al.ALGORITHMS["matmul-static2d"]
    rc, result = validate_in_process(tmp_path, alg.name, "--quick")
    assert rc == 0
    # --quick: the first two sizes and values of the record, every value with every size
    expected = [(n, v) for v in alg.sweep_values[:2] for n in alg.sizes[:2]]
    assert [(int(c[c.index("--size") + 1]), c[c.index("--q") + 1]) for c in stand_in_drivers] == expected
    for c in stand_in_drivers:
        assert {"--measure-f", "--no-check"} <= set(c) and c[c.index("--reps") + 1] == "3"
    assert result["algorithm"] == alg.name and result["sweep"] == "q" and result["p"] == 2
    assert result["description"] == alg.description
    assert len(result["rows"]) == 4 and [v for v, _s in result["summary"]["by_sweep"]] == list(alg.sweep_values[:2])
    params = Params.from_json(PARAMS_JSON)
    for row in result["rows"]:
        run = fake_driver(
            alg,
            STAND_IN_LAUNCH,
            2,
            ["--size", str(row["params"]["n"]), "--q", row["sweep_value"]],
        )
        pred = predict(params, run.data)
        for m in MODELS:
            assert row["predicted_s"][m] == pytest.approx(pred[m], rel=1e-12)
            assert row["rel_error"][m] == pytest.approx((pred[m] - row["measured_s"]) / row["measured_s"], rel=1e-12)
        # efficiency from the record's cost model: 2 n^3 f / (p T)
        assert row["efficiency"] == pytest.approx(2 * row["params"]["n"] ** 3 * 2e-9 / (2 * row["measured_s"]))
    out = capsys.readouterr().out
    assert "matmul-static2d on threads, p = 2: 4 runs, 4 of >= 0.1 s" in out and "q 1" in out and "q 8" in out
    html = (tmp_path / "out" / "validate.html").read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 2  # predicted vs measured, time over n (no drift: --calibrate is opt-in)


@pytest.mark.slow
def test_options_after_the_separator_go_to_every_run(tmp_path: Path, stand_in_drivers: list[list[str]]) -> None:
    """`bspkit validate ALG ... -- OPTIONS`: a parameter of the driver's that the sweep leaves
    alone (rdxsort's key distribution) is held for every run."""
    params = tmp_path / "params.json"
    params.write_text(json.dumps(PARAMS_JSON))
    out = tmp_path / "out"
    argv = ["validate", "rdxsort", "--quick", "-n", "2", "--params", str(params), "--output-dir", str(out)]
    assert cli.main([*argv, "--", "--dist", "zipf"]) == 0
    alg = al.ALGORITHMS["rdxsort"]
    expected = [(str(n), v) for v in alg.sweep_values[:2] for n in alg.sizes[:2]]
    assert [(c[c.index("--size") + 1], c[c.index("--bits") + 1]) for c in stand_in_drivers] == expected
    for c in stand_in_drivers:
        assert c[c.index("--dist") :][:2] == ["--dist", "zipf"]
    assert len(json.loads((out / "validate.json").read_text())["rows"]) == 4


@pytest.mark.slow
def test_a_toy_algorithm_needs_one_record(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    toy = al.Algorithm(
        "toy-sum",
        "bspalg-toy",
        ("--variant", "x"),
        "a toy: n additions",
        lambda p: float(p["n"]) if "n" in p else None,
        sizes=(1000, 2000, 4000),
        sweep_option="--blocks",
        sweep_values=("2", "3"),
    )
    monkeypatch.setitem(al.ALGORITHMS, toy.name, toy)
    with pytest.raises(SystemExit):
        cli.main(["validate", "--help"])
    help_text = capsys.readouterr().out
    assert "toy-sum" in help_text and "toy-sum: 1000,2000,4000 x 2,3" in help_text.replace("\n", " ")
    rc, result = validate_in_process(tmp_path, "toy-sum", "--sizes", "1000,3000")
    assert rc == 0
    assert [(c[c.index("--size") + 1], c[c.index("--blocks") + 1]) for c in stand_in_drivers] == [
        ("1000", "2"),
        ("3000", "2"),
        ("1000", "3"),
        ("3000", "3"),
    ]
    assert result["sweep"] == "blocks" and len(result["rows"]) == 4
    row = result["rows"][0]
    assert row["efficiency"] == pytest.approx(1000 * 2e-9 / (2 * row["measured_s"]))


@pytest.mark.parametrize(
    "args, message",
    [
        (["inprod", "--values", "1,2"], "inprod has no second parameter to sweep"),
        (["inprod", "--sizes", "a,b"], "--sizes must be integers"),
        (["inprod", "--sizes", ","], "--sizes needs a comma-separated list"),
        (["inprod", "--reps", "0"], "argument -r/--reps: '0' is not a positive integer"),
        (["nosuchalg"], "unknown algorithm 'nosuchalg'"),
    ],
)
def test_validate_usage_errors(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        rc, _result = validate_in_process(tmp_path, *args)
    except SystemExit as e:  # argparse's own checks (-n, --reps) exit from the parser
        rc = int(e.code or 0)
    assert rc == 2 and message in capsys.readouterr().err
    assert stand_in_drivers == []


# ------------------------------------------------- no lost runs: partial writes, --resume


def stand_in_failing_at(monkeypatch: pytest.MonkeyPatch, calls: list[list[str]], bad: int, exc: BaseException) -> None:
    """The stand-in drivers, except that run number `bad` (0-based) raises exc."""

    def run(alg: al.Algorithm, *rest: Any, **kw: Any) -> al.RunResult:
        calls.append(list(rest[-1]))
        if len(calls) - 1 == bad:
            raise exc
        return fake_driver(alg, *rest, **kw)

    monkeypatch.setattr(al, "run_driver", run)


def run_validate(tmp_path: Path, *args: str) -> int:
    params = tmp_path / "params.json"
    params.write_text(json.dumps(PARAMS_JSON))
    return cli.main(["validate", "inprod", "-n", "2", "--params", str(params), "--sizes", "1000,2000,3000,4000", *args])


def sizes_run(calls: list[list[str]]) -> list[int]:
    return [int(c[c.index("--size") + 1]) for c in calls]


@pytest.mark.slow
def test_a_failed_sweep_keeps_its_runs_and_resume_runs_only_the_rest(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "sweep"
    calls: list[list[str]] = []
    stand_in_failing_at(monkeypatch, calls, 2, al.AlgorithmError("inprod failed (killed by SIGKILL)"))
    assert run_validate(tmp_path, "--output-dir", str(out)) == 1
    err = capsys.readouterr().err
    assert "killed by SIGKILL" in err and f"continue with --resume {out}" in err
    saved = json.loads((out / "validate.json").read_text())
    assert saved["complete"] is False and [r["size"] for r in saved["rows"]] == [1000, 2000]
    assert saved["format"] == va.RESULT_FORMAT and saved["bspkit_version"] == __version__
    assert not (out / "validate.html").exists()
    assert not list(out.glob(".*.tmp"))  # written whole, through a renamed temporary file

    # an --output-dir that holds a sweep is refused: that is what --resume is for
    assert run_validate(tmp_path, "--output-dir", str(out)) == 2
    assert (
        f"--output-dir {out} holds a sweep (validate.json): continue it with --resume {out}" in capsys.readouterr().err
    )

    calls.clear()
    stand_in_failing_at(monkeypatch, calls, -1, RuntimeError("not raised"))
    assert run_validate(tmp_path, "--resume", str(out)) == 0
    assert sizes_run(calls) == [3000, 4000]  # the two runs that were missing, and only those
    assert f"resuming {out}: 2 runs kept, 2 of this sweep to run" in capsys.readouterr().err
    done = json.loads((out / "validate.json").read_text())
    assert done["complete"] is True and [r["size"] for r in done["rows"]] == [1000, 2000, 3000, 4000]
    assert [r["measured_s"] for r in done["rows"][:2]] == [r["measured_s"] for r in saved["rows"]]  # kept
    assert done["summary"]["all"]["runs"] == 4
    assert (out / "validate.html").is_file()


def test_ctrl_c_keeps_the_runs_done(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "sweep"
    calls: list[list[str]] = []
    stand_in_failing_at(monkeypatch, calls, 1, KeyboardInterrupt())
    assert run_validate(tmp_path, "--output-dir", str(out)) == 130
    assert f"interrupted: the runs done are in {out / 'validate.json'}; continue with --resume {out}" in (
        capsys.readouterr().err
    )
    assert [r["size"] for r in json.loads((out / "validate.json").read_text())["rows"]] == [1000]


@pytest.mark.slow
def test_keep_going_records_the_failed_runs_and_exits_1(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "sweep"
    calls: list[list[str]] = []
    stand_in_failing_at(monkeypatch, calls, 0, al.AlgorithmError("inprod failed (exit status 1)"))
    assert run_validate(tmp_path, "--output-dir", str(out), "--keep-going") == 1
    assert "1 of the sweep's runs failed" in capsys.readouterr().err
    saved = json.loads((out / "validate.json").read_text())
    assert [f["size"] for f in saved["failed"]] == [1000] and len(saved["rows"]) == 3
    assert saved["complete"] is False and (out / "validate.html").is_file()
    calls.clear()
    stand_in_failing_at(monkeypatch, calls, -1, RuntimeError("not raised"))
    assert run_validate(tmp_path, "--resume", str(out)) == 0 and sizes_run(calls) == [1000]


@pytest.mark.slow
def test_a_sweep_on_hosts_keeps_its_hostfile(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--hostfile reaches every run, is kept in validate.json, and --resume runs on it again."""
    hosts = tmp_path / "hosts"
    hosts.write_text("node1 slots=2\n")
    out = tmp_path / "sweep"
    seen: list[Path | None] = []

    def run(alg: al.Algorithm, *rest: Any, **kw: Any) -> al.RunResult:
        seen.append(rest[0].hostfile)
        if len(seen) == 2:
            raise al.AlgorithmError("inprod failed (exit status 1)")
        return fake_driver(alg, *rest, **kw)

    monkeypatch.setattr(al, "run_driver", run)
    assert run_validate(tmp_path, "-b", "mpi", "--hostfile", str(hosts), "--output-dir", str(out)) == 1
    saved = json.loads((out / "validate.json").read_text())
    assert saved["hostfile"] == str(hosts) and saved["backend"] == "mpi" and len(saved["rows"]) == 1
    assert run_validate(tmp_path, "-b", "mpi", "--resume", str(out)) == 0
    assert seen == [hosts] * 5


@pytest.mark.parametrize(
    "change, message",
    [
        ({"p": 4}, "that sweep is inprod on threads with p = 4, this command asks for inprod on threads with p = 2"),
        ({"format": 9, "bspkit_version": "9.0.0"}, "validate.json format 9 (written by bspkit 9.0.0) is not supported"),
    ],
)
@pytest.mark.slow
def test_resume_checks_the_sweep_it_continues(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    capsys: pytest.CaptureFixture[str],
    change: dict[str, Any],
    message: str,
) -> None:
    out = tmp_path / "sweep"
    assert run_validate(tmp_path, "--output-dir", str(out)) == 0
    saved = json.loads((out / "validate.json").read_text())
    (out / "validate.json").write_text(json.dumps(saved | change))
    stand_in_drivers.clear()
    assert run_validate(tmp_path, "--resume", str(out)) in (1, 2)
    assert message in capsys.readouterr().err and stand_in_drivers == []


def test_a_sweep_too_big_for_memory_is_refused_before_any_run(
    tmp_path: Path, stand_in_drivers: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.json"
    params.write_text(json.dumps(PARAMS_JSON))
    huge = 10**15  # 16 PB of vectors
    rc = cli.main(["validate", "inprod", "-n", "2", "--params", str(params), "--sizes", f"1000,{huge}"])
    err = capsys.readouterr().err
    assert rc == 1 and stand_in_drivers == []
    assert f"inprod with n = {huge} on p = 2 needs about 14901161.2 GiB, but this machine has" in err
    assert "use a smaller size (--sizes)" in err


# ------------------------------------------------------- calibration interleaved (issue 17)


@pytest.mark.slow
def test_every_run_is_predicted_raw_and_calibrated(
    tmp_path: Path,
    stand_in_drivers: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # each run's calibrations before and after its repetitions: g and l x2 -> x2, x2 -> x2,
    # x2 -> x4000 (the last run's communication, 1e-4 of its time as probed, becomes a third)
    stand_in_calibration([2.0, 2.0, 2.0, 4000.0])
    rc, res = validate_in_process(tmp_path, "inprod", "--sizes", "1000,2000,3000", "--calibrate")
    assert rc == 0
    assert all(c[c.index("--calibrate") + 1] == "full" for c in stand_in_drivers)  # the probe's f size
    assert len(res["calibrations"]) == 6  # before and after each run
    assert [(c["run"], c["when"]) for c in res["calibrations"]][:2] == [(0, "before"), (0, "after")]
    assert [c["drift"]["headline"]["g"] for c in res["calibrations"]] == pytest.approx(
        [2.0, 2.0, 2.0, 2.0, 2.0, 4000.0]
    )
    params = Params.from_json(PARAMS_JSON)
    for row, drift in zip(res["rows"], [2.0, 2.0, math.sqrt(8000.0)], strict=True):
        cal = row["calibrated"]
        assert cal["drift"]["g"] == pytest.approx(drift)  # the geometric mean of before and after
        assert cal["after"] is True
        run = fake_driver(al.find_algorithm("inprod"), STAND_IN_LAUNCH, 2, ["--size", str(row["size"])]).data
        raw = predict(params, run)
        empty = PARAMS_JSON["l"]["empty"]
        # every superstep's communication and l scale by the drift; the work stays the run's own
        want = raw["work_s"] + drift * raw["g(h,h*) comm_s"]
        assert cal["predicted_s"]["g(h,h*)"] == pytest.approx(want)
        assert empty > 0
    # the last run's prediction with the calibration after it is 1.3x the one before: flagged,
    # left out of the calibrated mean; the others did not move
    assert [r["calibrated"]["flagged"] for r in res["rows"]] == [False, False, True]
    assert res["rows"][0]["calibrated"]["within_run_prediction"] == pytest.approx(1.0)
    assert res["rows"][2]["calibrated"]["within_run_prediction"] > 1.1
    assert res["rows"][2]["calibrated"]["within_run"]["g"] == pytest.approx(2000.0)
    summary = res["summary"]["all"]["calibrated"]
    assert summary["flagged"] == 1 and summary["runs_used"] == 2
    assert summary["raw"]["g(h,h*)"] == pytest.approx(sum(abs(r["rel_error"]["g(h,h*)"]) for r in res["rows"][:2]) / 2)
    cost = res["calibration_cost"]
    assert cost["rounds"] == 6 and cost["calibration_s"] == pytest.approx(0.75)
    out = capsys.readouterr().out
    assert "raw -> calibrated" in out and "1 run(s) flagged" in out
    assert "The machine's drift against the probe (6 calibrations)" in out
    html = (tmp_path / "out" / "validate.html").read_text()
    assert "Drift: the machine against its probe" in html and "Flagged runs" in html


@pytest.mark.parametrize("flags", [(), ("--no-calibrate",), ("--calibrate", "--no-calibrate")])
def test_the_calibration_is_opt_in(tmp_path: Path, stand_in_drivers: list[list[str]], flags: tuple[str, ...]) -> None:
    """Without --calibrate (the default, or the older --no-calibrate) no run calibrates."""
    rc, res = validate_in_process(tmp_path, "inprod", "--sizes", "1000", *flags)
    assert rc == 0
    assert "--calibrate" not in stand_in_drivers[0]
    assert res["calibrations"] == [] and "calibrated" not in res["rows"][0]
    assert "calibrated" not in res["summary"]["all"]
    assert "Drift: the machine" not in (tmp_path / "out" / "validate.html").read_text()


@pytest.mark.parametrize(
    ("drifts", "raw", "cal", "says"),
    [
        ([1.02, 0.97], 0.05, 0.04, "the model predicts within the target either way."),
        ([1.8, 2.0], 0.05, 0.01, "either way, the machine's moves hardly touch these runs"),
        ([1.0, 1.05], 0.25, 0.24, "the error is the model's"),
        ([1.8, 2.0], 0.40, 0.06, "the machine, not the model, explains it"),
        ([1.8, 2.0], 0.40, 0.20, "the machine explains some, the model the rest"),
        ([1.8, 2.0], 0.40, 0.35, "the model (or a drift the kernels do not see) explains it"),
    ],
)
def test_the_drift_sentence_tells_machine_from_model(drifts: list[float], raw: float, cal: float, says: str) -> None:
    result = {
        "calibrations": [
            {"date": f"2026-11-25T10:0{i}:00Z", "drift": {"headline": {"f": 1.0, "g": d, "l": d}}}
            for i, d in enumerate(drifts)
        ],
        "summary": {
            "all": {
                "calibrated": {
                    "g(h,h*)": cal,
                    "flagged": 0,
                    "raw": {"best_model": "g(h,h*)", "best_error": raw},
                }
            }
        },
    }
    sentence = validate_report.drift_sentence(result)
    assert sentence is not None and says in sentence


def test_a_run_whose_f_moved_is_flagged(
    tmp_path: Path, stand_in_drivers: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's own f was timed at one moment; the dot products before and after the run say
    the machine computed 1.5x slower by its end: its prediction is not to be trusted."""
    d = dict(PARAMS_JSON, f={"dot_double_naive": 1e-9, "dot_double_blas": 5e-10})
    (tmp_path / "params.json").write_text(json.dumps(d))
    stand_in_calibration([1.0], f_factors=[1.0, 1.0, 1.5], params=Params.from_json(d))
    out = tmp_path / "out"
    argv = [
        "validate",
        "inprod",
        "-n",
        "2",
        "--sizes",
        "1000,2000",
        "--params",
        str(tmp_path / "params.json"),
        "--calibrate",
    ]
    assert cli.main([*argv, "--output-dir", str(out)]) == 0
    rows = json.loads((out / "validate.json").read_text())["rows"]
    assert [r["calibrated"]["flagged"] for r in rows] == [False, True]
    assert rows[1]["calibrated"]["within_run_prediction"] == pytest.approx(1.5, rel=1e-3)
    # the driver timed f after its repetitions, when the machine was 1.5x slower than before
    # them: over the repetitions f was sqrt(1 / 1.5) of what it timed
    assert rows[1]["calibrated"]["f_factor"] == pytest.approx(math.sqrt(1 / 1.5))
    raw_work = rows[1]["work_s"]
    comm = rows[1]["calibrated"]["predicted_s"]["g(h,h*)"] - raw_work * math.sqrt(1 / 1.5)
    assert comm == pytest.approx(rows[1]["comm_s"]["g(h,h*)"], rel=1e-6)  # g and l did not move
    assert rows[0]["calibrated"]["f_factor"] == pytest.approx(1.0)
