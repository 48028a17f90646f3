/*
 * rdxsort_kernels.c - inputs, count-sort passes and checks of the radix sorts (see the header).
 */
#include "rdxsort_kernels.h"

#include <math.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

const char *const rdx_dist_names[RDX_NDISTS] = {"uniform", "zipf", "sorted", "few-distinct",
                                                "equal"};

/* splitmix64's finalizer: a bijective 64-bit mix. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t random_of(unsigned long seed, uint64_t i, uint64_t stream) {
  return mix64((uint64_t)seed * 0x9E3779B97F4A7C15ull + i * 4 + stream + 1);
}

#define ZIPF_RANK_BITS 20
#define FEW_DISTINCT_VALUES 16

uint64_t rdx_input_key(rdx_dist dist, unsigned long seed, uint64_t i, uint64_t n, int key_bits) {
  uint64_t mask = key_bits >= 64 ? ~0ull : (1ull << key_bits) - 1;
  switch (dist) {
    case RDX_ZIPF: {
      double u = (double)(random_of(seed, i, 0) >> 11) * 0x1.0p-53;
      uint64_t rank = (uint64_t)exp2(ZIPF_RANK_BITS * u);
      return (rank * 0x9E3779B97F4A7C15ull) & mask;
    }
    case RDX_SORTED:
      if (key_bits >= 64) return (uint64_t)(((unsigned __int128)i << 64) / n);
      return (uint64_t)(((unsigned __int128)i << key_bits) / n);
    case RDX_FEW_DISTINCT:
      return random_of(seed, random_of(seed, i, 1) % FEW_DISTINCT_VALUES, 2) & mask;
    case RDX_EQUAL: return random_of(seed, 0, 3) & mask;
    case RDX_UNIFORM:
    default: return random_of(seed, i, 0) & mask;
  }
}

void rdx_make_keys(void *keys, int key_bytes, rdx_dist dist, unsigned long seed, uint64_t first,
                   size_t count, uint64_t n) {
  if (key_bytes == 4) {
    uint32_t *k = keys;
    for (size_t j = 0; j < count; j++) k[j] = (uint32_t)rdx_input_key(dist, seed, first + j, n, 32);
  } else {
    uint64_t *k = keys;
    for (size_t j = 0; j < count; j++) k[j] = rdx_input_key(dist, seed, first + j, n, 64);
  }
}

/* A whole 64-byte line to a 64-byte aligned destination, bypassing the caches where the
 * processor has non-temporal stores; stream_fence orders them before what follows (the
 * sync that hands the keys to other processes). */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline void stream_line(void *dst, const void *src) {
  const __m128i *s = src;
  __m128i *d = dst;
  for (int j = 0; j < 4; j++) _mm_stream_si128(d + j, _mm_load_si128(s + j));
}
static inline void stream_fence(void) { _mm_sfence(); }
#else
static inline void stream_line(void *dst, const void *src) { memcpy(dst, src, 64); }
static inline void stream_fence(void) {}
#endif

/* The passes, one copy per key type (KEY, SUFFIX). The digit is computed in 64 bits: shift
 * may be up to 63 for 64-bit keys and the mask up to 2^bits - 1. */
