# CBLAS from OpenBLAS, found once for the probe, the algorithms and the benchmarks.
# OpenBLAS's own cblas.h comes first (it sits beside openblas_config.h; Debian puts it in
# openblas-pthread/), so that its users can pin OpenBLAS to one thread and name its version
# and core type. Defines the target bspkit_cblas (include directory + libopenblas) and
# BSPKIT_HAVE_CBLAS; BSPKIT_USE_BLAS=OFF builds everything without it.
option(BSPKIT_USE_BLAS "Use CBLAS (OpenBLAS) where it is found" ON)
set(BSPKIT_HAVE_CBLAS OFF)
if(BSPKIT_USE_BLAS)
  find_path(BSPKIT_CBLAS_INCLUDE_DIR NAMES cblas.h openblas_config.h
            PATH_SUFFIXES openblas-pthread openblas openblas-openmp openblas-serial)
  find_library(BSPKIT_OPENBLAS_LIBRARY NAMES openblas)
  if(BSPKIT_CBLAS_INCLUDE_DIR AND BSPKIT_OPENBLAS_LIBRARY)
    add_library(bspkit_cblas INTERFACE)
    target_include_directories(bspkit_cblas INTERFACE ${BSPKIT_CBLAS_INCLUDE_DIR})
    target_link_libraries(bspkit_cblas INTERFACE ${BSPKIT_OPENBLAS_LIBRARY})
    set(BSPKIT_HAVE_CBLAS ON)
    message(STATUS "CBLAS: ${BSPKIT_OPENBLAS_LIBRARY} (${BSPKIT_CBLAS_INCLUDE_DIR}/cblas.h)")
  endif()
endif()
if(NOT BSPKIT_HAVE_CBLAS)
  message(STATUS "CBLAS: not used (no cblas.h + libopenblas, or BSPKIT_USE_BLAS=OFF): bspprobe "
                 "is built without its BLAS kernels, the matrix multiplications are not built")
endif()
