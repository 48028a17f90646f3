"""Raw samples -> BSP parameters (the parameter file of docs/probe-format.md): `fit_run`.

Per primitive/pattern, `fit_surface` makes every fit of bspkit.model.estimators on the medians of
the g grid points (the thesis' weighted estimators, the least-squares fits of eq. 2.5/2.6,
Bisseling's regression, eq. 2.6 per h) and picks the prediction model; f, l, memcpy and the
As suite are the medians of their records; the validation against the off-grid points is
bspkit.model.probe_validation's, the memory-hierarchy model bspkit.model.imh's.

The superstep time measured includes its bsp_sync, so the constant term g_inf*h_half of the
fit holds the synchronisation latency as well (eq. 2.4 folds l into g(h) this way). With the
empty-sync latency l0 measured on its own (`l` records, variant "empty") the fit of
T = l0 + g_inf (h + h_half_net + o c) with l0 fixed is the same fit reparametrised:
h_half_net = h_half - l0/g_inf, which `lsq` reports beside `l0`.

Rule: a g, l, o, h_half (or any fitted parameter) that comes out negative, or whose
confidence interval reaches zero, is reported as null (JSON) with the reason in `flags`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import numpy as np

from bspkit.fileformat import JsonObject
from bspkit.measure import sentinel_states as ss
from bspkit.measure.hardware import hardware_of
from bspkit.measure.machine_state import LOST_MARK, robust_sd_log, summarize
from bspkit.measure.rawdata import GPoint, RawRun, Stats, median_ci
from bspkit.measure.rawdata import stats as _stats
from bspkit.model.estimators import (
    CONFIDENCE,
    LOSS,
    LOSS_SCALE,
    checked,
    grid_arrays,
    level_fits,
    linreg,
    lsq_fit,
    squared_error,
    weighted_estimators,
)
from bspkit.model.imh import fit_imh
from bspkit.model.params import (
    AsSuite,
    AsTest,
    CanaryNoise,
    FKernel,
    LatencyDetail,
    LinregRecord,
    Lsq25Record,
    LsqRecord,
    MemcpyCheck,
    MemcpyRow,
    Noise,
    Params,
    PredictModel,
    SentinelRegime,
    Surface,
    TotalExchangeRow,
    json_safe,
)
from bspkit.model.probe_validation import VALIDATION_THRESHOLD, calibration_reference, validate
from bspkit.units import quantity

MEMCPY_FACTOR = 1.5  # put's g_inf should be within this factor of memcpy's time per word
SPREAD_WARN = 0.10  # IQR/median above this marks a noisy grid point


# --------------------------------------------------------------------- per surface


def _triplet(name: str, fit: Mapping[str, Any], key: str, flags: list[str], unit: str) -> list[float] | None:
    if key not in fit:
        return None
    v = fit[key]
    if v is None:
        flags.append(f"{name}: undefined because g_inf is not positive")
        return None
    val, lo, hi = v
    if checked(name, val, flags, (lo, hi), unit) is None:
        return None
    return [float(val), float(lo), float(hi)]


def fit_surface(points: list[GPoint], l0: tuple[float, float, float] | None = None, p: int | None = None) -> Surface:
    """Every fit of one g surface, with the null rule applied; p sets the smallest h of
    Bisseling's regression (bspbench's range starts at h = p)."""
    flags: list[str] = []
    entry: JsonObject = {"points": len(points)}
    hs, c, h, t = grid_arrays(points)
    entry["msg_words"] = sorted({int(v) for v in hs})
    entry["count"] = sorted({int(v) for v in c})
    # Weighted estimators (thesis eq. 3.1-3.6).
    est = weighted_estimators(points)
    g_inf = checked("g_inf (eq. 3.2)", est["g_inf"], flags, unit="s/word")
    entry["g_inf"] = g_inf
    entry["g_small"] = checked("g_small (eq. 3.3)", est["g_small"], flags, unit="s/word")
    entry["h_half"] = checked("h_half (eq. 3.4)", est["h_half"] if g_inf else None, flags, unit="words")
    entry["g_mm"] = checked("g_mm (eq. 3.5)", est["g_mm"], flags, unit="s/word")
    entry["o"] = checked("o (eq. 3.6)", est["o"] if g_inf else None, flags, unit="words")
    entry["o_eq31"] = checked("o (eq. 3.1)", est["o_eq31"], flags, unit="words")
    entry["h_min"] = est["h_min"]
    entry["hstar_min"] = est["hstar_min"]
    entry["error_bsp"] = squared_error(points, g_inf, entry["h_half"], None)
    entry["error_bspstar"] = squared_error(points, g_inf, entry["h_half"], entry["o"])
    # Robust least squares, eq. (2.6) and eq. (2.5).
    f6 = lsq_fit(points, with_o=True)
    lsq = LsqRecord(model="2.6", points=f6["points"], loss=f6["loss"])
    if "error" in f6:
        flags.append(f"lsq (2.6): {f6['error']}")
        lsq["error"] = f6["error"]
    lsq["g_inf"] = _triplet("lsq (2.6) g_inf", f6, "g_inf", flags, "s/word")
    lsq["h_half"] = _triplet("lsq (2.6) h_half", f6, "h_half", flags, "words")
    lsq["o"] = _triplet("lsq (2.6) o", f6, "o", flags, "words")
    lsq["residual_rel_rms"] = f6.get("residual_rel_rms")
    lsq["residual_rel_max"] = f6.get("residual_rel_max")
    gi = lsq["g_inf"][0] if lsq["g_inf"] else None
    hh = lsq["h_half"][0] if lsq["h_half"] else None
    oo = lsq["o"][0] if lsq["o"] else None
    lsq["error_bspstar"] = squared_error(points, gi, hh, oo)
    lsq["l0"] = list(l0) if l0 else None
    lsq["h_half_net"] = None
    h_half6 = f6.get("h_half")
    if l0 and gi and h_half6 is not None:
        net = h_half6[0] - l0[0] / gi
        lsq["h_half_net"] = float(net) if net >= 0 else None
    entry["lsq"] = lsq
    f5 = lsq_fit(points, with_o=False)
    lsq5 = Lsq25Record(model="2.5", points=f5["points"], loss=f5["loss"])
    if "error" in f5:
        flags.append(f"lsq (2.5): {f5['error']}")
        lsq5["error"] = f5["error"]
    lsq5["g_inf"] = _triplet("lsq (2.5) g_inf", f5, "g_inf", flags, "s/word")
    lsq5["h_half"] = _triplet("lsq (2.5) h_half", f5, "h_half", flags, "words")
    lsq5["residual_rel_rms"] = f5.get("residual_rel_rms")
    lsq5["error_bsp"] = squared_error(
        points, lsq5["g_inf"][0] if lsq5["g_inf"] else None, lsq5["h_half"][0] if lsq5["h_half"] else None, None
    )
    entry["lsq_2.5"] = lsq5
    # Bisseling's regression.
    lr = linreg(points, p)
    lin = LinregRecord(msg_words=lr["msg_words"], points=lr["points"], range=lr["range"])
    if "h_min" in lr:  # the range used, where the regression was made
        lin["h_min"], lin["h_max"], lin["excluded_h"] = lr["h_min"], lr["h_max"], lr["excluded_h"]
    if "error" in lr:
        flags.append(f"linreg: {lr['error']}")
        lin["error"] = lr["error"]
    lin["g"] = _triplet("linreg g", lr, "g", flags, "s/word")
    lin["l"] = _triplet("linreg l", lr, "l", flags, "s")
    entry["linreg"] = lin
    pm = prediction_model(entry)
    entry["predict"] = pm.to_json() if pm is not None else None
    entry["levels"] = [lv.to_json() for lv in level_fits(points)]
    entry["flags"] = flags
    return Surface.from_json(json_safe(entry))


def _from_lsq(model: str, rec: JsonObject, o: float) -> PredictModel:
    """A least-squares record's g_inf and h_half (a null h_half as 0), with o given."""
    return PredictModel(model=model, g_inf=rec["g_inf"][0], h_half=rec["h_half"][0] if rec.get("h_half") else 0.0, o=o)


