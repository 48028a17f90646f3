"""The machine's state beside every measurement (issue 29): synthetic CPU-share, run-delay and
steal traces give the known marks, and the known stretched ("as the machine was") predictions,
in the probe's fit and check and in `bspkit validate`."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from bspkit.measure import machine_state as ms
from bspkit.measure.rawdata import load_raw
from bspkit.model import comm_models, verdict
from bspkit.model.fit import fit_run

from synth import SynthSpec, synthetic_records


def state(
    wall: float,
    waited: list[float],
    *,
    cpu: list[float] | None = None,
    steal: float = 0.0,
    cores: int = 2,
    pressure: float = 0.0,
    involuntary: list[int] | None = None,
) -> dict[str, Any]:
    """A `state` object as bspprobe, the drivers and the profile write it (docs/probe-format.md)."""
    n = len(waited)
    return {
        "wall_s": wall,
        "cpu_s": cpu if cpu is not None else [wall - w for w in waited],
        "waited_s": waited,
        "involuntary": involuntary if involuntary is not None else [3 if w else 0 for w in waited],
        "cpus": list(range(n)),
        "migrated": [False] * n,
        "steal_s": steal,
        "cpu_pressure_s": pressure,
        "running": n + 1,
        "cores_online": cores,
    }


QUIET = state(0.01, [0.0, 0.0])


# ------------------------------------------------------------------------ marks of one batch


def test_a_quiet_batch_is_not_marked() -> None:
    assert ms.mark_of_json(QUIET) is None


def test_waiting_in_a_sync_is_not_losing_the_core() -> None:
    """A process that sleeps in bsp_sync until the others arrive has a low CPU share but did not
    wait for a core: not marked."""
    s = state(0.01, [0.0, 0.0], cpu=[0.01, 0.004])
    assert ms.BatchState.from_json(s).cpu_shares()[1] == pytest.approx(0.4)  # type: ignore[union-attr]
    assert ms.mark_of_json(s) is None


def test_a_process_that_waited_for_its_core_is_marked_with_the_evidence() -> None:
    mark = ms.mark_of_json(state(0.010, [0.0, 0.004], involuntary=[0, 7], pressure=0.005))
    assert mark is not None
    assert mark.worst_process == 1
    assert mark.held_share == pytest.approx(0.6)
    assert mark.stretch == pytest.approx(1 / 0.6)
    assert "process 1 waited 4 ms for a core (40% of the 10 ms, on a CPU 60% of it, 7 involuntary switches)" in (
        mark.evidence
    )
    assert "CPU pressure 50%" in mark.evidence and "3 runnable tasks on 2 cores" in mark.evidence


def test_the_slowest_process_sets_the_pace() -> None:
    """Waits of 30% and 20%: the slowest process held 70% of its core, a stretch of 1/0.7; a wait
    of nearly the whole batch is capped at a stretch of 20."""
    mark = ms.mark_of_json(state(1.0, [0.3, 0.2]))
    assert mark is not None and mark.worst_process == 0
    assert mark.held_share == pytest.approx(0.7) and mark.stretch == pytest.approx(1 / 0.7)
    assert ms.mark_of_json(state(1.0, [0.99, 0.0])).stretch == pytest.approx(20.0)  # type: ignore[union-attr]


@pytest.mark.parametrize(("lost", "marked"), [(0.09, False), (0.10, True), (0.5, True)])
def test_the_mark_starts_at_a_tenth_of_the_batch(lost: float, marked: bool) -> None:
    assert ms.LOST_MARK == 0.10
    assert (ms.mark_of_json(state(1.0, [lost, 0.0])) is not None) is marked


def test_stolen_time_marks_every_process_alike() -> None:
    """The hypervisor took 30% of both cores (plus the counter's one tick per core): held 70%."""
    s = state(1.0, [0.0, 0.0], steal=0.6 + 2 * ms.STEAL_TICK_S)
    mark = ms.mark_of_json(s)
    assert mark is not None and mark.held_share == pytest.approx(0.7)
    assert "steal 30%" in mark.evidence


def test_a_tick_of_steal_in_a_short_batch_is_the_counters_resolution() -> None:
    """/proc/stat counts steal in 10 ms ticks: one tick per core within a 5 ms batch is no evidence."""
    assert ms.mark_of_json(state(0.005, [0.0, 0.0], steal=0.02)) is None


def test_files_without_a_state_give_no_mark() -> None:
    assert ms.mark_of_json(None) is None
    assert ms.mark_of_json({"wall_s": 0}) is None
    assert ms.summarize([None, {}]).recorded is False


def test_a_trace_of_batches_summarized() -> None:
    trace = [QUIET, QUIET, state(0.01, [0.005, 0.0]), QUIET, state(0.02, [0.0, 0.004])]
    s = ms.summarize(trace)
    assert (s.batches, s.marked) == (5, 2)
    assert s.least_held == pytest.approx(0.5)
    assert s.sentence() == (
        "in 2 of 5 batches (40%) a process did not hold its core (in the worst one a process held 50% of its core), "
        "median CPU pressure 0%"
    )


# ----------------------------------------------------------------- a run of several repetitions


def test_a_run_is_scored_on_its_unmarked_repetitions() -> None:
    marks = ms.repetition_marks({"state": [QUIET, state(0.3, [0.15, 0.0]), QUIET]})
    v = ms.run_verdict([0.20, 0.30, 0.22], marks)
    assert v.times_s == (0.20, 0.22) and v.marked_reps == 1 and not v.all_marked
    assert "process 0 waited 150 ms" in (v.evidence or "")


def test_a_run_marked_in_every_repetition_is_stretched_by_its_median_loss() -> None:
    marks = ms.repetition_marks({"state": [state(1, [0.5, 0]), state(1, [0.2, 0]), state(1, [0, 0.6])]})
    v = ms.run_verdict([2.0, 1.25, 2.5], marks)
    assert v.all_marked and v.marked_reps == 3 and v.times_s == (2.0, 1.25, 2.5)
    assert v.stretch == pytest.approx(2.0)  # the median of 1/0.5, 1/0.8, 1/0.4


def test_a_run_without_states_is_scored_as_it_is() -> None:
    v = ms.run_verdict([1.0, 2.0], ms.repetition_marks({}))
    assert v.marked_reps == 0 and v.times_s == (1.0, 2.0)


# ------------------------------------------------- the probe: the fit and its check of eq. (2.6)


def busy_probe(tmp_path: Path, slow_every: int) -> Path:
    """A synthetic probe in which every `slow_every`-th g point and validation visit ran while
    process 1 held half its core: its samples are twice the model's, its state says so."""
    recs = synthetic_records(SynthSpec(noise=0.01, validation=12))
    k = 0
    for rec in recs:
        if rec["type"] not in ("g", "validation"):
            continue
        k += 1
        wall = sum(rec["samples_s"])
        if k % slow_every == 0:
            rec["samples_s"] = [2 * t for t in rec["samples_s"]]
            rec["state"] = state(2 * wall, [0.0, wall])
        else:
            rec["state"] = state(wall, [0.0, 0.0])
    path = tmp_path / "busy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_the_fit_leaves_the_marked_points_out(tmp_path: Path) -> None:
    run = load_raw(busy_probe(tmp_path, 4))
    params = fit_run(run)
    marked = sum(1 for pt in run.g if pt.mark is not None)
    assert marked > 0
    assert sum(params.machine_state["left_out_points"].values()) == marked
    truth = SynthSpec().g["put/alltoall"]
    pm = params.g["put/alltoall"].predict
    assert pm is not None and pm.g_inf == pytest.approx(truth.g_inf, rel=0.05)
    # the same file with the states taken out: the slow points bend the fit
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        "".join(
            json.dumps({k: v for k, v in json.loads(ln).items() if k != "state"}) + "\n"
            for ln in run.path.read_text().splitlines()
        )
    )
    blind = fit_run(load_raw(plain))
    assert blind.machine_state["summary"]["batches"] == 0
    pm_blind = blind.g["put/alltoall"].predict
    assert pm_blind is not None and abs(pm_blind.g_inf / truth.g_inf - 1) > abs(pm.g_inf / truth.g_inf - 1)


