/*
 * test_hp.c - bsp_hpput and bsp_hpget (unbuffered DRMA).
 *
 * Sources and destinations are left alone until the sync (as the standard requires);
 * after the sync the data must be there:
 *  - hpput with offsets to every process, self hpput, zero-length hpput;
 *  - hpget with offsets from every process, self hpget, zero-length hpget;
 *  - large unaligned hpput/hpget; hpput, put, hpget and get mixed in one superstep on
 *    disjoint memory; several supersteps in a row.
 */
#include "testutil.h"

#define SENT 0x3C

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int next = (s + 1) % p, prev = (s + p - 1) % p;

  const int R = 29; /* bytes per process region */
  unsigned char *A = (unsigned char *)tu_malloc((size_t)(p * R));
  unsigned char *S = (unsigned char *)tu_malloc((size_t)(p * R)); /* hpput sources */
  unsigned char *G = (unsigned char *)tu_malloc((size_t)(p * R)); /* hpget destinations */
  unsigned char *H = (unsigned char *)tu_malloc((size_t)R);       /* hpget sources */
  bsp_push_reg(A, p * R);
  bsp_push_reg(H, R);

  for (int round = 0; round < 4; round++) {
    memset(A, SENT, (size_t)(p * R));
    memset(G, SENT, (size_t)(p * R));
    tu_fill(H, (size_t)R, (uint64_t)s, 20, (uint64_t)round);
    bsp_sync();
    for (int d = 0; d < p; d++) {
      int n = R - 2 - (s + d + round) % 5;
      tu_fill(S + d * R, (size_t)n, (uint64_t)s, (uint64_t)d, (uint64_t)(100 + round));
      bsp_hpput(d, S + d * R, A, s * R + 2, n);
      bsp_hpput(d, S + d * R, A, s * R, 0); /* zero-length */
      int off = (s + d + round) % 7;
      bsp_hpget(d, H, off, G + d * R, R - off);
      bsp_hpget(d, H, 0, G + d * R + R - 1, 0); /* zero-length */
    }
    bsp_sync();
    for (int src = 0; src < p; src++) {
      char what[96];
      int n = R - 2 - (src + s + round) % 5;
      snprintf(what, sizeof what, "round %d: hpput region from process %d", round, src);
      TU_ALL(what, A + src * R, SENT, 2);
      TU_PATTERN(what, A + src * R + 2, n, (uint64_t)src, (uint64_t)s, (uint64_t)(100 + round), 0);
      TU_ALL(what, A + src * R + 2 + n, SENT, (size_t)(R - 2 - n));
      int off = (s + src + round) % 7;
      snprintf(what, sizeof what, "round %d: hpget from process %d at offset %d", round, src, off);
      TU_PATTERN(what, G + src * R, R - off, (uint64_t)src, 20, (uint64_t)round, (uint64_t)off);
      TU_ALL(what, G + src * R + R - off, SENT, (size_t)off);
    }
  }

  /* ---- large unaligned hpput and hpget, mixed with put and get on disjoint memory ---- */
  {
    const int N = 300007;
    unsigned char *B = (unsigned char *)tu_malloc((size_t)N + 16);
    unsigned char *src = (unsigned char *)tu_malloc((size_t)N);
    unsigned char *dst = (unsigned char *)tu_malloc((size_t)N + 16);
    long word = -1, got = -1, got2 = -1;
    long val = 4242 + s;
    memset(B, SENT, (size_t)N + 16);
    memset(dst, SENT, (size_t)N + 16);
    bsp_push_reg(B, N + 16);
    bsp_push_reg(&word, (int)sizeof word);
    bsp_sync();
    tu_fill(src, (size_t)N, (uint64_t)s, 30, 1);
    tu_fill(H, (size_t)R, (uint64_t)s, 31, 1);
    bsp_sync();
    bsp_hpput(next, src, B, 5, N); /* B[5..N+5) on next */
    bsp_put(next, &val, &word, 0, (int)sizeof val);
    val = 0;                                        /* buffered put: already copied */
    bsp_hpget(prev, H, 1, dst + 3, R - 1);          /* prev's H, which nobody writes now */
    bsp_get(prev, &word, 0, &got, (int)sizeof got); /* old value, before the put lands */
    bsp_hpget(s, H, 0, &got2, (int)sizeof got2);    /* self hpget */
    bsp_sync();
    TU_ALL("B[0..5)", B, SENT, 5);
    TU_PATTERN("large hpput from prev", B + 5, N, (uint64_t)prev, 30, 1, 0);
    TU_ALL("B tail", B + 5 + N, SENT, 11);
    TU_EQ("word after put from prev", 4242 + prev, word);
    TU_EQ("get of prev's word (before the put landed)", -1, got);
    TU_ALL("dst[0..3)", dst, SENT, 3);
    TU_PATTERN("hpget from prev", dst + 3, R - 1, (uint64_t)prev, 31, 1, 1);
    TU_ALL("dst after hpget", dst + 3 + R - 1, SENT, 8);
    TU_PATTERN("self hpget", &got2, sizeof got2, (uint64_t)s, 31, 1, 0);

    /* large hpget of the data just received, from the next process */
    memset(dst, SENT, (size_t)N + 16);
    bsp_sync();
    bsp_hpget(next, B, 5, dst + 1, N);
    bsp_sync();
    /* next's B holds what next's prev (= us) hpput there */
    TU_PATTERN("large hpget of next's B", dst + 1, N, (uint64_t)s, 30, 1, 0);
    TU_ALL("dst tail after large hpget", dst + 1 + N, SENT, 15);
    bsp_pop_reg(&word);
    bsp_pop_reg(B);
    bsp_sync();
    free(B);
    free(src);
    free(dst);
  }

  bsp_pop_reg(H);
  bsp_pop_reg(A);
  bsp_sync();
  free(A);
  free(S);
  free(G);
  free(H);
  bsp_end();
  return 0;
}
