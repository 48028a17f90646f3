/*
 * measure_pp.c - the processor-processor suite of Kang et al. (`003_...` sec. 4.2.2, Fig. 8-11):
 * permutation, pingpong, scatter and broadcast of m bytes per destination, m from one word to
 * --pp-max-bytes, written with bsp_hpput into registered areas and bsp_sync (bsp.h only).
 * Part of bspprobe (see bspprobe.c); records: `pp` in docs/probe-format.md.
 *
 * A sample: bsp_sync (common start), clock, the operation's supersteps, clock; the max over
 * processes. Per point one warm-up repetition, after which every receiver checks the bytes it
 * got against what the sender wrote (a value made of the sender's pid and the word's offset)
 * and aborts on a difference: the suite is a test of the library too. Then repetitions until
 * their total reaches a few milliseconds. The points (pattern, m, root) run in a random order,
 * the same on every process, so that a drift of the machine spreads over all of them.
 *
 * With p = 1 every pattern sends to the process itself: permutation, scatter and broadcast in
 * one superstep, pingpong in two (there and back).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

enum { PP_PERMUTATION, PP_PINGPONG, PP_SCATTER, PP_BROADCAST, PP_NPATTERNS };
static const char *const pp_pattern_names[PP_NPATTERNS] = {"permutation", "pingpong", "scatter",
                                                           "broadcast"};

/* The most a scatter root sends in one superstep ((p-1) x m): bounds its send buffer. */
#define PP_ROOT_SEND_CAP (256LL << 20)
#define PP_MAX_REPS 100
#define PP_MAX_SIZES 96

typedef struct {
  int pattern;
  int root; /* scatter, broadcast; -1 for the others */
  long long bytes;
} pp_point;

/* One process's buffers. Only the destinations are registered (hpput's source need not be). */
typedef struct {
  uint64_t *send; /* word k = pp_word(pid, k); scatter's block j starts at word j*m/8 */
  uint64_t *recv; /* registered, max_bytes on every process */
  uint64_t *back; /* registered: where pingpong returns to process 0 (one word elsewhere) */
  int *perm;      /* permutation: pi of the current point */
  long long max_bytes;
} pp_bufs;

/* What sender `from` writes at word k of its send buffer; never 0, so a cleared word shows. */
static inline uint64_t pp_word(int from, long long k) {
  return (uint64_t)(from + 1) << 40 | (uint64_t)k;
}

static int ceil_lg(int p) {
  int k = 0;
  while ((1 << k) < p) k++;
  return k;
}

static int pp_supersteps(int pattern, int p) {
  switch (pattern) {
    case PP_PINGPONG: return 2;
    case PP_BROADCAST: return p > 1 ? ceil_lg(p) : 1;
    default: return 1;
  }
}

/* The operation of one sample: its supersteps, the last bsp_sync included. */
static void pp_run(const probe_ctx *c, const pp_bufs *b, const pp_point *pt) {
  const int p = c->p, s = c->s;
  const probe_size_t m = (probe_size_t)pt->bytes;
  switch (pt->pattern) {
    case PP_PERMUTATION:
      bsp_hpput(b->perm[s], b->send, b->recv, 0, m);
      bsp_sync();
      break;
    case PP_PINGPONG:
      if (s == 0) bsp_hpput(p - 1, b->send, b->recv, 0, m);
      bsp_sync();
      if (s == p - 1) bsp_hpput(0, b->recv, b->back, 0, m);
      bsp_sync();
      break;
    case PP_SCATTER:
      if (s == pt->root) {
        if (p == 1) bsp_hpput(s, b->send, b->recv, 0, m);
        for (int j = 0; j < p - 1; j++) /* block j to the j-th process after the root */
          bsp_hpput((pt->root + 1 + j) % p, (const char *)b->send + (size_t)j * (size_t)m, b->recv,
                    0, m);
      }
      bsp_sync();
      break;
    case PP_BROADCAST:
      if (p == 1) {
        bsp_hpput(s, b->send, b->recv, 0, m);
        bsp_sync();
        break;
      }
      /* binomial tree: in the step of `span`, relative ranks below span (who hold the data)
       * send to rank + span; the root sends from its send buffer, the others pass on recv */
      for (int span = 1, v = (s - pt->root + p) % p; span < p; span *= 2) {
        if (v < span && v + span < p)
          bsp_hpput((s + span) % p, v == 0 ? (const void *)b->send : b->recv, b->recv, 0, m);
        bsp_sync();
      }
      break;
  }
}

