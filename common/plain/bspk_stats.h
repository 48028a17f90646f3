/*
 * bspk_stats.h - order statistics of repeated measurements (part of common/plain/,
 * see common/README.md). Nothing here allocates: the caller sorts its samples (or a copy of
 * them) with bspk_sort_doubles and asks the sorted array.
 */
#ifndef BSPK_STATS_H
#define BSPK_STATS_H

#include <stdlib.h>

static inline int bspk_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Ascending, in place. */
static inline void bspk_sort_doubles(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bspk_compare_doubles);
}

/* The median of sorted[0..n), n >= 1: the middle value, or the mean of the two middle ones. */
static inline double bspk_median_of_sorted(const double *sorted, int n) {
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* The q-quantile (0 <= q <= 1) of sorted[0..n), n >= 1, interpolating linearly between
 * neighbouring order statistics. */
static inline double bspk_quantile_of_sorted(const double *sorted, int n, double q) {
  double h = (n - 1) * q;
  int lo = (int)h;
  if (lo + 1 >= n) return sorted[n - 1];
  return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
}

#endif /* BSPK_STATS_H */
