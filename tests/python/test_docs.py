"""The code in README.md and docs/*.md runs as written, and every docs page is reachable.

Marking convention for fenced code blocks (an HTML comment on the line right before the
opening fence; several comments may stand on consecutive lines):

- A ```sh block is run with bash (`set -euo pipefail`), a ```python block with this Python.
  Blocks of any other kind (```c, ```text, ```cmake, a bare ```) are only shown.
- `<!-- not run: REASON -->`: a sh/python block that is only shown (a command that needs
  root, another machine, files the reader has, or minutes). The reason is required.
- `<!-- file: NAME -->`: the block (any kind) is the file NAME: written into the page's
  directory before its first block runs. C files are also compiled with
  `bspcc -Wall -Wextra -Werror` and run on threads and mpi (test_c_files_build_and_run).
- `<!-- slow -->`: the block runs only with the slow tests (pytest.mark.slow).
- `<!-- needs: PROG ... -->`: skipped unless every PROG is on PATH (e.g. mpirun).
- `<!-- output -->`: a ```text block that shows what the run block above it printed on
  stdout (`<!-- output: stderr -->`: on stderr). When that block runs (in the slow tier
  if it is slow), its output is compared with the sample by shape (`same_shape`): the same
  lines in the same order, blanks collapsed and blank lines left out, with every number
  masked (numbers may differ; words, units and column headers may not; a time may change
  its scale, 2.4 ms for 957 µs). `...` in a sample line stands for any text, a line of
  `...` alone for any lines. A sample must not show e-notation (1.024e+12): bspkit prints
  1.024 T.
- `<!-- not output: WHAT IT IS -->`: a ```text block that is no command's output (a
  listing of files, a schematic). Every ```text block carries one of the two.

Each page runs in its own directory, in document order, so a block may use what an earlier
block of the same page made (run a page's tests together). The directory holds links to the
repository's top-level entries (examples/, include/, ...), `build` -> $BSPKIT_BUILD_DIR and
`.venv` -> the environment of this Python; BSPKIT_SOURCE_DIR points bspkit at it, so that
results/ is written there. A block that uses build/ skips without BSPKIT_BUILD_DIR, one that
uses .venv/bin/bspkit without an installed bspkit command.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import BUILD, REPO, missing_dependency

RUN_KINDS = ("sh", "python")
DOC_PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!--\s*(not run|not output|output|file|slow|needs)\s*(?::\s*(.*?))?\s*-->\s*$")
BLOCK_TIMEOUT_S = 600


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    kind: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.kind in RUN_KINDS and "not run" not in self.marks and "file" not in self.marks


def read_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page with the marks on the lines right before each."""
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        marks: dict[str, str] = {}
        j = i - 1
        while j >= 0 and (m := MARK.match(lines[j])):
            marks[m.group(1)] = m.group(2) or ""
            j -= 1
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"{page}:{i + 1}: a code block that is never closed"
        blocks.append(Block(page, i + 1, opening.group(1), "\n".join(lines[i + 1 : end]) + "\n", marks))
        i = end + 1
    return blocks


def output_samples(page: Path) -> dict[int, Block]:
    """The `<!-- output -->` blocks of a page by the line of the run block they show."""
    samples: dict[int, Block] = {}
    blocks = read_blocks(page)
    for before, block in zip(blocks, blocks[1:], strict=False):
        if "output" in block.marks:
            samples[before.line] = block
    return samples


ALL_BLOCKS = [b for page in DOC_PAGES for b in read_blocks(page)]
RUN_BLOCKS = [b for b in ALL_BLOCKS if b.runs]
C_FILES = [b for b in ALL_BLOCKS if b.marks.get("file", "").endswith(".c")]


def bspkit_venv() -> Path:
    """The environment of this Python (the repository's .venv when pytest runs from it)."""
    return Path(sys.prefix)


_page_dirs: dict[Path, Path] = {}


@pytest.fixture(scope="module")
def pages_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docs")


def page_dir(page: Path, root: Path) -> Path:
    """The page's directory: links to the repository's entries, build, .venv, its files."""
    if page in _page_dirs:
        return _page_dirs[page]
    work = root / page.stem
    work.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in {"build", ".venv", "results", ".git"} and not entry.name.startswith("build"):
            (work / entry.name).symlink_to(entry)
    if BUILD:
        (work / "build").symlink_to(BUILD.resolve())
    (work / ".venv").symlink_to(bspkit_venv())
    for block in read_blocks(page):
        if "file" in block.marks:
            (work / block.marks["file"]).write_text(block.text)
    _page_dirs[page] = work
    return work


# a program a docs block needs (<!-- needs: PROG -->) -> the dependency of scripts/setup.sh that brings it
PROVIDER = {"mpirun": "Open MPI", "mpicc": "Open MPI", "addr2line": "binutils", "chromium": "Chromium", "fio": "fio"}


