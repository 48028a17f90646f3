"""The HTML report of one or several probe runs: one self-contained page (plots embedded as
base64 PNG), a section per measurement, the memory-hierarchy sections (pages.imh_report) where the
suites ran."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bspkit.console import progress
from bspkit.measure.hardware import hardware_sentence, ratio_columns
from bspkit.measure.rawdata import RawRun
from bspkit.model import trust, verdict
from bspkit.model.estimators import BSPBENCH_H_MAX, CONFIDENCE, LINE_BREAK, LOSS, LOSS_SCALE
from bspkit.model.params import AsTest, LinregRecord, Params, Surface, Validation, ValidationPoint, computing_rate
from bspkit.model.probe_validation import VALIDATION_THRESHOLD, probe_split
from bspkit.pages import plots
from bspkit.pages.htmlkit import (
    NOT_MEASURED_HTML,
    Section,
    contents,
    esc,
    ns_col,
    num,
    page,
    pct,
    per_word,
    seconds,
    signed_pct,
    table,
    us_col,
    verdict_box,
    words,
)
from bspkit.pages.imh_report import IMH_SECTIONS
from bspkit.units import quantity

# The names and the order of the tables' rows (compare's tables use them too).
PRIM_NAMES = {"put": "Put", "hpput": "HpPut", "get": "Get", "hpget": "HpGet", "send": "Send"}
PATTERN_NAMES = {"permutation": "Random Permutation", "alltoall": "All-to-all", "shift": "Cyclic shift"}
L_NAMES = {"empty": "no communication", "shift": "cyclic shift", "alltoall": "all-to-all"}
AS_ORDER = ["Empty", "Comp", "Full", "Simple", "Scatter"]


def linreg_range(lr: LinregRecord) -> str:
    """The h range Bisseling's regression used: "h* = 1, h = 2–2048"."""
    if lr.get("h_min") is None:
        return esc(f"h* = {lr.get('msg_words')}")
    cut = f" ({len(lr['excluded_h'])} larger h dropped)" if lr.get("excluded_h") else ""
    return esc(f"h* = {lr['msg_words']}, h = {lr['h_min']}–{lr['h_max']}{cut}")


def fail_cell(flags: Sequence[str], *prefixes: str) -> str:
    for fl in flags:
        if any(fl.startswith(p) for p in prefixes):
            return f'<span class="fail">failed fit: {esc(fl)}</span>'
    return '<span class="fail">failed fit</span>'


def val_or_fail(v: Any, fmt: Callable[[Any], str], flags: Sequence[str], *prefixes: str) -> str:
    return fmt(v) if v is not None else fail_cell(flags, *prefixes)


def ci_cell(t: list[float] | None, fmt: Callable[[Any], str], flags: Sequence[str], *prefixes: str) -> str:
    if t is None:
        return fail_cell(flags, *prefixes)
    return f"{fmt(t[0])}<br><span class='note'>[{fmt(t[1])}, {fmt(t[2])}]</span>"


def split_key(key: str) -> tuple[str, str]:
    prim, _, pat = key.partition("/")
    return prim, pat


def sorted_keys(keys: Sequence[str]) -> list[str]:
    po = list(PATTERN_NAMES)
    pr = list(PRIM_NAMES)

    def k(key: str) -> tuple[int, str, int, str]:
        prim, pat = split_key(key)
        return (po.index(pat) if pat in po else 99, pat, pr.index(prim) if prim in pr else 99, prim)

    return sorted(keys, key=k)


# ------------------------------------------------------------------------ one run


def _rows_by_pattern(
    g: Mapping[str, Surface], keys: Sequence[str], row: Callable[[str, Surface], list[str]]
) -> list[Any]:
    """Table rows per primitive/pattern, with a group row before each pattern; row(primitive, surface)."""
    rows: list[Any] = []
    cur = None
    for key in keys:
        prim, pat = split_key(key)
        if pat != cur:
            rows.append(esc(PATTERN_NAMES.get(pat, pat)))
            cur = pat
        rows.append(row(prim, g[key]))
    return rows


def g_const_of(params: Params, surface: Surface) -> tuple[float, float, bool] | None:
    """(g, l, l_measured) of the g const model as predict.py uses it: the regression's g and
    l, the empty sync for l (l_measured False) where the regression has no l."""
    regression = surface.bisseling_g_l()
    if regression is None:
        return None
    g, l_s = regression
    if l_s is not None and l_s > 0:
        return g, l_s, True
    empty = params.l.get("empty")
    return (g, empty, False) if empty else None


def run_warnings(params: Params) -> list[str]:
    """The measurement's warnings: noise and load (fit.noise_summary), and a machine whose
    speed changed during the run (probe_validation.machine_drift)."""
    out = list(params.noise.get("warnings", []))
    drift: Mapping[str, Any] = params.validation.get("drift") or {}
    stable: Mapping[str, Any] = params.validation.get("stable_state") or {}
    bound = stable.get("factor_bound") or 1.25
    if drift.get("share_off"):
        out.append(
            f"the machine changed speed during the run: {pct(drift['share_off'], 2)} of it ran outside "
            f"[1/{bound}, {bound}] of the fit's speed (between {quantity(drift['min_factor'], 'x', 3)} and "
            f"{quantity(drift['max_factor'], 'x', 3)})"
        )
    return out


