"""Running the algorithm drivers (`bspkit run`) and predicting their times from a parameter
file (`bspkit validate`): T = sum over supersteps of (w f + comm(h, c, h*) + l).

The drivers and their JSON output are described in docs/algorithm-output.md. Three models of
the communication cost of a superstep with h words, c messages per process of mean size h*,
as in the thesis' Appendices D-G:

- "g const": the BSP cost g h + l, with g and l from Bisseling's regression T = g h + l over
  the probe's h-relations (the classic model: one g); where that regression failed, g is
  the time per word of the largest h-relations measured (g(h) at the grid's largest h) and
  l the empty sync;
- "g(h)": eq. (2.5), T = g_inf (h + h_half): the bandwidth depends on the size of the
  h-relation (h_half is fitted on whole supersteps, so it holds the synchronization);
- "g(h,h*)": eq. (2.6), T = g_inf (h + h_half + o c): plus a per-message overhead o.

Both are taken from the probe's fit at each value of h (`levels`, fit.level_fits: A(h) and
A(h) + B(h) c, interpolated between the grid's h, growing in proportion to h beyond it); an
older parameter file without levels falls back to the one global fit.

A superstep without communication costs l (the probe's empty sync).
"""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from bspkit.fit import predict_time_levels

MODELS = ("g const", "g(h)", "g(h,h*)")
# Runs shorter than this are left out of the mean error (issue 5: "over runs longer than 0.1 s").
MIN_VALIDATED_TIME_S = 0.1


class AlgorithmError(Exception):
    """A driver could not be run or its output not read."""


@dataclass(frozen=True)
class Algorithm:
    name: str  # what `bspkit run NAME` takes
    driver: str  # program in <build>/bin
    fixed_args: tuple[str, ...]  # the options that select this variant
    description: str
    sweep_option: str | None = None  # the second parameter swept by validate (besides --size)

    def total_work(self, params: dict[str, Any]) -> float | None:
        """The work of the whole problem in the driver's unit (for the efficiency)."""
        n = params.get("n")
        if n is None:
            return None
        if self.driver == "bspalg-inprod":
            return 2.0 * n
        if self.driver in ("bspalg-matmul", "bspalg-cannon"):
            return 2.0 * float(n) ** 3
        if self.driver == "bspalg-llcs":
            return float(params.get("m", n)) * float(n)
        return None


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm("inprod", "bspalg-inprod", (), "inner product, cyclic distribution"),
        Algorithm("matmul-blockcyclic", "bspalg-matmul", ("--dist", "blockcyclic"), "memory-efficient matrix multiplication, q blocks, customized block-cyclic distribution (thesis 4.2)", "--q"),
        Algorithm("matmul-static2d", "bspalg-matmul", ("--dist", "static2d"), "memory-efficient matrix multiplication, q blocks, static 2D distribution, rows by hpget (thesis 4.2)", "--q"),
        Algorithm("cannon-put", "bspalg-cannon", ("--variant", "put"), "Cannon-style MatMul with put (Gerbessiotis & Lee, Fig. 7)"),
        Algorithm("cannon-get", "bspalg-cannon", ("--variant", "get"), "Cannon-style MatMulG with get (Gerbessiotis & Lee, Fig. 8)"),
        Algorithm("llcs-dp", "bspalg-llcs", ("--kernel", "dp"), "LLCS, blocked wavefront, dynamic-programming kernel (thesis 5.1)", "--alpha"),
        Algorithm("llcs-bitpar", "bspalg-llcs", ("--kernel", "bitpar"), "LLCS, blocked wavefront, bit-parallel kernel (thesis 5.2)", "--alpha"),
    )
}


def find_algorithm(name: str) -> Algorithm:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise AlgorithmError(f"unknown algorithm '{name}'; known: {', '.join(ALGORITHMS)}") from None


# ------------------------------------------------------------------------------ running


@dataclass
class RunResult:
    algorithm: str
    command: list[str]
    data: dict[str, Any]  # the driver's JSON object
    stdout: str = ""

    @property
    def time_s(self) -> float:
        return float(self.data["time_s"])


