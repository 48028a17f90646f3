/*
 * ckpt_errors.c - the usage errors of checkpoint and restart, one per case, for the tests
 * checkpoint.error_<case>.<backend>.p<P> (ckpt_test.py runs them).
 *
 *   ckpt_errors CASE            runs the case's SPMD section
 *   ckpt_errors --list          the cases' names
 *   ckpt_errors --expect CASE   how to run the case and what it must print: three lines,
 *                               the setup, the environment (NAME=value or "-"; variants
 *                               apart by |, one a run, in turn) and the extended regular
 *                               expression of the one error line
 *   ckpt_errors writer          a correct program that writes checkpoints (the setups' run)
 *
 * Every case must end the whole program with exit status 1 and one line `bspkit: error in
 * <call> on process <pid>: ...` on stderr. When the library misses the error the program
 * goes on, says so and exits with status 3, and the test fails.
 *
 * The setups (what ckpt_test.py does before and around the run):
 *   none      bsprun without checkpoint options
 *   dir       bsprun --checkpoint-dir EMPTY_DIR
 *   earlier   `writer` with --checkpoint-dir DIR, then the case with --checkpoint-dir DIR
 *   restart   `writer` with --checkpoint-dir DIR, then the case with --restart DIR
 *   restart+1 the same, but the writer runs on P + 1 processes
 * In the regular expression {P} stands for the case's process count, {P+1} for one more and
 * {VALUE} for the environment variable's value.
 *
 * Most cases have process 1 (the culprit) make the mistake while the others go on to wait in
 * a sync, so the line names it; where every process makes it, any process may report.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "bspkit.h"

#define CULPRIT 1
#define E "^bspkit: error in "

struct ckpt_case {
  const char *name, *setup, *env, *expect;
  void (*body)(void);
};
#define CASES_MAX 32
static struct ckpt_case cases[CASES_MAX];
static int ncases;

#define CKPT_CASE(name, setup, env, expect)                                         \
  static void case_##name(void);                                                    \
  __attribute__((constructor)) static void register_##name(void) {                  \
    if (ncases < CASES_MAX)                                                         \
      cases[ncases++] = (struct ckpt_case){#name, setup, env, expect, case_##name}; \
  }                                                                                 \
  static void case_##name(void)

static int culprit(void) { return bsp_pid() == CULPRIT; }

/* The library missed the error: the run goes on to here. */
static void missed(const char *what) {
  if (bsp_pid() == CULPRIT || bsp_pid() == 0)
    fprintf(stderr, "ckpt_errors: process %d: the library did not report %s\n", bsp_pid(), what);
  exit(3);
}

/* ---- the writer: the areas every restart case starts from ------------------------------ */

enum { BLOCK = 512 }; /* doubles */

typedef struct areas {
  long *counter;
  double *block;
} areas;

/* Protects the writer's two areas (block of nblock doubles) and registers the block. */
static areas protect_areas(int nblock) {
  areas a = {calloc(1, sizeof *a.counter), calloc((size_t)nblock, sizeof *a.block)};
  bspk_checkpoint_protect(a.counter, sizeof *a.counter);
  bspk_checkpoint_protect(a.block, (bsp_size_t)(nblock * sizeof *a.block));
  bsp_push_reg(a.block, (bsp_size_t)(nblock * sizeof *a.block));
  bsp_sync();
  return a;
}

/* Three supersteps that end with a checkpoint, each putting into the next process. */
static void run_checkpoints(areas a) {
  int p = bsp_nprocs(), s = bsp_pid();
  while (*a.counter < 3) {
    a.block[*a.counter] += 1.0;
    bsp_put((s + 1) % p, &a.block[*a.counter], a.block, (bsp_size_t)((BLOCK / 2) * sizeof(double)),
            sizeof(double));
    ++*a.counter;
    bspk_checkpoint();
  }
}

static void writer(void) {
  areas a = protect_areas(BLOCK);
  bspk_checkpoint_resume();
  run_checkpoints(a);
  bsp_pop_reg(a.block);
  bsp_sync();
  bspk_checkpoint_unprotect(a.block);
  bspk_checkpoint_unprotect(a.counter);
  free(a.block);
  free(a.counter);
}

