"""Prediction without a run (`bspkit predict`): an algorithm's closed-form cost (bspkit.model.costs)
evaluated with a machine's parameters, at any p and n, with a band, the speedup and
efficiency over p and n (thesis eq. 4.11-4.12), and where the time goes.

For one problem (n and the algorithm's second parameter) at p processes:

    T = W f + sum over supersteps of comm(h, c, h*) + l        (bspkit.model.supersteps, per model)

with W, h, c, h* from the closed form, f the seconds per work unit of the algorithm's kernel
(the probe's kernel nearest it, a driver's own measurement, or given), and comm and l from the
machine's parameters at that p (a probe at p, or fitted over the p of several probes:
bspkit.model.machine_scaling). The best model is the most detailed one the parameters serve:
g(h,h*), then g(h), then g const.

Speedup S(p) = T(1) / T(p): the same algorithm and problem on one process, as the thesis'
eq. (4.11) compares (the same blocks on one processor); efficiency E(p) = W_1 f / (p T(p)),
eq. (4.12) with the work of the whole problem W_1 (the closed form at p = 1) in the
algorithm's own unit, under each model of communication. T(1), the speedup's base, is the
prediction at p = 1 where p = 1 is asked; else it is not a row: the closed form at p = 1 on a
parameter file at p = 1 where one is given, else W_1 f alone (at p = 1 every closed form
communicates nothing, and a sync with no other process to wait for is not charged the l of
another p: no machine at p = 1 is extrapolated for it). SpeedupBase says which.

Processes beyond the cores of one machine take turns: f is then f p / cores (Machine.cores).

Where the time goes: T = work (W f) + bandwidth (the communication beyond l) + latency
(l S, the empty sync per superstep); "what if" halves each of f, g and l in turn.

The band (issue 39: bands that cover): T = W f + bandwidth + l S is resampled with three kinds
of independent log-normal factors, and interval_s is the 10th to 90th percentile of the totals:

- the parameters' spread: f, g and l each scaled by the parameter's relative spread (the
  probe's sample spread and fit residuals, the fit over p's error at the target; f's: of the
  algorithm's kernel, or of the repetitions of the run f came from);
- the machine's noise: its time-to-time variability per regime (params.json `noise.regimes`,
  the probe's sentinels): W f by the compute regime's, l S by the sync regime's, the
  bandwidth by the small-h and large-h regimes' in proportion to the time of the supersteps
  of each (bspkit.model.trust.comm_regime);
- the model's own residuals: where `bspkit validate` of the algorithm has run, the whole
  time T by its validation residual beyond the noise (the newest sweep's best model:
  bspkit.model.trust's sqrt(max(0, rms^2 - noise^2)) over its runs, bias included;
  bspkit.model.model_choice); else the bandwidth by the probe check's residual beyond the
  noise (the same split of eq. (2.6) against the off-grid points). Not both: the first holds
  the second.

A parameter file without noise regimes or without a check (hand-written, or fitted over p)
gives the parameters' spread alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bspkit.model import comm_models, trust
from bspkit.model import drift as cm
from bspkit.model import machine_scaling as ms
from bspkit.model import supersteps as pd
from bspkit.model.costs import Cost, StepKind
from bspkit.model.params import Params, is_hand_written
from bspkit.version import __version__

# the format of `bspkit predict --json` (docs/prediction.md)
PREDICT_FORMAT = 1
BAND = (10.0, 90.0)  # percentiles of the interval
BAND_SAMPLES = 4000

JsonObject = dict[str, Any]


class ForecastError(Exception):
    """The prediction cannot be made (no f for the kernel, no usable parameters)."""


@dataclass(frozen=True)
class Spread:
    """Relative spreads (a standard deviation of log T, about the relative one) of the three
    machine parameters a prediction rests on; the machine's time-to-time noise per regime
    (compute, sync, small_h, large_h) and the communication model's residual beyond it."""

    f: float = 0.0  # of a kernel the file does not know (the median over its kernels)
    g: float = 0.0
    l: float = 0.0  # noqa: E741 (the BSP parameter's name)
    f_kernels: Mapping[str, float] = field(default_factory=dict)  # f's spread per probe kernel
    noise: Mapping[str, float] = field(default_factory=dict)  # regime -> sd of log (params.noise.regimes)
    model: float = 0.0  # sd of log of the model's residual beyond the noise (the probe's check)
    # sd of log of the algorithm's own validation residual beyond the noise (its newest
    # `bspkit validate`, bspkit.model.model_choice.Evidence), and where it comes from
    validation: float = 0.0
    validation_source: str = ""

    def f_of(self, kernel: str | None) -> float:
        """f's spread for the algorithm's kernel (Cost.f_kernel), else the median one."""
        return self.f_kernels.get(kernel, self.f) if kernel else self.f

    def to_json(self) -> JsonObject:
        return {
            "f": self.f,
            "g": self.g,
            "l": self.l,
            "f_kernels": dict(self.f_kernels),
            "noise": dict(self.noise),
            "model": self.model,
            "validation": self.validation,
            "validation_source": self.validation_source,
        }


