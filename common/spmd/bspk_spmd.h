/*
 * bspk_spmd.h - collective helpers for the SPMD part, written against bsp.h alone (part of
 * common/spmd/, see common/README.md).
 */
#ifndef BSPK_SPMD_H
#define BSPK_SPMD_H

#include <stddef.h>

#include "bsp.h"

/* The maximum of v over all processes, on every process (all of them agree bit for bit).
 * Collective, one superstep. `area` holds bsp_nprocs() doubles and is registered on every
 * process; each process puts its v into slot pid of everyone's area. */
static inline double bspk_max_over_processes(double v, double *area) {
  int p = (int)bsp_nprocs();
  size_t slot = (size_t)bsp_pid() * sizeof v;
  for (int t = 0; t < p; t++) bsp_put(t, &v, area, slot, sizeof v);
  bsp_sync();
  double m = area[0];
  for (int t = 1; t < p; t++)
    if (area[t] > m) m = area[t];
  return m;
}

#endif /* BSPK_SPMD_H */
