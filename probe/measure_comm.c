/*
 * measure_comm.c - the communication sections: g surfaces, validation h-relations (with the
 * calibration rounds among their points), l, the As suite. Each point is timed by timing.c.
 * Part of bspprobe (see probe.h for the files' order and docs/probe-format.md for records).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe.h"

static void write_comm_record(probe_ctx *c, const char *type, const comm_op *o,
                              const double *samples, int reps, int warmups, long seq, double ci_rel,
                              int stop) {
  jbuf *j = &c->j;
  bspp_json_begin(j, type);
  bspp_json_str(j, "primitive", bspp_prim_names[o->prim]);
  bspp_json_str(j, "pattern", bspp_pattern_names[o->pattern]);
  bspp_json_int(j, "msg_words", o->hs);
  bspp_json_int(j, "count", o->count);
  bspp_json_int(j, "h", o->hs * o->count);
  bspp_json_nums(j, "samples_s", samples, reps, "%.6g");
  bspp_json_int(j, "reps", reps);
  bspp_json_int(j, "warmup", warmups);
  bspp_json_int(j, "seq", seq);
  bspp_json_adaptive(j, ci_rel, stop);
  bspp_json_raw(j, "state", c->batch_state_json);
  if (o->prim == PRIM_SEND)
    bspp_json_str(j, "note",
                  "the clock stops after each process drained its queue (bsp_get_tag + "
                  "bsp_move of every message, after bsp_sync); tag size 0");
  bspp_emit(c);
}

/* ---- the g grid ------------------------------------------------------------------------------ */

void bspp_plan_grid_axes(const probe_ctx *c, long *msg_words, int *nm, long *counts, int *nc) {
  *nm = *nc = 0;
  if (c->opt->quick) {
    static const long qm[] = {1, 16, 256, 4096, 65536}, qc[] = {1, 8, 64, 512};
    for (size_t i = 0; i < sizeof qm / sizeof qm[0]; i++)
      if (qm[i] <= c->hmax) msg_words[(*nm)++] = qm[i];
    for (size_t i = 0; i < sizeof qc / sizeof qc[0]; i++)
      if (qc[i] <= c->hmax) counts[(*nc)++] = qc[i];
  } else {
    for (long v = 1; v <= c->hmax && *nm < 64; v *= 2) msg_words[(*nm)++] = v;
    for (long v = 1; v <= c->hmax && *nc < 64; v *= 2) counts[(*nc)++] = v;
  }
}

long bspp_grid_points_per_combo(const probe_ctx *c) {
  long m[64], k[64];
  int nm, nk;
  bspp_plan_grid_axes(c, m, &nm, k, &nk);
  long n = 0;
  for (int a = 0; a < nm; a++)
    for (int b = 0; b < nk; b++) n += m[a] * k[b] <= c->hmax;
  return n;
}

typedef struct {
  int prim, pattern;
  long hs, count;
  int validation; /* a validation point (off the grid), measured among the grid's points */
} point;

static const char *point_label(char *buf, size_t n, const char *sec, const point *pt) {
  snprintf(buf, n, "%s %s/%s h*=%ld c=%ld", sec, bspp_prim_names[pt->prim],
           bspp_pattern_names[pt->pattern], pt->hs, pt->count);
  return buf;
}

/* Measures a list of points in a random order (the same on every process). Each record's
 * type is "validation" for validation points, else `type`. */