def spread_of(at: ms.MachineAtP | Params) -> Spread:
    """The three spreads of a machine's parameters (bspkit.model.machine_scaling.parameter_spread,
    the fits over p added in): f, the median over the probe's kernels (f is the scatter of one
    core's kernel time, alike across kernels); g, the all-to-all put surface's for the most
    detailed model it has (g(h,h*), then g(h), then Bisseling's g), else the median over the
    surfaces; l, the empty sync's. Unknown ones are 0 (a hand-written number)."""
    spread = ms.parameter_spread(at)

    def log_sd(rel: float | None) -> float | None:
        # a relative sd as the sd of log (a log-normal's): equal for small ones; a fit far
        # outside its points (a relative error of 70) gives a wide band, not an infinite one
        return None if rel is None else math.sqrt(math.log1p(rel * rel))

    def of_surface(s: ms.SurfaceSpread) -> float | None:
        return log_sd(comm_models.best_spread(s))

    fs = [v for v in map(log_sd, spread.f.values()) if v is not None]
    put = spread.g.get("put/alltoall")
    g = of_surface(put) if put is not None else None
    if g is None:
        gs = [v for s in spread.g.values() if (v := of_surface(s)) is not None]
        g = float(np.median(gs)) if gs else None
    kernels = {k: sd for k, v in spread.f.items() if (sd := log_sd(v)) is not None}
    return Spread(
        float(np.median(fs)) if fs else 0.0,
        g or 0.0,
        log_sd(spread.l) or 0.0,
        kernels,
        dict(spread.noise),
        spread.model or 0.0,
    )


def shared_cores(params: Params, given: int | None) -> int | None:
    """The cores a run's processes share: those given (--cores), else the probe's machine's
    when it ran on threads (one machine), else None (a core per process: a cluster)."""
    if given is None and params.machine.get("backend") == "threads":
        cores = params.machine.get("cores")
        return cores if isinstance(cores, int) and cores > 0 else None
    return given


@dataclass(frozen=True)
class Machine:
    """The parameters a prediction at one p is evaluated with, and where they come from."""

    params: Params
    source: str  # "probe at p = 4", "fitted over p = 1, 2, 4 (extrapolated)", "hand-written"
    spread: Spread = Spread()
    warnings: tuple[str, ...] = ()
    # the cores the p processes share (threads on one machine): beyond them processes take
    # turns and each computes at f p / cores; None: a core each (a cluster big enough)
    cores: int | None = None
    # the parameter file these parameters are (its path), None where they are fitted over several
    origin: str | None = None

    def time_sharing(self, p: int) -> float:
        """How much slower each process computes at p: p / cores beyond the cores, else 1."""
        return max(1.0, p / self.cores) if self.cores else 1.0


@dataclass(frozen=True)
class Rate:
    """f: seconds per work unit, and where it comes from."""

    s_per_unit: float
    source: str
    # how far f may be off (sd of log f); None: the machine's spread of the kernel's f
    spread: float | None = None


@dataclass(frozen=True)
class KindCost:
    """The supersteps of one kind together: their counts and predicted time (best model)."""

    kind: str
    S: int
    W: float
    H: float
    source: str  # closed form, expected, bound
    time_s: float | None

    def to_json(self) -> JsonObject:
        return {"kind": self.kind, "W": self.W, "H": self.H, "S": self.S, "source": self.source, "time_s": self.time_s}