def verdict_block(params: Params) -> str:
    """The first screen's answer (bspkit.model.verdict): one sentence, the advice, and f, one g per
    primitive and l with their spreads."""
    rows = [[esc(h.name), esc(h.value), esc(h.spread_text), esc(h.note)] for h in verdict.headline_parameters(params)]
    v = verdict.probe_verdict(params)
    notes = verdict.probe_notes(params, hardware_sentence(params))
    return verdict_box(v.level, v.sentence, v.advice, notes) + (
        table(["parameter", "value", "spread (1 sd)", "what"], rows) if rows else ""
    )


def summary_section(run: RawRun, params: Params, anchor: str) -> Section:
    """What the run measured, first: the verdict and the headline parameters (bspkit.model.verdict);
    then p, r, l; per primitive/pattern g_inf and h_half of the prediction model and Bisseling's
    g and l (in time and in flops of r, as bspbench prints them); the validation's numbers; the
    warnings."""
    s = Section.headed(anchor, "summary", "Summary")
    s.add(verdict_block(params))
    rate = computing_rate(params)
    r = rate[0] if rate else None
    facts = [f"p = <b>{esc(params.p)}</b>"]
    if rate:
        facts.append(f"r = <b>{esc(quantity(rate[0], 'flop/s'))}</b> ({esc(rate[1])})")
    facts.append(f"l (empty sync) = <b>{esc(seconds(params.l.get('empty')))}</b>")
    val = params.validation
    if val.get("used"):
        ok = bool(val.get("pass"))
        marked = (val.get("marked") or {}).get("points") or 0
        facts.append(
            f'validation <span class="{"pass" if ok else "bad"}">{"PASS" if ok else "FAIL"}</span>: mean |relative '
            f"error| {esc(pct(val.get('mean_abs_rel_error')))} over {val['used']} unmarked points"
            + (f" ({marked} marked, scored apart)" if marked else "")
            + f" (threshold {esc(pct(VALIDATION_THRESHOLD, 2))}; "
            f'<a href="#{anchor}validation">details</a>)'
        )
    else:
        facts.append("validation: not made (no validation points)")
    s.add('<p class="summary">' + " · ".join(facts) + "</p>")
    if params.g:
        rows = []
        for key in sorted_keys(list(params.g)):
            e = params.g[key]
            pm = e.predict
            gc = g_const_of(params, e)
            lr = e.linreg
            rows.append(
                [
                    esc(key),
                    ns_col(pm.g_inf) if pm else "–",
                    words(pm.h_half) if pm else "–",
                    ns_col(gc[0]) if gc else "–",
                    (us_col(gc[1]) + ("" if gc[2] else " *")) if gc else "–",
                    quantity(gc[0] * r, "flop", 3, show_unit=False) if gc and r else "–",
                    quantity(gc[1] * r, "flop", 3, show_unit=False) if gc and r else "–",
                    linreg_range(lr),
                ]
            )
        head = ["primitive/pattern", "g_inf [ns/word]", "h_half [words]", "g [ns/word]", "l [µs]"]
        head += ["g [flop]", "l [flop]", "range of g, l (words)"]
        # folded: the verdict's table above has one g per primitive; this one is for looking up
        s.add(
            '<details><summary class="plain">every surface: g_inf, h_half and Bisseling\'s g and l</summary>'
            + table(head, rows)
            + f'<p class="note">{esc(verdict.G_EXPLAINED)} g_inf, h_half: eq. (2.5)/(2.6) fitted over the whole '
            "grid. g, l: Bisseling's T = g h + l as bspbench fits it (one-word messages, h = p.."
            f"{BSPBENCH_H_MAX}); in flops: times r, as bspbench reports them. "
            "* l of the empty sync where the regression's l is not significant (as the g const prediction does).</p>"
            "</details>"
        )
    warnings = run_warnings(params)
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        s.add(f'<div class="warn"><b>{len(warnings)} warnings</b><ul>{items}</ul></div>')
    else:
        s.add('<div class="ok">no warnings: load below the core count, few outliers, small spread</div>')
    return s


def machine_section(run: RawRun, params: Params, anchor: str) -> Section:
    s = Section.headed(anchor, "machine", "Machine and build")
    m = params.machine
    timer = m.get("timer") or {}
    rows = [
        ("host", m.get("host")),
        ("CPU", m.get("cpu")),
        ("cores available", m.get("cores")),
        ("kernel", m.get("kernel")),
        ("compiler", m.get("compiler")),
        ("BSPlib library", m.get("library")),
        ("back end", m.get("backend")),
        ("p (BSP processes)", params.p),
        ("binding", m.get("binding")),
        ("BLAS", m.get("blas")),
        ("BLAS core type (OPENBLAS_CORETYPE)", m.get("blas_coretype") or "not set"),
        ("BLAS core in use / configuration", f"{m.get('blas_corename') or '?'} / {m.get('blas_config') or '?'}"),
        ("MPI", m.get("mpi") or "none"),
        ("bspprobe version / mode / seed", f"{m.get('version')} / {m.get('mode')} / {m.get('seed')}"),
        ("date (UTC)", m.get("date")),
        (
            "timer resolution / overhead",
            f"{seconds(timer.get('resolution_s'))} / {seconds(timer.get('overhead_s'))}"
            if isinstance(timer, dict)
            else timer,
        ),
        ("load average start / end", f"{m.get('loadavg_start')} / {m.get('loadavg_end')}"),
        ("elapsed", seconds(m.get("elapsed_s"))),
        ("command", m.get("command")),
        ("raw samples", params.source),
    ]
    s.add(
        table(["field", "value"], [[esc(a), f'<span style="text-align:left">{esc(b)}</span>'] for a, b in rows], left=2)
    )
    return s


