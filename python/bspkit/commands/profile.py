"""`bspkit profile FILE`: the BSP cost of a profiled run, and with --params its predicted time
on a measured machine (bspkit.model.profile holds the analysis, bspkit.pages.profile_report its pages);
`bspkit profile --scale RUN... --to-p P`: the program at another p from profiles at several
(bspkit.model.profile_scaling)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit.commands._args import Subparsers, parse_run_spec, positive_float, positive_int
from bspkit.console import Failure, UsageError, check_writable, progress, write_text
from bspkit.model import comm_models

# the domain modules load numpy: imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model import breakdown as bd
    from bspkit.model import profile as pf
    from bspkit.model.params import Params
    from bspkit.pages.profile_report import Predictions

NAME = "profile"
PASS_THROUGH = False


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "profile",
        help="the BSP cost of a profiled run (BSPKIT_PROFILE=FILE), and its predicted time on a measured machine",
        description="Reads the superstep profile that any BSPlib program linked with bspkit writes when BSPKIT_PROFILE "
        "names a file (bsprun --profile FILE; docs/profile-format.md) and prints the run's BSP cost: S, W (sum of "
        "the max compute time per superstep), H (sum of the h-relations, thesis eq. 2.1), the measured time and the "
        "costliest supersteps with their bsp_sync call sites (file:line where the program has debug information), "
        "and where the time goes: Horvitz & Bisseling's synchronisation, communication, packing, computation and "
        "idle time (docs/profiling.md). "
        "With --params, also the predicted time of the same run on the machine of that parameter file under the "
        f"g models ({', '.join(comm_models.NAMES)}), compute taken as measured (times --compute-scale, or scaled by "
        "the computing rates of --compute-from and --params).",
        epilog="E.g. BSPKIT_PROFILE=run.jsonl bsprun -n 4 ./prog; bspkit profile run.jsonl -o profile.html "
        "--params cluster/params.json --compute-from here/params.json. Scaling: bspkit profile --scale "
        "p1.jsonl@n=1000 p2.jsonl@n=1000 p3.jsonl@n=1000 p3.jsonl@n=2000 --to-p 16 --to-size 4000 --params P.json",
    )
    parser.add_argument("profile", metavar="FILE", nargs="?", help="the profile (.jsonl) the program wrote")
    parser.add_argument("-o", "--output", metavar="HTML", help="write a self-contained HTML report here")
    parser.add_argument(
        "--json", metavar="FILE", help="write the analysis as JSON here; '-': to stdout (the summary to stderr)"
    )
    parser.add_argument(
        "--params",
        metavar="P.json",
        help="a probe's params.json: predict the run on that machine (without --compute-from, its l also separates "
        "synchronisation from communication in where the time goes)",
    )
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument(
        "--compute-scale",
        type=positive_float,
        metavar="X",
        help="multiply the measured compute time by X for the prediction (default 1)",
    )
    scale.add_argument(
        "--compute-from",
        metavar="HERE.json",
        help="the params.json of the machine the profile was taken on: compute scaled by r here / r there "
        "(the computing rates), the model of here shown beside the measured time, and its l separating "
        "synchronisation in where the time goes",
    )
    parser.add_argument(
        "--calibration",
        metavar="CAL.json",
        help="a calibration of the machine of --params taken since its probe (bspkit calibrate --params P): "
        "predict with its parameters scaled by the drift, as the machine is now, without probing it again",
    )
    parser.add_argument(
        "--top",
        type=positive_int,
        default=5,
        metavar="N",
        help="how many of the costliest supersteps to list (default 5)",
    )
    parser.add_argument(
        "--section",
        type=int,
        metavar="N",
        help="the SPMD section (bsp_begin .. bsp_end) to analyse, where the program had several (default: the first)",
    )
    scaling = parser.add_argument_group(
        "scaling to another p (docs/profiling.md)",
        "the laws of S, W, h and messages per bsp_sync site over profiles of the program at several p "
        "(Extra-P's c0 + c1 n^a p^b log2(p)^k, chosen by leave-one-out error) and the program at --to-p",
    )
    scaling.add_argument(
        "--scale",
        nargs="+",
        metavar="RUN",
        help="profiles of the program at 3 or more values of p, each RUN.jsonl or RUN.jsonl@NAME=VALUE with its "
        "problem size (e.g. run4.jsonl@n=4000; every run or none)",
    )
    scaling.add_argument(
        "-n", "--to-p", type=positive_int, metavar="P", help="the number of processes to predict the program at"
    )
    scaling.add_argument(
        "--to-size",
        type=positive_float,
        metavar="VALUE",
        help="the problem size to predict at (default: the runs' one size; needed where they have several)",
    )
    scaling.add_argument(
        "--cores",
        type=positive_int,
        metavar="C",
        help="the cores the processes of --to-p share: beyond them they take turns, each computing p / C times "
        "longer (default: the cores of --params' machine when it was probed on threads; none for mpi)",
    )
    scaling.add_argument(
        "--model",
        choices=comm_models.NAMES,
        metavar="MODEL",
        help=f"the g model of predicted_s: {', '.join(repr(m) for m in comm_models.NAMES)} (default: the most complete "
        "the parameter file can use)",
    )
    parser.add_argument(
        "--phase",
        metavar="NAME",
        help="analyse and predict only the supersteps of this phase (bspk_profile_phase; the drivers name "
        "setup, prepare, 'rep 1' .. 'rep R', check, report)",
    )


@dataclass(frozen=True)
class ProfileOptions:
    profile: str | None  # None with --scale
    output: str | None  # the HTML page
    json: str | None  # '-': stdout
    params: str | None  # the machine to predict the run on
    compute_scale: float | None
    compute_from: str | None  # the params.json of the machine the profile was taken on
    calibration: str | None  # a calibration of --params' machine since its probe
    top: int
    section: int | None
    phase: str | None
    scale: tuple[str, ...] = ()  # --scale: the runs, RUN.jsonl[@NAME=VALUE]
    cores: int | None = None  # --scale: the cores the processes at --to-p share
    to_p: int | None = None
    to_size: float | None = None
    model: str | None = None


def options_from(args: argparse.Namespace) -> ProfileOptions:
    return ProfileOptions(
        profile=args.profile,
        output=args.output,
        json=args.json,
        params=args.params,
        compute_scale=args.compute_scale,
        cores=args.cores,
        compute_from=args.compute_from,
        calibration=args.calibration,
        top=args.top,
        section=args.section,
        phase=args.phase,
        scale=tuple(args.scale or ()),
        to_p=args.to_p,
        to_size=args.to_size,
        model=args.model,
    )


def check_usage(options: ProfileOptions) -> None:
    if options.scale:
        if options.profile:
            raise UsageError(f"--scale takes the runs' profiles: give '{options.profile}' among them, not before")
        if options.to_p is None:
            raise UsageError("--scale needs the p to predict at: --to-p P (or -n P)")
        if options.output:
            raise UsageError("--scale writes no HTML page (-o): the summary, and --json")
    else:
        if not options.profile:
            raise UsageError("give a profile (FILE), or --scale RUN RUN RUN ... --to-p P")
        for name, value in (("--to-p", options.to_p), ("--to-size", options.to_size), ("--model", options.model)):
            if value is not None:
                raise UsageError(f"{name} goes with --scale")
    if (options.compute_from or options.compute_scale is not None) and not options.params:
        raise UsageError("--compute-scale and --compute-from need --params")
    if options.calibration and not options.params:
        raise UsageError("--calibration scales the parameters of --params: give --params too")


def usable_params(path: str) -> Params:
    """A parameter file that can predict; a warning per g model it cannot serve."""
    from bspkit.commands._inputs import load_params
    from bspkit.model import supersteps as pd

    params = load_params(Path(path))
    try:
        for model in pd.check_usable(params):
            progress(f"warning: {path} has no fit the {model} model can use: its predictions will be '-'")
    except pd.PredictionError as e:
        raise Failure(f"{path}: {e}") from None
    return params


def calibrated_params(params: Params, params_path: str, calibration_path: str) -> tuple[Params, str]:
    """The parameters scaled by a calibration's drift (f too: the machine's rate now), and the
    drift in words."""
    from bspkit.measure import calibration as cb
    from bspkit.model import drift as cm

    cal = cb.read_calibration(Path(calibration_path))
    try:
        drift = cm.drift_of(cal, params)
    except cm.CalibrationError as e:
        raise Failure(f"{calibration_path} against {params_path}: {e}") from None
    head = drift.headline
    moved = "drift " + ", ".join(f"{k} x{head[k]:.2f}" for k in cm.HEADLINE if head.get(k) is not None)
    return cm.scaled(params, drift), moved


def predictions(options: ProfileOptions, a: pf.Analysis) -> Predictions | None:
    """What --params asks for: the run on that machine (calibrated, with its compute scaled),
    and the model of the machine of --compute-from."""
    from bspkit.model import profile as pf
    from bspkit.model import supersteps as pd
    from bspkit.pages.profile_report import Predictions

    if not options.params:
        return None
    params = usable_params(options.params)
    params_label = options.params
    if options.calibration:
        params, moved = calibrated_params(params, options.params, options.calibration)
        params_label = f"{options.params}, calibrated by {options.calibration} ({moved})"
    here: Params | None = usable_params(options.compute_from) if options.compute_from else None
    try:
        if here is not None:
            scale, note = pf.rate_scale(params, here)
        else:
            scale = options.compute_scale if options.compute_scale is not None else 1.0
            note = "" if options.compute_scale is None else "--compute-scale"
        there = pf.predict_run(a, params, params_label, scale, note)
        here_pred = pf.predict_run(a, here, options.compute_from) if here is not None else None
    except pd.PredictionError as e:
        raise Failure(str(e)) from None
    return Predictions(there, here_pred)


def time_breakdown(options: ProfileOptions, a: pf.Analysis) -> bd.Breakdown:
    """Horvitz & Bisseling's five parts; synchronisation by the l of the machine the profile
    was taken on: --compute-from's file where given, else --params' (the breakdown says
    which), else the profile's own empty syncs."""
    from bspkit.commands._inputs import load_params
    from bspkit.model import breakdown as bd

    path = options.compute_from or options.params
    params = load_params(Path(path)) if path else None
    return bd.breakdown(a, params, path)


