"""The Integrated Memory Hierarchy (IMH) model of Kang et al. (`003_...` sec. 5.2): fits of the
three data paths that bspprobe's suites mem, pp and disk measure, and the prediction that
adds them (sec. 5.2.4).

* Processor-memory, eq. (4): T = T_n N + T_c N_c + T_e S for one pass over N elements at
  stride S that brings N_c cache lines, fitted per operation, element type, cache state and
  process count, and per cache level (the level that holds the pass's footprint, counting the
  sets a stride leaves unused; out of cache everything comes from memory), as the paper
  writes it and in the form bspkit predicts with (the stride term per line: EQ4_FORMS). A
  quarter of the points are held out of each fit to measure its error on points it did not
  see.
* Processor-processor, eq. (5): T = T_s + m tau_d per pattern, T_s from the smallest messages
  and tau_d from the largest (startup_and_rate); the model's T_s and tau_d come from the
  permutation (as the paper takes them), and sec. 5.2.2's formulas, beside the BSP cost of
  the supersteps bspprobe runs, predict the other patterns (Table 5).
* Memory-disk: T_r + m tau_r and T_w + m tau_w (Table 6) per access pattern and cache state,
  read the same way.

Fits are least squares (eq. 4 on relative residuals: every point counts alike whatever its
size; the rates of eq. 5 and the disk on absolute ones: the largest sizes weigh most), with
the coefficients kept non-negative (scipy's NNLS: a coefficient that would be negative is
dropped and the fit redone without it, and flagged), and 95 % confidence intervals from the
fit on the kept coefficients. As everywhere in bspkit, a coefficient that is dropped or whose
interval reaches zero is null in the triplet (with the reason in `flags`); the value a
prediction uses is in `model`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy import stats as sstats

from bspkit.fileformat import JsonObject
from bspkit.measure.rawdata import RawRun
from bspkit.units import quantity

CONFIDENCE = 0.95
HOLDOUT_EVERY = 4  # every 4th point (in (N, S) order) is held out of the processor-memory fit
MEM_TARGET = 0.10  # issue 14: mean relative error on held-out points
PP_TARGET = 0.15  # per pattern, Table 5
DISK_TARGET = 0.15  # against the dd/fio peers
STREAM_TARGET = 0.15  # out-of-cache bandwidth against the STREAM copy
MIN_FIT_POINTS = 4


# ------------------------------------------------------------------------ the fitter


def nonneg_lsq(columns: Mapping[str, Sequence[float]], y: Sequence[float], relative: bool = True) -> JsonObject:
    """Fits y = sum_k b_k x_k with b_k >= 0 on relative residuals (x_k b - y) / y (relative),
    else on absolute ones (the largest y weigh most).

    Returns {"points", "model": {name: value used to predict (0 when dropped)}, "coef": {name:
    [value, lo, hi] or None}, "residual_rel_rms", "residual_rel_max", "flags"}."""
    names = list(columns)
    yv = np.asarray(y, float)
    X = np.column_stack([np.asarray(columns[k], float) for k in names]) if names else np.zeros((len(yv), 0))
    out: JsonObject = {"points": len(yv), "model": {}, "coef": {}, "flags": []}
    if len(yv) < len(names) + 1 or np.any(yv <= 0):
        out["error"] = f"{len(yv)} points for {len(names)} coefficients" if len(yv) < len(names) + 1 else "a time <= 0"
        out["model"] = dict.fromkeys(names)
        out["coef"] = dict.fromkeys(names)
        return out
    A = X / yv[:, None] if relative else X
    rhs = np.ones_like(yv) if relative else yv
    # scale the columns so NNLS sees numbers near 1 (N runs to 1e7, S to 1e3, m to 1e9)
    scale = np.array([np.abs(A[:, k]).max() or 1.0 for k in range(A.shape[1])])
    b_scaled, _ = optimize.nnls(A / scale, rhs)
    b = b_scaled / scale
    active = [k for k in range(len(names)) if b[k] > 0]
    for k in range(len(names)):
        if k not in active:
            out["flags"].append(f"{names[k]}: dropped (the fit would make it negative or zero)")
    cov = None
    if active:
        Aa = A[:, active]
        b_a, *_ = np.linalg.lstsq(Aa, rhs, rcond=None)
        if np.all(b_a > 0):  # the active set's unconstrained fit: the same point, with a covariance
            b[active] = b_a
        dof = len(yv) - len(active)
        r = Aa @ b[active] - rhs
        s2 = float(r @ r) / dof if dof > 0 else float("nan")
        try:
            cov = s2 * np.linalg.inv(Aa.T @ Aa)
        except np.linalg.LinAlgError:
            cov = None
    tq = float(sstats.t.ppf(0.5 + CONFIDENCE / 2, max(len(yv) - len(active), 1)))
    for k, name in enumerate(names):
        v = float(b[k])
        out["model"][name] = v
        if k not in active:
            out["coef"][name] = None
            continue
        if cov is None or not math.isfinite(float(cov[active.index(k), active.index(k)])):
            out["coef"][name] = [v, None, None]
            continue
        half = tq * math.sqrt(max(float(cov[active.index(k), active.index(k)]), 0.0))
        if v - half <= 0:
            out["coef"][name] = None
            out["flags"].append(f"{name}: {quantity(v, 's', 3)} but its {CONFIDENCE:.0%} interval reaches zero")
        else:
            out["coef"][name] = [v, v - half, v + half]
    rel = (X @ b - yv) / yv
    out["residual_rel_rms"] = float(np.sqrt(np.mean(rel**2)))
    out["residual_rel_max"] = float(np.max(np.abs(rel)))
    return out


def predict_linear(model: Mapping[str, float | None], columns: Mapping[str, float]) -> float:
    return sum((model.get(k) or 0.0) * float(v) for k, v in columns.items())


# ------------------------------------------------------------- processor-memory, eq. (4)


# The mem suite's operations and element types in the order of Kang et al.'s Fig. 45-56 (READ,
# WRITE, MULTIPLY, DIVIDE; Integer, Single, Double: `003_...` sec. 4.3.1, line 513); bspprobe
# measures read and write of int and double unless --mem-ops and --mem-elems ask for more.
MEM_OPS = ("read", "write", "multiply", "divide")
MEM_ELEMS = ("int", "float", "double")


def paper_order(group: str) -> tuple[int, int, str]:
    """Sorts "op/elem/cache/pP" groups as the paper's figures: by operation, then element
    type (an op or type it does not name last)."""
    op, elem, rest = (group.split("/", 2) + ["", ""])[:3]
    rank_op = MEM_OPS.index(op) if op in MEM_OPS else len(MEM_OPS)
    rank_elem = MEM_ELEMS.index(elem) if elem in MEM_ELEMS else len(MEM_ELEMS)
    return rank_op, rank_elem, rest


def mem_fit_rows(mem: Mapping[str, Any], ops: Sequence[str] = (), elems: Sequence[str] = ()) -> list[JsonObject]:
    """The eq. (4) fits of a parameter file's `imh.mem` (the form bspkit predicts with), one row
    per group and level in the paper's figure order: `op`, `elem`, `cache`, `procs`, `level`,
    `points`, `model` (T_n, T_c, T_e, T_p; None for a failed fit), `heldout_mean_rel_error`,
    `error` (why a fit failed). `ops`/`elems` keep only those (empty: all)."""
    rows: list[JsonObject] = []
    for group in sorted(mem.get("fits") or {}, key=paper_order):
        op, elem, cache, procs = group.split("/")
        if (ops and op not in ops) or (elems and elem not in elems):
            continue
        for level, f in mem["fits"][group].items():
            rows.append(
                {
                    "op": op,
                    "elem": elem,
                    "cache": cache,
                    "procs": int(procs.lstrip("p")),
                    "level": level,
                    "points": f.get("points"),
                    "model": f.get("model") if "error" not in f else None,
                    "heldout_mean_rel_error": f.get("heldout_mean_rel_error"),
                    "error": f.get("error"),
                }
            )
    return rows


@dataclass(frozen=True)
class MemPoint:
    op: str
    elem: str
    elem_bytes: int
    cache: str  # "cold" (out of cache, Fig. 6) or "warm" (in cache, Fig. 7)
    procs: int
    n: int  # N: elements per pass
    stride: int  # S, in elements
    lines: int  # N_c
    footprint: int  # bytes of the lines touched
    time_s: float  # median of one pass

    @property
    def group(self) -> str:
        return f"{self.op}/{self.elem}/{self.cache}/p{self.procs}"


def mem_points(run: RawRun) -> list[MemPoint]:
    pts = []
    line = line_bytes(run)
    for r in run.mem:
        lines = int(r["lines"])
        pts.append(
            MemPoint(
                str(r["op"]),
                str(r["elem"]),
                int(r["elem_bytes"]),
                str(r["cache"]),
                int(r["procs"]),
                int(r["n"]),
                int(r["stride"]),
                lines,
                int(r.get("footprint_bytes") or lines * line),
                float(r["_stats"].median),
            )
        )
    return pts


def cache_levels(run: RawRun) -> list[JsonObject]:
    """The data (or unified) caches the probe read, smallest level first."""
    levels = (run.caches or {}).get("levels") or []
    keep = [lv for lv in levels if str(lv.get("type", "")).lower() in ("data", "unified") and lv.get("size_bytes")]
    return sorted(keep, key=lambda lv: int(lv.get("level", 0)))


def line_bytes(run: RawRun) -> int:
    levels = cache_levels(run)
    return int(levels[0].get("line_bytes") or 64) if levels else 64


def cpus_in(listed: Any) -> int:
    """The number of CPUs of a sysfs CPU list ("0-1,4" -> 3); a number is taken as it is."""
    if isinstance(listed, (int, float)):
        return max(1, int(listed))
    count = 0
    for part in str(listed or "").split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit():
            count += int(hi) - int(lo) + 1 if hi.isdigit() else 1
    return max(1, count)


def level_name(footprint: int, procs: int, levels: Sequence[Mapping[str, Any]], stride_bytes: int = 0) -> str:
    """The smallest cache that holds the footprint; a cache that `procs` processes share is
    split between them. A stride of k whole lines maps the lines of a pass to one set in
    gcd(sets, k) only (the probe's strides are powers of two: one in min(sets, k)), so a cache
    of `ways` ways (when the probe read it) holds size / gcd(sets, k) bytes of such a pass: the
    conflict misses that make large strides slow in a cache the data would fill only in part."""
    for lv in levels:
        sharers = max(1, min(procs, cpus_in(lv.get("shared_cpus"))))
        size = int(lv["size_bytes"]) / sharers
        line = int(lv.get("line_bytes") or 64)
        ways = int(lv.get("ways") or 0)
        if ways > 0 and stride_bytes > line and stride_bytes % line == 0:
            sets = max(1, int(lv["size_bytes"]) // (line * ways))
            size /= math.gcd(sets, stride_bytes // line)
        if footprint <= size:
            return f"L{int(lv['level'])}"
    return "memory"


def point_level(p: MemPoint, levels: Sequence[Mapping[str, Any]]) -> str:
    """Where a pass finds its data: out of cache, memory; in cache, the level that holds it."""
    return "memory" if p.cache == "cold" else level_name(p.footprint, p.procs, levels, p.stride * p.elem_bytes)


# Two forms of eq. (4). "paper": T = T_n N + T_c N_c + T_e S, as Kang et al. write it. "lines"
# (what bspkit predicts with): the paper's slope compensation counted where it arises, per line
# brought: T = T_n N + T_c N_c + T_e N_c log2(d / line) + T_p N [d >= page], d = S x element
# bytes. A stride beyond a line costs more per line the further the lines lie apart (fewer
# lines per page for the prefetcher and the TLB: the slope change of the paper's Fig. 23), and
# one beyond a page costs a translation per element.
EQ4_FORMS = ("lines", "paper")


def pass_columns(
    n: float, stride: float, elem_bytes: int, lines: float, line: int, page: int, form: str
) -> dict[str, float]:
    """The regressors of one pass of eq. (4) in a form."""
    if form == "paper":
        return {"T_n": n, "T_c": lines, "T_e": stride}
    d = stride * elem_bytes
    return {
        "T_n": n,
        "T_c": lines,
        "T_e": lines * math.log2(min(d, page) / line) if d > line else 0.0,
        "T_p": n if d >= page else 0.0,
    }


def lines_of(n: float, stride: float, elem_bytes: int, line: int) -> float:
    """N_c: the distinct cache lines a pass of n elements at `stride` touches."""
    return n if stride * elem_bytes >= line else math.ceil(n * stride * elem_bytes / line)


def predict_pass(fit: Mapping[str, Any], n: float, stride: float, elem_bytes: int, line: int, page: int) -> float:
    """eq. (4) of a fit (in its form) for one pass."""
    cols = pass_columns(
        n, stride, elem_bytes, lines_of(n, stride, elem_bytes, line), line, page, fit.get("form", "lines")
    )
    return predict_linear(fit["model"], cols)


def fit_eq4(pts: Sequence[MemPoint], line: int, page: int, form: str = "lines") -> JsonObject:
    """Eq. (4) in a form on the points, with every HOLDOUT_EVERY-th point (in (N, S) order) held
    out of the fit and predicted."""
    ordered = sorted(pts, key=lambda p: (p.n, p.stride))
    held = [p for i, p in enumerate(ordered) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
    train = [p for p in ordered if p not in held]
    if len(train) < MIN_FIT_POINTS:
        train, held = ordered, []

    def columns(ps: Sequence[MemPoint]) -> dict[str, list[float]]:
        rows = [pass_columns(p.n, p.stride, p.elem_bytes, p.lines, line, page, form) for p in ps]
        return {k: [r[k] for r in rows] for k in rows[0]}

    fit = nonneg_lsq(columns(train), [p.time_s for p in train])
    fit["form"] = form
    fit["train_points"] = len(train)
    errs = []
    rows = []
    for p in held:
        pred = predict_linear(fit["model"], pass_columns(p.n, p.stride, p.elem_bytes, p.lines, line, page, form))
        err = (pred - p.time_s) / p.time_s
        errs.append(abs(err))
        rows.append({"n": p.n, "stride": p.stride, "measured_s": p.time_s, "predicted_s": pred, "rel_error": err})
    fit["heldout"] = rows
    fit["heldout_mean_rel_error"] = float(np.mean(errs)) if errs else None
    fit["n_range"] = [min(p.n for p in ordered), max(p.n for p in ordered)]
    fit["stride_range"] = [min(p.stride for p in ordered), max(p.stride for p in ordered)]
    return fit


def fit_mem(run: RawRun) -> JsonObject:
    """Eq. (4) per group (op/elem/cache/procs) and cache level, in both forms (`fits`: the
    form bspkit predicts with; `fits_paper`: as the paper writes it); the STREAM check."""
    pts = mem_points(run)
    if not pts:
        return {}
    levels = cache_levels(run)
    line = line_bytes(run)
    page = int((run.caches or {}).get("page_bytes") or 4096)
    out: JsonObject = {
        "model": "eq. (4) per cache level; lines: T = T_n N + T_c N_c + T_e N_c log2(d/line) + T_p N [d >= page], "
        "paper: T = T_n N + T_c N_c + T_e S (d = stride in bytes)",
        "units": "s per element (T_n, T_p), per cache line (T_c, T_e: per line and doubling of the stride beyond a "
        "line); paper T_e: s per element of stride",
        "caches": levels,
        "line_bytes": line,
        "page_bytes": page,
        "target": MEM_TARGET,
    }
    for form, key in (("lines", "fits"), ("paper", "fits_paper")):
        fits: dict[str, dict[str, JsonObject]] = {}
        errs: list[float] = []
        for group in sorted({p.group for p in pts}):
            by_level: dict[str, list[MemPoint]] = {}
            for p in pts:
                if p.group == group:
                    by_level.setdefault(point_level(p, levels), []).append(p)
            fits[group] = {}
            for name, lpts in by_level.items():
                if len(lpts) < MIN_FIT_POINTS:
                    fits[group][name] = {"points": len(lpts), "error": f"only {len(lpts)} points"}
                    continue
                f = fit_eq4(lpts, line, page, form)
                fits[group][name] = f
                errs += [abs(r["rel_error"]) for r in f["heldout"]]
        suffix = "" if form == "lines" else "_paper"
        out[key] = fits
        out["heldout_points" + suffix] = len(errs)
        out["heldout_mean_rel_error" + suffix] = float(np.mean(errs)) if errs else None
        out["heldout_max_rel_error" + suffix] = float(np.max(errs)) if errs else None
    out["stream"] = stream_check(run, out["fits"], line, page)
    return out


def stream_check(run: RawRun, fits: Mapping[str, Mapping[str, JsonObject]], line: int, page: int) -> list[JsonObject]:
    """The model's out-of-cache bandwidth against the STREAM copy of the same run: a copy is a
    read pass and a write pass over double arrays at stride 1, so eq. (4) predicts its time
    from the cold read and write fits; also the read-only bandwidth, for reference."""
    rows = []
    for r in run.stream:
        procs = int(r["procs"])
        n = int(r["bytes"]) // 8
        read = fits.get(f"read/double/cold/p{procs}", {}).get("memory") or {}
        write = fits.get(f"write/double/cold/p{procs}", {}).get("memory") or {}
        t_read = predict_pass(read, n, 1, 8, line, page) if "model" in read else None
        t_write = predict_pass(write, n, 1, 8, line, page) if "model" in write else None
        measured = float(r["bytes_moved"]) / float(r["_stats"].median)
        row: JsonObject = {
            "procs": procs,
            "bytes": int(r["bytes"]),
            "stream_copy_Bps": measured,
            "model_copy_Bps": None,
            "model_read_Bps": None,
            "ratio": None,
            "within_target": None,
        }
        if t_read and t_read > 0:
            row["model_read_Bps"] = 8.0 * n / t_read
        if t_read and t_write and t_read + t_write > 0:
            row["model_copy_Bps"] = 16.0 * n / (t_read + t_write)
            row["ratio"] = row["model_copy_Bps"] / measured
            row["within_target"] = abs(row["ratio"] - 1) <= STREAM_TARGET
        rows.append(row)
    return rows


# --------------------------------------------------------- processor-processor, eq. (5)

PP_PATTERNS = ("permutation", "pingpong", "scatter", "broadcast")


def pp_medians(run: RawRun, pattern: str) -> list[tuple[int, float, int]]:
    """(m, median time, supersteps) per message size; several roots: the median over roots."""
    by_m: dict[int, list[float]] = {}
    steps: dict[int, int] = {}
    for r in run.pp:
        if r["pattern"] != pattern:
            continue
        m = int(r["bytes"])
        by_m.setdefault(m, []).append(float(r["_stats"].median))
        if r.get("supersteps") is not None:
            steps[m] = int(r["supersteps"])
    return [(m, float(np.median(v)), steps.get(m, 1)) for m, v in sorted(by_m.items())]


def lg(p: int) -> int:
    return max(0, math.ceil(math.log2(p))) if p > 1 else 0


def pp_predictions(pattern: str, m: float, p: int, T_s: float, tau: float) -> dict[str, float]:
    """Sec. 5.2.2's formulas ("paper"), and the BSP cost of the supersteps bspprobe runs ("bsp":
    each pays T_s plus tau_d times its h, the most bytes a process sends or receives in it, as
    the permutation that gave tau_d does: ping-pong two supersteps of h = m, scatter one of
    h = (p-1) m at the root, the broadcast ceil(lg p) of h = m). The paper halves the one-way
    transfers of scatter and broadcast (links that send and receive at once); a machine whose
    processes copy their own data (shared memory) does not."""
    steps = max(1, lg(p))
    if pattern == "permutation":
        return {"paper": T_s + m * tau, "bsp": T_s + m * tau}
    if pattern == "pingpong":
        return {"paper": T_s + m * tau, "bsp": 2 * (T_s + m * tau)}
    if pattern == "scatter":
        return {"paper": T_s + (p - 1) * m * tau / 2, "bsp": T_s + max(1, p - 1) * m * tau}
    if pattern == "broadcast":
        return {"paper": T_s + lg(p) * m * tau / 2, "bsp": steps * (T_s + m * tau)}
    raise ValueError(pattern)


SMALLEST = 3  # the start-up is the median time of the smallest sizes measured
UPPER_OCTAVES = 4  # the time per byte is fitted on the sizes within 2^4 of the largest


def startup_and_rate(sizes: Sequence[float], times: Sequence[float]) -> JsonObject:
    """T = T_0 + m tau read as Kang et al. read their Fig. 25 and 26: T_0, the start-up, from
    the small sizes (the median of the SMALLEST smallest; [median, min, max] as its triplet),
    tau from the slope of the large ones (least squares of T - T_0 = m tau over the sizes in
    the top UPPER_OCTAVES octaves, on absolute residuals so that the largest, out of the
    caches, weigh most; with its interval). One line through all sizes would let the many
    small messages, and sizes that still fit a cache, set the slope."""
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    small = [float(times[i]) for i in order[:SMALLEST]]
    T0 = float(np.median(small))
    top = max(sizes)
    upper = [(float(sizes[i]), float(times[i]) - T0) for i in order if sizes[i] * 2**UPPER_OCTAVES >= top]
    upper = [(m, t) for m, t in upper if t > 0]
    if len(upper) >= 2:
        f = nonneg_lsq({"tau": [m for m, _ in upper]}, [t for _, t in upper], relative=False)
    elif len(upper) == 1:
        m, t = upper[0]
        f = {"points": 1, "model": {"tau": t / m}, "coef": {"tau": [t / m, None, None]}, "flags": []}
    else:
        f = {"points": 0, "model": {"tau": None}, "coef": {"tau": None}, "flags": ["no size above the start-up"]}
    f["model"]["T_0"] = T0
    f["coef"]["T_0"] = [T0, min(small), max(small)]
    f["tau_sizes"] = [m for m, _ in upper]
    f["sizes"] = [float(sizes[i]) for i in order]
    f["times_s"] = [float(times[i]) for i in order]
    tau = f["model"]["tau"]
    pred = [T0 + m * tau for m in f["sizes"]] if tau is not None else None
    if pred is not None:
        rel = [(a - b) / b for a, b in zip(pred, f["times_s"], strict=True)]
        f["residual_rel_rms"] = float(np.sqrt(np.mean(np.square(rel))))
        f["residual_rel_max"] = float(np.max(np.abs(rel)))
    f["bandwidth_Bps"] = 1.0 / tau if tau else None
    return f


def fit_pp(run: RawRun) -> JsonObject:
    if not run.pp:
        return {}
    p = run.p or 1
    fits: dict[str, JsonObject] = {}
    for pattern in PP_PATTERNS:
        pts = pp_medians(run, pattern)
        if not pts:
            continue
        f = startup_and_rate([m for m, _, _ in pts], [t for _, t, _ in pts])
        f["supersteps"] = pts[-1][2]
        fits[pattern] = f
    out: JsonObject = {
        "model": "eq. (5) T = T_s + m tau_d per pattern (T_s: the smallest messages; tau_d: the largest)",
        "units": "s, s per byte",
        "p": p,
        "fits": fits,
    }
    perm = fits.get("permutation")
    if not perm or perm["model"].get("tau") is None:
        out["table5"] = []
        return out
    T_s, tau = perm["model"]["T_0"], perm["model"]["tau"]
    out["T_s"] = T_s
    out["tau_d"] = tau
    out["bandwidth_Bps"] = 1.0 / tau if tau > 0 else None
    table = []
    for pattern, f in fits.items():
        m, measured = f["sizes"][-1], f["times_s"][-1]  # the largest message, as Table 5 uses 16 MB
        pred = pp_predictions(pattern, m, p, T_s, tau)
        row = {"pattern": pattern, "p": p, "bytes": m, "measured_s": measured}
        for form, v in pred.items():
            row[f"predicted_{form}_s"] = v
            row[f"error_{form}"] = (v - measured) / measured
        row["within_target"] = abs(row["error_bsp"]) <= PP_TARGET
        table.append(row)
    out["table5"] = table
    out["target"] = PP_TARGET
    return out


# ------------------------------------------------------------------------- memory-disk


def fit_disk(run: RawRun) -> JsonObject:
    if not run.disk:
        return {}
    groups: dict[str, dict[int, list[float]]] = {}
    for r in run.disk:
        key = f"{r['op']}/{r['access']}/{r['cache']}"
        groups.setdefault(key, {}).setdefault(int(r["bytes"]), []).append(float(r["_stats"].median))
    fits = {
        key: startup_and_rate(sorted(by_m), [float(np.median(by_m[m])) for m in sorted(by_m)])
        for key, by_m in sorted(groups.items())
    }
    return {
        "model": "T_r + m tau_r (read), T_w + m tau_w (write): T from the smallest files, tau from the largest",
        "units": "s, s per byte",
        "info": {k: v for k, v in (run.disk_info or {}).items() if k != "type"},
        "fits": fits,
    }


# ------------------------------------------------------------------- the whole model


def fit_imh(run: RawRun) -> JsonObject:
    """The parameter file's `imh` object: the three paths, and the model's parameters (sec.
    5.2.4) picked from them. Empty when the run has none of the suites."""
    mem, pp, disk = fit_mem(run), fit_pp(run), fit_disk(run)
    if not (mem or pp or disk):
        return {}
    model: JsonObject = {}
    p = run.p or 1
    if mem:
        cold = mem["fits"].get(f"read/double/cold/p{p}", {}).get("memory") or {}
        for k in ("T_n", "T_c", "T_e", "T_p"):
            model[k] = (cold.get("model") or {}).get(k)
    if pp:
        model["T_s"], model["tau_d"] = pp.get("T_s"), pp.get("tau_d")
    if disk:
        for op, short in (("read", "r"), ("write", "w")):
            f = disk["fits"].get(f"{op}/sequential/direct") or disk["fits"].get(f"{op}/sequential/page") or {}
            model[f"T_{short}"] = (f.get("model") or {}).get("T_0")
            model[f"tau_{short}"] = (f.get("model") or {}).get("tau")
    return {"model": model, "mem": mem, "pp": pp, "disk": disk}


def disk_time(
    imh: Mapping[str, Any],
    calls: Sequence[tuple[float, int]],
    op: str,
    access: str = "sequential",
    cache: str = "direct",
    sharers: int = 1,
) -> float | None:
    """sum over call classes of calls x (T_0 + bytes tau): the disk term of sec. 5.2.4 for the
    reads (op "read") or writes of a program that declares them as [(bytes, calls), ...];
    `sharers` programs on one disk at once each see tau x sharers."""
    fit = (imh.get("disk") or {}).get("fits", {}).get(f"{op}/{access}/{cache}")
    if not fit or fit["model"].get("tau") is None:
        return None
    T0, tau = fit["model"].get("T_0") or 0.0, fit["model"]["tau"]
    return sum(n * (T0 + b * tau * sharers) for b, n in calls)
