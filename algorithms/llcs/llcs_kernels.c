/*
 * llcs_kernels.c - block kernels and sequential references for LLCS (see llcs_kernels.h).
 *
 * Speed notes (AMD EPYC Zen 4 class core, gcc 12 -O3, plain x86-64, no -march):
 * - DP: the chain L(k-1, j) -> L(k, j) is one max per cell; two rows are computed together,
 *   the second one cell behind the first, so that two independent chains overlap
 *   (~1.6e9 cells/s against ~1.1e9 for one row at a time).
 * - bit-parallel: the add-with-carry chain along the words is the latency bound (the carry
 *   goes through a flag register and back, ~3 cycles per word). Four columns of a are
 *   processed together, each one word behind the previous one, so that four chains overlap
 *   (~1e11 cell updates/s against ~7.7e10 for one column at a time).
 */
#include "llcs_kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LLCS_X86_64_ASM 1
#endif

/* ------------------------------------------------------------------------------- DP */

static inline int32_t max32(int32_t x, int32_t y) { return x > y ? x : y; }

/* L(k, j) = max(L(k, j-1), L(k-1, j), L(k-1, j-1) + [a_k == b_j]): equal to (5.1) because
 * neighbours differ by at most 1, and free of branches (the compiler makes cmovs). */
static inline int32_t dp_cell(int32_t left, int32_t up, int32_t diag, unsigned char ak,
                              unsigned char bj) {
  return max32(left, max32(up, diag + (ak == bj)));
}

void llcs_dp_block(const unsigned char *restrict a, size_t bw, const unsigned char *restrict b,
                   size_t bh, int32_t *restrict row, int32_t *restrict col) {
  size_t j = 0;
  /* Rows j and j+1 together: row j+1 runs one cell behind row j, reading row j's cell from a
   * register (pending) instead of the row buffer. */
  if (bw >= 1) {
    for (; j + 1 < bh; j += 2) {
      const unsigned char b0 = b[j], b1 = b[j + 1];
      int32_t diag0 = row[0], left0 = col[j];
      int32_t diag1 = left0, left1 = col[j + 1];
      row[0] = left1;
      int32_t up = row[1];
      left0 = dp_cell(left0, up, diag0, a[0], b0);
      diag0 = up;
      int32_t pending = left0; /* L(k-1, j), the cell above row j+1's next cell */
      for (size_t k = 2; k <= bw; k++) {
        int32_t up0 = row[k];
        int32_t next0 = dp_cell(left0, up0, diag0, a[k - 1], b0);
        diag0 = up0;
        left0 = next0;
        left1 = dp_cell(left1, pending, diag1, a[k - 2], b1);
        diag1 = pending;
        row[k - 1] = left1;
        pending = next0;
      }
      left1 = dp_cell(left1, pending, diag1, a[bw - 1], b1);
      row[bw] = left1;
      col[j] = left0;
      col[j + 1] = left1;
    }
  }
  for (; j < bh; j++) { /* the odd last row (and every row of an empty block column) */
    const unsigned char bj = b[j];
    int32_t diag = row[0], left = col[j];
    row[0] = left;
    for (size_t k = 1; k <= bw; k++) {
      int32_t up = row[k];
      left = dp_cell(left, up, diag, a[k - 1], bj);
      row[k] = left;
      diag = up;
    }
    col[j] = left;
  }
}

/* ---------------------------------------------------------------------- bit-parallel */

void llcs_bitpar_masks(const unsigned char *b, size_t n, int sigma, uint64_t *masks,
                       size_t stride) {
  memset(masks, 0, (size_t)sigma * stride * sizeof *masks);
  for (size_t j = 0; j < n; j++) masks[(size_t)b[j] * stride + j / 64] |= (uint64_t)1 << (j % 64);
}

/* x + y + *carry, the carry out back into *carry (0 or 1). On x86-64 three instructions:
 * restore the carry flag from the byte (0xff + 1 overflows), adc, save it with setc. gcc 12
 * compiles _addcarry_u64 to code that stores the sum through memory and reads it back
 * (~20% slower here), and unsigned __int128 or __builtin_add_overflow to longer sequences
 * (2-3x slower); the portable version is kept for other targets. */
static inline uint64_t add_carry(uint64_t x, uint64_t y, unsigned char *carry) {
#ifdef LLCS_X86_64_ASM
  unsigned char c = *carry;
  __asm__(
      "addb $0xff, %[c]\n\t"
      "adcq %[y], %[x]\n\t"
      "setc %[c]"
      : [x] "+r"(x), [c] "+q"(c)
      : [y] "r"(y)
      : "cc");
  *carry = c;
  return x;
#else
  uint64_t sum = x + y + *carry;
  /* the carry out of the top bit: majority of x, y and the carry into it (= ~sum there) */
  *carry = (unsigned char)(((x & y) | ((x | y) & ~sum)) >> 63);
  return sum;
#endif
}

/* One word of one column: V' = (V + U + carry) | (V - U) with U = V & M; V - U = V ^ U as
 * U's bits are a subset of V's (this is (V + (V & M)) | (V & ~M) of Fig. 5.7). */
static inline uint64_t bitpar_word(uint64_t v, uint64_t match, unsigned char *carry) {
  uint64_t u = v & match;
  return add_carry(v, u, carry) | (v ^ u);
}

static void bitpar_one_column(const uint64_t *restrict mask, uint64_t *restrict v, size_t nw,
                              unsigned char *carry) {
  unsigned char c = *carry;
  for (size_t w = 0; w < nw; w++) v[w] = bitpar_word(v[w], mask[w], &c);
  *carry = c;
}

