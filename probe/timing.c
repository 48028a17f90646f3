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
 * used for that decision is the max over processes, so every process decides alike.
 *
 * Latency tests (l, As Empty/Comp/Full/Simple/Scatter) are too short for one timing each:
 * a sample is a batch of back-to-back supersteps timed together, divided by the batch size.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>

#include "probe.h"

/* ---- the machine's state around a batch ---------------------------------------------------- */

void bspp_state_begin(probe_ctx *c) {
  if (c->s == 0) c->batch_machine = bspk_machine_counters_now();
  c->batch_start = bspk_thread_state_now();
}

/* Appends this process's part of the state to local[n..) (bspk_thread_delta_pack); returns the
 * new count. */
int bspp_state_end(probe_ctx *c, int n) {
  bspk_thread_delta_pack(bspk_thread_delta_of(c->batch_start, bspk_thread_state_now()),
                         c->local + n);
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

int bspp_time_batched(probe_ctx *c, op_fn fn, const void *arg, int n, double *out,
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
