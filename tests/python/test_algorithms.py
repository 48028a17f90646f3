"""bspkit.algorithms: the registry (one record per algorithm), the efficiency from each
record's cost model, and `bspkit run` end to end (when the drivers are built)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bspkit.algorithms import (
    ALGORITHMS,
    REGISTRY,
    AlgorithmError,
    DriverLaunch,
    efficiency,
    find_algorithm,
    run_driver,
)
from bspkit.model.comm_models import NAMES as MODELS
from bspkit.model.params import Params
from bspkit.model.supersteps import predict

from conftest import BUILD, missing_dependency, run_bspkit
from synth import PARAMS_JSON


def test_registry_records() -> None:
    assert list(ALGORITHMS) == [a.name for a in REGISTRY]  # one record each, in the registry's order
    for alg in REGISTRY:
        assert alg.driver.startswith("bspalg-") and alg.sizes and alg.description
        # a second parameter to sweep comes with its default values, and the other way round
        assert bool(alg.sweep_option) == bool(alg.sweep_values), alg.name
    assert ALGORITHMS["matmul-static2d"].sweep_param == "q" and ALGORITHMS["llcs-dp"].sweep_param == "alpha"
    assert ALGORITHMS["inprod"].sweep_param is None
    # the radix sorts: one driver, a variant each (the names its JSON gives), digit widths swept
    for name, variant in (("rdxsort", "plain"), ("rdxsort-opt", "opt"), ("rdxsort-combined", "combined")):
        alg = ALGORITHMS[name]
        assert alg.driver == "bspalg-rdxsort" and alg.fixed_args == ("--variant", variant)
        assert alg.sweep_param == "bits" and "8" in alg.sweep_values


def test_radix_sort_work_and_memory() -> None:
    alg = ALGORITHMS["rdxsort"]
    # 2 n key passes per round: the run's rounds, else ceil(key_bits / bits), 32 and 8 by default
    assert alg.total_work({"n": 1000, "rounds": 3}) == 6000
    assert alg.total_work({"n": 1000, "bits": 11, "key_bits": 32}) == 6000
    assert alg.total_work({"n": 1000, "bits": 16, "key_bits": 64}) == 8000
    assert alg.total_work({"n": 1000}) == 8000
    assert alg.total_work({"bits": 8}) is None
    run = {"params": {"n": 2**20, "bits": 8, "key_bits": 32, "rounds": 4}, "p": 2, "time_s": 0.01}
    assert efficiency(alg, run, 1e-9) == pytest.approx(8 * 2**20 * 1e-9 / (2 * 0.01), rel=1e-12)
    assert alg.memory is not None
    # six arrays of n keys, nine with the exact check (up to 2^22 keys); 8-byte keys twice that
    big, small = 1 << 24, 1 << 22
    assert alg.memory({"n": big}) == pytest.approx(6 * 4 * big, rel=0.05)
    assert alg.memory({"n": big, "key_bits": 64}) == pytest.approx(6 * 8 * big, rel=0.05)
    assert alg.memory({"n": small}) == pytest.approx(9 * 4 * small, rel=0.1)
    assert alg.memory({"n": small + 1}) < alg.memory({"n": small})
    assert alg.memory({}) is None
    assert all(ALGORITHMS[name].memory is alg.memory for name in ("rdxsort-opt", "rdxsort-combined"))


def test_lu_record_work_memory_and_explanation() -> None:
    alg = ALGORITHMS["lu"]
    assert alg.driver == "bspalg-lu" and alg.fixed_args == () and alg.sweep_param == "nb"
    assert alg.sweep_values == ("32", "64", "128")
    # the flops of unblocked LU: sum over columns of m scalings and m^2 multiply-adds, m = n - j - 1
    for n in (1, 2, 3, 10, 1000):
        assert alg.total_work({"n": n}) == pytest.approx(sum(m + 2 * m * m for m in range(n)), rel=1e-12)
    assert alg.total_work({}) is None
    assert alg.memory is not None and alg.memory({}) is None
    # the matrix, and three more n x n on process 0 for the check up to n = 6000 (measured: 32.8 n^2
    # bytes at n = 4000 with it, 8.3 n^2 at 8000 without)
    assert 32.8 * 4000**2 < alg.memory({"n": 4000}) < 36 * 4000**2
    assert 8.3 * 8000**2 < alg.memory({"n": 8000}) < 10 * 8000**2
    assert alg.memory({"n": 6001}) < alg.memory({"n": 6000})
    assert alg.explain is not None and alg.explain({"params": {}}) == []
    assert all(other.explain is None for other in REGISTRY if other.name != "lu")


def test_efficiency_is_one_process_work_over_p_T() -> None:
    n, p, t, f = 1000, 4, 2.0, 1.0e-10
    for name in ("matmul-blockcyclic", "matmul-static2d", "cannon-put", "cannon-get"):
        run = {"params": {"n": n, "q": 8}, "p": p, "time_s": t}
        assert efficiency(ALGORITHMS[name], run, f) == pytest.approx(2 * n**3 * f / (p * t), rel=1e-12)
    assert efficiency(ALGORITHMS["inprod"], {"params": {"n": 10**6}, "p": 2, "time_s": 1e-3}, 4e-10) == pytest.approx(
        2e6 * 4e-10 / (2 * 1e-3), rel=1e-12
    )
    assert efficiency(
        ALGORITHMS["llcs-dp"],
        {"params": {"m": 300, "n": 500}, "p": 3, "time_s": 0.5},
        1e-9,
    ) == pytest.approx(300 * 500 * 1e-9 / (3 * 0.5), rel=1e-12)
    run = {"params": {"n": n}, "p": p, "time_s": t}
    assert efficiency(ALGORITHMS["matmul-blockcyclic"], run, None) is None
    assert efficiency(ALGORITHMS["matmul-blockcyclic"], {**run, "time_s": 0}, f) is None
    assert efficiency(ALGORITHMS["matmul-blockcyclic"], {**run, "params": {}}, f) is None


def test_unknown_algorithm() -> None:
    assert find_algorithm("inprod").driver == "bspalg-inprod"
    with pytest.raises(AlgorithmError) as e:
        find_algorithm("nosuchalg")
    assert "nosuchalg" in str(e.value)
    for name in ALGORITHMS:
        assert name in str(e.value)


# ------------------------------------------------------------- end to end

HAVE_INPROD = bool(BUILD and (BUILD / "bin" / "bspalg-inprod").is_file() and (BUILD / "bin" / "bsprun").is_file())
needs_inprod = pytest.mark.skipif(not HAVE_INPROD, reason="$BSPKIT_BUILD_DIR/bin/bspalg-inprod (and bsprun) not built")


def run_inprod(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`bspkit run inprod` at p = 2, n = 100000; asserts it passed its check; (result, JSON)."""
    out = tmp_path / "run.json"
    r = run_bspkit(
        "run", "inprod", "-n", "2", "--size", "100000", *args, "--json", str(out),
        env={"BSPKIT_BUILD_DIR": str(BUILD)}, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "check: passed" in r.stdout
    return r, json.loads(out.read_text())


@needs_inprod
@pytest.mark.slow
def test_run_inprod_end_to_end(tmp_path: Path) -> None:
    r, d = run_inprod(tmp_path)
    assert "inprod on 2 processes" in r.stdout
    assert d["algorithm"] == "inprod" and d["p"] == 2 and d["params"]["n"] == 100000
    assert d["verified"] is True
    assert d["S"] == sum(1 for s in d["supersteps"] if s["sync"])
    assert d["W"] == sum(s["w"] for s in d["supersteps"])
    # cyclic distribution: each of the 2 processes multiplies and adds its n / 2 pairs
    assert d["supersteps"][0]["w"] == 2 * 100000 // 2
    # the machine's state around every repetition (docs/algorithm-output.md): 2 processes each
    assert len(d["state"]) == d["reps"] == len(d["times_s"])
    for state, t in zip(d["state"], d["times_s"], strict=True):
        assert len(state["cpu_s"]) == len(state["waited_s"]) == len(state["cpus"]) == 2, state
        assert state["wall_s"] >= t and all(0 <= w <= state["wall_s"] for w in state["waited_s"]), state


@needs_inprod
@pytest.mark.slow
def test_run_inprod_with_params_prints_the_predictions(tmp_path: Path) -> None:
    pfile = tmp_path / "params.json"
    pfile.write_text(json.dumps(PARAMS_JSON))
    r, d = run_inprod(tmp_path, "--params", str(pfile))
    f = d["f_s_per_unit"]
    assert f and f > 0  # --params makes the run measure f
    # f without the time a process waited for a core: positive, never above f as timed
    assert 0 < d["f_held_s_per_unit"] <= f * (1 + 1e-9)
    assert 0 < d["f_all_held_s_per_unit"] <= d["f_all_s_per_unit"] * (1 + 1e-9)
    m = re.search(r"efficiency .*: ([0-9.]+)%", r.stdout)
    assert m and float(m.group(1)) / 100 == pytest.approx(2 * 100000 * f / (2 * d["time_s"]), abs=6e-4)
    pred = predict(Params.from_json(PARAMS_JSON), d)
    for model in MODELS:
        # in the unit people read, 4 significant digits: "37.46 µs"
        m = re.search(rf"^  {re.escape(model)}\s+([0-9.,]+) (ns|µs|ms|s) \(", r.stdout, re.MULTILINE)
        assert m, f"no prediction line for {model}:\n{r.stdout}"
        scale = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]
        assert float(m.group(1).replace(",", "")) * scale == pytest.approx(pred[model], rel=1e-3)