void llcs_bitpar_block(const uint64_t *restrict masks, size_t stride,
                       const unsigned char *restrict a, size_t bw, uint64_t *restrict v, size_t nw,
                       unsigned char *restrict carries) {
  size_t k = 0;
  if (nw >= 3) {
    /* Columns k..k+3 together, column k+i at word w-i: four independent carry chains. The
     * values between the columns stay in registers (v1: after column k at word w-1, v2: after
     * k+1 at w-2, v3: after k+2 at w-3); only column k+3's result goes back to v. */
    for (; k + 4 <= bw; k += 4) {
      const uint64_t *restrict m0 = masks + (size_t)a[k] * stride;
      const uint64_t *restrict m1 = masks + (size_t)a[k + 1] * stride;
      const uint64_t *restrict m2 = masks + (size_t)a[k + 2] * stride;
      const uint64_t *restrict m3 = masks + (size_t)a[k + 3] * stride;
      unsigned char c0 = carries[k], c1 = carries[k + 1], c2 = carries[k + 2], c3 = carries[k + 3];
      /* fill: words 0..2 of column k, 0..1 of k+1, 0 of k+2 */
      uint64_t t0 = bitpar_word(v[0], m0[0], &c0);
      uint64_t t1 = bitpar_word(v[1], m0[1], &c0);
      uint64_t s0 = bitpar_word(t0, m1[0], &c1);
      uint64_t v1 = bitpar_word(v[2], m0[2], &c0);
      uint64_t v2 = bitpar_word(t1, m1[1], &c1);
      uint64_t v3 = bitpar_word(s0, m2[0], &c2);
      for (size_t w = 3; w < nw; w++) {
        uint64_t n1 = bitpar_word(v[w], m0[w], &c0);
        uint64_t n2 = bitpar_word(v1, m1[w - 1], &c1);
        uint64_t n3 = bitpar_word(v2, m2[w - 2], &c2);
        v[w - 3] = bitpar_word(v3, m3[w - 3], &c3);
        v1 = n1;
        v2 = n2;
        v3 = n3;
      }
      /* drain: the last word of k+1, the last two of k+2, the last three of k+3 */
      uint64_t last1 = bitpar_word(v1, m1[nw - 1], &c1);
      uint64_t before_last2 = bitpar_word(v2, m2[nw - 2], &c2);
      v[nw - 3] = bitpar_word(v3, m3[nw - 3], &c3);
      uint64_t last2 = bitpar_word(last1, m2[nw - 1], &c2);
      v[nw - 2] = bitpar_word(before_last2, m3[nw - 2], &c3);
      v[nw - 1] = bitpar_word(last2, m3[nw - 1], &c3);
      carries[k] = c0;
      carries[k + 1] = c1;
      carries[k + 2] = c2;
      carries[k + 3] = c3;
    }
  }
  for (; k < bw; k++) bitpar_one_column(masks + (size_t)a[k] * stride, v, nw, &carries[k]);
}

long llcs_count_zeros(const uint64_t *v, size_t nw) {
  long zeros = 0;
  for (size_t w = 0; w < nw; w++) zeros += __builtin_popcountll(~v[w]);
  return zeros;
}

/* ------------------------------------------------------------------------ references */

long llcs_reference_dp(const unsigned char *a, size_t m, const unsigned char *b, size_t n) {
  /* prev[k] = L(k, j-1), cur[k] = L(k, j), k = 0..m */
  long *prev = calloc(m + 1, sizeof *prev), *cur = calloc(m + 1, sizeof *cur);
  if (!prev || !cur) {
    free(prev);
    free(cur);
    return -1;
  }
  for (size_t j = 1; j <= n; j++) {
    cur[0] = 0;
    for (size_t k = 1; k <= m; k++) {
      if (a[k - 1] == b[j - 1]) cur[k] = prev[k - 1] + 1;
      else cur[k] = prev[k] > cur[k - 1] ? prev[k] : cur[k - 1];
    }
    long *t = prev;
    prev = cur;
    cur = t;
  }
  long result = prev[m];
  free(prev);
  free(cur);
  return result;
}

long llcs_reference_bitpar(const unsigned char *a, size_t m, const unsigned char *b, size_t n,
                           int sigma) {
  size_t nw = (n + 63) / 64;
  uint64_t *masks = calloc((size_t)sigma * nw + 1, sizeof *masks),
           *v = malloc((nw + 1) * sizeof *v);
  if (!masks || !v) {
    free(masks);
    free(v);
    return -1;
  }
  for (size_t j = 0; j < n; j++) masks[(size_t)b[j] * nw + j / 64] |= (uint64_t)1 << (j % 64);
  for (size_t w = 0; w < nw; w++) v[w] = ~(uint64_t)0;
  for (size_t k = 0; k < m; k++) {
    const uint64_t *mk = masks + (size_t)a[k] * nw;
    uint64_t carry = 0;
    for (size_t w = 0; w < nw; w++) {
      uint64_t x = v[w], y = x & mk[w];
      uint64_t sum = x + y + carry;
      /* carry out of x + y + carry, without branches or wider types (cf. Fig. 5.6) */
      carry = ((x & y) | ((x | y) & ~sum)) >> 63;
      v[w] = sum | (x & ~mk[w]);
    }
  }
  long zeros = 0;
  for (size_t j = 0; j < n; j++) zeros += !((v[j / 64] >> (j % 64)) & 1);
  free(masks);
  free(v);
  return zeros;
}
