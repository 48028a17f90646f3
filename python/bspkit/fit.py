"""Raw samples -> BSP parameters (the parameter file of docs/probe-format.md).

Per primitive/pattern, from the medians of the `g` grid points (h* = msg_words, c = count,
h = c h*, T = median superstep time, g~ = T / h):

* the thesis' weighted estimators (ch. 3.2): eq. (3.2) g_inf with weight h^3, (3.3) g_small
  with weight h^-3, (3.4) h_half = (g_small/g_inf - 1) h_min, (3.5) g_mm over the smallest
  message size with weight c^2, (3.6) o = (g_mm/g_inf - 1) h*_min, and for reference the
  Oxford bspprobe's (3.1) o = (g_max/g_min - 1) h_max;
* error_bsp / error_bspstar (App. B.1): the mean squared error of g~ against the model with
  h_half (eq. 2.5) and with h_half and o (eq. 2.6), in s^2/word^2 as in Tables C.3, C.6, C.9;
* a robust least-squares fit of eq. (2.6) multiplied out by h,
      T(h, c) = g_inf * (h + h_half + o * c)        (h / h* = c),
  and of eq. (2.5), T(h) = g_inf * (h + h_half). The model is linear in (g_inf,
  g_inf h_half, g_inf o), so it is fitted in those coefficients (well conditioned even when
  g_inf is near zero), on relative residuals (T_model - T)/T with the soft-L1 loss (scale
  5 %); 95 % confidence intervals come from the Jacobian with the loss's IRLS weights and
  Student's t, carried to h_half and o by the delta method; plus the relative RMS of the
  residuals;
* Bisseling's linear regression T = g h + l (the "g const" model) as BSPedupack's bspbench
  fits it: one-word messages, h from p to 2048 words (`linreg`), with the range used.

The superstep time measured includes its bsp_sync, so the constant term g_inf*h_half of the
fit holds the synchronisation latency as well (eq. 2.4 folds l into g(h) this way). A
separate term l0 cannot be fitted: l0 and g_inf*h_half are the same constant of T(h, c).
With the empty-sync latency l0 measured on its own (`l` records, variant "empty") the fit
of T = l0 + g_inf (h + h_half_net + o c) with l0 fixed is the same fit reparametrised:
h_half_net = h_half - l0/g_inf, which `lsq` reports beside `l0`.

Rule: a g, l, o, h_half (or any fitted parameter) that comes out negative, or whose
confidence interval reaches zero, is reported as null (JSON) with the reason in `flags`.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import optimize
from scipy import stats as sstats

from bspkit import calibrate as cb
from bspkit.imh import fit_imh
from bspkit.params import JsonObject, Level, Params, PredictModel, Surface, json_safe
from bspkit.predict import model_g, predict_time, predict_time_levels
from bspkit.rawdata import GPoint, RawRun
from bspkit.rawdata import stats as _stats
from bspkit.units import quantity

CONFIDENCE = 0.95
LOSS = "soft_l1"
LOSS_SCALE = 0.05  # relative residual where the robust loss turns linear
VALIDATION_THRESHOLD = 0.10  # relative error of eq. (2.6) predictions that passes
MEMCPY_FACTOR = 1.5  # put's g_inf should be within this factor of memcpy's time per word
SPREAD_WARN = 0.10  # IQR/median above this marks a noisy grid point


# --------------------------------------------------------------------------- helpers


def _fmt(v: float, unit: str) -> str:
    """A value of a flag, with its unit (units.quantity: 3.2 ns/word, not 3.2e-09 s/word)."""
    return quantity(v, unit) if unit else quantity(v)


def checked(
    name: str,
    value: float | None,
    flags: list[str],
    ci: tuple[float, float] | None = None,
    unit: str = "",
) -> float | None:
    """The value, or None with a flag when it is missing, negative or its interval reaches 0."""
    if value is None or not math.isfinite(value):
        flags.append(f"{name}: could not be computed")
        return None
    if value < 0:
        flags.append(f"{name} = {_fmt(value, unit)} is negative")
        return None
    if ci is not None:
        lo, hi = ci
        if not (math.isfinite(lo) and math.isfinite(hi)):
            flags.append(f"{name}: no confidence interval (ill-posed fit)")
            return None
        if lo <= 0:
            flags.append(f"{name}: {int(CONFIDENCE * 100)}% interval [{_fmt(lo, unit)}, {_fmt(hi, unit)}] spans zero")
            return None
    return float(value)


def median_ci(samples: np.ndarray, conf: float = CONFIDENCE) -> tuple[float, float]:
    """Distribution-free interval for the median from order statistics."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    if n < 6:
        return float(x[0]), float(x[-1])
    j = int(sstats.binom.ppf((1 - conf) / 2, n, 0.5))
    j = max(j - 1, 0)
    return float(x[j]), float(x[n - 1 - j])


