"""`bspkit run ALG`: one run of an algorithm's driver, its time, and with a probe's parameter
file its predicted time under each g model (with --calibrate: also as the machine was during
the run)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bspkit import algorithms as al
from bspkit.commands._args import (
    LaunchOptions,
    Subparsers,
    add_launch_args,
    add_library_args,
    algorithm_arg,
    hostfile_arg,
    launch_from,
    library_arg,
    positive_int,
)
from bspkit.console import Failure, UsageError, check_writable, write_text
from bspkit.measure import probe as pr
from bspkit.measure.libraries import Library
from bspkit.model import comm_models
from bspkit.units import quantity

# the domain modules load numpy: imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model.params import Params

NAME = "run"
PASS_THROUGH = True  # what follows `--` goes to the driver


def add_parser(subparsers: Subparsers) -> None:
    algs = ", ".join(al.ALGORITHMS)
    ru = subparsers.add_parser(
        "run",
        help="run one BSP algorithm (its driver) on a back end and p, optionally with predictions",
        description=f"Runs the driver of ALG ({algs}) through bsprun (or on another BSPlib: --bspcc, --peer), prints "
        "its time, W, H, S and check; with "
        "--params (or --predict) also the predicted time under each g model. Options after `--` go to the driver "
        "(see `<build>/bin/bspalg-NAME --help`), e.g. bspkit run matmul-blockcyclic -n 2 --size 2000 -- --q 8",
    )
    ru.add_argument("algorithm", metavar="ALG", help=algs)
    add_launch_args(ru)
    ru.add_argument("--size", type=positive_int, metavar="N", help="problem size (the driver's --size)")
    predict_from = ru.add_mutually_exclusive_group()
    predict_from.add_argument("--params", metavar="FILE", help="a probe's params.json: predict the run from it")
    predict_from.add_argument(
        "--predict",
        action="store_true",
        help="predict from the newest probe of this back end and p under results/probe/ (an error if there is none)",
    )
    ru.add_argument(
        "--calibrate",
        action="store_true",
        help="with --params/--predict: the driver runs the short calibration (bspkit calibrate) before its "
        "repetitions and after them; also predict with the parameters scaled by the machine's drift since the probe",
    )
    ru.add_argument(
        "--json",
        metavar="FILE",
        help="also write the driver's JSON object here; '-': to stdout, the summary then goes to stderr",
    )
    ckpt = ru.add_argument_group(
        "checkpoints", "bsprun's checkpoint options, passed on (bspkit's library only; docs/checkpoint.md)"
    )
    ckpt.add_argument("--checkpoint-dir", metavar="DIR", help="save checkpoints in DIR (bsprun --checkpoint-dir)")
    ckpt.add_argument(
        "--checkpoint-every",
        metavar="T",
        help="save one only when T has passed since the last (60s, 5m, 1h; default: at every stage boundary)",
    )
    ckpt.add_argument(
        "--checkpoint-mtbf",
        metavar="T",
        help="the machine's mean time between failures: the interval is then sqrt(2 C T), C the first "
        "checkpoint's measured time (Young), said on stderr (bsprun --checkpoint-mtbf; not with --checkpoint-every)",
    )
    ckpt.add_argument(
        "--restart", metavar="DIR", help="restart from the newest intact checkpoint in DIR (bsprun --restart)"
    )
    add_library_args(ru)


@dataclass(frozen=True)
class RunOptions:
    algorithm: str
    launch: LaunchOptions
    size: int | None
    params: str | None  # a parameter file to predict from
    predict: bool  # predict from the newest probe of this back end and p
    calibrate: bool
    json: str | None  # '-': stdout
    library: Library | None = None  # another BSPlib; None: bspkit's back ends
    checkpoint: tuple[str, ...] = ()  # bsprun's checkpoint options, as given


def options_from(args: argparse.Namespace) -> RunOptions:
    launch = launch_from(args)
    return RunOptions(
        library=library_arg(args, launch),
        algorithm=args.algorithm,
        launch=launch,
        size=args.size,
        params=args.params,
        predict=args.predict,
        calibrate=args.calibrate,
        json=args.json,
        checkpoint=checkpoint_options(args),
    )


def checkpoint_options(args: argparse.Namespace) -> tuple[str, ...]:
    """--checkpoint-dir, --checkpoint-every, --checkpoint-mtbf and --restart, as bsprun takes them
    (it checks them)."""
    given = [
        ("--checkpoint-dir", args.checkpoint_dir),
        ("--checkpoint-every", args.checkpoint_every),
        ("--checkpoint-mtbf", args.checkpoint_mtbf),
        ("--restart", args.restart),
    ]
    return tuple(word for option, value in given if value is not None for word in (option, value))


def prediction(params: Params, params_path: Path | None, d: Mapping[str, Any]) -> dict[str, Any]:
    """The run's predicted time under each g model and its error, as `--json` holds it under
    "prediction": the parameter file, the models, predicted_s and error per model (None where
    a model cannot predict), the work, where f came from (the run itself: the driver
    timed its kernel with --measure-f, so the error is that of g and l alone), and the model
    chosen by evidence (bspkit.model.model_choice: the best of the newest validate of the
    algorithm, else the most detailed) with the line that says why."""
    from bspkit.model import model_choice as mc
    from bspkit.model import supersteps as pd

    try:
        pred = pd.predict(params, d)
    except pd.PredictionError as e:
        raise Failure(str(e)) from None
    f_all = d.get("f_all_s_per_unit")
    algorithm = str(d.get("algorithm"))
    evidence = mc.evidence(algorithm, d.get("backend"))
    p = d.get("p") if isinstance(d.get("p"), int) else None
    backend = d.get("backend") if isinstance(d.get("backend"), str) else None
    used = mc.chosen(pred, evidence, p, backend)
    return {
        "params": str(params_path) if params_path is not None else None,
        "models": list(comm_models.NAMES),
        "predicted_s": {m: pred[m] for m in comm_models.NAMES},
        "error": {m: pd.relative_error(pred[m], d["time_s"]) for m in comm_models.NAMES},
        "work_s": pred["work_s"],
        "f_s_per_unit": pred["f_s_per_unit"],
        "f_source": "this run, every process at once (f_all_s_per_unit)"
        if f_all
        else "this run, process 0 alone (f_s_per_unit)",
        "model_choice": mc.choice_json(used, evidence, algorithm, p, backend) if used else None,
    }


def print_prediction(pred: Mapping[str, Any], d: Mapping[str, Any], say: TextIO) -> None:
    """The run's predicted time under each g model, and its error."""
    print(
        f"predicted from {pred['params']} (work {quantity(pred['work_s'], 's')} at f = "
        f"{quantity(pred['f_s_per_unit'], 's')}/{d.get('work_unit')}, f measured in this run: the error is g and "
        "l's only):",
        file=say,
    )
    print_models(pred["models"], pred["predicted_s"], pred["error"], say)
    if pred.get("model_choice"):
        print("  " + pred["model_choice"]["why"], file=say)


