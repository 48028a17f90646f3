"""The `bspkit` command: parses the arguments and dispatches to the command modules
(bspkit.commands: probe, fit, report, compare, run; bspkit.validate: validate; bspkit.imh_predict:
imh; bspkit.profile_report: profile; bspkit.cluster: cluster).

Exit status: 0 on success, 1 when something fails (a raw file that cannot be read, a build or
a bspprobe run that fails), 2 for a usage error (argparse's convention).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bspkit import __version__
from bspkit.algorithms import ALGORITHMS, REGISTRY
from bspkit.console import Failure, UsageError, print_error

EXIT_FAIL = 1
EXIT_USAGE = 2

# the commands that pass what follows `--` on to the program they run
PASS_THROUGH = ("probe", "run", "validate", "imh")


# -------------------------------------------------------------------------- parser


def positive_int(text: str) -> int:
    """One rule for -n, --reps, ...: a positive integer; 0, negatives and words are usage errors."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer (at least 1)")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number")
    return value


PROBE_EPILOG = """\
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

Another BSPlib: --bspcc PATH compiles <repo>/probe/*.c with that library's compiler wrapper
  PATH -O2 -DBSPPROBE_NO_EXTENSIONS [-DBSPPROBE_HAVE_CBLAS] [--bspcc-flags] probe/*.c
       -o OUTDIR/bspprobe-other [-lopenblas] -lm
(CBLAS when cblas.h is installed) and runs the binary directly with BSPKIT_NPROCS=P and
BSP_NPROCS=P in the environment, or through --launcher CMD, a command line in which {p} is
replaced by P, e.g. --launcher 'mpirun -n {p}' (BSPonMPI) or --launcher 'bsprun -npes {p}'
(Oxford toolset). The library's name goes to the header with --library-name (default: the
wrapper's file name). --launcher also works for bspkit's own binary instead of bsprun.

Output: OUTDIR/raw.jsonl (bspprobe's samples), params.json (bspkit fit), report.html
(bspkit report). OUTDIR defaults to <repo>/results/probe/<host>-<backend>-p<P>-<time>/,
or results/probe/... under the current directory when there is no source tree.
"""


