"""`bspkit predict` as a user runs it (docs/prediction.md): on a parameter file written by
hand (docs/probe-format.md, "A parameter file written by hand"), its terminal table (a row
per p, the columns and units, values equal to T = W f + g H + l S computed here by hand), its
JSON (the same numbers as the table), and its errors (exit 2 for a usage error, 1 for a
failure: bspkit.console; one line naming the problem, no traceback). The library's
arithmetic itself: test_forecast.py."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from conftest import bspkit_in_process, run_bspkit

# A machine of 4 processes on a cluster (mpi: a core per process, so no time sharing), with
# numbers that keep every time of the inner product above the table's 1 ms resolution.
F_DOT = 1.0e-9  # s per flop of the dot product (inprod's kernel)
F_GEMM = 1.0e-10  # s per flop of dgemm (cannon's and LU's)
L_EMPTY = 2.0e-3  # s: a superstep without communication
G = 1.0e-2  # s per word, Bisseling's regression
L_LINREG = 5.0e-3  # s: the regression's l
HAND = {
    "format": 1,
    "p": 4,
    "source": "hand-written: test_predict_command.py",
    "machine": {"host": "testbox", "backend": "mpi", "cores": 4},
    "f": {"dot_double_naive": F_DOT, "matmul_double_blas": F_GEMM},
    "l": {"empty": L_EMPTY},
    "g": {"put/alltoall": {"linreg": {"g": G, "l": L_LINREG}}},
}
MODELS = ("g const", "g(h)", "g(h,h*)")
HEAD = ["p", *MODELS, "band 10-90%", "speedup", *(f"E {m}" for m in MODELS), "W", "H", "S", "fW", "gH", "lS"]

# 1.024e+12, 3E-05, 2e9: a number in e-notation, which no line for a reader may hold
E_NOTATION = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]*)?[eE][+-]?[0-9]+(?![\w.])")


@pytest.fixture
def hand_params(tmp_path: Path) -> Path:
    path = tmp_path / "hand-params.json"
    path.write_text(json.dumps(HAND))
    return path


def predict(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`bspkit predict ARGS` in this process; fails on a traceback or e-notation in what it
    prints for a reader (not in the JSON of --json -: a JSON number may be 1e-09)."""
    rc, out, err = bspkit_in_process(capsys, "predict", *args)
    json_out = "--json" in args and args[args.index("--json") + 1] == "-"
    for text in (err,) if json_out else (out, err):
        assert "Traceback" not in text, text
        assert not E_NOTATION.search(text), E_NOTATION.search(text)
    return rc, out, err


# ------------------------------------------------------------------- reading the table


def table_rows(out: str, problem: str) -> list[dict[str, str]]:
    """The rows under '<problem>:' as {column: cell}; fails unless its header is HEAD."""
    lines = out.splitlines()
    start = lines.index(problem + ":")
    # columns are two spaces apart at least ("g const" is one column)
    assert re.split(r"\s{2,}", lines[start + 1].strip()) == HEAD, lines[start + 1]
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or not line.startswith("  ") or line.startswith("  note:"):
            break
        cells = re.split(r"\s{2,}", line.strip())
        assert len(cells) == len(HEAD), line
        rows.append(dict(zip(HEAD, cells, strict=True)))
    return rows


PREFIX = {"": 1.0, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def seconds(cell: str) -> float | None:
    """'0.115 s' -> 0.115, '12,345 s' -> 12345.0, '-' -> None."""
    if cell == "-":
        return None
    m = re.fullmatch(r"([0-9][0-9,]*(?:\.[0-9]+)?) s", cell)
    assert m, f"not a time in seconds: {cell!r}"
    return float(m.group(1).replace(",", ""))


def counted(cell: str) -> float:
    """'200 M' -> 2e8, '500,004' -> 500004.0, '3' -> 3.0 (a count: never e-notation)."""
    m = re.fullmatch(r"([0-9][0-9,]*(?:\.[0-9]+)?)(?: ([MGTP]))?", cell)
    assert m, f"not a count: {cell!r}"
    return float(m.group(1).replace(",", "")) * PREFIX[m.group(2) or ""]


def percent(cell: str) -> float:
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)%", cell)
    assert m, f"not a percentage: {cell!r}"
    return float(m.group(1)) / 100


def shown_as(shown: float, value: float, digits: int = 4) -> bool:
    """Whether `shown` is `value` rounded to `digits` significant digits."""
    if value == 0:
        return shown == 0
    step = 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
    return abs(shown - value) <= step / 2 * 1.0001


