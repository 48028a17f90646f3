"""The seeds' definitions beside ours (issue 39, item 4), each one entry of
bspkit.model.comm_models.REGISTRY, against hand computations:

  * "thesis g const": g_inf of the primitive's all-to-all global fit times h, plus l after an
    all-to-all in every superstep, with or without communication (thesis sec. 3.3, 4.3);
  * "g(h,h*)+l0": eq. (2.4) with (2.6), g_inf (h + h_half + o c) + l0 (the global fit, the empty
    sync);
  * "g(h,h*) [in+out]": eq. (2.2)'s h = max over processes of (h_in + h_out), read on the
    probe's surface at h_inout / 2;

h_inout counted from a hand-made exchange (a driver's superstep list, a synthetic profile, the
closed forms), and the model chosen by evidence (bspkit.model.model_choice) from synthetic
validate.json files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bspkit import cli, results
from bspkit.algorithms import closed_form
from bspkit.model import comm_models
from bspkit.model import model_choice as mc
from bspkit.model import supersteps as pd
from bspkit.model.comm_models import CommModel
from bspkit.model.costs import cannon, llcs, lu, lu_reference
from bspkit.model.params import Params

from conftest import REAL_VALIDATIONS
from synth import PARAMS_JSON

# A machine with known fits: the global fit of eq. (2.6) (g_inf, h_half, o), Bisseling's g and l,
# the per-h fit at two values of h, and l without communication and after an all-to-all.
G_INF, H_HALF, O = 2.0e-9, 500.0, 40.0
PERM_G_INF, PERM_H_HALF, PERM_O = 7.0e-9, 100.0, 1.0
L0, L_A2A = 1.0e-6, 3.0e-6
A0, B0, A1, B1 = 2.0e-6, 1.0e-8, 5.0e-6, 2.0e-8  # put/alltoall's levels at h = 100 and 1000
PA, PB = 4.0e-6, 3.0e-8  # put/permutation's one level, at h = 600
F = 1.0e-9

SEED_JSON: dict[str, Any] = {
    "format": 1,
    "p": 3,
    "f": {"dot_double_naive": F},
    "l": {"empty": L0, "alltoall": L_A2A},
    "g": {
        "put/alltoall": {
            "predict": {"model": "2.6 lsq", "g_inf": G_INF, "h_half": H_HALF, "o": O},
            "linreg": {"g": [1.5e-9, 1.4e-9, 1.6e-9], "l": [4.0e-6, 3.0e-6, 5.0e-6]},
            "levels": [
                {"h": 100, "A_s": A0, "B_s": B0, "g_h": A0 / 100},
                {"h": 1000, "A_s": A1, "B_s": B1, "g_h": A1 / 1000},
            ],
        },
        "put/permutation": {
            "predict": {"model": "2.6 lsq", "g_inf": PERM_G_INF, "h_half": PERM_H_HALF, "o": PERM_O},
            "linreg": {"g": [6.0e-9, 5.9e-9, 6.1e-9], "l": [2.0e-6, 1.0e-6, 3.0e-6]},
            "levels": [{"h": 600, "A_s": PA, "B_s": PB, "g_h": PA / 600}],
        },
    },
}
SEED_PARAMS = Params.from_json(SEED_JSON)


def traffic_counts(words: list[list[int]]) -> tuple[int, int]:
    """(h, h_inout) of a superstep from its p x p traffic matrix, words[s][t] from s to t, as
    written in the thesis: eq. (2.1) max_s max(sent, received), eq. (2.2) max_s (sent + received)."""
    p = len(words)
    sent = [sum(words[s][t] for t in range(p) if t != s) for s in range(p)]
    received = [sum(words[s][t] for s in range(p) if s != t) for t in range(p)]
    return max(max(a, b) for a, b in zip(sent, received, strict=True)), max(
        a + b for a, b in zip(sent, received, strict=True)
    )


# A driver's superstep list at p = 3 made by hand:
#  0: a balanced exchange on the permutation 0 -> 1 -> 2 -> 0, 600 words each, 3 requests a process;
#  1: process 0 puts 100 words to each of 1 and 2 (a broadcast's root: one-sided), 2 requests;
#  2: local work, no communication; 3: local work after the last sync.
SHIFT = [[0, 600, 0], [0, 0, 600], [600, 0, 0]]
ROOT = [[0, 100, 100], [0, 0, 0], [0, 0, 0]]


def driver_steps() -> list[dict[str, Any]]:
    (h0, io0), (h1, io1) = traffic_counts(SHIFT), traffic_counts(ROOT)
    assert (h0, io0) == (600, 1200) and (h1, io1) == (200, 200)  # eq. 2.2: 2 h balanced, h one-sided
    return [
        {
            "w": 1.0e5,
            "h": h0,
            "h_inout": io0,
            "count": 3,
            "msg_words": 200,
            "primitive": "put",
            "pattern": "permutation",
        },
        {"w": 2.0e5, "h": h1, "h_inout": io1, "count": 2, "msg_words": 100, "primitive": "put", "pattern": "alltoall"},
        {"w": 3.0e5, "h": 0, "h_inout": 0, "count": 0, "msg_words": 0, "primitive": None, "pattern": None},
        {
            "w": 4.0e5,
            "h": 0,
            "h_inout": 0,
            "count": 0,
            "msg_words": 0,
            "primitive": None,
            "pattern": None,
            "sync": False,
        },
    ]


def levels_at(h: float, c: float) -> float:
    """put/alltoall's per-h fit between its two levels (log-linear in A, linear in B)."""
    w = math.log(h / 100) / math.log(1000 / 100)
    return math.exp((1 - w) * math.log(A0) + w * math.log(A1)) + ((1 - w) * B0 + w * B1) * c