def noise_section(run: RawRun, params: Params, anchor: str) -> Section:
    s = Section.headed(anchor, "noise", "Measurement quality")
    nz = params.noise
    warns = nz.get("warnings", [])
    if warns:
        s.add("".join(f'<div class="warn">{esc(w)}</div>' for w in warns))
    else:
        s.add('<div class="ok">no warnings: load below the core count, few outliers, small spread</div>')
    s.add(
        f"<p>{nz.get('outliers', 0)} of {nz.get('samples', 0)} samples lie more than 1.5 IQR from the median of "
        f"their point (g grid: {nz.get('g_outliers', 0)} of {nz.get('g_samples', 0)}); "
        f"{nz.get('noisy_point_count', 0)} of {nz.get('points', 0)} g/validation points have a spread "
        "(IQR/median) above 10 %. All fits use medians, which these outliers do not move much.</p>"
    )
    if nz.get("noisy_points"):
        s.add(
            table(
                ["primitive/pattern", "h*", "c", "spread (IQR/median)", "outliers"],
                [
                    [esc(r["key"]), str(r["msg_words"]), str(r["count"]), pct(r["spread"]), str(r["outliers"])]
                    for r in nz["noisy_points"][:10]
                ],
            )
        )
    flags_all = list(params.flags)
    for key in sorted_keys(list(params.g)):
        flags_all += [f"{key}: {fl}" for fl in params.g[key].flags]
    if flags_all:
        # folded: the reasons matter to whoever reads a "failed fit" cell, not to every reader
        s.add(
            f'<details id="{anchor}flags"><summary>{len(flags_all)} parameters not reported (null in params.json): '
            "why</summary><ul>"
        )
        s.add("".join(f'<li class="fail">failed fit: {esc(fl)}</li>' for fl in flags_all))
        s.add("</ul></details>")
    return s


def compute_speed_section(run: RawRun, params: Params, anchor: str) -> Section:
    """Computation speed f (thesis Table C.1)."""
    s = Section.headed(anchor, "f", "Computation speed f (thesis Table C.1)")
    f_detail = params.f_detail
    if not f_detail:
        s.add(NOT_MEASURED_HTML)
        return s
    rows = []
    for k, d in f_detail.items():
        rows.append(
            [
                esc(k),
                val_or_fail(d.get("s_per_op"), lambda v: quantity(v, "s/op"), params.flags, f"f {k}"),
                quantity(d.get("ops_per_s"), "ops/s"),
                esc(d.get("n")),
                num(d.get("ops")),
                pct(d.get("spread", 0)),
                esc(d.get("note")),
            ]
        )
    for kind, v in params.f_average.items():
        rows.append(
            [f"Average ({kind})", quantity(v, "s/op"), quantity(1 / v, "ops/s"), "", "", "", "mean of the rates"]
        )
    s.add(table(["kernel", "time per op f", "'flops' 1/f", "n", "ops", "spread", "note"], rows))
    if any(d.get("s_per_op") for d in f_detail.values()):
        s.image(plots.compute_speed(f_detail, f"Computation speed, {run.label()}"), "f per kernel")
    return s


def latency_section(run: RawRun, params: Params, anchor: str) -> Section:
    """Latency l (thesis Table C.2), with the As suite's latency tests in the plot."""
    s = Section.headed(anchor, "l", "Latency l (thesis Table C.2)")
    l_detail = params.l_detail
    as_tests = params.as_suite.get("tests", {})
    if l_detail:
        variants = [v for v in L_NAMES if v in l_detail] + [v for v in l_detail if v not in L_NAMES]
        s.add(
            table(
                ["p"] + [esc(L_NAMES.get(v, v)) for v in variants],
                [[esc(params.p)] + [val_or_fail(params.l.get(v), seconds, params.flags, f"l {v}") for v in variants]],
            )
        )
        s.add(
            table(
                ["variant", "median", "95% CI of median", "quartiles", "min", "samples", "outliers"],
                [
                    [
                        esc(v),
                        seconds(d["median"]),
                        f"{seconds(d['ci'][0])} – {seconds(d['ci'][1])}",
                        f"{seconds(d['q1'])} – {seconds(d['q3'])}",
                        seconds(d["min"]),
                        str(d["n"]),
                        str(d["outliers"]),
                    ]
                    for v, d in ((v, l_detail[v]) for v in variants)
                ],
            )
        )
        s.add(
            '<p class="note">l is the median over repetitions of the superstep time (max over processes). '
            "With g(h) or g(h, h*) (eq. 2.5/2.6) the empty-sync value is l0 of eq. (2.4); with a constant g "
            "use the value measured with communication (thesis 3.3).</p>"
        )
    else:
        s.add(NOT_MEASURED_HTML)
    if l_detail or as_tests:
        as_in_order = {k: as_tests[k] for k in _as_test_order(as_tests)}
        s.image(plots.latency(l_detail, as_in_order, f"Latency, {run.label()}"), "latency")
    return s


def _as_test_order(as_tests: Mapping[str, AsTest]) -> list[str]:
    return sorted(as_tests, key=lambda t: AS_ORDER.index(t) if t in AS_ORDER else 99)


def _estimator_row(p: int | None, prim: str, e: Surface) -> list[str]:
    fl = e.flags
    return [
        esc(p),
        esc(PRIM_NAMES.get(prim, prim)),
        val_or_fail(e.g_inf, per_word, fl, "g_inf (eq. 3.2)"),
        val_or_fail(e.h_half, words, fl, "h_half (eq. 3.4)", "g_inf (eq. 3.2)"),
        val_or_fail(e.o, words, fl, "o (eq. 3.6)", "g_inf (eq. 3.2)"),
        quantity(e.error_bspstar, "s²/word²", 3, show_unit=False),
        quantity(e.error_bsp, "s²/word²", 3, show_unit=False),
        val_or_fail(e.o_eq31, words, fl, "o (eq. 3.1)"),
        f"{e.points} ({len(e.msg_words)} h* × {len(e.count)} c)",
    ]


