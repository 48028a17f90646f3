"""The BSP cost of bspalg-matmul, the memory-efficient matrix multiplication with q
overpartitioning blocks (thesis ch. 4, eq. 4.3-4.10), superstep by superstep:
`matmul-blockcyclic` (the customized distribution) and `matmul-static2d` (the static 2D grid).
algorithms/matmul/README.md describes the driver; this is its schedule in formulas.

Notation. n x n matrices, q = Q^3 cubes of side s = ceil(n / Q) (eq. 4.3: V_IJK = A_IJ B_JK;
eq. 4.4: C_IK = sum_J V_IJK). Block row/column I has b_I = min(s, max(0, n - I s)) rows: s up
to the last, which may be smaller, and empty ones when n is small next to Q. p processes,
F = floor(Q^2 / p) rounds of whole columns, r = Q^2 mod p remainder columns,
R = ceil(r Q / p) remainder steps, and L = R + Q F = ceil(q / p) logical supersteps.

Schedule (the driver's `cube_of`). In step t < R process x computes remainder cube u = t p + x
(when u < r Q): column c = F p + floor(u / Q), (I, K) = (floor(c / Q), c mod Q), J = u mod Q.
In step t >= R, with t' = t - R: column c = floor(t' / Q) p + x, stage sigma = t' mod Q and
J = (sigma + I + K) mod Q (Cannon's skew). Each logical step is two supersteps.

Words a process x moves for a block M (rows [r0, r0 + b_a), columns [c0, c0 + b_b)):
  blockcyclic: M lives whole on process (a Q + b) mod p; when that is not x and b_a b_b > 0,
      one request of b_a b_b words.
  static2d: process y = (y_r, y_c) = (floor(y / P_c), y mod P_c) of the P_r x P_c grid
      (P_r = the largest divisor of p not above sqrt(p)) holds rows [floor(y_r n / P_r),
      floor((y_r + 1) n / P_r)) and columns [floor(y_c n / P_c), floor((y_c + 1) n / P_c)).
      Every owner y != x of a piece M cap rect(y) of rho rows and gamma columns moves rho gamma
      words: in 1 request when gamma is both the owner's row length and b_b (whole rows on
      both sides), else in rho requests of gamma words (one per row). A block inside rect(x)
      moves nothing (used in place).

Superstep 2t, input of step t ("fetch blocks"; "add products, fetch blocks" after a
remainder step): x fetches A_IJ and B_JK;
  w = max_x a_x(t), a_x(t) = the words x received in superstep 2t - 1 when t - 1 < R (it adds
      the partial products that arrived), else 0.
Superstep 2t + 1, output of step t:
  w = max_x (2 b_I b_J b_K + the words of C_IK that x adds itself);
  t < R ("multiply, send products"): a cube with b_I b_J b_K > 0 sends V_IJK to where C_IK
      lives: blockcyclic one message of b_I b_K words to (I Q + K) mod p when that is not x;
      static2d, when C_IK is not inside rect(x), one message per owner y != x of its piece
      (its words), and x adds its own piece (rho gamma flops) at once;
  t >= R ("multiply"): no communication, except static2d at the last stage (sigma = Q - 1,
      "multiply, store C"): a C_IK not inside rect(x) is stored at its owners with hpput,
      requests as for fetching it.
Closing superstep ("add products"), only when F = 0: w = max_x a_x(L).
In every superstep (eq. 2.1): h = max over processes of max(words sent, words received);
h_inout (eq. 2.2) = max over processes of words sent + words received, from the same loads;
count = max over processes of the requests it issued; msg_words (h*) = all words / all
requests (0 without requests). Labels: input hpget/alltoall, remainder output send/alltoall,
the store of C hpput/alltoall, a superstep without requests null. No open record after the
last sync.

Totals: S = 2 L + [F = 0] = 2 ceil(q/p) (+1 when Q^2 < p), eq. 4.7; W = 2 s^3 ceil(q/p)
= 2 n^3 / p when n = Q s and r = 0, eq. 4.5 (2 flops per point; with r > 0 plus the additions
of the received V_IJK). The thesis' H, eq. 4.6 (blockcyclic, ceil(q/p) s^2 (2 + ceil(rQ/p)))
and eq. 4.9/4.10 (static2d, ceil(q/p) s^2 (2 + 1/Q + ceil(rQ/p)), input h = 2 s^2, output
h = s^2), assumes every owner serves two blocks a step; here h is counted as the driver counts
it, so owners asked for more (or for nothing) are in it: it is exact for every n, q, p.

Evaluation: the formulas of each superstep for all processes at once (numpy), the owners'
loads summed per owner (bincount), never process pairs. The work is one cell per cube (q of
them) and per (superstep, process) (2 p ceil(q/p) <= 2 q + 2 p), static2d times the pieces of a
block, at most (1 + ceil(P_r/Q)) (1 + ceil(P_c/Q)); memory for about 2^18 cells at a time.
q = 512 at p = 4096 takes milliseconds. Only consecutive equal supersteps merge, and input and
output alternate, so at small p the list has about 2 ceil(q/p) StepKinds.

f: matmul_double_blas, the probe's cblas_dgemm on one thread, as the driver's local products.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bspkit.model.costs import Cost, CostError, StepKind

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

DEFAULT_N = 1000  # the driver's --size default
DEFAULT_Q = 8  # the driver's --q default
DISTS = {"matmul-blockcyclic": "blockcyclic", "matmul-static2d": "static2d"}
F_KERNEL = "matmul_double_blas"  # the local products are cblas_dgemm on one thread
# (step, process) cells evaluated at once: bounds the memory of one chunk of steps
CHUNK_CELLS = 1 << 18

# Labels of supersteps (primitive, pattern), by code.
NO_LABEL, FETCH_LABEL, SEND_LABEL, STORE_LABEL = 0, 1, 2, 3
LABELS: tuple[tuple[str | None, str | None], ...] = (
    (None, None),
    ("hpget", "alltoall"),
    ("send", "alltoall"),
    ("hpput", "alltoall"),
)
# Kinds of supersteps, by code.
KINDS = ("fetch blocks", "add products, fetch blocks", "multiply", "multiply, send products", "multiply, store C")
FETCH, ADD_FETCH, MULTIPLY, MULTIPLY_SEND, MULTIPLY_STORE = range(5)
ADD_PRODUCTS = "add products"


# ------------------------------------------------------------ shared by the dense models


def check_keys(algorithm: str, problem: Mapping[str, Any], known: Sequence[str]) -> None:
    """CostError for a parameter the driver does not have (a typo would else be ignored)."""
    unknown = sorted(set(problem) - set(known))
    if unknown:
        raise CostError(f"{algorithm}: no parameter {', '.join(unknown)}; it takes {', '.join(known)}")


def int_param(algorithm: str, problem: Mapping[str, Any], key: str, default: int, minimum: int = 1) -> int:
    """problem[key] (default when absent), an integer >= minimum, else CostError."""
    value = problem.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise CostError(f"{algorithm}: {key} must be an integer, not {value!r}")
    if value < minimum:
        raise CostError(f"{algorithm}: {key} must be at least {minimum}, not {value}")
    return int(value)


def choice_param(algorithm: str, problem: Mapping[str, Any], key: str, default: str, choices: Sequence[str]) -> str:
    """problem[key] (default when absent), one of choices, else CostError."""
    value = problem.get(key, default)
    if value not in choices:
        raise CostError(f"{algorithm}: {key} must be {' or '.join(map(repr, choices))}, not {value!r}")
    return str(value)


def check_derived(algorithm: str, problem: Mapping[str, Any], derived: Mapping[str, Any]) -> None:
    """A parameter the driver derives (s, the grid, ...) may be given, as a run's params has
    it, but must be what the driver would make of the others."""
    for key, value in derived.items():
        if key in problem and problem[key] != value:
            raise CostError(f"{algorithm}: {key} = {problem[key]!r}, but the driver makes {value!r} of the others")


def cube_root(q: int) -> int | None:
    """The integer cube root of q, None when q is not a perfect cube (mm_cube_root)."""
    guess = round(q ** (1 / 3))
    return next((c for c in (guess - 1, guess, guess + 1) if c > 0 and c**3 == q), None)


def process_grid(p: int) -> tuple[int, int]:
    """The driver's Pr x Pc grid (mm_grid): Pr the largest divisor of p not above sqrt(p)."""
    rows = max(d for d in range(1, math.isqrt(p) + 1) if p % d == 0)
    return rows, p // rows


