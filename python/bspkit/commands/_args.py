"""What several commands' parsers share: the argument types (a positive integer, a positive
number), the launch options of the commands that start BSP programs (-n, -b, --build-dir,
--hostfile) with their typed form, and the checks of an algorithm's name and a hostfile."""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from bspkit import algorithms as al
from bspkit.console import UsageError
from bspkit.measure.libraries import Library

if TYPE_CHECKING:  # numpy: imported where a run spec is parsed
    from bspkit.model.profile_scaling import RunSpec

# what each command's `add_parser` receives: the top-level parser's subparsers
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


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


@dataclass(frozen=True)
class LaunchOptions:
    """How probe, run, validate, imh and calibrate start BSP programs."""

    nprocs: int | None  # None: the cores available (or a resumed sweep's p)
    backend: str
    build_dir: str | None
    hostfile: str | None  # as given; hostfile_arg checks it against the back end


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
        help="bspkit back end for bsprun: threads (default), procs, mpi, mpi-rma, mpi-naive",
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


def add_library_args(p: argparse.ArgumentParser) -> None:
    """--bspcc, --cc/--cflags/--libs, --launcher, --library-name/-version and --peer: run the
    drivers on another BSPlib (bspkit.measure.libraries) instead of bspkit's back ends."""
    g = p.add_argument_group(
        "another BSPlib",
        "build the drivers against another library's bsp.h (the portable build, cached per library) and start them "
        "with its launcher instead of bsprun; -b is then not used (docs/comparing-libraries.md)",
    )
    g.add_argument("--bspcc", metavar="CMD", help="the library's compiler wrapper, e.g. /opt/bsponmpi/bin/bspcc")
    g.add_argument("--cc", metavar="CMD", help="a plain C compiler, with --cflags and --libs for the library")
    g.add_argument("--cflags", metavar="FLAGS", help="compiler flags for the library, e.g. '-I/opt/lib/include'")
    g.add_argument("--libs", metavar="FLAGS", help="link flags and libraries, e.g. '-L/opt/lib/lib -lbsp'")
    g.add_argument(
        "--launcher",
        metavar="TEMPLATE",
        help="the command that starts P processes, {p} standing for P, e.g. 'mpirun -n {p}'; '' for a library "
        "whose programs start their own (the driver then gets -n P)",
    )
    g.add_argument("--library-name", metavar="NAME", help="the library's name in the results (default: the compiler's)")
    g.add_argument("--library-version", metavar="VERSION", help="its version in the results (default: unknown)")
    g.add_argument(
        "--peer",
        metavar="PREFIX",
        help="a library built by scripts/build-peer.sh: its compiler, flags, launcher, name and version from "
        "PREFIX/bspkit-peer.json (options given beside override them)",
    )


def library_arg(args: argparse.Namespace, launch: LaunchOptions) -> Library | None:
    """The other BSPlib the options describe, or None for bspkit's own; mistakes are usage errors."""
    from bspkit.measure.libraries import LibraryError, library_from

    try:
        lib = library_from(
            bspcc=args.bspcc,
            cc=args.cc,
            cflags=args.cflags,
            libs=args.libs,
            launcher=args.launcher,
            name=args.library_name,
            version=args.library_version,
            peer=args.peer,
        )
    except LibraryError as e:
        raise UsageError(str(e)) from None
    if lib is not None and launch.hostfile:
        raise UsageError("--hostfile is bsprun's: on another library, give the hosts in its --launcher")
    return lib


def launch_from(args: argparse.Namespace) -> LaunchOptions:
    return LaunchOptions(nprocs=args.nprocs, backend=args.backend, build_dir=args.build_dir, hostfile=args.hostfile)


