"""The HTML reports: one self-contained page per run (plots embedded as base64 PNG), and the
comparison of several runs with a ranking in the spirit of the thesis' Table 6.1."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bspkit import __version__, plots
from bspkit.console import progress
from bspkit.fit import CONFIDENCE, LOSS, LOSS_SCALE, MEMCPY_FACTOR, VALIDATION_THRESHOLD
from bspkit.params import Params, Surface
from bspkit.rawdata import RawRun

PRIM_NAMES = {"put": "Put", "hpput": "HpPut", "get": "Get", "hpget": "HpGet", "send": "Send"}
PATTERN_NAMES = {"permutation": "Random Permutation", "alltoall": "All-to-all", "shift": "Cyclic shift"}
L_NAMES = {"empty": "no communication", "shift": "cyclic shift", "alltoall": "all-to-all"}
AS_ORDER = ["Empty", "Comp", "Full", "Simple", "Scatter"]

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1250px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #345; padding-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #bbb; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: .6em 0 1em 0; font-size: .88em; }
th, td { border: 1px solid #ccc; padding: .25em .55em; text-align: right; vertical-align: top; }
th { background: #eef2f6; text-align: center; }
td.l, th.l { text-align: left; }
tr.group td { background: #f6f6f6; font-style: italic; text-align: left; }
.fail { color: #a00; font-size: .92em; }
.pass { color: #060; font-weight: bold; }
.bad { color: #a00; font-weight: bold; }
.warn { background: #fff4e0; border-left: 4px solid #e90; padding: .4em .8em; margin: .5em 0; }
.ok { background: #eef8ee; border-left: 4px solid #4a4; padding: .4em .8em; margin: .5em 0; }
.note { color: #555; font-size: .9em; }
img { max-width: 100%; border: 1px solid #ddd; margin: .3em 0; }
figure { margin: 1em 0; }
figcaption { color: #555; font-size: .88em; }
.best { font-weight: bold; background: #eaf5ea; }
code { background: #f3f3f3; padding: 0 .2em; }
"""


# ----------------------------------------------------------------------------- format


def esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def num(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"{v:.{digits}g}"


def us(v: float | None) -> str:
    return "–" if v is None else f"{v * 1e6:.4g} µs"


def ns(v: float | None) -> str:
    return "–" if v is None else f"{v * 1e9:.4g} ns"


def words(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


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


def img(png: bytes, alt: str, caption: str = "") -> str:
    b64 = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="data:image/png;base64,{b64}" alt="{esc(alt)}">{cap}</figure>'


def table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Cells are HTML already; the first `left` columns are left-aligned."""
    out = ["<table><tr>"]
    out += [f'<th class="{"l" if i < left else ""}">{h}</th>' for i, h in enumerate(head)]
    out.append("</tr>")
    for r in rows:
        if isinstance(r, str):  # a group row
            out.append(f'<tr class="group"><td colspan="{len(head)}">{r}</td></tr>')
            continue
        out.append(
            "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{c}</td>' for i, c in enumerate(r)) + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


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


@dataclass
class Section:
    """HTML of one report section and the number of images in it."""

    parts: list[str] = field(default_factory=list)
    images: int = 0

    def add(self, *html: str) -> None:
        self.parts.extend(html)

    def image(self, png: bytes, alt: str, caption: str = "") -> None:
        self.parts.append(img(png, alt, caption))
        self.images += 1

    @classmethod
    def headed(cls, anchor: str, section_id: str, title: str) -> Section:
        """A section that starts with its heading (id anchor + section_id, for the contents)."""
        section = cls()
        section.add(f'<h2 id="{anchor}{section_id}">{title}</h2>')
        return section


NOT_MEASURED_HTML = "<p>not measured in this run</p>"


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
            f"{num(timer.get('resolution_s'))} s / {num(timer.get('overhead_s'))} s"
            if isinstance(timer, dict)
            else timer,
        ),
        ("load average start / end", f"{m.get('loadavg_start')} / {m.get('loadavg_end')}"),
        ("elapsed", f"{num(m.get('elapsed_s'))} s"),
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
                    [esc(r["key"]), str(r["msg_words"]), str(r["count"]), f"{r['spread']:.1%}", str(r["outliers"])]
                    for r in nz["noisy_points"][:10]
                ],
            )
        )
    flags_all = list(params.flags)
    for key in sorted_keys(list(params.g)):
        flags_all += [f"{key}: {fl}" for fl in params.g[key].flags]
    if flags_all:
        s.add("<h3>Parameters not reported (null in params.json)</h3><ul>")
        s.add("".join(f'<li class="fail">failed fit: {esc(fl)}</li>' for fl in flags_all))
        s.add("</ul>")
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
                val_or_fail(d.get("s_per_op"), lambda v: f"{v * 1e6:.4g} µs", params.flags, f"f {k}"),
                "–" if not d.get("ops_per_s") else f"{d['ops_per_s'] / 1e6:.4g} M",
                esc(d.get("n")),
                num(d.get("ops")),
                f"{d.get('spread', 0):.1%}",
                esc(d.get("note")),
            ]
        )
    for kind, v in params.f_average.items():
        rows.append([f"Average ({kind})", f"{v * 1e6:.4g} µs", f"{1 / v / 1e6:.4g} M", "", "", "", "mean of the rates"])
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
                [[esc(params.p)] + [val_or_fail(params.l.get(v), us, params.flags, f"l {v}") for v in variants]],
            )
        )
        s.add(
            table(
                ["variant", "median", "95% CI of median", "quartiles", "min", "samples", "outliers"],
                [
                    [
                        esc(v),
                        us(d["median"]),
                        f"{us(d['ci'][0])} – {us(d['ci'][1])}",
                        f"{us(d['q1'])} – {us(d['q3'])}",
                        us(d["min"]),
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


def _as_test_order(as_tests: Mapping[str, Any]) -> list[str]:
    return sorted(as_tests, key=lambda t: AS_ORDER.index(t) if t in AS_ORDER else 99)


def _estimator_row(p: int | None, prim: str, e: Surface) -> list[str]:
    fl = e.flags
    return [
        esc(p),
        esc(PRIM_NAMES.get(prim, prim)),
        val_or_fail(e.g_inf, lambda v: f"{v * 1e9:.4g} ns", fl, "g_inf (eq. 3.2)"),
        val_or_fail(e.h_half, words, fl, "h_half (eq. 3.4)", "g_inf (eq. 3.2)"),
        val_or_fail(e.o, words, fl, "o (eq. 3.6)", "g_inf (eq. 3.2)"),
        num(e.error_bspstar, 2),
        num(e.error_bsp, 2),
        val_or_fail(e.o_eq31, words, fl, "o (eq. 3.1)"),
        f"{e.points} ({len(e.msg_words)} h* × {len(e.count)} c)",
    ]


def _lsq26_row(prim: str, e: Surface) -> list[str]:
    fl = e.flags
    q = e.lsq
    pm = e.predict
    return [
        esc(PRIM_NAMES.get(prim, prim)),
        ci_cell(q.get("g_inf"), lambda v: f"{v * 1e9:.4g}", fl, "lsq (2.6)"),
        ci_cell(q.get("h_half"), words, fl, "lsq (2.6) h_half", "lsq (2.6)"),
        ci_cell(q.get("o"), words, fl, "lsq (2.6) o", "lsq (2.6)"),
        "–" if q.get("residual_rel_rms") is None else f"{q['residual_rel_rms']:.2%}",
        num(q.get("error_bspstar"), 2),
        us(q["l0"][0]) if q.get("l0") else "–",
        words(q.get("h_half_net")),
        esc(pm.model) if pm else '<span class="fail">no model</span>',
    ]


def _lsq25_linreg_row(prim: str, e: Surface) -> list[str]:
    fl = e.flags
    q5 = e.lsq_25
    lr = e.linreg
    return [
        esc(PRIM_NAMES.get(prim, prim)),
        ci_cell(q5.get("g_inf"), lambda v: f"{v * 1e9:.4g}", fl, "lsq (2.5)"),
        ci_cell(q5.get("h_half"), words, fl, "lsq (2.5) h_half", "lsq (2.5)"),
        "–" if q5.get("residual_rel_rms") is None else f"{q5['residual_rel_rms']:.2%}",
        num(q5.get("error_bsp"), 2),
        ci_cell(lr.get("g"), lambda v: f"{v * 1e9:.4g}", fl, "linreg g", "linreg"),
        ci_cell(lr.get("l"), lambda v: f"{v * 1e6:.4g}", fl, "linreg l", "linreg"),
        esc(lr.get("msg_words")),
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
        '<p class="note">g_inf in ns per 8-byte word; h_half and o in words; ε in s²/word² (mean squared '
        "error of g~ against eq. 2.6 (ε_BSP*) and eq. 2.5 (ε_BSP)), as in the thesis' tables.</p>"
    )
    rows = _rows_by_pattern(g, keys, lambda prim, e: _estimator_row(params.p, prim, e))
    s.add(table(["p", "Fn", "g_inf", "h_half", "o", "ε_BSP*", "ε_BSP", "o (eq. 3.1)", "grid points"], rows, left=2))
    s.add(
        "<h3>Robust least squares, eq. (2.6): T = g_inf (h + h_half + o·c)</h3>"
        f'<p class="note">Relative residuals (T_model − T)/T, loss {esc(LOSS)} (scale {LOSS_SCALE:.0%}); '
        f"{CONFIDENCE:.0%} confidence intervals in brackets (Jacobian with the loss weights, Student t; h_half and "
        "o by the delta method). The constant g_inf·h_half holds "
        "the synchronisation: l0 is the empty-sync latency measured on its own, h_half_net = h_half − l0/g_inf "
        "the start-up cost beyond it (the same fit written T = l0 + g_inf (h + h_half_net + o·c)).</p>"
    )
    head = ["Fn", "g_inf [ns/word]", "h_half [words]", "o [words]", "residual rel. RMS", "ε_BSP*", "l0", "h_half_net"]
    s.add(table([*head, "prediction model"], _rows_by_pattern(g, keys, _lsq26_row)))
    s.add("<h3>Robust least squares, eq. (2.5): T = g_inf (h + h_half); linear regression T = g h + l (Bisseling)</h3>")
    s.add(
        table(
            [
                "Fn",
                "g_inf [ns/word]",
                "h_half [words]",
                "residual rel. RMS",
                "ε_BSP",
                "linreg g [ns/word]",
                "linreg l [µs]",
                "linreg at h*",
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
                        us(as_tests[t]["median"]),
                        f"{us(as_tests[t]['q1'])} – {us(as_tests[t]['q3'])}",
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
                    [str(r["h"]), us(r["t_s"]), ns(r["t_per_h_s"]), f"{us(r['q1'])} – {us(r['q3'])}", str(r["samples"])]
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


def _validation_verdict(val: Mapping[str, Any]) -> str:
    verdict = "pass" if val.get("pass") else "bad"
    return (
        "<p>Eq. (2.6), T(h, c) = A + B c with A = g_inf (h + h_half) and B = g_inf o fitted at each h of the grid "
        "and interpolated between (one fit cannot span the memory hierarchy: see the table of g(h) per h below). "
        f"{val['used']} points with h ≥ h_half used ({val['skipped']} skipped); mean |relative error| "
        f"<b>{val['mean_abs_rel_error']:.2%}</b>, max {val['max_abs_rel_error']:.2%}; "
        f"{val['within_threshold']} of {val['used']} within {VALIDATION_THRESHOLD:.0%}: "
        f'<span class="{verdict}">{"PASS" if val.get("pass") else "FAIL"}</span> '
        f"(the mean must be within {VALIDATION_THRESHOLD:.0%}).</p>"
    )


def _machine_state(run: RawRun, val: Mapping[str, Any], s: Section) -> None:
    """How the machine's speed moved during the run (fit.machine_drift), where it was dated."""
    drift, st = val.get("drift") or {}, val.get("stable_state") or {}
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
            f"|relative error| {st['mean_abs_rel_error']:.2%}."
            if st.get("mean_abs_rel_error") is not None
            else ""
        )
        + "</p>"
    )
    errors = [(r.get("seq"), r.get("rel_error")) for r in val.get("points", []) if "rel_error" in r]
    bound = st.get("factor_bound") or 1.25
    s.image(plots.drift(drift["curve"], bound, errors, f"Machine state, {run.label()}"), "machine state")


