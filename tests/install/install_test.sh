#!/bin/sh
# install_test.sh BUILD_DIR WORK_DIR CMAKE GENERATOR MAKE_PROGRAM CC VERSION [extra C flags...]
#
# Installs the build tree BUILD_DIR with `cmake --install` into WORK_DIR/prefix and checks
# the installed copy: its files (and that bsp_unchecked is not among them), the man pages
# (their .TH header, NAME line, and `man -l` if man is there), then builds
# tests/install/hello_bsp.c against it three ways and runs each with the installed
# `bsprun -n 2`:
#   1. the installed bspcc (shared libbsp with an rpath; also --bsp-static);
#   2. pkg-config with PKG_CONFIG_PATH=<prefix>/<libdir>/pkgconfig;
#   3. a CMake project (tests/install/consumer) with find_package(bspkit VERSION),
#      linking bspkit::bsp (static) and bspkit::bsp_shared.
# Also builds tests/compat/mcbsp_style.c with the installed bspcc (the installed mcbsp.h).
# Then it moves the installation elsewhere and checks that bspcc and bspkit.pc follow.
# The extra C flags (sanitizer builds) are added to every compilation.
set -u
if [ $# -lt 7 ]; then
  echo "usage: $0 BUILD_DIR WORK_DIR CMAKE GENERATOR MAKE_PROGRAM CC VERSION [extra C flags...]" >&2
  exit 2
fi
build=$1 work=$2 cmake=$3 generator=$4 make_program=$5 cc=$6 version=$7
shift 7
extra_flags="$*"
here=$(cd "$(dirname "$0")" && pwd)
hello=$here/hello_bsp.c

failures=0
pass() { echo "ok:   $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
step() { echo; echo "== $1"; }

# runs CMD..., shows its output; fails with DESCRIPTION when its status is not 0
check() {
  what=$1
  shift
  "$@" >"$work/log" 2>&1
  st=$?
  if [ $st = 0 ]; then
    pass "$what"
    return 0
  fi
  fail "$what (status $st): $*"
  sed 's/^/    /' "$work/log"
  return 1
}

# run_hello DESCRIPTION PROGRAM: the installed bsprun -n 2 runs it correctly
run_hello() {
  if out=$("$prefix/bin/bsprun" -n 2 "$2" 2>&1) && [ "$out" = "hello_bsp: ok on 2 processes (back end threads)" ]; then
    pass "$1: bsprun -n 2 -> $out"
  else
    fail "$1: bsprun -n 2 $2 printed: $out"
  fi
}

rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
prefix=$work/prefix

step "cmake --install $build --prefix $prefix"
check "cmake --install" "$cmake" --install "$build" --prefix "$prefix" || {
  echo "cannot install: is the build complete?"
  exit 1
}

step "installed files"
for f in bin/bsprun bin/bspcc include/bsp.h include/bspkit.h include/mcbsp.h; do
  [ -f "$prefix/$f" ] && pass "$f" || fail "$f is not installed"
done
for f in bin/bsprun bin/bspcc; do
  [ -x "$prefix/$f" ] || fail "$f is not executable"
done
pc=$(find "$prefix" -name bspkit.pc | head -n 1)
[ -n "$pc" ] && pass "bspkit.pc: ${pc#"$prefix"/}" || fail "bspkit.pc is not installed"
libdir=$(dirname "$(find "$prefix" -name 'libbsp.a' | head -n 1)")
[ -f "$libdir/libbsp.a" ] && pass "libbsp.a: ${libdir#"$prefix"/}" || fail "libbsp.a is not installed"
ls "$libdir"/libbsp.so* >/dev/null 2>&1 && pass "libbsp.so: $(cd "$libdir" && echo libbsp.so*)" ||
  fail "libbsp.so is not installed"
for f in bspkitConfig.cmake bspkitConfigVersion.cmake bspkitTargets.cmake; do
  found=$(find "$prefix" -name "$f" | head -n 1)
  [ -n "$found" ] && pass "${found#"$prefix"/}" || fail "$f is not installed"
done
unchecked=$(find "$prefix" -name '*bsp_unchecked*')
[ -z "$unchecked" ] && pass "bsp_unchecked is not installed" || fail "installed: $unchecked"
grep -q 'bsp_unchecked' "$(find "$prefix" -name 'bspkitTargets*.cmake' | head -n 1)" 2>/dev/null &&
  fail "bsp_unchecked is in the exported targets"

step "man pages: bsprun(1), bspcc(1), bspkit(1), bspkit-run(1), bsp_put(3), bspk_reduce(3) (scripts/man1.py, man3.py)"
for entry in bsprun:1 bspcc:1 bspkit:1 bspkit-run:1 bsp_put:3 bspk_reduce:3; do
  prog=${entry%:*} section=${entry#*:}
  page=$(find "$prefix" -path "*/man$section/$prog.$section" | head -n 1)
  if [ -z "$page" ]; then
    fail "$prog.$section is not installed"
    continue
  fi
  upper=$(printf '%s' "$prog" | tr '[:lower:]' '[:upper:]')
  th=$(grep -m 1 '^\.TH ' "$page")
  case $th in
    ".TH $upper \"$section\" "*"\"bspkit $version\""*) pass "${page#"$prefix"/}: $th" ;;
    *) fail "${page#"$prefix"/}: the .TH header is '$th'" ;;
  esac
  grep -q "^$(printf '%s' "$prog" | sed 's/-/\\\\-/g') \\\\- " "$page" || fail "$prog.$section has no NAME line '$prog \\- ...'"
  grep -q '^\.SH SYNOPSIS' "$page" || fail "$prog.$section has no SYNOPSIS"
  if command -v man >/dev/null 2>&1; then
    out=$(MANWIDTH=80 man -l "$page" 2>/dev/null | head -n 1)
    case $out in "$upper($section)"*) pass "man -l $prog.$section: $out" ;; *) fail "man -l $prog.$section printed '$out'" ;; esac
  fi
