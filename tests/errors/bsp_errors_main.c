/*
 * bsp_errors_main.c - errors in a program whose SPMD section is main itself (no bsp_init):
 * the other processes re-enter main (threads back end) or run it from the start (process
 * back ends). The case is argv[1] (see error_case.h); `exit0` is the control case, not an
 * error: every process calls bsp_end and the program exits 0.
 */
#include <stdio.h>
#include <string.h>

#include "bsp.h"
#include "error_case.h"

/* Process 1 returns from main without calling bsp_end. */
ERROR_CASE(noend, ERROR_PROCS, "",
           E
           "[a-z_]+ on process (1: .*without calling bsp_end|[0-9]+: .*process 1 .*without calling "
           "bsp_end)") {
  return bsp_pid() == 1;
}

/* A second bsp_begin after bsp_end, without bsp_init: the other processes could only start
 * main again, so it is an error on every back end. */
static void second_section(void) {
  bsp_begin(bsp_nprocs());
  bsp_end();
}
ERROR_CASE_AROUND(two_sections, NULL, second_section, ERROR_PROCS_AND_1, "",
                  E "bsp_begin( on process 0)?: .*second SPMD section needs bsp_init") {
  return 0;
}

int main(int argc, char **argv) {
  const struct error_case *the_case = error_case_select(argc, argv, "exit0");
  bsp_begin(bsp_nprocs());
  if (the_case && the_case->body()) return 0; /* deliberately without bsp_end */
  bsp_sync();
  bsp_end();
  if (!the_case) return 0;
  if (the_case->after) the_case->after();
  fprintf(stderr, "bsp_errors_main: case %s: the error was not detected\n", the_case->name);
  return 3;
}
