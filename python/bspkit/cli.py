"""The `bspkit` command: probe, fit, report, compare.

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
        out.append(
            f"  validation: mean |error| {val['mean_abs_rel_error']:.1%}, max {val['max_abs_rel_error']:.1%} "
            f"over {val['used']} points: {'PASS' if val.get('pass') else 'FAIL'}"
        )
    for chk in params.get("checks", {}).get("memcpy", []):
        if chk.get("ratio") is not None:
            out.append(f"  {chk['key']} g_inf / memcpy per word = {chk['ratio']:.2f} ({'within' if chk['pass'] else 'NOT within'} 1.5x)")
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


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bspkit",
        description="Measure, fit and compare the BSP parameters (f, g, l, h_half, o) of a machine and BSPlib library.",
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
    p.add_argument("-n", "--nprocs", type=int, metavar="P", help="number of BSP processes (default: the cores available)")
    p.add_argument("-b", "--backend", default="threads", metavar="BACKEND", help="bspkit back end for bsprun: threads (default), mpi, mpi-rma")
    p.add_argument("--build-dir", metavar="DIR", help="bspkit build directory (default: $BSPKIT_BUILD_DIR, else <repo>/build)")
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
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if argv and argv[0] == "probe" and "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_usage(sys.stderr)
        _err("a command is needed: probe, fit, report or compare (bspkit --help)")
        return EXIT_USAGE
    try:
        if args.command == "probe":
            return cmd_probe(args, extra)
        if args.command == "fit":
            return cmd_fit(args)
        if args.command == "report":
            return cmd_report(args)
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