def _validation_point_row(r: Mapping[str, Any]) -> list[str]:
    where = [esc(r["key"]), str(r["msg_words"]), str(r["count"]), str(r["h"]), us(r["measured_s"])]
    if "rel_error" not in r:
        return [*where, "–", "–", "skipped " + esc(r.get("skipped")), "–", "–", "–"]
    return [
        *where,
        us(r["predicted_s"]),
        f"{r['rel_error']:+.2%}",
        '<span class="pass">pass</span>' if r["pass"] else '<span class="bad">fail</span>',
        us(r.get("predicted_global_s")),
        f"{r['rel_error_global']:+.2%}" if r.get("rel_error_global") is not None else "–",
        num(r.get("drift_factor"), 3),
    ]


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
        gl = val.get("global") or {}
        if gl.get("mean_abs_rel_error") is not None:
            s.add(
                "<p>With one fit of eq. (2.6) over the whole grid (the parameter table above): mean |relative error| "
                f"{gl['mean_abs_rel_error']:.2%}, max {gl['max_abs_rel_error']:.2%}.</p>"
            )
        _machine_state(run, val, s)
    else:
        s.add("<p>no validation point could be predicted (see the table).</p>")
    head = ["primitive/pattern", "h*", "c", "h", "measured", "predicted (per h)", "rel. error", ""]
    head += ["predicted (one fit)", "rel. error", "machine factor"]
    s.add(table(head, [_validation_point_row(r) for r in vpts]))
    if val.get("used"):
        s.image(plots.validation(vpts, VALIDATION_THRESHOLD, f"Validation, {run.label()}"), "validation")
    # g(h) per value of h: what the per-h model holds.
    lev_keys = [k for k in sorted_keys(list(g)) if g[k].levels]
    if lev_keys:
        hs = sorted({lv.h for k in lev_keys for lv in g[k].levels})
        rows = []
        for hv in hs:
            row = [str(hv)]
            for k in lev_keys:
                lv = next((x for x in g[k].levels if x.h == hv), None)
                row.append(f"{ns(lv.g_h)} / {lv.B_s * 1e9:.3g}" if lv else "–")
            rows.append(row)
        s.add(
            "<p>The per-h model: g(h) = A/h (time per word of the whole superstep, sync included) / B "
            "(ns per extra message), per primitive/pattern.</p>"
        )
        s.add(table(["h (words)"] + [esc(k) for k in lev_keys], rows))
    return s


