"""An exception that nobody catches on process 1 while the others wait in sync: the run must
end with one line on stderr and status 1. `uncaught.py value` raises a ValueError,
`uncaught.py bsp` makes a refused put (BspError), `uncaught.py abort` calls bsp.abort."""

from __future__ import annotations

import sys

import numpy as np

from bspkit import bsp

mode = sys.argv[1]
bsp.begin()
area = np.zeros(2)
bsp.push_reg(area)
bsp.sync()
if bsp.pid() == 1:
    if mode == "value":
        raise ValueError(f"a wrong value\non {bsp.nprocs()} processes")
    if mode == "bsp":
        bsp.put(bsp.nprocs(), np.ones(1), area, 0)
    if mode == "abort":
        bsp.abort("stopped by process 1")
bsp.sync()  # the others wait here
bsp.end()
print("not reached: the run should have ended")
