"""The figures of the report, drawn with matplotlib's Agg backend and returned as PNG bytes."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.cm
import matplotlib.colors
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter

from bspkit.measure.rawdata import GPoint
from bspkit.model.estimators import model_g, model_t
from bspkit.model.params import AsTest, FKernel, LatencyDetail, PredictModel, Surface, TotalExchangeRow, ValidationPoint
from bspkit.units import count, plain, quantity

DPI = 96


def png_bytes(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _tick(v: float) -> str:
    """An axis tick in fixed notation (0.0001, 250, 10,000, 1 M above a million), never
    e-notation."""
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else ""
    if abs(v) >= 1e6:
        return count(v)
    decimals = max(0, 3 - math.floor(math.log10(abs(v))))
    text = f"{v:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _words(v: float) -> str:
    v = float(v)
    for div, suf in ((1 << 20, "M"), (1 << 10, "K")):
        if v >= div and v % div == 0:
            return f"{int(v // div)}{suf}"
    return _tick(v)


def _pow2_formatter() -> FuncFormatter:
    return FuncFormatter(lambda x, _pos: _words(2.0**x) if abs(x - round(x)) < 1e-6 else "")


def _pow10_formatter(unit: str = "") -> FuncFormatter:
    def f(x: float, _pos: Any) -> str:
        if abs(x - round(x)) > 1e-6:
            return ""
        v = 10.0 ** round(x)
        return f"{_tick(v)}{unit}"

    return FuncFormatter(f)


def _per_word_axes(ax: Any, xlabel: str, ylabel: str) -> None:
    """Time per word against h: log axes, h in words (powers of two as 1K, 1M)."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: _words(v) if v >= 1 else _tick(v)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)


def g_surface(points: list[GPoint], surface: Surface, title: str) -> bytes:
    """Left: g~ over (h*, c) in 3D on log axes (thesis Fig. 3.3) with the fitted model surface.
    Right: g~ against h, one colour per message count c, with the model's lines."""
    hs = np.array([p.msg_words for p in points], float)
    c = np.array([p.count for p in points], float)
    h = hs * c
    g_ns = np.array([p.g_tilde for p in points]) * 1e9
    pm = surface.predict
    fig = plt.figure(figsize=(12.5, 5.2))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    X, Y, Z = np.log2(hs), np.log2(c), np.log10(g_ns)
    ax.scatter(X, Y, Z, c=Z, cmap="viridis", s=18, depthshade=False, label="measured g~ (median)")
    if pm:
        xs = np.linspace(X.min(), X.max(), 24)
        ys = np.linspace(Y.min(), Y.max(), 24)
        XX, YY = np.meshgrid(xs, ys)
        hstar, cc = 2.0**XX, 2.0**YY
        ZZ = np.log10(model_g(hstar * cc, hstar, pm.g_inf, pm.h_half, pm.o) * 1e9)
        ax.plot_wireframe(XX, YY, ZZ, color="tab:red", linewidth=0.6, alpha=0.7, label=f"model eq. {pm.model}")
    ax.set_xlabel("message size h* [words]")
    ax.set_ylabel("message count c")
    # matplotlib turns the z label with the view; at this azimuth it would read upside down
    ax.zaxis.set_rotate_label(False)
    ax.set_zlabel("g~ [ns/word]", rotation=90)
    ax.xaxis.set_major_formatter(_pow2_formatter())
    ax.yaxis.set_major_formatter(_pow2_formatter())
    ax.zaxis.set_major_formatter(_pow10_formatter())
    ax.view_init(elev=24, azim=-128)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("g~(h*, c) surface (log axes)", fontsize=10)
    ax2 = fig.add_subplot(1, 2, 2)
    counts = sorted(set(c))
    cmap = matplotlib.colormaps["viridis"]
    lc = np.log2(np.array(counts, float))
    span = (lc.max() - lc.min()) or 1.0
    many = len(counts) > 8
    for cv in counts:
        sel = c == cv
        order = np.argsort(h[sel])
        col = cmap((math.log2(cv) - lc.min()) / span)
        ax2.plot(
            h[sel][order],
            g_ns[sel][order],
            "o",
            color=col,
            ms=4 if not many else 3,
            label=None if many else f"c = {int(cv)}",
        )
        if pm:
            lo_h, hi_h = h[sel].min(), h[sel].max()
            if lo_h == hi_h:
                lo_h, hi_h = lo_h / 1.5, hi_h * 1.5
            hh = np.geomspace(lo_h, hi_h, 50)
            ax2.plot(hh, model_g(hh, hh / cv, pm.g_inf, pm.h_half, pm.o) * 1e9, "-", color=col, lw=1)
    if many:
        sm = matplotlib.cm.ScalarMappable(cmap=cmap, norm=matplotlib.colors.Normalize(lc.min(), lc.max()))
        cb = fig.colorbar(sm, ax=ax2, pad=0.02, fraction=0.05)
        cb.set_label("message count c")
        cb.formatter = _pow2_formatter()
        cb.update_ticks()
    if pm:
        hh = np.geomspace(h.min(), h.max(), 100)
        ax2.plot(hh, model_g(hh, np.inf, pm.g_inf, pm.h_half) * 1e9, "k--", lw=1, label="eq. 2.5 (o = 0)")
        ax2.axhline(pm.g_inf * 1e9, color="gray", lw=0.8, ls=":", label=f"g_inf = {quantity(pm.g_inf, 's/word', 3)}")
    _per_word_axes(ax2, "h = c h* [words per process]", "g~ = T / h [ns/word]")
    ax2.legend(fontsize=7, ncol=2)
    ax2.set_title("g~ against h; lines: fitted model per c", fontsize=10)
    fig.suptitle(title)
    return png_bytes(fig)