static void measure_points(probe_ctx *c, const char *sec, const char *type, point *pts, long n,
                           uint64_t order_stream) {
  long *order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
  for (long i = 0; i < n; i++) order[i] = i;
  uint64_t r = bspp_rng_seed(c->opt->seed, order_stream, 0, 0);
  bspp_rng_shuffle_long(&r, order, n);
  int *perm = xmalloc((size_t)c->p * sizeof *perm);
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  /* With validation points, 11 calibration rounds: before point n*k/10 (k = 0..9) and after
   * the last; every process sees the same list, so all take part in each round. */
  int calibrate = 0, round = 0;
  for (long i = 0; i < n && c->opt->calibration; i++) calibrate |= pts[i].validation;
  char label[160];
  const double t_begin = bspk_monotonic_seconds();
  for (long i = 0; i < n; i++) {
    int after_round = 0;
    while (calibrate && round < 10 && i == n * round / 10) {
      bspp_progress(c, "calibration", i, n, 1);
      bspp_run_calibration_round(c, round++, i);
      after_round = 1;
    }
    if (bspp_sentinel_due(c, i, n)) {
      /* a visit takes milliseconds: no progress line of its own (the throttled point lines go
       * on), else a log gets two lines per visit, some 250 in a default probe */
      char where[64];
      snprintf(where, sizeof where, "in %s", sec);
      bspp_sentinel_visit(c, where, i);
    }
    const point *pt = &pts[order[i]];
    comm_op o = {pt->prim, pt->pattern, pt->hs, pt->count, 0};
    bspp_comm_target(c, &o, perm);
    bspp_progress(c, point_label(label, sizeof label, pt->validation ? "validation" : sec, pt), i,
                  n, i == 0 || after_round);
    /* the point's share of the budget left (process 0's clock decides: it alone applies the
     * rule) */
    double left = c->prm.g_budget_s - (bspk_monotonic_seconds() - t_begin);
    c->point_max_s = left > 0 ? left / (double)(n - i) : 0;
    int warm, stop = -1;
    double ci_rel = -1;
    int reps = bspp_time_point_adaptive(c, bspp_comm_run, &o, out, &warm, &ci_rel, &stop);
    if (c->s == 0)
      write_comm_record(c, pt->validation ? "validation" : type, &o, out, reps, warm, i, ci_rel,
                        stop);
  }
  c->point_max_s = -1;
  if (calibrate) {
    bspp_progress(c, "calibration", n, n, 1);
    bspp_run_calibration_round(c, round, n);
  }
  free(out);
  free(perm);
  free(order);
}

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

enum { VALIDATION_VISITS = 3 };
static long draw_validation_points(probe_ctx *c, point *pts);

void bspp_measure_g(probe_ctx *c) {
  long m[64], k[64];
  int nm, nk;
  bspp_plan_grid_axes(c, m, &nm, k, &nk);
  int with_validation = c->opt->sections >> SEC_VALIDATION & 1;
  long cap = (long)NPRIMS * NPATTERNS * nm * nk +
             (with_validation ? 3L * c->prm.validation_per_combo * VALIDATION_VISITS : 0),
       n = 0;
  point *pts = xmalloc((size_t)(cap ? cap : 1) * sizeof *pts);
  for (int pr = 0; pr < NPRIMS; pr++) {
    if (!(c->opt->primitives >> pr & 1)) continue;
    for (int pa = 0; pa < NPATTERNS; pa++) {
      if (!(c->opt->patterns >> pa & 1)) continue;
      for (int a = 0; a < nm; a++)
        for (int b = 0; b < nk; b++)
          if (m[a] * k[b] <= c->hmax) pts[n++] = (point){pr, pa, m[a], k[b], 0};
    }
  }
  if (with_validation) n += draw_validation_points(c, pts + n);
  measure_points(c, "g", "g", pts, n, 0x67 /* 'g' */);
  free(pts);
}

/* Random (msg_words, count) off the grid: neither a power of two, h = c*h* between
 * min(4096, H_MAX/2) and H_MAX, drawn log-uniformly. Appends them to pts (room for
 * 3 * validation_per_combo * VALIDATION_VISITS) and returns how many. */
