"""The probe's validation: eq. (2.6) with the fitted parameters against the off-grid h-relations
bspprobe measured among its grid points (`validate`); its error split into the machine's noise
and the model's error by primitive, message size and h (`probe_split`, bspkit.model.trust); the
machine's drift during the run, from the grid itself (`machine_drift`); and the validation
again calibrated by the probe's calibration rounds (`calibrated_validation`, issue 17)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from bspkit.fileformat import JsonObject
from bspkit.measure.rawdata import RawRun
from bspkit.model import trust
from bspkit.model.comm_models import predict_time, predict_time_levels
from bspkit.model.drift import (
    WITHIN_RUN_FLAG,
    Calibration,
    CalibrationError,
    Drift,
    drift_of,
    mean_drift,
    reference_of,
)
from bspkit.model.params import (
    CalibratedPoint,
    CalibratedValidation,
    CalibrationRound,
    ErrorStats,
    Params,
    Surface,
    Validation,
    ValidationPoint,
)

VALIDATION_THRESHOLD = 0.10  # relative error of eq. (2.6) predictions that passes


def _error_stats(errs: list[float]) -> ErrorStats:
    if not errs:
        return {"mean_abs_rel_error": None, "max_abs_rel_error": None, "within_threshold": 0, "pass": None}
    a = np.abs(np.array(errs))
    return {
        "mean_abs_rel_error": float(a.mean()),
        "max_abs_rel_error": float(a.max()),
        "within_threshold": int(np.count_nonzero(a <= VALIDATION_THRESHOLD)),
        "pass": bool(a.mean() <= VALIDATION_THRESHOLD),
    }


DRIFT_WINDOW = 40  # grid points on either side (in the probe's order) that date a point
DRIFT_STABLE = 1.25  # a local speed factor outside [1/1.25, 1.25] marks a changed machine state


def machine_drift(
    run: RawRun, g: dict[str, Surface]
) -> tuple[list[tuple[int, float]], Callable[[int | None], float | None]]:
    """How the machine's speed moved during the run, from the grid itself: for every grid
    point, log(measured / model) with the per-h model of its surface, in the probe's order;
    returns the (seq, factor) curve (a running median over DRIFT_WINDOW points either side)
    and a function seq -> local factor. A factor of 3 means the grid points measured around
    then took 3 times what the whole grid's fit says (a machine that changed state: a VM
    whose cores were moved, another job, frequency scaling)."""
    pts = []
    for key in run.g_keys():
        levels = g[key].levels if key in g else []
        if not levels:
            continue
        for pt in run.g_points(key):
            if pt.seq is None:
                continue
            pred = predict_time_levels(levels, pt.h, pt.count)
            if pred and pred > 0 and pt.stats.median > 0:
                pts.append((pt.seq, math.log(pt.stats.median / pred)))
    pts.sort()
    if len(pts) < 2 * DRIFT_WINDOW:
        return [], lambda _s: None
    seqs = np.array([p[0] for p in pts])
    logs = np.array([p[1] for p in pts])

    def factor_at(seq: int | None) -> float | None:
        if seq is None:
            return None
        i = int(np.searchsorted(seqs, seq))
        lo, hi = max(0, i - DRIFT_WINDOW), min(len(logs), i + DRIFT_WINDOW)
        return float(math.exp(np.median(logs[lo:hi])))

    step = max(1, len(pts) // 200)
    curve = [(int(seqs[i]), factor_at(int(seqs[i])) or 1.0) for i in range(0, len(pts), step)]
    return curve, factor_at


def calibrated_validation(run: RawRun, reference: Params, rows: list[ValidationPoint]) -> CalibratedValidation | None:
    """The validation again with eq. (2.6) scaled by the drift of the calibration rounds that
    bspprobe ran among the points (issue 17): each visit of a point takes the g drift at its
    h, the geometric mean of the rounds before and after it; a point most of whose visits lie
    between rounds whose predictions differ by more than WITHIN_RUN_FLAG is flagged and left out
    (its median is its visits' majority).
    None without rounds."""
    rounds: list[tuple[int, Drift, JsonObject]] = []
    for rec, cal in probe_calibrations(run):
        if isinstance(rec.get("seq"), int):
            try:
                rounds.append((rec["seq"], drift_of(cal, reference), rec))
            except CalibrationError:
                continue
    if not rounds:
        return None
    rounds.sort(key=lambda r: r[0])
    seqs = [r[0] for r in rounds]
    errors: list[float] = []
    flagged = 0
    for row in rows:
        visits = run_point_visits(run, row)
        if "rel_error" not in row or not visits:
            continue
        factors, moved = [], 0
        for visit in visits:
            i = max(0, int(np.searchsorted(seqs, visit, side="right")) - 1)
            before = rounds[i][1]
            after = rounds[i + 1][1] if i + 1 < len(rounds) else None
            factors.append(mean_drift(before, after).g_at(row["h"]))
            if after is not None:  # the point's prediction with the round after it / before it
                ratio = after.g_at(row["h"]) / before.g_at(row["h"])
                moved += not 1 / WITHIN_RUN_FLAG <= ratio <= WITHIN_RUN_FLAG
        # the point's median is its visits' majority: flagged when most of them saw a move
        flagged_point = 2 * moved > len(visits)
        factor = math.exp(sum(math.log(x) for x in factors) / len(factors))
        pred = row["predicted_s"] * factor
        row["calibrated"] = CalibratedPoint(
            g_drift=factor,
            predicted_s=pred,
            rel_error=(pred - row["measured_s"]) / row["measured_s"],
            flagged=flagged_point,
        )
        if flagged_point:
            flagged += 1
        else:
            errors.append(row["calibrated"]["rel_error"])
    return {
        "rounds": [
            CalibrationRound(seq=s, t_s=rec.get("t_s"), elapsed_s=rec.get("elapsed_s"), drift=d.headline)
            for s, d, rec in rounds
        ],
        "flagged": flagged,
        "within_run_flag": WITHIN_RUN_FLAG,
        **_error_stats(errors),
    }


def calibration_reference(run: RawRun) -> JsonObject:
    """The parameter file's `calibration`: the median of the probe's rounds ({} without)."""
    rounds = [cal for _rec, cal in probe_calibrations(run)]
    return reference_of(rounds) if rounds else {}


def probe_calibrations(run: RawRun) -> list[tuple[JsonObject, Calibration]]:
    """The calibration rounds of a probe that can be read (a bad one is left out)."""
    out = []
    for rec in run.calibration:
        try:
            out.append((rec, Calibration.from_record(rec)))
        except CalibrationError:
            continue
    return out


def run_point_visits(run: RawRun, row: ValidationPoint) -> tuple[int, ...]:
    """The seq of every visit of the validation point a row reports."""
    for pt in run.validation:
        if pt.key == row["key"] and pt.msg_words == row["msg_words"] and pt.count == row["count"]:
            return pt.seqs
    return ()


# The dimensions of the probe check's regimes, finest first (trust.split judges them in this order).
SPLIT_DIMENSIONS = ("primitive x size", "primitive", "size", "h")


def point_labels(key: str, msg_words: float, h: float) -> dict[str, str]:
    """The regimes of a validation point: its primitive, its message size band (h*), its h band."""
    prim = key.split("/", 1)[0]
    size = trust.band_of(msg_words, trust.SIZE_BANDS)
    return {
        "primitive x size": f"{prim}, {size}",
        "primitive": prim,
        "size": size,
        "h": trust.band_of(h, trust.H_BANDS),
    }


def probe_split(val: Mapping[str, Any], noise: Mapping[str, Any] | None = None) -> trust.Split | None:
    """The split of the check's error (bspkit.model.trust) over its scored points (those measured
    while every process held its core), each with its median's own standard error
    (`median_rse`, stored per point) and the machine's time-to-time variability of its h's regime
    (params.json `noise.regimes`, where the probe measured it). None without scored points."""
    machine = trust.regimes_of(noise)
    points = []
    for r in val.get("points") or []:
        if "rel_error" not in r or "marked" in r:
            continue
        regime = trust.comm_regime(float(r["h"]), noise)
        pt = trust.check_point(
            float(r["predicted_s"]),
            float(r["measured_s"]),
            point_labels(str(r["key"]), float(r["msg_words"]), float(r["h"])),
            rel_se=r.get("median_rse"),
            machine_sd=machine.get(regime),
        )
        if pt is not None:
            points.append(pt)
    if not any(pt.noise_sd > 0 for pt in points):
        return None  # a file from before the points kept their noise: nothing to split by
    return trust.split(points, SPLIT_DIMENSIONS, "all primitives and sizes", machine)


def validate(
    run: RawRun,
    g: dict[str, Surface],
    f: dict[str, float | None] | None = None,
    l_s: dict[str, float] | None = None,
    calibration: JsonObject | None = None,
    noise: Mapping[str, Any] | None = None,
) -> Validation:
    """Eq. (2.6) with the fitted parameters against the off-grid validation points: fitted
    per value of h of the grid and interpolated (`level_fits`; the prediction the check is
    about, `predicted_s`) and, for comparison, one fit over the whole grid
    (`predicted_global_s`). With f, l and the probe's calibration reference (computed from the
    run's rounds when not given), also calibrated by those rounds (`calibrated`). Each point
    carries its median's relative standard error (`median_rse`, from its samples), and the
    check its error split into noise and model (`split`: probe_split; with the machine's
    time-to-time variability where `noise`, params.json's object, has its regimes)."""
    rows: list[ValidationPoint] = []
    curve, factor_at = machine_drift(run, g)
    for pt in run.validation:
        row: ValidationPoint = {
            "key": pt.key,
            "msg_words": pt.msg_words,
            "count": pt.count,
            "h": pt.h,
            "measured_s": pt.stats.median,
            "seq": pt.seq,
            "drift_factor": factor_at(pt.seq),
        }
        rse = trust.median_rel_se(pt.samples)
        if rse is not None:
            row["median_rse"] = rse
        surface = g.get(pt.key)
        pm = surface.predict if surface else None
        levels = surface.levels if surface else None
        if pm is None or not levels:
            row["skipped"] = "no fitted parameters for " + pt.key
        elif pt.h < pm.h_half:
            row["skipped"] = f"h = {pt.h} < h_half = {pm.h_half:.0f}"
        else:
            pred = predict_time_levels(levels, pt.h, pt.count)
            assert pred is not None
            err = (pred - pt.stats.median) / pt.stats.median
            pred_global = predict_time(pm, pt.h, pt.count)
            row.update(
                {
                    "predicted_s": pred,
                    "rel_error": err,
                    "model": "2.6 per h",
                    "pass": bool(abs(err) <= VALIDATION_THRESHOLD),
                    "predicted_global_s": pred_global,
                    "rel_error_global": (pred_global - pt.stats.median) / pt.stats.median,
                    "model_global": pm.model,
                }
            )
        if pt.mark is not None:
            row["marked"] = pt.mark.as_dict()
            if "predicted_s" in row:
                # the state covers the whole batch: as the machine was, the model predicts the
                # batch's time, so its mean sample, not the median that a few long waits miss
                as_it_was = row["predicted_s"] * pt.mark.stretch
                mean = float(np.mean(pt.samples))
                row["as_it_was_s"] = as_it_was
                row["measured_mean_s"] = mean
                row["rel_error_as_it_was"] = (as_it_was - mean) / mean
        rows.append(row)
    # The check scores the model on the points measured while every process held its core;
    # the others are the machine's, reported apart (`marked`) with their evidence.
    predicted = [r for r in rows if "rel_error" in r]
    used = [r for r in predicted if "marked" not in r]
    marked = [r for r in predicted if "marked" in r]
    out: Validation = {
        "threshold": VALIDATION_THRESHOLD,
        "model": "2.6 per h",
        "points": rows,
        "used": len(used),
        "skipped": len(rows) - len(predicted),
    }
    out.update(_error_stats([r["rel_error"] for r in used]))
    out["global"] = _error_stats([r["rel_error_global"] for r in used])
    out["marked"] = {
        "points": len(marked),
        "raw": _error_stats([r["rel_error"] for r in marked]),
        "as_it_was": _error_stats([r["rel_error_as_it_was"] for r in marked]),
    }
    # The same check on the points measured while the machine ran as the grid's fit says
    # (local speed factor within DRIFT_STABLE): tells a wrong model from a machine that
    # changed state during the run. Reported beside the check, never instead of it.
    stable = [r for r in used if (speed := r.get("drift_factor")) and 1 / DRIFT_STABLE <= speed <= DRIFT_STABLE]
    out["stable_state"] = {
        "points": len(stable),
        "factor_bound": DRIFT_STABLE,
        **_error_stats([r["rel_error"] for r in stable]),
    }
    sp = probe_split(out, noise)
    if sp is not None:
        out["split"] = sp.to_json()
    if calibration is None:
        calibration = calibration_reference(run)
    reference = Params(f=dict(f or {}), l=dict(l_s or {}), g=g, calibration=calibration)
    calibrated = calibrated_validation(run, reference, used)
    if calibrated is not None:
        out["calibrated"] = calibrated
    out["drift"] = {
        "window": DRIFT_WINDOW,
        "curve": curve,
        "max_factor": max((f for _s, f in curve), default=None),
        "min_factor": min((f for _s, f in curve), default=None),
        "share_off": (sum(1 for _s, f in curve if not 1 / DRIFT_STABLE <= f <= DRIFT_STABLE) / len(curve))
        if curve
        else None,
    }
    return out
