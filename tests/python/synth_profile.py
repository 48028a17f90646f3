"""Synthetic superstep profiles (docs/profile-format.md) from known per-superstep values, as
libbsp writes them with BSPKIT_PROFILE: the tests of bspkit.model.profile know what went in."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Traffic = list[tuple[int, int, int]]  # [(peer, messages, words)] in pid order


@dataclass
class StepSpec:
    """One superstep: per process (index = pid) its times and traffic."""

    compute: list[float]
    sync: list[float]
    wait: list[float] | None = None  # default: half of sync
    out: dict[int, Traffic] = field(default_factory=dict)
    in_get: dict[int, Traffic] = field(default_factory=dict)
    ops: dict[int, dict[str, list[int]]] = field(default_factory=dict)
    self_words: dict[int, int] = field(default_factory=dict)
    push_reg: int = 0
    phase: str | None = None  # bspk_profile_phase's name; None: the record has no "phase"
    site: tuple[int, int] | None = (0, 0x1234)  # (object index, offset), as every process has it
    end: str = "bsp_sync"
    cpu: list[float] | None = None  # cpu_s per process; None: the record has none (an older libbsp)
    pack: list[float] | None = None  # pack_s per process (parts of compute); None: none (an older libbsp)
    direct: list[float] | None = None  # direct_s per process; None: none


def header(p: int, section: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "type": "header",
        "format": 1,
        "tool": "bspkit-profile",
        "bspkit_version": "0.1.0",
        "section": section,
        "backend": "threads",
        "nprocs": p,
        "program": "/abs/synth",
        "argv": ["synth", "-n", "100"],
        "host": "synthhost",
        "date": "2026-01-01T00:00:00Z",
        "word_bytes": 8,
        **extra,
    }


def default_ops(spec: StepSpec, pid: int) -> dict[str, list[int]]:
    """put for the out traffic, get for the in_get, 8 bytes a word."""
    ops: dict[str, list[int]] = {}
    for name, entries in (("put", spec.out.get(pid, [])), ("get", spec.in_get.get(pid, []))):
        if entries:
            ops[name] = [sum(m for _p, m, _w in entries), 8 * sum(w for _p, _m, w in entries)]
    return ops


def records(
    p: int,
    steps: list[StepSpec],
    objects: list[dict[str, str]] | None = None,
    t0: list[float] | None = None,
    section: int = 0,
    finished: list[int] | None = None,
) -> list[dict[str, Any]]:
    """The records of one section: the header, then each process' supersteps and its process
    record (only for the pids in `finished`: the others did not reach bsp_end)."""
    objects = objects if objects is not None else [{"path": "/abs/synth", "base": "0x555555554000"}]
    t0 = t0 if t0 is not None else [1000.0 + 0.001 * pid for pid in range(p)]
    out: list[dict[str, Any]] = [header(p, section)]
    for pid in range(p) if finished is None else finished:
        t = 0.0
        for k, s in enumerate(steps):
            wait = s.wait[pid] if s.wait is not None else s.sync[pid] / 2
            out.append(
                {
                    "type": "superstep",
                    "section": section,
                    "pid": pid,
                    "step": k,
                    "end": s.end,
                    "t_start_s": t,
                    "compute_s": s.compute[pid],
                    "sync_s": s.sync[pid],
                    "wait_s": wait,
                    "ops": s.ops.get(pid, default_ops(s, pid)),
                    "out": [list(e) for e in s.out.get(pid, [])],
                    "in_get": [list(e) for e in s.in_get.get(pid, [])],
                    "self_words": s.self_words.get(pid, 0),
                    "push_reg": s.push_reg,
                    "pop_reg": 0,
                    "set_tagsize": 0,
                    "site": [s.site[0], hex(s.site[1])] if s.site is not None else None,
                }
            )
            if s.phase is not None:
                out[-1]["phase"] = s.phase
            if s.cpu is not None:
                out[-1]["cpu_s"] = s.cpu[pid]
            if s.pack is not None:
                out[-1]["pack_s"] = s.pack[pid]
                out[-1]["pack_marked_s"] = s.pack[pid] / 2
            if s.direct is not None:
                out[-1]["direct_s"] = s.direct[pid]
            t += s.compute[pid] + s.sync[pid]
        out.append(
            {
                "type": "process",
                "section": section,
                "pid": pid,
                "supersteps": len(steps),
                "t0_s": t0[pid],
                "total_s": t + 1e-6,
                "objects": objects,
            }
        )
    return out


def write_profile(path: Path, recs: list[dict[str, Any]], shuffle: bool = True) -> Path:
    """The file as the processes write it: the header first, the other lines in any order
    (every process appends its own in bsp_end)."""
    rest = recs[1:]
    if shuffle:
        rest = rest[:]
        random.Random(7).shuffle(rest)
    path.write_text("".join(json.dumps(r) + "\n" for r in [recs[0], *rest]))
    return path


# ------------------------------------------------------------------ programs with known laws


@dataclass
class SiteLaw:
    """A bsp_sync site of a synthetic program, as functions of p and n: how many supersteps
    it ends, the work of each (CPU seconds, every process alike) and its h-relation (each
    process puts h words to the next one, in `messages` puts)."""

    offset: int
    S: Callable[[int, float], int]
    work: Callable[[int, float], float]
    h: Callable[[int, float], int] = lambda p, n: 0
    messages: int = 1
    end: str = "bsp_sync"
    phase: str | None = None


def law_steps(
    p: int, n: float, sites: list[SiteLaw], noise: float = 0.0, rng: random.Random | None = None
) -> list[StepSpec]:
    """The supersteps of one run: each site's S supersteps in turn (a bsp_end site last).
    noise: each superstep's work times (1 + a uniform draw in [-noise, noise]). The wall
    clock's compute is the work times p/2 (the run crowds 2 cores), so only cpu_s tells it."""
    rng = rng or random.Random(1)
    steps: list[StepSpec] = []
    for site in sorted(sites, key=lambda s: s.end == "bsp_end"):
        for _ in range(site.S(p, n)):
            work = site.work(p, n) * (1.0 + rng.uniform(-noise, noise))
            h = site.h(p, n) if p > 1 else 0
            m = site.messages
            out = {pid: [((pid + 1) % p, m, h)] for pid in range(p)} if h else {}
            steps.append(
                StepSpec(
                    compute=[work * max(1.0, p / 2)] * p,
                    cpu=[work] * p,
                    sync=[1e-5] * p,
                    out=out,
                    site=(0, site.offset),
                    end=site.end,
                    phase=site.phase,
                )
            )
    return steps


def log2p(p: int, n: float) -> int:
    return round(math.log2(p))
