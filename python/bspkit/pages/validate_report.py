"""`bspkit validate`: sweep an algorithm's problem sizes and parameters, predict every run
from a probe's parameter file and the algorithm's own f, and write the thesis-style table
(Appendices D-G: efficiency and mean relative prediction error per model) and the
prediction-versus-measurement plots as one self-contained HTML page."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

from bspkit.algorithms import Algorithm
from bspkit.console import write_text
from bspkit.fileformat import JsonObject
from bspkit.measure.validation import MIN_VALIDATED_TIME_S, Summary
from bspkit.model import comm_models, drift, trust, verdict
from bspkit.pages.htmlkit import esc, img, page, table, verdict_box
from bspkit.pages.plots import png_bytes
from bspkit.pages.report import split_html
from bspkit.units import plain, quantity


def _log_log_axes(ax: Any, xlabel: str, ylabel: str, title: str, legend_fontsize: int) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_fontsize)
    ax.grid(True, which="both", alpha=0.3)


def plot_pred_vs_measured(rows: Sequence[JsonObject], title: str, min_time_s: float) -> bytes:
    fig, ax = plt.subplots(figsize=(6.0, 5.0))
    meas = [r["measured_s"] for r in rows]
    lo, hi = min(meas), max(meas)
    for m in comm_models.NAMES:
        xs = [r["measured_s"] for r in rows if r["predicted_s"].get(m)]
        ys = [r["predicted_s"][m] for r in rows if r["predicted_s"].get(m)]
        if xs:
            color, marker = comm_models.get(m).style
            ax.scatter(xs, ys, label=m, color=color, marker=marker, alpha=0.75)
            lo, hi = min(lo, min(ys)), max(hi, max(ys))
    ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="predicted = measured")
    ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="grey", alpha=0.2, label="±10 %")
    ax.axvline(min_time_s, color="red", lw=0.8, ls=":", label=f"{min_time_s} s (shorter runs not scored)")
    _log_log_axes(ax, "measured time (s, median)", "predicted time (s)", title, 8)
    return png_bytes(fig)


def plot_time_vs_size(rows: Sequence[JsonObject], sweep: str | None, title: str) -> bytes:
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    groups: dict[Any, list[JsonObject]] = {}
    for r in rows:
        groups.setdefault(r["params"].get(sweep) if sweep else None, []).append(r)
    for i, (gval, rs) in enumerate(sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0]))):
        rs = sorted(rs, key=lambda r: r["params"].get("n", 0))
        n = [r["params"].get("n") for r in rs]
        color = plt.cm.tab10(i % 10)
        # one group without a swept parameter: "measured" / "predicted (model)", not "measured (measured)"
        prefix = f"{sweep} = {gval} " if sweep else ""
        ax.plot(n, [r["measured_s"] for r in rs], marker="o", color=color, label=f"{prefix}measured")
        best = rs[0].get("best_model")  # the model with the least mean error over all runs
        if best:
            ax.plot(
                n, [r["predicted_s"].get(best) for r in rs], ls="--", color=color, label=f"{prefix}predicted, {best}"
            )
    _log_log_axes(ax, "problem size n", "time (s)", title, 7)
    return png_bytes(fig)


def pct_or_dash(v: float | None) -> str:
    """A share as "12.3%", or "-"."""
    return f"{v:.1%}" if v is not None else "-"


DRIFT_STYLE = {
    "f": ("tab:purple", "o", "f (dot products)"),
    "g": ("tab:green", "^", "g (h = 262144)"),
    "g_small": ("tab:olive", "v", "g (h = 2048)"),
    "l": ("tab:red", "s", "l (empty sync)"),
    "l_shift": ("tab:brown", "D", "l (after a shift)"),
}
# Drift within this factor of 1 is the calibration's own noise on a quiet machine, not a move.
QUIET_DRIFT = 1.1
TARGET = 0.10  # the mean relative error the predictions aim at


def calibration_minutes(calibrations: Sequence[JsonObject]) -> list[float]:
    """Minutes since the first calibration (by their dates; the index where a date is missing)."""
    stamps = []
    for i, c in enumerate(calibrations):
        try:
            stamps.append(dt.datetime.fromisoformat(str(c.get("date")).replace("Z", "+00:00")).timestamp())
        except ValueError:
            return [float(i) for i in range(len(calibrations))]
    return [(t - stamps[0]) / 60.0 for t in stamps]


def plot_drift(calibrations: Sequence[JsonObject], title: str) -> bytes:
    """Each parameter's drift (now / the probe) at every calibration of the session."""
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    xs = calibration_minutes(calibrations)
    for key, (color, marker, label) in DRIFT_STYLE.items():
        pts = [(x, c["drift"]["headline"].get(key)) for x, c in zip(xs, calibrations, strict=True)]
        pts = [(x, y) for x, y in pts if y]
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker=marker, color=color, label=label, alpha=0.8)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhspan(1 / QUIET_DRIFT, QUIET_DRIFT, color="grey", alpha=0.15, label=f"within x{plain(QUIET_DRIFT)}")
    ax.set_yscale("log")
    ratio = FuncFormatter(lambda v, _pos: f"x{plain(v)}")
    ax.yaxis.set_major_formatter(ratio)
    ax.yaxis.set_minor_formatter(ratio)
    ax.set_xlabel("minutes since the first calibration")
    ax.set_ylabel("drift (now / the probe)")
    ax.set_title(title)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    return png_bytes(fig)