/* ---- the cases --------------------------------------------------------------------------- */

CKPT_CASE(mixed_sync, "dir", "-",
          E
          "bsp_sync on process 1: this process called bsp_sync while other processes called "
          "bspk_checkpoint in the same superstep") {
  protect_areas(BLOCK);
  bspk_checkpoint_resume();
  if (culprit()) bsp_sync();
  else bspk_checkpoint();
  bsp_sync(); /* where the others wait for the culprit's error to end the program */
  missed("bsp_sync on one process and bspk_checkpoint on the others");
}

CKPT_CASE(mixed_sync_nodir, "none", "-",
          E
          "bsp_sync on process 1: this process called bsp_sync while other processes called "
          "bspk_checkpoint in the same superstep") {
  protect_areas(BLOCK);
  if (culprit()) bsp_sync();
  else bspk_checkpoint();
  bsp_sync();
  missed("bsp_sync on one process and bspk_checkpoint on the others (no checkpoint directory)");
}

/* A freed area of 1 MiB: malloc maps it by itself (the threshold is fixed in main) and free
 * unmaps it at once, which the checkpoint finds. */
CKPT_CASE(freed_area, "dir", "-",
          E
          "bspk_checkpoint on process 1: protected area 2 at 0x[0-9a-f]+ \\(1048576 bytes\\) is "
          "no longer mapped: it was freed while protected") {
  areas a = protect_areas(BLOCK);
  char *big = malloc(1 << 20);
  memset(big, 1, 1 << 20);
  bspk_checkpoint_protect(big, 1 << 20);
  bspk_checkpoint_resume();
  run_checkpoints(a);
  if (culprit()) free(big);
  bspk_checkpoint();
  missed("a checkpoint of a freed protected area");
}

CKPT_CASE(restart_other_p, "restart+1", "-",
          E
          "bspk_checkpoint_resume on process [0-9]+: the checkpoint in .* \\(superstep "
          "[0-9]+\\) was taken by {P+1} processes; this run has {P}: restart with bsprun -n "
          "{P+1}$") {
  writer();
  missed("a restart with another number of processes");
}

CKPT_CASE(earlier_run, "earlier", "-",
          E
          "bspk_checkpoint on process 0: the checkpoint directory .* holds the checkpoints of an "
          "earlier run \\(the newest at superstep [0-9]+\\): restart from them with bsprun "
          "--restart") {
  writer();
  missed("a fresh run into a directory with an earlier run's checkpoints");
}

CKPT_CASE(checkpoint_before_resume, "restart", "-",
          E
          "bspk_checkpoint on process [0-9]+: the run was started with bsprun --restart, but "
          "the program called bspk_checkpoint before bspk_checkpoint_resume") {
  areas a = protect_areas(BLOCK);
  run_checkpoints(a);
  missed("bspk_checkpoint before bspk_checkpoint_resume in a restart");
}

CKPT_CASE(restart_fewer_areas, "restart", "-",
          E
          "bspk_checkpoint_resume on process [0-9]+: the checkpoint holds 2 protected area\\(s\\) "
          "of this process; the program protected 1: protect the same areas") {
  long *counter = calloc(1, sizeof *counter);
  bspk_checkpoint_protect(counter, sizeof *counter);
  bspk_checkpoint_resume();
  missed("a restart with fewer protected areas than the checkpoint's");
}

CKPT_CASE(restart_more_areas, "restart", "-",
          E
          "bspk_checkpoint_resume on process 1: the checkpoint holds 2 protected area\\(s\\) "
          "of this process; the program protected 3: protect the same areas") {
  areas a = protect_areas(BLOCK);
  double *extra = calloc(8, sizeof *extra);
  if (culprit()) bspk_checkpoint_protect(extra, 8 * sizeof *extra);
  bspk_checkpoint_resume();
  run_checkpoints(a);
  missed("a restart with more protected areas than the checkpoint's");
}

