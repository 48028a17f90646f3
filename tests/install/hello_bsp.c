/*
 * hello_bsp.c - a small BSPlib program for the tool and install tests: every process puts
 * its pid into an array on process 0 and sends it a message; process 0 checks both.
 * Exits 0 and prints "hello_bsp: ok on P processes" exactly when everything arrived.
 * Also uses bspkit.h (bspk_backend) to check that the extension header is installed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bsp.h"
#include "bspkit.h"

static int ok = 1;
static int nprocs_seen;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int *all = calloc((size_t)p, sizeof *all);
  if (!all) bsp_abort("hello_bsp: out of memory");
  bsp_push_reg(all, p * (int)sizeof *all);
  bsp_size_t tagsize = (bsp_size_t)sizeof(int);
  bsp_set_tagsize(&tagsize);
  bsp_sync();
  int mine = s + 100;
  bsp_put(0, &mine, all, s * (int)sizeof *all, (int)sizeof *all);
  bsp_send(0, &s, &mine, (int)sizeof mine);
  bsp_sync();
  if (s == 0) {
    int nmsg = 0;
    bsp_size_t bytes = 0;
    bsp_qsize(&nmsg, &bytes);
    if (nmsg != p) ok = 0;
    for (int i = 0; i < nmsg; i++) {
      int tag = -1, payload = -1;
      bsp_size_t status = 0;
      bsp_get_tag(&status, &tag);
      bsp_move(&payload, (int)sizeof payload);
      if (status != (int)sizeof payload || payload != tag + 100) ok = 0;
    }
    for (int i = 0; i < p; i++)
      if (all[i] != i + 100) ok = 0;
    nprocs_seen = p;
  }
  bsp_pop_reg(all);
  bsp_sync();
  free(all);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  spmd();
  if (!ok) {
    fprintf(stderr, "hello_bsp: FAILED on %d processes\n", nprocs_seen);
    return 1;
  }
  printf("hello_bsp: ok on %d processes (back end %s)\n", nprocs_seen, bspk_backend());
  return 0;
}