def test_each_seed_definition_against_a_hand_computation() -> None:
    steps = driver_steps()
    per_step = {m: [pd.superstep_comm_s(SEED_PARAMS, s, m) for s in steps[:3]] for m in comm_models.NAMES}
    # thesis g const: put/alltoall's global g_inf whatever the pattern, l after an all-to-all everywhere
    assert per_step["thesis g const"] == pytest.approx([G_INF * 600 + L_A2A, G_INF * 200 + L_A2A, L_A2A], rel=1e-12)
    # g(h,h*)+l0: the surface's own global fit (the permutation's for superstep 0), plus l0
    assert per_step["g(h,h*)+l0"] == pytest.approx(
        [PERM_G_INF * (600 + PERM_H_HALF + PERM_O * 3) + L0, G_INF * (200 + H_HALF + O * 2) + L0, L0], rel=1e-12
    )
    # g(h,h*) reads the per-h fit at h; [in+out] at h_inout / 2: the same for the balanced
    # exchange, half the words for the one-sided one (h = 100: put/alltoall's first level)
    assert per_step["g(h,h*)"] == pytest.approx([PA + PB * 3, levels_at(200, 2), L0], rel=1e-12)
    assert per_step["g(h,h*) [in+out]"] == pytest.approx([PA + PB * 3, A0 + B0 * 2, L0], rel=1e-12)
    # ours are as before: Bisseling's g h + l, a superstep without communication l.empty
    assert per_step["g const"] == pytest.approx([6.0e-9 * 600 + 2.0e-6, 1.5e-9 * 200 + 4.0e-6, L0], rel=1e-12)

    # a run: the work f W once, each model's supersteps; local work after the last sync costs no l
    out = pd.predict(SEED_PARAMS, {"supersteps": steps, "f_s_per_unit": F})
    work = 10.0e5 * F
    for m in comm_models.NAMES:
        assert out[m] == pytest.approx(work + sum(per_step[m]), rel=1e-12), m
        assert out[m + " comm_s"] == pytest.approx(sum(per_step[m]), rel=1e-12), m
    # what each model charges a superstep without communication (bspkit.model.predict's l S)
    assert pd.empty_superstep_s(SEED_PARAMS, "thesis g const") == L_A2A
    assert all(pd.empty_superstep_s(SEED_PARAMS, m) == L0 for m in comm_models.NAMES if m != "thesis g const")


