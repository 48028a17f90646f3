"""What `bspkit profile FILE` shows (the command: bspkit.commands.profile): the BSP cost of
a profiled run (bspkit.model.profile) on the terminal, as JSON (--json) and as a self-contained
HTML page (-o): summary, timeline, the costliest supersteps, the sync sites, load imbalance,
every superstep, and with --params the predicted time on that machine per superstep and in
total under the three g models.

matplotlib (the plots) is imported by the functions that draw them: the terminal summary
and the JSON do not need it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bspkit.model import breakdown as bd
from bspkit.model import comm_models
from bspkit.model import profile as pf
from bspkit.model import supersteps as pd
from bspkit.pages import breakdown_report as br
from bspkit.pages.htmlkit import contents, esc, img, page, table
from bspkit.units import quantity

# the per-superstep tables of the page stop here (the JSON has every superstep)
MAX_TABLE_ROWS = 2000
# supersteps are marked on the timeline up to this many
MAX_MARKED_STEPS = 200
# the timeline draws at most this many bars per process and kind (supersteps are merged beyond)
MAX_TIMELINE_BARS = 2000
# the imbalance plot draws bars up to this many supersteps, lines beyond
BAR_STEPS = 100


@dataclass
class Predictions:
    """What --params asks for: the run on that machine, and where known the model of the
    machine the profile was taken on (the same parameter file, or --compute-from's)."""

    there: pf.Prediction
    here: pf.Prediction | None  # --compute-from's file, compute unscaled

    def model_of_here(self) -> pf.Prediction | None:
        if self.here is not None:
            return self.here
        return self.there if self.there.same_machine else None


# ------------------------------------------------------------------ text


def _t(v: float | None) -> str:
    return quantity(v, "s")


def _w(v: float | None) -> str:
    return quantity(v, "words")


def _x(v: float | None) -> str:
    return quantity(v, "", 3)


def _signed_pct(v: float | None) -> str:
    return "–" if v is None else ("+" if v >= 0 else "") + quantity(v, "%", 3)


def run_title(a: pf.Analysis) -> str:
    h = a.profile.header
    argv = " ".join(str(x) for x in h.get("argv") or []) or str(h.get("program") or "?")
    phase = f" (phase '{a.phase}')" if a.phase is not None else ""
    return f"{argv} on {h.get('host', '?')}, {h.get('backend', '?')}, p = {a.p}{phase}"


def measured_what(a: pf.Analysis) -> str:
    if a.phase is None:
        return "bsp_begin .. bsp_end, max over processes"
    return "the phase's first superstep's start .. its last one's end"


def _aligned(head: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = ()) -> list[str]:
    """A text table: columns padded to their widest cell, those in `left` left-aligned."""
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(head).rstrip(), *(line(r).rstrip() for r in rows)]


def step_row(s: pf.StepStats) -> list[str]:
    return [
        str(s.step),
        _t(s.time_s),
        _t(s.compute.max),
        _x(s.imbalance),
        _t(s.wait.max),
        _w(s.h),
        str(s.count),
        s.site,
    ]


STEP_HEAD = ["step", "time", "compute max", "imbalance", "wait max", "h", "messages", "bsp_sync site"]


def summary_lines(
    a: pf.Analysis, top: int, preds: Predictions | None, breakdown: bd.Breakdown | None = None
) -> list[str]:
    end = a.steps[-1].end == "bsp_end" if a.steps else False
    out = [
        f"profile {a.profile.path} (section {a.profile.section}): {run_title(a)}",
        f"  S = {a.S} supersteps{' (and the last, ended by bsp_end)' if end else ''}; "
        f"W = {_t(a.W_s)} (sum of the max compute time); H = {_w(a.H)}",
        f"  measured {_t(a.measured_s)} ({measured_what(a)}); "
        f"waiting in bsp_sync {_t(a.wait_s)} (sum of the max waits)",
    ]
    if len(a.profile.sections) > 1:
        others = [s for s in a.profile.sections if s != a.profile.section]
        out.append(f"  the file also holds section(s) {pf.number_ranges(others)}: --section N shows another")
    if a.steps and top > 0:
        out.append(f"  the costliest supersteps (of {len(a.steps)}):")
        out += [
            "    " + ln
            for ln in _aligned(STEP_HEAD, [step_row(s) for s in a.costliest(top)], left=[len(STEP_HEAD) - 1])
        ]
    if a.has_phases and a.phase is None:
        out.append("  by phase (bspk_profile_phase):")
        rows = [
            [str(r["phase"] or "–"), str(r["supersteps"]), _t(r["time_s"]), _t(r["compute_max_s"]), _w(r["H"])]
            for r in a.by_phase()
        ]
        out += ["    " + ln for ln in _aligned(["phase", "supersteps", "time", "compute max", "H"], rows, left=[0])]
    if breakdown is not None:
        out += breakdown_lines(breakdown, top)
    if preds is not None:
        out += prediction_lines(a, preds)
    return out