def prediction_model(entry: JsonObject) -> PredictModel | None:
    """The parameters used to predict times: the LSQ fit of eq. (2.6) when o is significant,
    else the LSQ fit of eq. (2.5), else eq. (2.6)'s g_inf, else the weighted estimators;
    a null h_half or o counts as 0."""
    lsq, lsq5 = entry.get("lsq") or {}, entry.get("lsq_2.5") or {}
    if lsq.get("g_inf") and lsq.get("o"):
        return _from_lsq("2.6 lsq", lsq, lsq["o"][0])
    if lsq5.get("g_inf"):
        return _from_lsq("2.5 lsq", lsq5, 0.0)
    if lsq.get("g_inf"):
        # eq. (2.5)'s g_inf spans zero but eq. (2.6)'s does not: its g, with the insignificant o as 0
        return _from_lsq("2.6 lsq", lsq, 0.0)
    if entry.get("g_inf") and lsq.get("error") and lsq5.get("error", lsq.get("error")):
        # only where no least-squares fit could be made (too few points); a least-squares
        # g_inf that came out negative or insignificant says the data have no usable g
        return PredictModel(
            model="2.6 eq. 3.2-3.6",
            g_inf=entry["g_inf"],
            h_half=entry.get("h_half") or 0.0,
            o=entry.get("o") or 0.0,
        )
    return None


