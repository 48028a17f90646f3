"""Scaling a BSPlib program to another number of processes from its superstep profiles
(`bspkit profile --scale RUN1.jsonl RUN2.jsonl ... --to-p P`; docs/profiling.md, "Scaling to
another p").

The runs are profiles of one program at several p (and, where a run says its problem size
with RUN.jsonl@n=VALUE, several n). Their supersteps are matched across the runs by the
`bsp_sync` call site and the phase (a loop's sync is one site, with S supersteps), and per
site four quantities are fitted as functions of p and n:

- S: the supersteps the site ends,
- W: the work of one of its supersteps, the max over the processes of the compute time on
  their CPU clocks (`cpu_s`; `compute_s` where a profile has no CPU time), seconds,
- h: the h-relation of one of its supersteps (thesis eq. 2.1), words,
- c: its message count (the max over processes of the requests issued).

W, h and c are the mean over the site's supersteps in a run; a run without the site (S = 0)
tells only S. Runs of the same p and n are repetitions: each quantity is their median. Each is fitted with Extra-P's one-term normal form (Calotoiu et al., SC'13):

    f(p, n) = c0 + c1 * n^a * p^b * log2(p)^k,   a in N_EXPONENTS, b in P_EXPONENTS, k in {0, 1}

(a = 0 where the runs have no n or one n), or the constant c0 alone. c0 and c1 come from a
least-squares fit of the relative residuals; the law is the one with the smallest
leave-one-out error (each run predicted from the others: mean symmetric relative error,
SMAPE), the simplest one where several are within one standard error of the smallest (the
one-standard-error rule), or within TIE_REL of it. An integer
quantity (S, and h and c where every run's is an integer) whose law predicts every run
exactly from the others is "exact": its value at the target is the law's, rounded.

The program at the target p (and n) is then T = sum over sites of S (W x scale + comm(h, c)),
comm as for one superstep of a driver (predict.superstep_comm_s, with the primitive and the
communication pattern the site has in the run of the largest p; none for the supersteps
that end at bsp_end), under each of predict.MODELS; scale carries the work to the target
machine (profile.rate_scale). Where a run was taken at the target (p, n) itself, its own
values are used ("measured"). Eq. 2.2's h_inout (the models that read it,
comm_models.CommModel.h_of) is not fitted: it is h times the site's h_inout / h in the run of
the largest p (2 for a balanced exchange, 1 for one-sided traffic). The 10-90 % band (`interval_s`) draws each fitted quantity's
value from its law's leave-one-out residuals (`prediction_interval`; the spread of the
machine's parameters is a hook there, `ParamsDraw`, not drawn yet).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bspkit.fileformat import JsonObject
from bspkit.model import comm_models
from bspkit.model import profile as pf
from bspkit.model import supersteps as pd
from bspkit.model.params import Params
from bspkit.units import plain, quantity
from bspkit.version import __version__

TOOL = "bspkit-profile-scaling"

N_EXPONENTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
# p^-2: one superstep of a wavefront over an alpha p x alpha p grid of blocks (LLCS)
P_EXPONENTS = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0)
LOG_EXPONENTS = (0, 1)
# laws whose leave-one-out error is within this fraction of the smallest one tie: the
# simplest of them is taken (noise cannot tell them apart)
TIE_REL = 0.1
TIE_ABS = 1e-9
# an integer quantity is exact where every run is predicted within this of its value
EXACT_TOL = 1e-6
# the residuals weigh each run relative to its value, down to this fraction of the largest
# (a run where the quantity is 0, such as h at p = 1, would otherwise weigh infinitely)
WEIGHT_FLOOR = 1e-3
MIN_P_VALUES = 3
INTERVAL_DRAWS = 1000
INTERVAL_QUANTILES = (0.1, 0.9)

QUANTITIES = ("S", "W", "h", "count", "Wall")  # Wall: all processes' work in a superstep
INTEGER_QUANTITIES = ("S", "h", "count")
QUANTITY_UNITS = {"W": "s", "Wall": "s"}  # the others are counts


class ScalingError(Exception):
    """The runs cannot be scaled (too few p, a size on some runs only, ...); the message says why."""


# ------------------------------------------------------------------ the runs


@dataclass(frozen=True)
class RunSpec:
    """One profile and the problem size it ran (its NAME and VALUE; None where not given)."""

    path: Path
    size_name: str | None = None
    size: float | None = None


SiteMatch = tuple[str | None, str, tuple[tuple[str, int], ...]]  # phase, end, (object name, offset) per site


@dataclass
class SiteRun:
    """One site in one run: its supersteps and their sums."""

    S: int = 0
    work_s: float = 0.0  # sum over the supersteps of the max work
    work_all_s: float = 0.0  # sum over the supersteps of all processes' work together
    H: int = 0
    H_inout: int = 0  # sum of eq. 2.2's h_inout
    count: int = 0
    primitive: str | None = None  # of its costliest superstep in communication
    pattern: str | None = None
    top_h: int = -1  # the h of that superstep

    def add(self, step: pf.StepStats, work_s: float, work_all_s: float) -> None:
        self.S += 1
        self.work_s += work_s
        self.work_all_s += work_all_s
        self.H += step.h
        self.H_inout += step.h_inout
        self.count += step.count
        if step.h > self.top_h:
            self.top_h = step.h
            prim = pf.PRIMITIVE_FOR_PREDICTION.get(step.primitive or "", step.primitive)
            self.primitive, self.pattern = prim, step.pattern

    def per_step(self, quantity: str) -> float:
        total = {"W": self.work_s, "Wall": self.work_all_s, "h": self.H, "count": self.count}[quantity]
        return total / self.S


@dataclass
class Run:
    """One profile: its p, size, analysis and sites."""

    spec: RunSpec
    analysis: pf.Analysis
    sites: dict[SiteMatch, SiteRun]

    @property
    def p(self) -> int:
        return self.analysis.p

    @property
    def n(self) -> float | None:
        return self.spec.size


def site_match(step: pf.StepStats) -> SiteMatch:
    """What matches a superstep across runs: its phase, how it ended and its call site(s), by
    the object's file name and the offset in it (the load address differs from run to run)."""
    keys = sorted({(Path(k.path).name, k.offset) for k in step.site_keys if k is not None})
    return (step.phase, step.end, tuple(keys))


