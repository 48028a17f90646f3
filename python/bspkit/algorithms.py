"""The BSP algorithms bspkit runs (`bspkit run`, `bspkit validate`): one `Algorithm` record
each in `REGISTRY`, from which the commands take everything they know about an algorithm,
and running a driver through bsprun.

Adding an algorithm on the Python side: write its cost model (the work of the whole problem
in the driver's unit, from the run's parameters) and add one record to `REGISTRY`. The
per-superstep costs come from the driver's own JSON (docs/algorithm-output.md), and
prediction (bspkit.predict) is the same for every algorithm.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The driver's "params" object: the problem's parameters (n, q, alpha, m, ...).
ProblemParams = Mapping[str, Any]
# A cost model: the work of the whole problem in the driver's work unit, None if unknown.
WorkModel = Callable[[ProblemParams], float | None]


class AlgorithmError(Exception):
    """A driver could not be run or its output not read, or the algorithm is unknown."""


# ------------------------------------------------------------------ cost models


def inner_product_work(params: ProblemParams) -> float | None:
    """2 n flops: a multiply and an add per pair."""
    n = params.get("n")
    return None if n is None else 2.0 * n


def matrix_product_work(params: ProblemParams) -> float | None:
    """2 n^3 flops (thesis eq. 4.5 summed over the processes)."""
    n = params.get("n")
    return None if n is None else 2.0 * float(n) ** 3


def llcs_work(params: ProblemParams) -> float | None:
    """m n cells of the dynamic-programming table (m = n where the run gives no m)."""
    n = params.get("n")
    return None if n is None else float(params.get("m", n)) * float(n)


# ---------------------------------------------------------------------- records


@dataclass(frozen=True)
class Algorithm:
    """Everything the Python side knows about one algorithm."""

    name: str  # what `bspkit run NAME` and `bspkit validate NAME` take
    driver: str  # program in <build>/bin
    fixed_args: tuple[str, ...]  # the driver options that select this variant
    description: str
    total_work: WorkModel  # cost model of the whole problem, for the efficiency (eq. 4.12)
    sizes: tuple[int, ...]  # validate's default problem sizes (--size); --quick takes the first two
    sweep_option: str | None = None  # driver option of the second parameter validate sweeps
    sweep_values: tuple[str, ...] = ()  # validate's default values of it

    @property
    def sweep_param(self) -> str | None:
        """The second parameter's name in the driver's "params" (e.g. "q" for --q)."""
        return self.sweep_option.lstrip("-") if self.sweep_option else None


MATMUL_SIZES = (1000, 1500, 2000, 3000)
MATMUL_Q = ("1", "8", "27", "64")
CANNON_SIZES = (1000, 1500, 2000, 3000, 4000)
LLCS_ALPHA = ("1", "4", "16")

# Runs under 0.1 s are measured but not scored, so the default sizes start near there at p = 2.
REGISTRY: tuple[Algorithm, ...] = (
    Algorithm(
        "inprod",
        "bspalg-inprod",
        (),
        "inner product, cyclic distribution",
        inner_product_work,
        sizes=(64 * 10**6, 160 * 10**6, 320 * 10**6),  # 320e6: 5 GiB of vectors, 0.14 s at p = 2
    ),
    Algorithm(
        "matmul-blockcyclic",
        "bspalg-matmul",
        ("--dist", "blockcyclic"),
        "memory-efficient matrix multiplication, q blocks, customized block-cyclic distribution (thesis 4.2)",
        matrix_product_work,
        sizes=MATMUL_SIZES,
        sweep_option="--q",
        sweep_values=MATMUL_Q,
    ),
    Algorithm(
        "matmul-static2d",
        "bspalg-matmul",
        ("--dist", "static2d"),
        "memory-efficient matrix multiplication, q blocks, static 2D distribution, rows by hpget (thesis 4.2)",
        matrix_product_work,
        sizes=MATMUL_SIZES,
        sweep_option="--q",
        sweep_values=MATMUL_Q,
    ),
    Algorithm(
        "cannon-put",
        "bspalg-cannon",
        ("--variant", "put"),
        "Cannon-style MatMul with put (Gerbessiotis & Lee, Fig. 7)",
        matrix_product_work,
        sizes=CANNON_SIZES,
    ),
    Algorithm(
        "cannon-get",
        "bspalg-cannon",
        ("--variant", "get"),
        "Cannon-style MatMulG with get (Gerbessiotis & Lee, Fig. 8)",
        matrix_product_work,
        sizes=CANNON_SIZES,
    ),
    Algorithm(
        "llcs-dp",
        "bspalg-llcs",
        ("--kernel", "dp"),
        "LLCS, blocked wavefront, dynamic-programming kernel (thesis 5.1)",
        llcs_work,
        sizes=(20000, 40000, 80000),
        sweep_option="--alpha",
        sweep_values=LLCS_ALPHA,
    ),
    Algorithm(
        "llcs-bitpar",
        "bspalg-llcs",
        ("--kernel", "bitpar"),
        "LLCS, blocked wavefront, bit-parallel kernel (thesis 5.2)",
        llcs_work,
        sizes=(100000, 200000, 400000),
        sweep_option="--alpha",
        sweep_values=LLCS_ALPHA,
    ),
)

ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in REGISTRY}


def find_algorithm(name: str) -> Algorithm:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise AlgorithmError(f"unknown algorithm '{name}'; known: {', '.join(ALGORITHMS)}") from None


def efficiency(alg: Algorithm, run: Mapping[str, Any], f: float | None) -> float | None:
    """Eq. (4.12) in general: the one-process kernel time of the whole problem over p T."""
    work = alg.total_work(run.get("params") or {})
    if work is None or not f or not run.get("time_s"):
        return None
    return work * f / (run["p"] * run["time_s"])


# ------------------------------------------------------------------------------ running


@dataclass
class RunResult:
    algorithm: str
    command: list[str]
    data: dict[str, Any]  # the driver's JSON object (docs/algorithm-output.md)
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
