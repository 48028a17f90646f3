/*
 * test_init.c - bsp_init with the SPMD section in its own function.
 *
 *  - main calls bsp_init(spmd, argc, argv) first, then spmd(); the other processes run
 *    spmd() themselves.
 *  - bsp_nprocs() before bsp_begin returns the P given to bsprun -n (passed to this program
 *    as "--nprocs P" by CMake) and bsp_begin(bsp_nprocs()) starts that many processes.
 *  - only process 0 returns from bsp_end; after it, main on process 0 continues and sees
 *    what process 0 computed in the SPMD section (a value gathered from all processes).
 */
#include "testutil.h"

/* Written before bsp_init (every process has run main that far on any back end). */
static int expected_p = -1;
/* Written only by process 0 inside the SPMD section, read by main after bsp_end. */
static long gathered_on_0 = -1;
static int p_on_0 = -1;
static int spmd_returned = 0;

static void spmd(void) {
  int before = bsp_nprocs();
  if (expected_p > 0)
    TU_CHECK_OUTSIDE(before == expected_p, "bsp_nprocs() before bsp_begin: expected %d, got %d",
                     expected_p, before);
  TU_CHECK_OUTSIDE(before >= 1, "bsp_nprocs() before bsp_begin = %d", before);
  bsp_begin(before);

  int p = bsp_nprocs(), s = bsp_pid();
  TU_EQ("bsp_nprocs() inside the SPMD section", before, p);
  if (expected_p > 0) TU_EQ("bsp_nprocs() inside the SPMD section vs bsprun -n", expected_p, p);
  TU_CHECK(s >= 0 && s < p, "bsp_pid() = %d outside 0..%d", s, p - 1);
  TU_CHECK(bsp_time() >= 0.0, "bsp_time() = %g < 0", bsp_time());

  /* Gather (pid+1)^2 from every process on process 0. */
  long *vals = (long *)tu_malloc(sizeof(long) * (size_t)p);
  for (int i = 0; i < p; i++) vals[i] = -1;
  bsp_push_reg(vals, (int)sizeof(long) * p);
  bsp_sync();
  long mine = (long)(s + 1) * (s + 1);
  bsp_put(0, &mine, vals, s * (int)sizeof(long), (int)sizeof(long));
  bsp_sync();
  if (s == 0) {
    long sum = 0;
    for (int i = 0; i < p; i++) {
      TU_EQ("value gathered from process i", (long)(i + 1) * (i + 1), vals[i]);
      sum += vals[i];
    }
    gathered_on_0 = sum;
    p_on_0 = p;
  }
  bsp_pop_reg(vals);
  bsp_sync();
  free(vals);

  int mypid = s;
  bsp_end();
  TU_CHECK_OUTSIDE(mypid == 0, "process %d returned from bsp_end (only process 0 may)", mypid);
  spmd_returned++;
}

int main(int argc, char **argv) {
  expected_p = tu_expected_nprocs(argc, argv);
  bsp_init(spmd, argc, argv);
  spmd();
  /* Only process 0 gets here. */
  TU_CHECK_OUTSIDE(spmd_returned == 1, "spmd returned %d times on this process, expected 1",
                   spmd_returned);
  TU_CHECK_OUTSIDE(p_on_0 >= 1, "process 0's SPMD result is not visible after bsp_end");
  if (expected_p > 0)
    TU_CHECK_OUTSIDE(p_on_0 == expected_p, "SPMD section ran on %d processes, expected %d", p_on_0,
                     expected_p);
  long expect = 0;
  for (long i = 1; i <= p_on_0; i++) expect += i * i;
  TU_CHECK_OUTSIDE(gathered_on_0 == expect,
                   "after bsp_end: value computed in the SPMD section: expected %ld, got %ld",
                   expect, gathered_on_0);
  return 0;
}