def step_work_s(step: pf.StepStats, use_cpu: bool) -> float:
    return step.cpu.max if use_cpu and step.cpu is not None else step.compute.max


def step_work_all_s(step: pf.StepStats, use_cpu: bool, p: int) -> float:
    """The work of all processes together in the superstep (what p processes on fewer cores
    take turns at)."""
    return p * (step.cpu.mean if use_cpu and step.cpu is not None else step.compute.mean)


def read_runs(
    specs: Sequence[RunSpec], section: int | None = None, phase: str | None = None, addr2line: str | None = None
) -> tuple[list[Run], bool, dict[SiteMatch, str]]:
    """The runs, whether their work is CPU time (every superstep of every run has cpu_s), and
    per site its text (file:line where addr2line finds it)."""
    analyses = []
    for spec in specs:
        try:
            analyses.append(pf.analyze(pf.read_profile(spec.path, section), addr2line=addr2line, phase=phase))
        except pf.ProfileError as e:
            raise ScalingError(str(e)) from None
    use_cpu = all(s.cpu is not None for a in analyses for s in a.steps)
    runs: list[Run] = []
    texts: dict[SiteMatch, str] = {}
    for spec, a in zip(specs, analyses, strict=True):
        sites: dict[SiteMatch, SiteRun] = {}
        for step in a.steps:
            key = site_match(step)
            work_all = step_work_all_s(step, use_cpu, a.p)
            sites.setdefault(key, SiteRun()).add(step, step_work_s(step, use_cpu), work_all)
            texts.setdefault(key, step.site or "(no site)")
        runs.append(Run(spec, a, sites))
    check_runs(runs)
    return runs, use_cpu, texts


def check_runs(runs: Sequence[Run]) -> None:
    sized = [r for r in runs if r.n is not None]
    if sized and len(sized) != len(runs):
        bare = ", ".join(str(r.spec.path) for r in runs if r.n is None)
        raise ScalingError(
            f"a problem size is given for some runs but not for {bare}: give RUN.jsonl@NAME=VALUE for every run or none"
        )
    names = {r.spec.size_name for r in sized}
    if len(names) > 1:
        raise ScalingError(
            f"the runs name their problem size differently ({', '.join(sorted(map(str, names)))}): one name for all"
        )
    ps = sorted({r.p for r in runs})
    if len(ps) < MIN_P_VALUES:
        raise ScalingError(
            f"{len(runs)} runs at p = {', '.join(map(str, ps))}: the laws need runs at {MIN_P_VALUES} values of p at "
            "least (each run is predicted from the others to choose the law)"
        )


