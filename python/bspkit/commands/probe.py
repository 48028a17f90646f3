"""`bspkit probe`: builds and runs bspprobe on P processes, fits the parameters (params.json)
and writes the report (report.html) in one run directory."""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bspkit import results
from bspkit.commands._args import LaunchOptions, Subparsers, add_launch_args, hostfile_arg, launch_from
from bspkit.commands._fitted import summary_lines, write_report
from bspkit.console import Failure, UsageError, check_writable_dir, make_dir, progress, write_text
from bspkit.measure import probe as pr
from bspkit.measure import programs

NAME = "probe"
PASS_THROUGH = True  # what follows `--` goes to bspprobe

EPILOG = """\
Suites: bsp (f, memcpy, l, g surfaces, validation, the As suite), and the three data paths
of Kang et al.'s memory hierarchy: mem (processor-memory: strided reads and writes in and
out of cache, a STREAM copy), pp (processor-processor: permutation, ping-pong, scatter,
broadcast), disk (memory-disk: file reads and writes through and around the page cache, in
a temporary directory under --disk-dir, removed afterwards). The default runs all of them;
the report gets a section per data path and the IMH model's parameters, e.g.
  bspkit probe --quick --suites mem,pp,disk --disk-dir /scratch

Everything after `--` is passed to bspprobe unchanged (see `bspprobe --help`), e.g.
  bspkit probe --quick -n 2 -- --only g,l --max-words 4096

Building: unless --probe-binary or --bspcc is given, bspkit builds bspkit (cmake -S <repo>
-B <build-dir> -G Ninja -DCMAKE_BUILD_TYPE=Release; cmake --build <build-dir>) when
<build-dir>/probe/bspprobe is missing or older than the sources, and runs
  <build-dir>/bin/bsprun -n P -b BACKEND <build-dir>/probe/bspprobe --output RAW [--quick] ...
The repository is the one this package was installed from, or $BSPKIT_SOURCE_DIR; the build
directory is --build-dir, else $BSPKIT_BUILD_DIR, else <repo>/build. Without a source tree
(bspkit installed with `cmake --install` and pip), nothing is built: bspprobe is the one next
to the bsprun found on PATH, else bspprobe on PATH. `bspkit run` and `validate` find bsprun
and the drivers (bspalg-*) the same way.

Another BSPlib: --bspcc PATH builds bspprobe with that library's compiler wrapper in the
portable build (cmake -DBSPKIT_PORTABLE=ON -DCMAKE_C_COMPILER=PATH, --bspcc-flags as
BSPKIT_PORTABLE_CFLAGS; CBLAS when found; a bsp.h without bsp_size_t gets the int API), into
the cache of `bspkit run --bspcc` (docs/comparing-libraries.md), and runs the binary directly
with BSPKIT_NPROCS=P and
BSP_NPROCS=P in the environment, or through --launcher CMD, a command line in which {p} is
replaced by P, e.g. --launcher 'mpirun -n {p}' (BSPonMPI) or --launcher 'bsprun -npes {p}'
(Oxford toolset). The library's name goes to the header with --library-name (default: the
wrapper's file name). --launcher also works for bspkit's own binary instead of bsprun.

Output: OUTDIR/raw.jsonl (bspprobe's samples), params.json (bspkit fit), report.html
(bspkit report). OUTDIR defaults to <repo>/results/probe/<host>-<backend>-p<P>-<time>/,
or results/probe/... under the current directory when there is no source tree.
"""

# what makes a directory hold a probe run: writing into it would overwrite these
RUN_FILES = ("raw.jsonl", "params.json", "report.html")


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "probe",
        help="build and run bspprobe, fit the parameters and write the report",
        description="Runs bspprobe on P processes, then fits the parameters (params.json) and writes the report (report.html).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="bspprobe's quick mode: a smaller grid and fewer repetitions")
    add_launch_args(p)
    p.add_argument("--bspcc", metavar="PATH", help="build bspprobe against another BSPlib with this compiler wrapper")
    p.add_argument("--bspcc-flags", metavar="FLAGS", help="extra compiler flags for --bspcc, e.g. '-DBSPPROBE_INT_API'")
    p.add_argument(
        "--launcher",
        metavar="CMD",
        help="run bspprobe through this command ({p} is replaced by P); '' runs it directly with P in "
        "BSPKIT_NPROCS and BSP_NPROCS (a library whose programs start their own processes)",
    )
    p.add_argument(
        "--peer",
        metavar="PREFIX",
        help="a library built by scripts/build-peer.sh: --bspcc, --bspcc-flags, --launcher and --library-name from "
        "PREFIX/bspkit-peer.json (those given beside override it)",
    )
    p.add_argument("--probe-binary", metavar="PATH", help="run this bspprobe binary instead of building one")
    p.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where raw.jsonl, params.json and report.html go; a directory that holds a run (finished or not) is "
        "refused without --force, with what it holds and how to go on",
    )
    p.add_argument(
        "--force", action="store_true", help="replace the run in --output-dir (an unfinished one too: measure it again)"
    )
    p.add_argument(
        "--library-name", metavar="NAME", help="the BSPlib library's name for the header (bspprobe --library-name)"
    )
    p.add_argument(
        "--suites",
        metavar="LIST",
        help="what to measure, comma-separated: bsp (f, memcpy, hw, l, g, validation, the As suite), mem "
        "(processor-memory), pp (processor-processor), disk (memory-disk), or all (default)",
    )
    p.add_argument(
        "--disk-dir",
        metavar="DIR",
        help="where the disk suite makes its temporary directory (bspprobe --disk-dir; default $TMPDIR, else /tmp)",
    )


