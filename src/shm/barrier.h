/*
 * barrier.h - a central sense-reversing barrier that spins briefly and then sleeps on a
 * futex, so that more BSP processes than cores do not collapse. Each arrival may carry
 * flags (ORed over all arrivals) and an "at end" mark (counted). The shared-memory engines
 * use it: threads in one process, and procs' processes (the barrier in memory they share,
 * its futex then not private to one process).
 */
#ifndef BSPKIT_SHM_BARRIER_H
#define BSPKIT_SHM_BARRIER_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct bspk_barrier {
  /* Written by every arrival. */
  _Alignas(64) _Atomic uint64_t arrivals; /* low 32 bits: arrived; high: arrived at end */
  _Atomic unsigned flags[2];              /* ORed by arrivals, by epoch parity          */
  /* Written once per epoch by the last arrival; the waiters spin on this line, so the
   * summary they read after the release comes with it. */
  _Alignas(64) _Atomic uint32_t epoch; /* the futex word */
  _Atomic int sleepers;
  unsigned result_flags[2]; /* by epoch parity */
  int result_at_end[2];
  /* Read only. */
  _Alignas(64) int nprocs;
  long spin_limit;
  long yield_limit;
  int process_shared; /* waiters in several processes: a shared futex */
  int leader;         /* process_shared: the OS pid of the process the others were forked
                       * from; a sleeper whose parent it no longer is ends itself */
} bspk_barrier;

/* Waiting spins spin_limit times, then yields the core yield_limit times, then sleeps.
 * process_shared: b lies in memory several processes map (MAP_SHARED), the calling process
 * being the leader, whose children the others are. */
void bspk_barrier_init(bspk_barrier *b, int nprocs, long spin_limit, long yield_limit,
                       int process_shared);

/* bspk_barrier_init with the engines' waiting: spin long when every process has a core;
 * when oversubscribed, give the core away soon (the process a spinner waits for may need
 * it). The variables BSPKIT_SPIN and BSPKIT_YIELD override the two limits. */
void bspk_barrier_init_for(bspk_barrier *b, int nprocs, int oversubscribed, int process_shared);

/* *epoch is the caller's own copy of the epoch (starts at 0). Returns the ORed flags. */
unsigned bspk_barrier_arrive(bspk_barrier *b, uint32_t *epoch, unsigned flags, int at_end,
                             int *n_at_end);

#endif