@dataclass(frozen=True)
class Point:
    """The prediction of one problem at one p."""

    cost: Cost
    machine: Machine
    f: Rate
    models: dict[str, float | None]  # total time per model
    best_model: str
    work_s: float
    latency_s: float  # l S: the empty sync per superstep
    bandwidth_s: float  # the best model's communication beyond l S
    interval_s: tuple[float, float]
    kinds: tuple[KindCost, ...]
    request: Mapping[str, Any] = field(default_factory=dict)  # the problem as asked (Cost.problem: filled in)
    speedup: float | None = None  # T(1) / T(p), filled in by `sweep`
    efficiency: float | None = None  # W_1 f / (p T(p)), the best model's
    efficiencies: Mapping[str, float | None] = field(default_factory=dict)  # per model; None where it predicts none
    speedup_base_s: float | None = None  # T(1): the speedup's base (Sweep.base says how it was had)

    @property
    def p(self) -> int:
        return self.cost.p

    @property
    def predicted_s(self) -> float:
        value = self.models[self.best_model]
        assert value is not None  # best_model is one that predicted
        return value

    def shares(self) -> dict[str, float]:
        """The parts of T as fractions: work (f W), bandwidth (g H), latency (l S)."""
        total = self.work_s + self.bandwidth_s + self.latency_s
        if total <= 0:
            return {"work": 0.0, "bandwidth": 0.0, "latency": 0.0}
        return {
            "work": self.work_s / total,
            "bandwidth": self.bandwidth_s / total,
            "latency": self.latency_s / total,
        }

    def what_if(self) -> list[tuple[str, float, float]]:
        """(what is halved, T then, its speedup over T) for f, g and l in turn."""
        t = self.predicted_s
        parts = (("f (compute twice as fast)", self.work_s), ("g (twice the bandwidth)", self.bandwidth_s))
        parts += (("l (half the latency)", self.latency_s),)
        return [(name, t - part / 2, t / (t - part / 2) if t - part / 2 > 0 else math.inf) for name, part in parts]

    def to_json(self) -> JsonObject:
        return {
            "algorithm": self.cost.algorithm,
            "p": self.p,
            "problem": dict(self.request or self.cost.problem),
            "model_problem": dict(self.cost.problem),
            "predicted_s": self.predicted_s,
            "best_model": self.best_model,
            "models": dict(self.models),
            "interval_s": list(self.interval_s),
            "band_percentiles": list(BAND),
            "speedup": self.speedup,
            "speedup_base_s": self.speedup_base_s,
            "efficiency": self.efficiency,
            "efficiencies": dict(self.efficiencies),
            "W": self.cost.W,
            "H": self.cost.H,
            "S": self.cost.S,
            "work_unit": self.cost.work_unit,
            "exact": self.cost.exact,
            "notes": list(self.cost.notes),
            "f_s_per_unit": self.f.s_per_unit,
            "f_source": self.f.source,
            "f_spread": self.f.spread,
            "machine": {
                "source": self.machine.source,
                "spread": self.machine.spread.to_json(),
                "warnings": list(self.machine.warnings),
                "cores": self.machine.cores,
                "time_sharing": self.machine.time_sharing(self.p),
            },
            "parts_s": {"work": self.work_s, "bandwidth": self.bandwidth_s, "latency": self.latency_s},
            "shares": self.shares(),
            "what_if": [{"halve": name, "predicted_s": t, "speedup": s} for name, t, s in self.what_if()],
            "supersteps": [k.to_json() for k in self.kinds],
        }


# ------------------------------------------------------------------------------- f


