/* engine_registry.c - choosing the back end at run time (BSPKIT_BACKEND). */
#include <stdio.h>

#include "core/internal.h"

const bspk_engine_ops *bspk_engine_select(void) {
  const char *name = getenv("BSPKIT_BACKEND");
  if (!name || !*name || strcmp(name, "threads") == 0) return &bspk_threads_engine;
  bspk_claim_dying();
  if (strcmp(name, "mpi") == 0 || strcmp(name, "mpi-rma") == 0)
    fprintf(stderr,
            "bspkit: error in bsp_begin: back end '%s' (BSPKIT_BACKEND) is not built into "
            "this libbsp; available: threads\n",
            name);
  else
    fprintf(stderr,
            "bspkit: error in bsp_begin: unknown back end '%s' (BSPKIT_BACKEND); available: "
            "threads\n",
            name);
  bspk_terminate(1);
}
