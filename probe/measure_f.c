/*
 * measure_f.c - computation speed f (thesis 3.1, app. A.2 measure_f_*) and the memcpy
 * reference for g; f's kernels are timed by the calibration rounds too (calibrate.c). Part of
 * bspprobe_core (see probe.h for the files' order).
 *
 * f: dot product and matrix product, int and double, plain loops and (when built with
 * BSPPROBE_HAVE_CBLAS) BLAS ddot/dgemm, each timed on process 0 alone while the other
 * processes wait in bsp_sync. The dot products rotate over a pool of vector pairs larger
 * than the caches, so every repetition reads cold data; the matrix products reuse their
 * matrices (the naive IJK loop is what the thesis and the Oxford probe time). Every result
 * goes into a volatile sink so that no computation can be optimized away.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#ifdef BSPPROBE_HAVE_CBLAS
#include <cblas.h>
/* OpenBLAS: its cblas.h defines OPENBLAS_VERSION; when another cblas.h was found but the
 * library is OpenBLAS (CMake defines BSPPROBE_HAVE_OPENBLAS), declare what we use of it. */
#if defined(OPENBLAS_VERSION)
#define PROBE_OPENBLAS 1
#elif defined(BSPPROBE_HAVE_OPENBLAS)
#define PROBE_OPENBLAS 1
void openblas_set_num_threads(int num_threads);
char *openblas_get_config(void);
char *openblas_get_corename(void);
#endif
#endif

#if defined(__GNUC__)
#define PROBE_NOINLINE __attribute__((noinline))
#else
#define PROBE_NOINLINE
#endif

/* ---- BLAS identification --------------------------------------------------------------------- */

const char *bspp_blas_name(char *buf, size_t n) {
#if defined(PROBE_OPENBLAS)
  /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." -> "openblas 0.3.21" */
  char v[64] = "";
  const char *cfg = openblas_get_config();
  if (!cfg || sscanf(cfg, " OpenBLAS %63s", v) != 1) snprintf(v, sizeof v, "(unknown version)");
  snprintf(buf, n, "openblas %s", v);
#elif defined(BSPPROBE_HAVE_CBLAS)
  snprintf(buf, n, "cblas");
#else
  snprintf(buf, n, "none");
#endif
  return buf;
}

#if defined(PROBE_OPENBLAS)
const char *bspp_blas_config(void) { return openblas_get_config(); }
const char *bspp_blas_corename(void) { return openblas_get_corename(); }
#else
const char *bspp_blas_config(void) { return NULL; }
const char *bspp_blas_corename(void) { return NULL; }
#endif

/* ---- kernels --------------------------------------------------------------------------------- */

