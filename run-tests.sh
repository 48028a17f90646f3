#!/usr/bin/env bash
# run-tests.sh [--quick | --fast] - installs what is missing, builds bspkit and runs its tests
# (docs/testing.md). The full run (no option, what CI runs):
#   1. the style check (scripts/lint.sh: clang-format and ruff);
#   2. the release suite: every ctest test on a release build (build/), on every back end
#      built (threads, and mpi and mpi-rma when MPI is there), then pytest tests/python;
#   3. under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and
#   4. under ThreadSanitizer (build-tsan/): the library's, the probe's and the tools' tests and
#      one case of each algorithm, on threads (ctest -LE 'heavy|nosan|install|sweep': not the
#      algorithms' further cases, labelled sweep, which step 2 runs).
# Options: --fast   steps 1 and 2 only.
#          --quick  the quick tier: the release build, ctest -L quick and
#                   pytest -m "not slow" (no lint, no sanitizers).
# Each suite's durations are kept as JUnit XML in <build>/test-results/; scripts/slowest-tests.py
# lists the slowest tests.
set -uo pipefail
cd "$(dirname "$0")"
mode=full
for arg in "$@"; do
  case "$arg" in
    --fast) mode=fast ;;
    --quick) mode=quick ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "run-tests.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

scripts/setup.sh || exit 1
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
jobs=$(nproc)
failed=()
results=() # this run's JUnit XML files

run_suite() { # name build-dir ctest-args...
  local name="$1" dir="$2"; shift 2
  echo "=== $name: ctest in $dir $* ==="
  mkdir -p "$dir/test-results"
  results+=("$dir/test-results/ctest-$name.xml")
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --output-junit "$PWD/test-results/ctest-$name.xml" "$@") \
    || failed+=("$name")
}

run_pytest() { # name pytest-args...
  local name="$1"; shift
  echo "=== $name: pytest tests/python $* ==="
  mkdir -p build/test-results
  results+=("build/test-results/pytest-$name.xml")
  BSPKIT_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest -q -p no:cacheprovider \
    --junitxml="$PWD/build/test-results/pytest-$name.xml" "$@" tests/python || failed+=("$name")
}

if [ "$mode" != quick ]; then
  echo "=== lint: scripts/lint.sh ==="
  scripts/lint.sh || failed+=(lint)
fi

scripts/build.sh build -DCMAKE_BUILD_TYPE=Release || exit 1
if [ "$mode" = quick ]; then
  run_suite quick build -L quick
  # the probe's output checks ran in ctest (probe.*) where the quick tier has them
  run_pytest python-quick -m "not slow and not probe_run"
else
  run_suite release build
  run_pytest python -m "not probe_run" # those ran in ctest, as probe.<case>.<backend>.p<P>
fi

if [ "$mode" = full ]; then
  sanitizer_tests=(-LE 'heavy|nosan|install|sweep')
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=address -DBSPKIT_TEST_BACKENDS=threads || exit 1
  ASAN_OPTIONS=detect_leaks=1:exitcode=66 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite asan+ubsan build-asan "${sanitizer_tests[@]}"
  scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=thread -DBSPKIT_TEST_BACKENDS=threads || exit 1
  # TSan needs a fixed memory layout on kernels with high mmap randomisation.
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 setarch "$(uname -m)" -R true 2>/dev/null \
    && tsan_prefix=(setarch "$(uname -m)" -R) || tsan_prefix=()
  echo "=== tsan: ctest in build-tsan ${sanitizer_tests[*]} ==="
  mkdir -p build-tsan/test-results
  results+=(build-tsan/test-results/ctest-tsan.xml)
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
    "${tsan_prefix[@]}" bash -c 'cd build-tsan && ctest --output-on-failure -j"$1" --output-junit "$PWD/test-results/ctest-tsan.xml" "${@:2}"' \
    tsan "$jobs" "${sanitizer_tests[@]}" || failed+=(tsan)
  echo "=== tsan: done ==="
fi

mapfile -t written < <(ls "${results[@]}" 2>/dev/null)
((${#written[@]})) && .venv/bin/python scripts/slowest-tests.py "${written[@]}"
if ((${#failed[@]})); then
  echo "FAILED suites: ${failed[*]}"
  exit 1
fi
echo "all suites passed"
