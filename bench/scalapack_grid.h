/* scalapack_grid.h - what the ScaLAPACK peers (lu_scalapack.c, matmul_pdgemm.c) share: the
 * BLACS and ScaLAPACK routines they call (C and Fortran interfaces of libscalapack-openmpi),
 * their R x C process grid (--grid of lu_peer_common.h) with an n x n matrix in nb x nb blocks,
 * and the block-cyclic map from a local index to the global one. */
#ifndef BSPKIT_SCALAPACK_GRID_H
#define BSPKIT_SCALAPACK_GRID_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "lu_peer_common.h"

void Cblacs_pinfo(int *me, int *nprocs);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int rows, int cols);
void Cblacs_gridinfo(int context, int *rows, int *cols, int *my_row, int *my_col);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *context, const int *lld, int *info);

typedef struct {
  int me;              /* this rank */
  int ctxt;            /* the BLACS context */
  int rows, cols;      /* the grid */
  int myrow, mycol;    /* this rank's place in it (row-major: rank r C + c) */
  int mloc, nloc, lld; /* the local rows and columns of the n x n matrix, its leading dimension */
} scalapack_grid;

/* With MPI up: o's --grid over the ranks, row-major, and this rank's share of an n x n matrix
 * in nb x nb blocks (the first on coordinate 0). A grid that is not the ranks' count ends the
 * program with status 2, rank 0 saying why. */
static inline scalapack_grid scalapack_grid_open(const char *prog, const lu_peer_opts *o) {
  scalapack_grid g;
  int np, zero = 0, n = (int)o->n, nb = o->nb;
  Cblacs_pinfo(&g.me, &np);
  if (o->rows * o->cols != np) {
    if (g.me == 0)
      fprintf(stderr, "%s: --grid %dx%d needs %d ranks, not %d\n", prog, o->rows, o->cols,
              o->rows * o->cols, np);
    MPI_Finalize();
    exit(2);
  }
  Cblacs_get(-1, 0, &g.ctxt);
  Cblacs_gridinit(&g.ctxt, "Row", o->rows, o->cols);
  Cblacs_gridinfo(g.ctxt, &g.rows, &g.cols, &g.myrow, &g.mycol);
  g.mloc = numroc_(&n, &nb, &g.myrow, &zero, &g.rows);
  g.nloc = numroc_(&n, &nb, &g.mycol, &zero, &g.cols);
  g.lld = g.mloc > 1 ? g.mloc : 1;
  return g;
}

static inline void scalapack_grid_close(const scalapack_grid *g) {
  Cblacs_gridexit(g->ctxt);
  Cblacs_exit(1);
}

/* Local index -> global index of a block-cyclic dimension (first block on coordinate 0). */
static inline long scalapack_global_of(long local, int nb, int coord, int nprocs) {
  return (local / nb * nprocs + coord) * nb + local % nb;
}

#endif
