"""Writes data/machines/*.json: the seeds' machines as hand-written parameter files
(docs/probe-format.md, "A parameter file written by hand"), every value with its citation.

    python3 data/machines/make_seed_machines.py [SEEDS_DIR]

SEEDS_DIR defaults to ../shared/seeds beside the repository. The tables are read from the
seeds' text (line numbers and printed values as they are there); what cannot be read from a
table (the machines' descriptions, the prose values of 002 and 004) is written out below with
the line it comes from. tests/python/test_seed_machines.py reads every cited value again from
the seeds, so a value mistyped here or a table misread fails there. Standard library only."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
THESIS = "000_14b05ca3475ab75b.txt"
SLIDES = "001_3a09dc6e24739fbe.txt"
GL = "002_ed6c85674bf8f665.txt"
KANG = "003_5048c8ad6359ff8c.txt"
HB = "004_9153cb2414fc3490.txt"

# ------------------------------------------------------------------ units as the seeds give them

G_UNIT = "µs per word of 8 bytes (a double) sent by each process"
H_UNIT = "words of 8 bytes per superstep (bspkit's h_half alike)"
O_UNIT = "words of 8 bytes per message (bspkit's o alike)"
L_UNIT = "µs per superstep"
F_UNIT_C = "µs per operation ('time per flop')"
RATE_UNIT_C = "M operations per second ('Flops' 1/f)"


G_CONST_ROLE = (
    "linreg.g is the thesis' constant g, which is the table's g_inf (sec. 4.3: 'the values corresponding to "
    "all-to-all exchanges using the HpGet primitive were used for the parameters g, h_half, o and l'; sec. 5.3 "
    "likewise for put on random permutations): not a Bisseling regression"
)
L_CONST_ROLE = {
    "alltoall": "linreg.l is the l after an all-to-all: the thesis charges an l measured with communication under constant g (sec. 3.3)",
    "shift": (
        "linreg.l is the l after a cyclic shift: the thesis charges an l measured with communication under constant g "
        "(sec. 3.3) and names 'l ... measured for conducting random permutations' for LLCS (sec. 5.3); Appendix C "
        "has no l after a permutation, the shift is the nearest"
    ),
}


def unit_note(lines: list[str]) -> str:
    """Where the thesis says its units (line numbers found in the text, not typed)."""
    at = lambda text: find_line(lines, text)  # noqa: E731
    return (
        "units (thesis): g_inf in µs per 8-byte word: 'All message sizes will be given in units of double values' "
        f"(line {at('All message sizes will be given')}), 'units of 8-byte double values are transmitted' (line "
        f"{at('units of 8-byte double values')}), 'g was measured in 64-bit double/s' (line {at('64-bit double/s')}); "
        f"Appendix B.1 takes g = T / (h* c) (line {at('T_{sampled}/(h')}), per word each process sends; h_half "
        "and o in the same words; l in µs; f in µs per operation, which Appendix A calls 'the time per flop' "
        f"(line {at('time per flop')}), double kernels through BLAS, integer ones the Oxford bspprobe's loops "
        f"(line {at('our measurement functions use BLAS')}); whether a multiply-add is one flop or two there is not "
        "stated (bspkit's probe counts two). Every value converted to seconds, words stay words"
    )


# bspkit's kernel for each row of Tables C.1/C.4/C.7 (the thesis: BLAS for double, bspprobe's loops for int)
F_ROWS = {
    "Dot product (double)": ("f", "dot_double_blas"),
    "Matrix product (double)": ("f", "matmul_double_blas"),
    "Dot product (int)": ("f", "dot_int_naive"),
    "Matrix product (int)": ("f", "matmul_int_ijk"),
    "Average (double)": ("f_average", "double"),
    "Average (int)": ("f_average", "int"),
}
F_KERNEL_UNIT = {
    "dot_double_blas": "s per flop as the thesis' benchmark counts it (dot product through BLAS, Table C.x 'Dot product (double)')",
    "matmul_double_blas": "s per flop as the thesis' benchmark counts it (dgemm, Table C.x 'Matrix product (double)'); NOT the n^3 unit of Table 4.2: see f_algorithm.matmul",
    "dot_int_naive": "s per integer operation (the Oxford bspprobe's dot product loop, Table C.x 'Dot product (int)')",
    "matmul_int_ijk": "s per integer operation (the Oxford bspprobe's IJK loop, Table C.x 'Matrix product (int)')",
}
LIBS = {  # the seed's spellings (OCR included) -> ours
    "OXT OO": "oxtool",
    "OXTOL": "oxtool",
    "OXTOOL": "oxtool",
    "MPISHMEM": "mpishmem",
    "MPIMPASS": "mpimpass",
    "PUB": "pub",
}
PRIMS = {"Get": "get", "HpGet": "hpget", "HpPut": "hpput", "Put": "put", "Send": "send"}
PATTERNS = {"Random Permutation": "permutation", "All to all": "alltoall"}
L_COLUMNS = (
    ("empty", 1, "no communication"),
    ("shift", 2, "cyclic shift"),
    ("alltoall", 3, "all-to-all"),
)

MACHINES = {
    "skua": {
        "host": "skua",
        "cpu": "Intel Itanium-2 1.6 GHz (SGI Altix shared-memory machine, 56 nodes, 112 GB)",
        "network": "shared memory (SGI Altix)",
        "described_at": "000 line 389 (sec. 2.4), Table 2.2 line 402-406",
    },
    "argus": {
        "host": "argus",
        "cpu": "Intel Pentium 4 Xeon 2.6 GHz (Linux cluster, 31 x 2-way SMP nodes, 2 GB per node, 62 GB)",
        "network": "100 Mbit Ethernet (MPI: mpich-p4 1.2.5)",
        "described_at": "000 line 389 (sec. 2.4), line 412 and 421 (mpich 1.2.5, mpich-p4); slides 001 line 276-280",
    },
    "aracari": {
        "host": "aracari",
        "cpu": "Intel Pentium 3 1.4 GHz (IBM cluster, 64 x 2-way SMP nodes, 2 GB per node, 128 GB)",
        "network": "Myrinet (slides: Myrinet 2000; MPI: mpich-gm 1.2.5-10 on gm 1.6.4)",
        "described_at": "000 line 389 (sec. 2.4), line 421; slides 001 line 266-275",
    },
}
LIBRARY = {  # (machine, lib) -> library and the interface it ran on (Table 2.2, 000 line 402-406)
    ("skua", "oxtool"): (
        "Oxford BSP Toolset (Oxtool) via BSPWrapper",
        "MPI-1 (SGI's shared-memory MPI)",
    ),
    ("skua", "mpishmem"): ("BSPWrapper MPISHMEM (MPI-2 Put/Get)", "MPI-2"),
    ("skua", "pub"): ("PUB via BSPWrapper (adapted shared-memory device)", "shmem"),
    ("argus", "oxtool"): (
        "Oxford BSP Toolset (Oxtool) via BSPWrapper",
        "MPI-1 (mpich-p4 1.2.5)",
    ),
    ("argus", "pub"): ("PUB via BSPWrapper", "MPI-1 (mpich-p4 1.2.5)"),
    ("argus", "mpimpass"): (
        "BSPWrapper MPIMPASS (Isend/Recv, emulated DRMA)",
        "MPI-1 (mpich-p4 1.2.5)",
    ),
    ("aracari", "oxtool"): (
        "Oxford BSP Toolset (Oxtool) via BSPWrapper",
        "MPI-1 (mpich-gm)",
    ),
    ("aracari", "pub"): ("PUB via BSPWrapper", "MPI-1 (mpich-gm)"),
    ("aracari", "mpimpass"): (
        "BSPWrapper MPIMPASS (Isend/Recv, emulated DRMA)",
        "MPI-1 (mpich-gm)",
    ),
}

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:/\d+)?")


def lines_of(seeds: Path, name: str) -> list[str]:
    return (seeds / name).read_text(encoding="utf-8").split("\n")


def find_line(lines: list[str], text: str, start: int = 0) -> int:
    """The 1-based number of the first line from `start` (1-based) that contains `text`."""
    for i in range(max(start - 1, 0), len(lines)):
        if text in lines[i]:
            return i + 1
    raise ValueError(f"not found: {text!r}")


def number(printed: str) -> float:
    tok = NUMBER.search(printed)
    if tok is None:
        raise ValueError(printed)
    s = tok.group(0)
    if "/" in s:
        a, b = s.split("/")
        return float(a) / float(b)
    return float(s)


def half_unit_rel(printed: str) -> float:
    """Half a unit of the printed number's last significant digit, relative to it (an integer's
    trailing zeros not significant)."""
    s = NUMBER.search(printed).group(0).lstrip("-")  # type: ignore[union-attr]
    if "." in s:
        unit = 10.0 ** -len(s.split(".")[1])
    else:
        unit = 10.0 ** (len(s) - len(s.rstrip("0"))) if s.rstrip("0") else 1.0
    return 0.5 * unit / abs(number(s))


# the conversions (name -> function of the printed number); the test has the same table
CONVERT = {
    "us->s": lambda x: x * 1e-6,
    "ms->s": lambda x: x * 1e-3,
    "ns->s": lambda x: x * 1e-9,
    "words->words": lambda x: x,
    "M/s->s": lambda x: 1.0 / (x * 1e6),
    "G/s->s": lambda x: 1.0 / (x * 1e9),
    "ns per n^3 op->s per flop": lambda x: x * 1e-9 / 2.0,
    "G n^3 op/s->s per flop": lambda x: 1.0 / (x * 1e9) / 2.0,
    "M n^3 op/s->s per flop": lambda x: 1.0 / (x * 1e6) / 2.0,
    "us printed as ns->s": lambda x: x * 1e-6,
    "us per int->s per word": lambda x: x * 1e-6 * 2.0,
    "MB/s->s per byte": lambda x: 1.0 / (x * 1e6),
    "MB/s->s per word": lambda x: 8.0 / (x * 1e6),
    "flop units at 250 Mflop/s->s": lambda x: x / 250e6,
}


class File:
    """One parameter file being written: its JSON and its sources."""

    def __init__(self, name: str, head: dict[str, Any]) -> None:
        self.name = name
        self.data: dict[str, Any] = {"format": 1, **head}
        self.sources: dict[str, Any] = {}
        self.notes: list[dict[str, Any]] = []

    def put(self, path: str, cite: dict[str, Any]) -> float:
        """Sets the value at `path` (dot-separated) from the citation's printed value."""
        value = float(f"{CONVERT[cite['unit_conversion']](number(cite['as_printed'])):.12g}") + 0.0  # -0 -> 0
        node = self.data
        *parents, leaf = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
        self.sources[path] = cite
        return value

    def note(self, about: list[str], text: str) -> None:
        self.notes.append({"about": about, "note": text})

    def write(self, folder: Path) -> None:
        out = {**self.data, "seed_notes": self.notes}
        head = json.dumps(out, indent=1, ensure_ascii=False)[: -len("\n}")]
        cites = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in self.sources.items())
        text = f'{head},\n "sources": {{\n{cites}\n }}\n}}\n'  # a citation a line
        json.loads(text)
        (folder / self.name).write_text(text, encoding="utf-8")


