"""The comparison of several runs (back ends, libraries, machines): their parameters side by
side and a ranking in the spirit of the thesis' Table 6.1."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from bspkit.model.params import Params, Surface
from bspkit.pages import plots
from bspkit.pages.htmlkit import esc, img, ns_col, page, pct, table, us_col, words
from bspkit.pages.report import AS_ORDER, L_NAMES, sorted_keys, split_key
from bspkit.units import quantity


def _best_index(vals: Sequence[float | None]) -> int | None:
    ok = [(v, i) for i, v in enumerate(vals) if v is not None]
    return min(ok)[1] if ok else None


def _geomean(xs: Sequence[float]) -> float:
    return float(np.exp(np.mean(np.log(xs))))


def bullets(scores: Sequence[float | None], close: float = 0.10) -> list[str]:
    """Table 6.1: ●●● best, ● worst, ●● between; results close to the best (worst) share it."""
    ok = [s for s in scores if s is not None]
    if not ok:
        return ["n/a"] * len(scores)
    best, worst = min(ok), max(ok)
    out = []
    for s in scores:
        if s is None:
            out.append("n/a")
        elif s <= best * (1 + close):
            out.append("●●●")
        elif s >= worst / (1 + close):
            out.append("●")
        else:
            out.append("●●")
    return out


MISSING_SURFACE = Surface()  # a surface one run of a comparison lacks


def _g_value(e: Surface, name: Literal["g_inf", "h_half", "o"]) -> float | None:
    """A parameter of one surface for comparison: the LSQ (2.6) value, else the estimator's."""
    fitted = e.lsq.get(name)
    return fitted[0] if fitted else getattr(e, name)


def _predict_g_inf(e: Surface) -> float | None:
    return e.predict.g_inf if e.predict else None


def _start_up_s(e: Surface) -> float | None:
    """g_inf (h_half + o) of the prediction model: the time of a one-message superstep beyond its data."""
    return (e.predict.g_inf * (e.predict.h_half + e.predict.o) if e.predict else 0) or None


def ranking_rows(params: Sequence[Params]) -> list[tuple[str, list[float | None], str]]:
    """Per category, one score per run (lower is better): geometric mean over what all runs have."""
    rows: list[tuple[str, list[float | None], str]] = []

    def common(getter: Callable[[Params], Mapping[str, float | None]]) -> list[float | None]:
        maps = [getter(pr) for pr in params]
        keys = set.intersection(*[{k for k, v in m.items() if v} for m in maps]) if maps else set()
        if not keys:
            return [None] * len(params)
        return [_geomean([m[k] for k in sorted(keys)]) for m in maps]  # type: ignore[misc]

    def gmap(prims: tuple[str, ...]) -> Callable[[Params], dict[str, float | None]]:
        return lambda pr: {k: _predict_g_inf(e) for k, e in pr.g.items() if split_key(k)[0] in prims}

    rows.append(
        (
            "Communication gap (put/get)",
            common(gmap(("put", "hpput", "get", "hpget"))),
            "g_inf of the prediction model, geometric mean over the primitive/patterns all runs have",
        )
    )
    rows.append(("Communication gap (send)", common(gmap(("send",))), "g_inf of send"))
    rows.append(
        (
            "Per-message overhead (o, h_half)",
            common(lambda pr: {k: _start_up_s(e) for k, e in pr.g.items()}),
            "g_inf·(h_half + o): the start-up time of one one-message superstep beyond the data",
        )
    )
    rows.append(("Latency", common(lambda pr: dict(pr.l)), "l per variant, geometric mean"))
    rows.append(("Computation speed (f)", common(lambda pr: dict(pr.f)), "f per kernel, geometric mean"))
    rows.append(
        (
            "Total exchange (As suite)",
            common(lambda pr: {str(r["h"]): r["t_per_h_s"] for r in pr.as_suite.get("total_exchange", [])}),
            "t/h, geometric mean over the common h",
        )
    )
    rows.append(
        (
            "Predictability (validation)",
            [pr.validation.get("mean_abs_rel_error") for pr in params],
            "mean |relative error| of eq. (2.6) on the validation points",
        )
    )
    return rows


# the unit of each ranking category's score (ranking_rows)
RANKING_UNITS = {
    "Communication gap (put/get)": "s/word",
    "Communication gap (send)": "s/word",
    "Per-message overhead (o, h_half)": "s",
    "Latency": "s",
    "Computation speed (f)": "s/op",
    "Total exchange (As suite)": "s/word",
    "Predictability (validation)": "%",
}


