/*
 * llcs_kernel_bench - cell-update rates of the LLCS block kernels (algorithms/llcs) on one
 * core, no BSP: two random strings of N characters, the whole table computed as a G x G grid
 * of blocks column by column (G = 1: one block, the kernel on the two whole strings), R
 * repetitions, order statistics of the rate. Both kernels must find the same LLCS (checked).
 *
 *   llcs_kernel_bench [--size N] [--sizes M,N] [--alphabet K] [--grid G] [--reps R]
 *                     [--kernel dp|bitpar|both] [--seed S] [--json FILE]
 * defaults: N = 100000, K = 4, G = 1, R = 5, both kernels. One line per kernel on stdout,
 * and with --json one JSON object per kernel (a line each) in FILE.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "bspk_clock.h"
#include "bspk_json.h"
#include "llcs_kernels.h"

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void *xcalloc(size_t count, size_t size) {
  void *ptr = calloc(count ? count : 1, size);
  if (!ptr) {
    fprintf(stderr, "llcs_kernel_bench: out of memory\n");
    exit(1);
  }
  return ptr;
}

static long parse_long(const char *what, const char *text, long min, long max) {
  char *end = NULL;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || end == text || *end || v < min || v > max) {
    fprintf(stderr, "llcs_kernel_bench: %s must be an integer from %ld to %ld, not '%s'\n", what,
            min, max, text ? text : "(missing)");
    exit(2);
  }
  return v;
}

/* The whole table as G x G blocks, block column by block column (top to bottom); returns
 * the LLCS. Split as in the driver: even splits of a's characters and of b's rows (dp) or of
 * V's words (bitpar). */
static long run_dp(const unsigned char *a, long m, const unsigned char *b, long n, long G) {
  int32_t *row = xcalloc((size_t)(m / G + 2), sizeof *row);
  int32_t *col = xcalloc((size_t)n, sizeof *col); /* the left column of the next block column */
  for (long x = 0; x < G; x++) {
    long k0 = m * x / G, bw = m * (x + 1) / G - k0;
    memset(row, 0, (size_t)(bw + 1) * sizeof *row);
    for (long y = 0; y < G; y++) {
      long j0 = n * y / G, bh = n * (y + 1) / G - j0;
      llcs_dp_block(a + k0, (size_t)bw, b + j0, (size_t)bh, row, col + j0);
    }
  }
  long llcs = col[n - 1];
  free(row);
  free(col);
  return llcs;
}

static long run_bitpar(const unsigned char *a, long m, const unsigned char *b, long n, int sigma,
                       long G) {
  long words = (n + 63) / 64;
  uint64_t *masks = xcalloc((size_t)sigma * (size_t)words, sizeof *masks);
  uint64_t *v = xcalloc((size_t)words, sizeof *v);
  unsigned char *carries = xcalloc((size_t)(m / G + 1), 1);
  llcs_bitpar_masks(b, (size_t)n, sigma, masks, (size_t)words);
  memset(v, 0xff, (size_t)words * sizeof *v);
  for (long x = 0; x < G; x++) {
    long k0 = m * x / G, bw = m * (x + 1) / G - k0;
    memset(carries, 0, (size_t)bw);
    for (long y = 0; y < G; y++) {
      long w0 = words * y / G, nw = words * (y + 1) / G - w0;
      llcs_bitpar_block(masks + w0, (size_t)words, a + k0, (size_t)bw, v + w0, (size_t)nw, carries);
    }
  }
  long llcs = llcs_count_zeros(v, (size_t)words);
  free(masks);
  free(v);
  free(carries);
  return llcs;
}