# ------------------------------------------------------------- the inner product by hand


def inprod_by_hand(n: int, p: int) -> dict[str, float]:
    """T = W f + g H + l S for inprod (algorithms/inprod: local sums of 2 ceil(n/p) flops and a
    put of one partial sum to each other process in one superstep; then p flops to add
    them): the superstep costs g h + l of the regression, or the empty sync at p = 1 (h = 0)."""
    W = 2 * math.ceil(n / p) + p
    H = p - 1
    work = W * F_DOT
    comm = G * H + L_LINREG if H else L_EMPTY
    latency = min(1 * L_EMPTY, comm)  # l S, S = 1
    return {"W": W, "H": H, "S": 1, "work": work, "comm": comm, "latency": latency, "T": work + comm}


def test_inprod_table_and_json_equal_the_hand_computation(
    capsys: pytest.CaptureFixture[str], hand_params: Path, tmp_path: Path
) -> None:
    n, procs = 100_000_000, [1, 2, 4, 8]
    out_json = tmp_path / "pred.json"
    rc, out, err = predict(
        capsys, "inprod", "--size", str(n), "-n", "1,2,4,8", "--params", str(hand_params), "--json", str(out_json)
    )
    assert rc == 0, err
    first = out.splitlines()[0]
    assert first.startswith("inprod: predicted from its closed-form cost (nothing run); f = 1 ns/flop"), first
    assert f"predictions written to {out_json}" in out
    rows = table_rows(out, f"n = {n}")
    assert [int(r["p"]) for r in rows] == procs  # one row per p, in order
    one = inprod_by_hand(n, 1)
    data = json.loads(out_json.read_text())
    table = data["table"]
    assert [t["p"] for t in table] == procs
    for row, entry, p in zip(rows, table, procs, strict=True):
        hand = inprod_by_hand(n, p)
        # g const: every p; g(h) and g(h,h*) need a probe's per-h fits, which a hand-written
        # file has not: '-' wherever a superstep communicates (at p = 1 none does: l alone)
        assert shown_as(seconds(row["g const"]), hand["T"]), (p, row, hand)
        for m in ("g(h)", "g(h,h*)"):
            assert (seconds(row[m]) is None) == (p > 1), (p, m, row)
            if p == 1:
                assert shown_as(seconds(row[m]), hand["T"])
        assert row["band 10-90%"] == "no spread"  # a hand-written file says nothing of its spread
        assert shown_as(float(row["speedup"]), one["T"] / hand["T"], 3), row
        # the efficiency of each model: g const's here, none of the others where they predict none
        assert shown_as(percent(row["E g const"]), one["work"] / (p * hand["T"]), 3), row
        for m in ("g(h)", "g(h,h*)"):
            assert (row[f"E {m}"] == "-") == (p > 1), (p, m, row)
        assert shown_as(counted(row["W"]), hand["W"]) and counted(row["H"]) == hand["H"] and int(row["S"]) == 1, row
        bandwidth = hand["comm"] - hand["latency"]
        for col, part in (("fW", hand["work"]), ("gH", bandwidth), ("lS", hand["latency"])):
            assert abs(percent(row[col]) - part / hand["T"]) <= 0.005 + 1e-9, (p, col, row)

        # the JSON: the same numbers, unrounded
        assert entry["algorithm"] == "inprod" and entry["problem"] == {"n": n}
        # the most detailed model that predicts: at p = 1 (the empty sync alone) all three do
        assert entry["best_model"] == ("g(h,h*)" if p == 1 else "g const"), entry["best_model"]
        assert entry["models"]["g const"] == pytest.approx(hand["T"], rel=1e-12)
        assert entry["predicted_s"] == pytest.approx(hand["T"], rel=1e-12)
        assert (entry["models"]["g(h)"] is None) == (p > 1) and (entry["models"]["g(h,h*)"] is None) == (p > 1)
        assert (entry["W"], entry["H"], entry["S"]) == (hand["W"], hand["H"], 1)
        assert entry["work_unit"] == "flop" and entry["f_s_per_unit"] == F_DOT and entry["exact"] is True
        assert entry["parts_s"] == pytest.approx(
            {"work": hand["work"], "bandwidth": bandwidth, "latency": hand["latency"]}, rel=1e-12
        )
        assert entry["interval_s"] == pytest.approx([hand["T"], hand["T"]], rel=1e-12)
        assert entry["speedup"] == pytest.approx(one["T"] / hand["T"], rel=1e-12)
        assert entry["efficiency"] == pytest.approx(one["work"] / (p * hand["T"]), rel=1e-12)
        for m, t in entry["models"].items():
            e = entry["efficiencies"][m]
            assert (e is None) == (t is None) and (t is None or e == pytest.approx(one["work"] / (p * t), rel=1e-12))
        assert entry["machine"]["cores"] is None and entry["machine"]["time_sharing"] == 1.0
        assert entry["machine"]["source"].startswith("hand-written")
        # the JSON's numbers are what the table shows
        assert shown_as(seconds(row["g const"]), entry["models"]["g const"])
        assert shown_as(counted(row["W"]), entry["W"])

    # the target (the largest p) is the top level, the same object as its row of the table
    target = inprod_by_hand(n, 8)
    assert data["p"] == 8 and data["predicted_s"] == pytest.approx(target["T"], rel=1e-12)
    top_only = ("table", "warnings", "format", "bspkit_version", "model_choice", "speedup_base")
    assert {k: v for k, v in data.items() if k not in top_only} == table[-1]
    assert [s["kind"] for s in data["supersteps"]] == ["local sums, put", "add partial sums"]
    assert sum(s["W"] for s in data["supersteps"]) == target["W"]
    assert isinstance(data["warnings"], list)
    # at the target: where the time goes, and halving f, g and l
    assert f"at p = 8 (n = {n}): {row['g const']} under g const" in out
    for halve, part in (("f", target["work"]), ("g", target["comm"] - target["latency"]), ("l", target["latency"])):
        (what,) = [w for w in data["what_if"] if w["halve"].startswith(halve + " ")]
        assert what["predicted_s"] == pytest.approx(target["T"] - part / 2, rel=1e-12)


