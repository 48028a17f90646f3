/*
 * sentinel.c - the machine's noise, measured in every run (issue 39). A sentinel is a fixed
 * point of one regime, re-measured at moments spread over the whole run: before the first
 * section, after every section and every so many points inside the g grid's order. How much
 * its medians move from visit to visit is the machine's time-to-time variability in that
 * regime, which no single point's repetitions can show (they are taken within milliseconds).
 * Part of bspprobe (see probe.h for the files' order); the record is `sentinel` in
 * docs/probe-format.md.
 *
 * A visit measures the four regimes, each a short batch timed as the probe times its kind
 * (the canary and the machine's state around each, as every batch):
 *   compute  dot_double_naive of SENTINEL_DOT_N elements on vectors in the cache, on every
 *            process at once, each sample the max over processes;
 *   sync     bsp_sync alone, batched as l's empty variant;
 *   small_h  put/alltoall of 64 words per process in p - 1 messages (one at p = 1);
 *   large_h  put/alltoall of min(2^17, H_MAX) words per process in p - 1 messages;
 * the same sizes in both modes and at every p, so that runs can be compared.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>

#include "probe.h"

#define SENTINEL_DOT_N 32768L       /* 2 x 256 KiB: in the caches */
#define SENTINEL_SMALL_H 64L        /* words per process */
#define SENTINEL_LARGE_H (1L << 17) /* words per process (1 MiB) */
enum {
  SENTINEL_COMPUTE_REPS = 15,
  SENTINEL_SYNC_SAMPLES = 15,
  SENTINEL_SMALL_REPS = 15,
  SENTINEL_LARGE_REPS = 9,
  SENTINEL_G_VISITS = 100,       /* visits inside the g grid's order (quick: a third) */
  SENTINEL_MIN_POINTS_APART = 15 /* at least this many points between two of them */
};

int bspp_sentinels_on(const probe_ctx *c) {
  if (c->opt->sentinels >= 0) return c->opt->sentinels;
  return !c->opt->calibrate && c->opt->reps == 0 && (c->opt->sections >> SEC_G & 1);
}

int bspp_sentinel_due(const probe_ctx *c, long i, long n) {
  if (i <= 0 || !bspp_sentinels_on(c)) return 0;
  long visits = c->opt->quick ? SENTINEL_G_VISITS / 3 : SENTINEL_G_VISITS;
  long every = (n + visits - 1) / visits;
  if (every < SENTINEL_MIN_POINTS_APART) every = SENTINEL_MIN_POINTS_APART;
  return i % every == 0;
}

/* The part every sentinel record shares, up to its samples. */
static void begin_record(probe_ctx *c, const char *regime, const char *where, long seq,
                         double t_s) {
  jbuf *j = &c->j;
  bspp_json_begin(j, "sentinel");
  bspp_json_str(j, "regime", regime);
  bspp_json_int(j, "visit", c->sentinel_visits);
  bspp_json_str(j, "where", where);
  if (seq >= 0) bspp_json_int(j, "seq", seq);
  else bspp_json_null(j, "seq");
  bspp_json_num(j, "t_s", t_s);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The samples, their number and median, the state; then the record is written. */
static void end_record(probe_ctx *c, const double *samples, int n, const char *note) {
  jbuf *j = &c->j;
  double *v = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int i = 0; i < n; i++) v[i] = samples[i];
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double med = n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  free(v);
  bspp_json_nums(j, "samples_s", samples, n, "%.6g");
  bspp_json_int(j, "reps", n);
  bspp_json_num(j, "median_s", med);
  bspp_json_raw(j, "state", c->batch_state_json);
  bspp_json_str(j, "note", note);
  bspp_emit(c);
}