# ------------------------------------------------------------------- other records


def fit_f(run: RawRun) -> tuple[dict[str, float | None], dict[str, FKernel], list[str]]:
    flags: list[str] = []
    f: dict[str, float | None] = {}
    detail: dict[str, FKernel] = {}
    for rec in run.f:
        k = str(rec["kernel"])
        st = rec["_stats"]
        ops = rec["ops"]
        if ops <= 0:
            flags.append(f"f {k}: ops = {ops} is not positive")
            f[k] = None
        else:
            f[k] = checked(f"f {k}", st.median / ops, flags, unit="s/op")
            if f[k] == 0.0:
                flags.append(f"f {k}: median time is 0 (timer too coarse?)")
                f[k] = None
        detail[k] = FKernel(
            n=rec.get("n"),
            ops=ops,
            median_s=st.median,
            s_per_op=f[k],
            ops_per_s=(1.0 / f[k]) if f[k] else None,
            samples=st.n,
            spread=st.spread,
            note=rec.get("note"),
        )
    return f, detail, flags


def f_averages(f: dict[str, float | None]) -> dict[str, float]:
    """Table C.1's 'Average (double)' and '(int)': 1 / mean of the operation rates."""
    out: dict[str, float] = {}
    for kind in ("double", "int"):
        rates = [1.0 / v for k, v in f.items() if v and f"_{kind}" in k]
        if rates:
            out[kind] = 1.0 / float(np.mean(rates))
    return out


def fit_l(run: RawRun) -> tuple[dict[str, float | None], dict[str, LatencyDetail], list[str]]:
    flags: list[str] = []
    groups: dict[str, list[np.ndarray]] = {}
    for rec in run.l:
        groups.setdefault(str(rec["variant"]), []).append(rec["_samples"])
    l: dict[str, float | None] = {}
    detail: dict[str, LatencyDetail] = {}
    for variant, arrs in groups.items():
        x = np.concatenate(arrs)
        st = _stats(x)
        lo, hi = median_ci(x)
        l[variant] = checked(f"l {variant}", st.median, flags, unit="s")
        if l[variant] == 0.0:
            flags.append(f"l {variant}: median is 0 (timer too coarse?)")
            l[variant] = None
        detail[variant] = {**st.as_dict(), "ci": [lo, hi]}
    return l, detail, flags


def fit_memcpy(run: RawRun) -> tuple[float | None, list[MemcpyRow]]:
    """memcpy's time per 8-byte word. The reference for g is the largest copy made by all p
    processes at once (`procs` = p: the same memory traffic as a g superstep), else the
    largest single-process copy."""
    rows: list[MemcpyRow] = []
    for rec in sorted(run.memcpy, key=lambda r: (r["bytes"], r.get("procs") or 1)):
        words = rec["bytes"] / 8.0
        st = rec["_stats"]
        rows.append(
            MemcpyRow(
                bytes=rec["bytes"],
                procs=rec.get("procs") or 1,
                median_s=st.median,
                s_per_word=st.median / words if words > 0 else None,
                spread=st.spread,
                note=rec.get("note"),
            )
        )
    p = run.p or 1
    pick = [r for r in rows if r["procs"] == p] or [r for r in rows if r["procs"] == 1] or rows
    best = pick[-1]["s_per_word"] if pick else None
    for r in rows:
        r["reference"] = bool(pick) and r is pick[-1]
    return (best if best and best > 0 else None), rows


