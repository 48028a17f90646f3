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

/* The write-combining buffer of one bucket: two cache lines, so that the branch that flushes a
 * full buffer (taken at random, mispredicted) comes every 32 4-byte keys rather than every 16
 * (on 2^25 uniform keys, one core of an AMD EPYC VM, 8-bit digits: 47 ms against 55 per pass
 * with one line; 11 bits: 57 against 66). */
#define WC_BYTES 128

/* The passes, one copy per key type (KEY, SUFFIX). The digit is computed in 64 bits: shift
 * may be up to 63 for 64-bit keys and the mask up to 2^bits - 1. */
#define DEFINE_PASSES(KEY, SUFFIX)                                                                 \
  static void histogram_##SUFFIX(const KEY *keys, size_t n, int shift, uint64_t mask,              \
                                 uint64_t *counts) {                                               \
    for (size_t i = 0; i < n; i++) counts[((uint64_t)keys[i] >> shift) & mask]++;                  \
  }                                                                                                \
                                                                                                   \
  static void copy_counting_##SUFFIX(KEY *dst, const KEY *keys, size_t n, int shift,               \
                                     uint64_t mask, uint64_t *counts) {                            \
    for (size_t i = 0; i < n; i++) {                                                               \
      KEY k = keys[i];                                                                             \
      dst[i] = k;                                                                                  \
      counts[((uint64_t)k >> shift) & mask]++;                                                     \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  static void scatter_direct_##SUFFIX(const KEY *keys, size_t n, int shift, uint64_t mask,         \
                                      KEY **out) {                                                 \
    for (size_t i = 0; i < n; i++) {                                                               \
      KEY k = keys[i];                                                                             \
      *out[((uint64_t)k >> shift) & mask]++ = k;                                                   \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* WC_BYTES of buffer per bucket, lined up with the bucket's destination: buffer slot j          \
   * holds the key bound for the destination address = j (mod WC_BYTES), so a full buffer is       \
   * whole aligned cache lines, written with non-temporal stores (no read of the destination       \
   * first); the bucket's first, partial chunk and its last one with ordinary stores. A fill       \
   * pointer per bucket is the one counter the loop updates: the buffer is full when it            \
   * reaches a WC_BYTES boundary. Returns 0 (nothing written) when out of memory or a              \
   * destination is not KEY-aligned. */                                                            \
  enum { CHUNK_KEYS_##SUFFIX = WC_BYTES / sizeof(KEY) };                                           \
  static int scatter_combining_##SUFFIX(const KEY *keys, size_t n, int shift, uint64_t mask,       \
                                        KEY **out) {                                               \
    size_t buckets = (size_t)mask + 1;                                                             \
    for (size_t v = 0; v < buckets; v++)                                                           \
      if ((uintptr_t)out[v] % sizeof(KEY)) return 0;                                               \
    KEY *buf = aligned_alloc(WC_BYTES, buckets * WC_BYTES);                                        \
    KEY **fill = malloc(buckets * sizeof *fill);                                                   \
    uintptr_t *chunk = malloc(2 * buckets * sizeof *chunk);                                        \
    if (!buf || !fill || !chunk) {                                                                 \
      free(buf);                                                                                   \
      free(fill);                                                                                  \
      free(chunk);                                                                                 \
      return 0;                                                                                    \
    }                                                                                              \
    uintptr_t *first = chunk + buckets; /* the bucket's first destination address */               \
    for (size_t v = 0; v < buckets; v++) {                                                         \
      first[v] = (uintptr_t)out[v];                                                                \
      chunk[v] = first[v] & ~(uintptr_t)(WC_BYTES - 1); /* the aligned chunk being filled */       \
      fill[v] = buf + v * CHUNK_KEYS_##SUFFIX + (first[v] - chunk[v]) / sizeof(KEY);               \
    }                                                                                              \
    for (size_t i = 0; i < n; i++) {                                                               \
      KEY k = keys[i];                                                                             \
      size_t v = ((uint64_t)k >> shift) & mask;                                                    \
      KEY *f = fill[v];                                                                            \
      *f++ = k;                                                                                    \
      if (__builtin_expect(((uintptr_t)f & (WC_BYTES - 1)) == 0, 0)) {                             \
        f -= CHUNK_KEYS_##SUFFIX;                                                                  \
        if (chunk[v] >= first[v]) {                                                                \
          for (size_t at = 0; at < WC_BYTES; at += 64)                                             \
            stream_line((char *)chunk[v] + at, (const char *)f + at);                              \
        } else {                                                                                   \
          size_t skip = first[v] - chunk[v];                                                       \
          memcpy((void *)first[v], (const char *)f + skip, WC_BYTES - skip);                       \
        }                                                                                          \
        chunk[v] += WC_BYTES;                                                                      \
      }                                                                                            \
      fill[v] = f;                                                                                 \
    }                                                                                              \
    for (size_t v = 0; v < buckets; v++) { /* what is left in the buffers */                       \
      const char *line = (const char *)(buf + v * CHUNK_KEYS_##SUFFIX);                            \
      uintptr_t end = chunk[v] + (uintptr_t)((const char *)fill[v] - line);                        \
      uintptr_t from = chunk[v] > first[v] ? chunk[v] : first[v];                                  \
      if (end > from) memcpy((void *)from, line + (from - chunk[v]), end - from);                  \
      out[v] = (KEY *)end;                                                                         \
    }                                                                                              \
    stream_fence();                                                                                \
    free(buf);                                                                                     \
    free(fill);                                                                                    \
    free(chunk);                                                                                   \
    return 1;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* counts[r 2^bits + v]: the keys whose digit r (bits r bits .. r bits + bits - 1) is v, for     \
   * every round r < rounds, in one pass over the keys (the last digit may be narrower: its        \
   * higher bits are zero). Inlined with rounds a constant for the usual digit widths, so that     \
   * the loop over the rounds unrolls (a third of the time of the loop kept). */                   \
  static inline __attribute__((always_inline)) void count_digits_##SUFFIX(                         \
      const KEY *keys, size_t n, int bits, int rounds, uint64_t *counts) {                         \
    uint64_t mask = (1ull << bits) - 1;                                                            \
    size_t buckets = (size_t)1 << bits;                                                            \
    for (size_t i = 0; i < n; i++) {                                                               \
      uint64_t k = keys[i];                                                                        \
      for (int r = 0; r < rounds; r++) counts[(size_t)r * buckets + ((k >> (r * bits)) & mask)]++; \
    }                                                                                              \
  }                                                                                                \
  static void all_histograms_##SUFFIX(const KEY *keys, size_t n, int bits, int rounds,             \
                                      uint64_t *counts) {                                          \
    switch (rounds) {                                                                              \
      case 2: count_digits_##SUFFIX(keys, n, bits, 2, counts); break;                              \
      case 3: count_digits_##SUFFIX(keys, n, bits, 3, counts); break;                              \
      case 4: count_digits_##SUFFIX(keys, n, bits, 4, counts); break;                              \
      case 6: count_digits_##SUFFIX(keys, n, bits, 6, counts); break;                              \
      case 8: count_digits_##SUFFIX(keys, n, bits, 8, counts); break;                              \
      default: count_digits_##SUFFIX(keys, n, bits, rounds, counts);                               \
    }                                                                                              \
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

int rdx_sequential_bits(size_t n) { return n >= RDX_WIDE_DIGITS_FROM ? 11 : 8; }

void rdx_sort_sequential(void *keys, void *tmp, int key_bytes, size_t n, int bits) {
  if (bits <= 0) bits = rdx_sequential_bits(n);
  int key_bits = 8 * key_bytes, rounds = rdx_rounds(key_bits, bits);
  size_t buckets = (size_t)1 << bits;
  uint64_t *counts = calloc((size_t)rounds * buckets, sizeof *counts);
  void **out = malloc(buckets * sizeof *out);
  if (!counts || !out) abort();
  if (key_bytes == 4) all_histograms_u32(keys, n, bits, rounds, counts);
  else all_histograms_u64(keys, n, bits, rounds, counts);
  void *from = keys, *to = tmp;
  for (int r = 0; r < rounds && n > 0; r++) {
    int shift = r * bits, width = rdx_digit_width(key_bits, bits, r);
    const uint64_t *c = counts + (size_t)r * buckets;
    /* every key has the same digit: the pass would leave them as they are */
    if (c[(rdx_key_at(from, key_bytes, 0) >> shift) & (buckets - 1)] == n) continue;
    size_t start = 0;
    for (size_t v = 0; v < (size_t)1 << width; v++) {
      out[v] = (unsigned char *)to + start * (size_t)key_bytes;
      start += c[v];
    }
    rdx_scatter(from, key_bytes, n, shift, width, out);
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
