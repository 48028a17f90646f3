/*
 * inner_product.c - the simplest BSP program: the inner product of two vectors of length n,
 * cyclically distributed over p processes (Bisseling, Parallel Scientific Computation, ch. 1).
 *
 *   cost: W = 2n/p + p flops, H = p - 1 words (one superstep), S = 2 syncs (incl. the fold)
 *
 * Build and run:  bspcc -O2 -o inprod inner_product.c && bsprun -n 4 ./inprod 1000000
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static long n = 1000000;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();

  /* This process' share of x and y under the cyclic distribution: global i = s + k p. */
  long nlocal = (n - s + p - 1) / p;
  double *x = malloc((size_t)(nlocal > 0 ? nlocal : 1) * sizeof *x);
  double *partial = calloc((size_t)p, sizeof *partial);
  if (!x || !partial) bsp_abort("inner_product: out of memory for n = %ld", n);
  for (long k = 0; k < nlocal; k++) x[k] = (double)(s + k * p + 1);
  bsp_push_reg(partial, p * (int)sizeof *partial);
  bsp_sync();

  double t0 = bsp_time();
  double mine = 0.0;
  for (long k = 0; k < nlocal; k++) mine += x[k] * x[k];
  for (int t = 0; t < p; t++) bsp_put(t, &mine, partial, s * (int)sizeof mine, sizeof mine);
  bsp_sync();
  double alpha = 0.0;
  for (int t = 0; t < p; t++) alpha += partial[t];
  double elapsed = bsp_time() - t0;

  if (s == 0) {
    /* sum_{i=1..n} i^2, exactly representable for n up to about 2e5, close beyond */
    double exact = (double)n * (n + 1) * (2.0 * n + 1) / 6.0;
    printf("inner product of x = (1, ..., %ld) with itself on %d processes: %.10g\n", n, p, alpha);
    printf("expected n(n+1)(2n+1)/6 = %.10g, relative error %.2e\n", exact,
           (alpha - exact) / exact);
    printf("time %.6f s (W = %ld flops, H = %d words, S = 2)\n", elapsed, 2 * ((n + p - 1) / p),
           p - 1);
  }
  bsp_pop_reg(partial);
  free(partial);
  free(x);
  bsp_end();
}

int main(int argc, char **argv) {
  /* Before bsp_init: on a process-based back end (MPI) only process 0 runs main after it,
   * so what the SPMD function needs from main is set here, on every process. */
  if (argc > 1) n = atol(argv[1]);
  if (n < 1) {
    fprintf(stderr, "usage: %s [n >= 1]\n", argv[0]);
    return 2;
  }
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