def compute_scale_for(options: ProfileOptions, params: Params) -> tuple[float, str]:
    """--compute-from's ratio of the computing rates, or --compute-scale, or 1."""
    from bspkit.model import profile as pf
    from bspkit.model import supersteps as pd

    if options.compute_from:
        try:
            return pf.rate_scale(params, usable_params(options.compute_from))
        except pd.PredictionError as e:
            raise Failure(str(e)) from None
    if options.compute_scale is not None:
        return options.compute_scale, "--compute-scale"
    return 1.0, ""


def run_scaling(options: ProfileOptions) -> int:
    """--scale: the laws per site over the runs, the program at --to-p, with --params its time."""
    from bspkit.model import predict as fc
    from bspkit.model import profile_scaling as ps

    assert options.to_p is not None
    try:
        try:
            specs = [parse_run_spec(text) for text in options.scale]
        except ValueError as e:
            raise Failure(str(e)) from None
        runs, use_cpu, texts = ps.read_runs(specs, options.section, options.phase)
        sc = ps.scale_runs(runs, use_cpu, texts, options.to_p, options.to_size)
        if options.params:
            params = usable_params(options.params)
            label = options.params
            if options.calibration:
                params, moved = calibrated_params(params, options.params, options.calibration)
                label = f"{options.params}, calibrated by {options.calibration} ({moved})"
            scale, note = compute_scale_for(options, params)
            cores = fc.shared_cores(params, options.cores)
            if cores and options.to_p > cores:  # processes take turns on the cores
                note = (note + ", " if note else "") + f"p = {options.to_p} on {cores} cores: they take turns"
            spread = fc.spread_of(params)
            draw = fc.params_draw(params, spread)
            ps.predict_scaling(
                sc,
                params,
                label,
                scale,
                note,
                options.model,
                params_draw=draw,
                cores=cores,
                compute_noise=fc.compute_noise_draw(spread),
            )
    except ps.ScalingError as e:
        raise Failure(str(e)) from None
    say = sys.stderr if options.json == "-" else sys.stdout
    print("\n".join(ps.summary_lines(sc)), file=say)
    if options.json:
        text = json.dumps(sc.to_json()) + "\n"
        if options.json == "-":
            print(text, end="")
        else:
            write_text(Path(options.json), text)
            print(f"scaling written to {options.json}", file=say)
    return 0


