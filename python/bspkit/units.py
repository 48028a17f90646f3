"""One way to write a measured quantity: with its unit, scaled to the unit people read (ns,
µs, ms for times; ns/word for g; Mflop/s for rates) and a few significant digits, never in
e-notation. Used by the reports, the plots' labels and the fit's flags."""

from __future__ import annotations

import math
from typing import Any

MISSING = "–"

# unit of the value -> [(threshold, factor, shown unit)], the first threshold the value is below wins
_SCALES: dict[str, list[tuple[float, float, str]]] = {
    "s": [(1e-6, 1e9, "ns"), (1e-3, 1e6, "µs"), (1.0, 1e3, "ms"), (math.inf, 1.0, "s")],
    "ns": [(math.inf, 1e9, "ns")],  # seconds, always shown in ns
    "µs": [(math.inf, 1e6, "µs")],  # seconds, always shown in µs
    "s/word": [(math.inf, 1e9, "ns/word")],
    "s/op": [(math.inf, 1e9, "ns")],
    "s²/word²": [(math.inf, 1e18, "ns²/word²")],
    "flop/s": [(1e9, 1e-6, "Mflop/s"), (math.inf, 1e-9, "Gflop/s")],
    "ops/s": [(math.inf, 1e-6, "M/s")],
    "words": [(math.inf, 1.0, "words")],
    "flop": [(math.inf, 1.0, "flop")],
    "bytes": [(1 << 10, 1.0, "B"), (1 << 20, 1.0 / (1 << 10), "KiB"), (math.inf, 1.0 / (1 << 20), "MiB")],
    "": [(math.inf, 1.0, "")],
}


def plain(v: float, digits: int = 4) -> str:
    """v with `digits` significant digits in fixed-point notation (thousands separated)."""
    if v == 0:
        return "0"
    if abs(v) < 1e-3:  # in the unit chosen for it, a value this small is a fit at its bound
        return "< 0.001" if v > 0 else "> -0.001"
    mag = math.floor(math.log10(abs(v)))
    decimals = max(0, digits - 1 - mag)
    text = f"{round(v, decimals):,.{decimals}f}"
    # trailing zeros say nothing a reader needs: 350 ns, not 350.0 ns
    return text.rstrip("0").rstrip(".") if "." in text else text


def quantity(v: Any, unit: str = "", digits: int = 4, show_unit: bool = True) -> str:
    """A value in `unit` (one of _SCALES' keys, e.g. "s", "s/word", "words", "%", "x") as
    text: scaled, with `digits` significant digits, with its shown unit unless show_unit is
    False (where a table's header names the unit: pass "ns" or "µs" for a fixed scale)."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return MISSING
    if unit == "%":
        return f"{plain(100.0 * v, digits)} %" if show_unit else plain(100.0 * v, digits)
    if unit == "x":
        return f"{plain(v, digits)}x"
    scales = _SCALES.get(unit)
    if scales is None:
        raise ValueError(f"no scale for unit '{unit}'")
    if not show_unit:
        return plain(v * scales[0][1], digits)
    _threshold, factor, shown = next(scale for scale in scales if abs(v) < scale[0])
    if unit in ("words", "flop", "bytes") and abs(v * factor) >= 10 ** (digits - 1):
        text = f"{round(v * factor):,}"
    else:
        text = plain(v * factor, digits)
    return f"{text} {shown}".rstrip()


# SI prefixes for counts (flops, words): 2.147 G, not 2.147e+09
_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"))


def count(v: Any, digits: int = 4) -> str:
    """A count (flops, words, operations) in fixed notation: up to a million with thousands
    separated (12,345), above it with an SI prefix (2.147 G); never e-notation."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return MISSING
    for factor, prefix in _PREFIXES:
        if abs(v) >= factor:
            return f"{plain(v / factor, digits)} {prefix}"
    return f"{round(v):,}" if abs(v) >= 10 ** (digits - 1) else plain(v, digits)
