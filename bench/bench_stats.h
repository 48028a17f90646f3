/*
 * bench_stats.h - what every benchmark program here reports about repeated measurements:
 * min, quartiles and max, and their JSON. Built on common/plain/bspk_stats.h; header-only.
 */
#ifndef BSPKIT_BENCH_STATS_H
#define BSPKIT_BENCH_STATS_H

#include <stdio.h>

#include "bspk_stats.h"

typedef struct {
  double min, q1, med, q3, max;
} stats_t;

/* Min, quartiles and max of sorted[0..n), n >= 1 (sort with bspk_sort_doubles). */
static inline stats_t stats_of_sorted(const double *sorted, int n) {
  stats_t st = {sorted[0], bspk_quantile_of_sorted(sorted, n, 0.25),
                bspk_median_of_sorted(sorted, n), bspk_quantile_of_sorted(sorted, n, 0.75),
                sorted[n - 1]};
  return st;
}

/* ,"key":{"min":..,"q1":..,"median":..,"q3":..,"max":..} with every value times scale. */
static inline void json_stats(FILE *f, const char *key, stats_t s, double scale) {
  fprintf(f, ",\"%s\":{\"min\":%.6g,\"q1\":%.6g,\"median\":%.6g,\"q3\":%.6g,\"max\":%.6g}", key,
          s.min * scale, s.q1 * scale, s.med * scale, s.q3 * scale, s.max * scale);
}

#endif
