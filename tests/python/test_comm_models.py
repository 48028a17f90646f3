"""bspkit.model.comm_models: the registry of the models of communication. Each model against a
hand computation, the registry's order of preference, and a model added in the test (one
entry) reaching every consumer: a driver run's prediction, `bspkit predict` (table and JSON),
a profile's prediction, `bspkit profile --model` and the validation page's tables."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from bspkit import cli
from bspkit.model import comm_models
from bspkit.model import supersteps as pd
from bspkit.model.comm_models import CommModel
from bspkit.model.params import Params

from synth import L_EMPTY, PARAMS_JSON

PARAMS = Params.from_json(PARAMS_JSON)
F = 2.0e-9


SEEDS = ("g(h,h*)+l0", "thesis g const", "g(h,h*) [in+out]")  # the seeds' definitions, each one entry


def test_the_registry_orders_the_models_by_detail() -> None:
    names = [m.name for m in comm_models.REGISTRY]
    assert comm_models.NAMES == tuple(names) == ("g const", "g(h)", "g(h,h*)", *SEEDS)
    # ours first: without evidence (bspkit validate) the seeds' entries are never "best" where ours predict
    assert ("g(h,h*)", "g(h)", "g const", *SEEDS) == comm_models.BEST_FIRST
    assert all(comm_models.get(m).detail < 0 for m in SEEDS)
    assert comm_models.best({"g const": 1.0, "g(h)": 2.0, "g(h,h*)": None}) == "g(h)"
    assert comm_models.best({"g const": 0.0}) == "g const"  # a value of 0 is a value
    assert comm_models.best({}) is None
    styles = [m.style for m in comm_models.REGISTRY]
    assert len(set(styles)) == len(styles), "each model its own colour and marker in plots"
    with pytest.raises(comm_models.UnknownModel, match=r"no model 'g max' \(the models: g const, g\(h\), g\(h,h\*\), "):
        comm_models.get("g max")
    # the terminal's wide tables: ours, and a seed's entry only where it is the model chosen
    assert comm_models.terminal_names() == ("g const", "g(h)", "g(h,h*)")
    assert comm_models.terminal_names(["thesis g const", None]) == ("g const", "g(h)", "g(h,h*)", "thesis g const")


def test_the_registry_refuses_two_models_of_one_name_or_one_detail() -> None:
    one = comm_models.REGISTRY[0]
    with pytest.raises(ValueError, match="distinct"):
        comm_models.indexes([one, one])


def test_each_model_against_a_hand_computation() -> None:
    """put/alltoall of the synthetic probe: Bisseling's g h + l; the per-h fit's A(h) at a grid
    value of h (g(h)) and A(h) + B(h) c (g(h,h*))."""
    surface = PARAMS.g["put/alltoall"]
    g, l_s = surface.bisseling_g_l() or (math.nan, math.nan)
    level = surface.levels[1]
    h, c = float(level.h), 8.0
    at = {m.name: m.superstep_s(surface, h, c, lambda: L_EMPTY) for m in comm_models.REGISTRY[:3]}
    assert at["g const"] == pytest.approx(g * h + (l_s if l_s > 0 else L_EMPTY), rel=1e-12)
    assert at["g(h)"] == pytest.approx(level.A_s, rel=1e-12)
    assert at["g(h,h*)"] == pytest.approx(level.A_s + level.B_s * c, rel=1e-12)
    # a superstep without communication is the empty sync under every model but the thesis'
    # g const, which charges l after an all-to-all to every superstep (test_seed_models.py)
    for name in comm_models.NAMES:
        want = PARAMS_JSON["l"]["alltoall"] if name == "thesis g const" else L_EMPTY
        assert pd.superstep_comm_s(PARAMS, {"h": 0}, name) == pytest.approx(want)


# ------------------------------------------------ a model added in one entry


def _g_max_s(surface, h: float, c: float, empty_sync_s) -> float | None:  # type: ignore[no-untyped-def]
    """A made-up model: every word at the slowest rate of the per-h fit, plus the empty sync."""
    if not surface.levels:
        return None
    return h * max(v.g_h for v in surface.levels) + empty_sync_s()


G_MAX = CommModel(
    name="g max",
    detail=3,
    needs='the per-h fit ("levels")',
    usable=lambda s: bool(s.levels),
    superstep_s=_g_max_s,
    spread=lambda s: s.g_h,
    formula="the slowest g(h) of the grid times h, plus l",
    style=("tab:red", "x"),
)


@pytest.fixture
def with_g_max(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry with one more entry, as adding it to comm_models.REGISTRY would make it."""
    registry: Sequence[CommModel] = (*comm_models.REGISTRY, G_MAX)
    by_name, names, best_first = comm_models.indexes(registry)
    monkeypatch.setattr(comm_models, "REGISTRY", registry)
    monkeypatch.setattr(comm_models, "BY_NAME", by_name)
    monkeypatch.setattr(comm_models, "NAMES", names)
    monkeypatch.setattr(comm_models, "BEST_FIRST", best_first)
    yield


