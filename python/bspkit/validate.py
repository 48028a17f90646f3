"""`bspkit validate`: sweep an algorithm's problem sizes and its second parameter, run the
driver for each, predict every run from a probe's parameter file under the three models
(bspkit.predict), and summarize the errors as the thesis' Tables D-G do. The page and
validate.json are written by bspkit.validate_report."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from bspkit import algorithms as al
from bspkit import predict as pd
from bspkit import probe as pr
from bspkit import validate_report
from bspkit.console import Failure, UsageError, progress
from bspkit.inputs import algorithm_arg, driver_tools, params_for
from bspkit.params import Params

# Runs shorter than this are left out of the mean error (issue 5: "over runs longer than 0.1 s").
MIN_VALIDATED_TIME_S = 0.1

# One run of the sweep as validate.json holds it (see `measured_row`).
Row = dict[str, Any]


def summarize(rows: list[Row]) -> dict[str, Any]:
    """Mean |relative error| per model over the runs longer than MIN_VALIDATED_TIME_S."""
    out: dict[str, Any] = {"min_time_s": MIN_VALIDATED_TIME_S}
    long_rows = [r for r in rows if r["measured_s"] >= MIN_VALIDATED_TIME_S]
    out["runs"] = len(rows)
    out["runs_used"] = len(long_rows)
    for m in pd.MODELS:
        errs = [abs(r["rel_error"][m]) for r in long_rows if r["rel_error"].get(m) is not None]
        out[m] = sum(errs) / len(errs) if errs else None
    # the best model is chosen on the runs every model could predict (a model that cannot
    # predict the hard runs must not look better for it)
    common = [r for r in long_rows if all(r["rel_error"].get(m) is not None for m in pd.MODELS)]
    vals = []
    for m in pd.MODELS:
        if out[m] is not None and common:
            vals.append((sum(abs(r["rel_error"][m]) for r in common) / len(common), m))
    if not vals:  # no run that every model predicts: compare each model's own mean
        vals = [(out[m], m) for m in pd.MODELS if out[m] is not None]
    out["best_model"] = min(vals)[1] if vals else None
    out["best_error"] = out[out["best_model"]] if vals else None
    return out


def group_summary(rows: list[Row]) -> dict[str, Any]:
    """summarize(), plus the errors with f timed on one process alone and the mean efficiency."""
    out = summarize(rows)
    alone = summarize([{**r, "rel_error": r["rel_error_f_alone"]} for r in rows])
    out["f_alone"] = {m: alone[m] for m in pd.MODELS}
    effs = [r["efficiency"] for r in rows if r["efficiency"] is not None and r["measured_s"] >= MIN_VALIDATED_TIME_S]
    out["efficiency"] = statistics.fmean(effs) if effs else None
    return out


def _split_list(text: str | None, what: str) -> list[str]:
    if text is None:
        return []
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{what} needs a comma-separated list")
    return items


def sweep_of(
    alg: al.Algorithm, sizes_arg: str | None, values_arg: str | None, quick: bool
) -> tuple[list[int], list[str]]:
    """(sizes, values of the second parameter): the arguments, else the algorithm's defaults."""
    try:
        sizes = [int(v) for v in _split_list(sizes_arg, "--sizes")] or list(alg.sizes)
    except ValueError:
        raise UsageError(f"--sizes must be integers, not '{sizes_arg}'") from None
    sweep_vals = _split_list(values_arg, "--values") or list(alg.sweep_values)
    if values_arg and not alg.sweep_option:
        raise UsageError(f"{alg.name} has no second parameter to sweep")
    if quick:
        sizes, sweep_vals = sizes[:2], sweep_vals[:2]
    return sizes, sweep_vals


def measured_row(alg: al.Algorithm, res: al.RunResult, params: Params, sweep_value: str | None) -> Row:
    """One run with its predictions and errors under each model."""
    d = res.data
    try:
        pred = pd.predict(params, d)
        pred_alone = pd.predict(params, d, d.get("f_s_per_unit"))
    except pd.PredictionError as e:
        raise Failure(str(e)) from None
    return {
        "params": d.get("params", {}),
        "sweep_value": sweep_value,
        "measured_s": d["time_s"],
        "times_s": d.get("times_s"),
        "W": d.get("W"),
        "H": d.get("H"),
        "S": d.get("S"),
        "f_s_per_unit": d.get("f_s_per_unit"),
        "efficiency": al.efficiency(alg, d, d.get("f_s_per_unit")),
        "predicted_s": {m: pred[m] for m in pd.MODELS},
        "work_s": pred["work_s"],
        "f_used_s_per_unit": pred["f_s_per_unit"],
        "f_all_s_per_unit": d.get("f_all_s_per_unit"),
        "rel_error": {m: pd.relative_error(pred[m], d["time_s"]) for m in pd.MODELS},
        # the thesis' f (the kernel on one process alone), for comparison
        "rel_error_f_alone": {m: pd.relative_error(pred_alone[m], d["time_s"]) for m in pd.MODELS},
        "command": res.command,
    }