def rate_of(cost: Cost, params: Params, given: Rate | None = None, origin: str | None = None) -> Rate:
    """f for this algorithm: the one given (--f, a driver's run), else the parameter file's
    kernel nearest the driver's (Cost.f_kernel), said as it is: a probe's kernel, or the key of
    a file written by hand (origin: its path, where known)."""
    if given is not None:
        return given
    kernel = cost.f_kernel
    value = params.f.get(kernel) if kernel else None
    if value:
        if is_hand_written(params):
            return Rate(float(value), f"f.{kernel} of the hand-written parameter file{f' {origin}' if origin else ''}")
        return Rate(float(value), f"the probe's {kernel} kernel")
    hint = (
        f"the parameter file has no f for the {kernel} kernel"
        if kernel
        else f"the probe has no kernel like {cost.algorithm}'s (its unit: {cost.work_unit})"
    )
    raise ForecastError(
        f"{hint}: give --f SECONDS_PER_{cost.work_unit.upper()}, or --f-from RUN.json, a driver's run on one "
        f"process (bspkit run {cost.algorithm} -n 1 --size N --json RUN.json)"
    )


def rate_from_run(run: Mapping[str, Any], algorithm: str) -> Rate:
    """f from a driver's run: the kernel it timed (--measure-f; on every process at once where
    it was, else on process 0 alone, as bspkit.model.supersteps.predict reads it); else, for a run on
    one process, the run's own rate, its median time over its W (everything the algorithm
    does per unit of work, with no communication to take out). The spread: the scatter of
    the run's repetitions (the kernel's own timings are not kept)."""
    problem = ", ".join(f"{k} = {v}" for k, v in (run.get("params") or {}).items() if k in ("n", "q", "alpha", "nb"))
    where = f"{run.get('algorithm')}, p = {run.get('p')}, {problem}"
    times = [float(t) for t in run.get("times_s") or [] if t and t > 0]
    spread = float(np.std(np.log(times), ddof=1)) if len(times) >= 3 else None
    value = run.get("f_all_s_per_unit") or run.get("f_s_per_unit")
    if value:
        return Rate(float(value), f"the kernel as the driver timed it ({where})", spread)
    if run.get("p") == 1 and run.get("time_s") and run.get("W"):
        return Rate(float(run["time_s"]) / float(run["W"]), f"the run's time over its W ({where})", spread)
    raise ForecastError(
        f"the run of {run.get('algorithm')} at p = {run.get('p')} has no f: give a run on one process, or one with "
        f"--measure-f (bspkit run {algorithm} -n 1 --size N --json RUN.json)"
    )


# ----------------------------------------------------------------------- one point


def _comm_cost(params: Params, step: StepKind, model: str, memo: dict[tuple[Any, ...], float | None]) -> float | None:
    """One superstep's communication and synchronization under a model (memoized: a run
    repeats the same shapes)."""
    key = (model, step.h, step.h_inout, step.count, step.primitive, step.pattern)
    if key not in memo:
        memo[key] = pd.superstep_comm_s(params, step.as_superstep(), model)
    return memo[key]


def band(
    work_s: float,
    bandwidth_s: float,
    latency_s: float,
    spread: Spread,
    kernel: str | None = None,
    f_spread: float | None = None,
    seed: int = 1,
    bandwidth_regimes: Mapping[str, float] | None = None,
) -> tuple[float, float]:
    """The 10th-90th percentile of T (the module's docstring): f (f_spread, else the kernel's),
    g and l scaled by independent log-normal factors (median 1, the spreads as sigma); then the
    machine's noise per regime and the model's residual, drawn only where they are known (a
    spread without them gives the band of the parameters alone, draw for draw).
    bandwidth_regimes: the bandwidth's seconds per regime (small_h, large_h); without them the
    bandwidth takes the noisier regime's noise."""
    rng = np.random.default_rng(seed)

    def factor(sigma: float) -> Any:
        return np.exp(rng.normal(0.0, sigma, BAND_SAMPLES)) if sigma > 0 else np.ones(BAND_SAMPLES)

    work = work_s * factor(spread.f_of(kernel) if f_spread is None else f_spread)
    bandwidth = bandwidth_s * factor(spread.g)
    latency = latency_s * factor(spread.l)
    noise = spread.noise
    # the algorithm's validation residual is the model's error of a whole run, the probe
    # check's residual (of eq. 2.6 alone) included: the band takes one of them, not both
    model_sd = 0.0 if spread.validation > 0 else spread.model
    if noise or model_sd > 0:
        work = work * factor(noise.get("compute", 0.0))
        latency = latency * factor(noise.get("sync", 0.0))
        comm = {k: v for k, v in (bandwidth_regimes or {}).items() if v > 0 and k in ("small_h", "large_h")}
        if comm:
            total = sum(comm.values())
            mix = sum((v / total) * factor(noise.get(k, 0.0)) for k, v in comm.items())
        else:
            mix = factor(max(noise.get("small_h", 0.0), noise.get("large_h", 0.0)))
        bandwidth = bandwidth * mix * factor(model_sd)
    total = (work + bandwidth + latency) * factor(spread.validation)
    low, high = np.percentile(total, BAND)
    return float(low), float(high)


