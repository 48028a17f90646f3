"""How far to trust a number (issue 39): every check's error split into the machine's noise and
the model's error, by regime, with confidence intervals; and the coverage of a band.

A check compares predictions with measurements: the probe's eq. (2.6) against its off-grid
h-relations (bspkit.model.probe_validation), `bspkit validate` against driver runs
(bspkit.measure.validation). Each point i gives the log ratio r_i = log(predicted / measured)
and its noise sd_i, the sd of log of its measurement's noise, two parts in quadrature:

- sampling: the relative standard error of the point's median, from its own repeat samples
  (`median_rel_se`: McKean-Schrader, the order statistics around the median, from 9 samples);
- the machine: its time-to-time variability in the regime the point spends its time in
  (params.json's `noise.regimes`: the sd of log of the probe's sentinel re-measurements over
  the run; compute, sync, small h, large h), since a prediction made from measurements at
  other moments is compared with a measurement at one moment. A run spread over regimes has
  sqrt(sum (share_k sd_k)^2) (`mixed_sd`: the regimes vary independently).

Per regime (a group of points: a primitive, a message size band, an h band; an algorithm at
p and its swept value), with n points, b = mean r, s^2 = var r (n - 1), noise^2 = mean sd_i^2:

    bias b, its 95 % interval b +- t(0.975, n - 1) s / sqrt(n)   (shown as exp(.) - 1)
    rms^2 = b^2 + var_pop(r) = bias^2 + noise part + model scatter part
    model scatter = sqrt(max(0, s^2 - noise^2))
    the noise band X = exp(1.2816 noise) - 1: the 90th percentile of the noise's 10-90 % band

A regime is **biased** when it has at least MIN_POINTS points, the interval of b excludes 0 and
|b| > 1.2816 noise (a bias the machine's own scatter does not hide); it **scatters** when the
points scatter beyond their noise (chi^2 = sum ((r_i - b) / sd_i)^2 above its 99 % quantile on
n - 1 degrees of freedom) by more than the noise itself (scatter > noise). Regimes are judged
finest first (primitive x message size, then primitive, message size, h, then all points);
a coarser regime is judged on its points outside the regimes already flagged, so a bias is
named where it lives and nowhere else. With no regime flagged the check is **within the noise**:
trust it within +-X, X = exp(|b| + 1.2816 s) - 1 over all points: the 10-90 % band of its own
errors (s is sqrt(noise^2 + scatter^2) where the points scatter as much as the noise says or more).
With no regime **biased** but some scattering beyond the noise, the model is still trusted within
its errors' band (an error whose mean is within the noise is not a bias), and the regimes that scatter are
named with their own, wider band.

Coverage (`coverage`): the share of measured runs inside their 10-90 % band, with its Wilson
95 % interval; over COVERAGE_MIN_RUNS runs or more, a band whose interval lies wholly below the
nominal 80 % is too narrow (and wholly above it, too wide).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

Z95 = NormalDist().inv_cdf(0.975)
Z_10_90 = NormalDist().inv_cdf(0.9)  # a 10-90 % band is +- 1.2816 sd
MIN_POINTS = 4  # a regime with fewer points is reported, never flagged
MEDIAN_OS_MIN = 9  # samples from which a median's standard error comes from its order statistics
SCATTER_CONFIDENCE = 0.99  # chi^2 quantile beyond which points scatter more than their noise
NOMINAL_COVERAGE = 0.8  # of a 10-90 % band
COVERAGE_MIN_RUNS = 30  # a band is judged by its coverage over this many runs or more

# The machine's regimes (params.json `noise.regimes`) and what they time.
REGIMES = ("compute", "sync", "small_h", "large_h")
# An h-relation of fewer words is in the small-h regime, unless the regimes give their own h.
SMALL_H_BELOW = 4096

# Message size bands (h*, words per message) and h bands (words per process) of the probe's check.
SIZE_BANDS: tuple[tuple[float, float, str], ...] = (
    (0, 64, "h* < 64 words"),
    (64, 4096, "h* 64-4,095 words"),
    (4096, math.inf, "h* >= 4,096 words"),
)
H_BANDS: tuple[tuple[float, float, str], ...] = (
    (0, 4096, "h < 4,096 words"),
    (4096, 262144, "h 4,096-262,143 words"),
    (262144, math.inf, "h >= 262,144 words"),
)


def band_of(value: float, bands: Sequence[tuple[float, float, str]]) -> str:
    """The label of the band [low, high) that holds value."""
    return next((label for lo, hi, label in bands if lo <= value < hi), bands[-1][2])


# ------------------------------------------------------------------ the noise of one point


def median_rel_se(samples: Iterable[float]) -> float | None:
    """The relative standard error of a sample's median (the sd of log of the median), from
    the samples alone. From MEDIAN_OS_MIN samples on, McKean and Schrader's order statistics:
    (log x_(n-c+1) - log x_(c)) / (2 z_c) with c = round((n + 1) / 2 - 1.96 sqrt(n / 4)) and z_c
    the normal quantile of the exact confidence of [x_(c), x_(n-c+1)] (binomial: no assumption on
    the distribution's shape, the density around the median decides); below it, where two order
    statistics say little, sqrt(pi / 2) sd / sqrt(n) of the logs (a normal sample's median; for
    2 samples, whose median is their mean, sd / sqrt(2)). None for one sample or none."""
    x = np.sort(np.log([v for v in samples if v is not None and math.isfinite(v) and v > 0]))
    n = x.size
    if n < 2:
        return None
    if n < MEDIAN_OS_MIN:
        sd = float(np.std(x, ddof=1))
        return sd / math.sqrt(n) * (1.0 if n == 2 else math.sqrt(math.pi / 2))
    c = int(round((n + 1) / 2 - Z95 * math.sqrt(n / 4)))
    c = min(max(c, 1), n // 2)
    from scipy import stats as sstats  # here, not on import: it takes half a second (bspkit predict)

    confidence = 1 - 2 * float(sstats.binom.cdf(c - 1, n, 0.5))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return float(x[n - c] - x[c - 1]) / (2 * z)


def regimes_of(noise: Mapping[str, Any] | None) -> dict[str, float]:
    """The machine's time-to-time variability per regime (sd of log) from params.json's
    `noise` object ({} without its `regimes`, or for a regime without a usable rel_sd)."""
    out: dict[str, float] = {}
    regimes = noise.get("regimes") if isinstance(noise, Mapping) else None
    if not isinstance(regimes, Mapping):
        return out
    for name, rec in regimes.items():
        sd = rec.get("rel_sd") if isinstance(rec, Mapping) else rec
        if isinstance(sd, (int, float)) and not isinstance(sd, bool) and math.isfinite(sd) and sd >= 0:
            out[str(name)] = float(sd)
    return out


def comm_regime(h: float, noise: Mapping[str, Any] | None = None) -> str:
    """ "small_h" or "large_h" for an h-relation of h words: the regime whose sentinel h is
    nearer in log where both give their h (`noise.regimes.<r>.h`), else below SMALL_H_BELOW."""
    regimes = noise.get("regimes") if isinstance(noise, Mapping) else None
    hs: dict[str, float] = {}
    for name in ("small_h", "large_h"):
        rec = regimes.get(name) if isinstance(regimes, Mapping) else None
        v = rec.get("h") if isinstance(rec, Mapping) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            hs[name] = float(v)
    if len(hs) == 2 and h > 0 and hs["small_h"] < hs["large_h"]:
        return "small_h" if h < math.sqrt(hs["small_h"] * hs["large_h"]) else "large_h"
    return "small_h" if h < SMALL_H_BELOW else "large_h"


def mixed_sd(seconds: Mapping[str, float], sds: Mapping[str, float]) -> float | None:
    """The sd of log of a time spent over regimes (seconds per regime), each regime varying
    independently with its sd: sqrt(sum (share_k sd_k)^2). None where no regime with time has
    a known sd (a regime without one counts as quiet)."""
    total = sum(v for v in seconds.values() if v > 0)
    known = [(t / total) * sds[k] for k, t in seconds.items() if t > 0 and k in sds] if total > 0 else []
    return math.sqrt(sum(v * v for v in known)) if known else None


def quadrature(*sds: float | None) -> float | None:
    """sds added in quadrature; None only where every one is None."""
    known = [v for v in sds if v is not None]
    return math.sqrt(sum(v * v for v in known)) if known else None


# ------------------------------------------------------------------ points and regimes


@dataclass(frozen=True)
class CheckPoint:
    """One prediction against one measurement: the log ratio, its noise and its regimes."""

    predicted_s: float
    measured_s: float
    labels: Mapping[str, str]  # dimension -> regime ("primitive" -> "send")
    sampling_sd: float | None = None  # the relative standard error of the measured median
    machine_sd: float | None = None  # the machine's time-to-time variability where it ran

    @property
    def ratio(self) -> float:
        return math.log(self.predicted_s / self.measured_s)

    @property
    def noise_sd(self) -> float:
        return quadrature(self.sampling_sd, self.machine_sd) or 0.0


def check_point(
    predicted_s: float,
    measured_s: float,
    labels: Mapping[str, str],
    samples: Iterable[float] | None = None,
    rel_se: float | None = None,
    machine_sd: float | None = None,
) -> CheckPoint | None:
    """A point from its measured median and prediction, with its repeat samples (or the
    relative standard error of its median, rel_se) and the machine's sd of its regime; None
    where the times cannot be compared (not positive)."""
    if not (predicted_s and measured_s and predicted_s > 0 and measured_s > 0):
        return None
    if rel_se is None and samples is not None:
        rel_se = median_rel_se(samples)
    return CheckPoint(float(predicted_s), float(measured_s), dict(labels), rel_se, machine_sd)


def _rel(log_value: float) -> float:
    return math.expm1(log_value)


@dataclass
class RegimeStats:
    """The split of one regime's error (module docstring); relative values are exp(.) - 1 of
    the log ratio, sds are sds of log (about relative sds)."""

    dimension: str
    regime: str
    n: int
    mean_rel_error: float  # the plain mean of (predicted - measured) / measured
    bias: float  # exp(mean log ratio) - 1
    bias_ci: tuple[float, float] | None  # its 95 % interval (t on the log ratios); None below 2 points
    rms: float  # rms of the log ratios
    sd_log: float | None  # their sd (n - 1); None below 2 points
    noise_sd: float  # rms of the points' noise sds
    sampling_sd: float | None
    machine_sd: float | None
    scatter_sd: float | None  # the model's scatter beyond the noise; None below 2 points
    model_sd: float  # the residual beyond the noise, bias included: sqrt(max(0, rms^2 - noise^2))
    shares: dict[str, float]  # of rms^2: bias, noise, model scatter
    chi2: float | None
    p_scatter: float | None  # P(chi^2 this large | the noise alone)
    judged_on: int = 0  # points outside finer regimes already flagged
    biased: bool = False
    scattered: bool = False
    rest: RegimeStats | None = None  # the split of those points, where they are not all of them

    @property
    def noise_band(self) -> float:
        """X: the 90th percentile of the noise's 10-90 % band, as a relative error."""
        return _rel(Z_10_90 * self.noise_sd)

    @property
    def bias_beyond_noise(self) -> float:
        """The part of the bias the noise band does not hold (0 within it), signed: exp(b -+
        1.2816 noise) - 1 for a bias b (log) beyond the band, so that a bias below 1 stays above
        -100% (a prediction at half the measurement, noise 11%: -40%, not -65%)."""
        b = math.log1p(self.bias)
        beyond = max(0.0, abs(b) - Z_10_90 * self.noise_sd)
        return _rel(math.copysign(beyond, b)) if beyond > 0 else 0.0

    @property
    def error_band(self) -> float:
        """The 10-90 % band of the regime's own errors about 0: exp(|b| + 1.2816 sd) - 1."""
        sd = self.sd_log if self.sd_log is not None else quadrature(self.noise_sd, self.scatter_sd)
        return _rel(abs(math.log1p(self.bias)) + Z_10_90 * (sd or 0.0))

    @property
    def ci_half(self) -> float | None:
        return None if self.bias_ci is None else (self.bias_ci[1] - self.bias_ci[0]) / 2

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "regime": self.regime,
            "n": self.n,
            "mean_rel_error": self.mean_rel_error,
            "bias": self.bias,
            "bias_ci": list(self.bias_ci) if self.bias_ci is not None else None,
            "rms_log": self.rms,
            "sd_log": self.sd_log,
            "noise_sd": self.noise_sd,
            "sampling_sd": self.sampling_sd,
            "machine_sd": self.machine_sd,
            "noise_band": self.noise_band,
            "scatter_sd": self.scatter_sd,
            "model_sd": self.model_sd,
            "bias_beyond_noise": self.bias_beyond_noise,
            "shares": dict(self.shares),
            "chi2": self.chi2,
            "p_scatter": self.p_scatter,
            "judged_on": self.judged_on,
            "biased": self.biased,
            "scattered": self.scattered,
            "rest": self.rest.to_json() if self.rest is not None else None,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RegimeStats:
        """The record to_json wrote (its derived numbers are computed again)."""
        ci = d.get("bias_ci")
        rest = d.get("rest")
        return cls(
            dimension=str(d.get("dimension")),
            regime=str(d.get("regime")),
            n=int(d.get("n") or 0),
            mean_rel_error=float(d.get("mean_rel_error") or 0.0),
            bias=float(d.get("bias") or 0.0),
            bias_ci=(float(ci[0]), float(ci[1])) if isinstance(ci, (list, tuple)) and len(ci) == 2 else None,
            rms=float(d.get("rms_log") or 0.0),
            sd_log=d.get("sd_log"),
            noise_sd=float(d.get("noise_sd") or 0.0),
            sampling_sd=d.get("sampling_sd"),
            machine_sd=d.get("machine_sd"),
            scatter_sd=d.get("scatter_sd"),
            model_sd=float(d.get("model_sd") or 0.0),
            shares=dict(d.get("shares") or {}),
            chi2=d.get("chi2"),
            p_scatter=d.get("p_scatter"),
            judged_on=int(d.get("judged_on") or 0),
            biased=bool(d.get("biased")),
            scattered=bool(d.get("scattered")),
            rest=cls.from_json(rest) if isinstance(rest, Mapping) else None,
        )


def _rms_of(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return math.sqrt(sum(v * v for v in xs) / len(xs)) if xs else None


def regime_stats(dimension: str, regime: str, points: Sequence[CheckPoint]) -> RegimeStats:
    """The split of the points' error (module docstring); points: at least one."""
    r = np.array([pt.ratio for pt in points])
    sd = np.array([pt.noise_sd for pt in points])
    n = r.size
    b = float(r.mean())
    noise = float(math.sqrt(np.mean(sd * sd)))
    rms = float(math.sqrt(np.mean(r * r)))
    var_pop = float(np.mean((r - b) ** 2))
    ci: tuple[float, float] | None = None
    s: float | None = None
    scatter: float | None = None
    chi2: float | None = None
    p_scatter: float | None = None
    if n >= 2:
        from scipy import stats as sstats  # here, not on import: it takes half a second (bspkit predict)

        s = float(np.std(r, ddof=1))
        half = float(sstats.t.ppf(0.975, n - 1)) * s / math.sqrt(n)
        ci = (_rel(b - half), _rel(b + half))
        scatter = math.sqrt(max(0.0, s * s - noise * noise))
        if np.all(sd > 0):
            chi2 = float(np.sum(((r - b) / sd) ** 2))
            p_scatter = float(sstats.chi2.sf(chi2, n - 1))
    total = rms * rms
    noise_part = min(noise * noise, var_pop)
    shares = (
        {"bias": b * b / total, "noise": noise_part / total, "model_scatter": max(0.0, var_pop - noise_part) / total}
        if total > 0
        else {"bias": 0.0, "noise": 1.0, "model_scatter": 0.0}
    )
    return RegimeStats(
        dimension=dimension,
        regime=regime,
        n=n,
        mean_rel_error=float(np.mean([(pt.predicted_s - pt.measured_s) / pt.measured_s for pt in points])),
        bias=_rel(b),
        bias_ci=ci,
        rms=rms,
        sd_log=s,
        noise_sd=noise,
        sampling_sd=_rms_of([pt.sampling_sd for pt in points]),
        machine_sd=_rms_of([pt.machine_sd for pt in points]),
        scatter_sd=scatter,
        model_sd=math.sqrt(max(0.0, total - noise * noise)),
        shares=shares,
        chi2=chi2,
        p_scatter=p_scatter,
    )


def _judge(st: RegimeStats, points: Sequence[CheckPoint]) -> None:
    """Flags a regime (module docstring) on `points`: its points outside the regimes already
    flagged."""
    st.judged_on = len(points)
    if len(points) < MIN_POINTS:
        return
    own = st if len(points) == st.n else regime_stats(st.dimension, st.regime, points)
    if own is not st:
        st.rest = own
    b = math.log1p(own.bias)
    if own.bias_ci is not None:
        lo, hi = (math.log1p(v) for v in own.bias_ci)
        st.biased = (lo > 0 or hi < 0) and abs(b) > Z_10_90 * own.noise_sd
    if own.p_scatter is not None and own.scatter_sd is not None:
        st.scattered = own.p_scatter < 1 - SCATTER_CONFIDENCE and own.scatter_sd > own.noise_sd


@dataclass
class Split:
    """The split of a check's error: all points, and every regime of every dimension."""

    overall: RegimeStats
    regimes: list[RegimeStats] = field(default_factory=list)
    dimensions: tuple[str, ...] = ()
    machine_noise: dict[str, float] = field(default_factory=dict)  # the regimes' sds used

    @property
    def flagged(self) -> list[RegimeStats]:
        """The regimes biased or scattering beyond the noise, finest first; all points last."""
        return [st for st in [*self.regimes, self.overall] if st.biased or st.scattered]

    @property
    def judged(self) -> bool:
        """Enough points to tell noise from model."""
        return self.overall.n >= MIN_POINTS

    @property
    def machine_known(self) -> bool:
        """The machine's time-to-time variability is in the noise (else the noise is the
        points' own sampling alone, and a bias beyond it may be the machine's moving)."""
        return self.overall.machine_sd is not None

    @property
    def within_noise(self) -> bool:
        """Nothing flagged: no bias and no scatter beyond the noise anywhere."""
        return self.judged and not self.flagged

    @property
    def unbiased(self) -> bool:
        """No regime biased beyond the noise (some may scatter beyond it): the model is trusted
        within its errors' band, wider where it scatters (trust_text names where)."""
        return self.judged and not any(st.biased for st in self.flagged)

    @property
    def trust_within(self) -> float:
        """X of "trust, within +-X": exp(|b| + 1.2816 s) - 1, the 10-90 % band of the check's
        own log ratios about 0: s is sqrt(noise^2 + scatter^2) where the points scatter at least
        as the noise says, less where they scatter less; b is within the noise (or X is not
        what the verdict says)."""
        o = self.overall
        sd = o.sd_log if o.sd_log is not None else quadrature(o.noise_sd, o.scatter_sd)
        return _rel(abs(math.log1p(o.bias)) + Z_10_90 * (sd or 0.0))

    def to_json(self) -> dict[str, Any]:
        return {
            "method": "log ratios predicted/measured; noise = the median's own standard error and the machine's "
            "time-to-time variability of its regime, in quadrature; bias with its 95 % t-interval; flagged beyond "
            "the noise's 10-90 % band (docs/prediction.md, How far to trust a number)",
            "min_points": MIN_POINTS,
            "dimensions": list(self.dimensions),
            "machine_noise": dict(self.machine_noise),
            "all": self.overall.to_json(),
            "regimes": [st.to_json() for st in self.regimes],
            "flagged": [f"{st.regime}" for st in self.flagged],
            "judged": self.judged,
            "within_noise": self.within_noise,
            "unbiased": self.unbiased,
            "noise_band": self.overall.noise_band,
            "trust_within": self.trust_within,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Split | None:
        """The split to_json wrote; None where d is not one."""
        if not isinstance(d, Mapping) or not isinstance(d.get("all"), Mapping):
            return None
        return cls(
            RegimeStats.from_json(d["all"]),
            [RegimeStats.from_json(r) for r in d.get("regimes") or [] if isinstance(r, Mapping)],
            tuple(d.get("dimensions") or ()),
            {str(k): float(v) for k, v in (d.get("machine_noise") or {}).items()},
        )


def split(
    points: Sequence[CheckPoint],
    dimensions: Sequence[str],
    all_label: str = "all points",
    machine_noise: Mapping[str, float] | None = None,
) -> Split | None:
    """The split of a check's error over all points and per regime of each dimension (each a
    key of the points' labels), judged finest first: `dimensions` in that order. None
    without points."""
    if not points:
        return None
    flagged_points: set[int] = set()
    regimes: list[RegimeStats] = []
    for dim in dimensions:
        groups: dict[str, list[int]] = {}
        for i, pt in enumerate(points):
            if dim in pt.labels:
                groups.setdefault(pt.labels[dim], []).append(i)
        newly: set[int] = set()
        for regime in sorted(groups):
            idx = groups[regime]
            st = regime_stats(dim, regime, [points[i] for i in idx])
            _judge(st, [points[i] for i in idx if i not in flagged_points])
            if st.biased or st.scattered:
                newly.update(idx)
            regimes.append(st)
        flagged_points |= newly
    overall = regime_stats("all", all_label, points)
    _judge(overall, [pt for i, pt in enumerate(points) if i not in flagged_points])
    return Split(overall, regimes, tuple(dimensions), dict(machine_noise or {}))


# ------------------------------------------------------------------ words


def pc(v: float, signed: bool = False) -> str:
    """A relative value in percent: one decimal below 10 %, none above ("4.2%", "+12%")."""
    x = 100 * v
    text = f"{abs(x):.1f}" if abs(x) < 9.95 else f"{abs(x):.0f}"
    sign = ("+" if x >= 0 else "-") if signed else ("-" if x < 0 else "")
    return f"{sign}{text}%"


def flagged_text(st: RegimeStats) -> str:
    """One flagged regime: "send, h* < 64 words: +12% ± 3%, beyond the noise of 4.0%"."""
    own = st.rest or st  # a coarser regime: its points outside the finer ones flagged
    noise = pc(own.noise_band)
    rest = " (the rest)" if st.rest is not None else ""
    if st.biased:
        half = f" ± {pc(own.ci_half)}" if own.ci_half is not None else ""
        return f"{st.regime}{rest}: {pc(own.bias, signed=True)}{half}, beyond the noise of {noise}"
    scatter = _rel(Z_10_90 * (own.scatter_sd or 0.0))
    return f"{st.regime}{rest}: scatters ±{pc(scatter)} beyond the noise of {noise}"


def trust_text(sp: Split) -> str:
    """ "trust, within ±14% (the 10-90% band of its errors; the noise's 13%, the model's
    scatter 3.0%)"."""
    o = sp.overall
    parts = [f"the noise's {pc(o.noise_band)}"]
    if o.scatter_sd and _rel(Z_10_90 * o.scatter_sd) >= 0.005:
        parts.append(f"the model's scatter {pc(_rel(Z_10_90 * o.scatter_sd))}")
    wider = [
        f"{st.regime} ±{pc((st.rest or st).error_band)}"
        for st in sp.flagged
        if st.scattered and not st.biased and (st.rest or st).error_band > sp.trust_within
    ]
    where = f"; wider where it scatters beyond the noise: {', '.join(wider)}" if wider else ""
    return f"trust, within ±{pc(sp.trust_within)} (the 10-90% band of its errors; {', '.join(parts)}{where})"


def explained_text(sp: Split) -> str:
    """How much of the error the noise explains and the bias over all points with its interval."""
    o = sp.overall
    half = f" ± {pc(o.ci_half)}" if o.ci_half is not None else ""
    return (
        f"the noise explains {o.shares['noise']:.0%} of the squared error; bias {pc(o.bias, signed=True)}{half}, "
        f"noise {pc(o.noise_band)}"
    )


def split_sentence(sp: Split, what: str) -> str:
    """The verdict's clause: within the noise (trust, within ±X) or the flagged regimes."""
    if not sp.judged:
        return f"too few points ({sp.overall.n}) to tell the machine's noise from {what}'s error"
    if sp.within_noise:
        return f"{what}'s bias is within the machine's noise in every regime ({explained_text(sp)}): {trust_text(sp)}"
    named = "; ".join(flagged_text(st) for st in sp.flagged)
    if sp.unbiased:
        return (
            f"{what}'s bias is within the machine's noise in every regime ({explained_text(sp)}); it scatters "
            f"beyond the noise in: {named}: {trust_text(sp)}"
        )
    return f"{what} is off beyond the machine's noise in: {named} ({explained_text(sp)})"


# ------------------------------------------------------------------ coverage


def wilson(inside: int, runs: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a share inside/runs (95 % by default); None for no runs."""
    if runs <= 0:
        return None
    p = inside / runs
    denom = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    return max(0.0, centre - half), min(1.0, centre + half)


def coverage(flags: Sequence[bool], nominal: float = NOMINAL_COVERAGE) -> dict[str, Any] | None:
    """The coverage of a band over runs (each inside it or not): the share, its Wilson 95 %
    interval, and whether the band is too narrow or too wide (judged over COVERAGE_MIN_RUNS
    runs or more: the interval wholly below or above the nominal level). None without runs."""
    runs = len(flags)
    if not runs:
        return None
    inside = sum(bool(f) for f in flags)
    lo, hi = wilson(inside, runs) or (0.0, 1.0)
    judged = runs >= COVERAGE_MIN_RUNS
    return {
        "runs": runs,
        "inside": inside,
        "coverage": inside / runs,
        "ci": [lo, hi],
        "nominal": nominal,
        "judged": judged,
        "too_narrow": judged and hi < nominal,
        "too_wide": judged and lo > nominal,
    }


def coverage_text(cov: Mapping[str, Any], what: str = "the 10-90% band") -> str:
    """ "the 10-90% band held 45% of 40 run(s) (95% interval 31-60%, nominal 80%)", and what
    that says."""
    lo, hi = cov["ci"]
    text = (
        f"{what} held {cov['coverage']:.0%} of {cov['runs']} run(s) "
        f"(95% interval {100 * lo:.0f}-{100 * hi:.0f}%, nominal {cov['nominal']:.0%})"
    )
    if cov.get("too_narrow"):
        text += ": below its nominal level beyond that interval, so the band is too narrow"
    elif cov.get("too_wide"):
        text += ": above its nominal level beyond that interval, so the band is wider than it needs to be"
    elif not cov.get("judged"):
        text += f" (judged over {COVERAGE_MIN_RUNS} runs or more)"
    return text


# ------------------------------------------------------------------ the time of a run per regime


def regime_seconds(
    steps: Iterable[tuple[float, float, bool, float]],
    work_s: float,
    empty_sync_s: float,
    noise: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Where a predicted run spends its time, per regime: compute (its work), sync (l of every
    superstep) and small_h / large_h (each superstep's communication beyond l, by its h).
    steps: (h, seconds of its communication and sync, synced, repeat)."""
    out = dict.fromkeys(REGIMES, 0.0)
    out["compute"] = max(work_s, 0.0)
    for h, comm_s, synced, repeat in steps:
        if not synced or comm_s is None:
            continue
        l_part = min(empty_sync_s, comm_s)
        out["sync"] += repeat * l_part
        if h > 0:
            out[comm_regime(h, noise)] += repeat * max(comm_s - l_part, 0.0)
    return out


def steps_of_run(
    params: Any, supersteps: Sequence[Mapping[str, Any]], model: str, comm_of: Callable[..., float | None]
) -> list[tuple[float, float, bool, float]]:
    """(h, comm seconds, synced, 1) of a driver run's supersteps under a model (comm_of:
    bspkit.model.supersteps.superstep_comm_s); repeated shapes are costed once."""
    memo: dict[tuple[Any, ...], float | None] = {}
    out = []
    for s in supersteps:
        key = (s.get("h"), s.get("count"), s.get("primitive"), s.get("pattern"))
        if key not in memo:
            memo[key] = comm_of(params, s, model)
        c = memo[key]
        if c is not None:
            out.append((float(s.get("h") or 0.0), c, bool(s.get("sync", True)), 1.0))
    return out
