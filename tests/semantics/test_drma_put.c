/*
 * test_drma_put.c - bsp_put (buffered DRMA put).
 *
 *  - the source is copied at the call: changing or freeing it before the sync does not
 *    change what arrives;
 *  - puts land only at the sync: the destination is unchanged until then;
 *  - puts with offsets, from every process to every process and from all to one;
 *  - self-puts; zero-length puts change nothing;
 *  - several puts from one process to the same location in one superstep: the last one
 *    issued wins (also for partly overlapping ranges);
 *  - puts into several registered areas in one superstep, large unaligned puts, a put whose
 *    source is itself the destination of another put in the same superstep.
 */
#include "testutil.h"

#define SENT 0xA5

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int next = (s + 1) % p, prev = (s + p - 1) % p;

  /* ---- 1. buffered: source copied at the call; destination unchanged before sync ---- */
  long x = -7, y = -8;
  bsp_push_reg(&x, (int)sizeof x);
  bsp_push_reg(&y, (int)sizeof y);
  bsp_sync();
  {
    long v = 1000 + s;
    bsp_put(next, &v, &x, 0, (int)sizeof v);
    v = -1; /* must not affect the put */
    long *heap = (long *)tu_malloc(sizeof(long));
    *heap = 2000 + s;
    bsp_put(next, heap, &y, 0, (int)sizeof(long));
    *heap = -2;
    free(heap); /* buffered: the library copied it already */
    TU_EQ("x before the sync (a put landed early)", -7, x);
    TU_EQ("y before the sync (a put landed early)", -8, y);
    TU_EQ("local source variable changed by bsp_put", -1, v);
    bsp_sync();
    TU_EQ("x after put from prev (source modified after bsp_put)", 1000 + prev, x);
    TU_EQ("y after put from prev (source freed after bsp_put)", 2000 + prev, y);
  }

  /* ---- 2. the source of a put is a registered variable that itself receives a put in the
   *         same superstep: the value sent is the one at the call ---- */
  {
    x = 50 + s; /* our x; prev will overwrite it at the sync */
    y = -1;
    bsp_sync();
    long nv = 70 + s;
    bsp_put(next, &x, &y, 0, (int)sizeof x);   /* next.y := our x as it is now */
    bsp_put(next, &nv, &x, 0, (int)sizeof nv); /* next.x := 70+s */
    x = 60 + s;                                /* after the call: must not be sent */
    bsp_sync();
    TU_EQ("y = prev's x at the time of the put", 50 + prev, y);
    TU_EQ("x = value put by prev", 70 + prev, x);
  }

  /* ---- 3. puts with offsets, every process to every process ---- */
  const int R = 13; /* bytes per sender region; odd so offsets are unaligned */
  unsigned char *A = (unsigned char *)tu_malloc((size_t)(p * R));
  memset(A, SENT, (size_t)(p * R));
  bsp_push_reg(A, p * R);
  bsp_sync();
  {
    unsigned char buf[16];
    for (int d = 0; d < p; d++) {
      int n = R - 1 - (s + d) % 3;
      tu_fill(buf, (size_t)n, (uint64_t)s, (uint64_t)d, 3);
      bsp_put(d, buf, A, s * R + 1, n);
      memset(buf, 0, sizeof buf);
    }
    TU_ALL("A before the sync", A, SENT, (size_t)(p * R));
    bsp_sync();
    for (int src = 0; src < p; src++) {
      int n = R - 1 - (src + s) % 3;
      char what[96];
      snprintf(what, sizeof what, "region put by process %d", src);
      TU_EQ(what, SENT, A[src * R]);
      TU_PATTERN(what, A + src * R + 1, n, (uint64_t)src, (uint64_t)s, 3, 0);
      TU_ALL(what, A + src * R + 1 + n, SENT, (size_t)(R - 1 - n));
    }
  }

  /* ---- 4. all processes put into one process (p-1), into its own slots ---- */
  memset(A, SENT, (size_t)(p * R));
  bsp_sync();
  {
    unsigned char buf[16];
    tu_fill(buf, (size_t)R, (uint64_t)s, 4, 4);
    bsp_put(p - 1, buf, A, s * R, R);
    bsp_sync();
    if (s == p - 1) {
      for (int src = 0; src < p; src++) {
        char what[96];
        snprintf(what, sizeof what, "all-to-one: region of process %d", src);
        TU_PATTERN(what, A + src * R, R, (uint64_t)src, 4, 4, 0);
      }
    } else {
      TU_ALL("A of a process nobody put to", A, SENT, (size_t)(p * R));
    }
  }

  /* ---- 5. self-puts (with offsets) and zero-length puts ---- */
  memset(A, SENT, (size_t)(p * R));
  bsp_sync();
  {
    unsigned char buf[16];
    tu_fill(buf, 7, (uint64_t)s, 5, 5);
    bsp_put(s, buf, A, 3, 7);
    memset(buf, 0, sizeof buf);
    /* zero-length puts to everyone, at several offsets */
    for (int d = 0; d < p; d++) {
      bsp_put(d, buf, A, 0, 0);
      bsp_put(d, buf, A, R, 0);
      bsp_put(d, buf, A, p * R - 1, 0);
    }
    TU_ALL("A before the sync (self-put landed early)", A, SENT, (size_t)(p * R));
    bsp_sync();
    TU_ALL("A[0..3) after self-put", A, SENT, 3);
    TU_PATTERN("A[3..10) after self-put", A + 3, 7, (uint64_t)s, 5, 5, 0);
    TU_ALL("A[10..) after self-put and zero-length puts", A + 10, SENT, (size_t)(p * R - 10));
  }

  /* ---- 6. one sender, several puts to the same location: the last issued wins ---- */
  {
    int ints[4] = {0, 0, 0, 0};
    bsp_push_reg(ints, (int)sizeof ints);
    bsp_sync();
    for (int k = 1; k <= 5; k++) {
      int v = 100 * s + k;
      bsp_put(next, &v, ints, (int)sizeof(int), (int)sizeof(int));
    }
    /* partly overlapping: ints[2..4) := a[0..2), then ints[3] := b[0] */
    int a[3] = {10 + s, 20 + s, 30 + s}, b[2] = {40 + s, 50 + s};
    bsp_put(next, a, ints, 2 * (int)sizeof(int), 2 * (int)sizeof(int));
    bsp_put(next, b, ints, 3 * (int)sizeof(int), (int)sizeof(int));
    bsp_sync();
    TU_EQ("ints[0] (untouched)", 0, ints[0]);
    TU_EQ("ints[1] after 5 puts from one process (last wins)", 100 * prev + 5, ints[1]);
    TU_EQ("ints[2] (first of two overlapping puts)", 10 + prev, ints[2]);
    TU_EQ("ints[3] (second overlapping put wins)", 40 + prev, ints[3]);

    /* byte-level overlap inside one destination, self-put */
    unsigned char u[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    memset(A, SENT, (size_t)(p * R));
    bsp_put(s, u, A, 0, 8);
    bsp_put(s, w, A, 2, 3);
    bsp_put(s, u + 6, A, 4, 1); /* overwrites part of the previous one */
    bsp_sync();
    unsigned char expect[9] = {1, 2, 9, 9, 7, 6, 7, 8, SENT};
    TU_MEMEQ("overlapping self-puts (program order)", expect, A, 9);
    bsp_pop_reg(ints);
    bsp_sync();
  }

  /* ---- 7. large unaligned puts into several registered areas in one superstep ---- */
  {
    const int N = 100003;
    unsigned char *B = (unsigned char *)tu_malloc((size_t)N + 8);
    unsigned char *C = (unsigned char *)tu_malloc((size_t)N + 8);
    unsigned char *src = (unsigned char *)tu_malloc((size_t)N);
    memset(B, SENT, (size_t)N + 8);
    memset(C, SENT, (size_t)N + 8);
    bsp_push_reg(B, N + 8);
    bsp_push_reg(C, N + 8);
    bsp_sync();
    tu_fill(src, (size_t)N, (uint64_t)s, 7, 1);
    bsp_put(next, src, B, 3, N);
    tu_fill(src, (size_t)N, (uint64_t)s, 7, 2);
    bsp_put(prev, src, C, 5, N - 2);
    tu_fill(src, 8, (uint64_t)s, 7, 3);
    bsp_put(next, src, A, 1, 8);
    memset(src, 0, (size_t)N);
    bsp_sync();
    TU_ALL("B[0..3)", B, SENT, 3);
    TU_PATTERN("B: large put from prev at offset 3", B + 3, N, (uint64_t)prev, 7, 1, 0);
    TU_ALL("B tail", B + 3 + N, SENT, 5);
    TU_ALL("C[0..5)", C, SENT, 5);
    TU_PATTERN("C: large put from next at offset 5", C + 5, N - 2, (uint64_t)next, 7, 2, 0);
    TU_ALL("C tail", C + 3 + N, SENT, 5);
    TU_PATTERN("A: small put from prev in the same superstep", A + 1, 8, (uint64_t)prev, 7, 3, 0);
    bsp_pop_reg(C);
    bsp_pop_reg(B);
    bsp_sync();
    free(B);
    free(C);
    free(src);
  }

  /* ---- 8. many puts per superstep, repeated (all-to-all, 4-byte words) ---- */
  {
    const int W = 64;
    int *M = (int *)tu_malloc(sizeof(int) * (size_t)(p * W));
    for (int i = 0; i < p * W; i++) M[i] = -1;
    bsp_push_reg(M, (int)sizeof(int) * p * W);
    bsp_sync();
    for (int round = 0; round < 5; round++) {
      for (int d = 0; d < p; d++)
        for (int i = 0; i < W; i++) {
          int v = round * 1000000 + s * 10000 + d * 100 + i;
          bsp_put(d, &v, M, (s * W + i) * (int)sizeof(int), (int)sizeof(int));
        }
      bsp_sync();
      for (int src = 0; src < p; src++)
        for (int i = 0; i < W; i++) {
          char what[96];
          snprintf(what, sizeof what, "round %d, word %d from process %d", round, i, src);
          TU_EQ(what, round * 1000000 + src * 10000 + s * 100 + i, M[src * W + i]);
        }
    }
    bsp_pop_reg(M);
    bsp_sync();
    free(M);
  }

  bsp_pop_reg(A);
  bsp_pop_reg(&y);
  bsp_pop_reg(&x);
  bsp_sync();
  free(A);
  bsp_end();
  return 0;
}