def bandwidth_by_regime(params: Params, steps: Sequence[tuple[float, float, bool, float]]) -> dict[str, float]:
    """The bandwidth's seconds (each superstep's communication beyond l) per regime, small_h
    or large_h by the superstep's h (bspkit.model.trust.comm_regime); steps: (h, seconds of
    its communication and sync, synced, repeat)."""
    parts = trust.regime_seconds(steps, 0.0, pd.empty_sync_s(params), params.noise)
    return {k: parts[k] for k in ("small_h", "large_h")}


def point(cost: Cost, machine: Machine, rate: Rate, order: Sequence[str] | None = None) -> Point:
    """The predicted time of one closed-form cost on one machine; its best model the first of
    `order` that predicts (default: the most detailed, comm_models.BEST_FIRST)."""
    params = machine.params
    l_empty = pd.empty_sync_s(params)
    memo: dict[tuple[Any, ...], float | None] = {}
    work_s = cost.W * rate.s_per_unit * machine.time_sharing(cost.p)
    models: dict[str, float | None] = {}
    for model in comm_models.NAMES:
        total = 0.0
        for step in cost.steps:
            if not step.sync:
                continue
            c = _comm_cost(params, step, model, memo)
            if c is None:
                total = math.nan
                break
            total += step.repeat * c
        models[model] = None if math.isnan(total) else work_s + total
    best = comm_models.best(models, order)
    if best is None:
        raise ForecastError("the parameters predict no superstep under any model: the file has no usable g surface")
    l_empty = pd.empty_superstep_s(params, best) or l_empty  # the l the best model charges a superstep

    kinds: dict[str, dict[str, Any]] = {}
    for step in cost.steps:
        k = kinds.setdefault(step.kind, {"S": 0, "W": 0.0, "H": 0.0, "source": step.source, "comm": 0.0})
        k["S"] += step.repeat if step.sync else 0
        k["W"] += step.repeat * step.w
        k["H"] += step.repeat * step.h
        if step.source != "closed form":
            k["source"] = step.source
        if step.sync:
            k["comm"] += step.repeat * (_comm_cost(params, step, best, memo) or 0.0)
    kind_costs = tuple(
        KindCost(
            name, k["S"], k["W"], k["H"], k["source"], k["W"] * work_s / cost.W + k["comm"] if cost.W else k["comm"]
        )
        for name, k in kinds.items()
    )

    comm_s = models[best] - work_s  # type: ignore[operator]
    latency_s = min(cost.S * l_empty, comm_s)
    bandwidth_s = max(comm_s - latency_s, 0.0)
    regimes = None
    if machine.spread.noise:
        steps = [(st.h, c, st.sync, st.repeat) for st in cost.steps if (c := _comm_cost(params, st, best, memo))]
        regimes = bandwidth_by_regime(params, steps)
    low, high = band(
        work_s, bandwidth_s, latency_s, machine.spread, cost.f_kernel, rate.spread, bandwidth_regimes=regimes
    )
    return Point(cost, machine, rate, models, best, work_s, latency_s, bandwidth_s, (low, high), kind_costs)


