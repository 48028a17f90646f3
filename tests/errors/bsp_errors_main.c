/*
 * bsp_errors_main.c - errors in a program whose SPMD section is main itself (no bsp_init):
 * the other processes re-enter main (threads back end) or run it from the start (process
 * back ends). The case is argv[1]:
 *   noend   process 1 returns from main without calling bsp_end;
 *   two_sections  a second bsp_begin after bsp_end, without bsp_init: the other
 *           processes could only start main again, so it is an error on every back end;
 *   exit0   (not an error, the control case) every process calls bsp_end: exits 0.
 * Any case must end the whole program with status 1 and the library's message, except exit0.
 */
#include <stdio.h>
#include <string.h>

#include "bsp.h"

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "";
  if (strcmp(name, "noend") != 0 && strcmp(name, "exit0") != 0 &&
      strcmp(name, "two_sections") != 0) {
    fprintf(stderr, "usage: %s noend|two_sections|exit0\n", argv[0]);
    return 2;
  }
  bsp_begin(bsp_nprocs());
  if (strcmp(name, "noend") == 0 && bsp_pid() == 1) return 0; /* without bsp_end */
  bsp_sync();
  bsp_end();
  if (strcmp(name, "two_sections") == 0) {
    bsp_begin(bsp_nprocs());
    bsp_end();
    fprintf(stderr, "bsp_errors_main: case two_sections: the error was not detected\n");
    return 3;
  }
  if (strcmp(name, "noend") == 0) {
    fprintf(stderr, "bsp_errors_main: case noend: the error was not detected\n");
    return 3;
  }
  return 0;
}
