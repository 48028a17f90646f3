/*
 * test_classic.c - a program in the style of the Oxford examples and BSPedupack:
 *
 *  - main calls bsp_init first, then reads P into a global on process 0 only (from stdin
 *    with "--stdin", else from argv: "--procs P"); the other processes never see it, so
 *    bsp_begin(P) must take process 0's P on every back end;
 *  - several SPMD sections: the same function twice, then another function given to a
 *    second bsp_init, with fewer processes (P - 1) and then all P again;
 *  - bsp_nprocs() after bsp_end returns what it returned before bsp_begin;
 *  - results of each section reach main on process 0 through globals.
 * Exits 0 exactly when every check passed.
 */
#include <string.h>

#include "testutil.h"

static int P;           /* set on process 0 only, after bsp_init */
static long ring_sum;   /* written by process 0 in each section   */
static int nprocs_seen; /* likewise                               */

/* Each process puts pid + 1 to process 0; process 0 adds them up. */
static void sum_pids(void) {
  bsp_begin(P);
  int p = bsp_nprocs(), s = bsp_pid();
  long *got = tu_malloc(sizeof(long) * (size_t)p);
  bsp_push_reg(got, (int)sizeof(long) * p);
  bsp_sync();
  long mine = s + 1;
  bsp_put(0, &mine, got, s * (int)sizeof(long), (int)sizeof(long));
  bsp_sync();
  if (s == 0) {
    ring_sum = 0;
    for (int i = 0; i < p; i++) ring_sum += got[i];
    nprocs_seen = p;
  }
  bsp_pop_reg(got);
  bsp_sync();
  free(got);
  bsp_end();
}

/* A ring shift of pid * 10 by BSMP; process 0 records what it received. */
static void shift_by_messages(void) {
  bsp_begin(P);
  int p = bsp_nprocs(), s = bsp_pid();
  long v = 10L * s;
  bsp_send((s + 1) % p, NULL, &v, sizeof v);
  bsp_sync();
  bsp_size_t status;
  bsp_get_tag(&status, NULL);
  TU_EQ("message size", (int)sizeof v, (int)status);
  long got = -1;
  bsp_move(&got, sizeof got);
  TU_EQ("message from the left neighbour", 10L * ((s + p - 1) % p), got);
  if (s == 0) {
    ring_sum = got;
    nprocs_seen = p;
  }
  bsp_end();
}

static void expect_section(const char *what, int p) {
  TU_CHECK_OUTSIDE(nprocs_seen == p, "%s: ran on %d processes, expected %d", what, nprocs_seen, p);
}

int main(int argc, char **argv) {
  bsp_init(sum_pids, argc, argv);
  int from_stdin = argc > 1 && strcmp(argv[1], "--stdin") == 0;
  if (from_stdin) {
    printf("How many processes? ");
    fflush(stdout);
    TU_CHECK_OUTSIDE(scanf("%d", &P) == 1, "no number of processes on stdin");
  } else {
    TU_CHECK_OUTSIDE(argc > 2 && strcmp(argv[1], "--procs") == 0, "usage: %s --stdin | --procs P",
                     argv[0]);
    P = atoi(argv[2]);
  }
  int before = bsp_nprocs();
  TU_CHECK_OUTSIDE(P >= 1 && P <= before, "P = %d, but %d processes are available", P, before);

  sum_pids();
  expect_section("first section", P);
  TU_CHECK_OUTSIDE(ring_sum == (long)P * (P + 1) / 2, "first section: sum %ld, expected %ld",
                   ring_sum, (long)P * (P + 1) / 2);
  TU_CHECK_OUTSIDE(bsp_nprocs() == before, "bsp_nprocs() after bsp_end: %d, before: %d",
                   bsp_nprocs(), before);

  sum_pids(); /* the same function again */
  expect_section("second section", P);

  int all = P;
  P = P > 1 ? P - 1 : 1;
  bsp_init(shift_by_messages, argc, argv);
  shift_by_messages();
  expect_section("third section (another function, P - 1)", P);
  TU_CHECK_OUTSIDE(ring_sum == 10L * (P - 1), "third section: process 0 got %ld, expected %ld",
                   ring_sum, 10L * (P - 1));

  P = all;
  shift_by_messages();
  expect_section("fourth section (all P again)", P);
  TU_CHECK_OUTSIDE(bsp_nprocs() == before, "bsp_nprocs() at the end: %d, before: %d", bsp_nprocs(),
                   before);
  printf("test_classic: 4 sections ok, P = %d\n", all);
  return 0;
}