def test_the_check_scores_unmarked_points_and_predicts_marked_ones_as_the_machine_was(tmp_path: Path) -> None:
    params = fit_run(load_raw(busy_probe(tmp_path, 3)))
    val = params.validation
    rows = [r for r in val["points"] if "rel_error" in r]
    marked = [r for r in rows if "marked" in r]
    assert marked and val["used"] == len(rows) - len(marked)
    assert val["pass"] and val["mean_abs_rel_error"] < 0.05
    # measured at twice the model: -50% as predicted, ~0% as the machine was (held 50%: x2)
    for r in marked:
        assert r["marked"]["held_share"] == pytest.approx(0.5)
        assert r["rel_error"] == pytest.approx(-0.5, abs=0.05)
        assert r["as_it_was_s"] == pytest.approx(2 * r["predicted_s"])
        assert r["rel_error_as_it_was"] == pytest.approx(0.0, abs=0.08)
    assert val["marked"]["points"] == len(marked)
    assert val["marked"]["as_it_was"]["mean_abs_rel_error"] < 0.08


def test_the_verdict_trusts_a_clean_check_and_names_the_busy_batches(tmp_path: Path) -> None:
    params = fit_run(load_raw(busy_probe(tmp_path, 3)))
    v = verdict.probe_verdict(params)
    assert v.level == "band"
    assert v.sentence.startswith("These f, g and l can be trusted: eq. (2.6) is")
    assert "marked validation point(s) are scored apart (" in v.sentence
    names = [h.name for h in verdict.headline_parameters(params)]
    assert names == ["f", "g get", "g put", "l"]


