# The portable build's stand-in for bspkit's library: an interface target `bsp` that carries
# what another BSPlib needs and nothing of bspkit's. The compiler is CMAKE_C_COMPILER: the
# library's own wrapper (bspcc, mpicc-like), which adds its include directory and libraries
# itself, or a plain compiler with them given here:
#   BSPKIT_PORTABLE_CFLAGS   compiler flags, e.g. "-I/opt/bsponmpi/include"
#   BSPKIT_PORTABLE_LIBS     link flags and libraries, e.g. "-L/opt/bsponmpi/lib -lbsponmpi"
#   BSPKIT_PORTABLE_LIBRARY  the library's label, written into every driver's JSON ("library")
# The drivers see BSPKIT_PORTABLE (no bspkit.h: phases and the profile off, the back end named
# by the label), bspprobe sees BSPPROBE_NO_EXTENSIONS.
set(BSPKIT_PORTABLE_CFLAGS "" CACHE STRING "Compiler flags for the other BSPlib (portable build)")
set(BSPKIT_PORTABLE_LIBS "" CACHE STRING "Link flags and libraries of the other BSPlib (portable build)")
set(BSPKIT_PORTABLE_LIBRARY "unknown" CACHE STRING "The other BSPlib's label for the drivers' JSON")
if(NOT BSPKIT_PORTABLE_LIBRARY MATCHES "^[A-Za-z0-9._+@/-]+$")
  message(FATAL_ERROR "BSPKIT_PORTABLE_LIBRARY='${BSPKIT_PORTABLE_LIBRARY}': letters, digits and ._+@/- only")
endif()

find_package(Threads REQUIRED)
add_library(bsp INTERFACE)
target_compile_definitions(bsp INTERFACE BSPKIT_PORTABLE BSPPROBE_NO_EXTENSIONS
                                         BSPKIT_PORTABLE_LIBRARY="${BSPKIT_PORTABLE_LIBRARY}")
separate_arguments(_bspkit_portable_cflags UNIX_COMMAND "${BSPKIT_PORTABLE_CFLAGS}")
separate_arguments(_bspkit_portable_libs UNIX_COMMAND "${BSPKIT_PORTABLE_LIBS}")
target_compile_options(bsp INTERFACE ${_bspkit_portable_cflags})
target_link_libraries(bsp INTERFACE ${_bspkit_portable_libs} Threads::Threads)

# A bsp.h with the 1998 int API only (no bsp_size_t: LPF, the Oxford toolset) gets the type
# names from cmake/portable/bsp_int_types.h, included before every source.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "${BSPKIT_PORTABLE_CFLAGS}")
set(CMAKE_REQUIRED_LIBRARIES ${_bspkit_portable_libs})
check_c_source_compiles("#include <bsp.h>\nint main(void) { bsp_size_t n = 0; return (int)n; }"
                        BSPKIT_PORTABLE_HAVE_BSP_SIZE_T)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LIBRARIES)
if(NOT BSPKIT_PORTABLE_HAVE_BSP_SIZE_T)
  target_compile_options(bsp INTERFACE -include ${CMAKE_CURRENT_LIST_DIR}/portable/bsp_int_types.h)
  target_compile_definitions(bsp INTERFACE BSPPROBE_INT_API)
  message(STATUS "portable build: ${BSPKIT_PORTABLE_LIBRARY}'s bsp.h has the int API only (no bsp_size_t)")
endif()

# Say what is built against what: the one line a user looks for in a cache's log.
message(STATUS "portable build for ${BSPKIT_PORTABLE_LIBRARY}: ${CMAKE_C_COMPILER} "
               "${BSPKIT_PORTABLE_CFLAGS} ... ${BSPKIT_PORTABLE_LIBS}")
