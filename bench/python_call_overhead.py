#!/usr/bin/env python3
"""python_call_overhead.py - the cost of one bsp_put and one bsp_get of 8 doubles called
from Python (bspkit.bsp, and the bare ctypes and cffi calls under it) against the same
calls from C (issue 42: the goal is at most 1 us per call from Python).

    python_call_overhead.py [--build DIR] [-b BACKEND] [-n P] [--rounds R]
    prints one line per way of calling: ns per call (the median round) and the ratio to C

Each way of calling makes 1000 calls to process (pid + 1) % P, timed, then a bsp_sync that
is not timed (the puts queue up until it); the rounds interleave the ways, and each way's
median round counts (the machine is shared: a median is not moved by a few slow rounds). The C loop is
compiled with the build's bspcc into a temporary directory. cffi (ABI mode) is measured
when it is importable (`pip install cffi`); bspkit.bsp uses ctypes.
Run with the build's Python (.venv/bin/python) so that bspkit is importable.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CALLS = 1000

C_LOOP = r"""
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 30;
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid(), to = (s + 1) % p;
  double src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, area[8], dst[8];
  bsp_push_reg(area, sizeof area);
  bsp_sync();
  double *put_s = malloc(sizeof(double) * (size_t)rounds), *get_s = malloc(sizeof(double) * (size_t)rounds);
  for (int r = 0; r < rounds; r++) {
    double t0 = bsp_time();
    for (int i = 0; i < CALLS; i++) bsp_put(to, src, area, 0, sizeof src);
    double t1 = bsp_time();
    bsp_sync();
    double t2 = bsp_time();
    for (int i = 0; i < CALLS; i++) bsp_get(to, area, 0, dst, sizeof dst);
    double t3 = bsp_time();
    bsp_sync();
    put_s[r] = t1 - t0;
    get_s[r] = t3 - t2;
  }
  if (s == 0)
    printf("%.1f %.1f\n", median(put_s, rounds) / CALLS * 1e9, median(get_s, rounds) / CALLS * 1e9);
  bsp_end();
  return 0;
}
""".replace("CALLS", str(CALLS))


def worker(rounds: int) -> None:
    """The Python side, run by bsprun: prints 'way put_ns get_ns' lines on process 0."""
    import ctypes

    import numpy as np
    from bspkit import bsp

    bsp.begin()
    p, s = bsp.nprocs(), bsp.pid()
    to = (s + 1) % p
    src, area, dst = np.arange(8.0), np.zeros(8), np.zeros(8)
    bsp.push_reg(area)
    bsp.sync()
    lib = ctypes.PyDLL(
        str(bsp.LIBRARY_PATH)
    )  # the same calls as bspkit.bsp's, without it
    at = (ctypes.c_char * 0).from_buffer
    area_at = ctypes.c_void_p(area.ctypes.data)

    def module_put() -> None:
        for _ in range(CALLS):
            bsp.put(to, src, area)

    def module_get() -> None:
        for _ in range(CALLS):
            bsp.get(to, area, 0, dst)

    def ctypes_put() -> None:
        call = lib.bspk_try_put
        for _ in range(CALLS):
            call(to, at(src), area_at, 0, 64)

    def ctypes_get() -> None:
        call = lib.bspk_try_get
        for _ in range(CALLS):
            call(to, area_at, 0, at(dst), 64)

    ways = {
        "bspkit.bsp": (module_put, module_get),
        "ctypes (bare call)": (ctypes_put, ctypes_get),
    }
    try:
        import cffi
    except ImportError:
        cffi = None
    if cffi is not None:
        ffi = cffi.FFI()
        ffi.cdef(
            "int bspk_try_put(int, const void *, void *, int, int);"
            "int bspk_try_get(int, const void *, int, void *, int);"
        )
        clib = ffi.dlopen(str(bsp.LIBRARY_PATH))
        from_buffer, area_ptr = ffi.from_buffer, ffi.cast("void *", area.ctypes.data)

        def cffi_put() -> None:
            call = clib.bspk_try_put
            for _ in range(CALLS):
                call(to, from_buffer(src), area_ptr, 0, 64)

        def cffi_get() -> None:
            call = clib.bspk_try_get
            for _ in range(CALLS):
                call(to, area_ptr, 0, from_buffer(dst, require_writable=True), 64)

        ways["cffi ABI (bare call)"] = (cffi_put, cffi_get)

    times: dict[str, tuple[list[float], list[float]]] = {
        name: ([], []) for name in ways
    }
    for _ in range(rounds):
        for name, loops in ways.items():
            for k, loop in enumerate(loops):
                t0 = time.perf_counter()
                loop()
                elapsed = time.perf_counter() - t0
                bsp.sync()
                times[name][k].append(elapsed / CALLS)
    if s == 0:
        for name, (put_s, get_s) in times.items():
            print(
                f"{name}\t{statistics.median(put_s) * 1e9:.1f}\t{statistics.median(get_s) * 1e9:.1f}",
                flush=True,
            )
        if cffi is None:
            print("cffi ABI (bare call)\tnot installed\t-", flush=True)
    bsp.end()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--build",
        type=Path,
        default=Path(os.environ.get("BSPKIT_BUILD_DIR", REPO / "build")),
    )
    parser.add_argument("-b", "--backend", default="procs")
    parser.add_argument("-n", "--nprocs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.rounds)
        return 0
    build = args.build.resolve()
    bsprun = [str(build / "bin" / "bsprun"), "-b", args.backend, "-n", str(args.nprocs)]
    env = dict(
        os.environ,
        BSPKIT_BUILD_DIR=str(build),
        OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "Haswell"),
    )
    env["PYTHONPATH"] = str(REPO / "python") + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        source, program = Path(tmp) / "put_loop.c", Path(tmp) / "put_loop"
        source.write_text(C_LOOP)
        subprocess.run(
            [str(build / "bin" / "bspcc"), "-O2", "-o", str(program), str(source)],
            check=True,
        )
        c_put, c_get = (
            float(x)
            for x in subprocess.run(
                [*bsprun, str(program), str(args.rounds)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout.split()
        )
    done = subprocess.run(
        [*bsprun, sys.executable, __file__, "--worker", "--rounds", str(args.rounds)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    print(
        f"one call of 8 doubles (64 bytes) on {args.backend}, p = {args.nprocs}: ns per call, median of {args.rounds} rounds of {CALLS}"
    )
    print(
        f"{'way of calling':22s} {'bsp_put':>9s} {'x C':>6s} {'bsp_get':>9s} {'x C':>6s}"
    )
    print(f"{'C':22s} {c_put:9.1f} {1:6.0f} {c_get:9.1f} {1:6.0f}")
    for line in done.stdout.splitlines():
        name, put_ns, get_ns = line.split("\t")
        if put_ns == "not installed":
            print(f"{name:22s} not installed (pip install cffi to compare)")
            continue
        put_v, get_v = float(put_ns), float(get_ns)
        print(
            f"{name:22s} {put_v:9.1f} {put_v / c_put:6.0f} {get_v:9.1f} {get_v / c_get:6.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