def latency(l_detail: Mapping[str, LatencyDetail], as_tests: Mapping[str, AsTest], title: str) -> bytes:
    """Bars: l per variant and the As-suite latency tests, with quartiles as error bars."""
    names: list[str] = []
    med: list[float] = []
    lo: list[float] = []
    hi: list[float] = []
    colors: list[str] = []
    for prefix, color, tests in (("l", "tab:blue", l_detail), ("As", "tab:orange", as_tests)):
        for name, d in tests.items():
            names.append(f"{prefix}: {name}")
            med.append(d["median"] * 1e6)
            lo.append((d["median"] - d["q1"]) * 1e6)
            hi.append((d["q3"] - d["median"]) * 1e6)
            colors.append(color)
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(names) + 1.5))
    y = np.arange(len(names))
    ax.barh(y, med, xerr=[lo, hi], color=colors, capsize=3)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("time [µs] (median, bars: quartiles)")
    for yi, m, up in zip(y, med, hi, strict=True):
        ax.text(m + up, yi, f"  {plain(m, 3)}", va="center", fontsize=8)
    ax.set_xlim(0, max(m + up for m, up in zip(med, hi, strict=True)) * 1.15 if med else 1)
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    return png_bytes(fig)


def compute_speed(f_detail: Mapping[str, FKernel], title: str) -> bytes:
    per_op = {k: s for k, d in f_detail.items() if (s := d.get("s_per_op"))}
    names = list(per_op)
    rates = [1e-6 / s for s in per_op.values()]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(names) + 1.5))
    y = np.arange(len(names))
    ax.barh(y, rates, color="tab:green")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xscale("log")
    if rates:
        left = 10.0 ** math.floor(math.log10(min(rates)) - 1e-9)
        ax.set_xlim(left, max(rates) * 3)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}" if v >= 1 else _tick(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("operations per second 1/f [M/s] (log scale)")
    for yi, r in zip(y, rates, strict=True):
        ax.text(r, yi, f" {plain(r, 4)} M", va="center", fontsize=8)
    ax.set_title(title)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    return png_bytes(fig)