# ------------------------------------------------------------------ the laws


@dataclass(frozen=True)
class Law:
    """c0 + c1 n^a p^b log2(p)^k; constant: c0 alone."""

    a: float = 0.0
    b: float = 0.0
    k: int = 0
    constant: bool = False

    def term(self, p: np.ndarray, n: np.ndarray) -> np.ndarray:
        t = np.power(n, self.a) * np.power(p, self.b)
        return t * np.log2(p) ** self.k if self.k else t

    def complexity(self) -> tuple[int, int, int, float]:
        """Smaller is simpler: the constant, then fewer factors, no log, smaller exponents."""
        if self.constant:
            return (0, 0, 0, 0.0)
        factors = (self.a != 0) + (self.b != 0) + (self.k != 0)
        return (1, factors, self.k, abs(self.a) + abs(self.b))

    def term_text(self, size_name: str) -> str:
        parts = []
        for base, e in ((size_name, self.a), ("p", self.b)):
            if e == 1:
                parts.append(base)
            elif e != 0:
                parts.append(f"{base}^{plain(e)}")
        if self.k:
            parts.append("log2(p)")
        return "*".join(parts) or "1"


def candidate_laws(with_n: bool) -> list[Law]:
    laws = [Law(constant=True)]
    for a in N_EXPONENTS if with_n else (0.0,):
        for b in P_EXPONENTS:
            for k in LOG_EXPONENTS:
                if (a, b, k) != (0.0, 0.0, 0):
                    laws.append(Law(a, b, k))
    return laws


@dataclass
class FittedLaw:
    """A law with its coefficients over the runs, and how well it predicts them."""

    law: Law
    c0: float
    c1: float
    cv_error: float | None  # leave-one-out mean SMAPE (None: too few configurations to leave one out)
    fit_error: float  # mean SMAPE of the fit over all the runs
    residuals: list[float]  # leave-one-out (value - predicted) / |predicted|, per point
    exact: bool
    points: int  # the configurations (p, n) fitted
    size_name: str = "n"
    unit: str = ""  # of the values ("s": W, Wall): the coefficients are shown in it (3.708 ns*n*p^-1)

    def at(self, p: float, n: float | None) -> float:
        t = self.law.term(np.array([float(p)]), np.array([float(n if n is not None else 1.0)]))[0]
        return float(self.c0 + (0.0 if self.law.constant else self.c1 * t))

    def text(self) -> str:
        def num(v: float) -> str:
            return quantity(v, self.unit) if self.unit else coefficient(v)

        if self.law.constant:
            return num(self.c0)
        term = self.law.term_text(self.size_name)
        slope = term if self.c1 == 1 else f"{num(self.c1)}*{term}"
        if self.c0 == 0:
            return slope
        return f"{num(self.c0)} + {slope}" if self.c0 > 0 else f"{slope} - {num(-self.c0)}"

    def to_json(self) -> JsonObject:
        return {
            "text": self.text(),
            "c0": self.c0,
            "c1": 0.0 if self.law.constant else self.c1,
            "n_exponent": self.law.a,
            "p_exponent": self.law.b,
            "log2p_exponent": self.law.k,
            "error": self.cv_error,
            "fit_error": self.fit_error,
            "exact": self.exact,
            "points": self.points,  # the configurations (p, n) fitted
        }