def part_starts(n: int, parts: int) -> IntArray:
    """Where each part of the balanced split of n items starts (mm_part_start), and n."""
    return (np.arange(parts + 1, dtype=np.int64) * n) // parts


def merged_steps(
    kind_names: Sequence[str],
    labels: Sequence[tuple[str | None, str | None]],
    kind: IntArray,
    label: IntArray,
    w: FloatArray,
    h: FloatArray,
    count: FloatArray,
    msg_words: FloatArray,
    sync: BoolArray,
    h_inout: FloatArray | None = None,
) -> tuple[StepKind, ...]:
    """Per-superstep arrays -> StepKinds, consecutive equal supersteps as one with repeat;
    kind and label are indices into kind_names and labels ((primitive, pattern)); h_inout
    (eq. 2.2) where the model gives it, else the StepKinds leave it None."""
    inout = h_inout if h_inout is not None else np.full(len(kind), np.nan)
    columns = (kind, label, w, h, count, msg_words, sync, inout)
    size = len(kind)
    if size == 0:
        return ()
    starts_run = np.zeros(size, dtype=bool)
    starts_run[0] = True
    for column in columns[:-1]:
        starts_run[1:] |= column[1:] != column[:-1]
    if h_inout is not None:
        starts_run[1:] |= h_inout[1:] != h_inout[:-1]
    starts = np.flatnonzero(starts_run)
    repeats = np.diff(np.append(starts, size)).tolist()
    # plain Python numbers, taken at each run's start (numpy scalars one by one are slow)
    kinds, labels_at, ws, hs, counts, msgs, syncs, inouts = (column[starts].tolist() for column in columns)
    return tuple(
        StepKind(
            kind=kind_names[kinds[r]],
            repeat=repeats[r],
            w=float(ws[r]),
            h=float(hs[r]),
            count=float(counts[r]),
            msg_words=float(msgs[r]),
            primitive=labels[labels_at[r]][0],
            pattern=labels[labels_at[r]][1],
            sync=bool(syncs[r]),
            h_inout=float(inouts[r]) if h_inout is not None else None,
        )
        for r in range(len(repeats))
    )


