/*
 * lu_peer_common.h - what the LU decomposition's peers (lu_scalapack, lu_lapack) share: the
 * random matrix, the command line and the one-line result that bench/run_lu_bench.sh reads.
 */
#ifndef LU_PEER_COMMON_H
#define LU_PEER_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entry (i, j) of the random n x n matrix: uniform in [-1, 1), from a hash of (seed, i, j), so
 * every process makes its own part without communication. */
static inline double lu_peer_entry(unsigned long seed, long i, long j, long n) {
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * (uint64_t)n + (uint64_t)j;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

typedef struct {
  long n;
  int nb, rows, cols, threads, reps, check;
  unsigned long seed;
} lu_peer_opts;

/* --size N --nb NB --grid RxC --threads T --reps R --seed S --no-check; exit(2) with a message
 * on anything else. */
static inline void lu_peer_parse(const char *prog, int argc, char **argv, lu_peer_opts *o) {
  *o = (lu_peer_opts){
      .n = 1000, .nb = 64, .rows = 1, .cols = 1, .threads = 1, .reps = 3, .check = 1, .seed = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char extra;
    int ok = v != NULL;
    if (!strcmp(a, "--no-check")) {
      o->check = 0;
      continue;
    }
    if (!strcmp(a, "--size") && v) ok = (o->n = atol(v)) > 0;
    else if (!strcmp(a, "--nb") && v) ok = (o->nb = atoi(v)) > 0;
    else if (!strcmp(a, "--threads") && v) ok = (o->threads = atoi(v)) > 0;
    else if (!strcmp(a, "--reps") && v) ok = (o->reps = atoi(v)) > 0;
    else if (!strcmp(a, "--seed") && v) o->seed = strtoul(v, NULL, 10);
    else if (!strcmp(a, "--grid") && v)
      ok = sscanf(v, "%dx%d%c", &o->rows, &o->cols, &extra) == 2 && o->rows > 0 && o->cols > 0;
    else ok = 0;
    if (!ok) {
      fprintf(stderr,
              "%s: bad or unknown option '%s'\nusage: %s [--size N] [--nb NB] [--grid RxC] "
              "[--threads T] [--reps R] [--seed S] [--no-check]\n",
              prog, a, prog);
      exit(2);
    }
    i++;
  }
}

static int lu_peer_compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The result line: the median of the repetitions' times and the rate of 2/3 n^3 flops. */
static inline void lu_peer_report(const char *name, const lu_peer_opts *o, double *times,
                                  const char *check) {
  qsort(times, (size_t)o->reps, sizeof *times, lu_peer_compare);
  double t = o->reps % 2 ? times[o->reps / 2] : 0.5 * (times[o->reps / 2 - 1] + times[o->reps / 2]);
  double n = (double)o->n;
  printf("%s: n=%ld nb=%d grid=%dx%d threads=%d reps=%d check=%s time_s=%.6f gflops=%.3f\n", name,
         o->n, o->nb, o->rows, o->cols, o->threads, o->reps, check, t,
         2.0 / 3.0 * n * n * n / t / 1e9);
}

#endif
