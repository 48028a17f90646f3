"""The closed-form costs of LLCS, radix sort and LU (bspkit.model.costs.llcs, .rdxsort, .lu) against
the drivers' own counts (threads back end, p = 1..8, small n, -r 1) and against independent
references where no run can reach (p = 1024; grids to 8 x 8):

  * data-independent supersteps: the expanded supersteps() equal the driver's list, superstep
    by superstep (w, h, h_inout, count, msg_words, primitive, pattern, sync; the JSON prints 10
    digits),
    and S, W, H, for sizes that divide nothing, and Cost.problem is the driver's params;
  * data-dependent ones (radix sort's key exchange, LU's row interchanges): w and the labels
    exactly, h within [h_low, h_high], and h, count and h* near the expectation, with the
    tolerances stated at each test;
  * the large problems of the brief (LLCS n = 10^6, radix sort n = 2^30, LU n = 10^5, all at
    p = 1024) are computed (no timing assertion) and checked against what must hold there.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit.algorithms import closed_form
from bspkit.model.costs import Cost, CostError
from bspkit.model.costs import llcs as llcs_model
from bspkit.model.costs import lu_reference as lu_cost
from bspkit.model.costs import rdxsort as rdx_model

from conftest import built_program, needs_programs

BSPRUN = built_program("bsprun")
LLCS, RDXSORT, LU = built_program("bspalg-llcs"), built_program("bspalg-rdxsort"), built_program("bspalg-lu")
needs_llcs = needs_programs("bsprun", "bspalg-llcs")
needs_rdxsort = needs_programs("bsprun", "bspalg-rdxsort")
needs_lu = needs_programs("bsprun", "bspalg-lu", hint=" (no CBLAS?)")

# h_inout: thesis eq. 2.2's h (max over processes of sent + received), counted by the drivers
FIELDS = ("w", "h", "h_inout", "count", "msg_words", "primitive", "pattern", "sync")


def run_driver(driver: Path | None, p: int, *args: str) -> dict[str, Any]:
    assert driver is not None
    cmd = [str(BSPRUN), "-b", "threads", "-n", str(p), str(driver), *args, "-r", "1", "--json", "-"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{cmd}: status {done.returncode}\n{done.stdout}\n{done.stderr}"
    run = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    assert run["verified"] is not False, run["check_note"]
    return dict(run)


def printed(x: Any) -> Any:
    """A number as the driver's JSON prints it (%.10g); other values as they are."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return x
    return float(f"{float(x):.10g}")


def row(step: Mapping[str, Any], fields: Sequence[str] = FIELDS) -> tuple[Any, ...]:
    return tuple(printed(step[f]) for f in fields)


def expanded(cost: Cost) -> list[Any]:
    """The StepKind of every superstep, in order."""
    return [k for k in cost.steps for _ in range(k.repeat)]


def assert_exact(run: Mapping[str, Any], cost: Cost) -> None:
    """Every superstep as the driver counted it, and the totals."""
    counted = [row(s) for s in run["supersteps"]]
    model = [row(s) for s in cost.supersteps()]
    assert len(counted) == len(model)
    for i, (c, m) in enumerate(zip(counted, model, strict=True)):
        assert c == m, f"superstep {i}: driver {c}, model {m}"
    assert cost.exact
    assert (run["S"], printed(run["W"]), printed(run["H"])) == (cost.S, printed(cost.W), printed(cost.H))


def assert_exact_but_expected(run: Mapping[str, Any], cost: Cost) -> list[tuple[dict[str, Any], Any]]:
    """The closed-form supersteps exactly; of the expected ones w (where exact), the labels and
    sync exactly and h within its bounds. Returns the (counted, StepKind) pairs of the
    expected key / swap supersteps."""
    counted, kinds = run["supersteps"], expanded(cost)
    assert len(counted) == len(kinds)
    assert run["S"] == cost.S
    expected = []
    for i, (c, k) in enumerate(zip(counted, kinds, strict=True)):
        m = k.as_superstep()
        if k.source == "closed form":
            assert row(c) == row(m), f"superstep {i} ({k.kind}): driver {row(c)}, model {row(m)}"
            continue
        assert k.source == "expected"
        labels = ("primitive", "pattern", "sync")
        assert row(c, labels) == row(m, labels), f"superstep {i} ({k.kind})"
        if k.h_low is not None:  # the key exchange and the swaps: w exact, h bounded
            assert printed(c["w"]) == printed(k.w), f"superstep {i} ({k.kind})"
            assert k.h_low <= c["h"] <= k.h_high, f"superstep {i} ({k.kind}): h {c['h']} not in [{k.h_low}, {k.h_high}]"
            assert k.h_low <= k.h <= k.h_high
        expected.append((c, k))
    assert bool(cost.notes) == bool(expected) == (not cost.exact), "a cost with expected supersteps says so"
    return expected


