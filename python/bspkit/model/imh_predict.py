"""Kang et al.'s IMH model applied as their sec. 6 applies it (`bspkit imh`: the command is
bspkit.commands.imh). A run of Cannon's matrix multiplication (with a loop kernel) or of the out-of-core matrix multiplication is
predicted twice from one probe's parameter file, with the BSP model alone and with the
memory-hierarchy terms of the IMH model (sec. 5.2.4), then run and measured; the two errors
are reported side by side.

* cannon (--kernel naive or transposed): BSP = f W + comm + l with f the probe's naive
  matrix product (matmul_double_ijk: a flop rate measured on matrices that fit the caches);
  IMH = the same comm + l, and instead of f W the processor-memory cost, eq. (4), of the
  kernel's passes over A and B (warm fits at the cache level that holds what each pass walks,
  every process at once).
* oocmm: BSP = f W + comm + l with f the driver's in-memory dgemm (--measure-f); IMH = BSP +
  the memory-disk terms, sum over the driver's reads and writes of calls x (T + m tau), from
  the probe's disk fits of the run's I/O mode; the p processes of a run on this machine
  share its disk (--disk-sharers), so each gets 1/p of the bandwidth the probe measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bspkit.model import imh
from bspkit.model import supersteps as pd
from bspkit.model.params import Params
from bspkit.units import quantity

GROUP_ORDER = ("L1", "L2", "L3", "memory")


class ImhError(Exception):
    """The parameter file lacks what the IMH prediction of this run needs."""


# ------------------------------------------------------------- processor-memory passes


def _warm_fit(mem: Mapping[str, Any], op: str, level: str, procs: int) -> Mapping[str, Any]:
    """The warm (in-cache) eq. (4) fit of double reads or writes at a level; the nearest level
    fitted above it (else below) where that level has none."""
    fits = mem.get("fits", {}).get(f"{op}/double/warm/p{procs}") or mem.get("fits", {}).get(f"{op}/double/warm/p1")
    if not fits:
        raise ImhError(f"the parameter file has no in-cache {op} fits: run the probe with the mem suite")
    i = GROUP_ORDER.index(level)
    for name in [*GROUP_ORDER[i:], *reversed(GROUP_ORDER[:i])]:
        f = fits.get(name)
        if f and "model" in f:
            return f
    raise ImhError(f"no usable in-cache {op} fit at any level")


def pass_s(mem: Mapping[str, Any], op: str, n: float, stride: float, footprint: float, procs: int) -> float:
    """Eq. (4) for one pass of n doubles at `stride`, the data it walks (`footprint` bytes)
    held in the smallest cache that takes it."""
    line = int(mem.get("line_bytes") or 64)
    page = int(mem.get("page_bytes") or 4096)
    level = imh.level_name(int(footprint), procs, mem.get("caches") or [], int(stride * 8))
    return imh.predict_pass(_warm_fit(mem, op, level, procs), n, stride, 8, line, page)


def cannon_kernel_s(mem: Mapping[str, Any], kernel: str, m: int, w: int, c: int, procs: int) -> float:
    """One round's local product C (+)= A B, A m x w and B w x c (row-major doubles).

    naive: for every (i, j) a pass along row i of A (stride 1; the row stays in cache while j
    runs) and a pass down column j of B (stride c, one line per element). Column j + 1 lies in
    the lines column j brought unless j + 1 starts a new line: one column walk in line/8 comes
    from the cache holding all of B, the others from the one holding the w lines just walked.
    transposed: B is read along its rows and written down the columns of B^T (the transpose),
    then every (i, j) walks row i of A and row j of B^T, both at stride 1, B^T cycled whole."""
    line = int(mem.get("line_bytes") or 64)
    a_row = pass_s(mem, "read", w, 1, 8 * w, procs)
    if kernel == "naive":
        new_line = 8.0 / line
        col_far = pass_s(mem, "read", w, c, 8.0 * w * c, procs)
        col_near = pass_s(mem, "read", w, c, float(line) * w, procs)
        return m * c * (a_row + new_line * col_far + (1 - new_line) * col_near)
    if kernel == "transposed":
        transpose = pass_s(mem, "read", w * c, 1, 8.0 * w * c, procs) + pass_s(
            mem, "write", w * c, w, 8.0 * w * c, procs
        )
        bt_row = pass_s(mem, "read", w, 1, 8.0 * w * c, procs)
        return transpose + m * c * (a_row + bt_row)
    raise ImhError(f"--kernel {kernel}: the IMH terms model the loop kernels (naive, transposed), not dgemm's blocking")


def cannon_memory_s(params: Params, run: Mapping[str, Any], procs: int) -> tuple[float, dict[str, Any]]:
    """The processor-memory time of a Cannon run: the rounds of its most loaded process."""
    mem = params.imh.get("mem") if params.imh else None
    if not mem:
        raise ImhError("the parameter file has no processor-memory fits: run `bspkit probe --suites bsp,mem`")
    rp = run.get("params") or {}
    n, pr, pc, rounds = int(rp["n"]), int(rp["grid_rows"]), int(rp["grid_cols"]), int(rp["rounds"])
    kernel = str(rp.get("kernel", "blas"))
    m, c, w = -(-n // pr), -(-n // pc), -(-n // rounds)
    per_round = cannon_kernel_s(mem, kernel, m, w, c, procs)
    return rounds * per_round, {"kernel": kernel, "block": [m, w, c], "rounds": rounds, "per_round_s": per_round}


# ------------------------------------------------------------------- memory-disk terms


def io_calls(io: Mapping[str, Any], kind: str) -> list[tuple[float, int]]:
    """[(bytes, calls), ...] of the driver's reads or writes ("reads"/"writes"); where it could
    not list the call sizes, one class of the mean size."""
    classes = io.get(kind)
    if classes:
        return [(float(b), int(k)) for b, k in classes]
    calls, total = int(io.get(f"{kind[:-1]}_calls") or 0), float(io.get(f"{kind[:-1]}_bytes") or 0)
    return [(total / calls, calls)] if calls else []


def oocmm_disk_s(params: Params, run: Mapping[str, Any], sharers: int = 1) -> tuple[float, dict[str, Any]]:
    """sum of calls x (T + m tau) over the reads and the writes of the busiest process (the
    driver's io_max: the process with the most rows). `sharers` processes use one disk at
    once: each gets 1/sharers of its bandwidth (the probe measured one process alone), the
    start-ups overlap."""
    if not params.imh or not params.imh.get("disk"):
        raise ImhError("the parameter file has no disk fits: run `bspkit probe --suites bsp,disk`")
    rp = run.get("params") or {}
    cache = "page" if rp.get("io") == "page" else "direct"  # O_DIRECT or fadvise + fsync: around the cache
    io = rp.get("io_max") or rp.get("io_p0") or {}
    reads, writes = io_calls(io, "reads"), io_calls(io, "writes")
    t_r = imh.disk_time(params.imh, reads, "read", "sequential", cache, sharers)
    t_w = imh.disk_time(params.imh, writes, "write", "sequential", cache, sharers)
    if t_r is None or t_w is None:
        raise ImhError(f"the parameter file has no sequential {cache} disk fit for reads and writes")
    detail = {"cache": cache, "read_s": t_r, "write_s": t_w, "reads": reads, "writes": writes, "sharers": sharers}
    return t_r + t_w, detail


# ------------------------------------------------------------------------ one run


def probe_f(params: Params, kernel: str) -> float:
    f = params.f.get(kernel)
    if not f:
        raise ImhError(f"the parameter file has no f of {kernel}: run the probe with its f section")
    return float(f)


def predict_run(alg: str, params: Params, run: Mapping[str, Any], procs: int, disk_sharers: int = 1) -> dict[str, Any]:
    """The BSP and the IMH prediction of one driver run, with their parts."""
    if alg == "cannon":
        f = probe_f(params, "matmul_double_ijk")
        bsp = pd.predict(params, run, f)
        comm = bsp["g const comm_s"]
        memory, detail = cannon_memory_s(params, run, procs)
        out = {"bsp_s": bsp["g const"], "bsp_work_s": bsp["work_s"], "f_s_per_flop": f, "comm_s": comm}
        out["imh_s"] = None if comm is None else comm + memory
        out["memory_s"] = memory
    else:
        bsp = pd.predict(params, run)
        disk, detail = oocmm_disk_s(params, run, disk_sharers)
        out = {"bsp_s": bsp["g const"], "bsp_work_s": bsp["work_s"], "f_s_per_flop": bsp["f_s_per_unit"]}
        out["comm_s"] = bsp["g const comm_s"]
        out["imh_s"] = None if bsp["g const"] is None else bsp["g const"] + disk
        out["disk_s"] = disk
    out["detail"] = detail
    measured = float(run["time_s"])
    out["measured_s"] = measured
    out["bsp_error"] = pd.relative_error(out["bsp_s"], measured)
    out["imh_error"] = pd.relative_error(out["imh_s"], measured)
    return out


def pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1%}"


def mean_abs_errors(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The mean |relative error| of the BSP and of the IMH predictions over the runs that have one."""
    return {
        k: (sum(abs(r[k]) for r in rows if r[k] is not None) / max(1, sum(r[k] is not None for r in rows)))
        for k in ("bsp_error", "imh_error")
    }


def table_text(alg: str, rows: Sequence[Mapping[str, Any]]) -> str:
    extra = "memory" if alg == "cannon" else "disk"
    head = f"{'n':>6} {'measured':>10} {'BSP':>10} {'error':>8} {'IMH':>10} {'error':>8} {extra + ' term':>12}"
    lines = [head]
    for r in rows:
        term = r.get("memory_s", r.get("disk_s"))
        lines.append(
            f"{r['size']:>6} {quantity(r['measured_s'], 's'):>10} {quantity(r['bsp_s'], 's'):>10} "
            f"{pct(r['bsp_error']):>8} {quantity(r['imh_s'], 's'):>10} {pct(r['imh_error']):>8} {quantity(term, 's'):>12}"
        )
    return "\n".join(lines)