@dataclass(frozen=True)
class ProbeOptions:
    launch: LaunchOptions
    quick: bool
    bspcc: str | None  # another BSPlib's compiler wrapper
    bspcc_flags: str | None
    launcher: str | None  # a command line with {p}
    probe_binary: str | None
    output_dir: str | None
    force: bool
    library_name: str | None
    suites: str | None  # comma-separated
    disk_dir: str | None


def options_from(args: argparse.Namespace) -> ProbeOptions:
    if args.peer:  # the peer's description, under the options given beside it
        from bspkit.measure.libraries import LibraryError, library_from

        try:
            lib = library_from(peer=args.peer, launcher=args.launcher, name=args.library_name)
        except LibraryError as e:
            raise UsageError(str(e)) from None
        assert lib is not None
        args.bspcc = args.bspcc or lib.compiler
        args.bspcc_flags = args.bspcc_flags or (" ".join(f for f in (lib.cflags, lib.libs) if f) or None)
        args.launcher, args.library_name = lib.launcher, lib.name
    return ProbeOptions(
        launch=launch_from(args),
        quick=args.quick,
        bspcc=args.bspcc,
        bspcc_flags=args.bspcc_flags,
        launcher=args.launcher,
        probe_binary=args.probe_binary,
        output_dir=args.output_dir,
        force=args.force,
        library_name=args.library_name,
        suites=args.suites,
        disk_dir=args.disk_dir,
    )


def suite_sections(suites: str) -> list[str]:
    """bspprobe's sections for a --suites list ("all": every suite); ValueError naming an
    unknown suite."""
    names = [s.strip() for s in suites.split(",")]
    if any(not n for n in names):
        raise ValueError(f"--suites {suites!r}: an empty name in the list")
    sections: list[str] = []
    for name in names:
        if name == "all":
            chosen = [sec for secs in pr.SUITES.values() for sec in secs]
        elif name in pr.SUITES:
            chosen = list(pr.SUITES[name])
        else:
            raise ValueError(f"--suites: unknown suite {name!r}; choose from {', '.join([*pr.SUITES, 'all'])}")
        sections += [sec for sec in chosen if sec not in sections]
    return sections


def bspprobe_args(options: ProbeOptions, extra: Sequence[str]) -> list[str]:
    """bspprobe's arguments: --suites and --disk-dir as bspprobe takes them, then those after
    `--`; the options that exclude each other are usage errors."""
    args = list(extra)
    if options.bspcc and options.probe_binary:
        raise UsageError("--bspcc and --probe-binary exclude each other")
    if options.suites is not None:
        if any(a == "--only" or a.startswith("--only=") for a in args):
            raise UsageError("--suites and bspprobe's --only (after --) exclude each other")
        try:
            args = ["--only", ",".join(suite_sections(options.suites)), *args]
        except ValueError as e:
            raise UsageError(str(e)) from None
    if options.disk_dir is not None:
        if not Path(options.disk_dir).is_dir():
            raise UsageError(f"--disk-dir {options.disk_dir}: no such directory")
        args = ["--disk-dir", options.disk_dir, *args]
    if options.launch.hostfile and (options.bspcc or options.launcher is not None):
        raise UsageError("--hostfile is bsprun's: with --bspcc or --launcher, give the hosts in the launcher's command")
    return args


def held_run(outdir: Path) -> str | None:
    """What stops a probe from writing into outdir, with the way on: a run that finished, one
    whose bspprobe was stopped (raw.jsonl without its footer), or one whose samples are whole
    but whose fit or report was not written; None when it holds none of RUN_FILES."""
    held = [name for name in RUN_FILES if (outdir / name).exists()]
    if not held:
        return None
    raw = outdir / "raw.jsonl"
    if raw.is_file():
        try:
            cut = pr.unfinished(raw)
        except OSError:
            cut = None
        if cut:
            return (
                f"--output-dir {outdir} holds an unfinished run: {raw}: {cut}. bspprobe cannot continue it: "
                f"measure it again with --force (replaces it), or give another directory (`bspkit fit --partial {raw}` "
                "fits what it measured)"
            )
        missing = [name for name in RUN_FILES if not (outdir / name).exists()]
        if missing:
            return (
                f"--output-dir {outdir} holds a run whose samples are whole but has no {' and no '.join(missing)}: "
                f"finish it with `bspkit report {outdir} --write-params`, measure it again with --force, or give "
                "another directory"
            )
    return f"--output-dir {outdir} holds a run ({', '.join(held)}): give another directory, or --force to overwrite it"


