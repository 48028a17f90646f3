/*
 * lu_lapack - LAPACK's LU decomposition (dgetrf of OpenBLAS, on --threads T threads) of the
 * random n x n matrix of lu_scalapack: the single-node limit beside bspalg-lu in
 * bench/run_lu_bench.sh. Each repetition makes the matrix again (untimed); the check (once)
 * solves A x = A 1 with dgetrs and wants x = 1 to 1e-6.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bspk_clock.h"
#include "lu_peer_common.h"

void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info);
void openblas_set_num_threads(int num_threads);

static const char prog[] = "lu_lapack";

int main(int argc, char **argv) {
  lu_peer_opts o;
  lu_peer_parse(prog, argc, argv, &o);
  openblas_set_num_threads(o.threads);
  int n = (int)o.n, one = 1, info = 0;
  double *a = malloc((size_t)n * (size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  int *ipiv = malloc((size_t)n * sizeof *ipiv);
  double *times = malloc((size_t)o.reps * sizeof *times);
  if (!a || !b || !ipiv || !times) {
    fprintf(stderr, "%s: out of memory for n = %d\n", prog, n);
    return 1;
  }
  for (int rep = 0; rep < o.reps; rep++) {
    for (long j = 0; j < n; j++)
      for (long i = 0; i < n; i++) a[j * n + i] = lu_peer_entry(o.seed, i, j, n);
    double t0 = bspk_monotonic_seconds();
    dgetrf_(&n, &n, a, &n, ipiv, &info);
    times[rep] = bspk_monotonic_seconds() - t0;
    if (info != 0) {
      fprintf(stderr, "%s: dgetrf returned info = %d\n", prog, info);
      return 1;
    }
  }
  const char *check = "skipped";
  if (o.check) {
    for (long i = 0; i < n; i++) {
      double sum = 0.0;
      for (long j = 0; j < n; j++) sum += lu_peer_entry(o.seed, i, j, n);
      b[i] = sum;
    }
    dgetrs_("N", &n, &one, a, &n, ipiv, b, &n, &info);
    double worst = 0.0;
    for (long i = 0; i < n; i++) worst = fmax(worst, fabs(b[i] - 1.0));
    if (info != 0 || !(worst <= 1e-6)) {
      fprintf(stderr, "%s: WRONG RESULT: solving A x = A 1 gave max |x - 1| = %.3g\n", prog, worst);
      return 1;
    }
    check = "passed";
  }
  lu_peer_report(prog, &o, times, check);
  free(a);
  free(b);
  free(ipiv);
  free(times);
  return 0;
}
