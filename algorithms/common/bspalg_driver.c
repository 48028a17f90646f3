/*
 * bspalg_driver.c - the program every algorithm driver runs (see bspalg_driver.h).
 */
#include "bspalg_driver.h"
#include "calibration.h"

#include <bsp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "bspk_machine.h"
#include "bspk_state.h"
#include "bspalg_library.h"

/* Set in bspalg_main before bsp_init and only read afterwards: on the threads back end the
 * BSP processes share them; on a process-based one every process parsed its own copy. */
static const bspalg_driver *driver;
static bspalg_common_opts opts;
/* main's command line (argc 0: main did not run in this process; see share_command_line). */
static struct command_line {
  int argc;
  char **argv;
} command_line;

/* What bspalg_alloc and bspalg_register hand out, newest first: per process (on the threads
 * back end the processes are threads). A list node per item keeps the memory itself exactly
 * as calloc aligns it. */
typedef struct held {
  void *ptr;
  struct held *next;
} held;
static _Thread_local held *allocated, *registered, *protected_areas;
/* What bspalg_alloc gave this process so far, and the memory free when the program started
 * (read once, before the processes start filling theirs). */
static _Thread_local size_t allocated_bytes;
static unsigned long long memory_at_start;

static held *hold(held *list, void *ptr) {
  held *node = malloc(sizeof *node);
  if (!node) bsp_abort("%s: out of memory\n", driver->program);
  *node = (held){ptr, list};
  return node;
}

/* The BSP processes that share this machine's memory: all of them on the threads back end;
 * on a process-based one at most one per core here (more nodes hold the rest). */
static unsigned long long processes_here(void) {
  const char *backend = getenv("BSPKIT_BACKEND");
  unsigned long long p = (unsigned long long)bsp_nprocs();
  if (backend && *backend && strcmp(backend, "threads") != 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && (unsigned long long)cores < p) p = (unsigned long long)cores;
  }
  return p;
}

void *bspalg_alloc(size_t bytes, const char *why, ...) {
  char reason[256];
  va_list args;
  va_start(args, why);
  vsnprintf(reason, sizeof reason, why, args);
  va_end(args);
  /* Refused before it is touched: a calloc the kernel overcommits succeeds, and filling it
   * would get the whole run killed by the out-of-memory killer, without a word. */
  allocated_bytes += bytes;
  unsigned long long here = processes_here();
  if (memory_at_start > 0 && (unsigned long long)allocated_bytes * here > memory_at_start) {
    const double gib = (double)(1u << 30);
    bsp_abort(
        "%s: the run needs at least %.1f GiB (%.2f GiB on each of %llu processes on this "
        "machine%s%s) but this machine has %.1f GiB available: use a smaller problem or "
        "fewer processes per machine\n",
        driver->program, (double)allocated_bytes * (double)here / gib,
        (double)allocated_bytes / gib, here, reason[0] ? ", " : "", reason,
        (double)memory_at_start / gib);
  }
  void *ptr = calloc(1, bytes ? bytes : 1);
  if (!ptr) bsp_abort("%s: out of memory%s%s\n", driver->program, reason[0] ? " " : "", reason);
  allocated = hold(allocated, ptr);
  return ptr;
}

void bspalg_register(void *ptr, size_t bytes) {
  bsp_push_reg(ptr, (bsp_size_t)bytes);
  registered = hold(registered, ptr);
}

/* BSPlib sizes are ints: a larger area is protected in pieces (in the same order on every run;
 * a registered area, at most INT_MAX bytes, fits in one piece when protected by itself). */
#define PROTECT_PIECE ((size_t)0x7fffffff & ~(size_t)7)

void bspalg_checkpoint_protect(void *ptr, size_t bytes) {
  char *at = ptr;
  do {
    size_t piece = bytes < PROTECT_PIECE ? bytes : PROTECT_PIECE;
    bspalg_library_protect(at, piece);
    protected_areas = hold(protected_areas, at);
    at += piece;
    bytes -= piece;
  } while (bytes > 0);
}

void bspalg_checkpoint_scratch(void *ptr, size_t bytes, int scratch) {
  char *at = ptr;
  do { /* the pieces bspalg_checkpoint_protect made */
    size_t piece = bytes < PROTECT_PIECE ? bytes : PROTECT_PIECE;
    bspalg_library_scratch(at, scratch);
    at += piece;
    bytes -= piece;
  } while (bytes > 0);
}

