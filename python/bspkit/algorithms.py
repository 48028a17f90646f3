"""The BSP algorithms bspkit runs (`bspkit run`, `bspkit validate`): one `Algorithm` record
each in `REGISTRY`, from which the commands take everything they know about an algorithm,
and running a driver through bsprun.

Adding an algorithm on the Python side (algorithms/README.md, step 5): write its work model
(the work of the whole problem in the driver's unit, from the run's parameters), its
closed-form cost in bspkit.model.costs.<module> with a `<module>_cost` here that calls it,
and add one record to `REGISTRY`. A run's prediction prices the per-superstep costs of the
driver's own JSON (docs/algorithm-output.md, bspkit.model.supersteps), the same for every
algorithm; `bspkit predict` prices the record's closed form (`closed_form`), without a run.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bspkit.console import describe_exit
from bspkit.fileformat import format_problem
from bspkit.measure.libraries import Library
from bspkit.model.costs import Cost, CostError
from bspkit.model.costs.lu_reference import lu_flops, stage_table

# The format of a driver's JSON object that this bspkit reads (docs/algorithm-output.md).
RUN_FORMAT = 1

# The driver's "params" object: the problem's parameters (n, q, alpha, m, ...).
ProblemParams = Mapping[str, Any]
# A cost model: the work of the whole problem in the driver's work unit, None if unknown.
WorkModel = Callable[[ProblemParams], float | None]
# A closed-form cost: (the `bspkit run` name, the problem as the driver's params, p) -> the
# supersteps of a run (bspkit.model.costs); raises CostError outside the model.
ClosedForm = Callable[[str, ProblemParams, int], Cost]


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


def radix_sort_rounds(params: ProblemParams) -> int | None:
    """The count-sort rounds: the run's own, else ceil(key_bits / bits) (32-bit keys and 8-bit
    digits where the run does not say)."""
    if params.get("rounds") is not None:
        return int(params["rounds"])
    key_bits, bits = int(params.get("key_bits", 32)), int(params.get("bits", 8))
    return -(-key_bits // bits) if bits > 0 else None


def radix_sort_work(params: ProblemParams) -> float | None:
    """2 n key passes per round, rounds of the sequential LSD radix sort: a histogram pass and
    a scatter pass over every key (Gerbessiotis & Lee, sec. 5)."""
    n, rounds = params.get("n"), radix_sort_rounds(params)
    return None if n is None or rounds is None else 2.0 * rounds * float(n)


def lu_work(params: ProblemParams) -> float | None:
    """2/3 n^3 - n^2/2 - n/6 flops: column j of the elimination scales n - j - 1 entries and
    updates (n - j - 1)^2 with a multiply and an add (sum_{m < n} m + 2 m^2). The blocked
    algorithm does the same arithmetic in its panels, dtrsm and dgemm (bspkit.model.costs.lu_reference), so this
    is what bspalg-lu's count sums to on one process, whatever nb."""
    n = params.get("n")
    return None if n is None else lu_flops(int(n))


def ftf_work(params: ProblemParams) -> float | None:
    """iters (16 (W-1)(D-1)(H-1) + 2 W D H) flops: each cell's mean added to its eight nodes, then
    every node's update (Kang et al.'s FT.F, bspkit.model.costs.ftf)."""
    w, d, h, iters = (params.get(k) for k in ("width", "depth", "height", "iters"))
    if None in (w, d, h, iters):
        return None
    cells = (float(w) - 1) * (float(d) - 1) * (float(h) - 1)
    return float(iters) * (16.0 * cells + 2.0 * float(w) * float(d) * float(h))


# Memory models: the bytes a run holds at its peak, all processes together, with the driver's
# check of the result (measured with /usr/bin/time at p = 2 and rounded up: inner product
# 16.0 n bytes; matmul 45 n^2; Cannon 50 n^2; LLCS a few MiB; radix sort of n keys of k bytes
# 4.0 n k (hpput) to 5.8 n k (combined with put, p = 4) above 2^22 keys, up to 8.9 n k with the
# exact check at 2^22; LU 32.8 n^2 with the check at n = 4000, 32.2 n^2 at 6000, 8.3 n^2 without
# it at 8000, 8.9 n^2 with --no-check at 4000).


def inner_product_memory(params: ProblemParams) -> float | None:
    """x and y: 2 n doubles."""
    n = params.get("n")
    return None if n is None else 16.0 * n


