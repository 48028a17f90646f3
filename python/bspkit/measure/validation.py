"""The validation sweep (`bspkit validate`): an algorithm's problem sizes and its second
parameter, the driver run for each, every run predicted from a probe's parameter file under
each model of communication (bspkit.model.comm_models, bspkit.model.supersteps), and the errors
summarized as the thesis' Tables D-G do. validate.json is written here; the page and the
terminal summary by bspkit.pages.validate_report; the command's options are read by
bspkit.commands.validate."""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from bspkit import algorithms as al
from bspkit.console import Failure, UsageError, progress, write_text
from bspkit.fileformat import format_problem
from bspkit.measure import machine_state as ms
from bspkit.measure.libraries import Library, bspkit_library
from bspkit.model import comm_models, costs, trust
from bspkit.model import drift as cm
from bspkit.model import predict as fc
from bspkit.model import supersteps as pd
from bspkit.model.params import JsonObject, Params
from bspkit.units import quantity
from bspkit.version import __version__

# Runs shorter than this are left out of the mean error (issue 5: "over runs longer than 0.1 s").
MIN_VALIDATED_TIME_S = 0.1
# A run where communication matters: its communication and synchronization are at least this
# share of the predicted time (g const; the models differ only in that part).
COMM_MATTERS_SHARE = 0.2

# Per model (predict.MODELS: "g const", "g(h)", "g(h,h*)"): seconds, or a relative error;
# None where the model cannot predict the run.
ByModel = dict[str, float | None]
# A summary of runs (`summarize`): per model the mean |relative error|, and the counts and the
# best model; validate.json's "overall" and "by_sweep" entries, keyed by model name.
Summary = JsonObject


class Row(TypedDict):
    """One run of the sweep as validate.json holds it (`measured_row`; docs/algorithm-output.md)."""

    size: int
    params: JsonObject  # the driver's parameters (n, q, alpha, ...)
    sweep_value: str | None
    measured_s: float  # the median over the repetitions
    times_s: list[float] | None
    W: float | None
    H: float | None
    S: int | None
    f_s_per_unit: float | None  # f timed on one process alone
    efficiency: float | None
    predicted_s: ByModel
    comm_s: ByModel
    work_s: float | None
    f_used_s_per_unit: float | None
    f_all_s_per_unit: float | None  # f timed on every process at once (the prediction's)
    rel_error: ByModel
    rel_error_f_alone: ByModel  # the thesis' f, for comparison
    command: list[str]
    # the 10-90 % band of the most detailed model's prediction (forecast.run_band) and whether
    # the measured time fell inside it
    band_model: NotRequired[str]
    interval_s: NotRequired[list[float]]
    in_band: NotRequired[bool]
    # the band of the parameters' spread alone (the band before issue 39), for comparison
    interval_parameters_s: NotRequired[list[float]]
    in_band_parameters: NotRequired[bool]
    # the noise of the measured time (bspkit.model.trust): the relative standard error of the
    # median over the repetitions kept, the machine's time-to-time variability over the regimes
    # the run spends its predicted time in (seconds per regime: regime_s)
    median_rse: NotRequired[float | None]
    machine_sd: NotRequired[float | None]
    regime_s: NotRequired[dict[str, float]]
    calibrated: NotRequired[JsonObject]  # calibration.calibrated_prediction, with --calibrate
    # the machine's state (bspkit.measure.machine_state.run_verdict): repetitions left out, or a run
    # marked as a whole with its evidence and its prediction as the machine was
    machine_state: NotRequired[JsonObject]
    measured_all_s: NotRequired[float]  # the median over every repetition, marked ones included
    as_it_was_s: NotRequired[ByModel]
    rel_error_as_it_was: NotRequired[ByModel]
    best_model: NotRequired[str | None]  # the best model over the whole sweep (`summaries`)


