"""The `bspkit` command: probe, fit, report, compare, run, validate.

Exit status: 0 on success, 1 when something fails (a raw file that cannot be read, a build or
a bspprobe run that fails), 2 for a usage error (argparse's convention).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

from bspkit import __version__

EXIT_FAIL = 1
EXIT_USAGE = 2


class Failure(Exception):
    """A failure (exit status 1) with a message for the user."""


def _err(msg: str) -> None:
    print(f"bspkit: error: {msg}", file=sys.stderr)


def progress(msg: str) -> None:
    print(f"bspkit: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------- inputs


def resolve_input(arg: str) -> tuple[str, Path]:
    """A run directory, a raw .jsonl file or a params .json file -> (kind, path)."""
    p = Path(arg)
    if p.is_dir():
        if (p / "raw.jsonl").is_file():
            return "raw", p / "raw.jsonl"
        if (p / "params.json").is_file():
            return "params", p / "params.json"
        raise Failure(f"{arg}: no raw.jsonl (or params.json) in this directory")
    if not p.exists():
        raise Failure(f"{arg}: no such file or directory")
    if p.suffix == ".json":
        return "params", p
    return "raw", p


def load_fit(raw: Path) -> tuple[Any, dict[str, Any]]:
    from bspkit.fit import fit_run
    from bspkit.rawdata import RawDataError, load_raw

    progress(f"reading {raw}")
    try:
        run = load_raw(raw)
    except RawDataError as e:
        raise Failure(str(e)) from None
    progress(f"fitting {len(run.g_keys())} g surfaces ({len(run.g)} grid points), f, l, As, validation")
    return run, fit_run(run)


def load_params(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise Failure(f"{path}: not JSON: {e.msg} (line {e.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != 1 or "g" not in data:
        raise Failure(f"{path}: not a bspkit parameter file (format 1)")
    return data


def write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise Failure(f"cannot write {path}: {e.strerror or e}") from None


def params_json(params: dict[str, Any]) -> str:
    return json.dumps(params, indent=1, allow_nan=False) + "\n"


def default_beside(raw: Path, name: str, suffix: str) -> Path:
    """run/raw.jsonl -> run/<name>; other.jsonl -> other<suffix>."""
    if raw.name == "raw.jsonl":
        return raw.with_name(name)
    return raw.with_name(raw.stem + suffix)


def summary_lines(params: dict[str, Any]) -> list[str]:
    """A short text summary of a parameter file for the terminal."""
    out = []
    m = params.get("machine", {})
    out.append(f"{m.get('library')}/{m.get('backend')} on {m.get('host')}, p = {params.get('p')}")
    out.append(f"  {'primitive/pattern':<22} {'g_inf ns/w':>11} {'h_half w':>9} {'o w':>8}   model     (LSQ eq. 2.6; '-' = failed fit, see flags)")
    for key, e in params.get("g", {}).items():
        q = e.get("lsq") or {}

        def v(name: str, scale: float, fmt: str) -> str:
            t = q.get(name)
            width = int(fmt.split(".")[0])
            return format(t[0] * scale, fmt) if t else "-".rjust(width)

        pm = (e.get("predict") or {}).get("model", "none")
        out.append(f"  {key:<22} {v('g_inf', 1e9, '11.4g')} {v('h_half', 1, '9.0f')} {v('o', 1, '8.1f')}   {pm}")
    l = params.get("l", {})
    if l:
        out.append("  l: " + ", ".join(f"{k} {v * 1e6:.3g} us" if v else f"{k} -" for k, v in l.items()))
    f = params.get("f", {})
    if f:
        out.append("  f: " + ", ".join(f"{k} {v * 1e9:.3g} ns" if v else f"{k} -" for k, v in f.items()))
    val = params.get("validation", {})
    if val.get("used"):
        gl = val.get("global") or {}
        out.append(
            f"  validation (eq. 2.6 per h): mean |error| {val['mean_abs_rel_error']:.1%}, max {val['max_abs_rel_error']:.1%} "
            f"over {val['used']} points: {'PASS' if val.get('pass') else 'FAIL'}"
            + (f" (one global fit: {gl['mean_abs_rel_error']:.1%})" if gl.get("mean_abs_rel_error") is not None else "")
        )
        drift, st = val.get("drift") or {}, val.get("stable_state") or {}
        if drift.get("share_off"):
            out.append(
                f"  warning: the machine changed speed during the run (up to {drift['max_factor']:.2f}x the fit, "
                f"{drift['share_off']:.0%} of the run)"
                + (f"; on the {st['points']} points measured in the fit's state: {st['mean_abs_rel_error']:.1%}"
                   if st.get("mean_abs_rel_error") is not None else "")
            )
    for chk in params.get("checks", {}).get("memcpy", []):
        if chk.get("ratio") is not None:
            out.append(f"  {chk['key']} time per word at h = {chk.get('h')} / memcpy's = {chk['ratio']:.2f} "
                       f"({'at most' if chk['pass'] else 'MORE than'} 1.5x)")
    for w in params.get("noise", {}).get("warnings", []):
        out.append(f"  warning: {w}")
    return out


# ----------------------------------------------------------------------- commands


def cmd_fit(args: argparse.Namespace) -> int:
    kind, raw = resolve_input(args.raw)
    if kind != "raw":
        raise Failure(f"{args.raw}: fit needs a raw .jsonl file (or a run directory with raw.jsonl)")
    _run, params = load_fit(raw)
    text = params_json(params)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.output) if args.output else default_beside(raw, "params.json", ".params.json")
    write_text(out, text)
    print("\n".join(summary_lines(params)))
    print(f"parameters written to {out}")
    return 0


def write_report(items: list[tuple[Any, dict[str, Any]]], out: Path) -> int:
    from bspkit.report import run_report

    html, nimg = run_report(items)
    write_text(out, html)
    print(f"report written to {out} ({nimg} plots)")
    return nimg


def cmd_report(args: argparse.Namespace) -> int:
    items: list[tuple[Any, dict[str, Any], Path]] = []
    for arg in args.inputs:
        kind, path = resolve_input(arg)
        if kind != "raw":
            raise Failure(f"{arg}: report needs the raw samples (raw.jsonl); it refits them")
        run, params = load_fit(path)
        items.append((run, params, path))
        if args.write_params:
            out = default_beside(path, "params.json", ".params.json")
            write_text(out, params_json(params))
            print(f"parameters written to {out}")
    if args.output:
        write_report([(r, p) for r, p, _ in items], Path(args.output))
    else:
        for run, params, path in items:
            write_report([(run, params)], default_beside(path, "report.html", ".report.html"))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from bspkit.report import bullets, compare_report, ranking_rows

    entries: list[tuple[str, dict[str, Any]]] = []
    for arg in args.runs:
        kind, path = resolve_input(arg)
        if kind == "raw":
            _run, params = load_fit(path)
        else:
            params = load_params(path)
        m = params.get("machine", {})
        label = f"{m.get('library', '?')}/{m.get('backend', '?')} {m.get('host', '?')} p={params.get('p', '?')} ({arg})"
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


def cmd_probe(args: argparse.Namespace, extra: list[str]) -> int:
    from bspkit import probe as pr

    if args.nprocs is not None and args.nprocs < 1:
        raise UsageError("-n must be a positive integer")
    if args.bspcc and args.probe_binary:
        raise UsageError("--bspcc and --probe-binary exclude each other")
    if args.launcher is not None and not args.launcher.strip():
        raise UsageError("--launcher needs a command")
    nprocs = args.nprocs or pr.cores()
    root = pr.repo_root()
    try:
        bsprun: Path | None = None
        if args.bspcc:
            backend = args.library_name or Path(args.bspcc).name
            if root is None:
                raise Failure("cannot find the bspprobe sources: set BSPKIT_SOURCE_DIR")
        else:
            backend = args.backend
        outdir = Path(args.output_dir) if args.output_dir else pr.default_output_dir(root, backend.replace("/", "_"), nprocs)
        outdir.mkdir(parents=True, exist_ok=True)
        if args.bspcc:
            assert root is not None
            binary = pr.build_other(root, args.bspcc, outdir, shlex.split(args.bspcc_flags or ""))
        elif args.probe_binary:
            binary = Path(args.probe_binary)
            if not binary.is_file():
                raise Failure(f"--probe-binary {binary}: no such file")
        else:
            if root is None:
                raise Failure("cannot find the bspkit sources: set BSPKIT_SOURCE_DIR")
            build_dir = Path(args.build_dir) if args.build_dir else pr.default_build_dir(root)
            if pr.needs_build(root, build_dir):
                progress(f"bspprobe in {build_dir} is missing or older than the sources: building")
                pr.build(root, build_dir)
            binary = build_dir / "probe" / "bspprobe"
        if not args.bspcc and args.launcher is None:
            # bspkit's own bspprobe runs through bsprun (it knows the back ends).
            cands = []
            if args.build_dir:
                cands.append(Path(args.build_dir) / "bin" / "bsprun")
            try:
                cands.append(pr.default_build_dir(root) / "bin" / "bsprun")
            except pr.ProbeError:
                pass
            bsprun = next((c for c in cands if c.is_file()), None)
            if bsprun is None:
                found = shutil.which("bsprun")
                if found is None:
                    raise Failure("cannot find bsprun (build bspkit, or give --build-dir or --launcher)")
                bsprun = Path(found)
        raw = outdir / "raw.jsonl"
        run = pr.probe_command(binary, raw, nprocs, backend, bsprun, args.launcher, args.quick, args.library_name, extra)
        run.run()
    except pr.ProbeError as e:
        raise Failure(str(e)) from None
    if not raw.is_file():
        raise Failure(f"bspprobe finished but wrote no {raw}")
    run_, params = load_fit(raw)
    write_text(outdir / "params.json", params_json(params))
    progress("writing the report")
    write_report([(run_, params)], outdir / "report.html")
    print("\n".join(summary_lines(params)))
    print(f"raw samples: {raw}\nparameters:  {outdir / 'params.json'}\nreport:      {outdir / 'report.html'}")
    return 0


# ------------------------------------------------------------------- run / validate

# Default sweeps of `bspkit validate` (sizes n, and the second parameter where there is one);
# --quick takes the first entries only. Runs under 0.1 s are measured but not scored.
VALIDATE_DEFAULTS: dict[str, tuple[list[int], list[str]]] = {
    "inprod": ([64 * 10**6, 160 * 10**6, 320 * 10**6], []),  # 320e6: 5 GiB of vectors, 0.14 s at p = 2
    "matmul-blockcyclic": ([1000, 1500, 2000, 3000], ["1", "8", "27", "64"]),
    "matmul-static2d": ([1000, 1500, 2000, 3000], ["1", "8", "27", "64"]),
    "cannon-put": ([1000, 1500, 2000, 3000, 4000], []),
    "cannon-get": ([1000, 1500, 2000, 3000, 4000], []),
    "llcs-dp": ([20000, 40000, 80000], ["1", "4", "16"]),
    "llcs-bitpar": ([100000, 200000, 400000], ["1", "4", "16"]),
}


def _tools(args: argparse.Namespace, driver: str) -> tuple[Path, Path]:
    """(bsprun, bindir) of the build, building it first when the driver is missing or older
    than the sources."""
    from bspkit import probe as pr

    root = pr.repo_root()
    try:
        build_dir = Path(args.build_dir) if args.build_dir else pr.default_build_dir(root)
    except pr.ProbeError as e:
        raise Failure(str(e)) from None
    bsprun = build_dir / "bin" / "bsprun"
    exe = build_dir / "bin" / driver
    if root is not None and (not exe.is_file() or exe.stat().st_mtime < pr.newest_source(root)):
        progress(f"bspkit in {build_dir} is missing or older than the sources: building")
        try:
            pr.build(root, build_dir)
        except pr.ProbeError as e:
            raise Failure(str(e)) from None
    if not bsprun.is_file():
        raise Failure(f"{bsprun} does not exist: build bspkit or give --build-dir")
    return bsprun, build_dir / "bin"


def _newest_params(backend: str, nprocs: int) -> Path | None:
    from bspkit import probe as pr

    root = pr.repo_root()
    base = (root if root is not None else Path.cwd()) / "results" / "probe"
    cands = sorted(base.glob(f"*-{backend}-p{nprocs}-*/params.json"), key=lambda q: q.stat().st_mtime)
    return cands[-1] if cands else None


def _params_for(args: argparse.Namespace, nprocs: int, required: bool) -> tuple[Path | None, dict[str, Any] | None]:
    if args.params:
        path = Path(args.params)
        return path, load_params(path)
    found = _newest_params(args.backend, nprocs)
    if found is None:
        if required:
            raise Failure(
                f"no parameter file: give --params FILE, or run `bspkit probe -b {args.backend} -n {nprocs}` first "
                "(its params.json under results/probe/ is found by itself)"
            )
        return None, None
    progress(f"parameters: {found} (the newest probe for {args.backend}, p = {nprocs})")
    return found, load_params(found)


def cmd_run(args: argparse.Namespace, extra: list[str]) -> int:
    from bspkit import algorithms as al
    from bspkit import probe as pr

    try:
        alg = al.find_algorithm(args.algorithm)
    except al.AlgorithmError as e:
        raise UsageError(str(e)) from None
    nprocs = args.nprocs or pr.cores()
    bsprun, bindir = _tools(args, alg.driver)
    params_path, params = _params_for(args, nprocs, required=False) if args.predict or args.params else (None, None)
    dargs = list(extra)
    if args.size is not None:
        dargs += ["--size", str(args.size)]
    if params is not None and "--measure-f" not in dargs:
        dargs.append("--measure-f")
    try:
        res = al.run_driver(alg, bsprun, bindir, args.backend, nprocs, dargs)
    except al.AlgorithmError as e:
        raise Failure(str(e)) from None
    sys.stdout.write(res.stdout)
    d = res.data
    f = d.get("f_s_per_unit")
    eff = al.efficiency(alg, d, f)
    if eff is not None:
        print(f"efficiency (one-process kernel time of the whole problem / p T): {eff:.1%}")
    if params is not None:
        try:
            pred = al.predict(params, d)
        except al.AlgorithmError as e:
            raise Failure(str(e)) from None
        print(f"predicted from {params_path} (work {pred['work_s']:.4g} s at f = {pred['f_s_per_unit']:.3g} s/{d.get('work_unit')}):")
        for m in al.MODELS:
            v = pred[m]
            err = al.relative_error(v, d["time_s"])
            print(f"  {m:<8} {v:.4g} s ({err:+.1%})" if v is not None and err is not None else f"  {m:<8} -")
    if args.json:
        write_text(Path(args.json), json.dumps(d) + "\n")
        print(f"run written to {args.json}")
    return 0


def _split_list(text: str | None, what: str) -> list[str]:
    if text is None:
        return []
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{what} needs a comma-separated list")
    return items


def cmd_validate(args: argparse.Namespace, extra: list[str]) -> int:
    import datetime as dt
    import os
    import statistics

    from bspkit import algorithms as al
    from bspkit import probe as pr
    from bspkit import validate_report as vr

    try:
        alg = al.find_algorithm(args.algorithm)
    except al.AlgorithmError as e:
        raise UsageError(str(e)) from None
    nprocs = args.nprocs or pr.cores()
    default_sizes, default_sweep = VALIDATE_DEFAULTS.get(alg.name, ([], []))
    try:
        sizes = [int(v) for v in _split_list(args.sizes, "--sizes")] or default_sizes
    except ValueError:
        raise UsageError(f"--sizes must be integers, not '{args.sizes}'") from None
    sweep_vals = _split_list(args.values, "--values") or default_sweep
    if args.values and not alg.sweep_option:
        raise UsageError(f"{alg.name} has no second parameter to sweep")
    if args.quick:
        sizes, sweep_vals = sizes[:2], sweep_vals[:2]
    params_path, params = _params_for(args, nprocs, required=True)
    assert params is not None and params_path is not None
    if params.get("p") not in (None, nprocs):
        progress(f"warning: the parameters were measured at p = {params.get('p')}, the runs use p = {nprocs}")
    bsprun, bindir = _tools(args, alg.driver)
    outdir = Path(args.output_dir) if args.output_dir else (pr.repo_root() or Path.cwd()) / "results" / "validate" / (
        f"{alg.name}-{args.backend}-p{nprocs}-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    configs = [(n, v) for v in (sweep_vals or [None]) for n in sizes]
    rows: list[dict[str, Any]] = []
    load0 = os.getloadavg()
    for i, (n, v) in enumerate(configs):
        dargs = ["--size", str(n), "--reps", str(args.reps), "--measure-f", "--no-check", *extra]
        if v is not None and alg.sweep_option:
            dargs += [alg.sweep_option, v]
        progress(f"[{i + 1}/{len(configs)}] {alg.name} n = {n}" + (f", {alg.sweep_option} {v}" if v is not None else ""))
        try:
            res = al.run_driver(alg, bsprun, bindir, args.backend, nprocs, dargs, timeout_s=args.timeout)
        except al.AlgorithmError as e:
            if args.keep_going:
                progress(f"skipped: {e}")
                continue
            raise Failure(str(e)) from None
        d = res.data
        try:
            pred = al.predict(params, d)
            pred_alone = al.predict(params, d, d.get("f_s_per_unit"))
        except al.AlgorithmError as e:
            raise Failure(str(e)) from None
        row = {
            "params": d.get("params", {}),
            "sweep_value": v,
            "measured_s": d["time_s"],
            "times_s": d.get("times_s"),
            "W": d.get("W"),
            "H": d.get("H"),
            "S": d.get("S"),
            "f_s_per_unit": d.get("f_s_per_unit"),
            "efficiency": al.efficiency(alg, d, d.get("f_s_per_unit")),
            "predicted_s": {m: pred[m] for m in al.MODELS},
            "work_s": pred["work_s"],
            "f_used_s_per_unit": pred["f_s_per_unit"],
            "f_all_s_per_unit": d.get("f_all_s_per_unit"),
            "rel_error": {m: al.relative_error(pred[m], d["time_s"]) for m in al.MODELS},
            # the thesis' f (the kernel on one process alone), for comparison
            "rel_error_f_alone": {m: al.relative_error(pred_alone[m], d["time_s"]) for m in al.MODELS},
            "command": res.command,
        }
        rows.append(row)
        errs = ", ".join(f"{m} {row['rel_error'][m]:+.1%}" for m in al.MODELS if row["rel_error"][m] is not None)
        eff = f", efficiency {row['efficiency']:.1%}" if row["efficiency"] is not None else ""
        progress(f"    measured {d['time_s']:.4g} s{eff}; predicted: {errs}")
    if not rows:
        raise Failure("no run finished")

    def group_summary(rs: list[dict[str, Any]]) -> dict[str, Any]:
        out = al.summarize(rs)
        alone = al.summarize([{**r, "rel_error": r["rel_error_f_alone"]} for r in rs])
        out["f_alone"] = {m: alone[m] for m in al.MODELS}
        effs = [r["efficiency"] for r in rs if r["efficiency"] is not None and r["measured_s"] >= al.MIN_VALIDATED_TIME_S]
        out["efficiency"] = statistics.fmean(effs) if effs else None
        return out

    overall = group_summary(rows)
    for r in rows:
        r["best_model"] = overall.get("best_model")
    by_sweep = []
    for v in sweep_vals or [None]:
        rs = [r for r in rows if r["sweep_value"] == v]
        if rs:
            by_sweep.append((v if v is not None else "all sizes", group_summary(rs)))
    sweep_key = alg.sweep_option.lstrip("-") if alg.sweep_option else None
    result = {
        "format": 1,
        "algorithm": alg.name,
        "description": alg.description,
        "backend": args.backend,
        "p": nprocs,
        "sweep": sweep_key,
        "params_file": str(params_path),
        "params_p": params.get("p"),
        "machine": params.get("machine", {}),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "loadavg_start": [round(x, 2) for x in load0],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "command": "bspkit " + " ".join(sys.argv[1:]),
        "rows": rows,
        "summary": {"all": overall, "by_sweep": by_sweep},
    }
    js, page_path, nimg = vr.write(result, outdir)
    print(f"{alg.name} on {args.backend}, p = {nprocs}: {overall['runs']} runs, {overall['runs_used']} of >= {al.MIN_VALIDATED_TIME_S} s")
    print(f"  {'':<14} {'efficiency':>10} " + " ".join(f"{m:>9}" for m in al.MODELS) + "   (mean |relative error|)")
    for v, sm in by_sweep + [("all", overall)]:
        cells = " ".join(f"{sm[m]:>9.1%}" if sm.get(m) is not None else f"{'-':>9}" for m in al.MODELS)
        eff = f"{sm['efficiency']:>10.1%}" if sm.get("efficiency") is not None else f"{'-':>10}"
        print(f"  {(sweep_key + ' ' + str(v)) if sweep_key and v != 'all' else str(v):<14} {eff} {cells}")
    if overall.get("best_model"):
        print(f"  best model: {overall['best_model']} ({overall['best_error']:.1%})")
    print(f"results: {js}\nreport:  {page_path} ({nimg} plots)")
    return 0


class UsageError(Exception):
    pass


# -------------------------------------------------------------------------- parser

PROBE_EPILOG = """\
Everything after `--` is passed to bspprobe unchanged (see `bspprobe --help`), e.g.
  bspkit probe --quick -n 2 -- --only g,l --max-words 4096

