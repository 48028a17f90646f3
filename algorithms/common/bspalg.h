/*
 * bspalg.h - what every bspkit algorithm driver shares: counting the BSP cost of a run
 * superstep by superstep (work w, words sent and received, messages), gathering the counts
 * on process 0, repetitions with medians, and writing the run as one JSON object
 * (docs/algorithm-output.md), which `bspkit run` and `bspkit validate` read.
 *
 * Counting is done by the algorithm itself, where it issues a request: the counters are a
 * few additions per request, cheap next to the request. Written against bsp.h only.
 *
 * Use (inside the SPMD part, on every process; a driver gets all but the counting calls from
 * the skeleton, bspalg_driver.h):
 *
 *   bspalg_counters_begin();                 // after bsp_begin; collective
 *   for (rep = 0; rep < reps; rep++) {
 *     bspalg_counters_reset();               // keep only the last repetition's counts
 *     bsp_sync(); t0 = bsp_time();
 *     ...  bspalg_work(2.0 * m * n * k);      // local computation, in the run's work unit
 *     ...  bsp_put(dest, ...); bspalg_put(dest, words);
 *     ...  bsp_hpget(src, ...); bspalg_get(src, words);
 *     bspalg_sync("put", "alltoall");        // bsp_sync() + closes this superstep's record
 *     times[rep] = bsp_time() - t0;
 *   }
 *   bspalg_report(&info, times, reps);       // collective: gathers counts and the max time
 *   bspalg_counters_end();                   //   over processes; process 0 writes the JSON
 */
#ifndef BSPALG_H
#define BSPALG_H

#include <stdio.h>

/* Words are 8 bytes, as in the probe (docs/probe-format.md). */
#define BSPALG_WORD_BYTES 8

/* Bytes -> words, rounded up (a 1-byte message still costs a word). */
static inline long bspalg_words(long bytes) {
  return (bytes + BSPALG_WORD_BYTES - 1) / BSPALG_WORD_BYTES;
}

/* Start / stop counting on this process. Both are collective (they register memory). */
void bspalg_counters_begin(void);
void bspalg_counters_end(void);

/* Forget what was counted so far (call at the start of each repetition). Local. */
void bspalg_counters_reset(void);

/* Count `units` of local work (flops, cell updates, ...) in the current superstep. */
void bspalg_work(double units);

/* Count one request issued by this process in the current superstep:
 *   put/hpput/send of `words` words to process `dest` (data flows here -> dest);
 *   get/hpget of `words` words from process `src` (data flows src -> here).
 * Requests to oneself are not communication: they are not counted at all. */
void bspalg_put(int dest, long words);
void bspalg_get(int src, long words);

/* bsp_sync(), and close the current superstep's record, labelled with the primitive and the
 * communication pattern that dominate it (names as in the probe: primitive "put", "hpput",
 * "get", "hpget", "send"; pattern "alltoall", "permutation", "shift"; NULL for a superstep
 * without communication). */
void bspalg_sync(const char *primitive, const char *pattern);

/* bspalg_sync with a checkpoint (bspk_checkpoint in place of bsp_sync): the end of a stage of
 * the algorithm, where the driver's protected state says where to go on (bspalg_driver.h,
 * "Checkpoints"). It counts exactly as bspalg_sync does: it replaces the stage's last
 * bspalg_sync, never adds a superstep. The checkpoint is saved when one is due (bsprun
 * --checkpoint-dir DIR, every call or --checkpoint-every T); returns 1 when it saved. In the
 * portable build (and without --checkpoint-dir) it is bspalg_sync and returns 0. */
int bspalg_checkpoint_sync(const char *primitive, const char *pattern);

/* Mark packing: copies of data into and out of communication buffers, and local swaps,
 * between the two calls. A superstep profile (BSPKIT_PROFILE) counts it apart from the
 * computation (bspkit profile's breakdown of Horvitz & Bisseling); nothing otherwise, and
 * nothing in the portable build. */
void bspalg_packing_begin(void);
void bspalg_packing_end(void);

