"""The BSP cost of bspalg-llcs (algorithms/llcs/llcs.c): the LLCS of two strings by the
blocked wavefront of the thesis' chapter 5 (Fig. 5.2-5.4), with the dynamic-programming
kernel ("llcs-dp", Fig. 5.3) or the bit-parallel one ("llcs-bitpar", Fig. 5.7). Every count
is data-independent, so the model is exact: its supersteps are the driver's, superstep by
superstep, for any sizes.

Problem (the driver's JSON "params"): m (string a, split into block columns), n (string b),
alpha, alphabet, kernel, schedule ("antidiagonal", the default, or "thesis"). Defaults as the driver's options: m = n = 100000 (`--size`; one of
them alone sets both, as `--size N` does), alphabet 4, and alpha as `default_alpha` of llcs.c:

    alpha = max(ceil(alpha_cache), 16), at most `most`, at least 1, with
      dp:     alpha_cache = 5 m / (p b)                 (eq. 5.4, b = 256 KiB: a 32-bit L
              most = min(m, n) / (256 p)                 value and a character per column)
      bitpar: alpha_cache = (1 + sigma) n / (8 p b)      (V and sigma match masks per row)
              most = min(ceil(n / 64) / (16 p), m / (256 p))

Grid. G = alpha p block columns and rows; block column x covers a[m x / G, m (x + 1) / G)
(floor), block row y the rows [u y / G, u (y + 1) / G) of u = n (dp) or u = ceil(n / 64) words
of V (bitpar: cells_y = min(n, 64 (its last word + 1)) - 64 (its first word), so the last
block row may hold fewer than 64 rows per word). Process s owns the block columns x = s mod p.

Supersteps of the antidiagonal schedule (README.md of the driver; thesis Fig. 5.4 with one
superstep per anti-diagonal):
  d = 0 .. 2G - 2: every process computes its blocks (x, y), x + y = d, and puts each block's
      right boundary (x < G - 1) to process (x + 1) mod p, one put per block (pattern
      "shift"; no request for an empty boundary). Per superstep, with the block work
      b(x, y) = cols_x cells_y and the boundary words beta_y = ceil(u_y / 2) (dp: 32-bit
      values) or u_y (bitpar: 64-bit words):
        w = max_s sum_{x = s mod p, x + y = d} b(x, y)
        h = max_s sum_{x = s mod p, x + y = d, x < G - 1} beta_y   (p > 1; process s + 1
            receives exactly what s sends, so max(sent, received) = sent)
        count = the most boundaries one process sends, msg_words = words / requests
        h_inout (eq. 2.2) = max_s (sent_s + sent_{s-1}): s receives what s - 1 sends
      The last one (d = 2G - 2) sends nothing and is unlabelled; with p = 1 none is labelled.
  2G - 1: the owner of block column G - 1, (G - 1) mod p, puts the LLCS (one word) to process
      0: h = count = msg_words = 1 unless that owner is process 0; w = 0; h_inout = 1 (one
      process sends the word, another receives it).

Closed forms when the sizes divide (m and u multiples of G, and for bitpar n = 64 u), with
b_m = m / G, b_n = n / G and c_d = min(d + 1, 2G - 1 - d) blocks on anti-diagonal d, of which
c'_d = min(d + 1, G - 1, 2G - 2 - d) send (thesis eq. 5.2 and 5.3/5.5 as README.md derives):
    w_d = b_m b_n ceil(c_d / p),   h_d = beta ceil(c'_d / p),
    h_inout_d = beta (2 floor(c'_d / p) + min(c'_d mod p, 2))   (p > 1: the senders lie at
      consecutive x, so the c'_d mod p processes with one boundary more are neighbours)
    W = b_m b_n (p alpha (alpha + 1) - alpha)                                       (eq. 5.2)
    H = beta (p alpha (alpha + 1) - 2 alpha) + [p > 1],  beta = b_n / 2 (dp), b_n / 64 (bitpar)
    S = 2 G = 2 alpha p
and T = f W + g H + l S (eq. 5.3, 5.5: f' of the bit-parallel kernel). Where the sizes divide
the model uses these per-superstep closed forms (O(G), a few dozen StepKinds: runs of equal
supersteps are one); otherwise it sums each anti-diagonal's blocks per process (O(G) per
superstep, numpy: 0.4 s for dp at n = 10^6, p = 1024, G = 3072).

The thesis' schedule (--schedule thesis: Fig. 5.4 as written, seed 000 lines 1038-1064; b
dealt by block rows, block row y on process y mod p). Iteration j = diag alpha + block, j < N =
alpha (2G - 1): process t's block is x = block p + t, y = diag - x (Fig. lines 4-5), if y is in
0 .. G-1. Superstep i = 0 .. N - 1 computes iteration i - 1's blocks and puts their boundaries
(x < G - 1) to t + 1 (beta_y words), then fetches iteration i's parts of b (gamma_y =
ceil(rows_y / 8) words, bsp_hpget) from their owners y mod p (none where that is t); per
process t: sent_t = its boundary + the part it serves, received_t = t - 1's boundary + the part
it fetches, and
    w_i = max_t b(x, y),  h_i = max_t max(sent_t, received_t),  h_inout_i = max_t (sent + received),
    count_i = max_t requests issued, msg_words = words / requests,
    label: ("put", "shift") where the boundaries move more words, all processes together (on a
      tie too), ("hpget", "permutation") where the parts of b do (t reads from (diag - t) mod
      p), none where nothing moves.
Then the block of iteration N - 1, (G - 1, G - 1): dp: local work after the last sync (sync
false; left out when the block is empty, as the driver leaves out an unused record), the LLCS
stays on process (G - 1) mod p; bitpar: one superstep more (eq. 5.5's), with the answer's word
to process 0 as above. Where the sizes divide (b = n / G, beta = b / 2 or b / 64, gamma =
ceil(b / 8)):
    W = b^2 (p alpha (alpha + 1) - alpha)                                          (eq. 5.2)
    S = alpha (2 alpha p - 1) (dp, eq. 5.3), alpha (2 alpha p - 1) + 1 (bitpar, eq. 5.5)
    H = beta (p alpha (alpha + 1) - alpha - 1) + gamma c + [bitpar],  p > 1,
        c = alpha (p alpha + p - 3) (p >= 3), alpha^2 (p = 2: on even anti-diagonals every
        part of b is local)
(tests/python/test_llcs_thesis.py). The model evaluates the per-superstep forms over
(iterations x processes) arrays, 2^20 at a time: 1 s for dp at n = 10^6, p = 1024.

Work unit: the cell. No f kernel of the probe matches the LLCS kernels (f_kernel None; the
driver's --measure-f times its own kernel).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bspkit.model.costs import Cost, CostError, StepKind

# Defaults and limits of llcs.c.
DEFAULT_LENGTH = 100000
DEFAULT_ALPHABET = 4
MAX_LENGTH = 1 << 30
MAX_ALPHA = 1000000
MAX_GRID = 1 << 26
CACHE_BYTES = 256 * 1024  # LLCS_CACHE_BYTES: b of eq. 5.4
ALPHA_FLOOR = 16
WORD_BYTES = 8

KERNELS = {"llcs-dp": "dp", "llcs-bitpar": "bitpar"}
SCHEDULES = ("antidiagonal", "thesis")  # --schedule: the first is the default


def default_alpha(m: int, n: int, p: int, kernel: str, sigma: int) -> int:
    """llcs.c's default_alpha: eq. 5.4 for a 256 KiB cache, at least 16, blocks at least 256
    cells (dp) or 16 words (bitpar) high and 256 columns wide, at least 1."""
    if kernel == "dp":
        want = 5.0 * m / (p * CACHE_BYTES)
        most = min(m, n) // (256 * p)
    else:
        want = (1.0 + sigma) * n / (8.0 * p * CACHE_BYTES)
        most = min((n + 63) // 64 // (16 * p), m // (256 * p))
    alpha = max(math.ceil(want), ALPHA_FLOOR)
    return max(min(alpha, most), 1)


def _integer(problem: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = problem.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise CostError(f"LLCS: {key} must be an integer, not {value!r}")
    if not low <= int(value) <= high:
        raise CostError(f"LLCS: {key} must be in {low}..{high} (the driver's range), not {value}")
    return int(value)


def fill_problem(algorithm: str, problem: Mapping[str, Any], p: int) -> dict[str, Any]:
    """The driver's params for this problem at p processes, its defaults filled in."""
    kernel = KERNELS.get(algorithm)
    if kernel is None:
        raise CostError(f"bspkit.model.costs.llcs models {', '.join(KERNELS)}, not '{algorithm}'")
    if problem.get("kernel") not in (None, kernel):
        raise CostError(f"{algorithm} runs the {kernel} kernel, not '{problem['kernel']}'")
    given_m, given_n = problem.get("m"), problem.get("n")
    both = {**problem, "m": given_m if given_m is not None else given_n}
    both["n"] = given_n if given_n is not None else both["m"]
    m = _integer(both, "m", DEFAULT_LENGTH, 1, MAX_LENGTH)
    n = _integer(both, "n", DEFAULT_LENGTH, 1, MAX_LENGTH)
    sigma = _integer(problem, "alphabet", DEFAULT_ALPHABET, 1, 256)
    alpha = _integer(problem, "alpha", 0, 1, MAX_ALPHA) or default_alpha(m, n, p, kernel, sigma)
    schedule = problem.get("schedule") or SCHEDULES[0]
    if schedule not in SCHEDULES:
        raise CostError(f"LLCS: schedule must be {' or '.join(SCHEDULES)}, not {schedule!r}")
    G = alpha * p
    if problem.get("G") is not None and problem["G"] != G:
        raise CostError(f"LLCS: G = {problem['G']} is not alpha p = {alpha} x {p}")
    if G > MAX_GRID:
        raise CostError(f"LLCS: the grid G = alpha p = {G} is too large for the driver (at most 2^26)")
    return {"m": m, "n": n, "alpha": alpha, "G": G, "alphabet": sigma, "kernel": kernel, "schedule": schedule}