CKPT_CASE(restart_area_size, "restart", "-",
          E
          "bspk_checkpoint_resume on process 1: protected area 1 of this process has 4096 bytes "
          "in the checkpoint, 2048 in the program: protect the same areas") {
  areas a = protect_areas(culprit() ? BLOCK / 2 : BLOCK);
  bspk_checkpoint_resume();
  run_checkpoints(a);
  missed("a restart with a protected area of another size");
}

CKPT_CASE(unprotected_registration, "dir", "-",
          E
          "bspk_checkpoint on process 1: the registered area at 0x[0-9a-f]+ \\(64 bytes\\) is "
          "not in protected memory") {
  areas a = protect_areas(BLOCK);
  char *loose = calloc(1, 64);
  bsp_push_reg(culprit() ? loose : (char *)(a.block + 8), 64);
  bsp_sync();
  bspk_checkpoint_resume();
  bspk_checkpoint();
  bsp_sync();
  missed("a registration outside protected memory at a checkpoint");
}

CKPT_CASE(unprotect_unknown, "none", "-",
          E
          "bspk_checkpoint_unprotect on process 1: 0x[0-9a-f]+ is not the start of a protected "
          "area") {
  areas a = protect_areas(BLOCK);
  if (culprit()) bspk_checkpoint_unprotect(a.block + 1);
  bsp_sync();
  missed("bspk_checkpoint_unprotect of an address inside, not at the start of, a protected area");
}

CKPT_CASE(every_malformed, "dir",
          "BSPKIT_CHECKPOINT_EVERY=5x|BSPKIT_CHECKPOINT_EVERY=nan|BSPKIT_CHECKPOINT_EVERY=-1|"
          "BSPKIT_CHECKPOINT_EVERY=1e999|BSPKIT_CHECKPOINT_EVERY=1,5",
          E
          "bspk_checkpoint(_resume)? on process [0-9]+: BSPKIT_CHECKPOINT_EVERY='{VALUE}' is not "
          "a number of seconds >= 0$") {
  writer();
  missed("a malformed BSPKIT_CHECKPOINT_EVERY");
}

CKPT_CASE(kill_at_malformed, "dir",
          "BSPKIT_KILL_AT=1:|BSPKIT_KILL_AT=1:99999999999999999999|BSPKIT_KILL_AT=1:-2|"
          "BSPKIT_KILL_AT=x:3|BSPKIT_KILL_AT=1:2:3",
          E
          "bspk_checkpoint(_resume)? on process [0-9]+: BSPKIT_KILL_AT='{VALUE}' is not "
          "PID:SUPERSTEP \\(two numbers >= 0\\)$") {
  writer();
  missed("a malformed BSPKIT_KILL_AT");
}

/* ---- main -------------------------------------------------------------------------------- */

static void (*body)(void);

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  body();
  bsp_end();
}

int main(int argc, char **argv) {
  const char *arg = argc > 1 ? argv[1] : "";
  if (strcmp(arg, "--list") == 0) {
    for (int i = 0; i < ncases; i++) printf("%s\n", cases[i].name);
    return 0;
  }
  int expect = strcmp(arg, "--expect") == 0;
  const char *name = expect ? (argc > 2 ? argv[2] : "") : arg;
  if (strcmp(name, "writer") == 0 && !expect) body = writer;
  for (int i = 0; i < ncases && !body; i++) {
    if (strcmp(name, cases[i].name) != 0) continue;
    if (expect) {
      printf("%s\n%s\n%s\n", cases[i].setup, cases[i].env, cases[i].expect);
      return 0;
    }
    body = cases[i].body;
  }
  if (!body) {
    fprintf(stderr, "usage: %s [--expect] CASE | writer | --list; the cases are:\n", argv[0]);
    for (int i = 0; i < ncases; i++) fprintf(stderr, "  %s\n", cases[i].name);
    return 2;
  }
  /* Allocations of 128 KiB and more are mapped by themselves, and unmapped by free, however
   * large an area freed before (glibc raises the threshold after such a free otherwise). */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