def _lsq26_row(prim: str, e: Surface) -> list[str]:
    fl = e.flags
    q = e.lsq
    pm = e.predict
    return [
        esc(PRIM_NAMES.get(prim, prim)),
        ci_cell(q.get("g_inf"), ns_col, fl, "lsq (2.6)"),
        ci_cell(q.get("h_half"), words, fl, "lsq (2.6) h_half", "lsq (2.6)"),
        ci_cell(q.get("o"), words, fl, "lsq (2.6) o", "lsq (2.6)"),
        pct(q.get("residual_rel_rms")),
        quantity(q.get("error_bspstar"), "s²/word²", 3, show_unit=False),
        seconds(l0[0]) if (l0 := q.get("l0")) else "–",
        words(q.get("h_half_net")),
        esc(pm.model) if pm else '<span class="fail">no model</span>',
    ]


def _lsq25_linreg_row(prim: str, e: Surface) -> list[str]:
    fl = e.flags
    q5 = e.lsq_25
    lr = e.linreg
    return [
        esc(PRIM_NAMES.get(prim, prim)),
        ci_cell(q5.get("g_inf"), ns_col, fl, "lsq (2.5)"),
        ci_cell(q5.get("h_half"), words, fl, "lsq (2.5) h_half", "lsq (2.5)"),
        pct(q5.get("residual_rel_rms")),
        quantity(q5.get("error_bsp"), "s²/word²", 3, show_unit=False),
        ci_cell(lr.get("g"), ns_col, fl, "linreg g", "linreg"),
        ci_cell(lr.get("l"), lambda v: quantity(v, "µs", show_unit=False), fl, "linreg l", "linreg"),
        linreg_range(lr),
    ]


def bandwidth_section(run: RawRun, params: Params, anchor: str) -> Section:
    """Bandwidth gap g (thesis Table C.3): the fits' tables and the g surfaces (Fig. 3.3)."""
    s = Section.headed(anchor, "g", "Bandwidth gap g (thesis Table C.3)")
    g = params.g
    if not g:
        s.add(NOT_MEASURED_HTML)
        return s
    keys = sorted_keys(list(g))
    s.add(
        "<h3>Weighted estimators (eq. 3.2–3.6) and squared errors (App. B.1)</h3>"
        '<p class="note">g_inf in ns per 8-byte word; h_half and o in words; ε in ns²/word² (mean squared '
        "error of g~ against eq. 2.6 (ε_BSP*) and eq. 2.5 (ε_BSP)), as in the thesis' tables.</p>"
    )
    rows = _rows_by_pattern(g, keys, lambda prim, e: _estimator_row(params.p, prim, e))
    s.add(
        table(
            [
                "p",
                "Fn",
                "g_inf",
                "h_half",
                "o",
                "ε_BSP* [ns²/word²]",
                "ε_BSP [ns²/word²]",
                "o (eq. 3.1)",
                "grid points",
            ],
            rows,
            left=2,
        )
    )
    s.add(
        "<h3>Robust least squares, eq. (2.6): T = g_inf (h + h_half + o·c)</h3>"
        f'<p class="note">Relative residuals (T_model − T)/T, loss {esc(LOSS)} (scale {LOSS_SCALE:.0%}); '
        f"{CONFIDENCE:.0%} confidence intervals in brackets (Jacobian with the loss weights, Student t; h_half and "
        "o by the delta method). The constant g_inf·h_half holds "
        "the synchronisation: l0 is the empty-sync latency measured on its own, h_half_net = h_half − l0/g_inf "
        "the start-up cost beyond it (the same fit written T = l0 + g_inf (h + h_half_net + o·c)).</p>"
    )
    head = [
        "Fn",
        "g_inf [ns/word]",
        "h_half [words]",
        "o [words]",
        "residual rel. RMS",
        "ε_BSP* [ns²/word²]",
        "l0",
        "h_half_net",
    ]
    s.add(table([*head, "prediction model"], _rows_by_pattern(g, keys, _lsq26_row)))
    s.add("<h3>Robust least squares, eq. (2.5): T = g_inf (h + h_half); linear regression T = g h + l (Bisseling)</h3>")
    s.add(
        '<p class="note">Bisseling\'s g and l (the "g const" model) are fitted as BSPedupack\'s bspbench fits them: '
        "ordinary least squares of T = g h + l over h-relations of one-word messages (the grid's smallest message "
        f"size), h from p to {BSPBENCH_H_MAX} words (bspbench's MAXH). Larger h-relations leave the first cache "
        "level and g grows in steps: a line through several regimes has a negative l. Where a regime begins inside "
        f"the range (the time per added word more than {LINE_BREAK:.0%} above the median), the h above it are "
        "dropped. The range column gives the h used.</p>"
    )
    s.add(
        table(
            [
                "Fn",
                "g_inf [ns/word]",
                "h_half [words]",
                "residual rel. RMS",
                "ε_BSP [ns²/word²]",
                "linreg g [ns/word]",
                "linreg l [µs]",
                "linreg range (words)",
            ],
            _rows_by_pattern(g, keys, _lsq25_linreg_row),
        )
    )
    s.add(f'<h2 id="{anchor}surfaces">g surfaces (thesis Fig. 3.3)</h2>')
    for key in keys:
        prim, pat = split_key(key)
        title = f"{PRIM_NAMES.get(prim, prim)}, {PATTERN_NAMES.get(pat, pat)} — {run.label()}"
        progress(f"plotting the g surface of {key}")
        model = g[key].predict.model if g[key].predict else "none"
        s.image(
            plots.g_surface(run.g_points(key), g[key], title),
            f"g surface {key}",
            "Points: measured g~ = median T / h. Red wire / lines: the prediction model "
            f"({model}); dashed: eq. (2.5) with the same g_inf and h_half.",
        )
    return s


