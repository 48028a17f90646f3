#!/usr/bin/env bash
# setup.sh - installs what bspkit needs to build, test and measure, if it is missing:
#   Debian packages: a C compiler, CMake, Ninja, pkg-config, OpenBLAS (CBLAS), Open MPI,
#   clang-format, C++ with TBB, Boost and Highway (the radix sort's peers),
#   ScaLAPACK (the LU peer), Chromium (the report's browser test), fio (the disk suite's peer),
#   iproute2 and util-linux (the emulated cluster: ip, tc, unshare, nsenter, taskset);
#   a Python virtual environment .venv with the analysis packages (python/requirements.txt)
#   and the bspkit command installed from python/.
# Idempotent and quiet when everything is there. Needs root (or sudo) only to install.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

need_packages=()
have() { command -v "$1" >/dev/null 2>&1; }
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] ||
                [ -e "/usr/include/$(uname -m)-linux-gnu/$1" ]; }
have cc || need_packages+=(build-essential)
have make || need_packages+=(make)   # the tests build programs with make CC=bspcc
have cmake || need_packages+=(cmake)
have ninja || need_packages+=(ninja-build)
have pkg-config || need_packages+=(pkg-config)
have timeout || need_packages+=(coreutils)
have clang-format || need_packages+=(clang-format)   # the C style check (scripts/lint.sh)
have_header cblas.h || need_packages+=(libopenblas-dev)
have_header zlib.h || need_packages+=(zlib1g-dev)   # CRC-32 of checkpoint files
have mpicc && have mpirun || need_packages+=(openmpi-bin libopenmpi-dev)
# The sort peers of bench/run_rdxsort_bench.sh (bench/sort_peers.cpp): a C++ compiler, TBB's
# parallel_sort, Boost's spreadsort (headers) and Highway's vqsort (libhwy_contrib); each peer
# is left out of the build without it.
have c++ || need_packages+=(g++)
have_header tbb/parallel_sort.h || need_packages+=(libtbb-dev)
have_header boost/sort/spreadsort/spreadsort.hpp || need_packages+=(libboost-dev)
have_header hwy/contrib/sort/vqsort.h || need_packages+=(libhwy-dev)
# The LU decomposition's peer bench/lu_scalapack.c: ScaLAPACK's pdgetrf (left out without it).
[ -e /usr/lib/x86_64-linux-gnu/libscalapack-openmpi.so ] || ls /usr/lib/*/libscalapack-openmpi.so >/dev/null 2>&1 \
  || need_packages+=(libscalapack-openmpi-dev)
# The report's test in a real browser (tests/python/test_report_imh.py): headless Chromium.
have chromium || need_packages+=(chromium)
# The disk suite's peer bench/run_disk_bench.sh: fio's sequential reads and writes.
have fio || need_packages+=(fio)
# The emulated cluster (bspkit cluster, and the tests on it): ip and tc, unshare, nsenter, taskset.
{ have ip && have tc; } || need_packages+=(iproute2)
{ have unshare && have nsenter && have taskset; } || need_packages+=(util-linux)
have python3 || need_packages+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_packages+=(python3-venv)
# The sanitizer runtimes come with gcc on Debian (libasan, libubsan, libtsan).

if ((${#need_packages[@]})); then
  echo "setup: installing ${need_packages[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    have sudo || { echo "setup: need root (or sudo) to install: ${need_packages[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  if ! { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends \
           "${need_packages[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: installing ${need_packages[*]} failed (output above)" >&2
    exit 1
  fi
  rm -f "$log"
fi

# Python: numpy/scipy/matplotlib for fitting and the report, pytest for the tests.
requirements="$root/python/requirements.txt"
if [ -f "$requirements" ]; then
  venv="$root/.venv"
  stamp="$venv/.requirements.stamp"
  if [ ! -x "$venv/bin/python" ]; then
    echo "setup: creating the Python environment $venv" >&2
    python3 -m venv "$venv"
  fi
  if [ ! -f "$stamp" ] || ! cmp -s "$requirements" "$stamp"; then
    echo "setup: installing Python packages from $requirements" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$stamp"
  fi
  if [ -f "$root/python/pyproject.toml" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e "$root/python"
  fi
fi
