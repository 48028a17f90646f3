"""The `bspkit` command: builds the parser from the command modules (bspkit.commands: one
module per subcommand, each with its subparser, its typed options and its run) and dispatches.

Exit status: 0 on success, 1 when something fails (a raw file that cannot be read, a build or
a bspprobe run that fails), 2 for a usage error (argparse's convention). Every error of a
subcommand, argparse's and bspkit's alike, is one line `bspkit COMMAND: error: ...` (after the
subcommand's usage for a usage error); `bspkit: error: ...` is for the top level's alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bspkit.commands import (
    calibrate,
    cluster,
    compare,
    fit,
    imh,
    predict,
    probe,
    profile,
    report,
    reproduce,
    run,
    validate,
)
from bspkit.console import Failure, UsageError, print_error
from bspkit.version import __version__

EXIT_FAIL = 1
EXIT_USAGE = 2

# the subcommands in the order `bspkit --help` lists them
COMMANDS = (probe, fit, report, compare, run, validate, predict, calibrate, imh, profile, cluster, reproduce)
BY_NAME = {command.NAME: command for command in COMMANDS}
# the commands that pass what follows `--` on to the program they run
PASS_THROUGH = tuple(command.NAME for command in COMMANDS if command.PASS_THROUGH)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bspkit",
        description="Measure, fit and compare the BSP parameters (f, g, l, h_half, o) of a machine and BSPlib library; run BSP algorithms and check their predicted running times.",
        epilog="Run `bspkit COMMAND --help` for the options of each command. Exit status: 0 ok, 1 failure, 2 usage error.",
    )
    ap.add_argument("-V", "--version", action="version", version=f"bspkit {__version__}")
    subparsers = ap.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
    return ap


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:  # type: ignore[type-arg]
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def selected_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command the arguments chose: `bspkit probe`'s for probe,
    `bspkit cluster up`'s for cluster up; the top level's when none was chosen."""
    while (action := _subparsers(parser)) is not None:
        name = getattr(args, action.dest, None)
        if name is None or name not in action.choices:
            break
        parser = action.choices[name]
    return parser


def split_pass_through(argv: list[str]) -> tuple[list[str], list[str]]:
    """(bspkit's arguments, those after `--` for the program a pass-through command runs)."""
    if argv and argv[0] in PASS_THROUGH and "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def main(argv: Sequence[str] | None = None) -> int:
    argv, extra = split_pass_through(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse would blame the top level: the subcommand's parser tells its own usage
        selected_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        parser.print_usage(sys.stderr)
        *others, last = BY_NAME
        print_error(f"a command is needed: {', '.join(others)} or {last} (bspkit --help)")
        return EXIT_USAGE
    command = BY_NAME[args.command]
    sub = selected_parser(parser, args)
    try:
        return int(command.run(command.options_from(args), extra))
    except UsageError as e:
        sub.print_usage(sys.stderr)
        print_error(str(e), sub.prog)
        return EXIT_USAGE
    except Failure as e:
        print_error(str(e), sub.prog)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print_error("interrupted", sub.prog)
        return 130
