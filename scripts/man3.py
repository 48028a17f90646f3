#!/usr/bin/env python3
"""man3.py - section-3 man pages from the comments of include/bsp.h, bspkit.h and mcbsp.h.

    man3.py --output-dir DIR --version V HEADER...

A function is documented in its header by a comment that starts with `/**`, right above its
declaration:

    /**
     * bsp_put - write into another process' registered area at the next sync
     *
     * Paragraphs of description (a blank comment line between two).
     *
     * \\param pid     the destination process ...   (continued on lines indented further)
     * \\return        what it returns
     * \\error         one line per error the library reports (continued likewise)
     * \\see           bsp_get(3), bsp_sync(3)
     */
    void bsp_put(...);

The first paragraph names the function and says what it does (NAME); several names separated
by commas document the declarations that follow the comment together (one page for the first
name, and pages that include it for the others); a typedef among them is shown in the
SYNOPSIS. The page: NAME, SYNOPSIS (the #include and
the declarations), DESCRIPTION, ARGUMENTS, RETURN VALUE, ERRORS (with how an error ends the
run), SEE ALSO. Standard library only; run by CMake at build time (tools/CMakeLists.txt).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

DOC_COMMENT = re.compile(r"/\*\*(.*?)\*/", re.DOTALL)
FUNCTION_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
ATTRIBUTES = re.compile(r"\s*\bBSPKIT_(?:NORETURN|PRINTF\([^)]*\))")
TAG = re.compile(r"^\\(param|return|error|see)\b\s*(.*)$")
ERRORS_INTRO = (
    "An error prints one line on stderr, `bspkit: error in NAME on process P: what happened`, and "
    "ends every process of the run with exit status 1, on every back end. NAME reports:"
)


@dataclass
class FunctionDoc:
    header: str
    names: list[str]
    summary: str
    declarations: list[str]
    description: list[str] = field(default_factory=list)  # paragraphs
    params: list[tuple[str, str]] = field(default_factory=list)
    returns: str = ""
    errors: list[str] = field(default_factory=list)
    see: str = ""


def comment_lines(body: str) -> list[str]:
    """The comment's text lines without the leading ` * `."""
    out = []
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            line = line[1:] if line.startswith(" ") else line
        out.append(line.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def declarations_after(text: str, pos: int) -> list[str]:
    """The declarations right after a comment, up to the first blank line (comments between
    them skipped), each up to its `;` (an inline function's body left out)."""
    decls: list[str] = []
    current = ""
    for line in text[pos:].splitlines()[1:] if text[pos:].startswith("\n") else text[pos:].splitlines():
        code = re.sub(r"/\*.*?\*/", "", line).strip()
        if not code:
            if line.strip():  # a comment of its own between two declarations
                continue
            if current or decls:
                break
            continue
        current = f"{current} {code}".strip()
        if current.endswith("}"):  # a static inline definition: shown as its declaration
            current = re.sub(r"\s*\{.*\}$", ";", current)
        if current.endswith(";"):
            decls.append(ATTRIBUTES.sub("", re.sub(r"\s+", " ", current)).replace(" ;", ";"))
            current = ""
    return decls


def parse_header(path: Path) -> list[FunctionDoc]:
    text = path.read_text()
    docs = []
    for m in DOC_COMMENT.finditer(text):
        lines = comment_lines(m.group(1))
        where = f"{path.name}:{text.count(chr(10), 0, m.start()) + 1}"
        first = lines.index("") if "" in lines else len(lines)  # the first paragraph names them
        name_line = " ".join(line.strip() for line in lines[:first])
        if " - " not in name_line:
            sys.exit(f"man3.py: {where}: the comment must begin with 'name - what it does'")
        names_part, summary = name_line.split(" - ", 1)
        names = [n.strip() for n in names_part.split(",")]
        decls = declarations_after(text, m.end())
        functions = [d for d in decls if not d.startswith("typedef ")]  # a typedef is shown only
        declared = [m.group(1) for d in functions if (m := FUNCTION_NAME.search(d))]
        if declared != names:
            sys.exit(f"man3.py: {where}: the comment names {names} but the declarations after it are {declared}")
        doc = FunctionDoc(path.name, names, summary.strip(), decls)
        paragraph: list[str] = []
        item: list[str] | None = None  # the tagged item being continued
        items: list[tuple[str, list[str]]] = []
        for line in lines[first:]:
            tagged = TAG.match(line.strip())
            if tagged:
                item = [tagged.group(2)]
                items.append((tagged.group(1), item))
            elif item is not None:
                if not line.strip():
                    sys.exit(f"man3.py: {where}: text after the \\param/\\error lines; put the description first")
                item.append(line.strip())
            elif line.strip():
                paragraph.append(line.strip())
            elif paragraph:
                doc.description.append(" ".join(paragraph))
                paragraph = []
        if paragraph:
            doc.description.append(" ".join(paragraph))
        if not doc.description:
            sys.exit(f"man3.py: {where}: {names[0]} has no description (a paragraph after the first line)")
        for tag, words in items:
            value = " ".join(words)
            if tag == "param":
                name, _, what = value.partition(" ")
                doc.params.append((name, what.strip()))
            elif tag == "return":
                doc.returns = value
            elif tag == "error":
                doc.errors.append(value)
            else:
                doc.see = value
        docs.append(doc)
    return docs


def roff(text: str) -> str:
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def see_also(refs: str) -> list[str]:
    """`bsp_get(3), bsprun(1)` as .BR lines; free text stays text."""
    out = []
    parts = [p.strip() for p in refs.split(",") if p.strip()]
    for i, part in enumerate(parts):
        comma = "," if i < len(parts) - 1 else ""
        ref = re.fullmatch(r"([\w.-]+)\((\d)\)", part)
        out.append(f".BR {roff(ref.group(1))} ({ref.group(2)}){comma}" if ref else roff(part) + comma)
    return out


def wrapped(declaration: str, width: int = 78) -> list[str]:
    """A declaration over several lines at its commas, the parameters aligned (as man pages
    print long prototypes)."""
    if len(declaration) <= width or "(" not in declaration:
        return [declaration]
    head, _, params = declaration.partition("(")
    lines = [head + "("]
    for part in re.split(r"(?<=,) ", params):
        if len(lines[-1]) + len(part) + 1 > width and lines[-1].strip() not in ("", head + "("):
            lines.append(" " * (len(head) + 1) + part)
        else:
            lines[-1] = lines[-1] + ("" if lines[-1].endswith("(") else " ") + part
    return lines


def page(doc: FunctionDoc, version: str) -> str:
    name = doc.names[0]
    out = [
        f'.TH {name.upper()} "3" "" "bspkit {version}" "bspkit BSPlib"',
        ".SH NAME",
        f"{roff(', '.join(doc.names))} \\- {roff(doc.summary)}",
        ".SH SYNOPSIS",
        ".nf",
        f".B #include <{doc.header}>",
        ".PP",
        *[f"\\fB{roff(line)}\\fR" for d in doc.declarations for line in wrapped(d)],
        ".fi",
        ".PP",
        "Link with libbsp: build with",
        ".BR bspcc (1).",
    ]
    if doc.description:
        out.append(".SH DESCRIPTION")
        for para in doc.description:
            out += [".PP", roff(para)]
    if doc.params:
        out.append(".SH ARGUMENTS")
        for pname, what in doc.params:
            out += [".TP", f".I {roff(pname)}", roff(what)]
    if doc.returns:
        out += [".SH RETURN VALUE", roff(doc.returns)]
    if doc.errors:
        out += [".SH ERRORS", roff(ERRORS_INTRO.replace("NAME", name))]
        for error in doc.errors:
            out += [".IP \\(bu 2", roff(error)]
    if doc.see:
        out += [".SH SEE ALSO", *see_also(doc.see)]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output-dir", required=True, type=Path)
    ap.add_argument("--version", required=True)
    ap.add_argument("headers", nargs="+", type=Path)
    args = ap.parse_args()
    args.output_dir.mkdir(parents=True, exist_ok=True)
    for header in args.headers:
        for doc in parse_header(header):
            (args.output_dir / f"{doc.names[0]}.3").write_text(page(doc, args.version))
            for other in doc.names[1:]:
                (args.output_dir / f"{other}.3").write_text(f".so man3/{doc.names[0]}.3\n")


if __name__ == "__main__":
    main()
