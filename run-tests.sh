#!/usr/bin/env bash
# run-tests.sh - installs what is missing, builds bspkit and runs every test:
#   1. the whole suite on a release build (build/), on every back end built (threads,
#      and mpi and mpi-rma when MPI is there);
#   2. the suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/), threads;
#   3. the suite under ThreadSanitizer (build-tsan/), threads;
# and the Python tests (pytest tests/python) after step 1, and the style check
# (scripts/lint.sh: clang-format and ruff).
# The sanitizer runs skip the tests labelled heavy (100 MiB h-relations) and nosan (memory
# limits, which the sanitizers' shadow memory cannot live under).
# Options: --fast  only step 1.
set -uo pipefail
cd "$(dirname "$0")"
fast=0
for arg in "$@"; do
  case "$arg" in
    --fast) fast=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-tests.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

scripts/setup.sh || exit 1
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
jobs=$(nproc)
failed=()

run_suite() { # name build-dir ctest-args...
  local name="$1" dir="$2"; shift 2
  echo "=== $name: ctest in $dir ==="
  (cd "$dir" && ctest --output-on-failure -j"$jobs" "$@") || failed+=("$name")
}

echo "=== lint: scripts/lint.sh ==="
scripts/lint.sh || failed+=(lint)

scripts/build.sh build -DCMAKE_BUILD_TYPE=Release || exit 1
run_suite release build
if [ -d tests/python ]; then
  echo "=== python: pytest tests/python ==="
  BSPKIT_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest -q tests/python || failed+=(python)
fi

if [ "$fast" -eq 0 ]; then
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=address -DBSPKIT_TEST_BACKENDS=threads || exit 1
  ASAN_OPTIONS=detect_leaks=1:exitcode=66 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite asan+ubsan build-asan -LE 'heavy|nosan|install'
  scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=thread -DBSPKIT_TEST_BACKENDS=threads || exit 1
  # TSan needs a fixed memory layout on kernels with high mmap randomisation.
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 setarch "$(uname -m)" -R true 2>/dev/null \
    && tsan_prefix=(setarch "$(uname -m)" -R) || tsan_prefix=()
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
    "${tsan_prefix[@]}" bash -c 'cd build-tsan && ctest --output-on-failure -j'"$jobs"' -LE "heavy|nosan|install"' \
    || failed+=(tsan)
  echo "=== tsan: done ==="
fi

if ((${#failed[@]})); then
  echo "FAILED suites: ${failed[*]}"
  exit 1
fi
echo "all suites passed"
