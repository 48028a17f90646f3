/*
 * probe_ctx.c - a probe context: the names of sections, primitives and patterns, the mode's
 * settings, the registered communication areas and the gather to process 0 that every
 * measurement uses. bspprobe makes one per run; the algorithm drivers make one for the short
 * calibration they run inside themselves (calibration.h, calibrate.c). Part of bspprobe_core
 * (see probe.h for the files' order).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "probe.h"

const char *const bspp_section_names[NSECTIONS] = {"f",  "memcpy",     "hw",  "g",  "l",
                                                   "as", "validation", "mem", "pp", "disk"};
const char *const bspp_prim_names[NPRIMS] = {"put", "hpput", "get", "hpget", "send"};
const char *const bspp_pattern_names[NPATTERNS] = {"alltoall", "permutation", "shift"};

/* The two modes' settings, read as a table (clang-format would give each its own line). */
// clang-format off
static void probe_set_params(probe_params *pr, int quick) {
  if (quick) {
    *pr = (probe_params){
        .min_reps = 6, .max_reps = 200, .min_point_s = 0,
        .target_ci_rel = 0.05, .max_point_s = 4e-3, .g_budget_s = 20, .mem_reps = 5,
        .l_samples = 100, .l_batch_s = 100e-6, .validation_per_combo = 8,
        .dot_n = 1L << 20, .dot_pool_bytes = 64L << 20, .dot_reps = 20,
        .ijk_n = 200, .ijk_reps = 5, .gemm_n = 1000, .gemm_reps = 5,
        .memcpy_bytes = 8L << 20, .memcpy_pool_bytes = 64L << 20, .memcpy_reps = 20};
  } else {
    *pr = (probe_params){
        .min_reps = 6, .max_reps = 400, .min_point_s = 0,
        .target_ci_rel = 0.03, .max_point_s = 20e-3, .g_budget_s = 90, .mem_reps = 6,
        .l_samples = 500, .l_batch_s = 100e-6, .validation_per_combo = 30,
        .dot_n = 1L << 21, .dot_pool_bytes = 128L << 20, .dot_reps = 30,
        .ijk_n = 500, .ijk_reps = 5, .gemm_n = 2000, .gemm_reps = 5,
        .memcpy_bytes = 8L << 20, .memcpy_pool_bytes = 128L << 20, .memcpy_reps = 50};
  }
}
// clang-format on

probe_ctx *bspp_ctx_setup(const probe_opts *opt, long hmax) {
  probe_ctx *c = xmalloc(sizeof *c);
  memset(c, 0, sizeof *c);
  c->opt = opt;
  c->p = (int)bsp_nprocs();
  c->s = (int)bsp_pid();
  c->t0 = c->sec_t0 = bspk_monotonic_seconds();
  probe_set_params(&c->prm, c->opt->quick);
  c->hmax = hmax;
  c->area_words = c->hmax > c->p ? c->hmax : c->p;
  c->gather_stride = c->prm.max_reps;
  if (c->prm.l_samples > c->gather_stride) c->gather_stride = c->prm.l_samples;
  if (c->prm.memcpy_reps > c->gather_stride) c->gather_stride = c->prm.memcpy_reps;
  if (c->opt->reps > c->gather_stride) c->gather_stride = c->opt->reps;
  c->gather_stride += BSPP_STATE_WORDS; /* the machine's state rides with the samples */
  c->canary_buf = bspk_canary_buffer(); /* NULL (out of memory): no canary, null in the state */
  c->canary_before_s = -1;
  c->point_max_s = -1;
  c->canary_work = 1;
  c->canary_slow = bspk_canary_slow_batch();
  c->src = xmalloc((size_t)c->area_words * WORD_BYTES);
  c->dst = xmalloc((size_t)c->area_words * WORD_BYTES);
  for (long i = 0; i < c->area_words; i++) { /* touch every page before timing */
    c->src[i] = (double)(i + c->s);
    c->dst[i] = 0;
  }
  c->gather = xmalloc((size_t)c->p * (size_t)c->gather_stride * sizeof(double));
  c->allv = xmalloc((size_t)c->p * sizeof(double));
  c->local = xmalloc((size_t)c->gather_stride * sizeof(double));
  memset(c->gather, 0, (size_t)c->p * (size_t)c->gather_stride * sizeof(double));
  bsp_push_reg(c->src, (probe_size_t)(c->area_words * WORD_BYTES));
  bsp_push_reg(c->dst, (probe_size_t)(c->area_words * WORD_BYTES));
  bsp_push_reg(c->gather, (probe_size_t)((size_t)c->p * c->gather_stride * sizeof(double)));
  bsp_push_reg(c->allv, (probe_size_t)(c->p * sizeof(double)));
  bsp_sync();
  return c;
}

void bspp_ctx_teardown(probe_ctx *c) {
  bsp_pop_reg(c->allv);
  bsp_pop_reg(c->gather);
  bsp_pop_reg(c->dst);
  bsp_pop_reg(c->src);
  bsp_sync();
  free(c->local);
  free(c->allv);
  free(c->gather);
  free(c->dst);
  free(c->src);
  free(c->j.b);
  free(c->batch_state_json);
  free(c->cal_f.pool);
  free(c->canary_buf);
  free(c);
}

void bspp_gather_max(probe_ctx *c, const double *local, int n, double *out) {
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