done

step "1. the installed bspcc"
cd "$work" || exit 1
# shellcheck disable=SC2086 # extra_flags: words on purpose
if check "bspcc -o hello_bspcc" env BSPCC_CC="$cc" "$prefix/bin/bspcc" $extra_flags -O2 -Wall -Wextra -Werror \
     -o hello_bspcc "$hello"; then
  run_hello "bspcc (shared libbsp)" ./hello_bspcc
fi
if check "bspcc --bsp-static -o hello_bspcc_static" env BSPCC_CC="$cc" "$prefix/bin/bspcc" $extra_flags \
     --bsp-static -O2 -o hello_bspcc_static "$hello"; then
  run_hello "bspcc --bsp-static" ./hello_bspcc_static
fi
# A MulticoreBSP-style program (tests/compat) against the installed mcbsp.h and shared libbsp.
# shellcheck disable=SC2086
if check "bspcc -o mcbsp_style (installed mcbsp.h)" env BSPCC_CC="$cc" "$prefix/bin/bspcc" \
     $extra_flags -O2 -Wall -Wextra -Werror -o mcbsp_style "$here/../compat/mcbsp_style.c"; then
  if out=$("$prefix/bin/bsprun" -n 2 ./mcbsp_style 2>&1) && [ "$out" = "mcbsp_style: all checks passed" ]; then
    pass "installed bsprun -n 2 ./mcbsp_style"
  else
    fail "installed bsprun -n 2 ./mcbsp_style: $out"
  fi
fi
showme=$(env BSPCC_CC="$cc" "$prefix/bin/bspcc" --showme x.c)
case $showme in
  *"-I$prefix/include"*"-L$libdir"*"-lbsp -pthread") pass "bspcc --showme uses the installed paths: $showme" ;;
  *) fail "bspcc --showme: $showme" ;;