#define DEFINE_PASSES(KEY, SUFFIX)                                                           \
  static void histogram_##SUFFIX(const KEY *keys, size_t n, int shift, uint64_t mask,        \
                                 uint64_t *counts) {                                         \
    for (size_t i = 0; i < n; i++) counts[((uint64_t)keys[i] >> shift) & mask]++;            \
  }                                                                                          \
                                                                                             \
  static void copy_counting_##SUFFIX(KEY *dst, const KEY *keys, size_t n, int shift,         \
                                     uint64_t mask, uint64_t *counts) {                      \
    for (size_t i = 0; i < n; i++) {                                                         \
      KEY k = keys[i];                                                                       \
      dst[i] = k;                                                                            \
      counts[((uint64_t)k >> shift) & mask]++;                                               \
    }                                                                                        \
  }                                                                                          \
                                                                                             \
  static void scatter_direct_##SUFFIX(const KEY *keys, size_t n, int shift, uint64_t mask,   \
                                      KEY **out) {                                           \
    for (size_t i = 0; i < n; i++) {                                                         \
      KEY k = keys[i];                                                                       \
      *out[((uint64_t)k >> shift) & mask]++ = k;                                             \
    }                                                                                        \
  }                                                                                          \
                                                                                             \
  /* One 64-byte line per bucket, lined up with the bucket's destination cache lines: the    \
   * first (partial) line and the last are written with ordinary stores, the lines between   \
   * whole, with non-temporal stores (no read of the destination line first). */             \
  enum { LINE_KEYS_##SUFFIX = 64 / sizeof(KEY) };                                            \
  static int scatter_combining_##SUFFIX(const KEY *keys, size_t n, int shift, uint64_t mask, \
                                        KEY **out) {                                         \
    size_t buckets = (size_t)mask + 1;                                                       \
    KEY(*line)[LINE_KEYS_##SUFFIX] = aligned_alloc(64, buckets * 64);                        \
    unsigned char *fill = malloc(2 * buckets);                                               \
    if (!line || !fill) {                                                                    \
      free(line);                                                                            \
      free(fill);                                                                            \
      return 0;                                                                              \
    }                                                                                        \
    unsigned char *start = fill + buckets;                                                   \
    for (size_t v = 0; v < buckets; v++)                                                     \
      fill[v] = start[v] = (unsigned char)(((uintptr_t)out[v] & 63) / sizeof(KEY));          \
    for (size_t i = 0; i < n; i++) {                                                         \
      KEY k = keys[i];                                                                       \
      size_t v = ((uint64_t)k >> shift) & mask;                                              \
      unsigned f = fill[v];                                                                  \
      line[v][f++] = k;                                                                      \
      if (f == LINE_KEYS_##SUFFIX) {                                                         \
        unsigned s0 = start[v];                                                              \
        if (s0 == 0) {                                                                       \
          stream_line(out[v], line[v]);                                                      \
        } else {                                                                             \
          memcpy(out[v], line[v] + s0, (LINE_KEYS_##SUFFIX - s0) * sizeof(KEY));             \
          start[v] = 0;                                                                      \
        }                                                                                    \
        out[v] += LINE_KEYS_##SUFFIX - s0;                                                   \
        f = 0;                                                                               \
      }                                                                                      \
      fill[v] = (unsigned char)f;                                                            \
    }                                                                                        \
    for (size_t v = 0; v < buckets; v++) {                                                   \
      memcpy(out[v], line[v] + start[v], (size_t)(fill[v] - start[v]) * sizeof(KEY));        \
      out[v] += fill[v] - start[v];                                                          \
    }                                                                                        \
    stream_fence();                                                                          \
    free(line);                                                                              \
    free(fill);                                                                              \
    return 1;                                                                                \
  }

DEFINE_PASSES(uint32_t, u32)
DEFINE_PASSES(uint64_t, u64)

void rdx_count_more(const void *keys, int key_bytes, size_t n, int shift, int bits,
                    uint64_t *counts) {
  uint64_t mask = (1ull << bits) - 1;
  if (key_bytes == 4) histogram_u32(keys, n, shift, mask, counts);
  else histogram_u64(keys, n, shift, mask, counts);
}

void rdx_histogram(const void *keys, int key_bytes, size_t n, int shift, int bits,
                   uint64_t *counts) {
  memset(counts, 0, ((size_t)1 << bits) * sizeof *counts);
  rdx_count_more(keys, key_bytes, n, shift, bits, counts);
}

void rdx_copy_counting(void *dst, const void *keys, int key_bytes, size_t n, int shift, int bits,
                       uint64_t *counts) {
  uint64_t mask = (1ull << bits) - 1;
  if (key_bytes == 4) copy_counting_u32(dst, keys, n, shift, mask, counts);
  else copy_counting_u64(dst, keys, n, shift, mask, counts);
}

void rdx_scatter(const void *keys, int key_bytes, size_t n, int shift, int bits, void **out) {
  uint64_t mask = (1ull << bits) - 1;
  /* Combining pays where the input is larger than the lines it fills (n >= 16 per bucket). */
  int combine = bits <= RDX_WC_MAX_BITS && n >= 16 * ((size_t)mask + 1);
  if (key_bytes == 4) {
    if (!combine || !scatter_combining_u32(keys, n, shift, mask, (uint32_t **)out))
      scatter_direct_u32(keys, n, shift, mask, (uint32_t **)out);
  } else {
    if (!combine || !scatter_combining_u64(keys, n, shift, mask, (uint64_t **)out))
      scatter_direct_u64(keys, n, shift, mask, (uint64_t **)out);
  }
}

void rdx_count_sort(const void *keys, void *to, int key_bytes, size_t n, int shift, int bits,
                    uint64_t *counts, void **out) {
  rdx_histogram(keys, key_bytes, n, shift, bits, counts);
  size_t start = 0;
  for (size_t v = 0; v < (size_t)1 << bits; v++) {
    out[v] = (unsigned char *)to + start * (size_t)key_bytes;
    start += counts[v];
  }
  rdx_scatter(keys, key_bytes, n, shift, bits, out);
}

void rdx_sort_sequential(void *keys, void *tmp, int key_bytes, size_t n, int bits) {
  size_t buckets = (size_t)1 << bits;
  uint64_t *counts = malloc(buckets * sizeof *counts);
  void **out = malloc(buckets * sizeof *out);
  if (!counts || !out) abort();
  void *from = keys, *to = tmp;
  int rounds = rdx_rounds(8 * key_bytes, bits);
  for (int r = 0; r < rounds; r++) {
    rdx_count_sort(from, to, key_bytes, n, r * bits, rdx_digit_width(8 * key_bytes, bits, r),
                   counts, out);
    void *t = from;
    from = to;
    to = t;
  }
  if (from != keys) memcpy(keys, from, n * (size_t)key_bytes);
  free(counts);
  free(out);
}

uint64_t rdx_fingerprint(const void *keys, int key_bytes, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += mix64(rdx_key_at(keys, key_bytes, i) + 0x632BE59BD9B4E019ull);
  return sum;
}

size_t rdx_first_descent(const void *keys, int key_bytes, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (rdx_key_at(keys, key_bytes, i) < rdx_key_at(keys, key_bytes, i - 1)) return i;
  return n;
}

void rdx_prefer_huge_pages(void *data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t begin = ((uintptr_t)data + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
  uintptr_t end = ((uintptr_t)data + bytes) & ~((uintptr_t)page - 1);
  if (page > 0 && end > begin) (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}