static long draw_validation_points(probe_ctx *c, point *pts) {
  static const int combos[][2] = {
      {PRIM_PUT, PAT_ALLTOALL}, {PRIM_PUT, PAT_PERMUTATION}, {PRIM_SEND, PAT_ALLTOALL}};
  const int ncombos = (int)(sizeof combos / sizeof combos[0]);
  long lo = c->hmax / 2 < 4096 ? c->hmax / 2 : 4096, hi = c->hmax;
  if (lo < 9) {
    if (c->s == 0)
      bspp_add_warning(c, "validation skipped: --max-words %ld is too small (need >= 18)", c->hmax);
    return 0;
  }
  int per = c->prm.validation_per_combo;
  long n = 0;
  uint64_t r = bspp_rng_seed(c->opt->seed, 0x76616c /* "val" */, 0, 0);
  for (int cb = 0; cb < ncombos; cb++) {
    if (!(c->opt->primitives >> combos[cb][0] & 1) || !(c->opt->patterns >> combos[cb][1] & 1))
      continue;
    for (int i = 0; i < per; i++) {
      for (int tries = 0;; tries++) {
        double h = exp(log((double)lo) + bspp_rng_unit(&r) * (log((double)hi) - log((double)lo)));
        double cmax = h / 3 < 65535 ? h / 3 : 65535;
        long cnt = (long)floor(exp(log(3.0) + bspp_rng_unit(&r) * (log(cmax) - log(3.0))));
        long hs = cnt > 0 ? (long)floor(h / (double)cnt) : 0;
        if (cnt < 3 || hs < 3 || is_pow2(cnt) || is_pow2(hs) || cnt * hs < lo || cnt * hs > hi) {
          if (tries > 100000)
            bsp_abort("bspprobe: cannot draw validation points in [%ld, %ld]\n", lo, hi);
          continue;
        }
        pts[n++] = (point){combos[cb][0], combos[cb][1], hs, cnt, 1};
        break;
      }
    }
  }
  if (n == 0 && c->s == 0)
    bspp_add_warning(c,
                     "validation skipped: it needs put/alltoall, put/permutation or send/alltoall, "
                     "and --primitives/--patterns left none of them");
  /* Each point is visited VALIDATION_VISITS times at random places in the order, and its
   * records are merged by the reader: its median then spans several moments of the run, as
   * the fit over many grid points does. */
  for (int v = 1; v < VALIDATION_VISITS; v++)
    for (long i = 0; i < n; i++) pts[v * n + i] = pts[i];
  return n * VALIDATION_VISITS;
}

/* With the g section, the validation points were measured among the grid's points (one
 * random order: whatever state the machine drifts through, both see it alike). */
void bspp_measure_validation(probe_ctx *c) {
  if (c->opt->sections >> SEC_G & 1) return;
  point *pts =
      xmalloc((size_t)(3 * c->prm.validation_per_combo * VALIDATION_VISITS + 1) * sizeof *pts);
  long n = draw_validation_points(c, pts);
  measure_points(c, "validation", "validation", pts, n, 0x76 /* 'v' */);
  free(pts);
}

/* ---- l --------------------------------------------------------------------------------------- */

static const char batch_note[] =
    "sample = time of a batch of `batch` back-to-back supersteps (after a common bsp_sync) "
    "divided by `batch`, max over processes";

void bspp_measure_l(probe_ctx *c) {
  const latency_test *vars = bspp_l_variants;
  const int nv = NLVARIANTS;
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  char note[512];
  for (int v = 0; v < nv; v++) {
    char label[64];
    snprintf(label, sizeof label, "l %s", vars[v].name);
    bspp_progress(c, label, v, nv, 1);
    long batch;
    int n = bspp_time_l_variant(c, v, c->prm.l_samples, out, &batch);
    if (c->s == 0) {
      jbuf *j = &c->j;
      bspp_json_begin(j, "l");
      bspp_json_str(j, "variant", vars[v].name);
      bspp_json_nums(j, "samples_s", out, n, "%.6g");
      bspp_json_int(j, "batch", batch);
      bspp_json_raw(j, "state", c->batch_state_json);
      snprintf(note, sizeof note, "%s; %s", vars[v].what, batch_note);
      bspp_json_str(j, "note", note);
      bspp_emit(c);
    }
  }
  free(out);
}

/* ---- the As suite (Gerbessiotis & Lee, sec. 3) ----------------------------------------------- */

static void op_comp(probe_ctx *c, const void *arg) {
  (void)arg;
  c->isink = c->isink + 1; /* the elementary computational operation */
  bsp_sync();
}

static void op_full(probe_ctx *c, const void *arg) {
  (void)arg;
  for (int t = 0; t < c->p; t++)
    bsp_put(t, c->src + t, c->dst, (probe_size_t)(c->s * WORD_BYTES), WORD_BYTES);
  bsp_sync();
}

static void op_simple(probe_ctx *c, const void *arg) {
  (void)arg;
  if (c->s == 0) bsp_put(c->p - 1, c->src, c->dst, 0, WORD_BYTES);
  bsp_sync();
}

