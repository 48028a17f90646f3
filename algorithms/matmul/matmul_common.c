/*
 * matmul_common.c - inputs, sequential reference, check and f for the matrix multiplications
 * (see matmul_common.h).
 */
#include "matmul_common.h"

#include <bsp.h>
#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg.h"
#include "bspk_clock.h"

/* OpenBLAS' own declaration lives in its cblas.h; repeated here for other CBLAS headers. */
void openblas_set_num_threads(int num_threads);

void mm_fill_input(unsigned long seed, int which, long n, long row0, long col0, long rows,
                   long cols, double *out, long ld) {
  for (long i = 0; i < rows; i++)
    for (long j = 0; j < cols; j++) out[i * ld + j] = mm_input(seed, which, row0 + i, col0 + j, n);
}

int mm_part_of(long n, int parts, long x) {
  int i = (int)((long long)x * parts / (n > 0 ? n : 1)); /* a guess within one of the answer */
  while (i > 0 && mm_part_start(n, parts, i) > x) i--;
  while (i < parts - 1 && mm_part_start(n, parts, i + 1) <= x) i++;
  return i;
}

void mm_grid(int p, int *rows, int *cols) {
  int r = 1;
  for (int d = 1; (long)d * d <= p; d++)
    if (p % d == 0) r = d;
  *rows = r;
  *cols = p / r;
}

int mm_cube_root(long q) {
  if (q < 1) return -1;
  long r = (long)llround(cbrt((double)q));
  for (long c = r > 1 ? r - 1 : 1; c <= r + 1; c++)
    if (c * c * c == q) return (int)c;
  return -1;
}

void mm_dgemm(long m, long n, long k, const double *a, long lda, const double *b, long ldb,
              double beta, double *c, long ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) { /* C = beta C; dgemm would do the same, spelled out for clarity */
    for (long i = 0; i < m; i++)
      for (long j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a, (int)lda,
              b, (int)ldb, beta, c, (int)ldc);
}

void mm_blas_single_threaded(void) { openblas_set_num_threads(1); }

void mm_reference_rect(unsigned long seed, long n, long row0, long col0, long rows, long cols,
                       double *out) {
  if (rows <= 0 || cols <= 0) return;
  double *arow = malloc((size_t)n * sizeof *arow);
  double *bpanel =
      malloc((size_t)n * (size_t)cols * sizeof *bpanel); /* B(:, col0 .. col0 + cols) */
  if (!arow || !bpanel) bsp_abort("matmul reference: out of memory (n = %ld)\n", n);
  mm_fill_input(seed, MM_B, n, 0, col0, n, cols, bpanel, cols);
  for (long i = 0; i < rows; i++) {
    mm_fill_input(seed, MM_A, n, row0 + i, 0, 1, n, arow, n);
    double *c = out + i * cols;
    for (long k = 0; k < cols; k++) c[k] = 0.0;
    for (long j = 0; j < n; j++) { /* i-j-k: the inner loop runs along rows of B and C */
      double a = arow[j];
      const double *b = bpanel + j * cols;
      for (long k = 0; k < cols; k++) c[k] += a * b[k];
    }
  }
  free(arow);
  free(bpanel);
}

double mm_rect_error(unsigned long seed, long n, long row0, long col0, long rows, long cols,
                     const double *got, long ld) {
  if (rows <= 0 || cols <= 0) return 0.0;
  double *ref = malloc((size_t)rows * (size_t)cols * sizeof *ref);
  if (!ref) bsp_abort("matmul check: out of memory\n");
  mm_reference_rect(seed, n, row0, col0, rows, cols, ref);
  double err = 0.0;
  for (long i = 0; i < rows; i++)
    for (long j = 0; j < cols; j++) {
      double d = fabs(got[i * ld + j] - ref[i * cols + j]);
      if (!(d <= err)) err = d; /* NaN counts as the largest error */
    }
  free(ref);
  return err;
}