def smape(pred: np.ndarray, actual: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """|pred - actual| / mean(|pred|, |actual|), the mean taken as `floor` at least (a value 0
    predicted as 1e-16 is right, not 200 % off); 0 where both are 0."""
    den = np.maximum((np.abs(pred) + np.abs(actual)) / 2, floor)
    return np.where(den > 0, np.abs(pred - actual) / np.where(den > 0, den, 1.0), 0.0)


def _weighted_line(t: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float] | None:
    """c0, c1 minimizing sum w (y - c0 - c1 t)^2; None where t does not vary."""
    sw, st, stt = w.sum(), (w * t).sum(), (w * t * t).sum()
    sy, sty = (w * y).sum(), (w * t * y).sum()
    det = sw * stt - st * st
    if not det > 1e-12 * sw * stt:
        return None
    c1 = (sw * sty - st * sy) / det
    return float((sy - c1 * st) / sw), float(c1)


def _fit(law: Law, t: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float] | None:
    if law.constant:
        return float((w * y).sum() / w.sum()), 0.0
    scale = float(np.abs(t).max())
    if scale == 0:
        return None
    line = _weighted_line(t / scale, y, w)
    return None if line is None else (line[0], line[1] / scale)


def fit_law(
    p: Sequence[float],
    n: Sequence[float | None],
    y: Sequence[float],
    integer: bool,
    size_name: str = "n",
    unit: str = "",
) -> FittedLaw:
    """The law of y over the runs (p, n): the smallest leave-one-out error, the simplest
    within TIE_REL of it. With 2 runs: the constant where they agree, else the line in p
    through both; with 1: the constant."""
    pa = np.asarray(p, dtype=float)
    na = np.asarray([v if v is not None else 1.0 for v in n], dtype=float)
    ya = np.asarray(y, dtype=float)
    m = len(ya)
    if m == 0:
        raise ScalingError("no run to fit")
    floor = WEIGHT_FLOOR * float(np.abs(ya).max()) or 1.0
    w = 1.0 / np.maximum(np.abs(ya), floor) ** 2
    with_n = len(set(na.tolist())) > 1
    scored: list[tuple[Law, np.ndarray | None, np.ndarray]] = []
    for law in candidate_laws(with_n):
        t = law.term(pa, na)
        if m < 3:
            fitted = _fit(law, t, ya, w)
            if fitted is not None:
                scored.append((law, None, np.zeros(m)))
            continue
        if _fit(law, t, ya, w) is None:
            continue
        pred = np.empty(m)
        for i in range(m):
            keep = np.arange(m) != i
            fold = _fit(law, t[keep], ya[keep], w[keep])
            if fold is None:  # the others do not tell this law's term apart: the mean of them
                fold = (float((w[keep] * ya[keep]).sum() / w[keep].sum()), 0.0)
            pred[i] = fold[0] + fold[1] * t[i]
        scored.append((law, smape(pred, ya, floor), pred))
    law, cv, loo = _choose(scored, ya, pa, m)
    t = law.term(pa, na)
    fitted = _fit(law, t, ya, w)
    assert fitted is not None
    c0, c1 = fitted
    if integer:  # an exact integer law has integer-looking coefficients: say them so
        c0, c1 = _tidy(c0), _tidy(c1)
    if not law.constant and abs(c0) <= 1e-9 * float(np.abs(ya).max()):
        c0 = 0.0  # rounding's, not the program's
    in_sample = c0 + (0.0 if law.constant else c1) * t
    residuals = [float((v - q) / abs(q)) if q != 0 else 0.0 for v, q in zip(ya, loo, strict=True)]
    tol = EXACT_TOL * np.maximum(1.0, np.abs(ya))
    exact = (
        integer
        and bool(np.all(ya == np.round(ya)))
        and bool(np.all(np.abs(in_sample - ya) <= tol))
        and (m < 3 and law.constant or m >= 3 and bool(np.all(np.abs(loo - ya) <= tol)))
    )
    return FittedLaw(law, c0, c1, cv, float(smape(in_sample, ya, floor).mean()), residuals, exact, m, size_name, unit)


def _tidy(v: float) -> float:
    r = round(v * 2) / 2  # whole and half numbers: n/2, p - 1
    return r if abs(v - r) <= 1e-9 * max(1.0, abs(v)) else v


def _choose(
    scored: list[tuple[Law, np.ndarray | None, np.ndarray]], y: np.ndarray, p: np.ndarray, m: int
) -> tuple[Law, float | None, np.ndarray]:
    """The simplest law within one standard error of the smallest mean leave-one-out error
    (the one-standard-error rule of cross-validation: Breiman et al., Classification and
    Regression Trees, 1984, 3.4.3), and within TIE_REL of it at least."""
    if m < 3:
        if m == 1 or y[0] == y[1] or p[0] == p[1]:
            law = Law(constant=True)
        else:
            law = Law(0.0, 1.0, 0)  # two runs: the line through them
        return law, None, y.copy()
    rated = [(law, float(e.mean()), e, pred) for law, e, pred in scored if e is not None]
    _, best, best_errors, _ = min(rated, key=lambda r: r[1])
    standard_error = float(best_errors.std(ddof=1)) / math.sqrt(m)
    limit = max(best + standard_error, best * (1 + TIE_REL)) + TIE_ABS
    law, mean, _, pred = min((r for r in rated if r[1] <= limit), key=lambda r: (r[0].complexity(), r[1]))
    return law, mean, pred


# ------------------------------------------------------------------ per site


@dataclass
class Estimate:
    """One quantity of a site at the target: its value and where it comes from."""

    value: float
    source: str  # "measured" (a run at the target), "exact" or "fitted"
    law: FittedLaw | None  # None where no run has the site's supersteps (then S = 0)

    def to_json(self, total: float | None = None) -> JsonObject:
        out: JsonObject = {"value": self.value if total is None else total}
        if total is not None:
            out["per_superstep"] = self.value
        out["source"] = self.source
        out["law"] = self.law.text() if self.law is not None else None
        out["error"] = self.law.cv_error if self.law is not None else None
        out["fit"] = self.law.to_json() if self.law is not None else None
        return out


@dataclass
class SiteScaling:
    """One site at the target: S, and W, h, count per superstep."""

    key: SiteMatch
    site: str
    S: Estimate
    W: Estimate
    h: Estimate
    count: Estimate
    primitive: str | None
    pattern: str | None
    Wall: Estimate | None = None  # the work of all processes together per superstep
    inout_ratio: float | None = None  # h_inout / h in the run of the largest p (None: no traffic there)

    @property
    def phase(self) -> str | None:
        return self.key[0]

    @property
    def synced(self) -> bool:
        return self.key[1] == "bsp_sync"

    def comm_step(self, h: float | None = None, count: float | None = None) -> pd.Superstep:
        words = self.h.value if h is None else h
        return {
            "h": words,
            "h_inout": words * self.inout_ratio if self.inout_ratio is not None else None,
            "count": self.count.value if count is None else count,
            "primitive": self.primitive,
            "pattern": self.pattern,
        }


def _value(law: FittedLaw, p: int, n: float | None) -> tuple[float, str]:
    v = max(0.0, law.at(p, n))
    return (float(round(v)), "exact") if law.exact else (v, "fitted")


Config = tuple[int, float | None]  # a run's (p, n): runs of one configuration are repetitions


def site_points(key: SiteMatch, runs: Sequence[Run], quantity: str) -> dict[Config, float]:
    """Per configuration (p, n) the median over its runs of the site's S, or of its W, h or
    count per superstep over the runs that have the site: a repetition that went astray (a
    busy machine) does not bend the law."""
    values: dict[Config, list[float]] = {}
    for r in runs:
        site = r.sites.get(key)
        if quantity == "S":
            values.setdefault((r.p, r.n), []).append(float(site.S) if site else 0.0)
        elif site is not None:
            values.setdefault((r.p, r.n), []).append(site.per_step(quantity))
    return {config: float(np.median(v)) for config, v in values.items()}


def scale_site(key: SiteMatch, text: str, runs: Sequence[Run], p: int, n: float | None, size_name: str) -> SiteScaling:
    ests: dict[str, Estimate] = {}
    for q in QUANTITIES:
        points = site_points(key, runs, q)
        configs = list(points)
        ys = [points[c] for c in configs]
        law = fit_law(
            [float(c[0]) for c in configs],
            [c[1] for c in configs],
            ys,
            integer=q in INTEGER_QUANTITIES and all(float(v).is_integer() for v in ys),
            size_name=size_name,
            unit=QUANTITY_UNITS.get(q, ""),
        )
        if (p, n) in points:
            ests[q] = Estimate(points[(p, n)], "measured", law)
        elif q != "S" and any(r.p == p and r.n == n for r in runs):
            ests[q] = Estimate(0.0, "measured", law)  # the run at the target has no such superstep
        else:
            ests[q] = Estimate(*_value(law, p, n), law)
    present = [r for r in runs if key in r.sites]
    top = max(present, key=lambda r: (r.p, r.n or 0.0))  # the run nearest the target in p
    st = top.sites[key]
    return SiteScaling(
        key,
        text,
        ests["S"],
        ests["W"],
        ests["h"],
        ests["count"],
        st.primitive,
        st.pattern,
        ests["Wall"],
        st.H_inout / st.H if st.H > 0 else None,
    )


# ------------------------------------------------------------------ the program at the target


# The hook for the spread of the machine's parameters: per draw of the band, the parameters
# to price its communication with (e.g. g and l drawn between a probe's quartiles). None
# (the default): the parameter file as it is in every draw, the band is the fits' alone.
ParamsDraw = Callable[[np.random.Generator], Params]
# a factor on the profiles' compute per draw of the band
ComputeDraw = Callable[[np.random.Generator], float]


@dataclass
class Scaling:
    """The program at p (and n): per site its quantities, and with a parameter file its time."""

    runs: list[Run]
    p: int
    n: float | None
    size_name: str | None
    use_cpu: bool
    sites: list[SiteScaling]
    params_path: str | None = None
    compute_scale: float = 1.0
    scale_note: str = ""
    models: dict[str, float | None] = field(default_factory=dict)
    best_model: str | None = None
    interval_s: tuple[float, float] | None = None
    site_times: list[dict[str, float | None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def predicted_s(self) -> float | None:
        return self.models.get(self.best_model) if self.best_model else None

    @property
    def S(self) -> float:
        return sum(s.S.value for s in self.sites if s.synced)

    @property
    def W_s(self) -> float:
        return sum(s.S.value * s.W.value for s in self.sites)

    @property
    def H(self) -> float:
        return sum(s.S.value * s.h.value for s in self.sites)

    def measured_at_target(self) -> Run | None:
        return next((r for r in self.runs if r.p == self.p and r.n == self.n), None)

    def to_json(self) -> JsonObject:
        target = self.measured_at_target()
        return {
            "format": 1,
            "tool": TOOL,
            "bspkit_version": __version__,
            "p": self.p,
            "n": self.n,
            "size_name": self.size_name,
            "work": "cpu_s" if self.use_cpu else "compute_s",
            "runs": [
                {
                    "profile": str(r.spec.path),
                    "p": r.p,
                    "n": r.n,
                    "S": r.analysis.S,
                    "W_s": sum(step_work_s(s, self.use_cpu) for s in r.analysis.steps),
                    "H": r.analysis.H,
                    "measured_s": r.analysis.measured_s,
                }
                for r in self.runs
            ],
            "S": self.S,
            "W_s": self.W_s,
            "H": self.H,
            "params": self.params_path,
            "compute_scale": self.compute_scale,
            "compute_scale_note": self.scale_note,
            "best_model": self.best_model,
            "predicted_s": self.predicted_s,
            "models": self.models or None,
            "interval_s": list(self.interval_s) if self.interval_s is not None else None,
            "measured_s": target.analysis.measured_s if target is not None else None,
            "supersteps": [
                {
                    "site": s.site,
                    "phase": s.phase,
                    "end": s.key[1],
                    "primitive": s.primitive,
                    "pattern": s.pattern,
                    "S": s.S.to_json(),
                    "W": s.W.to_json(total=s.S.value * s.W.value),
                    "H": s.h.to_json(total=s.S.value * s.h.value),
                    "count": s.count.to_json(),
                    "time_s": times,
                }
                for s, times in zip(self.sites, self.site_times or [{}] * len(self.sites), strict=True)
            ],
            "notes": self.notes,
        }


def scale_runs(runs: Sequence[Run], use_cpu: bool, texts: dict[SiteMatch, str], p: int, n: float | None) -> Scaling:
    """Every site of the runs at p (and n): the fitted laws and their values there."""
    sized = runs[0].n is not None
    size_name = runs[0].spec.size_name if sized else None
    if sized and n is None:
        sizes = {r.n for r in runs}
        if len(sizes) > 1:
            raise ScalingError(
                f"the runs have several sizes ({size_name} = {', '.join(size_text(v) for v in sorted(s for s in sizes if s is not None))}): "
                "say which one to predict (--to-size)"
            )
        n = runs[0].n
    if n is not None and not sized:
        raise ScalingError("a target size (--to-size) needs runs that give theirs (RUN.jsonl@NAME=VALUE)")
    keys = list(dict.fromkeys(k for r in sorted(runs, key=lambda r: -r.p) for k in r.sites))
    sites = [scale_site(k, texts[k], runs, p, n, size_name or "n") for k in keys]
    out = Scaling(list(runs), p, n, size_name, use_cpu, sites)
    if not use_cpu:
        out.notes.append("work is compute_s (wall clock): a profile has no cpu_s (written by an older libbsp)")
    programs = {Path(str(r.analysis.profile.header.get("program"))).name for r in runs}
    if len(programs) > 1:
        out.notes.append(
            f"the runs are of different programs ({', '.join(sorted(programs))}): their sites may not match"
        )
    ps = [r.p for r in runs]
    if p > 2 * max(ps) or p < min(ps) / 2:
        out.notes.append(f"p = {p} is far outside the runs' p ({min(ps)}..{max(ps)}): the laws extrapolate")
    return out


def _site_time(
    site: SiteScaling,
    params: Params,
    model: str,
    scale: float,
    S: float,
    W: float,
    h: float,
    count: float,
    cores: int | None = None,
    W_all: float | None = None,
) -> float | None:
    # on fewer cores than processes a superstep's compute is at least all the work over the
    # cores: the processes take turns (a wavefront's first superstep has one process busy)
    compute = max(W, W_all / cores) * scale if cores and W_all is not None else W * scale
    if not site.synced:
        return S * compute
    comm = pd.superstep_comm_s(params, site.comm_step(h, count), model) if S > 0 else 0.0
    return None if comm is None else S * (compute + comm)


def predict_scaling(
    sc: Scaling,
    params: Params,
    params_path: str,
    compute_scale: float = 1.0,
    scale_note: str = "",
    model: str | None = None,
    params_draw: ParamsDraw | None = None,
    cores: int | None = None,
    compute_noise: ComputeDraw | None = None,
) -> Scaling:
    """The time of the program at the target on the machine of the parameter file, per model
    and per site; the best model (`model`, else the most detailed model (comm_models.BEST_FIRST) that predicts
    every site) and its 10-90 % band. cores: where the target's processes share fewer cores
    than p, a superstep computes at least all its work over the cores. compute_noise: a factor
    on the profiles' compute per draw of the band (the machine's compute noise)."""
    cores = cores if cores and cores < sc.p else None
    sc.params_path, sc.compute_scale, sc.scale_note = params_path, compute_scale, scale_note
    sc.site_times = []
    totals: dict[str, float | None] = dict.fromkeys(comm_models.NAMES, 0.0)
    for site in sc.sites:
        times: dict[str, float | None] = {}
        for m in comm_models.NAMES:
            w_all = site.Wall.value if site.Wall is not None else None
            t = _site_time(
                site, params, m, compute_scale, site.S.value, site.W.value, site.h.value, site.count.value, cores, w_all
            )
            times[m] = t
            total = totals[m]
            totals[m] = None if total is None or t is None else total + t
        sc.site_times.append(times)
    sc.models = totals
    if model is not None:
        try:
            sc.best_model = comm_models.get(model).name
        except comm_models.UnknownModel as e:
            raise ScalingError(str(e)) from None
    else:
        sc.best_model = comm_models.best(totals)
    if sc.best_model is not None and totals[sc.best_model] is not None:
        sc.interval_s = prediction_interval(
            sc, params, sc.best_model, compute_scale, params_draw, cores=cores, compute_noise=compute_noise
        )
    return sc


def _draw(est: Estimate, rng: np.random.Generator) -> float:
    """The value with one of its law's leave-one-out residuals; measured and exact values stay."""
    if est.source != "fitted" or est.law is None or not est.law.residuals:
        return est.value
    r = est.law.residuals[int(rng.integers(len(est.law.residuals)))]
    return max(0.0, est.value * (1.0 + r))


def prediction_interval(
    sc: Scaling,
    params: Params,
    model: str,
    compute_scale: float,
    params_draw: ParamsDraw | None = None,
    draws: int = INTERVAL_DRAWS,
    seed: int = 0,
    cores: int | None = None,
    compute_noise: ComputeDraw | None = None,
) -> tuple[float, float] | None:
    """The 10-90 % band of the program's time under a model: each draw takes every fitted
    quantity of every site times (1 + one of its law's leave-one-out relative residuals, at
    random), exact and measured ones as they are, and prices it with the parameters of
    params_draw(rng) (the spread of the machine's parameters; None: the file as it is). The
    band is widened to hold the prediction itself. None where a draw cannot be priced.
    compute_noise(rng): a factor on the compute per draw (the machine's time-to-time noise of
    the compute regime: the profiles' compute is measured once, at one moment)."""
    rng = np.random.default_rng(seed)
    point = sc.models.get(model)
    if point is None:
        return None
    totals = np.empty(draws)
    for i in range(draws):
        prm = params_draw(rng) if params_draw is not None else params
        scale = compute_scale * (compute_noise(rng) if compute_noise is not None else 1.0)
        total = 0.0
        for site in sc.sites:
            t = _site_time(
                site,
                prm,
                model,
                scale,
                _draw(site.S, rng),
                _draw(site.W, rng),
                _draw(site.h, rng),
                _draw(site.count, rng),
                cores,
                _draw(site.Wall, rng) if site.Wall is not None else None,
            )
            if t is None:
                return None
            total += t
        totals[i] = total
    lo, hi = (float(q) for q in np.quantile(totals, INTERVAL_QUANTILES))
    return min(lo, point), max(hi, point)


# ------------------------------------------------------------------ text


def size_text(v: float) -> str:
    """4000.0 -> "4000", 1e6 -> "1000000", 0.5 -> "0.5"."""
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else plain(v)


def coefficient(v: float, digits: int = 4) -> str:
    """A count's coefficient in fixed notation with `digits` significant digits, however
    small (0.0001234, where units.plain says < 0.001)."""
    if v == 0 or not math.isfinite(v) or abs(v) >= 1e-3:
        return plain(v, digits) if math.isfinite(v) else str(v)
    decimals = digits - 1 - math.floor(math.log10(abs(v)))
    return f"{v:.{decimals}f}".rstrip("0")


def _num(v: float | None, unit: str) -> str:
    return quantity(v, unit)


def _est_text(est: Estimate, unit: str) -> str:
    value = _num(est.value, unit) if unit else coefficient(est.value)
    if est.source == "measured" or est.law is None:
        return f"{value}  (measured)" if est.source == "measured" else value
    if est.source == "exact":
        how = "exact"
    elif est.law.cv_error is None:
        how = f"through {est.law.points} run{'s' if est.law.points > 1 else ''} only"
    else:
        how = f"leave-one-out error {100 * est.law.cv_error:.1f} %"
    return f"{value}  ({est.law.text()}: {how})"


def summary_lines(sc: Scaling) -> list[str]:
    """The terminal summary: the runs, per site the laws and values at the target, the totals
    and with a parameter file the predicted time per model."""
    size = f", {sc.size_name} = {size_text(sc.n)}" if sc.n is not None else ""
    sizes = sorted({r.n for r in sc.runs if r.n is not None})
    run_sizes = f"; {sc.size_name} = {', '.join(size_text(v) for v in sizes)}" if sizes else ""
    ps = ", ".join(str(v) for v in sorted({r.p for r in sc.runs}))
    out = [f"scaling {len(sc.runs)} runs (p = {ps}{run_sizes}) to p = {sc.p}{size}"]
    work = "cpu_s, the processes' CPU time" if sc.use_cpu else "compute_s, wall clock"
    out.append(f"  per site: S supersteps; per superstep W (max work: {work}), h and messages")
    for i, s in enumerate(sc.sites):
        phase = f" [{s.phase}]" if s.phase is not None else ""
        end = "" if s.synced else " (ends at bsp_end)"
        out.append(f"  {s.site}{phase}{end}")
        out.append(f"      S = {_est_text(s.S, '')}")
        out.append(f"      W = {_est_text(s.W, 's')}")
        if s.synced:
            out.append(f"      h = {_est_text(s.h, '')} words; messages {_est_text(s.count, '')}")
        if sc.site_times and sc.best_model:
            out.append(f"      time ({sc.best_model}) {_num(sc.site_times[i].get(sc.best_model), 's')}")
    out.append(f"  at p = {sc.p}{size}: S = {coefficient(sc.S)}, W = {_num(sc.W_s, 's')}, H = {_num(sc.H, 'words')}")
    target = sc.measured_at_target()
    if sc.params_path is not None:
        scale = f"compute x {coefficient(sc.compute_scale)}" + (f": {sc.scale_note}" if sc.scale_note else "")
        out.append(f"  predicted on the machine of {sc.params_path} ({scale}):")
        for m in comm_models.NAMES:
            mark = "  <- predicted_s" if m == sc.best_model else ""
            band = ""
            if m == sc.best_model and sc.interval_s is not None:
                band = f"  [{_num(sc.interval_s[0], 's')} .. {_num(sc.interval_s[1], 's')}] (10-90 %)"
            out.append(f"    {m:8} {_num(sc.models.get(m), 's')}{band}{mark}")
    if target is not None:
        out.append(f"  measured at p = {sc.p}{size}: {_num(target.analysis.measured_s, 's')} ({target.spec.path})")
    out += [f"  note: {n}" for n in sc.notes]
    return out