Building: unless --probe-binary or --bspcc is given, bspkit builds bspkit (cmake -S <repo>
-B <build-dir> -G Ninja -DCMAKE_BUILD_TYPE=Release; cmake --build <build-dir>) when
<build-dir>/probe/bspprobe is missing or older than the sources, and runs
  <build-dir>/bin/bsprun -n P -b BACKEND <build-dir>/probe/bspprobe --output RAW [--quick] ...
The repository is the one this package was installed from, or $BSPKIT_SOURCE_DIR; the build
directory defaults to $BSPKIT_BUILD_DIR, else <repo>/build.

Another BSPlib: --bspcc PATH compiles <repo>/probe/*.c with that library's compiler wrapper
  PATH -O2 -DBSPPROBE_NO_EXTENSIONS [-DBSPPROBE_HAVE_CBLAS] [--bspcc-flags] probe/*.c
       -o OUTDIR/bspprobe-other [-lopenblas] -lm
(CBLAS when cblas.h is installed) and runs the binary directly with BSPKIT_NPROCS=P and
BSP_NPROCS=P in the environment, or through --launcher CMD, a command line in which {p} is
replaced by P, e.g. --launcher 'mpirun -n {p}' (BSPonMPI) or --launcher 'bsprun -npes {p}'
(Oxford toolset). The library's name goes to the header with --library-name (default: the
wrapper's file name). --launcher also works for bspkit's own binary instead of bsprun.

Output: OUTDIR/raw.jsonl (bspprobe's samples), params.json (bspkit fit), report.html
(bspkit report). OUTDIR defaults to <repo>/results/probe/<host>-<backend>-p<P>-<time>/.
"""


def add_launch_args(p: argparse.ArgumentParser) -> None:
    """-n, -b and --build-dir: how probe, run and validate start BSP programs."""
    p.add_argument("-n", "--nprocs", type=int, metavar="P", help="number of BSP processes (default: the cores available)")
    p.add_argument("-b", "--backend", default="threads", metavar="BACKEND", help="bspkit back end for bsprun: threads (default), mpi, mpi-rma")
    p.add_argument("--build-dir", metavar="DIR", help="bspkit build directory (default: $BSPKIT_BUILD_DIR, else <repo>/build)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bspkit",
        description="Measure, fit and compare the BSP parameters (f, g, l, h_half, o) of a machine and BSPlib library; run BSP algorithms and check their predicted running times.",
        epilog="Run `bspkit COMMAND --help` for the options of each command. Exit status: 0 ok, 1 failure, 2 usage error.",
    )
    ap.add_argument("-V", "--version", action="version", version=f"bspkit {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "probe",
        help="build and run bspprobe, fit the parameters and write the report",
        description="Runs bspprobe on P processes, then fits the parameters (params.json) and writes the report (report.html).",
        epilog=PROBE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="bspprobe's quick mode: a smaller grid and fewer repetitions")
    add_launch_args(p)
    p.add_argument("--bspcc", metavar="PATH", help="build bspprobe against another BSPlib with this compiler wrapper")
    p.add_argument("--bspcc-flags", metavar="FLAGS", help="extra compiler flags for --bspcc, e.g. '-DBSPPROBE_INT_API'")
    p.add_argument("--launcher", metavar="CMD", help="run bspprobe through this command ({p} is replaced by P)")
    p.add_argument("--probe-binary", metavar="PATH", help="run this bspprobe binary instead of building one")
    p.add_argument("--output-dir", metavar="DIR", help="where raw.jsonl, params.json and report.html go")
    p.add_argument("--library-name", metavar="NAME", help="the BSPlib library's name for the header (bspprobe --library-name)")

    f = sub.add_parser(
        "fit",
        help="fit the parameters of a raw-sample file (params.json)",
        description="Fits f, l, memcpy, the g surfaces (thesis eq. 3.1-3.6, least squares of eq. 2.5/2.6 with confidence "
        "intervals, Bisseling's regression), As-suite summaries and the validation, and writes the parameter file "
        "(docs/probe-format.md).",
    )
    f.add_argument("raw", metavar="RAW", help="raw samples from bspprobe (.jsonl), or a run directory holding raw.jsonl")
    f.add_argument("-o", "--output", metavar="FILE", help="parameter file to write; '-' for stdout (default: params.json beside RAW for raw.jsonl, else RAW's name with .params.json)")

    r = sub.add_parser(
        "report",
        help="rebuild the HTML report of saved runs (refits, measures nothing)",
        description="Refits the raw samples of each run and writes its self-contained HTML report. With -o, all runs go "
        "into one file; without, each run's report goes beside its raw file (RUN/report.html).",
    )
    r.add_argument("inputs", nargs="+", metavar="RUN_DIR_OR_RAW", help="run directories (with raw.jsonl) or raw .jsonl files")
    r.add_argument("-o", "--output", metavar="FILE", help="write one report with every run here")
    r.add_argument("--write-params", action="store_true", help="also write the refitted params.json beside each raw file")

    c = sub.add_parser(
        "compare",
        help="compare several runs (back ends, libraries, machines) side by side",
        description="Writes one HTML page with the runs side by side: a table per parameter and a ranking in the spirit "
        "of thesis Table 6.1; prints the ranking.",
    )
    c.add_argument("runs", nargs="+", metavar="RUN", help="run directories, raw .jsonl files or params .json files (two or more)")
    c.add_argument("-o", "--output", default="compare.html", metavar="FILE", help="the page to write (default: compare.html)")

    algs = "inprod, matmul-blockcyclic, matmul-static2d, cannon-put, cannon-get, llcs-dp, llcs-bitpar"
    ru = sub.add_parser(
        "run",
        help="run one BSP algorithm (its driver) on a back end and p, optionally with predictions",
        description=f"Runs the driver of ALG ({algs}) through bsprun, prints its time, W, H, S and check; with "
        "--params (or --predict) also the predicted time under each g model. Options after `--` go to the driver "
        "(see `<build>/bin/bspalg-NAME --help`), e.g. bspkit run matmul-blockcyclic -n 2 --size 2000 -- --q 8",
    )
    ru.add_argument("algorithm", metavar="ALG", help=algs)
    add_launch_args(ru)
    ru.add_argument("--size", type=int, metavar="N", help="problem size (the driver's --size)")
    ru.add_argument("--params", metavar="FILE", help="a probe's params.json: predict the run from it")
    ru.add_argument("--predict", action="store_true", help="predict from the newest probe of this back end and p under results/probe/")
    ru.add_argument("--json", metavar="FILE", help="also write the driver's JSON object here")

    va = sub.add_parser(
        "validate",
        help="sweep an algorithm's sizes and parameters, predict every run, write the table and plots",
        description="Runs ALG for every problem size in --sizes and (matmul: q, llcs: alpha) every value in --values, "
        "each with the driver's --measure-f (its kernel timed on one process), predicts each run from a probe's "
        "parameter file under three models (g const, g(h), g(h,h*)), and writes validate.json and validate.html "
        "(efficiency and mean relative error per model, the layout of thesis Tables D-G; prediction-versus-"
        "measurement plots). Options after `--` go to every driver run.",
        epilog="Default sweeps (sizes; values): "
        + "; ".join(f"{k}: {','.join(map(str, v[0]))}" + (f" x {','.join(v[1])}" if v[1] else "") for k, v in VALIDATE_DEFAULTS.items()),
    )
    va.add_argument("algorithm", metavar="ALG", help=algs)
    add_launch_args(va)
    va.add_argument("--params", metavar="FILE", help="a probe's params.json (default: the newest probe of this back end and p under results/probe/)")
    va.add_argument("--sizes", metavar="N,N,...", help="problem sizes (default: per algorithm, listed below)")
    va.add_argument("--values", metavar="V,V,...", help="values of the second parameter: q for matmul, alpha for llcs")
    va.add_argument("-r", "--reps", type=int, default=3, metavar="R", help="repetitions per run; the median is used (default 3)")
    va.add_argument("--quick", action="store_true", help="the first two sizes and values only")
    va.add_argument("--timeout", type=float, default=600.0, metavar="S", help="give up a run after S seconds (default 600)")
    va.add_argument("--keep-going", action="store_true", help="skip a run that fails instead of stopping")
    va.add_argument("--output-dir", metavar="DIR", help="where validate.json and validate.html go (default: results/validate/ALG-...)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if argv and argv[0] in ("probe", "run", "validate") and "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_usage(sys.stderr)
        _err("a command is needed: probe, fit, report, compare, run or validate (bspkit --help)")
        return EXIT_USAGE
    try:
        if args.command == "probe":
            return cmd_probe(args, extra)
        if args.command == "fit":
            return cmd_fit(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "run":
            return cmd_run(args, extra)
        if args.command == "validate":
            if args.reps < 1:
                raise UsageError("--reps must be at least 1")
            return cmd_validate(args, extra)
        if args.command == "compare":
            if len(args.runs) < 2:
                raise UsageError("compare needs at least two runs")
            return cmd_compare(args)
    except UsageError as e:
        print(f"usage: bspkit {args.command} ... (bspkit {args.command} --help)", file=sys.stderr)
        _err(str(e))
        return EXIT_USAGE
    except Failure as e:
        _err(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    return EXIT_FAIL
