"""The BSP cost of bspalg-lu (LU with partial pivoting on an M x N process grid, Horvitz &
Bisseling, sec. 2) in closed form, superstep by superstep and stage by stage, and beside what
the driver counted (`stage_table`, printed by `bspkit run lu`). It builds every superstep
process by process: bspkit.model.costs.lu computes the same per stage from the grid's rows and
columns (fast at p = 1024), with each superstep's requests and h*, and takes this module as
its reference (tests/python/test_closed_forms_rest.py, grids up to 8 x 8).

Notation. n x n matrix, block size nb, p = M N processes, process (s, t) = pid s N + t. The 2D
block-cyclic distribution puts row i on process row (i // nb) mod M and column j on process
column (j // nb) mod N; rows(s, i) = the rows >= i on process row s, cols(t, j) the columns
>= j on process column t. C(q) = the supersteps of a BSP2D broadcast over q processes: 0, 1,
2 for q = 1, 2, > 2. Stage k factors the columns J = [j0, j1), j0 = k nb, w = j1 - j0 =
min(nb, n - j0); its panel is on process column tc = k mod N, its diagonal block on process
row sr = k mod M.

Work (flops, as the driver counts them), per process and stage:
  panel   M = 1: on (0, tc), sum_{c < w} (m - c - 1)(1 + 2 (w - c - 1)), m = n - j0 (dgetrf);
          M > 1: column c on (s, tc): rows(s, j0 + c + 1)(1 + 2 (w - c - 1)) (scale and rank-1
          update, after the pivot superstep of column c);
  dtrsm   on (sr, t): w (w - 1) cols(t, j1);
  dgemm   on (s, t): 2 w rows(s, j1) cols(t, j1).
Over all processes and stages that is the flop count of unblocked LU, sum_{m < n} (m + 2 m^2)
= 2/3 n^3 - n^2/2 - n/6, whatever nb and the grid (`lu_flops`).

Supersteps of stage k, S_k of them (w: the max over processes of the work counted in the
superstep; h: the max over processes of max(words sent, words received), thesis eq. 2.1):
  M = 1: S_k = C(N), the panel broadcast in the process row (no superstep when N = 1).
      The first holds the panel of stage k on (0, tc) and the dtrsm and dgemm of stage k - 1
      (no sync separates them), h = the broadcast's first phase; the second (N > 2): w = 0,
      the second phase.
  M > 1: S_k = w + 1 + [N > 2] + C(M):
      pivot superstep c = 0 .. w - 1 (column j = j0 + c): every process of column tc puts its
          candidate (3 words: value, row, whether it carries row j) to the p - 1 others, with
          its candidate's row of the panel (w words) to the M - 1 others of its column, and the
          owner of row j adds row j (w more words): h = (M - 1)(2 w + 3) + 3 M (N - 1).
          w: c = 0 the dgemm of stage k - 1, c > 0 the panel's column c - 1;
      swap superstep: all row interchanges of the stage outside the panel, and the first
          phase (all of it when N = 2) of the panel broadcast in each process row; w: the
          panel's column w - 1 (rows(s, j1) flops);
      panel superstep (N > 2): the broadcast's second phase, w = 0;
      U supersteps, C(M): the broadcast of U12 = L11^-1 A12 in each process column; the
          first holds the dtrsm of process row sr.
  After the last sync an open record holds what is left (p = 1: everything, S = 0); with
  p > 1 it is empty (the last stage has no trailing matrix).

Broadcasts (BSP2D) of D words over q processes: q = 2: the root puts all of it, h = D.
q > 2, two-phase: the B = 8 D bytes are cut into q pieces, piece r = [floor(B/q) r + min(r,
B mod q), ...), each ceil(bytes / 8) words (c_r); phase 1: the root puts piece r to member r,
h = sum_{r != root} c_r; phase 2: every member, the root too, puts its piece to every member
but itself and the root, h = max((q - 1) c_root, (q - 2) c_r, sum_{r' != r} c_r'); each about
(q - 1) D / q. The panel broadcast in process row s: D = 1 + nb + w rows(s, j0) (a header of
the stage's singular column and nb pivots, then the panel's rows); the U broadcast in process
column t: D = w cols(t, j1).

The swap superstep's h depends on where the pivots are. The stage's interchanges (j, piv_j),
piv_j >= j, bring the r <= w distinct pivot rows below J (the set R) into J and r rows of J
(all on process row sr) out to their places: process row q != sr exchanges c_q = |R on q| rows
with sr each way, sr exchanges X = sum_{q != sr} c_q, and a row is width(t) = cols(t, 0) -
[t = tc] w words (every column but the panel's). So h = max_{s,t} (bcast1(s, t) + c_s width(t)),
c_sr = X:
  lower bound: X = 0 (every pivot in J or on process row sr);
  upper bound: c_q = min(w, rows(q, j1)), X = min(w, sum_{q != sr} rows(q, j1));
  expected (the model's h): pivot rows uniform over the rows >= j and independent, as a random
  matrix gives: a row below J is a pivot of the stage with probability 1 - prod_{j in J} (1 -
  1 / (n - j)) = w / (n - j0), so E c_q = rows(q, j1) w / (n - j0), and the model takes
  max_{s,t} (bcast1(s, t) + E c_s width(t)), the max of the expectations (the counted H of
  whole runs, n = 1000 and 2000 on 2 x 1, 2 x 2, 3 x 1, 4 x 1, was 0 to 2 % above the model's).

Totals, n = K nb with K divisible by M and N (a(i) = ceil(i / M), b(i) = ceil(i / N);
P(nb) = nb (nb - 1)(4 nb + 1) / 6, the flops of an unblocked nb x nb LU; beta(q) = 0, 1,
2 (q - 1) / q for q = 1, 2, > 2; H_K = 1 + 1/2 + ... + 1/K), `closed_form_totals`:
  S = K C(N)                                              (M = 1)
  S = n + K (1 + [N > 2] + C(M))                          (M > 1)
  W = 2 nb^3 sum_{i=1}^{K-1} a(i) b(i)                    dgemm
      + nb^3 K (K + M - 2) / (2M) + (K / M) P(nb)         panels
      + nb^2 (nb - 1) K (K + N - 2) / (2N)                dtrsm          (exact, any M, N)
    = 2 n^3 / (3p) + n^2 nb (M + N - 2) / p - n^2 / (2N) + O(n nb^2)
  H = n ((M - 1)(2 nb + 3) + 3 M (N - 1))                 pivot supersteps (M > 1)
      + beta(N) (n / nb (1 + nb) + n^2 / (2M) + n nb / 2) panel broadcasts
      + beta(M) (n^2 / (2N) + n nb / 2 - n nb / N)        U broadcasts
      + (M - 1) / p n (n - nb H_K)                        swaps, expected (at most n^2 / N)
    = n^2 (beta(N) / (2M) + beta(M) / (2N) + (M - 1) / p) + O(n (nb M + p + nb log K))
  exact for M = 1 and N <= 2 (1 x 1: H = 0; 1 x 2: H = n^2/2 + n nb/2 + n + n/nb); the
  broadcasts otherwise up to the rounding of their pieces to words (< q words a superstep),
  and the swaps an estimate (they share a superstep with the panel broadcast's first phase).
  p = 2 (1 x 2 or 2 x 1) and 2 x 2: W = 2 n^3 / (3p) + n^2 nb / 2 + O(n^2 + n nb^2);
  H: 1 x 2 n^2 / 2, 2 x 1 n^2 (1/2 + 1/2) = n^2, 2 x 2 n^2 (1/4 + 1/4 + 1/4) = 3 n^2 / 4.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WORD_BYTES = 8
# The panel broadcast's header: the stage's singular column (then nb pivots).
PANEL_HEADER_WORDS = 1
# A pivot candidate's fixed part: its value, its row and whether it carries row j.
CANDIDATE_WORDS = 3
# stage_table: all stages up to this many, else the first few, every k-th and the last.
TABLE_ALL_STAGES = 16
TABLE_FIRST_STAGES = 3
TABLE_ROWS = 12


def lu_flops(n: int) -> float:
    """The flops of LU of an n x n matrix as the driver counts them: column j scales n - j - 1
    entries and updates (n - j - 1)^2 with a multiply and an add, sum_{m < n} (m + 2 m^2)."""
    return n * (n - 1) * (4 * n + 1) / 6


def collective_supersteps(q: int) -> int:
    """The supersteps of a BSP2D broadcast over q processes."""
    return 0 if q <= 1 else 1 if q == 2 else 2


def owned_from(n: int, nb: int, parts: int, c: int, i: int) -> int:
    """The indices in [i, n) on coordinate c, blocks of nb dealt cyclically over `parts`."""

    def below(x: int) -> int:
        cycle = nb * parts
        return x // cycle * nb + min(max(x % cycle - c * nb, 0), nb)

    return below(n) - below(min(i, n))


# ------------------------------------------------------------------ broadcasts


def broadcast_pieces(words: int, q: int) -> list[int]:
    """The words of each piece of a two-phase broadcast: the bytes cut as evenly as possible."""
    base, extra = divmod(words * WORD_BYTES, q)
    return [-(-(base + (r < extra)) // WORD_BYTES) for r in range(q)]


def broadcast_phases(words: int, q: int, root: int) -> list[tuple[list[int], list[int]]]:
    """(words sent, words received) per member in each superstep of a broadcast of `words`
    words from member `root` over q members."""
    if q <= 1:
        return []
    if q == 2:
        sent, recv = [0, 0], [0, 0]
        sent[root], recv[1 - root] = words, words
        return [(sent, recv)]
    piece = broadcast_pieces(words, q)
    sent1, recv1 = [0] * q, [0] * q
    for r in range(q):
        if r != root:
            sent1[root] += piece[r]
            recv1[r] = piece[r]
    sent2, recv2 = [0] * q, [0] * q
    for me in range(q):
        for r in range(q):
            if r not in (me, root):
                sent2[me] += piece[me]
                recv2[r] += piece[me]
    return [(sent1, recv1), (sent2, recv2)]


# ------------------------------------------------------------------ supersteps


@dataclass(frozen=True)
class Superstep:
    """One superstep of the model: its stage, what it is ("pivot", "swap", "panel", "U", or
    "tail" for the open record after the last sync), w, and h: exact where h_min == h_max,
    else (the swap superstep) the expected value, between the bounds h_min and h_max."""

    stage: int
    kind: str
    w: float
    h: float
    h_min: float
    h_max: float
    sync: bool = True


class _Record:
    """The superstep being built: work, words sent and received per process, the row
    interchanges' words per process (expected and at most), and an h known in closed form."""

    def __init__(self, p: int):
        self.work = [0.0] * p
        self.sent = [0] * p
        self.recv = [0] * p
        self.swap_expected = [0.0] * p
        self.swap_most = [0] * p
        self.h = 0

    def close(self, stage: int, kind: str, sync: bool = True) -> Superstep:
        exact = [max(s, r) for s, r in zip(self.sent, self.recv, strict=True)]
        low = max(max(exact), self.h)
        return Superstep(
            stage,
            kind,
            max(self.work),
            max(low, max(e + x for e, x in zip(exact, self.swap_expected, strict=True))),
            low,
            max(low, max(e + x for e, x in zip(exact, self.swap_most, strict=True))),
            sync,
        )