def run_driver(
    alg: Algorithm,
    bsprun: Path,
    bindir: Path,
    backend: str,
    nprocs: int,
    args: Sequence[str],
    timeout_s: float | None = None,
) -> RunResult:
    """Runs one driver through bsprun with --json and returns its JSON object."""
    exe = bindir / alg.driver
    if not exe.is_file():
        raise AlgorithmError(f"{exe} does not exist: build bspkit (the driver of {alg.name} may need CBLAS)")
    with tempfile.TemporaryDirectory(prefix="bspkit-run-") as tmp:
        out = Path(tmp) / "run.json"
        cmd = [str(bsprun), "-b", backend, "-n", str(nprocs), str(exe), *alg.fixed_args, *args, "--json", str(out)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AlgorithmError(f"{alg.name} did not finish within {timeout_s:.0f} s: {shlex.join(cmd)}") from None
        if proc.returncode != 0:
            detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
            what = "its result is WRONG" if proc.returncode == 1 else f"exit status {proc.returncode}"
            raise AlgorithmError(f"{alg.name} failed ({what}): {shlex.join(cmd)}\n  " + "\n  ".join(detail))
        try:
            data = json.loads(out.read_text())
        except (OSError, ValueError) as e:
            raise AlgorithmError(f"{alg.name}: cannot read the driver's JSON ({e}): {shlex.join(cmd)}") from None
    return RunResult(alg.name, cmd, data, proc.stdout)


# --------------------------------------------------------------------------- prediction


def _usable(e: dict[str, Any], model: str) -> bool:
    if model == "g const":
        g = _value((e.get("linreg") or {}).get("g"))
        return (g is not None and g > 0) or bool(e.get("levels"))
    return bool(e.get("levels") or e.get("predict"))


def _g_entry(params: dict[str, Any], primitive: str | None, pattern: str | None, model: str) -> tuple[str, dict[str, Any]] | None:
    """The probe's fit for this primitive and pattern usable by the model, else the nearest
    one measured: the same primitive on another pattern, then put on all-to-all."""
    g = params.get("g") or {}
    prim = primitive or "put"
    tries = [f"{prim}/{pattern or 'alltoall'}"]
    tries += [f"{prim}/{pat}" for pat in ("alltoall", "permutation", "shift")]
    tries += ["put/alltoall", "put/permutation", "put/shift"]
    for key in tries:
        e = g.get(key)
        if e and _usable(e, model):
            return key, e
    return None


def _value(v: Any) -> float | None:
    """A parameter file value: a number, or [value, lo, hi], or null."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return None if not v or v[0] is None else float(v[0])
    return float(v)


def empty_sync_s(params: dict[str, Any]) -> float:
    lat = params.get("l") or {}
    v = _value(lat.get("empty"))
    if v is None:
        raise AlgorithmError("the parameter file has no l (empty sync): run `bspkit probe` without --only")
    return v


def superstep_comm_s(params: dict[str, Any], step: dict[str, Any], model: str) -> float | None:
    """Time of one superstep's communication and synchronization under a model."""
    h = float(step.get("h") or 0.0)
    if h <= 0:
        return empty_sync_s(params)
    found = _g_entry(params, step.get("primitive"), step.get("pattern"), model)
    if found is None:
        return None
    _key, e = found
    c = float(step.get("count") or 0.0)
    if model == "g const":
        lr = e.get("linreg") or {}
        g, l = _value(lr.get("g")), _value(lr.get("l"))
        if g is None or g <= 0:
            # no usable regression: the bandwidth of the largest h-relations measured
            g, l = e["levels"][-1]["g_h"], None
        return g * h + (l if l is not None and l > 0 else empty_sync_s(params))
    with_o = model == "g(h,h*)"
    levels = e.get("levels")
    if levels:  # eq. 2.5 / 2.6 fitted at each h of the grid, interpolated (fit.level_fits)
        return predict_time_levels(levels, h, c, with_o=with_o)
    pm = e.get("predict")  # only the one global fit: an older parameter file
    if not pm:
        return None
    if not with_o:
        lsq5 = e.get("lsq_2.5") or {}
        if lsq5.get("g_inf"):
            gi = lsq5["g_inf"][0]
            hh = lsq5["h_half"][0] if lsq5.get("h_half") else 0.0
            return gi * (h + hh)
        return pm["g_inf"] * (h + pm["h_half"])
    return pm["g_inf"] * (h + pm["h_half"] + pm["o"] * c)


def predict(params: dict[str, Any], run: dict[str, Any], f_s_per_unit: float | None = None) -> dict[str, Any]:
    """Predicted time of a driver run under each model, with its parts (work, comm).

    f: the argument, else the kernel timed on every process at once (`f_all_s_per_unit`: the
    rate a process has while the others compute too, which is what the run sees: they share
    caches and memory bandwidth), else on process 0 alone (`f_s_per_unit`, thesis 3.1)."""
    f = f_s_per_unit if f_s_per_unit is not None else (run.get("f_all_s_per_unit") or run.get("f_s_per_unit"))
    if not f:
        raise AlgorithmError(f"no f for {run.get('algorithm')}: run the driver with --measure-f")
    steps = run.get("supersteps") or []
    work_s = sum(float(s.get("w") or 0.0) for s in steps) * float(f)
    out: dict[str, Any] = {"work_s": work_s, "f_s_per_unit": float(f)}
    for model in MODELS:
        total = 0.0
        for s in steps:
            if not s.get("sync", True):
                continue  # local work after the last sync: no communication, no l
            c = superstep_comm_s(params, s, model)
            if c is None:
                total = math.nan
                break
            total += c
        out[model] = None if math.isnan(total) else work_s + total
        out[model + " comm_s"] = None if math.isnan(total) else total
    return out


def efficiency(alg: Algorithm, run: dict[str, Any], f: float | None) -> float | None:
    """Eq. (4.12) in general: the one-process kernel time of the whole problem over p T."""
    work = alg.total_work(run.get("params") or {})
    if work is None or not f or not run.get("time_s"):
        return None
    return work * f / (run["p"] * run["time_s"])


def relative_error(pred: float | None, measured: float) -> float | None:
    return None if pred is None or measured <= 0 else (pred - measured) / measured


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean |relative error| per model over the runs longer than MIN_VALIDATED_TIME_S."""
    out: dict[str, Any] = {"min_time_s": MIN_VALIDATED_TIME_S}
    long_rows = [r for r in rows if r["measured_s"] >= MIN_VALIDATED_TIME_S]
    out["runs"] = len(rows)
    out["runs_used"] = len(long_rows)
    for m in MODELS:
        errs = [abs(r["rel_error"][m]) for r in long_rows if r["rel_error"].get(m) is not None]
        out[m] = sum(errs) / len(errs) if errs else None
    # the best model is chosen on the runs every model could predict (a model that cannot
    # predict the hard runs must not look better for it)
    common = [r for r in long_rows if all(r["rel_error"].get(m) is not None for m in MODELS)]
    vals = []
    for m in MODELS:
        if out[m] is not None and common:
            vals.append((sum(abs(r["rel_error"][m]) for r in common) / len(common), m))
    if not vals:  # no run that every model predicts: compare each model's own mean
        vals = [(out[m], m) for m in MODELS if out[m] is not None]
    out["best_model"] = min(vals)[1] if vals else None
    out["best_error"] = out[out["best_model"]] if vals else None
    return out