def drift_range(calibrations: Sequence[JsonObject]) -> dict[str, tuple[float, float]]:
    """(smallest, largest) drift of each headline parameter over the session."""
    out = {}
    for key in DRIFT_STYLE:
        vals = [c["drift"]["headline"].get(key) for c in calibrations]
        vals = [v for v in vals if v]
        if vals:
            out[key] = (min(vals), max(vals))
    return out


def drift_sentence(result: JsonObject) -> str | None:
    """How much the machine moved during the sweep, and whether the model or the machine
    explains the error; None without calibration."""
    cals = result.get("calibrations") or []
    cal = (result.get("summary") or {}).get("all", {}).get("calibrated")
    if not cals or not cal:
        return None
    ranges = drift_range(cals)
    worst = max((max(hi, 1 / lo) for lo, hi in ranges.values()), default=1.0)
    moved = ", ".join(
        f"{k} x{lo:.2f}" + (f"-{hi:.2f}" if hi / lo > 1.005 else "")
        for k, (lo, hi) in ranges.items()
        if k in ("f", "g", "l")
    )
    best = cal["raw"].get("best_model")
    raw_e, cal_e = cal["raw"].get("best_error"), cal.get(best) if best else None
    if raw_e is None or cal_e is None:
        return f"Drift against the probe over {len(cals)} calibrations: {moved}. No run long enough to score."
    errors = f"mean |relative error| ({best}) {raw_e:.1%} with the parameters as probed, {cal_e:.1%} calibrated"
    flagged = f"; {cal['flagged']} run(s) flagged and left out" if cal.get("flagged") else ""
    moved_much = worst > QUIET_DRIFT
    if raw_e <= TARGET and cal_e <= TARGET:
        who = "the model predicts within the target either way" + (
            ", the machine's moves hardly touch these runs" if moved_much else ""
        )
    elif cal_e <= TARGET:
        who = "the calibration recovers the error: the machine, not the model, explains it"
    elif not moved_much:
        who = "the machine stayed where the probe found it, so the error is the model's"
    elif cal_e < 0.7 * raw_e:
        who = "the calibration recovers part of it: the machine explains some, the model the rest"
    else:
        who = "the machine moved, but the calibrated error stays: the model (or a drift the kernels do not see) explains it"
    return f"The machine's drift against the probe ({len(cals)} calibrations): {moved}; {errors}{flagged}: {who}."


def _pct(v: float | None) -> str:
    """A percentage in a column headed (%)."""
    return quantity(v, "%", 3, show_unit=False)


def _time(v: float | None) -> str:
    return quantity(v, "s")


def _load(v: Any) -> str:
    """A load average (1, 5, 15 minutes) as "0.5, 0.4, 0.3"."""
    return ", ".join(quantity(x, "", 3) for x in v) if isinstance(v, list) and v else "not recorded"


def blas_core_types(result: JsonObject) -> tuple[str, str]:
    """(OPENBLAS_CORETYPE of the runs, the core OpenBLAS used in the probe): from the drivers'
    output where a row has it, else the variable as validate recorded it ("not set" where it
    was not set), else "not recorded"; the probe's core from its header."""
    runs = next((r["blas_coretype"] for r in result.get("rows", []) if r.get("blas_coretype")), None)
    if runs is None:
        runs = (result["blas_coretype"] or "not set") if "blas_coretype" in result else "not recorded"
    probe = (result.get("machine") or {}).get("blas_corename") or "not recorded"
    return str(runs), str(probe)


