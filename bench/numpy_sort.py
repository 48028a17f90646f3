#!/usr/bin/env python3
"""numpy_sort.py - numpy's sort of n uniform random uint32 keys on one core, the peer that
bench/run_rdxsort_bench.sh reports beside the radix sorts (issue #12).

    numpy_sort.py [--size N] [-r REPS] [--seed S]
    prints: numpy_sort n=N reps=R median_s=... min_s=... numpy=<version> cpu_features=...

The keys come from numpy's own generator (numpy.random.default_rng(seed)), not from
rdx_make_keys: uniform uint32 keys either way, but not the same ones as the C programs'.
Each repetition copies the keys (untimed) and times ndarray.sort() (numpy's default kind,
which numpy may run as a vectorized sort on AVX2 or AVX-512 machines); one untimed warm-up.
The result is checked against numpy's stable sort (another algorithm): exit 1 when it differs.
cpu_features says which of avx512f and avx2 /proc/cpuinfo lists.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# One core: numpy itself sorts on one thread, but the BLAS behind it must not start a pool.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import numpy as np  # noqa: E402 (after the thread settings, which numpy reads on import)


def cpu_features() -> str:
    """Which of avx512f and avx2 the CPU flags list, as 'avx512f:no,avx2:yes'."""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        return "unknown"
    return ",".join(
        f"{name}:{'yes' if name in flags else 'no'}" for name in ("avx512f", "avx2")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="numpy's sort of N uniform random uint32 keys, one core"
    )
    parser.add_argument("--size", type=int, default=1 << 24, help="keys (default 2^24)")
    parser.add_argument(
        "-r", "--reps", type=int, default=3, help="timed repetitions (default 3)"
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="seed of numpy's generator (default 1)"
    )
    args = parser.parse_args(argv)
    if args.size < 1 or args.reps < 1:
        parser.error("--size and --reps must be positive")

    keys = np.random.default_rng(args.seed).integers(
        0, 2**32, size=args.size, dtype=np.uint32
    )
    expected = np.sort(keys, kind="stable")
    times = []
    for rep in range(-1, args.reps):  # rep -1: the warm-up
        work = keys.copy()
        start = time.perf_counter()
        work.sort()
        elapsed = time.perf_counter() - start
        if rep >= 0:
            times.append(elapsed)
        if not np.array_equal(work, expected):
            print(
                f"numpy_sort: WRONG RESULT (n = {args.size}): differs from the stable sort",
                file=sys.stderr,
            )
            return 1
    times.sort()
    m = len(times)
    median = times[m // 2] if m % 2 else 0.5 * (times[m // 2 - 1] + times[m // 2])
    print(
        f"numpy_sort n={args.size} reps={args.reps} median_s={median:.6f} min_s={times[0]:.6f} "
        f"numpy={np.__version__} cpu_features={cpu_features()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
