"""`bspkit fit RAW`: fits a raw-sample file and writes the parameter file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bspkit.commands._args import Subparsers
from bspkit.commands._fitted import summary_lines
from bspkit.console import Failure, write_text
from bspkit.measure import probe as pr

NAME = "fit"
PASS_THROUGH = False


def add_parser(subparsers: Subparsers) -> None:
    f = subparsers.add_parser(
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
    f.add_argument(
        "--partial",
        action="store_true",
        help="fit a run that did not finish (no footer, a last line cut short: bspprobe was stopped), from what "
        "it measured before; without it such a file is refused",
    )


@dataclass(frozen=True)
class FitOptions:
    raw: str  # a raw .jsonl file or a run directory
    output: str | None  # '-': stdout; None: beside the raw file
    partial: bool  # fit a run that did not finish


def options_from(args: argparse.Namespace) -> FitOptions:
    return FitOptions(raw=args.raw, output=args.output, partial=args.partial)


def run(options: FitOptions, extra: Sequence[str] = ()) -> int:
    # the domain modules load numpy: imported when the command runs, so --help stays light
    from bspkit.commands._inputs import default_beside, load_fit, resolve_input

    kind, raw = resolve_input(options.raw)
    if kind != "raw":
        raise Failure(f"{options.raw}: fit needs a raw .jsonl file (or a run directory with raw.jsonl)")
    try:
        cut = pr.unfinished(raw)
    except OSError as e:
        raise Failure(f"cannot read {raw}: {e.strerror or e}") from None
    if cut and not options.partial:
        raise Failure(
            f"{raw}: {cut}. Measure it again (bspkit probe), or give --partial to fit what was measured before it stopped"
        )
    _run, params = load_fit(raw)
    text = params.dumps()
    if options.output == "-":
        sys.stdout.write(text)
        return 0
    out = Path(options.output) if options.output else default_beside(raw, "params.json", ".params.json")
    write_text(out, text)
    print("\n".join(summary_lines(params)))
    print(f"parameters written to {out}")
    return 0