def _sweep_order(v: Any) -> tuple[int, float, str]:
    """Swept values in numeric order where they are numbers ("2" before "10")."""
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def sorted_rows(rows: Sequence[JsonObject], sweep: str | None) -> list[JsonObject]:
    """The runs by swept value, then problem size: the order of the summary table."""
    return sorted(
        rows, key=lambda r: (_sweep_order(r["params"].get(sweep)) if sweep else (0, 0.0, ""), r["params"].get("n", 0))
    )


def comm_matters_sentence(s: JsonObject) -> str:
    """Which model wins on the runs where communication matters, in one sentence."""
    cm = s.get("comm_matters") or {}
    share = f"{100 * cm.get('min_share', 0.2):.0f} %"
    if not cm.get("runs_used"):
        return (
            f"No scored run spends {share} or more of its predicted time in communication and synchronization: "
            "the runs cannot tell the g models apart."
        )
    errors = ", ".join(f"{m} {_pct(cm.get(m))} %" for m in comm_models.NAMES)
    return (
        f"Where communication matters ({cm['runs_used']} run(s) with at least {share} of the predicted time in "
        f"communication and synchronization), {cm['best_model']} predicts best: mean |relative error| {errors}."
    )


def band_sentence(s: JsonObject) -> str | None:
    """The 10-90% band's coverage with its Wilson 95% interval (bspkit.model.trust.coverage), and
    the band of the parameters' spread alone beside it; None without banded runs."""
    cov = s.get("band_check")
    if not cov:
        if s.get("band_coverage") is None:
            return None
        return f"The 10-90% band held {s['band_coverage']:.0%} of {s['band_runs']} run(s)."
    what = "The 10-90% band (the parameters' spread, the machine's noise, the model's residuals)"
    text = trust.coverage_text(cov, what)
    alone = s.get("band_check_parameters")
    if alone:
        text += f"; the parameters' spread alone held {alone['coverage']:.0%}"
    return text + "."


def verdict_block(summary: JsonObject) -> str:
    """The answer first (bspkit.model.verdict): can the predictions be trusted, and what next."""
    v = verdict.validate_verdict(summary)
    return verdict_box(v.level, v.sentence, v.advice)


def marked_runs(rows: Sequence[JsonObject], sweep: str | None) -> str:
    """The runs during which a process lost its core in every repetition (bspkit.measure.machine_state):
    the machine's, scored apart, each with its evidence and its prediction as the machine was."""
    marked = [r for r in sorted_rows(rows, sweep) if (r.get("machine_state") or {}).get("all_marked")]
    partly = sum(1 for r in rows if (r.get("machine_state") or {}).get("marked_reps") and r not in marked)
    if not marked and not partly:
        return ""
    out = ["<h2>Runs the machine spoiled</h2>"]
    if partly:
        out.append(
            f"<p>{partly} run(s) lost a core in some repetitions: those repetitions are left out of the run's "
            "measured time (the median of the others).</p>"
        )
    if marked:
        head = ["n", *([sweep] if sweep else []), "measured", "stretch"] + [f"err {mm} (%)" for mm in comm_models.NAMES]
        head += [f"as it was {mm} (%)" for mm in comm_models.NAMES] + ["evidence (the worst repetition)"]
        body = [
            [
                str(r["params"].get("n")),
                *([str(r["params"].get(sweep, ""))] if sweep else []),
                _time(r["measured_s"]),
                f"x{r['machine_state']['stretch']:.2f}",
            ]
            + [_pct(r["rel_error"].get(mm)) for mm in comm_models.NAMES]
            + [_pct((r.get("rel_error_as_it_was") or {}).get(mm)) for mm in comm_models.NAMES]
            + [str(r["machine_state"].get("evidence"))]
            for r in marked
        ]
        out.append(
            f"<p>{len(marked)} run(s) lost a core in every repetition: scored apart from the model's error, and "
            "predicted as the machine was (the prediction stretched by 1 / the share of its core the slowest "
            "process held).</p>"
        )
        out.append(table([esc(h) for h in head], [[esc(c) for c in row] for row in body]))
    return "\n".join(out)


