/*
 * calibrate.c - the short calibration (issue 17). One round measures a fixed set of kernels
 * with the probe's own timing code (f's dot products, two g points of put/alltoall, the l
 * variants empty and shift), with fewer repetitions than the full probe, so that the ratio of
 * each to a parameter file is the machine's drift. `bspprobe --calibrate` runs one round; a
 * probe runs 11 among its validation points (measure_comm.c). Part of bspprobe (see
 * bspprobe.c; the record is `calibration` in docs/probe-format.md).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* Few repetitions: a round must stay well under half a second at p = 2 on 2 cores, since a
 * probe runs 11 of them. */
enum { CAL_F_REPS = 5, CAL_G_MIN_REPS = 5, CAL_L_SAMPLES = 30 };
static const double cal_g_min_s = 5e-3;

static const int cal_f_kernels[] = {K_DOT_DOUBLE, K_DOT_DOUBLE_BLAS};
/* (h*, c) of put/alltoall: h = 2048 and 262144 words, points of both the quick and full grid */
static const long cal_g_points[][2] = {{256, 8}, {4096, 64}};
static const int cal_l_variants[] = {L_EMPTY, L_SHIFT};

enum {
  NF = sizeof cal_f_kernels / sizeof cal_f_kernels[0],
  NG = sizeof cal_g_points / sizeof cal_g_points[0],
  NL = sizeof cal_l_variants / sizeof cal_l_variants[0]
};

/* The pool the dot products rotate over (larger than the caches, as in measure_f): made and
 * filled by the first round, so that later rounds cost only their measurements. */
static void make_dot_pool(probe_ctx *c) {
  f_state *st = xmalloc(sizeof *st);
  memset(st, 0, sizeof *st);
  f_alloc_dot_pool(st, c);
  f_fill_pool(st, 0);
  c->cal_f = st;
}

void calibration_free(probe_ctx *c) {
  if (!c->cal_f) return;
  free(c->cal_f->pool);
  free(c->cal_f);
  c->cal_f = NULL;
}

void calibration_round(probe_ctx *c, int round, long seq) {
  const size_t stride = (size_t)c->gather_stride; /* >= every count of samples below */
  const int f_reps = c->opt->reps > 0 ? c->opt->reps : CAL_F_REPS;
  double *buf = xmalloc(stride * (NF + NG + NL) * sizeof *buf);
  double *f_out = buf, *g_out = buf + NF * stride, *l_out = buf + (NF + NG) * stride;
  if (c->s == 0 && !c->cal_f) make_dot_pool(c); /* the others wait in f's bsp_sync */
  double la[3];
  read_loadavg(la);
  const double t_begin = bspk_monotonic_seconds();

  /* f: process 0 alone, the others waiting in bsp_sync, as in measure_f */
  int fk[NF], nf = 0;
  for (int i = 0; i < NF; i++)
    if (f_kernel_available(cal_f_kernels[i])) fk[nf++] = cal_f_kernels[i];
  if (c->s == 0) {
    f_blas_one_thread();
    for (int i = 0; i < nf; i++)
      f_time_kernel(c->cal_f, fk[i], c->prm.dot_n, f_out + (size_t)i * stride, f_reps);
  }
  bsp_sync();

  /* g: the points that fit H_MAX (the area each process sends from and receives into) */
  int ng = 0, g_reps[NG], g_warm[NG];
  long g_hs[NG], g_count[NG];
  for (int i = 0; i < NG; i++) {
    long hs = cal_g_points[i][0], count = cal_g_points[i][1];
    if (hs * count > c->hmax) {
      if (round == 0)
        add_warning(c, "calibration: put/alltoall h*=%ld c=%ld left out: h = %ld > --max-words %ld",
                    hs, count, hs * count, c->hmax);
      continue;
    }
    g_hs[ng] = hs;
    g_count[ng] = count;
    g_reps[ng] = measure_comm_point(c, PRIM_PUT, PAT_ALLTOALL, hs, count, CAL_G_MIN_REPS,
                                    cal_g_min_s, g_out + (size_t)ng * stride, &g_warm[ng]);
    ng++;
  }

  /* l */
  int l_n[NL];
  long l_batch[NL];
  for (int i = 0; i < NL; i++)
    l_n[i] = measure_l_variant(c, cal_l_variants[i], CAL_L_SAMPLES, l_out + (size_t)i * stride,
                               &l_batch[i]);

  if (c->s == 0) {
    const double elapsed = bspk_monotonic_seconds() - t_begin;
    jbuf *j = &c->j;
    j_begin(j, "calibration");
    j_int(j, "round", round);
    if (seq >= 0) j_int(j, "seq", seq);
    else j_null(j, "seq");
    j_num(j, "t_s", t_begin - c->t0);
    j_num(j, "elapsed_s", elapsed);
    if (la[0] >= 0) j_nums(j, "loadavg", la, 3, "%.2f");
    else j_null(j, "loadavg");
    j_arr_begin(j, "f");
    for (int i = 0; i < nf; i++) {
      j_obj_begin(j, NULL);
      j_str(j, "kernel", f_kernel_names[fk[i]]);
      j_int(j, "n", c->prm.dot_n);
      j_num(j, "ops", 2.0 * (double)c->prm.dot_n);
      j_nums(j, "samples_s", f_out + (size_t)i * stride, f_reps, "%.6g");
      j_obj_end(j);
    }
    j_arr_end(j);
    j_arr_begin(j, "g");
    for (int i = 0; i < ng; i++) {
      j_obj_begin(j, NULL);
      j_str(j, "primitive", prim_names[PRIM_PUT]);
      j_str(j, "pattern", pattern_names[PAT_ALLTOALL]);
      j_int(j, "msg_words", g_hs[i]);
      j_int(j, "count", g_count[i]);
      j_int(j, "h", g_hs[i] * g_count[i]);
      j_nums(j, "samples_s", g_out + (size_t)i * stride, g_reps[i], "%.6g");
      j_int(j, "reps", g_reps[i]);
      j_int(j, "warmup", g_warm[i]);
      j_obj_end(j);
    }
    j_arr_end(j);
    j_arr_begin(j, "l");
    for (int i = 0; i < NL; i++) {
      j_obj_begin(j, NULL);
      j_str(j, "variant", l_variant_name(cal_l_variants[i]));
      j_nums(j, "samples_s", l_out + (size_t)i * stride, l_n[i], "%.6g");
      j_int(j, "batch", l_batch[i]);
      j_obj_end(j);
    }
    j_arr_end(j);
    emit(c);
  }
  free(buf);
}
