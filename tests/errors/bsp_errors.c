/*
 * bsp_errors.c - one BSPlib usage error per case; the case is argv[1] (`bsp_errors --list`
 * lists them). Every case must end the whole program with exit status 1 and one line
 * `bspkit: error in <call> on process <pid>: <explanation>` (or the bsp_abort line) on
 * stderr; tests/errors/CMakeLists.txt checks both through tests/expect_failure.sh.
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

#define CULPRIT 1

static int culprit(void) { return bsp_pid() == CULPRIT; }

/* ---- pid out of range -------------------------------------------------------------------- */

static int c_put_pid(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(bsp_nprocs(), x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_put_negpid(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(-1, x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_get_pid(void) {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(bsp_nprocs() + 5, x, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_hpput_pid(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpput(bsp_nprocs(), x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_hpget_pid(void) {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(bsp_nprocs(), x, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_send_pid(void) {
  int v = 7, tag = 0;
  if (culprit()) bsp_send(bsp_nprocs(), &tag, &v, sizeof v);
  bsp_sync();
  return 0;
}

static int c_send_negpid(void) {
  int v = 7, tag = 0;
  if (culprit()) bsp_send(-3, &tag, &v, sizeof v);
  bsp_sync();
  return 0;
}

/* ---- unregistered addresses ------------------------------------------------------------ */

static int c_put_unreg(void) {
  int x[4] = {0}, unreg[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, unreg, 0, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_get_unreg(void) {
  int x[4] = {0}, unreg[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(0, unreg, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_hpput_unreg(void) {
  int x[4] = {0}, unreg[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpput(0, x, unreg, 0, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_hpget_unreg(void) {
  int x[4] = {0}, unreg[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(0, unreg, 0, y, sizeof(int));
  bsp_sync();
  return 0;
}

/* A registration pushed in this superstep is not usable before the next bsp_sync. */
static int c_put_unreg_pending(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  if (culprit()) bsp_put(0, x, x, 0, sizeof(int));
  bsp_sync();
  return 0;
}

/* ---- past the end of a registered area --------------------------------------------------- */

static int c_put_past(void) {
  int x[4] = {0}, src[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, src, x, 2 * sizeof(int), 3 * sizeof(int));
  bsp_sync();
  return 0;
}

static int c_put_past_offset(void) {
  int x[4] = {0}, src[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, src, x, sizeof x, 1);
  bsp_sync();
  return 0;
}

static int c_get_past(void) {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(0, x, 2 * sizeof(int), y, 3 * sizeof(int));
  bsp_sync();
  return 0;
}

static int c_hpput_past(void) {
  int x[4] = {0}, src[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpput(0, src, x, sizeof(int), sizeof x);
  bsp_sync();
  return 0;
}

static int c_hpget_past(void) {
  int x[4] = {0}, y[8];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(0, x, 0, y, sizeof x + 1);
  bsp_sync();
  return 0;
}

/* ---- registration ------------------------------------------------------------------------ */

static int c_pop_unreg(void) {
  int x[4] = {0}, never[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_pop_reg(never);
  bsp_sync();
  return 0;
}

static int c_reg_differ(void) {
  int x[4] = {0}, extra[4] = {0};
  bsp_push_reg(x, sizeof x);
  if (culprit()) bsp_push_reg(extra, sizeof extra);
  bsp_sync();
  bsp_sync();
  return 0;
}

/* ---- the end of the SPMD section --------------------------------------------------------- */

static int c_end_while_sync0(void) {
  if (bsp_pid() == 0) return 0; /* straight to bsp_end */
  bsp_sync();
  return 0;
}

static int c_end_while_sync1(void) {
  if (bsp_pid() == 1) return 0; /* straight to bsp_end */
  bsp_sync();
  return 0;
}

/* Process 1 returns from the SPMD function without calling bsp_end. */
static int c_noend(void) {
  if (culprit()) return 1;
  bsp_sync();
  return 0;
}

static int c_begin_twice(void) {
  if (culprit()) bsp_begin(bsp_nprocs());
  bsp_sync();
  return 0;
}

/* ---- negative sizes and offsets ---------------------------------------------------------- */

static int c_neg_put_nbytes(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, x, 0, -4);
  bsp_sync();
  return 0;
}

static int c_neg_put_offset(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_put(0, x, x, -4, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_neg_get_nbytes(void) {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_get(0, x, 0, y, -1);
  bsp_sync();
  return 0;
}

static int c_neg_hpget_offset(void) {
  int x[4] = {0}, y[4];
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  if (culprit()) bsp_hpget(0, x, -8, y, sizeof(int));
  bsp_sync();
  return 0;
}

static int c_neg_tagsize(void) {
  if (culprit()) {
    bsp_size_t t = -1;
    bsp_set_tagsize(&t);
  }
  bsp_sync();
  return 0;
}

static int c_neg_send(void) {
  int v = 1, tag = 0;
  if (culprit()) bsp_send(0, &tag, &v, -1);
  bsp_sync();
  return 0;
}

static int c_neg_push_reg(void) {
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
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
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

static int c_oom_put(void) {
  bsp_push_reg(oom_dst, OOM_BYTES);
  bsp_sync();
  if (culprit()) bsp_put(0, oom_src, oom_dst, 0, OOM_BYTES);
  bsp_sync();
  return 0;
}

/* ---- NULL where the library writes a result ------------------------------------------------ */

static int c_get_tag_null_status(void) {
  int tag[1];
  if (culprit()) bsp_get_tag(NULL, tag);
  bsp_sync();
  return 0;
}

static int c_get_tag_null_tag(void) {
  bsp_size_t tagsize = sizeof(int), status;
  bsp_set_tagsize(&tagsize);
  bsp_sync(); /* the new size holds from here: the queue after the next sync has it */
  bsp_sync();
  if (culprit()) bsp_get_tag(&status, NULL);
  bsp_sync();
  return 0;
}

/* Every process sends itself one message, so the culprit's queue is not empty. */
static int c_move_null(void) {
  int v = 5;
  bsp_send(bsp_pid(), NULL, &v, sizeof v);
  bsp_sync();
  if (culprit()) bsp_move(NULL, sizeof v);
  bsp_sync();
  return 0;
}

static int c_hpmove_null(void) {
  int v = 5;
  void *payload;
  bsp_send(bsp_pid(), NULL, &v, sizeof v);
  bsp_sync();
  if (culprit()) bsp_hpmove(NULL, &payload);
  bsp_sync();
  return 0;
}

static int c_qsize_null(void) {
  int n;
  if (culprit()) bsp_qsize(&n, NULL);
  bsp_sync();
  return 0;
}

/* Pushed and popped in one superstep: legal, and nothing is registered afterwards. */
static int c_push_pop_then_put(void) {
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

static int c_neg_put_all(void) {
  int x[4] = {0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  bsp_put(0, x, x, 0, -4);
  bsp_sync();
  return 0;
}

static int c_abort_all(void) {
  bsp_sync();
  bsp_abort("deliberate abort from every process");
  return 0;
}

/* ---- bsp_abort --------------------------------------------------------------------------- */

static int c_abort1(void) {
  if (culprit()) bsp_abort("deliberate abort from process %d\n", bsp_pid());
  bsp_sync();
  return 0;
}

/* A process that dies of a signal: the others, waiting in bsp_sync, must not hang. */
static int c_crash1(void) {
  if (culprit()) raise(SIGSEGV);
  bsp_sync();
  return 0;
}

static int c_abort0(void) {
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

static int c_nothing(void) {
  bsp_sync();
  return 0;
}

/* ---- the table of cases -------------------------------------------------------------------- */

struct errcase {
  const char *name;
  int (*body)(void);       /* inside the SPMD section; returns 1 to skip bsp_end */
  void (*before)(void);    /* in main before the SPMD section */
  void (*after)(void);     /* in main after bsp_end (process 0 only) */
};

static const struct errcase cases[] = {
    {"put_pid", c_put_pid, NULL, NULL},
    {"put_negpid", c_put_negpid, NULL, NULL},
    {"get_pid", c_get_pid, NULL, NULL},
    {"hpput_pid", c_hpput_pid, NULL, NULL},
    {"hpget_pid", c_hpget_pid, NULL, NULL},
    {"send_pid", c_send_pid, NULL, NULL},
    {"send_negpid", c_send_negpid, NULL, NULL},
    {"put_unreg", c_put_unreg, NULL, NULL},
    {"get_unreg", c_get_unreg, NULL, NULL},
    {"hpput_unreg", c_hpput_unreg, NULL, NULL},
    {"hpget_unreg", c_hpget_unreg, NULL, NULL},
    {"put_unreg_pending", c_put_unreg_pending, NULL, NULL},
    {"put_past", c_put_past, NULL, NULL},
    {"put_past_offset", c_put_past_offset, NULL, NULL},
    {"get_past", c_get_past, NULL, NULL},
    {"hpput_past", c_hpput_past, NULL, NULL},
    {"hpget_past", c_hpget_past, NULL, NULL},
    {"pop_unreg", c_pop_unreg, NULL, NULL},
    {"reg_differ", c_reg_differ, NULL, NULL},
    {"end_while_sync0", c_end_while_sync0, NULL, NULL},
    {"end_while_sync1", c_end_while_sync1, NULL, NULL},
    {"noend", c_noend, NULL, NULL},
    {"begin_twice", c_begin_twice, NULL, NULL},
    {"neg_put_nbytes", c_neg_put_nbytes, NULL, NULL},
    {"neg_put_offset", c_neg_put_offset, NULL, NULL},
    {"neg_get_nbytes", c_neg_get_nbytes, NULL, NULL},
    {"neg_hpget_offset", c_neg_hpget_offset, NULL, NULL},
    {"neg_tagsize", c_neg_tagsize, NULL, NULL},
    {"neg_send", c_neg_send, NULL, NULL},
    {"neg_push_reg", c_neg_push_reg, NULL, NULL},
    {"oom_put", c_oom_put, oom_setup, NULL},
    {"get_tag_null_status", c_get_tag_null_status, NULL, NULL},
    {"get_tag_null_tag", c_get_tag_null_tag, NULL, NULL},
    {"move_null", c_move_null, NULL, NULL},
    {"hpmove_null", c_hpmove_null, NULL, NULL},
    {"qsize_null", c_qsize_null, NULL, NULL},
    {"push_pop_then_put", c_push_pop_then_put, NULL, NULL},
    {"neg_put_all", c_neg_put_all, NULL, NULL},
    {"abort_all", c_abort_all, NULL, NULL},
    {"abort1", c_abort1, NULL, NULL},
    {"crash1", c_crash1, NULL, NULL},
    {"abort0", c_abort0, NULL, NULL},
    {"outside_sync_before", c_nothing, outside_sync, NULL},
    {"outside_put_before", c_nothing, outside_put, NULL},
    {"outside_send_after", c_nothing, NULL, outside_send},
    {"outside_sync_after", c_nothing, NULL, outside_sync},
};

static const struct errcase *the_case;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  if (the_case->body()) return; /* deliberately without bsp_end */
  bsp_end();
}

int main(int argc, char **argv) {
  /* Everything the SPMD function needs is set before bsp_init: on a process-based back end
   * (MPI) only process 0 runs main after it. */
  const char *name = argc > 1 ? argv[1] : "";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(name, cases[i].name) == 0) the_case = &cases[i];
  if (!the_case) {
    FILE *out = strcmp(name, "--list") == 0 ? stdout : stderr;
    if (out == stderr) fprintf(stderr, "usage: %s CASE; the cases are:\n", argv[0]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) fprintf(out, "%s\n", cases[i].name);
    return out == stdout ? 0 : 2;
  }
  if (the_case->before) the_case->before();
  bsp_init(spmd, argc, argv);
  spmd();
  if (the_case->after) the_case->after();
  fprintf(stderr, "bsp_errors: case %s: the error was not detected\n", name);
  return 3;
}
