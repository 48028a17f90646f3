"""The model of communication chosen by evidence: for an algorithm, the model that the newest
`bspkit validate` of it found best (validate.json's summary over every run: the smallest mean
|relative error| on the runs every model predicted, bspkit.measure.validation.summarize), else
the most detailed model the parameters serve (comm_models.BEST_FIRST: the rule without
evidence). `bspkit predict ALG` and `bspkit run ALG --predict` predict with it and say why in
one line:

    model g(h): the best in validate of cannon-put on 2026-11-28 (threads, p = 2; mean |error| 4.1% vs 7.9% g const)

The sweeps are found under results/validate/ (bspkit.results.validations), the newest first; one
of the back end asked for (its label: threads, mpi, mpi@CLUSTER, ...) is taken before the
newest of another. A sweep counts when its file reads, is of the algorithm, has runs scored
and names a best model that this bspkit knows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bspkit import results
from bspkit.model import comm_models


@dataclass(frozen=True)
class Evidence:
    """What one validation sweep says of the models: its best and each model's mean |error|."""

    algorithm: str
    model: str  # the best model of the sweep
    path: Path  # its validate.json
    date: str | None  # when it ran (YYYY-MM-DD), from its directory's name
    backend: str | None
    p: int | None
    errors: Mapping[str, float]  # per model: the mean |relative error| over the runs it predicted
    runs: int  # the runs scored
    # the best model's residual beyond the machine's noise over those runs (sd of log, its bias
    # included: bspkit.model.trust's model_sd), and the runs it is of; None before the split
    residual_sd: float | None = None
    residual_runs: int = 0

    def runner_up(self) -> tuple[str, float] | None:
        """The model with the next smallest mean |error|, and it."""
        others = sorted((e, m) for m, e in self.errors.items() if m != self.model)
        return (others[0][1], others[0][0]) if others else None

    def to_json(self) -> dict[str, Any]:
        return {
            "validate": str(self.path),
            "date": self.date,
            "backend": self.backend,
            "p": self.p,
            "best_model": self.model,
            "mean_abs_rel_error": dict(self.errors),
            "runs": self.runs,
            "residual_sd": self.residual_sd,
            "residual_runs": self.residual_runs,
        }

    def residual_note(self) -> str:
        """Where the residual comes from: "validate of lu, 2026-11-28, threads, p = 2, 12 runs"."""
        parts = [
            f"validate of {self.algorithm}",
            self.date or "",
            self.backend or "",
            f"p = {self.p}" if self.p else "",
        ]
        return ", ".join(x for x in parts if x) + f", {self.residual_runs} run(s)"


