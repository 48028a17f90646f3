/*
 * bspalg_driver.h - the skeleton every algorithm driver runs on. A driver describes itself in
 * one bspalg_driver (its name, help, options and a handful of callbacks) and ends its file
 * with BSPALG_MAIN(driver); the skeleton owns the rest of the program, the same for every
 * algorithm:
 *
 *   parse the common options (bspalg.h) and the driver's own, -h/--help, usage errors (exit 2)
 *   before_init()                                    optional, once, before bsp_init
 *   --checkpoint-every T: setenv BSPKIT_CHECKPOINT_EVERY (seconds)
 *   bsp_init, bsp_begin(P)
 *   protect the skeleton's progress                  the repetition, the finished ones' times
 *   state = setup(opts)                              allocate, make the inputs, bsp_push_reg,
 *                                                    bspalg_checkpoint_protect
 *   bspalg_counters_begin(); bsp_sync()
 *   restarted = bspk_checkpoint_resume()             a restart: the progress and the driver's
 *                                                    protected state as at the checkpoint
 *   for each of the --reps repetitions (a restart: from the one under way at the checkpoint):
 *     bspalg_counters_reset(); prepare(state)        untimed, uncounted, local (a restart:
 *                                                    not for the repetition under way)
 *     bsp_sync(); t0 = bsp_time()                    (a restart: no sync before the repetition
 *                                                    under way: its messages wait in the queue)
 *     repetition(state)                              the BSP algorithm, counting its cost (a
 *                                                    restart: from the driver's saved stage)
 *     times[rep] = bsp_time() - t0
 *   result(state, ...) on every process              optional: the JSON's "result_digest"
 *   check(state, ...)                                unless --no-check: verdict, note, message
 *   measure_f(state, 0, ...) on process 0 alone,     with --measure-f
 *     then measure_f(state, 1, ...) on every process, max over processes
 *   params(state, ...)                               the JSON's "params" object
 *   bspalg_report: the summary line on stdout, the JSON object (--json)
 *   bspalg_counters_end(); unprotect all
 *   teardown(state)                                  optional: what setup made by other means
 *   pop what bspalg_register pushed, free what bspalg_alloc gave
 *   bsp_end(); exit status 1 when the check failed
 *
 * algorithms/README.md says how to add an algorithm; algorithms/inprod/inprod.c is the
 * smallest complete driver.
 *
 * Checkpoints (bsprun --checkpoint-dir DIR, --restart DIR; docs/checkpoint.md). A driver that
 * takes them cuts its repetition into stages and keeps, in memory it protects in setup, all
 * that one stage hands to the next, with a small struct saying which stage comes next:
 *   setup:       bspalg_checkpoint_protect(...) every such array (every registered one too:
 *                a checkpoint needs them) and the struct;
 *   prepare:     the struct to the first stage;
 *   repetition:  from the struct's stage on; at the end of a stage the struct to the next
 *                one, then bspalg_checkpoint_sync in place of the stage's last bspalg_sync.
 * A restart restores the protected memory as it was at the checkpoint and calls repetition
 * (without prepare) for the repetition under way: it goes on from the saved stage. Nothing a
 * later stage reads may live in a local variable or in unprotected memory across the
 * checkpoint, and the protected areas are the same, in the same order, in every run.
 */
#ifndef BSPALG_DRIVER_H
#define BSPALG_DRIVER_H

#include <stddef.h>

#include "bspalg.h"

/* What the check reports (process 0's counts). */
typedef struct {
  char note[320];  /* how the result was checked: the JSON's "check_note" */
  char wrong[320]; /* on a wrong result, what differs: the skeleton prints the line
                      "<program>: WRONG RESULT<wrong>" on stderr, so start it with
                      " on ..." or ": ..." */
} bspalg_check_report;

