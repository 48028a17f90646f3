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

#include "bspalg.h"

static const char *prog = "bspalg-inprod";
static long size = 1000000;
static bspalg_common_opts opt;

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

/* f: the local kernel on this run's share, repeated for >= 0.2 s, median; timed on every
 * process at once (all = 1: the max over processes), or on process 0 alone. The kernel is
 * memory-bound: one process alone has the machine's whole memory bandwidth, which it does
 * not have in the run. Collective. */
static double measure_f(const double *x, const double *y, long nlocal, int all) {
  volatile double sink = 0.0; /* keeps the timed calls from being optimized away */
  int p = bsp_nprocs(), s = bsp_pid();
  double *shared = calloc((size_t)p + 1, sizeof *shared); /* p medians, process 0's first time */
  if (!shared) bsp_abort("%s: out of memory\n", prog);
  bsp_push_reg(shared, (p + 1) * (int)sizeof *shared);
  bsp_sync();
  double t0 = bspalg_now();
  sink += local_dot(x, y, nlocal);
  double first = bspalg_now() - t0;
  if (s == 0)
    for (int t = 0; t < p; t++) bsp_put(t, &first, shared, p * (int)sizeof first, sizeof first);
  bsp_sync();
  /* the same number of repetitions everywhere (process 0's estimate), about 0.2 s in all */
  int reps = shared[p] > 0 ? (int)(0.2 / shared[p]) : 64;
  reps = reps < 5 ? 5 : reps > 64 ? 64 : reps;
  double samples[64];
  for (int r = 0; r < reps; r++) {
    bsp_sync();
    if (!all && s != 0) continue;
    t0 = bspalg_now();
    sink += local_dot(x, y, nlocal);
    samples[r] = bspalg_now() - t0;
  }
  double mine = all || s == 0 ? bspalg_median(samples, reps) : 0.0;
  for (int t = 0; t < p; t++) bsp_put(t, &mine, shared, s * (int)sizeof mine, sizeof mine);
  bsp_sync();
  double worst = 0.0;
  for (int t = 0; t < p; t++) worst = worst > shared[t] ? worst : shared[t];
  bsp_pop_reg(shared);
  bsp_sync();
  free(shared);
  return worst / (2.0 * (double)(nlocal > 0 ? nlocal : 1));
}

static void spmd(void) {
  bsp_begin(opt.procs ? opt.procs : bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  long nlocal = size > s ? (size - s + p - 1) / p : 0;
  double *x = malloc((size_t)(nlocal > 0 ? nlocal : 1) * sizeof *x);
  double *y = malloc((size_t)(nlocal > 0 ? nlocal : 1) * sizeof *y);
  double *partial = calloc((size_t)p, sizeof *partial);
  double *times = calloc((size_t)opt.reps, sizeof *times);
  if (!x || !y || !partial || !times) bsp_abort("%s: out of memory for n = %ld\n", prog, size);
  for (long k = 0; k < nlocal; k++) {
    x[k] = input_value(opt.seed, s + k * p, 0);
    y[k] = input_value(opt.seed, s + k * p, 1);
  }
  bsp_push_reg(partial, p * (int)sizeof *partial);
  bspalg_counters_begin();
  bsp_sync();

  double alpha = 0.0;
  for (int rep = 0; rep < opt.reps; rep++) {
    bspalg_counters_reset();
    bsp_sync();
    double t0 = bsp_time();
    double mine = local_dot(x, y, nlocal);
    bspalg_work(2.0 * (double)nlocal);
    for (int t = 0; t < p; t++) {
      bsp_put(t, &mine, partial, s * (int)sizeof mine, sizeof mine);
      bspalg_put(t, 1);
    }
    bspalg_sync("put", "alltoall");
    alpha = 0.0;
    for (int t = 0; t < p; t++) alpha += partial[t];
    bspalg_work(p);
    times[rep] = bsp_time() - t0;
  }

  /* Check: every process has alpha; process 0 compares with a sequential sum (in another
   * order, so the tolerance is a few ulps of sum |x_i y_i| per term). */
  int verified = 0;
  char note[160] = "not checked (--no-check)";
  if (opt.check) {
    verified = 1;
    if (s == 0) {
      double ref = 0.0, magnitude = 0.0;
      for (long i = 0; i < size; i++) {
        double t = input_value(opt.seed, i, 0) * input_value(opt.seed, i, 1);
        ref += t;
        magnitude += fabs(t);
      }
      double tol = 4.0 * (double)size * 0x1.0p-52 * magnitude + 1e-300;
      verified = fabs(alpha - ref) <= tol ? 1 : -1;
      snprintf(note, sizeof note, "against a sequential sum: |difference| %.3g, tolerance %.3g",
               fabs(alpha - ref), tol);
      if (verified < 0)
        fprintf(stderr, "%s: WRONG RESULT on %d processes: %.17g, the sequential sum is %.17g\n", prog, p,
                alpha, ref);
    }
  }
  double f = 0.0, f_all = 0.0;
  if (opt.measure_f) { /* collective */
    f = measure_f(x, y, nlocal, 0);
    f_all = measure_f(x, y, nlocal, 1);
  }
  char params[96], f_note[320];
  snprintf(params, sizeof params, "{\"n\": %ld}", size);
  snprintf(f_note, sizeof f_note, "local dot product of %ld pairs, median: on process 0 alone, and on every process at once "
           "(f_all: memory-bound, the processes share the memory bandwidth)", nlocal);
  FILE *json = s == 0 ? bspalg_open_json(prog, opt.json_path) : NULL;
  bspalg_info info = {"inprod", params, "flop", verified, note, f, f > 0 ? f_note : NULL, json, f_all};
  bspalg_report(&info, times, opt.reps);
  if (json && json != stdout) fclose(json);
  bspalg_counters_end();
  bsp_pop_reg(partial);
  free(x);
  free(y);
  free(partial);
  free(times);
  bsp_end();
  if (verified < 0) exit(1);
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: bsprun [-b BACKEND] -n P %s [options]\n"
          "The inner product of two random vectors of length N, cyclically distributed.\n"
          "  --size N          vector length (default 1000000)\n%s",
          prog, bspalg_common_help);
}

static int own_option(int argc, char **argv, int *i) {
  if (strcmp(argv[*i], "--size") || *i + 1 >= argc) return 0;
  size = bspalg_parse_long(prog, "--size", argv[++*i], 1, 1L << 40);
  return 1;
}

int main(int argc, char **argv) {
  /* Parsed before bsp_init: on a process-based back end only process 0 returns from it. */
  bspalg_parse_args(prog, &opt, argc, argv, own_option, usage);
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
