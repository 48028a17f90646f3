/*
 * calibrate.c - the short calibration (issue 17). One round measures a fixed set of kernels
 * with the probe's own timing code (f's dot products, two g points of put/alltoall, the l
 * variants empty and shift), with fewer repetitions than the full probe, so that the ratio of
 * each to a parameter file is the machine's drift. `bspprobe --calibrate` runs one round; a
 * probe runs 11 among its validation points (measure_comm.c); the algorithm drivers run it
 * inside themselves through calibration.h (below). Part of bspprobe_core (see probe.h for the
 * files' order; the record is `calibration` in docs/probe-format.md).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "calibration.h"
#include "probe.h"

/* Few repetitions: a round must stay well under half a second at p = 2 on 2 cores, since a
 * probe runs 11 of them. Each quantity is measured in CAL_PASSES passes over the whole set,
 * so that a pause of a few milliseconds (a VM's stolen time) that hits one pass can be told
 * from a machine that is slower throughout (readers take the smaller of the passes' medians). */
enum { CAL_PASSES = 2, CAL_F_REPS = 5, CAL_G_MIN_REPS = 5, CAL_L_SAMPLES = 30 };
static const double cal_g_min_s = 10e-3;

static const int cal_f_kernels[] = {K_DOT_DOUBLE, K_DOT_DOUBLE_BLAS};
/* (h*, c) of put/alltoall: h = 2048 and 262144 words, points of both the quick and full grid */
static const long cal_g_points[][2] = {{256, 8}, {4096, 64}};
static const int cal_l_variants[] = {L_EMPTY, L_SHIFT};

enum {
  NF = sizeof cal_f_kernels / sizeof cal_f_kernels[0],
  NG = sizeof cal_g_points / sizeof cal_g_points[0],
  NL = sizeof cal_l_variants / sizeof cal_l_variants[0]
};

/* The pool the dot products rotate over, one per process (larger than its share of the
 * caches, as in measure_f): the probe's pool divided among the processes, at least two pairs
 * of vectors; made and filled by the first round, so that later rounds cost only their
 * measurements (the context frees it). */
static void make_dot_pool(probe_ctx *c) {
  f_state *st = &c->cal_f;
  memset(st, 0, sizeof *st);
  st->c = c;
  long two_pairs = (long)(4 * c->prm.dot_n * (long)sizeof(double));
  st->pool_bytes = c->prm.dot_pool_bytes / c->p;
  if (st->pool_bytes < two_pairs) st->pool_bytes = two_pairs;
  st->pool = xmalloc((size_t)st->pool_bytes);
  bspp_f_fill_pool(st, 0);
}

/* The samples of one pass. */
typedef struct {
  double *f, *g, *l; /* NF, NG, NL series of `stride` samples */
  int g_reps[NG], g_warm[NG], l_n[NL];
  long l_batch[NL];
} cal_pass;

static void measure_pass(probe_ctx *c, cal_pass *ps, const int *fk, int nf, int f_reps,
                         const long (*g_pts)[2], int ng) {
  const size_t stride = (size_t)c->gather_stride;
  /* f: every process at once on its own vectors, each sample the max over processes (what a
   * BSP run's compute sees, a competing load on any core included) */
  if (c->s == 0) bspp_f_blas_one_thread();
  for (int i = 0; i < nf; i++) {
    bsp_sync(); /* a common start */
    bspp_f_time_kernel(&c->cal_f, fk[i], c->prm.dot_n, c->local, f_reps);
    bspp_gather_max(c, c->local, f_reps, ps->f + (size_t)i * stride);
  }
  for (int i = 0; i < ng; i++)
    ps->g_reps[i] =
        bspp_time_comm_point(c, PRIM_PUT, PAT_ALLTOALL, g_pts[i][0], g_pts[i][1], CAL_G_MIN_REPS,
                             cal_g_min_s, ps->g + (size_t)i * stride, &ps->g_warm[i]);
  for (int i = 0; i < NL; i++)
    ps->l_n[i] = bspp_time_l_variant(c, cal_l_variants[i], CAL_L_SAMPLES,
                                     ps->l + (size_t)i * stride, &ps->l_batch[i]);
}

