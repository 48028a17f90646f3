/*
 * test_drma_get.c - bsp_get (buffered DRMA get).
 *
 *  - the data arrives at the sync (the local destination is unchanged before it);
 *  - a get reads the remote memory at the sync, BEFORE that superstep's puts land: process A
 *    gets x from B while A puts into B's x and B puts into its own x in the same superstep;
 *    A must receive the old values;
 *  - what the remote process writes into its memory locally before it reaches the sync is
 *    what a get issued earlier in the superstep receives;
 *  - gets with offsets from every process; self-gets; zero-length gets; large unaligned gets;
 *  - large gets into registered memory that other processes' gets read in the same superstep.
 */
#include "testutil.h"

#define SENT 0x5A

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int next = (s + 1) % p, prev = (s + p - 1) % p;

  /* ---- 1. basic get; destination unchanged before the sync ---- */
  long x = 100 + s;
  bsp_push_reg(&x, (int)sizeof x);
  bsp_sync();
  {
    long y = -1;
    bsp_get(next, &x, 0, &y, (int)sizeof y);
    TU_EQ("get destination before the sync", -1, y);
    bsp_sync();
    TU_EQ("y = next's x", 100 + next, y);
    TU_EQ("x unchanged by being read", 100 + s, x);
  }

  /* ---- 2. gets read before the superstep's puts land ---- */
  long X[2] = {500 + s, 600 + s};
  bsp_push_reg(X, (int)sizeof X);
  bsp_sync();
  {
    long G[2] = {-1, -1}, G2 = -1;
    long nv0 = 700 + s, nv1 = 800 + s;
    bsp_get(next, X, 0, G, (int)sizeof X);                    /* read next's X */
    bsp_put(next, &nv0, X, 0, (int)sizeof nv0);               /* and overwrite X[0] */
    bsp_put(s, &nv1, X, (int)sizeof(long), (int)sizeof nv1);  /* self-put into X[1] */
    bsp_get(prev, X, (int)sizeof(long), &G2, (int)sizeof G2); /* prev's X[1], which
                                                                  prev overwrites */
    bsp_sync();
    TU_EQ("get of next's X[0], overwritten by our put in the same superstep", 500 + next, G[0]);
    TU_EQ("get of next's X[1], overwritten by next's self-put in the same superstep", 600 + next,
          G[1]);
    TU_EQ("get of prev's X[1], overwritten by prev's self-put in the same superstep", 600 + prev,
          G2);
    TU_EQ("X[0] after prev's put", 700 + prev, X[0]);
    TU_EQ("X[1] after self-put", 800 + s, X[1]);
  }

  /* ---- 3. a get sees what the owner wrote locally before reaching the sync ---- */
  {
    long w = -1;
    bsp_get(next, &x, 0, &w, (int)sizeof w);
    x = 900 + s; /* local write after the other processes issued their gets */
    bsp_sync();
    TU_EQ("get of next's x, which next wrote locally before the sync", 900 + next, w);
  }

  /* ---- 4. gets with offsets from every process; self-gets; zero-length gets ---- */
  const int K = 11;
  int *V = (int *)tu_malloc(sizeof(int) * (size_t)K);
  for (int i = 0; i < K; i++) V[i] = s * 1000 + i;
  bsp_push_reg(V, K * (int)sizeof(int));
  bsp_sync();
  {
    int *buf = (int *)tu_malloc(sizeof(int) * (size_t)(3 * p + 1));
    for (int i = 0; i < 3 * p + 1; i++) buf[i] = -1;
    int zero_dst = -5;
    for (int d = 0; d < p; d++) {
      int off = (s + d) % (K - 2);
      bsp_get(d, V, off * (int)sizeof(int), buf + 3 * d, 3 * (int)sizeof(int));
      bsp_get(d, V, off * (int)sizeof(int), &zero_dst, 0);
      bsp_get(d, V, 0, &zero_dst, 0);
    }
    bsp_sync();
    for (int d = 0; d < p; d++) {
      int off = (s + d) % (K - 2);
      for (int j = 0; j < 3; j++) {
        char what[96];
        snprintf(what, sizeof what, "get from process %d, offset %d ints, word %d", d, off, j);
        TU_EQ(what, d * 1000 + off + j, buf[3 * d + j]);
      }
    }
    TU_EQ("buffer word after the last get", -1, buf[3 * p]);
    TU_EQ("destination of zero-length gets", -5, zero_dst);
    free(buf);
  }

  /* ---- 5. self-get of an overlapping range of the own array (read before the write) ---- */
  {
    int local[4] = {-1, -1, -1, -1};
    bsp_get(s, V, 2 * (int)sizeof(int), local, 4 * (int)sizeof(int));
    int nv = -99;
    bsp_put(s, &nv, V, 3 * (int)sizeof(int), (int)sizeof nv);
    bsp_sync();
    for (int j = 0; j < 4; j++)
      TU_EQ("self-get of V[2..6) while a self-put overwrites V[3]", s * 1000 + 2 + j, local[j]);
    TU_EQ("V[3] after self-put", -99, V[3]);
  }

  /* ---- 6. large unaligned gets from two processes into one buffer ---- */
  {
    const int N = 100003;
    unsigned char *B = (unsigned char *)tu_malloc((size_t)N);
    unsigned char *dst = (unsigned char *)tu_malloc((size_t)(2 * N + 16));
    tu_fill(B, (size_t)N, (uint64_t)s, 6, 0);
    memset(dst, SENT, (size_t)(2 * N + 16));
    bsp_push_reg(B, N);
    bsp_sync();
    bsp_get(next, B, 7, dst + 1, N - 7);
    bsp_get(prev, B, 0, dst + N + 3, N);
    bsp_sync();
    TU_EQ("dst[0]", SENT, dst[0]);
    TU_PATTERN("large get from next at offset 7", dst + 1, N - 7, (uint64_t)next, 6, 0, 7);
    TU_ALL("between the two gets", dst + N - 6, SENT, 9);
    TU_PATTERN("large get from prev", dst + N + 3, N, (uint64_t)prev, 6, 0, 0);
    TU_ALL("after the second get", dst + 2 * N + 3, SENT, 13);
    bsp_pop_reg(B);
    bsp_sync();
    free(B);
    free(dst);
  }

  /* ---- 7. many small gets in one superstep, repeated ---- */
  {
    const int W = 64;
    int *M = (int *)tu_malloc(sizeof(int) * (size_t)W);
    int *D = (int *)tu_malloc(sizeof(int) * (size_t)(p * W));
    bsp_push_reg(M, W * (int)sizeof(int));
    for (int round = 0; round < 5; round++) {
      for (int i = 0; i < W; i++) M[i] = round * 1000000 + s * 1000 + i;
      for (int i = 0; i < p * W; i++) D[i] = -1;
      bsp_sync();
      for (int d = 0; d < p; d++)
        for (int i = 0; i < W; i++)
          bsp_get(d, M, ((i * 7 + s) % W) * (int)sizeof(int), D + d * W + i, (int)sizeof(int));
      bsp_sync();
      for (int d = 0; d < p; d++)
        for (int i = 0; i < W; i++) {
          char what[96];
          snprintf(what, sizeof what, "round %d: get %d from process %d", round, i, d);
          TU_EQ(what, round * 1000000 + d * 1000 + (i * 7 + s) % W, D[d * W + i]);
        }
    }
    bsp_pop_reg(M);
    bsp_sync();
    free(M);
    free(D);
  }

  /* ---- 8. large gets into registered memory that other gets read: a ring rotation ----
   * Each process gets next's array into its own, which prev reads in the same superstep,
   * and a large hpget of prev's array into a private buffer: every read sees the arrays as
   * they were before the sync (on mpi, gets of BSPKIT_LARGE_PUT_BYTES or more come as
   * messages of their own). */
  {
    const int N = 70001; /* above the default threshold of 65536 bytes */
    unsigned char *A = (unsigned char *)tu_malloc((size_t)N);
    unsigned char *old_prev = (unsigned char *)tu_malloc((size_t)N);
    tu_fill(A, (size_t)N, (uint64_t)s, 8, 0);
    bsp_push_reg(A, N);
    bsp_sync();
    bsp_get(next, A, 0, A, N);
    bsp_hpget(prev, A, 0, old_prev, N);
    bsp_sync();
    TU_PATTERN("own array after getting next's", A, N, (uint64_t)next, 8, 0, 0);
    TU_PATTERN("hpget of prev's array, read before prev's get landed", old_prev, N, (uint64_t)prev,
               8, 0, 0);
    bsp_pop_reg(A);
    bsp_sync();
    free(A);
    free(old_prev);
  }

  bsp_pop_reg(V);
  bsp_pop_reg(X);
  bsp_pop_reg(&x);
  bsp_sync();
  free(V);
  bsp_end();
  return 0;
}
