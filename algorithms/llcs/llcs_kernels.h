/*
 * llcs_kernels.h - the local computations of the LLCS algorithms (thesis ch. 5), free of
 * BSP: the block kernels that the wavefront driver (llcs.c) calls for one block of the
 * dynamic-programming table, and two sequential references that check it.
 *
 * Orientation (as in the thesis' Fig. 5.3 and 5.7): string a (length m, the thesis' X) runs
 * along the columns, string b (length n, Y) along the rows. L(k, j) = LLCS(a[0..k), b[0..j)).
 * A block covers columns [k0, k0 + bw) and rows [j0, j0 + bh) of L.
 */
#ifndef LLCS_KERNELS_H
#define LLCS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Simple dynamic programming (Fig. 5.3), one block, in place and branch free:
 *   row[0..bw]: in: row[0] = L(k0-1, j0-1) (the corner), row[1..bw] = L(k0..k0+bw-1, j0-1),
 *               the row above the block; out: the same for the block's last row (row[0]
 *               becomes L(k0-1, j0+bh-1), the corner of the block below).
 *   col[0..bh): in: L(k0-1, j0..j0+bh-1), the column left of the block ("R" in Fig. 5.3);
 *               out: L(k0+bw-1, j0..), the block's last column, for the block to the right.
 * a points at a[k0], b at b[j0]. Missing boundaries (k0 = 0 or j0 = 0) are zeros. */
void llcs_dp_block(const unsigned char *a, size_t bw, const unsigned char *b, size_t bh,
                   int32_t *row, int32_t *col);

/* Bit-parallel LLCS of Crochemore et al. (Fig. 5.7) on 64-bit words.
 * The rows (string b) are bits: word w holds rows 64w .. 64w+63, bit i = row 64w + i.
 * Match masks: masks[c * stride + w] has bit i set iff b[64w + i] == c (c < sigma);
 * llcs_bitpar_masks fills them for all of b (nwords = ceil(n / 64) words per character,
 * stride >= nwords; bits past n are 0). */
void llcs_bitpar_masks(const unsigned char *b, size_t n, int sigma, uint64_t *masks, size_t stride);

/* One block: the words [w0, w0 + nw) of V (= ~Delta L, the thesis' R; all ones left of the
 * table) after the block's columns a[0..bw):
 *   for each column k: V = (V + (V & M(a_k)) + carry_k) | (V & ~M(a_k)), carried from word to
 *   word, carry_k in from carries[k] (0 at the top of the table) and out to carries[k] (for
 *   the block below: "carries passed down, V to the right").
 * masks points at word w0 of character 0's mask (masks + c * stride is character c's). */
void llcs_bitpar_block(const uint64_t *masks, size_t stride, const unsigned char *a, size_t bw,
                       uint64_t *v, size_t nw, unsigned char *carries);

/* Zero bits of v[0..nw): LLCS contribution of a part of the final V. Bits past n must be
 * ones, which they stay when V starts as all ones and the masks are 0 there. */
long llcs_count_zeros(const uint64_t *v, size_t nw);

/* Sequential references, whole strings, written independently of the kernels above:
 * the DP recurrence (5.1) with two rows and an explicit if/else, O(mn);
 * the bit-parallel algorithm with one vector and a portable carry (Fig. 5.6), O(mn/64). */
long llcs_reference_dp(const unsigned char *a, size_t m, const unsigned char *b, size_t n);
long llcs_reference_bitpar(const unsigned char *a, size_t m, const unsigned char *b, size_t n,
                           int sigma);

#endif
