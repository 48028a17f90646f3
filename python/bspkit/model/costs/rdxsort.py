"""The BSP cost of bspalg-rdxsort (algorithms/rdxsort/rdxsort.c): parallel LSD radix sort of
n keys, block-distributed, after Gerbessiotis & Lee, sec. 5: RDXSORT (Fig. 9, "rdxsort"),
RDXSORTOPT (Fig. 10, "rdxsort-opt": the same requests in another order) and the combined
variant ("rdxsort-combined": one message per destination). The paper's cost, 4 r n / p
computation and 4 (n / p) g communication for four rounds (sec. 5, below Fig. 10), is the
leading term of what follows.

Problem (the driver's "params"): n (default 2^24), bits (digit bits, 1..16, default 8),
key_bits (32 or 64, default 32), dist (default uniform), primitive (default put, hpput for
combined); rounds = ceil(key_bits / bits), the last digit narrower when bits does not divide
key_bits. Only `--dist uniform` is modelled (and `equal`, where nothing moves); zipf, sorted
and few-distinct raise CostError: their traffic is the keys' (test_rdxsort_cost.py computes it
from the keys themselves).

Notation: first_t = floor(t n / p), process s holds ranks [first_s, first_{s+1}), n_s keys;
a round's digit has R = 2^width values; k = key_bits / 64 words per key.

Per round, two supersteps (exact but for the key exchange's h, count and h*):
  histogram     w = max_s n_s = ceil(n / p); h = (p - 1) R, count = p - 1, h* = R (each
                process puts its R counts to the p - 1 others; put / alltoall); each
                receives as much: h_inout (eq. 2.2) = 2 (p - 1) R
  key exchange  w = p R + max_s n_s (the global offsets and the scatter); every key whose
                final rank leaves the process' block is put to its owner (plain, opt: one
                request per (digit value, owner) piece; combined: one per owner); labelled
                with the keys' primitive / alltoall
  combined: after the last round the received keys are placed, a closing local step (sync
  false) w = max_s (keys received by s in the last round).
  p = 1: no communication, no labels, no closing step (exact); so for `--dist equal`
  (every piece is its process' own block: h = count = h* = 0, no closing step).

The key exchange, uniform keys (expected; h between bounds). A key's digits are independent
and uniform, and the arrangement a round starts from depends only on the lower digits, so in
every round the R-value histograms of the processes are independent multinomials and the
rounds of one digit width are alike. The pieces (digit v, process s) lie in rank order v, then
s: piece (s, v) = [T(v, s), T(v, s + 1)) with T(v, t) = #{keys with digit < v} + #{keys among
the first first_t with digit v}, a sum of two binomials, taken as normal with its exact mean
and variance:
    mu(v, t) = (v n + first_t) / R,
    sigma^2(v, t) = first_t q1 (1 - q1) + (n - first_t) q0 (1 - q0),  q0 = v / R, q1 = (v + 1) / R.
Every expectation below is a sum over v of Phi (P(T <= y)) or of E max(T - c, 0) (the normal's
ramp, sigma Psi((mu - c) / sigma), Psi(z) = z Phi(z) + phi(z)), by linearity exact but for the
normal approximation. The sum runs over the v within 10 lattice steps Delta = n / R of the
point (the rest is 0, 1 or linear) while sigma < 0.75 Delta (the lattice of pieces against the
blocks, which makes processes keep more or less than n_s / p: at p = 1024, n = 2^22, 8-bit
digits, between 0 and 23 keys, 4 on average); beyond, as the integral over v (the lattice's
periodic part is then damped by exp(-2 pi^2 (sigma / Delta)^2) < 2e-5).
  kept    E x_s = A(s, first_s) - A(s, first_{s+1}), A(s, c) = sum_v E[max(T(v, s+1) - c, 0)
          - max(T(v, s) - c, 0)] (the keys of s with final rank >= c); s sends and receives
          n_s - x_s keys.
  requests (plain, opt): the pieces of s that reach another block, once per other owner:
          A_s + B_s - C_s with A_s = R (1 - P0_s) nonempty pieces (P0_s = (1 - 1/R)^n_s, a piece
          empty), B_s = sum over the block boundaries b of E #{pieces of s strictly across b}
          = sum_v P(T(v, s) < b) - P(T(v, s+1) <= b) + P(empty at b), C_s = E #{nonempty
          pieces of s meeting its own block}.
  requests (combined): the other blocks reached by some piece of s: at most the (piece, owner)
          pairs above and at most the other nonempty blocks not lying wholly before s's first
          piece, [0, T(0, s)), or after its last, [T(R - 1, s + 1), n); the model takes the
          smaller. The first is what happens when R < p - 1 (the gap between two pieces of s,
          Delta - n_s / R, is longer than a block: no two reach the same one), the second when
          R > p + 1 (the gaps are shorter than a block: every block between reaches).
  cost    O(p) lattice sums for the kept keys and C_s; B_s takes the pairs (s, b) only where a
          piece of s lies within 8 sigma of b (all p^2 pairs when the lattice is fine, sigma near
          Delta / 16 .. 0.75 Delta: 0.6 s at p = 1024), the rest in closed form.
  words   sent_s = k (n_s - x_s) + (1 - k) odd_s req_s: each request is rounded up to whole
          words, half a word more for an odd piece of 4-byte keys, odd_s = (1 + exp(-n_s / R)) / 2
          for a piece (pieces of one key are odd), 1/2 for combined's messages; received_s alike,
          the requests into s taken as n_s / n of all.
  h = max_s max(E sent_s, E received_s), count = max_s E req_s, h* = E words / E requests,
          h_inout (eq. 2.2) = max_s (E sent_s + E received_s), an expectation as h is:
          h and count are the max of the processes' expectations, which lies below the
          expectation of the max by up to about sqrt(2 ln p) standard deviations of one
          process' count (the mean maximum of p normals): for h O(sqrt(n_s)) keys, 0.07 % at
          n = 2^20, p = 4, 0.6 % at n = 2^22, p = 1024; for count a few requests (2.5 % at
          p = 1024, 8-bit digits; 23.5 against 27.5 at p = 32, 4-bit digits, where which
          pieces straddle a block boundary moves with the keys of all lower digits).
  bounds  x_s changes by at most 3 when one key's digit does (the key itself, and one key at
          each end of the block as the ranks between its old and new place shift by one), so
          by McDiarmid's inequality |x_s - E x_s| < tau = 3 sqrt(n ln(2 p / delta) / 2) for all
          s with probability 1 - delta, delta = 1e-9. h_low = k (max_s (n_s - E x_s) - tau),
          h_high = k (max_s (n_s - E x_s) + tau) + (1 - k) (the most requests into or out of
          a process), capped by the bound for any keys, k max_s n_s + (1 - k) requests.
  combined's closing step: w = max_s (n_s - E x_s), the keys received in the last round (a run
          of a few keys, n < ~4 p, may have moved none in its last round and then has none).
As n grows, h -> (1 - 1/p)(n / p) k per round: every key leaves its process with probability
1 - 1/p (README.md of the driver), the paper's total exchange of n / p keys.

Work unit: the key (one key in one local pass). The probe has no counting-sort kernel (f_kernel
None; the driver's --measure-f times the local count sort itself).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr

from bspkit.model.costs import Cost, CostError, StepKind

DEFAULT_N = 1 << 24
MAX_N = 1 << 36
DEFAULT_BITS = 8
DEFAULT_KEY_BITS = 32
VARIANTS = {"rdxsort": "plain", "rdxsort-opt": "opt", "rdxsort-combined": "combined"}
DISTS = ("uniform", "zipf", "sorted", "few-distinct", "equal")
MODELLED_DISTS = ("uniform", "equal")
WORD_BYTES = 8
# The lattice sums: explicit terms while sigma < SMEAR Delta, within WINDOW steps of the point.
SMEAR = 0.75
WINDOW = 10
# The bounds' failure probability (McDiarmid, all processes of one superstep together).
DELTA = 1e-9
# Pairs (process, block) at once in the O(p^2) sums (memory).
CHUNK_PAIRS = 1 << 16


def _integer(problem: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = problem.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise CostError(f"radix sort: {key} must be an integer, not {value!r}")
    if not low <= int(value) <= high:
        raise CostError(f"radix sort: {key} must be in {low}..{high} (the driver's range), not {value}")
    return int(value)


def fill_problem(algorithm: str, problem: Mapping[str, Any]) -> dict[str, Any]:
    """The driver's params, its defaults filled in."""
    variant = VARIANTS.get(algorithm)
    if variant is None:
        raise CostError(f"bspkit.model.costs.rdxsort models {', '.join(VARIANTS)}, not '{algorithm}'")
    n = _integer(problem, "n", DEFAULT_N, 1, MAX_N)
    bits = _integer(problem, "bits", DEFAULT_BITS, 1, 16)
    key_bits = _integer(problem, "key_bits", DEFAULT_KEY_BITS, 32, 64)
    if key_bits not in (32, 64):
        raise CostError(f"radix sort: key_bits must be 32 or 64, not {key_bits}")
    rounds = -(-key_bits // bits)
    if problem.get("rounds") is not None and problem["rounds"] != rounds:
        raise CostError(
            f"radix sort: {key_bits}-bit keys in {bits}-bit digits take {rounds} rounds, not {problem['rounds']}"
        )
    dist = problem.get("dist", "uniform")
    if dist not in DISTS:
        raise CostError(f"radix sort: dist must be one of {', '.join(DISTS)}, not {dist!r}")
    if dist not in MODELLED_DISTS:
        raise CostError(
            f"radix sort: only uniform keys (and equal ones) are modelled, not dist '{dist}': skewed keys"
            " decide the key exchange themselves (run the driver: its counts are exact for any keys)"
        )
    primitive = problem.get("primitive") or ("hpput" if variant == "combined" else "put")
    if primitive not in ("put", "hpput"):
        raise CostError(f"radix sort: primitive must be put or hpput, not {primitive!r}")
    return {"n": n, "bits": bits, "key_bits": key_bits, "rounds": rounds, "dist": dist, "primitive": primitive}


# ------------------------------------------------------------------ the lattice of pieces


def _phi(z: np.ndarray) -> np.ndarray:
    return np.asarray(np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi))