def html_report(result: JsonObject) -> tuple[str, int]:
    """The page of one `bspkit validate` run (result as written to validate.json)."""
    alg = result["algorithm"]
    rows = result["rows"]
    summary = result["summary"]
    sweep = result.get("sweep")
    min_time_s = summary["all"]["min_time_s"]  # runs shorter than this are not scored
    parts: list[str] = []
    m = result.get("machine", {})
    core_runs, core_probe = blas_core_types(result)
    parts.append(
        "<p>"
        + esc(
            f"{alg} ({result.get('description', '')}) on {m.get('host')} ({m.get('cpu')}), back end {result['backend']}, "
            f"p = {result['p']}; BLAS core type (OPENBLAS_CORETYPE) {core_runs}, core in use at the probe {core_probe}; "
            f"parameters from {result['params_file']} "
            f"(probe of {m.get('date')}, {m.get('backend')}, p = {result.get('params_p')}); load average "
            f"{_load(result.get('loadavg_start'))} at start, {_load(result.get('loadavg_end'))} at the end."
        )
        + "</p>"
    )
    parts.append(
        '<p class="note">Prediction T = &Sigma; over supersteps (w f + comm + l): w and h, the message count c and size h* '
        "of every superstep counted by the driver itself; f the algorithm's kernel on the run's block shape, timed on "
        "every process at once (the columns 'f alone' use it timed on process 0 alone, as thesis 3.1 does); "
        f"{comm_models.legend_html()}. Efficiency: the one-process kernel "
        "time of the whole problem over p T (eq. 4.12). Mean relative error over the runs of "
        f"{min_time_s} s or longer.</p>"
    )
    # Thesis-style table: one row per value of the swept parameter.
    head = (
        [sweep or "", "runs", "efficiency (%)"]
        + [f"rel. error (%) {mm}" for mm in comm_models.NAMES]
        + [f"{mm}, f alone" for mm in comm_models.NAMES]
    )

    def cells(s: JsonObject) -> list[str]:
        fa = s.get("f_alone") or {}
        return (
            [str(s["runs_used"]) + f" of {s['runs']}", _pct(s.get("efficiency"))]
            + [_pct(s.get(mm)) for mm in comm_models.NAMES]
            + [_pct(fa.get(mm)) for mm in comm_models.NAMES]
        )

    body = [[str(gval)] + cells(s) for gval, s in summary["by_sweep"]]
    s = summary["all"]
    body.append(["all"] + cells(s))
    # the answer first: which model predicts, and how well
    best = s.get("best_model")
    if best:
        verdict = "meets" if s["best_error"] <= 0.10 else "misses"
        parts.append(
            f"<p>best model: <b>{esc(best)}</b>, mean |relative error| {_pct(s['best_error'])} % ({verdict} the 10 % target).</p>"
        )
    parts.append(f"<p>{esc(comm_matters_sentence(s))}</p>")
    parts.append(split_html(trust.Split.from_json(s.get("split") or {}), best or "the model"))
    band = band_sentence(s)
    if band:
        parts.append(f"<p>{esc(band)}</p>")
    parts.insert(0, verdict_block(s))
    parts.append(marked_runs(rows, sweep))
    sentence = drift_sentence(result)
    if sentence:
        parts.insert(1, f"<p><b>{esc(sentence)}</b></p>")
    parts.append("<h2>Efficiency and mean relative prediction error (layout of Tables D-G)</h2>")
    parts.append(table([esc(h) for h in head], [[esc(c) for c in r] for r in body]))
    # Every run.
    head = ["n", sweep or "", "S", "H (words)", "W", "measured", "efficiency (%)", "f per unit"]
    head += list(comm_models.NAMES) + [f"err {mm} (%)" for mm in comm_models.NAMES]
    with_cal = any(r.get("calibrated") for r in rows)
    if with_cal:
        head += [f"calibrated err {mm} (%)" for mm in comm_models.NAMES] + ["drift g, l over the run", "flagged: moved"]
    body = []
    for r in sorted_rows(rows, sweep):
        c = r.get("calibrated") or {}
        cal_cells = (
            [_pct((c.get("rel_error") or {}).get(mm)) for mm in comm_models.NAMES]
            + [
                ", ".join(f"x{(c.get('drift') or {}).get(k) or float('nan'):.2f}" for k in ("g", "l")) if c else "",
                (f"x{c['within_run_prediction']:.2f}" if c.get("flagged") else "") if c else "",
            ]
            if with_cal
            else []
        )
        body.append(
            [
                str(r["params"].get("n")),
                str(r["params"].get(sweep, "")) if sweep else "",
                str(r["S"]),
                quantity(r["H"], "words", show_unit=False),
                quantity(r["W"], "", 4),
                _time(r["measured_s"]),
                _pct(r.get("efficiency")),
                quantity(r["f_s_per_unit"], "s/op"),
            ]
            + [_time(r["predicted_s"].get(mm)) for mm in comm_models.NAMES]
            + [_pct(r["rel_error"].get(mm)) for mm in comm_models.NAMES]
            + cal_cells
        )
    parts.append("<h2>Every run</h2>")
    parts.append(table([esc(h) for h in head], [[esc(c) for c in r] for r in body]))
    nimg = 0
    if result.get("calibrations"):
        parts.append(drift_section(result, min_time_s))
        nimg += 1
    parts.append("<h2>Prediction against measurement</h2>")
    parts.append(img(plot_pred_vs_measured(rows, f"{alg}, p = {result['p']}", min_time_s), "predicted vs measured"))
    parts.append(img(plot_time_vs_size(rows, sweep, f"{alg}: time over n"), "time over n"))
    nimg += 2
    parts.append(f'<p class="note">command: {esc(result.get("command", ""))}</p>')
    return page(f"bspkit validate: {alg}, {result['backend']}, p = {result['p']}", "\n".join(parts)), nimg