/* After the last checkpoint: what is protected may be freed from here on. */
static void unprotect_all(void) {
  while (protected_areas) {
    held *node = protected_areas;
    bspalg_library_unprotect(node->ptr);
    protected_areas = node->next;
    free(node);
  }
}

/* Pops the registrations, newest first, then frees the memory. */
static void release_held(void) {
  while (registered) {
    held *node = registered;
    bsp_pop_reg(node->ptr);
    registered = node->next;
    free(node);
  }
  while (allocated) {
    held *node = allocated;
    free(node->ptr);
    allocated = node->next;
    free(node);
  }
}

static const char *algorithm_name(void) {
  return driver->algorithm_of ? driver->algorithm_of() : driver->algorithm;
}

static void usage(FILE *to) {
  fprintf(to, "usage: bsprun [-b BACKEND] -n P %s [options]\n%s%s", driver->program, driver->help,
          bspalg_common_help);
}

/* Common options first, then -h/--help, then the driver's own; anything else is a usage
 * error. */
static void parse_command_line(int argc, char **argv) {
  const char *prog = driver->program;
  bspalg_common_defaults(&opts);
  for (int i = 1; i < argc; i++) {
    if (bspalg_parse_common(prog, &opts, argc, argv, &i)) continue;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      exit(0);
    }
    int used = driver->option ? driver->option(argv[i], i + 1 < argc ? argv[i + 1] : NULL) : 0;
    if (used > 0) {
      i += used - 1;
      continue;
    }
    fprintf(stderr, "%s: unknown option or missing value: '%s'\n", prog, argv[i]);
    usage(stderr);
    exit(2);
  }
}

/* --measure-f: the kernel on process 0 alone (thesis 3.1; the others wait), then on every
 * process at once, the max over processes (f under the run's own load); each the median of
 * F_TIMINGS timings, so that one timing caught in a pause of a shared machine does not become
 * the f of the run. Collective. */
enum { F_TIMINGS = 3 };

/* ---- the machine's state around each repetition (bspk_state.h) ------------------------------ */

typedef struct {
  double *words;                  /* reps * BSPK_STATE_WORDS: this process's deltas, packed */
  bspk_machine_counters *machine; /* 2 * reps, process 0: before and after each repetition */
  bspk_thread_state start;
  uint64_t *canary; /* this process's canary buffer (NULL: no canary) */
  long slow_rep;    /* BSPKIT_CANARY_SLOW: the repetition whose canary does 3x its work */
} run_state;

/* The canary (bspk_state.h) runs before the machine's counters are read and after the
 * repetition's end is: outside the repetition's timing, in its state object. */
static void state_begin(run_state *st, int rep) {
  double canary = bspk_canary_seconds(st->canary, rep == st->slow_rep ? 3 : 1);
  if (bsp_pid() == 0) st->machine[2 * rep] = bspk_machine_counters_now();
  st->start = bspk_thread_state_now();
  st->start.canary_s = canary;
}

static void state_end(run_state *st, int rep) {
  bspk_thread_state now = bspk_thread_state_now();
  now.canary_s = bspk_canary_seconds(st->canary, rep == st->slow_rep ? 3 : 1);
  bspk_thread_delta d = bspk_thread_delta_of(st->start, now);
  if (bsp_pid() == 0) st->machine[2 * rep + 1] = bspk_machine_counters_now();
  bspk_thread_delta_pack(d, st->words + (size_t)rep * BSPK_STATE_WORDS);
}

/* Gathers every process's words to process 0 (three supersteps) and returns there the JSON
 * array of one state object per repetition (malloc'd), elsewhere NULL. */
