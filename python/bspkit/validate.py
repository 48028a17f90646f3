"""`bspkit validate`: sweep an algorithm's problem sizes and its second parameter, run the
driver for each, predict every run from a probe's parameter file under the three models
(bspkit.predict), and summarize the errors as the thesis' Tables D-G do. The page and
validate.json are written by bspkit.validate_report."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bspkit import __version__, validate_report
from bspkit import algorithms as al
from bspkit import calibrate as cb
from bspkit import predict as pd
from bspkit import probe as pr
from bspkit.console import Failure, UsageError, check_writable, progress
from bspkit.fileformat import format_problem
from bspkit.inputs import algorithm_arg, check_launch, driver_tools, hostfile_arg, params_for, run_label
from bspkit.params import Params

# Runs shorter than this are left out of the mean error (issue 5: "over runs longer than 0.1 s").
MIN_VALIDATED_TIME_S = 0.1
# A run where communication matters: its communication and synchronization are at least this
# share of the predicted time (g const; the models differ only in that part).
COMM_MATTERS_SHARE = 0.2

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


def comm_share(row: Row) -> float | None:
    """The predicted share of communication and synchronization in a run (g const)."""
    total = row["predicted_s"].get("g const")
    comm = (row.get("comm_s") or {}).get("g const")
    return comm / total if comm is not None and total else None


def group_summary(rows: list[Row]) -> dict[str, Any]:
    """summarize(), plus the errors with f timed on one process alone, the mean efficiency, and
    summarize() of the runs where communication matters (the thesis' question: which g model
    predicts them; on a run dominated by work every model is right)."""
    out = summarize(rows)
    heavy = [r for r in rows if (comm_share(r) or 0.0) >= COMM_MATTERS_SHARE]
    out["comm_matters"] = {**summarize(heavy), "min_share": COMM_MATTERS_SHARE}
    alone = summarize([{**r, "rel_error": r["rel_error_f_alone"]} for r in rows])
    out["f_alone"] = {m: alone[m] for m in pd.MODELS}
    effs = [r["efficiency"] for r in rows if r["efficiency"] is not None and r["measured_s"] >= MIN_VALIDATED_TIME_S]
    out["efficiency"] = statistics.fmean(effs) if effs else None
    cal = calibrated_summary(rows)
    if cal is not None:
        out["calibrated"] = cal
    return out


def calibrated_summary(rows: list[Row]) -> dict[str, Any] | None:
    """summarize() of the calibrated predictions, on the runs not flagged (the machine moved
    during them), with the raw errors of the same runs beside them; None without calibration."""
    cal_rows = [r for r in rows if r.get("calibrated")]
    if not cal_rows:
        return None
    kept = [r for r in cal_rows if not r["calibrated"]["flagged"]]
    out = summarize([{**r, "rel_error": r["calibrated"]["rel_error"]} for r in kept])
    raw = summarize(kept)
    out["raw"] = {m: raw[m] for m in (*pd.MODELS, "best_model", "best_error")}
    out["flagged"] = len(cal_rows) - len(kept)
    out["uncalibrated"] = len(rows) - len(cal_rows)
    return out


def calibrated_row(row: Row, data: dict[str, Any], params: Params, before: cb.Drift, after: cb.Drift | None) -> None:
    """Adds to a run its prediction with the parameters scaled by the machine's drift over the
    run (the calibrations before and after it; before only when the sweep stopped after it).
    g and l: the probe's, times the drift over the run. f: the driver timed its own kernel
    after its repetitions, at the moment of the calibration after it; over the repetitions it
    was the f drift over the run relative to that moment, sqrt(f before / f after)."""
    drift = cb.mean_drift(before, after)
    f_run = data.get("f_all_s_per_unit") or data.get("f_s_per_unit")
    f_b, f_a = before.headline["f"], after.headline["f"] if after is not None else None
    f_factor = math.sqrt(f_b / f_a) if f_b and f_a else 1.0
    try:
        pred = pd.predict(cb.scaled(params, drift, scale_f=False), data, f_run * f_factor if f_run else None)
        moved = None
        if after is not None:
            # the run's predicted time with the calibration after it / before it; its work too
            # moves with f, whose drift the run's own f (timed once, at one moment) cannot see
            pb = pd.predict(cb.scaled(params, before, scale_f=False), data)
            pa = pd.predict(cb.scaled(params, after, scale_f=False), data)
            f_b, f_a = before.headline["f"], after.headline["f"]
            f_moved = f_a / f_b if f_a and f_b else 1.0
            m = next((m for m in reversed(pd.MODELS) if pa[m] and pb[m]), None)
            if m is not None:
                moved = (pa["work_s"] * f_moved + pa[m + " comm_s"]) / pb[m]
    except pd.PredictionError as e:
        raise Failure(str(e)) from None
    row["calibrated"] = {
        "predicted_s": {m: pred[m] for m in pd.MODELS},
        "rel_error": {m: pd.relative_error(pred[m], row["measured_s"]) for m in pd.MODELS},
        "drift": drift.headline,
        "f_factor": f_factor,
        "within_run": cb.within_run(before, after) if after is not None else None,
        "within_run_prediction": moved,
        "flagged": moved is not None and not 1 / cb.WITHIN_RUN_FLAG <= moved <= cb.WITHIN_RUN_FLAG,
        "after": after is not None,
    }


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
        "comm_s": {m: pred[m + " comm_s"] for m in pd.MODELS},
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
    print("  " + validate_report.comm_matters_sentence(overall))
    cal = overall.get("calibrated")
    if cal:
        raw = cal["raw"]
        cells = "; ".join(
            f"{m} {validate_report.pct_or_dash(raw.get(m))} -> {validate_report.pct_or_dash(cal.get(m))}"
            for m in pd.MODELS
        )
        print(f"  raw -> calibrated (mean |relative error|, {cal['runs_used']} runs): {cells}")
        if cal["flagged"]:
            print(
                f"  {cal['flagged']} run(s) flagged: the machine moved during them enough to change their "
                f"prediction by more than x{cb.WITHIN_RUN_FLAG:g}"
            )


# The format of validate.json this bspkit writes and reads (--resume).
RESULT_FORMAT = 1


def _config_key(size: Any, sweep_value: Any) -> tuple[str, str]:
    return (str(size), str(sweep_value))


def _row_key(row: Row) -> tuple[str, str]:
    return _config_key(row.get("size", (row.get("params") or {}).get("n")), row.get("sweep_value"))


def load_resumed(outdir: Path, alg: al.Algorithm, backend: str, nprocs: int | None) -> dict[str, Any]:
    """The sweep in DIR that --resume continues: its validate.json, checked to be the same
    algorithm, back end and p as this command's."""
    js = outdir / "validate.json"
    try:
        data = json.loads(js.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--resume {outdir}: no validate.json there (nothing to continue)") from None
    except (OSError, ValueError) as e:
        raise Failure(f"--resume {outdir}: cannot read {js}: {e}") from None
    if not isinstance(data, dict):
        raise Failure(f"{js}: not a validate.json")
    problem = format_problem(data, "validate.json", RESULT_FORMAT)
    if problem:
        raise Failure(f"{js}: {problem}")
    theirs = (data.get("algorithm"), data.get("backend"), data.get("p"))
    ours = (alg.name, backend, nprocs if nprocs is not None else data.get("p"))
    if theirs != ours:
        raise UsageError(
            f"--resume {outdir}: that sweep is {theirs[0]} on {theirs[1]} with p = {theirs[2]}, this command asks for "
            f"{ours[0]} on {ours[1]} with p = {ours[2]}: give the same ALG, -b and -n"
        )
    return data


def _iso(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _output_dir(args: argparse.Namespace, alg: al.Algorithm, nprocs: int, label: str) -> Path:
    if args.resume:
        return Path(args.resume)
    if args.output_dir:
        outdir = Path(args.output_dir)
        if (outdir / "validate.json").exists():
            raise UsageError(
                f"--output-dir {outdir} holds a sweep (validate.json): continue it with --resume {outdir}, "
                "or give another directory"
            )
        return outdir
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return (pr.repo_root() or Path.cwd()) / "results" / "validate" / f"{alg.name}-{label}-p{nprocs}-{stamp}"


def _summaries(rows: list[Row], sweep_vals: list[str]) -> tuple[dict[str, Any], list[tuple[Any, dict[str, Any]]]]:
    overall = group_summary(rows)
    for r in rows:
        r["best_model"] = overall.get("best_model")
    by_sweep = []
    for v in sweep_vals or [None]:
        rs = [r for r in rows if r["sweep_value"] == v]
        if rs:
            by_sweep.append((v if v is not None else "all sizes", group_summary(rs)))
    return overall, by_sweep


def validate_command(args: argparse.Namespace, extra: list[str]) -> int:
    alg = algorithm_arg(args.algorithm)
    if args.resume and args.output_dir:
        raise UsageError("--resume DIR continues the sweep in DIR: --output-dir is not needed")
    resumed = load_resumed(Path(args.resume), alg, args.backend, args.nprocs) if args.resume else None
    nprocs = args.nprocs or (int(resumed["p"]) if resumed else pr.cores())
    # the resumed sweep's hosts, unless given again
    hostfile = hostfile_arg(args.backend, args.hostfile or (resumed.get("hostfile") if resumed else None))
    sizes, sweep_vals = sweep_of(alg, args.sizes, args.values, args.quick)
    params_arg = args.params or (resumed.get("params_file") if resumed else None)
    params_path, params = params_for(params_arg, args.backend, nprocs, required=True, hostfile=hostfile)
    assert params is not None and params_path is not None
    if params.p not in (None, nprocs):
        progress(f"warning: the parameters were measured at p = {params.p}, the runs use p = {nprocs}")
    outdir = _output_dir(args, alg, nprocs, run_label(args.backend, hostfile))
    check_writable(outdir / "validate.json", "the sweep's results")

    rows: list[Row] = list(resumed.get("rows", [])) if resumed else []
    done = {_row_key(r) for r in rows}
    configs = [(n, v) for v in (sweep_vals or [None]) for n in sizes]
    todo = [(n, v) for n, v in configs if _config_key(n, v) not in done]
    if resumed:
        progress(f"resuming {outdir}: {len(rows)} runs kept, {len(todo)} of this sweep to run")
    try:
        al.check_memory(
            alg, [{"n": n, **({alg.sweep_param: v} if alg.sweep_param and v else {})} for n, v in todo], nprocs
        )
    except al.AlgorithmError as e:
        raise Failure(str(e)) from None
    bsprun, bindir = driver_tools(args.build_dir, alg.driver)
    check_launch(bsprun, args.backend, nprocs, hostfile)
    # the short calibration runs inside every driver run, before its repetitions and after them
    # (and its f): in the process the run is in (on a shared VM the state that decides g and l
    # is set per process), with the f size of the probe it is compared with
    calibrate_mode = None if args.no_calibrate else ("quick" if params.machine.get("mode") == "quick" else "full")
    load0 = os.getloadavg()
    failed: list[dict[str, Any]] = []
    result: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "bspkit_version": __version__,
        "complete": False,
        "algorithm": alg.name,
        "description": alg.description,
        "backend": args.backend,
        "p": nprocs,
        "hostfile": str(hostfile) if hostfile else None,
        "sweep": alg.sweep_param,
        "params_file": str(params_path),
        "params_p": params.p,
        "machine": params.machine,
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "loadavg_start": [round(x, 2) for x in load0],
        "command": "bspkit " + " ".join(sys.argv[1:]),
        "rows": rows,
        "failed": failed,
        "calibrations": list(resumed.get("calibrations", [])) if resumed else [],
        "within_run_flag": cb.WITHIN_RUN_FLAG,
    }
    sweep_t0 = time.monotonic()
    sweep_s0 = float((resumed.get("calibration_cost") or {}).get("sweep_s", 0.0)) if resumed else 0.0
    cal_s = [float((resumed.get("calibration_cost") or {}).get("calibration_s", 0.0)) if resumed else 0.0]

    def calibrations_of(row: Row, data: dict[str, Any], started: float) -> None:
        """The run's own calibrations (before and after its repetitions), filed in validate.json,
        and its calibrated prediction."""
        recs = data.get("calibration") or {}
        drifts: list[cb.Drift | None] = []
        for when in ("before", "after"):
            rec = recs.get(when)
            if not rec:
                drifts.append(None)
                continue
            try:
                cal = cb.Calibration.from_record(rec, _iso(started + float(rec.get("t_s") or 0.0)))
                drift = cb.drift_of(cal, params)
            except cb.CalibrationError as e:
                raise Failure(f"{params_path}: {e}") from None
            result["calibrations"].append(
                {
                    "index": len(result["calibrations"]),
                    "run": len(rows) - 1,
                    "when": when,
                    **cal.to_json(),
                    "drift": drift.to_json(),
                }
            )
            drifts.append(drift)
        cal_s[0] += float(recs.get("seconds") or 0.0)
        if drifts[0] is not None:
            calibrated_row(row, data, params, drifts[0], drifts[1])
            head = [d.headline for d in drifts if d is not None]
            progress(
                "    calibration (before -> after): "
                + ", ".join(
                    f"{k} x{head[0][k]:.2f}" + (f" -> x{head[-1][k]:.2f}" if len(head) > 1 else "")
                    for k in cb.HEADLINE
                    if head[0].get(k) is not None
                )
            )

    def bring_up_to_date() -> None:
        """The summaries, the load and the calibration's cost as they stand after the runs so far."""
        result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        if calibrate_mode is not None:
            sweep_s = sweep_s0 + time.monotonic() - sweep_t0
            result["calibration_cost"] = {
                "rounds": len(result["calibrations"]),
                "calibration_s": round(cal_s[0], 3),
                "sweep_s": round(sweep_s, 3),
                "share": cal_s[0] / sweep_s if sweep_s > 0 else None,
            }
        if rows:
            overall, by_sweep = _summaries(rows, sweep_vals)
            result["summary"] = {"all": overall, "by_sweep": by_sweep}

    def save() -> Path:
        """validate.json as it stands: a sweep cut short keeps every run that finished."""
        bring_up_to_date()
        return validate_report.write_json(result, outdir)

    resume_hint = f"the runs done are in {outdir / 'validate.json'}; continue with --resume {outdir}"
    try:
        for i, (n, v) in enumerate(todo):
            dargs = ["--size", str(n), "--reps", str(args.reps), "--measure-f", "--no-check", *extra]
            if v is not None and alg.sweep_option:
                dargs += [alg.sweep_option, v]
            if calibrate_mode is not None:
                dargs += ["--calibrate", calibrate_mode]
            started = time.time()
            progress(
                f"[{i + 1}/{len(todo)}] {alg.name} n = {n}" + (f", {alg.sweep_option} {v}" if v is not None else "")
            )
            try:
                res = al.run_driver(
                    alg, bsprun, bindir, args.backend, nprocs, dargs, timeout_s=args.timeout, hostfile=hostfile
                )
            except al.AlgorithmError as e:
                if not args.keep_going:
                    if rows:
                        save()
                    raise Failure(f"{e}\n{resume_hint}" if rows else str(e)) from None
                progress(f"skipped: {e}")
                failed.append({"size": n, "sweep_value": v, "error": str(e)})
                save()
                continue
            row = {"size": n, **measured_row(alg, res, params, v)}
            rows.append(row)
            if calibrate_mode is not None:
                calibrations_of(row, res.data, started)
            save()
            errs = ", ".join(f"{m} {row['rel_error'][m]:+.1%}" for m in pd.MODELS if row["rel_error"][m] is not None)
            eff = f", efficiency {row['efficiency']:.1%}" if row["efficiency"] is not None else ""
            progress(f"    measured {row['measured_s']:.4g} s{eff}; predicted: {errs}")
    except KeyboardInterrupt:
        if rows:
            save()
            progress(f"interrupted: {resume_hint}")
        raise
    if not rows:
        raise Failure("no run finished")

    result["complete"] = not failed
    bring_up_to_date()
    js, page_path, nimg = validate_report.write(result, outdir)
    _print_table(alg, args.backend, nprocs, result["summary"]["by_sweep"], result["summary"]["all"])
    sentence = validate_report.drift_sentence(result)
    if sentence:
        print("  " + sentence)
        cost = result.get("calibration_cost") or {}
        if cost.get("share") is not None:
            print(
                f"  calibration: {cost['rounds']} rounds, {cost['calibration_s']:.1f} s = {cost['share']:.1%} of the sweep"
            )
    print(f"results: {js}\nreport:  {page_path} ({nimg} plots)")
    if failed:
        raise Failure(f"{len(failed)} of the sweep's runs failed (listed in {js}); rerun them with --resume {outdir}")
    return 0