def summarize(rows: Sequence[Row], rel_error: Callable[[Row], ByModel] = lambda r: r["rel_error"]) -> Summary:
    """Mean |relative error| per model over the runs longer than MIN_VALIDATED_TIME_S (the
    errors of each run: `rel_error`, by default the raw prediction's)."""
    out: Summary = {"min_time_s": MIN_VALIDATED_TIME_S}
    # a run whose every repetition a busy machine spoiled is the machine's: scored apart
    long_rows = [r for r in rows if r["measured_s"] >= MIN_VALIDATED_TIME_S and not is_marked(r)]
    out["runs"] = len(rows)
    out["runs_used"] = len(long_rows)
    out.update(mean_abs_errors(long_rows, rel_error))
    # the best model is chosen on the runs every model could predict (a model that cannot
    # predict the hard runs must not look better for it); a model that predicts none (its
    # parameters are not in the file) is left out of that test
    scored = [m for m in comm_models.NAMES if out[m] is not None]
    common = [rel_error(r) for r in long_rows if all(rel_error(r).get(m) is not None for m in scored)]
    vals = []
    for m in comm_models.NAMES:
        if out[m] is not None and common:
            vals.append((sum(abs(e[m] or 0.0) for e in common) / len(common), m))
    if not vals:  # no run that every model predicts: compare each model's own mean
        vals = [(out[m], m) for m in comm_models.NAMES if out[m] is not None]
    out["best_model"] = min(vals)[1] if vals else None
    out["best_error"] = out[out["best_model"]] if vals else None
    banded = [r["in_band"] for r in long_rows if "in_band" in r]
    out["band_runs"] = len(banded)
    out["band_coverage"] = sum(banded) / len(banded) if banded else None
    # its Wilson 95 % interval, and whether the band is too narrow (bspkit.model.trust.coverage)
    out["band_check"] = trust.coverage(banded)
    alone = [r["in_band_parameters"] for r in long_rows if "in_band_parameters" in r]
    out["band_check_parameters"] = trust.coverage(alone)
    return out


def validation_split(
    rows: Sequence[Row], model: str | None, label: str = "all runs", sweep_name: str | None = None
) -> trust.Split | None:
    """The split of the runs' error under a model into the machine's noise and the model's
    (bspkit.model.trust), over the runs summarize() scores, by swept value then all together;
    None without a scored run with its noise (a validate.json from before the noise)."""
    if model is None:
        return None
    points = []
    for r in rows:
        if r["measured_s"] < MIN_VALIDATED_TIME_S or is_marked(r):
            continue
        v = r.get("sweep_value")
        value = f"{sweep_name} = {v}" if sweep_name and v is not None else str(v)
        pt = trust.check_point(
            (r.get("predicted_s") or {}).get(model) or 0.0,
            r["measured_s"],
            {"sweep": f"{label}, {value}"} if v is not None else {},
            rel_se=r.get("median_rse"),
            machine_sd=r.get("machine_sd"),
        )
        if pt is not None:
            points.append(pt)
    if not any(pt.noise_sd > 0 for pt in points):
        return None
    several = len({pt.labels.get("sweep") for pt in points}) > 1
    return trust.split(points, ("sweep",) if several else (), label)


def mean_abs_errors(rows: Sequence[Row], rel_error: Callable[[Row], ByModel]) -> dict[str, float | None]:
    """Per model the mean |relative error| of the rows (None where no row has one)."""
    out: dict[str, float | None] = {}
    for m in comm_models.NAMES:
        errs = [abs(e) for r in rows if (e := rel_error(r).get(m)) is not None]
        out[m] = sum(errs) / len(errs) if errs else None
    return out


def is_marked(row: Row) -> bool:
    """Every repetition of the run was measured while a process did not hold its core."""
    return bool((row.get("machine_state") or {}).get("all_marked"))


