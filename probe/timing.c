/*
 * timing.c - how the communication sections time: one point (repetitions of one superstep),
 * batched latency samples, the h-relation of one g point and the l variants. The sections
 * (measure_comm.c) and the calibration rounds (calibrate.c) both time with these. Part of
 * bspprobe_core (see probe.h for the files' order; docs/probe-format.md for the records).
 *
 * How one sample is timed (g, validation, As TotalExchange): every process aligns with the
 * others (bsp_sync), reads the clock, issues its requests, calls bsp_sync (for send: and then
 * drains its queue with bsp_get_tag + bsp_move), reads the clock again. The sample is the
 * MAXIMUM over processes of these times. The per-process times are gathered to process 0
 * with bsp_put in a superstep after the repetitions of a point, outside the timed part.
 *
 * How many repetitions: one warm-up (two when it took under 1 ms), then enough that their
 * total is at least min_point_s, and at least min_reps, at most max_reps; the warm-up time
 * used for that decision is the max over processes, so every process decides alike. That is
 * bspp_time_point (the calibration's rule). The g grid, the validation points, memcpy_h and
 * the As suite's total exchange use bspp_time_point_adaptive instead (issue 39): after the
 * warm-ups, min_reps samples, then more in steps of half as many again until the
 * distribution-free 95% interval of their median (order statistics of the samples, each the
 * max over processes) is within +-target_ci_rel of the median, or max_reps, or the samples
 * took max_point_s. Process 0 decides from the gathered samples and tells the others (one
 * superstep each way per check, outside the timed samples).
 *
 * The canary (bspk_state.h) runs on every process before the warm-up of each batch and after
 * its last sample; its times go into the batch's state object.
 *
 * Latency tests (l, As Empty/Comp/Full/Simple/Scatter) are too short for one timing each:
 * a sample is a batch of back-to-back supersteps timed together, divided by the batch size.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* ---- the machine's state around a batch ---------------------------------------------------- */

void bspp_canary_before(probe_ctx *c) {
  bsp_sync(); /* every process runs it at once, as the one after the batch */
  c->canary_work = c->batches == c->canary_slow ? 3 : 1;
  c->canary_before_s = bspk_canary_seconds(c->canary_buf, c->canary_work);
}

void bspp_state_begin(probe_ctx *c) {
  if (c->s == 0) c->batch_machine = bspk_machine_counters_now();
  c->batch_start = bspk_thread_state_now();
  c->batch_start.canary_s = c->canary_before_s;
}

/* Appends this process's part of the state to local[n..) (bspk_thread_delta_pack), the canary
 * after the batch included; returns the new count. */
int bspp_state_end(probe_ctx *c, int n) {
  bspk_thread_state now = bspk_thread_state_now();
  now.canary_s = c->canary_before_s >= 0 ? bspk_canary_seconds(c->canary_buf, c->canary_work) : -1;
  bspk_thread_delta_pack(bspk_thread_delta_of(c->batch_start, now), c->local + n);
  c->canary_before_s = -1;
  c->canary_work = 1;
  c->batches++;
  return n + BSPP_STATE_WORDS;
}

/* Process 0, after the gather of bspp_state_end's words: the batch's state object. */
void bspp_state_collect(probe_ctx *c, int n) {
  if (c->s != 0) return;
  bspk_machine_counters now = bspk_machine_counters_now();
  bspk_thread_delta *d = xmalloc((size_t)c->p * sizeof *d);
  for (int t = 0; t < c->p; t++)
    d[t] = bspk_thread_delta_unpack(c->gather + (size_t)t * c->gather_stride + n);
  free(c->batch_state_json);
  c->batch_state_json = bspk_state_json(d, c->p, c->batch_machine, now);
  free(d);
}

/* ---- timing ---------------------------------------------------------------------------------- */

static double time_once(probe_ctx *c, op_fn fn, const void *arg) {
  bsp_sync(); /* common start */
  double t0 = bspk_monotonic_seconds();
  fn(c, arg);
  return bspk_monotonic_seconds() - t0;
}

int bspp_time_point(probe_ctx *c, op_fn fn, const void *arg, int min_reps, double min_s,
                    double *out, int *warmups) {
  bspp_canary_before(c);
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
  bspp_state_begin(c);
  for (int i = 0; i < reps; i++) c->local[i] = time_once(c, fn, arg);
  bspp_gather_max(c, c->local, bspp_state_end(c, reps), out);
  bspp_state_collect(c, reps);
  return reps;
}