def test_a_model_that_lacks_its_parameters_predicts_nothing() -> None:
    """A driver run counted before h_inout existed, a file without l.alltoall or without a global
    fit: the model that needs it says nothing (None, shown '-'), the others predict."""
    old_run = [{k: v for k, v in s.items() if k != "h_inout"} for s in driver_steps()]
    out = pd.predict(SEED_PARAMS, {"supersteps": old_run, "f_s_per_unit": F})
    assert out["g(h,h*) [in+out]"] is None and out["g(h,h*)"] is not None
    # a superstep without communication needs no h_inout
    assert pd.superstep_comm_s(SEED_PARAMS, {"h": 0}, "g(h,h*) [in+out]") == L0

    no_a2a = Params.from_json({**SEED_JSON, "l": {"empty": L0}})
    assert pd.predict(no_a2a, {"supersteps": driver_steps(), "f_s_per_unit": F})["thesis g const"] is None
    assert pd.check_usable(no_a2a) == ["thesis g const"]
    assert pd.check_usable(SEED_PARAMS) == []

    # hand-written: Bisseling's g only, no global fit; ours predict, the global-fit seeds do not
    hand = Params.from_json({**SEED_JSON, "g": {"put/alltoall": {"linreg": {"g": [1e-9, 1e-9, 1e-9]}}}})
    assert set(pd.check_usable(hand)) == {"g(h)", "g(h,h*)", "g(h,h*)+l0", "thesis g const", "g(h,h*) [in+out]"}


def test_the_h_definition_is_an_axis_of_the_record() -> None:
    """h_of is data: the thesis' g const with eq. 2.2's h is one entry more, not a new function."""
    thesis = comm_models.get("thesis g const")
    inout = CommModel(**{**thesis.__dict__, "name": "thesis g const [in+out]", "detail": -9, "h_of": "h_inout"})
    step = driver_steps()[1]
    assert comm_models.step_h(thesis, step) == 200 and comm_models.step_h(inout, step) == 100
    with pytest.raises(ValueError, match="h_of must be one of h, h_inout"):
        CommModel(**{**thesis.__dict__, "h_of": "h_in"})


# ------------------------------------------------------------ a profile's h_inout


def test_a_profile_counts_h_inout_and_predicts_with_it(tmp_path: Path) -> None:
    """p = 3: process 0 puts 100 words to each other (one-sided: h = h_inout = 200); a ring
    shift of 50 words (h = 50, h_inout = 100); process 1 gets 30 words from 0 in 2 requests
    (h = h_inout = 30); then the end."""
    from synth_profile import StepSpec, records, write_profile

    from bspkit.model import profile as pf

    c, s = [1e-3] * 3, [1e-4] * 3
    steps = [
        StepSpec(compute=c, sync=s, out={0: [(1, 1, 100), (2, 1, 100)]}),
        StepSpec(compute=c, sync=s, out={0: [(1, 1, 50)], 1: [(2, 1, 50)], 2: [(0, 1, 50)]}),
        StepSpec(compute=c, sync=s, in_get={1: [(0, 2, 30)]}),
        StepSpec(compute=c, sync=[0.0] * 3, end="bsp_end"),
    ]
    path = write_profile(tmp_path / "run.jsonl", records(3, steps))
    analysis = pf.analyze(pf.read_profile(path), addr2line="")
    assert [(st.h, st.h_inout, st.count) for st in analysis.steps] == [
        (200, 200, 2),
        (50, 100, 1),
        (30, 30, 2),
        (0, 0, 0),
    ]
    assert [st["h_inout"] for st in analysis.to_json()["supersteps"]] == [200, 100, 30, 0]
    assert pf.prediction_step(analysis.steps[1])["h_inout"] == 100

    prediction = pf.predict_run(analysis, SEED_PARAMS, str(path))
    compute = 4e-3
    # the thesis' g const: put/alltoall's g_inf for every primitive and pattern, l_a2a each sync
    assert prediction.total["thesis g const"] == pytest.approx(compute + G_INF * (200 + 50 + 30) + 3 * L_A2A, rel=1e-9)
    # [in+out] at h_inout / 2 = 100, 50, 15: put/alltoall's first level (the shift and the get
    # fall back on it), A and B of the smallest h below it
    assert prediction.total["g(h,h*) [in+out]"] == pytest.approx(compute + 3 * A0 + B0 * (2 + 1 + 2), rel=1e-9)


