/*
 * bench_stats.h - what the microbenchmarks share: order statistics of the rounds and JSON
 * output of strings and statistics. Header-only (static functions), one copy per program.
 */
#ifndef BSPKIT_BENCH_STATS_H
#define BSPKIT_BENCH_STATS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double min, q1, med, q3, max;
} stats_t;

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Linear interpolation between order statistics of sorted[0..n). */
static double bench_quantile(const double *sorted, int n, double q) {
  double h = (n - 1) * q;
  int lo = (int)h;
  if (lo + 1 >= n) return sorted[n - 1];
  return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
}

/* Min, quartiles and max of x[0..n), n >= 1. */
static stats_t stats_of(const double *x, int n) {
  double *s = malloc((size_t)n * sizeof *s);
  if (!s) {
    fprintf(stderr, "benchmark: out of memory\n");
    exit(1);
  }
  memcpy(s, x, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, bench_cmp_double);
  stats_t st = {s[0], bench_quantile(s, n, 0.25), bench_quantile(s, n, 0.5),
                bench_quantile(s, n, 0.75), s[n - 1]};
  free(s);
  return st;
}

/* A JSON string (null for NULL). */
static void json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/* ,"key":{"min":..,"q1":..,"median":..,"q3":..,"max":..} with every value times scale. */
static void json_stats(FILE *f, const char *key, stats_t s, double scale) {
  fprintf(f, ",\"%s\":{\"min\":%.6g,\"q1\":%.6g,\"median\":%.6g,\"q3\":%.6g,\"max\":%.6g}", key,
          s.min * scale, s.q1 * scale, s.med * scale, s.q3 * scale, s.max * scale);
}

#endif