static void pp_expect(const probe_ctx *c, const pp_point *pt, const uint64_t *got, const char *area,
                      int from, long long first) {
  long long words = pt->bytes / WORD_BYTES;
  char root[32] = "";
  if (pt->root >= 0) snprintf(root, sizeof root, " from root %d", pt->root);
  for (long long k = 0; k < words; k++)
    if (got[k] != pp_word(from, first + k))
      bsp_abort(
          "bspprobe: pp %s of %lld bytes%s: process %d got wrong data from process %d in "
          "its %s area: word %lld is 0x%llx, expected 0x%llx\n",
          pp_pattern_names[pt->pattern], pt->bytes, root, c->s, from, area, k,
          (unsigned long long)got[k], (unsigned long long)pp_word(from, first + k));
}

/* After one repetition: does this process hold what it was sent? */
static void pp_check(const probe_ctx *c, const pp_bufs *b, const pp_point *pt) {
  const int p = c->p, s = c->s, root = pt->root;
  switch (pt->pattern) {
    case PP_PERMUTATION:
      for (int from = 0; from < p; from++)
        if (b->perm[from] == s) pp_expect(c, pt, b->recv, "receive", from, 0);
      break;
    case PP_PINGPONG:
      if (s == p - 1) pp_expect(c, pt, b->recv, "receive", 0, 0);
      if (s == 0) pp_expect(c, pt, b->back, "return", 0, 0);
      break;
    case PP_SCATTER:
      if (p == 1) pp_expect(c, pt, b->recv, "receive", root, 0);
      else if (s != root)
        pp_expect(c, pt, b->recv, "receive", root,
                  (long long)((s - root - 1 + p) % p) * (pt->bytes / WORD_BYTES));
      break;
    case PP_BROADCAST:
      if (p == 1 || s != root) pp_expect(c, pt, b->recv, "receive", root, 0);
      break;
  }
}

/* Message sizes: 8 bytes doubling up to max, and 1.5 x 2^k in the upper half of the exponents
 * (for fitting between the powers of two); all multiples of the word. Returns the count. */
static int pp_sizes(long long max, long long *sz) {
  int n = 0, top = 3;
  while ((1LL << (top + 1)) <= max) top++;
  for (int k = 3; k <= top; k++) sz[n++] = 1LL << k;
  int half = (3 + top + 1) / 2;
  for (int k = half > 4 ? half : 4; (3LL << (k - 1)) <= max && n < PP_MAX_SIZES; k++)
    sz[n++] = 3LL << (k - 1);
  return n;
}

static int pp_reps(const probe_ctx *c, double warmup_s) {
  if (c->opt->reps > 0) return c->opt->reps;
  double total = c->opt->quick ? 3e-3 : 10e-3;
  int lo = c->opt->quick ? 3 : 5;
  double r = ceil(total / (warmup_s > 1e-9 ? warmup_s : 1e-9));
  return r > PP_MAX_REPS ? PP_MAX_REPS : r < lo ? lo : (int)r;
}