# ------------------------------------------------------------ the closed forms' h_inout


def test_closed_forms_give_h_inout() -> None:
    inprod = closed_form("inprod", {"n": 1000}, 4)
    assert [k.h_inout for k in inprod.steps] == [6.0, 0.0]  # 3 words out, 3 in
    assert inprod.H_inout == 6.0 and inprod.supersteps()[0]["h_inout"] == 6.0
    # LLCS: the answer to process 0 is one word one way (h_inout 1, not 2); a wavefront superstep
    # sends a boundary to the next process and receives one from the previous
    cost = closed_form("llcs-dp", {"m": 4096, "n": 4096, "alpha": 2}, 4)
    assert cost.steps[-1].kind == "answer to process 0" and cost.steps[-1].h_inout == 1
    assert all(k.h_inout is not None and k.h <= k.h_inout <= 2 * k.h for k in cost.steps)
    # every module fills it, for every step
    for alg, problem, p in (
        ("cannon-get", {"n": 120}, 6),
        ("matmul-blockcyclic", {"n": 60, "q": 27}, 4),
        ("matmul-static2d", {"n": 60, "q": 8}, 6),
        ("rdxsort", {"n": 4096}, 4),
        ("lu", {"n": 200, "nb": 16}, 6),
        ("llcs-bitpar", {"m": 3000, "n": 5000}, 3),
    ):
        cost = closed_form(alg, problem, p)
        assert all(k.h_inout is not None and k.h <= k.h_inout + 1e-9 <= 2 * k.h + 2e-9 for k in cost.steps), alg


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("n", [37, 512, 1000])
def test_llcs_uniform_h_inout_is_the_general_evaluation(n: int, p: int) -> None:
    """The closed form 2 floor(c'/p) + min(c' mod p, 2) boundaries against the per-process sums."""
    G = 3 * p
    grid = llcs._Grid(n * G, n * G, G, "dp")
    uniform = llcs._wavefront_uniform(grid, G, p)
    general = llcs._wavefront_general(grid, G, p)
    assert np.array_equal(uniform[5], general[5]) and np.array_equal(uniform[1], general[1])


@pytest.mark.parametrize("p", [4, 6, 9])
def test_cannon_even_h_inout_is_twice_h(p: int) -> None:
    """Where L divides n each process sends what it receives: the general evaluation agrees."""
    _, _, L = cannon.rounds_of(p)
    n = 6 * L
    for variant in ("put", "get"):
        even, general = cannon.even_supersteps(n, p, variant), cannon.general_supersteps(n, p, variant)
        assert even == general
        assert all(k.h_inout == 2 * k.h for k in even)