static void op_scatter(probe_ctx *c, const void *arg) {
  (void)arg;
  if (c->s == 0)
    for (int t = 1; t < c->p; t++) bsp_put(t, c->src + t, c->dst, 0, WORD_BYTES);
  bsp_sync();
}

/* Total exchange: h words to every process, itself included, one put per destination. */
static void op_total_exchange(probe_ctx *c, const void *arg) {
  const long h = *(const long *)arg;
  const probe_size_t nb = (probe_size_t)(h * WORD_BYTES);
  for (int i = 0; i < c->p; i++) {
    int t = (c->s + i) % c->p; /* start with itself, then the others in turn */
    bsp_put(t, c->src + (long)t * h, c->dst, (probe_size_t)(c->s * h * WORD_BYTES), nb);
  }
  bsp_sync();
}

void bspp_measure_as(probe_ctx *c) {
  static const latency_test lat[] = {
      {"Empty", bspp_op_sync, "Test 1: bsp_sync alone (the barrier)"},
      {"Comp", op_comp, "Test 2: one integer addition, then bsp_sync"},
      {"Full", op_full,
       "Test 3: total exchange of p words: one one-word bsp_put to every process, itself "
       "included, then bsp_sync"},
      {"Simple", op_simple, "Test 4: process 0 bsp_puts one word to process p-1, then bsp_sync"},
      {"Scatter", op_scatter,
       "Test 5: process 0 bsp_puts one word to each of the other p-1 processes, then bsp_sync"},
  };
  const long nlat = (long)(sizeof lat / sizeof lat[0]);
  long hs[64];
  long nte = 0;
  for (long h = 1; h * c->p <= c->hmax && nte < 64; h *= 2) hs[nte++] = h;
  long n = nlat + nte;
  long order[128];
  for (long i = 0; i < n; i++) order[i] = i;
  uint64_t r = bspp_rng_seed(c->opt->seed, 0x6173 /* "as" */, 0, 0);
  bspp_rng_shuffle_long(&r, order, n);
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  char note[640], label[80];
  for (long i = 0; i < n; i++) {
    long t = order[i];
    jbuf *j = &c->j;
    if (t < nlat) {
      snprintf(label, sizeof label, "as %s", lat[t].name);
      bspp_progress(c, label, i, n, i == 0);
      long batch;
      int ns = bspp_time_batched(c, lat[t].fn, NULL, c->prm.l_samples, out, &batch);
      if (c->s == 0) {
        bspp_json_begin(j, "as");
        bspp_json_str(j, "test", lat[t].name);
        bspp_json_null(j, "h");
        bspp_json_nums(j, "samples_s", out, ns, "%.6g");
        bspp_json_int(j, "batch", batch);
        snprintf(note, sizeof note, "%s (words of 8 bytes); %s", lat[t].what, batch_note);
        bspp_json_str(j, "note", note);
        bspp_json_int(j, "seq", i);
        bspp_json_raw(j, "state", c->batch_state_json);
        bspp_emit(c);
      }
    } else {
      long h = hs[t - nlat];
      snprintf(label, sizeof label, "as TotalExchange h=%ld", h);
      bspp_progress(c, label, i, n, i == 0);
      int warm, stop = -1;
      double ci_rel = -1;
      int reps = bspp_time_point_adaptive(c, op_total_exchange, &h, out, &warm, &ci_rel, &stop);
      if (c->s == 0) {
        bspp_json_begin(j, "as");
        bspp_json_str(j, "test", "TotalExchange");
        bspp_json_int(j, "h", h);
        bspp_json_int(j, "h_total", h * c->p);
        bspp_json_nums(j, "samples_s", out, reps, "%.6g");
        bspp_json_int(j, "reps", reps);
        bspp_json_int(j, "warmup", warm);
        bspp_json_adaptive(j, ci_rel, stop);
        bspp_json_str(
            j, "note",
            "each process bsp_puts h words to every process, itself included (h_total = p*h "
            "words sent and received per process; the paper's h), one put per destination, "
            "then bsp_sync; one superstep per sample from a common bsp_sync, max over "
            "processes; words of 8 bytes (the paper used 32-bit ints); cost per word = "
            "time / h_total");
        bspp_json_int(j, "seq", i);
        bspp_json_raw(j, "state", c->batch_state_json);
        bspp_emit(c);
      }
    }
  }
  free(out);
}
