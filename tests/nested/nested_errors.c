/*
 * nested_errors.c - errors in and around nested SPMD sections, one per case (argv[1]; see
 * tests/errors/error_case.h for --list and --expect). Process 1 of the top-level section
 * (the culprit) starts the nested sections while the others wait in bsp_sync, so every
 * message names "the section nested in process 1". The regular expression of each case is
 * what the threads back end must print; on mpi and mpi-rma every case must instead end with
 * the one error that nested sections are not supported there, at the culprit's first
 * bsp_init inside the section (bsp_begin in begin_without_init): tests/nested/CMakeLists.txt.
 * If the library misses the error the program says so and exits with status 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "error_case.h"

#define CULPRIT 1
#define IN_CHILD_OF_1 "on process [0-9]+ of the section nested in process 1: "

static int culprit(void) { return bsp_pid() == CULPRIT; }

/* The culprit starts a nested section running fn (which calls bsp_begin itself). */
static int nest_on_culprit(void (*fn)(void)) {
  if (culprit()) {
    bsp_init(fn, 0, NULL);
    fn();
  }
  bsp_sync();
  return 0;
}

/* ---- starting a nested section ------------------------------------------------------------ */

ERROR_CASE(begin_without_init, ERROR_PROCS, "",
           E "bsp_begin on process 1: called inside the SPMD section without bsp_init") {
  if (culprit()) bsp_begin(2);
  bsp_sync();
  return 0;
}

static void child_of_zero(void) { bsp_begin(0); }
ERROR_CASE(zero_procs, ERROR_PROCS, "",
           E "bsp_begin on process 1: asked for 0 processes; the number must be at least 1") {
  return nest_on_culprit(child_of_zero);
}

ERROR_CASE(init_null, ERROR_PROCS, "",
           E "bsp_init on process 1: the function given for a nested SPMD section is NULL") {
  if (culprit()) bsp_init(NULL, 0, NULL);
  bsp_sync();
  return 0;
}

/* ---- a nested section that ends wrong ----------------------------------------------------- */

/* Its process 0 calls bsp_end while the others are in bsp_sync. */
static void child_end_mismatch(void) {
  bsp_begin(3);
  if (bsp_pid() != 0) bsp_sync();
  bsp_end();
}
ERROR_CASE(child_end_mismatch, ERROR_PROCS, "",
           E "bsp_(sync|end) " IN_CHILD_OF_1
             "process\\(es\\) 0 called bsp_end while process\\(es\\) 1, 2 called bsp_sync") {
  return nest_on_culprit(child_end_mismatch);
}

/* Its process 1 returns from the function without bsp_end. */
static void child_noend(void) {
  bsp_begin(3);
  bsp_sync();
  if (bsp_pid() == 1) return;
  bsp_sync();
  bsp_end();
}
ERROR_CASE(child_noend, ERROR_PROCS, "",
           E "bsp_(sync|end) " IN_CHILD_OF_1
             "(process 1 returned from the SPMD function without calling bsp_end|process\\(es\\) "
             "1 called bsp_end)") {
  return nest_on_culprit(child_noend);
}

/* Its process 0 (the culprit's thread) returns to the parent's code without bsp_end: the
 * parent's bsp_sync is then the nested section's, where the others called bsp_end. */
static void child_noend_on_0(void) {
  bsp_begin(3);
  bsp_sync();
  if (bsp_pid() == 0) return;
  bsp_end();
}
ERROR_CASE(child_noend_on_0, ERROR_PROCS, "",
           E "bsp_(sync|end) " IN_CHILD_OF_1
             "process\\(es\\) 1, 2 called bsp_end while process\\(es\\) 0 called bsp_sync.*"
             "nested section") {
  return nest_on_culprit(child_noend_on_0);
}

/* Its process 2 calls exit() inside the nested section. */
static void child_exit(void) {
  bsp_begin(3);
  if (bsp_pid() == 2) exit(0);
  bsp_sync();
  bsp_end();
}
ERROR_CASE(child_exit, ERROR_PROCS, "",
           E "bsp_end on process 2 of the section nested in process 1: the process exited") {
  return nest_on_culprit(child_exit);
}

/* ---- errors inside nested sections name where they are ------------------------------------ */

/* A registration of the parent section is not one of the child's. */
static int parent_area[4];
static void child_uses_parent_registration(void) {
  bsp_begin(2);
  int x = 1;
  if (bsp_pid() == 1) bsp_put(0, &x, parent_area, 0, (int)sizeof x);
  bsp_sync();
  bsp_end();
}
ERROR_CASE(child_parent_registration, ERROR_PROCS, "",
           E
           "bsp_put on process 1 of the section nested in process 1: address 0x[0-9a-f]+ is "
           "not registered") {
  bsp_push_reg(parent_area, (int)sizeof parent_area);
  bsp_sync();
  return nest_on_culprit(child_uses_parent_registration);
}

/* Depth 3: a pid out of range in a section nested in a nested section. */
static void grandchild_bad_pid(void) {
  bsp_begin(2);
  int x[2] = {0, 0};
  bsp_push_reg(x, (int)sizeof x);
  bsp_sync();
  if (bsp_pid() == 1) bsp_put(5, x, x, 0, (int)sizeof(int));
  bsp_sync();
  bsp_end();
}
static void child_with_grandchild(void) {
  bsp_begin(3);
  if (bsp_pid() == 2) {
    bsp_init(grandchild_bad_pid, 0, NULL);
    grandchild_bad_pid();
  }
  bsp_sync();
  bsp_end();
}
ERROR_CASE(grandchild_pid, ERROR_PROCS, "",
           E
           "bsp_put on process 1 of the section nested in process 2 of the section nested in "
           "process 1: pid 5 is out of range: there are 2 processes") {
  return nest_on_culprit(child_with_grandchild);
}

static void child_aborts(void) {
  bsp_begin(2);
  if (bsp_pid() == 1) bsp_abort("child %d gives up", bsp_pid());
  bsp_sync();
  bsp_end();
}
ERROR_CASE(child_abort, ERROR_PROCS, "",
           "^bspkit: bsp_abort on process 1 of the section nested in process 1: child 1 gives up") {
  return nest_on_culprit(child_aborts);
}

static const struct error_case *the_case;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  if (the_case->body()) return; /* deliberately without bsp_end */
  bsp_end();
}

int main(int argc, char **argv) {
  the_case = error_case_select(argc, argv, NULL);
  bsp_init(spmd, argc, argv);
  spmd();
  fprintf(stderr, "nested_errors: case %s: the error was not detected\n", the_case->name);
  return 3;
}