@pytest.mark.slow
def test_run_unknown_algorithm_is_a_usage_error() -> None:
    r = run_bspkit("run", "nosuchalg", timeout=60)
    assert r.returncode == 2
    assert "unknown algorithm 'nosuchalg'" in r.stderr
    for name in ALGORITHMS:
        assert name in r.stderr


# ------------------------------------------- checked before running, said after


def run_inprod_expecting(status: int, *args: str) -> subprocess.CompletedProcess[str]:
    r = run_bspkit("run", "inprod", *args, env={"BSPKIT_BUILD_DIR": str(BUILD)}, timeout=120)
    assert r.returncode == status, (r.returncode, r.stdout, r.stderr)
    return r


@needs_inprod
@pytest.mark.slow
def test_run_json_to_stdout_holds_the_json_alone(tmp_path: Path) -> None:
    r = run_inprod_expecting(0, "-n", "2", "--size", "1000", "--json", "-")
    d = json.loads(r.stdout)  # the whole of stdout is one JSON object
    assert d["format"] == 1 and d["bspkit_version"] and d["params"]["n"] == 1000
    assert "inprod on 2 processes" in r.stderr and "check: passed" in r.stderr


@needs_inprod
@pytest.mark.parametrize(
    "params, message",
    [
        ({**PARAMS_JSON, "format": 7, "bspkit_version": "7.1.0"}, "parameter file format 7 (written by bspkit 7.1.0)"),
        ({**PARAMS_JSON, "l": {}}, "has no l (the empty sync)"),
        ({**PARAMS_JSON, "g": {}}, "has no g surface: the probe measured none: was it cut short?"),
        (
            {**PARAMS_JSON, "g": {}, "machine": {"sections": ["f", "l"]}},
            "has no g surface (the probe ran without its g section): run `bspkit probe` without --only",
        ),
    ],
)
@pytest.mark.slow
def test_run_params_are_checked_before_the_driver_runs(tmp_path: Path, params: dict[str, Any], message: str) -> None:
    pfile = tmp_path / "params.json"
    pfile.write_text(json.dumps(params))
    r = run_inprod_expecting(1, "-n", "2", "--size", "1000", "--params", str(pfile))
    assert message in r.stderr and "inprod on" not in r.stdout + r.stderr


