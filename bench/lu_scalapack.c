/*
 * lu_scalapack - ScaLAPACK's LU decomposition (pdgetrf) of a random n x n matrix on an R x C
 * BLACS grid (row-major: rank r C + c, as bspalg-lu's) with nb x nb blocks: the peer of
 * bspalg-lu in bench/run_lu_bench.sh. Run with mpirun -n R*C; BLAS one thread per rank
 * (OPENBLAS_NUM_THREADS=1). Each repetition makes the matrix again (untimed) and times pdgetrf
 * between barriers, the max over ranks; the check (once, untimed) solves A x = A 1 with pdgetrs
 * and wants x = 1 to 1e-6.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "lu_peer_common.h"
#include "scalapack_grid.h"

/* ScaLAPACK's routines beyond those of scalapack_grid.h. */
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib,
              const int *jb, const int *descb, int *info);

static const char prog[] = "lu_scalapack";

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  lu_peer_opts o;
  lu_peer_parse(prog, argc, argv, &o);
  scalapack_grid grid = scalapack_grid_open(prog, &o);
  int me = grid.me, ctxt = grid.ctxt, rows = grid.rows, cols = grid.cols, myrow = grid.myrow,
      mycol = grid.mycol, mloc = grid.mloc, nloc = grid.nloc, lld = grid.lld;
  int zero = 0, one = 1, info = 0, n = (int)o.n, nb = o.nb, desc[9], descb[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  descinit_(descb, &n, &one, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  double *a = malloc((size_t)lld * (size_t)(nloc > 0 ? nloc : 1) * sizeof *a);
  double *b = calloc((size_t)lld, sizeof *b);
  int *ipiv = malloc((size_t)(mloc + nb) * sizeof *ipiv);
  double *times = malloc((size_t)o.reps * sizeof *times);
  if (!a || !b || !ipiv || !times) {
    fprintf(stderr, "%s: out of memory for n = %d\n", prog, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int rep = 0; rep < o.reps; rep++) {
    for (long lj = 0; lj < nloc; lj++)
      for (long li = 0; li < mloc; li++)
        a[lj * lld + li] = lu_peer_entry(o.seed, scalapack_global_of(li, nb, myrow, rows),
                                         scalapack_global_of(lj, nb, mycol, cols), n);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pdgetrf_(&n, &n, a, &one, &one, desc, ipiv, &info);
    double mine = MPI_Wtime() - t0;
    MPI_Allreduce(&mine, &times[rep], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (info != 0) {
      if (me == 0) fprintf(stderr, "%s: pdgetrf returned info = %d\n", prog, info);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  const char *check = "skipped";
  if (o.check) { /* b = A 1 (the column of b lives on process column 0), then solve */
    if (mycol == 0)
      for (long li = 0; li < mloc; li++) {
        long gi = scalapack_global_of(li, nb, myrow, rows);
        double sum = 0.0;
        for (long gj = 0; gj < n; gj++) sum += lu_peer_entry(o.seed, gi, gj, n);
        b[li] = sum;
      }
    pdgetrs_("N", &n, &one, a, &one, &one, desc, ipiv, b, &one, &one, descb, &info);
    double worst = 0.0, all = 0.0;
    if (mycol == 0)
      for (long li = 0; li < mloc; li++) worst = fmax(worst, fabs(b[li] - 1.0));
    MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (info != 0 || !(all <= 1e-6)) {
      if (me == 0)
        fprintf(stderr, "%s: WRONG RESULT: solving A x = A 1 gave max |x - 1| = %.3g (info %d)\n",
                prog, all, info);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check = "passed";
  }
  if (me == 0) lu_peer_report(prog, &o, times, check);
  free(a);
  free(b);
  free(ipiv);
  free(times);
  scalapack_grid_close(&grid);
  MPI_Finalize();
  return 0;
}
