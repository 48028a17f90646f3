/*
 * test_enquiry.c - bsp_pid, bsp_nprocs, bsp_time and bspk_superstep.
 *
 *  - bsp_nprocs() inside the SPMD section equals the maxprocs given to bsp_begin, and
 *    bsp_begin(bsp_nprocs()) starts exactly as many processes as bsp_nprocs() said before.
 *  - pids are 0..p-1 and distinct: every process puts its pid into slot pid of process 0's
 *    array (and of every other process's array); every slot must hold its own index.
 *  - bsp_time() is >= 0, non-decreasing, advances, and is measured in seconds.
 *  - bspk_superstep() is 0 after bsp_begin and counts the syncs.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "testutil.h"

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check_time(double *last) {
  double t = bsp_time();
  TU_CHECK(t >= 0.0, "bsp_time() = %g is negative", t);
  TU_CHECK(t >= *last, "bsp_time() went backwards: %.9f after %.9f", t, *last);
  TU_CHECK(t < 3600.0, "bsp_time() = %g s since bsp_begin is implausible", t);
  *last = t;
}

int main(void) {
  int before = bsp_nprocs();
  TU_CHECK_OUTSIDE(before >= 1, "bsp_nprocs() before bsp_begin = %d", before);
  bsp_begin(before);

  int p = bsp_nprocs(), s = bsp_pid();
  double last = 0.0;
  check_time(&last);
  TU_EQ("bspk_superstep() right after bsp_begin", 0, bspk_superstep());
  TU_EQ("bsp_nprocs() inside the SPMD section vs bsp_begin's argument", before, p);
  TU_CHECK(s >= 0 && s < p, "bsp_pid() = %d is outside 0..%d", s, p - 1);
  TU_EQ("bsp_pid() called twice", s, bsp_pid());

  /* pids are distinct: slot i of every process's array must be written by pid i only. */
  int *ids = (int *)tu_malloc(sizeof(int) * (size_t)p);
  int *counts = (int *)tu_malloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; i++) ids[i] = -1;
  bsp_push_reg(ids, (int)sizeof(int) * p);
  bsp_sync();
  check_time(&last);
  TU_EQ("bspk_superstep() after 1 sync", 1, bspk_superstep());

  for (int d = 0; d < p; d++) bsp_put(d, &s, ids, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  check_time(&last);
  TU_EQ("bspk_superstep() after 2 syncs", 2, bspk_superstep());
  for (int i = 0; i < p; i++) {
    TU_CHECK(ids[i] == i, "slot %d of the pid array holds %d: pids are not 0..p-1 distinct", i,
             ids[i]);
  }

  /* Every process also counts how many processes claim each pid, through process 0. */
  for (int i = 0; i < p; i++) counts[i] = 0;
  bsp_push_reg(counts, (int)sizeof(int) * p);
  bsp_sync();
  int one = 1, nclaims = 0;
  /* process i puts a 1 into counts[s] of process 0; since every process writes a
   * different slot (if pids are distinct) nothing collides. */
  bsp_put(0, &one, counts, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  if (s == 0) {
    for (int i = 0; i < p; i++) nclaims += counts[i];
    TU_EQ("number of slots of process 0's array written by some process", p, nclaims);
  }
  bsp_pop_reg(counts);
  bsp_pop_reg(ids);
  bsp_sync();
  check_time(&last);

  /* bsp_time advances and is in seconds: compare with CLOCK_MONOTONIC over ~20 ms. */
  double b0 = bsp_time(), m0 = mono_now(), m1;
  while ((m1 = mono_now()) - m0 < 0.02) {
    double t = bsp_time();
    TU_CHECK(t >= b0, "bsp_time() went backwards: %.9f after %.9f", t, b0);
  }
  double b1 = bsp_time();
  double db = b1 - b0, dm = m1 - m0;
  TU_CHECK(db >= 0.5 * dm && db <= 2.0 * dm + 0.5,
           "bsp_time() advanced %.6f s while CLOCK_MONOTONIC advanced %.6f s", db, dm);
  check_time(&last);

  /* Many syncs: bspk_superstep counts every one and time never goes back. */
  long base = bspk_superstep();
  for (int k = 1; k <= 50; k++) {
    bsp_sync();
    check_time(&last);
    TU_EQ("bspk_superstep() after more syncs", base + k, bspk_superstep());
    TU_EQ("bsp_nprocs() later in the SPMD section", p, bsp_nprocs());
    TU_EQ("bsp_pid() later in the SPMD section", s, bsp_pid());
  }

  free(ids);
  free(counts);
  bsp_end();
  return 0;
}
