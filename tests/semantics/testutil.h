/*
 * testutil.h - small helpers shared by the semantic tests of libbsp.
 *
 * Every test keeps its per-process state in locals or heap memory owned by one process:
 * on the threads back end global variables are shared between BSP processes.
 *
 * A failed check prints what differed (with the process id and the superstep) to stderr
 * and ends every process through bsp_abort, so the program exits non-zero.
 */
#ifndef BSPKIT_TESTS_TESTUTIL_H
#define BSPKIT_TESTS_TESTUTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "bspkit.h"

/* Inside the SPMD section: report a failure and abort all processes. */
static inline void tu_vfail(const char *file, int line, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  fprintf(stderr, "FAIL %s:%d [pid %d, superstep %ld]: %s\n", file, line, (int)bsp_pid(),
          bspk_superstep(), msg);
  fflush(stderr);
  bsp_abort("semantic test failed on pid %d at %s:%d: %s\n", (int)bsp_pid(), file, line, msg);
}

static inline void tu_fail(const char *file, int line, const char *fmt, ...) BSPKIT_PRINTF(3, 4);
static inline void tu_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tu_vfail(file, line, fmt, ap);
  va_end(ap);
}

/* Outside the SPMD section (before bsp_begin, after bsp_end): report and exit(1). */
static inline void tu_fail_outside(const char *file, int line, const char *fmt, ...)
    BSPKIT_PRINTF(3, 4);
static inline void tu_fail_outside(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s:%d [outside the SPMD section]: ", file, line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  exit(1);
}

#define TU_CHECK(cond, ...)                                \
  do {                                                     \
    if (!(cond)) tu_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

#define TU_CHECK_OUTSIDE(cond, ...)                                \
  do {                                                             \
    if (!(cond)) tu_fail_outside(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* Integer comparison: prints "what: expected E, got G". */
#define TU_EQ(what, expected, got)                                                      \
  do {                                                                                  \
    long long tu_e_ = (long long)(expected), tu_g_ = (long long)(got);                  \
    if (tu_e_ != tu_g_)                                                                 \
      tu_fail(__FILE__, __LINE__, "%s: expected %lld, got %lld", (what), tu_e_, tu_g_); \
  } while (0)

/* Compares n bytes; on a difference reports the first differing byte. */
#define TU_MEMEQ(what, expected, got, n) \
  tu_memeq(__FILE__, __LINE__, (what), (const void *)(expected), (const void *)(got), (size_t)(n))

static inline void tu_memeq(const char *file, int line, const char *what, const void *expected,
                            const void *got, size_t n) {
  const unsigned char *e = (const unsigned char *)expected;
  const unsigned char *g = (const unsigned char *)got;
  if (n == 0 || memcmp(e, g, n) == 0) return;
  size_t i = 0;
  while (e[i] == g[i]) i++;
  size_t ndiff = 0;
  for (size_t j = i; j < n; j++) ndiff += e[j] != g[j];
  tu_fail(file, line, "%s: %zu of %zu bytes differ, first at byte %zu: expected 0x%02x, got 0x%02x",
          what, ndiff, n, i, e[i], g[i]);
}

/* Checks that n bytes at p all equal v. */
#define TU_ALL(what, p, v, n) \
  tu_all(__FILE__, __LINE__, (what), (const void *)(p), (v), (size_t)(n))

static inline void tu_all(const char *file, int line, const char *what, const void *p, int v,
                          size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != (unsigned char)v)
      tu_fail(file, line, "%s: byte %zu of %zu: expected 0x%02x, got 0x%02x", what, i, n,
              (unsigned char)v, b[i]);
}

/* ---- Deterministic pseudo-random numbers (splitmix64), the same on every process -------- */

static inline uint64_t tu_mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

typedef struct {
  uint64_t state;
} tu_rng;

static inline tu_rng tu_rng_seed(uint64_t a, uint64_t b, uint64_t c) {
  tu_rng r;
  r.state = tu_mix64(tu_mix64(tu_mix64(a) ^ b) ^ c);
  return r;
}

static inline uint64_t tu_next(tu_rng *r) {
  r->state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = r->state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the tiny modulo bias does not matter here). */
static inline uint64_t tu_below(tu_rng *r, uint64_t n) { return tu_next(r) % n; }

/* A byte determined by (a, b, c, i): used to fill and to check data. */
static inline unsigned char tu_byte(uint64_t a, uint64_t b, uint64_t c, uint64_t i) {
  return (unsigned char)(tu_mix64(((a * 0x100000001b3ULL + b) * 0x9e3779b97f4a7c15ULL + c) ^
                                  (i * 0xd6e8feb86659fd93ULL)) >>
                         24);
}

static inline void tu_fill(void *buf, size_t n, uint64_t a, uint64_t b, uint64_t c) {
  unsigned char *p = (unsigned char *)buf;
  for (size_t i = 0; i < n; i++) p[i] = tu_byte(a, b, c, i);
}

/* Checks buf[0..n) == tu_byte(a, b, c, first + i). */
#define TU_PATTERN(what, buf, n, a, b, c, first) \
  tu_pattern(__FILE__, __LINE__, (what), (const void *)(buf), (size_t)(n), (a), (b), (c), (first))

static inline void tu_pattern(const char *file, int line, const char *what, const void *buf,
                              size_t n, uint64_t a, uint64_t b, uint64_t c, uint64_t first) {
  const unsigned char *p = (const unsigned char *)buf;
  for (size_t i = 0; i < n; i++) {
    unsigned char e = tu_byte(a, b, c, first + i);
    if (p[i] != e)
      tu_fail(file, line, "%s: byte %zu of %zu: expected 0x%02x, got 0x%02x", what, i, n, e, p[i]);
  }
}

/* malloc that fails the test instead of returning NULL. */
static inline void *tu_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "FAIL: out of memory allocating %zu bytes\n", n);
    exit(2);
  }
  return p;
}

/* Parses "--nprocs P" from the command line: the P that bsprun -n was given, or -1. */
static inline int tu_expected_nprocs(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--nprocs") == 0) return atoi(argv[i + 1]);
  return -1;
}

#endif /* BSPKIT_TESTS_TESTUTIL_H */
