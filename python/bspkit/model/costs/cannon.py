"""The BSP cost of bspalg-cannon, Cannon-style matrix multiplication of Gerbessiotis & Lee
(MatMul with put, Fig. 7: `cannon-put`; MatMulG with get, Fig. 8: `cannon-get`; MatMul with
send, Table 1's "Send" column: `cannon-send`; seed 002_ed6c85674bf8f665.txt, lines 151-218) on
any number of processes, superstep by superstep. algorithms/matmul/README.md describes the
driver.

Notation. n x n matrices, p = P_r P_c processes on the grid closest to square (P_r = the
largest divisor of p not above sqrt(p); P_r = P_c = sqrt(p) for square p, 1 x p for prime
p), process x = (i, j) = (floor(x / P_c), x mod P_c), and L = lcm(P_r, P_c) rounds. Rows of A
and C are split into P_r parts, columns of B and C into P_c parts, the inner dimension into L
parts, each as evenly as possible: part a of m parts of n has
  sz(n, m, a) = floor((a + 1) n / m) - floor(a n / m)      (ceil(n/m) or floor(n/m)),
written R_i = sz(n, P_r, i), C_j = sz(n, P_c, j), K_k = sz(n, L, k). Process (i, j) holds A_ik
for k = j (mod P_c) and B_kj for k = i (mod P_r), and in round l multiplies A_ik B_kj with
k = k_l(i, j) = (i + j + l) mod L (Fig. 8's skew, for every variant).

Round l's transfers, for every process (i, j), k = k_l(i, j):
  A_ik (R_i K_k words) from its owner (i, k mod P_c), remote iff (i + l) mod P_c != 0;
  B_kj (K_k C_j words) from its owner (k mod P_r, j), remote iff (j + l) mod P_r != 0;
  a remote block of nonzero size is one request, issued by the owner (put, bsp_hpput; send,
  one bsp_send a block, moved from the queue in the next superstep: h counts its payload, not
  its tag) or by the user (get, bsp_hpget). Every owner sends exactly one A and one B block a
  round. So send costs exactly what put does, superstep by superstep; only its label differs.

Supersteps (all end in a sync; no open record after the last):
  l = 0            "shift A and B": round 0's transfers, w = 0;
  l = 1 .. L - 1   "multiply, shift A and B": round l - 1's products, round l's transfers;
  l = L            "multiply": round L - 1's products, no communication;
  w_l = max_{i,j} 2 R_i K_{k_{l-1}(i,j)} C_j;  h_l = max over processes of max(words sent,
  words received) (eq. 2.1); h_inout_l = max over processes of words sent + words received
  (eq. 2.2); count_l = max over processes of requests issued; msg_words =
  all words / all requests; label hpput/permutation, hpget/permutation or send/permutation
  when round l moves anything, else null.
  S = L + 1, W = sum_l w_l.

Closed form when L divides n (then P_r and P_c do too; R = n/P_r, C = n/P_c, K = n/L): every
process sends what it receives, so with
  a_l = #{i < P_r : (i + l) mod P_c != 0} = P_r - [(-l mod P_c) < P_r]        (rows moving A)
  b_l = #{j < P_c : (j + l) mod P_r != 0} = P_c - ceil((P_c - (-l mod P_r)) / P_r)  (columns moving B)
  w_l = 2 R K C = 2 n^3 / (p L) (l >= 1),  h_l = R K [a_l > 0] + K C [b_l > 0],
  h_inout_l = 2 h_l (in a row, the owner of the A block a process receives is a bijection of
  the row's columns, and so for B in a column: each process sends exactly what it receives),
  count_l = [a_l > 0] + [b_l > 0],  msg_words_l = (R K P_c a_l + K C P_r b_l) / (P_c a_l + P_r b_l).
  Hence W = 2 n^3 / p; H = 0 for p = 1; H = 2 n^2 / sqrt(p) for square p >= 4 (the paper's
  2 (n^2/p) sqrt(p) words, 2 N^2 a round); H = (p - 1) n^2 / p for prime p (1 x p: B never moves,
  round 0 is local); in general H <= n^2 / P_r + n^2 / P_c. G & L count 2 n^2 (n - 1) flops;
  the driver (and this model) 2 n^3.
Otherwise the per-superstep formulas above are evaluated for all processes at once (numpy; the
owners' words summed per owner by bincount, never process pairs): O(L p) in all, in chunks of
about 2^20 (round, process) cells. Both ways are exact: they give the driver's counts.

f: the probe's kernel nearest the local product: matmul_double_blas for --kernel blas (dgemm),
matmul_double_ijk for naive (the same i-j-k loop) and for transposed (a loop too, but reading
B along rows: faster than ijk out of cache, so f is an upper bound there).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bspkit.model.costs import Cost, CostError, StepKind
from bspkit.model.costs.matmul import (
    FloatArray,
    IntArray,
    check_derived,
    check_keys,
    choice_param,
    int_param,
    merged_steps,
    message_size,
    part_starts,
    process_grid,
)

DEFAULT_N = 1000  # the driver's --size default
KERNELS = {"blas": "matmul_double_blas", "naive": "matmul_double_ijk", "transposed": "matmul_double_ijk"}
VARIANTS = {"cannon-put": "put", "cannon-get": "get", "cannon-send": "send"}
PRIMITIVE = {"put": "hpput", "get": "hpget", "send": "send"}
KINDS = ("shift A and B", "multiply, shift A and B", "multiply")
SHIFT, MULTIPLY_SHIFT, MULTIPLY = range(3)
CHUNK_CELLS = 1 << 20  # (round, process) cells evaluated at once


def rounds_of(p: int) -> tuple[int, int, int]:
    """(P_r, P_c, L)."""
    Pr, Pc = process_grid(p)
    return Pr, Pc, math.lcm(Pr, Pc)


def kind_codes(L: int) -> IntArray:
    kind = np.full(L + 1, MULTIPLY_SHIFT, dtype=np.int64)
    kind[0], kind[L] = SHIFT, MULTIPLY
    return kind


def even_supersteps(n: int, p: int, variant: str) -> tuple[StepKind, ...]:
    """The closed form, for n divisible by L (see the docstring)."""
    Pr, Pc, L = rounds_of(p)
    if n % L:
        raise CostError(f"the closed form needs L = {L} to divide n = {n}")
    R, C, K = n // Pr, n // Pc, n // L
    l = np.arange(L, dtype=np.int64)
    rows_moving_a = Pr - ((-l) % Pc < Pr)
    cols_moving_b = Pc - ((Pc - 1 - (-l) % Pr) // Pr + 1)
    moves_a, moves_b = rows_moving_a > 0, cols_moving_b > 0
    requests = np.zeros(L + 1)
    words = np.zeros(L + 1)
    h = np.zeros(L + 1)
    count = np.zeros(L + 1)
    requests[:L] = Pc * rows_moving_a + Pr * cols_moving_b
    words[:L] = R * K * Pc * rows_moving_a + K * C * Pr * cols_moving_b
    h[:L] = R * K * moves_a + K * C * moves_b
    count[:L] = moves_a.astype(np.int64) + moves_b
    w = np.full(L + 1, 2.0 * R * K * C)
    w[0] = 0.0
    return assemble(L, variant, w, h, count, words, requests, 2.0 * h)


def general_supersteps(n: int, p: int, variant: str) -> tuple[StepKind, ...]:
    """The per-superstep formulas evaluated for every process, any n."""
    Pr, Pc, L = rounds_of(p)
    x = np.arange(p, dtype=np.int64)
    i, j = x // Pc, x % Pc
    R, C = np.diff(part_starts(n, Pr))[i], np.diff(part_starts(n, Pc))[j]
    K = np.diff(part_starts(n, L))
    w, h, h_inout, count, words, requests = (np.zeros(L + 1) for _ in range(6))
    per_chunk = max(1, CHUNK_CELLS // p)
    for l0 in range(0, L, per_chunk):
        l1 = min(L, l0 + per_chunk)
        rounds = l1 - l0
        l = np.arange(l0, l1, dtype=np.int64)[:, None]
        k = (i + j + l) % L  # (round, process)
        Kk = K[k]
        # round l's products are superstep l + 1's work (same operation order as the driver)
        w[l0 + 1 : l1 + 1] = (2.0 * R * Kk * C).max(axis=1)
        a_words, b_words = R * Kk, Kk * C
        a_moves = ((i + l) % Pc != 0) & (a_words > 0)
        b_moves = ((j + l) % Pr != 0) & (b_words > 0)
        a_owner = i * Pc + k % Pc
        b_owner = (k % Pr) * Pc + j
        row = np.broadcast_to(np.arange(rounds, dtype=np.int64)[:, None] * p, k.shape)
        cells = rounds * p
        received = (a_words * a_moves + b_words * b_moves).astype(np.float64)
        sent = np.bincount((row + a_owner)[a_moves], weights=a_words[a_moves], minlength=cells) + np.bincount(
            (row + b_owner)[b_moves], weights=b_words[b_moves], minlength=cells
        )
        h[l0:l1] = np.maximum(sent.reshape(rounds, p), received).max(axis=1)
        h_inout[l0:l1] = (sent.reshape(rounds, p) + received).max(axis=1)
        if variant == "get":  # the user issues its requests
            issued = a_moves.astype(np.int64) + b_moves
        else:  # the owner issues them (put, send)
            issued = (
                np.bincount((row + a_owner)[a_moves], minlength=cells)
                + np.bincount((row + b_owner)[b_moves], minlength=cells)
            ).reshape(rounds, p)
        count[l0:l1] = issued.max(axis=1)
        words[l0:l1] = received.sum(axis=1)
        requests[l0:l1] = a_moves.sum(axis=1) + b_moves.sum(axis=1)
    return assemble(L, variant, w, h, count, words, requests, h_inout)


def assemble(
    L: int,
    variant: str,
    w: FloatArray,
    h: FloatArray,
    count: FloatArray,
    words: FloatArray,
    requests: FloatArray,
    h_inout: FloatArray,
) -> tuple[StepKind, ...]:
    """Per-superstep arrays -> StepKinds, labelled with the variant's primitive where a round
    moves anything."""
    labels = ((None, None), (PRIMITIVE[variant], "permutation"))
    label = (requests > 0).astype(np.int64)
    sync = np.ones(L + 1, dtype=bool)
    return merged_steps(KINDS, labels, kind_codes(L), label, w, h, count, message_size(words, requests), sync, h_inout)


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The cost of bspalg-cannon on problem (n, kernel; variant from the algorithm's name)."""
    variant = VARIANTS.get(algorithm)
    if variant is None:
        raise CostError(f"bspkit.model.costs.cannon models {', '.join(VARIANTS)}, not '{algorithm}'")
    check_keys(algorithm, problem, ("n", "variant", "kernel", "grid_rows", "grid_cols", "rounds"))
    if problem.get("variant", variant) != variant:
        raise CostError(f"{algorithm}: variant is {variant!r}, not {problem['variant']!r}")
    n = int_param(algorithm, problem, "n", DEFAULT_N)
    kernel = choice_param(algorithm, problem, "kernel", "blas", tuple(KERNELS))
    if p < 1:
        raise CostError(f"p must be at least 1, not {p}")
    Pr, Pc, L = rounds_of(p)
    filled: dict[str, Any] = {
        "n": n,
        "variant": variant,
        "kernel": kernel,
        "grid_rows": Pr,
        "grid_cols": Pc,
        "rounds": L,
    }
    check_derived(algorithm, problem, filled)
    steps = even_supersteps(n, p, variant) if n % L == 0 else general_supersteps(n, p, variant)
    notes = ()
    if kernel == "transposed":
        notes = ("f_kernel: matmul_double_ijk is slower than the transposed loop out of cache: f is an upper bound",)
    return Cost(
        algorithm=algorithm,
        p=p,
        problem=filled,
        work_unit="flop",
        f_kernel=KERNELS[kernel],
        steps=steps,
        notes=notes,
    )
