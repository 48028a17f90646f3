"""The first screen's answer (issue 29): can these parameters (or these predictions) be trusted,
how busy was the machine, and what to do next, in one sentence and one piece of advice; and the
handful of numbers a reader needs first: f, one g per primitive and l, each with its spread.

The verdict reads what the fit and the checks already hold: the check of eq. (2.6) on the
points measured while every process held its core (probe_validation), the points and runs a busy
machine spoiled (bspkit.measure.machine_state), and the parameters' spreads (machine_scaling). The
probe's report, `bspkit probe`/`fit` on the terminal and `bspkit validate` show it first.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bspkit.measure import sentinel_states as ss
from bspkit.model import comm_models, trust
from bspkit.model import machine_scaling as mscale
from bspkit.model.params import Params, computing_rate
from bspkit.model.probe_validation import VALIDATION_THRESHOLD, probe_split
from bspkit.units import quantity

# A probe in which more than this share of the batches was marked measured mostly a busy
# machine: even its unmarked points are few and scattered in time.
MOSTLY_BUSY = 0.5

# One line for the reader who sees two g's for the same put (the report's table has both).
G_EXPLAINED = (
    "g_inf is the cost per word of large h-relations (eq. 2.5/2.6, fitted over the whole grid, the prediction "
    "model's); Bisseling's g is the slope of T = g h + l over one-word messages (bspbench's fit), so it carries "
    "every message's overhead and is larger."
)


@dataclass(frozen=True)
class Verdict:
    """level: "trust" (use them), "band" (use them with the stated band), "re-run"."""

    level: str
    sentence: str
    advice: str

    def as_dict(self) -> dict[str, str]:
        return {"level": self.level, "sentence": self.sentence, "advice": self.advice}

    def lines(self, notes: Sequence[str] = (), width: int = 100) -> list[str]:
        """For the terminal: the verdict, what next, then each note, wrapped."""
        texts = [f"VERDICT: {self.sentence}", f"Next: {self.advice}", *notes]
        return [ln for t in texts for ln in textwrap.wrap(t, width, subsequent_indent="  ")]


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def probe_verdict(params: Params) -> Verdict:
    """The verdict on one probe's parameters: the check of eq. (2.6), its error split into the
    machine's noise and the model's bias (probe_validation.probe_split), and how busy the
    machine was."""
    val = params.validation
    ms_json: Mapping[str, Any] = params.machine_state or {}
    state: Mapping[str, Any] = ms_json.get("summary") or {}
    batches, marked = int(state.get("batches") or 0), int(state.get("marked") or 0)
    if not batches:
        busy = "the machine's state was not recorded (a file from before the state records)"
    elif marked:
        busy = f"a process lost its core in {marked} of {batches} timed batches, which the fit left out"
    else:
        busy = f"every process held its core in all {batches} timed batches"
    two_states = ss.states_sentence((params.noise or {}).get("states"))
    if two_states:
        busy = f"{two_states}; {busy}"
    used = int(val.get("used") or 0)
    err = val.get("mean_abs_rel_error")
    mk: Mapping[str, Any] = val.get("marked") or {}
    if int(mk.get("points") or 0):
        as_it_was = (mk.get("as_it_was") or {}).get("mean_abs_rel_error")
        busy += f"; {mk['points']} marked validation point(s) are scored apart" + (
            f" ({_pct(as_it_was)} off predicted as the machine was)" if as_it_was is not None else ""
        )
    # measurements the fit had to use although marked (f and l are measured once each)
    kept = [str(k).split(":", 1)[0] for k in ms_json.get("kept_marked") or []]
    spoiled = f" {', '.join(kept)} had to be used although a process lost its core then." if kept else ""
    check = f"eq. (2.6) is {_pct(err)} off on {used} points measured while every process held its core"
    if batches and marked / batches > MOSTLY_BUSY:
        return Verdict(
            "re-run",
            f"Do not rely on these parameters: the machine was busy ({busy})"
            + (f"; {check}" if err is not None else "")
            + f".{spoiled}",
            "Re-run on a quieter machine (stop other jobs; `uptime` below the core count), or with --reps to give "
            "the quiet moments more samples.",
        )
    if err is None:
        return Verdict(
            "band",
            f"No check of g was possible (no validation point could be scored); {busy}.{spoiled}",
            "Use them with the stated spreads, or re-run with the validation section (the default) to check g.",
        )
    threshold = f"threshold {VALIDATION_THRESHOLD:.0%}"
    sp = probe_split(val, params.noise)
    if val.get("pass") and kept:
        return Verdict(
            "re-run",
            f"g can be trusted ({check}); {busy}.{spoiled}",
            "Re-run on a quieter machine before trusting those; `uptime` shows the load.",
        )
    if sp is not None and sp.judged and sp.machine_known and not kept:
        clause = trust.split_sentence(sp, "eq. (2.6)")
        within = trust.pc(sp.trust_within)
        if sp.unbiased:
            return Verdict(
                "band" if marked else "trust",
                f"These f, g and l can be trusted: {check} "
                + (f"({threshold}), and" if val.get("pass") else f"(above the {threshold}), but")
                + f" {clause}; {busy}.",
                f"Use them within ±{within}: `bspkit predict` and `bspkit validate` take this parameter file"
                + (
                    "."
                    if val.get("pass")
                    else (
                        "; the error is the machine's time-to-time noise, a quieter machine narrows it."
                        if sp.within_noise
                        else "; the error is the machine's time-to-time noise and the model's scatter in the "
                        "regimes named, whose own band is the one to read for programs that live there."
                    )
                ),
            )
        if val.get("pass"):
            return Verdict(
                "band",
                f"These f, g and l can be trusted: {check} ({threshold}), but {clause}; {busy}.",
                "Use them with the stated spreads, minding the regimes named: predictions that lean on them carry "
                "that bias (the per-h table of g(h) and the validation plot show where).",
            )
        return Verdict(
            "re-run",
            f"g is not yet to be trusted: {check} ({threshold}), and {clause}; so the model misses, not the "
            f"machine; {busy}.{spoiled}",
            "The per-h table of g(h) and the validation plot show where eq. (2.6) misses; predictions that lean on "
            "the regimes named carry that error.",
        )
    if val.get("pass"):
        return Verdict(
            "band" if marked else "trust",
            f"These f, g and l can be trusted: {check} ({threshold}); {busy}.",
            "Use them with the stated spreads: `bspkit predict` and `bspkit validate` take this parameter file.",
        )
    return Verdict(
        "re-run",
        f"g is not yet to be trusted: {check} ({threshold}), so the machine's state does "
        f"not explain the error; {busy}.{spoiled}",
        "Re-run with --reps 30 to tell noise from model; if the error stays, the per-h table of g(h) and the "
        "validation plot show the h where eq. (2.6) misses.",
    )


def probe_notes(params: Params, hardware: str | None) -> list[str]:
    """The notes under a probe's verdict: how busy the machine was, and the library against the
    hardware (bspkit.measure.hardware.hardware_sentence) where the run measured it."""
    state: Mapping[str, Any] = (params.machine_state or {}).get("summary") or {}
    notes = [f"The machine: {state['sentence']}."] if state.get("sentence") else []
    advice = ss.states_advice((params.noise or {}).get("states"))
    if advice:
        notes.append(advice)
    return notes + ([f"Against the hardware, in this run: {hardware}."] if hardware else [])


@dataclass(frozen=True)
class Headline:
    """One parameter of the first screen: name, value, spread (relative sd), what it is."""

    name: str
    value: str
    spread: float | None
    note: str

    @property
    def spread_text(self) -> str:
        return "–" if self.spread is None else f"±{100 * self.spread:.0f}%"


def headline_parameters(params: Params) -> list[Headline]:
    """f, one g per primitive (its all-to-all surface, else the first pattern) and l, with
    their spreads (machine_scaling.parameter_spread)."""
    spread = mscale.parameter_spread(params)
    out: list[Headline] = []
    rate = computing_rate(params)
    if rate:
        r, kernel = rate
        out.append(Headline("f", quantity(1.0 / r, "s", 3) + " per flop", spread.f.get(kernel), kernel))
    primitives: dict[str, str] = {}
    for key in params.g:
        prim, _pattern = key.split("/", 1)
        if prim not in primitives or key.endswith("/alltoall"):
            primitives[prim] = key
    for prim, key in sorted(primitives.items()):
        pm = params.g[key].predict
        if pm is None:
            continue
        s = spread.g.get(key)
        sd = comm_models.best_spread(s) if s else None
        out.append(Headline(f"g {prim}", quantity(pm.g_inf, "s", 3) + " per word", sd, f"g_inf of {key}, {pm.model}"))
    l_empty = params.l.get("empty")
    if l_empty:
        out.append(Headline("l", quantity(l_empty, "s", 3), spread.l, "an empty bsp_sync"))
    return out


def validate_verdict(summary: Mapping[str, Any], model: str | None = None) -> Verdict:
    """The verdict on a validation sweep's predictions (validate.summaries' overall summary):
    the mean error, its split into the machine's noise and the model's (summary `split`,
    bspkit.model.trust) where the machine's noise is known, and the band's coverage."""
    best = model or summary.get("best_model")
    err = summary.get(best) if best else None
    used = int(summary.get("runs_used") or 0)
    marked: Mapping[str, Any] = summary.get("marked") or {}
    n_marked = int(marked.get("runs") or 0)
    left_out = int(summary.get("reps_left_out") or 0)
    busy_parts = []
    if n_marked:
        as_it_was = (marked.get("as_it_was") or {}).get(best) if best else None
        busy_parts.append(
            f"{n_marked} run(s) lost a core in every repetition and are scored apart"
            + (f" (as the machine was: {_pct(as_it_was)})" if as_it_was is not None else "")
        )
    if left_out:
        busy_parts.append(f"{left_out} repetition(s) were left out for the same reason")
    busy = "; ".join(busy_parts) if busy_parts else "every process held its core in every repetition"
    if err is None:
        return Verdict(
            "re-run",
            f"No run could be scored: {busy}.",
            "Re-run on a quieter machine, or with larger sizes (runs of at least 0.1 s are scored).",
        )
    cov: Mapping[str, Any] = summary.get("band_check") or {}
    narrow = f" But {trust.coverage_text(cov)}." if cov.get("too_narrow") else ""
    narrow_advice = " Widen what you read of the band: it claims more than the runs show." if narrow else ""
    # the split is of the best model's errors
    sp = trust.Split.from_json(summary.get("split") or {}) if best == summary.get("best_model") else None
    if sp is not None and sp.judged and sp.machine_known:
        clause = trust.split_sentence(sp, best or "the model")
        mean = f"{best} is {_pct(err)} off on average over {used} run(s)"
        if sp.unbiased:
            return Verdict(
                "trust" if not busy_parts else "band",
                f"The predictions can be trusted: {mean}, and {clause}; {busy}.{narrow}",
                f"Use the model within ±{trust.pc(sp.trust_within)} for sizes and p you have not run "
                f"(`bspkit predict`).{narrow_advice}",
            )
        if err <= VALIDATION_THRESHOLD:
            return Verdict(
                "band",
                f"The predictions can be trusted on average: {mean}, but {clause}; {busy}.{narrow}",
                "Use the model minding the runs named: their predictions carry that bias; compare predicted and "
                f"measured per superstep (`bspkit profile`) to find the superstep it misses.{narrow_advice}",
            )
        return Verdict(
            "re-run",
            f"The predictions are {_pct(err)} off on average ({best}, {used} run(s)), and {clause}; so the model "
            f"misses, not the machine ({busy}).{narrow}",
            "Check the probe's own verdict first (its report); then compare predicted and measured per superstep "
            "(`bspkit profile`) to find the superstep the model misses.",
        )
    if err <= VALIDATION_THRESHOLD:
        return Verdict(
            "trust" if not busy_parts else "band",
            f"The predictions can be trusted: {best} is {_pct(err)} off on average over {used} run(s); {busy}.{narrow}",
            f"Use the model for sizes and p you have not run (`bspkit predict`).{narrow_advice}",
        )
    return Verdict(
        "re-run",
        f"The predictions are {_pct(err)} off on average ({best}, {used} run(s)) although the machine's state does "
        f"not explain it ({busy}).{narrow}",
        "Check the probe's own verdict first (its report); then compare predicted and measured per superstep "
        "(`bspkit profile`) to find the superstep the model misses.",
    )