# ====================================================================== LLCS

LLCS_SIZES = ((1200, 1200, 3), (1000, 3001, 2), (65, 63, 5), (4097, 200, 5), (1280, 1280, 2), (2304, 2304, 2))


def llcs_cases(quick: bool) -> list[Any]:
    out = []
    for kernel in ("dp", "bitpar"):
        for p in (1, 2, 3, 4, 5, 8):
            for m, n, alpha in LLCS_SIZES:
                fast = p in (1, 3, 4) and (m, n) in ((1000, 3001), (65, 63), (4097, 200), (1280, 1280))
                if fast == quick:
                    out.append(pytest.param(kernel, p, m, n, alpha, id=f"{kernel}-p{p}-{m}x{n}-a{alpha}"))
    return out


def check_llcs(kernel: str, p: int, m: int, n: int, alpha: int | None) -> None:
    args = ["--kernel", kernel, "--sizes", f"{m},{n}", "--no-check"] + (["--alpha", str(alpha)] if alpha else [])
    run = run_driver(LLCS, p, *args)
    problem = {"m": m, "n": n} if alpha is None else {"m": m, "n": n, "alpha": alpha}
    cost = closed_form(f"llcs-{kernel}", problem, p)
    assert_exact(run, cost)
    assert dict(cost.problem) == {k: v for k, v in run["params"].items() if k != "llcs"}
    assert (cost.work_unit, cost.f_kernel) == ("cell", None)


@needs_llcs
@pytest.mark.parametrize(("kernel", "p", "m", "n", "alpha"), llcs_cases(quick=True))
def test_llcs_every_superstep(kernel: str, p: int, m: int, n: int, alpha: int) -> None:
    check_llcs(kernel, p, m, n, alpha)


@pytest.mark.slow
@needs_llcs
@pytest.mark.parametrize(("kernel", "p", "m", "n", "alpha"), llcs_cases(quick=False))
def test_llcs_every_superstep_more(kernel: str, p: int, m: int, n: int, alpha: int) -> None:
    check_llcs(kernel, p, m, n, alpha)


@needs_llcs
@pytest.mark.parametrize("kernel", ["dp", "bitpar"])
@pytest.mark.parametrize("p", [2, 3])
def test_llcs_default_alpha_as_the_driver_picks_it(kernel: str, p: int) -> None:
    run = run_driver(LLCS, p, "--kernel", kernel, "--size", "30000", "--no-check")
    cost = closed_form(f"llcs-{kernel}", {"n": 30000}, p)  # n alone: --size sets both strings
    assert cost.problem["alpha"] == run["params"]["alpha"]
    assert_exact(run, cost)