/* ---- the adaptive rule ------------------------------------------------------------------------
 */

const char *const bspp_stop_names[BSPP_NSTOPS] = {"ci", "max_reps", "time", "fixed"};

int bspp_median_ci_rank(int n) {
  if (n < 6) return -1;
  /* P(B <= j) summed term by term; the terms in logarithms (2^-n underflows past n = 1074) */
  const double log_half_n = (double)n * log(0.5), lgn = lgamma((double)n + 1.0);
  double cdf = 0;
  int j = -1;
  for (int k = 0; k <= n / 2; k++) {
    cdf += exp(lgn - lgamma((double)k + 1.0) - lgamma((double)(n - k) + 1.0) + log_half_n);
    if (cdf > 0.025) break;
    j = k;
  }
  return j;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bspp_median_ci_rel(const double *x, int n) {
  int j = bspp_median_ci_rank(n);
  if (j < 0) return -1;
  double *v = xmalloc((size_t)n * sizeof *v);
  memcpy(v, x, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double rel = med > 0 ? (v[n - 1 - j] - v[j]) / (2 * med) : -1;
  free(v);
  return rel;
}

int bspp_adaptive_next(const bspp_adaptive_rule *r, const double *x, int n, double elapsed_s,
                       double *ci_rel, int *stop) {
  *ci_rel = bspp_median_ci_rel(x, n);
  if (n < r->min_reps) return r->min_reps;
  int timed_enough = elapsed_s >= r->min_s;
  if (timed_enough && *ci_rel >= 0 && *ci_rel <= r->target) {
    *stop = BSPP_STOP_CI;
    return 0;
  }
  if (n >= r->max_reps) {
    *stop = BSPP_STOP_MAX_REPS;
    return 0;
  }
  if (timed_enough && elapsed_s >= r->max_s) {
    *stop = BSPP_STOP_TIME;
    return 0;
  }
  int next = n + (n / 2 > 2 ? n / 2 : 2);
  double per = n > 0 ? elapsed_s / n : 0;
  if (per > 0) { /* no further than max_s (or min_s, while it is not reached) allows */
    double until = timed_enough ? r->max_s : r->min_s;
    double fit = ceil((until - elapsed_s) / per);
    if (fit < 1) fit = 1;
    if (fit < next - n) next = n + (int)fit;
  }
  if (next > r->max_reps) next = r->max_reps;
  return next > n ? next : n + 1;
}

/* The adaptive rule's outcome of a point: the interval's relative half-width and why it
 * stopped (docs/probe-format.md). */
void bspp_json_adaptive(jbuf *j, double ci_rel, int stop) {
  if (ci_rel >= 0) bspp_json_num(j, "median_ci_rel", ci_rel);
  else bspp_json_null(j, "median_ci_rel");
  bspp_json_str(j, "stop", stop >= 0 && stop < BSPP_NSTOPS ? bspp_stop_names[stop] : NULL);
}

int bspp_time_point_adaptive(probe_ctx *c, op_fn fn, const void *arg, double *out, int *warmups,
                             double *ci_rel, int *stop) {
  if (c->opt->reps > 0) {
    int reps = bspp_time_point(c, fn, arg, c->opt->reps, 0, out, warmups);
    if (c->s == 0) {
      *ci_rel = bspp_median_ci_rel(out, reps);
      *stop = BSPP_STOP_FIXED;
    }
    return reps;
  }
  double max_s = c->prm.max_point_s;
  if (c->point_max_s >= 0 && c->point_max_s < max_s) max_s = c->point_max_s;
  const bspp_adaptive_rule rule = {c->prm.min_reps, c->prm.max_reps, c->prm.min_point_s,
                                   c->prm.target_ci_rel, max_s};
  bspp_canary_before(c);
  double w = bspk_max_over_processes(time_once(c, fn, arg), c->allv);
  *warmups = 1;
  if (w < 1e-3) {
    time_once(c, fn, arg);
    *warmups = 2;
  }
  bspp_state_begin(c);
  int n = 0, target = rule.min_reps;
  for (;;) {
    for (; n < target; n++) c->local[n] = time_once(c, fn, arg);
    bspp_gather_max(c, c->local, n, out); /* process 0 decides from the samples kept */
    double next = 0;
    if (c->s == 0) {
      double elapsed = 0;
      for (int i = 0; i < n; i++) elapsed += out[i];
      next = bspp_adaptive_next(&rule, out, n, elapsed, ci_rel, stop);
    }
    next = bspk_max_over_processes(next, c->allv); /* process 0's decision, on every process */
    if (next <= n) break;
    target = (int)next;
  }
  bspp_gather_max(c, c->local, bspp_state_end(c, n), out);
  bspp_state_collect(c, n);
  return n;
}

int bspp_time_batched(probe_ctx *c, op_fn fn, const void *arg, int n, double *out,
                      long *batch_out) {
  double w = 0;
  bspp_canary_before(c);
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
  bspp_state_begin(c);
  for (int i = 0; i < n; i++) {
    bsp_sync();
    double t0 = bspk_monotonic_seconds();
    for (long k = 0; k < batch; k++) fn(c, arg);
    c->local[i] = (bspk_monotonic_seconds() - t0) / (double)batch;
  }
  bspp_gather_max(c, c->local, bspp_state_end(c, n), out);
  bspp_state_collect(c, n);
  *batch_out = batch;
  return n;
}

/* ---- the communication of one g point -------------------------------------------------------- */

/* Request k of process s goes to: alltoall (s + 1 + k mod (p-1)) mod p (itself when p = 1),
 * else o->target. It lands (put, hpput) at word k*h* of the destination's area, which is
 * free of other writers: for alltoall the senders to one destination use disjoint k mod
 * (p-1). Gets read word k*h* of the remote area into word k*h* of the local one. */
void bspp_comm_run(probe_ctx *c, const void *arg) {
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
      /* Zeroed first, and -1 taken in either width: a library whose bsp_get_tag writes an int
       * where its bsp.h names a wider bsp_size_t (MulticoreBSP's --compat mode: size_t) fills
       * only the low 4 bytes of status. */
      status = 0;
      bsp_get_tag(&status, tagbuf);
      if (status == (probe_size_t)-1 || status == (probe_size_t)(unsigned)-1) break;
      if (off + (size_t)status > cap)
        bsp_abort("bspprobe: process %d received more than %zu bytes\n", s, cap);
      bsp_move((char *)dst + off, status);
      off += (size_t)status;
    }
  }
}