def memcpy_section(run: RawRun, params: Params, anchor: str) -> Section:
    """memcpy's time per word, and put's against it (fit.memcpy_check)."""
    s = Section.headed(anchor, "memcpy", "memcpy and g")
    g = params.g
    md = params.memcpy_detail
    if not md:
        s.add("<p>memcpy not measured in this run</p>")
        return s
    s.add(
        table(
            ["bytes", "processes copying", "median", "time per 8-byte word", "spread", "reference for g", "note"],
            [
                [
                    str(r["bytes"]),
                    str(r.get("procs", 1)),
                    us(r["median_s"]),
                    ns(r["s_per_word"]),
                    f"{r['spread']:.1%}",
                    "yes" if r.get("reference") else "",
                    f'<span class="note">{esc(r.get("note"))}</span>',
                ]
                for r in md
            ],
        )
    )
    chk = params.checks.get("memcpy", [])
    if chk:
        rows = []
        for r in chk:
            if r["pass"] is None:
                verdict = "–"
            else:
                verdict = '<span class="pass">yes</span>' if r["pass"] else '<span class="bad">no</span>'
            rows.append(
                [
                    esc(r["key"]),
                    str(r.get("h")),
                    ns(r["g_inf"]),
                    ns(r.get("g_inf_global")),
                    ns(r["memcpy_s_per_word"]),
                    num(r["ratio"], 3),
                    verdict,
                ]
            )
        s.add(
            f"<p>Is put's time per word at most {MEMCPY_FACTOR}x memcpy's? memcpy is measured on buffers beyond the "
            "caches, by all p processes at once (the memory traffic of a g superstep), so it is compared with g(h) at "
            "the largest h of the grid (out of the caches too); the g_inf of the one fit over the whole grid, which "
            "the in-cache points pull down, is shown beside it. bsp_put copies twice (into the buffer when called, to "
            "the destination at the sync, as BSPlib's semantics require), bsp_hpput once.</p>"
        )
        head = ["primitive/pattern", "at h", "g(h)", "g_inf (one fit)", "memcpy per word", "ratio"]
        s.add(table([*head, f"at most {MEMCPY_FACTOR}x"], rows))
    bars = [(k, pm.g_inf) for k in sorted_keys(list(g)) if (pm := g[k].predict)]
    if bars and params.memcpy_s_per_word:
        title = f"g_inf against memcpy, {run.label()}"
        s.image(plots.memcpy_compare(bars, params.memcpy_s_per_word, MEMCPY_FACTOR, title), "memcpy comparison")
    return s


