#!/usr/bin/env python3
"""slowest-tests.py [-n N] [FILE.xml ...] - the N (default 10) slowest tests in JUnit XML files.

run-tests.sh keeps one file per suite: build*/test-results/<suite>.xml (ctest --output-junit
and pytest --junitxml); without FILE arguments those are read. Prints seconds, the suite (the
file's name) and the test, slowest first, then each suite's count and summed time.
"""

from __future__ import annotations

import argparse
import glob
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_times(path: Path) -> list[tuple[float, str]]:
    """(seconds, name) of every test case in one JUnit XML file (pytest names: file::test)."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "?")
        classname = case.get("classname", "")
        if classname and classname != name and "." in classname:  # pytest: module path, then test
            name = f"{classname.rsplit('.', 1)[-1]}.py::{name}"
        cases.append((float(case.get("time") or 0), name))
    return cases


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10, help="how many tests to list (default 10)")
    parser.add_argument("files", nargs="*", type=Path, help="JUnit XML files (default: build*/test-results/*.xml)")
    args = parser.parse_args(argv)
    files = args.files or [Path(f) for f in sorted(glob.glob(str(ROOT / "build*" / "test-results" / "*.xml")))]
    if not files:
        print("slowest-tests: no JUnit XML files (run ./run-tests.sh first, or name them)", file=sys.stderr)
        return 2
    rows: list[tuple[float, str, str]] = []
    totals: list[tuple[str, int, float]] = []
    for path in files:
        try:
            cases = test_times(path)
        except (OSError, ET.ParseError) as e:
            print(f"slowest-tests: cannot read {path}: {e}", file=sys.stderr)
            return 1
        suite = f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "test-results" else path.stem
        rows += [(t, suite, name) for t, name in cases]
        totals.append((suite, len(cases), sum(t for t, _ in cases)))
    rows.sort(key=lambda r: -r[0])
    width = max((len(s) for _, s, _ in rows[: args.n]), default=5)
    print(f"{'seconds':>8}  {'suite':<{width}}  test")
    for t, suite, name in rows[: args.n]:
        print(f"{t:8.2f}  {suite:<{width}}  {name}")
    print()
    for suite, count, total in totals:
        print(f"{suite}: {count} tests, {total:.1f} s summed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