def _print_table(
    alg: al.Algorithm, backend: str, nprocs: int, by_sweep: list[tuple[Any, dict[str, Any]]], overall: dict[str, Any]
) -> None:
    print(
        f"{alg.name} on {backend}, p = {nprocs}: {overall['runs']} runs, "
        f"{overall['runs_used']} of >= {MIN_VALIDATED_TIME_S} s"
    )
    print(f"  {'':<14} {'efficiency':>10} " + " ".join(f"{m:>9}" for m in pd.MODELS) + "   (mean |relative error|)")
    sweep_key = alg.sweep_param
    for v, sm in [*by_sweep, ("all", overall)]:
        cells = " ".join(f"{sm[m]:>9.1%}" if sm.get(m) is not None else f"{'-':>9}" for m in pd.MODELS)
        eff = f"{sm['efficiency']:>10.1%}" if sm.get("efficiency") is not None else f"{'-':>10}"
        print(f"  {(sweep_key + ' ' + str(v)) if sweep_key and v != 'all' else str(v):<14} {eff} {cells}")
    if overall.get("best_model"):
        print(f"  best model: {overall['best_model']} ({overall['best_error']:.1%})")


def validate_command(args: argparse.Namespace, extra: list[str]) -> int:
    if args.reps < 1:
        raise UsageError("--reps must be at least 1")
    alg = algorithm_arg(args.algorithm)
    nprocs = args.nprocs or pr.cores()
    sizes, sweep_vals = sweep_of(alg, args.sizes, args.values, args.quick)
    params_path, params = params_for(args.params, args.backend, nprocs, required=True)
    assert params is not None and params_path is not None
    if params.p not in (None, nprocs):
        progress(f"warning: the parameters were measured at p = {params.p}, the runs use p = {nprocs}")
    bsprun, bindir = driver_tools(args.build_dir, alg.driver)
    outdir = (
        Path(args.output_dir)
        if args.output_dir
        else (pr.repo_root() or Path.cwd())
        / "results"
        / "validate"
        / (f"{alg.name}-{args.backend}-p{nprocs}-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}")
    )
    configs = [(n, v) for v in (sweep_vals or [None]) for n in sizes]
    rows: list[Row] = []
    load0 = os.getloadavg()
    for i, (n, v) in enumerate(configs):
        dargs = ["--size", str(n), "--reps", str(args.reps), "--measure-f", "--no-check", *extra]
        if v is not None and alg.sweep_option:
            dargs += [alg.sweep_option, v]
        progress(
            f"[{i + 1}/{len(configs)}] {alg.name} n = {n}" + (f", {alg.sweep_option} {v}" if v is not None else "")
        )
        try:
            res = al.run_driver(alg, bsprun, bindir, args.backend, nprocs, dargs, timeout_s=args.timeout)
        except al.AlgorithmError as e:
            if args.keep_going:
                progress(f"skipped: {e}")
                continue
            raise Failure(str(e)) from None
        row = measured_row(alg, res, params, v)
        rows.append(row)
        errs = ", ".join(f"{m} {row['rel_error'][m]:+.1%}" for m in pd.MODELS if row["rel_error"][m] is not None)
        eff = f", efficiency {row['efficiency']:.1%}" if row["efficiency"] is not None else ""
        progress(f"    measured {row['measured_s']:.4g} s{eff}; predicted: {errs}")
    if not rows:
        raise Failure("no run finished")

    overall = group_summary(rows)
    for r in rows:
        r["best_model"] = overall.get("best_model")
    by_sweep = []
    for v in sweep_vals or [None]:
        rs = [r for r in rows if r["sweep_value"] == v]
        if rs:
            by_sweep.append((v if v is not None else "all sizes", group_summary(rs)))
    result = {
        "format": 1,
        "algorithm": alg.name,
        "description": alg.description,
        "backend": args.backend,
        "p": nprocs,
        "sweep": alg.sweep_param,
        "params_file": str(params_path),
        "params_p": params.p,
        "machine": params.machine,
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "loadavg_start": [round(x, 2) for x in load0],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "command": "bspkit " + " ".join(sys.argv[1:]),
        "rows": rows,
        "summary": {"all": overall, "by_sweep": by_sweep},
    }
    js, page_path, nimg = validate_report.write(result, outdir)
    _print_table(alg, args.backend, nprocs, by_sweep, overall)
    print(f"results: {js}\nreport:  {page_path} ({nimg} plots)")
    return 0
