/*
 * matmul_input.h - the random inputs of the matrix multiplications, alone (no BSPlib), so that
 * programs outside the BSP drivers (bench/matmul_pdgemm.c, ScaLAPACK's peer) multiply the very
 * same matrices. Element (i, j) of input `which` of an n x n problem is mm_input(seed, which,
 * i, j, n): every process makes its own part without communication.
 */
#ifndef MATMUL_INPUT_H
#define MATMUL_INPUT_H

#include <float.h>
#include <stdint.h>

enum { MM_A = 0, MM_B = 1 };

/* Element (i, j) of input matrix `which` (MM_A or MM_B): a value in [-1, 1). */
static inline double mm_input(unsigned long seed, int which, long i, long j, long n) {
  /* a 64-bit mix of (seed, which, i, j): deterministic and cheap, good enough for test data */
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull +
               ((uint64_t)i * (uint64_t)n + (uint64_t)j) * 2u + (uint64_t)which + 1u;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* Tolerance for an entry of a dgemm product of n-long dot products of inputs in [-1, 1):
 * 16 n eps max|a| max|b| (a missing or doubled block gives errors of order 0.1 to sqrt(n)). */
static inline double mm_tolerance(long n) {
  return 16.0 * (double)n * DBL_EPSILON * 1.0 * 1.0; /* max|a| = max|b| = 1 */
}

#endif
