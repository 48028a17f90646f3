#!/bin/sh
# expect_failure.sh TIMEOUT_S EXPECTED_STATUS REGEX cmd [args...]
#
# Runs cmd under timeout(1) (TERM after TIMEOUT_S seconds, KILL 2 s later) and passes
# (exit 0) only if it ended in time, exited with EXPECTED_STATUS and its stderr has a line
# matching the extended regular expression REGEX (grep -E). Otherwise prints what happened
# (status, elapsed time, expectation, stderr and stdout) and exits 1. Reports the elapsed
# time either way. Exit status 2: bad usage of this script.
# EXPECTED_STATUS may be "nonzero" (any failure that is not the timeout's), and REGEX may
# be empty (no check of stderr), for a process that dies without a word (a signal).
# With EXPECTED_STATUS 1 and a REGEX (a failure libbsp reports), bspkit must have printed
# exactly one message (one line starting with "bspkit: "), however many processes failed.
set -u

if [ $# -lt 4 ]; then
  echo "usage: $0 TIMEOUT_S EXPECTED_STATUS REGEX cmd [args...]" >&2
  exit 2
fi
limit=$1
expected=$2
regex=$3
shift 3
case $limit in '' | *[!0-9.]*) echo "$0: TIMEOUT_S must be a number of seconds, not '$limit'" >&2; exit 2 ;; esac
case $expected in nonzero) ;; '' | *[!0-9]*) echo "$0: EXPECTED_STATUS must be a number or 'nonzero', not '$expected'" >&2; exit 2 ;; esac
command -v timeout >/dev/null 2>&1 || { echo "$0: timeout(1) (GNU coreutils) is needed" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/expect_failure.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

now_ms() {   # milliseconds since the epoch (whole seconds where date has no %N)
  t=$(date +%s%N 2>/dev/null)
  case $t in
    *N | '' | *[!0-9]*) echo $(( $(date +%s) * 1000 )) ;;
    *) echo $(( t / 1000000 )) ;;
  esac
}

start=$(now_ms)
timeout -k 2 "$limit" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
status=$?
end=$(now_ms)
ms=$((end - start))
elapsed=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))

show_output() {
  echo "---- stderr ----"
  cat "$tmp/stderr"
  echo "---- stdout (last 40 lines) ----"
  tail -n 40 "$tmp/stdout"
  echo "----------------"
}

fail() {
  echo "FAIL: $1"
  echo "  command:  $cmdline"
  echo "  status:   $status (expected $expected)"
  echo "  elapsed:  ${elapsed} s (limit $limit s)"
  echo "  expected on stderr (grep -E): $regex"
  show_output
  exit 1
}

cmdline=$*
# timeout(1) exits 124 after sending TERM, and 128+9 = 137 when it had to KILL.
if [ "$status" != "$expected" ] && { [ $status = 124 ] || [ $status = 137 ]; }; then
  fail "did not end within $limit s (killed by timeout)"
fi
if [ "$expected" = nonzero ]; then
  [ "$status" != 0 ] || fail "ended with status 0"
  expected=$status
fi
if [ "$status" != "$expected" ]; then
  if [ "$status" -gt 128 ]; then
    fail "ended with status $status (signal $((status - 128)))"
  fi
  fail "ended with status $status, not $expected"
fi
if [ -n "$regex" ] && ! grep -E -q -e "$regex" "$tmp/stderr"; then
  fail "stderr has no line matching the expected message"
fi

if [ -n "$regex" ] && [ "$expected" = 1 ]; then
  messages=$(grep -c -e '^bspkit: ' "$tmp/stderr")
  [ "$messages" = 1 ] || fail "bspkit printed $messages messages, expected exactly one"
fi

echo "PASS: status $status in ${elapsed} s; stderr:"
grep -E -e "$regex" "$tmp/stderr" | head -n 5 | sed 's/^/  /'
if [ $((ms)) -gt 5000 ]; then
  echo "WARNING: took ${elapsed} s, more than the 5 s target"
fi
exit 0