def as_suite_section(run: RawRun, params: Params, anchor: str) -> Section:
    """The As suite of Gerbessiotis & Lee: latency tests and the total exchange."""
    s = Section.headed(anchor, "as", "As suite (Gerbessiotis &amp; Lee, section 3)")
    as_tests = params.as_suite.get("tests", {})
    te = params.as_suite.get("total_exchange", [])
    if not (as_tests or te):
        s.add(NOT_MEASURED_HTML)
        return s
    if as_tests:
        s.add(
            table(
                ["test", "median", "quartiles", "samples", "outliers", "what was timed"],
                [
                    [
                        esc(t),
                        seconds(as_tests[t]["median"]),
                        f"{seconds(as_tests[t]['q1'])} – {seconds(as_tests[t]['q3'])}",
                        str(as_tests[t]["n"]),
                        str(as_tests[t]["outliers"]),
                        esc(as_tests[t].get("note")),
                    ]
                    for t in _as_test_order(as_tests)
                ],
            )
        )
    if te:
        s.add(
            "<h3>Total exchange: t/h against h</h3><p class='note'>Every process puts h words to every process, "
            "itself included (h-relation p·h); the paper takes t/h as the cost of communication.</p>"
        )
        s.add(
            table(
                ["h [words per pair]", "t", "t / h", "quartiles of t", "samples"],
                [
                    [
                        str(r["h"]),
                        seconds(r["t_s"]),
                        per_word(r["t_per_h_s"]),
                        f"{seconds(r['q1'])} – {seconds(r['q3'])}",
                        str(r["samples"]),
                    ]
                    for r in te
                ],
            )
        )
        model = None
        put = params.g.get("put/alltoall")
        pm = put.predict if put else None
        if pm and params.p:
            p = int(params.p)
            model = (f"eq. (2.6) put/alltoall, h-relation p·h, c = p = {params.p}", plots.model_total_exchange(pm, p))
        s.image(
            plots.total_exchange([(run.label(), te)], f"Total exchange t/h, {run.label()}", model), "total exchange"
        )
    return s


def _validation_verdict(val: Validation) -> str:
    verdict = "pass" if val.get("pass") else "bad"
    return (
        "<p>Eq. (2.6), T(h, c) = A + B c with A = g_inf (h + h_half) and B = g_inf o fitted at each h of the grid "
        "and interpolated between (one fit cannot span the memory hierarchy: see the table of g(h) per h below). "
        f"{val['used']} points with h ≥ h_half used ({val['skipped']} skipped); mean |relative error| "
        f"<b>{pct(val['mean_abs_rel_error'])}</b>, max {pct(val['max_abs_rel_error'])}; "
        f"{val['within_threshold']} of {val['used']} within {VALIDATION_THRESHOLD:.0%}: "
        f'<span class="{verdict}">{"PASS" if val.get("pass") else "FAIL"}</span> '
        f"(the mean must be within {VALIDATION_THRESHOLD:.0%}).</p>"
    )


def split_html(sp: trust.Split | None, what: str) -> str:
    """A check's error split into the machine's noise and the model's (bspkit.model.trust): the
    sentence, then per regime n, the bias with its 95 % interval, the noise band, the model's
    scatter and the bias beyond the noise; the flagged regimes in red."""
    if sp is None:
        return ""
    sentence = trust.split_sentence(sp, what)
    machine = (
        ""
        if sp.machine_known
        else " The machine's time-to-time noise was not measured (a probe without sentinels): the noise is the "
        "points' own sampling alone, and the verdict does not use the split."
    )
    rows = []
    for st in [sp.overall, *sp.regimes]:
        flag = st.biased or st.scattered
        ci = f"{trust.pc(st.bias_ci[0], True)} to {trust.pc(st.bias_ci[1], True)}" if st.bias_ci else "–"
        scatter = trust.pc(math.expm1(trust.Z_10_90 * st.scatter_sd)) if st.scatter_sd is not None else "–"
        verdict_cell = (
            '<span class="bad">' + ("biased" if st.biased else "scatters") + "</span>"
            if flag
            else ("within the noise" if st.judged_on >= trust.MIN_POINTS else f"too few ({st.judged_on})")
        )
        rows.append(
            [
                esc(st.regime),
                str(st.n),
                esc(trust.pc(st.mean_rel_error, True)),
                esc(trust.pc(st.bias, True)),
                esc(ci),
                esc(trust.pc(st.noise_band)),
                esc(scatter),
                esc(trust.pc(st.bias_beyond_noise, True)),
                f"{st.shares.get('noise', 0.0):.0%}",
                verdict_cell,
            ]
        )
    head = ["regime", "n", "mean error", "bias", "bias, 95% interval", "noise (10-90%)", "model scatter"]
    head += ["bias beyond noise", "noise share", ""]
    return (
        f"<p>How far to trust it: {esc(sentence)}.{esc(machine)} Bias: exp(mean log(predicted / measured)) - 1; "
        "noise: each point's median's own standard error and the machine's time-to-time variability of its regime, "
        "as the 90th percentile of their 10-90% band; model scatter: the scatter beyond that noise "
        "(docs/prediction.md, How far to trust a number).</p>"
        + f'<details><summary class="plain">the error by regime ({len(rows)} rows)</summary>'
        + table(head, rows)
        + "</details>"
    )