def read_evidence(path: Path, algorithm: str) -> Evidence | None:
    """The evidence of one validate.json, None where it gives none (unreadable, another
    algorithm, no run scored, a best model this bspkit does not know)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, Mapping) or data.get("algorithm") != algorithm:
        return None
    summary = (data.get("summary") or {}).get("all") or {}
    best = summary.get("best_model")
    if best not in comm_models.BY_NAME or not summary.get("runs_used"):
        return None
    errors = {m: float(v) for m in comm_models.NAMES if isinstance(v := summary.get(m), int | float)}
    if best not in errors:
        return None
    when = results.run_time(path.parent)
    p = data.get("p")
    overall = ((summary.get("split") or {}).get("all") or {}) if isinstance(summary.get("split"), Mapping) else {}
    resid = overall.get("model_sd")
    resid_ok = isinstance(resid, int | float) and not isinstance(resid, bool) and resid >= 0
    return Evidence(
        algorithm=algorithm,
        model=str(best),
        path=path,
        date=when.strftime("%Y-%m-%d") if when else None,
        backend=data.get("backend"),
        p=p if isinstance(p, int) else None,
        errors=errors,
        runs=int(summary.get("runs_used") or 0),
        residual_sd=float(resid) if resid_ok else None,
        residual_runs=int(overall.get("n") or 0) if resid_ok else 0,
    )


def evidence(algorithm: str, label: str | None = None, root: Path | None = None) -> Evidence | None:
    """The newest validation of the algorithm that gives evidence: of the back end `label` where
    there is one, else of any; None where there is none."""
    found = [e for path in results.validations(algorithm, root) if (e := read_evidence(path, algorithm))]
    same = [e for e in found if label is not None and e.backend == label]
    return (same or found or [None])[0]


def same_backend(ev: Evidence | None, backend: str | None) -> bool:
    """Whether the evidence was taken on the back end `backend` (mpi@CLUSTER counts as mpi);
    True where either is not known."""
    if ev is None or backend is None or ev.backend is None:
        return ev is not None
    return ev.backend.split("@", 1)[0] == backend.split("@", 1)[0]


def applies(ev: Evidence | None, p: int | None, backend: str | None = None) -> bool:
    """Whether the evidence chooses the model at p on `backend`: it was taken there (or what is
    not known is taken to agree). A model that won at one p can win there for a reason that does
    not carry over (on this VM g const won LU at p = 2 by 10 points, its larger communication
    making up for the compute that two busy cores lose, and missed by 40-74% at p = 4 and 8,
    where g(h,h*) missed by 15-18%; on an emulated cluster it missed LU at p = 2 by 33%): at
    another p or on another back end the most detailed model serves."""
    return same_backend(ev, backend) and ev is not None and (p is None or ev.p is None or ev.p == p)


def order(ev: Evidence | None, p: int | None = None, backend: str | None = None) -> tuple[str, ...]:
    """The models in the order a prediction at p takes the first that predicts: the evidence's
    best first where it applies at p, then the most detailed (comm_models.BEST_FIRST)."""
    if ev is None or not applies(ev, p, backend):
        return comm_models.BEST_FIRST
    return (ev.model, *(m for m in comm_models.BEST_FIRST if m != ev.model))


def why(used: str, ev: Evidence | None, algorithm: str, p: int | None = None, backend: str | None = None) -> str:
    """One line: the model a prediction (at p, on backend) used, and why."""
    if ev is None:
        return (
            f"model {used}: the most detailed the parameters serve (no validate of {algorithm} under results/validate/)"
        )
    sweep = f"validate of {algorithm}" + (f" on {ev.date}" if ev.date else "")
    context = ", ".join(part for part in (ev.backend or "", f"p = {ev.p}" if ev.p else "") if part)
    elsewhere = (
        ("on", backend, "on one back end", "on another")
        if not same_backend(ev, backend)
        else ("at", f"p = {p}", "at one p", "at another")
        if not applies(ev, p)
        else None
    )
    if elsewhere is not None:  # the evidence was taken on another back end, or at another p
        where, here, there, other = elsewhere
        return (
            f"model {used}: the most detailed the parameters serve {where} {here}; {sweep}"
            + (f" ({context})" if context else "")
            + f" found {ev.model} best there ({ev.errors[ev.model]:.1%}), and a model's win {there} is not "
            f"evidence {other}"
        )
    if used != ev.model:
        return (
            f"model {used}: the most detailed the parameters serve; {sweep}"
            + (f" ({context})" if context else "")
            + f" found {ev.model} best ({ev.errors[ev.model]:.1%}), which these parameters cannot predict"
        )
    second = ev.runner_up()
    versus = f" vs {second[1]:.1%} {second[0]}" if second else ""
    score = f"mean |error| {ev.errors[used]:.1%}{versus}"
    return f"model {used}: the best in {sweep} ({context + '; ' if context else ''}{score})"


def choice_json(
    used: str, ev: Evidence | None, algorithm: str, p: int | None = None, backend: str | None = None
) -> dict[str, Any]:
    """The choice as a JSON object: the model, the line, and the evidence (null: none)."""
    return {"model": used, "why": why(used, ev, algorithm, p, backend), "evidence": ev.to_json() if ev else None}


def chosen(
    values: Mapping[str, Any], ev: Evidence | None, p: int | None = None, backend: str | None = None
) -> str | None:
    """The model of `values` (per model; None where it cannot predict) that the evidence picks at
    p on backend."""
    return comm_models.best(values, order(ev, p, backend))
