"""`bspkit validate ALG`: the validation sweep (bspkit.measure.validation) from the command line: its
options, the parameter file and the output directory (or the sweep --resume continues), the
table on the terminal."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit import algorithms as al
from bspkit import results
from bspkit.commands._args import (
    LaunchOptions,
    Subparsers,
    add_launch_args,
    add_library_args,
    algorithm_arg,
    comma_list,
    hostfile_arg,
    launch_from,
    library_arg,
    positive_float,
    positive_int,
)
from bspkit.console import Failure, UsageError, check_writable, progress
from bspkit.measure import probe as pr
from bspkit.measure.libraries import Library
from bspkit.model import comm_models

# the domain modules load numpy (validate's report: matplotlib): imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model.params import JsonObject, Params

NAME = "validate"
PASS_THROUGH = True  # what follows `--` goes to every driver run


def add_parser(subparsers: Subparsers) -> None:
    algs = ", ".join(al.ALGORITHMS)
    # each driver's second parameter, from the records: "matmul: q, llcs: alpha, ..."
    second = ", ".join(
        dict.fromkeys(f"{a.driver.removeprefix('bspalg-')}: {a.sweep_param}" for a in al.REGISTRY if a.sweep_param)
    )
    va = subparsers.add_parser(
        "validate",
        help="sweep an algorithm's sizes and parameters, predict every run, write the table and plots",
        description=f"Runs ALG for every problem size in --sizes and ({second}) every value in --values, "
        "each with the driver's --measure-f (its kernel timed on one process), predicts each run from a probe's "
        f"parameter file under each model of communication ({', '.join(comm_models.NAMES)}), and writes validate.json and validate.html "
        "(efficiency and mean relative error per model, the layout of thesis Tables D-G; prediction-versus-"
        "measurement plots). Options after `--` go to every driver run, e.g. "
        "bspkit validate rdxsort -n 2 -- --dist zipf (validate.json keeps the command and each run's).",
        epilog="Default sweeps (sizes; values): "
        + "; ".join(
            f"{a.name}: {','.join(map(str, a.sizes))}" + (f" x {','.join(a.sweep_values)}" if a.sweep_values else "")
            for a in al.ALGORITHMS.values()
        ),
    )
    va.add_argument("algorithm", metavar="ALG", help=algs)
    add_launch_args(va)
    va.add_argument(
        "--params",
        metavar="FILE",
        help="a probe's params.json (default: the newest probe of this back end and p under results/probe/)",
    )
    va.add_argument("--sizes", metavar="N,N,...", help="problem sizes (default: per algorithm, listed below)")
    va.add_argument("--values", metavar="V,V,...", help=f"values of the second parameter ({second})")
    va.add_argument(
        "-r",
        "--reps",
        type=positive_int,
        default=3,
        metavar="R",
        help="repetitions per run; the median is used (default 3)",
    )
    va.add_argument("--quick", action="store_true", help="the first two sizes and values only")
    va.add_argument(
        "--timeout", type=positive_float, default=600.0, metavar="S", help="give up a run after S seconds (default 600)"
    )
    va.add_argument("--keep-going", action="store_true", help="skip a run that fails instead of stopping")
    va.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where validate.json and validate.html go (default: results/validate/ALG-...); "
        "a directory that holds a sweep is refused: use --resume",
    )
    va.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the sweep in DIR (its validate.json, written after every run): the runs already there are "
        "kept and skipped, the others run; the sweep, back end and p come from DIR unless given again",
    )
    va.add_argument(
        "--calibrate",
        action="store_true",
        help="each run also makes the short calibration before its repetitions and after them, and is predicted "
        "twice: with the parameters as probed and scaled by the machine's drift since the probe (off by default: "
        "on this kind of VM it did not make the predictions better; the machine's state beside every repetition "
        "marks the runs a busy machine spoiled instead)",
    )
    va.add_argument("--no-calibrate", action="store_true", help=argparse.SUPPRESS)  # the default; older scripts
    add_library_args(va)


@dataclass(frozen=True)
class ValidateOptions:
    algorithm: str
    launch: LaunchOptions
    params: str | None  # None: the resumed sweep's, else the newest probe's
    sizes: str | None  # comma-separated; None: the algorithm's
    values: str | None  # of the second parameter, comma-separated
    reps: int
    quick: bool  # the first two sizes and values
    timeout_s: float
    keep_going: bool
    output_dir: str | None
    resume: str | None  # a sweep's directory to continue
    calibrate: bool
    library: Library | None = None  # another BSPlib; None: bspkit's back ends

    @property
    def backend(self) -> str:
        """What the sweep is filed under: bspkit's back end, or the library's name@version
        (a sweep of one never resumes into another's)."""
        return self.library.label if self.library else self.launch.backend


def options_from(args: argparse.Namespace) -> ValidateOptions:
    launch = launch_from(args)
    return ValidateOptions(
        library=library_arg(args, launch),
        algorithm=args.algorithm,
        launch=launch,
        params=args.params,
        sizes=args.sizes,
        values=args.values,
        reps=args.reps,
        quick=args.quick,
        timeout_s=args.timeout,
        keep_going=args.keep_going,
        output_dir=args.output_dir,
        resume=args.resume,
        calibrate=bool(args.calibrate) and not args.no_calibrate,
    )


def sweep_of(
    alg: al.Algorithm, sizes_arg: str | None, values_arg: str | None, quick: bool
) -> tuple[list[int], list[str]]:
    """(sizes, values of the second parameter): the arguments, else the algorithm's defaults."""
    try:
        sizes = [int(v) for v in comma_list(sizes_arg, "--sizes")] or list(alg.sizes)
    except ValueError:
        raise UsageError(f"--sizes must be integers, not '{sizes_arg}'") from None
    sweep_vals = comma_list(values_arg, "--values") or list(alg.sweep_values)
    if values_arg and not alg.sweep_option:
        raise UsageError(f"{alg.name} has no second parameter to sweep")
    if quick:
        sizes, sweep_vals = sizes[:2], sweep_vals[:2]
    return sizes, sweep_vals


def output_dir(options: ValidateOptions, alg: al.Algorithm, nprocs: int, label: str) -> Path:
    """--resume's directory, else --output-dir (refused when it holds a sweep), else a new one."""
    if options.resume:
        return Path(options.resume)
    if options.output_dir:
        outdir = Path(options.output_dir)
        if (outdir / "validate.json").exists():
            raise UsageError(
                f"--output-dir {outdir} holds a sweep (validate.json): continue it with --resume {outdir}, "
                "or give another directory"
            )
        return outdir
    return results.new_validation(alg.name, label, nprocs)


def hosts_and_params(options: ValidateOptions, resumed: JsonObject | None) -> tuple[int, Path | None, Path, Params]:
    """(p, the hosts, the parameter file and its parameters): as given, else the resumed
    sweep's, else p = the cores, this machine and the newest probe's."""
    from bspkit.commands._inputs import params_for

    launch = options.launch
    nprocs = launch.nprocs or (int(resumed["p"]) if resumed else pr.cores())
    hostfile = hostfile_arg(launch.backend, launch.hostfile or (resumed.get("hostfile") if resumed else None))
    params_arg = options.params or (resumed.get("params_file") if resumed else None)
    params_path, params = params_for(
        params_arg, launch.backend, nprocs, required=True, hostfile=hostfile, library=options.library
    )
    assert params is not None and params_path is not None
    if params.p not in (None, nprocs):
        progress(f"warning: the parameters were measured at p = {params.p}, the runs use p = {nprocs}")
    return nprocs, hostfile, params_path, params


def check_memory(alg: al.Algorithm, todo: Sequence[tuple[int, str | None]], nprocs: int) -> None:
    """Failure, before anything runs, when a run of the sweep would not fit in memory."""
    runs = [{"n": n, **({alg.sweep_param: v} if alg.sweep_param and v else {})} for n, v in todo]
    try:
        al.check_memory(alg, runs, nprocs)
    except al.AlgorithmError as e:
        raise Failure(str(e)) from None


def run(options: ValidateOptions, extra: Sequence[str]) -> int:
    from bspkit.commands._inputs import driver_launch, run_label
    from bspkit.measure import validation as va
    from bspkit.pages import validate_report

    launch = options.launch
    alg = algorithm_arg(options.algorithm)
    if options.resume and options.output_dir:
        raise UsageError("--resume DIR continues the sweep in DIR: --output-dir is not needed")
    resumed = va.load_resumed(Path(options.resume), alg, options.backend, launch.nprocs) if options.resume else None
    sizes, sweep_vals = sweep_of(alg, options.sizes, options.values, options.quick)
    nprocs, hostfile, params_path, params = hosts_and_params(options, resumed)
    outdir = output_dir(options, alg, nprocs, run_label(options.backend.replace("@", "-"), hostfile))
    check_writable(outdir / "validate.json", "the sweep's results")
    todo = va.remaining(sizes, sweep_vals, resumed.get("rows", []) if resumed else [])
    if resumed:
        progress(f"resuming {outdir}: {len(resumed.get('rows', []))} runs kept, {len(todo)} of this sweep to run")
    check_memory(alg, todo, nprocs)
    drivers = driver_launch(launch.build_dir, alg.driver, launch.backend, nprocs, hostfile, options.library)
    # the short calibration runs inside every driver run, before its repetitions and after them
    # (and its f): in the process the run is in (on a shared VM the state that decides g and l
    # is set per process), with the f size of the probe it is compared with
    calibrate_mode = ("quick" if params.machine.get("mode") == "quick" else "full") if options.calibrate else None
    setup = va.SweepSetup(
        alg=alg,
        backend=options.backend,
        library=options.library,
        nprocs=nprocs,
        hostfile=hostfile,
        params_path=params_path,
        params=params,
        sweep_values=tuple(sweep_vals),
        reps=options.reps,
        timeout_s=options.timeout_s,
        keep_going=options.keep_going,
        calibrate_mode=calibrate_mode,
        driver_args=tuple(extra),
        outdir=outdir,
        command="bspkit " + " ".join(sys.argv[1:]),
    )
    sweep = va.Sweep(setup, resumed)
    sweep.run(todo, drivers)
    js = sweep.finish()
    page_path, nimg = validate_report.write_page(sweep.result, outdir)
    validate_report.print_summary(alg, sweep.result)
    print(f"results: {js}\nreport:  {page_path} ({nimg} plots)")
    if sweep.failed:
        raise Failure(
            f"{len(sweep.failed)} of the sweep's runs failed (listed in {js}); rerun them with --resume {outdir}"
        )
    return 0