@pytest.mark.parametrize(("words", "q", "root"), [(5, 3, 1), (7, 4, 0), (100, 5, 3), (1, 6, 2), (1000, 3, 0)])
def test_lu_broadcast_h_inout_against_the_reference(words: int, q: int, root: int) -> None:
    """Each phase of BSP2D's broadcast: the max over members of sent + received, from the
    reference's per-member words (bspkit.model.costs.lu_reference.broadcast_phases)."""
    phases = lu_reference.broadcast_phases(words, q, root)
    for phase, (sent, received) in enumerate(phases):
        got = lu.broadcast(np.array([[words]]), q, np.array([root]), phase)
        assert int(got.h_inout[0, 0]) == max(s + r for s, r in zip(sent, received, strict=True))
        assert int(got.h[0, 0]) == max(max(s, r) for s, r in zip(sent, received, strict=True))


def test_lu_pivot_h_inout_by_hand() -> None:
    """2 x 3 grid, nb = 16: the owner of row j sends (M - 1)(3 + 2 w) + 3 M (N - 1) and receives
    the other column member's candidate with its row, 3 + w."""
    cost = closed_form("lu", {"n": 64, "nb": 16, "grid_rows": 2, "grid_cols": 3}, 6)
    pivot = next(k for k in cost.steps if k.kind == "pivot")
    w, M, N = 16, 2, 3
    assert pivot.h == (M - 1) * (3 + 2 * w) + 3 * M * (N - 1)
    assert pivot.h_inout == pivot.h + (M - 1) * (3 + w) == 3 * (M - 1) * (w + 2) + 3 * M * (N - 1)


# ------------------------------------------------------------ chosen by evidence


def file_validation(root: Path, name: str, algorithm: str, backend: str, p: int, summary: dict[str, Any]) -> Path:
    directory = root / "results" / "validate" / name
    directory.mkdir(parents=True)
    path = directory / "validate.json"
    data = {"format": 1, "algorithm": algorithm, "backend": backend, "p": p, "summary": {"all": summary}}
    path.write_text(json.dumps(data))
    return path


ERRORS = {"g const": 0.079, "g(h)": 0.041, "g(h,h*)": 0.09, "thesis g const": 0.12, "g(h,h*)+l0": None}


@pytest.fixture
def evidence_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """results/validate/ with sweeps of cannon-put: threads on 2026-11-28 (g(h) best), threads
    earlier (g const best), mpi later (thesis g const best), a file that does not read, and a
    sweep of another algorithm whose directory also starts with "cannon-"."""
    file_validation(
        tmp_path,
        "cannon-put-threads-p2-20261128-101010",
        "cannon-put",
        "threads",
        2,
        {"runs_used": 6, "best_model": "g(h)", **ERRORS},
    )
    file_validation(
        tmp_path,
        "cannon-put-threads-p2-20261001-090000",
        "cannon-put",
        "threads",
        2,
        {"runs_used": 3, "best_model": "g const", **ERRORS},
    )
    file_validation(
        tmp_path,
        "cannon-put-mpi-p4-20261201-080000",
        "cannon-put",
        "mpi",
        4,
        {"runs_used": 2, "best_model": "thesis g const", **{**ERRORS, "thesis g const": 0.03}},
    )
    broken = tmp_path / "results" / "validate" / "cannon-put-threads-p2-20261202-000000"
    broken.mkdir(parents=True)
    (broken / "validate.json").write_text("{not json")
    file_validation(
        tmp_path,
        "cannon-get-threads-p2-20261203-000000",
        "cannon-get",
        "threads",
        2,
        {"runs_used": 1, "best_model": "g const", **ERRORS},
    )
    # no runs scored: no evidence
    file_validation(
        tmp_path,
        "cannon-put-threads-p2-20261204-000000",
        "cannon-put",
        "threads",
        2,
        {"runs_used": 0, "best_model": None},
    )
    monkeypatch.setattr(
        results, "validations", lambda algorithm, root=None: REAL_VALIDATIONS(algorithm, root or tmp_path)
    )
    return tmp_path


