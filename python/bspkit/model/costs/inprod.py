"""The BSP cost of bspalg-inprod, the inner product alpha = x . y of two vectors of length n
cyclically distributed over p processes (Bisseling, Parallel Scientific Computation, ch. 1),
superstep by superstep, as algorithms/inprod/inprod.c counts it.

Process s holds n_s = ceil((n - s) / p) pairs (0 when s >= n); n_0 = ceil(n / p) is the most.
  superstep 0 ("local sums, put"): w = 2 ceil(n / p) flops (a multiply and an add per pair),
      every process puts its partial sum (1 word) to each of the p - 1 others:
      h = p - 1, count = p - 1, msg_words = 1 (p = 1: h = count = msg_words = 0); labelled
      put/alltoall whatever p; each process also receives p - 1 words: h_inout = 2 (p - 1);
  superstep 1 ("add partial sums"): w = p (the p partial sums added), no communication, after
      the last sync (the open record: sync false).
  W = 2 ceil(n / p) + p, H = p - 1, S = 1.
f: dot_double_naive, the probe's plain dot-product loop, the same loop as the driver's
local_dot (not BLAS).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bspkit.model.costs import Cost, CostError, StepKind
from bspkit.model.costs.matmul import check_keys, int_param

DEFAULT_N = 1000000  # the driver's --size default
F_KERNEL = "dot_double_naive"


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The cost of bspalg-inprod on problem (n) at p processes."""
    if algorithm != "inprod":
        raise CostError(f"bspkit.model.costs.inprod models inprod, not '{algorithm}'")
    check_keys(algorithm, problem, ("n",))
    n = int_param(algorithm, problem, "n", DEFAULT_N)
    if p < 1:
        raise CostError(f"p must be at least 1, not {p}")
    others = p - 1
    steps = (
        StepKind(
            kind="local sums, put",
            repeat=1,
            w=2.0 * -(-n // p),
            h=float(others),
            count=float(others),
            msg_words=1.0 if others else 0.0,
            primitive="put",
            pattern="alltoall",
            h_inout=2.0 * others,
        ),
        StepKind(
            kind="add partial sums", repeat=1, w=float(p), h=0.0, count=0.0, msg_words=0.0, sync=False, h_inout=0.0
        ),
    )
    return Cost(algorithm=algorithm, p=p, problem={"n": n}, work_unit="flop", f_kernel=F_KERNEL, steps=steps)