def drift_section(result: JsonObject, min_time_s: float) -> str:
    """The drift plot, raw against calibrated error per model, the flagged runs and the cost."""
    cals = result["calibrations"]
    s = result["summary"]["all"].get("calibrated") or {}
    out = ["<h2>Drift: the machine against its probe, and the calibrated predictions</h2>"]
    out.append(
        '<p class="note">Inside every run, before its repetitions and after them (and its f), a short calibration '
        "(bspprobe's: two dot products on every process for f, a put h-relation at h = 2048 and 262144 for g, an "
        "empty sync and one after a shift for l) measures the same quantities as the probe's own calibration "
        "rounds; its ratio to them is the drift. It runs in the run's own process because on a shared VM the "
        "state that decides g and l can be set per process. The calibrated prediction scales g and l by the "
        "drift over the run (the geometric mean of before and after); f is the run's own, which the driver "
        "times right after its repetitions, scaled by the f drift over the run relative to that moment "
        "(sqrt(f before / f after)). A run whose predictions with the calibration before and with the one after "
        f"differ by more than x{plain(result.get('within_run_flag', 1.2))} is flagged (the machine moved during it) "
        "and left out of the calibrated mean.</p>"
    )
    out.append(img(plot_drift(cals, f"{result['algorithm']}: drift over the sweep"), "drift over the sweep"))
    raw = s.get("raw") or {}
    head = ["", *comm_models.NAMES]
    body = [
        ["raw: parameters as probed"] + [_pct(raw.get(m)) for m in comm_models.NAMES],
        ["calibrated"] + [_pct(s.get(m)) for m in comm_models.NAMES],
    ]
    out.append(
        f"<p>Mean |relative error| (%) over the {s.get('runs_used', 0)} scored run(s) (of {min_time_s} s or longer) "
        f"that were not flagged; {s.get('flagged', 0)} flagged.</p>"
    )
    out.append(table([esc(h) for h in head], [[esc(c) for c in r] for r in body]))
    flagged = [r for r in result["rows"] if (r.get("calibrated") or {}).get("flagged")]
    if flagged:
        rows = [
            [
                str(r["params"].get("n")),
                str(r.get("sweep_value") or ""),
                f"x{r['calibrated']['within_run_prediction']:.2f}",
                ", ".join(f"{k} x{v:.2f}" for k, v in r["calibrated"]["within_run"].items() if v),
            ]
            for r in flagged
        ]
        out.append("<p>Flagged runs (the machine moved during them: after / before):</p>")
        out.append(table(["n", "value", "prediction after / before", "f, g, l after / before"], rows))
    cost = result.get("calibration_cost") or {}
    if cost.get("share") is not None:
        out.append(
            f"<p>Cost: {cost['rounds']} calibrations took {quantity(cost['calibration_s'], 's')} with their launches, "
            f"{cost['share']:.1%} of the sweep's {quantity(cost['sweep_s'], 's')}.</p>"
        )
    return "\n".join(out)


