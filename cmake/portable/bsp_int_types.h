/*
 * bsp_int_types.h - the type names of BSPlib 1.x for a library whose bsp.h has only the 1998
 * standard's int API (no bsp_pid_t, bsp_nprocs_t, bsp_size_t; LPF's BSPlib layer, the Oxford
 * toolset). The portable build (cmake/BspkitPortable.cmake) includes it before every source
 * (-include) when its check finds no bsp_size_t in the library's bsp.h; bspkit's own sources
 * spell the types the MulticoreBSP way.
 */
#ifndef BSPKIT_PORTABLE_BSP_INT_TYPES_H
#define BSPKIT_PORTABLE_BSP_INT_TYPES_H
typedef int bsp_pid_t;
typedef int bsp_nprocs_t;
typedef int bsp_size_t;
#endif