def marked_summary(rows: Sequence[Row]) -> Summary:
    """The runs scored apart (is_marked): per model the mean |relative error| raw and as the
    machine was (the prediction stretched by the run's lost share of a core)."""
    every = [r for r in rows if is_marked(r)]
    marked = [r for r in every if r["measured_s"] >= MIN_VALIDATED_TIME_S]
    out: Summary = {"runs": len(every), "runs_used": len(marked)}
    out["raw"] = mean_abs_errors(marked, lambda r: r["rel_error"])
    out["as_it_was"] = mean_abs_errors(marked, lambda r: r.get("rel_error_as_it_was") or {})
    out["evidence"] = [(r["size"], r["sweep_value"], (r.get("machine_state") or {}).get("evidence")) for r in every]
    return out


def comm_share(row: Row) -> float | None:
    """The predicted share of communication and synchronization in a run (g const)."""
    total = row["predicted_s"].get("g const")
    comm = (row.get("comm_s") or {}).get("g const")
    return comm / total if comm is not None and total else None


def group_summary(rows: list[Row], label: str = "all runs", sweep_name: str | None = None) -> Summary:
    """summarize(), plus the errors with f timed on one process alone, the mean efficiency,
    summarize() of the runs where communication matters (the thesis' question: which g model
    predicts them; on a run dominated by work every model is right), and the best model's error
    split into the machine's noise and the model's (`split`, validation_split; label names the
    runs: "cannon-put, p = 2")."""
    out = summarize(rows)
    sp = validation_split(rows, out.get("best_model"), label, sweep_name)
    if sp is not None:
        out["split"] = sp.to_json()
    out["marked"] = marked_summary(rows)
    out["reps_left_out"] = sum((r.get("machine_state") or {}).get("marked_reps", 0) for r in rows if not is_marked(r))
    heavy = [r for r in rows if (comm_share(r) or 0.0) >= COMM_MATTERS_SHARE]
    out["comm_matters"] = {**summarize(heavy), "min_share": COMM_MATTERS_SHARE}
    alone = summarize(rows, lambda r: r["rel_error_f_alone"])
    out["f_alone"] = {m: alone[m] for m in comm_models.NAMES}
    effs = [r["efficiency"] for r in rows if r["efficiency"] is not None and r["measured_s"] >= MIN_VALIDATED_TIME_S]
    out["efficiency"] = statistics.fmean(effs) if effs else None
    cal = calibrated_summary(rows)
    if cal is not None:
        out["calibrated"] = cal
    return out


def calibrated_summary(rows: list[Row]) -> Summary | None:
    """summarize() of the calibrated predictions, on the runs not flagged (the machine moved
    during them), with the raw errors of the same runs beside them; None without calibration."""
    cal_rows = [r for r in rows if r.get("calibrated")]
    if not cal_rows:
        return None
    kept = [r for r in cal_rows if not r["calibrated"]["flagged"]]
    out = summarize(kept, lambda r: r["calibrated"]["rel_error"])
    raw = summarize(kept)
    out["raw"] = {m: raw[m] for m in (*comm_models.NAMES, "best_model", "best_error")}
    out["flagged"] = len(cal_rows) - len(kept)
    out["uncalibrated"] = len(rows) - len(cal_rows)
    return out


def kernel_of(alg: al.Algorithm, run: JsonObject) -> str | None:
    """The probe kernel nearest the driver's (its closed form's f_kernel), for f's spread."""
    try:
        return alg.closed_form(run.get("params") or {}, int(run.get("p") or 1)).f_kernel
    except (costs.CostError, KeyError, TypeError, ValueError):
        return None


def repetition_marks(run: JsonObject, params: Params) -> list[ms.Mark | None]:
    """Per repetition of a driver run, its mark: the machine's state (a process did not hold its
    core), else the canary timed around it (slower than the probe's canary, or without one the
    run's own, by more than its threshold); [] where the run recorded neither."""
    state = ms.repetition_marks(run)
    reference = ms.CanaryReference.from_json((params.noise or {}).get("canary"))
    canary = ms.repetition_canary_marks(run, reference)
    if not canary:
        return state
    if not state:
        return canary
    return [s or c for s, c in zip(state, canary, strict=True)]


