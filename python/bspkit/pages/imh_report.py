"""The report's sections on the memory hierarchy (bspprobe's suites mem, pp and disk and the
IMH model of Kang et al., `003_...` sec. 4.2 and 5.2), one per data path and one for the
model, in the layout of the paper's figures and Tables 3-6. The numbers come from the
parameter file's `imh` object (bspkit.model.imh); the plots also from the raw points."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bspkit.measure.rawdata import RawRun
from bspkit.model import imh
from bspkit.model.params import Params
from bspkit.pages import plots
from bspkit.pages.htmlkit import NOT_MEASURED_HTML, Section, esc, pct, seconds, signed_pct, table
from bspkit.units import MISSING, plain, quantity

# the flags bspkit.model.imh.nonneg_lsq writes: "NAME: dropped (...)", "NAME: V but its 95% interval reaches zero"
DROPPED = "dropped"
NOT_SIGNIFICANT = "not significant"
SHORT = {NOT_SIGNIFICANT: "n.s."}  # in the flags column, explained below the table


def _ns(v: Any) -> str:
    return MISSING if v is None else esc(plain(float(v) * 1e9, 3))


def _flag(fit: Mapping[str, Any], name: str) -> str | None:
    """What the fit's flags say of coefficient `name` (after "NAME: "), None when nothing."""
    for fl in fit.get("flags") or []:
        if fl.startswith(f"{name}: "):
            return fl[len(name) + 2 :]
    return None


def _kind(why: str) -> str:
    """A coefficient's flag in two words: dropped (the fit left it out: it predicts with 0),
    not significant (its interval reaches zero: the value is used but uncertain), or failed."""
    if why.startswith("dropped"):
        return DROPPED
    if "interval reaches zero" in why:
        return NOT_SIGNIFICANT
    return "failed"


def _interval(why: str) -> str:
    """ "0.26 ns but its 95% interval reaches zero" -> "its 95% interval reaches zero" (the
    value stands in its cell, in its unit)."""
    return why.split(" but ", 1)[-1]


def _reason(why: str) -> str:
    """ "dropped (the fit would make it negative or zero)" -> "the fit would make it negative or zero"."""
    if why.startswith(f"{DROPPED} (") and why.endswith(")"):
        return why[len(DROPPED) + 2 : -1]
    return why


def _coef(fit: Mapping[str, Any], name: str) -> str:
    """value [lo, hi] in ns; the value in grey when it is not significant, "dropped" or
    "failed" (never a 0 that reads as a measured 0 ns) when the fit has none; the reason in the
    cell's title and in the table's flags column."""
    t = (fit.get("coef") or {}).get(name)
    if t is None:
        v = (fit.get("model") or {}).get(name)
        why = _flag(fit, name) or "no fit"
        kind = _kind(why)
        if kind == NOT_SIGNIFICANT and v:
            return f'<span class="fail" title="not significant: {esc(_interval(why))}">{_ns(v)}</span>'
        return f'<span class="fail" title="{esc(name + ": " + why)}">{DROPPED if kind == DROPPED else "failed"}</span>'
    if t[1] is None:
        return _ns(t[0])
    return f"{_ns(t[0])} <span class='note'>[{_ns(t[1])}, {_ns(t[2])}]</span>"


