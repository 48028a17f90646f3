"""`bspkit compare RUN RUN...`: several runs side by side on one page, and their ranking."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit.commands._args import Subparsers
from bspkit.console import Failure, UsageError, write_text

# the domain modules load numpy (compare: matplotlib): imported when the command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.model.params import JsonObject, Params

NAME = "compare"
PASS_THROUGH = False


def add_parser(subparsers: Subparsers) -> None:
    c = subparsers.add_parser(
        "compare",
        help="compare several runs (back ends, libraries, machines) side by side",
        description="Writes one HTML page with the runs side by side: a table per parameter and a ranking in the spirit "
        "of thesis Table 6.1; prints the ranking. Given `bspkit validate` sweeps too (of bspkit's back ends and of "
        "other libraries: validate --bspcc/--peer), the page and the terminal lead with Table 6.1 with algorithm "
        "rows: one column per library (bspkit: per back end), each algorithm's time, efficiency and prediction "
        "error, and the probes' g per primitive and l, ranked (docs/comparing-libraries.md).",
    )
    c.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="probe runs (run directories, raw .jsonl or params .json files) and validate sweeps (directories "
        "holding validate.json, or the file); two or more in all",
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


def _sweep(arg: str) -> JsonObject | None:
    """The validate sweep that arg names (a directory holding validate.json, or the file), or
    None when arg is something else (a probe run)."""
    from bspkit.fileformat import format_problem
    from bspkit.measure.validation import RESULT_FORMAT

    path = Path(arg)
    if path.is_dir():
        path = path / "validate.json"
    if path.name != "validate.json" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: cannot read it: {e}") from None
    problem = format_problem(data, "validate.json", RESULT_FORMAT) if isinstance(data, dict) else "not a JSON object"
    if problem:
        raise Failure(f"{path}: {problem}")
    return data


def _entry(arg: str) -> tuple[str, Params]:
    """(the run's label, its parameters): refitted from raw samples, or read from a parameter file."""
    from bspkit.commands._inputs import load_fit, load_params, resolve_input

    kind, path = resolve_input(arg)
    params = load_fit(path)[1] if kind == "raw" else load_params(path)
    m = params.machine
    return f"{m.get('library', '?')}/{m.get('backend', '?')} {m.get('host', '?')} p={params.p} ({arg})", params


def run(options: CompareOptions, extra: Sequence[str] = ()) -> int:
    from bspkit.pages import library_table as lt
    from bspkit.pages.compare import bullets, compare_report, ranking_rows

    if len(options.runs) < 2:
        raise UsageError("compare needs at least two runs")
    sweeps = [(arg, sw) for arg in options.runs if (sw := _sweep(arg)) is not None]
    entries = [_entry(arg) for arg in options.runs if arg not in {a for a, _s in sweeps}]
    lead = ("", 0)
    if sweeps:
        cols = lt.columns_of([(lab, pr) for lab, pr in entries], sweeps)
        lead = lt.html_section(cols)
        print("\n".join(lt.table_lines(cols)))
    html, nimg = compare_report(entries if len(entries) >= 2 or not sweeps else [], lead)
    out = Path(options.output)
    write_text(out, html)
    if len(entries) < 2:
        print(f"comparison written to {out} ({nimg} plots)")
        return 0
    for i, (lab, _p) in enumerate(entries):
        print(f"R{i + 1}: {lab}")
    rk = ranking_rows([p for _l, p in entries])
    width = max(len(n) for n, _s, _w in rk)
    print(f"{'':<{width}}  " + "  ".join(f"{'R' + str(i + 1):<5}" for i in range(len(entries))))
    for name, scores, _what in rk:
        print(f"{name:<{width}}  " + "  ".join(f"{b:<5}" for b in bullets(scores)))
    print(f"comparison written to {out} ({nimg} plots)")
    return 0