def pivot_h(w: int, rows: int, cols: int) -> int:
    """h of a pivot superstep: the owner of row j sends the most (its candidate with two panel
    rows to its column, the 3-word scalars to everyone else)."""
    return (rows - 1) * (2 * w + CANDIDATE_WORDS) + CANDIDATE_WORDS * rows * (cols - 1)


def superstep_model(n: int, nb: int, rows: int, cols: int) -> list[Superstep]:
    """Every superstep of one factorization in order, then the open record after the last
    sync when it holds work (sync False)."""
    if min(n, nb, rows, cols) < 1:
        raise ValueError(f"the LU cost model needs n, nb and the grid >= 1 (n {n}, nb {nb}, grid {rows}x{cols})")
    M, N, p = rows, cols, rows * cols
    width = [owned_from(n, nb, N, t, 0) for t in range(N)]
    steps: list[Superstep] = []
    rec = _Record(p)

    def sync(stage: int, kind: str) -> None:
        nonlocal rec
        steps.append(rec.close(stage, kind))
        rec = _Record(p)

    def broadcast(phase: int, words: Sequence[int], root: int, in_rows: bool) -> None:
        """Phase `phase` of a broadcast in every process row (words[s]) or column (words[t])."""
        scopes, members = (M, N) if in_rows else (N, M)
        for scope in range(scopes):
            sent, recv = broadcast_phases(words[scope], members, root)[phase]
            for member in range(members):
                pid = scope * N + member if in_rows else member * N + scope
                rec.sent[pid] += sent[member]
                rec.recv[pid] += recv[member]

    stages = -(-n // nb)
    for k in range(stages):
        j0 = k * nb
        w = min(nb, n - j0)
        j1 = j0 + w
        tc, sr = k % N, k % M
        below = [owned_from(n, nb, M, s, j1) for s in range(M)]
        right = [owned_from(n, nb, N, t, j1) for t in range(N)]

        # 1. the panel
        if M == 1:
            m = n - j0
            rec.work[tc] += sum((m - c - 1) * (1 + 2 * (w - c - 1)) for c in range(w))
        else:
            for c in range(w):
                rec.h = pivot_h(w, M, N)
                sync(k, "pivot")
                for s in range(M):
                    rec.work[s * N + tc] += owned_from(n, nb, M, s, j0 + c + 1) * (1 + 2 * (w - c - 1))

        # 2. the panel broadcast in the process rows; M > 1: the row interchanges with its first phase
        panel_words = [PANEL_HEADER_WORDS + nb + w * owned_from(n, nb, M, s, j0) for s in range(M)]
        if M == 1:
            for phase in range(collective_supersteps(N)):
                broadcast(phase, panel_words, tc, in_rows=True)
                sync(k, "panel")
        else:
            if N > 1:
                broadcast(0, panel_words, tc, in_rows=True)
            chosen = w / (n - j0)  # the chance that a row below J is one of the stage's pivots
            others = sum(below) - below[sr]
            for s in range(M):
                moving = others if s == sr else below[s]
                for t in range(N):
                    row_words = width[t] - (w if t == tc else 0)
                    rec.swap_expected[s * N + t] = moving * chosen * row_words
                    rec.swap_most[s * N + t] = min(w, moving) * row_words
            sync(k, "swap")
            if N > 2:
                broadcast(1, panel_words, tc, in_rows=True)
                sync(k, "panel")

        # 3. U12 on process row sr, broadcast in the process columns
        for t in range(N):
            rec.work[sr * N + t] += w * (w - 1) * right[t]
        for phase in range(collective_supersteps(M)):
            broadcast(phase, [w * right[t] for t in range(N)], sr, in_rows=False)
            sync(k, "U")

        # 4. the trailing update
        for s in range(M):
            for t in range(N):
                rec.work[s * N + t] += 2 * w * below[s] * right[t]

    if max(rec.work) > 0:
        steps.append(rec.close(stages - 1, "tail", sync=False))
    return steps


def stage_supersteps(n: int, nb: int, rows: int, cols: int) -> list[int]:
    """S_k of every stage: C(N) with one process row, else w + 1 + [N > 2] + C(M)."""
    if rows == 1:
        return [collective_supersteps(cols)] * -(-n // nb)
    tail = 1 + (cols > 2) + collective_supersteps(rows)
    return [min(nb, n - j0) + tail for j0 in range(0, n, nb)]


@dataclass(frozen=True)
class StageCost:
    """One stage's W_k, H_k (expected; the bounds H_min, H_max) and S_k: the sums over its
    supersteps (the last stage's with the open record after the last sync)."""

    stage: int
    j0: int
    j1: int
    W: float
    H: float
    H_min: float
    H_max: float
    S: int


def stage_costs(n: int, nb: int, rows: int, cols: int) -> list[StageCost]:
    """W_k, H_k and S_k of every stage of the model."""
    per_stage: list[list[Superstep]] = [[] for _ in range(0, n, nb)]
    for step in superstep_model(n, nb, rows, cols):
        per_stage[step.stage].append(step)
    return [
        StageCost(
            k,
            k * nb,
            min((k + 1) * nb, n),
            sum(x.w for x in mine),
            sum(x.h for x in mine),
            sum(x.h_min for x in mine),
            sum(x.h_max for x in mine),
            sum(x.sync for x in mine),
        )
        for k, mine in enumerate(per_stage)
    ]


def totals(n: int, nb: int, rows: int, cols: int) -> dict[str, float]:
    """W, H (expected), H_min, H_max and S of one factorization, from the supersteps."""
    steps = superstep_model(n, nb, rows, cols)
    return {
        "W": sum(x.w for x in steps),
        "H": sum(x.h for x in steps),
        "H_min": sum(x.h_min for x in steps),
        "H_max": sum(x.h_max for x in steps),
        "S": sum(x.sync for x in steps),
    }


def broadcast_share(q: int) -> float:
    """beta(q): the h of all supersteps of a broadcast over q processes per word broadcast."""
    return 0.0 if q <= 1 else 1.0 if q == 2 else 2.0 * (q - 1) / q


def closed_form_totals(n: int, nb: int, rows: int, cols: int) -> dict[str, float]:
    """The module docstring's compact totals for n = K nb with K divisible by rows and cols:
    S and W exact, H as there (H_swaps: its expected swap part, H_swaps_max its bound)."""
    M, N, p = rows, cols, rows * cols
    K, rest = divmod(n, nb)
    if rest or K % M or K % N:
        raise ValueError(f"the compact totals need n divisible by nb M and nb N (n {n}, nb {nb}, grid {M}x{N})")
    S = K * collective_supersteps(N) if M == 1 else n + K * (1 + (N > 2) + collective_supersteps(M))
    small_lu = nb * (nb - 1) * (4 * nb + 1) / 6
    dgemm = 2 * nb**3 * sum(-(-i // M) * -(-i // N) for i in range(1, K))
    W = dgemm + nb**3 * K * (K + M - 2) / (2 * M) + K / M * small_lu + nb**2 * (nb - 1) * K * (K + N - 2) / (2 * N)
    pivots = n * ((M - 1) * (2 * nb + 3) + 3 * M * (N - 1)) if M > 1 else 0
    panels = broadcast_share(N) * (K * (1 + nb) + n * n / (2 * M) + n * nb / 2)
    u_rows = broadcast_share(M) * (n * n / (2 * N) + n * nb / 2 - n * nb / N)
    harmonic = sum(1.0 / i for i in range(1, K + 1))
    swaps = (M - 1) / p * n * (n - nb * harmonic)
    return {
        "S": S,
        "W": W,
        "W_leading": 2 * n**3 / (3 * p) + n * n * nb * (M + N - 2) / p - n * n / (2 * N),
        "H": pivots + panels + u_rows + swaps,
        "H_swaps": swaps,
        "H_swaps_max": n * n / N if M > 1 else 0.0,
        "H_leading": n * n * (broadcast_share(N) / (2 * M) + broadcast_share(M) / (2 * N) + (M - 1) / p),
    }


# ------------------------------------------------------------------ the driver's counts beside the model


def _group_counted(supersteps: Sequence[Mapping[str, Any]], per_stage: Sequence[int]) -> list[list[Mapping[str, Any]]]:
    """The driver's supersteps cut into stages by the model's S_k; what is left (the open
    record, or syncs the model does not have) goes to the last stage."""
    groups: list[list[Mapping[str, Any]]] = []
    at = 0
    for count in per_stage:
        groups.append(list(supersteps[at : at + count]))
        at += count
    groups[-1].extend(supersteps[at:])
    return groups


def _shown_stages(stages: int) -> list[int]:
    """All stages of a short run; else the first few, every k-th and the last."""
    if stages <= TABLE_ALL_STAGES:
        return list(range(stages))
    every = math.ceil(stages / TABLE_ROWS)
    shown = set(range(TABLE_FIRST_STAGES)) | set(range(0, stages, every)) | {stages - 1}
    return sorted(shown)


def _bounds(low: float, high: float) -> str:
    return "" if low == high else f" [{low:,.0f}, {high:,.0f}]"


def stage_table(run: Mapping[str, Any]) -> list[str]:
    """Per stage W_k, H_k, S_k as the driver counted them (run: its JSON) beside the closed
    form's, and the totals; [] when the run lacks what it takes."""
    params = run.get("params") or {}
    counted = run.get("supersteps")
    try:
        n, nb, M, N = (int(params[key]) for key in ("n", "nb", "grid_rows", "grid_cols"))
    except (KeyError, TypeError, ValueError):
        return []
    if counted is None or min(n, nb, M, N) < 1:
        return []
    model = stage_costs(n, nb, M, N)

    def total(key: str) -> float:
        return sum(getattr(m, key) for m in model)

    S_run = int(run.get("S", sum(1 for x in counted if x.get("sync", True))))
    W_run, H_run = float(run.get("W", 0.0)), float(run.get("H", 0.0))
    out = []
    if total("S") == 0:  # one process: no superstep separates the stages
        out.append(
            f"cost (one process, no supersteps): counted W = {W_run:,.0f} flops, H = {H_run:,.0f}, S = {S_run} |"
            f" closed form W = 2/3 n^3 - n^2/2 - n/6 = {total('W'):,.0f}, H = 0, S = 0"
        )
    else:
        shown = _shown_stages(len(model))
        groups = _group_counted(counted, stage_supersteps(n, nb, M, N))
        out += [
            f"cost per stage (nb = {nb} columns, grid {M}x{N}): counted by the driver | closed form (bspkit.model.costs.lu_reference)"
            + ("" if len(shown) == len(model) else f"; {len(shown)} of {len(model)} stages shown"),
            "  (a stage's supersteps hold the dgemm of the stage before"
            + (
                "; H of a stage with row interchanges: expected for pivots spread uniformly, [bounds])"
                if M > 1
                else ")"
            ),
            f"  {'stage':>5} {'columns':>11} {'S counted':>9} {'model':>5} {'W counted':>15} {'model':>15}"
            f" {'H counted':>11} {'model':>11}",
        ]
        for k in shown:
            m, mine = model[k], groups[k]
            S = sum(1 for x in mine if x.get("sync", True))
            W = sum(float(x.get("w", 0.0)) for x in mine)
            H = sum(float(x.get("h", 0.0)) for x in mine)
            out.append(
                f"  {k:>5} {f'{m.j0}-{m.j1 - 1}':>11} {S:>9} {m.S:>5} {W:>15,.0f} {m.W:>15,.0f} {H:>11,.0f} {m.H:>11,.0f}"
                + _bounds(m.H_min, m.H_max)
            )
        out.append(
            f"  {'all':>5} {f'0-{n - 1}':>11} {S_run:>9} {total('S'):>5.0f} {W_run:>15,.0f} {total('W'):>15,.0f}"
            f" {H_run:>11,.0f} {total('H'):>11,.0f}" + _bounds(total("H_min"), total("H_max"))
        )
    if S_run != total("S"):
        out.append(
            f"  the driver synchronised {S_run} times, the model {total('S'):.0f}"
            + (": stages grouped by the model's S_k, the rest counted in the last stage" if total("S") else "")
        )
    return out
