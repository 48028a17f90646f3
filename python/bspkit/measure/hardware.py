"""The hardware references of a probe run (bspprobe's section hw, docs/probe-format.md): memcpy
of h words in the h-relations' regime (`memcpy_h`), a raw spin barrier among the processes
(`hw_barrier`) and a core-to-core cache-line round trip (`hw_pingpong`), and what the library
costs against them, measured in the same run (issue 29):

- l(empty) / the raw barrier and l(empty) / the round trip;
- per primitive/pattern and h, g(h) / memcpy_h(h): the grid's g point at that h (the one with
  the fewest messages, c smallest: the nearest to one copy of h words), median / h, against
  memcpy_h's median / h. Both are medians of samples, not fits.

`hardware_of` makes the parameter file's optional `hardware` object ({} when the run has none
of these records); `hardware_sentence` says it in one line for the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import numpy as np

from bspkit.measure.rawdata import RawRun, stats
from bspkit.units import quantity

PRIMITIVE_ORDER = ("put", "hpput", "get", "hpget", "send")


class LatencyRef(TypedDict, total=False):
    """`hardware.barrier` / `hardware.pingpong`: one latency reference, or why it is missing."""

    skipped: str  # the probe's reason; then nothing else
    median_s: float
    q1: float
    q3: float
    min: float
    n: int
    spread: float
    batch: int | None
    cpus: list[int]
    between: str  # hw_pingpong: which two sides


class MemcpyH(TypedDict):
    """`hardware.memcpy_h`: memcpy of h words by every process at once, hot buffers."""

    h: int
    median_s: float
    s_per_word: float
    spread: float
    n: int


class GRatio(TypedDict):
    """`hardware.g_over_memcpy[key]`: the g point at h against memcpy_h at h."""

    h: int
    msg_words: int
    count: int
    g_s_per_word: float
    memcpy_s_per_word: float
    ratio: float
    g_spread: NotRequired[float]  # the g point's IQR / median (files before 2026-11-29: absent)
    memcpy_spread: NotRequired[float]  # memcpy_h's at that h


class Hardware(TypedDict, total=False):
    """The parameter file's optional `hardware` object."""

    l_empty_s: float | None
    barrier: LatencyRef
    pingpong: LatencyRef
    sync_over_barrier: float | None
    sync_over_pingpong: float | None
    memcpy_h: list[MemcpyH]
    g_over_memcpy: dict[str, list[GRatio]]
    problems: NotRequired[list[str]]  # records that could not be read (left out)


def _where(rec: Mapping[str, Any]) -> str:
    return str(rec.get("_where") or rec.get("type"))


def _samples(rec: Mapping[str, Any]) -> np.ndarray | None:
    """The record's samples when they are a non-empty list of positive finite numbers."""
    s = rec.get("samples_s")
    if not isinstance(s, list) or not s:
        return None
    try:
        x = np.asarray([float(v) for v in s], dtype=float)
    except (TypeError, ValueError):
        return None
    return x if bool(np.all(np.isfinite(x)) and np.all(x > 0)) else None


def _latency_ref(rec: Mapping[str, Any], problems: list[str]) -> LatencyRef | None:
    if isinstance(rec.get("skipped"), str):
        return {"skipped": rec["skipped"]}
    x = _samples(rec)
    if x is None:
        problems.append(f"{_where(rec)}: {rec.get('type')} without positive samples_s (left out)")
        return None
    st = stats(x)
    cpus = rec.get("cpus")
    batch = rec.get("batch")
    ref: LatencyRef = {
        "median_s": st.median,
        "q1": st.q1,
        "q3": st.q3,
        "min": st.min,
        "n": st.n,
        "spread": st.spread,
        "batch": int(batch) if isinstance(batch, (int, float)) else None,
        "cpus": [int(c) for c in cpus]
        if isinstance(cpus, list) and all(isinstance(c, (int, float)) for c in cpus)
        else [],
    }
    if isinstance(rec.get("between"), str):
        ref["between"] = rec["between"]
    return ref


