/*
 * bsp_h_only.c - a MulticoreBSP 2.x program that includes only <bsp.h> but calls mcbsp_*
 * (MulticoreBSP's bsp.h declares them): built by tests/compat/CMakeLists.txt with
 * `bspcc -include mcbsp.h -Wall -Wextra -Werror`, as docs/compatibility.md says to, and run
 * (compat.bsp_h_only). Exits 0 exactly when the checks pass.
 */
#include <bsp.h>

int main(void) {
  mcbsp_set_maximum_threads(2);
  bsp_begin(bsp_nprocs());
  mcbsp_pid_t s = mcbsp_pid();
  mcbsp_nprocs_t p = mcbsp_nprocs();
  if (s != bsp_pid() || p != bsp_nprocs() || mcbsp_get_maximum_threads() != 2)
    bsp_abort("bsp_h_only: mcbsp_pid %d, mcbsp_nprocs %d\n", s, p);
  bsp_end();
  return 0;
}