def hostfile_arg(backend: str, hostfile: str | None) -> Path | None:
    """--hostfile (probe, run, validate, imh): for the mpi back ends only; made absolute."""
    if hostfile is None:
        return None
    if not backend.startswith("mpi"):
        raise UsageError(f"--hostfile is for the mpi back ends (-b mpi, mpi-rma or mpi-naive), not -b {backend}")
    path = Path(hostfile)
    if not path.is_file():
        raise UsageError(f"--hostfile {hostfile}: no such file")
    return path.absolute()


def algorithm_arg(name: str) -> al.Algorithm:
    """The algorithm named on the command line; an unknown name is a usage error."""
    try:
        return al.find_algorithm(name)
    except al.AlgorithmError as e:
        raise UsageError(str(e)) from None


def comma_list(text: str | None, what: str) -> list[str]:
    """--sizes, --values: the items of a comma-separated list (none when the option is not given)."""
    if text is None:
        return []
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{what} needs a comma-separated list")
    return items


def parse_procs(text: str) -> list[int]:
    """-n: "4", "1,2,4,8", "1,2,4,...,1024" (the step or ratio of the first two, continued up to
    the last), "1-16" (every p). ValueError with what is wrong."""
    return parse_int_list(text, "-n", "number of processes")


def parse_int_list(text: str, option: str, what: str) -> list[int]:
    """A list of positive integers in -n's forms (parse_procs), for any option (`bspkit predict
    --size` too): a list, a range, a list continued by its step or ratio. ValueError naming the
    option and `what` one value is ("number of processes", "problem size")."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if len(items) == 1 and "-" in items[0][1:]:
        lo, hi = (_positive(v, text, option, what) for v in items[0].split("-", 1))
        if hi < lo:
            raise ValueError(f"{option} {text}: the range ends below its start")
        return list(range(lo, hi + 1))
    if "..." in items or "…" in items:
        dots = items.index("...") if "..." in items else items.index("…")
        if dots < 2 or dots != len(items) - 2:
            example = "1,2,4,...,1024" if option == "-n" else "1000,2000,...,8000"
            raise ValueError(f"{option} {text}: write at least two values before '...' and one after, e.g. {example}")
        head = [_positive(v, text, option, what) for v in items[:dots]]
        end = _positive(items[-1], text, option, what)
        a, b = head[-2], head[-1]
        values = list(head)
        if b > a and b % a == 0 and (len(head) < 3 or head[-2] % head[-3] == 0 and head[-2] // head[-3] == b // a):
            ratio = b // a
            while values[-1] * ratio <= end:
                values.append(values[-1] * ratio)
        elif b > a:
            while values[-1] + (b - a) <= end:
                values.append(values[-1] + (b - a))
        else:
            raise ValueError(f"{option} {text}: the values before '...' must grow")
        if values[-1] != end:
            values.append(end)
        return values
    values = [_positive(v, text, option, what) for v in items]
    if not values:
        raise ValueError(f"{option} needs a {what}")
    return values


def _positive(v: str, text: str, option: str, what: str) -> int:
    try:
        value = int(v)
    except ValueError:
        raise ValueError(f"{option} {text}: '{v}' is not a {what}") from None
    if value < 1:
        raise ValueError(f"{option} {text}: '{v}' is not a positive {what}")
    return value


# --scale's RUN.jsonl@NAME=VALUE
SIZE_SPEC = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.+)$")


def parse_run_spec(text: str) -> RunSpec:
    """RUN.jsonl@NAME=VALUE: "run.jsonl@n=4000" -> (run.jsonl, "n", 4000.0); a path with no
    @NAME=VALUE at its end is the path alone."""
    from bspkit.model.profile_scaling import RunSpec  # noqa: F811 (the class itself, at run time)

    head, sep, tail = text.rpartition("@")
    m = SIZE_SPEC.match(tail) if sep else None
    if not m:
        return RunSpec(Path(text))
    try:
        value = float(m.group(2))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"'{text}': the problem size {m.group(1)}={m.group(2)} is not a positive number")
    return RunSpec(Path(head), m.group(1), value)
