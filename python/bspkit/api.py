"""bspkit from Python (a notebook, a script): load a probe run or a parameter file, predict a
list of supersteps, plot on your own matplotlib Axes.

    import bspkit
    run = bspkit.load_run("results/probe/host-threads-p4-20250101-120000")
    run.params.g["put/alltoall"].lsq_value("g_inf")      # fitted parameters (bspkit.model.params.Params)
    run.raw.g_points("put/alltoall")                      # raw samples (bspkit.measure.rawdata.GPoint)
    pred = bspkit.predict_supersteps(run.params, [{"w": 1e6, "h": 4096, "count": 64}], f_s_per_unit=1e-9)
    pred.total["g(h,h*)"]                                 # seconds
    fig, ax = matplotlib.pyplot.subplots(); bspkit.plot_g_surface(run, "put/alltoall", ax)

The names are re-exported by `bspkit` itself (imported on first use, so that `import bspkit`
stays cheap). Errors: FileNotFoundError, bspkit.measure.rawdata.RawDataError (a raw file that cannot be
read), bspkit.model.params.ParamsError (a parameter file), ValueError (arguments).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bspkit import units
from bspkit.measure.rawdata import RawRun, load_raw
from bspkit.model import comm_models
from bspkit.model import supersteps as pd
from bspkit.model.fit import fit_run
from bspkit.model.params import Params

__all__ = [
    "MODELS",
    "Run",
    "SuperstepPrediction",
    "load_params",
    "load_run",
    "plot_g_surface",
    "plot_prediction",
    "predict_supersteps",
]

MODELS = comm_models.NAMES  # the models of communication (bspkit.model.comm_models)


@dataclass
class Run:
    """One probe run: its raw samples and its fitted parameters."""

    path: Path  # the raw-sample file (raw.jsonl)
    raw: RawRun
    params: Params


def load_params(path: str | Path) -> Params:
    """A parameter file (params.json, as `bspkit fit` or `bspkit probe` writes it)."""
    return Params.read(path)


def load_run(path: str | Path, refit: bool = False) -> Run:
    """A probe run: a run directory (with raw.jsonl) or a raw .jsonl file. The parameters are
    the run's params.json when there is one and refit is False, else fitted from the samples."""
    p = Path(path)
    raw_path = p / "raw.jsonl" if p.is_dir() else p
    if not raw_path.is_file():
        raise FileNotFoundError(f"{raw_path}: no such file (a probe run directory holds raw.jsonl)")
    raw = load_raw(raw_path)
    params_path = raw_path.with_name("params.json") if raw_path.name == "raw.jsonl" else None
    if params_path is not None and params_path.is_file() and not refit:
        params = load_params(params_path)
    else:
        params = fit_run(raw)
    return Run(raw_path, raw, params)


@dataclass
class SuperstepPrediction:
    """Predicted times, in seconds, under each model (MODELS): per superstep (work plus
    communication and synchronization) and in total. None where the parameters have no fit
    the model can use for a superstep's primitive and pattern."""

    per_superstep: dict[str, list[float | None]]
    total: dict[str, float | None]
    work_s: list[float]  # w f of each superstep


def _number(step: Mapping[str, Any], keys: tuple[str, ...], i: int) -> float:
    for key in keys:
        v = step.get(key)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"superstep {i}: {key} = {v!r} is not a non-negative number")
            return float(v)
    return 0.0