static char *state_gather(run_state *st, int reps) {
  int p = bsp_nprocs(), s = bsp_pid();
  size_t per = (size_t)reps * BSPK_STATE_WORDS;
  double *all = calloc((size_t)p * per, sizeof *all);
  if (!all) bsp_abort("%s: out of memory\n", driver->program);
  bsp_push_reg(all, (bsp_size_t)((size_t)p * per * sizeof *all));
  bsp_sync();
  bsp_put(0, st->words, all, (bsp_size_t)((size_t)s * per * sizeof *all),
          (bsp_size_t)(per * sizeof *all));
  bsp_sync();
  bsp_pop_reg(all);
  char *json = NULL;
  if (s == 0) {
    bspk_thread_delta *d = malloc((size_t)p * sizeof *d);
    size_t cap = 16, n = 0;
    json = malloc(cap);
    if (!d || !json) bsp_abort("%s: out of memory\n", driver->program);
    json[n++] = '[';
    for (int r = 0; r < reps; r++) {
      for (int t = 0; t < p; t++)
        d[t] = bspk_thread_delta_unpack(all + (size_t)t * per + (size_t)r * BSPK_STATE_WORDS);
      char *one = bspk_state_json(d, p, st->machine[2 * r], st->machine[2 * r + 1]);
      size_t len = one ? strlen(one) : 4;
      if (n + len + 4 > cap) {
        while (n + len + 4 > cap) cap *= 2;
        json = realloc(json, cap);
        if (!json) bsp_abort("%s: out of memory\n", driver->program);
      }
      if (r) json[n++] = ',';
      memcpy(json + n, one ? one : "null", len);
      n += len;
      free(one);
    }
    json[n++] = ']';
    json[n] = '\0';
    free(d);
  }
  bsp_sync(); /* the area is popped at this sync */
  free(all);
  return json;
}

static double median3(double a, double b, double c) {
  return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* One timing of the kernel, and the same with the time this process waited for a core taken
 * out (bspk_state.h): what the kernel costs on a core it holds, which on a busy machine is
 * what a prediction as the machine was needs (docs/algorithm-output.md, f_held_s_per_unit). */
static double time_kernel(void *state, int all, char *note, size_t note_size, double *held) {
  bspk_thread_state before = bspk_thread_state_now();
  double t = driver->measure_f(state, all, note, note_size);
  bspk_thread_delta d = bspk_thread_delta_of(before, bspk_thread_state_now());
  double lost = d.waited_s > 0 && d.wall_s > 0 ? d.waited_s / d.wall_s : 0.0;
  *held = t * (lost < 1.0 ? 1.0 - lost : 0.0);
  return t;
}

static void measure_f(void *state, double *f, double *f_all, double *f_held, double *f_all_held,
                      char *note, size_t note_size) {
  char scratch[512];
  double alone[F_TIMINGS] = {0}, all[F_TIMINGS], alone_held[F_TIMINGS] = {0}, all_held[F_TIMINGS];
  for (int i = 0; i < F_TIMINGS; i++)
    if (bsp_pid() == 0) alone[i] = time_kernel(state, 0, note, note_size, &alone_held[i]);
  bsp_sync();
  for (int i = 0; i < F_TIMINGS; i++) {
    bsp_sync(); /* a common start */
    double held;
    all[i] = bspalg_max_over_procs(time_kernel(state, 1, scratch, sizeof scratch, &held));
    all_held[i] = bspalg_max_over_procs(held);
  }
  *f = median3(alone[0], alone[1], alone[2]);
  *f_all = median3(all[0], all[1], all[2]);
  *f_held = median3(alone_held[0], alone_held[1], alone_held[2]);
  *f_all_held = median3(all_held[0], all_held[1], all_held[2]);
}

/* A calibration record kept past the next round (process 0; NULL elsewhere). */
static char *copy_record(const char *record) {
  if (!record) return NULL;
  char *copy = strdup(record);
  if (!copy) bsp_abort("%s: out of memory\n", driver->program);
  return copy;
}

/* ---- the result's digest ------------------------------------------------------------------ */

/* FNV-1a, 64 bits, over 64-bit words (a last partial word padded with zeros): the bytes' count,
 * then the bytes. */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv1a_words(uint64_t h, const void *bytes, size_t n) {
  const unsigned char *b = bytes;
  h = (h ^ (uint64_t)n) * FNV_PRIME;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = 0;
    memcpy(&word, b + i, n - i < 8 ? n - i : 8);
    h = (h ^ word) * FNV_PRIME;
  }
  return h;
}

/* Collective: every process' digest of its share of the result, to process 0, which digests
 * them in pid order into `hex` (16 hex digits; elsewhere left as it is). */
