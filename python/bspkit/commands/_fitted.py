"""What the commands that fit a run (probe, fit, report) print and write: the parameter
file's summary for the terminal and the run's HTML report."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from bspkit.console import write_text
from bspkit.units import plain, quantity

# the domain modules load numpy (the report: matplotlib): imported when a command runs, so --help stays light
if TYPE_CHECKING:
    from bspkit.measure.rawdata import RawRun
    from bspkit.model.params import Params, Surface


def _lsq_cell(surface: Surface, name: str, scale: float, width: int, digits: int) -> str:
    """A parameter of the eq. (2.6) least-squares fit in fixed notation (`digits` significant
    digits), or '-' where the fit failed."""
    value = surface.lsq_value(name)
    return (plain(value * scale, digits) if value is not None else "-").rjust(width)


def verdict_lines(params: Params) -> list[str]:
    """The first screen (bspkit.model.verdict): the verdict, what to do next, how busy the machine
    was, and f, one g per primitive and l with their spreads."""
    from bspkit.measure.hardware import hardware_sentence
    from bspkit.model import verdict

    out = verdict.probe_verdict(params).lines(verdict.probe_notes(params, hardware_sentence(params)))
    for h in verdict.headline_parameters(params):
        out.append(f"  {h.name:<9} {h.value:<20} {h.spread_text:>6}  {h.note}")
    out += textwrap.wrap(verdict.G_EXPLAINED, 100, initial_indent="  ", subsequent_indent="  ")
    return out


def summary_lines(params: Params) -> list[str]:
    """A short text summary of a parameter file for the terminal: the first screen
    (verdict_lines, the hardware sentence included), then every surface, l, f, the validation,
    warnings."""
    out = []
    m = params.machine
    out.append(f"{m.get('library')}/{m.get('backend')} on {m.get('host')}, p = {params.p}")
    out += verdict_lines(params)
    out.append(
        f"  {'primitive/pattern':<22} {'g_inf ns/w':>11} {'h_half w':>9} {'o w':>8}   model     "
        "(LSQ eq. 2.6; '-' = failed fit, see flags)"
    )
    for key, e in params.g.items():
        cells = (_lsq_cell(e, "g_inf", 1e9, 11, 4), _lsq_cell(e, "h_half", 1, 9, 4), _lsq_cell(e, "o", 1, 8, 4))
        pm = e.predict.model if e.predict else "none"
        out.append(f"  {key:<22} {' '.join(cells)}   {pm}")
    if params.l:
        out.append("  l: " + ", ".join(f"{k} {quantity(v, 's', 3)}" if v else f"{k} -" for k, v in params.l.items()))
    if params.f:
        out.append("  f: " + ", ".join(f"{k} {quantity(v, 's', 3)}" if v else f"{k} -" for k, v in params.f.items()))
    out += _validation_lines(params)
    for w in params.noise.get("warnings", []):
        out.append(f"  warning: {w}")
    return out


def _validation_lines(params: Params) -> list[str]:
    """The validation of the fit (eq. 2.6 per h), the machine's drift during the run, and the
    validation calibrated by the probe's own calibration rounds."""
    val = params.validation
    if not val.get("used"):
        return []
    gl = val.get("global") or {}
    out = [
        f"  validation (eq. 2.6 per h): mean |error| {val['mean_abs_rel_error']:.1%}, "
        f"max {val['max_abs_rel_error']:.1%} over {val['used']} points: {'PASS' if val.get('pass') else 'FAIL'}"
        + (f" (one global fit: {gl['mean_abs_rel_error']:.1%})" if gl.get("mean_abs_rel_error") is not None else "")
    ]
    drift, st = val.get("drift") or {}, val.get("stable_state") or {}
    if drift.get("share_off"):
        out.append(
            f"  warning: the machine changed speed during the run (up to {drift['max_factor']:.2f}x the fit, "
            f"{drift['share_off']:.0%} of the run)"
            + (
                f"; on the {st['points']} points measured in the fit's state: {st['mean_abs_rel_error']:.1%}"
                if st.get("mean_abs_rel_error") is not None
                else ""
            )
        )
    from bspkit.model import trust
    from bspkit.model.probe_validation import probe_split

    sp = probe_split(val, params.noise)
    if sp is not None:
        note = "" if sp.machine_known else " (the machine's time-to-time noise not measured: sampling alone)"
        text = f"error split: {trust.split_sentence(sp, 'eq. (2.6)')}{note}"
        out += textwrap.wrap(text, 100, initial_indent="  ", subsequent_indent="    ")
    cal = val.get("calibrated") or {}
    if cal.get("mean_abs_rel_error") is not None:
        out.append(
            f"  calibrated by its {len(cal.get('rounds') or [])} calibration rounds: mean |error| "
            f"{cal['mean_abs_rel_error']:.1%} over {val['used'] - cal['flagged']} points "
            f"({cal['flagged']} flagged: the machine moved around them by more than x{plain(cal['within_run_flag'])})"
        )
    return out


def write_report(items: list[tuple[RawRun, Params]], out: Path) -> int:
    """The runs' HTML report, written to `out`; returns its number of plots."""
    from bspkit.pages.report import run_report

    html, nimg = run_report(items)
    write_text(out, html)
    print(f"report written to {out} ({nimg} plots)")
    return nimg