def message_size(words: FloatArray, requests: FloatArray) -> FloatArray:
    """h*: all words / all requests, 0 where there are none (as bspalg.c divides)."""
    out = np.zeros(len(words))
    some = requests > 0
    out[some] = words[some] / requests[some]
    return out


# ------------------------------------------------------------------------- the schedule


@dataclass(frozen=True)
class Layout:
    """The blocks, the schedule's counts and (static2d) the grid's pieces of each block."""

    n: int
    Q: int
    s: int
    p: int
    dist: str
    Pr: int
    Pc: int
    full: int  # F = floor(Q^2 / p)
    rem: int  # r = Q^2 mod p
    rem_steps: int  # R = ceil(r Q / p)
    steps: int  # L = R + Q F
    size: IntArray  # b_I
    row_starts: IntArray  # static2d: where the grid's row parts start (Pr + 1)
    col_starts: IntArray
    # static2d, per block index a: its row pieces row_first[a] .. + row_count[a] (part, rows);
    # per block index b: its column pieces (part, columns, whole rows on both sides)
    row_first: IntArray
    row_count: IntArray
    row_part: IntArray
    row_len: IntArray
    col_first: IntArray
    col_count: IntArray
    col_part: IntArray
    col_len: IntArray
    col_whole: BoolArray