static void result_digest(void *state, char hex[17]) {
  const void *bytes = NULL;
  size_t nbytes = 0;
  driver->result(state, &bytes, &nbytes);
  uint64_t mine = fnv1a_words(FNV_OFFSET, nbytes ? bytes : NULL, nbytes);
  int p = bsp_nprocs(), s = bsp_pid();
  uint64_t *all = calloc((size_t)p, sizeof *all);
  if (!all) bsp_abort("%s: out of memory\n", driver->program);
  bsp_push_reg(all, (bsp_size_t)((size_t)p * sizeof *all));
  bsp_sync();
  bsp_put(0, &mine, all, (bsp_size_t)((size_t)s * sizeof *all), (bsp_size_t)sizeof mine);
  bsp_sync();
  bsp_pop_reg(all);
  if (s == 0)
    snprintf(hex, 17, "%016llx",
             (unsigned long long)fnv1a_words(FNV_OFFSET, all, (size_t)p * sizeof *all));
  bsp_sync(); /* the area is popped at this sync */
  free(all);
}

/* ---- the SPMD section ------------------------------------------------------------------------ */

/* What the skeleton itself needs to go on after a restart (protected before the driver's
 * memory, so that its areas come first in every run). */
typedef struct {
  int rep;       /* the repetition under way, or the next one */
  int under_way; /* repetition `rep` has begun: a checkpoint was taken inside it */
} progress;

/* The SPMD section between bsp_begin and bsp_end; returns the program's exit status (0, 1: a
 * wrong result, 2: setup refused the problem). */