def fit_as(run: RawRun) -> AsSuite:
    tests: dict[str, AsTest] = {}
    te: list[TotalExchangeRow] = []
    for rec in run.as_tests:
        st: Stats = rec["_stats"]
        name = str(rec["test"])
        if name == "TotalExchange" and rec.get("h"):
            h = float(rec["h"])
            te.append(
                TotalExchangeRow(
                    h=int(h),
                    t_s=st.median,
                    q1=st.q1,
                    q3=st.q3,
                    t_per_h_s=st.median / h,
                    samples=st.n,
                    note=rec.get("note"),
                )
            )
        else:
            tests[name] = {**st.as_dict(), "note": rec.get("note")}
    te.sort(key=lambda r: r["h"])
    return AsSuite(tests=tests, total_exchange=te)


def memcpy_check(g: dict[str, Surface], memcpy_s_per_word: float | None) -> list[MemcpyCheck]:
    """put's (and hpput's) time per word against memcpy's: at most 1.5x? (Less than memcpy's
    is no overhead of the library: the h-relation may have stayed in a cache.)

    memcpy is measured on buffers larger than the caches, so it is compared with put's time
    per word on the largest h of the grid (g(h) = A/h there, out of the caches too: the same
    regime); the g_inf of the one fit over the whole grid is given beside it (`g_inf_global`)."""
    rows: list[MemcpyCheck] = []
    if not memcpy_s_per_word:
        return rows
    for key, e in g.items():
        if not key.startswith(("put/", "hpput/")):
            continue
        top = e.levels[-1] if e.levels else None
        gi = top.g_h if top else None
        ratio = gi / memcpy_s_per_word if gi else None
        rows.append(
            {
                "key": key,
                "g_inf": gi,
                "memcpy_s_per_word": memcpy_s_per_word,
                "g_inf_global": e.predict.g_inf if e.predict else None,
                "h": top.h if top else None,
                "ratio": ratio,
                "pass": bool(ratio <= MEMCPY_FACTOR) if ratio is not None else None,
            }
        )
    return rows