def print_models(models: Sequence[str], seconds: Mapping[str, Any], errors: Mapping[str, Any], say: TextIO) -> None:
    """One line per model: its predicted time and error, or '-' where it has none."""
    width = max((len(m) for m in models), default=8)
    for m in models:
        v, err = seconds[m], errors[m]
        print(
            f"  {m:<{width}} {quantity(v, 's')} ({signed_percent(err)})"
            if v is not None and err is not None
            else f"  {m:<{width}} -",
            file=say,
        )


def signed_percent(v: float) -> str:
    """+3.1 %, -0.4 %; an error that rounds to zero is 0.0 %, never -0.0 %."""
    text = f"{v:+.1%}"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def print_calibrated(params: Params, d: Mapping[str, Any], say: TextIO) -> None:
    """The prediction again with the parameters scaled by the drift of the calibrations the
    driver ran before its repetitions and after them (calibrate.calibrated_prediction)."""
    from bspkit.measure import calibration as cb
    from bspkit.model import drift as cm
    from bspkit.model import supersteps as pd

    recs = d.get("calibration") or {}
    try:
        drifts = [
            cm.drift_of(cm.Calibration.from_record(recs[w]), params) if recs.get(w) else None
            for w in ("before", "after")
        ]
    except cm.CalibrationError as e:
        raise Failure(f"the run's calibration: {e}") from None
    if drifts[0] is None:
        raise Failure("the driver wrote no calibration (--calibrate): is it older than this bspkit?")
    try:
        cal = cm.calibrated_prediction(d["time_s"], d, params, drifts[0], drifts[1])
    except pd.PredictionError as e:
        raise Failure(str(e)) from None
    head = cal["drift"]
    moved = ", ".join(f"{k} x{head[k]:.2f}" for k in cm.HEADLINE if head.get(k) is not None)
    print(f"calibrated (the run's own calibrations, before and after its repetitions: drift {moved}):", file=say)
    print_models(comm_models.NAMES, cal["predicted_s"], cal["rel_error"], say)
    if cal["flagged"]:
        print(
            f"  the machine moved during the run: its prediction with the calibration after it is "
            f"x{cal['within_run_prediction']:.2f} the one with the calibration before it",
            file=say,
        )
    print("  " + cb.verdict(cm.mean_drift(drifts[0], drifts[1])), file=say)


