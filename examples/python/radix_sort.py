"""radix_sort.py - parallel LSD radix sort of n random 32-bit keys, block-distributed, in
Python with NumPy kernels: Gerbessiotis & Lee's RDXSORT (seed 002, section 5, Fig. 9), the
algorithm of the C driver bspalg-rdxsort (algorithms/rdxsort/README.md), on the same keys.

Each of the 4 rounds sorts by one 8-bit digit, least significant first:
  1. the local histogram of the digit (np.bincount), put to every process;
  2. from all p histograms, the global rank where the keys of process t with digit v start;
  3. a stable local sort by the digit (np.argsort, kind="stable");
  4. every run of keys that goes to one owner is put there (bsp.put), one superstep.
Then the program checks that the keys are in order on every process and across them, and
that the output is a permutation of the input (the order-independent fingerprint of
bspalg-rdxsort, which its JSON's check_note prints for the same --size and --seed: the same
keys sorted).

Run:  bsprun -b procs -n 4 .venv/bin/python examples/python/radix_sort.py 1000000 [seed]
"""

from __future__ import annotations

import itertools
import os
import sys

# One BSP process per core: a BLAS with threads of its own in every process would fight the
# other processes for the cores (set before NumPy loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from bspkit import bsp

BITS, ROUNDS = 8, 4
U64 = np.uint64


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, as rdxsort_kernels.c's mix64 (uint64 arithmetic wraps)."""
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


def input_keys(seed: int, first: int, count: int) -> np.ndarray:
    """Keys first .. first + count - 1 of the uniform input (rdx_input_key, 32 bits)."""
    i = np.arange(first, first + count, dtype=U64)
    with np.errstate(over="ignore"):
        base = U64(seed) * U64(0x9E3779B97F4A7C15)
        return (mix64(base + i * U64(4) + U64(1)) & U64(0xFFFFFFFF)).astype(np.uint32)


def fingerprint(keys: np.ndarray) -> int:
    """rdx_fingerprint: the sum of mix64(key + constant) over the keys, modulo 2^64."""
    return int(np.sum(mix64(keys.astype(U64) + U64(0x632BE59BD9B4E019)), dtype=U64))


def radix_sort(n: int, seed: int) -> None:
    bsp.begin()
    p, s = bsp.nprocs(), bsp.pid()
    firsts = np.array(
        [n * t // p for t in range(p + 1)], dtype=np.int64
    )  # block t: [firsts[t], firsts[t+1])
    nloc = int(firsts[s + 1] - firsts[s])
    keys = input_keys(seed, int(firsts[s]), nloc)
    fingerprint_in = fingerprint(keys)
    histograms = np.zeros((p, 1 << BITS), dtype=np.int64)
    arrived = np.zeros(max(nloc, 1), dtype=np.uint32)
    bsp.push_reg(histograms)
    bsp.push_reg(arrived)
    bsp.sync()

    t0 = bsp.time()
    for r in range(ROUNDS):
        digit = (keys >> np.uint32(BITS * r)) & np.uint32((1 << BITS) - 1)
        mine = np.bincount(digit, minlength=1 << BITS).astype(np.int64)
        for t in range(p):
            bsp.put(t, mine, histograms, s * (1 << BITS))
        bsp.sync()
        # Global rank where the keys of process t with digit v start: all smaller digits
        # everywhere, then digit v on the processes before t.
        digit_start = np.concatenate(([0], np.cumsum(histograms.sum(axis=0))[:-1]))
        before = np.cumsum(histograms, axis=0) - histograms
        start = digit_start[None, :] + before
        order = np.argsort(digit, kind="stable")
        sorted_keys, sorted_digit = keys[order], digit[order]
        local_start = np.concatenate(([0], np.cumsum(mine)[:-1]))
        position = np.arange(nloc, dtype=np.int64)
        rank = start[s, sorted_digit] + (position - local_start[sorted_digit])
        owner = np.searchsorted(firsts, rank, side="right") - 1
        # Runs of keys with one digit and one owner: consecutive ranks, one put each.
        cuts = np.flatnonzero((np.diff(owner) != 0) | (np.diff(sorted_digit) != 0)) + 1
        bounds = (
            np.concatenate(([0], cuts, [nloc])) if nloc else np.zeros(1, dtype=np.int64)
        )
        for a, b in itertools.pairwise(bounds):
            t = int(owner[a])
            bsp.put(t, sorted_keys[a:b], arrived, int(rank[a] - firsts[t]))
        bsp.sync()
        keys = arrived[:nloc].copy()
    elapsed = bsp.time() - t0

    # The check: every block in order, the blocks in order, the output a permutation.
    record = np.array(
        [fingerprint_in, fingerprint(keys), int(bool(np.all(keys[:-1] <= keys[1:]))), nloc,
         int(keys[0]) if nloc else 0, int(keys[-1]) if nloc else 0],
        dtype=U64,
    )  # fmt: skip
    records = np.zeros((p, record.size), dtype=U64)
    bsp.push_reg(records)
    bsp.sync()
    bsp.put(0, record, records, s * record.size)
    bsp.sync()
    if s == 0:
        with np.errstate(over="ignore"):
            f_in = int(np.sum(records[:, 0], dtype=U64))
            f_out = int(np.sum(records[:, 1], dtype=U64))
        in_order = all(records[t, 2] == 1 for t in range(p))
        nonempty = [t for t in range(p) if records[t, 3] > 0]
        across = all(
            records[a, 5] <= records[b, 4] for a, b in itertools.pairwise(nonempty)
        )
        ok = in_order and across and f_in == f_out
        print(f"radix sort of {n} keys on {p} processes: {'sorted' if ok else 'WRONG'}, "
              f"fingerprint 0x{f_out:016x}, time {elapsed:.6f} s")  # fmt: skip
        if not ok:
            bsp.abort(f"radix_sort: wrong result (blocks in order: {in_order}, across: {across}, "
                      f"fingerprints in 0x{f_in:016x} out 0x{f_out:016x})")  # fmt: skip
    for area in (records, arrived, histograms):
        bsp.pop_reg(area)
    bsp.end()


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    seed_arg = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if size < 1:
        sys.exit(f"usage: {sys.argv[0]} [n >= 1] [seed]")
    radix_sort(size, seed_arg)
