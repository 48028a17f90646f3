#!/usr/bin/env python3
"""Writes thesis-appendix-d-g.json: every row of the thesis' Tables D.1-G.3 (seed 000,
Appendices D-G: matrix multiplication, customized and static distribution; LLCS, standard and
bit-parallel), read from the seed's text, each cell with its line.

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
    "D": ("matmul-customized", "q", "g(h,h*)", "sec. 4.2 (eq. 4.5-4.8, 4.10), 4.3, 4.4"),
    "E": ("matmul-static", "q", "g(h,h*)", "sec. 4.2 (eq. 4.9, 4.10), 4.3, 4.5"),
    "F": ("llcs-standard", "alpha", "g(h)", "sec. 5.1 (eq. 5.2, 5.3), 5.3"),
    "G": ("llcs-bitparallel", "alpha", "g(h)", "sec. 5.2 (eq. 5.5), 5.4"),
}
TITLE = re.compile(r"^Table ([D-G])\.(\d): Efficiency and mean relative prediction error on (\w+)\s*$")
PROCESSORS = re.compile(r"^(?:<i>)?(\d+) processors(?:</i>)?\s*$")
NUMBER = r"(-|\d+(?:\.\d+)?)"
ROW = re.compile(r"^(\d+)" + (r"\t" + NUMBER) * 9 + r"\t*\s*$")
LIBRARIES = re.compile(r"^\$(?:q|\\alpha)\$\t(\w[\w-]*)\t+(\w[\w-]*)\t+(\w[\w-]*)\t*\s*$")


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
        if line.startswith("## Appendix") or line.startswith("# ") and "Appendix" in line:
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
                per_library[lib] = {"efficiency": eff, "error": {table["models"][0]: e1, table["models"][1]: e2}}
            table["rows"].append({"p": p, table["parameter"]: int(row.group(1)), "line": number, "libraries": per_library})
    return tables


def main() -> int:
    seeds = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "seeds"
    lines = (seeds / THESIS).read_text(encoding="utf-8").splitlines()
    tables = parse(lines)
    if len(tables) != 12 or any(not t["rows"] or not t["libraries"] for t in tables):
        print(f"make_seed_results: expected 12 tables with rows, found {[(t['table'], len(t['rows'])) for t in tables]}",
              file=sys.stderr)
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
    print(f"{path.name}: {len(tables)} tables, {sum(len(t['rows']) for t in tables)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
