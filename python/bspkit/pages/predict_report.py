"""`bspkit predict`'s tables for the terminal and its page: per problem a row per p (time per
model, band, speedup, efficiency, W, H, S and the shares of f W, g H, l S), the speedup and
efficiency by n and p (the layout of Gerbessiotis & Lee's Tables 1-3 and the thesis' Fig. 4.4,
4.7, 4.9, 5.12), and at the target p where the time goes and what halving f, g or l would give."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bspkit.model import comm_models, trust
from bspkit.model.predict import BASE_ASKED, Point, Sweep, problem_key
from bspkit.pages import htmlkit as hk
from bspkit.units import count, plain, quantity

WARNING_CHARS = 300


def _short(text: str) -> str:
    return text if len(text) <= WARNING_CHARS else text[: WARNING_CHARS - 4] + " ..."


def _s(v: float | None) -> str:
    return "-" if v is None else f"{plain(v, 4)} s"


def _big(v: float) -> str:
    return count(v)


def problem_label(pt: Point) -> str:
    """The problem as asked, with the parameters the model filled in that do not change with p."""
    shown = dict(pt.request)
    for k, v in pt.cost.problem.items():
        if k not in shown and isinstance(v, (int, float, str)) and k not in P_DEPENDENT:
            shown[k] = v
    return ", ".join(f"{k} = {v}" for k, v in shown.items())


# parameters of a closed form's problem that follow from p (the process grid, rounds)
P_DEPENDENT = frozenset({"grid_rows", "grid_cols", "rounds", "s", "G", "grid"})


def by_problem(sweep: Sweep) -> list[list[Point]]:
    groups: dict[Any, list[Point]] = {}
    for pt in sweep.points:
        groups.setdefault(problem_key(pt.request), []).append(pt)
    return list(groups.values())


def _machine_lines(sweep: Sweep) -> list[str]:
    sources: dict[str, list[int]] = {}
    for pt in sweep.points:
        ps = sources.setdefault(pt.machine.source, [])
        if pt.p not in ps:
            ps.append(pt.p)
    return [f"p = {', '.join(map(str, ps))}: {source}" for source, ps in sources.items()]


def row_head(names: Sequence[str] | None = None) -> tuple[str, ...]:
    """The columns of a row per p: a time per model of communication (`names`, default every
    model), the band, the speedup (best model), an efficiency per model ("E g const"), then the
    rest."""
    models = comm_models.NAMES if names is None else names
    return ("p", *models, "band 10-90%", "speedup", *(f"E {m}" for m in models), "W", "H", "S", "fW", "gH", "lS")


def _percent(v: float | None) -> str:
    return "-" if v is None else f"{v:.1%}"


def point_row(pt: Point, names: Sequence[str] | None = None) -> list[str]:
    shares = pt.shares()
    low, high = pt.interval_s
    models = comm_models.NAMES if names is None else names
    return [
        str(pt.p),
        *(_s(pt.models[m]) for m in models),
        f"{plain(low, 3)}-{plain(high, 3)} s" if high > low else "no spread",
        "-" if pt.speedup is None else plain(pt.speedup, 3),
        *(_percent(pt.efficiencies.get(m)) for m in models),
        _big(pt.cost.W),
        _big(pt.cost.H),
        str(pt.cost.S),
        *(f"{shares[k]:.0%}" for k in ("work", "bandwidth", "latency")),
    ]


def _columns(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return ["  " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *rows]]


def grid(sweep: Sweep, what: str) -> tuple[list[str], list[list[str]]]:
    """Speedup or efficiency (best model): a row per problem, a column per p."""
    procs = sorted({pt.p for pt in sweep.points})
    rows = []
    for group in by_problem(sweep):
        at = {pt.p: pt for pt in group}
        cells = []
        for p in procs:
            v = getattr(at[p], what) if p in at else None
            cells.append("-" if v is None else (f"{v:.0%}" if what == "efficiency" else plain(v, 3)))
        rows.append([problem_label(group[0]), *cells])
    return ["problem \\ p", *map(str, procs)], rows


def text(sweep: Sweep) -> list[str]:
    first = sweep.points[0]
    out = [
        f"{sweep.algorithm}: predicted from its closed-form cost (nothing run); "
        f"f = {quantity(first.f.s_per_unit, 's')}/{first.cost.work_unit} ({first.f.source})",
        *("  machine " + line for line in _machine_lines(sweep)),
        *(f"  warning: {_short(w)}" for w in sweep.target().machine.warnings),
    ]
    cores = sweep.target().machine.cores
    if cores and max(pt.p for pt in sweep.points) > cores:
        out.append(
            f"  the machine has {cores} cores: beyond them processes take turns, each computing at f p / {cores} "
            "(--cores C for another machine)"
        )
    others = len(set(sweep.warnings) - set(sweep.target().machine.warnings))
    if others:
        out.append(f"  ({others} more warnings of the machines at the other p: in --json and the page)")
    # the terminal's columns: the models marked for it, and the model each point used
    names = comm_models.terminal_names(pt.best_model for pt in sweep.points)
    if sweep.base.how != BASE_ASKED:
        out.append(f"  speedup T(1)/T(p): p = 1 is its base, not a row (not asked): T(1) is {sweep.base.source}")
    for group in by_problem(sweep):
        out += ["", problem_label(group[0]) + ":", *_columns(row_head(names), [point_row(pt, names) for pt in group])]
        notes = group[0].cost.notes
        out += [f"  note: {n}" for n in notes]
        if sweep.base.how != BASE_ASKED:
            out.append(f"  note: the speedup's base T(1) = {_s(group[0].speedup_base_s)} (p = 1, not a row)")
    if len(by_problem(sweep)) > 1:
        for what, title in (("speedup", "speedup T(1)/T(p)"), ("efficiency", "efficiency W f / (p T)")):
            head, rows = grid(sweep, what)
            out += ["", f"{title}, best model, by problem and p:", *_columns(head, rows)]
    out += ["", *target_lines(sweep.target())]
    return out


def band_parts(pt: Point) -> str:
    """What the band is made of (bspkit.model.predict.band), each part as 1 sd: "the parameters'
    spread (f ±2.0%, g ±5.0%, l ±3.0%), the machine's noise (compute ±4.0%, ...) and the
    model's residual (±3.0%: the algorithm's validation where it has one, else the probe's check)"; "" where the parameter file has no noise and no check."""
    sp = pt.machine.spread
    if not sp.noise and not sp.model and not sp.validation:
        return ""
    f_sd = pt.f.spread if pt.f.spread is not None else sp.f_of(pt.cost.f_kernel)
    parts = [f"the parameters' spread (f ±{trust.pc(f_sd)}, g ±{trust.pc(sp.g)}, l ±{trust.pc(sp.l)})"]
    names = {"compute": "compute", "sync": "sync", "small_h": "small h", "large_h": "large h"}
    noise = ", ".join(f"{names.get(k, k)} ±{trust.pc(v)}" for k, v in sp.noise.items())
    if noise:
        parts.append(f"the machine's noise ({noise})")
    if sp.validation:
        parts.append(
            f"the model's residual beyond it in validation (±{trust.pc(sp.validation)}, {sp.validation_source})"
        )
    elif sp.model:
        parts.append(f"the model's residual beyond it (±{trust.pc(sp.model)})")
    return ", ".join(parts[:-1]) + " and " + parts[-1] + ", each as 1 sd" if len(parts) > 1 else parts[0]