def add_launch_args(p: argparse.ArgumentParser) -> None:
    """-n, -b, --build-dir and --hostfile: how probe, run, validate and imh start BSP programs."""
    p.add_argument(
        "-n", "--nprocs", type=positive_int, metavar="P", help="number of BSP processes (default: the cores available)"
    )
    p.add_argument(
        "-b",
        "--backend",
        default="threads",
        metavar="BACKEND",
        help="bspkit back end for bsprun: threads (default), mpi, mpi-rma",
    )
    p.add_argument(
        "--build-dir",
        metavar="DIR",
        help="bspkit build directory (default: $BSPKIT_BUILD_DIR, else <repo>/build; without a source tree, "
        "the programs next to bsprun on PATH)",
    )
    p.add_argument(
        "--hostfile",
        metavar="FILE",
        help="the hosts to run on, for the mpi back ends (bsprun --hostfile FILE): an Open MPI hostfile, or an "
        "emulated cluster's (bspkit cluster up)",
    )


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
    p.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where raw.jsonl, params.json and report.html go; a directory that holds a run is refused without --force",
    )
    p.add_argument("--force", action="store_true", help="overwrite the run in --output-dir")
    p.add_argument(
        "--library-name", metavar="NAME", help="the BSPlib library's name for the header (bspprobe --library-name)"
    )
    p.add_argument(
        "--suites",
        metavar="LIST",
        help="what to measure, comma-separated: bsp (f, memcpy, l, g, validation, the As suite), mem "
        "(processor-memory), pp (processor-processor), disk (memory-disk), or all (default)",
    )
    p.add_argument(
        "--disk-dir",
        metavar="DIR",
        help="where the disk suite makes its temporary directory (bspprobe --disk-dir; default $TMPDIR, else /tmp)",
    )

    f = sub.add_parser(
        "fit",
        help="fit the parameters of a raw-sample file (params.json)",
        description="Fits f, l, memcpy, the g surfaces (thesis eq. 3.1-3.6, least squares of eq. 2.5/2.6 with confidence "
        "intervals, Bisseling's regression), As-suite summaries and the validation, and writes the parameter file "
        "(docs/probe-format.md).",
    )
    f.add_argument(
        "raw", metavar="RAW", help="raw samples from bspprobe (.jsonl), or a run directory holding raw.jsonl"
    )
    f.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="parameter file to write; '-' for stdout (default: params.json beside RAW for raw.jsonl, else RAW's name with .params.json)",
    )

    r = sub.add_parser(
        "report",
        help="rebuild the HTML report of saved runs (refits, measures nothing)",
        description="Refits the raw samples of each run and writes its self-contained HTML report. With -o, all runs go "
        "into one file; without, each run's report goes beside its raw file (RUN/report.html).",
    )
    r.add_argument(
        "inputs", nargs="+", metavar="RUN_DIR_OR_RAW", help="run directories (with raw.jsonl) or raw .jsonl files"
    )
    r.add_argument("-o", "--output", metavar="FILE", help="write one report with every run here")
    r.add_argument(
        "--write-params", action="store_true", help="also write the refitted params.json beside each raw file"
    )

    c = sub.add_parser(
        "compare",
        help="compare several runs (back ends, libraries, machines) side by side",
        description="Writes one HTML page with the runs side by side: a table per parameter and a ranking in the spirit "
        "of thesis Table 6.1; prints the ranking.",
    )
    c.add_argument(
        "runs", nargs="+", metavar="RUN", help="run directories, raw .jsonl files or params .json files (two or more)"
    )
    c.add_argument(
        "-o", "--output", default="compare.html", metavar="FILE", help="the page to write (default: compare.html)"
    )

    algs = ", ".join(ALGORITHMS)
    ru = sub.add_parser(
        "run",
        help="run one BSP algorithm (its driver) on a back end and p, optionally with predictions",
        description=f"Runs the driver of ALG ({algs}) through bsprun, prints its time, W, H, S and check; with "
        "--params (or --predict) also the predicted time under each g model. Options after `--` go to the driver "
        "(see `<build>/bin/bspalg-NAME --help`), e.g. bspkit run matmul-blockcyclic -n 2 --size 2000 -- --q 8",
    )
    ru.add_argument("algorithm", metavar="ALG", help=algs)
    add_launch_args(ru)
    ru.add_argument("--size", type=positive_int, metavar="N", help="problem size (the driver's --size)")
    predict_from = ru.add_mutually_exclusive_group()
    predict_from.add_argument("--params", metavar="FILE", help="a probe's params.json: predict the run from it")
    predict_from.add_argument(
        "--predict",
        action="store_true",
        help="predict from the newest probe of this back end and p under results/probe/ (an error if there is none)",
    )
    ru.add_argument(
        "--calibrate",
        action="store_true",
        help="with --params/--predict: the driver runs the short calibration (bspkit calibrate) before its "
        "repetitions and after them; also predict with the parameters scaled by the machine's drift since the probe",
    )
    ru.add_argument(
        "--json",
        metavar="FILE",
        help="also write the driver's JSON object here; '-': to stdout, the summary then goes to stderr",
    )

    # each driver's second parameter, from the records: "matmul: q, llcs: alpha, ..."
    second = ", ".join(
        dict.fromkeys(f"{a.driver.removeprefix('bspalg-')}: {a.sweep_param}" for a in REGISTRY if a.sweep_param)
    )
    va = sub.add_parser(
        "validate",
        help="sweep an algorithm's sizes and parameters, predict every run, write the table and plots",
        description=f"Runs ALG for every problem size in --sizes and ({second}) every value in --values, "
        "each with the driver's --measure-f (its kernel timed on one process), predicts each run from a probe's "
        "parameter file under three models (g const, g(h), g(h,h*)), and writes validate.json and validate.html "
        "(efficiency and mean relative error per model, the layout of thesis Tables D-G; prediction-versus-"
        "measurement plots). Options after `--` go to every driver run, e.g. "
        "bspkit validate rdxsort -n 2 -- --dist zipf (validate.json keeps the command and each run's).",
        epilog="Default sweeps (sizes; values): "
        + "; ".join(
            f"{a.name}: {','.join(map(str, a.sizes))}" + (f" x {','.join(a.sweep_values)}" if a.sweep_values else "")
            for a in ALGORITHMS.values()
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
        "--no-calibrate",
        action="store_true",
        help="leave out the short calibration each run makes before its repetitions and after them (by default "
        "each run is predicted twice: with the parameters as probed and scaled by the machine's drift since the "
        "probe)",
    )
    add_calibrate_parser(sub)
    im = sub.add_parser(
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
    pf = sub.add_parser(
        "profile",
        help="the BSP cost of a profiled run (BSPKIT_PROFILE=FILE), and its predicted time on a measured machine",
        description="Reads the superstep profile that any BSPlib program linked with bspkit writes when BSPKIT_PROFILE "
        "names a file (bsprun --profile FILE; docs/profile-format.md) and prints the run's BSP cost: S, W (sum of "
        "the max compute time per superstep), H (sum of the h-relations, thesis eq. 2.1), the measured time and the "
        "costliest supersteps with their bsp_sync call sites (file:line where the program has debug information). "
        "With --params, also the predicted time of the same run on the machine of that parameter file under the "
        "three g models (g const, g(h), g(h,h*)), compute taken as measured (times --compute-scale, or scaled by "
        "the computing rates of --compute-from and --params).",
        epilog="E.g. BSPKIT_PROFILE=run.jsonl bsprun -n 4 ./prog; bspkit profile run.jsonl -o profile.html "
        "--params cluster/params.json --compute-from here/params.json",
    )
    pf.add_argument("profile", metavar="FILE", help="the profile (.jsonl) the program wrote")
    pf.add_argument("-o", "--output", metavar="HTML", help="write a self-contained HTML report here")
    pf.add_argument(
        "--json", metavar="FILE", help="write the analysis as JSON here; '-': to stdout (the summary to stderr)"
    )
    pf.add_argument("--params", metavar="P.json", help="a probe's params.json: predict the run on that machine")
    scale = pf.add_mutually_exclusive_group()
    scale.add_argument(
        "--compute-scale",
        type=positive_float,
        metavar="X",
        help="multiply the measured compute time by X for the prediction (default 1)",
    )
    scale.add_argument(
        "--compute-from",
        metavar="HERE.json",
        help="the params.json of the machine the profile was taken on: compute scaled by r here / r there "
        "(the computing rates), and the model of here shown beside the measured time",
    )
    pf.add_argument(
        "--calibration",
        metavar="CAL.json",
        help="a calibration of the machine of --params taken since its probe (bspkit calibrate --params P): "
        "predict with its parameters scaled by the drift, as the machine is now, without probing it again",
    )
    pf.add_argument(
        "--top",
        type=positive_int,
        default=5,
        metavar="N",
        help="how many of the costliest supersteps to list (default 5)",
    )
    pf.add_argument(
        "--section",
        type=int,
        metavar="N",
        help="the SPMD section (bsp_begin .. bsp_end) to analyse, where the program had several (default: the first)",
    )
    pf.add_argument(
        "--phase",
        metavar="NAME",
        help="analyse and predict only the supersteps of this phase (bspk_profile_phase; the drivers name "
        "setup, prepare, 'rep 1' .. 'rep R', check, report)",
    )
    add_cluster_parser(sub)
    return ap


CLUSTER_EPILOG = """\
What `up` builds: a parent network namespace bspkit.NAME holding a bridge (10.200.0.254/24),
and per host k a namespace bspkit.NAME.hK whose eth0 (10.200.0.k+1) is one end of a veth pair,
the other end on the bridge. Both ends are shaped by tc's token bucket (tbf) to --rate: the
host's sending and its receiving. Nothing on the machine's own interfaces changes and no packet
leaves the parent namespace. In STATE_DIR/NAME: hostfile (Open MPI's; its header tells bsprun
the namespace and the mpirun options), agent (how mpirun enters a host: plm_rsh_agent) and
cluster.json. Ranks: --map-by slot fills host 0 first, node deals them round robin; host k
runs on the cores k R .. k R + R - 1 (modulo the cores there are: the hosts share the machine's
cores and memory bandwidth). Latency is what the kernel's stack gives (no netem shaping).
Needs root, ip and tc (iproute2), unshare and taskset (util-linux), and Open MPI to run on it:
  bspkit cluster up --hosts 2 --ranks-per-host 1 --rate 1gbit
  bsprun -b mpi -n 2 --hostfile /run/bspkit-cluster/bspkit/hostfile PROGRAM
  bspkit probe -b mpi -n 2 --hostfile /run/bspkit-cluster/bspkit/hostfile --quick
  bspkit cluster status; bspkit cluster down
"""


def add_calibrate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ca = sub.add_parser(
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


def add_cluster_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cl = sub.add_parser(
        "cluster",
        help="an emulated cluster: hosts as network namespaces with shaped links, for mpirun (needs root)",
        description="Makes (up), shows (status) and removes (down) an emulated cluster of H hosts, each a Linux "
        "network namespace linked to a bridge at a shaped rate; bsprun -b mpi --hostfile runs MPI jobs across it.",
        epilog=CLUSTER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = cl.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser, name_default: str | None) -> None:
        p.add_argument(
            "--name",
            default=name_default,
            metavar="NAME",
            help="the cluster's name (letters, digits, '-', '_')" + (" (default: bspkit)" if name_default else ""),
        )
        p.add_argument(
            "--state-dir",
            metavar="DIR",
            help="where the cluster's files go, in DIR/NAME (default: /run/bspkit-cluster)",
        )

    up = actions.add_parser(
        "up",
        help="make a cluster",
        description="Makes the cluster's namespaces, bridge, links and their shaping, and writes its hostfile. "
        "A cluster of that name must not exist (take it down first). Fails, removing what it made, if a step fails.",
    )
    up.add_argument("--hosts", type=positive_int, required=True, metavar="H", help="number of hosts")
    up.add_argument(
        "--ranks-per-host", type=positive_int, default=1, metavar="R", help="MPI ranks (slots) per host (default 1)"
    )
    up.add_argument(
        "--rate",
        required=True,
        metavar="RATE",
        help="each host's link rate, each way, in tc's units: 1gbit, 100mbit, 125mbps (bytes/s)",
    )
    up.add_argument(
        "--burst",
        metavar="SIZE",
        help="the token bucket's burst in bytes (or 256kb, 2mb: 1024-based; default: 2 ms at the rate, at least "
        "64 KiB, e.g. 250000 bytes at 1gbit)",
    )
    up.add_argument(
        "--map-by",
        choices=("slot", "node"),
        default="slot",
        help="rank placement: slot fills each host in turn (default), node deals the ranks round robin",
    )
    common(up, "bspkit")
    down = actions.add_parser(
        "down",
        help="remove a cluster, also a half-made one",
        description="Ends the processes left in the cluster's namespaces, deletes the namespaces (all named "
        "bspkit.NAME and bspkit.NAME.*) and the state directory; also after a failed or interrupted up.",
    )
    common(down, "bspkit")
    status = actions.add_parser(
        "status",
        help="show the clusters, their hosts, rates and byte counters",
        description="Prints each cluster (or --name's): its hosts, addresses, cores, link rate and the bytes, "
        "packets and drops its links' qdiscs have counted; and namespaces a cluster left without state.",
    )
    common(status, None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if argv and argv[0] in PASS_THROUGH and "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print_error(
            "a command is needed: probe, fit, report, compare, run, validate, calibrate, imh, profile or cluster "
            "(bspkit --help)"
        )
        return EXIT_USAGE
    try:
        if args.command == "profile":  # before the others' imports: it needs no scipy
            from bspkit.profile_report import profile_command

            return profile_command(args)
        if args.command == "cluster":  # standard library only
            from bspkit import cluster

            return cluster.cluster_command(args)
        # imported here: `bspkit --help` and usage errors need no numpy, scipy or matplotlib
        from bspkit import commands, validate

        if args.command == "probe":
            return commands.probe_command(args, extra)
        if args.command == "fit":
            return commands.fit_command(args)
        if args.command == "report":
            return commands.report_command(args)
        if args.command == "run":
            return commands.run_command(args, extra)
        if args.command == "validate":
            return validate.validate_command(args, extra)
        if args.command == "calibrate":
            from bspkit.calibrate import calibrate_command

            return calibrate_command(args)
        if args.command == "compare":
            return commands.compare_command(args)
        if args.command == "imh":
            from bspkit.imh_predict import imh_command

            return imh_command(args, extra)
    except UsageError as e:
        print(f"usage: bspkit {args.command} ... (bspkit {args.command} --help)", file=sys.stderr)
        print_error(str(e))
        return EXIT_USAGE
    except Failure as e:
        print_error(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        print_error("interrupted")
        return 130
    return EXIT_FAIL