def matrix_product_memory(params: ProblemParams) -> float | None:
    """A, B, C and the fetched blocks, and the check's reference: 6 n^2 doubles."""
    n = params.get("n")
    return None if n is None else 48.0 * float(n) ** 2


def cannon_memory(params: ProblemParams) -> float | None:
    """A, B, C, the blocks in flight and the check's reference: 7 n^2 doubles."""
    n = params.get("n")
    return None if n is None else 56.0 * float(n) ** 2


def cannon_send_memory(params: ProblemParams) -> float | None:
    """Cannon's, and a round's blocks as messages, at most n^2 doubles: copied at the sender
    and held in the receiver's queue until moved, 9 n^2 doubles (measured on threads at p = 2,
    n = 2500: 58.5 n^2 bytes, put 50.4 n^2; threads keeps one copy of a message, the MPI back
    ends up to two)."""
    n = params.get("n")
    return None if n is None else 72.0 * float(n) ** 2


def llcs_memory(params: ProblemParams) -> float | None:
    """The two strings and a few rows of the table per process."""
    n = params.get("n")
    return None if n is None else 16.0 * (float(params.get("m", n)) + float(n)) + (1 << 20)


# bspalg-rdxsort compares every key with a sequential sort up to this many keys (its
# CHECK_EXACT_MAX_KEYS): the check then holds the gathered output and the reference.
RADIX_SORT_EXACT_CHECK_KEYS = 1 << 22


def radix_sort_memory(params: ProblemParams) -> float | None:
    """Six arrays of n keys: the input, the two registered key buffers, the count sort's
    buffer, combined's staging buffer and bsp_put's copies of the keys in flight; three more
    for the exact check (the gathered output, the reference and the gets' buffers); a few MiB
    of histograms and write-combining lines."""
    n = params.get("n")
    if n is None:
        return None
    key_bytes = int(params.get("key_bits", 32)) // 8
    arrays = 6 + (3 if n <= RADIX_SORT_EXACT_CHECK_KEYS else 0)
    return arrays * float(n) * key_bytes + (4 << 20)


# bspalg-lu gathers the factors on process 0 to check them up to this n (its CHECK_MAX_N).
LU_CHECK_MAX_N = 6000


def lu_memory(params: ProblemParams) -> float | None:
    """The matrix once (n^2 doubles over the processes), the check's three n x n matrices on
    process 0 (up to n = 6000), the registered broadcast and swap buffers (2 nb n / M + 8 nb n / N
    doubles a process on an M x N grid, nb n (2 N + 8 M) in all; 20 nb n, the 2 x 2 grid's,
    where the run does not give its grid, and nb 64, the driver's default, where it does not give
    nb) and a few MiB."""
    n = params.get("n")
    if n is None:
        return None
    n, nb = float(n), float(params.get("nb", 64))
    rows, cols = params.get("grid_rows"), params.get("grid_cols")
    buffers = nb * n * (2 * cols + 8 * rows if rows and cols else 20)
    matrices = 1 + (3 if n <= LU_CHECK_MAX_N else 0)
    return 8.0 * (matrices * n * n + buffers) + (16 << 20)


# ------------------------------------------------------------------ closed forms
# Each calls the `cost` of its module of bspkit.model.costs (the formulas and their sources
# are there), imported on the first call: those modules load numpy, which the parser and
# --help must not (test_commands_layer.py).


def inprod_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import inprod

    return inprod.cost(algorithm, problem, p)


def matmul_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import matmul

    return matmul.cost(algorithm, problem, p)


def cannon_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import cannon

    return cannon.cost(algorithm, problem, p)


def llcs_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import llcs

    return llcs.cost(algorithm, problem, p)


def rdxsort_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import rdxsort

    return rdxsort.cost(algorithm, problem, p)


def ftf_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import ftf

    return ftf.cost(algorithm, problem, p)