def _memcpy_h(records: Sequence[Mapping[str, Any]], problems: list[str]) -> list[MemcpyH]:
    """One row per h (records of the same h merged), ascending."""
    by_h: dict[int, list[np.ndarray]] = {}
    for rec in records:
        h = rec.get("h")
        x = _samples(rec)
        if not isinstance(h, (int, float)) or isinstance(h, bool) or h <= 0 or int(h) != h or x is None:
            problems.append(f"{_where(rec)}: memcpy_h without a positive integer h and positive samples_s (left out)")
            continue
        by_h.setdefault(int(h), []).append(x)
    rows: list[MemcpyH] = []
    for h in sorted(by_h):
        st = stats(np.concatenate(by_h[h]))
        rows.append({"h": h, "median_s": st.median, "s_per_word": st.median / h, "spread": st.spread, "n": st.n})
    return rows


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num and den and num > 0 and den > 0 else None


def g_over_memcpy(run: RawRun, memcpy_rows: Sequence[MemcpyH]) -> dict[str, list[GRatio]]:
    """Per primitive/pattern, g(h) / memcpy_h(h) at every h both have: the g point at h with the
    fewest messages (the smallest c), its median / h."""
    memcpy_at = {r["h"]: r["s_per_word"] for r in memcpy_rows}
    memcpy_spread = {r["h"]: r["spread"] for r in memcpy_rows}
    out: dict[str, list[GRatio]] = {}
    for key in run.g_keys():
        best: dict[int, Any] = {}
        for pt in run.g_points(key):
            if pt.h in memcpy_at and (pt.h not in best or pt.count < best[pt.h].count):
                best[pt.h] = pt
        rows: list[GRatio] = []
        for h in sorted(best):
            pt = best[h]
            g = pt.stats.median / h
            rows.append(
                {
                    "h": h,
                    "msg_words": pt.msg_words,
                    "count": pt.count,
                    "g_s_per_word": g,
                    "memcpy_s_per_word": memcpy_at[h],
                    "ratio": g / memcpy_at[h],
                    "g_spread": pt.stats.spread,
                    "memcpy_spread": memcpy_spread[h],
                }
            )
        if rows:
            out[key] = rows
    return out


def hardware_of(run: RawRun, l_empty_s: float | None) -> Hardware:
    """The `hardware` object of a run's parameter file from its hw records (RawRun.hardware)
    and its g points; l_empty_s is the fitted l(empty). {} when the run has no hw records."""
    records = run.hardware
    if not records:
        return {}
    problems: list[str] = []
    hw: Hardware = {"l_empty_s": l_empty_s}
    for rtype, name in (("hw_barrier", "barrier"), ("hw_pingpong", "pingpong")):
        last = [r for r in records if r.get("type") == rtype][-1:]
        ref = _latency_ref(last[0], problems) if last else None
        if ref is not None:
            hw[name] = ref  # type: ignore[literal-required]
    barrier = hw.get("barrier", {}).get("median_s")
    pingpong = hw.get("pingpong", {}).get("median_s")
    hw["sync_over_barrier"] = _ratio(l_empty_s, barrier)
    hw["sync_over_pingpong"] = _ratio(l_empty_s, pingpong)
    hw["memcpy_h"] = _memcpy_h([r for r in records if r.get("type") == "memcpy_h"], problems)
    hw["g_over_memcpy"] = g_over_memcpy(run, hw["memcpy_h"])
    if problems:
        hw["problems"] = problems
    return hw


# A ratio whose g point or memcpy_h scatters more than this (IQR / median) is not a headline:
# at the largest h a VM's memory bandwidth can swing 2-3x between samples (measured: memcpy_h's
# spread 0.35 at h = 2^20 words on a 2-core EPYC VM, hpput/shift 2.3x memcpy there against
# 0.97x at 2^19 in the same run).
HEADLINE_MAX_SPREAD = 0.2