def breakdown_lines(b: bd.Breakdown, top: int) -> list[str]:
    """Horvitz & Bisseling's five parts in total, per phase and for the costliest supersteps."""
    total = b.total
    a = b.analysis
    out = [
        f"  where the time goes (Horvitz & Bisseling's breakdown; the supersteps' time {_t(total.total)}, "
        f"measured {_t(a.measured_s)}):"
    ]
    rows = [[name, _t(v), br.share(v, total.total)] for name, v, _ in bd.shares(total)]
    out += ["    " + ln for ln in _aligned(["part", "time", "share"], rows, left=[0])]
    out += ["    " + n for n in br.notes(b)]
    if a.has_phases and a.phase is None:
        out.append("    by phase:")
        rows = [[str(phase or "–"), *br.part_cells(parts)] for phase, parts in b.by_phase()]
        out += ["      " + ln for ln in _aligned(["phase", *br.HEAD], rows, left=[0])]
    if top > 0 and a.steps:
        parts_of = {s.step: parts for s, parts in zip(a.steps, b.steps, strict=True)}
        out.append(f"    the costliest supersteps (of {len(a.steps)}):")
        rows = [[str(s.step), *br.part_cells(parts_of[s.step])] for s in a.costliest(top)]
        out += ["      " + ln for ln in _aligned(["step", *br.HEAD], rows)]
    return out


def prediction_lines(a: pf.Analysis, preds: Predictions) -> list[str]:
    there = preds.there
    here = preds.model_of_here()
    scale = f"compute x {quantity(there.compute_scale, '', 4)}" + (f": {there.scale_note}" if there.scale_note else "")
    out = [f"  predicted on the machine of {there.params_path} ({scale}; compute {_t(there.compute_s)}):"]
    head = ["model", "predicted", "comm + sync"]
    if here is not None:
        head += ["model of here", "error"]
    rows = []
    for m in comm_models.NAMES:
        row = [m, _t(there.total[m]), _t(there.comm[m])]
        if here is not None:
            row += [_t(here.total[m]), _signed_pct(pd.relative_error(here.total[m], a.measured_s))]
        rows.append(row)
    out += ["    " + ln for ln in _aligned(head, rows, left=[0])]
    if here is not None:
        which = "the same parameter file" if here is there else preds.here.params_path if preds.here else ""
        out.append(f"    model of here: {which}, against the measured {_t(a.measured_s)}")
    else:
        out.append(
            f"    measured here {_t(a.measured_s)} ({there.params_path} is another machine, back end or p; "
            "--compute-from HERE.json adds the model of this one)"
        )
    return out


# ------------------------------------------------------------------ JSON


def analysis_json(
    a: pf.Analysis, top: int, preds: Predictions | None, breakdown: bd.Breakdown | None = None
) -> dict[str, Any]:
    out = a.to_json()
    out["costliest"] = [s.step for s in a.costliest(top)]
    if breakdown is not None:
        out["breakdown"] = breakdown.to_json()
    if preds is not None:
        out["prediction"] = preds.there.to_json()
        here = preds.model_of_here()
        out["model_of_here"] = here.to_json() if here is not None else None
    return out


# ------------------------------------------------------------------ plots


def _time_scale(span_s: float) -> tuple[float, str]:
    """(factor, unit) for a time axis spanning span_s: µs, ms or s."""
    if span_s < 1e-3:
        return 1e6, "µs"
    if span_s < 1.0:
        return 1e3, "ms"
    return 1.0, "s"


