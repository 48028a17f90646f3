# The portable build with another BSPlib's own compiler wrapper: -DBSPKIT_PORTABLE_WRAPPER=CMD
# (bspkit run/validate/probe --bspcc CMD), included before project() since it chooses the C
# compiler. The wrappers of BSPonMPI, MulticoreBSP and LPF are shell scripts that sort their
# arguments themselves and misread CMake's (BSPonMPI's bspcc takes the word after -MT for an
# input: "input file ... is the same as output file"), so the compiler CMake runs is a
# command written here, BUILD/bspkit-wrapper-cc, which calls the wrapper through
# cmake/portable/wrapper-cc.sh: every argument as one word such a wrapper reads right (the
# depfile as -Wp,-MD,FILE, libraries of a link as -Wl,FILE; the script says which).
# CMAKE_C_COMPILER is then that command; BSPKIT_PORTABLE_WRAPPER stays in the cache.
set(BSPKIT_PORTABLE_WRAPPER "${BSPKIT_PORTABLE_WRAPPER}" CACHE STRING
    "Another BSPlib's compiler wrapper for the portable build (used through bspkit-wrapper-cc)")
if(NOT BSPKIT_PORTABLE)
  message(FATAL_ERROR "BSPKIT_PORTABLE_WRAPPER goes with -DBSPKIT_PORTABLE=ON")
endif()
if(NOT IS_ABSOLUTE "${BSPKIT_PORTABLE_WRAPPER}")
  find_program(_bspkit_wrapper_path NAMES "${BSPKIT_PORTABLE_WRAPPER}" NO_CACHE)
  if(NOT _bspkit_wrapper_path)
    message(FATAL_ERROR "BSPKIT_PORTABLE_WRAPPER=${BSPKIT_PORTABLE_WRAPPER}: not on PATH")
  endif()
  set(BSPKIT_PORTABLE_WRAPPER "${_bspkit_wrapper_path}" CACHE STRING "" FORCE)
endif()
if(NOT EXISTS "${BSPKIT_PORTABLE_WRAPPER}")
  message(FATAL_ERROR "BSPKIT_PORTABLE_WRAPPER=${BSPKIT_PORTABLE_WRAPPER}: no such file")
endif()
if(BSPKIT_PORTABLE_WRAPPER MATCHES "'" OR CMAKE_CURRENT_LIST_DIR MATCHES "'")
  message(FATAL_ERROR "BSPKIT_PORTABLE_WRAPPER=${BSPKIT_PORTABLE_WRAPPER}: a path with a ' is not taken")
endif()
set(_bspkit_wrapper_cc "${CMAKE_BINARY_DIR}/bspkit-wrapper-cc")
file(CONFIGURE OUTPUT "${_bspkit_wrapper_cc}" @ONLY CONTENT "#!/bin/sh
# The portable build's C compiler: @BSPKIT_PORTABLE_WRAPPER@ through bspkit's
# cmake/portable/wrapper-cc.sh (written by cmake/BspkitPortableWrapper.cmake).
exec bash '@CMAKE_CURRENT_LIST_DIR@/portable/wrapper-cc.sh' '@BSPKIT_PORTABLE_WRAPPER@' \"$@\"
")
file(CHMOD "${_bspkit_wrapper_cc}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
     GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
if(CMAKE_C_COMPILER AND NOT CMAKE_C_COMPILER STREQUAL _bspkit_wrapper_cc)
  message(FATAL_ERROR "BSPKIT_PORTABLE_WRAPPER and CMAKE_C_COMPILER exclude each other: the wrapper is the compiler")
endif()
set(CMAKE_C_COMPILER "${_bspkit_wrapper_cc}")
