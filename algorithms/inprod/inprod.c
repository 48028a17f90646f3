/*
 * bspalg-inprod - the inner product alpha = x . y of two vectors of length n, cyclically
 * distributed over p processes (Bisseling, Parallel Scientific Computation, ch. 1): the
 * simplest BSP program, with its cost counted superstep by superstep.
 *
 *   superstep 0: local partial sum over n_s = ceil((n - s) / p) pairs    w = 2 ceil(n/p)
 *                put the partial sum to every other process              h = p - 1 (one word each)
 *   superstep 1: add the p partial sums                                  w = p
 *   cost: W = 2 ceil(n/p) + p flops, H = p - 1 words, S = 1 sync (+ the closing local step)
 */
#include <bsp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "bspk_clock.h"

static const char prog[] = "bspalg-inprod";
static long size = 1000000; /* --size: set before bsp_init, read-only afterwards */

/* --help: what it does and its own options */
static const char help[] =
    "The inner product of two random vectors of length N, cyclically distributed.\n"
    "  --size N          vector length (default 1000000)\n";

static int option(const char *arg, const char *value) {
  if (strcmp(arg, "--size") || !value) return 0;
  size = bspalg_parse_long(prog, "--size", value, 1, 1L << 40);
  return 2;
}

/* One process' part: its share of x and y, the p partial sums (registered), the result. */
typedef struct {
  unsigned long seed;
  long nlocal;
  double *x, *y, *partial;
  double alpha;
} inprod_state;

/* Deterministic inputs: x_i and y_i depend only on (seed, i), so every process can make its
 * own share and the reference needs no communication. Values in [-1, 1). */
static double input_value(unsigned long seed, long i, int which) {
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 2 + (uint64_t)which + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

static double local_dot(const double *x, const double *y, long n) {
  double sum = 0.0;
  for (long k = 0; k < n; k++) sum += x[k] * y[k];
  return sum;
}

/* f: the local kernel on this process' share, repeated for about 0.2 s (5 to 64 times, the
 * count from a first call), median per flop. The kernel is memory-bound: process 0 alone has
 * the machine's whole memory bandwidth, which it does not have in the run (f_all). */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  const inprod_state *st = state;
  volatile double sink = 0.0; /* keeps the timed calls from being optimized away */
  double t0 = bspk_monotonic_seconds();
  sink += local_dot(st->x, st->y, st->nlocal);
  double first = bspk_monotonic_seconds() - t0;
  int reps = first > 0 ? (int)(0.2 / first) : 64;
  reps = reps < 5 ? 5 : reps > 64 ? 64 : reps;
  double samples[64];
  for (int r = 0; r < reps; r++) {
    t0 = bspk_monotonic_seconds();
    sink += local_dot(st->x, st->y, st->nlocal);
    samples[r] = bspk_monotonic_seconds() - t0;
  }
  double f = bspalg_median(samples, reps) / (2.0 * (double)(st->nlocal > 0 ? st->nlocal : 1));
  if (!every_process && f > 0)
    snprintf(
        note, note_size,
        "local dot product of %ld pairs, median: on process 0 alone, and on every process at once "
        "(f_all: memory-bound, the processes share the memory bandwidth)",
        st->nlocal);
  return f;
}

static void *setup(const bspalg_common_opts *opts) {
  int p = bsp_nprocs(), s = bsp_pid();
  inprod_state *st = bspalg_alloc(sizeof *st, "for n = %ld", size);
  st->seed = opts->seed;
  st->nlocal = size > s ? (size - s + p - 1) / p : 0;
  st->x = bspalg_alloc((size_t)st->nlocal * sizeof *st->x, "for n = %ld", size);
  st->y = bspalg_alloc((size_t)st->nlocal * sizeof *st->y, "for n = %ld", size);
  st->partial = bspalg_alloc((size_t)p * sizeof *st->partial, "for n = %ld", size);
  for (long k = 0; k < st->nlocal; k++) {
    st->x[k] = input_value(st->seed, s + k * p, 0);
    st->y[k] = input_value(st->seed, s + k * p, 1);
  }
  bspalg_register(st->partial, (size_t)p * sizeof *st->partial);
  return st;
}

/* Superstep 0: the local partial sum, put to every process; superstep 1: their sum. */
static void repetition(void *state) {
  inprod_state *st = state;
  int p = bsp_nprocs(), s = bsp_pid();
  double mine = local_dot(st->x, st->y, st->nlocal);
  bspalg_work(2.0 * (double)st->nlocal);
  for (int t = 0; t < p; t++) {
    bsp_put(t, &mine, st->partial, s * (int)sizeof mine, sizeof mine);
    bspalg_put(t, 1);
  }
  bspalg_sync("put", "alltoall");
  st->alpha = 0.0;
  for (int t = 0; t < p; t++) st->alpha += st->partial[t];
  bspalg_work(p);
}

/* Every process has alpha; process 0 compares it with a sequential sum (in another order, so
 * the tolerance is a few ulps of sum |x_i y_i| per term). */
static int check(void *state, bspalg_check_report *report) {
  const inprod_state *st = state;
  if (bsp_pid() != 0) return 1;
  double ref = 0.0, magnitude = 0.0;
  for (long i = 0; i < size; i++) {
    double t = input_value(st->seed, i, 0) * input_value(st->seed, i, 1);
    ref += t;
    magnitude += fabs(t);
  }
  double tol = 4.0 * (double)size * 0x1.0p-52 * magnitude + 1e-300;
  snprintf(report->note, sizeof report->note,
           "against a sequential sum: |difference| %.3g, tolerance %.3g", fabs(st->alpha - ref),
           tol);
  if (fabs(st->alpha - ref) <= tol) return 1;
  snprintf(report->wrong, sizeof report->wrong,
           " on %d processes: %.17g, the sequential sum is %.17g", bsp_nprocs(), st->alpha, ref);
  return -1;
}

static void params(void *state, char *json, size_t json_size) {
  (void)state;
  snprintf(json, json_size, "{\"n\": %ld}", size);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm = "inprod", .work_unit = "flop", .help = help, .option = option,
    .setup = setup, .repetition = repetition, .check = check, .measure_f = measure_f, .params = params};
// clang-format on

BSPALG_MAIN(driver)
