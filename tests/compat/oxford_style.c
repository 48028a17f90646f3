/*
 * oxford_style.c - a program written the way programs for the Oxford BSP toolset (BSPlib
 * 1.x) were: the 1998 `int` interface with the toolset's older names bsp_pushregister,
 * bsp_popregister, bsp_set_tag_size and bsp_bsmp_info, P read on process 0 after bsp_init.
 * Built with bspcc as a user would (tests/compat/CMakeLists.txt). Exits 0 exactly when
 * every check passed.
 *
 *   oxford_style [P]
 * P: how many processes bsp_begin(bsp_nprocs()) must start, that is, what bsprun was told
 * (the test of bsprun -npes passes the same P to bsprun and to the program).
 *
 * Like the toolset's own contributed examples it uses printf and stderr without including
 * <stdio.h>: the toolset's bsp.h includes it, and so must ours.
 */
#include <stdlib.h>

#include "bsp.h"

static int nprocs_expected; /* set on process 0 only, after bsp_init, as old programs did */

static void check(int ok, const char *what) {
  if (!ok) bsp_abort("oxford_style: process %d: %s\n", bsp_pid(), what);
}

static void spmd(void) {
  int p, s, i, tagsize, nmessages, nbytes, status, from;
  int *seen;
  bsp_begin(bsp_nprocs());
  p = bsp_nprocs();
  s = bsp_pid();
  if (s == 0 && nprocs_expected > 0 && p != nprocs_expected)
    bsp_abort("oxford_style: %d processes, but bsprun was asked for %d\n", p, nprocs_expected);

  /* Every process puts its pid into slot s of everybody's array. */
  seen = calloc(p, sizeof(int));
  check(seen != NULL, "out of memory");
  bsp_pushregister(seen, p * sizeof(int));
  bsp_sync();
  for (i = 0; i < p; i++) bsp_put(i, &s, seen, s * sizeof(int), sizeof(int));
  bsp_sync();
  for (i = 0; i < p; i++) check(seen[i] == i, "a put registered with bsp_pushregister is wrong");
  bsp_popregister(seen);
  bsp_sync();

  /* Messages tagged with the sender's pid, counted with bsp_bsmp_info. */
  tagsize = sizeof(int);
  bsp_set_tag_size(&tagsize);
  check(tagsize == 0, "bsp_set_tag_size did not return the old tag size 0");
  bsp_sync();
  for (i = 0; i < p; i++) bsp_send(i, &s, &i, sizeof(int));
  bsp_sync();
  bsp_bsmp_info(&nmessages, &nbytes);
  check(nmessages == p && nbytes == p * (int)sizeof(int), "bsp_bsmp_info counts are wrong");
  for (i = 0; i < p; i++) {
    int payload = -1;
    bsp_get_tag(&status, &from);
    bsp_move(&payload, sizeof payload);
    check(status == sizeof(int) && from == i && payload == s, "a message is wrong");
  }
  free(seen);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  if (argc > 2 || (argc == 2 && atoi(argv[1]) < 1)) {
    fprintf(stderr, "usage: %s [P]\n", argv[0]);
    return 2;
  }
  if (argc == 2) nprocs_expected = atoi(argv[1]);
  spmd();
  printf("oxford_style: all checks passed\n");
  return 0;
}