def measured_row(alg: al.Algorithm, res: al.RunResult, params: Params, size: int, sweep_value: str | None) -> Row:
    """One run with its predictions and errors under each model."""
    d = res.data
    # f on a core the process holds: the driver's timing of its kernel without the time it waited
    # for a core (f_all_held_s_per_unit; older drivers: f as timed)
    f_held = d.get("f_all_held_s_per_unit") or None
    try:
        pred = pd.predict(params, d, f_held)
        pred_alone = pd.predict(params, d, d.get("f_held_s_per_unit") or d.get("f_s_per_unit"))
    except pd.PredictionError as e:
        raise Failure(str(e)) from None
    # the repetitions during which every process held its core and ran at its usual pace
    # (machine_state.run_verdict): a state mark, else the canary's (issue 39: a slowdown no
    # scheduler counter sees), against the probe's canary where it measured one
    held = ms.run_verdict(d.get("times_s") or [d["time_s"]], repetition_marks(d, params))
    measured = statistics.median(held.times_s) if held.marked_reps and not held.all_marked else d["time_s"]
    row: Row = {
        "size": size,
        "params": d.get("params", {}),
        "sweep_value": sweep_value,
        "measured_s": measured,
        "times_s": d.get("times_s"),
        "W": d.get("W"),
        "H": d.get("H"),
        "S": d.get("S"),
        "f_s_per_unit": d.get("f_s_per_unit"),
        "efficiency": al.efficiency(alg, d, d.get("f_s_per_unit")),
        "predicted_s": {m: pred[m] for m in comm_models.NAMES},
        "comm_s": {m: pred[m + " comm_s"] for m in comm_models.NAMES},
        "work_s": pred["work_s"],
        "f_used_s_per_unit": pred["f_s_per_unit"],
        "f_all_s_per_unit": d.get("f_all_s_per_unit"),
        "rel_error": {m: pd.relative_error(pred[m], measured) for m in comm_models.NAMES},
        # the thesis' f (the kernel on one process alone), for comparison
        "rel_error_f_alone": {m: pd.relative_error(pred_alone[m], measured) for m in comm_models.NAMES},
        "command": res.command,
    }
    if held.marked_reps:
        row["machine_state"] = held.as_dict()
        row["measured_all_s"] = d["time_s"]
    if held.all_marked and held.stretch is not None:
        stretched = {m: (v * held.stretch if (v := pred[m]) is not None else None) for m in comm_models.NAMES}
        row["as_it_was_s"] = stretched
        row["rel_error_as_it_was"] = {m: pd.relative_error(stretched[m], measured) for m in comm_models.NAMES}
    # the noise of the measured time: its median's own standard error over the repetitions kept,
    # the machine's time-to-time variability over the regimes the run spends its time in
    row["median_rse"] = trust.median_rel_se(held.times_s)
    best = comm_models.best(pred)
    steps = d.get("supersteps") or []
    machine = trust.regimes_of(params.noise)
    if best is not None and machine:
        comm = trust.steps_of_run(params, steps, best, pd.superstep_comm_s)
        regime_s = trust.regime_seconds(comm, float(pred["work_s"] or 0.0), pd.empty_sync_s(params), params.noise)
        row["regime_s"] = regime_s
        row["machine_sd"] = trust.mixed_sd(regime_s, machine)
    spread = fc.spread_of(params)
    kernel = kernel_of(alg, d)
    banded = fc.run_band(params, pred, int(d.get("S") or 0), spread, kernel, steps)
    if banded is not None:
        model, (low, high) = banded
        row.update(band_model=model, interval_s=[low, high], in_band=low <= measured <= high)
    # the band as it was before the noise and the model's residuals (the parameters' spread alone)
    bare = fc.Spread(spread.f, spread.g, spread.l, spread.f_kernels)
    if bare != spread:
        alone = fc.run_band(params, pred, int(d.get("S") or 0), bare, kernel)
        if alone is not None:
            low, high = alone[1]
            row.update(interval_parameters_s=[low, high], in_band_parameters=low <= measured <= high)
    return row


