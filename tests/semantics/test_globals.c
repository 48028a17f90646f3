/*
 * test_globals.c - per-process state in globals, the Oxford toolset's style (and many course
 * assignments): a global counter, a global "my pid" and a static accumulator, each meant to be
 * the process' own. On the process back ends (procs: every process a fork of process 0 at
 * bsp_begin; mpi: a program per rank) each BSP process has its own copy and the program's sum
 * is right; on threads every BSP process is a thread of one program, the globals are one, and
 * the same program computes a wrong sum. The program finds out which it got and says so:
 *
 *   test_globals --expect own      exits 0 when every process had its own globals (procs, mpi)
 *   test_globals --expect shared   exits 0 when they were shared (threads, p >= 2)
 *
 * P is read on process 0 only, after bsp_init (the classic programs' way), from BSPKIT_NPROCS
 * through bsp_nprocs(): the other processes get it from bsp_begin.
 */
#include <string.h>

#include "testutil.h"

static int P;              /* process 0's, before bsp_begin */
static int my_pid;         /* each process': its pid        */
static long calls;         /* each process': its own count  */
static double local_total; /* each process': its partial sum */

static void accumulate(double x) {
  calls++;
  local_total += x;
}

static int expect_own = 1;
static int outcome = -1; /* process 0: 1 own, 0 shared */

static void spmd(void) {
  bsp_begin(P);
  int p = bsp_nprocs();
  my_pid = bsp_pid();
  for (int i = 1; i <= 100; i++) accumulate((double)(my_pid * 100 + i)); /* 100 calls each */
  bsp_sync(); /* on threads every process has written the globals by now */
  /* What each process sees, sent to process 0: its pid as the global says, its call count,
   * and its partial sum. */
  double *seen = tu_malloc(sizeof(double) * 3 * (size_t)p);
  bsp_push_reg(seen, (int)sizeof(double) * 3 * p);
  bsp_sync();
  double mine[3] = {(double)my_pid, (double)calls, local_total};
  bsp_put(0, mine, seen, 3 * bsp_pid() * (int)sizeof(double), (int)sizeof mine);
  bsp_sync();
  if (bsp_pid() == 0) {
    int own = 1;
    for (int s = 0; s < p; s++) {
      double want_total = 100.0 * s * 100 + 100.0 * 101 / 2;
      if (seen[3 * s] != s || seen[3 * s + 1] != 100 || seen[3 * s + 2] != want_total) own = 0;
    }
    outcome = own;
    printf("%s\n", own ? "every process had its own globals"
                       : "the processes shared their globals (one program's memory)");
  }
  bsp_pop_reg(seen);
  bsp_sync();
  free(seen);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  if (argc == 3 && strcmp(argv[1], "--expect") == 0 && strcmp(argv[2], "own") == 0) expect_own = 1;
  else if (argc == 3 && strcmp(argv[1], "--expect") == 0 && strcmp(argv[2], "shared") == 0)
    expect_own = 0;
  else {
    fprintf(stderr, "usage: %s --expect own|shared\n", argv[0]);
    return 2;
  }
  P = bsp_nprocs();
  spmd();
  TU_CHECK_OUTSIDE(outcome == expect_own, "expected %s globals, found them %s",
                   expect_own ? "per-process" : "shared", outcome ? "per-process" : "shared");
  return 0;
}