esac

step "2. pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
  export PKG_CONFIG_PATH
  PKG_CONFIG_PATH=$(dirname "$pc")
  v=$(pkg-config --modversion bspkit)
  [ "$v" = "$version" ] && pass "pkg-config --modversion bspkit: $v" || fail "pkg-config --modversion: '$v', not $version"
  cflags=$(pkg-config --cflags bspkit) libs=$(pkg-config --libs bspkit) pclibdir=$(pkg-config --variable=libdir bspkit)
  echo "   cflags: $cflags"
  echo "   libs:   $libs"
  case $libs in *-lbsp*-pthread*) ;; *) fail "pkg-config --libs bspkit: $libs" ;; esac
  # shellcheck disable=SC2086
  if check "cc \$(pkg-config --cflags --libs bspkit)" "$cc" $extra_flags -std=c11 -O2 $cflags \
       -o hello_pc "$hello" $libs "-Wl,-rpath,$pclibdir"; then
    run_hello "pkg-config" ./hello_pc
  fi
  bsprun_pc=$(pkg-config --variable=bsprun bspkit)
  [ -x "$bsprun_pc" ] && pass "pkg-config --variable=bsprun: $bsprun_pc" || fail "pkg-config bsprun variable: $bsprun_pc"
else
  fail "pkg-config is not installed (Debian: apt-get install pkg-config)"
fi

step "3. a CMake project with find_package(bspkit $version)"
set -- -G "$generator"
[ -z "$make_program" ] || set -- "$@" "-DCMAKE_MAKE_PROGRAM=$make_program"
if check "configure consumer" "$cmake" -S "$here/consumer" -B "$work/consumer" "$@" \
     -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_COMPILER=$cc" "-DCMAKE_C_FLAGS=$extra_flags" \
     "-DCMAKE_PREFIX_PATH=$prefix" "-DEXPECTED_PREFIX=$prefix" "-DHELLO_SRC=$hello" \
     "-DBSPKIT_VERSION_WANTED=$version"; then
  grep 'bspkit .* found in' "$work/log" | sed 's/^/   /'
  if check "build consumer" "$cmake" --build "$work/consumer"; then
    run_hello "find_package: bspkit::bsp" "$work/consumer/hello_static"
    run_hello "find_package: bspkit::bsp_shared" "$work/consumer/hello_shared"
  fi
fi
# The version file: a later minor version must not be accepted.
if "$cmake" -S "$here/consumer" -B "$work/consumer-v99" "$@" "-DCMAKE_C_COMPILER=$cc" \
     "-DCMAKE_PREFIX_PATH=$prefix" "-DEXPECTED_PREFIX=$prefix" "-DHELLO_SRC=$hello" \
     -DBSPKIT_VERSION_WANTED=99.0 >"$work/log" 2>&1; then
  fail "find_package(bspkit 99.0) succeeded"
elif grep -q 'requested version "99.0"' "$work/log"; then
  pass "find_package(bspkit 99.0) is refused: bspkitConfigVersion.cmake works"
else
  fail "find_package(bspkit 99.0) failed for another reason:"
  sed 's/^/    /' "$work/log"
fi

step "relocation: the installation moved to another directory"
moved=$work/moved
mv "$prefix" "$moved"
prefix=$moved
# shellcheck disable=SC2086
if check "moved bspcc -o hello_moved" env BSPCC_CC="$cc" "$prefix/bin/bspcc" $extra_flags -o hello_moved "$hello"; then
  run_hello "moved bspcc" ./hello_moved
fi
if command -v pkg-config >/dev/null 2>&1; then
  PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name bspkit.pc | head -n 1)")
  incl=$(pkg-config --variable=includedir bspkit)
  [ -f "$incl/bsp.h" ] && pass "moved bspkit.pc: includedir $incl" || fail "moved bspkit.pc: includedir $incl"
fi

echo
if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all install checks passed"
