#!/usr/bin/env bash
# wrapper-cc.sh WRAPPER ARGS... - runs another BSPlib's compiler wrapper (BSPonMPI's bspcc,
# MulticoreBSP's bspcc, LPF's lpfcc) with a command line that such a wrapper reads right.
# The portable build's C compiler when it is given BSPKIT_PORTABLE_WRAPPER (cmake/
# BspkitPortableWrapper.cmake writes the compiler command that calls this script).
#
# These wrappers are shell scripts that sort their arguments into options, sources, objects
# and libraries and then call the real compiler in an order of their own. They take a word
# that is not an option for an input file: BSPonMPI's bspcc compiles the target after -MT
# as an object ("input file ... is the same as output file") and the archive of a link line
# as a source. So every argument reaches the wrapper as one word that starts with '-', or
# as a source, an object or the output:
#   -MD -MT T -MF F   (CMake's depfile)  -> -Wp,-MD,F  (the same file, written by cpp)
#   -MMD ...                             -> -Wp,-MMD,F
#   -include F, -isystem D, -I D, ...    -> -includeF, -isystemD, -ID (the joined forms)
#   a library file in a link (.a, .so)   -> -Wl,FILE   (the linker gets it in its place)
# Sources (.c), objects (.o), -o OUT and everything else pass unchanged, in their order.
set -u
wrapper=$1
shift
args=()
dep_kind="" dep_file=""
link=1
for a in "$@"; do [ "$a" = -c ] && link=0; done
while [ $# -gt 0 ]; do
  a=$1
  shift
  case $a in
    -o)
      args+=("$a" "${1-}")
      shift
      ;;
    -MD | -MMD) dep_kind=${a#-} ;;
    -MT | -MQ) shift ;;
    -MT?* | -MQ?*) ;;
    -MF)
      dep_file=${1-}
      shift
      ;;
    -MF?*) dep_file=${a#-MF} ;;
    -include | -imacros | -isystem | -idirafter | -iquote | -I | -L | -D | -U)
      if [ $# -gt 0 ]; then
        args+=("$a$1")
        shift
      else
        args+=("$a")
      fi
      ;;
    -*) args+=("$a") ;;
    *.a | *.so | *.so.[0-9]* | *.dylib)
      if ((link)); then args+=("-Wl,$a"); else args+=("$a"); fi
      ;;
    *) args+=("$a") ;;
  esac
done
if [ -n "$dep_kind" ]; then
  if [ -n "$dep_file" ]; then
    args=("-Wp,-$dep_kind,$dep_file" "${args[@]}")
  else
    args=("-$dep_kind" "${args[@]}")
  fi
fi
exec "$wrapper" "${args[@]}"