def target_lines(pt: Point) -> list[str]:
    low, high = pt.interval_s
    shares = pt.shares()
    band = (
        f"10-90% band {_s(low)} to {_s(high)}"
        if high > low
        else "no band: the parameter file says nothing of how far its numbers may be off"
    )
    out = [
        f"at p = {pt.p} ({problem_label(pt)}): {_s(pt.predicted_s)} under {pt.best_model}, {band}",
        *([f"  the band holds {band_parts(pt)}"] if high > low and band_parts(pt) else []),
        f"  where the time goes: f W {shares['work']:.0%} ({_s(pt.work_s)}), "
        f"g H {shares['bandwidth']:.0%} ({_s(pt.bandwidth_s)}), l S {shares['latency']:.0%} ({_s(pt.latency_s)})",
        "  what if, halving one parameter:",
    ]
    out += [f"    {name:<28} {_s(t)}  (x{s:.2f} faster)" for name, t, s in pt.what_if()]
    head = ("kind", "S", "W", "H", "time", "counts")
    rows = [[k.kind, str(k.S), _big(k.W), _big(k.H), _s(k.time_s), k.source] for k in pt.kinds]
    return out + ["  supersteps by kind:", *_columns(head, rows)]


# ------------------------------------------------------------------------------ page


def _plot(sweep: Sweep, what: str) -> bytes:
    import matplotlib.pyplot as plt

    from bspkit.pages.plots import png_bytes  # matplotlib: only when a page is written

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    procs = sorted({pt.p for pt in sweep.points})
    for group in by_problem(sweep):
        ax.plot([pt.p for pt in group], [getattr(pt, what) for pt in group], marker="o", label=problem_label(group[0]))
    if what == "speedup":
        ax.plot(procs, procs, color="grey", linestyle=":", label="ideal")
        ax.set_yscale("log", base=2)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("p")
    ax.set_ylabel("speedup T(1)/T(p)" if what == "speedup" else "efficiency")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return png_bytes(fig)


def html(sweep: Sweep) -> str:
    target = sweep.target()
    body = [
        f"<h1>{hk.esc(sweep.algorithm)}: predicted over p</h1>",
        "<p>From the algorithm's closed-form cost and the machine's parameters; nothing was run. "
        f"f = {hk.esc(quantity(target.f.s_per_unit, 's'))}/{hk.esc(target.cost.work_unit)} ({hk.esc(target.f.source)}).</p>",
        "<ul>" + "".join(f"<li>{hk.esc(line)}</li>" for line in _machine_lines(sweep)) + "</ul>",
    ]
    body += [f"<p class='warn'>warning: {hk.esc(w)}</p>" for w in sweep.warnings]
    body.append("<h2>At the target</h2><pre>" + hk.esc("\n".join(target_lines(target))) + "</pre>")
    for group in by_problem(sweep):
        body.append(f"<h2>{hk.esc(problem_label(group[0]))}</h2>")
        body.append(hk.table(row_head(), [point_row(pt) for pt in group]))
    for what in ("speedup", "efficiency"):
        head, rows = grid(sweep, what)
        body.append(f"<h2>{what.capitalize()} by problem and p</h2>" + hk.table(head, rows))
        body.append(hk.img(_plot(sweep, what), f"{what} over p"))
    return hk.page(f"bspkit predict {sweep.algorithm}", "\n".join(body))
