/*
 * matmul_pdgemm - ScaLAPACK's (PBLAS') pdgemm, C = A B of random n x n matrices on an R x C BLACS
 * grid (row-major: rank r C + c) with nb x nb blocks: the peer of bspalg-matmul in
 * bench/run_pdgemm_bench.sh, as PBLAS is in the thesis' comparison (seed 000, sec. 4.6,
 * Fig. 4.11). A and B are the BSP drivers' inputs (mm_input of algorithms/matmul/matmul_input.h),
 * made by every process for its own blocks. Run with mpirun -n R*C; BLAS one thread per rank
 * (OPENBLAS_NUM_THREADS=1). Each repetition times pdgemm between barriers, the max over ranks.
 * The check (once, untimed) compares every process' entries of C with a plain triple loop over
 * the generated inputs, within mm_tolerance's 16 n eps, as the BSP drivers do.
 * The result line is lu_scalapack's: time_s the median, gflops the rate of 2 n^3 flops.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "lu_peer_common.h"
#include "scalapack_grid.h" /* the LU peers' command line, which is this program's too */
#include "matmul_input.h"

/* The PBLAS routine (the BLACS and the rest: scalapack_grid.h). */
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);

static const char prog[] = "matmul_pdgemm";

/* This process' largest |C - A B| against the triple loop: its rows of A and columns of B are
 * made once (mloc x n and n x nloc), then every local entry is an n-long dot product. */
static double local_error(const lu_peer_opts *o, const double *c, int lld, int mloc, int nloc,
                          int myrow, int mycol, int rows, int cols) {
  long n = o->n;
  double *arows = malloc((size_t)mloc * (size_t)n * sizeof *arows + 1);
  double *bcols = malloc((size_t)nloc * (size_t)n * sizeof *bcols + 1);
  if (!arows || !bcols) {
    fprintf(stderr, "%s: out of memory for the check (n = %ld)\n", prog, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long li = 0; li < mloc; li++)
    for (long k = 0; k < n; k++)
      arows[li * n + k] =
          mm_input(o->seed, MM_A, scalapack_global_of(li, o->nb, myrow, rows), k, n);
  for (long lj = 0; lj < nloc; lj++)
    for (long k = 0; k < n; k++)
      bcols[lj * n + k] =
          mm_input(o->seed, MM_B, k, scalapack_global_of(lj, o->nb, mycol, cols), n);
  double worst = 0.0;
  for (long lj = 0; lj < nloc; lj++)
    for (long li = 0; li < mloc; li++) {
      double sum = 0.0;
      for (long k = 0; k < n; k++) sum += arows[li * n + k] * bcols[lj * n + k];
      worst = fmax(worst, fabs(c[lj * lld + li] - sum)); /* fmax drops a NaN: counted below */
      if (isnan(c[lj * lld + li])) worst = INFINITY;
    }
  free(arows);
  free(bcols);
  return worst;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  lu_peer_opts o;
  lu_peer_parse(prog, argc, argv, &o);
  scalapack_grid grid = scalapack_grid_open(prog, &o);
  int me = grid.me, ctxt = grid.ctxt, rows = grid.rows, cols = grid.cols, myrow = grid.myrow,
      mycol = grid.mycol, mloc = grid.mloc, nloc = grid.nloc, lld = grid.lld;
  int zero = 0, one = 1, info = 0, n = (int)o.n, nb = o.nb, desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info); /* A, B and C alike */
  size_t local = (size_t)lld * (size_t)(nloc > 0 ? nloc : 1);
  double *a = malloc(local * sizeof *a), *b = malloc(local * sizeof *b);
  double *c = calloc(local, sizeof *c), *times = malloc((size_t)o.reps * sizeof *times);
  if (!a || !b || !c || !times) {
    fprintf(stderr, "%s: out of memory for n = %d\n", prog, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long lj = 0; lj < nloc; lj++)
    for (long li = 0; li < mloc; li++) {
      long gi = scalapack_global_of(li, nb, myrow, rows),
           gj = scalapack_global_of(lj, nb, mycol, cols);
      a[lj * lld + li] = mm_input(o.seed, MM_A, gi, gj, n);
      b[lj * lld + li] = mm_input(o.seed, MM_B, gi, gj, n);
    }
  const double alpha = 1.0, beta = 0.0; /* beta 0: C is overwritten, no refill between reps */
  for (int rep = 0; rep < o.reps; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c, &one,
            &one, desc);
    double mine = MPI_Wtime() - t0;
    MPI_Allreduce(&mine, &times[rep], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  const char *check = "skipped";
  if (o.check) {
    double worst = local_error(&o, c, lld, mloc, nloc, myrow, mycol, rows, cols), all = 0.0;
    MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (!(all <= mm_tolerance(n))) {
      if (me == 0)
        fprintf(stderr,
                "%s: WRONG RESULT: max |C - A B| = %.3g over the tolerance %.3g (16 n eps), "
                "n = %d, nb = %d, grid %dx%d\n",
                prog, all, mm_tolerance(n), n, nb, rows, cols);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check = "passed";
  }
  if (me == 0) {
    qsort(times, (size_t)o.reps, sizeof *times, lu_peer_compare);
    double t = o.reps % 2 ? times[o.reps / 2] : 0.5 * (times[o.reps / 2 - 1] + times[o.reps / 2]);
    double dn = (double)n;
    printf("%s: n=%d nb=%d grid=%dx%d threads=1 reps=%d check=%s time_s=%.6f gflops=%.3f\n", prog,
           n, nb, rows, cols, o.reps, check, t, 2.0 * dn * dn * dn / t / 1e9);
  }
  free(a);
  free(b);
  free(c);
  free(times);
  scalapack_grid_close(&grid);
  MPI_Finalize();
  return 0;
}
