"""Every registered algorithm has every file of the recipe in algorithms/README.md ("The files
of a new algorithm"): a driver registered with bspalg_add_algorithm (algorithms/CMakeLists.txt)
and a record in bspkit.algorithms.REGISTRY must come with all the others, and the other way
round; the README's list names each file checked here. Reads the sources (no build needed),
except the toy's end-to-end test: the C toy of tests/algorithms/toy and one record, with its
closed form, are all `bspkit run` and `bspkit predict` need."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bspkit import algorithms as al
from bspkit.algorithms import REGISTRY
from bspkit.model.costs import Cost, StepKind

from conftest import BUILD, PYDIR, REPO, bspkit_in_process
from synth import PARAMS_JSON

TESTS_PY = REPO / "tests" / "python"
COSTS = PYDIR / "bspkit" / "model" / "costs"

# The records without a closed-form cost (`cost=None`; `bspkit predict` refuses them), and why.
WITHOUT_CLOSED_FORM = {"oocmm": "its time is mostly the disk's, which the IMH model prices (bspkit imh)"}


@dataclass(frozen=True)
class CmakeAlgorithm:
    """One bspalg_add_algorithm(...) call."""

    name: str
    folder: Path  # where its CMakeLists.txt is
    sources: tuple[Path, ...]
    tests_file: Path
    test_only: bool

    @property
    def driver(self) -> str:
        return f"bspalg-{self.name}"


def cmake_calls(text: str, command: str) -> list[str]:
    """The argument text of every COMMAND(...) call that starts a line of a CMake file."""
    text = re.sub(r"#[^\n]*", "", text)
    return [m.group(1) for m in re.finditer(rf"^\s*{command}\s*\(([^)]*)\)", text, re.M)]


def keyword_values(words: list[str], keyword: str) -> list[str]:
    """The values after KEYWORD in a CMake call's words, up to the next upper-case keyword."""
    if keyword not in words:
        return []
    rest = words[words.index(keyword) + 1 :]
    return rest[: next((i for i, w in enumerate(rest) if w.isupper()), len(rest))]


def registered_algorithms() -> list[CmakeAlgorithm]:
    found = []
    for cmakelists in sorted(
        [*REPO.glob("algorithms/**/CMakeLists.txt"), *REPO.glob("tests/algorithms/**/CMakeLists.txt")]
    ):
        for args in cmake_calls(cmakelists.read_text(), "bspalg_add_algorithm"):
            words = args.split()
            folder = cmakelists.parent
            found.append(
                CmakeAlgorithm(
                    keyword_values(words, "NAME")[0],
                    folder,
                    tuple(folder / s for s in keyword_values(words, "SOURCES")),
                    folder / keyword_values(words, "TESTS")[0],
                    "TEST_ONLY" in words,
                )
            )
    return found


ALGORITHMS = registered_algorithms()
INSTALLED = [a for a in ALGORITHMS if not a.test_only]
WITH_CLOSED_FORM = [rec for rec in REGISTRY if rec.cost is not None]


def python_tests() -> list[Path]:
    """tests/python/test_*.py but this one and test_algorithms.py (the registry's own tests)."""
    skip = {"test_algorithms.py", Path(__file__).name}
    return [p for p in sorted(TESTS_PY.glob("test_*.py")) if p.name not in skip]


def cost_module(rec: al.Algorithm) -> str | None:
    """The module of bspkit.model.costs whose `cost` the record's closed form calls."""
    found = re.findall(r"bspkit\.model\.costs(?:\.(\w+)| import (\w+))", inspect.getsource(rec.cost or (lambda: 0)))
    modules = {a or b for a, b in found}
    return modules.pop() if len(modules) == 1 else None


def test_the_algorithms_are_found() -> None:
    names = [a.name for a in ALGORITHMS]
    assert {"inprod", "matmul", "toy"} <= set(names) and len(names) == len(set(names)), names
    assert len(REGISTRY) == len({rec.name for rec in REGISTRY}), "two records of one name"


