"""`bspkit imh ALG`: runs cannon or oocmm at each size and prints the BSP and the IMH model's
predictions beside the measured time (bspkit.model.imh_predict holds the model); writes imh.json."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bspkit import algorithms as al
from bspkit import results
from bspkit.commands._args import (
    LaunchOptions,
    Subparsers,
    add_launch_args,
    hostfile_arg,
    launch_from,
    positive_float,
    positive_int,
)
from bspkit.console import Failure, UsageError, check_writable, progress, write_text
from bspkit.measure import probe as pr
from bspkit.units import quantity
from bspkit.version import __version__

# the domain modules load numpy (imh_predict: scipy): imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model.params import JsonObject, Params

NAME = "imh"
PASS_THROUGH = True  # what follows `--` goes to every driver run

SUPPORTED = ("cannon", "oocmm")
DEFAULT_SIZES = {"cannon": (600, 1000, 1400), "oocmm": (1024, 2048)}


def add_parser(subparsers: Subparsers) -> None:
    im = subparsers.add_parser(
        "imh",
        help="predict cannon or oocmm with the BSP model and with the IMH model's memory-hierarchy terms",
        description="Kang et al.'s sec. 6: runs ALG (cannon with --kernel naive or transposed after `--`, or oocmm) "
        "at each size with --measure-f, predicts each run from a probe's parameter file with the BSP model (f W + "
        "g H + l S, the g const model) and with the IMH model (cannon: the processor-memory cost of eq. (4) "
        "instead of f W; oocmm: plus the memory-disk terms T + m tau of every read and write), and prints both "
        "errors; writes imh.json. The parameter file needs the suites: bspkit probe --suites all. E.g. "
        "bspkit imh cannon -n 2 --sizes 600,1000 -- --kernel naive",
    )
    im.add_argument("algorithm", metavar="ALG", help="cannon or oocmm")
    add_launch_args(im)
    im.add_argument(
        "--params",
        metavar="FILE",
        help="a probe's params.json with the mem (cannon) or disk (oocmm) suite (default: the newest probe of this "
        "back end and p under results/probe/)",
    )
    im.add_argument("--sizes", metavar="N,N,...", help="problem sizes (default: cannon 600,1000,1400; oocmm 1024,2048)")
    im.add_argument("-r", "--reps", type=positive_int, default=3, metavar="R", help="repetitions per run (default 3)")
    im.add_argument(
        "--timeout", type=positive_float, default=600.0, metavar="S", help="give up a run after S seconds (default 600)"
    )
    im.add_argument("--output-dir", metavar="DIR", help="where imh.json goes (default: results/imh/ALG-pP)")
    im.add_argument(
        "--disk-sharers",
        type=positive_int,
        metavar="K",
        help="oocmm: processes that use one disk at once, each getting 1/K of its bandwidth (default: P, every "
        "process on this machine; 1 for node-local disks with one process per node)",
    )


@dataclass(frozen=True)
class ImhOptions:
    algorithm: str  # cannon or oocmm
    launch: LaunchOptions
    params: str | None  # None: the newest probe of this back end and p
    sizes: str | None  # comma-separated; None: DEFAULT_SIZES
    reps: int
    timeout_s: float
    output_dir: str | None
    disk_sharers: int | None  # None: P


def options_from(args: argparse.Namespace) -> ImhOptions:
    return ImhOptions(
        algorithm=args.algorithm,
        launch=launch_from(args),
        params=args.params,
        sizes=args.sizes,
        reps=args.reps,
        timeout_s=args.timeout,
        output_dir=args.output_dir,
        disk_sharers=args.disk_sharers,
    )


def sizes_of(options: ImhOptions) -> list[int]:
    try:
        sizes = [int(s) for s in (options.sizes.split(",") if options.sizes else DEFAULT_SIZES[options.algorithm])]
    except ValueError:
        raise UsageError(f"--sizes {options.sizes!r}: a comma-separated list of integers") from None
    if any(s <= 0 for s in sizes):
        raise UsageError("--sizes: every size must be positive")
    return sizes


def run_description(
    backend: str, nprocs: int, hostfile: Path | None, params_path: Path | None, params: Params
) -> JsonObject:
    """What imh.json says of the runs besides their rows: where they ran, the parameter file, the command."""
    return {
        "backend": backend,
        "p": nprocs,
        "hostfile": str(hostfile) if hostfile else None,
        "params_file": str(params_path),
        "machine": params.machine,
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "command": "bspkit " + " ".join(sys.argv[1:]),
    }


def run(options: ImhOptions, extra: Sequence[str]) -> int:
    from bspkit.commands._inputs import driver_launch, params_for
    from bspkit.model import imh_predict as ip
    from bspkit.model import supersteps as pd

    if options.algorithm not in SUPPORTED:
        raise UsageError(f"bspkit imh predicts {' and '.join(SUPPORTED)}, not {options.algorithm!r}")
    launch = options.launch
    alg = al.find_algorithm(options.algorithm if options.algorithm != "cannon" else "cannon-put")
    hostfile = hostfile_arg(launch.backend, launch.hostfile)
    nprocs = launch.nprocs or pr.cores()
    sizes = sizes_of(options)
    params_path, params = params_for(options.params, launch.backend, nprocs, required=True, hostfile=hostfile)
    assert params is not None
    if not params.imh:
        raise Failure(f"{params_path} has no IMH fits: probe with `bspkit probe --suites all` (or bsp,mem,disk)")
    outdir = Path(options.output_dir) if options.output_dir else results.imh_predictions(options.algorithm, nprocs)
    check_writable(outdir / "imh.json", "the predictions")
    drivers = driver_launch(launch.build_dir, alg.driver, launch.backend, nprocs, hostfile)
    rows: list[dict[str, Any]] = []
    for i, n in enumerate(sizes):
        progress(f"[{i + 1}/{len(sizes)}] {options.algorithm} n = {n}")
        dargs = ["--size", str(n), "--reps", str(options.reps), "--measure-f", *extra]
        try:
            res = al.run_driver(alg, drivers, nprocs, dargs, timeout_s=options.timeout_s)
            row = ip.predict_run(options.algorithm, params, res.data, nprocs, options.disk_sharers or nprocs)
        except al.AlgorithmError as e:
            raise Failure(str(e)) from None
        except (ip.ImhError, pd.PredictionError) as e:
            raise Failure(f"{params_path}: {e}") from None
        row.update({"size": n, "params": res.data.get("params"), "command": res.command})
        rows.append(row)
        progress(
            f"    measured {quantity(row['measured_s'], 's')}; BSP {ip.pct(row['bsp_error'])}, IMH {ip.pct(row['imh_error'])}"
        )
    errors = ip.mean_abs_errors(rows)
    result = {
        "format": 1,
        "bspkit_version": __version__,
        "algorithm": options.algorithm,
        **run_description(launch.backend, nprocs, hostfile, params_path, params),
        "rows": rows,
        "mean_abs_error": errors,
    }
    write_text(outdir / "imh.json", json.dumps(result, indent=1) + "\n")
    print(ip.table_text(options.algorithm, rows))
    print(f"mean |error|: BSP {errors['bsp_error']:.1%}, IMH {errors['imh_error']:.1%}")
    print(f"results: {outdir / 'imh.json'}")
    return 0
