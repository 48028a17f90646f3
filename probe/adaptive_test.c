/*
 * adaptive_test.c - the adaptive rule of bspprobe's points (timing.c: bspp_median_ci_rank,
 * bspp_median_ci_rel, bspp_adaptive_next) on synthetic sample streams, without a BSP run.
 *
 *   bspprobe-adaptive-test             the self-checks below; exit status 0 when all pass
 *   bspprobe-adaptive-test --ranks N   the rank j of n = 1 .. N, one "n j" per line
 *   bspprobe-adaptive-test --stream    reads "min_reps max_reps min_s target max_s" and then
 *                                      samples (seconds) from stdin, takes them in the order
 *                                      the probe would, and prints "reps stop ci_rel"
 * (tests/python/test_noise.py runs the last two against a model of the rule in Python.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* What the probe does with one stream: samples in the order given, checks where the rule
 * says; returns the samples taken, *stop and *ci_rel of the last check. */
static int run_stream(const bspp_adaptive_rule *r, const double *x, int avail, int *stop,
                      double *ci_rel) {
  int n = r->min_reps, taken = 0;
  *stop = -1;
  *ci_rel = -1;
  for (;;) {
    if (n > avail) return -1; /* the stream ran out: the caller gave too few */
    taken = n;
    double elapsed = 0;
    for (int i = 0; i < taken; i++) elapsed += x[i];
    int next = bspp_adaptive_next(r, x, taken, elapsed, ci_rel, stop);
    if (next <= taken) return taken;
    n = next;
  }
}

static int failures = 0;

static void expect(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) failures++;
}

static int self_checks(void) {
  /* the ranks: none below 6 samples; [x_(0), x_(5)] at 6 (P = 1/64 <= 0.025); at 9
   * [x_(1), x_(7)] (P(B <= 1) = 10/512); at 17, 4 (3214/131072); at 100, 39 (the textbook's
   * 40th and 61st of 100) */
  expect(bspp_median_ci_rank(5) == -1 && bspp_median_ci_rank(6) == 0, "ranks at 5 and 6");
  expect(bspp_median_ci_rank(9) == 1 && bspp_median_ci_rank(17) == 4, "ranks at 9 and 17");
  expect(bspp_median_ci_rank(100) == 39, "rank at 100");
  const bspp_adaptive_rule rule = {6, 400, 0.0, 0.03, 0.02};
  static double x[1000];
  int stop;
  double ci;
  /* a steady point: the interval is 0 after the first 6 */
  for (int i = 0; i < 1000; i++) x[i] = 1e-5;
  expect(run_stream(&rule, x, 1000, &stop, &ci) == 6 && stop == BSPP_STOP_CI && ci == 0,
         "a steady point stops at 6 on its interval");
  /* two values 20% apart, alternating: the interval never narrows below 9% */
  for (int i = 0; i < 1000; i++) x[i] = i % 2 ? 1.2e-6 : 1e-6;
  int n = run_stream(&rule, x, 1000, &stop, &ci);
  expect(n == 400 && stop == BSPP_STOP_MAX_REPS, "a point that never settles stops at max_reps");
  /* the same 100x slower (110 us each): no more once they took 20 ms: 6, 9, 13, 19, 28, 42,
   * 63, 94, 141, then 182 (the count that reaches 20 ms) */
  for (int i = 0; i < 1000; i++) x[i] = i % 2 ? 1.2e-4 : 1e-4;
  n = run_stream(&rule, x, 1000, &stop, &ci);
  expect(n == 182 && stop == BSPP_STOP_TIME, "a slow unsettled point stops at its time");
  /* settles after a noisy start: 6 samples 1.0 .. 1.5, then steady at 1.0: the interval holds
   * a noisy one at 9 ([x_(1), x_(7)]: 1.4), 13 ([x_(2), x_(10)]: 1.3) and 19 ([x_(4),
   * x_(14)]: 1.1, +-5%), none at 28 ([x_(8), x_(19)]) */
  for (int i = 0; i < 1000; i++) x[i] = 1e-6;
  for (int i = 0; i < 6; i++) x[i] = 1e-6 * (1.0 + 0.1 * i);
  n = run_stream(&rule, x, 1000, &stop, &ci);
  expect(n == 28 && stop == BSPP_STOP_CI && ci == 0, "a point that settles stops at 28");
  /* one long sample (a scheduler's gap) among steady ones: at 6 the interval is [min, max],
   * at 9 the gap is outside it */
  for (int i = 0; i < 1000; i++) x[i] = 2e-6;
  x[3] = 4e-3;
  n = run_stream(&rule, x, 1000, &stop, &ci);
  expect(n == 9 && stop == BSPP_STOP_CI && ci == 0, "an outlier holds a point up by 3 samples");
  /* ci_rel: [x_(0), x_(5)] of 1..6 over the median 3.5 */
  double six[6] = {6, 5, 4, 3, 2, 1};
  expect(fabs(bspp_median_ci_rel(six, 6) - 5.0 / 7.0) < 1e-12 && six[0] == 6,
         "the interval's half-width over the median (x unchanged)");
  printf("%d failed\n", failures);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--ranks")) {
    int top = atoi(argv[2]);
    for (int n = 1; n <= top; n++) printf("%d %d\n", n, bspp_median_ci_rank(n));
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "--stream")) {
    bspp_adaptive_rule r;
    if (scanf("%d %d %lf %lf %lf", &r.min_reps, &r.max_reps, &r.min_s, &r.target, &r.max_s) != 5)
      return 2;
    int cap = 1 << 16, avail = 0;
    double *x = xmalloc((size_t)cap * sizeof *x);
    while (avail < cap && scanf("%lf", &x[avail]) == 1) avail++;
    int stop;
    double ci;
    int n = run_stream(&r, x, avail, &stop, &ci);
    printf("%d %s %.17g\n", n, stop >= 0 ? bspp_stop_names[stop] : "none", ci);
    free(x);
    return n < 0;
  }
  if (argc != 1) {
    fprintf(stderr, "usage: %s [--ranks N | --stream]\n", argv[0]);
    return 2;
  }
  return self_checks();
}