def run(options: ProfileOptions, extra: Sequence[str] = ()) -> int:
    from bspkit.model import profile as pf
    from bspkit.pages.profile_report import analysis_json, html_report, summary_lines

    check_usage(options)
    for out in (options.output, options.json):
        if out and out != "-":
            check_writable(Path(out), "the output")
    if options.scale:
        return run_scaling(options)
    assert options.profile is not None
    try:
        prof = pf.read_profile(options.profile, options.section)
    except pf.ProfileError as e:
        raise Failure(str(e)) from None
    try:
        a = pf.analyze(prof, phase=options.phase)
    except pf.ProfileError as e:
        raise Failure(str(e)) from None
    preds = predictions(options, a)
    brk = time_breakdown(options, a)
    say = sys.stderr if options.json == "-" else sys.stdout
    print("\n".join(summary_lines(a, options.top, preds, brk)), file=say)
    if options.json:
        text = json.dumps(analysis_json(a, options.top, preds, brk)) + "\n"
        if options.json == "-":
            print(text, end="")
        else:
            write_text(Path(options.json), text)
            print(f"analysis written to {options.json}", file=say)
    if options.output:
        html, nimg = html_report(a, options.top, preds, brk)
        write_text(Path(options.output), html)
        print(f"report written to {options.output} ({nimg} plots)", file=say)
    return 0