@needs_inprod
@pytest.mark.slow
def test_run_predict_without_a_probe_fails(tmp_path: Path) -> None:
    # no probe of this back end at p = 13 exists under results/probe/
    r = run_inprod_expecting(1, "-n", "13", "--size", "1000", "--predict")
    assert "no parameter file: give --params FILE, or run `bspkit probe -b threads -n 13` first" in r.stderr


@needs_inprod
@pytest.mark.slow
def test_run_json_to_a_place_it_cannot_write_fails_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    r = run_inprod_expecting(1, "-n", "2", "--size", "1000", "--json", str(tmp_path / "a-file" / "x.json"))
    assert f"cannot write --json {tmp_path / 'a-file' / 'x.json'}: {tmp_path / 'a-file'} is not a writable" in r.stderr
    assert "inprod on" not in r.stdout
    (tmp_path / "ro").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root may write anywhere
        r = run_inprod_expecting(1, "-n", "2", "--size", "1000", "--json", str(tmp_path / "ro" / "x.json"))
        assert "is not a writable directory" in r.stderr
    r = run_inprod_expecting(1, "-n", "2", "--size", "1000", "--json", str(tmp_path))
    assert f"cannot write --json {tmp_path}: it is a directory" in r.stderr


@needs_inprod
@pytest.mark.slow
def test_run_too_big_for_memory_is_refused_with_the_numbers() -> None:
    r = run_inprod_expecting(1, "-n", "100000", "--size", "1000")
    assert "inprod with n = 1000 on p = 100000 needs about 5594.0 GiB, but this machine has" in r.stderr
    assert "use a smaller size (--size) or fewer processes" in r.stderr
    r = run_inprod_expecting(1, "-n", "2", "--size", str(10**14))
    assert "needs about 1490116.1 GiB" in r.stderr and "fewer processes" not in r.stderr


