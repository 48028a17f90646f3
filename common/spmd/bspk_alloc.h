/*
 * bspk_alloc.h - allocation that does not return NULL, for the SPMD part of a BSPlib program
 * (part of common/spmd/, see common/README.md). Running out of memory ends the whole program with
 * bsp_abort, which stops every process (a plain exit in one process would leave the others
 * waiting at their next sync), with "<program>: out of memory (N bytes) on process P".
 */
#ifndef BSPK_ALLOC_H
#define BSPK_ALLOC_H

#include <stdlib.h>

#include "bsp.h"

static inline void *bspk_xrealloc(const char *program, void *ptr, size_t bytes) {
  void *q = realloc(ptr, bytes ? bytes : 1);
  if (!q)
    bsp_abort("%s: out of memory (%zu bytes) on process %d\n", program, bytes, (int)bsp_pid());
  return q;
}

static inline void *bspk_xmalloc(const char *program, size_t bytes) {
  return bspk_xrealloc(program, NULL, bytes);
}

#endif /* BSPK_ALLOC_H */
