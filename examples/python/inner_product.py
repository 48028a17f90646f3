"""inner_product.py - the simplest BSP program, in Python: the inner product of x = (1, ..., n)
with itself, x cyclically distributed over p processes (Bisseling, Parallel Scientific
Computation, ch. 1; the C version is examples/inner_product.c, which prints the same lines).

    cost: W = 2n/p + p flops, H = p - 1 words (one superstep), S = 2 syncs (incl. the fold)

The local product is NumPy's (a BLAS ddot); the partial sums are put to every process, each of
which adds them up in process order, so every process holds the same bits.

Run:  bsprun -b procs -n 4 .venv/bin/python examples/python/inner_product.py 1000000
"""

from __future__ import annotations

import os
import sys

# One BSP process per core: a BLAS with threads of its own in every process would fight the
# other processes for the cores (set before NumPy loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from bspkit import bsp


def inner_product(n: int) -> None:
    bsp.begin()
    p, s = bsp.nprocs(), bsp.pid()
    # This process' share of x under the cyclic distribution: global i = s + k p holds i + 1.
    x = np.arange(s + 1, n + 1, p, dtype=np.float64)
    partial = np.zeros(p)
    bsp.push_reg(partial)
    bsp.sync()

    t0 = bsp.time()
    mine = np.array([np.dot(x, x)])
    for t in range(p):
        bsp.put(t, mine, partial, s)
    bsp.sync()
    alpha = float(np.sum(partial))
    elapsed = bsp.time() - t0

    if s == 0:
        exact = n * (n + 1) * (2.0 * n + 1) / 6.0
        print(
            f"inner product of x = (1, ..., {n}) with itself on {p} processes: {alpha:.10g}"
        )
        print(
            f"expected n(n+1)(2n+1)/6 = {exact:.10g}, relative error {(alpha - exact) / exact:.2e}"
        )
        print(
            f"time {elapsed:.6f} s (W = {2 * ((n + p - 1) // p)} flops, H = {p - 1} words, S = 2)"
        )
    bsp.pop_reg(partial)
    bsp.end()


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    if size < 1:
        sys.exit(f"usage: {sys.argv[0]} [n >= 1]")
    inner_product(size)
