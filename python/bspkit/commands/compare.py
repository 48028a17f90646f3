"""`bspkit compare RUN RUN...`: several runs side by side on one page, and their ranking."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit.commands._args import Subparsers
from bspkit.console import UsageError, write_text

# the domain modules load numpy (compare: matplotlib): imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.params import Params

NAME = "compare"
PASS_THROUGH = False


def add_parser(subparsers: Subparsers) -> None:
    c = subparsers.add_parser(
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


@dataclass(frozen=True)
class CompareOptions:
    runs: tuple[str, ...]  # run directories, raw .jsonl or params .json files
    output: str


def options_from(args: argparse.Namespace) -> CompareOptions:
    return CompareOptions(runs=tuple(args.runs), output=args.output)


def _entry(arg: str) -> tuple[str, Params]:
    """(the run's label, its parameters): refitted from raw samples, or read from a parameter file."""
    from bspkit.inputs import load_fit, load_params, resolve_input

    kind, path = resolve_input(arg)
    params = load_fit(path)[1] if kind == "raw" else load_params(path)
    m = params.machine
    return f"{m.get('library', '?')}/{m.get('backend', '?')} {m.get('host', '?')} p={params.p} ({arg})", params


def run(options: CompareOptions, extra: Sequence[str] = ()) -> int:
    from bspkit.compare import bullets, compare_report, ranking_rows

    if len(options.runs) < 2:
        raise UsageError("compare needs at least two runs")
    entries = [_entry(arg) for arg in options.runs]
    html, nimg = compare_report(entries)
    out = Path(options.output)
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
