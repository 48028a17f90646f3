"""The seeds' machines as parameter files (data/machines/, issue 40 item 1), read twice.

First reading, bspkit's: every file reads with read_params_file, check_hand_written lists
nothing a seed_note does not explain, and every number of f, l, g (and of the other parameter
objects: f_average, f_algorithm, l_slides, l_range, imh, imh_paper) has a citation in
`sources`, and every citation a number.

Second reading, the seeds' (skipped without the seeds' text: BSPKIT_SEEDS_DIR, or shared/seeds
beside or inside the checkout): each citation's `as_printed` is found at its line, in its row
and column, under the headers it names (table, library, pattern), and the file's number is
as_printed through the stated conversion (the table below, written apart from
data/machines/make_seed_machines.py); a cross_check (the same value printed a second way,
f beside 1/f) agrees within the printed digits. A thesis file's rows are its own p, primitive,
pattern, library and machine. A mistyped number or a value filed under the wrong row fails."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import math
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bspkit.model.params import is_hand_written, read_params_file
from bspkit.model.supersteps import check_hand_written

from conftest import REPO

MACHINES = REPO / "data" / "machines"
FILES = sorted(MACHINES.glob("*.json"))
DOCS = {
    "000": "000_14b05ca3475ab75b.txt",
    "001": "001_3a09dc6e24739fbe.txt",
    "002": "002_ed6c85674bf8f665.txt",
    "003": "003_5048c8ad6359ff8c.txt",
    "004": "004_9153cb2414fc3490.txt",
}
NOT_PARAMETERS = {"format", "p", "source", "machine", "sources", "seed_notes"}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:/\d+)?")

# unit_conversion -> the file's value from the printed number
CONVERSIONS = {
    "us->s": lambda x: x * 1e-6,
    "ms->s": lambda x: x * 1e-3,
    "ns->s": lambda x: x * 1e-9,
    "words->words": lambda x: x,
    "M/s->s": lambda x: 1 / (x * 1e6),
    "G/s->s": lambda x: 1 / (x * 1e9),
    # Table 4.2 counts n^3 operations (a multiply-add one), bspkit 2 flops per multiply-add
    "ns per n^3 op->s per flop": lambda x: x * 1e-9 / 2,
    "G n^3 op/s->s per flop": lambda x: 1 / (x * 1e9) / 2,
    "M n^3 op/s->s per flop": lambda x: 1 / (x * 1e6) / 2,
    "us printed as ns->s": lambda x: x * 1e-6,  # Table 5.3's f column: 'ns/op' agrees with 1/f only as µs
    "us per int->s per word": lambda x: x * 1e-6 * 2,  # 002's 32-bit integers, 8-byte words
    "MB/s->s per byte": lambda x: 1 / (x * 1e6),
    "MB/s->s per word": lambda x: 8 / (x * 1e6),
    "flop units at 250 Mflop/s->s": lambda x: x / 250e6,  # 004: g and l in units of its s
}
# header kind -> the lines that are such a header (the nearest one at or above the cited line,
# or below it for a title printed under its table, must hold the header's text)
HEADERS = {
    "table": (re.compile(r"^Table (?:[A-Z]\.)?\d+(?:\.\d+)?:"), -1),
    "table_after": (re.compile(r"^Table (?:[A-Z]\.)?\d+(?:\.\d+)?:"), +1),
    "library": (re.compile(r"Value of \$[fl]\$ for|<i>Using "), -1),
    "pattern": (re.compile(r"<b>(Random Permutation|All to all)</b>"), -1),
    "subtable": (re.compile(r"^#### "), -1),
    "slides_columns": (re.compile(r"MPI Oxtool PUB"), -1),
    "slides_block": (re.compile(r"(aracari|argus) \d+ processors"), -1),
    "kang_op": (re.compile(r"^(Write|Read)\t"), -1),
}
LIBRARY_OF = {
    "OXTOOL": "oxtool",
    "OXTOL": "oxtool",
    "OXT OO": "oxtool",
    "MPISHMEM": "mpishmem",
    "MPIMPASS": "mpimpass",
    "PUB": "pub",
}
PRIMITIVE_OF = {"Get": "get", "HpGet": "hpget", "HpPut": "hpput", "Put": "put", "Send": "send"}
PATTERN_OF = {"Random Permutation": "permutation", "All to all": "alltoall"}
L_COLUMN = {"empty": 1, "shift": 2, "alltoall": 3}  # no communication, cyclic shift, all-to-all
G_COLUMN = {"g_inf": 2, "g": 2, "h_half": 3, "o": 4}  # linreg.g is the thesis' constant g, g_inf
F_ROW = {
    "f.dot_double_blas": "Dot product (double)",
    "f.matmul_double_blas": "Matrix product (double)",
    "f.dot_int_naive": "Dot product (int)",
    "f.matmul_int_ijk": "Matrix product (int)",
    "f_average.double": "Average (double)",
    "f_average.int": "Average (int)",
}


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def numeric_leaves(node: Any, prefix: str) -> dict[str, float]:
    if isinstance(node, bool):
        return {}
    if isinstance(node, (int, float)):
        return {prefix: float(node)}
    if isinstance(node, dict):
        out: dict[str, float] = {}
        for k, v in node.items():
            out.update(numeric_leaves(v, f"{prefix}.{k}" if prefix else k))
        return out
    return {}


def value_at(data: dict[str, Any], path: str) -> Any:
    node: Any = data
    for key in path.split("."):
        node = node[key]
    return node


def number(printed: str) -> float:
    m = NUMBER.search(printed)
    assert m, f"no number in {printed!r}"
    a, _, b = m.group(0).partition("/")
    return float(a) / float(b) if b else float(a)


def printed_interval(printed: str, conversion: str) -> tuple[float, float]:
    """What the printed number stands for (half a unit of its last digit either side; an
    integer's trailing zeros not significant), through the conversion."""
    s = NUMBER.search(printed).group(0).lstrip("-")  # type: ignore[union-attr]
    if "." in s:
        half = 0.5 * 10.0 ** -len(s.split(".")[1])
    else:
        half = 0.5 * 10.0 ** (len(s) - len(s.rstrip("0")))
    x = number(printed)
    ends = sorted(CONVERSIONS[conversion](v) for v in (x - half, x + half))
    return ends[0], ends[1]


def seeds_dir() -> Path | None:
    for d in (os.environ.get("BSPKIT_SEEDS_DIR"), REPO.parent / "shared" / "seeds", REPO / "shared" / "seeds"):
        if d and (Path(d) / DOCS["000"]).is_file():
            return Path(d)
    return None


@cache
def seed_lines(doc: str) -> list[str]:
    d = seeds_dir()
    assert d is not None
    return (d / DOCS[doc]).read_text(encoding="utf-8").split("\n")


def test_there_are_files_of_every_seed() -> None:
    names = [f.name for f in FILES]
    for prefix in ("thesis-skua-", "thesis-argus-", "thesis-aracari-", "gl-", "kang-", "hb-"):
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_reads_and_lacks_only_what_its_notes_explain(path: Path) -> None:
    data = load(path)
    params = read_params_file(path)
    assert params.format == 1 and is_hand_written(params)
    patterns = [pat for note in data["seed_notes"] for pat in note["about"]]
    assert all(isinstance(n["note"], str) and n["note"] for n in data["seed_notes"])
    for line in check_hand_written(params):
        key = line.split(":", 1)[0]
        assert any(fnmatch.fnmatchcase(key, pat) for pat in patterns), f"{path.name}: not explained: {line}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_value_cited_and_every_citation_a_value(path: Path) -> None:
    data = load(path)
    sources = data["sources"]
    leaves = {}
    for key, node in data.items():
        if key not in NOT_PARAMETERS:
            leaves.update(numeric_leaves(node, key))
    assert {"f", "l", "g"} & {k.split(".")[0] for k in leaves}
    assert sorted(set(leaves) - set(sources)) == [], "values without a citation"
    assert sorted(set(sources) - set(leaves)) == [], "citations without a value"
    for cite in sources.values():
        assert cite["doc"] in DOCS and cite["unit_conversion"] in CONVERSIONS
        assert cite["seed_unit"] and isinstance(cite["line"], int)


def check_printed(cite: dict[str, Any], where: str) -> str:
    """as_printed at the cited line (in its row and column, under its headers); returns the line."""
    lines = seed_lines(cite["doc"])
    n = cite["line"]
    line = lines[n - 1]
    printed = cite["as_printed"]
    if "split" in cite:
        fields = re.findall(cite["split"], line)
    else:
        fields = line.split("\t")
    for i, want in enumerate(cite.get("row", [])):
        assert want == "*" or fields[i].strip() == want, f"{where}: line {n} is not row {cite['row']}: {line!r}"
    if "column" in cite:
        assert fields[cite["column"]].strip() == printed, f"{where}: line {n} column {cite['column']}: {line!r}"
    else:
        assert re.search(r"(?<![\d.])" + re.escape(printed) + r"(?!\d)", line), f"{where}: {printed!r} not at line {n}"
    for head in cite.get("headers", []):
        pattern, step = HEADERS[head["kind"]]
        i = n - 1
        while 0 <= i < len(lines) and not pattern.search(lines[i]):
            i += step
        assert 0 <= i < len(lines) and head["text"] in lines[i], (
            f"{where}: {head} is not the {head['kind']} of line {n}"
        )
    return line


def header_line(cite: dict[str, Any], kind: str) -> str:
    lines = seed_lines(cite["doc"])
    pattern, step = HEADERS[kind]
    i = cite["line"] - 1
    while not pattern.search(lines[i]):
        i += step
    return lines[i]


def check_thesis_row(data: dict[str, Any], path: str, cite: dict[str, Any], file_lib: str) -> None:
    """A value of the thesis' Appendix C or Tables 4.2/5.3 comes from this file's machine,
    library, p, primitive and pattern."""
    host = data["machine"]["host"]
    if cite["table"].startswith("C."):
        assert header_line(cite, "table").rstrip().endswith(f"on {host}"), path
        printed_lib = header_line(cite, "library").split(" for ")[-1].replace("<i>Using ", "")
        assert LIBRARY_OF[re.sub(r"</?i>", "", printed_lib).strip()] == file_lib, path
    if path.startswith(("l.", "g.")):
        assert cite["row"][0] == str(data["p"]), path
    if path.startswith("l."):
        assert cite["column"] == L_COLUMN[path.split(".")[1]], path
    if path.startswith(("f.", "f_average.")):
        assert cite["row"] == [F_ROW[path]], path
    if (path.startswith("g.") and ".predict." in path) or path.endswith(".linreg.g"):
        assert cite["column"] == G_COLUMN[path.split(".")[-1]], path
    if path.startswith("g.") and path.endswith(".linreg.l"):  # the l after communication (sec. 3.3)
        assert "Latency" in header_line(cite, "table"), path
        assert cite["column"] == (3 if path.split(".")[1].endswith("/alltoall") else 2), path  # all-to-all, shift
    elif path.startswith("g."):
        primitive, _, pattern = path.split(".")[1].partition("/")
        assert PRIMITIVE_OF[cite["row"][1]] == primitive, path
        printed_pattern = re.search(r"<b>(.*?)</b>", header_line(cite, "pattern")).group(1)  # type: ignore[union-attr]
        assert PATTERN_OF[printed_pattern] == pattern, path
    if path.startswith("l_slides."):  # the slides' columns MPI, Oxtool, PUB; rows (low), (high), (all-to-all)
        assert header_line(cite, "slides_block").strip().endswith(f"{host} {data['p']} processors"), path
        assert cite["column"] == ["mpimpass", "oxtool", "pub"].index(file_lib), path
        mark = {"empty": "(low)", "shift": "(high)", "alltoall": "all)"}[path.split(".")[1]]
        assert mark in seed_lines(cite["doc"])[cite["line"] - 1], path
    if path.startswith("f_algorithm."):
        other = {"argus": "aracari", "aracari": "argus"}
        want = other[host] if path.endswith("_if_exchanged") else host
        assert cite["row"] == [want], path


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_second_reading_against_the_seeds(path: Path) -> None:
    if seeds_dir() is None:
        pytest.skip("the seeds' text is not here (BSPKIT_SEEDS_DIR, or shared/seeds beside the checkout)")
    data = load(path)
    file_lib = path.stem.split("-")[2] if path.stem.startswith("thesis-") else ""
    for key, cite in data["sources"].items():
        where = f"{path.name}: {key}"
        check_printed(cite, where)
        want = CONVERSIONS[cite["unit_conversion"]](number(cite["as_printed"]))
        got = value_at(data, key)
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=0.0), (
            f"{where}: {got} is not {cite['as_printed']!r} ({want})"
        )
        cross = cite.get("cross_check")
        if cross:
            check_printed({"doc": cite["doc"], **cross}, where + " (cross_check)")
            lo, hi = printed_interval(cite["as_printed"], cite["unit_conversion"])
            clo, chi = printed_interval(cross["as_printed"], cross["unit_conversion"])
            assert lo <= chi and clo <= hi, f"{where}: {cite['as_printed']!r} and {cross['as_printed']!r} disagree"
        if file_lib:  # a thesis file: its rows are its own
            check_thesis_row(data, key, cite, file_lib)