def noise_summary(run: RawRun, states: ss.States | None = None) -> Noise:
    """Outliers (> 1.5 IQR from the median), spread per point, load and timer warnings; the
    sentinels' noise per regime, of the run's state where the machine ran in several (`states`)."""
    warnings: list[str] = list(run.read_warnings)
    pts = list(run.g) + list(run.validation)
    total = sum(p.stats.n for p in pts)
    outl = sum(p.stats.outliers for p in pts)
    noisy = sorted((p for p in pts if p.stats.spread > SPREAD_WARN), key=lambda p: -p.stats.spread)
    others = [r["_stats"] for r in run.f + run.memcpy + run.l + run.as_tests]
    total_all = total + sum(s.n for s in others)
    outl_all = outl + sum(s.outliers for s in others)
    cores = run.header.get("cores")
    la0 = run.header.get("loadavg_start")
    la1 = (run.footer or {}).get("loadavg_end")
    load_max = None
    for rec in run.load:
        la = rec.get("loadavg")
        if isinstance(la, list) and la:
            load_max = max(load_max or 0.0, float(la[0]))
    for name, la in (("start", la0), ("end", la1)):
        if isinstance(la, list) and la and isinstance(cores, (int, float)) and la[0] > cores:
            warnings.append(f"load average {la[0]:.2f} > {int(cores)} cores at the {name}: noisy run")
    if load_max is not None and isinstance(cores, (int, float)) and load_max > cores:
        warnings.append(f"load average reached {load_max:.2f} > {int(cores)} cores during the run: noisy run")
    if total_all and outl_all / total_all > 0.10:
        warnings.append(
            f"{outl_all} of {total_all} samples ({100 * outl_all / total_all:.1f}%) are more than 1.5 IQR "
            "from their point's median"
        )
    if pts and len(noisy) > 0.2 * len(pts):
        warnings.append(f"{len(noisy)} of {len(pts)} grid points have a spread (IQR/median) above {SPREAD_WARN:.0%}")
    timer = run.header.get("timer") or {}
    res = timer.get("resolution_s") if isinstance(timer, dict) else None
    if pts and isinstance(res, (int, float)) and res > 0:
        tmin = min(p.stats.median for p in pts)
        if res > 0.01 * tmin:
            warnings.append(
                f"timer resolution {quantity(res, 's')} is more than 1% of the shortest median {quantity(tmin, 's')}"
            )
    fw = (run.footer or {}).get("warnings")
    if isinstance(fw, list):
        warnings.extend(f"bspprobe: {w}" for w in fw)
    out: Noise = {
        "samples": total_all,
        "outliers": outl_all,
        "g_samples": total,
        "g_outliers": outl,
        "points": len(pts),
        "noisy_points": [
            {
                "key": p.key,
                "msg_words": p.msg_words,
                "count": p.count,
                "spread": p.stats.spread,
                "outliers": p.stats.outliers,
            }
            for p in noisy[:20]
        ],
        "noisy_point_count": len(noisy),
        "loadavg_start": la0,
        "loadavg_end": la1,
        "loadavg_max": load_max,
        "warnings": warnings,
    }
    regimes = sentinel_noise(run, ss.run_state_sentinels(run.sentinels, states) if states else None)
    if states is not None and states.count > 1:
        out["states"] = states.to_json()
        warnings.append(states.sentence())
    if regimes:
        out["regimes"] = regimes
        for regime, row in regimes.items():
            sd = row.get("rel_sd")
            if sd is not None and sd > SENTINEL_WARN:
                warnings.append(
                    f"the sentinel {regime} ({row['what']}) moved by {sd:.0%} (robust sd) between its "
                    f"{row['visits']} visits: the machine changed speed during the run"
                )
    canary = canary_noise(run)
    if canary:
        out["canary"] = canary
    adaptive = adaptive_summary(run)
    if adaptive:
        out["adaptive"] = adaptive
    return out


# The regimes of the sentinels, in the order the noise object lists them.
SENTINEL_REGIMES = ("compute", "sync", "small_h", "large_h")
# A regime whose visits' medians scatter more than this (robust sd of log) is named in the
# noise warnings: the machine moved that much between moments of the run.
SENTINEL_WARN = 0.10


def _sentinel_what(rec: JsonObject) -> str:
    regime = rec.get("regime")
    if regime == "compute":
        return f"{rec.get('kernel')} n={rec.get('n')} on {rec.get('procs')} processes at once"
    if regime == "sync":
        return "bsp_sync alone (batched)"
    return f"{rec.get('primitive')}/{rec.get('pattern')} h={rec.get('h')} in {rec.get('count')} message(s)"


def sentinel_noise(run: RawRun, sentinels: list[JsonObject] | None = None) -> dict[str, SentinelRegime]:
    """params.json's `noise.regimes`: per regime of the sentinels (issue 39), the machine's
    time-to-time variability from the medians of its visits spread over the run: `rel_sd`, their
    robust sd of log (1.4826 x the median absolute deviation of log median), the largest over the
    smallest, their count and times, the h of the h regimes; beside it the visits' own spread (IQR
    / median, the median over the visits), which is the noise within one moment. {} for a run
    without sentinels (files before issue 39). sentinels: those to read (default: all of the run's)."""
    groups: dict[str, list[JsonObject]] = {}
    for rec in run.sentinels if sentinels is None else sentinels:
        groups.setdefault(str(rec["regime"]), []).append(rec)
    out: dict[str, SentinelRegime] = {}
    for regime in sorted(groups, key=lambda r: (SENTINEL_REGIMES.index(r) if r in SENTINEL_REGIMES else 99, r)):
        recs = sorted(groups[regime], key=lambda r: (r.get("t_s") or 0.0, r.get("visit") or 0))
        medians = [float(r["_stats"].median) for r in recs]
        positive = [m for m in medians if m > 0]
        sd = robust_sd_log(positive)
        row: SentinelRegime = {
            "what": _sentinel_what(recs[0]),
            "visits": len(recs),
            "median_s": float(np.median(medians)),
            "rel_sd": sd,
            "max_over_min": max(positive) / min(positive) if positive else None,
            "within_spread": float(np.median([r["_stats"].spread for r in recs])),
            "marked_visits": sum(1 for r in recs if r.get("_mark") is not None),
            "series": [[r.get("t_s"), m] for r, m in zip(recs, medians, strict=True)],
        }
        if isinstance(recs[0].get("h"), (int, float)):
            row["h"] = int(recs[0]["h"])
        out[regime] = row
    return out


