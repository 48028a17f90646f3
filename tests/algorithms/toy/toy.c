/*
 * bspalg-toy - prefix sums of n random integers, block-distributed over p processes: the
 * smallest algorithm added by following algorithms/README.md, to show that the steps there
 * are enough. Test-only (not installed).
 *
 *   superstep 0: local prefix sums of the n_s own values      w = ceil(n/p)
 *                (n_s = (s+1) n/p - s n/p); put the local total to
 *                every process after this one                  h = p - 1
 *   superstep 1: add the totals of the processes before this   w <= p - 1 + ceil(n/p)
 *                one, then that offset to every local prefix
 *                sum (no sync after it)
 *   cost: W <= 2 ceil(n/p) + p - 1 additions, H = p - 1 words, S = 1
 */
#include <bsp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "bspk_clock.h"

static const char prog[] = "bspalg-toy";
static long size = 1000; /* --size: set before bsp_init, read-only afterwards */
static int make_wrong;   /* --wrong: spoil one result, to test the failing check */

/* --help: what it does and its own options */
static const char help[] =
    "Prefix sums of N random integers, block-distributed (a test of the driver skeleton).\n"
    "  --size N          how many integers (default 1000)\n"
    "  --wrong           spoil one prefix sum (to test the failing check)\n";

static int option(const char *arg, const char *value) {
  if (!strcmp(arg, "--wrong")) {
    make_wrong = 1;
    return 1;
  }
  if (strcmp(arg, "--size") || !value) return 0;
  size = bspalg_parse_long(prog, "--size", value, 1, 1L << 30);
  return 2;
}

typedef struct {
  unsigned long seed;
  long first, count; /* this process' block: [first, first + count) */
  int64_t *prefix;   /* the block's values, then their prefix sums */
  int64_t *totals;   /* registered: the local totals of the processes before this one */
} toy_state;

/* Value i: a function of (seed, i) only, so that every process can make its block and the
 * reference without communication. */
static int64_t input_value(unsigned long seed, long i) {
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i + 1;
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return (int64_t)((z ^ (z >> 29)) % 1000);
}

static void fill_block(toy_state *st) {
  for (long k = 0; k < st->count; k++) st->prefix[k] = input_value(st->seed, st->first + k);
}

static void local_scan(int64_t *v, long n) {
  for (long k = 1; k < n; k++) v[k] += v[k - 1];
}

static void *setup(const bspalg_common_opts *opts) {
  int p = bsp_nprocs(), s = bsp_pid();
  toy_state *st = bspalg_alloc(sizeof *st, "for the state");
  st->seed = opts->seed;
  st->first = (long)((long long)size * s / p);
  st->count = (long)((long long)size * (s + 1) / p) - st->first;
  st->prefix = bspalg_alloc((size_t)st->count * sizeof *st->prefix, "for n = %ld", size);
  st->totals = bspalg_alloc((size_t)p * sizeof *st->totals, "for the totals");
  bspalg_register(st->totals, (size_t)p * sizeof *st->totals);
  return st;
}

/* A repetition scans in place: start again from the inputs (untimed). */
static void prepare(void *state) { fill_block(state); }

static void repetition(void *state) {
  toy_state *st = state;
  int p = bsp_nprocs(), s = bsp_pid();
  local_scan(st->prefix, st->count);
  bspalg_work((double)st->count);
  int64_t total = st->count > 0 ? st->prefix[st->count - 1] : 0;
  for (int t = s + 1; t < p; t++) {
    bsp_put(t, &total, st->totals, s * (int)sizeof total, sizeof total);
    bspalg_put(t, 1);
  }
  bspalg_sync(p > 1 ? "put" : NULL, p > 1 ? "alltoall" : NULL);
  int64_t offset = 0;
  for (int t = 0; t < s; t++) offset += st->totals[t];
  for (long k = 0; k < st->count; k++) st->prefix[k] += offset;
  bspalg_work((double)s + (double)st->count);
  if (make_wrong && s == 0 && st->count > 0) st->prefix[0] += 1;
}

/* Every process against a sequential scan from the first value; the most wrong sums on one
 * process decides (collective: every process learns it). */
static int check(void *state, bspalg_check_report *report) {
  const toy_state *st = state;
  int64_t expected = 0;
  for (long i = 0; i < st->first; i++) expected += input_value(st->seed, i);
  double wrong = 0.0;
  for (long k = 0; k < st->count; k++) {
    expected += input_value(st->seed, st->first + k);
    wrong += st->prefix[k] != expected;
  }
  double worst = bspalg_max_over_procs(wrong);
  snprintf(report->note, sizeof report->note,
           "every process against a sequential scan of its block");
  if (worst == 0.0) return 1;
  snprintf(report->wrong, sizeof report->wrong,
           " on %d processes: a process has %.0f wrong prefix sums", bsp_nprocs(), worst);
  return -1;
}

/* The local scan on this process' block, median of 21 runs. */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  toy_state *st = state;
  if (st->count == 0) return 0.0;
  double samples[21];
  for (int r = 0; r < 21; r++) {
    fill_block(st);
    double t0 = bspk_monotonic_seconds();
    local_scan(st->prefix, st->count);
    samples[r] = bspk_monotonic_seconds() - t0;
  }
  if (!every_process)
    snprintf(note, note_size, "local scan of %ld values, median of 21", st->count);
  return bspalg_median(samples, 21) / (double)st->count;
}

/* n, and process 0's block size */
static void params(void *state, char *json, size_t json_size) {
  const toy_state *st = state;
  snprintf(json, json_size, "{\"n\": %ld, \"block\": %ld}", size, st->count);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm = "toy", .work_unit = "addition", .help = help, .option = option,
    .setup = setup, .prepare = prepare, .repetition = repetition, .check = check, .measure_f = measure_f,
    .params = params};
// clang-format on

BSPALG_MAIN(driver)