static void visit_compute(probe_ctx *c, const char *where, long seq, double *out) {
  f_state st = {0};
  st.c = c;
  st.pool_bytes = (long)(2 * SENTINEL_DOT_N * (long)sizeof(double)); /* one pair: reused */
  st.pool = xmalloc((size_t)st.pool_bytes);
  bspp_f_fill_pool(&st, 0);
  int reps = c->opt->reps > 0 ? c->opt->reps : SENTINEL_COMPUTE_REPS;
  if (reps > c->prm.max_reps) reps = c->prm.max_reps;
  double t_s = bspk_monotonic_seconds() - c->t0;
  bspp_canary_before(c);
  bsp_sync(); /* a common start */
  bspp_state_begin(c);
  bspp_f_time_kernel(&st, K_DOT_DOUBLE, SENTINEL_DOT_N, c->local, reps); /* 1 warm-up first */
  bspp_gather_max(c, c->local, bspp_state_end(c, reps), out);
  bspp_state_collect(c, reps);
  free(st.pool);
  if (c->s != 0) return;
  begin_record(c, "compute", where, seq, t_s);
  bspp_json_str(&c->j, "kernel", bspp_f_kernel_names[K_DOT_DOUBLE]);
  bspp_json_int(&c->j, "n", SENTINEL_DOT_N);
  bspp_json_num(&c->j, "ops", 2.0 * (double)SENTINEL_DOT_N);
  bspp_json_int(&c->j, "procs", c->p);
  end_record(c, out, reps,
             "every process at once on its own two vectors (in the cache, the same every "
             "repetition), 1 warm-up repetition not kept; sample = max over processes");
}

static void visit_sync(probe_ctx *c, const char *where, long seq, double *out) {
  double t_s = bspk_monotonic_seconds() - c->t0;
  long batch;
  int n = bspp_time_l_variant(c, L_EMPTY, SENTINEL_SYNC_SAMPLES, out, &batch);
  if (c->s != 0) return;
  begin_record(c, "sync", where, seq, t_s);
  bspp_json_str(&c->j, "variant", bspp_l_variants[L_EMPTY].name);
  bspp_json_int(&c->j, "batch", batch);
  end_record(c, out, n,
             "bsp_sync alone; sample = time of a batch of `batch` back-to-back supersteps "
             "(after a common bsp_sync) divided by `batch`, max over processes");
}

static void visit_h(probe_ctx *c, const char *regime, long h, int reps, const char *where, long seq,
                    double *out) {
  long count = c->p > 1 ? c->p - 1 : 1;
  long hs = h / count > 0 ? h / count : 1;
  double t_s = bspk_monotonic_seconds() - c->t0;
  int warm;
  int n = bspp_time_comm_point(c, PRIM_PUT, PAT_ALLTOALL, hs, count, reps, 0, out, &warm);
  if (c->s != 0) return;
  begin_record(c, regime, where, seq, t_s);
  bspp_json_str(&c->j, "primitive", bspp_prim_names[PRIM_PUT]);
  bspp_json_str(&c->j, "pattern", bspp_pattern_names[PAT_ALLTOALL]);
  bspp_json_int(&c->j, "msg_words", hs);
  bspp_json_int(&c->j, "count", count);
  bspp_json_int(&c->j, "h", hs * count);
  bspp_json_int(&c->j, "warmup", warm);
  end_record(c, out, n, "timed as a g point (one superstep per sample, max over processes)");
}

void bspp_sentinel_visit(probe_ctx *c, const char *where, long seq) {
  double t0 = bspk_monotonic_seconds();
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  visit_compute(c, where, seq, out);
  visit_sync(c, where, seq, out);
  visit_h(c, "small_h", SENTINEL_SMALL_H < c->hmax ? SENTINEL_SMALL_H : c->hmax,
          SENTINEL_SMALL_REPS, where, seq, out);
  visit_h(c, "large_h", SENTINEL_LARGE_H < c->hmax ? SENTINEL_LARGE_H : c->hmax,
          SENTINEL_LARGE_REPS, where, seq, out);
  free(out);
  c->sentinel_visits++;
  c->sentinel_s += bspk_monotonic_seconds() - t0;
}