def _arrays(points: list[GPoint]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    hs = np.array([p.msg_words for p in points], dtype=float)
    c = np.array([p.count for p in points], dtype=float)
    h = np.array([p.h for p in points], dtype=float)
    t = np.array([p.stats.median for p in points], dtype=float)
    return hs, c, h, t


# --------------------------------------------------------------- weighted estimators


def weighted_estimators(points: list[GPoint]) -> dict[str, Any]:
    """Eq. (3.1)-(3.6) on the g~ values of one surface. Values may be negative (checked later)."""
    hs, c, h, t = _arrays(points)
    g = t / h
    out: dict[str, Any] = {}
    w = h**3
    out["g_inf"] = float(np.sum(g * w) / np.sum(w))  # (3.2)
    ws = h ** (-3.0)
    out["g_small"] = float(np.sum(g * ws) / np.sum(ws))  # (3.3)
    h_min = float(h.min())
    out["h_min"] = h_min
    out["h_half"] = (out["g_small"] / out["g_inf"] - 1.0) * h_min  # (3.4)
    hs_min = float(hs.min())
    out["hstar_min"] = hs_min
    sel = hs == hs_min
    wc = c[sel] ** 2
    out["g_mm"] = float(np.sum(g[sel] * wc) / np.sum(wc))  # (3.5)
    out["o"] = (out["g_mm"] / out["g_inf"] - 1.0) * hs_min  # (3.6)
    imax, imin = int(np.argmax(g)), int(np.argmin(g))
    out["o_eq31"] = (g[imax] / g[imin] - 1.0) * h[imax]  # (3.1), Oxford bspprobe's N_1/2
    return out


def squared_error(points: list[GPoint], g_inf: float | None, h_half: float | None, o: float | None) -> float | None:
    """App. B.1: mean squared error of g~ against eq. (2.6) (o = None/0: eq. 2.5), s^2/word^2."""
    if g_inf is None:
        return None
    hs, c, h, t = _arrays(points)
    pred = model_g(h, hs, g_inf, h_half or 0.0, o or 0.0)
    return float(np.mean((t / h - pred) ** 2))


# ------------------------------------------------------------------ least squares


def _robust_weights(r: np.ndarray) -> np.ndarray:
    """IRLS weights rho'(z) of scipy's soft_l1 loss, z = (r/f)^2."""
    z = (r / LOSS_SCALE) ** 2
    return 1.0 / np.sqrt(1.0 + z)


def lsq_fit(points: list[GPoint], with_o: bool = True) -> dict[str, Any]:
    """Robust fit of T = g_inf (h + h_half [+ o c]); returns values, 95 % CIs, residuals.

    Values are raw here (possibly negative); the caller applies the null rule.
    """
    hs, c, h, t = _arrays(points)
    k = 3 if with_o else 2
    n = t.size
    res: dict[str, Any] = {
        "model": "2.6" if with_o else "2.5",
        "points": int(n),
        "loss": f"{LOSS} (scale {LOSS_SCALE})",
    }
    if n < k + 2:
        res["error"] = f"too few grid points ({n}) for {k} parameters"
        return res
    if len(np.unique(h)) < 2 or (with_o and len(np.unique(c)) < 2):
        res["error"] = "the grid varies too little (need several h and several c)"
        return res
    # T = a h + b + d c is linear in (a, b, d) = g_inf (1, h_half, o): fit it there (well
    # conditioned even when g_inf is near 0 or negative), on relative residuals, with the
    # robust loss; then g_inf = a, h_half = b/a, o = d/a with intervals by the delta method.
    X = np.column_stack([h, np.ones(n)] + ([c] if with_o else [])) / t[:, None]
    s = np.linalg.norm(X, axis=0)
    Xs = X / s
    phi0, *_ = np.linalg.lstsq(Xs, np.ones(n), rcond=None)

    def resid(phi: np.ndarray) -> np.ndarray:
        return Xs @ phi - 1.0

    try:
        sol = optimize.least_squares(resid, phi0, loss=LOSS, f_scale=LOSS_SCALE, method="trf", max_nfev=2000)
    except (ValueError, np.linalg.LinAlgError) as e:  # pragma: no cover - scipy edge cases
        res["error"] = f"least squares failed: {e}"
        return res
    r = sol.fun
    w = _robust_weights(r)
    dof = n - k
    s2 = float(np.sum(w * r**2) / dof)
    M = Xs.T @ (Xs * w[:, None])
    if np.linalg.cond(M) > 1e12:
        res["error"] = "the parameters cannot be told apart on this grid (singular design)"
        return res
    theta = sol.x / s
    cov = np.linalg.inv(M) * s2 / np.outer(s, s)
    tq = float(sstats.t.ppf(0.5 + CONFIDENCE / 2, dof))
    a = float(theta[0])
    se_a = math.sqrt(max(cov[0, 0], 0.0))
    res["g_inf"] = (a, a - tq * se_a, a + tq * se_a)
    names = ["h_half"] + (["o"] if with_o else [])
    for i, nm in enumerate(names, start=1):
        if a <= 0:
            res[nm] = None  # undefined: h_half = b / g_inf
            continue
        v = float(theta[i] / a)
        grad = np.zeros(k)
        grad[0] = -theta[i] / a**2
        grad[i] = 1.0 / a
        se = math.sqrt(max(float(grad @ cov @ grad), 0.0))
        res[nm] = (v, v - tq * se, v + tq * se)
    res["residual_rel_rms"] = float(np.sqrt(np.mean(r**2)))
    res["residual_rel_max"] = float(np.max(np.abs(r)))
    res["converged"] = bool(sol.success)
    return res


# ------------------------------------------------------------- linear regression

BSPBENCH_H_MAX = 2048  # BSPedupack 2.0's bspbench: MAXH, the largest h-relation it fits
LINE_BREAK = 0.5  # a top segment this much steeper than the median segment starts another regime


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Ordinary least squares y = g x + l with 95 % intervals: ((g, lo, hi), (l, lo, hi))."""
    r = sstats.linregress(x, y)
    tq = float(sstats.t.ppf(0.5 + CONFIDENCE / 2, x.size - 2))
    g = (float(r.slope), float(r.slope - tq * r.stderr), float(r.slope + tq * r.stderr))
    l_s = (
        float(r.intercept),
        float(r.intercept - tq * r.intercept_stderr),
        float(r.intercept + tq * r.intercept_stderr),
    )
    return g, l_s


def linreg(points: list[GPoint], p: int | None = None) -> dict[str, Any]:
    """Bisseling's g and l (the "g const" model): T = g h + l fitted by ordinary least
    squares as BSPedupack's bspbench does, over its h-relations: messages of one word (the
    smallest message size of the grid), h from p to bspbench's MAXH = 2048 words.

    Why that range: bspbench reports the fit over h = p..MAXH (MAXH >> p) as "the bottom
    line" (h below p is not a full h-relation: some processes send nothing); the h-relations
    there stay in the first level of the cache. Beyond it g grows step-wise as the
    h-relation leaves each cache level, and a line through several regimes has a negative
    intercept l. For the same reason the top of the range is dropped while the time per word
    added up to it is more than LINE_BREAK above the median over the range (a cache regime
    that begins inside it). The range used is reported (`h_min`, `h_max`, `excluded_h`)."""
    hs, c, h, t = _arrays(points)
    hstar = float(hs.min())
    h_lo = float(max(p or 1, hstar))
    sel = (hs == hstar) & (h >= h_lo) & (h <= BSPBENCH_H_MAX)
    out: dict[str, Any] = {
        "msg_words": int(hstar),
        "points": int(np.count_nonzero(sel)),
        "range": f"h* = {int(hstar)} word(s) per message, {int(h_lo)} <= h <= {BSPBENCH_H_MAX} (bspbench: p..MAXH)",
    }
    if len(np.unique(h[sel])) < 3:
        out["error"] = (
            f"fewer than 3 h-relations with h* = {int(hstar)} and {int(h_lo)} <= h <= {BSPBENCH_H_MAX} in the grid"
        )
        return out
    levels = np.unique(h[sel])
    t_at = np.array([np.median(t[sel][h[sel] == v]) for v in levels])
    # Drop the top h-relation while the time per extra word up to it (the slope of the last
    # segment) is more than LINE_BREAK above the median slope of all segments: a cache
    # regime begins there. The median ignores the noise of the small h, where T is mostly
    # the sync; only slower counts: leaving a cache never makes an h-relation faster.
    n_used = levels.size
    while n_used > 3:
        slopes = np.diff(t_at[:n_used]) / np.diff(levels[:n_used])
        if slopes[-1] <= (1 + LINE_BREAK) * np.median(slopes):
            break
        n_used -= 1
    keep = sel & (h <= levels[n_used - 1])
    x, y = h[keep], t[keep]
    excluded = [int(v) for v in levels[n_used:]]
    out["points"] = int(x.size)
    out["h_min"] = int(x.min())
    out["h_max"] = int(x.max())
    out["excluded_h"] = sorted(excluded)
    out["g"], out["l"] = _ols(x, y)
    return out


# ------------------------------------------------------------ per value of h


def level_fits(points: list[GPoint]) -> list[Level]:
    """Eq. (2.6) per grid value of h: at fixed h it reads T(c) = A + B c, with
    A = g_inf (h + h_half) (the time of the h-relation, its sync included: A/h = g(h) of
    eq. 2.5) and B = g_inf o (the cost of one more message). A and B are fitted on each
    value of h of the grid (robust, relative residuals, both >= 0) and interpolated between
    them, log-linearly in h (`predict_time_levels`).

    Why: one (g_inf, h_half, o) cannot hold across a memory hierarchy. On the machines we
    measure, g(h) changes several-fold between h-relations that live in L1, L2, L3 and
    memory, and in steps where the library changes method; measured per h and interpolated,
    eq. (2.6) predicts the h-relations between the grid's values (the validation checks it).
    """
    by_h: dict[int, list[GPoint]] = {}
    for p in points:
        by_h.setdefault(int(p.h), []).append(p)
    out: list[Level] = []
    for h, sel in sorted(by_h.items()):
        c = np.array([p.count for p in sel], dtype=float)
        t = np.array([p.stats.median for p in sel], dtype=float)
        if len(sel) >= 3 and len(np.unique(c)) >= 2:
            X = np.column_stack([np.ones_like(c), c]) / t[:, None]
            scale = np.linalg.norm(X, axis=0)
            Xs = X / scale
            phi0 = np.maximum(np.linalg.lstsq(Xs, np.ones_like(t), rcond=None)[0], 1e-12)
            sol = optimize.least_squares(
                lambda ph, Xs=Xs: Xs @ ph - 1.0, phi0, loss=LOSS, f_scale=LOSS_SCALE, bounds=(0.0, np.inf), method="trf"
            )
            a, b = (float(v) for v in sol.x / scale)
            resid = float(np.sqrt(np.mean(sol.fun**2)))
        else:
            a, b, resid = float(np.median(t)), 0.0, None
        if a <= 0:
            continue
        out.append(Level(h=h, A_s=a, B_s=b, g_h=a / h, points=len(sel), residual_rel_rms=resid))
    return out


# --------------------------------------------------------------------- per surface


def _triplet(name: str, fit: dict[str, Any], key: str, flags: list[str], unit: str) -> list[float] | None:
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
    hs, c, h, t = _arrays(points)
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
    lsq: dict[str, Any] = {"model": "2.6", "points": f6["points"], "loss": f6["loss"]}
    if "error" in f6:
        flags.append(f"lsq (2.6): {f6['error']}")
        lsq["error"] = f6["error"]
    for nm, unit in (("g_inf", "s/word"), ("h_half", "words"), ("o", "words")):
        lsq[nm] = _triplet(f"lsq (2.6) {nm}", f6, nm, flags, unit)
    lsq["residual_rel_rms"] = f6.get("residual_rel_rms")
    lsq["residual_rel_max"] = f6.get("residual_rel_max")
    gi = lsq["g_inf"][0] if lsq["g_inf"] else None
    hh = lsq["h_half"][0] if lsq["h_half"] else None
    oo = lsq["o"][0] if lsq["o"] else None
    lsq["error_bspstar"] = squared_error(points, gi, hh, oo)
    lsq["l0"] = list(l0) if l0 else None
    lsq["h_half_net"] = None
    if l0 and gi and "h_half" in f6:
        net = f6["h_half"][0] - l0[0] / gi
        lsq["h_half_net"] = float(net) if net >= 0 else None
    entry["lsq"] = lsq
    f5 = lsq_fit(points, with_o=False)
    lsq5: dict[str, Any] = {"model": "2.5", "points": f5["points"], "loss": f5["loss"]}
    if "error" in f5:
        flags.append(f"lsq (2.5): {f5['error']}")
        lsq5["error"] = f5["error"]
    for nm, unit in (("g_inf", "s/word"), ("h_half", "words")):
        lsq5[nm] = _triplet(f"lsq (2.5) {nm}", f5, nm, flags, unit)
    lsq5["residual_rel_rms"] = f5.get("residual_rel_rms")
    lsq5["error_bsp"] = squared_error(
        points, lsq5["g_inf"][0] if lsq5["g_inf"] else None, lsq5["h_half"][0] if lsq5["h_half"] else None, None
    )
    entry["lsq_2.5"] = lsq5
    # Bisseling's regression.
    lr = linreg(points, p)
    lin: dict[str, Any] = {
        k: lr[k] for k in ("msg_words", "points", "range", "h_min", "h_max", "excluded_h") if k in lr
    }
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


def prediction_model(entry: JsonObject) -> PredictModel | None:
    """The parameters used to predict times: the LSQ fit of eq. (2.6) when o is significant,
    else the LSQ fit of eq. (2.5), else the weighted estimators; a null h_half or o counts as 0."""
    lsq, lsq5 = entry.get("lsq") or {}, entry.get("lsq_2.5") or {}
    if lsq.get("g_inf") and lsq.get("o"):
        return PredictModel(
            model="2.6 lsq",
            g_inf=lsq["g_inf"][0],
            h_half=lsq["h_half"][0] if lsq.get("h_half") else 0.0,
            o=lsq["o"][0],
        )
    if lsq5.get("g_inf"):
        return PredictModel(
            model="2.5 lsq",
            g_inf=lsq5["g_inf"][0],
            h_half=lsq5["h_half"][0] if lsq5.get("h_half") else 0.0,
            o=0.0,
        )
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


def fit_f(run: RawRun) -> tuple[dict[str, float | None], dict[str, Any], list[str]]:
    flags: list[str] = []
    f: dict[str, float | None] = {}
    detail: dict[str, Any] = {}
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
        detail[k] = {
            "n": rec.get("n"),
            "ops": ops,
            "median_s": st.median,
            "s_per_op": f[k],
            "ops_per_s": (1.0 / f[k]) if f[k] else None,
            "samples": st.n,
            "spread": st.spread,
            "note": rec.get("note"),
        }
    return f, detail, flags


def f_averages(f: dict[str, float | None]) -> dict[str, float]:
    """Table C.1's 'Average (double)' and '(int)': 1 / mean of the operation rates."""
    out: dict[str, float] = {}
    for kind in ("double", "int"):
        rates = [1.0 / v for k, v in f.items() if v and f"_{kind}" in k]
        if rates:
            out[kind] = 1.0 / float(np.mean(rates))
    return out