def test_the_json_says_its_format_and_the_bspkit_that_wrote_it(
    capsys: pytest.CaptureFixture[str], hand_params: Path
) -> None:
    from bspkit import __version__

    rc, out, err = predict(capsys, "inprod", "--size", "1000", "-n", "1,2", "--params", str(hand_params), "--json", "-")
    assert rc == 0, err
    data = json.loads(out)
    assert data["format"] == 1 and data["bspkit_version"] == __version__


def test_json_to_stdout_leaves_the_table_on_stderr(capsys: pytest.CaptureFixture[str], hand_params: Path) -> None:
    rc, out, err = predict(
        capsys, "inprod", "--size", "100000000", "-n", "1-3", "--params", str(hand_params), "--json", "-"
    )
    assert rc == 0, err
    data = json.loads(out)  # stdout: the JSON alone
    assert [t["p"] for t in data["table"]] == [1, 2, 3]
    rows = table_rows(err, "n = 100000000")
    assert [int(r["p"]) for r in rows] == [1, 2, 3]
    for row, entry in zip(rows, data["table"], strict=True):
        assert shown_as(seconds(row["g const"]), inprod_by_hand(100_000_000, entry["p"])["T"])


# (algorithm, extra options, -n, the rows' p): every algorithm family the closed forms cover
SWEEPS = [
    ("cannon-put", ("--size", "2000"), "1,4,16,...,64", [1, 4, 16, 64]),
    ("lu", ("--size", "1000"), "1-4", [1, 2, 3, 4]),
    ("rdxsort", ("--size", "1000000", "--f", "0.000002"), "1,2,4,...,32", [1, 2, 4, 8, 16, 32]),
    ("rdxsort", ("--size", "1000000", "--f", "0.000002"), "2,4", [2, 4]),  # its note where the first p is > 1
    ("llcs-dp", ("--size", "20000", "--f", "0.00000001"), "2,4,6,...,12", [2, 4, 6, 8, 10, 12]),
]


