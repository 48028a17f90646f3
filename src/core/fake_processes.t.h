/*
 * fake_processes.t.h - for the core's unit tests (x.t.c): P BSP processes driven in turn by
 * one thread, over an engine that only hands out the posts. A test makes a process current
 * (fake_enter), calls the API as that process would, and ends a superstep's registration
 * part with fake_sync_registrations (the agreement and application a real sync does).
 */
#ifndef BSPKIT_FAKE_PROCESSES_T_H
#define BSPKIT_FAKE_PROCESSES_T_H

#include <stdio.h>
#include <stdlib.h>

#include "core/engine.h"
#include "core/proc.h"
#include "core/registrations.h"

#define FAKE_MAX_PROCS 8

struct bspk_engine {
  bspk_post posts[FAKE_MAX_PROCS];
};

static struct bspk_engine fake_engine;
static bspk_proc *fake_procs[FAKE_MAX_PROCS];
static int fake_nprocs;
static int fake_failures;

static const bspk_post *fake_peer_post(bspk_engine *e, int src) { return &e->posts[src]; }

/* Two-sided and without shared memory, like the MPI engine: gets become request records. */
static const bspk_engine_ops fake_ops = {.name = "fake", .peer_post = fake_peer_post};

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      fake_failures++;                                                    \
    }                                                                     \
  } while (0)

static inline void fake_begin(int nprocs) {
  fake_nprocs = nprocs;
  for (int q = 0; q < nprocs; q++) {
    fake_procs[q] = bspk_proc_create(&fake_ops, &fake_engine, q, nprocs);
    fake_procs[q]->begun = 1;
  }
}

static inline bspk_proc *fake_enter(int q) { return bspk_self = fake_procs[q]; }

/* Every process hands in its registration calls; then each checks and applies them. */
static inline void fake_sync_registrations(void) {
  for (int q = 0; q < fake_nprocs; q++)
    fake_engine.posts[q] = (bspk_post){.kind = BSPK_AT_SYNC,
                                       .regops = fake_procs[q]->regops,
                                       .nregops = fake_procs[q]->nregops,
                                       .tagsize = -1};
  for (int q = 0; q < fake_nprocs; q++) {
    bspk_proc *self = fake_enter(q);
    bspk_registrations_check(self, "bsp_sync");
    bspk_registrations_apply(self);
  }
  for (int q = 0; q < fake_nprocs; q++) fake_procs[q]->nregops = 0;
}

static inline int fake_end(const char *test) {
  for (int q = 0; q < fake_nprocs; q++) {
    bspk_registrations_free(fake_procs[q]);
    bspk_proc_free(fake_procs[q]);
  }
  bspk_self = NULL;
  if (fake_failures) fprintf(stderr, "%s: %d check(s) failed\n", test, fake_failures);
  else printf("%s: all checks passed\n", test);
  return fake_failures ? 1 : 0;
}

#endif
