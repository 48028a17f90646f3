"""`bspkit profile`'s breakdown of the run's time into Horvitz & Bisseling's five parts
(bspkit.model.breakdown): the section of the HTML page, with a stacked bar per phase or per
superstep (as their Fig. 2 has one per problem size), its tables, and the notes the terminal
shows too (bspkit.pages.profile_report.breakdown_lines).

matplotlib is imported by the function that draws: the terminal summary does not need it."""

from __future__ import annotations

from bspkit.model import breakdown as bd
from bspkit.pages.htmlkit import esc, img, table
from bspkit.units import quantity

# the stacked bars: one per superstep up to this many, consecutive supersteps merged beyond
MAX_BARS = 100
COLORS = {
    "synchronisation": "tab:gray",
    "communication": "tab:red",
    "packing": "tab:orange",
    "computation": "tab:blue",
    "idle": "tab:olive",
}
HEAD = ["synchronisation", "communication", "packing", "computation", "idle", "total"]


def _t(v: float | None) -> str:
    return quantity(v, "s")


def share(v: float | None, total: float) -> str:
    return "–" if v is None or total <= 0 else quantity(v / total, "%", 3)


def part_cells(parts: bd.Parts) -> list[str]:
    return [_t(parts.synchronisation), _t(parts.communication), _t(parts.packing), _t(parts.computation)] + [
        _t(parts.idle),
        _t(parts.total),
    ]


def notes(b: bd.Breakdown) -> list[str]:
    """Which l separated synchronisation, and what the profile could not tell."""
    out = []
    if b.latency is not None:
        out.append(
            f"synchronisation: l = {_t(b.latency.seconds)} per superstep that communicated (at most its time past "
            f"the last arrival), {b.latency.detail}; all of it in one that moved nothing"
        )
    else:
        out.append(
            "synchronisation not separated (in communication): no --params, and no superstep in the profile that "
            "moved nothing to measure l by"
        )
    if not b.packing_recorded:
        out.append("packing not recorded (a profile written before libbsp timed it): it is in computation")
    return out


def bars(b: bd.Breakdown) -> tuple[list[str], list[bd.Parts], str]:
    """The bars to draw: per phase where the program named phases (and the whole run is
    shown), else per superstep, consecutive ones merged beyond MAX_BARS; and the axis label."""
    a = b.analysis
    if a.has_phases and a.phase is None:
        groups = b.by_phase()
        return [str(phase or "–") for phase, _ in groups], [parts for _, parts in groups], "phase"
    per_bar = max(1, -(-len(b.steps) // MAX_BARS))
    labels: list[str] = []
    merged: list[bd.Parts] = []
    for first in range(0, len(b.steps), per_bar):
        chunk = b.steps[first : first + per_bar]
        acc = bd.ZERO
        for parts in chunk:
            acc = acc.add(parts)
        merged.append(acc)
        steps = a.steps[first : first + per_bar]
        labels.append(str(steps[0].step) if len(steps) == 1 else f"{steps[0].step}-{steps[-1].step}")
    return labels, merged, "superstep" if per_bar == 1 else f"supersteps ({per_bar} a bar)"


def breakdown_png(b: bd.Breakdown) -> bytes:
    """A stacked bar per phase or superstep: synchronisation at the bottom, idle on top (the
    order of Horvitz & Bisseling's Fig. 2)."""
    import matplotlib.pyplot as plt  # matplotlib: for the page only (the module docstring)

    from bspkit.pages.plots import png_bytes

    labels, groups, xlabel = bars(b)
    longest = max((g.total for g in groups), default=0.0)
    factor, unit = (1e6, "µs") if longest < 1e-3 else (1e3, "ms") if longest < 1.0 else (1.0, "s")
    fig, ax = plt.subplots(figsize=(11, 4.5))
    x = list(range(len(groups)))
    bottom = [0.0] * len(groups)
    for name in bd.PARTS:
        values = [(getattr(g, name) or 0.0) * factor for g in groups]
        label = name if name != "idle" else "idle (waiting while others compute)"
        ax.bar(x, values, bottom=bottom, width=0.8, color=COLORS[name], label=label)
        bottom = [u + v for u, v in zip(bottom, values, strict=True)]
    ax.set_xticks(x, labels, rotation=45 if len(labels) > 12 else 0, ha="right" if len(labels) > 12 else "center")
    if len(labels) > 40:  # label every few bars only
        for i, tick in enumerate(ax.xaxis.get_ticklabels()):
            tick.set_visible(i % (len(labels) // 20 + 1) == 0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"time [{unit}]")
    handles, names = ax.get_legend_handles_labels()  # listed as stacked: idle on top
    ax.legend(handles[::-1], names[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    sync = "" if b.latency else " (synchronisation not separated: in communication)"
    ax.set_title(f"where the time goes, per {xlabel.split(' ')[0]}{sync}", fontsize=10)
    return png_bytes(fig)


def breakdown_html(b: bd.Breakdown, max_rows: int) -> list[str]:
    a = b.analysis
    total = b.total
    out = ['<h2 id="breakdown">Where the time goes</h2>']
    out.append(
        "<p>Horvitz &amp; Bisseling's breakdown (their Fig. 2): per superstep, <b>computation</b> is the processes' "
        "mean compute time less packing and data moved at the call (hpput, hpget); <b>packing</b> the mean time "
        "packing and unpacking (the buffering primitives at the call, and what the program marked with "
        "bspk_profile_packing_begin/_end); <b>idle</b> the mean over processes of the longest compute less their "
        "own (waiting while others compute); <b>synchronisation</b> l; <b>communication</b> the rest of bsp_sync "
        "after the last process arrived, and the data moved at the call. The five add up to the superstep's time "
        "(max over processes of compute + bsp_sync).</p>"
    )
    out.append(img(breakdown_png(b), "where the time goes"))
    rows = [[name, _t(v), share(v, total.total)] for name, v, _ in bd.shares(total)]
    rows.append(["total (the supersteps' time)", _t(total.total), share(total.total, total.total)])
    rows.append(
        ["measured (bsp_begin .. bsp_end)" if a.phase is None else "measured (the phase)", _t(a.measured_s), ""]
    )
    out.append(table(["part", "time", "share"], [[esc(c) for c in r] for r in rows]))
    out += [f'<p class="note">{esc(n)}</p>' for n in notes(b)]
    if a.has_phases and a.phase is None:
        out.append("<h3>By phase</h3>")
        rows = [[str(phase or "–"), *part_cells(parts)] for phase, parts in b.by_phase()]
        out.append(table(["phase", *HEAD], [[esc(c) for c in r] for r in rows]))
    out.append("<h3>Per superstep</h3>")
    rows = [[str(s.step), *part_cells(parts)] for s, parts in list(zip(a.steps, b.steps, strict=True))[:max_rows]]
    out.append(table(["step", *HEAD], [[esc(c) for c in r] for r in rows]))
    if len(a.steps) > max_rows:
        out.append(f'<p class="note">the first {max_rows} of {len(a.steps)} supersteps (--json has every one)</p>')
    return out
