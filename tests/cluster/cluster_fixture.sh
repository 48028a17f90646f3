#!/bin/sh
# cluster_fixture.sh up|down PYTHON SOURCE_DIR STATE_DIR NAME [bspkit cluster up options...]
#
# The ctest fixture of the emulated cluster's tests (tests/cluster/CMakeLists.txt).
# up: when this machine cannot make an emulated cluster (not root; no ip, tc, unshare,
#   taskset or mpirun; no network namespace with a tbf-shaped veth pair, as in a container
#   without the capabilities), writes why to STATE_DIR/NAME.skip and exits 77, which ctest
#   counts as skipped (and cluster_run.sh skips every cluster test with that reason). Else
#   removes a cluster an interrupted run left, and makes the cluster with `bspkit cluster up`.
#   A missing tool is a failure instead (exit 1) under BSPKIT_REQUIRE_DEPS=1 (run-tests.sh:
#   scripts/setup.sh, which installs them all, ran first).
# down: `bspkit cluster down`; skipped (77) when up was.
set -u
if [ $# -lt 5 ]; then
  echo "usage: $0 up|down PYTHON SOURCE_DIR STATE_DIR NAME [up options...]" >&2
  exit 2
fi
action=$1 python=$2 src=$3 state=$4 name=$5
shift 5
skip=$state/$name.skip
bspkit() { PYTHONPATH="$src/python" "$python" -m bspkit "$@"; }

case $action in
  up)
    mkdir -p "$state" || exit 1
    rm -f "$skip"
    reason=
    if [ "$(id -u)" != 0 ]; then
      reason="not root: the emulated cluster needs network namespaces, veth pairs and tc"
    else
      for tool in ip tc unshare taskset mpirun; do
        command -v "$tool" >/dev/null 2>&1 && continue
        reason="$tool is not installed"
        if [ "${BSPKIT_REQUIRE_DEPS:-}" = 1 ]; then
          printf '%s\n' "$reason (scripts/setup.sh installs it)" >"$skip"
          echo "FAIL: the tests on the emulated cluster: $reason, which scripts/setup.sh installs" \
               "(BSPKIT_REQUIRE_DEPS=1: a missing dependency is a failure, not a skip)"
          exit 1
        fi
        break
      done
    fi
    if [ -z "$reason" ]; then
      # What up needs from the kernel, tried in a namespace that vanishes with the command.
      if ! out=$(unshare --net sh -c 'ip link add name bkt0 type veth peer name bkt1 &&
                   tc qdisc add dev bkt0 root tbf rate 1gbit burst 64kb latency 50ms' 2>&1); then
        reason="cannot make a network namespace with a tbf-shaped veth pair here: $out"
      fi
    fi
    if [ -n "$reason" ]; then
      printf '%s\n' "$reason" >"$skip"
      echo "SKIP: the tests on the emulated cluster: $reason"
      exit 77
    fi
    bspkit cluster down --name "$name" --state-dir "$state" >/dev/null || exit 1
    exec env PYTHONPATH="$src/python" "$python" -m bspkit cluster up --name "$name" --state-dir "$state" "$@"
    ;;
  down)
    if [ -f "$skip" ]; then
      echo "SKIP: no cluster was made: $(cat "$skip")"
      exit 77
    fi
    exec env PYTHONPATH="$src/python" "$python" -m bspkit cluster down --name "$name" --state-dir "$state"
    ;;
  *)
    echo "$0: up or down, not '$action'" >&2
    exit 2
    ;;
esac