def _machine_state(run: RawRun, val: Validation, s: Section) -> None:
    """How the machine's speed moved during the run (probe_validation.machine_drift), where it was dated."""
    drift: Mapping[str, Any] = val.get("drift") or {}
    st: Mapping[str, Any] = val.get("stable_state") or {}
    if not drift.get("curve"):
        return
    s.add(
        "<p>Machine state during the run (running median of measured / model over the grid points, in the "
        f"probe's order): between {drift['min_factor']:.2f}x and {drift['max_factor']:.2f}x; "
        f"{drift['share_off']:.0%} of the run outside [1/{st.get('factor_bound')}, {st.get('factor_bound')}]"
        + (' (<span class="bad">the machine changed speed during the run</span>)' if drift["share_off"] else "")
        + ". "
        + (
            f"On the {st['points']} validation points measured while the machine ran as the fit says: mean "
            f"|relative error| {pct(st['mean_abs_rel_error'])}."
            if st.get("mean_abs_rel_error") is not None
            else ""
        )
        + "</p>"
    )
    errors = [(r.get("seq"), r["rel_error"]) for r in val.get("points", []) if "rel_error" in r]
    bound = st.get("factor_bound") or 1.25
    s.image(plots.drift(drift["curve"], bound, errors, f"Machine state, {run.label()}"), "machine state")


def _marked_points(val: Validation, s: Section) -> None:
    """The validation points measured while a process did not hold its core (bspkit.measure.machine_state):
    scored apart, each with its evidence and the prediction as the machine was."""
    mk = val.get("marked") or {}
    rows = [r for r in val.get("points", []) if "marked" in r and "rel_error" in r]
    if not rows:
        return
    raw = (mk.get("raw") or {}).get("mean_abs_rel_error")
    as_it_was = (mk.get("as_it_was") or {}).get("mean_abs_rel_error")
    s.add(
        f"<p>{len(rows)} point(s) were measured while a process did not hold its core: the machine's, not the "
        f"model's, so the check above leaves them out. Their error as predicted: {pct(raw)}; predicted as the "
        f"machine was (the time stretched by 1 / the share of its core the slowest process held): "
        f"<b>{pct(as_it_was)}</b>.</p>"
    )
    body = [
        [
            esc(r["key"]),
            str(r["h"]),
            str(r["count"]),
            seconds(r["measured_s"]),
            signed_pct(r["rel_error"]),
            signed_pct(r.get("rel_error_as_it_was")),
            esc(r["marked"]["evidence"]),
        ]
        for r in sorted_validation_points(rows)
    ]
    head = ["primitive/pattern", "h", "c", "measured", "rel. error", "as it was", "evidence"]
    s.add(
        f'<details><summary class="plain">the {len(rows)} marked point(s) and their evidence</summary>'
        + table(head, body)
        + "</details>"
    )


def _calibrated_validation(val: Validation, s: Section) -> None:
    """The check again with the drift of the calibration rounds run among the points (issue 17)."""
    cal = val.get("calibrated")
    if not cal or cal.get("mean_abs_rel_error") is None:
        return
    rounds = cal.get("rounds") or []
    gs = [g for r in rounds if (g := r["drift"].get("g"))]
    ls = [l_s for r in rounds if (l_s := r["drift"].get("l"))]
    spread = ", ".join(f"{name} x{min(v):.2f}-{max(v):.2f}" for name, v in (("g", gs), ("l", ls)) if v)
    verdict = "pass" if cal.get("pass") else "bad"
    s.add(
        f"<p>Calibrated ({len(rounds)} short calibrations among the points, each against their median: {spread}): "
        "each point predicted with eq. (2.6) times the g drift at its h around it; mean |relative error| "
        f"<b>{pct(cal['mean_abs_rel_error'])}</b> (raw {pct(val['mean_abs_rel_error'])}), "
        f'<span class="{verdict}">{"PASS" if cal.get("pass") else "FAIL"}</span>; {cal["flagged"]} point(s) '
        f"flagged (the rounds before and after them differ by more than x{cal.get('within_run_flag')}) and left "
        "out.</p>"
    )


def _validation_point_row(r: ValidationPoint) -> list[str]:
    where = [esc(r["key"]), str(r["msg_words"]), str(r["count"]), str(r["h"]), seconds(r["measured_s"])]
    if "rel_error" not in r:
        return [*where, "–", "–", "skipped " + esc(r.get("skipped")), "–", "–", "–"]
    return [
        *where,
        seconds(r["predicted_s"]),
        signed_pct(r["rel_error"]),
        '<span class="pass">pass</span>' if r["pass"] else '<span class="bad">fail</span>',
        seconds(r.get("predicted_global_s")),
        signed_pct(r.get("rel_error_global")),
        quantity(r.get("drift_factor"), "x", 3),
    ]


def sorted_validation_points(points: Sequence[ValidationPoint]) -> list[ValidationPoint]:
    """The validation points in the order of the report's tables: pattern, primitive, then h and c."""
    order = {k: i for i, k in enumerate(sorted_keys(sorted({str(r["key"]) for r in points})))}
    return sorted(points, key=lambda r: (order[str(r["key"])], r["h"], r["count"]))