void bspp_comm_target(probe_ctx *c, comm_op *o, int *perm) {
  if (o->pattern == PAT_PERMUTATION) {
    uint64_t r = bspp_rng_seed(c->opt->seed, 0x7065726dULL /* "perm" */,
                               (uint64_t)(o->prim * NPATTERNS + o->pattern) << 32 | (uint64_t)o->hs,
                               (uint64_t)o->count);
    bspp_rng_derangement(&r, perm, c->p);
    o->target = perm[c->s];
  } else {
    o->target = (c->s + 1) % c->p; /* shift; alltoall computes its own */
  }
}

int bspp_time_comm_point(probe_ctx *c, int prim, int pattern, long hs, long count, int min_reps,
                         double min_s, double *out, int *warmups) {
  comm_op o = {prim, pattern, hs, count, 0};
  int *perm = xmalloc((size_t)c->p * sizeof *perm);
  bspp_comm_target(c, &o, perm);
  free(perm);
  return bspp_time_point(c, bspp_comm_run, &o, min_reps, min_s, out, warmups);
}

/* ---- the l variants -------------------------------------------------------------------------- */

void bspp_op_sync(probe_ctx *c, const void *arg) {
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

const latency_test bspp_l_variants[NLVARIANTS] = {
    [L_EMPTY] = {"empty", bspp_op_sync, "bsp_sync alone"},
    [L_SHIFT] = {"shift", op_shift1,
                 "one one-word bsp_put to process (pid+1) mod p, then bsp_sync"},
    [L_ALLTOALL] = {"alltoall", op_all_others1,
                    "one one-word bsp_put to every other process (to itself when p = 1), then "
                    "bsp_sync"},
};

int bspp_time_l_variant(probe_ctx *c, int variant, int samples, double *out, long *batch) {
  return bspp_time_batched(c, bspp_l_variants[variant].fn, NULL, samples, out, batch);
}