def lu_cost(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    from bspkit.model.costs import lu

    return lu.cost(algorithm, problem, p)


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
    cost: ClosedForm | None = None  # its closed-form BSP cost, for `bspkit predict`; None: it has none
    sweep_option: str | None = None  # driver option of the second parameter validate sweeps
    sweep_values: tuple[str, ...] = ()  # validate's default values of it
    memory: WorkModel | None = None  # bytes of the whole run at its peak, to refuse one that cannot fit
    # lines that explain a run (its JSON) beyond the summary, e.g. its cost per stage; `bspkit run` prints them
    explain: Callable[[Mapping[str, Any]], list[str]] | None = None

    @property
    def sweep_param(self) -> str | None:
        """The second parameter's name in the driver's "params" (e.g. "q" for --q)."""
        return self.sweep_option.lstrip("-") if self.sweep_option else None

    def closed_form(self, problem: ProblemParams, p: int) -> Cost:
        """Its cost on `problem` (the driver's params: n, q, alpha, bits, nb, ...; omitted ones
        take the driver's defaults) at p processes, without a run."""
        if self.cost is None:
            raise CostError(
                f"no closed-form cost for '{self.name}'; there is one for: {', '.join(closed_form_names())}"
            )
        if p < 1:
            raise CostError(f"p must be at least 1, not {p}")
        return self.cost(self.name, problem, p)


MATMUL_SIZES = (1000, 1500, 2000, 3000)
MATMUL_Q = ("1", "8", "27", "64")
CANNON_SIZES = (1000, 1500, 2000, 3000, 4000)
LLCS_ALPHA = ("1", "4", "16")
# 2^23 keys: 0.08 s at p = 2 with 8-bit digits; 2^26: 1.5 GiB, 1.2 to 3.6 s over the digit widths
RDXSORT_SIZES = (1 << 23, 1 << 24, 1 << 25, 1 << 26)
RDXSORT_BITS = ("4", "8", "11", "16")  # 8, 4, 3 and 2 rounds: the fewer rounds, the more digit values
# LU at p = 2 (1 x 2): n = 2000 0.09 to 0.10 s over nb = 32 .. 128, 2500 0.16 s, 4000 0.65 s
LU_SIZES = (2500, 3000, 4000, 5000)
LU_NB = ("32", "64", "128")
# FT.F's width (its 4 x 81 nodes in j and k): 0.17 s at p = 2 at 16000 (10 updates, threads)
FTF_SIZES = (16000, 32000, 64000)


def radix_sort_record(name: str, variant: str, description: str) -> Algorithm:
    """One variant of bspalg-rdxsort (--variant): the same cost model, sizes and sweep."""
    return Algorithm(
        name,
        "bspalg-rdxsort",
        ("--variant", variant),
        description,
        radix_sort_work,
        cost=rdxsort_cost,
        memory=radix_sort_memory,
        sizes=RDXSORT_SIZES,
        sweep_option="--bits",
        sweep_values=RDXSORT_BITS,
    )


# Runs under 0.1 s are measured but not scored, so the default sizes start near there at p = 2.
REGISTRY: tuple[Algorithm, ...] = (
    Algorithm(
        "inprod",
        "bspalg-inprod",
        (),
        "inner product, cyclic distribution",
        inner_product_work,
        cost=inprod_cost,
        memory=inner_product_memory,
        sizes=(64 * 10**6, 160 * 10**6, 320 * 10**6),  # 320e6: 5 GiB of vectors, 0.14 s at p = 2
    ),
    Algorithm(
        "matmul-blockcyclic",
        "bspalg-matmul",
        ("--dist", "blockcyclic"),
        "memory-efficient matrix multiplication, q blocks, customized block-cyclic distribution (thesis 4.2)",
        matrix_product_work,
        cost=matmul_cost,
        memory=matrix_product_memory,
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
        cost=matmul_cost,
        memory=matrix_product_memory,
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
        cost=cannon_cost,
        memory=cannon_memory,
        sizes=CANNON_SIZES,
    ),
    Algorithm(
        "cannon-get",
        "bspalg-cannon",
        ("--variant", "get"),
        "Cannon-style MatMulG with get (Gerbessiotis & Lee, Fig. 8)",
        matrix_product_work,
        cost=cannon_cost,
        memory=cannon_memory,
        sizes=CANNON_SIZES,
    ),
    Algorithm(
        "cannon-send",
        "bspalg-cannon",
        ("--variant", "send"),
        "Cannon-style MatMul with send, bsp_send and bsp_move (Gerbessiotis & Lee, Fig. 7, Table 1's Send)",
        matrix_product_work,
        cost=cannon_cost,
        memory=cannon_send_memory,
        sizes=CANNON_SIZES,
    ),
    Algorithm(
        "llcs-dp",
        "bspalg-llcs",
        ("--kernel", "dp"),
        "LLCS, blocked wavefront, dynamic-programming kernel (thesis 5.1)",
        llcs_work,
        cost=llcs_cost,
        memory=llcs_memory,
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
        cost=llcs_cost,
        memory=llcs_memory,
        sizes=(100000, 200000, 400000),
        sweep_option="--alpha",
        sweep_values=LLCS_ALPHA,
    ),
    radix_sort_record(
        "rdxsort", "plain", "RDXSORT: LSD radix sort, one put per digit value and owner (Gerbessiotis & Lee, Fig. 9)"
    ),
    radix_sort_record(
        "rdxsort-opt",
        "opt",
        "RDXSORTOPT: RDXSORT with staggered routing, process s starting at digit value s R / p (Fig. 10)",
    ),
    radix_sort_record(
        "rdxsort-combined",
        "combined",
        "LSD radix sort, the keys for one destination packed into one hpput per round (Gerbessiotis & Lee, sec. 5)",
    ),
    Algorithm(
        "oocmm",
        "bspalg-oocmm",
        (),
        "out-of-core matrix multiplication: A, B and C on files, streamed through --memory bytes (Kang et al. 5.2.4)",
        matrix_product_work,
        cost=None,  # none: its time is mostly the disk's, which the IMH model prices (`bspkit imh oocmm`)
        sizes=(1024, 2048, 3072),
    ),
    Algorithm(
        "lu",
        "bspalg-lu",
        (),
        "LU with partial pivoting, 2D block-cyclic on BSP2D, nb columns a stage (Horvitz & Bisseling, sec. 2)",
        lu_work,
        cost=lu_cost,
        memory=lu_memory,
        sizes=LU_SIZES,
        sweep_option="--nb",
        sweep_values=LU_NB,
        explain=stage_table,
    ),
    Algorithm(
        "ftf",
        "bspalg-ftf",
        ("--variant", "balanced"),
        "FT.F's node update, the nodes dealt evenly, ghosts exchanged in three steps (Kang et al. sec. 7.3)",
        ftf_work,
        cost=ftf_cost,
        sizes=FTF_SIZES,
    ),
    Algorithm(
        "ftf-original",
        "bspalg-ftf",
        ("--variant", "original"),
        "FT.F's node update on its own ownership: at most six processes work (Kang et al. sec. 7.2)",
        ftf_work,
        cost=ftf_cost,
        sizes=FTF_SIZES,
    ),
)

ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in REGISTRY}