def fit_l(run: RawRun) -> tuple[dict[str, float | None], dict[str, Any], list[str]]:
    flags: list[str] = []
    groups: dict[str, list[np.ndarray]] = {}
    for rec in run.l:
        groups.setdefault(str(rec["variant"]), []).append(rec["_samples"])
    l: dict[str, float | None] = {}
    detail: dict[str, Any] = {}
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


def fit_memcpy(run: RawRun) -> tuple[float | None, list[dict[str, Any]]]:
    """memcpy's time per 8-byte word. The reference for g is the largest copy made by all p
    processes at once (`procs` = p: the same memory traffic as a g superstep), else the
    largest single-process copy."""
    rows = []
    for rec in sorted(run.memcpy, key=lambda r: (r["bytes"], r.get("procs") or 1)):
        words = rec["bytes"] / 8.0
        st = rec["_stats"]
        rows.append(
            {
                "bytes": rec["bytes"],
                "procs": rec.get("procs") or 1,
                "median_s": st.median,
                "s_per_word": st.median / words if words > 0 else None,
                "spread": st.spread,
                "note": rec.get("note"),
            }
        )
    p = run.p or 1
    pick = [r for r in rows if r["procs"] == p] or [r for r in rows if r["procs"] == 1] or rows
    best = pick[-1]["s_per_word"] if pick else None
    for r in rows:
        r["reference"] = bool(pick) and r is pick[-1]
    return (best if best and best > 0 else None), rows


