#!/usr/bin/env bash
# lint.sh [--fix] - checks the one code style of bspkit: C with clang-format (.clang-format)
# and Python with ruff (python/pyproject.toml: ruff check and ruff format). Exits 1 when a
# file is off style, listing it; --fix rewrites the files instead.
set -uo pipefail
cd "$(dirname "$0")/.."
fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  '') ;;
  -h | --help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "lint.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || { echo "lint.sh: clang-format is missing (scripts/setup.sh installs it)" >&2; exit 2; }
[ -x .venv/bin/ruff ] || { echo "lint.sh: .venv/bin/ruff is missing (scripts/setup.sh installs it)" >&2; exit 2; }

mapfile -t c_files < <(git ls-files '*.c' '*.h')
status=0
if ((fix)); then
  clang-format -i "${c_files[@]}"
  .venv/bin/ruff check --fix --quiet python tests/python examples/python
  .venv/bin/ruff format --quiet python tests/python examples/python
  exit 0
fi
off=()
for f in "${c_files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || off+=("$f")
done
if ((${#off[@]})); then
  echo "lint: C files off the .clang-format style (scripts/lint.sh --fix rewrites them):"
  printf '  %s\n' "${off[@]}"
  status=1
fi
.venv/bin/ruff check --quiet python tests/python examples/python || status=1
.venv/bin/ruff format --check --quiet python tests/python examples/python || status=1
((status == 0)) && echo "lint: C and Python files follow the style"
exit "$status"