def driver_args(options: RunOptions, params: Params | None, extra: Sequence[str]) -> list[str]:
    """The driver's arguments: those after `--`, then --calibrate, --size and --measure-f as asked."""
    dargs = list(extra)
    if options.calibrate and params is not None:  # inside the run: before its repetitions and after
        dargs += ["--calibrate", "quick" if params.machine.get("mode") == "quick" else "full"]
    if options.size is not None:
        dargs += ["--size", str(options.size)]
    if params is not None and "--measure-f" not in dargs:
        dargs.append("--measure-f")
    return dargs


def run(options: RunOptions, extra: Sequence[str]) -> int:
    from bspkit.commands._inputs import driver_launch, params_for

    launch = options.launch
    alg = algorithm_arg(options.algorithm)
    hostfile = hostfile_arg(launch.backend, launch.hostfile)
    nprocs = launch.nprocs or pr.cores()
    json_to_stdout = options.json == "-"
    if options.json and not json_to_stdout:
        check_writable(Path(options.json), "--json")
    # with --json -, stdout holds the JSON object alone and the summary goes to stderr
    say = sys.stderr if json_to_stdout else sys.stdout
    params_path, params = (
        params_for(options.params, launch.backend, nprocs, required=True, hostfile=hostfile, library=options.library)
        if options.predict or options.params
        else (None, None)
    )
    if options.size is not None:
        try:
            al.check_memory(alg, [{"n": options.size}], nprocs)
        except al.AlgorithmError as e:
            raise Failure(str(e)) from None
    if options.calibrate and params is None:
        raise UsageError("--calibrate scales a probe's parameters by the drift since: give --params or --predict")
    if options.checkpoint and options.library is not None:
        raise UsageError("checkpoints are bspkit's (bsprun --checkpoint-dir): not with --bspcc, --cc or --peer")
    drivers = driver_launch(launch.build_dir, alg.driver, launch.backend, nprocs, hostfile, options.library)
    drivers = dataclasses.replace(drivers, bsprun_options=options.checkpoint)
    try:
        res = al.run_driver(alg, drivers, nprocs, driver_args(options, params, extra))
    except al.AlgorithmError as e:
        raise Failure(str(e)) from None
    say.write(res.stdout)
    d = res.data
    eff = al.efficiency(alg, d, d.get("f_s_per_unit"))
    if eff is not None:
        print(f"efficiency (one-process kernel time of the whole problem / p T): {eff:.1%}", file=say)
    if params is not None:
        pred = prediction(params, params_path, d)
        print_prediction(pred, d, say)
        d = {**d, "prediction": pred}
        if options.calibrate:
            print_calibrated(params, d, say)
    if alg.explain:
        for line in alg.explain(d):
            print(line, file=say)
    if json_to_stdout:
        sys.stdout.write(json.dumps(d) + "\n")
    elif options.json:
        write_text(Path(options.json), json.dumps(d) + "\n")
        print(f"run written to {options.json}", file=say)
    return 0