def params_draw(params: Params, spread: Spread) -> Callable[[np.random.Generator], Params]:
    """Parameter files drawn from the spread of this one: every g and l scaled by a log-normal
    factor, f left alone; for the bands of predictions that price their own quantities
    (`bspkit profile --scale`: profile_scaling.ParamsDraw). g's factor holds g's spread, the
    model's residual and the machine's noise of the h-relation's regime (small h below
    trust.SMALL_H_BELOW words, large h from it); l's holds l's spread and the sync regime's
    noise. The compute's noise is not the parameters': compute_noise_draw gives its factor."""
    small = math.hypot(spread.g, spread.model, spread.noise.get("small_h", 0.0))
    large = math.hypot(spread.g, spread.model, spread.noise.get("large_h", 0.0))
    l_sd = math.hypot(spread.l, spread.noise.get("sync", 0.0))

    def draw(rng: np.random.Generator) -> Params:
        g = math.exp(rng.normal(0.0, small)) if small > 0 else 1.0
        l_factor = math.exp(rng.normal(0.0, l_sd)) if l_sd > 0 else 1.0
        g_at: list[tuple[int, float]] = [(1, g)]
        if large != small:  # the regimes' noise differs: a factor each, a step at SMALL_H_BELOW
            g_large = math.exp(rng.normal(0.0, large)) if large > 0 else 1.0
            g_at = [(trust.SMALL_H_BELOW - 1, g), (trust.SMALL_H_BELOW, g_large)]
        drift = cm.Drift(f={}, g=g_at, l={"empty": l_factor, "shift": l_factor})
        return cm.scaled(params, drift, scale_f=False)

    return draw


def compute_noise_draw(spread: Spread) -> Callable[[np.random.Generator], float]:
    """A factor for a prediction's compute time per draw of its band: the machine's
    time-to-time noise of the compute regime (1 where it is unknown). For `bspkit profile
    --scale`, whose compute is the profiles' own, not the parameter file's f."""
    sd = spread.noise.get("compute", 0.0)

    def draw(rng: np.random.Generator) -> float:
        return math.exp(rng.normal(0.0, sd)) if sd > 0 else 1.0

    return draw


def run_band(
    params: Params,
    prediction: Mapping[str, float | None],
    supersteps: int,
    spread: Spread,
    kernel: str | None = None,
    steps: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[str, tuple[float, float]] | None:
    """The band of a driver run's prediction (bspkit.model.supersteps.predict's dict, the run's S): that
    of its most detailed model, None where no model predicted it. steps: the run's supersteps
    (the driver's JSON), which share the bandwidth between the small-h and large-h regimes."""
    best = comm_models.best(prediction)
    comm = prediction.get(f"{best} comm_s") if best else None
    work = prediction.get("work_s")
    if best is None or comm is None or work is None:
        return None
    latency = min(supersteps * (pd.empty_superstep_s(params, best) or pd.empty_sync_s(params)), comm)
    regimes = None
    if steps and spread.noise:
        regimes = bandwidth_by_regime(params, trust.steps_of_run(params, steps, best, pd.superstep_comm_s))
    return best, band(work, max(comm - latency, 0.0), latency, spread, kernel, bandwidth_regimes=regimes)


# --------------------------------------------------------------------- a sweep


# how T(1), the speedup's base, was had (SpeedupBase.how)
BASE_ASKED = "asked"  # p = 1 is among the p asked: its row is the base
BASE_FILE = "parameter file at p = 1"  # the closed form at p = 1 on a file at p = 1, not a row
BASE_WORK = "work alone"  # W_1 f: no file at p = 1, none extrapolated to it


@dataclass(frozen=True)
class SpeedupBase:
    """How T(1), the speedup's base, was had (the module's docstring), and in words."""

    how: str  # BASE_ASKED, BASE_FILE or BASE_WORK
    source: str

    def to_json(self) -> JsonObject:
        return {"p": 1, "how": self.how, "source": self.source}


@dataclass(frozen=True)
class Sweep:
    """Predictions over p (and n, and the second parameter), with speedup and efficiency."""

    algorithm: str
    points: tuple[Point, ...]
    warnings: tuple[str, ...] = field(default=())  # every p's machine's, once each
    base: SpeedupBase = SpeedupBase(BASE_ASKED, "p = 1, a row")

    def problems(self) -> list[tuple[tuple[str, Any], ...]]:
        """The problems predicted (n and the second parameter), in order."""
        seen: dict[tuple[tuple[str, Any], ...], None] = {}
        for pt in self.points:
            seen.setdefault(problem_key(pt.request), None)
        return list(seen)

    def target(self) -> Point:
        """The prediction the question is about: the largest p of the last problem."""
        last = self.problems()[-1]
        return max((pt for pt in self.points if problem_key(pt.request) == last), key=lambda pt: pt.p)

    def to_json(self) -> JsonObject:
        """The output contract: its format and writer, the target's prediction at the top level
        (predicted_s, models, interval_s, p, supersteps), every point in `table`, and how the
        speedup's base was had."""
        out = {"format": PREDICT_FORMAT, "bspkit_version": __version__, **self.target().to_json()}
        out["table"] = [pt.to_json() for pt in self.points]
        out["speedup_base"] = self.base.to_json()
        out["warnings"] = list(self.warnings)
        return out


def problem_key(problem: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in problem.items() if isinstance(v, (int, float, str))))


