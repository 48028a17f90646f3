/*
 * test_large.c - a 100 MiB h-relation with bsp_put, bsp_hpput, bsp_get and bsp_hpget.
 *
 * Every process sends (or fetches) about 100 MiB in one superstep, split into p blocks of
 * B bytes, one per process (B is not a multiple of 8, so blocks start unaligned):
 *   put:    block d of the source to process d, at offset s*B of its receive array;
 *   hpput:  the same with new contents, in 1 MiB pieces;
 *   get:    block (s+1)%p of every process's receive array, rewritten locally by its
 *           owner just before the sync;
 *   hpget:  block s of every process's receive array.
 * All contents are checked. Arguments: [--mib N] (default 100).
 */
#include "testutil.h"

/* Byte i of stream key: byte (i % 8) of mix64(key + i / 8). */
static void pfill(unsigned char *b, size_t n, uint64_t key) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = tu_mix64(key + i / 8);
    memcpy(b + i, &w, 8);
  }
  if (i < n) {
    uint64_t w = tu_mix64(key + i / 8);
    memcpy(b + i, &w, n - i);
  }
}

static void pcheck(const unsigned char *b, size_t n, uint64_t key, const char *what, int q) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = tu_mix64(key + i / 8);
    size_t k = n - i < 8 ? n - i : 8;
    if (memcmp(b + i, &w, k) != 0) {
      const unsigned char *e = (const unsigned char *)&w;
      size_t j = 0;
      while (b[i + j] == e[j]) j++;
      TU_CHECK(0, "%s, block of process %d: byte %zu of %zu: expected 0x%02x, got 0x%02x", what, q,
               i + j, n, e[j], b[i + j]);
    }
  }
}

static uint64_t key(int phase, int from, int to) {
  return tu_mix64(((uint64_t)phase << 48) ^ ((uint64_t)from << 24) ^ (uint64_t)to) << 20;
}

int main(int argc, char **argv) {
  int mib = 100;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--mib") == 0) mib = atoi(argv[i + 1]);
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  size_t total = (size_t)mib << 20;
  size_t B = total / (size_t)p - 5; /* bytes per block */
  size_t all = B * (size_t)p;
  unsigned char *SA = (unsigned char *)tu_malloc(all);
  unsigned char *RA = (unsigned char *)tu_malloc(all);
  memset(RA, 0, all);
  bsp_push_reg(RA, (int)all);
  bsp_sync();
  double t0 = bsp_time();

  /* ---- put ---- */
  for (int d = 0; d < p; d++) pfill(SA + (size_t)d * B, B, key(1, s, d));
  for (int d = 0; d < p; d++) bsp_put(d, SA + (size_t)d * B, RA, (int)((size_t)s * B), (int)B);
  memset(SA, 0, all); /* buffered: already copied */
  bsp_sync();
  for (int q = 0; q < p; q++) pcheck(RA + (size_t)q * B, B, key(1, q, s), "bsp_put", q);
  double t1 = bsp_time();

  /* ---- hpput in 1 MiB pieces ---- */
  for (int d = 0; d < p; d++) pfill(SA + (size_t)d * B, B, key(2, s, d));
  bsp_sync(); /* everyone has checked the put data before it is overwritten */
  const size_t piece = (size_t)1 << 20;
  for (int d = 0; d < p; d++)
    for (size_t o = 0; o < B; o += piece) {
      size_t n = B - o < piece ? B - o : piece;
      bsp_hpput(d, SA + (size_t)d * B + o, RA, (int)((size_t)s * B + o), (int)n);
    }
  bsp_sync();
  for (int q = 0; q < p; q++) pcheck(RA + (size_t)q * B, B, key(2, q, s), "bsp_hpput", q);
  double t2 = bsp_time();

  /* ---- get: block (s+1)%p of every process, which its owner rewrites before the sync ---- */
  memset(SA, 0, all);
  bsp_sync();
  int want = (s + 1) % p;
  for (int d = 0; d < p; d++) bsp_get(d, RA, (int)((size_t)want * B), SA + (size_t)d * B, (int)B);
  for (int q = 0; q < p; q++) /* local rewrite, visible to gets at the sync */
    pfill(RA + (size_t)q * B, B, key(3, q, s));
  bsp_sync();
  for (int d = 0; d < p; d++) pcheck(SA + (size_t)d * B, B, key(3, want, d), "bsp_get", d);
  double t3 = bsp_time();

  /* ---- hpget: block s of every process ---- */
  memset(SA, 0, all);
  bsp_sync();
  for (int d = 0; d < p; d++) bsp_hpget(d, RA, (int)((size_t)s * B), SA + (size_t)d * B, (int)B);
  bsp_sync();
  for (int d = 0; d < p; d++) pcheck(SA + (size_t)d * B, B, key(3, s, d), "bsp_hpget", d);
  double t4 = bsp_time();

  if (s == 0)
    printf(
        "test_large: p=%d, %d MiB per process: put %.3f s, hpput %.3f s, get %.3f s, "
        "hpget %.3f s (each with fill and check)\n",
        p, mib, t1 - t0, t2 - t1, t3 - t2, t4 - t3);
  bsp_pop_reg(RA);
  bsp_sync();
  free(SA);
  free(RA);
  bsp_end();
  return 0;
}