# at most this many of the batches the canary marked are listed in the parameter file
CANARY_LISTED = 50


def canary_noise(run: RawRun) -> CanaryNoise | None:
    """The canary (issue 39): its usual time and spread in this run, the ratio above which it
    marks a batch, and the batches it marked (at most CANARY_LISTED listed; their data stay in
    the raw file, the fit leaves the g points among them out as it does batches in which a
    process lost its core). None for a run without a canary."""
    ref = run.canary
    if ref is None:
        return None
    slowed = list(run.canary_slowed)
    return {
        **ref.as_dict(),  # type: ignore[typeddict-item]
        "slowed_count": len(slowed),
        "slowed": slowed[:CANARY_LISTED],
        "note": (
            "a batch whose canary (before or after it, on any process) took more than threshold x that "
            "process's median: the machine was slower then by what no scheduler counter shows; its samples stay "
            "in the raw file, the fit leaves its g points out"
        ),
    }


def adaptive_summary(run: RawRun) -> JsonObject | None:
    """How the adaptive rule ended the g and validation points (issue 39): per reason the
    points, their repetitions (median, max), and the achieved interval's half-width (median,
    90th percentile). None for files without the rule's keys."""
    pts = [pt for pt in list(run.g) + list(run.validation) if pt.stop is not None]
    if not pts:
        return None
    by: dict[str, list[GPoint]] = {}
    for pt in pts:
        by.setdefault(str(pt.stop), []).append(pt)
    out: JsonObject = {"points": len(pts)}
    for stop, group in sorted(by.items()):
        reps = [pt.stats.n for pt in group]
        cis = [pt.median_ci_rel for pt in group if pt.median_ci_rel is not None]
        out[stop] = {
            "points": len(group),
            "reps_median": float(np.median(reps)),
            "reps_max": max(reps),
            "ci_rel_median": float(np.median(cis)) if cis else None,
            "ci_rel_p90": float(np.percentile(cis, 90)) if cis else None,
        }
    return out


MACHINE_KEYS = (
    "host",
    "cpu",
    "cores",
    "cores_online",
    "kernel",
    "compiler",
    "library",
    "backend",
    "p",
    "binding",
    "blas",
    "blas_coretype",
    "blas_corename",
    "blas_config",
    "mpi",
    "date",
    "mode",
    "version",
    "seed",
    "command",
    "timer",
    "loadavg_start",
    "grid",
    "sections",
    "repetitions",
)


# Fewest unmarked points a surface is fitted from (and distinct h among them): with fewer, the
# fit keeps the marked points too and says so.
MIN_UNMARKED_POINTS = 6
MIN_UNMARKED_H = 3


def unmarked_points(key: str, points: list[GPoint]) -> tuple[list[GPoint], str | None]:
    """The points of one surface a fit may use: those measured while every process held its
    core (bspkit.measure.machine_state); all of them, and the reason, where too few are left."""
    clean = [pt for pt in points if pt.mark is None]
    if len(clean) == len(points):
        return points, None
    if len(clean) >= MIN_UNMARKED_POINTS and len({pt.h for pt in clean}) >= MIN_UNMARKED_H:
        return clean, None
    return points, (
        f"{key}: {len(points) - len(clean)} of {len(points)} points were measured while a process did not hold "
        f"its core; the {len(clean)} left are too few to fit (at least {MIN_UNMARKED_POINTS} at "
        f"{MIN_UNMARKED_H} values of h), so the fit uses all of them"
    )