/* What process 0 writes about the run (strings are copied into the JSON as they are). */
typedef struct {
  const char *algorithm;   /* e.g. "matmul-blockcyclic" */
  const char *params_json; /* the problem's parameters, a JSON object: {"n": 4000, "q": 64} */
  const char *work_unit;   /* "flop", "cell", ... */
  int verified;            /* 1: the result was checked against the reference and is right,
                              0: it was not checked, -1: checked and WRONG */
  const char *check_note;  /* how it was checked (or why not) */
  double f_s_per_unit;     /* the kernel's time per work unit on one process (0: not measured) */
  const char *f_note;      /* how f was measured */
  FILE *json;              /* where process 0 writes the JSON object (NULL: nowhere) */
  double f_all_s_per_unit; /* the same kernel timed on every process at once, max over
                              processes (0: not measured): f under the run's own load */
  const char *calibration_before; /* --calibrate: the `calibration` records (JSON), or NULL */
  const char *calibration_after;
  double calibration_s;     /* what the calibration took, its setup included (process 0) */
  const char *state_json;   /* the machine's state around each repetition: a JSON array (process 0;
                               NULL: not recorded) */
  double f_held_s_per_unit; /* f and f_all without the time the process waited for a core */
  double f_all_held_s_per_unit; /* (0: not measured) */
  const char *result_digest;    /* the result's digest, 16 hex digits (NULL: none) */
  int restarted;                /* 1: the run was restarted from a checkpoint */
} bspalg_info;

/* Collective: the max over processes of v (on every process). */
double bspalg_max_over_procs(double v);

/* Collective. Gathers every process' counts of the last repetition on process 0, takes the
 * max over processes of each repetition's time, and (process 0) prints a one-line human
 * summary on stdout and the JSON object on info->json. `times` are this process' times of
 * the `reps` repetitions, in seconds. Returns the median time (on every process). */
double bspalg_report(const bspalg_info *info, const double *times, int reps);

/* A count (flops, words) as text for people, as bspkit's units.count writes it: up to a
 * million with the thousands separated (12,345), above it with an SI prefix and 4
 * significant digits (1 M, 2.147 G); never e-notation. The human summary's W and H. */
void bspalg_count(char *buf, size_t size, double v);

/* Median of n doubles (n >= 1); does not change `v`. */
double bspalg_median(const double *v, int n);

/* Parse helpers for drivers: exit(2) with "<prog>: <what>: ..." on a bad value. */
long bspalg_parse_long(const char *prog, const char *what, const char *text, long min, long max);
double bspalg_parse_double(const char *prog, const char *what, const char *text, double min,
                           double max);

/* Options every driver takes (parsed by bspalg_parse_common; it returns 1 when argv[*i]
 * was one of them and advances *i past its value):
 *   -n P / --procs P     processes (default: bsp_nprocs())
 *   -r R / --reps R      timed repetitions (default 3)
 *   --json FILE          write the JSON object to FILE ("-" = stdout)
 *   --no-check           skip the check against the sequential reference
 *   --measure-f          measure the kernel's f after the timed runs: on process 0 alone
 *                        (thesis 3.1), then on every process at once
 *   --seed S             random inputs' seed (default 1)
 *   --calibrate MODE     bspprobe's short calibration (probe/calibration.h) before the
 *                        repetitions and after them (and f), with MODE's (full, quick) f size
 *   --checkpoint-every T a checkpoint at most every T seconds (T: seconds, or a number with s,
 *                        m or h: 90s, 5m, 1h); bsprun --checkpoint-dir gives the directory */
typedef struct {
  int procs;
  int reps;
  const char *json_path;
  int check;
  int measure_f;
  unsigned long seed;
  int calibrate;           /* 0: no; 1: full; 2: quick */
  double checkpoint_every; /* seconds; < 0: not given */
} bspalg_common_opts;

void bspalg_common_defaults(bspalg_common_opts *o);
int bspalg_parse_common(const char *prog, bspalg_common_opts *o, int argc, char **argv, int *i);
/* Help text for the common options (for a driver's --help). */
extern const char bspalg_common_help[];

/* The index of `text` among names[0..n-1], else exit(2) with "<prog>: <what> must be a or b,
 * not 'text'" (for n > 2: "a, b or c"). */
int bspalg_parse_choice(const char *prog, const char *what, const char *text,
                        const char *const *names, int n);

/* Open o->json_path for writing on process 0 ("-" = stdout; NULL path = NULL). Exits with a
 * message when it cannot. */
FILE *bspalg_open_json(const char *prog, const char *path);
/* Before the run: exits with status 2 and a message when --json PATH could not be written
 * afterwards (a directory, no permission, no such directory), so no run is wasted. */
void bspalg_check_json_path(const char *prog, const char *path);

#endif
