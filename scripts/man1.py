#!/usr/bin/env python3
"""man1.py - a section-1 man page from a command's --help (run by CMake at build time).

    man1.py --name NAME --output FILE --version V
            [--summary TEXT | --summary-from-parent | --summary-from-help]
            [--replace OLD=NEW ...] [--drop-regex RE ...] -- COMMAND [ARGS...]

Runs `COMMAND ARGS --help` (COLUMNS wide, so that argparse does not wrap its usage line) and
writes the page: NAME (NAME and the summary), SYNOPSIS (the usage lines), DESCRIPTION (the
paragraphs that follow), then one section per heading of the help ("Options:" ->
OPTIONS), with indented blocks kept as they are printed. --summary-from-parent takes the
summary of a subcommand (`bspkit run` -> NAME bspkit-run) from the parent's --help list of
commands, --summary-from-help the first sentence of the help. --replace and --drop-regex make the page the same on every machine (a staging
directory becomes the install prefix; "(nproc: 2 here)" goes). Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

USAGE = re.compile(r"^usage:\s*", re.IGNORECASE)
HEADING = re.compile(r"^([A-Za-z][A-Za-z ]*[A-Za-z]):\s*$")


def run_help(command: list[str]) -> str:
    env = dict(os.environ, COLUMNS="1000")
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, env=env, timeout=60)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"man1.py: `{' '.join(command)} --help` failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def roff_text(text: str) -> str:
    """Text as roff reads it literally: backslashes and hyphens escaped, no control lines."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def subcommand_summary(parent: list[str], name: str) -> str:
    """The one-line help of subcommand `name` in the parent's command list (argparse)."""
    lines = run_help(parent).splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s+(\S+)\s{2,}(.*)$", line)
        if m and m.group(1) == name:
            summary = [m.group(2).strip()]
            for more in lines[i + 1 :]:  # continuation lines, indented deeper
                if not re.match(r"^\s{6,}\S", more) or re.match(r"^\s+\S+\s{2,}", more.rstrip()):
                    break
                summary.append(more.strip())
            return " ".join(summary)
    sys.exit(f"man1.py: no subcommand {name!r} in `{' '.join(parent)} --help`")


def first_sentence(help_text: str) -> str:
    """The first sentence of the description (for a NAME line)."""
    _usage, sections = split_help(help_text)
    words = []
    for line in sections[0][1] if sections and sections[0][0] == "DESCRIPTION" else []:
        if not line.strip() or line.startswith(" "):
            if words:
                break
            continue
        words.append(line.strip())
    sentence = re.split(r"(?<=\.)\s+(?=[A-Z])", " ".join(words))[0].rstrip(".")
    if not sentence:
        sys.exit("man1.py: the help has no description to take the summary from")
    return short_clause(sentence)


def short_clause(sentence: str, width: int = 70) -> str:
    """A long sentence up to its first comma, colon, semicolon or bracket outside brackets."""
    if len(sentence) <= width:
        return sentence
    depth = 0
    for i, ch in enumerate(sentence):
        if depth == 0 and i >= 20 and (ch in ",:;" or (ch == "(" and sentence[i - 1] == " ")):
            return sentence[:i].rstrip()
        depth += (ch in "([{") - (ch in ")]}")
    return sentence


