/*
 * matmul_common.h - what the matrix-multiplication drivers (bspalg-matmul, bspalg-cannon)
 * share: the random inputs, the sequential reference, balanced partitions and process grids,
 * a dgemm wrapper, the distributed check and the measurement of f.
 *
 * Matrices are n x n, row-major; element (i, j) of A is mm_input(seed, MM_A, i, j, n), so every
 * process can make its own part of the inputs, and of the reference, without communication.
 */
#ifndef MATMUL_COMMON_H
#define MATMUL_COMMON_H

#include <stddef.h>

#include "bspalg_driver.h"
#include "matmul_input.h" /* mm_input, MM_A, MM_B, mm_tolerance */

/* Fills the rows x cols rectangle of input `which` at (row0, col0) into `out` (leading
 * dimension ld). */
void mm_fill_input(unsigned long seed, int which, long n, long row0, long col0, long rows,
                   long cols, double *out, long ld);

/* Balanced partition of n items into `parts` parts: part i is [mm_part_start(n, parts, i),
 * mm_part_start(n, parts, i + 1)); sizes differ by at most one. */
static inline long mm_part_start(long n, int parts, int i) {
  return (long)((long long)i * n / parts);
}
static inline long mm_part_size(long n, int parts, int i) {
  return mm_part_start(n, parts, i + 1) - mm_part_start(n, parts, i);
}
/* The part holding item x (0 <= x < n). */
int mm_part_of(long n, int parts, long x);

/* The process grid rows x cols = p closest to square: rows = the largest divisor of p that is
 * at most sqrt(p) (p = 3 gives 1 x 3, p = 8 gives 2 x 4). */
void mm_grid(int p, int *rows, int *cols);

/* Integer cube root of q, or -1 when q is not a perfect cube. */
int mm_cube_root(long q);

/* C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb) + beta * C, row-major, with cblas_dgemm.
 * Empty shapes are allowed (k = 0 scales C by beta). */
void mm_dgemm(long m, long n, long k, const double *a, long lda, const double *b, long ldb,
              double beta, double *c, long ldc);

/* Pins OpenBLAS to one thread per call (the threads back end runs BSP processes as threads of
 * one program, and every process is meant to use one core). Call in main, before bsp_init. */
void mm_blas_single_threaded(void);

/* The sequential reference: the rows x cols rectangle of C = A B at (row0, col0) into `out`
 * (leading dimension cols), by a plain i-j-k triple loop over the generated inputs. */
void mm_reference_rect(unsigned long seed, long n, long row0, long col0, long rows, long cols,
                       double *out);

/* Largest |got - reference| over the rectangle (got has leading dimension ld). */
double mm_rect_error(unsigned long seed, long n, long row0, long col0, long rows, long cols,
                     const double *got, long ld);

/* Collective (plain bsp_syncs, not counted): gathers every process' largest error on process 0.
 * Returns the result of the check on process 0 (1 right, -1 WRONG) and 1 elsewhere; fills the
 * note for the JSON and, when wrong, what differs (the driver skeleton prints it). */
int mm_check_collective(const char *prog, const char *algorithm, long n, double my_error,
                        bspalg_check_report *report);

/* A local product C (+)= A B of row-major (m x k) and (k x n) blocks, as a driver computes it;
 * `scratch` holds k * n doubles for kernels that need them. */
typedef void (*mm_product_fn)(long m, long n, long k, const double *a, const double *b, double *c,
                              double *scratch);

/* f on process 0 alone: the median time per flop of cblas_dgemm on an (m x k) * (k x n)
 * product, repeated for at least 0.2 s (calls batched so that each sample is >= 1 ms). */
double mm_measure_f(long m, long n, long k);
/* The same for another local product. */
double mm_measure_f_of(long m, long n, long k, mm_product_fn product);

/* For a driver's setup: room for `count` doubles (at least one, zeroed; bsp_abort "<prog>: out
 * of memory for <what> (<count> doubles)" when there is none), and its registration, both
 * released by the skeleton after the run. */
double *mm_alloc_doubles(long count, const char *what);
void mm_register_doubles(double *v, long count);
/* bspalg_checkpoint_protect of what mm_alloc_doubles gave (the same at least one double). */
void mm_protect_doubles(double *v, long count);

/* Whether `count` doubles fit in one BSPlib registration (at most INT_MAX bytes). When they do
 * not, process 0 prints "<prog>: a process' part of a matrix would be ... bytes, over the
 * BSPlib limit ...; use more processes<advice>". For a driver's setup. */
int mm_fits_registration(const char *prog, double count, const char *advice);

#endif