@needs_inprod
@pytest.mark.parametrize("backend", ["threads", "mpi"])
def test_a_driver_refuses_inputs_too_big_for_memory(backend: str) -> None:
    """By hand, without bspkit run: the skeleton's bspalg_alloc checks before it fills memory."""
    assert BUILD is not None
    if backend == "mpi" and not (BUILD / "lib" / "bspkit").exists() and not list(BUILD.glob("src/*mpi*")):
        pytest.skip(missing_dependency("Open MPI", "no MPI back end built"))
    r = subprocess.run(
        [str(BUILD / "bin" / "bsprun"), "-b", backend, "-n", "2", str(BUILD / "bin" / "bspalg-inprod"), "--size", str(10**12)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "bspalg-inprod: the run needs at least" in r.stderr
    assert "GiB on each of 2 processes on this machine, for n = 1000000000000) but this machine has" in r.stderr


@needs_inprod
def test_the_library_refuses_more_processes_than_memory_holds() -> None:
    assert BUILD is not None
    r = subprocess.run(
        [str(BUILD / "bin" / "bsprun"), "-n", "100000", str(BUILD / "bin" / "bspalg-inprod"), "--size", "1000"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1
    assert re.search(
        r"bspkit: error in bsp_begin: 100000 processes need at least [0-9.]+ GiB \([0-9.]+ MiB each once it has "
        r"written to all 100000 processes\) but this machine has [0-9.]+ GiB available: use fewer processes",
        r.stderr,
    ), r.stderr


def write_stand_in(bindir: Path, body: str) -> None:
    bindir.mkdir(exist_ok=True)
    exe = bindir / "bspalg-inprod"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)


@needs_inprod
def test_a_driver_killed_by_a_signal_is_named(tmp_path: Path) -> None:
    assert BUILD is not None
    write_stand_in(tmp_path / "bin", "kill -KILL $$\n")
    with pytest.raises(
        AlgorithmError, match=r"inprod failed \(killed by SIGKILL \(killed, most likely out of memory\)\)"
    ):
        run_driver(ALGORITHMS["inprod"], DriverLaunch(tmp_path / "bin", BUILD / "bin" / "bsprun", "threads"), 2, [])


@needs_inprod
def test_a_driver_output_of_another_format_names_both_versions(tmp_path: Path) -> None:
    assert BUILD is not None
    # the stand-in writes its JSON where --json (its last argument) says
    write_stand_in(
        tmp_path / "bin", 'for a; do out=$a; done\necho \'{"format": 2, "bspkit_version": "2.3.0"}\' > "$out"\n'
    )
    with pytest.raises(AlgorithmError, match=r"run format 2 \(written by bspkit 2.3.0\) is not supported: this bspkit"):
        run_driver(ALGORITHMS["inprod"], DriverLaunch(tmp_path / "bin", BUILD / "bin" / "bsprun", "threads"), 2, [])