def test_the_newest_validation_of_the_back_end_chooses(evidence_root: Path) -> None:
    newest = results.validations("cannon-put")
    # newest first; "cannon-get-..." is not among cannon-put's
    assert [p.parent.name[-15:] for p in newest] == [
        "20261204-000000",
        "20261202-000000",
        "20261201-080000",
        "20261128-101010",
        "20261001-090000",
    ]
    ev = mc.evidence("cannon-put", "threads")
    assert ev is not None and ev.model == "g(h)" and ev.date == "2026-11-28" and ev.runs == 6
    assert mc.why("g(h)", ev, "cannon-put") == (
        "model g(h): the best in validate of cannon-put on 2026-11-28 (threads, p = 2; mean |error| 4.1% vs 7.9% g const)"
    )
    assert mc.order(ev)[:3] == ("g(h)", "g(h,h*)", "g const") and set(mc.order(ev)) == set(comm_models.NAMES)
    # the chosen model where it predicts; else the most detailed, and the line says so
    assert mc.chosen({"g(h)": 1.0, "g(h,h*)": 2.0}, ev) == "g(h)"
    assert mc.chosen({"g(h)": None, "g(h,h*)": 2.0, "g const": 3.0}, ev) == "g(h,h*)"
    assert mc.why("g(h,h*)", ev, "cannon-put").startswith(
        "model g(h,h*): the most detailed the parameters serve; validate of cannon-put on 2026-11-28 (threads, p = 2) "
        "found g(h) best (4.1%)"
    )
    # another back end: its own sweep; one without any: the newest of any back end
    mpi = mc.evidence("cannon-put", "mpi")
    assert mpi is not None and mpi.model == "thesis g const" and mpi.p == 4
    assert mc.evidence("cannon-put", "mpi-rma") == mpi
    # "cannon-get-..." is not cannon-put's, nor is "cannon-put-..." cannon's
    assert mc.evidence("cannon-get", None).model == "g const"  # type: ignore[union-attr]
    assert mc.evidence("cannon", None) is None
    assert mc.why("g(h,h*)", None, "cannon") == (
        "model g(h,h*): the most detailed the parameters serve (no validate of cannon under results/validate/)"
    )
    assert "e+" not in mc.why("g(h)", ev, "cannon-put") and "e-" not in mc.why("g(h)", ev, "cannon-put")