static void write_round(probe_ctx *c, int round, long seq, double t_begin, const double la[3],
                        const cal_pass *passes, const int *fk, int nf, int f_reps,
                        const long (*g_pts)[2], int ng) {
  const size_t stride = (size_t)c->gather_stride;
  const double elapsed = bspk_monotonic_seconds() - t_begin;
  jbuf *j = &c->j;
  bspp_json_begin(j, "calibration");
  bspp_json_int(j, "round", round);
  if (seq >= 0) bspp_json_int(j, "seq", seq);
  else bspp_json_null(j, "seq");
  bspp_json_num(j, "t_s", t_begin - c->t0);
  bspp_json_num(j, "elapsed_s", elapsed);
  bspp_json_int(j, "passes", CAL_PASSES);
  if (la[0] >= 0) bspp_json_nums(j, "loadavg", la, 3, "%.2f");
  else bspp_json_null(j, "loadavg");
  bspp_json_arr_begin(j, "f");
  for (int k = 0; k < CAL_PASSES; k++)
    for (int i = 0; i < nf; i++) {
      bspp_json_obj_begin(j, NULL);
      bspp_json_str(j, "kernel", bspp_f_kernel_names[fk[i]]);
      bspp_json_int(j, "n", c->prm.dot_n);
      bspp_json_num(j, "ops", 2.0 * (double)c->prm.dot_n);
      bspp_json_int(j, "procs", c->p);
      bspp_json_nums(j, "samples_s", passes[k].f + (size_t)i * stride, f_reps, "%.6g");
      bspp_json_int(j, "pass", k);
      bspp_json_obj_end(j);
    }
  bspp_json_arr_end(j);
  bspp_json_arr_begin(j, "g");
  for (int k = 0; k < CAL_PASSES; k++)
    for (int i = 0; i < ng; i++) {
      bspp_json_obj_begin(j, NULL);
      bspp_json_str(j, "primitive", bspp_prim_names[PRIM_PUT]);
      bspp_json_str(j, "pattern", bspp_pattern_names[PAT_ALLTOALL]);
      bspp_json_int(j, "msg_words", g_pts[i][0]);
      bspp_json_int(j, "count", g_pts[i][1]);
      bspp_json_int(j, "h", g_pts[i][0] * g_pts[i][1]);
      bspp_json_nums(j, "samples_s", passes[k].g + (size_t)i * stride, passes[k].g_reps[i], "%.6g");
      bspp_json_int(j, "reps", passes[k].g_reps[i]);
      bspp_json_int(j, "warmup", passes[k].g_warm[i]);
      bspp_json_int(j, "pass", k);
      bspp_json_obj_end(j);
    }
  bspp_json_arr_end(j);
  bspp_json_arr_begin(j, "l");
  for (int k = 0; k < CAL_PASSES; k++)
    for (int i = 0; i < NL; i++) {
      bspp_json_obj_begin(j, NULL);
      bspp_json_str(j, "variant", bspp_l_variants[cal_l_variants[i]].name);
      bspp_json_nums(j, "samples_s", passes[k].l + (size_t)i * stride, passes[k].l_n[i], "%.6g");
      bspp_json_int(j, "batch", passes[k].l_batch[i]);
      bspp_json_int(j, "pass", k);
      bspp_json_obj_end(j);
    }
  bspp_json_arr_end(j);
  bspp_emit(c);
}

void bspp_run_calibration_round(probe_ctx *c, int round, long seq) {
  const size_t stride = (size_t)c->gather_stride; /* >= every count of samples below */
  const int f_reps = c->opt->reps > 0 ? c->opt->reps : CAL_F_REPS;
  const size_t per_pass = stride * (NF + NG + NL);
  double *buf = xmalloc(per_pass * CAL_PASSES * sizeof *buf);
  cal_pass passes[CAL_PASSES];
  for (int k = 0; k < CAL_PASSES; k++) {
    double *b = buf + (size_t)k * per_pass;
    passes[k] = (cal_pass){.f = b, .g = b + NF * stride, .l = b + (NF + NG) * stride};
  }
  if (!c->cal_f.pool) make_dot_pool(c);
  double la[3];
  bspp_read_loadavg(la);
  const double t_begin = bspk_monotonic_seconds();

  int fk[NF], nf = 0;
  for (int i = 0; i < NF; i++)
    if (bspp_f_kernel_available(cal_f_kernels[i])) fk[nf++] = cal_f_kernels[i];
  /* g: the points that fit H_MAX (the area each process sends from and receives into) */
  long g_pts[NG][2];
  int ng = 0;
  for (int i = 0; i < NG; i++) {
    long hs = cal_g_points[i][0], count = cal_g_points[i][1];
    if (hs * count > c->hmax) {
      if (round == 0)
        bspp_add_warning(
            c, "calibration: put/alltoall h*=%ld c=%ld left out: h = %ld > --max-words %ld", hs,
            count, hs * count, c->hmax);
      continue;
    }
    g_pts[ng][0] = hs;
    g_pts[ng][1] = count;
    ng++;
  }
  /* The first round of a run warms up first (a pass of g and l not kept): the library's
   * buffers for the large h-relation, and the pages behind them, are made on their first use. */
  for (int k = round == 0 ? -1 : 0; k < CAL_PASSES; k++)
    measure_pass(c, &passes[k < 0 ? 0 : k], fk, k < 0 ? 0 : nf, f_reps, (const long(*)[2])g_pts,
                 ng);
  if (c->s == 0)
    write_round(c, round, seq, t_begin, la, passes, fk, nf, f_reps, (const long(*)[2])g_pts, ng);
  free(buf);
}

/* ---- the calibration inside another program (calibration.h) ---------------------------- */

struct bspp_calibration {
  probe_opts opts;
  probe_ctx *ctx;
};

bspp_calibration *bspp_calibration_begin(int quick) {
  bspp_calibration *cal = xmalloc(sizeof *cal);
  memset(cal, 0, sizeof *cal);
  cal->opts.quick = quick;
  cal->opts.calibration = 1;
  cal->opts.calibrate = 1;
  long max_words = 0; /* the areas of its own context: the larger g point's h */
  for (int i = 0; i < NG; i++)
    if (cal_g_points[i][0] * cal_g_points[i][1] > max_words)
      max_words = cal_g_points[i][0] * cal_g_points[i][1];
  cal->ctx = bspp_ctx_setup(&cal->opts, max_words);
  return cal;
}

const char *bspp_calibration_round(bspp_calibration *cal, int round) {
  probe_ctx *c = cal->ctx;
  c->j.n = 0;
  bspp_run_calibration_round(c, round, -1); /* c->out is NULL: the record stays in c->j */
  if (c->s != 0 || c->j.n == 0) return NULL;
  if (c->j.b[c->j.n - 1] == '\n') c->j.b[--c->j.n] = '\0'; /* bspp_emit's line end */
  return c->j.b;
}

void bspp_calibration_end(bspp_calibration *cal) {
  bspp_ctx_teardown(cal->ctx);
  free(cal);
}