def closed_form_names() -> list[str]:
    """The algorithms with a closed-form cost (`bspkit predict` takes them)."""
    return [a.name for a in ALGORITHMS.values() if a.cost is not None]


def closed_form(algorithm: str, problem: ProblemParams, p: int) -> Cost:
    """The cost of `algorithm` (a `bspkit run` name) on `problem` (the driver's params: n, q,
    alpha, bits, nb, ...; omitted ones take the driver's defaults) at p processes."""
    alg = ALGORITHMS.get(algorithm)
    if alg is None:
        raise CostError(f"no closed-form cost for '{algorithm}'; there is one for: {', '.join(closed_form_names())}")
    return alg.closed_form(problem, p)


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

# The library's own memory per process and peer once every process has written to every
# other, and per thread (src/core: bspk_proc_bytes, BSPK_THREAD_BYTES; measured: p = 2000
# threads hold 2.2 GB after one all-to-all).
LIBRARY_BYTES_PER_PEER = 600
LIBRARY_BYTES_PER_PROCESS = 64 * 1024


def available_memory_bytes() -> int | None:
    """MemAvailable, or less where a cgroup limits us (as the C side's bspk_machine.h)."""
    avail = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = int(Path("/sys/fs/cgroup/memory.max").read_text())
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        avail = min(avail, max(limit - used, 0)) if avail is not None else max(limit - used, 0)
    except (OSError, ValueError):  # no cgroup v2 limit ("max") here
        pass
    return avail


def memory_needed(alg: Algorithm, params: ProblemParams, nprocs: int) -> float | None:
    """Bytes a run needs on one machine: the algorithm's data and the library's buffers."""
    data = alg.memory(params) if alg.memory else None
    if data is None:
        return None
    return data + nprocs * (nprocs * LIBRARY_BYTES_PER_PEER + LIBRARY_BYTES_PER_PROCESS)


