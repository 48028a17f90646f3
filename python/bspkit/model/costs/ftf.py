"""The BSP cost of bspalg-ftf, Kang et al.'s FT.F (`003_...` sec. 7), superstep by superstep as
algorithms/ftf/ftf.c counts it, and the paper's prediction of its ghost exchange (eq. 6-7).

The grid has W x D x H nodes (--size, --depth, --height; the paper's 121 x 4 x 81). Process q
owns the block (row q // C, column q % C) of R x C blocks, every block all D layers of j:
  ftf (balanced, Fig. 38-39): R = 2, C = p / 2 for even p (R = 1, C = p for odd p);
  ftf-original (Fig. 34-35): FT.F's ownership never uses more than six processes: the balanced
  blocks of min(p, 6) processes (R = 2, C = 3 on processes 0..5 from p = 6 on, the others idle).
Column blocks are ceil(W / C) wide (the paper's ii = i / (imax / nphalf), + 1 when it does not
divide), rows ceil(H / R) high (kk = k / ((kmax + 1) / 2)); the last blocks may be smaller or
empty. A block has cells (those whose lowest corner it owns) when it reaches past its first
column and layer short of the grid's last ones; with cells, it holds ghost nodes on its right
edge (i1 < W), its top edge (k1 < H) and their corner, owned by the blocks to its right, above
and above right.

One iteration, six supersteps (w, h: the maximum over the processes of the work and of the
words sent or received; every request is one hpput of a whole edge):
  1 cell sums, w = 16 cells; UPDADD step 1, the ghost column's D nk words to the right ("shift")
  2 w = the words received; step 2, the ghost row's D ni words up ("permutation")
  3 w = the words received; step 3, the corner's D words up right ("permutation")
  4 w = the words received + 2 D ni nk (the node update); UPDATE step 1, D nk words left
  5 w = 0; UPDATE step 2, D ni words down
  6 w = 0; UPDATE step 3, D words down left
repeated --iters times: S = 6 iters.

Eq. (6)-(7): a point-to-point message of m bytes costs CT_pp = T_s + m tau_d, and the three-step
exchange CT = 3 T_s + sum_i m_i tau_d, m_i the message of step i (Table 7 with Step 1: 468 x 2,
Step 2: 456 x 2, Step 3: 6 x 2 elements of 8 bytes on the T3E: 235.80 usec from T_s = 29 usec
and 100 MB/s). Here m_i is the largest message of step i, D nk, D ni, D words of 8 bytes (the
driver sends values only: both sides know the nodes), and an iteration has two exchanges.
f: dot_double_naive, the probe's plain loop over doubles (the cell sums are loops of adds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bspkit.model.costs import Cost, CostError, StepKind
from bspkit.model.costs.matmul import check_keys, int_param

DEFAULTS = {"width": 121, "depth": 4, "height": 81, "iters": 10}  # the driver's defaults
VARIANTS = {"ftf": "balanced", "ftf-original": "original"}
F_KERNEL = "dot_double_naive"
WORD_BYTES = 8
ORIGINAL_OWNERS = 6  # FT.F's ownership: ndomi, ndomk = 41 of 121 x 81, owners 0..5 (Fig. 34)


@dataclass(frozen=True)
class Block:
    """Process q's nodes [i0, i1) x [0, D) x [k0, k1), and its cells along i and k."""

    i0: int
    i1: int
    k0: int
    k1: int
    cells_i: int
    cells_k: int

    @property
    def has_cells(self) -> bool:
        return self.cells_i > 0 and self.cells_k > 0


