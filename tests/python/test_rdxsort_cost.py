"""bspalg-rdxsort: the BSP cost the driver counts (every superstep's w, h, request count and
words, and W, H, S) equals the closed form of rdxsort.c's header, exactly, for every variant
at p = 1..4, sizes no p divides and n < p, uniform and skewed keys.

The traffic of a round depends on the keys, so the test makes the driver's keys itself (the
generator of rdxsort_kernels.c, in numpy) and moves them as the algorithm does: the global
stable sort by the round's digit, cut into the blocks of the block distribution. Per round:

  superstep 1  w = max_s n_s                the histogram (combined: counted while the keys
                                            received in the previous round are placed)
               h = (p - 1) R, one request to every other process   R = 2^width of the digit
  superstep 2  w = p R + max_s n_s
               h = max_s max(words sent, words received): each request is rounded up to
               8-byte words; plain and opt make one request per (digit value, other owner)
               piece, combined one per other owner
  (combined: placing the last round's keys is a closing local step, w = max_s placed_s)
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from conftest import built_program, needs_programs

DRIVER, BSPRUN = built_program("bspalg-rdxsort"), built_program("bsprun")
pytestmark = needs_programs("bspalg-rdxsort", "bsprun")

VARIANTS = ("plain", "opt", "combined")
ALGORITHM_OF = {"plain": "rdxsort", "opt": "rdxsort-opt", "combined": "rdxsort-combined"}


# ------------------------------------------------------------------ the driver's keys

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)
ZIPF_RANK_BITS = 20
FEW_DISTINCT_VALUES = 16


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, as rdxsort_kernels.c's mix64 (uint64 arithmetic wraps)."""
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


def random_of(seed: int, i: np.ndarray, stream: int) -> np.ndarray:
    return mix64(U64(seed) * GOLDEN + i * U64(4) + U64(stream + 1))


