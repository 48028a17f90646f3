/*
 * checkpoint.t.c - unit test of checkpoint.c's choice of the interval: Young's first-order
 * optimum sqrt(2 C MTBF) (BSPKIT_CHECKPOINT_MTBF), against values computed by hand.
 */
#include <stdio.h>

#include "core/checkpoint.h"

static int failures;

static void expect_close(double got, double want, const char *what) {
  double diff = got > want ? got - want : want - got;
  if (diff > 1e-12 * (want > 1 ? want : 1)) {
    fprintf(stderr, "FAIL: %s: %.17g, expected %.17g\n", what, got, want);
    failures++;
  }
}

int main(void) {
  /* sqrt(2 * 2 * 3600) = sqrt(14400) = 120 */
  expect_close(bspk_checkpoint_young_interval(2.0, 3600.0), 120.0, "C 2 s, MTBF 1 h");
  /* sqrt(2 * 0.5 * 100) = sqrt(100) = 10 */
  expect_close(bspk_checkpoint_young_interval(0.5, 100.0), 10.0, "C 0.5 s, MTBF 100 s");
  /* sqrt(2 * 1.5 * 2400) = sqrt(7200) = 60 sqrt(2) = 84.852813742385702... */
  expect_close(bspk_checkpoint_young_interval(1.5, 2400.0), 84.852813742385702,
               "C 1.5 s, MTBF 40 min");
  /* sqrt(2 * 0.001 * 0.02) = sqrt(4e-5) = 0.0063245553203367587 (below 1: Newton from 1) */
  expect_close(bspk_checkpoint_young_interval(0.001, 0.02), 0.0063245553203367587, "below 1");
  /* sqrt(2 * 3 * 86400 * 365) = sqrt(189216000) = 13755.580685670817, a year's MTBF */
  expect_close(bspk_checkpoint_young_interval(3.0, 86400.0 * 365), 13755.580685670817,
               "MTBF 1 year");
  expect_close(bspk_checkpoint_young_interval(0.0, 3600.0), 0.0, "a checkpoint that costs nothing");
  if (failures) return 1;
  printf("ok: the checkpoint interval sqrt(2 C MTBF)\n");
  return 0;
}
