"""The BSP cost of bspalg-lu (algorithms/lu/lu.c on algorithms/bsp2d): LU with partial
pivoting of an n x n matrix on an M x N process grid, after Horvitz & Bisseling, "Designing a
BSP version of ScaLAPACK", sec. 2 (the pivot search with replicated outputs, 2.1; the
two-phase broadcast, 2.2; all row interchanges of a stage in one superstep, 2.3). Every
superstep is exact but the one holding a stage's row interchanges, whose h, request count
and h* depend on where the pivots are: there the model gives the expectation for a random
matrix (source "expected") between exact bounds.

This is the cost of bspkit.model.costs.lu_reference (its docstring derives every count; it builds each
superstep process by process and is the reference the tests compare with up to 8 x 8 grids)
computed per stage from the grid's rows and columns only, O(stages (M + N)) plus one entry
per superstep, and with what lu_cost leaves out: each superstep's requests (count, the most
one process issues) and h* (msg_words: all words over all requests), as the driver counts
them.

Problem (the driver's "params"): n (default 1000, at most 200000), nb (default 64, at most
4096), grid_rows x grid_cols (default: the grid closest to square with rows <= cols, as the
driver's mm_grid picks it: 1 x 2 at p = 2, 2 x 2 at 4, 32 x 32 at 1024). Notation as
lu_cost: p = M N, stage k factors the columns J = [j0, j1), w = j1 - j0 = min(nb, n - j0), on
process column tc = k mod N, its diagonal block on process row sr = k mod M; rows(s, i) are
the rows >= i of process row s, cols(t, i) the columns >= i of process column t.

Work (flops), per process and stage (lu_cost; the max over processes of a superstep's):
  panel  M = 1: sum_{c < w} (m - c - 1)(1 + 2 (w - c - 1)), m = n - j0, in closed form
         (a - b)(b + 1)^2 + b (b + 1) / 2 + b (b + 1)(2 b + 1) / 3 with a = m - 1, b = w - 1;
         M > 1: column c on (s, tc): rows(s, j0 + c + 1)(1 + 2 (w - c - 1)); the max over s is
         max(max_{s != sr} rows(s, j0), rows(sr, j0) - c - 1) (the stage's rows are sr's);
  dtrsm  w (w - 1) cols(t, j1) on process row sr;
  dgemm  2 w rows(s, j1) cols(t, j1): its max is 2 w max_s rows(s, j1) max_t cols(t, j1).

Supersteps of stage k, in the driver's order (all labelled hpput / alltoall):
  M > 1: pivot c = 0 .. w - 1 (w: the dgemm of stage k - 1 for c = 0, else the panel's column
         c - 1), h = (M - 1)(2 w + 3) + 3 M (N - 1), count = p + M - 2 (each of column tc's M
         processes puts its candidate to the p - 1 others, the owner of row j adds row j to
         the M - 1 of its column), msg_words = (M ((M - 1)(w + 3) + 3 (p - M)) + (M - 1) w)
         / (M (p - 1) + M - 1);
         swap (expected): the panel broadcast's first phase and the row interchanges,
         w = max_s rows(s, j1);
         panel (N > 2): the broadcast's second phase, w = 0;
         U (1 or 2, M > 2 two-phase): the broadcast of U12 in each process column, the first
         with the dtrsm.
  M = 1: panel (1 or 2, N > 2 two-phase): the panel broadcast in the process row, the first
         holding the panel's dgetrf on (0, tc) and the dtrsm and dgemm of stage k - 1.
  p = 1: no superstep; all the work after the last sync (sync False), 2/3 n^3 - n^2/2 - n/6.

Broadcasts (BSP2D, Horvitz & Bisseling sec. 2.2) of D words from member `root` over q: q = 2,
the root puts all of it (h = D, one request when D > 0). q > 2: 8 D bytes cut into q pieces,
base = floor(8 D / q) bytes and one more for the first rem = 8 D mod q pieces, piece r
c_r = ceil(bytes / 8) words (two sizes, hi and lo, non-increasing in r); with T = sum c_r:
  phase 1: the root puts c_r to member r != root: h = max(T - c_root, max_{r != root} c_r);
  phase 2: member r puts c_r to every member but itself and the root:
           h = max((q - 1) c_root, (q - 2) max_{r != root} c_r, T - min_{r != root} c_r);
  a piece of 0 bytes is no request (bsp2d's put_bytes). The panel broadcast in process row s:
  D = 1 + nb + w rows(s, j0) (the stage's singular column and nb pivots, then the panel); the
  U broadcast in process column t: D = w cols(t, j1).

The swap superstep (M > 1). The stage's r distinct pivot rows below J move into J and as many
rows of J out (lu_cost): process row q != sr exchanges c_q rows with sr each way, sr exchanges
X = sum_{q != sr} c_q, a row being width(t) = cols(t, 0) - [t = tc] w words. With e(s, t) the
first phase's max(sent, received):
  h = max_{s,t} (e(s, t) + c_s width(t)),   c_sr = X
Both e(s, t) over t != tc and width(t) fall with t (BSP2D's pieces, and block-cyclic columns:
coordinate 0 holds the most), so the max over t is at tc or at t* = the first t != tc: O(M).
  (a stage without rows below J off process row sr, the last ones, moves no row across process
  rows: its swap superstep is exact;)
  h_low: no row moves (every pivot in J or on process row sr): max e;
  h_high: c_q = min(w, rows(q, j1)), X = min(w, sum_{q != sr} rows(q, j1));
  expected: for a random matrix every row >= j is equally likely the pivot of column j, so a
    row below J is a pivot of the stage with probability w / (n - j0) and E c_q = rows(q, j1)
    w / (n - j0); h the max over (s, t) of e + E c_s width(t) (the max of the expectations,
    as lu_cost: below the expected max; the swaps' counted h summed over a run at n = 600 was
    0.95-1.02 of it on grids 2 x 1 .. 8 x 1, test_closed_forms_rest);
  count: process (q, t) puts its rows to (sr, t) when c_q > 0 (and width(t) > 0), (sr, t) to
    every such (q, t), the first phase's root its pieces; P(c_q > 0) = 1 - prod_{j in J}
    (1 - rows(q, j1) / (n - j)) (a ratio of Gamma functions), count the max over (s, t) of the
    expected requests, msg_words = E words / E requests, E words = (first phase) + 2 E X (n - w).

h_inout (thesis eq. 2.2: the max over processes of words sent + words received), per kind:
  pivot: the owner of row j sends h and receives its column's M - 1 candidates with their
         rows, (M - 1)(3 + w): h_inout = 3 (M - 1)(w + 2) + 3 M (N - 1) (any other process of
         column tc: (M - 2) w less; the others receive 3 M);
  broadcasts: q = 2 and phase 1 are one-sided (the root sends, the others receive): h_inout =
         h; phase 2: the root sends (q - 1) c_root, member r sends (q - 2) c_r and receives
         T - c_r: h_inout = max((q - 1) c_root, T + (q - 3) max_{r != root} c_r);
  swap: each process of row q != sr sends and receives its c_q rows, those of row sr X:
         h_inout = max_{s,t} (e(s, t) + 2 c_s width(t)), expected as h is (e one-sided).

Totals in closed form for n divisible by nb M and nb N: lu_cost.closed_form_totals. Work
unit: the flop; the probe's nearest f kernel: matmul_double_blas (dgemm dominates, OpenBLAS).

The algorithmic block size nb' (the driver's --nb-alg, params nb_alg; Horvitz & Bisseling,
seed 004_9153cb2414fc3490.txt line 50: "nb' can be any multiple of nb", line 74: with
nb' = 2 nb two process columns take part in one algorithmic block). cost() models nb' = nb;
for nb' > nb algorithmic_supersteps gives every superstep's kind, S exactly, and the exact h
of the panel's supersteps. A block J = [j0, j1) of w' = j1 - j0 > nb columns runs the stages of
its nb-blocks (the same supersteps as above: the pivot supersteps' h depends on w, M and N
only, the panel broadcast's D on w and rows(s, j0) only; their swaps and U broadcasts cover
J's columns alone), then
  alg swap + L (max([M > 1], C(N)) supersteps): J's interchanges outside J and the allreduce
      of L(rows >= j0, J) over each process row;
  alg U (C(M)): the allreduce of rows J of A12 and L11 over each process column;
a block of at most nb columns (the last one, or nb' = nb) is a stage as above.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bspkit.model.costs import Cost, CostError, StepKind

DEFAULT_N = 1000
DEFAULT_NB = 64
MAX_N = 200000
MAX_NB = 4096
WORD_BYTES = 8
PANEL_HEADER_WORDS = 1  # the stage's singular column; then nb pivots
CANDIDATE_WORDS = 3  # a pivot candidate's value, row and whether it carries row j
LABEL = ("hpput", "alltoall")  # every sync of lu.c (sync_now and the broadcasts')
F_KERNEL = "matmul_double_blas"


def closest_square_grid(p: int) -> tuple[int, int]:
    """mm_grid of algorithms/matmul: rows = the largest divisor of p with rows^2 <= p."""
    rows = max(d for d in range(1, int(p**0.5) + 2) if d * d <= p and p % d == 0)
    return rows, p // rows


def _integer(problem: Mapping[str, Any], key: str, default: int | None, low: int, high: int) -> int | None:
    value = problem.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise CostError(f"LU: {key} must be an integer, not {value!r}")
    if not low <= int(value) <= high:
        raise CostError(f"LU: {key} must be in {low}..{high} (the driver's range), not {value}")
    return int(value)


def fill_problem(problem: Mapping[str, Any], p: int) -> dict[str, Any]:
    """The driver's params at p processes, defaults filled in (the grid as mm_grid picks it)."""
    n = _integer(problem, "n", DEFAULT_N, 1, MAX_N)
    nb = _integer(problem, "nb", DEFAULT_NB, 1, MAX_NB)
    rows = _integer(problem, "grid_rows", None, 1, p)
    cols = _integer(problem, "grid_cols", None, 1, p)
    if rows is None and cols is None:
        rows, cols = closest_square_grid(p)
    elif rows is None or cols is None:
        given = rows or cols
        assert given is not None
        if p % given:
            raise CostError(f"LU: a grid with {given} process rows or columns needs p divisible by it, not {p}")
        rows, cols = (given, p // given) if rows else (p // given, given)
    if rows * cols != p:
        raise CostError(f"LU: the grid {rows}x{cols} needs {rows * cols} processes, not {p}")
    assert n is not None and nb is not None
    nb_alg = _integer(problem, "nb_alg", nb, 1, 65536)
    assert nb_alg is not None
    if nb_alg % nb:
        raise CostError(f"LU: nb_alg must be a multiple of nb = {nb}, not {nb_alg}")
    stages = -(-n // nb)
    if problem.get("stages") is not None and problem["stages"] != stages:
        raise CostError(f"LU: n = {n} and nb = {nb} make {stages} stages, not {problem['stages']}")
    return {"n": n, "nb": nb, "nb_alg": nb_alg, "grid_rows": rows, "grid_cols": cols, "stages": stages}


def owned(n: int, nb: int, parts: int, coord: Any, start: Any) -> np.ndarray:
    """The indices in [start, n) on grid coordinate `coord`, nb-blocks dealt cyclically over
    `parts` (numpy broadcasting over coord and start)."""
    cycle = nb * parts
    coord = np.asarray(coord, dtype=np.int64)

    def before(x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=np.int64)
        return np.asarray(x // cycle * nb + np.clip(x % cycle - coord * nb, 0, nb))

    return np.asarray(before(n) - before(np.minimum(start, n)))


@dataclass
class _Broadcast:
    """One phase of a broadcast in every scope (process row or column) of every stage: per
    (stage, scope) the h, the most requests of one member, all words and all requests; for the
    swap superstep also the root's and the first non-root member's max(sent, received) and the
    root's requests; h_inout, the max over members of sent + received (eq. 2.2)."""

    h: np.ndarray
    count: np.ndarray
    words: np.ndarray
    requests: np.ndarray
    root_e: np.ndarray
    first_e: np.ndarray
    root_requests: np.ndarray
    h_inout: np.ndarray


def broadcast(D: np.ndarray, q: int, root: np.ndarray, phase: int) -> _Broadcast:
    """Phase `phase` (0 or 1) of BSP2D's broadcast of D[k, scope] words from member root[k]
    over q >= 2 members (bsp2d_bcast_start, bcast_second_phase)."""
    D = np.asarray(D, dtype=np.int64)
    root = np.broadcast_to(np.asarray(root, dtype=np.int64).reshape(-1, 1), D.shape)
    if q == 2:  # direct: the root puts all of it, the other member receives it
        sends = (D > 0).astype(np.int64)
        return _Broadcast(D, sends, D, sends, D, D, sends, D)
    nbytes = D * WORD_BYTES
    base, rem = nbytes // q, nbytes % q
    hi, lo = (base + 1 + WORD_BYTES - 1) // WORD_BYTES, (base + WORD_BYTES - 1) // WORD_BYTES
    root_hi = root < rem
    c_root = np.where(root_hi, hi, lo)
    total = rem * hi + (q - rem) * lo
    others_hi = rem - root_hi
    others_lo = (q - rem) - ~root_hi
    most = np.where(others_hi > 0, hi, lo)  # the largest piece of a member but the root
    least = np.where(others_lo > 0, lo, hi)
    others_requests = others_hi * (hi > 0) + others_lo * (lo > 0)
    first = np.where(root == 0, 1, 0)  # t*: the first member that is not the root
    first_e = np.where(first < rem, hi, lo)
    if phase == 0:
        sent = total - c_root
        h = np.maximum(sent, most)  # one-sided: the root sends, the others receive
        return _Broadcast(h, others_requests, sent, others_requests, sent, first_e, others_requests, h)
    h = np.maximum(np.maximum((q - 1) * c_root, (q - 2) * most), total - least)
    count = np.maximum((q - 1) * (c_root > 0), (q - 2) * (most > 0))
    words = (q - 1) * c_root + (q - 2) * (total - c_root)
    requests = (q - 1) * (c_root > 0) + (q - 2) * others_requests
    zeros = np.zeros_like(h)
    # member r sends (q - 2) c_r and receives T - c_r; the root sends (q - 1) c_root
    h_inout = np.maximum((q - 1) * c_root, total + (q - 3) * most)
    return _Broadcast(h, count, words, requests, zeros, zeros, zeros, h_inout)


def _lgamma(x: np.ndarray) -> np.ndarray:
    """log Gamma, elementwise (math.lgamma: numpy has none, and scipy takes long to import);
    once per distinct value (a stage's process rows hold one of few row counts)."""
    values, where = np.unique(np.asarray(x, dtype=np.float64), return_inverse=True)
    return np.array([math.lgamma(v) for v in values.tolist()])[where].reshape(np.shape(x))


def _totals(phase: _Broadcast) -> tuple[np.ndarray, ...]:
    """Per stage over its scopes: h and count (the max), words and requests (the sum), h_inout
    (the max)."""
    return (
        phase.h.max(axis=1),
        phase.count.max(axis=1),
        phase.words.sum(axis=1),
        phase.requests.sum(axis=1),
        phase.h_inout.max(axis=1),
    )


def _number(x: Any) -> float:
    """An int where the value is whole (the counts print as the driver's)."""
    value = float(x)
    return int(value) if value.is_integer() else value


def _ratio(words: Any, requests: Any) -> float:
    return _number(float(words) / float(requests)) if requests else 0


def _exact(kind: str, w: Any, h: Any, count: Any, words: Any, requests: Any, h_inout: Any) -> StepKind:
    return StepKind(
        kind, 1, _number(w), _number(h), _number(count), _ratio(words, requests), *LABEL, h_inout=_number(h_inout)
    )


def panel_flops(n: int, j0: np.ndarray, w: np.ndarray) -> np.ndarray:
    """dgetrf's flops on the panel of an M = 1 grid: sum_{c < w} (m - c - 1)(1 + 2 (w - c - 1)),
    m = n - j0 (substituting u = w - 1 - c: (a - b + u)(1 + 2 u), a = m - 1, b = w - 1)."""
    a, b = n - j0 - 1, w - 1
    return np.asarray((a - b) * (b + 1) ** 2 + b * (b + 1) // 2 + b * (b + 1) * (2 * b + 1) // 3)


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The cost of bspalg-lu on `problem` at p processes."""
    if algorithm != "lu":
        raise CostError(f"bspkit.model.costs.lu models lu, not '{algorithm}'")
    filled = fill_problem(problem, p)
    n, nb, M, N = filled["n"], filled["nb"], filled["grid_rows"], filled["grid_cols"]
    if filled["nb_alg"] != nb:
        raise CostError(
            f"LU: the cost model covers nb_alg = nb only, not {filled['nb_alg']} with nb = {nb}"
            " (algorithmic_supersteps has the supersteps of nb_alg > nb and the panel's h)"
        )
    steps, notes = supersteps(n, nb, M, N)
    return Cost(algorithm, p, filled, "flop", F_KERNEL, tuple(steps), notes)


def supersteps(n: int, nb: int, M: int, N: int) -> tuple[list[StepKind], tuple[str, ...]]:
    """Every superstep of one factorization on an M x N grid, in order, and the notes."""
    K = -(-n // nb)
    k = np.arange(K, dtype=np.int64)
    j0 = k * nb
    w = np.minimum(nb, n - j0)
    j1 = j0 + w
    tc, sr = k % N, k % M
    rows0 = owned(n, nb, M, np.arange(M), j0[:, None])  # (K, M): rows >= j0 per process row
    below = owned(n, nb, M, np.arange(M), j1[:, None])  # rows >= j1
    right = owned(n, nb, N, np.arange(N), j1[:, None])  # (K, N): columns >= j1
    full_width = owned(n, nb, N, np.arange(N), 0)  # (N,)
    dtrsm = w * (w - 1) * right.max(axis=1)
    dgemm = 2 * w * below.max(axis=1) * right.max(axis=1)
    steps: list[StepKind] = []
    if M * N == 1:
        total = (
            panel_flops(n, j0, w).sum() + (w * (w - 1) * right[:, 0]).sum() + (2 * w * below[:, 0] * right[:, 0]).sum()
        )
        steps.append(StepKind("local work after the last sync", 1, _number(total), 0, 0, 0, sync=False, h_inout=0))
        return steps, ()
    if M == 1:
        return _one_process_row(n, nb, N, K, j0, w, j1, tc, right), ()

    # M > 1: the pivot supersteps' fixed counts
    pivot_h = (M - 1) * (2 * w + CANDIDATE_WORDS) + CANDIDATE_WORDS * M * (N - 1)
    # the owner of row j: h out, and its column's M - 1 candidates with their rows in
    pivot_inout = pivot_h + (M - 1) * (CANDIDATE_WORDS + w)
    pivot_count = M * N + M - 2
    pivot_words = M * ((M - 1) * (CANDIDATE_WORDS + w) + CANDIDATE_WORDS * (M * N - M)) + (M - 1) * w
    pivot_requests = M * (M * N - 1) + M - 1
    at_sr = np.arange(M)[None, :] == sr[:, None]
    rows_sr = rows0[k, sr]
    rows_others = np.where(at_sr, -1, rows0).max(axis=1)

    # the panel broadcast in each process row (first phase in the swap superstep)
    panel_words = PANEL_HEADER_WORDS + nb + w[:, None] * rows0
    panel1 = broadcast(panel_words, N, tc, 0) if N > 1 else None
    panel2 = broadcast(panel_words, N, tc, 1) if N > 2 else None
    # the U12 broadcast in each process column
    u_words = w[:, None] * right
    u1 = broadcast(u_words, M, sr, 0)
    u2 = broadcast(u_words, M, sr, 1) if M > 2 else None
    swaps = _swap_supersteps(n, N, w, j0, tc, sr, below, full_width, panel1)

    panel_phase2 = _totals(panel2) if panel2 is not None else None
    u_phase1 = _totals(u1)
    u_phase2 = _totals(u2) if u2 is not None else None
    for stage in range(K):
        ws = int(w[stage])
        pivot = _exact(
            "pivot",
            dgemm[stage - 1] if stage else 0,
            pivot_h[stage],
            pivot_count,
            pivot_words[stage],
            pivot_requests,
            pivot_inout[stage],
        )
        steps.append(pivot)
        c = np.arange(1, ws)
        column_work = (1 + 2 * (ws - c)) * np.maximum(rows_others[stage], rows_sr[stage] - c)
        steps += [
            StepKind("pivot", 1, work, pivot.h, pivot.count, pivot.msg_words, *LABEL, h_inout=pivot.h_inout)
            for work in column_work.tolist()
        ]
        steps.append(swaps[stage])
        if panel_phase2 is not None:
            steps.append(_exact("panel broadcast", 0, *(column[stage] for column in panel_phase2)))
        steps.append(_exact("U broadcast", dtrsm[stage], *(column[stage] for column in u_phase1)))
        if u_phase2 is not None:
            steps.append(_exact("U broadcast", 0, *(column[stage] for column in u_phase2)))
    if all(step.source == "closed form" for step in steps):  # no row below a stage off its process row
        return steps, ()
    notes = (
        "the row-interchange supersteps (kind 'swap', one a stage) depend on where the pivots are: their h,"
        " count and h* are the expectation for a random matrix (each row >= j equally likely the pivot of"
        " column j; h the max over processes of the expected words), h between h_low (no row changes"
        " process row) and h_high (every pivot below the stage's block, as many on each process row as"
        " it holds); every other superstep is exact (so are the swaps of a stage with no row below its block"
        " off its process row)",
    )
    return steps, notes


def _collective(q: int) -> int:
    """The supersteps of a BSP2D broadcast or allreduce over q members (bsp2d.h)."""
    return 0 if q <= 1 else 1 if q == 2 else 2


def algorithmic_supersteps(n: int, nb: int, nb_alg: int, M: int, N: int) -> list[tuple[str, int | None]]:
    """Every superstep of one factorization with the algorithmic block size nb_alg (a multiple
    of nb), in order: its kind and, for the panel's pivot supersteps, its h (exact: the same
    (M - 1)(2 w + 3) + 3 M (N - 1) as a stage's), None for the others (module docstring)."""
    if nb_alg % nb:
        raise CostError(f"LU: nb_alg must be a multiple of nb = {nb}, not {nb_alg}")
    steps: list[tuple[str, int | None]] = []

    def stage(w: int) -> None:
        if M == 1:
            steps.extend([("panel broadcast", None)] * _collective(N))
            return
        pivot = (M - 1) * (2 * w + CANDIDATE_WORDS) + CANDIDATE_WORDS * M * (N - 1)
        steps.extend([("pivot", pivot)] * w)
        steps.append(("swap", None))
        steps.extend([("panel broadcast", None)] * (N > 2))
        steps.extend([("U broadcast", None)] * _collective(M))

    for j0 in range(0, n, nb_alg):
        j1 = min(n, j0 + nb_alg)
        for k0 in range(j0, j1, nb):
            stage(min(nb, j1 - k0))
        if j1 - j0 > nb:
            steps.extend([("alg swap + L", None)] * max(int(M > 1), _collective(N)))
            steps.extend([("alg U", None)] * _collective(M))
    return steps


def _one_process_row(
    n: int, nb: int, N: int, K: int, j0: np.ndarray, w: np.ndarray, j1: np.ndarray, tc: np.ndarray, right: np.ndarray
) -> list[StepKind]:
    """M = 1: per stage the panel broadcast's C(N) supersteps; the first holds the panel's
    dgetrf on (0, tc) and the dtrsm and dgemm of the stage before on every process."""
    panel = panel_flops(n, j0, w)
    # the previous stage's dtrsm + dgemm per process column: cols(t, j1') (w' (w' - 1) + 2 w' (n - j1'))
    before = np.zeros_like(right)
    before[1:] = right[:-1] * (w[:-1] * (w[:-1] - 1) + 2 * w[:-1] * (n - j1[:-1]))[:, None]
    before[np.arange(K), tc] += panel
    work = before.max(axis=1)
    panel_words = (PANEL_HEADER_WORDS + nb + w * (n - j0))[:, None]
    first = broadcast(panel_words, N, tc, 0)
    second = broadcast(panel_words, N, tc, 1) if N > 2 else None
    steps = []
    for stage in range(K):
        steps.append(
            _exact(
                "panel broadcast",
                work[stage],
                first.h[stage, 0],
                first.count[stage, 0],
                first.words[stage, 0],
                first.requests[stage, 0],
                first.h_inout[stage, 0],
            )
        )
        if second is not None:
            steps.append(
                _exact(
                    "panel broadcast",
                    0,
                    second.h[stage, 0],
                    second.count[stage, 0],
                    second.words[stage, 0],
                    second.requests[stage, 0],
                    second.h_inout[stage, 0],
                )
            )
    return steps


def _swap_supersteps(
    n: int,
    N: int,
    w: np.ndarray,
    j0: np.ndarray,
    tc: np.ndarray,
    sr: np.ndarray,
    below: np.ndarray,
    full_width: np.ndarray,
    panel1: _Broadcast | None,
) -> list[StepKind]:
    """The row-interchange superstep of every stage (M > 1), with the first phase of the panel
    broadcast: expected h, count and h*, and h's bounds (module docstring)."""
    K, M = below.shape
    k = np.arange(K)
    at_sr = np.arange(M)[None, :] == sr[:, None]
    others = np.where(at_sr, 0, below).sum(axis=1)  # rows below J off process row sr
    chosen = w / (n - j0)  # the chance that a row below J is one of the stage's pivots
    moving = np.where(at_sr, others[:, None], below)
    expected_rows = moving * chosen[:, None]
    most_rows = np.minimum(w[:, None], moving)
    # the row widths at t = tc and at t* (the first column that is not tc); no t* when N = 1
    width_root = full_width[tc] - w
    first = np.where(tc == 0, 1, 0)
    width_first = full_width[np.minimum(first, N - 1)] if N > 1 else np.zeros(K, dtype=np.int64)
    if panel1 is not None:
        root_e, first_e, root_requests = panel1.root_e, panel1.first_e, panel1.root_requests
        words1, requests1 = panel1.words.sum(axis=1), panel1.requests.sum(axis=1)
    else:
        root_e = first_e = root_requests = np.zeros((K, M), dtype=np.int64)
        words1 = requests1 = np.zeros(K, dtype=np.int64)

    def h_with(rows: np.ndarray) -> np.ndarray:
        at_root = root_e + rows * width_root[:, None]
        at_first = first_e + rows * width_first[:, None]
        return np.asarray(np.maximum(at_root, at_first).max(axis=1))

    h_low = np.maximum(root_e, first_e).max(axis=1)
    h_expected = h_with(expected_rows)
    # eq. 2.2: the broadcast's first phase is one-sided, the rows go both ways
    h_inout_expected = h_with(2 * expected_rows)
    h_high = h_with(most_rows)

    # P(c_q > 0) = 1 - prod_{j in J} (n - j - a_q) / (n - j), a_q = rows(q, j1)
    top, bottom = (n - j0)[:, None], (n - j0 - w)[:, None]
    missed = np.exp(_lgamma(top - below + 1) - _lgamma(bottom - below + 1) - _lgamma(top + 1) + _lgamma(bottom + 1))
    hit = np.where(at_sr, 0.0, 1.0 - missed)
    hit_others = hit.sum(axis=1)
    sends = np.where(at_sr, hit_others[:, None], hit)  # expected requests of a row-moving process
    count_root = root_requests + sends * (width_root > 0)[:, None]
    count_first = sends * (width_first > 0)[:, None]
    count = np.maximum(count_root, count_first).max(axis=1)
    columns_with_rows = (full_width > 0).sum() - ((full_width[tc] > 0) & (width_root <= 0))
    words = words1 + 2 * others * chosen * (n - w)
    requests = requests1 + 2 * hit_others * columns_with_rows
    return [
        StepKind(
            "swap",
            1,
            _number(below[stage].max()),
            float(h_expected[stage]),
            float(count[stage]),
            float(words[stage] / requests[stage]) if requests[stage] > 0 else 0,
            primitive=LABEL[0],
            pattern=LABEL[1],
            source="expected",
            h_low=_number(h_low[stage]),
            h_high=_number(h_high[stage]),
            h_inout=float(h_inout_expected[stage]),
        )
        if others[stage] > 0
        else _exact("swap", below[stage].max(), h_low[stage], count[stage], words[stage], requests[stage], h_low[stage])
        for stage in k.tolist()
    ]