def timeline_png(a: pf.Analysis) -> bytes:
    """Per process a row: compute, wait (arrival) and the rest of bsp_sync as bars over time
    from the first bsp_begin; the supersteps' starts as vertical lines."""
    import matplotlib.pyplot as plt  # matplotlib: for the page only (the module docstring)

    from bspkit.pages.plots import png_bytes

    # from the first superstep's start (the first bsp_begin for the whole run)
    first_start = a.steps[0].start_s if a.steps else 0.0
    origin = [o - first_start for o in pf.process_origins(a.profile)]
    end = max((o + pf.end_s(r) for recs in a.records for o, r in zip(origin, recs, strict=True)), default=0.0)
    factor, unit = _time_scale(max(end, a.measured_s))
    fig, ax = plt.subplots(figsize=(11, min(1.6 + 0.45 * a.p, 14)))
    colors = {"compute": "tab:blue", "wait": "tab:red", "sync": "tab:gray"}
    per_bar = max(1, -(-len(a.steps) // MAX_TIMELINE_BARS))
    for pid in range(a.p):
        bars: dict[str, list[tuple[float, float]]] = {k: [] for k in colors}
        for first in range(0, len(a.steps), per_bar):
            # one bar per `per_bar` supersteps where there are many: from the first one's start
            # to the last one's end, split in the proportions of their compute, wait and sync
            recs = [step[pid] for step in a.records[first : first + per_bar]]
            t = (origin[pid] + float(recs[0]["t_start_s"])) * factor
            last = recs[-1]
            span = (origin[pid] + pf.end_s(last)) * factor - t
            c = sum(float(r["compute_s"]) for r in recs)
            w = sum(float(r.get("wait_s") or 0.0) for r in recs)
            sy = sum(float(r["sync_s"]) for r in recs)
            share = span / (c + sy) if c + sy > 0 else 0.0
            bars["compute"].append((t, c * share))
            bars["wait"].append((t + c * share, w * share))
            bars["sync"].append((t + (c + w) * share, max(sy - w, 0.0) * share))
        for kind, color in colors.items():
            ax.broken_barh(bars[kind], (pid - 0.38, 0.76), facecolors=color, linewidth=0)
    if len(a.steps) <= MAX_MARKED_STEPS:
        for s in a.steps:
            ax.axvline((s.start_s - first_start) * factor, color="k", lw=0.4, alpha=0.5)
    for kind, color in colors.items():
        label = {"compute": "compute", "wait": "waiting for the others (arrival)", "sync": "rest of bsp_sync"}[kind]
        ax.bar(0, 0, color=color, label=label)
    ax.set_yticks(range(a.p), [f"process {pid}" for pid in range(a.p)])
    ax.set_ylim(a.p - 0.5, -0.5)
    ax.set_xlim(0, end * factor * 1.01 or 1.0)
    since = f"the start of phase '{a.phase}'" if a.phase is not None else "the first bsp_begin"
    ax.set_xlabel(f"time since {since} [{unit}]")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    marked = " (thin lines: superstep starts)" if len(a.steps) <= MAX_MARKED_STEPS else ""
    if per_bar > 1:
        marked += f"; a bar per {per_bar} supersteps"
    ax.set_title(f"timeline: {len(a.steps)} supersteps{marked}", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return png_bytes(fig)


def imbalance_png(a: pf.Analysis) -> bytes:
    """Top: compute time per superstep, max, mean and min over processes; bottom: max / mean.
    Bars where there are few supersteps, lines where there are many."""
    import matplotlib.pyplot as plt  # matplotlib: for the page only (the module docstring)
    from matplotlib.ticker import MaxNLocator

    from bspkit.pages.plots import png_bytes

    steps = [s.step for s in a.steps]
    factor, unit = _time_scale(max((s.compute.max for s in a.steps), default=0.0))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 5.5), sharex=True, height_ratios=[2, 1])
    series = [("max", "tab:blue", [s.compute.max for s in a.steps])]
    series += [("mean", "tab:green", [s.compute.mean for s in a.steps])]
    series += [("min", "tab:olive", [s.compute.min for s in a.steps])]
    imb = [s.imbalance if s.imbalance is not None else float("nan") for s in a.steps]
    if len(steps) <= BAR_STEPS:
        for label, color, values in series:  # drawn over each other: max behind, min in front
            top.bar(steps, [v * factor for v in values], width=0.8, color=color, label=label)
        bottom.bar(steps, imb, width=0.8, color="tab:red")
    else:
        for label, color, values in series:
            top.plot(steps, [v * factor for v in values], color=color, lw=0.9, label=label)
        bottom.plot(steps, imb, color="tab:red", lw=0.9)
    top.set_ylabel(f"compute [{unit}]")
    top.legend(fontsize=8)
    top.grid(True, axis="y", alpha=0.3)
    top.set_title("compute time per superstep over the processes, and the load imbalance max / mean", fontsize=10)
    bottom.axhline(1.0, color="k", lw=0.8, ls=":")
    finite = [v for v in imb if v == v]
    bottom.set_ylim(0, max([1.0, *finite]) * 1.1)
    bottom.set_ylabel("max / mean")
    bottom.set_xlabel("superstep")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.grid(True, axis="y", alpha=0.3)
    return png_bytes(fig)


# ------------------------------------------------------------------ HTML


def _rows_note(n: int) -> str:
    return (
        f'<p class="note">the first {MAX_TABLE_ROWS} of {n} supersteps (--json has every one)</p>'
        if n > MAX_TABLE_ROWS
        else ""
    )


def html_report(
    a: pf.Analysis, top: int, preds: Predictions | None, breakdown: bd.Breakdown | None = None
) -> tuple[str, int]:

    h = a.profile.header
    parts: list[str] = ['<h2 id="summary">Summary</h2>']
    facts = [
        ("program", " ".join(str(x) for x in h.get("argv") or []) or h.get("program")),
        ("back end, p", f"{h.get('backend')}, p = {a.p}"),
        ("host, date", f"{h.get('host')}, {h.get('date')}"),
        ("profile", f"{a.profile.path} (section {a.profile.section} of {len(a.profile.sections)})"),
        ("S (supersteps ended by bsp_sync)", str(a.S)),
        ("W (sum over supersteps of the max compute time)", _t(a.W_s)),
        ("H (sum of the h-relations)", _w(a.H)),
        (f"measured time ({measured_what(a)})", _t(a.measured_s)),
        ("waiting in bsp_sync (sum over supersteps of the max wait)", _t(a.wait_s)),
    ]
    parts.append(table(["", "value"], [[esc(k), esc(v)] for k, v in facts]))
    head = ["process", "total", "compute", "wait", "bsp_sync", "words sent", "words received"]
    rows = [
        [
            str(ps.pid),
            _t(ps.total_s),
            _t(ps.compute_s),
            _t(ps.wait_s),
            _t(ps.sync_s),
            _w(ps.sent_words),
            _w(ps.received_words),
        ]
        for ps in a.processes
    ]
    parts.append(table(head, [[esc(c) for c in r] for r in rows]))
    body: list[str] = []
    nimg = 0
    body.append('<h2 id="timeline">Timeline</h2>')
    body.append(
        img(
            timeline_png(a),
            "timeline",
            "per process: compute (blue), waiting for the others in bsp_sync (red), the rest of bsp_sync (gray)",
        )
    )
    nimg += 1
    if breakdown is not None:
        body += br.breakdown_html(breakdown, MAX_TABLE_ROWS)
        nimg += 1
    body.append('<h2 id="costliest">The costliest supersteps</h2>')
    body.append(
        '<p class="note">time: max over processes of compute + bsp_sync; imbalance: max / mean of the compute time; '
        "h: thesis eq. (2.1), max over processes of the words sent or received.</p>"
    )
    body.append(table(STEP_HEAD, [[esc(c) for c in step_row(s)] for s in a.costliest(top)]))
    if a.has_phases and a.phase is None:
        body.append('<h2 id="phases">By phase</h2>')
        body.append(
            '<p class="note">the parts of the run the program named with bspk_profile_phase (bspkit.h), in order.</p>'
        )
        body.append(group_table(a.by_phase(), "phase"))
    body.append('<h2 id="sites">By bsp_sync site</h2>')
    body.append(group_table(a.by_site(), "site"))
    body.append('<h2 id="imbalance">Load imbalance</h2>')
    body.append(img(imbalance_png(a), "load imbalance"))
    nimg += 1
    body.append('<h2 id="supersteps">Every superstep</h2>')
    phases = a.has_phases
    head = [
        "step",
        "end",
        "time",
        "h",
        "messages",
        "h* [words]",
        "primitive",
        "compute max",
        "compute mean",
        "imbalance",
        "wait max",
        "bsp_sync max",
        "site",
    ] + (["phase"] if phases else [])
    rows = [
        [
            str(s.step),
            s.end,
            _t(s.time_s),
            _w(s.h),
            str(s.count),
            quantity(s.msg_words, "", 4),
            s.primitive or "–",
            _t(s.compute.max),
            _t(s.compute.mean),
            _x(s.imbalance),
            _t(s.wait.max),
            _t(s.sync.max),
            s.site,
        ]
        + ([s.phase or "–"] if phases else [])
        for s in a.steps[:MAX_TABLE_ROWS]
    ]
    body.append(table(head, [[esc(c) for c in r] for r in rows]))
    body.append(_rows_note(len(a.steps)))
    if preds is not None:
        body += prediction_html(a, preds)
    page_body = "\n".join(parts) + "\n" + contents("\n".join(body), "") + "\n" + "\n".join(body)
    return page(f"bspkit profile: {run_title(a)}", page_body), nimg


def group_table(rows: Sequence[dict[str, Any]], name: str) -> str:
    """The supersteps of each phase or sync site, summed."""

    head = [
        name if name == "phase" else "bsp_sync site",
        "supersteps",
        "first",
        "time",
        "compute max",
        "wait max",
        "H",
        "messages",
    ]
    cells = [
        [
            str(r[name] if r[name] is not None else "–"),
            str(r["supersteps"]),
            str(r["first_step"]),
            _t(r["time_s"]),
            _t(r["compute_max_s"]),
            _t(r["wait_max_s"]),
            _w(r["H"]),
            str(r["messages"]),
        ]
        for r in rows
    ]
    return table(head, [[esc(c) for c in r] for r in cells])


def prediction_html(a: pf.Analysis, preds: Predictions) -> list[str]:

    there = preds.there
    here = preds.model_of_here()
    out = ['<h2 id="prediction">Predicted time</h2>']
    note = f"compute x {quantity(there.compute_scale, '', 4)}" + (f" ({there.scale_note})" if there.scale_note else "")
    out.append(
        f"<p>On the machine of <code>{esc(there.params_path)}</code>: per superstep the measured compute time (max over "
        f"processes) {esc(note)}, plus its communication and synchronization under each model (the last superstep, "
        f"ended by bsp_end: compute only). {comm_models.legend_html()}.</p>"
    )
    head = ["model", "predicted", "compute", "comm + sync"]
    if here is not None:
        head += ["model of here", "measured here", "error of the model of here"]
    rows = []
    for m in comm_models.NAMES:
        row = [m, _t(there.total[m]), _t(there.compute_s), _t(there.comm[m])]
        if here is not None:
            row += [_t(here.total[m]), _t(a.measured_s), _signed_pct(pd.relative_error(here.total[m], a.measured_s))]
        rows.append(row)
    out.append(table(head, [[esc(c) for c in r] for r in rows]))
    if here is None:
        out.append(
            f'<p class="note">measured here: {esc(_t(a.measured_s))}. The parameter file is of another machine, back '
            "end or p; with --compute-from HERE.json (a probe of this machine) the page also shows the model of this one.</p>"
        )
    elif preds.here is not None:
        out.append(f'<p class="note">model of here: {esc(preds.here.params_path)}, compute unscaled.</p>')
    else:
        out.append(
            '<p class="note">model of here: the same parameter file (it was measured on this host, back end and p).</p>'
        )
    head = ["step", "measured", "h", "messages", "primitive", "compute"] + [
        f"comm + sync, {m}" for m in comm_models.NAMES
    ]
    head += [f"predicted, {m}" for m in comm_models.NAMES]
    rows = []
    for s, pred in list(zip(a.steps, there.steps, strict=True))[:MAX_TABLE_ROWS]:
        prim = pf.prediction_step(s)["primitive"] if s.h else None
        rows.append(
            [str(s.step), _t(s.time_s), _w(s.h), str(s.count), prim or "–", _t(pred["compute_s"])]
            + [_t(pred["comm_s"][m]) for m in comm_models.NAMES]
            + [_t(pred["time_s"][m]) for m in comm_models.NAMES]
        )
    out.append("<h3>Per superstep</h3>")
    out.append(table(head, [[esc(c) for c in r] for r in rows]))
    out.append(_rows_note(len(a.steps)))
    return out