def predict_supersteps(
    params: Params, supersteps: Iterable[Mapping[str, Any]], f_s_per_unit: float | None = None
) -> SuperstepPrediction:
    """Predicts a list of supersteps from a probe's parameters.

    Each superstep is a dict as in a driver's JSON (docs/algorithm-output.md): "w" (or "work":
    work units, e.g. flops), "h" (words, the h-relation), "count" (or "messages": messages
    per process), "primitive" ("put", "get", "send"; default put) and "pattern" ("alltoall",
    "permutation", "shift"; default alltoall), "sync" (False for local work after the last
    sync: no communication, no l), and optionally "h_inout" (thesis eq. 2.2's h: the max over
    processes of words sent + received; without it the models that read it predict nothing).
    Missing numbers are 0; a superstep with h = 0 costs the model's l (the empty sync; the
    thesis' g const: l after an all-to-all). f_s_per_unit: seconds per work unit, needed when
    some w is not 0.
    """
    steps = list(supersteps)
    per: dict[str, list[float | None]] = {m: [] for m in MODELS}
    work: list[float] = []
    for i, step in enumerate(steps):
        w = _number(step, ("w", "work"), i)
        if w > 0 and f_s_per_unit is None:
            raise ValueError(f"superstep {i} has work w = {units.count(w)}: give f_s_per_unit (seconds per work unit)")
        work.append(w * (f_s_per_unit or 0.0))
        record = {
            "h": _number(step, ("h",), i),
            "h_inout": _number(step, ("h_inout",), i) if step.get("h_inout") is not None else None,
            "count": _number(step, ("count", "messages"), i),
            "primitive": step.get("primitive"),
            "pattern": step.get("pattern"),
        }
        for m in MODELS:
            comm = pd.superstep_comm_s(params, record, m) if step.get("sync", True) else 0.0
            per[m].append(None if comm is None else work[-1] + comm)
    total: dict[str, float | None] = {}
    for m in MODELS:
        times = per[m]
        total[m] = None if any(t is None for t in times) else math.fsum(t for t in times if t is not None)
    return SuperstepPrediction(per, total, work)


def plot_g_surface(run: Run, key: str, ax: Any, model: str = "g(h,h*)") -> Any:
    """Measured g~ = T/h (ns per word) against h for one primitive/pattern of a probe run, a
    line per message count, with the model's prediction dashed; on the matplotlib Axes ax
    (returned)."""
    points = run.raw.g_points(key)
    if not points:
        raise ValueError(f"{key}: not measured in {run.path} (measured: {', '.join(run.raw.g_keys()) or 'none'})")
    prim, pat = key.split("/", 1)
    for count in sorted({pt.count for pt in points}):
        pts = sorted((pt for pt in points if pt.count == count), key=lambda pt: pt.h)
        hs = [pt.h for pt in pts]
        (line,) = ax.plot(hs, [pt.g_tilde * 1e9 for pt in pts], "o-", ms=3, label=f"c = {count}")
        step = {"primitive": prim, "pattern": pat, "count": count}
        predicted = [pd.superstep_comm_s(run.params, step | {"h": h}, model) for h in hs]
        if all(t is not None for t in predicted):
            ax.plot(hs, [t / h * 1e9 for t, h in zip(predicted, hs, strict=True) if t is not None], "--",
                    color=line.get_color())  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("h (words)")
    ax.set_ylabel("g = T / h (ns per word)")
    ax.set_title(f"{key}: measured (points), {model} (dashed)")
    ax.legend(fontsize="small")
    return ax


def plot_prediction(measured_s: Sequence[float], predicted: Mapping[str, Sequence[float | None]], ax: Any) -> Any:
    """Predicted against measured times (seconds), a series per model (e.g.
    SuperstepPrediction.per_superstep, or one value per run), with the line of perfect
    prediction; on the matplotlib Axes ax (returned)."""
    for name, values in predicted.items():
        if len(values) != len(measured_s):
            raise ValueError(f"{name}: {len(values)} predictions for {len(measured_s)} measurements")
        pairs = [(m, p) for m, p in zip(measured_s, values, strict=True) if p is not None]
        ax.scatter([m for m, _ in pairs], [p for _, p in pairs], s=14, label=name)
    known = [v for vs in predicted.values() for v in vs if v is not None and v > 0] + [m for m in measured_s if m > 0]
    if known:
        lo, hi = min(known), max(known)
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=1, label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (s)")
    ax.set_ylabel("predicted (s)")
    ax.legend(fontsize="small")
    return ax
