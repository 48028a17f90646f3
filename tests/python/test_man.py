"""The man pages of a build (<build>/man/man1 and man3; tools/CMakeLists.txt makes them with
scripts/man1.py and scripts/man3.py): one per command, per `bspkit` subcommand and per
driver, one per function declared in bsp.h, bspkit.h and mcbsp.h, each with NAME, SYNOPSIS and
DESCRIPTION, and nothing of the machine that built them in bspcc's."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD, REPO, run_bspkit

MAN = BUILD / "man" if BUILD else None
pytestmark = pytest.mark.skipif(
    not (MAN and (MAN / "man1").is_dir()),
    reason="BSPKIT_BUILD_DIR is not set or its build has no man pages (man/man1)",
)

HEADERS = [REPO / "include" / h for h in ("bsp.h", "bspkit.h", "mcbsp.h")]
# A function declared at the top level of a header: `type name(` at the start of a line.
DECLARATION = re.compile(r"^(?!typedef|static|#|\s)[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(", re.MULTILINE)


def declared_functions(header: Path) -> list[str]:
    code = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.DOTALL)
    return DECLARATION.findall(code)


def sections(page: Path) -> list[str]:
    return re.findall(r"^\.SH (.+)$", page.read_text(), re.MULTILINE)


def bspkit_subcommands() -> list[str]:
    """The subcommands `bspkit --help` lists (argparse's list under COMMAND)."""
    out = run_bspkit("--help").stdout
    return re.findall(r"^    ([a-z][a-z-]*)  ", out, re.MULTILINE)


def installed_drivers() -> list[str]:
    """The drivers the build has, but the test-only toy."""
    assert BUILD
    return sorted(p.name for p in (BUILD / "bin").glob("bspalg-*") if p.name != "bspalg-toy")


def test_the_headers_declare_what_we_expect() -> None:
    """The declaration finder itself: it must see the functions, not the typedefs."""
    found = declared_functions(HEADERS[0])
    assert {"bsp_put", "bsp_sync", "bsp_hpmove", "bsp_init", "bsp_pushregister"} <= set(found)
    assert "bspk_op" not in declared_functions(HEADERS[1]) and "bspk_reduce" in declared_functions(HEADERS[1])


def test_every_command_has_a_page() -> None:
    subcommands = bspkit_subcommands()
    assert {"probe", "fit", "run", "validate", "profile"} <= set(subcommands)
    expected = ["bsprun", "bspcc", "bspkit", "bspprobe", *installed_drivers(), *(f"bspkit-{s}" for s in subcommands)]
    assert MAN
    missing = [name for name in expected if not (MAN / "man1" / f"{name}.1").is_file()]
    assert not missing, f"no man page for {missing} (reconfigure when a subcommand was added)"


def test_every_declared_function_has_a_page() -> None:
    assert MAN
    for header in HEADERS:
        missing = [f for f in declared_functions(header) if not (MAN / "man3" / f"{f}.3").is_file()]
        assert not missing, f"{header.name}: functions without a man page: {missing}"


@pytest.mark.parametrize("section", ["man1", "man3"])
def test_every_page_has_name_synopsis_description(section: str) -> None:
    assert MAN
    pages = sorted((MAN / section).glob("*.[13]"))
    assert pages
    for page in pages:
        text = page.read_text()
        target = re.fullmatch(r"\.so (man3/\S+)\n", text)
        if target:  # a name documented on another function's page
            assert (MAN / target.group(1)).is_file(), f"{page.name} points at {target.group(1)}"
            continue
        heads = sections(page)
        assert heads[:3] == ["NAME", "SYNOPSIS", "DESCRIPTION"], f"{page.name}: {heads}"
        synopsis = text.split(".SH SYNOPSIS\n", 1)[1].split(".SH ", 1)[0]
        assert re.search(r"[a-z]", synopsis), f"{page.name}: empty SYNOPSIS"


def test_the_subcommand_pages_show_their_own_usage() -> None:
    assert MAN
    run_page = (MAN / "man1" / "bspkit-run.1").read_text()
    synopsis = run_page.split(".SH SYNOPSIS\n", 1)[1].split(".SH ", 1)[0]
    assert "bspkit run" in synopsis and "\\-\\-predict" in synopsis


def test_function_pages_say_what_the_header_says() -> None:
    assert MAN
    put = (MAN / "man3" / "bsp_put.3").read_text()
    assert "#include <bsp.h>" in put
    assert ".SH ERRORS" in put and "out of range" in put and ".SH ARGUMENTS" in put
    reduce = (MAN / "man3" / "bspk_reduce.3").read_text()
    assert "#include <bspkit.h>" in reduce and "typedef void (*bspk_op)" in reduce


def test_bspcc_page_has_no_staging_path() -> None:
    """The page shows the install prefix where bspcc's help shows its own place."""
    assert MAN
    page = (MAN / "man1" / "bspcc.1").read_text()
    assert "man\\-stage" not in page and "man-stage" not in page and "PREFIX" not in page
    assert "include dir /" in page


def test_generator_refuses_a_comment_that_names_another_function(tmp_path: Path) -> None:
    header = tmp_path / "h.h"
    header.write_text("/**\n * bsp_one - does one thing\n */\nvoid bsp_two(void);\n")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "man3.py"),
            "--output-dir",
            str(tmp_path / "out"),
            "--version",
            "0",
            str(header),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "bsp_two" in done.stderr


@pytest.mark.skipif(shutil.which("man") is None, reason="no man command")
def test_man_renders_a_page() -> None:
    assert MAN
    done = subprocess.run(
        ["man", "-l", str(MAN / "man3" / "bsp_sync.3")],
        capture_output=True,
        text=True,
        env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0 and done.stdout.startswith("BSP_SYNC(3)"), done.stdout[:200]
