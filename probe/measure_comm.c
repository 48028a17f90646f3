/*
 * measure_comm.c - communication: g surfaces, validation h-relations, l, the As suite.
 * Part of bspprobe (see bspprobe.c for the overview and docs/probe-format.md for records).
 *
 * How one sample is timed (g, validation, As TotalExchange): every process aligns with the
 * others (bsp_sync), reads the clock, issues its requests, calls bsp_sync (for send: and then
 * drains its queue with bsp_get_tag + bsp_move), reads the clock again. The sample is the
 * MAXIMUM over processes of these times. The per-process times are gathered to process 0
 * with bsp_put in a superstep after the repetitions of a point, outside the timed part.
 *
 * How many repetitions: one warm-up (two when it took under 1 ms), then enough that their
 * total is at least min_point_s, and at least min_reps, at most max_reps; the warm-up time
 * used for that decision is the max over processes, so every process decides alike.
 *
 * Latency tests (l, As Empty/Comp/Full/Simple/Scatter) are too short for one timing each:
 * a sample is a batch of back-to-back supersteps timed together, divided by the batch size.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

typedef void (*op_fn)(probe_ctx *c, const void *arg);

/* ---- collective helpers ---------------------------------------------------------------------- */

void gather_max(probe_ctx *c, const double *local, int n, double *out) {
  if (n > c->gather_stride)
    bsp_abort("bspprobe: internal error: %d samples, room for %d\n", n, c->gather_stride);
  bsp_put(0, local, c->gather, (probe_size_t)((size_t)c->s * c->gather_stride * sizeof(double)),
          (probe_size_t)(n * sizeof(double)));
  bsp_sync();
  if (c->s == 0)
    for (int i = 0; i < n; i++) {
      double m = c->gather[i];
      for (int t = 1; t < c->p; t++)
        if (c->gather[(size_t)t * c->gather_stride + i] > m)
          m = c->gather[(size_t)t * c->gather_stride + i];
      out[i] = m;
    }
}

/* ---- timing ---------------------------------------------------------------------------------- */

static double time_once(probe_ctx *c, op_fn fn, const void *arg) {
  bsp_sync(); /* common start */
  double t0 = bspk_monotonic_seconds();
  fn(c, arg);
  return bspk_monotonic_seconds() - t0;
}

/* Measures one point (warm-up, calibration, repetitions: at least min_reps and until they
 * took min_s, at most max_reps; exactly --reps N when given); on process 0 out[] receives the
 * max-over-processes time of each repetition. Returns the number of repetitions. */
static int measure_point(probe_ctx *c, op_fn fn, const void *arg, int min_reps, double min_s,
                         double *out, int *warmups) {
  double w = bspk_max_over_processes(time_once(c, fn, arg), c->allv);
  *warmups = 1;
  if (w < 1e-3) { /* the decision uses the agreed max, so every process takes it alike */
    time_once(c, fn, arg);
    *warmups = 2;
  }
  int reps;
  if (c->opt->reps > 0) {
    reps = c->opt->reps;
  } else {
    double r = ceil(min_s / (w > 1e-9 ? w : 1e-9));
    reps = r > c->prm.max_reps ? c->prm.max_reps : (int)r;
    if (reps < min_reps) reps = min_reps;
  }
  for (int i = 0; i < reps; i++) c->local[i] = time_once(c, fn, arg);
  gather_max(c, c->local, reps, out);
  return reps;
}

/* Batched latency samples: each sample = (time of `batch` back-to-back calls of fn) / batch,
 * max over processes; n samples (--reps N when given). Returns the number of samples;
 * *batch_out is the batch size. */
static int measure_batched(probe_ctx *c, op_fn fn, const void *arg, int n, double *out,
                           long *batch_out) {
  double w = 0;
  for (int r = 0; r < 2; r++) { /* warm-up, then calibration */
    bsp_sync();
    double t0 = bspk_monotonic_seconds();
    for (int i = 0; i < 8; i++) fn(c, arg);
    w = (bspk_monotonic_seconds() - t0) / 8;
  }
  w = bspk_max_over_processes(w, c->allv);
  double b = ceil(c->prm.l_batch_s / (w > 1e-9 ? w : 1e-9));
  long batch = b > 100000 ? 100000 : b < 1 ? 1 : (long)b;
  if (c->opt->reps > 0) n = c->opt->reps;
  for (int i = 0; i < n; i++) {
    bsp_sync();
    double t0 = bspk_monotonic_seconds();
    for (long k = 0; k < batch; k++) fn(c, arg);
    c->local[i] = (bspk_monotonic_seconds() - t0) / (double)batch;
  }
  gather_max(c, c->local, n, out);
  *batch_out = batch;
  return n;
}