@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: a.name)
def test_its_driver_source_is_there(alg: CmakeAlgorithm) -> None:
    """Steps 1 and 2: the driver's sources named in bspalg_add_algorithm(... SOURCES ...), the
    first algorithms/<name>/<name>.c, on the skeleton (BSPALG_MAIN)."""
    assert alg.sources, f"{alg.folder}/CMakeLists.txt: no SOURCES"
    missing = [str(s.relative_to(REPO)) for s in alg.sources if not s.is_file()]
    assert missing == [], f"{alg.name}: missing sources {missing}"
    main = alg.folder / f"{alg.name}.c"
    assert main in alg.sources and "BSPALG_MAIN(" in main.read_text(), f"{main}: not the driver on the skeleton"


@pytest.mark.parametrize("alg", ALGORITHMS, ids=lambda a: a.name)
def test_its_tests_file_has_cases_and_its_folder_is_added(alg: CmakeAlgorithm) -> None:
    """Steps 3 and 4: tests.cmake with at least one bspalg_test (the smoke case, run under the
    sanitizers and in the quick tier), and the folder's add_subdirectory line."""
    assert alg.tests_file.is_file(), f"{alg.name}: no tests file {alg.tests_file}"
    text = alg.tests_file.read_text()
    assert cmake_calls(text, "bspalg_test") or cmake_calls(text, "oocmm_test"), f"{alg.tests_file}: no test case"
    parent = alg.folder.parent / "CMakeLists.txt"
    added = [a.strip() for a in cmake_calls(parent.read_text(), "add_subdirectory")]
    assert alg.folder.name in added, f"{parent}: no add_subdirectory({alg.folder.name})"


@pytest.mark.parametrize("alg", INSTALLED, ids=lambda a: a.name)
def test_it_has_a_python_record(alg: CmakeAlgorithm) -> None:
    """Step 5: at least one record in REGISTRY runs the driver."""
    assert any(rec.driver == alg.driver for rec in REGISTRY), f"no Algorithm(...) with driver {alg.driver} in REGISTRY"


def test_every_python_record_has_a_driver() -> None:
    drivers = {a.driver for a in INSTALLED}
    assert [rec.name for rec in REGISTRY if rec.driver not in drivers] == []


def test_every_record_has_a_closed_form_or_says_why_not() -> None:
    """Step 5: a record's `cost` is its closed form; the few without one are listed above."""
    without = sorted(rec.name for rec in REGISTRY if rec.cost is None)
    assert without == sorted(WITHOUT_CLOSED_FORM), (
        f"records without a closed-form cost: {without}; give them cost= (step 5), or list them in "
        "WITHOUT_CLOSED_FORM with the reason"
    )


@pytest.mark.parametrize("rec", WITH_CLOSED_FORM, ids=lambda r: r.name)
def test_its_closed_form_has_its_module(rec: al.Algorithm) -> None:
    """Step 5: the record's cost calls the `cost` of python/bspkit/model/costs/<name>.py (<name>:
    the driver's), and it evaluates (at the driver's defaults) to a Cost of this algorithm."""
    module = cost_module(rec)
    assert module, f"{rec.name}: its cost {rec.cost} calls no module of bspkit.model.costs"
    assert module == rec.driver.removeprefix("bspalg-"), f"{rec.name}: its closed form is in {module}.py"
    path = COSTS / f"{module}.py"
    assert path.is_file() and re.search(r"^def cost\(", path.read_text(), re.M), f"{path}: no def cost("
    cost = rec.closed_form({}, 2)
    assert isinstance(cost, Cost) and cost.algorithm == rec.name and cost.p == 2 and cost.steps


def test_every_cost_module_is_a_records() -> None:
    """No closed form left out of the registry: each module with a `cost` is some record's."""
    modules = {p.stem for p in COSTS.glob("*.py") if re.search(r"^def cost\(", p.read_text(), re.M)}
    assert modules - {cost_module(rec) for rec in WITH_CLOSED_FORM} == set()