static PROBE_NOINLINE double dot_double(const double *x, const double *y, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

static PROBE_NOINLINE int dot_int(const int *x, const int *y, long n) {
  int s = 0; /* inputs are 0..7 and n < 2^25: no overflow */
  for (long i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

/* C = A B, row-major n x n, the plain IJK loop (inner products along a row of A and a column
 * of B), once per element type: a macro, so that each is compiled for its own type. */
#define DEFINE_MATMUL_IJK(name, T)                                                \
  static PROBE_NOINLINE void name(int n, const T *a, const T *b, T *cm) {         \
    for (int i = 0; i < n; i++)                                                   \
      for (int j = 0; j < n; j++) {                                               \
        T s = 0;                                                                  \
        for (int k = 0; k < n; k++) s += a[(long)i * n + k] * b[(long)k * n + j]; \
        cm[(long)i * n + j] = s;                                                  \
      }                                                                           \
  }
DEFINE_MATMUL_IJK(matmul_ijk_double, double)
DEFINE_MATMUL_IJK(matmul_ijk_int, int)

/* ---- f --------------------------------------------------------------------------------------- */

const char *const bspp_f_kernel_names[NK] = {"dot_double_naive",   "dot_double_blas",
                                             "dot_int_naive",      "matmul_double_ijk",
                                             "matmul_double_blas", "matmul_int_ijk"};

int bspp_f_kernel_available(int k) {
#ifndef BSPPROBE_HAVE_CBLAS
  if (k == K_DOT_DOUBLE_BLAS || k == K_MM_DOUBLE_BLAS) return 0;
#endif
  return k >= 0 && k < NK;
}

void bspp_f_blas_one_thread(void) {
#if defined(PROBE_OPENBLAS)
  openblas_set_num_threads(1); /* f of one core: BLAS must not use the others' cores */
#endif
}

static void run_kernel(f_state *st, int k, long n) {
  probe_ctx *c = st->c;
  switch (k) {
    case K_DOT_DOUBLE:
    case K_DOT_DOUBLE_BLAS: {
      long pairs = st->pool_bytes / (long)(2 * n * sizeof(double));
      double *x = (double *)st->pool + 2 * n * (st->rot++ % pairs), *y = x + n;
#ifdef BSPPROBE_HAVE_CBLAS
      if (k == K_DOT_DOUBLE_BLAS) {
        c->sink = c->sink + cblas_ddot((int)n, x, 1, y, 1);
        break;
      }
#endif
      c->sink = c->sink + dot_double(x, y, n);
      break;
    }
    case K_DOT_INT: {
      long pairs = st->pool_bytes / (long)(2 * n * sizeof(int));
      int *x = (int *)st->pool + 2 * n * (st->rot++ % pairs), *y = x + n;
      c->isink = c->isink + dot_int(x, y, n);
      break;
    }
    case K_MM_DOUBLE:
      matmul_ijk_double((int)n, st->ad, st->bd, st->cd);
      c->sink = c->sink + st->cd[(long)(n / 2) * n + n / 3];
      break;
    case K_MM_DOUBLE_BLAS:
#ifdef BSPPROBE_HAVE_CBLAS
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, st->ad,
                  (int)n, st->bd, (int)n, 0.0, st->cd, (int)n);
      c->sink = c->sink + st->cd[(long)(n / 2) * n + n / 3];
#endif
      break;
    case K_MM_INT:
      matmul_ijk_int((int)n, st->ai, st->bi, st->ci);
      c->isink = c->isink + st->ci[(long)(n / 2) * n + n / 3];
      break;
  }
}

void bspp_f_fill_pool(f_state *st, int as_int) {
  if (as_int) {
    int *q = st->pool;
    long m = st->pool_bytes / (long)sizeof(int);
    for (long i = 0; i < m; i++) q[i] = (int)(i % 8);
  } else {
    double *q = st->pool;
    long m = st->pool_bytes / (long)sizeof(double);
    for (long i = 0; i < m; i++) q[i] = 0.125 * (double)(i % 8);
  }
}

/* st->pool: dot_pool_bytes (at least 4 vectors of dot_n doubles), not filled */
static void f_alloc_dot_pool(f_state *st, probe_ctx *c) {
  st->c = c;
  st->pool_bytes = c->prm.dot_pool_bytes;
  if (st->pool_bytes < (long)(4 * c->prm.dot_n * sizeof(double)))
    st->pool_bytes = (long)(4 * c->prm.dot_n * sizeof(double));
  st->pool = xmalloc((size_t)st->pool_bytes);
}

void bspp_f_time_kernel(f_state *st, int k, long n, double *samples, int reps) {
  run_kernel(st, k, n); /* warm-up */
  for (int r = 0; r < reps; r++) {
    double t0 = bspk_monotonic_seconds();
    run_kernel(st, k, n);
    samples[r] = bspk_monotonic_seconds() - t0;
  }
}

/* Process 0 alone; the others wait in one bsp_sync. */
void bspp_measure_f(probe_ctx *c) {
  if (c->s != 0) {
    bsp_sync();
    return;
  }
  const probe_params *pr = &c->prm;
  bspp_f_blas_one_thread();
  f_state st = {0};
  f_alloc_dot_pool(&st, c);
  long mm = (long)pr->gemm_n > pr->ijk_n ? pr->gemm_n : pr->ijk_n;
  mm *= mm;
  st.ad = xmalloc((size_t)mm * sizeof(double));
  st.bd = xmalloc((size_t)mm * sizeof(double));
  st.cd = xmalloc((size_t)mm * sizeof(double));
  long mi = (long)pr->ijk_n * pr->ijk_n;
  st.ai = xmalloc((size_t)mi * sizeof(int));
  st.bi = xmalloc((size_t)mi * sizeof(int));
  st.ci = xmalloc((size_t)mi * sizeof(int));
  for (long i = 0; i < mm; i++) {
    st.ad[i] = 0.001 * (double)(i % 1000);
    st.bd[i] = 0.002 * (double)(i % 500);
    st.cd[i] = 0;
  }
  for (long i = 0; i < mi; i++) {
    st.ai[i] = (int)(i % 8);
    st.bi[i] = (int)(i % 5);
    st.ci[i] = 0;
  }

  int order[NK], nk = 0;
  for (int k = 0; k < NK; k++)
    if (bspp_f_kernel_available(k)) order[nk++] = k;
  double *samples = xmalloc(sizeof(double) * 1024);
  char label[96], note[512];
  int pool_int = -1; /* what the pool holds now */
  for (int i = 0; i < nk; i++) {
    int k = order[i];
    long n;
    int reps;
    double ops;
    if (k == K_DOT_DOUBLE || k == K_DOT_DOUBLE_BLAS || k == K_DOT_INT) {
      int want_int = k == K_DOT_INT;
      if (pool_int != want_int) {
        bspp_f_fill_pool(&st, want_int);
        pool_int = want_int;
      }
      n = pr->dot_n;
      reps = pr->dot_reps;
      ops = 2.0 * (double)n;
      long pair_bytes = (long)(2 * n * (want_int ? sizeof(int) : sizeof(double)));
      snprintf(note, sizeof note,
               "process 0 alone, the other p-1 processes waiting in bsp_sync; %s; vectors rotated "
               "over %ld pairs (%.0f MiB) so each repetition reads data not in the caches; "
               "1 warm-up repetition not kept",
               k == K_DOT_DOUBLE_BLAS ? "cblas_ddot, BLAS on 1 thread"
                                      : (want_int ? "plain C loop, 32-bit int" : "plain C loop"),
               st.pool_bytes / pair_bytes, (double)st.pool_bytes / 1048576.0);
    } else {
      n = k == K_MM_DOUBLE_BLAS ? pr->gemm_n : pr->ijk_n;
      reps = k == K_MM_DOUBLE_BLAS ? pr->gemm_reps : pr->ijk_reps;
      ops = 2.0 * (double)n * (double)n * (double)n;
      snprintf(note, sizeof note,
               "process 0 alone, the other p-1 processes waiting in bsp_sync; %s; row-major "
               "n x n matrices reused between repetitions; 1 warm-up repetition not kept",
               k == K_MM_DOUBLE_BLAS
                   ? "cblas_dgemm, BLAS on 1 thread"
                   : (k == K_MM_INT ? "plain IJK loop, 32-bit int" : "plain IJK loop"));
    }
    if (c->opt->reps > 0) reps = c->opt->reps;
    if (reps > 1024) reps = 1024;
    snprintf(label, sizeof label, "f %s n=%ld", bspp_f_kernel_names[k], n);
    bspp_progress(c, label, i, nk, 1);
    /* the canary before and after (bspk_state.h), outside the timing; process 0 ran alone */
    double canary = bspk_canary_seconds(c->canary_buf, 1);
    bspk_machine_counters machine_before = bspk_machine_counters_now();
    bspk_thread_state before = bspk_thread_state_now();
    before.canary_s = canary;
    bspp_f_time_kernel(&st, k, n, samples, reps);
    bspk_thread_state after = bspk_thread_state_now();
    after.canary_s = bspk_canary_seconds(c->canary_buf, 1);
    bspk_thread_delta ran = bspk_thread_delta_of(before, after);
    char *state = bspk_state_json(&ran, 1, machine_before, bspk_machine_counters_now());
    jbuf *j = &c->j;
    bspp_json_begin(j, "f");
    bspp_json_str(j, "kernel", bspp_f_kernel_names[k]);
    bspp_json_int(j, "n", n);
    bspp_json_num(j, "ops", ops);
    bspp_json_nums(j, "samples_s", samples, reps, "%.6g");
    bspp_json_str(j, "note", note);
    bspp_json_raw(j, "state", state);
    bspp_emit(c);
    free(state);
  }
  free(samples);
  free(st.pool);
  free(st.ad);
  free(st.bd);
  free(st.cd);
  free(st.ai);
  free(st.bi);
  free(st.ci);
  bsp_sync();
}

/* ---- memcpy ---------------------------------------------------------------------------------- */

/* Copies of memcpy_bytes, source and destination rotated over a pool of pairs larger than
 * the caches. First (p > 1) process 0 alone, then every process at once (the max over
 * processes per sample): the last record is the reference for g, which moves data on all
 * processes at once (readers that keep one memcpy record keep the last). */
void bspp_measure_memcpy(probe_ctx *c) {
  const probe_params *pr = &c->prm;
  long block = pr->memcpy_bytes;
  const int npass = c->p > 1 ? 2 : 1;
  for (int pass = 0; pass < npass; pass++) {
    int concurrent = pass == npass - 1;
    int active = concurrent || c->s == 0;
    long pool = concurrent ? pr->memcpy_pool_bytes / c->p : pr->memcpy_pool_bytes;
    if (pool < 4 * block) pool = 4 * block;
    long pairs = pool / (2 * block);
    int reps = c->opt->reps > 0 ? c->opt->reps : pr->memcpy_reps;
    if (reps > c->gather_stride) reps = c->gather_stride;
    char *buf = NULL;
    if (active) {
      buf = xmalloc((size_t)(pairs * 2 * block));
      memset(buf, 1, (size_t)(pairs * 2 * block)); /* fault the pages in before timing */
    }
    bspp_progress(c, concurrent ? "memcpy, every process at once" : "memcpy, process 0 alone", pass,
                  npass, 1);
    double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
    if (concurrent) {
      for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        char *src = buf + 2 * block * ((r + 1) % pairs), *dst = src + block;
        bsp_sync();
        double t0 = bspk_monotonic_seconds();
        memcpy(dst, src, (size_t)block);
        double t = bspk_monotonic_seconds() - t0;
        c->isink = c->isink + dst[block / 2];
        if (r >= 0) c->local[r] = t;
      }
      bspp_gather_max(c, c->local, reps, out);
    } else if (c->s == 0) {
      for (int r = -1; r < reps; r++) {
        char *src = buf + 2 * block * ((r + 1) % pairs), *dst = src + block;
        double t0 = bspk_monotonic_seconds();
        memcpy(dst, src, (size_t)block);
        double t = bspk_monotonic_seconds() - t0;
        c->isink = c->isink + dst[block / 3];
        if (r >= 0) out[r] = t;
      }
    }
    if (!concurrent) bsp_sync(); /* the others wait here */
    if (c->s == 0) {
      char note[512];
      jbuf *j = &c->j;
      bspp_json_begin(j, "memcpy");
      bspp_json_int(j, "bytes", block);
      bspp_json_nums(j, "samples_s", out, reps, "%.6g");
      bspp_json_int(j, "procs", concurrent ? c->p : 1);
      snprintf(note, sizeof note,
               "%s; source and destination rotated over %ld pairs (%.0f MiB per process) larger "
               "than the caches; 1 warm-up copy not kept",
               concurrent ? "every process copies at once (after a common bsp_sync), sample = max "
                            "over processes"
                          : "process 0 alone, the other p-1 processes waiting in bsp_sync",
               pairs, (double)(pairs * 2 * block) / 1048576.0);
      bspp_json_str(j, "note", note);
      bspp_emit(c);
    }
    free(out);
    free(buf);
  }
}