def write_page(result: JsonObject, outdir: Path) -> tuple[Path, int]:
    """validate.html beside validate.json: (its path, its plots)."""
    html, nimg = html_report(result)
    page_path = outdir / "validate.html"
    write_text(page_path, html)
    return page_path, nimg


# ------------------------------------------------------------------ the terminal


def _print_table(
    alg: Algorithm, backend: str, nprocs: int, by_sweep: list[tuple[Any, Summary]], overall: Summary
) -> None:
    """The summary as the thesis' Tables D-G lay it out: the mean |relative error| per model
    for each value of the second parameter and over all, the best model, the calibrated errors."""
    print(
        f"{alg.name} on {backend}, p = {nprocs}: {overall['runs']} runs, "
        f"{overall['runs_used']} of >= {MIN_VALIDATED_TIME_S} s"
    )
    width = {m: max(9, len(m)) for m in comm_models.NAMES}  # a column as wide as its model's name
    print(
        f"  {'':<14} {'efficiency':>10} "
        + " ".join(f"{m:>{width[m]}}" for m in comm_models.NAMES)
        + "   (mean |relative error|)"
    )
    sweep_key = alg.sweep_param
    for v, sm in [*by_sweep, ("all", overall)]:
        cells = " ".join(
            f"{sm[m]:>{width[m]}.1%}" if sm.get(m) is not None else f"{'-':>{width[m]}}" for m in comm_models.NAMES
        )
        eff = f"{sm['efficiency']:>10.1%}" if sm.get("efficiency") is not None else f"{'-':>10}"
        print(f"  {(sweep_key + ' ' + str(v)) if sweep_key and v != 'all' else str(v):<14} {eff} {cells}")
    if overall.get("best_model"):
        print(f"  best model: {overall['best_model']} ({overall['best_error']:.1%})")
    band = band_sentence(overall)
    if band:
        print(f"  {band}")
    sp = trust.Split.from_json(overall.get("split") or {})
    if sp is not None:
        print(f"  error split: {trust.split_sentence(sp, overall.get('best_model') or 'the model')}")
    print("  " + comm_matters_sentence(overall))
    cal = overall.get("calibrated")
    if cal:
        raw = cal["raw"]
        cells = "; ".join(f"{m} {pct_or_dash(raw.get(m))} -> {pct_or_dash(cal.get(m))}" for m in comm_models.NAMES)
        print(f"  raw -> calibrated (mean |relative error|, {cal['runs_used']} runs): {cells}")
        if cal["flagged"]:
            print(
                f"  {cal['flagged']} run(s) flagged: the machine moved during them enough to change their "
                f"prediction by more than x{plain(drift.WITHIN_RUN_FLAG)}"
            )


def print_summary(alg: Algorithm, result: JsonObject) -> None:
    """A finished sweep on the terminal: the verdict (bspkit.model.verdict), the table, the runs the
    machine spoiled, the machine's drift and the calibration's cost."""
    v = verdict.validate_verdict(result["summary"]["all"])
    print("\n".join(v.lines()))
    _print_table(alg, result["backend"], result["p"], result["summary"]["by_sweep"], result["summary"]["all"])
    for row in result["rows"]:
        state = row.get("machine_state") or {}
        if state.get("all_marked"):
            errs = ", ".join(
                f"{m} {e:+.1%}"
                for m in comm_models.NAMES
                if (e := (row.get("rel_error_as_it_was") or {}).get(m)) is not None
            )
            print(
                f"  the machine's: n = {row['size']} {row['sweep_value'] or ''} ({state['evidence']}); as it was: {errs}"
            )
    sentence = drift_sentence(result)
    if sentence:
        print("  " + sentence)
        cost = result.get("calibration_cost") or {}
        if cost.get("share") is not None:
            print(
                f"  calibration: {cost['rounds']} rounds, {cost['calibration_s']:.1f} s = {cost['share']:.1%} of the sweep"
            )


__all__ = ["html_report", "print_summary", "write_page"]
