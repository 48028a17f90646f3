#!/usr/bin/env bash
# run-tests.sh [--quick | --fast] - installs what is missing, builds bspkit and runs its tests
# (docs/testing.md says what each tier covers). The full run (no option; what .ci/run runs):
#   1. the style check (scripts/lint.sh: clang-format and ruff);
#   2. the release suite: every ctest test on a release build (build/), on every back end
#      built (threads, and mpi and mpi-rma when MPI is there), then pytest tests/python;
#   3. under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and
#   4. under ThreadSanitizer (build-tsan/), on threads: the library's, the probe's and the
#      tools' tests and each algorithm's first case (ctest -LE 'heavy|nosan|install|sweep';
#      the algorithms' other cases, labelled sweep, run in step 2).
#   pytest runs beside steps 3 and 4 (it uses one core), its output printed after theirs.
# Options: --fast   steps 1 and 2 only (the release suite).
#          --quick  the quick tier: the release build, ctest -L 'quick|unit' (the tests
#                   labelled quick, and the unit tests) and pytest -m "not slow"
#                   (no lint, no sanitizers).
# Each suite's durations are kept as JUnit XML in <build>/test-results/, and the 10 slowest
# tests are printed at the end (scripts/slowest-tests.py).
# Every tier runs scripts/setup.sh first, so what it installs must be there: a test skipped for
# one of those dependencies fails (BSPKIT_REQUIRE_DEPS=1: tests/python/conftest.py, the emulated
# cluster's fixture), pytest prints every skip's reason (-rs), and a build without the MPI back
# ends or without OpenBLAS, whose tests would be left out silently, fails the run.
# BSPKIT_REQUIRE_DEPS=0 in the environment lets such tests skip instead.
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
export BSPKIT_REQUIRE_DEPS="${BSPKIT_REQUIRE_DEPS:-1}"
jobs=$(nproc)
# Two tests per core: most of a test's time is spent waiting, on MPI's start-up (about 0.15 s
# of CPU in 0.55 s) in the release suite, and under ThreadSanitizer, which sleeps 1 s at an
# exit while other threads still run (every error case) (measured on 2 cores: the mpi-rma
# error and semantic tests at p = 3, 4 in 18-31 s with -j4, 38-51 s with -j2).
test_jobs=$((2 * jobs))
failed=()
results=() # this run's JUnit XML files

run_suite() { # name build-dir parallel-jobs ctest-args...
  local name="$1" dir="$2" parallel="$3"; shift 3
  echo "=== $name: ctest -j$parallel in $dir $* ==="
  mkdir -p "$dir/test-results"
  results+=("$dir/test-results/ctest-$name.xml")
  (cd "$dir" && ctest --output-on-failure -j"$parallel" --output-junit "$PWD/test-results/ctest-$name.xml" "$@") \
    || failed+=("$name")
}

