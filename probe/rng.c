/*
 * rng.c - the probe's PRNG, splitmix64: every process that seeds it alike draws alike, so the
 * random orders, permutations and validation points agree without communication. Part of
 * bspprobe_core (see probe.h for the files' order).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>

#include "probe.h"

uint64_t bspp_rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t bspp_rng_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t st = seed;
  uint64_t x = bspp_rng_next(&st);
  st = x ^ (a * 0xd1342543de82ef95ULL);
  x = bspp_rng_next(&st);
  st = x ^ (b * 0xd1342543de82ef95ULL);
  x = bspp_rng_next(&st);
  st = x ^ (c * 0xd1342543de82ef95ULL);
  return bspp_rng_next(&st);
}

/* uniform in [0, n) */
static long rng_below(uint64_t *state, long n) {
  if (n <= 1) return 0;
  /* rejection keeps it exactly uniform */
  uint64_t un = (uint64_t)n, limit = UINT64_MAX - UINT64_MAX % un;
  uint64_t r;
  do r = bspp_rng_next(state);
  while (r >= limit);
  return (long)(r % un);
}

double bspp_rng_unit(uint64_t *state) { return (double)(bspp_rng_next(state) >> 11) * 0x1.0p-53; }

void bspp_rng_shuffle_long(uint64_t *state, long *v, long n) {
  for (long i = n - 1; i > 0; i--) {
    long k = rng_below(state, i + 1);
    long t = v[i];
    v[i] = v[k];
    v[k] = t;
  }
}

void bspp_rng_derangement(uint64_t *state, int *perm, int p) {
  for (int i = 0; i < p; i++) perm[i] = i;
  if (p < 2) return;
  for (;;) {
    for (int i = p - 1; i > 0; i--) {
      int k = (int)rng_below(state, i + 1), t = perm[i];
      perm[i] = perm[k];
      perm[k] = t;
    }
    int fixed = 0;
    for (int i = 0; i < p; i++) fixed |= perm[i] == i;
    if (!fixed) return;
  }
}
