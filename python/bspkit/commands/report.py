"""`bspkit report RUN...`: refits saved runs and writes their HTML reports."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit.commands._args import Subparsers
from bspkit.commands._fitted import write_report
from bspkit.console import Failure, write_text

# the domain modules load numpy: imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.measure.rawdata import RawRun
    from bspkit.model.params import Params

NAME = "report"
PASS_THROUGH = False


def add_parser(subparsers: Subparsers) -> None:
    r = subparsers.add_parser(
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


@dataclass(frozen=True)
class ReportOptions:
    inputs: tuple[str, ...]  # run directories or raw .jsonl files
    output: str | None  # one report of every run; None: each beside its raw file
    write_params: bool


def options_from(args: argparse.Namespace) -> ReportOptions:
    return ReportOptions(inputs=tuple(args.inputs), output=args.output, write_params=args.write_params)


def run(options: ReportOptions, extra: Sequence[str] = ()) -> int:
    from bspkit.commands._inputs import default_beside, load_fit, resolve_input

    items: list[tuple[RawRun, Params, Path]] = []
    for arg in options.inputs:
        kind, path = resolve_input(arg)
        if kind != "raw":
            raise Failure(f"{arg}: report needs the raw samples (raw.jsonl); it refits them")
        run, params = load_fit(path)
        items.append((run, params, path))
        if options.write_params:
            out = default_beside(path, "params.json", ".params.json")
            write_text(out, params.dumps())
            print(f"parameters written to {out}")
    if options.output:
        write_report([(r, p) for r, p, _ in items], Path(options.output))
    else:
        for run, params, path in items:
            write_report([(run, params)], default_beside(path, "report.html", ".report.html"))
    return 0