# The slowest tests of this run, the suites that failed, and the exit status.
exit_status() {
  local written
  mapfile -t written < <(ls "${results[@]}" 2>/dev/null)
  ((${#written[@]})) && .venv/bin/python scripts/slowest-tests.py "${written[@]}"
  if ((${#failed[@]})); then
    echo "FAILED suites: ${failed[*]}"
    exit 1
  fi
  echo "all suites passed"
  exit 0
}

pytest_command() { # name pytest-args...: pytest tests/python on build/, its JUnit XML kept
  local name="$1"; shift
  mkdir -p build/test-results
  results+=("build/test-results/pytest-$name.xml")
  BSPKIT_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest -q -rs -p no:cacheprovider \
    --junitxml="$PWD/build/test-results/pytest-$name.xml" "$@" tests/python
}

# The tests a build registers for what scripts/setup.sh installs: ctest runs only the tests
# there are, so a build that did not find MPI (or OpenBLAS) would pass without its back ends'
# (or the matrix products' and LU's) tests. Under BSPKIT_REQUIRE_DEPS=1 that fails the run.
check_build_dependencies() { # build-dir
  [ "$BSPKIT_REQUIRE_DEPS" = 1 ] || return 0
  local dir="$1" label what count missing=()
  for label in "mpi:Open MPI (the mpi back end)" "mpi-rma:Open MPI (the mpi-rma back end)" \
               "lu:OpenBLAS (LU)" "cannon:OpenBLAS (Cannon's matrix product)"; do
    what=${label#*:}
    label=${label%%:*}
    count=$(cd "$dir" && ctest -N -L "^$label\$" | sed -n 's/^Total Tests: //p')
    [ "${count:-0}" -gt 0 ] || missing+=("no '$label' tests: $what was not found by the build")
  done
  if ((${#missing[@]})); then
    echo "=== FAILED: $dir lacks tests of what scripts/setup.sh installs (BSPKIT_REQUIRE_DEPS=1) ==="
    printf '  %s\n' "${missing[@]}"
    echo "  (scripts/setup.sh installs it; a build configured before it may need rm -rf $dir)"
    failed+=(dependencies)
  fi
}

# A sanitizer build: every target the tests run (bench/ is never run by a test).
sanitizer_build() { # dir cmake-options...
  local dir="$1"; shift
  echo "=== build $dir ($*) ==="
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null \
    && cmake --build "$dir" --target src/all tools/all common/all probe/all algorithms/all tests/all -- -j"$jobs"
}

if [ "$mode" != quick ]; then
  echo "=== lint: scripts/lint.sh ==="
  scripts/lint.sh || failed+=(lint)
fi

scripts/build.sh build -DCMAKE_BUILD_TYPE=Release || exit 1
check_build_dependencies build
if [ "$mode" = quick ]; then
  run_suite quick build "$test_jobs" -L 'quick|unit'
  echo "=== python-quick: pytest -m 'not slow and not probe_run' (probe.smoke ran in ctest) ==="
  pytest_command python-quick -m "not slow and not probe_run" || failed+=(python-quick)
  # the probe's output checks (probe_run) run in ctest, as probe.<case>.<backend>.p<P>
  exit_status
fi
run_suite release build "$test_jobs"
# The probe's output checks (marked probe_run) ran in ctest, as probe.<case>.<backend>.p<P>.
python_args=(-m "not probe_run")
if [ "$mode" = fast ]; then
  echo "=== python: pytest tests/python ${python_args[*]} ==="
  pytest_command python "${python_args[@]}" || failed+=(python)
  exit_status
fi

# The full run: pytest (mostly one process) runs beside the sanitizer builds and suites, which
# have the other core; its output follows theirs.
echo "=== python: pytest tests/python ${python_args[*]}, beside the sanitizer suites ==="
mkdir -p build/test-results
pytest_command python "${python_args[@]}" >build/test-results/pytest-python.log 2>&1 &
pytest_pid=$!
sanitizer_tests=(-LE 'heavy|nosan|install|sweep')
# ASan+UBSan also on procs, each case at p = 3 only (the engine's code is the same at every p;
# about 80 runs, 10 s here); TSan on threads alone (procs has one thread per process).
if sanitizer_build build-asan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=address "-DBSPKIT_TEST_BACKENDS=threads;procs"; then
  ASAN_OPTIONS=detect_leaks=1:exitcode=66 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite asan+ubsan build-asan "$test_jobs" "${sanitizer_tests[@]}" -E '[.]procs[.]p([0-24-9]|[0-9][0-9]+)$'
else
  failed+=(asan-build)
fi
if sanitizer_build build-tsan -DCMAKE_BUILD_TYPE=Debug -DBSPKIT_SANITIZE=thread -DBSPKIT_TEST_BACKENDS=threads; then
  # TSan needs a fixed memory layout on kernels with high mmap randomisation.
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 setarch "$(uname -m)" -R true 2>/dev/null \
    && tsan_prefix=(setarch "$(uname -m)" -R) || tsan_prefix=()
  echo "=== tsan: ctest in build-tsan ${sanitizer_tests[*]} ==="
  mkdir -p build-tsan/test-results
  results+=(build-tsan/test-results/ctest-tsan.xml)
  TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
    "${tsan_prefix[@]}" bash -c 'cd build-tsan && ctest --output-on-failure -j"$1" --output-junit "$PWD/test-results/ctest-tsan.xml" "${@:2}"' \
    tsan "$test_jobs" "${sanitizer_tests[@]}" || failed+=(tsan)
  echo "=== tsan: done ==="
else
  failed+=(tsan-build)
fi
wait "$pytest_pid" || failed+=(python)
echo "=== python: the output of pytest ==="
cat build/test-results/pytest-python.log
results+=(build/test-results/pytest-python.xml)
exit_status