/* ---- the communication of one g point -------------------------------------------------------- */

typedef struct {
  int prim, pattern;
  long hs, count; /* h* (words per request), c (requests per process) */
  int target;     /* permutation and shift: where every request goes (or reads from) */
} comm_op;

/* Request k of process s goes to: alltoall (s + 1 + k mod (p-1)) mod p (itself when p = 1),
 * else o->target. It lands (put, hpput) at word k*h* of the destination's area, which is
 * free of other writers: for alltoall the senders to one destination use disjoint k mod
 * (p-1). Gets read word k*h* of the remote area into word k*h* of the local one. */
static void comm_run(probe_ctx *c, const void *arg) {
  const comm_op *o = arg;
  const long hs = o->hs, cnt = o->count;
  const int p = c->p, s = c->s;
  const probe_size_t nb = (probe_size_t)(hs * WORD_BYTES);
  double *src = c->src, *dst = c->dst;
  const int all = o->pattern == PAT_ALLTOALL && p > 1;
  int d = all ? (s + 1) % p : o->target;
  static const char tag[8] = {0}; /* read-only; the tag size is 0 */

#define NEXT_DEST()                           \
  do {                                        \
    if (all) {                                \
      d = d + 1 == p ? 0 : d + 1;             \
      if (d == s) d = d + 1 == p ? 0 : d + 1; \
    }                                         \
  } while (0)

  switch (o->prim) {
    case PRIM_PUT:
      for (long k = 0; k < cnt; k++) {
        bsp_put(d, src + k * hs, dst, (probe_size_t)(k * hs * WORD_BYTES), nb);
        NEXT_DEST();
      }
      break;
    case PRIM_HPPUT:
      for (long k = 0; k < cnt; k++) {
        bsp_hpput(d, src + k * hs, dst, (probe_size_t)(k * hs * WORD_BYTES), nb);
        NEXT_DEST();
      }
      break;
    case PRIM_GET:
      for (long k = 0; k < cnt; k++) {
        bsp_get(d, src, (probe_size_t)(k * hs * WORD_BYTES), dst + k * hs, nb);
        NEXT_DEST();
      }
      break;
    case PRIM_HPGET:
      for (long k = 0; k < cnt; k++) {
        bsp_hpget(d, src, (probe_size_t)(k * hs * WORD_BYTES), dst + k * hs, nb);
        NEXT_DEST();
      }
      break;
    case PRIM_SEND:
      for (long k = 0; k < cnt; k++) {
        bsp_send(d, tag, src + k * hs, nb);
        NEXT_DEST();
      }
      break;
  }
#undef NEXT_DEST
  bsp_sync();
  if (o->prim == PRIM_SEND) { /* draining the queue is part of the measured operation */
    char tagbuf[8];
    probe_size_t status;
    size_t off = 0, cap = (size_t)c->area_words * WORD_BYTES;
    for (;;) {
      bsp_get_tag(&status, tagbuf);
      if (status == (probe_size_t)-1) break;
      if (off + (size_t)status > cap)
        bsp_abort("bspprobe: process %d received more than %zu bytes\n", s, cap);
      bsp_move((char *)dst + off, status);
      off += (size_t)status;
    }
  }
}

/* Sets o->target for this process; the permutation is drawn per point from the seed. */
static void comm_target(probe_ctx *c, comm_op *o, int *perm) {
  if (o->pattern == PAT_PERMUTATION) {
    uint64_t r = rng_seed(c->opt->seed, 0x7065726dULL /* "perm" */,
                          (uint64_t)(o->prim * NPATTERNS + o->pattern) << 32 | (uint64_t)o->hs,
                          (uint64_t)o->count);
    rng_derangement(&r, perm, c->p);
    o->target = perm[c->s];
  } else {
    o->target = (c->s + 1) % c->p; /* shift; alltoall computes its own */
  }
}

int measure_comm_point(probe_ctx *c, int prim, int pattern, long hs, long count, int min_reps,
                       double min_s, double *out, int *warmups) {
  comm_op o = {prim, pattern, hs, count, 0};
  int *perm = xmalloc((size_t)c->p * sizeof *perm);
  comm_target(c, &o, perm);
  free(perm);
  return measure_point(c, comm_run, &o, min_reps, min_s, out, warmups);
}

static void write_comm_record(probe_ctx *c, const char *type, const comm_op *o,
                              const double *samples, int reps, int warmups, long seq) {
  jbuf *j = &c->j;
  j_begin(j, type);
  j_str(j, "primitive", prim_names[o->prim]);
  j_str(j, "pattern", pattern_names[o->pattern]);
  j_int(j, "msg_words", o->hs);
  j_int(j, "count", o->count);
  j_int(j, "h", o->hs * o->count);
  j_nums(j, "samples_s", samples, reps, "%.6g");
  j_int(j, "reps", reps);
  j_int(j, "warmup", warmups);
  j_int(j, "seq", seq);
  if (o->prim == PRIM_SEND)
    j_str(j, "note",
          "the clock stops after each process drained its queue (bsp_get_tag + "
          "bsp_move of every message, after bsp_sync); tag size 0");
  emit(c);
}