@pytest.mark.parametrize("alg, options, procs, expected", SWEEPS, ids=[f"{s[0]}-n{s[2]}" for s in SWEEPS])
def test_each_algorithm_a_row_per_p_the_table_agreeing_with_the_json(
    capsys: pytest.CaptureFixture[str],
    hand_params: Path,
    alg: str,
    options: tuple[str, ...],
    procs: str,
    expected: list[int],
) -> None:
    rc, out, err = predict(capsys, alg, *options, "-n", procs, "--params", str(hand_params), "--json", "-")
    assert rc == 0, err
    data = json.loads(out)
    table = data["table"]
    assert [t["p"] for t in table] == expected
    problems = [line[:-1] for line in err.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert len(problems) == 1 and problems[0].startswith(f"n = {options[1]}"), problems
    rows = table_rows(err, problems[0])
    assert [int(r["p"]) for r in rows] == expected
    for row, entry in zip(rows, table, strict=True):
        assert entry["algorithm"] == alg
        for m in MODELS:
            v = entry["models"][m]
            assert (seconds(row[m]) is None) == (v is None), (m, row, entry["models"])
            if v is not None and v >= 1e-3:
                assert shown_as(seconds(row[m]), v), (m, row, v)
        assert shown_as(counted(row["W"]), entry["W"]) and shown_as(counted(row["H"]), entry["H"] or 0)
        assert int(row["S"]) == entry["S"] and (entry["S"] >= 1 or entry["p"] == 1)
        # T = W f + communication: the parts add up to the total, the work is W f
        f = entry["f_s_per_unit"]
        assert entry["parts_s"]["work"] == pytest.approx(entry["W"] * f, rel=1e-12)
        assert sum(entry["parts_s"].values()) == pytest.approx(entry["predicted_s"], rel=1e-12)
        assert entry["parts_s"]["latency"] == pytest.approx(
            min(entry["S"] * L_EMPTY, entry["predicted_s"] - entry["W"] * f)
        )
    if "--f" in options:
        assert data["f_s_per_unit"] == float(options[options.index("--f") + 1])
        assert data["f_source"] == "--f on the command line"
    else:  # the key of the hand-written file, and the file, said as they are
        assert data["f_s_per_unit"] == F_GEMM
        assert data["f_source"] == f"f.matmul_double_blas of the hand-written parameter file {hand_params}"


def test_several_sizes_give_a_table_each_and_the_speedup_by_size(
    capsys: pytest.CaptureFixture[str], hand_params: Path
) -> None:
    rc, out, err = predict(capsys, "inprod", "--size", "100000000,200000000", "-n", "1,2", "--params", str(hand_params))
    assert rc == 0, err
    for n in (100_000_000, 200_000_000):
        rows = table_rows(out, f"n = {n}")
        assert [int(r["p"]) for r in rows] == [1, 2]
        for row in rows:
            assert shown_as(seconds(row["g const"]), inprod_by_hand(n, int(row["p"]))["T"])
    assert "speedup T(1)/T(p), best model, by problem and p:" in out
    assert "efficiency W f / (p T), best model, by problem and p:" in out


# ------------------------------------------------------------------------------ errors


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


ERRORS = [
    # (name, args after 'predict' ({params}: the good file, {tmp}: the test's directory), exit status, message)
    ("unknown algorithm", ["nosuch", "--params", "{params}"], 2, "unknown algorithm 'nosuch'; known: inprod"),
    ("no closed form", ["oocmm", "--params", "{params}"], 2, "oocmm has no closed-form cost; there is one for: inprod"),
    (
        "-n not a number",
        ["inprod", "-n", "1,2,x", "--params", "{params}"],
        2,
        "-n 1,2,x: 'x' is not a number of processes",
    ),
    ("-n zero", ["inprod", "-n", "0", "--params", "{params}"], 2, "-n 0: '0' is not a positive number of processes"),
    (
        "-n range backwards",
        ["inprod", "-n", "4-2", "--params", "{params}"],
        2,
        "-n 4-2: the range ends below its start",
    ),
    (
        "-n dots",
        ["inprod", "-n", "1,2,...", "--params", "{params}"],
        2,
        "-n 1,2,...: write at least two values before '...' and one after",
    ),
    (
        "missing params",
        ["inprod", "--params", "{tmp}/missing.json"],
        1,
        "cannot read {tmp}/missing.json: No such file or directory",
    ),
    ("garbled params", ["inprod", "--params", "{tmp}/garbled.json"], 1, "{tmp}/garbled.json: not JSON: "),
    (
        "params without l",
        ["inprod", "--params", "{tmp}/no-l.json"],
        1,
        "{tmp}/no-l.json lacks what a prediction needs:",
    ),
    (
        "size zero",
        ["inprod", "--size", "0", "--params", "{params}"],
        2,
        "--size 0: '0' is not a positive problem size",
    ),
    ("size not a number", ["inprod", "--size", "many", "--params", "{params}"], 2, "--size many: 'many' is not a"),
    (
        "size range backwards",
        ["inprod", "--size", "4000-1000", "--params", "{params}"],
        2,
        "--size 4000-1000: the range",
    ),
    (
        "size above the driver's",
        ["lu", "--size", "100000000000", "--params", "{params}"],
        1,
        "LU: n must be in 1..200000 (the driver's range), not 100000000000",
    ),
    (
        "no f for the kernel",
        ["llcs-dp", "--size", "1000", "--params", "{params}"],
        1,
        "the probe has no kernel like llcs-dp's (its unit: cell): give --f SECONDS_PER_CELL",
    ),
]


@pytest.mark.parametrize("name, args, status, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_exit_with_one_line_naming_the_problem(
    capsys: pytest.CaptureFixture[str],
    hand_params: Path,
    tmp_path: Path,
    name: str,
    args: list[str],
    status: int,
    message: str,
) -> None:
    write(tmp_path, "garbled.json", '{"format": 1, "p": ')
    write(tmp_path, "no-l.json", json.dumps({k: v for k, v in HAND.items() if k != "l"}))
    filled = [a.replace("{params}", str(hand_params)).replace("{tmp}", str(tmp_path)) for a in args]
    rc, out, err = predict(capsys, *filled)
    assert rc == status, (rc, out, err)
    assert out == ""
    lines = err.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("bspkit predict: error: ")]
    assert len(errors) == 1, err
    first = errors[0]
    if status == 2:  # a usage error: argparse's form, the usage and then the one line
        assert lines[0].startswith("usage: bspkit predict") and first == len(lines) - 1, err
    else:  # a failure: the line alone (a file that lacks keys lists them below it, indented)
        assert first == 0, err
        assert all(line.startswith("  ") for line in lines[1:]), err
    assert lines[first].removeprefix("bspkit predict: error: ").startswith(message.replace("{tmp}", str(tmp_path))), err
    if name == "params without l":
        assert lines[1:] == ["  l.empty: the seconds of a superstep without communication (the empty sync)"], err


