"""`bspkit calibrate`: one short calibration (under a second), written as JSON, and its drift
from a probe's parameter file (bspkit.measure.calibration holds the model)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit import results
from bspkit.commands._args import LaunchOptions, Subparsers, add_launch_args, hostfile_arg, launch_from
from bspkit.console import Failure, check_writable, progress
from bspkit.measure import probe as pr

# the domain modules load numpy: imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model import drift as cm
NAME = "calibrate"
PASS_THROUGH = False


def add_parser(subparsers: Subparsers) -> None:
    ca = subparsers.add_parser(
        "calibrate",
        help="a short calibration (under a second): how far f, g and l have drifted since a probe",
        description="Runs bspprobe --calibrate: two dot products (plain loop and BLAS) for f, a put h-relation at "
        "h = 2048 and 262144 words for g, an empty sync and one after a one-word shift for l, each measured as the "
        "full probe measures it with fewer repetitions; writes them as JSON with the time they were taken and, "
        "given a parameter file (default: the newest probe of this back end and p), prints each one's drift: "
        "now / the probe. A drift beyond x1.25 says the machine has moved since the probe. Use the file with "
        "`bspkit profile --params P --calibration FILE`; `bspkit run --calibrate` and `bspkit validate` "
        "calibrate by themselves.",
        epilog="E.g. bspkit calibrate -n 2 --params results/probe/HOST-threads-p2-.../params.json",
    )
    add_launch_args(ca)
    ca.add_argument("--params", metavar="FILE", help="the probe to compare with (default: the newest of -b and -n)")
    ca.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where the calibration goes (default: results/calibrate/HOST-BACKEND-pP-TIME.json)",
    )
    size = ca.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the f kernels at the quick probe's size")
    size.add_argument("--full", action="store_true", help="the f kernels at the full probe's size")


@dataclass(frozen=True)
class CalibrateOptions:
    launch: LaunchOptions
    params: str | None  # None: the newest probe of this back end and p
    output: str | None
    quick: bool | None  # the f kernels' size: None: the probe's


def options_from(args: argparse.Namespace) -> CalibrateOptions:
    quick = True if args.quick else (False if args.full else None)
    return CalibrateOptions(launch=launch_from(args), params=args.params, output=args.output, quick=quick)


def describe_drift(drift: cm.Drift) -> list[str]:
    """Lines for the terminal: each quantity's ratio, headline first."""
    lines = []
    head = drift.headline
    names = {
        "f": "f (dot products)",
        "g": "g (large h)",
        "g_small": "g (small h)",
        "l": "l (empty sync)",
        "l_shift": "l (after a shift)",
    }
    for k, label in names.items():
        v = head.get(k)
        if v is not None:
            lines.append(f"  {label:<18} x{v:.3f}  ({(v - 1):+.1%})")
    return lines


def run(options: CalibrateOptions, extra: Sequence[str] = ()) -> int:
    from bspkit.commands._inputs import check_launch, params_for, run_label
    from bspkit.measure import calibration as cb
    from bspkit.model import drift as cm

    launch = options.launch
    nprocs = launch.nprocs or pr.cores()
    hostfile = hostfile_arg(launch.backend, launch.hostfile)
    params_path, params = params_for(options.params, launch.backend, nprocs, required=False, hostfile=hostfile)
    out = (
        Path(options.output) if options.output else results.new_calibration(run_label(launch.backend, hostfile), nprocs)
    )
    check_writable(out, "the calibration")
    cal_runner = cb.calibrator_for(params, launch.build_dir, launch.backend, nprocs, hostfile, options.quick)
    check_launch(cal_runner.bsprun, launch.backend, nprocs, hostfile)
    progress(f"calibrating {launch.backend} at p = {nprocs} ({'quick' if cal_runner.quick else 'full'} f sizes)")
    cal = cal_runner.run()
    cal.extra["loadavg_now"] = [round(x, 2) for x in os.getloadavg()]
    drift = None
    if params is not None:
        try:
            drift = cm.drift_of(cal, params)
        except cm.CalibrationError as e:
            raise Failure(f"{params_path}: {e}") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(cb.calibration_file(cal, params_path, drift), indent=1) + "\n", encoding="utf-8")
    print(
        f"calibration: {out} (the round took {cal.elapsed_s or 0:.3f} s, {cal.extra['wall_s']:.2f} s with the launch)"
    )
    if params is not None and drift is not None:
        print(f"drift against {params_path} (probed {params.machine.get('date', '?')}; ratio now / then):")
        print("\n".join(describe_drift(drift)))
        print("  " + cb.verdict(drift))
    else:
        print("no parameter file to compare with: give --params P.json to see the drift")
    return 0
