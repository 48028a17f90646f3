"""`bspkit imh ALG`: runs cannon or oocmm at each size and prints the BSP and the IMH model's
predictions beside the measured time (bspkit.model.imh_predict holds the model); writes imh.json.
`bspkit imh mem` runs nothing: it prints a parameter file's processor-memory fits (eq. 4) per
operation and element type, as Kang et al.'s Fig. 45-56 group them."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
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
from bspkit.units import plain, quantity
from bspkit.version import __version__

# the domain modules load numpy (imh_predict: scipy): imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model.params import JsonObject, Params

NAME = "imh"
PASS_THROUGH = True  # what follows `--` goes to every driver run

SUPPORTED = ("cannon", "oocmm")
SHOW_FITS = "mem"  # the ALG that shows the fits instead of running an algorithm
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
        "bspkit imh cannon -n 2 --sizes 600,1000 -- --kernel naive. ALG mem runs nothing and prints the "
        "parameter file's processor-memory fits of eq. (4) per operation, element type, cache state, processes "
        "and cache level (Fig. 45-56: read, write, multiply, divide of int, float, double; bspprobe measures the "
        "last two operations and float under --mem-ops and --mem-elems)",
    )
    im.add_argument("algorithm", metavar="ALG", help="cannon or oocmm; mem: show the processor-memory fits")
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
    im.add_argument("--ops", metavar="LIST", help="mem: only these operations (read, write, multiply, divide)")
    im.add_argument("--elems", metavar="LIST", help="mem: only these element types (int, float, double)")


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
    ops: str | None = None  # mem: comma-separated; None: all
    elems: str | None = None


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
        ops=args.ops,
        elems=args.elems,
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


def names_of(listed: str | None, option: str, allowed: Sequence[str]) -> list[str]:
    """A comma-separated list of names from `allowed` (None: none given, so all)."""
    if listed is None:
        return []
    names = [n.strip() for n in listed.split(",")]
    for n in names:
        if n not in allowed:
            raise UsageError(f"{option}: unknown name {n!r}; choose from {', '.join(allowed)}")
    return names


def mem_fits_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """The fits of model.imh.mem_fit_rows as a table (ns per element or line, as Table 3)."""
    head = (
        f"{'op':<9} {'elem':<7} {'cache':<5} {'procs':>5} {'level':<7} {'points':>6} "
        f"{'T_n ns':>8} {'T_c ns':>8} {'T_e ns':>8} {'T_p ns':>8} {'held-out':>9}"
    )
    lines = [head]
    for r in rows:
        start = f"{r['op']:<9} {r['elem']:<7} {r['cache']:<5} {r['procs']:>5} {r['level']:<7} {r['points'] or 0:>6} "
        if r["model"] is None:
            lines.append(start + f"fit failed: {r['error']}")
            continue
        coef = " ".join(f"{plain((r['model'].get(k) or 0.0) * 1e9, 3):>8}" for k in ("T_n", "T_c", "T_e", "T_p"))
        err = r["heldout_mean_rel_error"]
        lines.append(start + coef + f" {'-' if err is None else format(err, '.1%'):>9}")
    return "\n".join(lines)


def show_mem_fits(options: ImhOptions) -> int:
    """`bspkit imh mem`: the processor-memory fits of the parameter file given, else of the newest
    probe of this back end and p."""
    from bspkit.commands._inputs import load_params, run_label
    from bspkit.model import imh

    ops = names_of(options.ops, "--ops", imh.MEM_OPS)
    elems = names_of(options.elems, "--elems", imh.MEM_ELEMS)
    launch = options.launch
    nprocs = launch.nprocs or pr.cores()
    hostfile = hostfile_arg(launch.backend, launch.hostfile)
    path = (
        Path(options.params)
        if options.params
        else results.newest_probe_params(run_label(launch.backend, hostfile), nprocs)
    )
    if path is None:
        raise Failure(
            f"no parameter file: give --params FILE, or run `bspkit probe --suites mem -b {launch.backend} -n {nprocs}`"
        )
    mem = (load_params(path).imh or {}).get("mem")
    if not mem:
        raise Failure(f"{path} has no processor-memory fits: probe with `bspkit probe --suites mem` (or all)")
    rows = imh.mem_fit_rows(mem, ops, elems)
    if not rows:
        raise Failure(
            f"{path} has no processor-memory fit of {'/'.join(ops) or 'any op'} x {'/'.join(elems) or 'any type'}"
        )
    print(f"eq. (4) per operation/element/cache/processes and level, the form bspkit predicts with; {path}")
    print(mem_fits_text(rows))
    return 0


def run(options: ImhOptions, extra: Sequence[str]) -> int:
    from bspkit.commands._inputs import driver_launch, params_for
    from bspkit.model import imh_predict as ip
    from bspkit.model import supersteps as pd

    if options.algorithm == SHOW_FITS:
        if extra:
            raise UsageError("bspkit imh mem runs nothing: it takes no arguments after --")
        return show_mem_fits(options)
    if options.algorithm not in SUPPORTED:
        raise UsageError(
            f"bspkit imh predicts {' and '.join(SUPPORTED)} (or shows the fits: {SHOW_FITS}), not {options.algorithm!r}"
        )
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