def total_exchange(
    series: Sequence[tuple[str, list[TotalExchangeRow]]], title: str, model: tuple[str, Any] | None = None
) -> bytes:
    """As suite total exchange: t/h against h, one line per run (with quartile band)."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, rows in series:
        if not rows:
            continue
        h = np.array([r["h"] for r in rows], float)
        t = np.array([r["t_per_h_s"] for r in rows]) * 1e9
        q1 = np.array([r["q1"] for r in rows]) / h * 1e9
        q3 = np.array([r["q3"] for r in rows]) / h * 1e9
        (line,) = ax.plot(h, t, "o-", ms=4, label=label)
        ax.fill_between(h, q1, q3, color=line.get_color(), alpha=0.2)
    if model is not None:
        label, fn = model
        hmin = min(r["h"] for _l, rows in series for r in rows)
        hmax = max(r["h"] for _l, rows in series for r in rows)
        hh = np.geomspace(hmin, hmax, 60)
        ax.plot(hh, fn(hh) / hh * 1e9, "k--", lw=1, label=label)
    _per_word_axes(ax, "h [words to every process]", "t / h [ns/word]")
    ax.legend(fontsize=8)
    ax.set_title(title)
    return png_bytes(fig)


def validation(rows: list[ValidationPoint], threshold: float, title: str) -> bytes:
    used = [r for r in rows if "predicted_s" in r]
    fig, ax = plt.subplots(figsize=(6.5, 6))
    keys = sorted({r["key"] for r in used})
    for k in keys:
        sel = [r for r in used if r["key"] == k]
        ax.plot([r["measured_s"] * 1e6 for r in sel], [r["predicted_s"] * 1e6 for r in sel], "o", ms=5, label=k)
    allv = [r["measured_s"] * 1e6 for r in used] + [r["predicted_s"] * 1e6 for r in used]
    lo, hi = min(allv) / 1.3, max(allv) * 1.3
    xx = np.geomspace(lo, hi, 10)
    ax.plot(xx, xx, "k-", lw=1, label="exact")
    ax.fill_between(xx, xx * (1 - threshold), xx * (1 + threshold), color="gray", alpha=0.2, label=f"±{threshold:.0%}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _p: _tick(v)))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("measured time [µs]")
    ax.set_ylabel("predicted time, eq. (2.6) [µs]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return png_bytes(fig)


def drift(
    curve: list[tuple[int, float]], bound: float, val_errors: list[tuple[int | None, float]], title: str
) -> bytes:
    """The machine's speed over the run (measured / model of the grid points, running median)
    and the validation points' errors at the time they were measured."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(
        [c[0] for c in curve],
        [c[1] for c in curve],
        "-",
        color="tab:blue",
        label="grid: measured / model (running median)",
    )
    ax.axhspan(1 / bound, bound, color="tab:green", alpha=0.12, label=f"within {bound}x")
    pts = [(s, 1.0 + e) for s, e in val_errors if s is not None and e is not None and 1.0 + e > 0]
    if pts:
        # 1 + error = predicted / measured; measured / predicted is its inverse
        ax.plot(
            [s for s, _v in pts],
            [1.0 / v for _s, v in pts],
            "o",
            ms=3.5,
            color="tab:red",
            label="validation: measured / predicted",
        )
    ax.set_yscale("log")
    ax.set_xlabel("position in the probe's random order (seq)")
    ax.set_ylabel("measured / model")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: _tick(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return png_bytes(fig)


def grouped_bars(
    categories: list[str], series: list[tuple[str, list[float | None]]], ylabel: str, title: str, log: bool = True
) -> bytes:
    """Comparison plot: one group per category, one bar per run (None: no bar)."""
    n = max(len(series), 1)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(categories) * max(1, n / 2) + 2), 4.5))
    x = np.arange(len(categories))
    for i, (label, vals) in enumerate(series):
        v = [np.nan if (a is None or not math.isfinite(a)) else a for a in vals]
        ax.bar(x + (i - (n - 1) / 2) * width, v, width, label=label)
    ax.set_xticks(x, categories, rotation=30, ha="right")
    vals_all = [a for _l, vals in series for a in vals if a is not None and math.isfinite(a) and a > 0]
    if log and vals_all:
        ax.set_yscale("log")
        ax.set_ylim(10.0 ** math.floor(math.log10(min(vals_all)) - 1e-9), max(vals_all) * 2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: _tick(v)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.set_title(title)
    return png_bytes(fig)


def model_total_exchange(pm: PredictModel, p: int) -> Callable[[Any], Any]:
    """Time of a put total exchange of h words to each of p processes under eq. (2.6)."""
    return lambda hh: model_t(p * np.asarray(hh, float), p, pm.g_inf, pm.h_half, pm.o)


# ------------------------------------------------------------ the memory-hierarchy suites


def mem_pass_times(
    points: Sequence[Any],
    predict: Callable[[Any], float | None],
    marks_n: Sequence[tuple[str, float]],
    marks_s: Sequence[tuple[str, float]],
    title: str,
) -> bytes:
    """Kang et al. Fig. 22 and 23: the time of one pass against N (one line per stride S) and
    against S (one line per N), measured (dots) and eq. (4)'s fit (dashed); the caches' sizes
    as N at stride 1 on the left, the line and the page as strides on the right."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12.5, 4.6))
    cmap = matplotlib.colormaps["viridis"]
    for ax, along, per, marks, xlabel in (
        (left, "n", "stride", marks_n, "N (elements per pass)"),
        (right, "stride", "n", marks_s, "S (stride, elements)"),
    ):
        # the values with the most points, so that each line has several
        counts: dict[int, int] = {}
        for p in points:
            counts[getattr(p, per)] = counts.get(getattr(p, per), 0) + 1
        lines = sorted(sorted(counts, key=lambda v: -counts[v])[:6])
        for i, v in enumerate(lines):
            pts = sorted((p for p in points if getattr(p, per) == v), key=lambda p: getattr(p, along))
            if not pts:
                continue
            color = cmap(i / max(1, len(lines) - 1))
            xs = [getattr(p, along) for p in pts]
            ax.plot(
                xs, [p.time_s for p in pts], "o", ms=3.5, color=color, label=f"{'S' if per == 'stride' else 'N'} = {v}"
            )
            model = [predict(p) for p in pts]
            if all(m is not None for m in model):
                ax.plot(xs, model, "--", lw=1, color=color)
        for name, x in marks:
            ax.axvline(x, color="#a33", lw=0.8, ls=":")
            ax.text(x, 1.0, f" {name}", transform=ax.get_xaxis_transform(), color="#a33", fontsize=8, va="top")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("time of one pass [s]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(title + "  (dots: measured median; dashed: eq. (4) fit)", fontsize=10)
    return png_bytes(fig)


def linear_cost_curves(
    series: Sequence[tuple[str, Sequence[float], Sequence[float], Callable[[float], float] | None]],
    xlabel: str,
    title: str,
) -> bytes:
    """Time against size on log axes, one series per (label, sizes, times, fitted model):
    the processor-processor patterns (Kang et al. Fig. 25) and the disk (Fig. 27)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    cmap = matplotlib.colormaps["tab10"]
    for i, (label, xs, ys, model) in enumerate(series):
        color = cmap(i % 10)
        ax.plot(xs, ys, "o", ms=3.5, color=color, label=label)
        if model is not None and len(xs):
            grid = np.geomspace(min(xs), max(xs), 60)
            ax.plot(grid, [model(x) for x in grid], "--", lw=1, color=color)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: _bytes(v)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time [s]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title + "  (dashed: T_0 + m tau fit)", fontsize=10)
    return png_bytes(fig)


def _bytes(v: float) -> str:
    for div, suf in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if v >= div:
            return f"{_tick(v / div)}{suf}"
    return _tick(v)