static int section(void) {
  const char *prog = driver->program;
  progress *done = calloc(1, sizeof *done);
  double *times = calloc((size_t)opts.reps, sizeof *times);
  run_state machine = {calloc((size_t)opts.reps * BSPK_STATE_WORDS, sizeof(double)),
                       calloc((size_t)opts.reps * 2, sizeof(bspk_machine_counters)),
                       bspk_thread_state_now(), bspk_canary_buffer(), bspk_canary_slow_batch()};
  if (!done || !times || !machine.words || !machine.machine) bsp_abort("%s: out of memory\n", prog);
  bspalg_checkpoint_protect(done, sizeof *done);
  bspalg_checkpoint_protect(times, (size_t)opts.reps * sizeof *times);
  bspalg_checkpoint_protect(machine.words, (size_t)opts.reps * BSPK_STATE_WORDS * sizeof(double));
  bspalg_checkpoint_protect(machine.machine, (size_t)opts.reps * 2 * sizeof(bspk_machine_counters));
  void *state = driver->setup(&opts);
  if (!state) { /* setup said why on process 0 */
    unprotect_all();
    release_held();
    free(done);
    free(times);
    free(machine.words);
    free(machine.machine);
    free(machine.canary);
    return 2;
  }
  bspalg_phase("setup");
  /* --calibrate: the short calibration in this process, before the repetitions and after
   * them (and f), so that it sees the machine in the state the run saw (calibration.h) */
  if (opts.calibrate) bsp_sync(); /* its cost must not hold the other processes' setup */
  double calibration_t0 = bsp_time();
  bspp_calibration *calibration =
      opts.calibrate ? bspp_calibration_begin(opts.calibrate == 2) : NULL;
  char *calibration_before =
      calibration ? copy_record(bspp_calibration_round(calibration, 0)) : NULL;
  double calibration_s = bsp_time() - calibration_t0;
  bspalg_counters_begin();
  bsp_sync();
  /* A restart: the progress, the times of the repetitions before the checkpoint and the
   * driver's protected state as they were at the checkpoint. */
  int restarted = bspalg_library_resume();
  int resume = restarted && done->under_way;

  for (int rep = restarted ? done->rep : 0; rep < opts.reps; rep++) {
    /* The repetition under way at the checkpoint goes on where it was, with no sync before:
     * the messages the checkpoint's sync delivered are in the queue for its next superstep. */
    if (!resume) {
      bspalg_phase("prepare");
      bspalg_counters_reset(); /* the report keeps the last repetition's counts */
      if (driver->prepare) driver->prepare(state);
      done->rep = rep;
      done->under_way = 1;
      bsp_sync();
    }
    resume = 0;
    char phase[32];
    snprintf(phase, sizeof phase, "rep %d", rep + 1);
    bspalg_phase(phase);
    state_begin(&machine, rep); /* outside the timing: process 0 reads two /proc files */
    double t0 = bsp_time();
    driver->repetition(state);
    times[rep] = bsp_time() - t0;
    state_end(&machine, rep);
    done->rep = rep + 1;
    done->under_way = 0;
    /* Outside the timing: ends the repetition's local work after its last sync, so that a
     * profile's phase "rep N" holds all of the repetition (docs/profile-format.md). */
    bsp_sync();
  }
  bspalg_phase("check");

  char digest[17] = "";
  if (driver->result) result_digest(state, digest);
  int verified = 0;
  bspalg_check_report check = {"not checked (--no-check)", ""};
  if (opts.check) {
    check.note[0] = '\0';
    verified = driver->check(state, &check);
    if (verified < 0 && bsp_pid() == 0) fprintf(stderr, "%s: WRONG RESULT%s\n", prog, check.wrong);
  }

  bspalg_phase("report");
  char *state_json = state_gather(&machine, opts.reps);
  double f = 0.0, f_all = 0.0, f_held = 0.0, f_all_held = 0.0;
  char f_note[512] = "";
  if (opts.measure_f && driver->measure_f)
    measure_f(state, &f, &f_all, &f_held, &f_all_held, f_note, sizeof f_note);
  calibration_t0 = bsp_time();
  char *calibration_after =
      calibration ? copy_record(bspp_calibration_round(calibration, 1)) : NULL;
  if (calibration) bspp_calibration_end(calibration);
  calibration_s += bsp_time() - calibration_t0;

  char params[4096] = "{}"; /* oocmm lists its I/O call sizes here */
  driver->params(state, params, sizeof params);
  FILE *json = bsp_pid() == 0 ? bspalg_open_json(prog, opts.json_path) : NULL;
  bspalg_info info = {algorithm_name(),
                      params,
                      driver->work_unit,
                      verified,
                      check.note,
                      f,
                      f_note[0] ? f_note : NULL,
                      json,
                      f_all,
                      calibration_before,
                      calibration_after,
                      calibration ? calibration_s : 0.0,
                      state_json,
                      f_held,
                      f_all_held,
                      digest[0] ? digest : NULL,
                      restarted};
  bspalg_report(&info, times, opts.reps);
  free(state_json);
  free(calibration_before);
  free(calibration_after);
  if (json && json != stdout) fclose(json);
  bspalg_counters_end();
  unprotect_all();
  if (driver->teardown) driver->teardown(state);
  release_held();
  free(done);
  free(times);
  free(machine.words);
  free(machine.machine);
  free(machine.canary);
  return verified < 0 ? 1 : 0;
}

#ifdef BSPKIT_PORTABLE
/* The BSPlib standard lets processes other than 0 start in the SPMD function without running
 * main (LPF's MPI engines do): they have neither the command line nor what main set. Process
 * 0 sends them its command line in the section's first superstep, and a process that did not
 * parse one parses it. (bspkit's back ends run main everywhere, or share it: not needed.) */
static void share_command_line(void) {
  static char none; /* a tag of size 0 */
  if (bsp_pid() == 0) {
    size_t bytes = 0;
    for (int i = 0; i < command_line.argc; i++) bytes += strlen(command_line.argv[i]) + 1;
    char *packed = malloc(bytes + 1), *at = packed;
    if (!packed) bsp_abort("%s: out of memory\n", driver->program);
    for (int i = 0; i < command_line.argc; i++) at = stpcpy(at, command_line.argv[i]) + 1;
    for (int t = 1; t < bsp_nprocs(); t++) bsp_send(t, &none, packed, (bsp_size_t)bytes);
    bsp_sync();
    free(packed);
    return;
  }
  bsp_sync();
  bsp_size_t bytes = -1;
  bsp_get_tag(&bytes, &none);
  if (command_line.argc > 0 || bytes < 0) return; /* parsed before bsp_init (shared or its own) */
  char *packed = malloc((size_t)bytes + 1);
  char **argv = calloc((size_t)bytes + 2, sizeof *argv);
  if (!packed || !argv) bsp_abort("%s: out of memory\n", driver->program);
  bsp_move(packed, bytes);
  int argc = 0;
  for (char *at = packed; at < packed + bytes; at += strlen(at) + 1) argv[argc++] = at;
  parse_command_line(argc, argv); /* process 0 found it good: no usage error here */
  memory_at_start = bspk_available_memory_bytes();
  if (driver->before_init) driver->before_init();
  command_line =
      (struct command_line){argc, argv}; /* kept for the run: the options point into it */
}
#endif