# an algorithm's closed-form cost of a problem at p (bspkit.model.costs)
CostOf = Callable[[Mapping[str, Any], int], Cost]


def sweep(
    algorithm: str,
    problems: Sequence[Mapping[str, Any]],
    procs: Sequence[int],
    cost_of: CostOf,
    machines: Mapping[int, Machine],
    given_rate: Rate | None = None,
    order: Sequence[str] | Callable[[int], Sequence[str]] | None = None,
    base_machine: Machine | None = None,
) -> Sweep:
    """Every problem at every p of procs (and no other), with speedup and efficiency against the
    same problem at p = 1: the row at p = 1 where procs has it, else the closed form at p = 1 on
    base_machine (a parameter file at p = 1), else W_1 f alone (the module's docstring).
    machines: the parameters at every p of procs; order: the models' order (point), or a
    function of p giving it."""

    def order_at(p: int) -> Sequence[str] | None:
        return order(p) if callable(order) else order

    missing = sorted(set(procs) - set(machines))
    if missing:
        raise ForecastError(f"no machine parameters at p = {', '.join(map(str, missing))}")
    warnings: dict[str, None] = {}
    for p in procs:
        warnings.update(dict.fromkeys(machines[p].warnings))
    if 1 in procs:
        base = SpeedupBase(BASE_ASKED, "p = 1, a row")
    elif base_machine is not None:
        warnings.update(dict.fromkeys(base_machine.warnings))
        base = SpeedupBase(BASE_FILE, f"the closed form at p = 1 on the {base_machine.source}")
    else:
        base = SpeedupBase(
            BASE_WORK,
            "W f at p = 1: one process communicates nothing, and its syncs, with no other process to wait "
            "for, are not charged the l of another p",
        )
    points: list[Point] = []
    target = machines[max(procs)]
    for problem in problems:
        # one f for the whole sweep (f is per core): the target machine's, so that the speedup
        # compares times of the same f
        cost_1 = cost_of(problem, 1)
        rate = rate_of(cost_1, target.params, given_rate, target.origin)
        one: Point | None = None
        if 1 in procs:
            one = point(cost_1, machines[1], rate, order_at(1))
            time_1 = one.predicted_s
        elif base_machine is not None:
            time_1 = point(cost_1, base_machine, rate, order_at(1)).predicted_s
        else:
            if cost_1.H > 0:  # none of the closed forms does; a new one would need a machine at p = 1
                raise ForecastError(
                    f"{algorithm} communicates at p = 1 ({cost_1.H:g} words): the speedup's base needs the machine "
                    "at p = 1: add 1 to -n"
                )
            time_1 = cost_1.W * rate.s_per_unit
        work_1 = cost_1.W * rate.s_per_unit
        for p in procs:
            pt = one if p == 1 and one is not None else point(cost_of(problem, p), machines[p], rate, order_at(p))
            points.append(
                replace(
                    pt,
                    request=dict(problem),
                    speedup=time_1 / pt.predicted_s,
                    efficiency=work_1 / (p * pt.predicted_s),
                    efficiencies={m: None if t is None else work_1 / (p * t) for m, t in pt.models.items()},
                    speedup_base_s=time_1,
                )
            )
    return Sweep(algorithm, tuple(points), tuple(warnings), base)