def validation_section(run: RawRun, params: Params, anchor: str) -> Section:
    """Eq. (2.6) against the off-grid validation points, the machine's drift, g(h) per h."""
    s = Section.headed(anchor, "validation", "Validation: eq. (2.6) against off-grid h-relations")
    val = params.validation
    g = params.g
    vpts = val.get("points", [])
    if not vpts:
        s.add("<p>no validation records in this run</p>")
        return s
    if val.get("used"):
        s.add(_validation_verdict(val))
        s.add(split_html(probe_split(val, params.noise), "eq. (2.6)"))
        gl: Mapping[str, Any] = val.get("global") or {}
        if gl.get("mean_abs_rel_error") is not None:
            s.add(
                "<p>With one fit of eq. (2.6) over the whole grid (the parameter table above): mean |relative error| "
                f"{pct(gl['mean_abs_rel_error'])}, max {pct(gl['max_abs_rel_error'])}.</p>"
            )
        _marked_points(val, s)
        _machine_state(run, val, s)
        _calibrated_validation(val, s)
    else:
        s.add("<p>no validation point could be predicted (see the table).</p>")
    head = ["primitive/pattern", "h*", "c", "h", "measured", "predicted (per h)", "rel. error", ""]
    head += ["predicted (one fit)", "rel. error", "machine factor"]
    # folded: the plot below shows them all; the table is for looking one up
    s.add(
        f'<details id="{anchor}validation-points"><summary class="plain">the {len(vpts)} validation points, by '
        "primitive/pattern and h</summary>"
        + table(head, [_validation_point_row(r) for r in sorted_validation_points(vpts)])
        + "</details>"
    )
    if val.get("used"):
        s.image(plots.validation(vpts, VALIDATION_THRESHOLD, f"Validation, {run.label()}"), "validation")
    per_h = per_h_tables(g)
    if per_h:
        s.add(per_h)
    return s


PER_H_COLUMNS = 11  # h values in the per-h tables: they fit a 1400 px window


def per_h_tables(g: Mapping[str, Surface]) -> str:
    """The per-h model (estimators.level_fits) as two tables, one row per primitive/pattern and one
    column per h (every other value of h where the grid has more than PER_H_COLUMNS): g(h)
    in ns/word and B in ns per extra message. params.json holds every level."""
    keys = [k for k in sorted_keys(list(g)) if g[k].levels]
    if not keys:
        return ""
    hs = sorted({lv.h for k in keys for lv in g[k].levels})
    step = math.ceil(len(hs) / PER_H_COLUMNS)
    shown = hs[::step] if hs[::step][-1] == hs[-1] else hs[::step][:-1] + [hs[-1]]
    head = ["primitive/pattern"] + [esc(quantity(hv, "words", 3, show_unit=False)) for hv in shown]

    def rows(cell: Callable[[Any], str]) -> list[list[str]]:
        out = []
        for k in keys:
            by_h = {lv.h: lv for lv in g[k].levels}
            out.append([esc(k)] + [cell(by_h[hv]) if hv in by_h else "–" for hv in shown])
        return out

    every = "" if step == 1 else f" ({len(shown)} of the {len(hs)} values of h; params.json has all)"
    return (
        "<h3>The per-h model: g(h) and B per primitive/pattern</h3>"
        '<p class="note">Eq. (2.6) at each h of the grid: T(h, c) = A + B c; g(h) = A/h is the time per word of the '
        f"whole superstep, sync included; B the time of one more message{esc(every)}. Columns: h in words.</p>"
        "<p><b>g(h) [ns/word]</b></p>"
        + table(head, rows(lambda lv: ns_col(lv.g_h)))
        + "<p><b>B [ns per extra message]</b></p>"
        # a B below a picosecond is the bound of the fit (B >= 0): no per-message cost
        + table(head, rows(lambda lv: "0" if lv.B_s < 1e-12 else quantity(lv.B_s, "ns", 3, show_unit=False)))
    )


def hardware_html(params: Params) -> str:
    """The hardware references of the run (params.hardware, bspkit.measure.hardware): the one-line
    sentence, the latency references against l(empty), and g(h) / memcpy_h(h) per
    primitive/pattern at a few h. "" where the file has none."""
    hw = params.hardware
    if not hw:
        return ""
    out = ["<h3>The library against the hardware (the same run)</h3>"]
    sentence = hardware_sentence(params)
    if sentence:
        out.append(f"<p><b>{esc(sentence)}</b></p>")
    refs = []
    for name, label, ratio in (
        ("barrier", "spin barrier among the p processes", "sync_over_barrier"),
        ("pingpong", "cache-line round trip between two cores", "sync_over_pingpong"),
    ):
        ref = hw.get(name)
        if not ref:
            continue
        if "skipped" in ref:
            refs.append([esc(label), "not measured", "–", f'<span class="note">{esc(ref["skipped"])}</span>'])
            continue
        where = ", ".join(x for x in (ref.get("between"), f"cores {ref.get('cpus')}" if ref.get("cpus") else "") if x)
        refs.append([esc(label), seconds(ref.get("median_s")), quantity(hw.get(ratio), "x", 3), esc(where)])
    if refs:
        out.append(
            table(["hardware reference", "median", f"l(empty) = {seconds(hw.get('l_empty_s'))} / it", "where"], refs)
        )
    g = hw.get("g_over_memcpy") or {}
    hs = ratio_columns(hw)
    if g and hs:
        memcpy_at = {r["h"]: r["s_per_word"] for r in hw.get("memcpy_h", [])}
        head = ["h [words]"] + [words(h) for h in hs]
        rows = [["memcpy_h per word"] + [per_word(memcpy_at.get(h)) for h in hs]]
        for key in sorted_keys(list(g)):
            at = {r["h"]: r for r in g[key]}
            rows.append([esc(key)] + [quantity(at[h]["ratio"], "x", 3) if h in at else "–" for h in hs])
        out.append(table(head, rows))
        out.append(
            '<p class="note">g(h) / memcpy_h(h): the g point at h with the fewest messages (median / h, the whole '
            "superstep, sync included) against memcpy of h words by every process at once on the h-relations' own, "
            "hot buffers, timed alike (max over processes). Below 1x the library moved the words faster than one "
            "memcpy per process; bsp_put copies twice (into the buffer, then at the sync), bsp_hpput once.</p>"
        )
    for problem in hw.get("problems", []):
        out.append(f'<p class="note">{esc(problem)}</p>')
    return "\n".join(out)