int main(int argc, char **argv) {
  long m = 100000, n = 100000, G = 1, reps = 5, sigma = 4, seed = 1;
  int do_dp = 1, do_bitpar = 1;
  const char *json_path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      printf(
          "usage: llcs_kernel_bench [--size N] [--sizes M,N] [--alphabet K] [--grid G] [--reps R]\n"
          "                         [--kernel dp|bitpar|both] [--seed S] [--json FILE]\n");
      return 0;
    }
    if (!value) {
      fprintf(stderr, "llcs_kernel_bench: unknown option or missing value: '%s'\n", arg);
      return 2;
    }
    i++;
    if (!strcmp(arg, "--size")) m = n = parse_long("--size", value, 1, 1L << 30);
    else if (!strcmp(arg, "--sizes")) {
      char *end = NULL;
      m = strtol(value, &end, 10);
      if (!end || *end != ',' || m < 1) m = parse_long("--sizes M", "", 1, 1L << 30);
      n = parse_long("--sizes N", end + 1, 1, 1L << 30);
    } else if (!strcmp(arg, "--alphabet")) sigma = parse_long("--alphabet", value, 1, 256);
    else if (!strcmp(arg, "--grid")) G = parse_long("--grid", value, 1, 1L << 20);
    else if (!strcmp(arg, "--reps")) reps = parse_long("--reps", value, 1, 1000);
    else if (!strcmp(arg, "--seed")) seed = parse_long("--seed", value, 0, 0x7fffffffL);
    else if (!strcmp(arg, "--json")) json_path = value;
    else if (!strcmp(arg, "--kernel")) {
      do_dp = !strcmp(value, "dp") || !strcmp(value, "both");
      do_bitpar = !strcmp(value, "bitpar") || !strcmp(value, "both");
      if (!do_dp && !do_bitpar) {
        fprintf(stderr, "llcs_kernel_bench: --kernel must be dp, bitpar or both, not '%s'\n",
                value);
        return 2;
      }
    } else {
      fprintf(stderr, "llcs_kernel_bench: unknown option: '%s'\n", arg);
      return 2;
    }
  }
  uint64_t state = (uint64_t)seed;
  unsigned char *a = xcalloc((size_t)m, 1), *b = xcalloc((size_t)n, 1);
  for (long i = 0; i < m; i++)
    a[i] = (unsigned char)(((splitmix(&state) >> 32) * (uint64_t)sigma) >> 32);
  for (long i = 0; i < n; i++)
    b[i] = (unsigned char)(((splitmix(&state) >> 32) * (uint64_t)sigma) >> 32);

  FILE *json = NULL;
  if (json_path && !(json = fopen(json_path, "w"))) {
    fprintf(stderr, "llcs_kernel_bench: cannot write '%s'\n", json_path);
    return 2;
  }
  double cells = (double)m * (double)n, *rate = xcalloc((size_t)reps, sizeof *rate);
  double *seconds = xcalloc((size_t)reps, sizeof *seconds);
  long found[2] = {-1, -1};
  for (int kernel = 0; kernel < 2; kernel++) {
    if (!(kernel == 0 ? do_dp : do_bitpar)) continue;
    for (long r = 0; r < reps; r++) {
      double t0 = bspk_monotonic_seconds();
      long llcs = kernel == 0 ? run_dp(a, m, b, n, G) : run_bitpar(a, m, b, n, (int)sigma, G);
      seconds[r] = bspk_monotonic_seconds() - t0;
      rate[r] = cells / seconds[r];
      if (found[kernel] >= 0 && found[kernel] != llcs) {
        fprintf(stderr, "llcs_kernel_bench: the LLCS changed between repetitions (%ld, %ld)\n",
                found[kernel], llcs);
        return 1;
      }
      found[kernel] = llcs;
    }
    bspk_sort_doubles(rate, (int)reps); /* both arrays are refilled for the next kernel */
    bspk_sort_doubles(seconds, (int)reps);
    stats_t st = stats_of_sorted(rate, (int)reps);
    printf(
        "%-6s m = %ld, n = %ld, alphabet %ld, grid %ld x %ld, %ld reps: cell updates/s median %.3g "
        "(min %.3g, q1 %.3g, q3 %.3g, max %.3g); LLCS %ld\n",
        kernel == 0 ? "dp" : "bitpar", m, n, sigma, G, G, reps, st.med, st.min, st.q1, st.q3,
        st.max, found[kernel]);
    fflush(stdout);
    if (json) {
      fputs("{\"bench\":\"llcs_kernel\",\"kernel\":", json);
      bspk_json_write_string(json, kernel == 0 ? "dp" : "bitpar");
      fprintf(json, ",\"m\":%ld,\"n\":%ld,\"alphabet\":%ld,\"grid\":%ld,\"reps\":%ld,\"llcs\":%ld",
              m, n, sigma, G, reps, found[kernel]);
      json_stats(json, "cells_per_s", st, 1.0);
      json_stats(json, "time_s", stats_of_sorted(seconds, (int)reps), 1.0);
      fputs("}\n", json);
    }
  }
  if (json) fclose(json);
  free(seconds);
  if (found[0] >= 0 && found[1] >= 0 && found[0] != found[1]) {
    fprintf(stderr, "llcs_kernel_bench: the kernels disagree: dp %ld, bitpar %ld\n", found[0],
            found[1]);
    return 1;
  }
  free(rate);
  free(a);
  free(b);
  return 0;
}
