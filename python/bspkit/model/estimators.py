"""The fits of one g surface (thesis ch. 3.2, App. B.1, eq. 2.5/2.6; Bisseling's regression),
on the medians of its grid points (h* = msg_words, c = count, h = c h*, T = median superstep
time, g~ = T / h):

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
  fits it: one-word messages, h from p to 2048 words (`linreg`), with the range used;
* eq. (2.6) at each value of h of the grid, T(c) = A + B c (`level_fits`), the model that
  predicts across the memory hierarchy.

The values here are raw (possibly negative); `checked` is the null rule the caller
(fit.fit_surface) applies: a g, l, o, h_half (or any fitted parameter) that comes out negative,
or whose confidence interval reaches zero, is reported as null (JSON) with the reason in `flags`.
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypedDict

import numpy as np

from bspkit.measure.rawdata import GPoint
from bspkit.model.params import Level
from bspkit.units import quantity

CONFIDENCE = 0.95
LOSS = "soft_l1"
LOSS_SCALE = 0.05  # relative residual where the robust loss turns linear


# --------------------------------------------------------------------------- helpers


def model_t(h: Any, c: Any, g_inf: float, h_half: float, o: float = 0.0) -> Any:
    """Eq. (2.6) times h, on arrays: T = g_inf (h + h_half + o c)."""
    return g_inf * (np.asarray(h, dtype=float) + h_half + o * np.asarray(c, dtype=float))


def model_g(h: Any, hstar: Any, g_inf: float, h_half: float, o: float = 0.0) -> Any:
    """Eq. (2.6) on arrays: g(h, h*) = (h_half/h + o/h* + 1) g_inf (o = 0: eq. 2.5)."""
    return (h_half / np.asarray(h, dtype=float) + o / np.asarray(hstar, dtype=float) + 1.0) * g_inf


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


def grid_arrays(points: list[GPoint]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    hs = np.array([p.msg_words for p in points], dtype=float)
    c = np.array([p.count for p in points], dtype=float)
    h = np.array([p.h for p in points], dtype=float)
    t = np.array([p.stats.median for p in points], dtype=float)
    return hs, c, h, t


# --------------------------------------------------------------- weighted estimators


class WeightedEstimates(TypedDict):
    """Eq. (3.1)-(3.6) of one surface, raw (possibly negative)."""

    g_inf: float  # (3.2), s/word
    g_small: float  # (3.3)
    h_min: float
    h_half: float  # (3.4), words
    hstar_min: float
    g_mm: float  # (3.5)
    o: float  # (3.6), words
    o_eq31: float  # (3.1), the Oxford bspprobe's N_1/2


def weighted_estimators(points: list[GPoint]) -> WeightedEstimates:
    """Eq. (3.1)-(3.6) on the g~ values of one surface. Values may be negative (checked later)."""
    hs, c, h, t = grid_arrays(points)
    g = t / h
    w = h**3
    g_inf = float(np.sum(g * w) / np.sum(w))  # (3.2)
    ws = h ** (-3.0)
    g_small = float(np.sum(g * ws) / np.sum(ws))  # (3.3)
    h_min = float(h.min())
    hs_min = float(hs.min())
    sel = hs == hs_min
    wc = c[sel] ** 2
    g_mm = float(np.sum(g[sel] * wc) / np.sum(wc))  # (3.5)
    imax, imin = int(np.argmax(g)), int(np.argmin(g))
    return WeightedEstimates(
        g_inf=g_inf,
        g_small=g_small,
        h_min=h_min,
        h_half=(g_small / g_inf - 1.0) * h_min,  # (3.4)
        hstar_min=hs_min,
        g_mm=g_mm,
        o=(g_mm / g_inf - 1.0) * hs_min,  # (3.6)
        o_eq31=float((g[imax] / g[imin] - 1.0) * h[imax]),  # (3.1), Oxford bspprobe's N_1/2
    )


def squared_error(points: list[GPoint], g_inf: float | None, h_half: float | None, o: float | None) -> float | None:
    """App. B.1: mean squared error of g~ against eq. (2.6) (o = None/0: eq. 2.5), s^2/word^2."""
    if g_inf is None:
        return None
    hs, c, h, t = grid_arrays(points)
    pred = model_g(h, hs, g_inf, h_half or 0.0, o or 0.0)
    return float(np.mean((t / h - pred) ** 2))


# ------------------------------------------------------------------ least squares


def _robust_weights(r: np.ndarray) -> np.ndarray:
    """IRLS weights rho'(z) of scipy's soft_l1 loss, z = (r/f)^2."""
    z = (r / LOSS_SCALE) ** 2
    return 1.0 / np.sqrt(1.0 + z)


class LsqResult(TypedDict, total=False):
    """A least-squares fit of eq. (2.6) or (2.5): (value, low, high) of each parameter, raw;
    `error` instead where it could not be made."""

    model: str
    points: int
    loss: str
    error: str
    g_inf: tuple[float, float, float]
    h_half: tuple[float, float, float] | None  # None where g_inf is not positive
    o: tuple[float, float, float] | None
    residual_rel_rms: float
    residual_rel_max: float
    converged: bool


def lsq_fit(points: list[GPoint], with_o: bool = True) -> LsqResult:
    """Robust fit of T = g_inf (h + h_half [+ o c]); returns values, 95 % CIs, residuals.

    Values are raw here (possibly negative); the caller applies the null rule.
    """
    from scipy import optimize  # here, not on import: scipy takes half a second (bspkit predict)
    from scipy import stats as sstats

    hs, c, h, t = grid_arrays(points)
    k = 3 if with_o else 2
    n = t.size
    res = LsqResult(model="2.6" if with_o else "2.5", points=int(n), loss=f"{LOSS} (scale {LOSS_SCALE})")
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
    names: list[Literal["h_half", "o"]] = ["h_half", "o"] if with_o else ["h_half"]
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
    from scipy import stats as sstats  # here, not on import: scipy takes half a second (bspkit predict)

    r = sstats.linregress(x, y)
    tq = float(sstats.t.ppf(0.5 + CONFIDENCE / 2, x.size - 2))
    g = (float(r.slope), float(r.slope - tq * r.stderr), float(r.slope + tq * r.stderr))
    l_s = (
        float(r.intercept),
        float(r.intercept - tq * r.intercept_stderr),
        float(r.intercept + tq * r.intercept_stderr),
    )
    return g, l_s


class LinregResult(TypedDict, total=False):
    """Bisseling's regression: g and l as (value, low, high), raw, and the range of h used;
    `error` instead where the grid has too few h-relations in it."""

    msg_words: int
    points: int
    range: str
    error: str
    h_min: int
    h_max: int
    excluded_h: list[int]
    g: tuple[float, float, float]
    l: tuple[float, float, float]


def linreg(points: list[GPoint], p: int | None = None) -> LinregResult:
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
    hs, c, h, t = grid_arrays(points)
    hstar = float(hs.min())
    h_lo = float(max(p or 1, hstar))
    sel = (hs == hstar) & (h >= h_lo) & (h <= BSPBENCH_H_MAX)
    out = LinregResult(
        msg_words=int(hstar),
        points=int(np.count_nonzero(sel)),
        range=f"h* = {int(hstar)} word(s) per message, {int(h_lo)} <= h <= {BSPBENCH_H_MAX} (bspbench: p..MAXH)",
    )
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
    from scipy import optimize  # here, not on import: scipy takes half a second (bspkit predict)

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