# The format of validate.json this bspkit writes and reads (--resume).
RESULT_FORMAT = 1


def config_key(size: Any, sweep_value: Any) -> tuple[str, str]:
    return (str(size), str(sweep_value))


def row_key(row: Row) -> tuple[str, str]:
    return config_key(row.get("size", (row.get("params") or {}).get("n")), row.get("sweep_value"))


def load_resumed(outdir: Path, alg: al.Algorithm, backend: str, nprocs: int | None) -> JsonObject:
    """The sweep in DIR that --resume continues: its validate.json, checked to be the same
    algorithm, back end and p as this command's."""
    js = outdir / "validate.json"
    try:
        data = json.loads(js.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--resume {outdir}: no validate.json there (nothing to continue)") from None
    except (OSError, ValueError) as e:
        raise Failure(f"--resume {outdir}: cannot read {js}: {e}") from None
    if not isinstance(data, dict):
        raise Failure(f"{js}: not a validate.json")
    problem = format_problem(data, "validate.json", RESULT_FORMAT)
    if problem:
        raise Failure(f"{js}: {problem}")
    theirs = (data.get("algorithm"), data.get("backend"), data.get("p"))
    ours = (alg.name, backend, nprocs if nprocs is not None else data.get("p"))
    if theirs != ours:
        raise UsageError(
            f"--resume {outdir}: that sweep is {theirs[0]} on {theirs[1]} with p = {theirs[2]}, this command asks for "
            f"{ours[0]} on {ours[1]} with p = {ours[2]}: give the same ALG, -b and -n"
        )
    return data


def _iso(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def summaries(
    rows: list[Row], sweep_vals: list[str], label: str = "all runs", sweep_name: str | None = None
) -> tuple[Summary, list[tuple[Any, Summary]]]:
    """(the summary over every run, [(value, the summary of its runs), ...]); each row is
    marked with the best model overall. label: what the runs are ("cannon-put, p = 2"), and
    sweep_name the swept parameter's, for the split's regimes."""
    overall = group_summary(rows, label, sweep_name)
    for r in rows:
        r["best_model"] = overall.get("best_model")
    by_sweep = []
    values: list[str | None] = [*sweep_vals] or [None]  # no second parameter: one group
    for v in values:
        rs = [r for r in rows if r["sweep_value"] == v]
        if rs:
            value = f"{label}, {sweep_name} = {v}" if sweep_name and v is not None else label
            by_sweep.append((v if v is not None else "all sizes", group_summary(rs, value, sweep_name)))
    return overall, by_sweep


def remaining(sizes: Sequence[int], sweep_values: Sequence[str], rows: Sequence[Row]) -> list[tuple[int, str | None]]:
    """The (size, value) pairs of the sweep that `rows` (a resumed sweep's) do not hold yet,
    every value with every size."""
    done = {row_key(r) for r in rows}
    values: list[str | None] = [*sweep_values] or [None]  # no second parameter: sizes only
    configs = [(n, v) for v in values for n in sizes]
    return [(n, v) for n, v in configs if config_key(n, v) not in done]


@dataclass(frozen=True)
class SweepSetup:
    """What a sweep runs: sizes x values of one algorithm on one back end and p, each run
    predicted from one parameter file."""

    alg: al.Algorithm
    backend: str  # bspkit's back end, or another library's label (name@version)
    nprocs: int
    hostfile: Path | None
    params_path: Path
    params: Params
    sweep_values: tuple[str, ...]
    reps: int
    timeout_s: float
    keep_going: bool  # skip a run that fails instead of stopping
    # 'quick' or 'full': each driver run calibrates before its repetitions and after them,
    # with the f size of the probe it is compared with; None: no calibration
    calibrate_mode: str | None
    driver_args: tuple[str, ...]  # given to every driver run, after the sweep's own
    outdir: Path
    command: str  # the command line, for validate.json
    library: Library | None = None  # another BSPlib; None: bspkit's own


class Sweep:
    """A sweep under way: validate.json's content (`result`), saved after every run so that a
    sweep cut short keeps every run that finished, and continued from a saved one (`resumed`)."""

    def __init__(self, setup: SweepSetup, resumed: JsonObject | None) -> None:
        self.setup = setup
        self.rows: list[Row] = list(resumed.get("rows", [])) if resumed else []
        self.failed: list[JsonObject] = []
        self.calibrations: list[JsonObject] = list(resumed.get("calibrations", [])) if resumed else []
        self.result: JsonObject = {
            "format": RESULT_FORMAT,
            "bspkit_version": __version__,
            "complete": False,
            "algorithm": setup.alg.name,
            "description": setup.alg.description,
            "backend": setup.backend,
            "library": setup.library.describe() if setup.library else bspkit_library(),
            "p": setup.nprocs,
            "hostfile": str(setup.hostfile) if setup.hostfile else None,
            "sweep": setup.alg.sweep_param,
            "params_file": str(setup.params_path),
            "params_p": setup.params.p,
            "machine": setup.params.machine,
            "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "loadavg_start": [round(x, 2) for x in os.getloadavg()],
            "command": setup.command,
            "rows": self.rows,
            "failed": self.failed,
            "calibrations": self.calibrations,
            "within_run_flag": cm.WITHIN_RUN_FLAG,
        }
        cost = (resumed.get("calibration_cost") or {}) if resumed else {}
        self._started = time.monotonic()
        self._sweep_s_before = float(cost.get("sweep_s", 0.0))  # the resumed sweep's time
        self._calibration_s = float(cost.get("calibration_s", 0.0))

    @property
    def resume_hint(self) -> str:
        out = self.setup.outdir
        return f"the runs done are in {out / 'validate.json'}; continue with --resume {out}"

    def run(self, todo: Sequence[tuple[int, str | None]], launch: al.DriverLaunch) -> None:
        """Runs and predicts each (size, value) of `todo`, saving validate.json after each;
        Failure when a run fails (unless keep_going) or none finishes."""
        try:
            for i, (n, v) in enumerate(todo):
                progress(
                    f"[{i + 1}/{len(todo)}] {self.setup.alg.name} n = {n}"
                    + (f", {self.setup.alg.sweep_option} {v}" if v is not None else "")
                )
                self._run_one(n, v, launch)
        except KeyboardInterrupt:
            if self.rows:
                self.save()
                progress(f"interrupted: {self.resume_hint}")
            raise
        if not self.rows:
            raise Failure("no run finished")

    def _driver_args(self, n: int, v: str | None) -> list[str]:
        s = self.setup
        dargs = ["--size", str(n), "--reps", str(s.reps), "--measure-f", "--no-check", *s.driver_args]
        if v is not None and s.alg.sweep_option:
            dargs += [s.alg.sweep_option, v]
        if s.calibrate_mode is not None:
            dargs += ["--calibrate", s.calibrate_mode]
        return dargs

    def _run_one(self, n: int, v: str | None, launch: al.DriverLaunch) -> None:
        s = self.setup
        started = time.time()
        try:
            res = al.run_driver(s.alg, launch, s.nprocs, self._driver_args(n, v), timeout_s=s.timeout_s)
        except al.AlgorithmError as e:
            if not s.keep_going:
                if self.rows:
                    self.save()
                raise Failure(f"{e}\n{self.resume_hint}" if self.rows else str(e)) from None
            progress(f"skipped: {e}")
            self.failed.append({"size": n, "sweep_value": v, "error": str(e)})
            self.save()
            return
        row = measured_row(s.alg, res, s.params, n, v)
        self.rows.append(row)
        if s.calibrate_mode is not None:
            self._file_calibrations(row, res.data, started)
        self.save()
        errs = ", ".join(
            f"{m} {row['rel_error'][m]:+.1%}" for m in comm_models.NAMES if row["rel_error"][m] is not None
        )
        eff = f", efficiency {row['efficiency']:.1%}" if row["efficiency"] is not None else ""
        progress(f"    measured {quantity(row['measured_s'], 's')}{eff}; predicted: {errs}")
        state = row.get("machine_state")
        if state and state["all_marked"]:
            as_it_was = ", ".join(
                f"{m} {e:+.1%}"
                for m in comm_models.NAMES
                if (e := (row.get("rel_error_as_it_was") or {}).get(m)) is not None
            )
            progress(f"    the machine's: every repetition lost its core ({state['evidence']}); as it was: {as_it_was}")
        elif state:
            progress(f"    {state['marked_reps']} repetition(s) left out, a process lost its core: {state['evidence']}")

    def _file_calibrations(self, row: Row, data: JsonObject, started: float) -> None:
        """The run's own calibrations (before and after its repetitions), filed in validate.json,
        and its calibrated prediction."""
        recs = data.get("calibration") or {}
        drifts = [self._file_calibration(recs.get(when), when, started) for when in ("before", "after")]
        self._calibration_s += float(recs.get("seconds") or 0.0)
        before, after = drifts
        if before is None:
            return
        try:
            row["calibrated"] = cm.calibrated_prediction(row["measured_s"], data, self.setup.params, before, after)
        except pd.PredictionError as e:
            raise Failure(str(e)) from None
        head = [d.headline for d in drifts if d is not None]
        progress(
            "    calibration (before -> after): "
            + ", ".join(
                f"{k} x{head[0][k]:.2f}" + (f" -> x{head[-1][k]:.2f}" if len(head) > 1 else "")
                for k in cm.HEADLINE
                if head[0].get(k) is not None
            )
        )

    def _file_calibration(self, rec: JsonObject | None, when: str, started: float) -> cm.Drift | None:
        """One calibration record of the last run, filed with its drift; None where there is none."""
        if not rec:
            return None
        try:
            cal = cm.Calibration.from_record(rec, _iso(started + float(rec.get("t_s") or 0.0)))
            drift = cm.drift_of(cal, self.setup.params)
        except cm.CalibrationError as e:
            raise Failure(f"{self.setup.params_path}: {e}") from None
        self.calibrations.append(
            {
                "index": len(self.calibrations),
                "run": len(self.rows) - 1,
                "when": when,
                **cal.to_json(),
                "drift": drift.to_json(),
            }
        )
        return drift

    def bring_up_to_date(self) -> None:
        """The summaries, the load and the calibration's cost as they stand after the runs so far."""
        self.result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        if self.setup.calibrate_mode is not None:
            sweep_s = self._sweep_s_before + time.monotonic() - self._started
            self.result["calibration_cost"] = {
                "rounds": len(self.calibrations),
                "calibration_s": round(self._calibration_s, 3),
                "sweep_s": round(sweep_s, 3),
                "share": self._calibration_s / sweep_s if sweep_s > 0 else None,
            }
        if self.rows:
            s = self.setup
            label = f"{s.alg.name}, p = {s.nprocs}"
            overall, by_sweep = summaries(self.rows, list(s.sweep_values), label, s.alg.sweep_param)
            self.result["summary"] = {"all": overall, "by_sweep": by_sweep}

    def save(self) -> Path:
        """validate.json as it stands: a sweep cut short keeps every run that finished."""
        self.bring_up_to_date()
        return write_json(self.result, self.setup.outdir)

    def finish(self) -> Path:
        """validate.json complete (or not, with failed runs)."""
        self.result["complete"] = not self.failed
        return self.save()


def write_json(result: JsonObject, outdir: Path) -> Path:
    """validate.json, whole or not at all (written after every run of a sweep)."""
    js = outdir / "validate.json"
    write_text(js, json.dumps(result, indent=1) + "\n")
    return js