def input_keys(dist: str, seed: int, n: int, key_bits: int) -> np.ndarray:
    """Keys 0 .. n - 1 of the driver's input (rdx_input_key)."""
    mask = U64((1 << key_bits) - 1) if key_bits < 64 else U64(2**64 - 1)
    i = np.arange(n, dtype=U64)
    with np.errstate(over="ignore"):
        if dist == "uniform":
            return random_of(seed, i, 0) & mask
        if dist == "zipf":
            # exp2 of a double: numpy's and the C library's agree but for an ulp, which moves a
            # rank only where 2^(20 u) lies within an ulp of an integer (about 2^-32 per key)
            u = (random_of(seed, i, 0) >> U64(11)).astype(np.float64) * 2.0**-53
            rank = np.exp2(ZIPF_RANK_BITS * u).astype(U64)
            return (rank * GOLDEN) & mask
        if dist == "sorted":
            return np.array([(k << key_bits) // n for k in range(n)], dtype=U64)
        if dist == "few-distinct":
            return random_of(seed, random_of(seed, i, 1) % U64(FEW_DISTINCT_VALUES), 2) & mask
        if dist == "equal":
            return np.full(n, random_of(seed, np.zeros(1, dtype=U64), 3)[0] & mask, dtype=U64)
    raise ValueError(dist)


# ---------------------------------------------------------------------------- the model


def words(keys: int, key_bytes: int) -> int:
    """bspalg_words: one request's bytes rounded up to 8-byte words."""
    return -(-keys * key_bytes // 8)


@dataclass
class Step:
    w: int
    h: int
    count: int
    words: int
    primitive: str | None
    pattern: str | None
    sync: bool = True


def model(
    variant: str, keys: np.ndarray, p: int, bits: int, key_bits: int, primitive: str,
    words_of: Callable[[int, int], float] = words,
) -> list[Step]:  # fmt: skip
    """The supersteps of one repetition, from the keys' movement round by round (words_of:
    the words of one request of so many keys)."""
    n, key_bytes = len(keys), key_bits // 8
    first = [t * n // p for t in range(p + 1)]  # block t: global ranks [first[t], first[t + 1])
    n_s = [first[t + 1] - first[t] for t in range(p)]
    rounds = -(-key_bits // bits)
    label = (lambda x: (x, "alltoall")) if p > 1 else (lambda x: (None, None))
    steps: list[Step] = []
    placed = [0] * p  # combined: keys received in the round, placed at the next one's histogram
    current = keys.copy()
    for rnd in range(rounds):
        shift = rnd * bits
        width = min(bits, key_bits - shift)
        values = 1 << width
        digit = ((current >> U64(shift)) & U64(values - 1)).astype(np.int64)
        hist = np.array([np.bincount(digit[first[t] : first[t + 1]], minlength=values) for t in range(p)])
        steps.append(
            Step(
                max(n_s),
                (p - 1) * values,
                p - 1,
                p * (p - 1) * values,
                *label("put"),
            )
        )
        # the pieces (digit value v, process t) in the order v, then t, tile the sorted round
        starts = (np.cumsum(hist.T.ravel()) - hist.T.ravel()).reshape(values, p)
        sent, received, requests = [0.0] * p, [0.0] * p, [0] * p
        from_to = np.zeros((p, p), dtype=np.int64)
        for s in range(p):
            for v in np.flatnonzero(hist[s]):
                g, end = int(starts[v, s]), int(starts[v, s] + hist[s, v])
                if variant != "combined" and first[s] <= g and end <= first[s + 1]:
                    continue  # a piece that stays whole is placed by the scatter itself
                for t in range(p):
                    part = min(end, first[t + 1]) - max(g, first[t])
                    if part <= 0:
                        continue
                    from_to[s, t] += part
                    if variant != "combined" and t != s:  # one request per piece and owner
                        sent[s] += words_of(part, key_bytes)
                        received[t] += words_of(part, key_bytes)
                        requests[s] += 1
        if variant == "combined":  # one request per other owner
            for s in range(p):
                for t in range(p):
                    if t != s and from_to[s, t] > 0:
                        sent[s] += words_of(int(from_to[s, t]), key_bytes)
                        received[t] += words_of(int(from_to[s, t]), key_bytes)
                        requests[s] += 1
            placed = [int(from_to[:, t].sum() - from_to[t, t]) for t in range(p)]
        steps.append(
            Step(
                p * values + max(n_s),
                max(max(a, b) for a, b in zip(sent, received, strict=True)),
                max(requests),
                sum(sent),
                *label(primitive),
            )
        )
        current = current[np.argsort(digit, kind="stable")]
    assert np.array_equal(current, np.sort(keys))  # the model itself sorts
    if variant == "combined" and max(placed) > 0:
        steps.append(Step(max(placed), 0, 0, 0, None, None, sync=False))
    return steps


# ------------------------------------------------------------------------------ the runs


def run_driver(p: int, variant: str, n: int, *args: str) -> dict:
    cmd = [str(BSPRUN), "-b", "threads", "-n", str(p), str(DRIVER), "--variant", variant, "--size", str(n)]
    cmd += ["-r", "1", *args, "--json", "-"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{cmd}: status {done.returncode}\n{done.stdout}\n{done.stderr}"
    run = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    assert run["verified"] is True, run["check_note"]
    return run


def check_against_model(
    p: int, variant: str, n: int, dist: str = "uniform", bits: int = 8, key_bits: int = 32, seed: int = 1,
    primitive: str | None = None,
) -> None:  # fmt: skip
    args = ["--dist", dist, "--bits", str(bits), "--key-bits", str(key_bits), "--seed", str(seed)]
    if primitive:
        args += ["--primitive", primitive]
    run = run_driver(p, variant, n, *args)
    primitive = primitive or ("hpput" if variant == "combined" else "put")
    expected = model(variant, input_keys(dist, seed, n, key_bits), p, bits, key_bits, primitive)
    got = [
        Step(s["w"], s["h"], s["count"], s["words"], s["primitive"], s["pattern"], s["sync"]) for s in run["supersteps"]
    ]
    where = f"{variant} p = {p} n = {n} {dist} bits {bits} key bits {key_bits}"
    assert len(got) == len(expected), where
    for k, (a, b) in enumerate(zip(got, expected, strict=True)):
        assert a == b, f"{where}, superstep {k}: driver {a}, model {b}"
    rounds = -(-key_bits // bits)
    assert run["S"] == 2 * rounds
    assert run["W"] == sum(s.w for s in expected)
    assert run["H"] == sum(s.h for s in expected)
    assert run["algorithm"] == ALGORITHM_OF[variant] and run["work_unit"] == "key"
    assert run["params"] == {
        "n": n, "bits": bits, "key_bits": key_bits, "rounds": rounds, "dist": dist, "primitive": primitive,
    }  # fmt: skip


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_uniform_keys_of_sizes_no_p_divides(variant: str, p: int) -> None:
    for n in (1, 3, 1001, 5003):  # n < p for p = 2..4; 5003 is prime
        check_against_model(p, variant, n)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("p", [2, 3, 4])
@pytest.mark.parametrize("dist", ["zipf", "sorted", "few-distinct", "equal"])
def test_skewed_keys(variant: str, p: int, dist: str) -> None:
    """Sending is unbalanced under skew (few-distinct: whole pieces move to one owner); what
    each process sends and receives is counted as made."""
    check_against_model(p, variant, 3001, dist)


@pytest.mark.parametrize("variant", VARIANTS)
def test_digit_widths_and_wide_keys(variant: str) -> None:
    check_against_model(3, variant, 2003, bits=5)  # 7 rounds, the last of 2 bits
    check_against_model(4, variant, 4001, bits=11, seed=9)  # 3 rounds, the last of 10 bits
    check_against_model(2, variant, 1501, key_bits=64, bits=16)  # 4 rounds of 16 bits, 8-byte keys
    check_against_model(3, variant, 1000, key_bits=64, bits=13, dist="zipf")  # the last digit 12 bits


def test_primitive_labels_the_key_superstep() -> None:
    check_against_model(2, "plain", 2001, primitive="hpput")
    check_against_model(3, "combined", 2001, primitive="put")


def test_the_cases_tell_rounding_per_request_from_unrounded_words() -> None:
    """With 4-byte keys a piece of an odd number of keys costs half a word more than its keys:
    the uniform cases above have such pieces, so a driver that did not round each request
    (or rounded only the superstep's total) would fail them."""
    keys = input_keys("uniform", 1, 5003, 32)
    for variant in VARIANTS:
        rounded = model(variant, keys, 4, 8, 32, "put")
        unrounded = model(variant, keys, 4, 8, 32, "put", words_of=lambda count, key_bytes: count * key_bytes / 8)
        assert [s.h for s in rounded[1::2]] != [s.h for s in unrounded[1::2]], variant


def test_the_generator_mixes_as_splitmix64() -> None:
    """The keys' finalizer is splitmix64's: its first output from state 0 is a known value
    (the cost cases above check the keys themselves: their pieces set every h)."""
    assert int(mix64(np.array([0x9E3779B97F4A7C15], dtype=U64))[0]) == 0xE220A8397B1DCDAF
