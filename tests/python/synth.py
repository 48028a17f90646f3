"""Synthetic raw-sample files from known parameters, in the format bspprobe writes.

Used by the tests (the fit must recover what went in) and handy for trying the report
without measuring. Times follow eq. (2.6) written as T(h, c) = g_inf * (h + h_half + o*c),
each sample multiplied by lognormal noise exp(N(0, noise)).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


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
    l: dict[str, float] = field(
        default_factory=lambda: {"empty": 1.0e-6, "shift": 1.6e-6, "alltoall": 2.5e-6}
    )
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
            {"type": "f", "kernel": kernel, "n": n, "ops": ops, "samples_s": noisy(ops * f, 7), "note": "process 0"}
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
        for test, t in (("Empty", l0), ("Comp", l0 * 1.05), ("Full", l0 * 2.4), ("Simple", l0 * 1.4), ("Scatter", l0 * 1.9)):
            recs.append({"type": "as", "test": test, "h": None, "samples_s": noisy(t, 21), "note": "synthetic"})
        put = spec.g.get("put/alltoall", next(iter(spec.g.values())))
        h = spec.p
        while h <= 1 << 16:
            t = model_time(put, spec.p * h, spec.p)
            recs.append({"type": "as", "test": "TotalExchange", "h": h, "samples_s": noisy(t, 9), "note": "synthetic"})
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
    recs.append({"type": "footer", "elapsed_s": 12.5, "loadavg_end": [0.2, 0.1, 0.1], "warnings": []})
    return recs


def write_synthetic(path: str | Path, spec: SynthSpec | None = None) -> Path:
    """Writes a synthetic raw file; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    recs = synthetic_records(spec or SynthSpec())
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path