def g_max_time(steps: Sequence[dict[str, float]]) -> float:
    surface = PARAMS.g["put/alltoall"]
    slowest = max(v.g_h for v in surface.levels)
    return sum(s["w"] for s in steps) * F + sum(s["h"] * slowest + L_EMPTY for s in steps)


RUN_STEPS = [
    {"w": 1.0e6, "h": 4096.0, "count": 8.0, "msg_words": 512.0, "primitive": "put", "pattern": "alltoall"},
    {"w": 2.0e6, "h": 65536.0, "count": 1.0, "msg_words": 65536.0, "primitive": "put", "pattern": "alltoall"},
]


def test_a_new_model_predicts_a_driver_run(with_g_max: None) -> None:
    out = pd.predict(PARAMS, {"supersteps": RUN_STEPS, "f_s_per_unit": F})
    assert out["g max"] == pytest.approx(g_max_time(RUN_STEPS), rel=1e-12)
    assert out["g max comm_s"] == pytest.approx(g_max_time(RUN_STEPS) - 3.0e6 * F, rel=1e-12)
    # it is the most detailed now: the best model of a driver run's band
    assert comm_models.best(out) == "g max"


def test_a_new_model_is_a_column_of_bspkit_predict(
    with_g_max: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.json"
    usable = {**PARAMS_JSON, "g": {k: v for k, v in PARAMS_JSON["g"].items() if k != "get/shift"}}
    params.write_text(json.dumps(usable))
    args = ["predict", "inprod", "--size", "1000000", "-n", "2", "--params", str(params), "--f", "1e-9"]
    assert cli.main(args) == 0
    table = capsys.readouterr().out
    header = next(line for line in table.splitlines() if line.split()[:1] == ["p"])
    assert "g max" in header and header.index("g(h,h*)") < header.index("g max")
    assert cli.main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["models"]) == set(comm_models.NAMES)
    assert data["best_model"] == "g max"
    assert data["predicted_s"] == data["models"]["g max"]


def test_a_new_model_predicts_a_profile(with_g_max: None, tmp_path: Path) -> None:
    """Two processes, one superstep putting 4096 words each way, then the end."""
    from synth_profile import StepSpec, records, write_profile

    from bspkit.model import profile as pf

    exchange = StepSpec(compute=[1e-3, 1e-3], sync=[1e-4, 1e-4], out={0: [(1, 1, 4096)], 1: [(0, 1, 4096)]})
    last = StepSpec(compute=[1e-3, 1e-3], sync=[0.0, 0.0], end="bsp_end")
    path = write_profile(tmp_path / "run.jsonl", records(2, [exchange, last]))
    prediction = pf.predict_run(pf.analyze(pf.read_profile(path), addr2line=""), PARAMS, str(path))
    assert set(prediction.total) == set(comm_models.NAMES)
    slowest = max(v.g_h for v in PARAMS.g["put/alltoall"].levels)
    expected = 2e-3 + 4096 * slowest + L_EMPTY
    assert prediction.total["g max"] == pytest.approx(expected, rel=1e-9)


def test_a_new_model_is_scored_by_the_validation(with_g_max: None) -> None:
    from bspkit.measure.validation import summarize

    def row(measured: float, errors: dict[str, float]) -> dict[str, object]:
        return {"measured_s": measured, "rel_error": errors, "predicted_s": {}, "comm_s": {}}

    rows = [row(1.0, {"g const": 0.3, "g(h)": 0.2, "g(h,h*)": 0.1, "g max": 0.02})]
    s = summarize(rows)  # type: ignore[arg-type]
    assert s["g max"] == pytest.approx(0.02) and s["best_model"] == "g max"