def test_a_size_in_e_notation_is_echoed_as_written(capsys: pytest.CaptureFixture[str], hand_params: Path) -> None:
    rc, _, err = bspkit_in_process(capsys, "predict", "inprod", "--size", "1e99", "--params", str(hand_params))
    assert rc == 2
    assert "bspkit predict: error: --size 1e99: " in err and not E_NOTATION.search(err.replace("1e99", ""))


def test_the_installed_command_runs(hand_params: Path) -> None:
    """Once through a new process (the rest run in this one, cheaper): the same table."""
    r = run_bspkit("predict", "inprod", "--size", "100000000", "-n", "1,2", "--params", str(hand_params), timeout=60)
    assert r.returncode == 0, r.stderr
    rows = table_rows(r.stdout, "n = 100000000")
    assert [int(row["p"]) for row in rows] == [1, 2]
    assert shown_as(seconds(rows[1]["g const"]), inprod_by_hand(100_000_000, 2)["T"])
    assert "Traceback" not in r.stderr and not E_NOTATION.search(r.stdout + r.stderr)


def test_the_e_notation_pattern() -> None:
    """What the checks above look for: a number in e-notation, not a word or a version."""
    for text in ("W 1.024e+12 flops", "3E-05 s", "(2e9)", "1 - 1e-9 (McDiarmid)", "1.e5"):
        assert E_NOTATION.search(text), text
    for text in ("0.115 s", "1,024 T", "e-notation", "x86_64-linux", "v1.2e", "re5", "0.1.2e3"):
        assert not E_NOTATION.search(text), text


# --------------------------------------------------- predict as a reproduction tool (issue 40)


def test_size_takes_the_forms_of_n(capsys: pytest.CaptureFixture[str], hand_params: Path) -> None:
    """--size N: a list continued by its ratio or its step, and a range, parsed as -n is (one parser)."""
    forms = (
        ("1000,2000,...,8000", [1000, 2000, 4000, 8000]),
        ("1000,1500,...,3000", [1000, 1500, 2000, 2500, 3000]),
        ("1000-1002", [1000, 1001, 1002]),
    )
    for sizes, expected in forms:
        rc, out, err = predict(
            capsys, "inprod", "--size", sizes, "-n", "2", "--params", str(hand_params), "--json", "-"
        )
        assert rc == 0, err
        assert [t["problem"]["n"] for t in json.loads(out)["table"]] == expected


