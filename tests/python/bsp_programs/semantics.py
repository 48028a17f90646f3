"""BSPlib's semantics through bspkit.bsp, the essence of tests/semantics/*.c in one SPMD
program that checks itself: run as `bsprun -b B -n P python semantics.py P`. A wrong result
is an uncaught AssertionError, which ends the run with one line and status 1; on success
process 0 prints "semantics ok on B with P processes". Every process prints one line
"print from process S" (each must appear once), and the line before begin() must appear once
although it is still in Python's buffer when procs forks."""

from __future__ import annotations

import sys

import numpy as np

from bspkit import bsp

print("before begin: once")  # in the buffer at the fork when stdout is a pipe
bsp.begin()
p, s = bsp.nprocs(), bsp.pid()
expected_p = int(sys.argv[1])
assert p == expected_p, f"nprocs() is {p}, bsprun asked for {expected_p}"
assert 0 <= s < p
nxt, prv = (s + 1) % p, (s - 1) % p
print(f"print from process {s}")


def expect(what: str, got: object, want: object) -> None:
    ok = np.array_equal(got, want) if isinstance(want, np.ndarray) else got == want
    assert ok, f"process {s}: {what}: got {got!r}, expected {want!r}"


def refused(call: object, *args: object, says: str) -> str:
    """Calls call(*args), which must raise BspError with the library's line containing says."""
    try:
        call(*args)  # type: ignore[operator]
    except bsp.BspError as err:
        text = str(err)
        assert text.startswith("bspkit: error in ") and says in text, f"process {s}: unexpected message {text!r}"
        return text
    raise AssertionError(f"process {s}: {getattr(call, '__name__', call)}{args} was not refused ({says})")


# ---- time and supersteps -----------------------------------------------------------------
t0 = bsp.time()
assert t0 >= 0.0
expect("superstep at the start", bsp.superstep(), 0)

# ---- put: element offsets, slices, puts copied at the call, order of overlapping puts -------
n = 4 * p + 4
area = np.full(n, -1.0)
bsp.push_reg(area)
bsp.sync()
t1 = bsp.time()
assert t1 >= t0, "bsp_time went back"
expect("superstep after one sync", bsp.superstep(), 1)
mine = np.arange(4, dtype=float) + 100 * s
bsp.put(nxt, mine, area, 4 * s)  # mine into area[4s:4s+4] on the next process
mine[:] = -7  # a put copies its source at the call
bsp.sync()
want = np.full(n, -1.0)
want[4 * prv : 4 * prv + 4] = np.arange(4) + 100 * prv
expect("area after put with element offsets", area, want)

area[:] = 0
for d in range(p):  # every process writes area[0] everywhere: the highest pid lands last
    bsp.put(d, np.array([float(s)]), area, 0)
values = np.arange(10.0, 20.0)
bsp.put(nxt, values[3:7], area, 1)  # a slice of 4 elements into area[1:5]
bsp.put(nxt, values[8:9], area, 2)  # later put of the same process over area[2]: it wins
bsp.sync()
expect("overlapping puts from every process", area[0], p - 1.0)
expect("a slice, then a later put over part of it", area[1:5], np.array([13.0, 18.0, 15.0, 16.0]))

# buffers that are not arrays: bytes (read-only), bytearray, memoryview; an int32 target
ints = np.zeros(3 * p, dtype=np.int32)
bsp.push_reg(ints)
bsp.sync()
bsp.put(nxt, np.array([s + 1], dtype=np.int32).tobytes(), ints, 3 * s)
bsp.put(nxt, bytearray(np.array([s + 2], dtype=np.int32).tobytes()), ints, 3 * s + 1)
bsp.put(nxt, memoryview(np.array([s + 3], dtype=np.int32)), ints, 3 * s + 2)
bsp.sync()
expect(
    "puts of bytes, bytearray, memoryview into int32",
    ints[3 * prv : 3 * prv + 3],
    np.array([prv + 1, prv + 2, prv + 3]),
)

# ---- hpput, get, hpget; gets read before the superstep's puts land -----------------------------
area[:] = np.arange(n) + 1000 * s
bsp.sync()
got = np.zeros(3)
bsp.get(nxt, area, 2, got)  # area[2:5] of the next process, as it is before this superstep's puts
bsp.put(nxt, np.full(3, -5.0), area, 2)
bsp.sync()
expect("get reads before puts land", got, np.arange(2.0, 5.0) + 1000 * nxt)
expect("the put after the get", area[2:5], np.full(3, -5.0))