def compare_report(entries: Sequence[tuple[str, Params]], lead: tuple[str, int] = ("", 0)) -> tuple[str, int]:
    """The comparison page of several runs (label, params), after `lead` (html, its number of
    images: the libraries' table); returns (html, number of images)."""
    params = [pr for _, pr in entries]
    nimg = lead[1]
    parts: list[str] = [lead[0]] if lead[0] else []
    if not entries:
        return page("bspkit comparison of libraries", "\n".join(parts)), nimg
    parts.append("<h2>Runs</h2>")
    rows = []
    for i, (lab, pr) in enumerate(entries):
        m = pr.machine
        machine_cells = [esc(m.get(k)) for k in ("library", "backend", "host", "cpu")]
        rows.append(
            [
                f"R{i + 1}",
                esc(lab),
                *machine_cells,
                esc(pr.p),
                esc(m.get("mode")),
                esc(m.get("date")),
                esc(m.get("blas_coretype")),
                esc(pr.source),
            ]
        )
    parts.append(
        table(
            ["", "run", "library", "back end", "host", "CPU", "p", "mode", "date", "BLAS core", "raw file"],
            rows,
            left=11,
        )
    )
    warn_rows = [f"R{i + 1}: {w}" for i, pr in enumerate(params) for w in pr.noise.get("warnings", [])]
    if warn_rows:
        parts.append("".join(f'<div class="warn">{esc(w)}</div>' for w in warn_rows))

    # Ranking.
    parts.append("<h2>Ranking (in the spirit of thesis Table 6.1)</h2>")
    parts.append(
        '<p class="note">●●● best, ● worst, ●● between; a run within 10 % of the best (worst) score shares it. '
        "Scores (lower is better) are geometric means over the items every run measured.</p>"
    )
    rk = ranking_rows(params)
    rows = []
    for name, scores, what in rk:
        b = bullets(scores)
        rows.append(
            [esc(name)]
            + [
                f"{bb}<br><span class='note'>{quantity(s, RANKING_UNITS.get(name, ''), 3)}</span>"
                if s is not None
                else "n/a"
                for bb, s in zip(b, scores, strict=True)
            ]
            + [f"<span class='note'>{esc(what)}</span>"]
        )
    parts.append(table(["experiment"] + [f"R{i + 1}" for i in range(len(entries))] + ["score"], rows))

    # Per-parameter tables.
    gkeys = sorted_keys(sorted({k for pr in params for k in pr.g}))

    def param_table(
        title: str,
        items: Sequence[str],
        getter: Callable[[Params, str], float | None],
        fmt: Callable[[Any], str],
        lower_better: bool = True,
        note: str = "",
    ) -> None:
        if not items:
            return
        parts.append(f"<h3>{esc(title)}</h3>")
        if note:
            parts.append(f'<p class="note">{esc(note)}</p>')
        trs = []
        for it in items:
            vals = [getter(pr, it) for pr in params]
            bi = _best_index([v if lower_better else (-v if v is not None else None) for v in vals])
            cells = []
            for i, v in enumerate(vals):
                c = fmt(v) if v is not None else '<span class="fail">–</span>'
                cells.append(f'<span class="best">{c}</span>' if i == bi and len(vals) > 1 else c)
            trs.append([esc(it)] + cells)
        parts.append(table([""] + [f"R{i + 1}" for i in range(len(entries))], trs))

    parts.append(
        "<h2>Parameters side by side</h2><p class='note'>Best value per row in bold. g values: least squares eq. (2.6) where reported, else the weighted estimator.</p>"
    )
    param_table("g_inf [ns/word]", gkeys, lambda pr, k: _g_value(pr.g.get(k, MISSING_SURFACE), "g_inf"), ns_col)
    param_table("h_half [words]", gkeys, lambda pr, k: _g_value(pr.g.get(k, MISSING_SURFACE), "h_half"), words)
    param_table("o [words]", gkeys, lambda pr, k: _g_value(pr.g.get(k, MISSING_SURFACE), "o"), words)
    param_table(
        "g_inf, weighted estimator eq. (3.2) [ns/word]",
        gkeys,
        lambda pr, k: pr.g.get(k, MISSING_SURFACE).g_inf,
        ns_col,
    )
    lvars = [v for v in L_NAMES if any(v in pr.l for pr in params)] + sorted(
        {v for pr in params for v in pr.l if v not in L_NAMES}
    )
    param_table("latency l [µs]", lvars, lambda pr, v: pr.l.get(v), us_col)
    kernels = sorted({k for pr in params for k in pr.f})
    param_table("f [ns per operation]", kernels, lambda pr, k: pr.f.get(k), ns_col)
    tests = [t for t in AS_ORDER if any(t in pr.as_suite.get("tests", {}) for pr in params)]
    param_table(
        "As suite latency tests [µs]",
        tests,
        lambda pr, t: test["median"] if (test := pr.as_suite.get("tests", {}).get(t)) else None,
        us_col,
    )
    hs = sorted({r["h"] for pr in params for r in pr.as_suite.get("total_exchange", [])})

    def te_get(pr: Params, h: str) -> float | None:
        for r in pr.as_suite.get("total_exchange", []):
            if str(r["h"]) == h:
                return r["t_per_h_s"]
        return None

    param_table("As total exchange t/h [ns/word] by h", [str(h) for h in hs], te_get, ns_col)
    param_table("memcpy [ns per word]", ["memcpy"], lambda pr, _k: pr.memcpy_s_per_word, ns_col)
    param_table(
        "validation mean |rel. error|",
        ["eq. (2.6)"],
        lambda pr, _k: pr.validation.get("mean_abs_rel_error"),
        pct,
    )

    # Plots.
    if gkeys:
        series = [
            (f"R{i + 1}", [_predict_g_inf(pr.g.get(k, MISSING_SURFACE)) for k in gkeys]) for i, pr in enumerate(params)
        ]
        series = [(lab, [v * 1e9 if v else None for v in vals]) for lab, vals in series]
        parts.append(
            img(plots.grouped_bars(gkeys, series, "g_inf [ns/word]", "g_inf per primitive/pattern"), "g_inf comparison")
        )
        nimg += 1
    if any(v for pr in params for v in pr.l.values()):
        series = [(f"R{i + 1}", [(pr.l.get(v) or 0) * 1e6 or None for v in lvars]) for i, pr in enumerate(params)]
        parts.append(img(plots.grouped_bars(lvars, series, "l [µs]", "latency per variant"), "latency comparison"))
        nimg += 1
    te_series = [(f"R{i + 1}", pr.as_suite.get("total_exchange", [])) for i, pr in enumerate(params)]
    if any(rows for _l, rows in te_series):
        parts.append(
            img(plots.total_exchange(te_series, "As suite total exchange, all runs"), "total exchange comparison")
        )
        nimg += 1
    return page(f"bspkit comparison of {len(entries)} runs", "\n".join(parts)), nimg