def test_the_verdict_asks_for_a_rerun_when_the_machine_was_mostly_busy(tmp_path: Path) -> None:
    params = fit_run(load_raw(busy_probe(tmp_path, 1)))
    v = verdict.probe_verdict(params)
    assert v.level == "re-run" and v.sentence.startswith("Do not rely on these parameters: the machine was busy")
    assert "quieter machine" in v.advice


# ------------------------------------------------------------------------------- bspkit validate


def test_validate_scores_unmarked_runs_and_stretches_marked_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three sizes: one quiet, one with a repetition that lost its core (left out), one that lost
    half its core in every repetition (scored apart, predicted x2 as the machine was)."""
    from test_validate import fake_driver, stand_in_launch, validate_in_process

    from bspkit import algorithms as al
    from bspkit.commands import _inputs as inputs

    def run(alg: al.Algorithm, *rest: Any, **kw: Any) -> al.RunResult:
        res = fake_driver(alg, *rest, **kw)
        n = res.data["params"]["n"]
        t = res.data["time_s"]
        if n == 2000:  # the second repetition took 3x while process 0 waited 2/3 of it
            res.data["times_s"] = [t, 3 * t, t]
            res.data["state"] = [state(t, [0, 0]), state(3 * t, [2 * t, 0]), state(t, [0, 0])]
        elif n == 3000:  # every repetition at twice the time, process 1 waiting half of it
            res.data["times_s"] = [2 * t] * 3
            res.data["time_s"] = 2 * t
            res.data["state"] = [state(2 * t, [0, t])] * 3
        else:
            res.data["times_s"] = [t] * 3
            res.data["state"] = [state(t, [0, 0])] * 3
        return res

    monkeypatch.setattr(al, "run_driver", run)
    monkeypatch.setattr(inputs, "driver_launch", stand_in_launch)
    rc, res = validate_in_process(tmp_path, "inprod", "--sizes", "1000,2000,3000")
    assert rc == 0
    quiet, partly, busy = sorted(res["rows"], key=lambda r: r["size"])
    assert "machine_state" not in quiet
    assert partly["machine_state"]["marked_reps"] == 1 and not partly["machine_state"]["all_marked"]
    assert partly["measured_s"] == pytest.approx(statistics.median([partly["times_s"][0], partly["times_s"][2]]))
    assert busy["machine_state"]["all_marked"] and busy["machine_state"]["stretch"] == pytest.approx(2.0)
    for m in comm_models.NAMES:
        assert busy["as_it_was_s"][m] == pytest.approx(2 * busy["predicted_s"][m])
        assert busy["rel_error_as_it_was"][m] == pytest.approx(quiet["rel_error"][m], abs=0.02)
    summary = res["summary"]["all"]
    assert summary["runs_used"] == 2  # the busy run is scored apart
    assert summary["marked"]["runs"] == 1 and summary["reps_left_out"] == 1
    out = capsys.readouterr().out
    assert "VERDICT: " in out and "1 run(s) lost a core in every repetition and are scored apart" in out
    assert "the machine's: n = 3000" in out
    html = (tmp_path / "out" / "validate.html").read_text()
    assert "Runs the machine spoiled" in html and "process 1 waited" in html