bsp.hpput(nxt, np.array([7.0 + s]), area, n - 1)
out = np.zeros(2)
bsp.hpget(prv, area, 0, out)
bsp.sync()
expect("hpput", area[n - 1], 7.0 + prv)
expect("hpget", out, np.arange(2.0) + 1000 * prv)

# ---- registration: the same address twice stacks; pop brings back the older one --------------
big = np.zeros(8)
bsp.push_reg(big)
bsp.sync()
bsp.push_reg(big[:2])  # the same address, 2 elements: the newest registration
bsp.sync()
text = refused(bsp.put, nxt, np.ones(3), big, 0, says="bsp_put")  # 3 elements into 2
bsp.pop_reg(big[:2])
bsp.sync()
bsp.put(nxt, np.array([5.0 + s]), big, 7)  # past the popped 2 elements: the old 8 again
bsp.sync()
expect("put after pop, into the older registration", big[7], 5.0 + prv)
bsp.pop_reg(big)
bsp.pop_reg(ints)
bsp.sync()
refused(bsp.put, nxt, np.ones(1), big, 0, says="not registered")
refused(bsp.pop_reg, big, says="bsp_pop_reg")

# ---- BSMP: tag size from the next sync on, queue order, qsize, empty queue ---------------------
expect("set_tagsize returns the old size", bsp.set_tagsize(4), 0)
bsp.send(nxt, None, np.array([s, 1], dtype=np.int64))  # still tag size 0 in this superstep
bsp.send(nxt, None, b"")  # an empty payload
bsp.sync()
expect("qsize", bsp.qsize(), (2, 16))
status, tag = bsp.get_tag()
expect("get_tag with tag size 0", (status, tag), (16, b""))
expect("move as int64", bsp.move(np.int64), np.array([prv, 1]))
expect("the empty message", bsp.move().size, 0)
expect("get_tag on an empty queue", bsp.get_tag(), (-1, None))
refused(bsp.move, says="bsp_move")
for d in range(p):  # tag size 4 now: a uint32 tag; messages arrive by sender, then by order
    bsp.send(d, np.array([100 + s], dtype=np.uint32), np.arange(s + 1, dtype=np.float64))
    bsp.send(d, np.array([200 + s], dtype=np.uint32), np.array([float(s)]))
refused(bsp.send, nxt, b"12", b"", says="the tag has 2 bytes")
bsp.sync()
expect("qsize after all-to-all", bsp.qsize()[0], 2 * p)
received = [(int(np.frombuffer(tag, np.uint32)[0]), payload) for tag, payload in bsp.messages(np.float64)]
want_tags = [t for q in range(p) for t in (100 + q, 200 + q)]
expect("message order (by sender, then sending)", [t for t, _ in received], want_tags)
for tag_value, payload in received:
    q = tag_value % 100
    expect(f"payload from {q}", payload, np.arange(q + 1, dtype=float) if tag_value < 200 else np.array([float(q)]))
expect("qsize after the messages", bsp.qsize(), (0, 0))
expect("set_tagsize back", bsp.set_tagsize(0), 4)
bsp.sync()

# ---- collectives -------------------------------------------------------------------------------
block = np.arange(5, dtype=np.int64) * (s + 1)
root = p - 1
bsp.broadcast(root, block)
expect("broadcast", block, np.arange(5) * p)
expect(
    "reduce sum float64",
    bsp.reduce("sum", np.array([s + 0.5, -s])),
    np.array([sum(q + 0.5 for q in range(p)), -sum(range(p))]),
)
expect("reduce max int32", bsp.reduce("max", np.array([s, -s], dtype=np.int32)), np.array([p - 1, 0], dtype=np.int32))
expect("reduce min float64 of a scalar", bsp.reduce("min", float(s)), 0.0)
expect("reduce sum int64", bsp.reduce("sum", s + 1), p * (p + 1) // 2)
refused(bsp.reduce, "min", np.int32(1), says="no operation 'min' for int32")

# ---- errors that Python can catch ------------------------------------------------------------
refused(bsp.put, p + 5, np.ones(1), area, 0, says=f"pid {p + 5} is out of range")
refused(bsp.put, nxt, np.ones(2), area, n - 1, says="bsp_put")  # past the end of area
refused(bsp.get, nxt, area, 0, np.zeros(4)[::2], says="not contiguous")
refused(bsp.push_reg, np.zeros(4)[::2], says="not contiguous")
refused(bsp.get, nxt, area, 0, b"12345678", says="read-only")

with bsp.packing():
    scratch = area.copy()
bsp.profile_phase("last")
bsp.sync()
assert bsp.time() >= t1, "bsp_time went back"
if s == 0:
    print(f"semantics ok on {bsp.backend()} with {p} processes")
bsp.end()