def fit_as(run: RawRun) -> dict[str, Any]:
    tests: dict[str, Any] = {}
    te: list[dict[str, Any]] = []
    for rec in run.as_tests:
        st = rec["_stats"]
        name = str(rec["test"])
        if name == "TotalExchange" and rec.get("h"):
            h = float(rec["h"])
            te.append(
                {
                    "h": int(h),
                    "t_s": st.median,
                    "q1": st.q1,
                    "q3": st.q3,
                    "t_per_h_s": st.median / h,
                    "samples": st.n,
                    "note": rec.get("note"),
                }
            )
        else:
            tests[name] = {**st.as_dict(), "note": rec.get("note")}
    te.sort(key=lambda r: r["h"])
    return {"tests": tests, "total_exchange": te}


def _error_stats(errs: list[float]) -> dict[str, Any]:
    if not errs:
        return {"mean_abs_rel_error": None, "max_abs_rel_error": None, "within_threshold": 0, "pass": None}
    a = np.abs(np.array(errs))
    return {
        "mean_abs_rel_error": float(a.mean()),
        "max_abs_rel_error": float(a.max()),
        "within_threshold": int(np.count_nonzero(a <= VALIDATION_THRESHOLD)),
        "pass": bool(a.mean() <= VALIDATION_THRESHOLD),
    }