def skip_reason(block: Block) -> str | None:
    """Why this block cannot run here, or None."""
    if "build/" in block.text and not (BUILD and (BUILD / "bin" / "bsprun").is_file()):
        return "BSPKIT_BUILD_DIR is not set or holds no build"
    if ".venv/bin/bspkit" in block.text and not (bspkit_venv() / "bin" / "bspkit").is_file():
        return f"no bspkit command in {bspkit_venv()}/bin"
    missing = [prog for prog in block.marks.get("needs", "").split() if shutil.which(prog) is None]
    if missing:  # the programs docs need come with scripts/setup.sh's packages (mpirun: Open MPI)
        return missing_dependency(PROVIDER.get(missing[0], missing[0]), f"{', '.join(missing)} is not on PATH")
    return None


def block_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["BSPKIT_SOURCE_DIR"] = str(work)
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("OPENBLAS_CORETYPE", "Haswell")
    return env


def params_of(blocks: list[Block]) -> list[object]:
    return [pytest.param(b, id=b.name, marks=[pytest.mark.slow] if "slow" in b.marks else []) for b in blocks]


@pytest.mark.parametrize("block", params_of(RUN_BLOCKS))
def test_block_runs(block: Block, pages_root: Path) -> None:
    reason = skip_reason(block)
    if reason:
        pytest.skip(reason)
    work = page_dir(block.page, pages_root)
    if block.kind == "sh":
        cmd = ["bash", "-c", "set -euo pipefail\n" + block.text]
    else:
        cmd = [sys.executable, "-c", block.text]
    done = subprocess.run(cmd, cwd=work, env=block_env(work), capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, (
        f"{block.name} exited with {done.returncode}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    )
    sample = output_samples(block.page).get(block.line)
    if sample is not None:
        real = done.stderr if sample.marks["output"] == "stderr" else done.stdout
        differs = same_shape(sample.text, real)
        assert differs is None, f"{sample.name}: the sample output is not what {block.name} prints:\n{differs}"


# a number: 1,024 and 0.5 and -3 and 1.5e-09 and 0x7ffe6180dac0 (one number each)
NUMBER = re.compile(r"0x[0-9a-fA-F]*|[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
TIME = re.compile(r"# (?:ns|µs|us|ms|s|min|h)\b")
E_NOTATION = re.compile(r"\b\d+(?:\.\d+)?[eE][-+]?\d+\b")


def shape(line: str) -> str:
    """A line's shape: blanks collapsed, every number '#', a time '# <time>' whatever its scale."""
    return TIME.sub("# <time>", NUMBER.sub("#", " ".join(line.split())))


def same_shape(sample: str, real: str) -> str | None:
    """None when the real output has the sample's shape (see the module's docstring), else
    the first line that differs, with what the real output has there."""
    want = [shape(ln) for ln in sample.splitlines() if ln.strip()]
    got = [shape(ln) for ln in real.splitlines() if ln.strip()]

    def line_pattern(w: str) -> re.Pattern[str]:
        return re.compile(".*".join(re.escape(part) for part in w.split("...")) + r"\Z")

    def match(i: int, j: int) -> tuple[int, int] | None:  # None: matched; else where it failed
        worst = (i, j)
        while i < len(want):
            if want[i] == "...":
                for k in range(j, len(got) + 1):
                    failed = match(i + 1, k)
                    if failed is None:
                        return None
                    worst = max(worst, failed)
                return worst
            if j >= len(got) or not line_pattern(want[i]).match(got[j]):
                return max(worst, (i, j))
            i, j = i + 1, j + 1
        return None if j == len(got) else max(worst, (i, j))

    failed = match(0, 0)
    if failed is None:
        return None
    i, j = failed
    return (
        f"sample line {i + 1}: {want[i] if i < len(want) else '(end)'!r}\n"
        f"real output:   {got[j] if j < len(got) else '(end)'!r}\n--- the real output\n{real}"
    )


def test_same_shape() -> None:
    real = "n = 8000:\n   p  time      W\n   4  26.05 s   256 G\n  16  957 µs   64 G\ndone\n"
    assert same_shape("n = 4000:\n p time W\n 4 1.0 ms 256 G\n 16 2 s 1 G\ndone", real) is None
    assert same_shape("n = 4000:\n...\ndone", real) is None
    assert same_shape("n = ...\n...", real) is None
    assert same_shape("n = 8000:\n   p  time      W\n   4  26.05 s   256 G\n", real) is not None  # lines left
    assert same_shape("n = 8000:\n p time H\n...", real) is not None  # a header differs
    assert same_shape("n = 8000:\n p time W\n 4 26.05 s 2.56e+11\n...", real) is not None  # a unit missing
    assert same_shape("pid 7 at 0x...", "pid 2 at 0x7ffe6180dac0") is None
    assert same_shape("n = 1,024, p = 3", "n = 8, p = 1") is None
    assert same_shape("n = 8000, p = 3", "n = 8000 p = 3") is not None  # a comma is no digit


def test_output_samples_follow_a_run_block_and_show_no_e_notation() -> None:
    """Every `<!-- output -->` block is a ```text block right after a block that runs, and
    shows no e-notation; every ```text block is marked output or not output."""
    wrong = []
    for page in DOC_PAGES:
        blocks = read_blocks(page)
        for before, block in zip([None, *blocks], blocks, strict=False):
            where = block.name
            if block.kind == "text" and not {"output", "not output"} & set(block.marks):
                wrong.append(f"{where}: a ```text block without <!-- output --> or <!-- not output: ... -->")
            if "output" not in block.marks:
                continue
            if block.kind != "text":
                wrong.append(f"{where}: <!-- output --> on a ```{block.kind} block (```text only)")
            if before is None or not before.runs:
                wrong.append(f"{where}: <!-- output --> after no block that runs")
            if block.marks["output"] not in ("", "stderr"):
                wrong.append(f"{where}: <!-- output: {block.marks['output']} --> (only stderr may follow 'output:')")
            for n, line in enumerate(block.text.splitlines()):
                if E_NOTATION.search(line):
                    wrong.append(
                        f"{page.relative_to(REPO)}:{block.line + 1 + n}: e-notation in a sample output: {line}"
                    )
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("backend", ["threads", "mpi"])
@pytest.mark.parametrize("block", C_FILES, ids=[b.name for b in C_FILES])
def test_c_files_build_and_run(block: Block, backend: str, tmp_path: Path) -> None:
    """Every C file of the docs compiles warning-free and runs on threads and mpi (the
    README's hello says what it prints: that is checked too)."""
    if not (BUILD and (BUILD / "bin" / "bspcc").is_file()):
        pytest.skip("BSPKIT_BUILD_DIR is not set or holds no build")
    if backend != "threads" and shutil.which("mpirun") is None:
        pytest.skip(missing_dependency("Open MPI", "mpirun is not on PATH"))
    source = tmp_path / block.marks["file"]
    source.write_text(block.text)
    exe = tmp_path / source.stem
    compiled = subprocess.run(
        [str(BUILD / "bin" / "bspcc"), "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run(
        [str(BUILD / "bin" / "bsprun"), "-b", backend, "-n", "4", str(exe)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    if block.marks["file"] == "hello.c":
        assert "process 0 heard from 4 processes (ids sum to 6)" in ran.stdout, ran.stdout


def test_the_readme_has_a_hello_program() -> None:
    assert any(b.page.name == "README.md" and b.marks.get("file") == "hello.c" for b in ALL_BLOCKS)


def test_every_shown_only_block_says_why() -> None:
    missing = [b.name for b in ALL_BLOCKS if "not run" in b.marks and not b.marks["not run"]]
    assert not missing, f"`<!-- not run: REASON -->` without a reason: {missing}"


def test_every_mark_belongs_to_a_block() -> None:
    """A mark separated from its block by a blank line would be ignored silently."""
    stray = []
    for page in DOC_PAGES:
        lines = page.read_text().splitlines()
        for n, line in enumerate(lines):
            if MARK.match(line):
                k = n + 1
                while k < len(lines) and MARK.match(lines[k]):
                    k += 1
                if k >= len(lines) or not FENCE.match(lines[k]):
                    stray.append(f"{page.relative_to(REPO)}:{n + 1}")
    assert not stray, f"marks not right before a code block: {stray}"


LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def links_of(page: Path) -> list[Path]:
    """The local files a page links to (Markdown links; web addresses left out)."""
    return [
        (page.parent / target).resolve()
        for target, _anchor in LINK.findall(page.read_text())
        if "://" not in target and not target.startswith("mailto:")
    ]


def test_every_docs_page_is_in_the_readme_index() -> None:
    linked = set(links_of(REPO / "README.md"))
    pages = sorted((REPO / "docs").glob("*.md"))
    unlinked = [p.name for p in pages if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README's index does not link: {unlinked}"


def slug(heading: str) -> str:
    """The anchor GitHub makes of a heading: lower case, punctuation dropped, blanks to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors_of(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.DOTALL | re.MULTILINE)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_links_to_sections_name_a_heading() -> None:
    broken = []
    for page in DOC_PAGES:
        for target, anchor in LINK.findall(page.read_text()):
            path = (page.parent / target).resolve()
            if anchor and path.suffix == ".md" and path.exists() and anchor[1:] not in anchors_of(path):
                broken.append(f"{page.relative_to(REPO)} -> {target}{anchor}")
    assert not broken, f"links to sections that do not exist: {broken}"


def test_local_links_lead_somewhere() -> None:
    broken = [
        f"{page.relative_to(REPO)} -> {target}"
        for page in DOC_PAGES
        for target in links_of(page)
        if not target.exists()
    ]
    assert not broken, f"links to files that do not exist: {broken}"


def test_readme_is_short() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 300
