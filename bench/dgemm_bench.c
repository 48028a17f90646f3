/*
 * dgemm_bench - the peer of the BSP matrix multiplications: OpenBLAS's own cblas_dgemm on
 * n x n matrices with T threads, the median of R repetitions (after one warm-up).
 *
 *   dgemm_bench N THREADS [REPS]      prints: dgemm n=N threads=T median_s=... gflops=...
 *
 * bench/run_matmul_bench.sh alternates it with bspalg-matmul, so that the two are compared
 * in one run on the same machine state.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "bspk_clock.h"
#include "bspk_stats.h"

void openblas_set_num_threads(int num_threads);

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s N THREADS [REPS]\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]);
  int threads = atoi(argv[2]), reps = argc > 3 ? atoi(argv[3]) : 3;
  if (n < 1 || threads < 1 || reps < 1 || reps > 1000) {
    fprintf(stderr, "%s: N, THREADS and REPS must be positive (REPS <= 1000)\n", argv[0]);
    return 2;
  }
  openblas_set_num_threads(threads);
  size_t elems = (size_t)n * (size_t)n;
  double *a = malloc(elems * sizeof *a), *b = malloc(elems * sizeof *b),
         *c = malloc(elems * sizeof *c);
  double *t = malloc((size_t)reps * sizeof *t);
  if (!a || !b || !c || !t) {
    fprintf(stderr, "%s: out of memory for n = %ld\n", argv[0], n);
    return 1;
  }
  unsigned s = 12345;
  for (size_t i = 0; i < elems; i++) {
    s = s * 1103515245u + 12345u;
    a[i] = (double)(s >> 8) / 16777216.0 - 0.5;
    b[i] = (double)(s >> 4 & 0xffff) / 65536.0 - 0.5;
  }
  for (int r = -1; r < reps; r++) {
    double t0 = bspk_monotonic_seconds();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n,
                b, (int)n, 0.0, c, (int)n);
    if (r >= 0) t[r] = bspk_monotonic_seconds() - t0;
  }
  bspk_sort_doubles(t, reps);
  double med = bspk_median_of_sorted(t, reps);
  printf("dgemm n=%ld threads=%d reps=%d median_s=%.6f gflops=%.3f checksum=%.6g\n", n, threads,
         reps, med, 2.0 * (double)n * (double)n * (double)n / med * 1e-9, c[elems / 2]);
  free(a);
  free(b);
  free(c);
  free(t);
  return 0;
}
