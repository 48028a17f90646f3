"""Thesis Table 6.1 with algorithm rows: BSPlib libraries (and bspkit's back ends) side by side,
each a column; rows for the probe's l and g per primitive and, per algorithm, its time,
efficiency and mean prediction error (best model) from `bspkit validate` sweeps, each row
ranked ●●● best to ● worst (compare.bullets).

A column gathers what was measured with one library on one back end: bspkit's runs are
`bspkit/<back end>`, another library's its name (validate.json's "library", the probe's
--library-name). Sweeps of one algorithm in several columns are compared at the largest
problem (size and second parameter) that all of them ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bspkit.model.params import JsonObject, Params
from bspkit.pages.compare import _g_value, _predict_g_inf, bullets
from bspkit.pages.report import split_key

# the probe rows: g of each primitive (its all-to-all surface, else the geometric mean of its
# patterns), then l
PRIMITIVES = ("put", "hpput", "get", "hpget", "send")


@dataclass
class Column:
    """One library (or bspkit back end): its probe, if given, and its sweeps by algorithm."""

    key: str
    params: Params | None = None
    sweeps: dict[str, JsonObject] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)


def probe_column_key(params: Params) -> str:
    m = params.machine
    lib, backend = str(m.get("library") or "unknown"), str(m.get("backend") or "?")
    return f"bspkit/{backend}" if lib == "bspkit" else lib


def sweep_column_key(result: Mapping[str, Any]) -> str:
    lib = result.get("library") or {}
    name = str(lib.get("name") or "bspkit")
    return f"bspkit/{result.get('backend', '?')}" if name == "bspkit" else name


def columns_of(probes: Sequence[tuple[str, Params]], sweeps: Sequence[tuple[str, JsonObject]]) -> list[Column]:
    """The columns, in the order their first input was given; a later input of the same kind
    for the same column and algorithm replaces an earlier one."""
    cols: dict[str, Column] = {}
    for src, params in probes:
        col = cols.setdefault(probe_column_key(params), Column(probe_column_key(params)))
        col.params = params
        col.sources.append(src)
    for src, result in sweeps:
        key = sweep_column_key(result)
        col = cols.setdefault(key, Column(key))
        col.sweeps[str(result.get("algorithm"))] = result
        col.sources.append(src)
    return list(cols.values())


def _g_of(params: Params | None, prim: str) -> float | None:
    if params is None:
        return None
    surfaces = {split_key(k)[1]: e for k, e in params.g.items() if split_key(k)[0] == prim}
    e = surfaces.get("alltoall") or next(iter(surfaces.values()), None)
    if e is None:
        return None
    return _predict_g_inf(e) or _g_value(e, "g_inf")  # the prediction model's, else the fit's


def _l_of(params: Params | None) -> float | None:
    if params is None or not params.l:
        return None
    return params.l.get("alltoall") or params.l.get("empty") or next(iter(params.l.values()))


def _config(row: Mapping[str, Any]) -> tuple[int, str]:
    return int(row.get("size") or 0), str(row.get("sweep_value") or "")


def common_config(results: Sequence[JsonObject]) -> tuple[int, str] | None:
    """The largest (size, second parameter) that every sweep ran and measured."""
    sets = [{_config(r) for r in res.get("rows", []) if r.get("measured_s")} for res in results]
    common = set.intersection(*sets) if sets else set()
    return max(common) if common else None


@dataclass(frozen=True)
class Cell:
    """One algorithm on one column at the common configuration."""

    time_s: float
    efficiency: float | None
    error: float | None  # mean |relative error| of the sweep's best model
    model: str | None


@dataclass(frozen=True)
class AlgorithmRow:
    algorithm: str
    config: tuple[int, str]  # (size, second parameter), the problem all columns ran
    cells: list[Cell | None]


def algorithm_rows(cols: Sequence[Column]) -> list[AlgorithmRow]:
    """Per algorithm any column swept: each column's time, efficiency and error at the largest
    problem the columns that swept it have in common (a column without it: None)."""
    out = []
    for alg in dict.fromkeys(a for c in cols for a in c.sweeps):
        have = [c.sweeps[alg] for c in cols if alg in c.sweeps]
        cfg = common_config(have)
        if cfg is None:
            continue
        cells: list[Cell | None] = []
        for c in cols:
            res = c.sweeps.get(alg)
            row = next((r for r in (res or {}).get("rows", []) if _config(r) == cfg), None) if res else None
            if res is None or row is None:
                cells.append(None)
                continue
            summary = (res.get("summary") or {}).get("all") or {}
            cells.append(
                Cell(
                    float(row["measured_s"]),
                    row.get("efficiency"),
                    summary.get("best_error"),
                    summary.get("best_model"),
                )
            )
        out.append(AlgorithmRow(alg, cfg, cells))
    return out


def probe_rows(cols: Sequence[Column]) -> list[tuple[str, list[float | None]]]:
    """(name, one value per column) for g of each primitive and l; rows no column has are left out."""
    rows = [(f"g ({prim})", [_g_of(c.params, prim) for c in cols]) for prim in PRIMITIVES]
    rows.append(("l", [_l_of(c.params) for c in cols]))
    return [(n, vals) for n, vals in rows if any(v is not None for v in vals)]


def config_text(cfg: tuple[int, str], results: Sequence[JsonObject]) -> str:
    sweep = next((r.get("sweep") for r in results if r.get("sweep")), None)
    return f"n = {cfg[0]}" + (f", {sweep} = {cfg[1]}" if sweep and cfg[1] else "")


def table_lines(cols: Sequence[Column]) -> list[str]:
    """The table on the terminal: one line per row, the bullets and the value per column."""
    from bspkit.units import quantity

    names = [c.key for c in cols]
    width = max(18, *(len(n) for n in names))
    label_w = 40
    lines = [f"{'':<{label_w}}" + "".join(f"{n:<{width + 2}}" for n in names)]
    for name, vals in probe_rows(cols):
        marks = bullets(vals)
        cells = [
            f"{b} {quantity(v, 's' if name == 'l' else 's/word', 3)}" if v is not None else "-"
            for b, v in zip(marks, vals, strict=True)
        ]
        lines.append(f"{name:<{label_w}}" + "".join(f"{c:<{width + 2}}" for c in cells))
    for ar in algorithm_rows(cols):
        results = [c.sweeps[ar.algorithm] for c in cols if ar.algorithm in c.sweeps]
        marks = bullets([cell.time_s if cell else None for cell in ar.cells])
        head = f"{ar.algorithm} ({config_text(ar.config, results)})"
        cells = [
            f"{b} {quantity(cell.time_s, 's', 3)}" if cell else "-" for b, cell in zip(marks, ar.cells, strict=True)
        ]
        lines.append(f"{head:<{label_w}}" + "".join(f"{c:<{width + 2}}" for c in cells))
        detail = [
            (f"eff {cell.efficiency:.0%}" if cell.efficiency is not None else "eff -")
            + (f", err {cell.error:.0%}" if cell.error is not None else ", err -")
            if cell
            else ""
            for cell in ar.cells
        ]
        lines.append(f"{'':<{label_w}}" + "".join(f"{d:<{width + 2}}" for d in detail))
    return lines


def html_section(cols: Sequence[Column]) -> tuple[str, int]:
    """The table and a plot of the algorithms' times, for the comparison page; (html, images)."""
    from bspkit.pages import plots
    from bspkit.pages.htmlkit import esc, img, pct, table
    from bspkit.units import quantity

    parts = [
        "<h2>Libraries and algorithms (thesis Table 6.1)</h2>",
        '<p class="note">One column per library (bspkit: per back end). ●●● best, ● worst, ●● between; within 10 % '
        "of the best (worst) shares it. Probe rows: g_inf of the prediction model (all-to-all) and l. Algorithm "
        "rows: the time of the largest problem every column ran (median of its repetitions), its efficiency and "
        "the mean |relative error| of the sweep's best g model over all its runs.</p>",
    ]
    rows = []
    for name, vals in probe_rows(cols):
        unit = "s" if name == "l" else "s/word"
        rows.append(
            [esc(name)]
            + [
                f"{b}<br><span class='note'>{quantity(v, unit, 3)}</span>" if v is not None else "n/a"
                for b, v in zip(bullets(vals), vals, strict=True)
            ]
        )
    arows = algorithm_rows(cols)
    for ar in arows:
        results = [c.sweeps[ar.algorithm] for c in cols if ar.algorithm in c.sweeps]
        marks = bullets([cell.time_s if cell else None for cell in ar.cells])
        cells = []
        for b, cell in zip(marks, ar.cells, strict=True):
            if cell is None:
                cells.append("n/a")
                continue
            eff = f"efficiency {pct(cell.efficiency)}" if cell.efficiency is not None else "efficiency –"
            err = f"error {pct(cell.error)} ({esc(cell.model)})" if cell.error is not None else "error –"
            cells.append(f"{b}<br><span class='note'>{quantity(cell.time_s, 's', 3)}<br>{eff}<br>{err}</span>")
        rows.append(
            [f"{esc(ar.algorithm)}<br><span class='note'>{esc(config_text(ar.config, results))}</span>"] + cells
        )
    parts.append(table(["experiment"] + [esc(c.key) for c in cols], rows))
    sources = [[esc(c.key), esc(", ".join(c.sources))] for c in cols]
    parts.append(table(["column", "inputs"], sources, left=2))
    nimg = 0
    if arows:
        series = []
        for i, c in enumerate(cols):
            vals = []
            for ar in arows:
                cell, best = ar.cells[i], min((x.time_s for x in ar.cells if x), default=None)
                vals.append(cell.time_s / best if cell and best else None)
            series.append((c.key, vals))
        parts.append(
            img(
                plots.grouped_bars(
                    [ar.algorithm for ar in arows],
                    series,
                    "time / the fastest",
                    "algorithm time per library",
                    log=False,
                ),
                "algorithm times per library",
            )
        )
        nimg += 1
    return "\n".join(parts), nimg
