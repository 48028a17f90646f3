"""The commands probe, fit, report, compare and run (validate: bspkit.validate). Each takes
the parsed arguments and returns the exit status; errors are Failure or UsageError."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from bspkit import algorithms as al
from bspkit import calibrate as cb
from bspkit import predict as pd
from bspkit import probe as pr
from bspkit import programs
from bspkit.console import Failure, UsageError, check_writable, progress, write_text
from bspkit.inputs import (
    algorithm_arg,
    check_launch,
    default_beside,
    driver_tools,
    hostfile_arg,
    load_fit,
    load_params,
    params_for,
    resolve_input,
    run_label,
)
from bspkit.params import Params, Surface
from bspkit.rawdata import RawRun


def _lsq_cell(surface: Surface, name: str, scale: float, fmt: str) -> str:
    """A parameter of the eq. (2.6) least-squares fit, or '-' where the fit failed."""
    value = surface.lsq_value(name)
    return format(value * scale, fmt) if value is not None else "-".rjust(int(fmt.split(".")[0]))


def summary_lines(params: Params) -> list[str]:
    """A short text summary of a parameter file for the terminal."""
    out = []
    m = params.machine
    out.append(f"{m.get('library')}/{m.get('backend')} on {m.get('host')}, p = {params.p}")
    out.append(
        f"  {'primitive/pattern':<22} {'g_inf ns/w':>11} {'h_half w':>9} {'o w':>8}   model     "
        "(LSQ eq. 2.6; '-' = failed fit, see flags)"
    )
    for key, e in params.g.items():
        cells = (_lsq_cell(e, "g_inf", 1e9, "11.4g"), _lsq_cell(e, "h_half", 1, "9.0f"), _lsq_cell(e, "o", 1, "8.1f"))
        pm = e.predict.model if e.predict else "none"
        out.append(f"  {key:<22} {' '.join(cells)}   {pm}")
    if params.l:
        out.append("  l: " + ", ".join(f"{k} {v * 1e6:.3g} us" if v else f"{k} -" for k, v in params.l.items()))
    if params.f:
        out.append("  f: " + ", ".join(f"{k} {v * 1e9:.3g} ns" if v else f"{k} -" for k, v in params.f.items()))
    val = params.validation
    if val.get("used"):
        gl = val.get("global") or {}
        out.append(
            f"  validation (eq. 2.6 per h): mean |error| {val['mean_abs_rel_error']:.1%}, "
            f"max {val['max_abs_rel_error']:.1%} over {val['used']} points: {'PASS' if val.get('pass') else 'FAIL'}"
            + (f" (one global fit: {gl['mean_abs_rel_error']:.1%})" if gl.get("mean_abs_rel_error") is not None else "")
        )
        drift, st = val.get("drift") or {}, val.get("stable_state") or {}
        if drift.get("share_off"):
            out.append(
                f"  warning: the machine changed speed during the run (up to {drift['max_factor']:.2f}x the fit, "
                f"{drift['share_off']:.0%} of the run)"
                + (
                    f"; on the {st['points']} points measured in the fit's state: {st['mean_abs_rel_error']:.1%}"
                    if st.get("mean_abs_rel_error") is not None
                    else ""
                )
            )
        cal = val.get("calibrated") or {}
        if cal.get("mean_abs_rel_error") is not None:
            out.append(
                f"  calibrated by its {len(cal.get('rounds') or [])} calibration rounds: mean |error| "
                f"{cal['mean_abs_rel_error']:.1%} over {val['used'] - cal['flagged']} points "
                f"({cal['flagged']} flagged: the machine moved around them by more than x{cal['within_run_flag']:g})"
            )
    for chk in params.checks.get("memcpy", []):
        if chk.get("ratio") is not None:
            out.append(
                f"  {chk['key']} time per word at h = {chk.get('h')} / memcpy's = {chk['ratio']:.2f} "
                f"({'at most' if chk['pass'] else 'MORE than'} 1.5x)"
            )
    for w in params.noise.get("warnings", []):
        out.append(f"  warning: {w}")
    return out


def write_report(items: list[tuple[RawRun, Params]], out: Path) -> int:
    from bspkit.report import run_report

    html, nimg = run_report(items)
    write_text(out, html)
    print(f"report written to {out} ({nimg} plots)")
    return nimg


# ----------------------------------------------------------------------- commands


def fit_command(args: argparse.Namespace) -> int:
    kind, raw = resolve_input(args.raw)
    if kind != "raw":
        raise Failure(f"{args.raw}: fit needs a raw .jsonl file (or a run directory with raw.jsonl)")
    _run, params = load_fit(raw)
    text = params.dumps()
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.output) if args.output else default_beside(raw, "params.json", ".params.json")
    write_text(out, text)
    print("\n".join(summary_lines(params)))
    print(f"parameters written to {out}")
    return 0


def report_command(args: argparse.Namespace) -> int:
    items: list[tuple[RawRun, Params, Path]] = []
    for arg in args.inputs:
        kind, path = resolve_input(arg)
        if kind != "raw":
            raise Failure(f"{arg}: report needs the raw samples (raw.jsonl); it refits them")
        run, params = load_fit(path)
        items.append((run, params, path))
        if args.write_params:
            out = default_beside(path, "params.json", ".params.json")
            write_text(out, params.dumps())
            print(f"parameters written to {out}")
    if args.output:
        write_report([(r, p) for r, p, _ in items], Path(args.output))
    else:
        for run, params, path in items:
            write_report([(run, params)], default_beside(path, "report.html", ".report.html"))
    return 0


def compare_command(args: argparse.Namespace) -> int:
    from bspkit.report import bullets, compare_report, ranking_rows

    if len(args.runs) < 2:
        raise UsageError("compare needs at least two runs")
    entries: list[tuple[str, Params]] = []
    for arg in args.runs:
        kind, path = resolve_input(arg)
        params = load_fit(path)[1] if kind == "raw" else load_params(path)
        m = params.machine
        label = f"{m.get('library', '?')}/{m.get('backend', '?')} {m.get('host', '?')} p={params.p} ({arg})"
        entries.append((label, params))
    html, nimg = compare_report(entries)
    out = Path(args.output)
    write_text(out, html)
    for i, (lab, _p) in enumerate(entries):
        print(f"R{i + 1}: {lab}")
    rk = ranking_rows([p for _l, p in entries])
    width = max(len(n) for n, _s, _w in rk)
    print(f"{'':<{width}}  " + "  ".join(f"{'R' + str(i + 1):<5}" for i in range(len(entries))))
    for name, scores, _what in rk:
        print(f"{name:<{width}}  " + "  ".join(f"{b:<5}" for b in bullets(scores)))
    print(f"comparison written to {out} ({nimg} plots)")
    return 0


# what makes a directory hold a probe run: writing into it would overwrite these
RUN_FILES = ("raw.jsonl", "params.json", "report.html")


def _probe_output_dir(args: argparse.Namespace, root: Path | None, backend: str, nprocs: int) -> Path:
    """--output-dir, refused when it holds a run and --force is not given; else a new
    timestamped directory. Nothing is created here."""
    if not args.output_dir:
        return pr.default_output_dir(root, backend.replace("/", "_"), nprocs)
    outdir = Path(args.output_dir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"--output-dir {outdir} is a file, not a directory")
    held = [name for name in RUN_FILES if (outdir / name).exists()]
    if held and not args.force:
        raise UsageError(
            f"--output-dir {outdir} holds a run ({', '.join(held)}): give another directory, or --force to overwrite it"
        )
    return outdir


def probe_command(args: argparse.Namespace, extra: list[str]) -> int:
    if args.bspcc and args.probe_binary:
        raise UsageError("--bspcc and --probe-binary exclude each other")
    if args.launcher is not None and not args.launcher.strip():
        raise UsageError("--launcher needs a command")
    if args.suites is not None:
        if any(a == "--only" or a.startswith("--only=") for a in extra):
            raise UsageError("--suites and bspprobe's --only (after --) exclude each other")
        try:
            extra = ["--only", ",".join(pr.suite_sections(args.suites)), *extra]
        except ValueError as e:
            raise UsageError(str(e)) from None
    if args.disk_dir is not None:
        if not Path(args.disk_dir).is_dir():
            raise UsageError(f"--disk-dir {args.disk_dir}: no such directory")
        extra = ["--disk-dir", args.disk_dir, *extra]
    if args.hostfile and (args.bspcc or args.launcher is not None):
        raise UsageError("--hostfile is bsprun's: with --bspcc or --launcher, give the hosts in the launcher's command")
    hostfile = hostfile_arg(args.backend, args.hostfile)
    nprocs = args.nprocs or pr.cores()
    root = pr.repo_root()
    backend = (args.library_name or Path(args.bspcc).name) if args.bspcc else args.backend
    outdir = _probe_output_dir(args, root, run_label(backend, hostfile), nprocs)
    # Every option is checked, and bspkit's own bspprobe built, before the run directory is
    # made: a mistake must not leave an empty run behind.
    try:
        bsprun: Path | None = None
        binary: Path | None = None
        if args.bspcc:
            if root is None:
                raise Failure("cannot find the bspprobe sources: set BSPKIT_SOURCE_DIR")
            if shutil.which(args.bspcc) is None:
                raise Failure(f"--bspcc {args.bspcc}: no such compiler wrapper")
        elif args.probe_binary:
            binary = Path(args.probe_binary)
            if not binary.is_file():
                raise Failure(f"--probe-binary {binary}: no such file")
        else:
            binary = programs.find("bspprobe", args.build_dir)
        if not args.bspcc and args.launcher is None:
            bsprun = programs.find("bsprun", args.build_dir)
            check_launch(bsprun, args.backend, nprocs, hostfile)
        made = not outdir.exists()
        outdir.mkdir(parents=True, exist_ok=True)
        raw = outdir / "raw.jsonl"
        try:
            if args.bspcc:
                assert root is not None
                binary = pr.build_other(root, args.bspcc, outdir, shlex.split(args.bspcc_flags or ""))
            assert binary is not None
            probe_run = pr.probe_command(
                binary, raw, nprocs, backend, bsprun, args.launcher, args.quick, args.library_name, extra, hostfile
            )
            probe_run.run()
        except BaseException:
            if made and not raw.exists():  # nothing measured: leave no empty run behind
                shutil.rmtree(outdir, ignore_errors=True)
            raise
    except pr.ProbeError as e:
        raise Failure(str(e)) from None
    if not raw.is_file():
        raise Failure(f"bspprobe finished but wrote no {raw}")
    run, params = load_fit(raw)
    write_text(outdir / "params.json", params.dumps())
    progress("writing the report")
    write_report([(run, params)], outdir / "report.html")
    print("\n".join(summary_lines(params)))
    print(f"raw samples: {raw}\nparameters:  {outdir / 'params.json'}\nreport:      {outdir / 'report.html'}")
    return 0


def print_calibrated(params: Params, d: dict[str, Any], say: TextIO) -> None:
    """The prediction again with the parameters scaled by the drift of the calibrations the
    driver ran before its repetitions and after them (validate.calibrated_row)."""
    from bspkit.validate import calibrated_row  # matplotlib: only when asked for

    recs = d.get("calibration") or {}
    try:
        drifts = [
            cb.drift_of(cb.Calibration.from_record(recs[w]), params) if recs.get(w) else None
            for w in ("before", "after")
        ]
    except cb.CalibrationError as e:
        raise Failure(f"the run's calibration: {e}") from None
    if drifts[0] is None:
        raise Failure("the driver wrote no calibration (--calibrate): is it older than this bspkit?")
    row: dict[str, Any] = {"measured_s": d["time_s"]}
    calibrated_row(row, d, params, drifts[0], drifts[1])
    cal = row["calibrated"]
    head = cal["drift"]
    moved = ", ".join(f"{k} x{head[k]:.2f}" for k in cb.HEADLINE if head.get(k) is not None)
    print(f"calibrated (the run's own calibrations, before and after its repetitions: drift {moved}):", file=say)
    for m in pd.MODELS:
        v, err = cal["predicted_s"][m], cal["rel_error"][m]
        print(f"  {m:<8} {v:.4g} s ({err:+.1%})" if v is not None and err is not None else f"  {m:<8} -", file=say)
    if cal["flagged"]:
        print(
            f"  the machine moved during the run: its prediction with the calibration after it is "
            f"x{cal['within_run_prediction']:.2f} the one with the calibration before it",
            file=say,
        )
    print("  " + cb.verdict(cb.mean_drift(drifts[0], drifts[1])), file=say)


def run_command(args: argparse.Namespace, extra: list[str]) -> int:
    alg = algorithm_arg(args.algorithm)
    hostfile = hostfile_arg(args.backend, args.hostfile)
    nprocs = args.nprocs or pr.cores()
    json_to_stdout = args.json == "-"
    if args.json and not json_to_stdout:
        check_writable(Path(args.json), "--json")
    # with --json -, stdout holds the JSON object alone and the summary goes to stderr
    say = sys.stderr if json_to_stdout else sys.stdout
    params_path, params = (
        params_for(args.params, args.backend, nprocs, required=True, hostfile=hostfile)
        if args.predict or args.params
        else (None, None)
    )
    if args.size is not None:
        try:
            al.check_memory(alg, [{"n": args.size}], nprocs)
        except al.AlgorithmError as e:
            raise Failure(str(e)) from None
    if args.calibrate and params is None:
        raise UsageError("--calibrate scales a probe's parameters by the drift since: give --params or --predict")
    bsprun, bindir = driver_tools(args.build_dir, alg.driver)
    check_launch(bsprun, args.backend, nprocs, hostfile)
    dargs = list(extra)
    if args.calibrate and params is not None:  # inside the run: before its repetitions and after
        dargs += ["--calibrate", "quick" if params.machine.get("mode") == "quick" else "full"]
    if args.size is not None:
        dargs += ["--size", str(args.size)]
    if params is not None and "--measure-f" not in dargs:
        dargs.append("--measure-f")
    try:
        res = al.run_driver(alg, bsprun, bindir, args.backend, nprocs, dargs, hostfile=hostfile)
    except al.AlgorithmError as e:
        raise Failure(str(e)) from None
    say.write(res.stdout)
    d = res.data
    eff = al.efficiency(alg, d, d.get("f_s_per_unit"))
    if eff is not None:
        print(f"efficiency (one-process kernel time of the whole problem / p T): {eff:.1%}", file=say)
    if params is not None:
        try:
            pred = pd.predict(params, d)
        except pd.PredictionError as e:
            raise Failure(str(e)) from None
        print(
            f"predicted from {params_path} (work {pred['work_s']:.4g} s at f = {pred['f_s_per_unit']:.3g} "
            f"s/{d.get('work_unit')}):",
            file=say,
        )
        for m in pd.MODELS:
            v = pred[m]
            err = pd.relative_error(v, d["time_s"])
            print(f"  {m:<8} {v:.4g} s ({err:+.1%})" if v is not None and err is not None else f"  {m:<8} -", file=say)
        if args.calibrate:
            print_calibrated(params, d, say)
    if alg.explain:
        for line in alg.explain(d):
            print(line, file=say)
    if json_to_stdout:
        sys.stdout.write(json.dumps(d) + "\n")
    elif args.json:
        write_text(Path(args.json), json.dumps(d) + "\n")
        print(f"run written to {args.json}", file=say)
    return 0
