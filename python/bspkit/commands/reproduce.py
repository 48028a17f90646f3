"""`bspkit reproduce [TABLE ...]`: the thesis' Tables D.1-G.3 (seed 000, Appendices D-G) predicted
from its own published parameters (data/machines/thesis-*.json) beside its measured
efficiencies and its own prediction errors (bspkit.model.seed_reproduction holds the model);
docs/reproduction.md reads the result."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bspkit.commands._args import Subparsers, positive_int
from bspkit.console import Failure, UsageError, check_writable, write_text

if TYPE_CHECKING:
    from bspkit.model.seed_reproduction import CellResult

NAME = "reproduce"
PASS_THROUGH = False

THESIS_TABLES = tuple(f"{letter}.{i}" for letter in "DEFG" for i in (1, 2, 3))
# the other seeds' tables: Gerbessiotis & Lee's Table 1, Horvitz & Bisseling's Table 1, Kang et al.'s Table 7
OTHER_TABLES = ("GL.1", "HB.1", "KANG.7")
TABLES = THESIS_TABLES + OTHER_TABLES


def add_parser(subparsers: Subparsers) -> None:
    rp = subparsers.add_parser(
        "reproduce",
        help="the seeds' tables predicted from their own published parameters, beside their measurements",
        description="For every row of the thesis' Appendices D-G (matrix multiplication, customized and static "
        "distribution; LLCS, standard and bit-parallel: peak efficiency and the thesis' mean relative prediction "
        "error per library), predicts the thesis' algorithm from the thesis' parameters of that machine, library "
        "and p (data/machines/thesis-*.json) with bspkit's models of the thesis' two (const g: 'thesis g const'; "
        "g(h,h*) and g(h): 'g(h,h*)+l0'), and prints the measured and predicted peak efficiency and both "
        "errors (|T_pred - T_meas| / max of the two, + where the prediction is slower). docs/reproduction.md "
        "explains each choice. GL.1, HB.1 and KANG.7 are Gerbessiotis & Lee's Table 1 (MatMul speedups at p = 16), "
        "Horvitz & Bisseling's Table 1 (LU rates on a T3E) and Kang et al.'s Table 7 (FT.F's exchange). "
        "E.g. bspkit reproduce D.3 F.3 --f exchanged",
    )
    rp.add_argument(
        "tables", nargs="*", metavar="TABLE", help=f"tables to reproduce ({', '.join(TABLES)}; default all)"
    )
    rp.add_argument(
        "--f",
        dest="f_choice",
        choices=("printed", "exchanged"),
        default="printed",
        help="Table 5.3's standard-LLCS rates as printed, or argus' and aracari's exchanged (the slip "
        "data/machines/README.md shows); other tables are the same either way (default printed)",
    )
    rp.add_argument(
        "--counts",
        choices=("exact", "equation"),
        default="exact",
        help="matmul's h and S as bspkit's closed form counts the thesis' schedule exactly, or as the thesis' "
        "eq. 4.6-4.10 approximate them (default exact)",
    )
    rp.add_argument(
        "--max-size",
        type=positive_int,
        metavar="N",
        help="the largest n (matmul) or string length (LLCS) the peak is taken over, in the table's step; "
        "default the thesis' own (2000; 65536)",
    )
    rp.add_argument("--json", metavar="FILE", help="write every cell and each table's summary as JSON")
    rp.add_argument("--rows", action="store_true", help="print every row (default: each table's summary alone)")


@dataclass(frozen=True)
class ReproduceOptions:
    tables: tuple[str, ...]
    f_choice: str
    counts: str
    max_size: int | None
    json: Path | None
    rows: bool


def options_from(args: argparse.Namespace) -> ReproduceOptions:
    tables = tuple(t.upper() for t in args.tables) or TABLES
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        raise UsageError(f"no table {', '.join(unknown)}: the tables are {', '.join(TABLES)}")
    return ReproduceOptions(
        tables=tables,
        f_choice=args.f_choice,
        counts=args.counts,
        max_size=args.max_size,
        json=Path(args.json) if args.json else None,
        rows=bool(args.rows),
    )


def _pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{100 * v:+.0f}" if signed else f"{100 * v:.0f}"


def _row_lines(table: dict[str, Any], cells: Sequence[CellResult], columns: Sequence[str]) -> list[str]:
    """The table in the thesis' layout: a block per p, a row per q or alpha, per library the
    measured efficiency, then per model bspkit's error / the thesis' error (%)."""
    libs = table["libraries"]
    param = table["parameter"]
    head = f"{'p':>3} {param:>5} " + " ".join(f"{lib:^{6 + 10 * len(columns)}}" for lib in libs)
    sub = f"{'':>3} {'':>5} " + " ".join(f"{'E %':>5} " + " ".join(f"{c[:9]:>9}" for c in columns) for _ in libs)
    lines = [head, sub]
    by_row: dict[tuple[int, int], dict[str, CellResult]] = {}
    for x in cells:
        by_row.setdefault((x.p, x.parameter), {})[x.library] = x
    for (p, parameter), group in by_row.items():
        parts = []
        for lib in libs:
            x = group.get(lib)
            if x is None or x.measured is None:
                parts.append(f"{'-':>5} " + " ".join(f"{'-':>9}" for _ in columns))
                continue
            errs = []
            for c in columns:
                ours = None if x.prediction is None else x.prediction.error.get(c)
                errs.append(f"{_pct(ours, True):>4}/{_pct(x.thesis_error.get(c)):<4}")
            parts.append(f"{100 * x.measured:5.1f} " + " ".join(f"{e:>9}" for e in errs))
        lines.append(f"{p:>3} {parameter:>5} " + " ".join(parts))
    return lines


def run(options: ReproduceOptions, extra: Sequence[str]) -> int:
    from bspkit.model import seed_reproduction as sr

    if options.json:
        check_writable(options.json, "--json")
    try:
        data = sr.load_tables()
    except sr.ReproductionError as e:
        raise Failure(str(e)) from e
    choices = sr.Choices(f=options.f_choice, counts=options.counts, max_size=options.max_size)
    if any(t in THESIS_TABLES for t in options.tables):
        print(
            "The thesis' measured peak efficiency (E) and its mean relative prediction error, beside bspkit's prediction "
            "from the thesis' own parameters (error = |T_pred - T_meas| / max, + where the prediction is slower; "
            "bspkit's at the size of the peak, the thesis' a mean over all sizes)."
        )
        print(
            f"f: {options.f_choice}; matmul counts: {options.counts}; sizes: "
            + ("the thesis' own" if options.max_size is None else f"up to {options.max_size}")
        )
    out_tables = []
    for table in data["tables"]:
        if table["table"] not in options.tables:
            continue
        experiment = sr.BY_NAME[table["algorithm"]]
        try:
            cells = sr.reproduce_table(table, choices)
        except sr.ReproductionError as e:
            raise Failure(f"Table {table['table']}: {e}") from e
        summary = sr.summarize(table, cells)
        facts = sr.facts(table, cells)
        columns = [m.column for m in experiment.models]
        print()
        print(f"Table {table['table']} ({table['machine']}): {experiment.title}; 000 line {table['line']}")
        if options.rows:
            print("\n".join(_row_lines(table, cells, columns)))
            print("  (per library: E %, then per model bspkit's error / the thesis' error, %)")
        for c in columns:
            s = summary[c]
            verdict = {True: "bspkit no further", False: "bspkit further", None: "-"}[s["target_met"]]
            print(
                f"  {c:8} (bspkit {s['bspkit_model']}): median |error| bspkit {_pct(s['bspkit_median_abs_error'])} %, "
                f"thesis {_pct(s['thesis_median_error'])} % over {s['cells']} cells; bspkit's no larger in "
                f"{s['bspkit_no_worse_cells']}, slower in {s['bspkit_slower_cells']}: {verdict}"
            )
        missing = sorted({x.missing for x in cells if x.missing})
        for m in missing:
            print(f"  not predicted: {m}")
        best_m = ", ".join(f"{k} {v}" for k, v in facts["highest_efficiency_measured"].items())
        best_p = ", ".join(f"{k} {v}" for k, v in facts["highest_efficiency_predicted"].items())
        print(
            f"  highest efficiency per row: measured {best_m}; predicted {best_p} "
            f"(the same library in {facts['rows_same_library']} of {facts['rows_compared']} rows)"
        )
        out_tables.append(
            {
                "table": table["table"],
                "machine": table["machine"],
                "algorithm": table["algorithm"],
                "line": table["line"],
                "summary": summary,
                "facts": facts,
                "cells": [
                    {
                        "p": x.p,
                        table["parameter"]: x.parameter,
                        "library": x.library,
                        "line": x.line,
                        "measured_efficiency": x.measured,
                        "thesis_error": x.thesis_error,
                        "f_s_per_unit": x.f_used,
                        "predicted_efficiency": None if x.prediction is None else x.prediction.efficiency,
                        "peak_n": None if x.prediction is None else x.prediction.peak_n,
                        "t_predicted_over_measured": None if x.prediction is None else x.prediction.ratio,
                        "bspkit_error": None if x.prediction is None else x.prediction.error,
                        "missing": x.missing,
                    }
                    for x in cells
                ],
            }
        )
    others = _other_tables(sr, [t for t in options.tables if t in OTHER_TABLES])
    if options.json:
        doc = {
            "format": 1,
            "source": data["source"],
            "choices": {"f": options.f_choice, "counts": options.counts, "max_size": options.max_size},
            "error": "signed (T_pred - T_meas) / max(T_pred, T_meas); the thesis' printed errors are unsigned",
            "tables": out_tables,
            "other_seeds": others,
        }
        write_text(options.json, json.dumps(doc, indent=1) + "\n")
    return 0


def _other_tables(sr: Any, names: Sequence[str]) -> dict[str, Any]:
    """Prints and returns the other seeds' tables asked for."""
    if not names:
        return {}
    try:
        data = sr.load_other_tables()
    except sr.ReproductionError as e:
        raise Failure(str(e)) from e
    out: dict[str, Any] = {}
    if "GL.1" in names:
        rows = sr.gl_table_1(data)
        out["GL.1"] = rows
        print()
        print(
            f"Gerbessiotis & Lee, Table 1 (002 line {data['gl-table-1']['line']}): MatMul speedup at p = 16, "
            "the cells their parameters reach (no l: none given)"
        )
        print(
            f"  {'configuration':13} {'column':10} {'n':>4} {'measured':>8} {'theirs':>6} {'err':>5} "
            f"{'bspkit':>6} {'err':>5}"
        )
        for r in rows:
            theirs = "-" if r["seed_predicted"] is None else f"{r['seed_predicted']:.1f}"
            print(
                f"  {r['configuration']:13} {r['column']:10} {r['n']:>4} {r['measured_speedup']:>8.2f} {theirs:>6} "
                f"{_pct(r['seed_error'], True):>5} {r['bspkit_predicted']:>6.2f} {_pct(r['bspkit_error'], True):>5}"
            )
        for b in data["gl-table-1"]["blocks"]:
            if "slip" in b:
                print(f"  the seed's slip: {b['slip']}")
    if "HB.1" in names:
        rows = sr.hb_table_1(data)
        out["HB.1"] = rows
        print()
        print(
            f"Horvitz & Bisseling, Table 1 (004 line {data['hb-table-1']['line']}): LU on an 8 x 8 T3E, nb = 32, "
            "Gflop/s of the BSPlib layer (they give no prediction)"
        )
        print(f"  {'n':>6} {'measured':>8} {'bspkit l low':>12} {'err':>5} {'l high':>7} {'err':>5}")
        for r in rows:
            print(
                f"  {r['n']:>6} {r['measured_gflops']:>8.2f} {r['bspkit_gflops_l_low']:>12.2f} "
                f"{_pct(r['bspkit_error_l_low'], True):>5} {r['bspkit_gflops_l_high']:>7.2f} "
                f"{_pct(r['bspkit_error_l_high'], True):>5}"
            )
    if "KANG.7" in names:
        rows = sr.kang_table_7(data)
        out["KANG.7"] = rows
        print()
        print(f"Kang et al., Table 7 (003 line {data['kang-table-7']['line']}): FT.F's three-step exchange, us")
        print(f"  {'machine':7} {'measured':>8} {'theirs':>7} {'err':>5} {'bspkit':>7} {'err':>5}")
        for r in rows:
            print(
                f"  {r['machine']:7} {r['measured_us']:>8.2f} {r['seed_estimated_us']:>7.2f} "
                f"{_pct(r['seed_error'], True):>5} {r['bspkit_predicted_us']:>7.2f} {_pct(r['bspkit_error'], True):>5}"
            )
        for r in rows:
            k = r["seed_startups_implied"]
            if k is not None and abs(k - 3.0) > 0.05:
                print(
                    f"  the seed's slip: its {r['machine']} estimate is {k:.1f} start-ups T_s plus the transfer "
                    "time; eq. 7 has 3"
                )
    return out