def _psi(z: np.ndarray) -> np.ndarray:
    """The integral of Phi: z Phi(z) + phi(z) (E max(Z + z, 0) for a standard normal Z)."""
    return np.asarray(z * ndtr(z) + _phi(z))


def _psi2(z: np.ndarray) -> np.ndarray:
    """The integral of Psi: ((z^2 + 1) Phi(z) + z phi(z)) / 2."""
    return np.asarray(0.5 * ((z * z + 1.0) * ndtr(z) + z * _phi(z)))


class _Lattice:
    """The piece boundaries T(v, t) of one round (module docstring): sums over the digit values
    v of P(T(v, t) <= y) and of E max(T(v, t) - y, 0), for arrays of t and y."""

    def __init__(self, n: int, p: int, R: int):
        self.n, self.p, self.R = n, p, R
        self.first = np.array([t * n // p for t in range(p + 1)], dtype=np.float64)
        self.delta = n / R

    def mean(self, v: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.asarray((v * self.n + self.first[t]) / self.R)

    def sd(self, v: np.ndarray, t: np.ndarray) -> np.ndarray:
        q0, q1 = v / self.R, (v + 1) / self.R
        first = self.first[t]
        return np.asarray(np.sqrt(np.maximum(first * q1 * (1 - q1) + (self.n - first) * q0 * (1 - q0), 0.0)))

    def sums(self, kind: str, t: Any, y: Any, last: int | None = None) -> np.ndarray:
        """sum_{v = 0}^{last} of P(T(v, t) <= y) (kind "cdf") or E max(T(v, t) - y, 0) ("ramp")."""
        t, y = np.broadcast_arrays(np.asarray(t, dtype=np.int64), np.asarray(y, dtype=np.float64))
        last = self.R - 1 if last is None else last
        if last < 0:
            return np.zeros(t.shape)
        delta = self.delta
        a = self.first[t] / self.R
        at = (y - a) / delta  # the digit value whose piece starts at y
        sigma = self.sd(np.clip(at, 0, last), t)
        smeared = sigma >= SMEAR * delta
        out = np.empty(t.shape)
        if smeared.any():
            s, ys, aa = sigma[smeared], y[smeared], a[smeared]
            if kind == "cdf":
                out[smeared] = (
                    s / delta * (_psi((ys - aa + delta / 2) / s) - _psi((ys - aa - (last + 0.5) * delta) / s))
                )
            else:
                top, bottom = (last + 0.5) * delta + aa - ys, -delta / 2 + aa - ys
                out[smeared] = s * s / delta * (_psi2(top / s) - _psi2(bottom / s))
        sharp = ~smeared
        if sharp.any():
            out[sharp] = self._window(kind, t[sharp], y[sharp], np.floor(at[sharp]), last)
        return out

    def _window(self, kind: str, t: np.ndarray, y: np.ndarray, centre: np.ndarray, last: int) -> np.ndarray:
        """Explicit terms within WINDOW of `centre`; below it T <= y surely (cdf 1, ramp 0),
        above it T > y surely (cdf 0, ramp mu - y)."""
        centre = np.clip(centre, -WINDOW - 1, last + WINDOW + 1)
        v = centre[:, None] + np.arange(-WINDOW, WINDOW + 1)[None, :]
        inside = (v >= 0) & (v <= last)
        vc = np.clip(v, 0, last)
        tt = np.broadcast_to(t[:, None], v.shape)
        mu, sd = self.mean(vc, tt), self.sd(vc, tt)
        gap = y[:, None] - mu
        safe = np.where(sd > 0, sd, 1.0)
        if kind == "cdf":
            terms = np.where(sd > 0, ndtr(gap / safe), (gap >= 0).astype(np.float64))
            below = np.clip(centre - WINDOW, 0, last + 1)  # v < centre - WINDOW: all counted
            return np.asarray(np.where(inside, terms, 0.0).sum(axis=1) + below)
        terms = np.where(sd > 0, safe * _psi(-gap / safe), np.maximum(-gap, 0.0))
        lo = np.clip(centre + WINDOW + 1, 0, last + 1)  # v >= lo: T - y = mu - y > 0
        count = last + 1 - lo
        a = self.first[t] / self.R
        above = count * (a - y) + self.delta * (lo + last) * count / 2
        return np.asarray(np.where(inside, terms, 0.0).sum(axis=1) + above)


@dataclass(frozen=True)
class _Exchange:
    """The expected key exchange of one round width."""

    h: float
    h_low: float
    h_high: float
    h_inout: float  # max_s (E sent_s + E received_s), eq. 2.2
    count: float
    msg_words: float
    received_most: float  # max_s E keys received (combined's closing step)


def _key_exchange(n: int, p: int, R: int, key_bytes: int, combined: bool) -> _Exchange:
    """E h, count, h* of a key exchange of uniform keys, and h's bounds (module docstring)."""
    lat = _Lattice(n, p, R)
    first = lat.first
    s = np.arange(p)
    lo, hi = first[:-1], first[1:]
    n_s = hi - lo
    k = key_bytes / WORD_BYTES

    def above(c: np.ndarray) -> np.ndarray:
        """E #{keys of s with final rank >= c}, c per process."""
        value = lat.sums("ramp", s + 1, c) - lat.sums("ramp", s, c)
        value = np.where(c <= 0, n_s, np.where(c >= n, 0.0, value))
        return np.clip(value, 0.0, n_s)

    kept = np.clip(above(lo) - above(hi), 0.0, n_s)
    leaving = n_s - kept
    empty = (1.0 - 1.0 / R) ** n_s  # P0_s: a piece of s is empty
    cdf = lat.sums
    own = (
        cdf("cdf", s, hi - 0.5)
        - cdf("cdf", s + 1, lo + 0.5)
        - empty * (cdf("cdf", s, hi - 0.5) - cdf("cdf", s, lo + 0.5))
    )
    across = _pieces_across_boundaries(lat, empty)
    requests = np.clip(R * (1.0 - empty) + across - np.clip(own, 0.0, R), 0.0, None)  # per piece and owner
    odd = (1.0 + np.exp(-n_s / R)) / 2.0  # a piece of one key is odd
    if combined:  # one request per other owner reached
        reachable = np.clip((n_s > 0).sum() - 1 - _blocks_at_the_ends(lat), 0.0, None)
        requests = np.where(n_s > 0, np.minimum(requests, reachable), 0.0)
        odd = np.full(p, 0.5)
    rounding = (1.0 - k) * odd
    sent = k * leaving + rounding * requests
    into = n_s / n * requests.sum()  # the requests into s, in proportion to its block
    received = k * leaving + rounding * into
    total_words = sent.sum()
    total_requests = requests.sum()
    tau = 3.0 * math.sqrt(n * math.log(2 * p / DELTA) / 2)
    most_requests = float(max((p - 1) if combined else (min(R, n_s.max()) + p - 1), min(n_s.max(), p * R) + 1))
    most_keys = float(n_s.max())
    h_high = min(k * (leaving.max() + tau), k * most_keys) + (1.0 - k) * most_requests
    return _Exchange(
        h=float(np.maximum(sent, received).max()),
        h_low=max(0.0, k * (leaving.max() - tau)),
        h_high=h_high,
        h_inout=float((sent + received).max()),
        count=float(requests.max()),
        msg_words=float(total_words / total_requests) if total_requests > 0 else 0.0,
        received_most=float(leaving.max()),
    )


def _pieces_across_boundaries(lat: _Lattice, empty: np.ndarray) -> np.ndarray:
    """B_s: the expected block boundaries b strictly inside a piece of s,
    sum_b sum_v P(T(v, s) < b) - P(T(v, s + 1) <= b) + P(piece (s, v) empty and at b).
    Where the lattice is smeared at b (sigma >= SMEAR Delta) each boundary adds (l_s - 1 + P0_s)
    / Delta, l_s = n_s / R; elsewhere only the pieces of s within 8 sigma of b count: the pairs
    (s, b) whose offset from the nearest piece start is within reach, and for those the digit
    values around it."""
    p, R, delta = lat.p, lat.R, lat.delta
    first = lat.first
    bounds = np.unique(first[1:-1])
    bounds = bounds[(bounds > 0) & (bounds < lat.n)]
    out = np.zeros(p)
    if len(bounds) == 0:
        return out
    sigma = np.sqrt(bounds * (lat.n - bounds) / lat.n)  # sd of #{keys with digit < v} at b
    length = (first[1:] - first[:-1]) / R
    smeared = sigma >= SMEAR * delta
    out += smeared.sum() * np.clip((length - 1.0 + empty) / delta, 0.0, None)
    bounds, sigma = bounds[~smeared], sigma[~smeared]
    if len(bounds) == 0:
        return out
    reach = 8.0 * sigma + 1.0
    width = int(min(WINDOW, math.ceil(reach.max() / delta) + 1))
    steps = np.arange(-width, width + 1)
    per_chunk = max(1, CHUNK_PAIRS // len(bounds))
    for s0 in range(0, p, per_chunk):
        s = np.arange(s0, min(p, s0 + per_chunk))[:, None]
        offset = np.mod(bounds[None, :] - first[s] / R, delta)  # b past the start of s's piece
        near = (offset <= length[s] + reach[None, :]) | (offset >= delta - reach[None, :])
        ss, bi = np.nonzero(near)
        ss = ss + s0
        b = bounds[bi]
        centre = np.floor((b - first[ss] / R) / delta)
        v = centre[:, None] + steps[None, :]
        inside = (v >= 0) & (v < R)
        v = np.clip(v, 0, R - 1)
        t0, t1 = np.broadcast_to(ss[:, None], v.shape), np.broadcast_to(ss[:, None] + 1, v.shape)
        mu0, sd0, mu1, sd1 = lat.mean(v, t0), lat.sd(v, t0), lat.mean(v, t1), lat.sd(v, t1)
        before = _cdf(b[:, None] - 0.5, mu0, sd0)
        value = (
            before - _cdf(b[:, None] + 0.5, mu1, sd1) + empty[ss][:, None] * (_cdf(b[:, None] + 0.5, mu0, sd0) - before)
        )
        out += np.bincount(ss, weights=np.where(inside, value, 0.0).sum(axis=1), minlength=p)
    return np.clip(out, 0.0, None)


def _cdf(y: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """P(T <= y) for T normal (mu, sd), a step where sd = 0."""
    return np.where(sd > 0, ndtr((y - mu) / np.where(sd > 0, sd, 1.0)), (y >= mu).astype(np.float64))


def _blocks_at_the_ends(lat: _Lattice) -> np.ndarray:
    """Per s: the expected other nonempty blocks lying wholly before its first piece, [0,
    T(0, s)), or after its last, [T(R - 1, s + 1), n): s sends nothing there."""
    p, R, first = lat.p, lat.R, lat.first
    blocks = np.flatnonzero(first[1:] > first[:-1])
    s = np.arange(p)[:, None]
    t = blocks[None, :]
    zero, top = np.zeros((p, 1)), np.full((p, 1), R - 1.0)
    before = 1.0 - _cdf(first[t + 1] - 0.5, lat.mean(zero, s), lat.sd(zero, s))
    after = _cdf(first[t] + 0.5, lat.mean(top, s + 1), lat.sd(top, s + 1))
    return np.asarray(np.where(t == s, 0.0, before + after).sum(axis=1))


# ------------------------------------------------------------------ the supersteps


def _digit_width(key_bits: int, bits: int, rnd: int) -> int:
    shift = rnd * bits
    return key_bits - shift if shift + bits > key_bits else bits


def cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """The cost of one of bspalg-rdxsort's variants on `problem` at p processes."""
    filled = fill_problem(algorithm, problem)
    n, bits, key_bits, dist, primitive = (filled[k] for k in ("n", "bits", "key_bits", "dist", "primitive"))
    combined = VARIANTS[algorithm] == "combined"
    most = -(-n // p)  # max_s n_s
    moves = p > 1 and dist == "uniform" and n > 1
    exchanges: dict[int, _Exchange] = {}
    steps: list[StepKind] = []
    for rnd in range(filled["rounds"]):
        R = 1 << _digit_width(key_bits, bits, rnd)
        if p > 1:
            steps.append(
                StepKind("histogram", 1, most, (p - 1) * R, p - 1, R, "put", "alltoall", h_inout=2 * (p - 1) * R)
            )
        else:
            steps.append(StepKind("histogram", 1, most, 0, 0, 0, h_inout=0))
        label = (primitive, "alltoall") if p > 1 else (None, None)
        if not moves:
            steps.append(
                StepKind("key exchange", 1, p * R + most, 0, 0, 0, primitive=label[0], pattern=label[1], h_inout=0)
            )
            continue
        if R not in exchanges:
            exchanges[R] = _key_exchange(n, p, R, key_bits // 8, combined)
        x = exchanges[R]
        steps.append(
            StepKind(
                "key exchange",
                1,
                p * R + most,
                x.h,
                x.count,
                x.msg_words,
                primitive=label[0],
                pattern=label[1],
                source="expected",
                h_low=x.h_low,
                h_high=x.h_high,
                h_inout=x.h_inout,
            )
        )
    notes: tuple[str, ...] = ()
    if moves:
        last = exchanges[1 << _digit_width(key_bits, bits, filled["rounds"] - 1)]
        if combined:
            steps.append(
                StepKind(
                    "place received keys", 1, last.received_most, 0, 0, 0, sync=False, source="expected", h_inout=0
                )
            )
        notes = (
            "the key exchange (each round's second superstep) depends on the keys: its h, count and h* are"
            " expectations over uniform random keys (the max over processes of each one's expected words and"
            " requests), h within [h_low, h_high] with probability at least 0.999999999 (McDiarmid)"
            + ("; so is the closing local step's w, the keys received in the last round" if combined else ""),
        )
    return Cost(algorithm, p, filled, "key", None, tuple(steps), notes)