def test_the_second_reading_finds_a_mistyped_value() -> None:
    """The check fails on a value off in its last printed digit, and on a value filed under another p."""
    if seeds_dir() is None:
        pytest.skip("the seeds' text is not here")
    data = load(MACHINES / "thesis-skua-mpishmem-p4.json")
    cite = data["sources"]["g.get/permutation.predict.g_inf"]
    assert cite["as_printed"] == "0.01483 $\\mu s$" and data["g"]["get/permutation"]["predict"]["g_inf"] == 1.483e-8
    check_printed(cite, "as filed")
    with pytest.raises(AssertionError):
        check_printed({**cite, "as_printed": "0.01484 $\\mu s$"}, "mistyped")
    with pytest.raises(AssertionError):
        check_printed({**cite, "line": cite["line"] + 5}, "another row")
    with pytest.raises(AssertionError):
        check_thesis_row({**data, "p": 8}, "g.get/permutation.predict.g_inf", cite, "mpishmem")


def test_the_files_are_what_the_generator_writes(tmp_path: Path) -> None:
    """data/machines/*.json are make_seed_machines.py's output from the seeds (no hand edit
    left behind, no file of an older generator)."""
    seeds = seeds_dir()
    if seeds is None:
        pytest.skip("the seeds' text is not here")
    spec = importlib.util.spec_from_file_location("make_seed_machines", MACHINES / "make_seed_machines.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.write_all(seeds, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [p.name for p in FILES]
    for p in FILES:
        assert (tmp_path / p.name).read_text(encoding="utf-8") == p.read_text(encoding="utf-8"), p.name