def _steady(row: Mapping[str, Any]) -> bool:
    return max(row.get("g_spread", 0.0), row.get("memcpy_spread", 0.0)) <= HEADLINE_MAX_SPREAD


def _headline_rows(hw: Mapping[str, Any]) -> list[tuple[str, GRatio]]:
    """Per primitive, in the usual order, its all-to-all surface (else its first pattern) at
    the largest h where both its g point and memcpy_h are steady (spread at most
    HEADLINE_MAX_SPREAD), else at the largest h it has: (key, row)."""
    g = hw.get("g_over_memcpy") or {}
    out: list[tuple[str, GRatio]] = []
    for prim in PRIMITIVE_ORDER:
        keys = [k for k in g if k.split("/")[0] == prim and g[k]]
        if not keys:
            continue
        key = f"{prim}/alltoall" if f"{prim}/alltoall" in keys else keys[0]
        steady = [r for r in g[key] if _steady(r)]
        out.append((key, steady[-1] if steady else g[key][-1]))
    return out


def _ratio_text(row: Mapping[str, Any]) -> str:
    """ "1.3x", or with its scatter where no h of the surface was steady: "2.3x (spread 0.35)"."""
    text = quantity(row["ratio"], "x", 2)
    if not _steady(row):
        text += f" (spread {max(row.get('g_spread', 0.0), row.get('memcpy_spread', 0.0)):.2f})"
    return text


def hardware_sentence(params: Any) -> str | None:
    """One line: "sync = 2x the raw barrier (120 ns), 3.1x a cache-line round trip (80 ns);
    put = 1.3x, hpput = 1.1x memcpy at h = 1,048,576 words (all-to-all, ...)", from a Params (or
    its JSON object); None where the file has no hardware references to compare with. Ratios
    with 2 significant digits, every number through bspkit.units."""
    hw = params.get("hardware") if isinstance(params, Mapping) else getattr(params, "hardware", None)
    if not hw:
        return None
    parts: list[str] = []
    sync: list[str] = []
    barrier = (hw.get("barrier") or {}).get("median_s")
    pingpong = (hw.get("pingpong") or {}).get("median_s")
    if hw.get("sync_over_barrier") is not None and barrier:
        sync.append(f"{quantity(hw['sync_over_barrier'], 'x', 2)} the raw barrier ({quantity(barrier, 's', 3)})")
    if hw.get("sync_over_pingpong") is not None and pingpong:
        sync.append(
            f"{quantity(hw['sync_over_pingpong'], 'x', 2)} a cache-line round trip ({quantity(pingpong, 's', 3)})"
        )
    if sync:
        parts.append("sync = " + ", ".join(sync))
    rows = _headline_rows(hw)
    if rows:
        hs = {r["h"] for _k, r in rows}
        if len(hs) == 1:
            (h,) = hs
            items = ", ".join(f"{k.split('/')[0]} = {_ratio_text(r)}" for k, r in rows)
            parts.append(f"{items} memcpy at h = {quantity(h, 'words')}")
        else:
            parts.append(
                ", ".join(
                    f"{k.split('/')[0]} = {_ratio_text(r)} memcpy at h = {quantity(r['h'], 'words')}" for k, r in rows
                )
            )
        patterns = {k.split("/", 1)[1] for k, _r in rows}
        if patterns == {"alltoall"}:
            parts[-1] += " (all-to-all; memcpy of h words by every process at once, hot)"
    return "; ".join(parts) if parts else None


def ratio_columns(hw: Mapping[str, Any], most: int = 6) -> list[int]:
    """At most `most` values of h for a table: spread over the h that g_over_memcpy has, the
    largest always included."""
    hs = sorted({r["h"] for rows in (hw.get("g_over_memcpy") or {}).values() for r in rows})
    if len(hs) <= most:
        return hs
    idx = np.unique(np.round(np.linspace(0, len(hs) - 1, most)).astype(int))
    return [hs[i] for i in idx]