DRIFT_WINDOW = 40  # grid points on either side (in the probe's order) that date a point
DRIFT_STABLE = 1.25  # a local speed factor outside [1/1.25, 1.25] marks a changed machine state


def machine_drift(
    run: RawRun, g: dict[str, Surface]
) -> tuple[list[tuple[int, float]], Callable[[int | None], float | None]]:
    """How the machine's speed moved during the run, from the grid itself: for every grid
    point, log(measured / model) with the per-h model of its surface, in the probe's order;
    returns the (seq, factor) curve (a running median over DRIFT_WINDOW points either side)
    and a function seq -> local factor. A factor of 3 means the grid points measured around
    then took 3 times what the whole grid's fit says (a machine that changed state: a VM
    whose cores were moved, another job, frequency scaling)."""
    pts = []
    for key in run.g_keys():
        levels = g[key].levels if key in g else []
        if not levels:
            continue
        for pt in run.g_points(key):
            if pt.seq is None:
                continue
            pred = predict_time_levels(levels, pt.h, pt.count)
            if pred and pred > 0 and pt.stats.median > 0:
                pts.append((pt.seq, math.log(pt.stats.median / pred)))
    pts.sort()
    if len(pts) < 2 * DRIFT_WINDOW:
        return [], lambda _s: None
    seqs = np.array([p[0] for p in pts])
    logs = np.array([p[1] for p in pts])

    def factor_at(seq: int | None) -> float | None:
        if seq is None:
            return None
        i = int(np.searchsorted(seqs, seq))
        lo, hi = max(0, i - DRIFT_WINDOW), min(len(logs), i + DRIFT_WINDOW)
        return float(math.exp(np.median(logs[lo:hi])))

    step = max(1, len(pts) // 200)
    curve = [(int(seqs[i]), factor_at(int(seqs[i])) or 1.0) for i in range(0, len(pts), step)]
    return curve, factor_at


def calibrated_validation(run: RawRun, reference: Params, rows: list[dict[str, Any]]) -> JsonObject | None:
    """The validation again with eq. (2.6) scaled by the drift of the calibration rounds that
    bspprobe ran among the points (issue 17): each visit of a point takes the g drift at its
    h, the geometric mean of the rounds before and after it; a point most of whose visits lie
    between rounds whose predictions differ by more than WITHIN_RUN_FLAG is flagged and left out
    (its median is its visits' majority).
    None without rounds."""
    rounds: list[tuple[int, cb.Drift, JsonObject]] = []
    for rec, cal in probe_calibrations(run):
        if isinstance(rec.get("seq"), int):
            try:
                rounds.append((rec["seq"], cb.drift_of(cal, reference), rec))
            except cb.CalibrationError:
                continue
    if not rounds:
        return None
    rounds.sort(key=lambda r: r[0])
    seqs = [r[0] for r in rounds]
    errors: list[float] = []
    flagged = 0
    for row in rows:
        visits = run_point_visits(run, row)
        if "rel_error" not in row or not visits:
            continue
        factors, moved = [], 0
        for visit in visits:
            i = max(0, int(np.searchsorted(seqs, visit, side="right")) - 1)
            before = rounds[i][1]
            after = rounds[i + 1][1] if i + 1 < len(rounds) else None
            factors.append(cb.mean_drift(before, after).g_at(row["h"]))
            if after is not None:  # the point's prediction with the round after it / before it
                ratio = after.g_at(row["h"]) / before.g_at(row["h"])
                moved += not 1 / cb.WITHIN_RUN_FLAG <= ratio <= cb.WITHIN_RUN_FLAG
        # the point's median is its visits' majority: flagged when most of them saw a move
        flagged_point = 2 * moved > len(visits)
        factor = math.exp(sum(math.log(x) for x in factors) / len(factors))
        pred = row["predicted_s"] * factor
        row["calibrated"] = {
            "g_drift": factor,
            "predicted_s": pred,
            "rel_error": (pred - row["measured_s"]) / row["measured_s"],
            "flagged": flagged_point,
        }
        if flagged_point:
            flagged += 1
        else:
            errors.append(row["calibrated"]["rel_error"])
    return {
        "rounds": [
            {"seq": s, "t_s": rec.get("t_s"), "elapsed_s": rec.get("elapsed_s"), "drift": d.headline}
            for s, d, rec in rounds
        ],
        "flagged": flagged,
        "within_run_flag": cb.WITHIN_RUN_FLAG,
        **_error_stats(errors),
    }


def calibration_reference(run: RawRun) -> JsonObject:
    """The parameter file's `calibration`: the median of the probe's rounds ({} without)."""
    rounds = [cal for _rec, cal in probe_calibrations(run)]
    return cb.reference_of(rounds) if rounds else {}


def probe_calibrations(run: RawRun) -> list[tuple[JsonObject, cb.Calibration]]:
    """The calibration rounds of a probe that can be read (a bad one is left out)."""
    out = []
    for rec in run.calibration:
        try:
            out.append((rec, cb.Calibration.from_record(rec)))
        except cb.CalibrationError:
            continue
    return out


def run_point_visits(run: RawRun, row: dict[str, Any]) -> tuple[int, ...]:
    """The seq of every visit of the validation point a row reports."""
    for pt in run.validation:
        if pt.key == row["key"] and pt.msg_words == row["msg_words"] and pt.count == row["count"]:
            return pt.seqs
    return ()


def validate(
    run: RawRun,
    g: dict[str, Surface],
    f: dict[str, float | None] | None = None,
    l_s: dict[str, float] | None = None,
    calibration: JsonObject | None = None,
) -> JsonObject:
    """Eq. (2.6) with the fitted parameters against the off-grid validation points: fitted
    per value of h of the grid and interpolated (`level_fits`; the prediction the check is
    about, `predicted_s`) and, for comparison, one fit over the whole grid
    (`predicted_global_s`). With f, l and the probe's calibration reference (computed from the
    run's rounds when not given), also calibrated by those rounds (`calibrated`)."""
    rows: list[dict[str, Any]] = []
    curve, factor_at = machine_drift(run, g)
    for pt in run.validation:
        row: dict[str, Any] = {
            "key": pt.key,
            "msg_words": pt.msg_words,
            "count": pt.count,
            "h": pt.h,
            "measured_s": pt.stats.median,
            "seq": pt.seq,
            "drift_factor": factor_at(pt.seq),
        }
        surface = g.get(pt.key)
        pm = surface.predict if surface else None
        levels = surface.levels if surface else None
        if pm is None or not levels:
            row["skipped"] = "no fitted parameters for " + pt.key
        elif pt.h < pm.h_half:
            row["skipped"] = f"h = {pt.h} < h_half = {pm.h_half:.0f}"
        else:
            pred = predict_time_levels(levels, pt.h, pt.count)
            assert pred is not None
            err = (pred - pt.stats.median) / pt.stats.median
            pred_global = predict_time(pm, pt.h, pt.count)
            row.update(
                {
                    "predicted_s": pred,
                    "rel_error": err,
                    "model": "2.6 per h",
                    "pass": bool(abs(err) <= VALIDATION_THRESHOLD),
                    "predicted_global_s": pred_global,
                    "rel_error_global": (pred_global - pt.stats.median) / pt.stats.median,
                    "model_global": pm.model,
                }
            )
        rows.append(row)
    used = [r for r in rows if "rel_error" in r]
    out: dict[str, Any] = {
        "threshold": VALIDATION_THRESHOLD,
        "model": "2.6 per h",
        "points": rows,
        "used": len(used),
        "skipped": len(rows) - len(used),
    }
    out.update(_error_stats([r["rel_error"] for r in used]))
    out["global"] = _error_stats([r["rel_error_global"] for r in used])
    # The same check on the points measured while the machine ran as the grid's fit says
    # (local speed factor within DRIFT_STABLE): tells a wrong model from a machine that
    # changed state during the run. Reported beside the check, never instead of it.
    stable = [r for r in used if r.get("drift_factor") and 1 / DRIFT_STABLE <= r["drift_factor"] <= DRIFT_STABLE]
    out["stable_state"] = {
        "points": len(stable),
        "factor_bound": DRIFT_STABLE,
        **_error_stats([r["rel_error"] for r in stable]),
    }
    if calibration is None:
        calibration = calibration_reference(run)
    reference = Params(f=dict(f or {}), l=dict(l_s or {}), g=g, calibration=calibration)
    calibrated = calibrated_validation(run, reference, used)
    if calibrated is not None:
        out["calibrated"] = calibrated
    out["drift"] = {
        "window": DRIFT_WINDOW,
        "curve": curve,
        "max_factor": max((f for _s, f in curve), default=None),
        "min_factor": min((f for _s, f in curve), default=None),
        "share_off": (sum(1 for _s, f in curve if not 1 / DRIFT_STABLE <= f <= DRIFT_STABLE) / len(curve))
        if curve
        else None,
    }
    return out


def memcpy_check(g: dict[str, Surface], memcpy_s_per_word: float | None) -> list[JsonObject]:
    """put's (and hpput's) time per word against memcpy's: at most 1.5x? (Less than memcpy's
    is no overhead of the library: the h-relation may have stayed in a cache.)

    memcpy is measured on buffers larger than the caches, so it is compared with put's time
    per word on the largest h of the grid (g(h) = A/h there, out of the caches too: the same
    regime); the g_inf of the one fit over the whole grid is given beside it (`g_inf_global`)."""
    rows = []
    if not memcpy_s_per_word:
        return rows
    for key, e in g.items():
        if not key.startswith(("put/", "hpput/")):
            continue
        top = e.levels[-1] if e.levels else None
        gi = top.g_h if top else None
        row: JsonObject = {
            "key": key,
            "g_inf": gi,
            "memcpy_s_per_word": memcpy_s_per_word,
            "g_inf_global": e.predict.g_inf if e.predict else None,
            "h": top.h if top else None,
        }
        if gi:
            ratio = gi / memcpy_s_per_word
            row["ratio"] = ratio
            row["pass"] = bool(ratio <= MEMCPY_FACTOR)
        else:
            row["ratio"] = None
            row["pass"] = None
        rows.append(row)
    return rows


def noise_summary(run: RawRun) -> dict[str, Any]:
    """Outliers (> 1.5 IQR from the median), spread per point, load and timer warnings."""
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
    return {
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
    g = {key: fit_surface(run.g_points(key), l0, run.p) for key in run.g_keys()}
    calibration = calibration_reference(run)
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
        validation=validate(run, g, f, l_s, calibration),
        calibration=calibration,
        checks={"memcpy": memcpy_check(g, memcpy_spw), "memcpy_factor": MEMCPY_FACTOR},
        noise=noise_summary(run),
        flags=f_flags + l_flags,
        fit_settings={
            "confidence": CONFIDENCE,
            "loss": LOSS,
            "loss_scale": LOSS_SCALE,
            "validation_threshold": VALIDATION_THRESHOLD,
            "units": "seconds; words of 8 bytes; error_bsp(star) in s^2/word^2",
        },
        imh=fit_imh(run),
    )
    # what a reader of the file gets: plain JSON values, NaN and infinities as null
    return Params.from_json(params.to_json())