def machine_state_of(
    run: RawRun, left_out: Mapping[str, int], kept_marked: list[str], canary_kept: list[str] | None = None
) -> JsonObject:
    """params.json's `machine_state`: how busy the machine was, what the fit left out for it
    and what it had to keep."""
    by_type: dict[str, list[Any]] = {}
    for rtype, state in run.states:
        by_type.setdefault(rtype, []).append(state)
    return {
        "lost_mark": LOST_MARK,
        "summary": summarize(state for _t, state in run.states).as_dict(),
        "by_record": {t: summarize(states).as_dict() for t, states in by_type.items()},
        "left_out_points": dict(left_out),
        "marked_visits_dropped": sum(pt.marked_visits for pt in run.g + run.validation if pt.mark is None),
        "kept_marked": kept_marked,
        # the canary's marks (issue 39), counted apart from the core's: the g and validation
        # points among them are left out or scored apart as the core's marks are
        "canary_marked": len(run.canary_slowed),
        "canary_threshold": run.canary.threshold if run.canary else None,
        "canary_kept": list(canary_kept or []),
    }


def fit_run(run: RawRun) -> Params:
    """The whole parameter file for one raw run."""
    h = run.header
    machine = {k: h.get(k) for k in MACHINE_KEYS if k in h}
    if run.footer:
        machine["loadavg_end"] = run.footer.get("loadavg_end")
        machine["elapsed_s"] = run.footer.get("elapsed_s")
    f, f_detail, f_flags = fit_f(run)
    l_s, l_detail, l_flags = fit_l(run)
    l0 = None
    if "empty" in l_detail and l_s.get("empty"):
        lo, hi = l_detail["empty"]["ci"]
        l0 = (l_s["empty"], lo, hi)
    memcpy_spw, memcpy_rows = fit_memcpy(run)
    g: dict[str, Surface] = {}
    left_out: dict[str, int] = {}
    # f and l are measured once each: kept although marked, and named (a process lost its core:
    # kept_marked; only the canary says the machine was slower: canary_kept)
    kept_marked, canary_kept = [], []
    for rec, name in [(r, f"f {r['kernel']}") for r in run.f] + [(r, f"l {r['variant']}") for r in run.l]:
        mark = rec.get("_mark")
        if mark is not None:
            (canary_kept if mark.kind == "canary" else kept_marked).append(f"{name}: {mark.evidence}")
    # a machine that ran in several states (the sentinels): the fit is of the run's state
    states = ss.find_states(run.sentinels)
    ss.mark_points(run, states)
    for key in run.g_keys():
        every = run.g_points(key)
        points, why_all = unmarked_points(key, every)
        left_out[key] = len(every) - len(points)
        if why_all:
            kept_marked.append(why_all)
        g[key] = fit_surface(points, l0, run.p)
    calibration = calibration_reference(run)
    # the machine's noise first: the check's split weighs each point's error by it
    noise = noise_summary(run, states)
    params = Params(
        source=str(run.path),
        fitted=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        machine=machine,
        p=run.p,
        f=f,
        f_average=f_averages(f),
        f_detail=f_detail,
        l=l_s,
        l_detail=l_detail,
        memcpy_s_per_word=memcpy_spw,
        memcpy_detail=memcpy_rows,
        g=g,
        as_suite=fit_as(run),
        validation=validate(run, g, f, l_s, calibration, noise),
        calibration=calibration,
        checks={"memcpy": memcpy_check(g, memcpy_spw), "memcpy_factor": MEMCPY_FACTOR},
        noise=noise,
        flags=f_flags + l_flags,
        fit_settings={
            "confidence": CONFIDENCE,
            "loss": LOSS,
            "loss_scale": LOSS_SCALE,
            "validation_threshold": VALIDATION_THRESHOLD,
            "units": "seconds; words of 8 bytes; error_bsp(star) in s^2/word^2",
        },
        imh=fit_imh(run),
        machine_state=machine_state_of(run, left_out, kept_marked, canary_kept),
    )
    params.hardware = dict(hardware_of(run, params.empty_sync_s()))
    # what a reader of the file gets: plain JSON values, NaN and infinities as null
    return Params.from_json(params.to_json())