def _pieces_1d(
    block_size: IntArray, s: int, starts: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """Per block index: the parts of a grid dimension it overlaps (first, count) and each
    overlap's part and length (pieces of length 0 left out, as for_each_piece does)."""
    first, count, part, length = [], [], [], []
    parts = len(starts) - 1
    for a, b in enumerate(block_size.tolist()):
        first.append(len(part))
        lo, hi = a * s, a * s + b
        if b > 0:
            at = int(np.searchsorted(starts, lo, side="right")) - 1  # mm_part_of(lo)
            while at < parts and starts[at] < hi:
                overlap = min(hi, int(starts[at + 1])) - max(lo, int(starts[at]))
                if overlap > 0:
                    part.append(at)
                    length.append(overlap)
                at += 1
        count.append(len(part) - first[-1])
    as_array = [np.array(v, dtype=np.int64) for v in (first, count, part, length)]
    return as_array[0], as_array[1], as_array[2], as_array[3], np.diff(starts)


def layout(n: int, Q: int, p: int, dist: str) -> Layout:
    s = -(-n // Q)
    full, rem = divmod(Q * Q, p)
    rem_steps = -(-(rem * Q) // p)
    Pr, Pc = process_grid(p)
    size = np.clip(n - np.arange(Q, dtype=np.int64) * s, 0, s)
    row_starts, col_starts = part_starts(n, Pr), part_starts(n, Pc)
    row_first, row_count, row_part, row_len, _ = _pieces_1d(size, s, row_starts)
    col_first, col_count, col_part, col_len, col_widths = _pieces_1d(size, s, col_starts)
    # the block index each column piece belongs to: whole = the owner's row length = the block's
    col_block = np.repeat(np.arange(Q, dtype=np.int64), col_count)
    col_whole = (col_len == col_widths[col_part]) & (col_len == size[col_block])
    return Layout(
        n=n,
        Q=Q,
        s=s,
        p=p,
        dist=dist,
        Pr=Pr,
        Pc=Pc,
        full=full,
        rem=rem,
        rem_steps=rem_steps,
        steps=rem_steps + Q * full,
        size=size,
        row_starts=row_starts,
        col_starts=col_starts,
        row_first=row_first,
        row_count=row_count,
        row_part=row_part,
        row_len=row_len,
        col_first=col_first,
        col_count=col_count,
        col_part=col_part,
        col_len=col_len,
        col_whole=col_whole,
    )


@dataclass
class Cubes:
    """The cubes of a chunk of steps: step (relative to the chunk), process, I, J, K, stage
    (-1 for a remainder cube)."""

    t: IntArray
    x: IntArray
    I: IntArray
    J: IntArray
    K: IntArray
    stage: IntArray


def cubes(lay: Layout, t0: int, t1: int) -> Cubes:
    """The cubes computed in steps t0 .. t1 - 1 (the driver's cube_of, for all at once)."""
    p, Q = lay.p, lay.Q
    parts: list[tuple[IntArray, ...]] = []
    if t0 < lay.rem_steps:
        u = np.arange(t0 * p, min(min(t1, lay.rem_steps) * p, lay.rem * Q), dtype=np.int64)
        column = p * lay.full + u // Q
        parts.append((u // p - t0, u % p, column // Q, u % Q, column % Q, np.full(len(u), -1, dtype=np.int64)))
    if t1 > lay.rem_steps:
        lo, hi = max(t0, lay.rem_steps) - lay.rem_steps, t1 - lay.rem_steps
        v = np.arange(lo * p, hi * p, dtype=np.int64)
        t_full, x = v // p, v % p
        column = (t_full // Q) * p + x
        I, K, stage = column // Q, column % Q, t_full % Q
        parts.append((t_full + lay.rem_steps - t0, x, I, (stage + I + K) % Q, K, stage))
    fields = [np.concatenate([part[k] for part in parts]) for k in range(6)]
    return Cubes(*fields)


class Phase:
    """One superstep per step of a chunk: per (step, process) work, words sent and received,
    requests issued; per step all words and all requests."""

    def __init__(self, steps: int, p: int):
        self.steps, self.p = steps, p
        self.work = np.zeros((steps, p))
        self.sent = np.zeros(steps * p)
        self.recv = np.zeros(steps * p)
        self.requests = np.zeros(steps * p)
        self.all_words = np.zeros(steps)
        self.all_requests = np.zeros(steps)

    def move(
        self, t: IntArray, issuer: IntArray, src: IntArray, dst: IntArray, words: IntArray, requests: IntArray
    ) -> None:
        cells = self.steps * self.p
        self.sent += np.bincount(t * self.p + src, weights=words, minlength=cells)
        self.recv += np.bincount(t * self.p + dst, weights=words, minlength=cells)
        self.requests += np.bincount(t * self.p + issuer, weights=requests, minlength=cells)
        self.all_words += np.bincount(t, weights=words, minlength=self.steps)
        self.all_requests += np.bincount(t, weights=requests, minlength=self.steps)

    def received(self) -> FloatArray:
        return self.recv.reshape(self.steps, self.p)

    def h_inout(self) -> FloatArray:
        """Per step: the max over processes of words sent + words received (eq. 2.2)."""
        return np.asarray((self.sent + self.recv).reshape(self.steps, self.p).max(axis=1))

    def summary(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """Per step: w, h, count (max over processes), h*, and all requests."""
        shape = (self.steps, self.p)
        h = np.maximum(self.sent, self.recv).reshape(shape).max(axis=1)
        count = self.requests.reshape(shape).max(axis=1)
        return (
            self.work.max(axis=1),
            h,
            count,
            message_size(self.all_words, self.all_requests),
            self.all_requests,
        )


@dataclass
class Pieces:
    """The owners' pieces of one block per cube (static2d): which cube, owner, words, and the
    requests of a gather or store (1 for whole rows on both sides, else one per row)."""

    cube: IntArray
    owner: IntArray
    words: IntArray
    row_requests: IntArray


def pieces(lay: Layout, a: IntArray, b: IntArray) -> Pieces:
    """Every piece of block (a[c], b[c]) for every cube c: the product of its row pieces and
    its column pieces (for_each_piece)."""
    n_rows, n_cols = lay.row_count[a], lay.col_count[b]
    per_cube = n_rows * n_cols
    cube = np.repeat(np.arange(len(a), dtype=np.int64), per_cube)
    offset = np.arange(int(per_cube.sum()), dtype=np.int64) - np.repeat(np.cumsum(per_cube) - per_cube, per_cube)
    cols_of_cube = n_cols[cube]
    row_piece = lay.row_first[a[cube]] + offset // cols_of_cube
    col_piece = lay.col_first[b[cube]] + offset % cols_of_cube
    rows = lay.row_len[row_piece]
    return Pieces(
        cube,
        lay.row_part[row_piece] * lay.Pc + lay.col_part[col_piece],
        rows * lay.col_len[col_piece],
        np.where(lay.col_whole[col_piece], 1, rows),
    )


def own_overlap(lay: Layout, x: IntArray, a: IntArray, b: IntArray) -> tuple[IntArray, IntArray]:
    """Rows and columns of block (a, b) inside process x's rectangle (static2d)."""
    xr, xc = x // lay.Pc, x % lay.Pc
    r0, c0 = a * lay.s, b * lay.s
    rows = np.minimum(r0 + lay.size[a], lay.row_starts[xr + 1]) - np.maximum(r0, lay.row_starts[xr])
    cols = np.minimum(c0 + lay.size[b], lay.col_starts[xc + 1]) - np.maximum(c0, lay.col_starts[xc])
    return np.maximum(rows, 0), np.maximum(cols, 0)


def fetch(lay: Layout, phase: Phase, c: Cubes, a: IntArray, b: IntArray) -> None:
    """The input phase's gathers of block (a, b) (bc_fetch / s2d_fetch)."""
    if lay.dist == "blockcyclic":
        owner = (a * lay.Q + b) % lay.p
        words = lay.size[a] * lay.size[b]
        remote = (owner != c.x) & (words > 0)
        x = c.x[remote]
        phase.move(c.t[remote], x, owner[remote], x, words[remote], np.ones(len(x), dtype=np.int64))
        return
    pc = pieces(lay, a, b)
    x = c.x[pc.cube]
    remote = pc.owner != x
    x = x[remote]
    phase.move(c.t[pc.cube[remote]], x, pc.owner[remote], x, pc.words[remote], pc.row_requests[remote])


def output(lay: Layout, phase: Phase, c: Cubes) -> None:
    """The output phase: the products' work, then the partial products sent (remainder cubes)
    and, static2d, the complete columns stored at their owners."""
    bi, bj, bk = lay.size[c.I], lay.size[c.J], lay.size[c.K]
    phase.work[c.t, c.x] += 2.0 * bi * bj * bk  # one cube per process and step
    remainder = (c.stage < 0) & (bi * bj * bk > 0)
    if lay.dist == "blockcyclic":
        owner = (c.I * lay.Q + c.K) % lay.p
        send = remainder & (owner != c.x)
        x = c.x[send]
        phase.move(c.t[send], x, x, owner[send], (bi * bk)[send], np.ones(len(x), dtype=np.int64))
        return
    own_rows, own_cols = own_overlap(lay, c.x, c.I, c.K)
    elsewhere = (own_rows != bi) | (own_cols != bk)  # C_IK is not inside the process' rectangle
    send = remainder & elsewhere
    phase.work[c.t[send], c.x[send]] += (own_rows * own_cols)[send]  # its own piece, added at once
    store = (c.stage == lay.Q - 1) & elsewhere
    for chosen, one_request_each in ((send, True), (store, False)):
        idx = np.flatnonzero(chosen)
        pc = pieces(lay, c.I[idx], c.K[idx])
        x = c.x[idx][pc.cube]
        remote = pc.owner != x
        x = x[remote]
        requests = np.ones(len(x), dtype=np.int64) if one_request_each else pc.row_requests[remote]
        phase.move(c.t[idx][pc.cube[remote]], x, x, pc.owner[remote], pc.words[remote], requests)


def chunk_steps(lay: Layout) -> int:
    """Steps per chunk: about CHUNK_CELLS cells of (step, process, piece)."""
    pieces_per_block = int(lay.row_count.max(initial=1)) * int(lay.col_count.max(initial=1))
    per_step = lay.p * (pieces_per_block if lay.dist == "static2d" else 1)
    return max(1, CHUNK_CELLS // max(1, per_step))


def supersteps(lay: Layout) -> tuple[StepKind, ...]:
    """Every superstep of one repetition, evaluated chunk by chunk of logical steps."""
    L = lay.steps
    total = 2 * L + (lay.full == 0)
    kind = np.zeros(total, dtype=np.int64)
    label = np.zeros(total, dtype=np.int64)
    w, h, count, msg, inout = (np.zeros(total) for _ in range(5))
    adds_pending = np.zeros(lay.p)  # what arrived in the last output phase, to be added
    per_chunk = chunk_steps(lay)
    for t0 in range(0, L, per_chunk):
        t1 = min(L, t0 + per_chunk)
        steps = t1 - t0
        c = cubes(lay, t0, t1)
        fetched, out = Phase(steps, lay.p), Phase(steps, lay.p)
        fetch(lay, fetched, c, c.I, c.J)
        fetch(lay, fetched, c, c.J, c.K)
        output(lay, out, c)
        t = np.arange(t0, t1)
        # the input phase adds what the previous output phase received, after a remainder step
        after_remainder = (t >= 1) & (t - 1 < lay.rem_steps)
        previous = np.vstack([adds_pending[None, :], out.received()[:-1]])
        fetched.work += np.where(after_remainder[:, None], previous, 0.0)
        adds_pending = out.received()[-1].copy() if t1 - 1 < lay.rem_steps else np.zeros(lay.p)

        w_in, h_in, count_in, msg_in, req_in = fetched.summary()
        w_out, h_out, count_out, msg_out, req_out = out.summary()
        rows_in, rows_out = 2 * t, 2 * t + 1
        w[rows_in], h[rows_in], count[rows_in], msg[rows_in] = w_in, h_in, count_in, msg_in
        w[rows_out], h[rows_out], count[rows_out], msg[rows_out] = w_out, h_out, count_out, msg_out
        inout[rows_in], inout[rows_out] = fetched.h_inout(), out.h_inout()
        kind[rows_in] = np.where(after_remainder, ADD_FETCH, FETCH)
        label[rows_in] = np.where(req_in > 0, FETCH_LABEL, NO_LABEL)
        remainder_step = t < lay.rem_steps
        last_stage = ~remainder_step & ((t - lay.rem_steps) % lay.Q == lay.Q - 1)
        store_kind = MULTIPLY_STORE if lay.dist == "static2d" else MULTIPLY
        kind[rows_out] = np.where(remainder_step, MULTIPLY_SEND, np.where(last_stage, store_kind, MULTIPLY))
        label[rows_out] = np.where(req_out > 0, np.where(remainder_step, SEND_LABEL, STORE_LABEL), NO_LABEL)
    names = list(KINDS)
    if lay.full == 0:  # the closing superstep adds the last partial products
        names.append(ADD_PRODUCTS)
        kind[-1] = len(names) - 1
        w[-1] = adds_pending.max()
    return merged_steps(names, LABELS, kind, label, w, h, count, msg, np.ones(total, dtype=bool), inout)


# ------------------------------------------------------------------------------ the model


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The cost of bspalg-matmul on problem (n, q; dist from the algorithm's name) at p."""
    dist = DISTS.get(algorithm)
    if dist is None:
        raise CostError(f"bspkit.model.costs.matmul models {', '.join(DISTS)}, not '{algorithm}'")
    grid_keys = ("grid_rows", "grid_cols") if dist == "static2d" else ()
    check_keys(algorithm, problem, ("n", "q", "s", "dist", *grid_keys))
    if problem.get("dist", dist) != dist:
        raise CostError(f"{algorithm}: dist is {dist!r}, not {problem['dist']!r}")
    n = int_param(algorithm, problem, "n", DEFAULT_N)
    q = int_param(algorithm, problem, "q", DEFAULT_Q)
    Q = cube_root(q)
    if Q is None:
        raise CostError(f"{algorithm}: q must be a perfect cube (1, 8, 27, 64, ...), not {q}")
    if p < 1:
        raise CostError(f"p must be at least 1, not {p}")
    filled: dict[str, Any] = {"n": n, "q": q, "s": -(-n // Q), "dist": dist}
    if dist == "static2d":
        filled["grid_rows"], filled["grid_cols"] = process_grid(p)
    check_derived(algorithm, problem, filled)
    lay = layout(n, Q, p, dist)
    return Cost(
        algorithm=algorithm,
        p=p,
        problem=filled,
        work_unit="flop",
        f_kernel=F_KERNEL,
        steps=supersteps(lay),
    )