@pytest.mark.parametrize("rec", WITH_CLOSED_FORM, ids=lambda r: r.name)
def test_a_python_test_checks_its_closed_form(rec: al.Algorithm) -> None:
    """Step 5: a test (tests/python/test_<name>_cost.py, or test_closed_forms_*.py) names the
    algorithm and calls closed_form: the driver's counts against its closed form."""
    tests = [p for p in python_tests() if f'"{rec.name}"' in (t := p.read_text()) and "closed_form(" in t]
    assert tests, f'no test in tests/python names "{rec.name}" and calls closed_form('


@pytest.mark.parametrize("alg", INSTALLED, ids=lambda a: a.name)
def test_a_python_test_runs_it(alg: CmakeAlgorithm) -> None:
    """Step 5: a Python test (tests/python/test_<name>_cost.py, or another) names the driver
    or one of its `bspkit run` names."""
    names = {alg.driver} | {rec.name for rec in REGISTRY if rec.driver == alg.driver}
    assert any(re.search(rf"\b{re.escape(n)}\b", p.read_text()) for p in python_tests() for n in names), (
        f"no test in tests/python names {sorted(names)}"
    )


@pytest.mark.parametrize("alg", INSTALLED, ids=lambda a: a.name)
def test_its_output_is_documented(alg: CmakeAlgorithm) -> None:
    """Step 6: a row of the drivers' table in docs/algorithm-output.md."""
    rows = [ln for ln in (REPO / "docs" / "algorithm-output.md").read_text().splitlines() if ln.startswith("|")]
    assert any(f"`{alg.driver}`" in row.split("|")[1] for row in rows), (
        f"docs/algorithm-output.md has no row for {alg.driver}"
    )


def algorithm_rows() -> list[list[str]]:
    """docs/algorithms.md's table rows, as cells (name, driver, what, costs)."""
    lines = (REPO / "docs" / "algorithms.md").read_text().splitlines()
    heads = {i - 1 for i, ln in enumerate(lines) if ln.startswith("|---")}  # a table's header row
    return [ln.split("|")[1:-1] for i, ln in enumerate(lines) if ln.startswith("| `") and i not in heads]


def test_every_run_name_has_a_row_in_docs_algorithms_and_every_row_a_record() -> None:
    """Step 6: docs/algorithms.md has a row per `bspkit run` name (its first column), and no
    row for a name that is not registered; a row's "costs" cell names files that exist (the
    driver's README, or its source whose header derives the cost)."""
    rows = algorithm_rows()
    documented = {name for cells in rows for name in re.findall(r"`([^`]+)`", cells[0])}
    names = {rec.name for rec in REGISTRY}
    assert sorted(names - documented) == [], "docs/algorithms.md has no row for these"
    assert sorted(documented - names) == [], "docs/algorithms.md has rows for these unregistered names"
    for cells in rows:
        for path in re.findall(r"`([\w./-]+\.(?:md|c))`", cells[-1]):
            assert (REPO / path).is_file(), f"docs/algorithms.md: {cells[0].strip()}'s costs in {path}: no such file"


# The README's list: every file a new algorithm touches (the optional README last).
RECIPE_FILES = (
    "algorithms/<name>/<name>.c",
    "algorithms/<name>/CMakeLists.txt",
    "algorithms/<name>/tests.cmake",
    "algorithms/CMakeLists.txt",
    "python/bspkit/algorithms.py",
    "python/bspkit/model/costs/<name>.py",
    "tests/python/test_<name>_cost.py",
    "docs/algorithm-output.md",
    "docs/algorithms.md",
    "algorithms/<name>/README.md",
)


def test_the_recipe_names_every_file() -> None:
    """algorithms/README.md's list of files names each one this test checks, and no other, and
    says how many."""
    recipe = (REPO / "algorithms" / "README.md").read_text()
    files = recipe.split("## The files of a new algorithm", 1)[1].split("\n## ", 1)[0]
    intro, block = files.split("```", 2)[:2]
    listed = [ln.split()[0] for ln in block.splitlines() if ln.strip() and not ln.startswith(" ")]
    assert listed == list(RECIPE_FILES)
    assert f"{len(RECIPE_FILES)} files" in " ".join(intro.split()), "the count before the list"


# ------------------------------------------- the toy: the recipe's proof, end to end

