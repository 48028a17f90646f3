#!/bin/sh
# run_case.sh EXPECT_FAILURE BSPRUN BACKEND P PROGRAM CASE [BSPRUN_OPTION...]
# Runs error case CASE of PROGRAM with bsprun -b BACKEND [BSPRUN_OPTION...] -n P through
# expect_failure.sh, with the expectation the case carries (PROGRAM --expect CASE: status,
# then the regular expression; see error_case.h). The options are e.g. an emulated
# cluster's --hostfile.
set -u
[ $# -ge 6 ] || { echo "usage: $0 EXPECT_FAILURE BSPRUN BACKEND P PROGRAM CASE [BSPRUN_OPTION...]" >&2; exit 2; }
expect_failure=$1 bsprun=$2 backend=$3 nprocs=$4 program=$5 case=$6
shift 6
expectation=$("$program" --expect "$case") || { echo "$0: $program --expect $case failed" >&2; exit 2; }
status=$(printf '%s\n' "$expectation" | sed -n 1p)
regex=$(printf '%s\n' "$expectation" | sed -n 2p)
exec sh "$expect_failure" 10 "$status" "$regex" "$bsprun" -b "$backend" "$@" -n "$nprocs" "$program" "$case"
