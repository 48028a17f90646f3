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

/* ScaLAPACK and the BLACS (Fortran and C interfaces of libscalapack-openmpi). */
void Cblacs_pinfo(int *me, int *nprocs);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int cols);
void Cblacs_gridinfo(int context, int *rows, int *cols, int *my_row, int *my_col);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *context, const int *lld, int *info);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib,
              const int *jb, const int *descb, int *info);

static const char prog[] = "lu_scalapack";

/* Local index -> global index of a block-cyclic dimension (first block on coordinate 0). */
static long global_of(long local, int nb, int coord, int nprocs) {
  return (local / nb * nprocs + coord) * nb + local % nb;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  lu_peer_opts o;
  lu_peer_parse(prog, argc, argv, &o);
  int me, np;
  Cblacs_pinfo(&me, &np);
  if (o.rows * o.cols != np) {
    if (me == 0)
      fprintf(stderr, "%s: --grid %dx%d needs %d ranks, not %d\n", prog, o.rows, o.cols,
              o.rows * o.cols, np);
    MPI_Finalize();
    return 2;
  }
  int ctxt, rows, cols, myrow, mycol, zero = 0, one = 1, info = 0, n = (int)o.n, nb = o.nb;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", o.rows, o.cols);
  Cblacs_gridinfo(ctxt, &rows, &cols, &myrow, &mycol);
  int mloc = numroc_(&n, &nb, &myrow, &zero, &rows), nloc = numroc_(&n, &nb, &mycol, &zero, &cols);
  int lld = mloc > 1 ? mloc : 1, desc[9], descb[9];
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
        a[lj * lld + li] = lu_peer_entry(o.seed, global_of(li, nb, myrow, rows),
                                         global_of(lj, nb, mycol, cols), n);
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
        long gi = global_of(li, nb, myrow, rows);
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
  Cblacs_gridexit(ctxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return 0;
}