def memcpy_section(run: RawRun, params: Params, anchor: str) -> Section:
    """memcpy's time per word (the cold reference), and the library against the hardware
    references of the same run (hardware_html)."""
    s = Section.headed(anchor, "memcpy", "memcpy and the hardware references")
    md = params.memcpy_detail
    hw = hardware_html(params)
    if not md and not hw:
        s.add("<p>memcpy not measured in this run</p>")
        return s
    if md:
        s.add(
            table(
                ["bytes", "processes copying", "median", "time per 8-byte word", "spread", "note"],
                [
                    [
                        str(r["bytes"]),
                        str(r.get("procs", 1)),
                        seconds(r["median_s"]),
                        per_word(r["s_per_word"]),
                        pct(r["spread"]),
                        f'<span class="note">{esc(r.get("note"))}</span>',
                    ]
                    for r in md
                ],
            )
        )
    if hw:
        s.add(hw)
    else:
        s.add(
            '<p class="note">This run has no hardware references (bspprobe\'s section hw: memcpy in the '
            "h-relations' regime, a raw barrier, a cache-line round trip). The cold memcpy above is not compared "
            "with g: the h-relations of the grid stay in the caches, so that comparison could not fail.</p>"
        )
    return s


# The sections of one run's report, in page order.
RUN_SECTIONS: tuple[Callable[[RawRun, Params, str], Section], ...] = (
    summary_section,
    machine_section,
    noise_section,
    compute_speed_section,
    latency_section,
    bandwidth_section,
    as_suite_section,
    validation_section,
    memcpy_section,
)


def run_sections(run: RawRun, params: Params, anchor: str = "") -> tuple[str, int]:
    """The body of one run's report; returns (html, number of images)."""
    makers: tuple[Callable[[RawRun, Params, str], Section], ...] = RUN_SECTIONS
    if params.imh:  # the memory-hierarchy suites ran
        makers += IMH_SECTIONS
    sections = [section(run, params, anchor) for section in makers]
    first = sections[0].parts
    rest = [part for s in sections[1:] for part in s.parts]
    # the contents follow the summary: the page answers first, then says where the rest is
    toc = contents("\n".join(rest), anchor)
    return "\n".join([*first, toc, *rest]), sum(s.images for s in sections)


METHOD_NOTES = f"""
<h2>How the numbers were computed</h2>
<ul class="note">
<li>Times are medians over repetitions of the superstep time, which bspprobe takes as the maximum over
processes; sizes are in 8-byte words. g~(h*, c) = median T / h with h = c·h* (thesis 3.2).</li>
<li>Weighted estimators: eq. (3.2) g_inf = Σ g~ h³ / Σ h³; (3.3) g_small with weight h⁻³; (3.4) h_half =
(g_small/g_inf − 1) h_min; (3.5) g_mm over the smallest message size, weight c²; (3.6) o = (g_mm/g_inf − 1) h*_min;
(3.1) the Oxford bspprobe's o = (g_max/g_min − 1) h_max, for reference.</li>
<li>ε_BSP and ε_BSP* (App. B.1): mean squared error of g~ against eq. (2.5) and (2.6), shown in ns²/word² (s²/word² in params.json).</li>
<li>Least squares: eq. (2.6) multiplied by h, T = g_inf (h + h_half + o·c), and eq. (2.5), T = g_inf (h + h_half),
fitted to all grid points with relative residuals and the robust {LOSS} loss; {CONFIDENCE:.0%} intervals from the
Jacobian with IRLS weights and Student's t. The prediction model is eq. (2.6) when its o is significant, else eq. (2.5).</li>
<li>A parameter that comes out negative or whose interval reaches zero is not reported (null in params.json) and
shown as "failed fit" with the reason.</li>
<li>Outliers: samples more than 1.5 IQR away from their point's median; spread: IQR / median.</li>
</ul>
"""


def run_report(runs: Sequence[tuple[RawRun, Params]]) -> tuple[str, int]:
    """The report page of one or several runs; returns (html, number of images)."""
    bodies = []
    total = 0
    for i, (run, params) in enumerate(runs):
        progress(f"writing the report of {run.path}")
        body, n = run_sections(run, params, anchor=f"r{i}-" if len(runs) > 1 else "")
        total += n
        if len(runs) > 1:
            body = f'<h1 style="margin-top:2em">Run {i + 1}: {esc(run.label())}</h1>\n' + body
        bodies.append(body)
    if len(runs) == 1:
        title = f"bspkit probe report: {runs[0][0].label()}"
    else:
        title = f"bspkit probe reports: {len(runs)} runs"
    return page(title, "\n".join(bodies) + METHOD_NOTES), total
