"""machine_info.py - what the benchmark scripts of bench/ record about the machine beside
every figure (run as `python bench/<script>.py`, they import it from this directory)."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what platform says."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
