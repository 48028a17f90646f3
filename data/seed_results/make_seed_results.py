#!/usr/bin/env python3
"""Writes the seeds' tables of measured times, rates or speedups, read from the seeds' text,
each row with its line:

- thesis-appendix-d-g.json: every row of the thesis' Tables D.1-G.3 (seed 000, Appendices
  D-G: matrix multiplication, customized and static distribution; LLCS, standard and
  bit-parallel);
- others.json: Gerbessiotis & Lee's Table 1 (seed 002, Mult speedups) with their own
  predictions from the text, Horvitz & Bisseling's Table 1 (seed 004, LU rates), Kang et al.'s
  Table 7 (seed 003, FT.F's exchange, estimated and measured).

    python3 data/seed_results/make_seed_results.py [SEEDS_DIR]

SEEDS_DIR defaults to ../shared/seeds beside the repository. A row is the table's q (or
alpha) at one p, per library: the measured peak efficiency (%) and the thesis' mean relative
prediction errors (%) under its two models ("const g" and "g(h,h*)" in D and E, "const g" and
"g(h)" in F and G); "-" (not run) is null. tests/python/test_seed_results.py reads every value
again from the text.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

THESIS = "000_14b05ca3475ab75b.txt"
HERE = Path(__file__).resolve().parent

# Appendix letter -> (the algorithm as bspkit names the seed's, the table's parameter, the
# thesis' second model, where the thesis describes the experiment)
APPENDICES = {
    "D": (
        "matmul-customized",
        "q",
        "g(h,h*)",
        "sec. 4.2 (eq. 4.5-4.8, 4.10), 4.3, 4.4",
    ),
    "E": ("matmul-static", "q", "g(h,h*)", "sec. 4.2 (eq. 4.9, 4.10), 4.3, 4.5"),
    "F": ("llcs-standard", "alpha", "g(h)", "sec. 5.1 (eq. 5.2, 5.3), 5.3"),
    "G": ("llcs-bitparallel", "alpha", "g(h)", "sec. 5.2 (eq. 5.5), 5.4"),
}
TITLE = re.compile(
    r"^Table ([D-G])\.(\d): Efficiency and mean relative prediction error on (\w+)\s*$"
)
PROCESSORS = re.compile(r"^(?:<i>)?(\d+) processors(?:</i>)?\s*$")
NUMBER = r"(-|\d+(?:\.\d+)?)"
ROW = re.compile(r"^(\d+)" + (r"\t" + NUMBER) * 9 + r"\t*\s*$")
LIBRARIES = re.compile(
    r"^\$(?:q|\\alpha)\$\t(\w[\w-]*)\t+(\w[\w-]*)\t+(\w[\w-]*)\t*\s*$"
)


def cell(text: str) -> float | None:
    return None if text == "-" else float(text)


def parse(lines: list[str]) -> list[dict]:
    tables: list[dict] = []
    table: dict | None = None
    p: int | None = None
    for number, line in enumerate(lines, start=1):
        title = TITLE.match(line)
        if title:
            letter, index, machine = title.groups()
            algorithm, parameter, second, described = APPENDICES[letter]
            table = {
                "table": f"{letter}.{index}",
                "line": number,
                "machine": machine,
                "algorithm": algorithm,
                "parameter": parameter,
                "models": ["const g", second],
                "described_at": f"000 {described}",
                "libraries": None,
                "rows": [],
            }
            tables.append(table)
            p = None
            continue
        if table is None:
            continue
        if (
            line.startswith("## Appendix")
            or line.startswith("# ")
            and "Appendix" in line
        ):
            table = None
            continue
        libs = LIBRARIES.match(line)
        if libs and table["libraries"] is None:
            table["libraries"] = list(libs.groups())
            continue
        proc = PROCESSORS.match(line)
        if proc:
            p = int(proc.group(1))
            continue
        row = ROW.match(line)
        if row and p is not None:
            values = [cell(v) for v in row.groups()[1:]]
            per_library = {}
            for k, lib in enumerate(table["libraries"] or ["?", "?", "?"]):
                eff, e1, e2 = values[3 * k : 3 * k + 3]
                per_library[lib] = {
                    "efficiency": eff,
                    "error": {table["models"][0]: e1, table["models"][1]: e2},
                }
            table["rows"].append(
                {
                    "p": p,
                    table["parameter"]: int(row.group(1)),
                    "line": number,
                    "libraries": per_library,
                }
            )
    return tables


GL = "002_ed6c85674bf8f665.txt"
HB = "004_9153cb2414fc3490.txt"
KANG = "003_5048c8ad6359ff8c.txt"


def find(lines: list[str], text: str, start: int = 0) -> int:
    """The 0-based index of the first line from `start` that contains text."""
    for i in range(start, len(lines)):
        if text in lines[i]:
            return i
    raise ValueError(f"{text!r} not found")


def gl_table_1(lines: list[str]) -> dict:
    """G&L Table 1: speedups per configuration heading, n = 320 and 640, seven columns."""
    title = find(lines, "Matrix Multiplication in non-SMP and SMP configurations")
    columns = [
        "PUB put",
        "PUB get",
        "BSPlib put",
        "BSPlib get",
        "LAM put",
        "LAM get",
        "LAM send",
    ]
    blocks, heading = [], None
    for i in range(title + 1, title + 30):
        m = re.match(r"^Speedup for \$p = (\d+)\$ (non-SMP|SMP)", lines[i])
        if m:
            heading = {
                "p": int(m.group(1)),
                "heading": m.group(2),
                "line": i + 1,
                "rows": [],
            }
            blocks.append(heading)
            continue
        cells = lines[i].split("\t")
        if (
            heading
            and cells
            and re.fullmatch(r"\d+", cells[0].strip())
            and len(cells) >= 9
        ):
            values = [float(c) for c in cells[1:9]]
            heading["rows"].append(
                {
                    "n": int(cells[0]),
                    "line": i + 1,
                    "time_p1_s": values[0],
                    "speedup": dict(zip(columns, values[1:])),
                }
            )
        if lines[i].startswith("## "):
            break
    # The text (line of "actual speedup figures") gives the second block's put speedups, 10.33
    # and 5.17, as the non-SMP ones: its heading "p = 16 SMP" is a slip for non-SMP.
    said = find(lines, "the actual speedup figures are 10.33 and 5.17")
    for b in blocks:
        b["configuration"] = b["heading"]
    second = blocks[1]
    assert second["p"] == 16 and second["rows"][0]["speedup"]["BSPlib put"] == 10.33
    second["configuration"] = "non-SMP"
    second["slip"] = (
        f"printed 'p = 16 SMP' (line {second['line']}); line {said + 1} gives its put speedups "
        "10.33 and 5.17 as the non-SMP ones, and a later block is p = 16 SMP"
    )
    formula = find(lines, "this is  $p/(1 + \\sqrt{pg}/(f(n - 1)))$")
    return {
        "seed": GL,
        "table": "Table 1",
        "line": title + 1,
        "what": "speedup T(1) / T(p) of MatMul (put), MatMulG (get) and LAM's send/receive MatMul",
        "blocks": blocks,
        "own_prediction": {
            "line": formula + 1,
            "confirmed_at": said + 1,
            "formula": "p / (1 + sqrt(p) g / (f (n - 1))), f = 1/70 us per flop, g per double from Fig. 6 at h = 4 n^2/p ints",
            "p": 16,
            "n": 320,
            "predicted": {
                "non-SMP": {"BSPlib put": 8.0, "LAM put": 5.0},
                "SMP": {"BSPlib put": 6.0, "LAM put": 4.6},
            },
            "f_s_per_flop": 1e-6 / 70,
        },
    }


def hb_table_1(lines: list[str]) -> dict:
    title = find(lines, "Table 1: Computing rate in Gflop/s of LU decomposition")
    rows = []
    for i in range(title + 1, title + 25):
        cells = lines[i].split("\t")
        if cells and re.fullmatch(r"\d+", cells[0].strip()) and len(cells) >= 4:
            rows.append(
                {
                    "n": int(cells[0]),
                    "line": i + 1,
                    "gflops": dict(
                        zip(
                            ["BSPlib", "native BLACS", "MPI BLACS"],
                            map(float, cells[1:4]),
                        )
                    ),
                }
            )
    return {
        "seed": HB,
        "table": "Table 1",
        "line": title + 1,
        "grid": [8, 8],
        "nb": 32,
        "p": 64,
        "what": "computing rate (Gflop/s) of ScaLAPACK's LU on a Cray T3E, overall time",
        "rows": rows,
    }


def kang_table_7(lines: list[str]) -> dict:
    title = find(lines, "Table 7: Estimated and measured communication times (usec)")
    for i in range(title + 1, title + 8):
        nums = re.findall(r"\d+(?:\.\d+)?%?", lines[i])
        if len(nums) == 6:
            sp, t3e = nums[:3], nums[3:]
            steps_at = find(lines, "Step 1: 468")
            return {
                "seed": KANG,
                "table": "Table 7",
                "line": title + 1,
                "row_line": i + 1,
                "what": "FT.F's three-step boundary exchange: estimated (eq. 7) and measured time, us",
                "steps_elements": [468 * 2, 456 * 2, 6 * 2],
                "steps_line": steps_at + 1,
                "element_bytes": {"SP": 4, "T3E": 8},
                "machines": {
                    "SP": {
                        "estimated_us": float(sp[0]),
                        "measured_us": float(sp[1]),
                        "error_pct": float(sp[2][:-1]),
                    },
                    "T3E": {
                        "estimated_us": float(t3e[0]),
                        "measured_us": float(t3e[1]),
                        "error_pct": float(t3e[2][:-1]),
                    },
                },
            }
    raise ValueError("Kang et al.'s Table 7 row not found")


def main() -> int:
    seeds = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "seeds"
    )
    lines = (seeds / THESIS).read_text(encoding="utf-8").splitlines()
    tables = parse(lines)
    if len(tables) != 12 or any(not t["rows"] or not t["libraries"] for t in tables):
        print(
            f"make_seed_results: expected 12 tables with rows, found {[(t['table'], len(t['rows'])) for t in tables]}",
            file=sys.stderr,
        )
        return 1
    out = {
        "seed": THESIS,
        "source": "P. Krusche, 'Experimental evaluation of BSP programming libraries', MSc thesis, Warwick: "
        "Appendices D-G, 'Efficiency and mean relative prediction error'",
        "efficiency": "peak efficiency (%) over the matrix sizes or string lengths run: eq. 4.12, "
        "E = W_seq / (T(p) p) / F, W_seq = n^3 (matmul) or n^2 (LLCS), F of Table 4.2 or 5.3 (sec. 4.3, line 842)",
        "error": "mean relative prediction error (%) of the thesis' own prediction, over the sizes run",
        "tables": tables,
    }
    path = HERE / "thesis-appendix-d-g.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(
        f"{path.name}: {len(tables)} tables, {sum(len(t['rows']) for t in tables)} rows"
    )

    def text(name: str) -> list[str]:
        return (seeds / name).read_text(encoding="utf-8").splitlines()

    others = {
        "gl-table-1": gl_table_1(text(GL)),
        "hb-table-1": hb_table_1(text(HB)),
        "kang-table-7": kang_table_7(text(KANG)),
    }
    path = HERE / "others.json"
    path.write_text(json.dumps(others, indent=1) + "\n", encoding="utf-8")
    print(f"{path.name}: {', '.join(others)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