# The sections of one run's report, in page order.
RUN_SECTIONS: tuple[Callable[[RawRun, Params, str], Section], ...] = (
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
    parts: list[str] = []
    images = 0
    for section in RUN_SECTIONS:
        s = section(run, params, anchor)
        parts += s.parts
        images += s.images
    return "\n".join(parts), images


METHOD_NOTES = f"""
<h2>How the numbers were computed</h2>
<ul class="note">
<li>Times are medians over repetitions of the superstep time, which bspprobe takes as the maximum over
processes; sizes are in 8-byte words. g~(h*, c) = median T / h with h = c·h* (thesis 3.2).</li>
<li>Weighted estimators: eq. (3.2) g_inf = Σ g~ h³ / Σ h³; (3.3) g_small with weight h⁻³; (3.4) h_half =
(g_small/g_inf − 1) h_min; (3.5) g_mm over the smallest message size, weight c²; (3.6) o = (g_mm/g_inf − 1) h*_min;
(3.1) the Oxford bspprobe's o = (g_max/g_min − 1) h_max, for reference.</li>
<li>ε_BSP and ε_BSP* (App. B.1): mean squared error of g~ against eq. (2.5) and (2.6), in s²/word².</li>
<li>Least squares: eq. (2.6) multiplied by h, T = g_inf (h + h_half + o·c), and eq. (2.5), T = g_inf (h + h_half),
fitted to all grid points with relative residuals and the robust {LOSS} loss; {CONFIDENCE:.0%} intervals from the
Jacobian with IRLS weights and Student's t. The prediction model is eq. (2.6) when its o is significant, else eq. (2.5).</li>
<li>A parameter that comes out negative or whose interval reaches zero is not reported (null in params.json) and
shown as "failed fit" with the reason.</li>
<li>Outliers: samples more than 1.5 IQR away from their point's median; spread: IQR / median.</li>
</ul>
"""


def page(title: str, body: str) -> str:
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
        f'<h1>{esc(title)}</h1>\n<p class="note">written by bspkit {__version__} on {now}</p>\n'
        f"{body}\n</body></html>\n"
    )


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


# -------------------------------------------------------------------------- compare


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


def _g_value(e: Surface, name: str) -> float | None:
    """A parameter of one surface for comparison: the LSQ (2.6) value, else the estimator's."""
    if e.lsq.get(name):
        return e.lsq[name][0]
    return getattr(e, name)


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


def compare_report(entries: Sequence[tuple[str, Params]]) -> tuple[str, int]:
    """The comparison page of several runs (label, params); returns (html, number of images)."""
    params = [pr for _, pr in entries]
    nimg = 0
    parts: list[str] = []
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
                f"{bb}<br><span class='note'>{num(s, 3)}</span>" if s is not None else "n/a"
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
    param_table(
        "g_inf [ns/word]",
        gkeys,
        lambda pr, k: _g_value(pr.g.get(k, MISSING_SURFACE), "g_inf"),
        lambda v: f"{v * 1e9:.4g}",
    )
    param_table("h_half [words]", gkeys, lambda pr, k: _g_value(pr.g.get(k, MISSING_SURFACE), "h_half"), words)
    param_table("o [words]", gkeys, lambda pr, k: _g_value(pr.g.get(k, MISSING_SURFACE), "o"), words)
    param_table(
        "g_inf, weighted estimator eq. (3.2) [ns/word]",
        gkeys,
        lambda pr, k: pr.g.get(k, MISSING_SURFACE).g_inf,
        lambda v: f"{v * 1e9:.4g}",
    )
    lvars = [v for v in L_NAMES if any(v in pr.l for pr in params)] + sorted(
        {v for pr in params for v in pr.l if v not in L_NAMES}
    )
    param_table("latency l [µs]", lvars, lambda pr, v: pr.l.get(v), lambda v: f"{v * 1e6:.4g}")
    kernels = sorted({k for pr in params for k in pr.f})
    param_table("f [ns per operation]", kernels, lambda pr, k: pr.f.get(k), lambda v: f"{v * 1e9:.4g}")
    tests = [t for t in AS_ORDER if any(t in pr.as_suite.get("tests", {}) for pr in params)]
    param_table(
        "As suite latency tests [µs]",
        tests,
        lambda pr, t: (pr.as_suite.get("tests", {}).get(t) or {}).get("median"),
        lambda v: f"{v * 1e6:.4g}",
    )
    hs = sorted({r["h"] for pr in params for r in pr.as_suite.get("total_exchange", [])})

    def te_get(pr: Params, h: str) -> float | None:
        for r in pr.as_suite.get("total_exchange", []):
            if str(r["h"]) == h:
                return r["t_per_h_s"]
        return None

    param_table("As total exchange t/h [ns/word] by h", [str(h) for h in hs], te_get, lambda v: f"{v * 1e9:.4g}")
    param_table("memcpy [ns per word]", ["memcpy"], lambda pr, _k: pr.memcpy_s_per_word, lambda v: f"{v * 1e9:.4g}")
    param_table(
        "validation mean |rel. error|",
        ["eq. (2.6)"],
        lambda pr, _k: pr.validation.get("mean_abs_rel_error"),
        lambda v: f"{v:.2%}",
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