typedef struct {
  /* The executable's name, "bspalg-<name>" as its CMake registration makes it: the usage
   * line and the messages. */
  const char *program;
  /* The run's name in the JSON and the summary line ("inprod"); NULL when the options choose
   * it: then algorithm_of() gives it (e.g. "matmul-static2d" for --dist static2d). */
  const char *algorithm;
  const char *(*algorithm_of)(void);
  /* What the program does and its own options, one line each, printed by --help between the
   * usage line and the common options; lines of options start with two spaces. */
  const char *help;
  /* The unit of bspalg_work and of f: "flop", "cell", ... */
  const char *work_unit;

  /* An argument that is not a common option: `value` is the argument after it (NULL at the
   * end of the command line). Returns how many arguments it used: 2 (an option and its
   * value), 1 (an option without a value), 0 (not one of its own, or its value is missing:
   * the skeleton then prints the usage error). A bad value: a message on stderr and exit(2)
   * (bspalg_parse_long and friends do both). Runs before bsp_init, so it may set globals:
   * they are read-only afterwards. NULL: no options of its own. */
  int (*option)(const char *arg, const char *value);
  /* Optional: once per program, after parsing and before bsp_init. */
  void (*before_init)(void);

  /* The callbacks below run on every BSP process, between bsp_begin and bsp_end. A process'
   * state lives in what setup returns (globals are shared by the processes of the threads
   * back end). */

  /* Allocate (bspalg_alloc), make this process' share of the inputs from opts->seed,
   * register what the others access (bspalg_register). Returns the state, or NULL when the problem
   * cannot run (too large for BSPlib, say), after process 0 printed why: the skeleton then ends
   * with exit status 2. */
  void *(*setup)(const bspalg_common_opts *opts);
  /* Optional: restore what a repetition changes (zero an accumulator). Local and untimed;
   * counts nothing. */
  void (*prepare)(void *state);
  /* One repetition of the algorithm, timed: its local work counted with bspalg_work, every
   * request to another process with bspalg_put / bspalg_get, every superstep ended with
   * bspalg_sync (never a plain bsp_sync). The same number of supersteps on every process. */
  void (*repetition)(void *state);
  /* Collective. Compare the result of the last repetition with the sequential reference:
   * return 1 when right, -1 when wrong (process 0's verdict counts; return 1 elsewhere) and
   * fill report->note (and ->wrong when wrong) on process 0. Synchronizes with plain
   * bsp_sync only (nothing counted). */
  int (*check)(void *state, bspalg_check_report *report);
  /* Optional (NULL: --measure-f measures nothing). Local, no communication: time the
   * algorithm's local kernel on this process' blocks and return seconds per work unit (0:
   * nothing to time). Called with every_process = 0 on process 0 alone (the others wait):
   * then write into note what was timed, for the JSON's "f_note", or why nothing was (an
   * empty note: no "f_note"); then with every_process = 1 on every process at once (note is
   * scratch), for f under the run's own load. */
  double (*measure_f)(void *state, int every_process, char *note, size_t note_size);
  /* The problem's parameters as one JSON object, e.g. {"n": 1000} (process 0's counts). */
  void (*params)(void *state, char *json, size_t json_size);
  /* Optional: this process' share of the result of the last repetition (its bytes, which may
   * be none: *nbytes = 0), the same bytes in every run of the same problem on as many
   * processes. The skeleton writes a digest of all of them (FNV-1a, process by process) in
   * the JSON's "result_digest": a restarted run must give an uninterrupted run's digest.
   * Local; called on every process after the repetitions. NULL: "result_digest" is null. */
  void (*result)(void *state, const void **bytes, size_t *nbytes);
  /* Optional: release what setup made by other means than bspalg_alloc and bspalg_register
   * (bsp_pop_reg in reverse order of the pushes). */
  void (*teardown)(void *state);
} bspalg_driver;

/* For setup: memory and registrations the skeleton releases after the run (after teardown),
 * so that most drivers need no teardown at all.
 *
 * bspalg_alloc: `bytes` zeroed bytes (at least one), freed after the run. Out of memory:
 * bsp_abort with "<program>: out of memory <why>", why formatted as by printf (e.g. "for A
 * (%ld doubles)"; "" for nothing more). Before that, a process whose allocations times the
 * processes sharing this machine exceed the memory available at the start is refused with
 * the numbers (bsp_abort), not left to be killed while it fills the memory.
 * bspalg_register: bsp_push_reg(ptr, bytes) now and bsp_pop_reg(ptr) after the run, in the
 * reverse order of the registrations. Collective, as bsp_push_reg is. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void *
bspalg_alloc(size_t bytes, const char *why, ...);
void bspalg_register(void *ptr, size_t bytes);

/* For setup: `bytes` bytes at ptr are saved in every checkpoint and restored on a restart
 * (bspk_checkpoint_protect; nothing in the portable build). Local. Protect the same areas,
 * of the same sizes, in the same order on every run; every registered area must lie in one.
 * The skeleton unprotects them after the run, before teardown, so they may be freed then.
 * Protect values only: a pointer saved in a checkpoint points into the run that saved it. */
void bspalg_checkpoint_protect(void *ptr, size_t bytes);

/* The area ptr, bytes that bspalg_checkpoint_protect was given: scratch (1) at the checkpoints
 * from now on (its bytes not saved, left as they are by a restart; its registrations still
 * saved), or state again (0; bspk_checkpoint_scratch). Local; for memory that is written
 * before it is read after every checkpoint to come, and may change before each one. */
void bspalg_checkpoint_scratch(void *ptr, size_t bytes, int scratch);

/* The whole program: BSPALG_MAIN(driver) at the end of the driver's file defines main (which
 * calls bspalg_main) and bspalg_program_driver. bspalg_main returns 0 on process 0 when the
 * run passed its check or was not checked; it exits with status 1 when the check failed and 2
 * on a usage error or a problem setup refused. */
int bspalg_main(const bspalg_driver *driver, int argc, char **argv);

/* The program's driver, for processes that start in the SPMD section without running main:
 * the BSPlib standard allows it (LPF's MPI engines do so), so the skeleton must not count on
 * what main set. */
const bspalg_driver *bspalg_program_driver(void);
#define BSPALG_MAIN(d)                                              \
  const bspalg_driver *bspalg_program_driver(void) { return &(d); } \
  int main(int argc, char **argv) { return bspalg_main(&(d), argc, argv); }

#endif