def split_help(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(usage lines, [(section, lines)]): the first section is DESCRIPTION."""
    lines = text.rstrip().splitlines()
    usage: list[str] = []
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and USAGE.match(lines[i]):
        usage.append(USAGE.sub("", lines[i]).strip())
        i += 1
        while i < len(lines) and lines[i].strip() and lines[i].startswith(" "):
            stripped = lines[i].strip()
            if re.match(r"^or:\s*", stripped):
                stripped = re.sub(r"^or:\s*", "", stripped)
            usage.append(stripped)
            i += 1
    sections: list[tuple[str, list[str]]] = [("DESCRIPTION", [])]
    for line in lines[i:]:
        heading = HEADING.match(line)
        if heading:
            sections.append((heading.group(1).upper(), []))
        else:
            sections[-1][1].append(line.rstrip())
    return usage, [(name, body) for name, body in sections if any(s.strip() for s in body)]


TAGGED = re.compile(r"^(\S(?:.*?\S)?)\s{2,}(\S.*)$")


def option_entries(block: list[str]) -> list[tuple[str, str]] | None:
    """An indented block as (option, text) pairs, when it is a list of options or commands:
    every line at the block's indent is `TAG  text` or an option alone (its text on the
    deeper lines below, all at one indent); None for any other block (then kept as printed)."""
    lines = [b for b in block if b.strip()]
    indent = min(len(b) - len(b.lstrip()) for b in lines)
    entries: list[list[str]] = []
    text_indents = set()
    for line in lines:
        body = line[indent:]
        if body.startswith(" "):
            text_indents.add(len(body) - len(body.lstrip()))
            if not entries or len(text_indents) > 1 or TAGGED.match(body.strip()):
                return None  # nothing to continue, or a nested list: keep it as printed
            entries[-1][1] = (entries[-1][1] + " " + body.strip()).strip()
            continue
        tagged = TAGGED.match(body.rstrip())
        if tagged:
            entries.append([tagged.group(1), tagged.group(2)])
        elif re.match(r"^(-\S|[A-Z][A-Z_]*$)", body):
            entries.append([body.rstrip(), ""])
        else:
            return None
    return [(tag, text) for tag, text in entries]


def nested_entries(block: list[str]) -> tuple[str, list[tuple[str, str]]] | None:
    """A block that is one name with a list of entries below it (argparse's subcommands:
    `COMMAND` over `probe  build and run ...`): the name and the entries, else None."""
    lines = [b for b in block if b.strip()]
    first = lines[0].strip()
    indent = len(lines[0]) - len(lines[0].lstrip())
    if TAGGED.match(first) or len(lines) < 2:
        return None
    if any(len(b) - len(b.lstrip()) <= indent for b in lines[1:]):
        return None
    inner = option_entries(lines[1:])
    return (first, inner) if inner is not None else None


def render_body(body: list[str]) -> list[str]:
    """Paragraphs of unindented lines are filled by man; indented blocks stay as printed."""
    out: list[str] = []
    i = 0
    while i < len(body):
        line = body[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith(" "):
            block = []
            while i < len(body) and (body[i].startswith(" ") or not body[i].strip()):
                block.append(body[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            entries = option_entries(block)
            nested = nested_entries(block) if entries is None else None
            if nested is not None:
                tag, inner = nested
                out += [".TP", f".B {roff_text(tag)}", ".RS"]
                for inner_tag, text in inner:
                    out += [".TP", f".B {roff_text(inner_tag)}"] + ([roff_text(text)] if text else [])
                out.append(".RE")
            elif entries is None:
                indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
                out += [".PP", ".RS 2", ".nf"] + [roff_text(b[indent:]) if b.strip() else "" for b in block]
                out += [".fi", ".RE"]
            else:
                for tag, text in entries:
                    out += [".TP", f".B {roff_text(tag)}"] + ([roff_text(text)] if text else [])
        else:
            out.append(".PP")
            while i < len(body) and body[i].strip() and not body[i].startswith(" "):
                out.append(roff_text(body[i].strip()))
                i += 1
    return out


def usage_words(line: str) -> list[str]:
    """A usage line split at the blanks outside brackets: `[--size N]` stays one word."""
    words, current, depth = [], "", 0
    for ch in line:
        depth += (ch in "[({") - (ch in "])}")
        if ch == " " and depth == 0:
            if current:
                words.append(current)
            current = ""
        else:
            current += ch
    return [*words, current] if current else words


def wrapped_usage(line: str, width: int = 72) -> list[str]:
    """A long usage line over several lines, the options under the first one (as man pages
    print them); the program's name (and subcommand) stays on the first line."""
    words = usage_words(line)
    lead = next((i for i, w in enumerate(words) if w.startswith(("[", "-", "<")) or w.isupper()), len(words))
    head = " ".join(words[: max(lead, 1)])
    lines = [head]
    for word in words[max(lead, 1) :]:
        if len(lines[-1]) + 1 + len(word) > width and lines[-1].strip():
            lines.append(" " * (len(head) + 1) + word)
        else:
            lines[-1] += " " + word
    return lines


def man_page(name: str, version: str, summary: str, help_text: str, see_also: str = "") -> str:
    usage, sections = split_help(help_text)
    if not usage:
        sys.exit(f"man1.py: the help of {name} has no usage line, so the page would have no SYNOPSIS")
    out = [
        f'.TH {name.upper()} "1" "" "bspkit {version}" "User Commands"',
        ".SH NAME",
        f"{roff_text(name)} \\- {roff_text(summary)}",
        ".SH SYNOPSIS",
        ".nf",
        *[roff_text(part) for u in usage for part in wrapped_usage(u)],
        ".fi",
    ]
    for title, body in sections:
        out.append(f".SH {title}")
        out += render_body(body)
    refs = [r.strip() for r in see_also.split(",") if r.strip()]
    if refs:
        out.append(".SH SEE ALSO")
        for i, ref in enumerate(refs):
            page, _, section = ref.rstrip(")").partition("(")
            out.append(f".BR {roff_text(page)} ({section})" + ("," if i < len(refs) - 1 else ""))
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", required=True, help="the page's name (e.g. bspkit-run)")
    ap.add_argument("--output", required=True, type=Path)
    ap.add_argument("--version", required=True)
    ap.add_argument("--summary", help="the NAME line's text")
    ap.add_argument("--summary-from-parent", action="store_true", help="take it from the parent command's list")
    ap.add_argument("--summary-from-help", action="store_true", help="take the first sentence of the help")
    ap.add_argument("--see-also", default="", metavar="PAGES", help="e.g. 'bsprun(1), bsp_put(3)'")
    ap.add_argument("--replace", action="append", default=[], metavar="OLD=NEW")
    ap.add_argument("--drop-regex", action="append", default=[], metavar="RE")
    ap.add_argument("command", nargs="+")
    args = ap.parse_args()
    text = run_help(args.command)
    for pair in args.replace:
        old, _, new = pair.partition("=")
        text = text.replace(old, new)
    for pattern in args.drop_regex:
        text = re.sub(pattern, "", text)
    if args.summary_from_parent:
        summary = subcommand_summary(args.command[:-1], args.command[-1])
    elif args.summary_from_help:
        summary = first_sentence(text)
    elif args.summary:
        summary = args.summary
    else:
        sys.exit("man1.py: give --summary, --summary-from-parent or --summary-from-help")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_suffix(".tmp")
    tmp.write_text(man_page(args.name, args.version, summary, text, args.see_also))
    tmp.replace(args.output)


if __name__ == "__main__":
    main()