@pytest.mark.parametrize(
    ("kernel", "m", "n", "p", "alpha", "beta"),
    [
        ("dp", 1200, 1200, 2, 3, 100),
        ("dp", 6000, 6000, 5, 4, 150),
        ("bitpar", 2304, 2304, 3, 2, 6),
        ("bitpar", 1280, 1280, 1, 4, 5),
    ],
)
def test_llcs_closed_forms_when_the_sizes_divide(kernel: str, m: int, n: int, p: int, alpha: int, beta: int) -> None:
    """Eq. 5.2 and README.md's H and S; runs of equal supersteps are one StepKind (O(alpha)),
    and the per-anti-diagonal computation from the grid gives the same list."""
    G = alpha * p
    cost = closed_form(f"llcs-{kernel}", {"m": m, "n": n, "alpha": alpha}, p)
    work, words, supersteps = cost.W, cost.H, cost.S
    assert work == (m // G) * (n // G) * (p * alpha * (alpha + 1) - alpha)
    assert words == ((p * alpha * (alpha + 1) - 2 * alpha) * beta + 1 if p > 1 else 0)
    assert supersteps == 2 * G
    assert len(cost.steps) <= 4 * alpha + 4
    grid = llcs_model._Grid(m, n, G, kernel)
    assert grid.uniform
    uniform, general = llcs_model._wavefront_uniform(grid, G, p), llcs_model._wavefront_general(grid, G, p)
    for a, b in zip(uniform, general, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("kernel", ["dp", "bitpar"])
def test_llcs_a_million_at_p_1024(kernel: str) -> None:
    """n = 10^6 at p = 1024 (default alpha: 3 for dp, 1 for bitpar); the busiest process
    computes ceil(c_d / p) blocks of anti-diagonal d, p alpha (alpha + 1) - alpha in all (eq.
    5.2), none larger than the largest block (bitpar: block rows of whole 64-bit words)."""
    p, n = 1024, 10**6
    cost = closed_form(f"llcs-{kernel}", {"n": n}, p)
    alpha = cost.problem["alpha"]
    assert alpha == llcs_model.default_alpha(n, n, p, kernel, 4)
    G = alpha * p
    assert cost.S == 2 * G
    rows = math.ceil(n / G) if kernel == "dp" else 64 * math.ceil(math.ceil(n / 64) / G)
    assert n * n / p <= cost.W <= (p * alpha * (alpha + 1) - alpha) * math.ceil(n / G) * rows
    assert sum(k.repeat for k in cost.steps) == 2 * G
    # the busiest process sends ceil(c'_d / p) boundaries on anti-diagonal d, in all
    # p alpha (alpha + 1) - 2 alpha, each of the words of a block row (+ 1: the answer)
    units = n if kernel == "dp" else -(-n // 64)
    per_unit = 0.5 if kernel == "dp" else 1
    boundaries = p * alpha * (alpha + 1) - 2 * alpha
    least, most = math.ceil(units // G * per_unit), math.ceil(-(-units // G) * per_unit)
    assert least * boundaries + 1 <= cost.H <= most * boundaries + 1


def test_llcs_refuses_what_the_driver_refuses() -> None:
    with pytest.raises(CostError, match="dp kernel"):
        closed_form("llcs-dp", {"n": 100, "kernel": "bitpar"}, 2)
    with pytest.raises(CostError, match="too large"):
        closed_form("llcs-dp", {"n": 1000, "alpha": 1000000}, 1024)
    with pytest.raises(CostError, match="alphabet"):
        closed_form("llcs-bitpar", {"alphabet": 300}, 2)
    with pytest.raises(CostError, match="p must be"):
        closed_form("llcs-bitpar", {}, 0)


# ====================================================================== LU

SMALL_GRIDS = ((1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (3, 1))
MORE_GRIDS = ((1, 4), (4, 1), (2, 3), (3, 2), (1, 5), (5, 1), (2, 4), (4, 2), (1, 7), (1, 8), (8, 1))
LU_SIZES = ((37, 4), (48, 4), (10, 16), (20, 1), (53, 5), (101, 7), (130, 16))


def lu_cases(quick: bool) -> list[Any]:
    out = []
    for rows, cols in SMALL_GRIDS + MORE_GRIDS:
        for n, nb in LU_SIZES:
            fast = (rows, cols) in SMALL_GRIDS and (n, nb) in LU_SIZES[:4]
            if fast == quick:
                out.append(pytest.param(n, nb, rows, cols, id=f"{rows}x{cols}-n{n}-nb{nb}"))
    return out


def check_lu(n: int, nb: int, rows: int, cols: int) -> None:
    run = run_driver(LU, rows * cols, "--size", str(n), "--nb", str(nb), "--grid", f"{rows}x{cols}")
    cost = closed_form("lu", {"n": n, "nb": nb, "grid_rows": rows, "grid_cols": cols}, rows * cols)
    assert dict(cost.problem) == run["params"]
    assert (cost.work_unit, cost.f_kernel) == ("flop", "matmul_double_blas")
    if rows == 1:  # no row interchange crosses processes: every superstep exact
        assert_exact(run, cost)
        return
    swaps = assert_exact_but_expected(run, cost)
    assert {k.kind for _, k in swaps} <= {"swap"}
    assert len(swaps) == sum(rows_off_the_diagonal_row(n, nb, rows, j0) > 0 for j0 in range(0, n, nb))


def rows_off_the_diagonal_row(n: int, nb: int, rows: int, j0: int) -> int:
    """The rows below the stage's block on other process rows than its own: the rows a pivot
    can bring across process rows (none: the stage's swap superstep is exact)."""
    j1 = min(j0 + nb, n)
    return sum(lu_cost.owned_from(n, nb, rows, s, j1) for s in range(rows) if s != (j0 // nb) % rows)


@needs_lu
@pytest.mark.parametrize(("n", "nb", "rows", "cols"), lu_cases(quick=True))
def test_lu_every_superstep(n: int, nb: int, rows: int, cols: int) -> None:
    check_lu(n, nb, rows, cols)


@pytest.mark.slow
@needs_lu
@pytest.mark.parametrize(("n", "nb", "rows", "cols"), lu_cases(quick=False))
def test_lu_every_superstep_more(n: int, nb: int, rows: int, cols: int) -> None:
    check_lu(n, nb, rows, cols)


def check_lu_against_lu_cost(n: int, nb: int, rows: int, cols: int) -> None:
    """bspkit.model.costs.lu_reference builds every superstep process by process: the same w, h (the swaps'
    expectation too) and bounds, superstep by superstep."""
    cost = closed_form("lu", {"n": n, "nb": nb, "grid_rows": rows, "grid_cols": cols}, rows * cols)
    reference = lu_cost.superstep_model(n, nb, rows, cols)
    kinds = expanded(cost)
    assert len(kinds) == len(reference)
    for i, (k, x) in enumerate(zip(kinds, reference, strict=True)):
        where = f"{rows}x{cols} n {n} nb {nb}, superstep {i} ({x.kind})"
        assert (k.w, k.sync) == (x.w, x.sync), where
        assert k.h == pytest.approx(x.h, rel=1e-12), where
        if k.source == "closed form":  # the swaps of a stage with no row below it off sr too
            assert x.h_min == x.h_max == k.h, where
        else:
            assert (k.kind, k.h_low, k.h_high) == ("swap", x.h_min, x.h_max), where


@pytest.mark.parametrize(("rows", "cols"), [(2, 5), (3, 4), (4, 4), (5, 3), (8, 8), (1, 6)])
def test_lu_against_lu_cost(rows: int, cols: int) -> None:
    check_lu_against_lu_cost(131, 8, rows, cols)


@pytest.mark.slow
def test_lu_against_lu_cost_up_to_8x8() -> None:
    for rows in range(1, 9):
        for cols in range(1, 9):
            for n, nb in ((300, 16), (257, 13), (40, 64)):
                check_lu_against_lu_cost(n, nb, rows, cols)


@pytest.mark.slow
@needs_lu
@pytest.mark.parametrize(("rows", "cols"), [(2, 1), (2, 2), (3, 1), (4, 2), (2, 4), (8, 1)])
def test_lu_swaps_near_their_expectation(rows: int, cols: int) -> None:
    """Over a run's stages (600 / 16 = 38 swap supersteps, each the max over processes of
    the words its pivots move) the counted sums of h, count and h* lie within 6 %, 5 % and
    6 % of the model's: it takes the max over processes of the expected words, below the
    expected max (Jensen), and each row below the stage's block as equally likely a pivot;
    measured 0.95-1.02 of the model on these grids."""
    n, nb = 600, 16
    run = run_driver(LU, rows * cols, "--size", str(n), "--nb", str(nb), "--grid", f"{rows}x{cols}", "--no-check")
    swaps = assert_exact_but_expected(run, closed_form("lu", run["params"], rows * cols))
    for field, tolerance in (("h", 0.06), ("h_inout", 0.06), ("count", 0.05), ("msg_words", 0.06)):
        counted = sum(c[field] for c, _ in swaps)
        model = sum(getattr(k, field) for _, k in swaps)
        assert counted == pytest.approx(model, rel=tolerance), field


@pytest.mark.parametrize(
    ("p", "grid"), [(1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)), (7, (1, 7)), (12, (3, 4)), (1024, (32, 32))]
)
def test_lu_default_grid(p: int, grid: tuple[int, int]) -> None:
    cost = closed_form("lu", {}, p)
    assert (cost.problem["grid_rows"], cost.problem["grid_cols"]) == grid
    assert (cost.problem["n"], cost.problem["nb"], cost.problem["stages"]) == (1000, 64, 16)


@needs_lu
def test_lu_default_grid_as_the_driver_picks_it() -> None:
    run = run_driver(LU, 6, "--size", "90", "--nb", "8")
    cost = closed_form("lu", {"n": 90, "nb": 8}, 6)
    assert dict(cost.problem) == run["params"]
    assert_exact_but_expected(run, cost)


def test_lu_at_p_1024() -> None:
    """The brief's n = 10^5, nb = 64 on 32 x 32: S = n + K (1 + [N > 2] + C(M)); and n = 2^17
    (K divisible by the grid) against lu_cost's closed-form totals (S, W exact)."""
    cost = closed_form("lu", {"n": 100000, "nb": 64}, 1024)
    K = -(-100000 // 64)
    assert cost.S == 100000 + K * (1 + 1 + 2)
    assert lu_cost.lu_flops(100000) / 1024 < cost.W
    n = 1 << 17
    cost = closed_form("lu", {"n": n, "nb": 64}, 1024)
    totals = lu_cost.closed_form_totals(n, 64, 32, 32)
    supersteps, work, words = cost.S, cost.W, cost.H
    assert supersteps == totals["S"]
    assert work == pytest.approx(totals["W"], rel=1e-12)
    low = sum(k.repeat * (k.h if k.h_low is None else k.h_low) for k in cost.steps)
    high = sum(k.repeat * (k.h if k.h_high is None else k.h_high) for k in cost.steps)
    assert low < words < high
    assert words == pytest.approx(totals["H"], rel=0.03)  # the compact swaps' estimate


def test_lu_one_process_and_refusals() -> None:
    cost = closed_form("lu", {"n": 333, "nb": 8}, 1)
    totals = (cost.S, cost.H, cost.W)
    assert totals == (0, 0, lu_cost.lu_flops(333))
    assert [k.sync for k in cost.steps] == [False]
    with pytest.raises(CostError, match="needs 6 processes"):
        closed_form("lu", {"grid_rows": 2, "grid_cols": 3}, 4)
    with pytest.raises(CostError, match="n must be"):
        closed_form("lu", {"n": 0}, 4)


# ====================================================================== radix sort

VARIANTS = {"plain": "rdxsort", "opt": "rdxsort-opt", "combined": "rdxsort-combined"}
U64 = np.uint64


def exchange(hist: np.ndarray, n: int, variant: str, key_bytes: int) -> dict[str, Any]:
    """The key exchange of one round from the p x R histograms, as rdxsort.c counts it: the
    pieces (value v, process s) in the order v, then s, tile the ranks; plain and opt make a
    request per (piece, other owner) of a piece not wholly the process' own, combined one per
    other owner; words rounded up per request. Per process: words sent and received,
    requests, keys received."""
    p, R = hist.shape
    first = np.array([t * n // p for t in range(p + 1)], dtype=np.int64)
    flat = hist.T.ravel()
    g = (np.cumsum(flat) - flat).reshape(R, p).T  # g[s, v]: the first rank of piece (s, v)
    nonempty = hist > 0
    start, end = g[nonempty], (g + hist)[nonempty]
    owner = np.broadcast_to(np.arange(p)[:, None], hist.shape)[nonempty]
    lo = np.searchsorted(first, start, side="right") - 1
    hi = np.searchsorted(first, end - 1, side="right") - 1
    whole = (lo == owner) & (hi == owner)
    from_to = np.zeros((p, p), dtype=np.int64)
    sent, received, requests = np.zeros(p), np.zeros(p), np.zeros(p)

    def words(keys: np.ndarray) -> np.ndarray:
        return -(-keys * key_bytes // 8)

    for step in range(int((hi - lo).max()) + 1 if len(lo) else 0):
        t = lo + step
        part_of = t <= hi
        t, s = t[part_of], owner[part_of]
        part = np.minimum(end[part_of], first[t + 1]) - np.maximum(start[part_of], first[t])
        np.add.at(from_to, (s, t), part)
        if variant != "combined":
            request = (t != s) & ~whole[part_of] & (part > 0)
            np.add.at(sent, s[request], words(part[request]))
            np.add.at(received, t[request], words(part[request]))
            np.add.at(requests, s[request], 1)
    if variant == "combined":
        message = ~np.eye(p, dtype=bool) & (from_to > 0)
        w = np.where(message, words(from_to), 0)
        sent, received, requests = w.sum(axis=1), w.sum(axis=0), message.sum(axis=1)
    return {
        "h": float(np.maximum(sent, received).max()),
        "count": float(requests.max()),
        "words": float(sent.sum()),
        "requests": float(requests.sum()),
        "sent": np.maximum(sent, received),
        "process_requests": requests,
        "placed": from_to.sum(axis=0) - np.diag(from_to),
    }


def simulate(n: int, p: int, R: int, variant: str, key_bytes: int, samples: int, seed: int = 7) -> dict[str, Any]:
    """The key exchange over `samples` draws of uniform keys: each process' histogram of a
    round's digit is multinomial (n_s, 1/R), independent of the others' (module docstring
    of bspkit.model.costs.rdxsort). Means and standard deviations of h, count, h* and the keys
    placed, and the largest per-process standard deviation of words, requests and keys
    received."""
    rng = np.random.default_rng(seed)
    n_s = np.diff([t * n // p for t in range(p + 1)])
    draws = [exchange(rng.multinomial(n_s, np.full(R, 1.0 / R)), n, variant, key_bytes) for _ in range(samples)]

    def stats(values: Sequence[float]) -> tuple[float, float]:
        return float(np.mean(values)), float(np.std(values))

    return {
        "h": stats([d["h"] for d in draws]),
        "count": stats([d["count"] for d in draws]),
        "msg_words": stats([d["words"] / d["requests"] for d in draws]),
        "placed": stats([float(d["placed"].max()) for d in draws]),
        "sd_words": float(np.std([d["sent"] for d in draws], axis=0).max()),
        "sd_requests": float(np.std([d["process_requests"] for d in draws], axis=0).max()),
        "sd_placed": float(np.std([d["placed"] for d in draws], axis=0).max()),
        "samples": samples,
    }


def test_the_simulated_exchange_is_the_reference_model() -> None:
    """exchange() against test_rdxsort_cost's model (which equals the driver's counts) on
    uniform keys: every round's h, count and words."""
    from test_rdxsort_cost import model

    rng = np.random.default_rng(3)
    for variant in VARIANTS:
        for p, n, bits, key_bits in ((3, 5003, 8, 32), (4, 2000, 4, 32), (5, 3001, 6, 64), (2, 3, 8, 32)):
            keys = rng.bit_generator.random_raw(n).astype(U64) >> U64(64 - key_bits)
            reference = model(variant, keys, p, bits, key_bits, "put")
            first = [t * n // p for t in range(p + 1)]
            current = keys.copy()
            for rnd in range(-(-key_bits // bits)):
                width = min(bits, key_bits - rnd * bits)
                digit = ((current >> U64(rnd * bits)) & U64((1 << width) - 1)).astype(np.int64)
                hist = np.array([np.bincount(digit[first[t] : first[t + 1]], minlength=1 << width) for t in range(p)])
                got = exchange(hist, n, variant, key_bits // 8)
                step = reference[2 * rnd + 1]
                assert (got["h"], got["count"], got["words"]) == (step.h, step.count, step.words), (variant, p, n, rnd)
                current = current[np.argsort(digit, kind="stable")]
            if variant == "combined" and reference[-1].sync is False:
                assert got["placed"].max() == reference[-1].w


def near_expectation_tolerance(p: int, sd: float) -> float:
    """A run's value (a max over processes) against the model (the max of the processes'
    expectations): each process' value within 4 of its standard deviations of its mean, and
    the mean maximum of p of them above the max of their means by up to sqrt(2 ln p)
    standard deviations (the expected maximum of p normals)."""
    return (math.sqrt(2 * math.log(p)) + 4) * sd


RDX_RUNS = [
    (100003, 8, 32),  # 4 rounds of 256 values, 4-byte keys: the half words of odd pieces
    (30001, 4, 32),  # 8 rounds of 16 values: few pieces, large against the blocks' jitter
    (50001, 11, 64),  # 11 + 11 + 11 + 11 + 11 + 9 bits: 2048 values, pieces of 3 to 25 keys
]


@needs_rdxsort
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("p", [2, 3, 4, 8])
@pytest.mark.parametrize(("n", "bits", "key_bits"), RDX_RUNS)
def test_rdxsort_key_exchange_near_its_expectation(variant: str, p: int, n: int, bits: int, key_bits: int) -> None:
    """The histograms and the key exchange's w exactly, its h within the bounds, and h, count,
    h* and combined's closing w near the model: the tolerance of near_expectation_tolerance
    with each process' standard deviation from simulate() (the driver's counts from
    histograms: test_the_simulated_exchange_is_the_reference_model), plus 0.5 % for the
    normal approximation of the pieces' places; h* (all words over all requests, no max)
    within 4 standard deviations and 1 %."""
    run = run_driver(
        RDXSORT,
        p,
        "--variant",
        variant,
        "--size",
        str(n),
        "--bits",
        str(bits),
        "--key-bits",
        str(key_bits),
        "--no-check",
    )
    cost = closed_form(VARIANTS[variant], {"n": n, "bits": bits, "key_bits": key_bits}, p)
    assert dict(cost.problem) == run["params"]
    pairs = assert_exact_but_expected(run, cost)
    last_width = key_bits - (cost.problem["rounds"] - 1) * bits
    sims: dict[int, dict[str, Any]] = {}
    for counted, kind in pairs:
        R = (counted["w"] - math.ceil(n / p)) // p if kind.kind == "key exchange" else 1 << last_width
        if R not in sims:
            sims[R] = simulate(n, p, R, variant, key_bits // 8, samples=40)
        sim = sims[R]
        if kind.kind == "place received keys":
            assert abs(counted["w"] - kind.w) <= near_expectation_tolerance(p, sim["sd_placed"]) + 0.005 * kind.w
            continue
        assert abs(counted["h"] - kind.h) <= near_expectation_tolerance(p, sim["sd_words"]) + 0.005 * kind.h
        # eq. 2.2: sent + received, each as near its expectation as h is
        inout_tolerance = 2 * near_expectation_tolerance(p, sim["sd_words"]) + 0.005 * kind.h_inout
        assert abs(counted["h_inout"] - kind.h_inout) <= inout_tolerance
        assert abs(counted["count"] - kind.count) <= near_expectation_tolerance(p, sim["sd_requests"]) + 0.5
        assert counted["msg_words"] == pytest.approx(kind.msg_words, rel=0.01, abs=4 * sim["msg_words"][1])


RDX_SIMULATED = [
    (2**20, 4, 256, 4, 40),
    (100000, 8, 256, 4, 40),
    (2**22, 16, 256, 8, 20),
    (5003, 3, 256, 4, 60),
    (2**20, 4, 65536, 4, 10),
    (2**20, 32, 16, 4, 40),
    (65536, 8, 2048, 4, 30),
    (2**20, 64, 32, 4, 20),
]


def check_against_simulation(n: int, p: int, R: int, key_bytes: int, samples: int, variant: str) -> None:
    """The model against the mean of simulated exchanges: h and count are maxima over
    processes, so their means lie above the model (the max of the means) by up to
    sqrt(2 ln p) + 1/2 standard deviations of one process and 3 standard errors, and below it
    by 0.5 % (the normal approximation) and 3 standard errors; h* and combined's placed keys
    (a max too) alike, h* within 1 %."""
    x = rdx_model._key_exchange(n, p, R, key_bytes, variant == "combined")
    sim = simulate(n, p, R, variant, key_bytes, samples)
    root = math.sqrt(samples)
    gap = math.sqrt(2 * math.log(p)) + 0.5
    for model, (mean, sd), sd_one in (
        (x.h, sim["h"], sim["sd_words"]),
        (x.count, sim["count"], sim["sd_requests"]),
        (x.received_most, sim["placed"], sim["sd_placed"]),
    ):
        assert mean - gap * sd_one - 3 * sd / root - 0.5 <= model <= mean + 0.005 * mean + 3 * sd / root + 0.5, (
            model,
            mean,
            sd_one,
        )
    mean, sd = sim["msg_words"]
    assert x.msg_words == pytest.approx(mean, rel=0.01, abs=3 * sd / root)
    assert x.h_low <= sim["h"][0] <= x.h_high


@pytest.mark.parametrize("variant", ["plain", "combined"])
@pytest.mark.parametrize(("n", "p", "R", "key_bytes", "samples"), RDX_SIMULATED[:4])
def test_rdxsort_expectation_against_simulation(
    n: int, p: int, R: int, key_bytes: int, samples: int, variant: str
) -> None:
    check_against_simulation(n, p, R, key_bytes, samples, variant)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["plain", "combined"])
@pytest.mark.parametrize(
    ("n", "p", "R", "key_bytes", "samples"), RDX_SIMULATED[4:] + [(2**22, 1024, 256, 4, 4), (2**22, 256, 256, 4, 8)]
)
def test_rdxsort_expectation_against_simulation_more(
    n: int, p: int, R: int, key_bytes: int, samples: int, variant: str
) -> None:
    check_against_simulation(n, p, R, key_bytes, samples, variant)


@needs_rdxsort
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_rdxsort_exact_where_nothing_depends_on_the_keys(variant: str) -> None:
    """One process (no communication) and equal keys (every piece stays): every superstep."""
    for p, extra in ((1, ()), (3, ("--dist", "equal")), (4, ("--dist", "equal", "--key-bits", "64", "--bits", "13"))):
        run = run_driver(RDXSORT, p, "--variant", variant, "--size", "20001", *extra, "--no-check")
        cost = closed_form(VARIANTS[variant], run["params"], p)
        assert_exact(run, cost)
        assert not cost.notes


@needs_rdxsort
def test_rdxsort_primitive_labels_the_key_exchange() -> None:
    run = run_driver(RDXSORT, 2, "--variant", "plain", "--size", "5001", "--primitive", "hpput")
    assert_exact_but_expected(run, closed_form("rdxsort", run["params"], 2))
    assert closed_form("rdxsort-combined", {}, 2).problem["primitive"] == "hpput"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_rdxsort_2_30_keys_at_p_1024(variant: str) -> None:
    """The brief's n = 2^30 at p = 1024: the paper's total exchange, h -> (1 - 1/p)(n/p) k
    (within 1 %), between the bounds; W = rounds (2 n/p + p R) (+ the placing)."""
    n, p = 1 << 30, 1024
    cost = closed_form(VARIANTS[variant], {"n": n}, p)
    assert cost.problem == {
        "n": n,
        "bits": 8,
        "key_bits": 32,
        "rounds": 4,
        "dist": "uniform",
        "primitive": "hpput" if variant == "combined" else "put",
    }
    assert cost.S == 8
    exchanges = [k for k in cost.steps if k.kind == "key exchange"]
    assert len(exchanges) == 4
    for k in exchanges:
        assert k.h == pytest.approx((1 - 1 / p) * n / p / 2, rel=0.01)
        assert k.h_low <= k.h <= k.h_high
    placing = (1 - 1 / p) * n / p if variant == "combined" else 0
    work = cost.W
    assert work == pytest.approx(4 * (2 * n / p + p * 256) + placing, rel=1e-3)


def test_rdxsort_refuses_skewed_keys() -> None:
    for dist in ("zipf", "sorted", "few-distinct"):
        with pytest.raises(CostError, match="only uniform"):
            closed_form("rdxsort", {"n": 1000, "dist": dist}, 4)
    with pytest.raises(CostError, match="key_bits"):
        closed_form("rdxsort", {"key_bits": 48}, 4)
    with pytest.raises(CostError, match="rounds"):
        closed_form("rdxsort", {"bits": 8, "rounds": 3}, 4)
