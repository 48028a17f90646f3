"""Every registered algorithm has every file of the recipe in algorithms/README.md ("The files
of a new algorithm"): a driver registered with bspalg_add_algorithm (algorithms/CMakeLists.txt)
and a record in bspkit.algorithms.REGISTRY must come with all the others, and the other way
round. Reads the sources only (no build needed)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from bspkit.algorithms import REGISTRY

from conftest import REPO

TESTS_PY = REPO / "tests" / "python"


@dataclass(frozen=True)
class CmakeAlgorithm:
    """One bspalg_add_algorithm(...) call."""

    name: str
    folder: Path  # where its CMakeLists.txt is
    tests_file: Path
    test_only: bool

    @property
    def driver(self) -> str:
        return f"bspalg-{self.name}"


def cmake_calls(text: str, command: str) -> list[str]:
    """The argument text of every COMMAND(...) call that starts a line of a CMake file."""
    text = re.sub(r"#[^\n]*", "", text)
    return [m.group(1) for m in re.finditer(rf"^\s*{command}\s*\(([^)]*)\)", text, re.M)]


def registered_algorithms() -> list[CmakeAlgorithm]:
    found = []
    for cmakelists in sorted(
        [*REPO.glob("algorithms/**/CMakeLists.txt"), *REPO.glob("tests/algorithms/**/CMakeLists.txt")]
    ):
        for args in cmake_calls(cmakelists.read_text(), "bspalg_add_algorithm"):
            words = args.split()
            name = words[words.index("NAME") + 1]
            tests = words[words.index("TESTS") + 1]
            found.append(CmakeAlgorithm(name, cmakelists.parent, cmakelists.parent / tests, "TEST_ONLY" in words))
    return found


ALGORITHMS = registered_algorithms()
INSTALLED = [a for a in ALGORITHMS if not a.test_only]


def test_the_algorithms_are_found() -> None:
    names = [a.name for a in ALGORITHMS]
    assert {"inprod", "matmul", "toy"} <= set(names) and len(names) == len(set(names)), names


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


def test_every_python_record_is_in_the_test_of_the_names() -> None:
    """Step 5: tests/python/test_algorithms.py lists every `bspkit run` name, in order."""
    text = (TESTS_PY / "test_algorithms.py").read_text()
    missing = [rec.name for rec in REGISTRY if f'"{rec.name}"' not in text]
    assert missing == [], f"tests/python/test_algorithms.py's name list lacks {missing}"


@pytest.mark.parametrize("alg", INSTALLED, ids=lambda a: a.name)
def test_a_python_test_runs_it(alg: CmakeAlgorithm) -> None:
    """Step 5: a Python test (tests/python/test_<name>_cost.py, or another) names the driver
    or one of its `bspkit run` names, beyond the list of names."""
    names = {alg.driver} | {rec.name for rec in REGISTRY if rec.driver == alg.driver}
    skip = {"test_algorithms.py", Path(__file__).name}
    tests = [p for p in sorted(TESTS_PY.glob("test_*.py")) if p.name not in skip]
    assert any(re.search(rf"\b{re.escape(n)}\b", p.read_text()) for p in tests for n in names), (
        f"no test in tests/python names {sorted(names)}"
    )


@pytest.mark.parametrize("alg", INSTALLED, ids=lambda a: a.name)
def test_its_output_is_documented(alg: CmakeAlgorithm) -> None:
    """Step 6: a row of the drivers' table in docs/algorithm-output.md."""
    rows = [ln for ln in (REPO / "docs" / "algorithm-output.md").read_text().splitlines() if ln.startswith("|")]
    assert any(f"`{alg.driver}`" in row.split("|")[1] for row in rows), (
        f"docs/algorithm-output.md has no row for {alg.driver}"
    )


def test_every_run_name_has_a_row_in_docs_algorithms() -> None:
    """Step 6: docs/algorithms.md has a table with a row per `bspkit run` name (its first column)."""
    page = REPO / "docs" / "algorithms.md"
    if not page.is_file():
        pytest.skip("docs/algorithms.md does not exist yet (the README's algorithm table moves there)")
    first_cells = [ln.split("|")[1] for ln in page.read_text().splitlines() if ln.startswith("|") and ln.count("|") > 2]
    documented = {name for cell in first_cells for name in re.findall(r"`([^`]+)`", cell)}
    missing = [rec.name for rec in REGISTRY if rec.name not in documented]
    assert missing == [], f"docs/algorithms.md has no row for {missing}"


def test_the_recipe_names_every_file() -> None:
    """algorithms/README.md's list of files names each one this test checks."""
    recipe = (REPO / "algorithms" / "README.md").read_text()
    files = recipe.split("## The files of a new algorithm", 1)[1].split("\n## ", 1)[0]
    for path in (
        "algorithms/<name>/<name>.c",
        "algorithms/<name>/CMakeLists.txt",
        "algorithms/<name>/tests.cmake",
        "algorithms/CMakeLists.txt",
        "python/bspkit/algorithms.py",
        "tests/python/test_algorithms.py",
        "tests/python/test_<name>_cost.py",
        "docs/algorithm-output.md",
        "docs/algorithms.md",
    ):
        assert path in files, f"algorithms/README.md's list of files lacks {path}"
