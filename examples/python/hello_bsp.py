"""hello_bsp.py - the inner product of x = (1, 2, ..., n) with itself on p processes, the
cyclic distribution of Bisseling's first program, in Python with bspkit.bsp.

    bsprun -b procs -n 4 .venv/bin/python examples/python/hello_bsp.py [n]
"""

import sys

import numpy as np
from bspkit import bsp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
bsp.begin()
p, s = bsp.nprocs(), bsp.pid()

x = np.arange(s + 1, n + 1, p, dtype=np.float64)  # my share: x[i] for i = s, s + p, ...
partial = np.zeros(p)  # partial[t]: process t's local inner product
bsp.push_reg(partial)
bsp.sync()

mine = np.array([x @ x])  # local work, NumPy's kernel
for t in range(p):
    bsp.put(t, mine, partial, s)  # into partial[s] on every process
bsp.sync()

alpha = partial.sum()  # the same sum, in the same order, on every process
if s == 0:
    exact = n * (n + 1) * (2 * n + 1) // 6
    verdict = "right" if alpha == exact else "WRONG"
    print(f"x.x = {alpha:.0f} on {p} processes ({verdict}: n(n+1)(2n+1)/6 = {exact})")
bsp.pop_reg(partial)
bsp.end()
