/*
 * rdxsort_kernels.h - the local computations of the parallel radix sorts (Gerbessiotis & Lee,
 * sec. 5, Fig. 9-10), free of BSP: the inputs, the count-sort passes and the checks. The BSP
 * driver (rdxsort.c) and the peers in bench/ (the two-sided MPI version, the sort peers) use
 * the same ones, so that every program sorts the same keys with the same local kernels.
 *
 * Keys are unsigned integers of key_bytes = 4 (uint32_t) or 8 (uint64_t) bytes, passed as
 * void pointers. A count-sort round looks at the digit (key >> shift) & (2^bits - 1).
 */
#ifndef RDXSORT_KERNELS_H
#define RDXSORT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* The key distributions (--dist), indexed by rdx_dist:
 *   uniform       every key uniform over 0 .. 2^key_bits - 1;
 *   zipf          ranks r = floor(2^(20 u)), u uniform: P(r) ~ 1/r over 2^20 ranks (Zipf,
 *                 s = 1; rank 1 is 5% of the keys), the key an odd multiple of r (a bijection,
 *                 so hot keys spread over the digits);
 *   sorted        key i = floor(i 2^key_bits / n): already in order, all different for n <= 2^bits;
 *   few-distinct  one of 16 random values;
 *   equal         one random value for every key. */
typedef enum {
  RDX_UNIFORM,
  RDX_ZIPF,
  RDX_SORTED,
  RDX_FEW_DISTINCT,
  RDX_EQUAL,
  RDX_NDISTS
} rdx_dist;
extern const char *const rdx_dist_names[RDX_NDISTS];

/* Key i (0 <= i < n) of an input: a function of (dist, seed, i, n, key_bits) only, so that
 * every process makes its own block and the reference needs no communication. */
uint64_t rdx_input_key(rdx_dist dist, unsigned long seed, uint64_t i, uint64_t n, int key_bits);

/* keys[0..count) = input keys first .. first + count - 1, key_bytes wide. */
void rdx_make_keys(void *keys, int key_bytes, rdx_dist dist, unsigned long seed, uint64_t first,
                   size_t count, uint64_t n);

/* counts[v] = the keys of keys[0..n) whose digit is v, for v < 2^bits (counts are zeroed). */
void rdx_histogram(const void *keys, int key_bytes, size_t n, int shift, int bits,
                   uint64_t *counts);

/* The same, adding to counts (not zeroed); and a copy of keys[0..n) to dst that adds their
 * digits to counts on the way (one pass instead of two where the keys move anyway). */
void rdx_count_more(const void *keys, int key_bytes, size_t n, int shift, int bits,
                    uint64_t *counts);
void rdx_copy_counting(void *dst, const void *keys, int key_bytes, size_t n, int shift, int bits,
                       uint64_t *counts);

/* The count sort's stable scatter: the keys whose digit is v are written, in their order, to
 * out[v][0], out[v][1], ...; out[v] (a key_bytes-wide slot pointer) ends past the last one.
 * The buckets may point anywhere (a local buffer, another array), but must not overlap keys.
 * Up to RDX_WC_MAX_BITS digit bits (and 16 keys a bucket) it writes through software
 * write-combining buffers: two cache lines per bucket, lined up with the bucket's destination
 * lines and written out whole with non-temporal stores (no read of each destination line
 * before it is written). On 2^25 uniform 4-byte keys, one core of an AMD EPYC (Zen 4) VM,
 * huge pages, best of 5: 47 ms at 8 bits, 57 at 11 (the one-line buffers before: 55 and 66;
 * a memcpy of the keys: 10 ms). */
#define RDX_WC_MAX_BITS 12
void rdx_scatter(const void *keys, int key_bytes, size_t n, int shift, int bits, void **out);

/* One local count sort: keys[0..n) into to[0..n), stable, by the digit (shift, bits): the
 * histogram into counts[0..2^bits), the buckets' starts into out[0..2^bits), the scatter. */
void rdx_count_sort(const void *keys, void *to, int key_bytes, size_t n, int shift, int bits,
                    uint64_t *counts, void **out);

/* Sequential LSD radix sort of keys[0..n) by digits of `bits` bits (0: rdx_sequential_bits(n)),
 * least significant first, with tmp[0..n) as scratch. Every digit's histogram is counted in one
 * pass over the keys; a digit that is the same in every key is skipped (its pass would move
 * nothing); the passes alternate between keys and tmp, and the result ends in keys (one copy
 * when an odd number of passes ran). */
void rdx_sort_sequential(void *keys, void *tmp, int key_bytes, size_t n, int bits);

/* The digit width rdx_sort_sequential takes for n keys: 8 bits below RDX_WIDE_DIGITS_FROM keys
 * (the 256 write-combining buffers fit the L1 cache, and small inputs have too few keys per
 * bucket for 2048), 11 bits from there (three passes over 32-bit keys instead of four). */
#define RDX_WIDE_DIGITS_FROM ((size_t)1 << 17)
int rdx_sequential_bits(size_t n);

/* Rounds of `bits`-bit digits that cover key_bits bits (the last one may be narrower). */
static inline int rdx_rounds(int key_bits, int bits) { return (key_bits + bits - 1) / bits; }

/* The width of round rnd's digit, which starts at bit rnd * bits: `bits`, or what is left of
 * the key in the last round. */
static inline int rdx_digit_width(int key_bits, int bits, int rnd) {
  int shift = rnd * bits;
  return shift + bits > key_bits ? key_bits - shift : bits;
}

/* An order-independent fingerprint of a multiset of keys: the sum of a 64-bit mix of each
 * key, mod 2^64. Two arrays that are permutations of each other have the same fingerprint;
 * other arrays differ but with probability about 2^-64. */
uint64_t rdx_fingerprint(const void *keys, int key_bytes, size_t n);

/* The index of the first key smaller than the one before it, or n when keys[0..n) ascend. */
size_t rdx_first_descent(const void *keys, int key_bytes, size_t n);

/* Asks the kernel for transparent huge pages under data[0..bytes) (where it offers them on
 * request): the scatter writes to 2^bits places at once, and with 4 KiB pages every one of
 * them is a TLB miss (the scatter is about 15% faster on 2 MiB pages). Call before the first
 * touch. */
void rdx_prefer_huge_pages(void *data, size_t bytes);

/* Key i of keys, widened. */
static inline uint64_t rdx_key_at(const void *keys, int key_bytes, size_t i) {
  return key_bytes == 4 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
}

#endif
