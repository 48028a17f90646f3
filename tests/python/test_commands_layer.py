"""argparse stays at the edge: only bspkit.cli and the command modules (bspkit.commands) import
it, and every command module keeps the one shape cli.py relies on."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from bspkit import cli

from conftest import PYDIR

PACKAGE = PYDIR / "bspkit"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_only_cli_and_the_commands_import_argparse() -> None:
    edge = {PACKAGE / "cli.py", *(PACKAGE / "commands").glob("*.py")}
    importers = {p for p in PACKAGE.rglob("*.py") if any(m.split(".")[0] == "argparse" for m in imported_modules(p))}
    assert importers - edge == set()
    # the check sees imports: cli.py has one
    assert PACKAGE / "cli.py" in importers


def test_every_command_module_has_the_shape_cli_dispatches_on() -> None:
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(subparsers.choices) == [c.NAME for c in cli.COMMANDS]
    for command in cli.COMMANDS:
        assert callable(command.add_parser) and callable(command.run), command.NAME
        assert isinstance(command.PASS_THROUGH, bool), command.NAME
        options_type = typing.get_type_hints(command.options_from)["return"]
        for options_class in typing.get_args(options_type) or (options_type,):  # cluster: one per action
            assert dataclasses.is_dataclass(options_class), options_class
            assert options_class.__dataclass_params__.frozen, options_class


def test_options_are_read_from_the_arguments_once() -> None:
    """options_from turns the parsed arguments into the command's options; the launch options
    and the negated flags arrive typed."""
    args = cli.build_parser().parse_args(["validate", "inprod", "-n", "2", "--no-calibrate", "--sizes", "10,20"])
    options = cli.BY_NAME["validate"].options_from(args)
    assert options.launch.nprocs == 2 and options.launch.backend == "threads" and options.launch.hostfile is None
    assert options.calibrate is False and options.sizes == "10,20" and options.timeout_s == 600.0
    args = cli.build_parser().parse_args(["calibrate", "--full"])
    assert cli.BY_NAME["calibrate"].options_from(args).quick is False
    args = cli.build_parser().parse_args(["cluster", "status"])
    assert cli.BY_NAME["cluster"].options_from(args).name is None


# ------------------------------------------------ --help loads none of the numeric packages

HEAVY = ("numpy", "scipy", "matplotlib")
# the system interpreter CMake runs scripts/man1.py with, to make the man pages from --help
SYSTEM_PYTHON = Path("/usr/bin/python3")


def help_arguments() -> list[list[str]]:
    """`bspkit --help`, and `bspkit COMMAND --help` for every command and cluster action."""
    commands = [[c.NAME] for c in cli.COMMANDS]
    return [[], *commands, *(["cluster", action] for action in ("up", "down", "status"))]


def test_the_parser_imports_no_numeric_package() -> None:
    """A fresh interpreter that builds the parser and formats every command's help has loaded
    the command modules and none of numpy, scipy, matplotlib."""
    code = (
        "import argparse, sys\n"
        "from bspkit import cli\n"
        "parser = cli.build_parser()\n"
        "subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))\n"
        "parser.format_help()\n"
        "for sub in subparsers.choices.values():\n"
        "    sub.format_help()\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(PYDIR))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert {f"bspkit.commands.{c.NAME}" for c in cli.COMMANDS} <= loaded
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY) == []


def test_help_runs_in_an_interpreter_without_numpy() -> None:
    """The man pages are made at build time from --help by the system python3, which need not
    have numpy: there every --help exits 0 and prints the usage."""
    if not SYSTEM_PYTHON.is_file():
        pytest.skip(f"no {SYSTEM_PYTHON}")
    env = dict(os.environ, PYTHONPATH=str(PYDIR), PYTHONNOUSERSITE="1")

    def runs(code: str) -> bool:
        return subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, env=env, timeout=60).returncode == 0

    if not runs("import sys; sys.exit(sys.version_info < (3, 11))"):
        pytest.skip(f"{SYSTEM_PYTHON} is older than Python 3.11, which bspkit needs")
    if runs("import numpy"):
        pytest.skip(f"{SYSTEM_PYTHON} has numpy: no interpreter without numpy to run --help in")
    for args in help_arguments():
        done = subprocess.run(
            [SYSTEM_PYTHON, "-m", "bspkit", *args, "--help"], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0 and done.stdout.startswith("usage: bspkit"), (args, done.stderr)
