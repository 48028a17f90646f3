/*
 * checks.h - the argument checks the calls share (BSPKIT_UNCHECKED compiles them out, only
 * to measure what they cost).
 */
#ifndef BSPKIT_CHECKS_H
#define BSPKIT_CHECKS_H

#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"

#ifdef BSPKIT_UNCHECKED
#define BSPK_CHECK(cond) 0
#else
#define BSPK_CHECK(cond) BSPK_UNLIKELY(cond)
#endif

/* The one check of a destination process id (put, get, send, collectives). */
static inline void bspk_check_pid(const bspk_proc *self, const char *call, int pid) {
  if (BSPK_CHECK(pid < 0 || pid >= self->nprocs))
    bspk_fatal(call, "pid %d is out of range: there are %d processes (0..%d)", pid, self->nprocs,
               self->nprocs - 1);
}

/* A pointer the library must write to (or read from) for a non-empty transfer. */
static inline void bspk_check_buffer(const char *call, const void *ptr, const char *what,
                                     long nbytes) {
  (void)ptr; /* unused where checks are compiled out */
  if (BSPK_CHECK(ptr == NULL && nbytes > 0))
    bspk_fatal(call, "%s is NULL, but %ld byte(s) are to be copied there", what, nbytes);
}

#endif