class Notes:
    """A table's long remarks, numbered below it, so that each cell stays one short line."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"note {self.texts.index(text) + 1}"

    def html(self) -> str:
        if not self.texts:
            return ""
        items = "".join(f"<li>{esc(t)}</li>" for t in self.texts)
        return f'<ol class="note">{items}</ol>'


FLAGS_NOTE = (
    '<p class="note">Flags: <i>dropped</i> = the fit would make the coefficient negative or zero, so it is left out '
    "(and predicts with 0); <i>n.s.</i> = not significant: its 95 % interval reaches zero (its value, in grey, is used); "
    "a cell's title holds the details.</p>"
)


def _flags_cell(fit: Mapping[str, Any], notes: Notes) -> str:
    """The fit's flags in one short line: "dropped: T_e, T_p; not significant: T_n"; any
    other remark as a numbered note below the table."""
    kinds: dict[str, list[str]] = {}
    others = []
    for fl in fit.get("flags") or []:
        name, sep, why = fl.partition(": ")
        kind = _kind(why) if sep and " " not in name else "other"
        if kind in (DROPPED, NOT_SIGNIFICANT):
            kinds.setdefault(kind, []).append(name)
        else:
            others.append(notes.ref(fl))
    parts = [f"{SHORT.get(kind, kind)}: {', '.join(names)}" for kind, names in kinds.items()]
    return esc("; ".join(parts + others))


def _line(t0: float | None, tau: float) -> Callable[[float], float]:
    """m -> T_0 + m tau, the fitted line of a processor-processor or disk fit."""
    start = t0 or 0.0
    return lambda m: start + m * tau


def _size(v: Any) -> str:
    """Bytes in binary units: 4 KiB, 1.5 MiB."""
    if v is None:
        return "–"
    v = float(v)
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if v >= div:
            return f"{plain(v / div, 4)} {unit}"
    return f"{v:.0f} B"


def _size_range(fit: Mapping[str, Any]) -> str:
    return f"{_size(fit['sizes'][0])} – {_size(fit['sizes'][-1])}"


def _rate_series(
    fits: Mapping[str, Mapping[str, Any]], label: Callable[[str], str | None]
) -> list[tuple[str, Any, Any, Callable[[float], float]]]:
    """The plot's series of T_0 + m tau fits (bspkit.model.imh.startup_and_rate): label(key) names
    one, None leaves it out; a fit without a rate is left out too."""
    series = []
    for key, f in fits.items():
        name = label(key)
        if name is not None and f["model"].get("tau") is not None:
            series.append((name, f["sizes"], f["times_s"], _line(f["model"].get("T_0"), f["model"]["tau"])))
    return series


def _verdict(ok: bool | None) -> str:
    if ok is None:
        return "–"
    return '<span class="pass">yes</span>' if ok else '<span class="bad">no</span>'


def _mbps(v: Any) -> str:
    """Bytes per second in MB/s (10^6 B/s, as STREAM counts): 32,990, not 3.299e+04."""
    return MISSING if v is None else esc(plain(float(v) / 1e6, 4))


def _ms(v: Any) -> str:
    return MISSING if v is None else esc(plain(float(v) * 1e3, 3))


def _mem_marks(mem: Mapping[str, Any], elem_bytes: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    marks_n = [(f"L{lv['level']}", int(lv["size_bytes"]) / elem_bytes) for lv in mem.get("caches", [])]
    marks_s = [("line", mem.get("line_bytes", 64) / elem_bytes)]
    if mem.get("page_bytes"):
        marks_s.append(("page", int(mem["page_bytes"]) / elem_bytes))
    return marks_n, marks_s


def processor_memory_section(run: RawRun, params: Params, anchor: str) -> Section:
    s = Section.headed(anchor, "imh-mem", "Processor-memory (Kang et al. 4.2.1, eq. 4)")
    mem = params.imh.get("mem") if params.imh else None
    if not mem:
        s.add(NOT_MEASURED_HTML)
        return s
    caches = mem.get("caches") or []
    s.add(
        "<p>One pass reads (sums) or writes N elements at stride S; out of cache the caches are flushed before "
        "each sample (Fig. 6), in cache the array was walked before and a sample is one of several passes "
        "(Fig. 7). Eq. (4), T = T_n N + T_c N_c + T_e S with N_c the cache lines the pass brings, is fitted per "
        "operation, element, cache state and process count, and per cache level (the smallest cache that holds "
        "the lines the pass touches, counting the sets a stride of k lines leaves usable, one in gcd(sets, k); "
        "a shared cache split between the processes; out of cache: memory). Every "
        f"{imh.HOLDOUT_EVERY}th point in (N, S) order is held out of its fit and predicted.</p>"
    )
    if caches:
        s.add(
            table(
                ["level", "type", "size", "line [B]", "ways", "shared by CPUs"],
                [
                    [
                        f"L{c['level']}",
                        esc(c.get("type")),
                        _size(c["size_bytes"]),
                        str(c.get("line_bytes")),
                        str(c.get("ways") or "?"),
                        esc(c.get("shared_cpus")),
                    ]
                    for c in caches
                ],
            )
        )
    err, err_paper = mem.get("heldout_mean_rel_error"), mem.get("heldout_mean_rel_error_paper")
    if err is not None:
        ok = err <= mem["target"]
        paper = "" if err_paper is None else f"; eq. (4) as the paper writes it (T_e S per pass): {pct(err_paper)}"
        s.add(
            f'<p class="{"ok" if ok else "warn"}">Held-out points: mean relative error {pct(err)} over '
            f"{mem['heldout_points']} points (max {pct(mem.get('heldout_max_rel_error'))}){paper}; target at most "
            f"{pct(mem['target'])}.</p>"
        )
    s.add(
        "<p>bspkit predicts with eq. (4)'s stride term counted per line: T = T_n N + T_c N_c + T_e N_c "
        "log2(d / line) + T_p N [d &ge; page], d the stride in bytes: the paper's compensation for the slope "
        "change of Fig. 23, where it arises (lines further apart cost more, a stride beyond a page a translation "
        "per element).</p>"
    )
    rows = []
    notes = Notes()
    for group, levels in mem["fits"].items():
        paper_levels = (mem.get("fits_paper") or {}).get(group, {})
        for level, f in levels.items():
            if "model" not in f:
                failed = '<span class="fail">failed</span>'
                why = esc(notes.ref(f"{group}, {level}: {f.get('error') or 'no fit'}"))
                rows.append([esc(group), level, str(f.get("points")), failed, "–", "–", "–", "–", "–", "–", why])
                continue
            rows.append(
                [
                    esc(group),
                    level,
                    f"{f['train_points']} + {len(f['heldout'])}",
                    _coef(f, "T_n"),
                    _coef(f, "T_c"),
                    _coef(f, "T_e"),
                    _coef(f, "T_p"),
                    pct(f.get("residual_rel_rms")),
                    pct(f.get("heldout_mean_rel_error")),
                    pct((paper_levels.get(level) or {}).get("heldout_mean_rel_error")),
                    _flags_cell(f, notes),
                ]
            )
    s.add("<h3>Table 3: eq. (4) per operation/element/cache/processes and level (ns, 95 % intervals)</h3>")
    head = ["op/elem/cache/procs", "level", "fit + held out", "T_n", "T_c", "T_e", "T_p", "residual rms"]
    s.add(table([*head, "held-out error", "paper's form", "flags"], rows, left=2))
    s.add(FLAGS_NOTE + notes.html())
    stream = mem.get("stream") or []
    if stream:
        s.add(
            "<h3>Out-of-cache bandwidth against a STREAM copy of the same run</h3><p>A copy is a read pass and a "
            "write pass over double arrays at stride 1, so eq. (4)'s out-of-cache fits predict its bandwidth "
            f"(bytes read + written per second, as STREAM counts); target within {pct(imh.STREAM_TARGET)}.</p>"
        )
        s.add(
            table(
                [
                    "processes",
                    "array",
                    "STREAM copy [MB/s]",
                    "eq. (4) copy [MB/s]",
                    "ratio",
                    "eq. (4) read [MB/s]",
                    "within",
                ],
                [
                    [
                        str(r["procs"]),
                        _size(r["bytes"]),
                        _mbps(r["stream_copy_Bps"]),
                        _mbps(r["model_copy_Bps"]),
                        quantity(r["ratio"], "x", 3),
                        _mbps(r["model_read_Bps"]),
                        _verdict(r["within_target"]),
                    ]
                    for r in stream
                ],
            )
        )
    pts = imh.mem_points(run)
    line, page = int(mem.get("line_bytes") or 64), int(mem.get("page_bytes") or 4096)
    for cache, what in (("cold", "out of cache (Fig. 6)"), ("warm", "in cache (Fig. 7)")):
        group = f"read/double/{cache}/p1"
        gpts = [p for p in pts if p.group == group]
        if not gpts:
            continue
        fits = mem["fits"].get(group, {})
        levels = mem.get("caches") or []

        def predict(p: Any, fits: Mapping[str, Any] = fits, levels: Any = levels) -> float | None:
            f = fits.get(imh.point_level(p, levels)) or {}
            return imh.predict_pass(f, p.n, p.stride, p.elem_bytes, line, page) if "model" in f else None

        marks_n, marks_s = _mem_marks(mem, 8)
        title = f"read double, {what}, one process, {run.label()}"
        s.image(plots.mem_pass_times(gpts, predict, marks_n, marks_s, title), f"processor-memory {cache}")
    return s


def processor_processor_section(run: RawRun, params: Params, anchor: str) -> Section:
    s = Section.headed(anchor, "imh-pp", "Processor-processor (Kang et al. 4.2.2, eq. 5, Table 5)")
    pp = params.imh.get("pp") if params.imh else None
    if not pp:
        s.add(NOT_MEASURED_HTML)
        return s
    s.add(
        "<p>Written against bsp.h (bsp_hpput): permutation (every process sends m bytes to another, one "
        "superstep), ping-pong (process 0 to p-1 and back, two supersteps), scatter (the root sends m bytes to "
        "every other process) and a binomial-tree broadcast (ceil(lg p) supersteps); each time from a common "
        "bsp_sync to the end of the last, the maximum over processes. Eq. (5), T = T_s + m tau_d, per pattern, "
        "read as the paper reads Fig. 25 and 26: T_s the median time of the three smallest messages, tau_d the "
        f"slope over the sizes within 2^{imh.UPPER_OCTAVES} of the largest. The model takes T_s and tau_d from the "
        "permutation, as the paper does.</p>"
    )
    notes = Notes()
    s.add(
        table(
            ["pattern", "sizes", "T_s [µs]", "tau [ns/B]", "bandwidth [MB/s]", "residual rms", "flags"],
            [
                [
                    pattern,
                    _size_range(f),
                    quantity(f["model"].get("T_0"), "µs", 3, show_unit=False),
                    _coef(f, "tau"),
                    _mbps(f.get("bandwidth_Bps")),
                    pct(f.get("residual_rel_rms")),
                    _flags_cell(f, notes),
                ]
                for pattern, f in pp["fits"].items()
            ],
        )
    )
    s.add(notes.html())
    rows = []
    for r in pp.get("table5", []):
        rows.append(
            [
                r["pattern"],
                str(r["p"]),
                _size(r["bytes"]),
                seconds(r["measured_s"]),
                seconds(r["predicted_paper_s"]),
                signed_pct(r["error_paper"]),
                seconds(r["predicted_bsp_s"]),
                signed_pct(r["error_bsp"]),
                _verdict(r["within_target"]),
            ]
        )
    if rows:
        p = pp["p"]
        s.add(
            f"<h3>Table 5 at p = {p}: measured and predicted, the largest message of each pattern</h3><p>Sec. "
            "5.2.2's formulas: permutation and ping-pong T_s + m tau_d, scatter T_s + (P-1) m tau_d / 2, broadcast "
            "T_s + lg P m tau_d / 2 (the paper halves one-way transfers: links that send and receive at once). The "
            "BSP cost of the supersteps bspprobe runs, each T_s + h tau_d with h the most bytes a process sends or "
            "receives: ping-pong 2 (T_s + m tau_d), scatter T_s + (P-1) m tau_d, broadcast ceil(lg P) (T_s + m "
            f"tau_d). Target: within {pct(imh.PP_TARGET)} (the BSP form).</p>"
        )
        head = ["pattern", "p", "m", "measured", "paper", "error", "BSP", "error", "within"]
        s.add(table(head, rows))
    series = _rate_series(pp["fits"], lambda pattern: pattern)
    if series:
        s.image(
            plots.linear_cost_curves(series, "m (bytes per destination)", f"processor-processor, {run.label()}"), "pp"
        )
    return s


def memory_disk_section(run: RawRun, params: Params, anchor: str) -> Section:
    s = Section.headed(anchor, "imh-disk", "Memory-disk (Kang et al. 4.2.3, Table 6)")
    disk = params.imh.get("disk") if params.imh else None
    if not disk:
        s.add(NOT_MEASURED_HTML)
        return s
    info = disk.get("info") or {}
    s.add(
        f"<p>Process 0 reads and writes files of m bytes in {esc(info.get('dir'))} ({esc(info.get('filesystem'))}, "
        f"{_size(info.get('free_bytes'))} free, largest file {_size(info.get('max_bytes'))}): "
        "through the page cache (what a program sees: writes without fsync, reads of a file just written) and "
        f"around it ({esc(info.get('direct'))}; direct writes include fsync). Open and close are outside the "
        f"clock, as in the paper. {esc(info.get('note') or '')}</p>"
    )
    rows = []
    notes = Notes()
    for key, f in disk["fits"].items():
        op, access, cache = key.split("/")
        rows.append(
            [
                op,
                access,
                cache,
                _size_range(f),
                _ms((f.get("model") or {}).get("T_0")),
                _mbps(f.get("bandwidth_Bps")),
                pct(f.get("residual_rel_rms")),
                _flags_cell(f, notes),
            ]
        )
    s.add(
        table(
            ["operation", "access", "cache", "sizes", "startup [ms]", "bandwidth [MB/s]", "residual rms", "flags"],
            rows,
            left=3,
        )
    )
    s.add(notes.html())
    series = _rate_series(disk["fits"], lambda key: key.replace("/sequential", "") if "/sequential/" in key else None)
    if series:
        s.image(plots.linear_cost_curves(series, "m (bytes)", f"memory-disk, sequential, {run.label()}"), "disk")
    return s


def imh_model_section(run: RawRun, params: Params, anchor: str) -> Section:
    s = Section.headed(anchor, "imh-model", "The IMH model (Kang et al. 5.2.4)")
    model = params.imh.get("model") if params.imh else None
    if not model:
        s.add(NOT_MEASURED_HTML)
        return s
    s.add(
        "<p>Execution time = T_n N + T_c N_c + T_e N_c log2(d/line) + T_p N [d &ge; page] (processor-memory, eq. "
        "(4) with the stride term per line; below: out of cache, double reads by every process at once) + T_s + m "
        "tau_d (processor-processor, the permutation) + T_r + m_r tau_r + T_w + m_w tau_w (memory-disk, sequential, "
        "around the page cache). <code>bspkit imh cannon</code> and <code>bspkit imh oocmm</code> predict runs with "
        "these terms and with the BSP model alone, and measure them.</p>"
    )
    names = [
        ("T_n", "per element accessed", 1e9, "ns"),
        ("T_c", "per cache line brought", 1e9, "ns"),
        ("T_e", "per line and doubling of the stride beyond a line", 1e9, "ns"),
        ("T_p", "per element at a stride beyond a page", 1e9, "ns"),
        ("T_s", "start-up between processes", 1e6, "µs"),
        ("tau_d", "per byte between processes", 1e9, "ns"),
        ("T_r", "disk read start-up", 1e3, "ms"),
        ("tau_r", "per byte read from disk", 1e9, "ns"),
        ("T_w", "disk write start-up", 1e3, "ms"),
        ("tau_w", "per byte written to disk", 1e9, "ns"),
    ]
    rows = []
    for name, what, scale, unit in names:
        if name not in model:
            continue
        why = _model_flag(params, name)
        v = model.get(name)
        if why is not None and _kind(why) != NOT_SIGNIFICANT:
            # a coefficient the fit dropped predicts with 0: not a measured 0 ns
            value = f'<span class="fail">{_kind(why)}:</span> <span class="note">{esc(_reason(why))}</span>'
        elif v is None:
            value = f'<span class="fail">failed:</span> <span class="note">{esc(why or "no fit")}</span>'
        else:
            value = f"{plain(v * scale, 4)} {unit}"
            if why is not None:
                value += f' <span class="note">(not significant: {esc(_interval(why))})</span>'
        rows.append([name, what, value])
    s.add(table(["parameter", "meaning", "value"], rows, left=2))
    return s


def _model_flag(params: Params, name: str) -> str | None:
    """The flag of the fit the IMH model took parameter `name` from (bspkit.model.imh.fit_imh: the
    out-of-cache double reads by every process, the permutation, the sequential disk fits)."""
    imh_ = params.imh or {}
    fit: Mapping[str, Any] | None = None
    coef = name
    if name in ("T_n", "T_c", "T_e", "T_p") and imh_.get("mem"):
        fit = imh_["mem"]["fits"].get(f"read/double/cold/p{params.p or 1}", {}).get("memory")
    elif name in ("T_s", "tau_d") and imh_.get("pp"):
        fit = imh_["pp"]["fits"].get("permutation")
        coef = "T_0" if name == "T_s" else "tau"
    elif name[-1] in "rw" and imh_.get("disk"):
        op = "read" if name.endswith("r") else "write"
        fits = imh_["disk"]["fits"]
        fit = fits.get(f"{op}/sequential/direct") or fits.get(f"{op}/sequential/page")
        coef = "T_0" if name.startswith("T_") else "tau"
    if not fit:
        return None
    if "model" not in fit:
        return str(fit.get("error") or "no fit")
    own = _flag(fit, coef)
    if own is None and fit["model"].get(coef) is None:  # a remark of the whole fit: "no size above the start-up"
        return "; ".join(fit.get("flags") or []) or "no fit"
    return own


IMH_SECTIONS = (processor_memory_section, processor_processor_section, memory_disk_section, imh_model_section)