class _Grid:
    """The block grid of llcs.c: column widths, cells per block row, words per boundary."""

    def __init__(self, m: int, n: int, G: int, kernel: str):
        units = n if kernel == "dp" else (n + 63) // 64
        edges = np.arange(G + 1, dtype=np.int64)
        col = m * edges // G  # m G <= 2^56: exact in int64
        row = units * edges // G
        self.cols = np.diff(col)
        units_y = np.diff(row)
        if kernel == "dp":
            self.cells = units_y
            self.words = (units_y * 4 + WORD_BYTES - 1) // WORD_BYTES
        else:
            self.cells = np.clip(np.minimum(n, 64 * row[1:]) - 64 * row[:-1], 0, None)
            self.words = units_y  # 8-byte words of V
        self.b_words = (self.cells + WORD_BYTES - 1) // WORD_BYTES  # a block row of b, a byte a character
        self.uniform = bool((self.cols == self.cols[0]).all() and (self.cells == self.cells[0]).all())


def _wavefront_uniform(grid: _Grid, G: int, p: int) -> tuple[np.ndarray, ...]:
    """Per anti-diagonal (w, h, count, words, requests, h_inout) when every block is the same."""
    d = np.arange(2 * G - 1, dtype=np.int64)
    blocks = np.minimum(d + 1, 2 * G - 1 - d)
    senders = np.minimum(np.minimum(d + 1, G - 1), 2 * G - 2 - d)
    busiest = -(-blocks // p)
    sending = -(-senders // p) if p > 1 else np.zeros_like(d)
    beta = int(grid.words[0])
    w = busiest * int(grid.cols[0]) * int(grid.cells[0])
    requests = senders if p > 1 else np.zeros_like(d)
    inout = 2 * (senders // p) + np.minimum(senders % p, 2) if p > 1 else np.zeros_like(d)
    return w, sending * beta, sending, requests * beta, requests, inout * beta


def _wavefront_general(grid: _Grid, G: int, p: int) -> tuple[np.ndarray, ...]:
    """Per anti-diagonal (w, h, count, words, requests, h_inout) from the blocks themselves:
    the blocks of one anti-diagonal lie at consecutive x, so process s's are those at
    positions i = s - x_lo (mod p) along it; a padded reshape to rows of p sums them per
    process, and the process at position i receives what the one at i - 1 (mod p) sends."""
    steps = 2 * G - 1
    w = np.zeros(steps, dtype=np.float64)
    h = np.zeros(steps, dtype=np.int64)
    count = np.zeros(steps, dtype=np.int64)
    words = np.zeros(steps, dtype=np.int64)
    requests = np.zeros(steps, dtype=np.int64)
    inout = np.zeros(steps, dtype=np.int64)
    cols = grid.cols.astype(np.float64)
    cells = grid.cells.astype(np.float64)
    beta = grid.words
    for d in range(steps):
        lo, hi = max(0, d - G + 1), min(d, G - 1)
        xs = np.arange(lo, hi + 1)
        work = cols[xs] * cells[d - xs]
        send = beta[d - xs] * (xs < G - 1) if p > 1 else np.zeros(len(xs), dtype=np.int64)
        if len(xs) <= p:
            w[d] = work.max()
            h[d] = send.max()
            count[d] = 1 if (send > 0).any() else 0
        else:
            pad = -len(xs) % p
            w[d] = np.pad(work, (0, pad)).reshape(-1, p).sum(axis=0).max()
            h[d] = np.pad(send, (0, pad)).reshape(-1, p).sum(axis=0).max()
            count[d] = np.pad(send > 0, (0, pad)).reshape(-1, p).sum(axis=0).max()
        if p > 1:
            per_process = np.pad(send, (0, -len(xs) % p)).reshape(-1, p).sum(axis=0)
            inout[d] = (per_process + np.roll(per_process, 1)).max()
        words[d] = send.sum()
        requests[d] = (send > 0).sum()
    return w, h, count, words, requests, inout


def _runs(columns: tuple[np.ndarray, ...]) -> list[tuple[int, int]]:
    """(start, length) of the runs of equal rows across the columns."""
    n = len(columns[0])
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for c in columns:
        change[1:] |= c[1:] != c[:-1]
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], n)
    return [(int(a), int(b - a)) for a, b in zip(starts, ends, strict=True)]


def _number(x: Any) -> float:
    """An int where the value is whole (the counts print as the driver's)."""
    value = float(x)
    return int(value) if value.is_integer() else value


# Labels of the thesis' supersteps: nothing moves, the boundaries dominate, the parts of b do.
_THESIS_LABELS = ((None, None), ("put", "shift"), ("hpget", "permutation"))
_CHUNK = 1 << 20  # (iterations x processes) computed at once


def _thesis_iterations(grid: _Grid, G: int, p: int, alpha: int, j0: int, j1: int) -> tuple[np.ndarray, ...]:
    """Fig. 5.4's iterations j0 .. j1 - 1, per process t (arrays j x p): the work of t's block,
    the words of the boundary it puts to t + 1, the words of b it fetches, and from whom."""
    j = np.arange(j0, j1, dtype=np.int64)[:, None]
    t = np.arange(p, dtype=np.int64)[None, :]
    x = (j % alpha) * p + t  # lines 4-5, from 0
    y = j // alpha - x
    valid = (y >= 0) & (y < G)
    yc = np.clip(y, 0, G - 1)
    work = np.where(valid, grid.cols[x] * grid.cells[yc], 0).astype(np.float64)
    owner = y % p  # of block row y of b; for a fixed j an injection of t
    if p > 1:
        put = np.where(valid & (x < G - 1), grid.words[yc], 0)
        fetch = np.where(valid & (owner != t), grid.b_words[yc], 0)
    else:
        put = fetch = np.zeros_like(work, dtype=np.int64)
    return work, put, fetch, owner


def _thesis_supersteps(grid: _Grid, G: int, p: int, alpha: int) -> tuple[np.ndarray, ...]:
    """Per thesis superstep i = 0 .. N - 1 (it computes and puts iteration i - 1, fetches for
    iteration i) (w, h, count, words, requests, h_inout, label), and the work of iteration
    N - 1 (done after the last of them)."""
    N = alpha * (2 * G - 1)
    columns = [np.zeros(N, dtype=np.float64) for _ in range(7)]
    w_col, h_col, count_col, words_col, requests_col, inout_col, label_col = columns
    step = max(1, _CHUNK // p)
    rows = np.arange(step + 1)[:, None]
    for i0 in range(0, N, step):
        i1 = min(N, i0 + step)
        work, put, fetch, owner = _thesis_iterations(grid, G, p, alpha, max(i0 - 1, 0), i1)
        if i0 == 0:  # superstep 0 computes and puts nothing
            pad = np.zeros((1, p))
            work, put = np.vstack([pad, work]), np.vstack([pad, put]).astype(np.int64)
        work, put = work[:-1], put[:-1]  # iteration i - 1 ...
        fetch, owner = fetch[1:] if i0 > 0 else fetch, owner[1:] if i0 > 0 else owner  # ... and i
        served = np.zeros_like(fetch)
        served[rows[: len(fetch)], owner] = fetch
        sent = put + served
        recv = np.roll(put, 1, axis=1) + fetch
        sl = slice(i0, i1)
        w_col[sl] = work.max(axis=1)
        h_col[sl] = np.maximum(sent, recv).max(axis=1)
        inout_col[sl] = (sent + recv).max(axis=1)
        count_col[sl] = ((put > 0).astype(np.int64) + (fetch > 0)).max(axis=1)
        put_words, get_words = put.sum(axis=1), fetch.sum(axis=1)
        words_col[sl] = put_words + get_words
        requests_col[sl] = (put > 0).sum(axis=1) + (fetch > 0).sum(axis=1)
        label_col[sl] = np.where((put_words > 0) & (put_words >= get_words), 1, np.where(get_words > 0, 2, 0))
    last_work, *_ = _thesis_iterations(grid, G, p, alpha, N - 1, N)
    return (*columns, np.array([last_work.max()]))


def _thesis_cost(algorithm: str, filled: dict[str, Any], p: int, grid: _Grid) -> Cost:
    """Fig. 5.4 as the driver runs it with --schedule thesis (see the module's docstring)."""
    G, alpha, kernel = filled["G"], filled["alpha"], filled["kernel"]
    *columns, last_work = _thesis_supersteps(grid, G, p, alpha)
    w, h, count, words, requests, inout, label = columns
    msg_words = np.divide(words, requests, out=np.zeros(len(w)), where=requests > 0)
    steps: list[StepKind] = []
    for start, length in _runs((w, h, count, msg_words, inout, label)):
        primitive, pattern = _THESIS_LABELS[int(label[start])]
        steps.append(
            StepKind(
                "block iteration",
                length,
                _number(w[start]),
                _number(h[start]),
                _number(count[start]),
                _number(msg_words[start]),
                primitive,
                pattern,
                h_inout=_number(inout[start]),
            )
        )
    last = _number(last_work[0])
    if kernel == "dp":  # the last block after the last sync; the LLCS stays on its owner
        if last > 0:
            steps.append(StepKind("last block, after the last sync", 1, last, 0, 0, 0, sync=False, h_inout=0))
    else:  # eq. 5.5's additional superstep: the last block, the LLCS to process 0
        sends = (G - 1) % p != 0
        label_put = ("put", "shift") if sends else (None, None)
        steps.append(
            StepKind(
                "last block, answer to process 0",
                1,
                last,
                int(sends),
                int(sends),
                int(sends),
                *label_put,
                h_inout=int(sends),
            )
        )
    return Cost(algorithm, p, filled, "cell", None, tuple(steps))


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The closed-form cost of llcs-dp or llcs-bitpar on `problem` at p processes."""
    filled = fill_problem(algorithm, problem, p)
    m, n, G, kernel = filled["m"], filled["n"], filled["G"], filled["kernel"]
    grid = _Grid(m, n, G, kernel)
    if filled["schedule"] == "thesis":
        return _thesis_cost(algorithm, filled, p, grid)
    columns = _wavefront_uniform(grid, G, p) if grid.uniform else _wavefront_general(grid, G, p)
    w, h, count, words, requests, inout = columns
    msg_words = np.divide(words, requests, out=np.zeros(len(w)), where=requests > 0)
    last = 2 * G - 2  # the last anti-diagonal sends nothing and is not labelled
    labelled = np.arange(2 * G - 1) < last if p > 1 else np.zeros(2 * G - 1, dtype=bool)
    steps: list[StepKind] = []
    for start, length in _runs((w, h, count, msg_words, labelled, inout)):
        steps.append(
            StepKind(
                "wavefront",
                length,
                _number(w[start]),
                _number(h[start]),
                _number(count[start]),
                _number(msg_words[start]),
                "put" if labelled[start] else None,
                "shift" if labelled[start] else None,
                h_inout=_number(inout[start]),
            )
        )
    owner = (G - 1) % p
    sends = owner != 0
    steps.append(
        StepKind(
            "answer to process 0",
            1,
            0,
            int(sends),
            int(sends),
            1 if sends else 0,
            "put" if sends else None,
            "shift" if sends else None,
            h_inout=int(sends),
        )
    )
    return Cost(algorithm, p, filled, "cell", None, tuple(steps))