def check_memory(alg: Algorithm, runs: Sequence[ProblemParams], nprocs: int) -> None:
    """Refuses, with the numbers, when the largest of the runs cannot fit in this machine's
    memory (instead of being killed by the kernel part-way through a sweep)."""
    avail = available_memory_bytes()
    needs = [(need, r) for r in runs if (need := memory_needed(alg, r, nprocs)) is not None]
    if avail is None or not needs:
        return
    need, worst = max(needs, key=lambda x: x[0])
    if need > avail:
        what = ", ".join(f"{k} = {v}" for k, v in worst.items())
        gib = 2.0**30
        raise AlgorithmError(
            f"{alg.name} with {what} on p = {nprocs} needs about {need / gib:.1f} GiB, but this machine has "
            f"{avail / gib:.1f} GiB available: use a smaller size"
            + (" (--sizes)" if len(runs) > 1 else " (--size)")
            + (" or fewer processes" if nprocs * nprocs * LIBRARY_BYTES_PER_PEER > need / 2 else "")
        )


@dataclass
class RunResult:
    algorithm: str
    command: list[str]
    data: dict[str, Any]  # the driver's JSON object (docs/algorithm-output.md)
    stdout: str = ""

    @property
    def time_s(self) -> float:
        return float(self.data["time_s"])


@dataclass(frozen=True)
class DriverLaunch:
    """Where the drivers are and how one starts on P processes: through bspkit's bsprun (a
    back end, and the hosts of a hostfile), or through another BSPlib's launcher
    (libraries.Library) for drivers built against it."""

    bindir: Path  # the drivers' directory
    bsprun: Path | None  # None: another library's drivers, started by `library`
    backend: str  # bspkit's back end, or the other library's label
    hostfile: Path | None = None
    library: Library | None = None
    bsprun_options: tuple[str, ...] = ()  # more of bsprun's options (--checkpoint-dir DIR, ...)

    def command(self, exe: Path, nprocs: int, args: Sequence[str]) -> list[str]:
        if self.library is not None:
            return self.library.command(exe, nprocs, list(args))
        assert self.bsprun is not None
        hosts = ["--hostfile", str(self.hostfile)] if self.hostfile else []
        return [str(self.bsprun), "-b", self.backend, "-n", str(nprocs), *hosts, *self.bsprun_options, str(exe), *args]

    def environment(self, nprocs: int) -> dict[str, str] | None:
        """The environment of a run (None: this one's): another library's gets P too."""
        if self.library is None:
            return None
        return {**os.environ, **self.library.environment(nprocs)}


def run_driver(
    alg: Algorithm,
    launch: DriverLaunch,
    nprocs: int,
    args: Sequence[str],
    timeout_s: float | None = None,
) -> RunResult:
    """Runs one driver on nprocs processes with --json and returns its JSON object."""
    exe = launch.bindir / alg.driver
    if not exe.is_file():
        raise AlgorithmError(f"{exe} does not exist: build bspkit (the driver of {alg.name} may need CBLAS)")
    with tempfile.TemporaryDirectory(prefix="bspkit-run-") as tmp:
        out = Path(tmp) / "run.json"
        cmd = launch.command(exe, nprocs, [*alg.fixed_args, *args, "--json", str(out)])
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout_s, env=launch.environment(nprocs)
            )
        except subprocess.TimeoutExpired:
            raise AlgorithmError(f"{alg.name} did not finish within {timeout_s:.0f} s: {shlex.join(cmd)}") from None
        except OSError as e:
            raise AlgorithmError(f"{alg.name}: cannot start {cmd[0]!r} ({e.strerror}): {shlex.join(cmd)}") from None
        if proc.returncode != 0:
            detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
            raise AlgorithmError(
                f"{alg.name} failed ({describe_exit(proc.returncode)}): {shlex.join(cmd)}\n  " + "\n  ".join(detail)
            )
        try:
            data = json.loads(out.read_text())
        except (OSError, ValueError) as e:
            raise AlgorithmError(f"{alg.name}: cannot read the driver's JSON ({e}): {shlex.join(cmd)}") from None
        problem = format_problem(data, "run", RUN_FORMAT) if isinstance(data, dict) else "not a JSON object"
        if problem:
            raise AlgorithmError(f"{exe}: its output: {problem}")
        if launch.library is not None:  # the label the results are filed under, and what it is
            data["library_info"] = launch.library.describe()
    return RunResult(alg.name, cmd, data, proc.stdout)