/* Process 0's exit status, set in the section and read after bsp_end: a static, not a local,
 * because LPF's bsp_begin runs the section in a nested call of this function and then jumps
 * to the label its bsp_end macro defines, past the local's initialisation. */
static int process0_status;

/* The function bsp_init names: global, because LPF's MPI engines find it by its symbol. One
 * bsp_end in one place: LPF's bsp_end is a macro with a label, once per function. */
void bspalg_spmd(void);
void bspalg_spmd(void) {
  if (!driver) driver = bspalg_program_driver(); /* a process that did not run main */
  bsp_begin(opts.procs ? opts.procs : bsp_nprocs());
#ifdef BSPKIT_PORTABLE
  share_command_line();
#endif
  int status = section();
  if (bsp_pid() == 0) process0_status = status;
  bsp_end();
  if (process0_status) exit(process0_status);
}

/* Before bsp_init the processes of an MPI launch do not know their pid yet, but every one of
 * them parses the command line: only the launcher's rank 0 may say what is wrong with it. */
static int launched_as_other_rank(void) {
  const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    const char *rank = getenv(names[k]);
    if (rank && *rank) return strcmp(rank, "0") != 0;
  }
  return 0;
}

/* --checkpoint-every and the checkpoint directory bsprun gives (BSPKIT_CHECKPOINT_DIR): the
 * interval goes to the library in BSPKIT_CHECKPOINT_EVERY, which it reads at the first
 * checkpoint (every process of an MPI launch runs main and sets its own). --calibrate keeps
 * registrations of its own through the run, which a checkpoint could not restore. */
static void check_checkpoint_options(void) {
  const char *prog = driver->program;
  const char *dir = getenv("BSPKIT_CHECKPOINT_DIR");
  int checkpoints = dir && *dir;
  if (opts.checkpoint_every >= 0) {
    if (!bspalg_library_has_checkpoints()) {
      fprintf(stderr, "%s: --checkpoint-every: a portable build takes no checkpoints\n", prog);
      exit(2);
    }
    if (!checkpoints) {
      fprintf(stderr,
              "%s: --checkpoint-every needs bsprun --checkpoint-dir DIR or --restart DIR (the "
              "directory the checkpoints go to)\n",
              prog);
      exit(2);
    }
    char seconds[64];
    snprintf(seconds, sizeof seconds, "%.17g", opts.checkpoint_every);
    setenv("BSPKIT_CHECKPOINT_EVERY", seconds, 1);
  }
  if (checkpoints && opts.calibrate && bspalg_library_has_checkpoints()) {
    fprintf(stderr,
            "%s: --calibrate cannot be combined with checkpoints (bsprun --checkpoint-dir or "
            "--restart): its registrations are not saved in them\n",
            prog);
    exit(2);
  }
}

/* Options and the --json path, checked before anything runs; usage errors exit(2). */
static void check_command_line(int argc, char **argv) {
  int saved_stderr = -1;
  if (launched_as_other_rank()) {
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, STDERR_FILENO);
      close(devnull);
    }
  }
  parse_command_line(argc, argv);
  bspalg_check_json_path(driver->program, opts.json_path);
  check_checkpoint_options();
  if (saved_stderr >= 0) {
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
  }
}

int bspalg_main(const bspalg_driver *d, int argc, char **argv) {
  driver = d;
  /* Parsed before bsp_init: on a process-based back end only process 0 returns from it. */
  check_command_line(argc, argv);
  memory_at_start = bspk_available_memory_bytes();
  if (driver->before_init) driver->before_init();
  command_line = (struct command_line){argc, argv};
  bsp_init(bspalg_spmd, argc, argv);
  bspalg_spmd();
  return 0;
}
