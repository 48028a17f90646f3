/*
 * test_begin_main.c - bsp_begin directly in main, without bsp_init.
 *
 * The other processes re-enter main (on the threads back end) or run it from the start
 * (process back ends), so everything before bsp_begin is written to run once per process.
 *  - bsp_nprocs() before bsp_begin returns the P given to bsprun -n ("--nprocs P").
 *  - only process 0 returns from bsp_end; main on process 0 then sees the values the
 *    SPMD section left in its locals and in its (registered) memory.
 */
#include "testutil.h"

int main(int argc, char **argv) {
  int expected_p = tu_expected_nprocs(argc, argv);
  int before = bsp_nprocs();
  TU_CHECK_OUTSIDE(before >= 1, "bsp_nprocs() before bsp_begin = %d", before);
  if (expected_p > 0)
    TU_CHECK_OUTSIDE(before == expected_p, "bsp_nprocs() before bsp_begin: expected %d, got %d",
                     expected_p, before);
  long total = -1;
  int nprocs_seen = -1, mypid = -1;
  int *slots = NULL;

  bsp_begin(before);

  int p = bsp_nprocs(), s = bsp_pid();
  TU_EQ("bsp_nprocs() inside the SPMD section", before, p);
  TU_CHECK(s >= 0 && s < p, "bsp_pid() = %d outside 0..%d", s, p - 1);
  mypid = s;
  nprocs_seen = p;

  slots = (int *)tu_malloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; i++) slots[i] = -1;
  bsp_push_reg(slots, (int)sizeof(int) * p);
  bsp_sync();
  int v = 3 * s + 7;
  bsp_put(0, &v, slots, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  if (s == 0) {
    total = 0;
    for (int i = 0; i < p; i++) total += slots[i];
  }
  bsp_pop_reg(slots);
  bsp_sync();
  if (s != 0) { /* the other processes do not return from bsp_end */
    free(slots);
    slots = NULL;
  }

  bsp_end();

  /* Only process 0 continues here. */
  TU_CHECK_OUTSIDE(mypid == 0, "process %d returned from bsp_end (only process 0 may)", mypid);
  if (expected_p > 0)
    TU_CHECK_OUTSIDE(nprocs_seen == expected_p, "SPMD section ran with %d processes, expected %d",
                     nprocs_seen, expected_p);
  long expect = 0;
  for (int i = 0; i < nprocs_seen; i++) {
    TU_CHECK_OUTSIDE(slots[i] == 3 * i + 7,
                     "after bsp_end: slot %d put by process %d: expected %d, got %d", i, i,
                     3 * i + 7, slots[i]);
    expect += 3 * i + 7;
  }
  TU_CHECK_OUTSIDE(total == expect,
                   "after bsp_end: sum computed in the SPMD section: expected %ld, got %ld", expect,
                   total);
  free(slots);
  return 0;
}