def pick(primary: dict[str, Any], other: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Of two printed forms of one value (f and 1/f), the one printed more precisely first."""
    if half_unit_rel(other["as_printed"]) < half_unit_rel(primary["as_printed"]):
        return other, primary
    return primary, other


# ------------------------------------------------------------------ the thesis' Appendix C


def read_appendix_c(lines: list[str]) -> dict[str, Any]:
    """{machine: {"f": {lib: {row: (cite f, cite 1/f)}}, "l": {lib: {p: {variant: cite}}},
    "g": {lib: {p: {key: {name: cite}}}}} from Tables C.1-C.9."""
    start = find_line(lines, "# Appendix C")
    end = find_line(lines, "## Appendix D", start)
    out: dict[str, Any] = {}
    machine = table = kind = lib = lib_printed = pattern = None
    for n in range(start, end):
        line = lines[n - 1]
        m = re.search(r"Results on .*\((skua|argus|aracari)\)", line)
        if m:
            machine = m.group(1)
            out.setdefault(machine, {"f": {}, "l": {}, "g": {}})
            continue
        m = re.match(r"Table (C\.\d+): (Computation speed|Latency|Bandwidth gap)", line)
        if m:
            table, kind = (
                m.group(1),
                {"Computation speed": "f", "Latency": "l", "Bandwidth gap": "g"}[m.group(2)],
            )
            lib = pattern = None
            continue
        m = re.search(r"Value of \$[fl]\$ for (.*?)\s*$", line) or re.search(r"<i>Using ([A-Z]+)</i>", line)
        if m:
            lib_printed = m.group(1)  # as printed ("<i>OXT</i> OO", "MPIMPASS"): the test finds it so
            lib = re.sub(r"</?i>", "", lib_printed)
            continue
        m = re.search(r"<b>(Random Permutation|All to all)</b>", line)
        if m:
            pattern = m.group(1)
            continue
        fields = line.split("\t")
        if kind is None or lib is None or machine is None:
            continue
        ours = LIBS[lib]
        headers = [
            {"kind": "table", "text": f"Table {table}:"},
            {"kind": "library", "text": lib_printed},
        ]
        base = {"doc": "000", "table": table, "line": n}
        if kind == "f" and fields[0] in F_ROWS:
            f_cite = {
                **base,
                "row": [fields[0]],
                "column": 1,
                "as_printed": fields[1].strip(),
                "seed_unit": F_UNIT_C,
                "unit_conversion": "us->s",
                "headers": headers,
            }
            r_cite = {
                **base,
                "row": [fields[0]],
                "column": 2,
                "as_printed": fields[2].strip(),
                "seed_unit": RATE_UNIT_C,
                "unit_conversion": "M/s->s",
                "headers": headers,
            }
            out[machine]["f"].setdefault(ours, {})[fields[0]] = (f_cite, r_cite)
        elif kind == "l" and re.fullmatch(r"\d+", fields[0]):
            p = int(fields[0])
            for variant, col, what in L_COLUMNS:
                out[machine]["l"].setdefault(ours, {}).setdefault(p, {})[variant] = {
                    **base,
                    "row": [fields[0]],
                    "column": col,
                    "column_name": what,
                    "as_printed": fields[col].strip(),
                    "seed_unit": L_UNIT,
                    "unit_conversion": "us->s",
                    "headers": headers,
                }
        elif kind == "g" and re.fullmatch(r"\d+", fields[0]) and len(fields) >= 5:
            p = int(fields[0])
            key = f"{PRIMS[fields[1]]}/{PATTERNS[pattern]}"  # type: ignore[index]
            hs = [*headers, {"kind": "pattern", "text": pattern}]
            cites = {}
            for name, col, unit, conv in (
                ("g_inf", 2, G_UNIT, "us->s"),
                ("h_half", 3, H_UNIT, "words->words"),
                ("o", 4, O_UNIT, "words->words"),
            ):
                cites[name] = {
                    **base,
                    "row": fields[:2],
                    "column": col,
                    "as_printed": fields[col].strip(),
                    "seed_unit": unit,
                    "unit_conversion": conv,
                    "headers": hs,
                }
            out[machine]["g"].setdefault(ours, {}).setdefault(p, {})[key] = cites
    return out


def algorithm_rates(lines: list[str]) -> dict[str, dict[str, Any]]:
    """Tables 4.2 and 5.3, per machine: {machine: {"matmul": (cite, cross), "llcs-dp": ..., "llcs-bitpar": ...}}."""
    out: dict[str, dict[str, Any]] = {m: {} for m in MACHINES}
    t42 = find_line(lines, "Table 4.2: Matrix multiplication")
    for n in range(t42 - 5, t42):
        fields = lines[n - 1].split("\t")
        if fields[0] in MACHINES:
            head = [{"kind": "table_after", "text": "Table 4.2:"}]
            f_cite = {
                "doc": "000",
                "table": "4.2",
                "line": n,
                "row": [fields[0]],
                "column": 1,
                "as_printed": fields[1],
                "seed_unit": "ns per 'flop', one operation per multiply-add: W = n^3 / q per block (eq. 4.5), E = n^3 / (T p) / F (eq. 4.12), F = n^3 / T (sec. 4.4)",
                "unit_conversion": "ns per n^3 op->s per flop",
                "headers": head,
            }
            r_text = fields[2]
            r_cite = {
                **f_cite,
                "column": 2,
                "as_printed": r_text,
                "seed_unit": "G or M 'flop/s', one operation per multiply-add (n^3)",
                "unit_conversion": "G n^3 op/s->s per flop" if " G " in f" {r_text} " else "M n^3 op/s->s per flop",
            }
            out[fields[0]]["matmul"] = pick(f_cite, r_cite)
    t53 = find_line(lines, "Table 5.3: Experimental values of")
    section = None
    for n in range(t53 - 14, t53):
        line = lines[n - 1]
        if "Simple Algorithm" in line:
            section = "llcs-dp"
        elif "Bit-Parallel Algorithm" in line:
            section = "llcs-bitpar"
        fields = line.split("\t")
        if fields[0] in MACHINES and section:
            head = [
                {"kind": "table_after", "text": "Table 5.3:"},
                {
                    "kind": "subtable",
                    "text": "Simple Algorithm" if section == "llcs-dp" else "Bit-Parallel Algorithm",
                },
            ]
            rate = {
                "doc": "000",
                "table": "5.3",
                "line": n,
                "row": [fields[0]],
                "column": 2,
                "as_printed": fields[2],
                "seed_unit": (
                    "M or G operations per second, an operation being one cell of the dynamic programming "
                    "table (a character comparison; 'char-op/s' in Table 5.4)"
                ),
                "unit_conversion": "G/s->s" if " G " in f" {fields[2]} " else "M/s->s",
                "headers": head,
            }
            printed_f = {
                **rate,
                "column": 1,
                "as_printed": fields[1],
                "seed_unit": "printed 'ns/op', but only µs/op agrees with the rate column (0.008 µs = 1 / 125 M): a unit slip",
                "unit_conversion": "us printed as ns->s",
            }
            out[fields[0]][section] = (rate, printed_f)  # the rate: its printed unit is the right one
    return out


def slides_latency(
    lines: list[str],
) -> dict[tuple[str, int], dict[str, dict[str, Any]]]:
    """The slides' latency table (001 line ~695): {(machine, p): {lib: {variant: cite}}}."""
    out: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    head_line = find_line(lines, "MPI Oxtool PUB")
    block = None
    for n in range(head_line + 1, head_line + 14):
        line = lines[n - 1]
        m = re.search(r"(aracari|argus) (\d+) processors", line)
        if m:
            block = (m.group(1), int(m.group(2)))
            continue
        variant = (
            "empty" if "(low)" in line else "shift" if "(high)" in line else "alltoall" if "all)" in line else None
        )
        if variant is None or block is None:
            continue
        values = re.findall(r"\d+ s\b", line)
        for col, lib in enumerate(("mpimpass", "oxtool", "pub")):
            out.setdefault(block, {}).setdefault(lib, {})[variant] = {
                "doc": "001",
                "table": "slide 'Latency'",
                "line": n,
                "split": r"\d+ s\b",
                "column": col,
                "as_printed": values[col],
                "seed_unit": "µs (the slides' text lost the µ: 's'; the magnitudes are those of Tables C.5/C.8)",
                "unit_conversion": "us->s",
                "headers": [
                    {"kind": "slides_columns", "text": "MPI Oxtool PUB"},
                    {
                        "kind": "slides_block",
                        "text": f"{block[0]} {block[1]} processors",
                    },
                ],
            }
    return out


def thesis_files(seeds: Path) -> list[File]:
    lines = lines_of(seeds, THESIS)
    c = read_appendix_c(lines)
    rates = algorithm_rates(lines)
    slides = slides_latency(lines_of(seeds, SLIDES))
    units = unit_note(lines)
    files = []
    for machine, tables in c.items():
        for lib, by_p in tables["l"].items():
            library, backend = LIBRARY[(machine, lib)]
            for p in sorted(by_p):
                f = File(
                    f"thesis-{machine}-{lib}-p{p}.json",
                    {
                        "p": p,
                        "source": (
                            "hand-written from seed 000 (P. Krusche, 'Experimental evaluation of BSP programming "
                            f"libraries', MSc thesis, Warwick): Appendix C (f, l, g of {machine}), Tables 4.2 and 5.3"
                        ),
                        "machine": {
                            **{k: v for k, v in MACHINES[machine].items() if k != "described_at"},
                            "library": library,
                            "backend": backend,
                            "seed": "000",
                            "described_at": MACHINES[machine]["described_at"],
                        },
                    },
                )
                f.data["f"] = {}
                f.data["f_unit"] = {}
                for row, (kind, key) in F_ROWS.items():
                    cite, cross = pick(*tables["f"][lib][row])
                    f.put(f"{kind}.{key}", {**cite, "cross_check": cross})
                    if kind == "f":
                        f.data["f_unit"][key] = F_KERNEL_UNIT[key]
                f.data["f_average_unit"] = (
                    "s per operation: 1 / the mean of the two kernels' rates (Table C.x 'Average', as bspkit's f_average)"
                )
                for variant, cite in by_p[p].items():
                    f.put(f"l.{variant}", cite)
                for key, cites in sorted(tables["g"][lib].get(p, {}).items()):
                    f.data.setdefault("g", {})[key] = {
                        "linreg": {},
                        "predict": {"model": "2.6 eq. 3.2-3.6"},
                    }
                    # the thesis' constant g: g_inf, with the l measured after communication (sec. 3.3)
                    f.put(f"g.{key}.linreg.g", {**cites["g_inf"], "role": G_CONST_ROLE})
                    l_variant = "alltoall" if key.endswith("/alltoall") else "shift"
                    f.put(
                        f"g.{key}.linreg.l",
                        {**by_p[p][l_variant], "role": L_CONST_ROLE[l_variant]},
                    )
                    for name, cite in cites.items():
                        f.put(f"g.{key}.predict.{name}", cite)
                        if cite["as_printed"] == "-0":
                            f.note(
                                [f"g.{key}.predict.{name}"],
                                f"{key} {name} is printed '-0' (line {cite['line']}): a small negative estimate "
                                "rounded; written 0 (bspkit's fit would write a negative o as null with a flag, "
                                "but predict needs a number)",
                            )
                alg = f.data["f_algorithm"] = {}
                for name, work in (
                    (
                        "matmul",
                        "flop (bspkit: 2 per multiply-add; the thesis' W = n^3 counts 1, so Table 4.2's value is halved)",
                    ),
                    (
                        "llcs-dp",
                        "cell of the dynamic programming table (bspkit's and the thesis' unit alike)",
                    ),
                    (
                        "llcs-bitpar",
                        "cell (the thesis' f' per character operation of eq. 5.5; bspkit's unit for llcs-bitpar)",
                    ),
                ):
                    cite, cross = rates[machine][name]
                    alg[name] = {"work_unit": work}
                    v = f.put(f"f_algorithm.{name}.s_per_unit", {**cite, "cross_check": cross})
                    alg[name]["use"] = (
                        f"bspkit predict {name if name != 'matmul' else 'matmul-blockcyclic'} --f {v:.6g}"
                    )
                if machine in ("argus", "aracari"):
                    other = "aracari" if machine == "argus" else "argus"
                    cite, cross = rates[other]["llcs-dp"]
                    f.put(
                        "f_algorithm.llcs-dp.s_per_unit_if_exchanged",
                        {**cite, "cross_check": cross},
                    )
                    f.note(
                        ["f_algorithm.llcs-dp"],
                        "Table 5.3's standard-algorithm rates of argus and aracari look exchanged (data/machines/README.md, "
                        "'The Table 5.3 slip'): s_per_unit is as printed for this machine, s_per_unit_if_exchanged the "
                        f"rate printed for {other}, which Appendix F's efficiencies imply for {machine}",
                    )
                sl = slides.get((machine, p), {}).get(lib)
                if sl:
                    for variant, cite in sl.items():
                        f.put(f"l_slides.{variant}", cite)
                    f.note(
                        ["l_slides"],
                        "the slides (001) give another measurement of l for this machine, library and p; Table "
                        f"{c_table(machine, 'l')} is the one used in `l`",
                    )
                f.note(["g.*", "l", "f", "f_average"], units)
                thesis_notes(f, machine, lib, p, tables)
                files.append(f)
    return files


def c_table(machine: str, kind: str) -> str:
    base = {"skua": 1, "argus": 4, "aracari": 7}[machine]
    return f"C.{base + {'f': 0, 'l': 1, 'g': 2}[kind]}"


def thesis_notes(f: File, machine: str, lib: str, p: int, tables: dict[str, Any]) -> None:
    f.note(
        ["g.*"],
        "the thesis gives per surface only eq. (2.6)'s weighted estimators g_inf, h_half, o (eq. 3.2-3.6, "
        "Appendix B.1) and the squared errors eps_BSP*, eps_BSP (left out: their unit is not stated); no "
        "Bisseling regression and no per-h levels. `linreg` holds the thesis' constant-g parameters instead "
        "(g = g_inf, l after an all-to-all for an all-to-all surface, after a cyclic shift for a permutation "
        "surface; sec. 3.3, line 709), so bspkit's 'g const' is the thesis' constant-g model for a communicating "
        "superstep; 'g(h)' and 'g(h,h*)' use `predict` (no levels). A superstep without communication costs "
        "l.empty in bspkit, the thesis charges it the l after communication too (bspkit's 'thesis g const' model)",
    )
    f.note(
        ["l"],
        "which l the thesis charges per superstep (sec. 3.3, line 709): under constant g an l measured with "
        "communication: for matrix multiplication the all-to-all l ('all-to-all exchanges using the HpGet "
        "primitive were used for g, h_half, o and l', line 827); for LLCS 'l, g and h_half measured for "
        "random permutations using put' (line 1185), but Appendix C has no l after a permutation (the cyclic "
        "shift is the nearest); under g(h) and g(h,h*) the l without communication (l0 of eq. 2.4) = l.empty. "
        "bspkit charges l.empty to a superstep without communication and, under g(h)/g(h,h*), no l of its "
        "own to a communicating one (its levels hold the sync); see l_charged",
    )
    f.data["l_charged"] = {
        "g const": {
            "matmul": "alltoall",
            "llcs": "shift (nearest to the thesis' 'random permutation')",
        },
        "g(h)": "empty",
        "g(h,h*)": "empty",
    }
    f.note(
        ["f", "f_algorithm"],
        "f (Table "
        + c_table(machine, "f")
        + ") is the thesis' benchmark per library, 'time per flop' (App. A line 1520); the thesis predicted "
        "its algorithms with Table 4.2 (matrix multiplication, per n^3 operation, i.e. per multiply-add) and "
        "Table 5.3 (LLCS, per cell), per machine: f_algorithm, in bspkit's work units (Table 4.2 halved). "
        "bspkit predict takes them with --f (the format has no place for an algorithm's own f yet)",
    )
    f.note(
        ["g.*"],
        "h in the thesis' g: Appendix B.1 divides by the words each process sends (h* c), while eq. (2.2) "
        "charges h = max(h_in + h_out); bspkit's 'g(h,h*) [in+out]' model reads such a g at h_inout / 2",
    )
    have = set(tables["g"][lib].get(p, {}))
    missing = sorted(f"{pr}/{pa}" for pr in PRIMS.values() for pa in PATTERNS.values() if f"{pr}/{pa}" not in have)
    if missing:
        f.note(
            [f"g.{k}" for k in missing],
            f"Table {c_table(machine, 'g')} has no row for {', '.join(missing)} at p = {p} with this library: left out",
        )


# ------------------------------------------------------------------ Gerbessiotis & Lee (002)


def gl_files(seeds: Path) -> list[File]:
    lines = lines_of(seeds, GL)
    g_line = find_line(lines, "The lowest value for  $g$  for  $p = 16$")
    r_line = find_line(lines, "microseconds per integer")
    mach_line = find_line(lines, "16 dual-processor PC workstations")
    machine = {
        "host": "PC cluster (NJIT)",
        "cpu": "Intel Pentium II 350 MHz, 16 dual-processor workstations, 128 MB each, Red Hat Linux 7.1",
        "network": "100 Mbit 3Com-905B Ethernet, CISCO Catalyst 2924 M-XL-EN switch",
        "seed": "002",
        "described_at": f"002 line {mach_line}",
    }
    files = []
    rdx = {
        "doc": "002",
        "table": "sec. 5 (Rdx suite), prose",
        "line": r_line,
        "seed_unit": "µs per integer per round of Count-Sort (the sequential radix sort takes 4 n r)",
        "unit_conversion": "us->s",
        "headers": [],
    }
    for lib, config, printed, libname, backend in (
        (
            "bsplib",
            "nonsmp",
            "is 0.59 and",
            "Oxford BSPlib 1.4",
            "one process per node (non-SMP)",
        ),
        (
            "bsplib",
            "smp",
            "0.93 for *BSPlib*",
            "Oxford BSPlib 1.4",
            "two processes per node (SMP)",
        ),
    ):
        f = File(
            f"gl-pccluster-{lib}-{config}-p16.json",
            {
                "p": 16,
                "source": "hand-written from seed 002 (Gerbessiotis & Lee, 'Remote memory access: a case for portable, efficient and library independent parallel programming'), sec. 5",
                "machine": {**machine, "library": libname, "backend": backend},
            },
        )
        f.data["f"] = {}
        f.data["l"] = {}
        f.data["g"] = {"put/alltoall": {"linreg": {}}}
        f.put(
            "g.put/alltoall.linreg.g",
            {
                "doc": "002",
                "table": "sec. 5 (Rdx suite), prose on Fig. 6",
                "line": g_line,
                "as_printed": printed,
                "seed_unit": (
                    "time per 32-bit integer of a total exchange, t/h (sec. 3 line 133); the unit is not printed: "
                    "µs, as the text compares g with r ('two to four times as much as the r', r in µs per integer)"
                ),
                "unit_conversion": "us per int->s per word",
                "headers": [],
            },
        )
        f.data["f_algorithm"] = {
            "rdxsort": {"work_unit": "key per pass (one key in one round of Count-Sort, as bspkit's rdxsort)"}
        }
        f.put(
            "f_algorithm.rdxsort.s_per_unit_n_4M",
            {**rdx, "as_printed": "$1/2$  microseconds per integer"},
        )
        f.put(
            "f_algorithm.rdxsort.s_per_unit_n_32M",
            {**rdx, "as_printed": "$1/4$  for  $n = 32$  M"},
        )
        f.note(
            ["g.put/alltoall"],
            "the seed's sentence (002 line "
            f"{g_line}): 'The lowest value for g for p = 16 from Fig. 6 is 0.59 and 0.93 for BSPlib and LAM MPI in "
            "non-SMP and SMP configurations respectively'. Read here as the lowest g per configuration, both "
            "BSPlib's: 0.59 non-SMP, 0.93 SMP. Sec. 4 (line 212, 235) expects MatMul speedups of 8 (BSPlib) and "
            "5 (LAM) non-SMP, 6 (BSPlib) and 4.6 (LAM) SMP at p = 16, n = 320 from their formula "
            "p / (1 + sqrt(p) g / (f (n - 1))) with f = 1/70 us; 0.59 and 0.93 us per int give 7.9 and 6.1, "
            "BSPlib's two, while LAM's 4.6 would need 1.41 us per int. (An earlier reading took 0.93 as LAM "
            "MPI's.) Fig. 6 itself (every p, h, library) is lost in "
            "the text conversion. The g is the smallest t/h of the put total exchange (sec. 3), a 'g const' g "
            "(put in linreg, without l: the seed fits no line). 32-bit integers: per 8-byte word x 2, assuming "
            "the time per byte is the same",
        )
        f.note(
            ["l", "l.empty"],
            "Fig. 5's synchronisation times (the As suite's Tests 1-5) are lost in the text conversion: no l",
        )
        f.note(
            ["f", "f_algorithm"],
            "no probe kernel's f; the radix sort's sequential r per key and round (sec. 5, line "
            f"{r_line}) is in f_algorithm.rdxsort: 1/2 µs at n = 4 M, 1/4 µs at n = 32 M (1 M = 1024000, line {find_line(lines, '1 M= 1024000')})",
        )
        files.append(f)
    return files


# ------------------------------------------------------------------ Kang et al. (003)


def kang_files(seeds: Path) -> list[File]:
    lines = lines_of(seeds, KANG)
    t4 = find_line(lines, "Table 4: Startup Time and Bandwidth")
    t1 = find_line(lines, "Table 1: Startup Time and Bandwidth")
    t2 = find_line(lines, "Table 2: Memory-Disk Communication Time")
    t3 = find_line(lines, "Table 3: Parameter Values for Processor-Memory Cost")
    platforms = {
        "SP": (
            "sp",
            "IBM SP (P2SC 135 MHz, CEWES MSRC)",
            "Multistage Interconnection Network (MIN)",
            "IBM POE MPI 2.1.0.24",
            181,
        ),
        "T3E": (
            "t3e",
            "SGI/Cray T3E (DEC Alpha 21164, CEWES MSRC)",
            "3-D torus",
            "SGI/Cray MPT MPI 1.2.0.1",
            215,
        ),
        "O2K": (
            "o2k",
            "SGI Origin 2000 (MIPS R10000, CEWES MSRC)",
            "hierarchical hypercube (ccNUMA)",
            "SGI MPT MPI 3.0",
            238,
        ),
    }

    def row_line(first: str, after: int, second: str | None = None) -> int:
        for n in range(after, after + 12):
            fields = lines[n - 1].split("\t")
            if (second is None and fields[0] == first) or (
                second is not None and len(fields) > 1 and fields[1] == second
            ):
                return n
        raise ValueError(first)

    files = []
    for plat, (slug, cpu, net, mpi, desc) in platforms.items():
        f = File(
            f"kang-{slug}-mpi.json",
            {
                "source": "hand-written from seed 003 (Kang, Park, Suh, Prasanna, Gavali, 'Benchmarking of HPC systems', USC), Tables 2-4",
                "machine": {
                    "host": plat,
                    "cpu": cpu,
                    "network": net,
                    "library": mpi,
                    "seed": "003",
                    "described_at": f"003 line {desc}, 493-509",
                },
            },
        )
        n4 = row_line(plat, t4)
        t1_block = find_line(lines, f" {plat}", t1 - 16)
        base4 = {
            "doc": "003",
            "table": "4",
            "line": n4,
            "row": [plat],
            "headers": [{"kind": "table", "text": "Table 4:"}],
        }
        ts = {
            **base4,
            "column": 1,
            "as_printed": lines[n4 - 1].split("\t")[1],
            "seed_unit": "µs (start-up of eq. 5, from the permutation)",
            "unit_conversion": "us->s",
        }
        cross_ts = {
            "doc": "003",
            "table": "1",
            "line": t1_block + 1,
            "as_printed": lines[t1_block].strip(),
            "unit_conversion": "us->s",
        }
        bw = {
            **base4,
            "column": 2,
            "as_printed": lines[n4 - 1].split("\t")[2],
            "seed_unit": "MB/s per processor (tau_d = 1 / bandwidth, per byte); MB = 10^6 bytes (Table 7's T3E estimate, 235.80 µs = 3 x 29 + 14880 B / 100 MB/s, holds only so)",
        }
        cross_bw = {
            "doc": "003",
            "table": "1",
            "line": t1_block + 2,
            "as_printed": lines[t1_block + 1].strip(),
        }
        f.data["g"] = {"send/permutation": {"linreg": {}}}
        f.put(
            "g.send/permutation.linreg.g",
            {
                **bw,
                "unit_conversion": "MB/s->s per word",
                "cross_check": {**cross_bw, "unit_conversion": "MB/s->s per word"},
            },
        )
        f.put("g.send/permutation.linreg.l", {**ts, "cross_check": cross_ts})
        f.data["imh"] = {"model": {}}
        f.put("imh.model.T_s", {**ts, "cross_check": cross_ts})
        f.put(
            "imh.model.tau_d",
            {
                **bw,
                "unit_conversion": "MB/s->s per byte",
                "cross_check": {**cross_bw, "unit_conversion": "MB/s->s per byte"},
            },
        )
        for op, key_t, key_tau in (("Write", "T_w", "tau_w"), ("Read", "T_r", "tau_r")):
            op_line = find_line(lines, f"{op}\t", t2)
            n = row_line("", op_line, plat)
            fields = lines[n - 1].split("\t")
            base = {
                "doc": "003",
                "table": "2",
                "line": n,
                "row": ["*", plat],
                "headers": [
                    {"kind": "table", "text": "Table 2:"},
                    {"kind": "kang_op", "text": op},
                ],
            }
            f.put(
                f"imh.model.{key_t}",
                {
                    **base,
                    "column": 2,
                    "as_printed": fields[2],
                    "seed_unit": "ms (start-up)",
                    "unit_conversion": "ms->s",
                },
            )
            f.put(
                f"imh.model.{key_tau}",
                {
                    **base,
                    "column": 3,
                    "as_printed": fields[3],
                    "seed_unit": "MB/s (tau = 1 / bandwidth, per byte; MB = 10^6 bytes)",
                    "unit_conversion": "MB/s->s per byte",
                },
            )
        if plat == "SP":
            n3 = t3 + 3
            fields = lines[n3 - 1].split("\t")
            f.data["imh_paper"] = {
                "form": "eq. (4) as the paper writes it: T = T_n N + T_c N_c + T_e S (S the stride); NOT bspkit's imh.model form"
            }
            for col, name in ((1, "T_n"), (2, "T_c"), (3, "T_e")):
                f.put(
                    f"imh_paper.{name}",
                    {
                        "doc": "003",
                        "table": "3",
                        "line": n3,
                        "row": ["SP"],
                        "column": col,
                        "as_printed": fields[col],
                        "seed_unit": "ns; T_n per byte by eq. (1)'s text (line 673), T_c per cache line, T_e per unit of stride (eq. 3-4)",
                        "unit_conversion": "ns->s",
                        "headers": [{"kind": "table", "text": "Table 3:"}],
                    },
                )
            f.note(
                ["imh_paper"],
                "Table 3 (SP only) is eq. (4) in the paper's form, whose T_e multiplies the stride; bspkit's "
                "imh.model.T_e is per line and doubling of the stride (docs/probe-format.md): not the same "
                "parameter, so kept apart",
            )
        f.note(
            ["p"],
            "the tables do not say how many processors the permutation benchmark ran on: no p",
        )
        f.note(
            ["f"],
            "no computation rate is measured (sec. 2.2 gives peak rates only): no f",
        )
        f.note(
            ["l", "l.empty"],
            "the benchmarks have no barrier: no l. linreg.l is T_s, the start-up of one point-to-point message of eq. (5)",
        )
        f.note(
            ["g", "g.send/permutation"],
            "the permutation of eq. (5) is two-sided MPI send/receive (Fig. 8): key send/permutation, g = 8 tau_d per "
            "8-byte word, l = T_s; no put surface (the format's fallback for other primitives)",
        )
        if plat == "T3E":
            f.note(
                ["imh.model.tau_w"],
                f"Table 6 (line {find_line(lines, '-149')}) repeats Table 2 but prints the T3E write bandwidth '-149': "
                "a conversion slip; Table 2's 149 is used",
            )
        if plat == "SP":
            f.note(
                ["imh.model"],
                "Table 7's SP estimate (364.80 µs) is not 3 T_s + 7440 B tau_d = 310.8 µs with these values "
                "(4-byte reals); the T3E estimate (235.80 µs, 8-byte reals) is. The SP's estimate may use other values",
            )
        files.append(f)
    return files


# ------------------------------------------------------------------ Horvitz & Bisseling (004)


def hb_files(seeds: Path) -> list[File]:
    lines = lines_of(seeds, HB)
    n = find_line(lines, "We measured a sequential speed of $s = 250$")
    f = File(
        "hb-t3e-bsplib-p64.json",
        {
            "p": 64,
            "source": "hand-written from seed 004 (Horvitz & Bisseling, 'Designing a BSP version of ScaLAPACK'), sec. 3",
            "machine": {
                "host": "Cray T3E (HPaC, TU Delft)",
                "cpu": "Cray T3E, 64 processors of 600 Mflop/s peak",
                "network": "Cray T3E 3-D torus",
                "library": "BSPlib (bsp_hpput; BSMP in BSP2D)",
                "seed": "004",
                "described_at": f"004 line {n}, {find_line(lines, 'Technical University of Delft')}",
            },
        },
    )
    base = {"doc": "004", "table": "sec. 3, prose", "line": n, "headers": []}
    f.data["f"] = {}
    f.put(
        "f.matmul_double_blas",
        {
            **base,
            "as_printed": "$s = 250$ Mflop/s",
            "seed_unit": "Mflop/s of the matrix multiplication part of the LU decomposition (single precision = 64 bits on the T3E)",
            "unit_conversion": "M/s->s",
        },
    )
    f.data["f_unit"] = {"matmul_double_blas": "s per flop (ScaLAPACK's count: 2 per multiply-add), 64-bit reals"}
    f.data["g"] = {"put/alltoall": {"linreg": {}}}
    f.put(
        "g.put/alltoall.linreg.g",
        {
            **base,
            "as_printed": "$g \\approx 14$",
            "seed_unit": "flop time units per data element (64-bit) sent or received, normalised for s = 250 Mflop/s (line 35)",
            "unit_conversion": "flop units at 250 Mflop/s->s",
        },
    )
    for key, printed in (("low", "$l \\approx 16000"), ("high", "--}80000$")):
        f.put(
            f"l_range.{key}",
            {
                **base,
                "as_printed": printed,
                "seed_unit": "flop time units, normalised for s = 250 Mflop/s",
                "unit_conversion": "flop units at 250 Mflop/s->s",
            },
        )
    f.note(
        ["l", "l.empty"],
        "the seed gives l as a range, 16000-80000 flop units, 'measured within the context of the program, not in "
        "a separate benchmark. This explains the variation in l': l_range, no l.empty (one value would be invented)",
    )
    f.note(
        ["g.put/alltoall"],
        "g (approximately 14 flop units) was measured within the LU program (bsp_hpput and two-phase broadcasts): "
        "no primitive or pattern; put/alltoall is the format's fallback for every superstep",
    )
    return [f]


def write_all(seeds: Path, folder: Path) -> tuple[int, int]:
    """Writes every file into `folder` (its old *.json removed); (files, cited values)."""
    files = thesis_files(seeds) + gl_files(seeds) + kang_files(seeds) + hb_files(seeds)
    for old in folder.glob("*.json"):
        old.unlink()
    for f in files:
        f.write(folder)
    return len(files), sum(len(f.sources) for f in files)


def main() -> None:
    seeds = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent.parent / "shared" / "seeds"
    files, values = write_all(seeds, HERE)
    print(f"{files} files, {values} cited values")


if __name__ == "__main__":
    main()