def grid_shape(variant: str, p: int) -> tuple[int, int]:
    """(R, C): the rows and columns of blocks."""
    if variant == "original":
        p = min(p, ORIGINAL_OWNERS)
    return (2, p // 2) if p % 2 == 0 else (1, p)


def blocks(variant: str, p: int, width: int, height: int) -> list[Block]:
    """Every process' block, as ftf.c's layout_of."""
    rows, cols = grid_shape(variant, p)
    bi, bk = -(-width // cols), -(-height // rows)
    out = []
    for q in range(p):
        if q >= rows * cols:
            out.append(Block(0, 0, 0, 0, 0, 0))
            continue
        i0 = min((q % cols) * bi, width)
        k0 = min((q // cols) * bk, height)
        i1, k1 = min(i0 + bi, width), min(k0 + bk, height)
        out.append(Block(i0, i1, k0, k1, max(0, min(i1, width - 1) - i0), max(0, min(k1, height - 1) - k0)))
    return out


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The cost of bspalg-ftf (ftf or ftf-original) on problem (width, depth, height, iters) at p."""
    if algorithm not in VARIANTS:
        raise CostError(f"bspkit.model.costs.ftf models {', '.join(VARIANTS)}, not '{algorithm}'")
    check_keys(algorithm, problem, ("width", "depth", "height", "iters", "variant"))
    variant = VARIANTS[algorithm]
    if problem.get("variant") not in (None, variant):
        raise CostError(f"{algorithm} is the {variant} variant, not {problem['variant']!r}")
    W, D, H, T = (int_param(algorithm, problem, k, v) for k, v in DEFAULTS.items())
    if p < 1:
        raise CostError(f"p must be at least 1, not {p}")
    if min(W, D, H) < 2:
        raise CostError(f"the grid needs at least 2 nodes along each axis, not {W} x {D} x {H}")
    rows, cols = grid_shape(variant, p)
    bl = blocks(variant, p, W, H)

    def right(q: int) -> bool:
        return q < rows * cols and bl[q].has_cells and bl[q].i1 < W

    def top(q: int) -> bool:
        return q < rows * cols and bl[q].has_cells and bl[q].k1 < H

    # messages per step: (sender, receiver, words), the UPDADD direction; UPDATE reverses them
    steps: list[list[tuple[int, int, int]]] = [[], [], []]
    for q in range(p):
        b = bl[q]
        if right(q):
            steps[0].append((q, q + 1, D * (b.k1 - b.k0)))
        if top(q):
            steps[1].append((q, q + cols, D * (b.i1 - b.i0)))
        if right(q) and top(q):
            steps[2].append((q, q + cols + 1, D))
    received = [[0] * p for _ in range(3)]
    for k, msgs in enumerate(steps):
        for _, dest, words in msgs:
            received[k][dest] += words
    update = [2 * D * (b.i1 - b.i0) * (b.k1 - b.k0) for b in bl]
    work = (
        [16.0 * b.cells_i * b.cells_k * (D - 1) for b in bl],
        [float(received[0][q]) for q in range(p)],
        [float(received[1][q]) for q in range(p)],
        [float(received[2][q] + update[q]) for q in range(p)],
        [0.0] * p,
        [0.0] * p,
    )
    patterns = ("shift", "permutation", "permutation")
    kinds = ("cell sums, UPDADD right", "UPDADD up", "UPDADD up right", "node update, UPDATE left")
    kinds += ("UPDATE down", "UPDATE down left")
    iteration = []
    for s in range(6):
        msgs = steps[s % 3]
        sent, recv = [0] * p, [0] * p
        for src, dest, words in msgs:
            sent[src] += words
            recv[dest] += words
        total = sum(words for _, _, words in msgs)
        iteration.append(
            StepKind(
                kind=kinds[s],
                repeat=1,
                w=max(work[s]),
                h=float(max(max(a, b) for a, b in zip(sent, recv, strict=True))),
                count=1.0 if msgs else 0.0,
                msg_words=total / len(msgs) if msgs else 0.0,
                primitive="hpput",
                pattern=patterns[s % 3],
                h_inout=float(max(a + b for a, b in zip(sent, recv, strict=True))),
            )
        )
    problem_out = {"width": W, "depth": D, "height": H, "iters": T, "variant": variant}
    return Cost(
        algorithm=algorithm,
        p=p,
        problem=problem_out,
        work_unit="flop",
        f_kernel=F_KERNEL,
        steps=tuple(iteration) * T,
    )


def exchange_bytes(problem: Mapping[str, Any], p: int, algorithm: str = "ftf") -> tuple[float, float, float]:
    """m_1, m_2, m_3 of eq. (7): the largest message of each step of one three-step exchange, in
    bytes (UPDADD and UPDATE send the same ones, in opposite directions)."""
    steps = cost(algorithm, problem, p).steps[:3]
    largest = []
    for s in steps:
        largest.append(s.h * WORD_BYTES if s.count else 0.0)  # one message a process a step: h is its size
    return largest[0], largest[1], largest[2]


def eq7_exchange_s(T_s: float, tau_d: float, m: tuple[float, ...]) -> float:
    """Eq. (7): CT = sum over the steps of eq. (6), T_s + m_i tau_d (the steps without a message
    cost nothing)."""
    return sum(T_s + mi * tau_d for mi in m if mi > 0)


def eq7_run_s(problem: Mapping[str, Any], p: int, T_s: float, tau_d: float, algorithm: str = "ftf") -> float:
    """The communication time of a run by eq. (7): two exchanges (UPDADD, UPDATE) per iteration."""
    iters = int_param(algorithm, problem, "iters", DEFAULTS["iters"])
    return 2 * iters * eq7_exchange_s(T_s, tau_d, exchange_bytes(problem, p, algorithm))