void bspp_measure_pp(probe_ctx *c) {
  const int p = c->p, s = c->s;
  const long long max_bytes = c->opt->pp_max_bytes > 0 ? c->opt->pp_max_bytes
                              : c->opt->quick          ? 4LL << 20
                                                       : 32LL << 20;
  long long sizes[PP_MAX_SIZES];
  int nsizes = pp_sizes(max_bytes, sizes);

  /* the points: every process is the root in turn in the full mode, process 0 in the quick */
  int nroots = c->opt->quick ? 1 : p;
  pp_point *points = xmalloc((size_t)nsizes * (size_t)(2 + 2 * nroots) * sizeof *points);
  long npoints = 0;
  long long scatter_max = 0, scatter_skipped_from = 0;
  for (int pat = 0; pat < PP_NPATTERNS; pat++)
    for (int i = 0; i < nsizes; i++) {
      int rooted = pat == PP_SCATTER || pat == PP_BROADCAST;
      if (pat == PP_SCATTER) {
        if ((long long)(p > 1 ? p - 1 : 1) * sizes[i] > PP_ROOT_SEND_CAP) {
          if (!scatter_skipped_from || sizes[i] < scatter_skipped_from)
            scatter_skipped_from = sizes[i];
          continue;
        }
        if (sizes[i] > scatter_max) scatter_max = sizes[i];
      }
      for (int r = 0; r < (rooted ? nroots : 1); r++)
        points[npoints++] = (pp_point){pat, rooted ? r : -1, sizes[i]};
    }
  long *order = xmalloc((size_t)npoints * sizeof *order);
  for (long i = 0; i < npoints; i++) order[i] = i;
  uint64_t rng = bspp_rng_seed(c->opt->seed, 0x70702d6f /* "pp-o" */, (uint64_t)p, 0);
  bspp_rng_shuffle_long(&rng, order, npoints);

  /* buffers: a would-be scatter root sends (p-1) blocks, everyone else one message */
  pp_bufs b = {0};
  b.max_bytes = max_bytes;
  long long send_bytes = max_bytes;
  if (s < nroots && (long long)(p > 1 ? p - 1 : 1) * scatter_max > send_bytes)
    send_bytes = (long long)(p > 1 ? p - 1 : 1) * scatter_max;
  long long back_bytes = s == 0 ? max_bytes : WORD_BYTES;
  b.send = xmalloc((size_t)send_bytes);
  b.recv = xmalloc((size_t)max_bytes);
  b.back = xmalloc((size_t)back_bytes);
  b.perm = xmalloc((size_t)p * sizeof *b.perm);
  for (long long k = 0; k < send_bytes / WORD_BYTES; k++) b.send[k] = pp_word(s, k);
  memset(b.recv, 0, (size_t)max_bytes); /* fault the pages in before timing */
  memset(b.back, 0, (size_t)back_bytes);
  bsp_push_reg(b.recv, (probe_size_t)max_bytes);
  bsp_push_reg(b.back, (probe_size_t)back_bytes);
  bsp_sync();

  char note[256] = "";
  if (scatter_skipped_from)
    snprintf(note, sizeof note,
             "sizes from %lld bytes skipped: the root would send (p-1) x m > %lld MiB in all",
             scatter_skipped_from, PP_ROOT_SEND_CAP >> 20);
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  for (long seq = 0; seq < npoints; seq++) {
    const pp_point *pt = &points[order[seq]];
    bspp_progress(c, "pp", seq, npoints, seq == 0);
    if (pt->pattern == PP_PERMUTATION) {
      uint64_t r = bspp_rng_seed(c->opt->seed, 0x70702d70 /* "pp-p" */, (uint64_t)pt->bytes, 0);
      bspp_rng_derangement(&r, b.perm, p);
    }

    /* warm-up, with cleared destinations, then the check of what arrived */
    memset(b.recv, 0, (size_t)pt->bytes);
    if (s == 0) memset(b.back, 0, (size_t)pt->bytes);
    bsp_sync();
    double t0 = bspk_monotonic_seconds();
    pp_run(c, &b, pt);
    double w = bspk_monotonic_seconds() - t0;
    pp_check(c, &b, pt);
    int reps = pp_reps(c, bspk_max_over_processes(w, c->allv));

    for (int r = 0; r < reps; r++) {
      bsp_sync();
      t0 = bspk_monotonic_seconds();
      pp_run(c, &b, pt);
      c->local[r] = bspk_monotonic_seconds() - t0;
    }
    bspp_gather_max(c, c->local, reps, out);

    if (s == 0) {
      jbuf *j = &c->j;
      bspp_json_begin(j, "pp");
      bspp_json_str(j, "pattern", pp_pattern_names[pt->pattern]);
      bspp_json_str(j, "primitive", "hpput");
      bspp_json_int(j, "bytes", pt->bytes);
      if (pt->root >= 0) bspp_json_int(j, "root", pt->root);
      else bspp_json_null(j, "root");
      bspp_json_int(j, "supersteps", pp_supersteps(pt->pattern, p));
      bspp_json_nums(j, "samples_s", out, reps, "%.6g");
      bspp_json_int(j, "reps", reps);
      bspp_json_int(j, "warmup", 1);
      bspp_json_int(j, "seq", seq);
      if (pt->pattern == PP_SCATTER && note[0]) bspp_json_str(j, "note", note);
      bspp_emit(c);
    }
  }

  bsp_pop_reg(b.back);
  bsp_pop_reg(b.recv);
  bsp_sync();
  free(out);
  free(b.perm);
  free(b.back);
  free(b.recv);
  free(b.send);
  free(order);
  free(points);
}
