"""lu.py - LU decomposition with partial pivoting, P A = L U, of the random n x n matrix of the
C driver bspalg-lu (algorithms/lu/README.md), in Python with NumPy kernels: Bisseling's
right-looking LU (Parallel Scientific Computation, ch. 2) on a 1 x p process grid, which is
Horvitz & Bisseling's BSP PDGETRF (seed 004) with a block size of 1, and LAPACK's pivot rule,
so that the pivots are the C driver's (whose blocked updates round differently: only two
candidates equal to the last bit could make them differ).

Distribution: column-cyclic, global column j on process j mod p (bspalg-lu --nb 1 --grid 1xp).
It keeps the pivot search of a column on one process, so a stage is one superstep and the
code stays short; the price is that every process receives the whole multiplier column,
(p - 1)(n - k) words leave the pivot's process at stage k, where a 2D distribution would
send each process only its rows' share. Each process keeps its columns as the rows of one
array (local row c is global column s + c p), so its part goes to process 0 in one put.

Stage k = 0, ..., n - 1, one superstep each:
  1. process k mod p picks the pivot r, the row i >= k with the largest |a(i, k)| (the
     lowest such row on a tie, as LAPACK's idamax), divides the column below the diagonal
     by it (after the swap) and puts r and these multipliers l to every process;
  2. after the sync, every process swaps rows k and r in all its columns (L's too, as
     LAPACK's dgetrf does) and updates its columns right of k: a(k+1:, j) -= l a(k, j)
     (one np.outer for all of them).
  cost: W = about 2n^3/(3p) flops, H = (p - 1) n (n + 1) / 2 words, S = n supersteps.

Process 0 then gathers L and U and prints the pivots' fingerprint (the sum of
mix64(k n + pivot(k)) modulo 2^64, which bspalg-lu's check note prints for the same --size
and --seed) and ||P A - L U||_1 / (n ||A||_1 eps), the C check's residual.

Run:  bsprun -b procs -n 4 .venv/bin/python examples/python/lu.py 500 [seed]
"""

from __future__ import annotations

import os
import sys

# One BSP process per core: a BLAS with threads of its own in every process would fight the
# other processes for the cores (set before NumPy loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from bspkit import bsp

U64 = np.uint64
RESIDUAL_BOUND = (
    10.0  # bspalg-lu's bound (LAPACK's tests use 30; random matrices give < 1)
)


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, as rdxsort_kernels.c's mix64 (uint64 arithmetic wraps)."""
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


def input_columns(seed: int, n: int, columns: np.ndarray) -> np.ndarray:
    """The given columns of matmul_input.h's mm_input(seed, MM_A, i, j, n), one row each:
    out[c, i] = a(i, columns[c]), uniform in [-1, 1)."""
    base = U64(seed * 0x9E3779B97F4A7C15 % 2**64)
    i = np.arange(n, dtype=U64)[None, :]
    j = columns.astype(U64)[:, None]
    with np.errstate(over="ignore"):
        z = mix64(base + (i * U64(n) + j) * U64(2) + U64(1))  # MM_A = 0
    return (z >> U64(11)).astype(np.float64) * 2.0**-52 - 1.0


def pivot_fingerprint(pivots: np.ndarray) -> int:
    """The sum of mix64(k n + pivots[k]) over k, modulo 2^64 (bspalg-lu's check note)."""
    n = pivots.size
    with np.errstate(over="ignore"):
        keys = np.arange(n, dtype=U64) * U64(n) + pivots.astype(U64)
        return int(np.sum(mix64(keys), dtype=U64))


def residual(a: np.ndarray, factors: np.ndarray, pivots: np.ndarray) -> float:
    """||P A - L U||_1 / (n ||A||_1 eps), L unit lower and U upper triangular in factors, P
    the interchanges in the order they were made (bspalg-lu's check)."""
    n = a.shape[0]
    order = np.arange(n)
    for k, r in enumerate(pivots):
        order[[k, r]] = order[[r, k]]
    lower = np.tril(factors, -1) + np.eye(n)
    norm_a = np.abs(a).sum(axis=0).max()
    norm_r = np.abs(a[order] - lower @ np.triu(factors)).sum(axis=0).max()
    return (
        float(norm_r / (n * norm_a * np.finfo(np.float64).eps))
        if norm_a > 0
        else float(norm_r)
    )


def lu(n: int, seed: int) -> None:
    bsp.begin()
    p, s = bsp.nprocs(), bsp.pid()
    mine = np.arange(s, n, p)  # my global columns
    cols = input_columns(seed, n, mine)  # cols[c, i] = a(i, mine[c])
    pivots = np.zeros(n, dtype=np.int64)
    stage = np.zeros(n)  # stage k's pivot row, then its n - k - 1 multipliers
    bsp.push_reg(stage)
    bsp.sync()

    t0 = bsp.time()
    for k in range(n):
        if k % p == s:
            column = cols[k // p]
            # the largest |a(i, k)|, i >= k; argmax takes the first (lowest row) on a tie
            r = k + int(np.argmax(np.abs(column[k:])))
            if column[r] == 0.0:
                bsp.abort(f"lu.py: the matrix is singular: column {k} has no pivot")
            below = column[k + 1 :].copy()
            if r != k:
                below[r - k - 1] = column[k]  # row r's entry is row k's after the swap
            message = np.concatenate(([float(r)], below / column[r]))
            for t in range(p):
                bsp.put(t, message, stage, 0)
        bsp.sync()
        r = int(stage[0])
        pivots[k] = r
        if r != k:
            cols[:, [k, r]] = cols[:, [r, k]]
        multipliers = stage[1 : n - k]
        if k % p == s:
            cols[k // p, k + 1 :] = multipliers
        right = (k - s) // p + 1 if k >= s else 0  # my first column right of k
        cols[right:, k + 1 :] -= np.outer(cols[right:, k], multipliers)
    elapsed = bsp.time() - t0

    # The check: every process' columns to process 0, which alone needs room for them all.
    width = (n + p - 1) // p
    gathered = np.zeros((p, width, n) if s == 0 else 1)
    bsp.push_reg(gathered)
    bsp.sync()
    if mine.size:
        bsp.put(0, cols, gathered, s * width * n)
    bsp.sync()
    if s == 0:
        factors_t = np.empty((n, n))  # transposed: row j is column j of L and U
        for t in range(p):
            factors_t[t::p] = gathered[t, : (n - t + p - 1) // p]
        a = input_columns(seed, n, np.arange(n)).T
        resid = residual(a, factors_t.T, pivots)
        print(f"LU of {n} x {n} on {p} processes: pivots 0x{pivot_fingerprint(pivots):016x}, "
              f"||PA - LU||_1/(n ||A||_1 eps) = {resid:.3g}, time {elapsed:.6f} s")  # fmt: skip
        if not resid <= RESIDUAL_BOUND:
            bsp.abort(
                f"lu.py: wrong result: the residual {resid:.3g} is over {RESIDUAL_BOUND:g}"
            )
    bsp.pop_reg(gathered)
    bsp.pop_reg(stage)
    bsp.end()


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    seed_arg = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if size < 1 or seed_arg < 0:
        sys.exit(f"usage: {sys.argv[0]} [n >= 1] [seed >= 0]")
    lu(size, seed_arg)
