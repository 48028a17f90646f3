"""Synthetic raw-sample files from known parameters, in the format bspprobe writes.

Used by the tests (the fit must recover what went in) and handy for trying the report
without measuring. Times follow eq. (2.6) written as T(h, c) = g_inf * (h + h_half + o*c),
each sample multiplied by lognormal noise exp(N(0, noise)). Also grid points
(rawdata.GPoint) made directly from a time function, for the fitting functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bspkit.measure.rawdata import GPoint, stats
from bspkit.model.params import Params


@dataclass
class GTruth:
    g_inf: float  # seconds per word
    h_half: float  # words
    o: float  # words per message


@dataclass
class SynthSpec:
    p: int = 2
    host: str = "synthhost"
    library: str = "bspkit"
    backend: str = "threads"
    g: dict[str, GTruth] = field(
        default_factory=lambda: {
            "put/alltoall": GTruth(1.0e-9, 2000.0, 16.0),
            "get/permutation": GTruth(2.0e-9, 800.0, 120.0),
        }
    )
    msg_words: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096)
    counts: tuple[int, ...] = (1, 2, 8, 32, 128)
    reps: int = 9
    noise: float = 0.03
    seed: int = 1
    l: dict[str, float] = field(default_factory=lambda: {"empty": 1.0e-6, "shift": 1.6e-6, "alltoall": 2.5e-6})
    f: dict[str, tuple[int, float, float]] = field(
        # kernel: (n, ops, seconds per op)
        default_factory=lambda: {
            "dot_double_naive": (1_000_000, 2.0e6, 4.0e-10),
            "matmul_double_blas": (512, 2.0 * 512**3, 2.0e-11),
            "dot_int_naive": (1_000_000, 2.0e6, 3.0e-10),
        }
    )
    memcpy_s_per_word: float = 0.8e-9
    as_suite: bool = True
    validation: int = 12
    outliers: int = 0  # this many samples per g point are made 20x slower (noise spikes)
    extra_header: dict[str, Any] = field(default_factory=dict)
    imh: ImhTruth | None = None  # the memory-hierarchy suites' records (mem, stream, pp, disk)
    hardware: HwTruth | None = None  # the section hw's records (memcpy_h, hw_barrier, hw_pingpong)


@dataclass
class HwTruth:
    """Known hardware references (bspprobe's section hw); a reason in *_skipped writes a
    record that says the reference was not measured, as bspprobe does."""

    memcpy_s_per_word: float = 0.25e-9  # memcpy_h: hot copies, the same at every h
    barrier_s: float = 0.25e-6
    pingpong_s: float = 0.1e-6  # a round trip
    barrier_skipped: str | None = None
    pingpong_skipped: str | None = None


@dataclass
class ImhTruth:
    """Known parameters of the three data paths (Kang et al. eq. 4, 5, Table 6)."""

    # per cache level (warm) and "memory" (cold): (T_n, T_c, T_e)
    eq4: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: {
            "L1": (0.3e-9, 0.1e-9, 1e-9),
            "L2": (0.3e-9, 1.5e-9, 2e-9),
            "L3": (0.4e-9, 4.0e-9, 5e-9),
            "memory": (0.5e-9, 12.0e-9, 20e-9),
        }
    )
    write_factor: float = 1.5  # writes cost this much more than reads
    levels: tuple[tuple[int, int], ...] = ((1, 32 << 10), (2, 512 << 10), (3, 16 << 20))  # (level, bytes)
    line: int = 64
    T_s: float = 5e-6
    tau_d: float = 1.0 / 4e9  # s per byte
    disk: dict[str, tuple[float, float]] = field(
        # op/cache: (startup s, bandwidth B/s)
        default_factory=lambda: {
            "read/direct": (2e-4, 800e6),
            "write/direct": (1e-3, 400e6),
            "read/page": (1e-5, 6e9),
            "write/page": (2e-5, 3e9),
        }
    )


def model_time(t: GTruth, h: float, c: float) -> float:
    return t.g_inf * (h + t.h_half + t.o * c)


def synthetic_records(spec: SynthSpec) -> list[dict[str, Any]]:
    rng = np.random.default_rng(spec.seed)

    def noisy(t: float, n: int, spikes: int = 0) -> list[float]:
        x = t * np.exp(rng.normal(0.0, spec.noise, n))
        if spikes:
            x[:spikes] *= 20.0
        return [float(v) for v in x]

    recs: list[dict[str, Any]] = []
    recs.append(
        {
            "type": "header",
            "format": 1,
            "tool": "bspprobe",
            "version": "synthetic",
            "date": "2024-01-01T00:00:00Z",
            "host": spec.host,
            "cpu": "Synthetic CPU",
            "cores": spec.p,
            "kernel": "Linux 6.1.0",
            "compiler": "synthetic",
            "library": spec.library,
            "backend": spec.backend,
            "p": spec.p,
            "binding": "pinned 1 per core",
            "blas": "openblas 0.3.21",
            "blas_coretype": "Haswell",
            "mpi": None,
            "command": "synthetic",
            "mode": "quick",
            "seed": spec.seed,
            "timer": {"resolution_s": 1e-9, "overhead_s": 2e-8},
            "loadavg_start": [0.1, 0.1, 0.1],
            "grid": {"msg_words": list(spec.msg_words), "count": list(spec.counts)},
            **spec.extra_header,
        }
    )
    for kernel, (n, ops, f) in spec.f.items():
        recs.append(
            {
                "type": "f",
                "kernel": kernel,
                "n": n,
                "ops": ops,
                "samples_s": noisy(ops * f, 7),
                "note": "process 0",
            }
        )
    for nbytes in (1 << 16, 1 << 24):
        recs.append(
            {
                "type": "memcpy",
                "bytes": nbytes,
                "samples_s": noisy(nbytes / 8 * spec.memcpy_s_per_word, 7),
                "note": "synthetic",
            }
        )
    for key, truth in spec.g.items():
        prim, pat = key.split("/")
        for hs in spec.msg_words:
            for c in spec.counts:
                h = hs * c
                recs.append(
                    {
                        "type": "g",
                        "primitive": prim,
                        "pattern": pat,
                        "msg_words": hs,
                        "count": c,
                        "h": h,
                        "samples_s": noisy(model_time(truth, h, c), spec.reps, spec.outliers),
                        "reps": spec.reps,
                    }
                )
    for variant, l in spec.l.items():
        recs.append({"type": "l", "variant": variant, "samples_s": noisy(l, 21)})
    if spec.as_suite:
        l0 = spec.l.get("empty", 1e-6)
        for test, t in (
            ("Empty", l0),
            ("Comp", l0 * 1.05),
            ("Full", l0 * 2.4),
            ("Simple", l0 * 1.4),
            ("Scatter", l0 * 1.9),
        ):
            recs.append(
                {
                    "type": "as",
                    "test": test,
                    "h": None,
                    "samples_s": noisy(t, 21),
                    "note": "synthetic",
                }
            )
        put = spec.g.get("put/alltoall", next(iter(spec.g.values())))
        h = spec.p
        while h <= 1 << 16:
            t = model_time(put, spec.p * h, spec.p)
            recs.append(
                {
                    "type": "as",
                    "test": "TotalExchange",
                    "h": h,
                    "samples_s": noisy(t, 9),
                    "note": "synthetic",
                }
            )
            h *= 2
    keys = list(spec.g)
    for i in range(spec.validation):
        key = keys[i % len(keys)]
        truth = spec.g[key]
        prim, pat = key.split("/")
        hs = int(rng.integers(3, 3000))
        c = int(rng.integers(3, 100))
        recs.append(
            {
                "type": "validation",
                "primitive": prim,
                "pattern": pat,
                "msg_words": hs,
                "count": c,
                "h": hs * c,
                "samples_s": noisy(model_time(truth, hs * c, c), 7),
                "reps": 7,
            }
        )
    if spec.imh is not None:
        recs += imh_records(spec.imh, spec.p, noisy)
    if spec.hardware is not None:
        recs += hardware_records(spec, noisy)
    recs.append(
        {
            "type": "footer",
            "elapsed_s": 12.5,
            "loadavg_end": [0.2, 0.1, 0.1],
            "warnings": [],
        }
    )
    return recs


def hardware_records(spec: SynthSpec, noisy: Callable[[float, int], list[float]]) -> list[dict[str, Any]]:
    """memcpy_h at every h of the grid, then hw_barrier and hw_pingpong, as bspprobe writes them."""
    hw = spec.hardware
    assert hw is not None
    recs: list[dict[str, Any]] = []
    for h in sorted({hs * c for hs in spec.msg_words for c in spec.counts}):
        recs.append(
            {
                "type": "memcpy_h",
                "h": h,
                "bytes": 8 * h,
                "procs": spec.p,
                "samples_s": noisy(h * hw.memcpy_s_per_word, spec.reps),
                "reps": spec.reps,
                "warmup": 1,
                "note": "synthetic",
            }
        )
    for rtype, t, skipped, between in (
        ("hw_barrier", hw.barrier_s, hw.barrier_skipped, None),
        ("hw_pingpong", hw.pingpong_s, hw.pingpong_skipped, "processes 0 and 1"),
    ):
        if skipped:
            recs.append({"type": rtype, "procs": spec.p, "skipped": skipped})
            continue
        rec: dict[str, Any] = {"type": rtype, "procs": spec.p, "samples_s": noisy(t, 30), "batch": 1000}
        rec["cpus"] = list(range(spec.p if rtype == "hw_barrier" else 2))
        if between:
            rec["between"] = between
        recs.append(rec)
    return recs


def write_synthetic(path: str | Path, spec: SynthSpec | None = None) -> Path:
    """Writes a synthetic raw file; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    recs = synthetic_records(spec or SynthSpec())
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def grid_points(
    fn: Callable[[float, float], float],
    hs: list[int],
    counts: list[int],
    noise: float = 0.0,
    seed: int = 0,
    key: str = "put/alltoall",
) -> list[GPoint]:
    """Grid points at exactly the values h of `hs` (c divides h: h* = h / c), median time fn(h, c)
    (9 samples with lognormal noise, or 3 equal samples without)."""
    rng = np.random.default_rng(seed)
    prim, pat = key.split("/")
    pts = []
    for h in hs:
        for c in counts:
            if c > h or h % c:
                continue
            t = fn(h, c)
            x = t * np.exp(rng.normal(0.0, noise, 9)) if noise else np.full(3, t)
            pts.append(GPoint(prim, pat, h // c, c, h, x, stats(x)))
    return pts


def points_from(
    fn: Callable[[float, float], float],
    msg_words: list[int],
    counts: list[int],
    noise: float = 0.0,
    seed: int = 0,
) -> list[GPoint]:
    """Grid points of put/alltoall at every (h*, c) whose median time is fn(h, c) (times lognormal noise)."""
    rng = np.random.default_rng(seed)
    pts = []
    for hs in msg_words:
        for c in counts:
            t = fn(hs * c, c) * np.exp(rng.normal(0, noise, 9)) if noise else np.full(3, fn(hs * c, c))
            pts.append(GPoint("put", "alltoall", hs, c, hs * c, t, stats(t)))
    return pts


H_GRID = [2**k for k in range(6, 21)]  # 64 .. 2^20 words
C_GRID = [1, 2, 4, 8, 16, 32, 64]


def cache_g(h: float) -> float:
    """Two regimes: 0.2 ns/word while the h-relation fits a cache, 1.5 ns/word beyond."""
    return 0.2e-9 if h <= 2**14 else 1.5e-9


def cache_t(h: float, c: float) -> float:
    return cache_g(h) * (h + 500.0 + 30.0 * c)


# A parameter file as an older bspkit wrote it, by hand: put/alltoall with the per-h fit
# (`levels`), get/permutation with the global fits only, get/shift measured but unusable.
L_EMPTY = 2.0e-6

PARAMS_JSON: dict[str, Any] = {
    "format": 1,
    "p": 2,
    "l": {"empty": L_EMPTY, "shift": 3.0e-6, "alltoall": 4.0e-6},
    "g": {
        "put/alltoall": {
            "predict": {
                "model": "2.6 lsq",
                "g_inf": 1.0e-9,
                "h_half": 1500.0,
                "o": 20.0,
            },
            "lsq_2.5": {
                "g_inf": [1.2e-9, 1.1e-9, 1.3e-9],
                "h_half": [3000.0, 2500.0, 3500.0],
            },
            "linreg": {
                "msg_words": 256,
                "g": [1.1e-9, 1.0e-9, 1.2e-9],
                "l": [5.0e-6, 4.0e-6, 6.0e-6],
            },
            # the per-h fit: what g(h) and g(h,h*) use where it exists
            "levels": [
                {"h": 1024, "A_s": 9.0e-6, "B_s": 3.0e-8, "g_h": 8.8e-9},
                {"h": 8192, "A_s": 2.0e-5, "B_s": 3.0e-8, "g_h": 2.4e-9},
            ],
        },
        "get/permutation": {
            "predict": {"model": "2.5 lsq", "g_inf": 3.0e-9, "h_half": 800.0, "o": 0.0},
            "lsq_2.5": {
                "g_inf": [3.0e-9, 2.9e-9, 3.1e-9],
                "h_half": [800.0, 700.0, 900.0],
            },
            "linreg": {
                "msg_words": 64,
                "g": [2.5e-9, 2.4e-9, 2.6e-9],
                "l": None,
            },  # no l: l empty
        },
        # measured but nothing usable: skipped by the fallback
        "get/shift": {"predict": None, "linreg": {"g": None, "l": None}},
    },
}


def _level_of(truth: ImhTruth, footprint: int, procs: int) -> str:
    for level, size in truth.levels:
        share = procs if level == 3 else 1  # the last level is shared, as bspkit.model.imh assumes from shared_cpus
        if footprint <= size / share:
            return f"L{level}"
    return "memory"


def imh_records(truth: ImhTruth, p: int, noisy: Callable[[float, int], list[float]]) -> list[dict[str, Any]]:
    """caches, mem, stream, pp, disk_info and disk records whose medians follow the truth."""
    recs: list[dict[str, Any]] = [
        {
            "type": "caches",
            "levels": [
                {
                    "level": lv,
                    "type": "Data" if lv == 1 else "Unified",
                    "size_bytes": size,
                    "line_bytes": truth.line,
                    "shared_cpus": p if lv == 3 else 1,
                }
                for lv, size in truth.levels
            ],
            "page_bytes": 4096,
        }
    ]
    for op in ("read", "write"):
        for elem, eb in (("int", 4), ("double", 8)):
            for cache in ("cold", "warm"):
                for procs in sorted({1, p}):
                    for n in (256, 384, 1024, 1536, 4096, 6144, 16384, 24576, 65536, 98304, 262144, 393216, 1 << 20):
                        for stride in (1, 2, 4, 8, 16, 32, 64, 128, 512):
                            if n * stride * eb > 64 << 20:
                                continue
                            lines = n if stride * eb >= truth.line else -(-n * stride * eb // truth.line)
                            foot = lines * truth.line
                            level = "memory" if cache == "cold" else _level_of(truth, foot, procs)
                            tn, tc, te = truth.eq4[level]
                            t = tn * n + tc * lines + te * stride
                            if op == "write":
                                t *= truth.write_factor
                            recs.append(
                                {
                                    "type": "mem",
                                    "op": op,
                                    "elem": elem,
                                    "elem_bytes": eb,
                                    "n": n,
                                    "stride": stride,
                                    "cache": cache,
                                    "procs": procs,
                                    "lines": lines,
                                    "footprint_bytes": foot,
                                    "samples_s": noisy(t, 5),
                                    "reps": 5,
                                }
                            )
    tn, tc, te = truth.eq4["memory"]
    for procs in sorted({1, p}):
        nbytes = 64 << 20
        n = nbytes // 8
        t_pass = tn * n + tc * (n * 8 // truth.line) + te
        recs.append(
            {
                "type": "stream",
                "kernel": "copy",
                "bytes": nbytes,
                "bytes_moved": 2 * nbytes,
                "procs": procs,
                "samples_s": noisy(t_pass * (1 + truth.write_factor), 5),
                "reps": 5,
                "note": "synthetic",
            }
        )
    steps = max(0, (p - 1).bit_length())
    for m in [8 << k for k in range(0, 22)]:
        ts, tau = truth.T_s, truth.tau_d
        times = {  # the BSP cost of bspprobe's supersteps on a machine whose processes copy their own data
            "permutation": (ts + m * tau, 1),
            "pingpong": (2 * (ts + m * tau), 2),
            "scatter": (ts + (p - 1) * m * tau, 1),
            "broadcast": (steps * (ts + m * tau), steps),
        }
        for pattern, (t, ss) in times.items():
            if t <= 0:
                continue
            recs.append(
                {
                    "type": "pp",
                    "pattern": pattern,
                    "primitive": "hpput",
                    "bytes": m,
                    "root": 0 if pattern in ("scatter", "broadcast") else None,
                    "supersteps": ss,
                    "samples_s": noisy(t, 5),
                    "reps": 5,
                }
            )
    recs.append(
        {
            "type": "disk_info",
            "dir": "/tmp",
            "filesystem": "ext4",
            "free_bytes": 1 << 36,
            "max_bytes": 1 << 28,
            "direct": "O_DIRECT",
            "note": "",
        }
    )
    for key, (t0, bw) in truth.disk.items():
        op, cache = key.split("/")
        for m in [4096 << k for k in range(0, 17)]:
            recs.append(
                {
                    "type": "disk",
                    "op": op,
                    "access": "sequential",
                    "cache": cache,
                    "method": "O_DIRECT" if cache == "direct" else "buffered",
                    "bytes": m,
                    "block_bytes": min(m, 1 << 20),
                    "samples_s": noisy(t0 + m / bw, 3),
                    "reps": 3,
                }
            )
    return recs


# ---------------------------------------------------------------- the short calibration

CAL_POINTS = ((256, 8), (4096, 64))  # (h*, c) of bspprobe --calibrate's put h-relations


def calibration_record(params: Params, g_factor: float, l_factor: float, f_factor: float = 1.0) -> dict[str, Any]:
    """A bspprobe `calibration` record of a machine whose g, l and f moved by these factors
    from `params` (three equal samples each, so the medians are exact)."""
    from bspkit.model.comm_models import predict_time_levels

    levels = params.g["put/alltoall"].levels
    g = []
    for hs, c in CAL_POINTS:
        t = predict_time_levels(levels, hs * c, c)
        assert t is not None
        g.append(
            {
                "primitive": "put",
                "pattern": "alltoall",
                "msg_words": hs,
                "count": c,
                "h": hs * c,
                "samples_s": [t * g_factor] * 3,
                "reps": 3,
                "warmup": 1,
            }
        )
    n = 1 << 20
    f = [
        {"kernel": k, "n": n, "ops": 2.0 * n, "samples_s": [v * f_factor * 2.0 * n] * 3}
        for k, v in params.f.items()
        if v and k.startswith("dot_double")
    ]
    l_recs = [{"variant": v, "samples_s": [params.l[v] * l_factor] * 3, "batch": 10} for v in ("empty", "shift")]
    return {"type": "calibration", "round": 0, "seq": None, "t_s": 0.0, "elapsed_s": 0.2, "f": f, "g": g, "l": l_recs}
