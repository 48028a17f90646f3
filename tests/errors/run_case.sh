#!/bin/sh
# run_case.sh EXPECT_FAILURE BSPRUN BACKEND P PROGRAM CASE
# Runs error case CASE of PROGRAM with bsprun -b BACKEND -n P through expect_failure.sh,
# with the expectation the case carries (PROGRAM --expect CASE: status, then the regular
# expression; see error_case.h).
set -u
[ $# -eq 6 ] || { echo "usage: $0 EXPECT_FAILURE BSPRUN BACKEND P PROGRAM CASE" >&2; exit 2; }
expectation=$("$5" --expect "$6") || { echo "$0: $5 --expect $6 failed" >&2; exit 2; }
status=$(printf '%s\n' "$expectation" | sed -n 1p)
regex=$(printf '%s\n' "$expectation" | sed -n 2p)
exec sh "$1" 10 "$status" "$regex" "$2" -b "$3" -n "$4" "$5" "$6"