/* ---- the g grid ------------------------------------------------------------------------------ */

void plan_grid_axes(const probe_ctx *c, long *msg_words, int *nm, long *counts, int *nc) {
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

long grid_points_per_combo(const probe_ctx *c) {
  long m[64], k[64];
  int nm, nk;
  plan_grid_axes(c, m, &nm, k, &nk);
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
  snprintf(buf, n, "%s %s/%s h*=%ld c=%ld", sec, prim_names[pt->prim], pattern_names[pt->pattern],
           pt->hs, pt->count);
  return buf;
}

/* Measures a list of points in a random order (the same on every process). Each record's
 * type is "validation" for validation points, else `type`. */
static void measure_points(probe_ctx *c, const char *sec, const char *type, point *pts, long n,
                           uint64_t order_stream) {
  long *order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
  for (long i = 0; i < n; i++) order[i] = i;
  uint64_t r = rng_seed(c->opt->seed, order_stream, 0, 0);
  rng_shuffle_long(&r, order, n);
  int *perm = xmalloc((size_t)c->p * sizeof *perm);
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  /* With validation points, 11 calibration rounds: before point n*k/10 (k = 0..9) and after
   * the last; every process sees the same list, so all take part in each round. */
  int calibrate = 0, round = 0;
  for (long i = 0; i < n && c->opt->calibration; i++) calibrate |= pts[i].validation;
  char label[160];
  for (long i = 0; i < n; i++) {
    int after_round = 0;
    while (calibrate && round < 10 && i == n * round / 10) {
      progress(c, "calibration", i, n, 1);
      calibration_round(c, round++, i);
      after_round = 1;
    }
    const point *pt = &pts[order[i]];
    comm_op o = {pt->prim, pt->pattern, pt->hs, pt->count, 0};
    comm_target(c, &o, perm);
    progress(c, point_label(label, sizeof label, pt->validation ? "validation" : sec, pt), i, n,
             i == 0 || after_round);
    int warm;
    int reps = measure_point(c, comm_run, &o, c->prm.min_reps, c->prm.min_point_s, out, &warm);
    if (c->s == 0)
      write_comm_record(c, pt->validation ? "validation" : type, &o, out, reps, warm, i);
  }
  if (calibrate) {
    progress(c, "calibration", n, n, 1);
    calibration_round(c, round, n);
  }
  free(out);
  free(perm);
  free(order);
}

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

enum { VALIDATION_VISITS = 3 };
static long draw_validation_points(probe_ctx *c, point *pts);

void measure_g(probe_ctx *c) {
  long m[64], k[64];
  int nm, nk;
  plan_grid_axes(c, m, &nm, k, &nk);
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
      add_warning(c, "validation skipped: --max-words %ld is too small (need >= 18)", c->hmax);
    return 0;
  }
  int per = c->prm.validation_per_combo;
  long n = 0;
  uint64_t r = rng_seed(c->opt->seed, 0x76616c /* "val" */, 0, 0);
  for (int cb = 0; cb < ncombos; cb++) {
    if (!(c->opt->primitives >> combos[cb][0] & 1) || !(c->opt->patterns >> combos[cb][1] & 1))
      continue;
    for (int i = 0; i < per; i++) {
      for (int tries = 0;; tries++) {
        double h = exp(log((double)lo) + rng_unit(&r) * (log((double)hi) - log((double)lo)));
        double cmax = h / 3 < 65535 ? h / 3 : 65535;
        long cnt = (long)floor(exp(log(3.0) + rng_unit(&r) * (log(cmax) - log(3.0))));
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
    add_warning(c,
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
void measure_validation(probe_ctx *c) {
  if (c->opt->sections >> SEC_G & 1) return;
  point *pts =
      xmalloc((size_t)(3 * c->prm.validation_per_combo * VALIDATION_VISITS + 1) * sizeof *pts);
  long n = draw_validation_points(c, pts);
  measure_points(c, "validation", "validation", pts, n, 0x76 /* 'v' */);
  free(pts);
}

/* ---- l --------------------------------------------------------------------------------------- */

static void op_sync(probe_ctx *c, const void *arg) {
  (void)c;
  (void)arg;
  bsp_sync();
}

static void op_shift1(probe_ctx *c, const void *arg) {
  (void)arg;
  bsp_put((c->s + 1) % c->p, c->src, c->dst, 0, WORD_BYTES);
  bsp_sync();
}

/* One word to every other process (to itself when p = 1), at word s of its area. */
static void op_all_others1(probe_ctx *c, const void *arg) {
  (void)arg;
  for (int i = 1; i < c->p; i++) {
    int t = (c->s + i) % c->p;
    bsp_put(t, c->src + t, c->dst, (probe_size_t)(c->s * WORD_BYTES), WORD_BYTES);
  }
  if (c->p == 1) bsp_put(0, c->src, c->dst, 0, WORD_BYTES);
  bsp_sync();
}

/* A latency test (l, and Tests 1-5 of the As suite): one kind of superstep, timed in batches. */
typedef struct {
  const char *name;
  op_fn fn;
  const char *what;
} latency_test;

static const char batch_note[] =
    "sample = time of a batch of `batch` back-to-back supersteps (after a common bsp_sync) "
    "divided by `batch`, max over processes";

static const latency_test l_variants[NLVARIANTS] = {
    [L_EMPTY] = {"empty", op_sync, "bsp_sync alone"},
    [L_SHIFT] = {"shift", op_shift1,
                 "one one-word bsp_put to process (pid+1) mod p, then bsp_sync"},
    [L_ALLTOALL] = {"alltoall", op_all_others1,
                    "one one-word bsp_put to every other process (to itself when p = 1), then "
                    "bsp_sync"},
};

const char *l_variant_name(int variant) { return l_variants[variant].name; }

int measure_l_variant(probe_ctx *c, int variant, int samples, double *out, long *batch) {
  return measure_batched(c, l_variants[variant].fn, NULL, samples, out, batch);
}

void measure_l(probe_ctx *c) {
  const latency_test *vars = l_variants;
  const int nv = NLVARIANTS;
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  char note[512];
  for (int v = 0; v < nv; v++) {
    char label[64];
    snprintf(label, sizeof label, "l %s", vars[v].name);
    progress(c, label, v, nv, 1);
    long batch;
    int n = measure_l_variant(c, v, c->prm.l_samples, out, &batch);
    if (c->s == 0) {
      jbuf *j = &c->j;
      j_begin(j, "l");
      j_str(j, "variant", vars[v].name);
      j_nums(j, "samples_s", out, n, "%.6g");
      j_int(j, "batch", batch);
      snprintf(note, sizeof note, "%s; %s", vars[v].what, batch_note);
      j_str(j, "note", note);
      emit(c);
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

void measure_as(probe_ctx *c) {
  static const latency_test lat[] = {
      {"Empty", op_sync, "Test 1: bsp_sync alone (the barrier)"},
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
  uint64_t r = rng_seed(c->opt->seed, 0x6173 /* "as" */, 0, 0);
  rng_shuffle_long(&r, order, n);
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  char note[640], label[80];
  for (long i = 0; i < n; i++) {
    long t = order[i];
    jbuf *j = &c->j;
    if (t < nlat) {
      snprintf(label, sizeof label, "as %s", lat[t].name);
      progress(c, label, i, n, i == 0);
      long batch;
      int ns = measure_batched(c, lat[t].fn, NULL, c->prm.l_samples, out, &batch);
      if (c->s == 0) {
        j_begin(j, "as");
        j_str(j, "test", lat[t].name);
        j_null(j, "h");
        j_nums(j, "samples_s", out, ns, "%.6g");
        j_int(j, "batch", batch);
        snprintf(note, sizeof note, "%s (words of 8 bytes); %s", lat[t].what, batch_note);
        j_str(j, "note", note);
        j_int(j, "seq", i);
        emit(c);
      }
    } else {
      long h = hs[t - nlat];
      snprintf(label, sizeof label, "as TotalExchange h=%ld", h);
      progress(c, label, i, n, i == 0);
      int warm;
      int reps =
          measure_point(c, op_total_exchange, &h, c->prm.min_reps, c->prm.min_point_s, out, &warm);
      if (c->s == 0) {
        j_begin(j, "as");
        j_str(j, "test", "TotalExchange");
        j_int(j, "h", h);
        j_int(j, "h_total", h * c->p);
        j_nums(j, "samples_s", out, reps, "%.6g");
        j_int(j, "reps", reps);
        j_int(j, "warmup", warm);
        j_str(j, "note",
              "each process bsp_puts h words to every process, itself included (h_total = p*h "
              "words sent and received per process; the paper's h), one put per destination, "
              "then bsp_sync; one superstep per sample from a common bsp_sync, max over "
              "processes; words of 8 bytes (the paper used 32-bit ints); cost per word = "
              "time / h_total");
        j_int(j, "seq", i);
        emit(c);
      }
    }
  }
  free(out);
}