HAVE_TOY = bool(BUILD and (BUILD / "bin" / "bspalg-toy").is_file())
# a hand-written machine for `bspkit predict toy` (f comes from --f)
HAND_WRITTEN = {
    "format": 1,
    "p": 4,
    "source": "hand-written: test_algorithm_recipe.py",
    "machine": {"host": "testbox", "backend": "threads", "cores": 4},
    "l": {"empty": 1.0e-5},
    "g": {"put/alltoall": {"linreg": {"g": 1.0e-8, "l": 2.0e-5}}},
}


def toy_cost(algorithm: str, problem: Mapping[str, Any], p: int) -> Cost:
    """tests/algorithms/toy/toy.c's header: superstep 0 scans the n_s own values and puts the
    total to every later process (h = p - 1, in p - 1 one-word puts), then each adds the
    totals before it and that offset to its n_s sums (s + n_s additions, no sync after it)."""
    n = int(problem.get("n", 1000))
    blocks = [(s + 1) * n // p - s * n // p for s in range(p)]
    comm = p > 1
    steps = (
        StepKind(
            "scan, put the total",
            1,
            w=max(blocks),
            h=p - 1,
            count=p - 1,
            msg_words=1 if comm else 0,
            primitive="put" if comm else None,
            pattern="alltoall" if comm else None,
            h_inout=p - 1,  # process s sends p - 1 - s words and receives s (thesis eq. 2.2)
        ),
        StepKind(
            "add the offset",
            1,
            w=max(s + b for s, b in enumerate(blocks)),
            h=0,
            count=0,
            msg_words=0,
            sync=False,
            h_inout=0,
        ),
    )
    return Cost(algorithm, p, {"n": n, "block": n // p}, "addition", None, steps)


TOY = al.Algorithm(
    "toy",
    "bspalg-toy",
    (),
    "prefix sums, block distribution (the toy of algorithms/README.md)",
    lambda params: None if params.get("n") is None else float(params["n"]),
    cost=toy_cost,
    sizes=(1000, 2000),
)


@pytest.mark.skipif(not HAVE_TOY, reason="$BSPKIT_BUILD_DIR/bin/bspalg-toy not built")
def test_the_toy_driver_and_one_record_are_an_algorithm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """algorithms/README.md's steps end to end: the C toy of tests/algorithms/toy and one
    record (its closed form made here) are all `bspkit run` needs to run, check and predict it,
    and all `bspkit predict` needs; the driver's counts are the closed form's."""
    monkeypatch.setitem(al.ALGORITHMS, TOY.name, TOY)
    monkeypatch.setenv("BSPKIT_BUILD_DIR", str(BUILD))
    pfile = tmp_path / "params.json"
    pfile.write_text(json.dumps(PARAMS_JSON))
    out = tmp_path / "run.json"
    rc, _, err = bspkit_in_process(
        capsys, "run", "toy", "-n", "3", "--size", "1000", "--params", str(pfile), "--json", str(out)
    )
    assert rc == 0, err
    d = json.loads(out.read_text())
    assert d["algorithm"] == "toy" and d["p"] == 3 and d["params"]["n"] == 1000 and d["verified"] is True
    cost = al.closed_form("toy", d["params"], 3)
    counted = [{k: v for k, v in step.items() if k != "words"} for step in d["supersteps"]]
    assert counted == [{k: v for k, v in s.items() if k != "kind"} for s in cost.supersteps()]
    assert (d["W"], d["H"], d["S"], d["params"]) == (cost.W, cost.H, cost.S, dict(cost.problem))
    assert "toy" in al.closed_form_names()
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps(HAND_WRITTEN))
    rc, text, err = bspkit_in_process(
        capsys, "predict", "toy", "--size", "1000", "-n", "1,2,4", "--params", str(machine), "--f", "1e-9"
    )
    assert rc == 0, err
    assert text.startswith("toy: predicted from its closed-form cost (nothing run)"), text
    # at p = 4: W = 250 + 253 additions, H = 3 words, S = 1, as toy_cost gives
    assert re.search(r"^\s+4\s.*\s503\s+3\s+1\s", text, re.M), text