int mm_check_collective(const char *prog, const char *algorithm, long n, double my_error,
                        bspalg_check_report *report) {
  int p = bsp_nprocs(), pid = bsp_pid();
  double *errors = calloc((size_t)p, sizeof *errors);
  if (!errors) bsp_abort("%s: out of memory\n", prog);
  bsp_push_reg(errors, p * (int)sizeof *errors);
  bsp_sync();
  bsp_put(0, &my_error, errors, pid * (int)sizeof my_error, (int)sizeof my_error);
  bsp_sync();
  bsp_pop_reg(errors);
  int verdict = 1;
  if (pid == 0) {
    double worst = 0.0, tol = mm_tolerance(n);
    int where = 0;
    for (int s = 0; s < p; s++)
      if (!(errors[s] <= worst)) {
        worst = errors[s];
        where = s;
      }
    verdict = worst <= tol ? 1 : -1;
    snprintf(report->note, sizeof report->note,
             "every process against the sequential triple loop on its part of C: max |error| %.3g, "
             "tolerance "
             "%.3g (16 n eps)",
             worst, tol);
    if (verdict < 0)
      snprintf(report->wrong, sizeof report->wrong,
               ": %s, n = %ld, p = %d: max |error| %.6g on process %d exceeds the tolerance %.3g",
               algorithm, n, p, worst, where, tol);
  }
  free(errors);
  return verdict;
}

static void dgemm_product(long m, long n, long k, const double *a, const double *b, double *c,
                          double *scratch) {
  (void)scratch;
  mm_dgemm(m, n, k, a, k, b, n, 1.0, c, n);
}

double mm_measure_f(long m, long n, long k) { return mm_measure_f_of(m, n, k, dgemm_product); }

double mm_measure_f_of(long m, long n, long k, mm_product_fn product) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  double *a = malloc((size_t)m * (size_t)k * sizeof *a),
         *b = malloc((size_t)k * (size_t)n * sizeof *b);
  double *c = calloc((size_t)m * (size_t)n, sizeof *c);
  double *scratch = malloc((size_t)k * (size_t)n * sizeof *scratch);
  if (!a || !b || !c || !scratch) bsp_abort("matmul measure-f: out of memory\n");
  mm_fill_input(12345, MM_A, m > k ? m : k, 0, 0, m, k, a, k);
  mm_fill_input(12345, MM_B, k > n ? k : n, 0, 0, k, n, b, n);
  double flops = 2.0 * (double)m * (double)n * (double)k;
  /* one untimed call (first touch of c, BLAS buffers), then a batch long enough for >= 1 ms */
  double t0 = bspk_monotonic_seconds();
  product(m, n, k, a, b, c, scratch);
  double once = bspk_monotonic_seconds() - t0;
  long batch = once >= 1e-3 ? 1 : (long)(1e-3 / (once > 1e-9 ? once : 1e-9)) + 1;
  enum { MAX_SAMPLES = 1000 };
  static _Thread_local double samples[MAX_SAMPLES];
  int count = 0;
  double start = bspk_monotonic_seconds();
  while (count < MAX_SAMPLES && (count < 5 || bspk_monotonic_seconds() - start < 0.2)) {
    t0 = bspk_monotonic_seconds();
    for (long r = 0; r < batch; r++) product(m, n, k, a, b, c, scratch);
    samples[count++] = (bspk_monotonic_seconds() - t0) / (double)batch;
  }
  free(a);
  free(b);
  free(c);
  free(scratch);
  return bspalg_median(samples, count) / flops;
}

double *mm_alloc_doubles(long count, const char *what) {
  return bspalg_alloc((size_t)(count > 0 ? count : 1) * sizeof(double), "for %s (%ld doubles)",
                      what, count);
}

void mm_register_doubles(double *v, long count) {
  bspalg_register(v, (size_t)(count > 0 ? count : 1) * sizeof(double));
}

void mm_protect_doubles(double *v, long count) {
  bspalg_checkpoint_protect(v, (size_t)(count > 0 ? count : 1) * sizeof(double));
}

int mm_fits_registration(const char *prog, double count, const char *advice) {
  double bytes = count * (double)sizeof(double);
  if (bytes <= (double)INT_MAX) return 1;
  if (bsp_pid() == 0)
    fprintf(stderr,
            "%s: a process' part of a matrix would be %.0f bytes, over the BSPlib limit of 2^31 - "
            "1 bytes per "
            "registration; use more processes%s\n",
            prog, bytes, advice);
  return 0;
}
