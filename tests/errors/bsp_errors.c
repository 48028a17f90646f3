/*
 * bsp_errors.c - one BSPlib usage error per case; the case is argv[1] (`bsp_errors --list`
 * lists them, `bsp_errors --expect CASE` prints what the case must print). Every case must
 * end the whole program with exit status 1 and one line `bspkit: error in <call> on process
 * <pid>: <explanation>` (or the bsp_abort line) on stderr. Each case carries that line as a
 * regular expression (error_case.h); tests/errors/CMakeLists.txt makes its tests, which
 * check both through run_case.sh.
 *
 * In most cases process 1 (the "culprit") makes the mistake while the others wait in
 * bsp_sync, so the reporting process is known. If the library misses the error, the
 * program goes on, says so and exits with status 3, and the test fails.
 *
 * The SPMD section is the function spmd() (named with bsp_init), so main runs once per
 * program on the threads back end: what main does before calling spmd() (setrlimit, calls
 * outside the SPMD section) happens before bsp_begin.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bsp.h"
#include "error_case.h"

#define CULPRIT 1

static int culprit(void) { return bsp_pid() == CULPRIT; }

/* ---- pid out of range -------------------------------------------------------------------- */

ERROR_CASE(put_pid, ERROR_PROCS, "", E "bsp_put on process 1: .*out of range") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(bsp_nprocs(), x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(put_negpid, ERROR_PROCS, "", E "bsp_put on process 1: .*out of range") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(-1, x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(get_pid, ERROR_PROCS, "", E "bsp_get on process 1: .*out of range") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(bsp_nprocs() + 5, x, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(hpput_pid, ERROR_PROCS, "", E "bsp_hpput on process 1: .*out of range") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpput(bsp_nprocs(), x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(hpget_pid, ERROR_PROCS, "", E "bsp_hpget on process 1: .*out of range") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(bsp_nprocs(), x, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(send_pid, ERROR_PROCS, "", E "bsp_send on process 1: .*out of range") {
  int v = 7, tag = 0;
  if (culprit()) bsp_send(bsp_nprocs(), &tag, &v, sizeof v);
  bsp_sync();
  return 0;
}

ERROR_CASE(send_negpid, ERROR_PROCS, "", E "bsp_send on process 1: .*out of range") {
  int v = 7, tag = 0;
  if (culprit()) bsp_send(-3, &tag, &v, sizeof v);
  bsp_sync();
  return 0;
}

/* ---- unregistered addresses ------------------------------------------------------------ */

ERROR_CASE(put_unreg, ERROR_PROCS, "", E "bsp_put on process 1: .*not registered") {
  int x[4] = {0}, unreg[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, unreg, 0, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(get_unreg, ERROR_PROCS, "", E "bsp_get on process 1: .*not registered") {
  int x[4] = {0}, unreg[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(0, unreg, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(hpput_unreg, ERROR_PROCS, "", E "bsp_hpput on process 1: .*not registered") {
  int x[4] = {0}, unreg[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpput(0, x, unreg, 0, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(hpget_unreg, ERROR_PROCS, "", E "bsp_hpget on process 1: .*not registered") {
  int x[4] = {0}, unreg[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(0, unreg, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

/* A registration pushed in this superstep is not usable before the next bsp_sync. */
ERROR_CASE(put_unreg_pending, ERROR_PROCS, "", E "bsp_put on process 1: .*not registered") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  if (culprit()) bsp_put(0, x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

/* ---- past the end of a registered area --------------------------------------------------- */

ERROR_CASE(put_past, ERROR_PROCS, "", E "bsp_put on process 1: .*past the end") {
  int x[4] = {0}, src[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, src, x, 2 * sizeof(int), 3 * sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(put_past_offset, ERROR_PROCS, "", E "bsp_put on process 1: .*past the end") {
  int x[4] = {0}, src[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, src, x, sizeof x, 1);
  bsp_sync();
  return 0;
}

ERROR_CASE(get_past, ERROR_PROCS, "", E "bsp_get on process 1: .*past the end") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(0, x, 2 * sizeof(int), y, 3 * sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(hpput_past, ERROR_PROCS, "", E "bsp_hpput on process 1: .*past the end") {
  int x[4] = {0}, src[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpput(0, src, x, sizeof(int), sizeof x);
  bsp_sync();
  return 0;
}

ERROR_CASE(hpget_past, ERROR_PROCS, "", E "bsp_hpget on process 1: .*past the end") {
  int x[4] = {0}, y[8];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(0, x, 0, y, sizeof x + 1);
  bsp_sync();
  return 0;
}

/* ---- MulticoreBSP's bsp_direct_get: the checks of bsp_get, at the call ------------------- */

ERROR_CASE(direct_get_unreg, ERROR_PROCS, "", E "bsp_direct_get on process 1: .*not registered") {
  int x[4] = {0}, unreg[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_direct_get(0, unreg, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(direct_get_past, ERROR_PROCS, "", E "bsp_direct_get on process 1: .*past the end") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_direct_get(0, x, 2 * sizeof(int), y, 3 * sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(direct_get_pid, ERROR_PROCS, "", E "bsp_direct_get on process 1: .*out of range") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_direct_get(bsp_nprocs(), x, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(direct_get_negative, ERROR_PROCS, "", E "bsp_direct_get on process 1: .*negative") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_direct_get(0, x, 0, y, -4);
  bsp_sync();
  return 0;
}

/* ---- the Oxford toolset's old names report errors under the name called ------------------ */

ERROR_CASE(pushregister_negative, ERROR_PROCS, "",
           E "bsp_pushregister on process 1: negative size") {
  int x[4] = {0};
  if (culprit()) bsp_pushregister(x, -1);
  bsp_sync();
  return 0;
}

ERROR_CASE(popregister_unreg, ERROR_PROCS, "",
           E "bsp_popregister on process 1: address .* is not registered") {
  int never[4];
  if (culprit()) bsp_popregister(never);
  bsp_sync();
  return 0;
}

ERROR_CASE(set_tag_size_negative, ERROR_PROCS, "",
           E "bsp_set_tag_size on process 1: negative tag size -2") {
  int size = -2;
  if (culprit()) bsp_set_tag_size(&size);
  bsp_sync();
  return 0;
}

ERROR_CASE(bsmp_info_null, ERROR_PROCS, "",
           E
           "bsp_bsmp_info on process 1: the first argument is NULL \\(bsp_bsmp_info writes the "
           "number of messages") {
  int nbytes;
  if (culprit()) bsp_bsmp_info(NULL, &nbytes);
  bsp_sync();
  return 0;
}

/* ---- registration ------------------------------------------------------------------------ */

ERROR_CASE(pop_unreg, ERROR_PROCS, "", E "bsp_pop_reg on process 1: .*not registered") {
  int x[4] = {0}, never[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_pop_reg(never);
  bsp_sync();
  return 0;
}

/* Detected in bsp_sync; which process reports it is not fixed. */
ERROR_CASE(reg_differ, ERROR_PROCS, "", E "bsp_sync on process [0-9]+: .*registrations differ") {
  int x[4] = {0}, extra[4] = {0};
  bsp_push_reg(x, sizeof x);
  if (culprit()) bsp_push_reg(extra, sizeof extra);
  bsp_sync();
  bsp_sync();
  return 0;
}

/* ---- the end of the SPMD section --------------------------------------------------------- */

/* Either the process calling bsp_end reports it, or one in bsp_sync does, naming the
 * process(es) that called bsp_end. */
#define ENDERS "process(\\(es\\))? ([0-9]+, )*"
ERROR_CASE(end_while_sync0, ERROR_PROCS, "",
           E "(bsp_end on process 0: .*called bsp_end while|bsp_sync on process [0-9]+: .*" ENDERS
             "0(, [0-9]+)* called bsp_end while)") {
  if (bsp_pid() == 0) return 0; /* straight to bsp_end */
  bsp_sync();
  return 0;
}

ERROR_CASE(end_while_sync1, ERROR_PROCS, "",
           E "(bsp_end on process 1: .*called bsp_end while|bsp_sync on process [0-9]+: .*" ENDERS
             "1(, [0-9]+)* called bsp_end while)") {
  if (bsp_pid() == 1) return 0; /* straight to bsp_end */
  bsp_sync();
  return 0;
}

/* Process 1 returns from the SPMD function without calling bsp_end. */
ERROR_CASE(noend, ERROR_PROCS, "",
           E
           "[a-z_]+ on process (1: .*without calling bsp_end|[0-9]+: .*process 1 .*without calling "
           "bsp_end)") {
  if (culprit()) return 1;
  bsp_sync();
  return 0;
}

/* bsp_begin inside the section without bsp_init: on threads it would start a nested section
 * (tests/nested), which needs bsp_init first; elsewhere nesting is not supported. */
ERROR_CASE(begin_twice, ERROR_PROCS, "",
           E "bsp_begin on process 1: called inside the SPMD section") {
  if (culprit()) bsp_begin(bsp_nprocs());
  bsp_sync();
  return 0;
}

/* ---- negative sizes and offsets ---------------------------------------------------------- */

ERROR_CASE(neg_put_nbytes, ERROR_PROCS, "", E "bsp_put on process 1: .*negative") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, x, 0, -4);
  bsp_sync();
  return 0;
}

ERROR_CASE(neg_put_offset, ERROR_PROCS, "", E "bsp_put on process 1: .*negative") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, x, -4, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(neg_get_nbytes, ERROR_PROCS, "", E "bsp_get on process 1: .*negative") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(0, x, 0, y, -1);
  bsp_sync();
  return 0;
}

ERROR_CASE(neg_hpget_offset, ERROR_PROCS, "", E "bsp_hpget on process 1: .*negative") {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(0, x, -8, y, sizeof(int));
  bsp_sync();
  return 0;
}

ERROR_CASE(neg_tagsize, ERROR_PROCS, "", E "bsp_set_tagsize on process 1: .*negative") {
  if (culprit()) {
    bsp_size_t t = -1;
    bsp_set_tagsize(&t);
  }
  bsp_sync();
  return 0;
}

ERROR_CASE(neg_send, ERROR_PROCS, "", E "bsp_send on process 1: .*negative") {
  int v = 1, tag = 0;
  if (culprit()) bsp_send(0, &tag, &v, -1);
  bsp_sync();
  return 0;
}

ERROR_CASE(neg_push_reg, ERROR_PROCS, "", E "bsp_push_reg on process 1: .*negative") {
  int x[4];
  if (culprit()) bsp_push_reg(x, -16);
  bsp_sync();
  return 0;
}

/* ---- allocation failure ------------------------------------------------------------------ */

/* 1.5 GiB source and destination, mapped (not touched) before the address-space limit. */
#define OOM_BYTES (1536 * 1024 * 1024)
#define OOM_HEADROOM ((size_t)512 * 1024 * 1024)
static char *oom_src, *oom_dst;

static void *map_area(size_t n) {
  void *p =
      mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    perror("bsp_errors: mmap");
    exit(3);
  }
  return p;
}

/* Before bsp_begin: limit the address space to what is mapped now plus OOM_HEADROOM
 * (enough for the threads and the library's own bookkeeping), so a copy of OOM_BYTES
 * cannot be allocated. */
static void oom_setup(void) {
  oom_src = map_area(OOM_BYTES);
  oom_dst = map_area(OOM_BYTES);
  unsigned long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%lu", &pages) != 1) {
    fprintf(stderr, "bsp_errors: cannot read /proc/self/statm\n");
    exit(3);
  }
  fclose(f);
  size_t mapped = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = mapped + OOM_HEADROOM;
  if (setrlimit(RLIMIT_AS, &rl) != 0) {
    perror("bsp_errors: setrlimit(RLIMIT_AS)");
    exit(3);
  }
}

ERROR_CASE_AROUND(oom_put, oom_setup, NULL, ERROR_PROCS, "nosan",
                  E "bsp_put on process 1: .*out of memory") {
  bsp_push_reg(oom_dst, OOM_BYTES);
  bsp_sync();
  if (culprit()) bsp_put(0, oom_src, oom_dst, 0, OOM_BYTES);
  bsp_sync();
  return 0;
}

/* ---- NULL where the library writes a result ------------------------------------------------ */

ERROR_CASE(get_tag_null_status, ERROR_PROCS, "", E "bsp_get_tag on process 1: .*NULL") {
  int tag[1];
  if (culprit()) bsp_get_tag(NULL, tag);
  bsp_sync();
  return 0;
}

ERROR_CASE(get_tag_null_tag, ERROR_PROCS, "", E "bsp_get_tag on process 1: .*NULL") {
  bsp_size_t tagsize = sizeof(int), status;
  bsp_set_tagsize(&tagsize);
  bsp_sync(); /* the new size holds from here: the queue after the next sync has it */
  bsp_sync();
  if (culprit()) bsp_get_tag(&status, NULL);
  bsp_sync();
  return 0;
}

/* Every process sends itself one message, so the culprit's queue is not empty. */
ERROR_CASE(move_null, ERROR_PROCS, "", E "bsp_move on process 1: .*NULL") {
  int v = 5;
  bsp_send(bsp_pid(), NULL, &v, sizeof v);
  bsp_sync();
  if (culprit()) bsp_move(NULL, sizeof v);
  bsp_sync();
  return 0;
}

ERROR_CASE(hpmove_null, ERROR_PROCS, "", E "bsp_hpmove on process 1: .*NULL") {
  int v = 5;
  void *payload;
  bsp_send(bsp_pid(), NULL, &v, sizeof v);
  bsp_sync();
  if (culprit()) bsp_hpmove(NULL, &payload);
  bsp_sync();
  return 0;
}

/* The byte count may be NULL (MulticoreBSP documents it as optional); the count may not. */
ERROR_CASE(qsize_null, ERROR_PROCS, "", E "bsp_qsize on process 1: the first argument is NULL") {
  int nbytes;
  if (culprit()) bsp_qsize(NULL, &nbytes);
  bsp_sync();
  return 0;
}

/* Pushed and popped in one superstep: legal, and nothing is registered afterwards. */
ERROR_CASE(push_pop_then_put, ERROR_PROCS, "", E "bsp_put on process 1: .*not registered") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_pop_reg(x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

/* ---- every process at once (one message, one end: two ranks aborting together once
 * crashed Open MPI's launcher) ---------------------------------------------------------------- */

ERROR_CASE(neg_put_all, ERROR_PROCS, "", E "bsp_put on process [0-9]+: .*negative") {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  bsp_put(0, x, x, 0, -4);
  bsp_sync();
  return 0;
}

ERROR_CASE(abort_all, ERROR_PROCS, "",
           "^bspkit: bsp_abort on process [0-9]+: deliberate abort from every process$") {
  bsp_sync();
  bsp_abort("deliberate abort from every process");
  return 0;
}

/* ---- bsp_abort --------------------------------------------------------------------------- */

ERROR_CASE(abort1, ERROR_PROCS, "",
           "^bspkit: bsp_abort on process 1: deliberate abort from process 1$") {
  if (culprit()) bsp_abort("deliberate abort from process %d\n", bsp_pid());
  bsp_sync();
  return 0;
}

/* A process that dies of a signal: the others, waiting in bsp_sync, must not hang. */
/* A process killed by a signal while the others wait in bsp_sync: the run ends, non-zero
 * (the dying process says nothing, so no line is expected). */
ERROR_CASE(crash1, ERROR_PROCS, "nosan", NULL) {
  if (culprit()) raise(SIGSEGV);
  bsp_sync();
  return 0;
}

ERROR_CASE(abort0, ERROR_PROCS_AND_1, "",
           "^bspkit: bsp_abort on process 0: deliberate abort from process 0, code x42$") {
  if (bsp_pid() == 0) bsp_abort("deliberate abort from process %d, code %s", 0, "x42");
  bsp_sync();
  return 0;
}

/* ---- communication outside the SPMD section ---------------------------------------------- */

static void outside_sync(void) { bsp_sync(); }

static void outside_put(void) {
  static int x[2];
  bsp_put(0, &x[0], &x[1], 0, sizeof(int));
}

static void outside_send(void) {
  int v = 0, tag = 0;
  bsp_send(0, &tag, &v, sizeof v);
}

/* The call happens in main, before bsp_begin or after bsp_end (process 0); the SPMD
 * section itself is one empty superstep. */
static int one_sync(void) {
  bsp_sync();
  return 0;
}

ERROR_CASE_AROUND(outside_sync_before, outside_sync, NULL, ERROR_PROCS_AND_1, "",
                  E "bsp_sync( on process [0-9]+)?: .*outside") {
  return one_sync();
}

ERROR_CASE_AROUND(outside_put_before, outside_put, NULL, ERROR_PROCS_AND_1, "",
                  E "bsp_put( on process [0-9]+)?: .*outside") {
  return one_sync();
}

ERROR_CASE_AROUND(outside_send_after, NULL, outside_send, ERROR_PROCS_AND_1, "",
                  E "bsp_send( on process [0-9]+)?: .*outside") {
  return one_sync();
}

ERROR_CASE_AROUND(outside_sync_after, NULL, outside_sync, ERROR_PROCS_AND_1, "",
                  E "bsp_sync( on process [0-9]+)?: .*outside") {
  return one_sync();
}

static const struct error_case *the_case;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  if (the_case->body()) return; /* deliberately without bsp_end */
  bsp_end();
}

int main(int argc, char **argv) {
  /* Everything the SPMD function needs is set before bsp_init: on a process-based back end
   * (MPI) only process 0 runs main after it. */
  the_case = error_case_select(argc, argv, NULL);
  if (the_case->before) the_case->before();
  bsp_init(spmd, argc, argv);
  spmd();
  if (the_case->after) the_case->after();
  fprintf(stderr, "bsp_errors: case %s: the error was not detected\n", the_case->name);
  return 3;
}