def test_bspkit_predict_uses_the_model_validate_found_best(
    evidence_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.json"
    params.write_text(json.dumps({**PARAMS_JSON, "g": {k: v for k, v in PARAMS_JSON["g"].items() if k != "get/shift"}}))
    args = ["predict", "inprod", "--size", "1000000", "-n", "2", "--params", str(params), "--f", "1e-9"]
    # no validate of inprod: the most detailed model, as before
    assert cli.main([*args, "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["best_model"] == "g(h,h*)" and data["model_choice"]["evidence"] is None
    assert "model g(h,h*): the most detailed the parameters serve (no validate of inprod" in captured.err
    # a validate of inprod found g const best: predict uses it and says why
    file_validation(
        evidence_root,
        "inprod-threads-p2-20261130-120000",
        "inprod",
        "threads",
        2,
        {"runs_used": 5, "best_model": "g const", "g const": 0.021, "g(h)": 0.035, "g(h,h*)": 0.034},
    )
    assert cli.main([*args, "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["best_model"] == "g const" and data["predicted_s"] == data["models"]["g const"]
    why = "model g const: the best in validate of inprod on 2026-11-30 (threads, p = 2; mean |error| 2.1% vs 3.4% g(h,h*))"
    assert data["model_choice"]["why"] == why and why in captured.err
    assert data["model_choice"]["evidence"]["validate"].endswith("inprod-threads-p2-20261130-120000/validate.json")
    # the terminal's table: ours as columns (a seed's entry only where it is the model chosen)
    assert cli.main(args) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.split()[:1] == ["p"])
    assert "g const" in header and "thesis g const" not in header and "[in+out]" not in header
    # parameters of another back end (an mpi probe): a threads validation is no evidence for them,
    # neither its model nor its residual
    mpi_params = tmp_path / "mpi-params.json"
    mpi_data = json.loads(params.read_text())
    mpi_data["machine"] = {**(mpi_data.get("machine") or {}), "backend": "mpi"}
    mpi_params.write_text(json.dumps(mpi_data))
    on_mpi = [a if a != str(params) else str(mpi_params) for a in args]
    assert cli.main([*on_mpi, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["best_model"] == "g(h,h*)" and data["machine"]["spread"]["validation"] == 0.0
    assert data["model_choice"]["why"].startswith(
        "model g(h,h*): the most detailed the parameters serve on mpi; validate of inprod on 2026-11-30 (threads, p = 2)"
    )
    # at a p the validation did not run, its winner is no evidence: the most detailed model
    at4 = [a if a != "2" else "4" for a in args]
    assert cli.main([*at4, "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["p"] == 4 and data["best_model"] == "g(h,h*)"
    assert data["model_choice"]["why"] == (
        "model g(h,h*): the most detailed the parameters serve at p = 4; validate of inprod on 2026-11-30 (threads, "
        "p = 2) found g const best there (2.1%), and a model's win at one p is not evidence at another"
    )


def test_the_band_holds_the_algorithms_validation_residual(
    evidence_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where validate of the algorithm has run, the band of `bspkit predict` holds the best
    model's residual beyond the noise over its runs (the split's model_sd): a log-normal factor
    on the whole time, whose 10-90 % band alone is exp(+-1.2816 sd)."""
    params = tmp_path / "params.json"
    params.write_text(json.dumps({**PARAMS_JSON, "g": {k: v for k, v in PARAMS_JSON["g"].items() if k != "get/shift"}}))
    args = ["predict", "inprod", "--size", "1000000", "-n", "2", "--params", str(params), "--f", "1e-9"]
    assert cli.main([*args, "--json", "-"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["machine"]["spread"]["validation"] == 0.0
    lo0, hi0 = before["interval_s"]
    file_validation(
        evidence_root,
        "inprod-threads-p2-20261130-120000",
        "inprod",
        "threads",
        2,
        {
            "runs_used": 9,
            "best_model": "g(h,h*)",
            "g const": 0.2,
            "g(h)": 0.1,
            "g(h,h*)": 0.08,
            "split": {"all": {"n": 9, "model_sd": 0.1, "rms_log": 0.11, "noise_sd": 0.05}},
        },
    )
    assert cli.main([*args, "--json", "-"]) == 0
    captured = capsys.readouterr()
    after = json.loads(captured.out)
    spread = after["machine"]["spread"]
    assert spread["validation"] == 0.1
    assert spread["validation_source"] == "validate of inprod, 2026-11-30, threads, p = 2, 9 run(s)"
    assert after["model_choice"]["evidence"]["residual_sd"] == 0.1
    lo, hi = after["interval_s"]
    t = after["predicted_s"]
    assert lo < lo0 and hi > hi0
    # the residual dominates this band: about exp(+-1.2816 x 0.1) around the prediction
    assert hi / lo >= math.exp(2 * 1.2816 * 0.1) * 0.95
    assert lo < t < hi
    assert "the model's residual beyond it in validation (±10%, validate of inprod, 2026-11-30" in captured.err


def test_bspkit_run_predict_names_the_model_chosen(evidence_root: Path) -> None:
    from bspkit.commands.run import prediction

    run = {
        "algorithm": "cannon-put",
        "backend": "threads",
        "time_s": 1.0,
        "f_s_per_unit": F,
        "supersteps": driver_steps(),
    }
    pred = prediction(SEED_PARAMS, Path("params.json"), run)
    assert pred["model_choice"]["model"] == "g(h)"
    assert pred["model_choice"]["why"].startswith("model g(h): the best in validate of cannon-put on 2026-11-28")
    assert set(pred["models"]) == set(comm_models.NAMES)