def output_dir(options: ProbeOptions, root: Path | None, label: str, nprocs: int) -> Path:
    """--output-dir, refused when it holds a run (held_run) and --force is not given; else a
    new timestamped directory. Nothing is created here."""
    if not options.output_dir:
        return results.new_probe_run(label, nprocs, root)
    outdir = Path(options.output_dir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"--output-dir {outdir} is a file, not a directory")
    refusal = held_run(outdir)
    if refusal and not options.force:
        raise UsageError(refusal)
    return outdir


def find_programs(
    options: ProbeOptions, root: Path | None, nprocs: int, hostfile: Path | None
) -> tuple[Path | None, Path | None]:
    """(bsprun or None with --bspcc/--launcher, bspprobe or None with --bspcc: built later),
    bspkit's own bspprobe built where it is missing or stale, bsprun asked whether it can launch."""
    # the domain modules load numpy: imported when the command runs, so --help stays light
    from bspkit.commands._inputs import check_launch

    bsprun: Path | None = None
    binary: Path | None = None
    if options.bspcc:
        if root is None:
            raise Failure("cannot find the bspprobe sources: set BSPKIT_SOURCE_DIR")
        if shutil.which(options.bspcc) is None:
            raise Failure(f"--bspcc {options.bspcc}: no such compiler wrapper")
    elif options.probe_binary:
        binary = Path(options.probe_binary)
        if not binary.is_file():
            raise Failure(f"--probe-binary {binary}: no such file")
    else:
        binary = programs.find("bspprobe", options.launch.build_dir)
    if not options.bspcc and options.launcher is None:
        bsprun = programs.find("bsprun", options.launch.build_dir)
        check_launch(bsprun, options.launch.backend, nprocs, hostfile)
    return bsprun, binary


def build_other(root: Path, options: ProbeOptions) -> Path:
    """bspprobe built against another BSPlib: the portable build (the drivers' too, in the
    same cache directory; bspkit.measure.libraries), with --bspcc as the compiler and --bspcc-flags as
    its extra flags."""
    from bspkit.measure import libraries

    assert options.bspcc is not None
    compiler = os.path.abspath(options.bspcc) if "/" in options.bspcc else options.bspcc
    name = options.library_name or libraries.default_name(compiler)
    lib = libraries.Library(
        name, libraries.UNKNOWN_VERSION, compiler, options.bspcc_flags or "", "", options.launcher or "", True
    )
    try:
        return libraries.build(lib, root, ["bspprobe"]) / "probe" / "bspprobe"
    except libraries.LibraryError as e:
        raise pr.ProbeError(str(e)) from None


def run(options: ProbeOptions, extra: Sequence[str]) -> int:
    from bspkit.commands._inputs import load_fit, run_label

    args = bspprobe_args(options, extra)
    launch = options.launch
    hostfile = hostfile_arg(launch.backend, launch.hostfile)
    nprocs = launch.nprocs or pr.cores()
    root = results.source_tree()
    backend = (options.library_name or Path(options.bspcc).name) if options.bspcc else launch.backend
    outdir = output_dir(options, root, run_label(backend, hostfile), nprocs)
    check_writable_dir(outdir, "the run in")
    # Every option is checked, and bspkit's own bspprobe built, before the run directory is
    # made: a mistake must not leave an empty run behind.
    raw = outdir / "raw.jsonl"
    try:
        bsprun, binary = find_programs(options, root, nprocs, hostfile)
        made = not outdir.exists()
        make_dir(outdir, "the run directory")
        if options.force:  # what the run replaced fitted and reported would sit beside the new samples
            for name in RUN_FILES:
                (outdir / name).unlink(missing_ok=True)
        try:
            if options.bspcc:
                assert root is not None
                binary = build_other(root, options)
            assert binary is not None
            probe_run = pr.probe_command(
                binary,
                raw,
                nprocs,
                backend,
                bsprun,
                options.launcher,
                options.quick,
                options.library_name,
                args,
                hostfile,
            )
            probe_run.run()
        except BaseException as e:
            if made and not raw.exists():  # nothing measured: leave no empty run behind
                shutil.rmtree(outdir, ignore_errors=True)
            elif isinstance(e, (KeyboardInterrupt, pr.ProbeError)) and raw.is_file():
                progress(
                    f"the samples measured before bspprobe stopped are in {raw} (bspprobe cannot continue them): "
                    f"measure again with `bspkit probe --output-dir {outdir} --force`, or fit them with "
                    f"`bspkit fit --partial {raw}`"
                )
            raise
    except pr.ProbeError as e:
        raise Failure(str(e)) from None
    if not raw.is_file():
        raise Failure(f"bspprobe finished but wrote no {raw}")
    try:
        run_data, params = load_fit(raw)
        write_text(outdir / "params.json", params.dumps())
        progress("writing the report")
        write_report([(run_data, params)], outdir / "report.html")
    except KeyboardInterrupt:
        progress(f"the samples in {raw} are whole: finish the run with `bspkit report {outdir} --write-params`")
        raise
    print("\n".join(summary_lines(params)))
    print(f"raw samples: {raw}\nparameters:  {outdir / 'params.json'}\nreport:      {outdir / 'report.html'}")
    return 0