def test_only_the_p_asked_and_the_speedup_base_said(
    capsys: pytest.CaptureFixture[str], hand_params: Path, tmp_path: Path
) -> None:
    """Without 1 in -n, no row at p = 1 and no machine extrapolated to it: T(1) is W_1 f (inprod
    at p = 1 communicates nothing), and the terminal says so; with a file at p = 1 beside the
    file at p = 4, T(1) is the closed form at p = 1 on it."""
    n = 100_000_000
    rc, out, err = predict(capsys, "inprod", "--size", str(n), "-n", "4", "--params", str(hand_params), "--json", "-")
    assert rc == 0, err
    data = json.loads(out)
    assert [t["p"] for t in data["table"]] == [4] and data["warnings"] == []
    assert data["speedup_base"]["how"] == "work alone"
    work_1 = inprod_by_hand(n, 1)["work"]
    assert data["speedup_base_s"] == pytest.approx(work_1, rel=1e-12)
    assert data["speedup"] == pytest.approx(work_1 / inprod_by_hand(n, 4)["T"], rel=1e-12)
    assert "p = 1 is its base, not a row (not asked)" in err and "machine p = 1" not in err
    assert [int(r["p"]) for r in table_rows(err, f"n = {n}")] == [4]

    at_1 = tmp_path / "p1.json"
    at_1.write_text(json.dumps({**HAND, "p": 1, "l": {"empty": 3 * L_EMPTY}}))
    rc, out, err = predict(
        capsys,
        "inprod",
        "--size",
        str(n),
        "-n",
        "4",
        "--params",
        str(hand_params),
        "--params",
        str(at_1),
        "--json",
        "-",
    )
    assert rc == 0, err
    data = json.loads(out)
    assert [t["p"] for t in data["table"]] == [4] and data["speedup_base"]["how"] == "parameter file at p = 1"
    assert data["speedup_base_s"] == pytest.approx(work_1 + 3 * L_EMPTY, rel=1e-12)  # W f + l S, S = 1, h = 0


def test_a_file_needs_surfaces_only_for_the_primitives_used(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """matmul-blockcyclic fetches its blocks with hpget: a hand-written file with hpget surfaces
    alone predicts it; one with hpput alone is refused, the line naming hpget and the file."""
    surface = {"linreg": {"g": G, "l": L_LINREG}}
    only_hpget = write(tmp_path, "hpget.json", json.dumps({**HAND, "g": {"hpget/alltoall": surface}}))
    only_hpput = write(tmp_path, "hpput.json", json.dumps({**HAND, "g": {"hpput/alltoall": surface}}))
    args = ("matmul-blockcyclic", "--size", "200", "--values", "8", "-n", "4")
    rc, out, err = predict(capsys, *args, "--params", only_hpget, "--json", "-")
    assert rc == 0, err
    assert json.loads(out)["models"]["g const"] is not None
    rc, out, err = predict(capsys, *args, "--params", only_hpput)
    assert rc == 1 and out == ""
    lines = err.splitlines()
    assert lines[0] == f"bspkit predict: error: {only_hpput} lacks what a prediction needs:", err
    assert len(lines) == 2 and lines[1].startswith("  g: no surface for hpget, which the run communicates with"), err


def test_gl_speedup_beside_the_closed_forms(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--gl-speedup: G & L's formula (bspkit.model.gl_speedup, seed 002 line 212) at each p > 1
    with the sweep's f and the file's g of a put total exchange at h = 2 n^2 / p (g const: g h + l
    over h, l the empty sync where the regression has none); none at p = 1; a usage error for
    an algorithm that is not theirs."""
    from bspkit.model import gl_speedup as gl

    g, l_empty, n = 1.18e-6, 1e-3, 320
    hand = write(
        tmp_path,
        "gl.json",
        json.dumps({**HAND, "p": 16, "l": {"empty": l_empty}, "g": {"put/alltoall": {"linreg": {"g": g}}}}),
    )
    rc, out, err = predict(
        capsys,
        "cannon-put",
        "--size",
        str(n),
        "-n",
        "1,16",
        "--params",
        hand,
        "--f",
        "1.4e-8",
        "--gl-speedup",
        "--json",
        "-",
    )
    assert rc == 0, err
    data = json.loads(out)
    assert [t["gl_speedup"] for t in data["table"]][0] is None
    h = 2 * n * n / 16
    assert data["gl_speedup"]["h_words"] == h
    assert data["gl_speedup"]["speedup"] == pytest.approx(gl.speedup(16, n, 1.4e-8, g + l_empty / h), rel=1e-12)
    assert "Gerbessiotis & Lee's speedup p / (1 + sqrt(p) g / (f (n - 1)))" in err
    rc, _, err = predict(capsys, "inprod", "--params", hand, "--gl-speedup")
    assert rc == 2 and "--gl-speedup is Gerbessiotis & Lee's speedup of their MatMul and MatMulG" in err
