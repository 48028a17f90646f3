/*
 * measure_mem.c - the processor-memory suite of Kang et al. (`003_...` sec. 4.2.1): the time
 * to read (sum) or write N int or double elements at stride S (and, under --mem-ops and
 * --mem-elems, to multiply or divide, and single precision: their Fig. 45-56, the operations
 * of their Appendix I code A.1), out of cache (Fig. 6: the caches flushed before each sample)
 * and in cache (Fig. 7: the array walked once, then passes timed back to back), by process 0
 * alone and by every process at once; and a STREAM-style copy as the bandwidth reference.
 * Part of bspprobe (see bspprobe.c); the records (`caches`, `mem`, `stream`) are described in
 * docs/probe-format.md.
 *
 * The grid is chosen from the cache sizes: for each level (L1, L2, ..., memory, by the bytes
 * of cache lines a pass touches) a spread of strides and N, so that T = T_n N + T_c N_c +
 * T_e S can be fitted per level with points held out. Every process computes the same grid
 * and order from the seed, so the processes agree without communication.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

/* The kernels are kept scalar: one load or store per element whatever the stride. A compiler
 * that vectorizes only the stride-1 loops (and only for ints) would give stride 1 a cost per
 * element that no other stride has, which eq. (4)'s T_n cannot describe; the data path, not
 * the SIMD width, is what the suite measures (the STREAM copy shows the vector rate). */
#if defined(__clang__)
#define MEM_NOINLINE __attribute__((noinline))
#define MEM_SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#elif defined(__GNUC__)
#define MEM_NOINLINE __attribute__((noinline, optimize("no-tree-vectorize")))
#define MEM_SCALAR_LOOP
#else
#define MEM_NOINLINE
#define MEM_SCALAR_LOOP
#endif

/* ---- the caches ------------------------------------------------------------------------------ */

#define MAX_CACHE_LEVELS 8
#define CACHE_DIR "/sys/devices/system/cpu/cpu0/cache"

typedef struct {
  int level;
  char type[64]; /* "Data" or "Unified" */
  long long size_bytes;
  int line_bytes;
  int ways; /* ways_of_associativity; 0 when unknown */
  char shared_cpus[64];
} cache_level;

typedef struct {
  cache_level lv[MAX_CACHE_LEVELS];
  int n;
  long page_bytes;
  int line;      /* line size of level 1 (64 when unknown) */
  long long llc; /* size of the last level (assumed when unknown) */
  int llc_known; /* 0: no cache information; llc is a guess */
} cache_info;

/* The first line of a small sysfs file, without its newline; 0 when it cannot be read. */
static int read_line(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fgets(buf, (int)n, f) != NULL;
  fclose(f);
  if (!ok) return 0;
  buf[strcspn(buf, "\n")] = 0;
  return 1;
}

/* "32K", "1024K", "32M" or a plain number of bytes; -1 when not a size. */
static long long parse_size(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || v <= 0) return -1;
  switch (*end) {
    case 0: return v;
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    default: return -1;
  }
}

/* CPUs in a list like "0-3,8-11"; 1 when it cannot be read. */
static int count_cpus(const char *list) {
  int n = 0;
  const char *s = list;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) return n > 0 ? n : 1;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      if (end == s + 1) return n > 0 ? n : 1;
      s = end;
    }
    if (b >= a) n += (int)(b - a + 1);
    if (*s == ',') s++;
    else break;
  }
  return n > 0 ? n : 1;
}

static void read_caches(cache_info *ci) {
  memset(ci, 0, sizeof *ci);
  long page = sysconf(_SC_PAGESIZE);
  ci->page_bytes = page > 0 ? page : 4096;
  for (int idx = 0; idx < 32 && ci->n < MAX_CACHE_LEVELS; idx++) {
    char path[256], v[5][64];
    static const char *const files[5] = {"level", "type", "size", "coherency_line_size",
                                         "shared_cpu_list"};
    int ok = 1;
    for (int k = 0; k < 5 && ok; k++) {
      snprintf(path, sizeof path, CACHE_DIR "/index%d/%s", idx, files[k]);
      ok = read_line(path, v[k], sizeof v[k]);
      if (!ok && k == 4) { /* an older kernel without the list: not needed for the sizes */
        snprintf(v[4], sizeof v[4], "?");
        ok = 1;
      }
    }
    if (!ok) continue;
    if (strcmp(v[1], "Data") != 0 && strcmp(v[1], "Unified") != 0) continue;
    cache_level *l = &ci->lv[ci->n];
    l->level = atoi(v[0]);
    l->size_bytes = parse_size(v[2]);
    l->line_bytes = atoi(v[3]);
    /* the ways decide how many sets a large stride leaves usable (bspkit.imh.level_name) */
    char ways[64];
    snprintf(path, sizeof path, CACHE_DIR "/index%d/ways_of_associativity", idx);
    l->ways = read_line(path, ways, sizeof ways) ? atoi(ways) : 0;
    if (l->level <= 0 || l->size_bytes <= 0) continue;
    snprintf(l->type, sizeof l->type, "%s", v[1]);
    snprintf(l->shared_cpus, sizeof l->shared_cpus, "%s", v[4]);
    ci->n++;
  }
  for (int i = 1; i < ci->n; i++) /* by level: the index* order is not a promise */
    for (int k = i; k > 0 && ci->lv[k - 1].level > ci->lv[k].level; k--) {
      cache_level t = ci->lv[k];
      ci->lv[k] = ci->lv[k - 1];
      ci->lv[k - 1] = t;
    }
  ci->line = ci->n > 0 && ci->lv[0].line_bytes > 0 ? ci->lv[0].line_bytes : 64;
  ci->llc_known = ci->n > 0;
  ci->llc = ci->llc_known ? ci->lv[ci->n - 1].size_bytes : 32LL << 20;
}

/* ---- the grid -------------------------------------------------------------------------------- */

/* The order is the records' and the seeds': int and double keep the indices they had before
 * float was added, so a default run draws the grids and orders it drew then. */
const char *const bspp_mem_op_names[MEM_NOPS] = {"read", "write", "multiply", "divide"};
const char *const bspp_mem_elem_names[MEM_NELEMS] = {"int", "double", "float"};
static const int elem_size[MEM_NELEMS] = {(int)sizeof(int), (int)sizeof(double),
                                          (int)sizeof(float)};

typedef struct {
  long n, stride;
  long lines;
  long long footprint, array_bytes;
} mem_point;

typedef struct {
  mem_point *pt;
  long n, cap;
} point_list;

static void add_point(point_list *l, mem_point p) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 256;
    l->pt = bspk_xrealloc("bspprobe", l->pt, (size_t)l->cap * sizeof *l->pt);
  }
  l->pt[l->n++] = p;
}

/* Distinct cache lines of a pass (the array starts on a page, so on a line). */
static long lines_touched(long n, long stride, int elem_bytes, int line) {
  long long step = (long long)stride * elem_bytes;
  if (step >= line) return n;
  return (long)((n * step + line - 1) / line);
}

/* What one mode measures. */
typedef struct {
  long long max_bytes;  /* the largest array of one process */
  long long mem_hi;     /* memory-level points: footprint up to this */
  long min_data;        /* the smallest N x elem_bytes */
  int per_level;        /* points inside each cache level */
  int per_memory;       /* points with a footprint past the last level */
  int per_boundary;     /* points across each boundary between levels */
  int reps;             /* samples per point */
  double warm_sample_s; /* a warm sample lasts at least this long */
} mem_params;

/* Moves up to k points of cand with footprints in (f_lo, f_hi] to out, spread over the
 * strides: the strides in a random order, one random point of each in turn, until k are
 * chosen. A chosen point's footprint becomes -1 in cand, so that no range picks it again. */
static void pick_spread(point_list *cand, long long f_lo, long long f_hi, int k, uint64_t *rng,
                        point_list *out) {
  long m = 0;
  long *idx = xmalloc((size_t)(cand->n + 1) * sizeof *idx);
  for (long i = 0; i < cand->n; i++)
    if (cand->pt[i].footprint > f_lo && cand->pt[i].footprint <= f_hi) idx[m++] = i;
  bspp_rng_shuffle_long(rng, idx, m);
  long strides[64];
  int ns = 0;
  for (long i = 0; i < m; i++) {
    long s = cand->pt[idx[i]].stride;
    int seen = 0;
    for (int t = 0; t < ns; t++) seen |= strides[t] == s;
    if (!seen && ns < 64) strides[ns++] = s;
  }
  /* idx is shuffled, so taking the first unused point of a stride is a random pick */
  int chosen = 0, progress_made = 1;
  while (chosen < k && progress_made) {
    progress_made = 0;
    for (int t = 0; t < ns && chosen < k; t++)
      for (long i = 0; i < m; i++) {
        if (idx[i] < 0 || cand->pt[idx[i]].stride != strides[t]) continue;
        add_point(out, cand->pt[idx[i]]);
        cand->pt[idx[i]].footprint = -1;
        idx[i] = -1;
        chosen++;
        progress_made = 1;
        break;
      }
  }
  free(idx);
}

static int cmp_point(const void *a, const void *b) {
  const mem_point *x = a, *y = b;
  if (x->stride != y->stride) return x->stride < y->stride ? -1 : 1;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* The grid of one element type: strides 1, 2, 4, ... up to two pages, N = 2^k x {1, 1.25,
 * 1.5, 1.75} (held-out points are then not all powers of two), from min_data bytes of data
 * to arrays of max_bytes; then per level a spread of them. Level l holds the footprints in
 * (1.5 C_{l-1}, 0.75 C_l] (C: the cache sizes), so that its points sit clearly inside it;
 * memory is (1.5 LLC, mem_hi]; the boundary points lie between. */
static void make_grid(const cache_info *ci, const mem_params *mp, int elem, uint64_t seed,
                      point_list *grid) {
  const int eb = elem_size[elem];
  point_list cand = {0};
  for (long stride = 1; stride * eb <= 2 * ci->page_bytes; stride *= 2)
    for (long base = 1; base <= (1L << 40); base *= 2) {
      static const double mult[4] = {1.0, 1.25, 1.5, 1.75};
      int past = 0;
      for (int k = 0; k < 4; k++) {
        long n = (long)(mult[k] * (double)base);
        if (k > 0 && n == (long)(mult[k - 1] * (double)base)) continue;
        if ((long long)n * eb < mp->min_data) continue;
        mem_point p = {.n = n, .stride = stride};
        p.array_bytes = (long long)n * stride * eb;
        p.lines = lines_touched(n, stride, eb, ci->line);
        p.footprint = (long long)p.lines * ci->line;
        if (p.array_bytes > mp->max_bytes || p.footprint > mp->mem_hi) {
          past = 1;
          break;
        }
        add_point(&cand, p);
      }
      if (past) break;
    }
  uint64_t rng = bspp_rng_seed(seed, 0x6d656d, (uint64_t)elem, 1);
  long long lo = 0;
  for (int l = 0; l < ci->n; l++) {
    long long c_l = ci->lv[l].size_bytes;
    if (l > 0 && c_l <= ci->lv[l - 1].size_bytes) continue; /* not larger than the one before */
    pick_spread(&cand, lo, c_l * 3 / 4, mp->per_level, &rng, grid);
    pick_spread(&cand, c_l * 3 / 4, c_l * 3 / 2, mp->per_boundary, &rng, grid);
    lo = c_l * 3 / 2;
  }
  if (ci->n == 0) pick_spread(&cand, 0, ci->llc * 3 / 4, mp->per_level, &rng, grid);
  pick_spread(&cand, ci->llc * 3 / 2 - 1, mp->mem_hi, mp->per_memory, &rng, grid);
  free(cand.pt);
  qsort(grid->pt, (size_t)grid->n, sizeof *grid->pt, cmp_point);
}

/* ---- the kernels ---------------------------------------------------------------------------- */

/* Written by int writes: two of them side by side read as a normal double (1.0000002), so
 * that double reads after int writes never meet the slow path of subnormal numbers. */
#define INT_FILL 0x3ff00000

/* Unsigned: the sum may wrap, which is defined for unsigned and costs the same. Four partial
 * sums: one chain of dependent adds would time the adder's latency, not the data path. */
static MEM_NOINLINE unsigned read_int(const int *a, long n, long stride) {
  unsigned s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  long i = 0, k = 0;
  MEM_SCALAR_LOOP
  for (; i + 4 <= n; i += 4, k += 4 * stride) {
    s0 += (unsigned)a[k];
    s1 += (unsigned)a[k + stride];
    s2 += (unsigned)a[k + 2 * stride];
    s3 += (unsigned)a[k + 3 * stride];
  }
  for (; i < n; i++, k += stride) s0 += (unsigned)a[k];
  return (s0 + s1) + (s2 + s3);
}

static MEM_NOINLINE double read_double(const double *a, long n, long stride) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  long i = 0, k = 0;
  MEM_SCALAR_LOOP
  for (; i + 4 <= n; i += 4, k += 4 * stride) {
    s0 += a[k];
    s1 += a[k + stride];
    s2 += a[k + 2 * stride];
    s3 += a[k + 3 * stride];
  }
  for (; i < n; i++, k += stride) s0 += a[k];
  return (s0 + s1) + (s2 + s3);
}

static MEM_NOINLINE double read_float(const float *a, long n, long stride) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  long i = 0, k = 0;
  MEM_SCALAR_LOOP
  for (; i + 4 <= n; i += 4, k += 4 * stride) {
    s0 += a[k];
    s1 += a[k + stride];
    s2 += a[k + 2 * stride];
    s3 += a[k + 3 * stride];
  }
  for (; i < n; i++, k += stride) s0 += a[k];
  return (double)((s0 + s1) + (s2 + s3));
}

static MEM_NOINLINE void write_int(int *a, long n, long stride, int v) {
  MEM_SCALAR_LOOP
  for (long i = 0, k = 0; i < n; i++, k += stride) a[k] = v;
}

static MEM_NOINLINE void write_double(double *a, long n, long stride, double v) {
  MEM_SCALAR_LOOP
  for (long i = 0, k = 0; i < n; i++, k += stride) a[k] = v;
}

static MEM_NOINLINE void write_float(float *a, long n, long stride, float v) {
  MEM_SCALAR_LOOP
  for (long i = 0, k = 0; i < n; i++, k += stride) a[k] = v;
}

/* Multiply: the paper's `max *= *(pData + count*STRIDE)` (003 Appendix I, A.1, case 3), in four
 * partial products like read's four sums (one chain would time the multiplier's latency). The
 * ints multiply as unsigned: the products wrap, which signed ints may not. */
#define MEM_MULTIPLY_KERNEL(name, T, ACC)                            \
  static MEM_NOINLINE double name(const T *a, long n, long stride) { \
    ACC p0 = 1, p1 = 1, p2 = 1, p3 = 1;                              \
    long i = 0, k = 0;                                               \
    MEM_SCALAR_LOOP                                                  \
    for (; i + 4 <= n; i += 4, k += 4 * stride) {                    \
      p0 *= (ACC)a[k];                                               \
      p1 *= (ACC)a[k + stride];                                      \
      p2 *= (ACC)a[k + 2 * stride];                                  \
      p3 *= (ACC)a[k + 3 * stride];                                  \
    }                                                                \
    for (; i < n; i++, k += stride) p0 *= (ACC)a[k];                 \
    return (double)((p0 * p1) * (p2 * p3));                          \
  }

/* Divide: the paper divides 100000 by the elements (`max = 100000; max /= *(pData + ...)`, case
 * 4). As one chain the quotient reaches zero within a few dozen int elements, and a float
 * chain passes through subnormal numbers, whose slow path would be timed instead of the
 * division; so each element divides 100000 itself and the quotients are summed (four sums). */
#define MEM_DIVIDE_KERNEL(name, T, ACC)                              \
  static MEM_NOINLINE double name(const T *a, long n, long stride) { \
    const T dividend = (T)100000;                                    \
    ACC s0 = 0, s1 = 0, s2 = 0, s3 = 0;                              \
    long i = 0, k = 0;                                               \
    MEM_SCALAR_LOOP                                                  \
    for (; i + 4 <= n; i += 4, k += 4 * stride) {                    \
      s0 += (ACC)(dividend / a[k]);                                  \
      s1 += (ACC)(dividend / a[k + stride]);                         \
      s2 += (ACC)(dividend / a[k + 2 * stride]);                     \
      s3 += (ACC)(dividend / a[k + 3 * stride]);                     \
    }                                                                \
    for (; i < n; i++, k += stride) s0 += (ACC)(dividend / a[k]);    \
    return (double)((s0 + s1) + (s2 + s3));                          \
  }

MEM_MULTIPLY_KERNEL(multiply_int, int, unsigned)
MEM_MULTIPLY_KERNEL(multiply_float, float, float)
MEM_MULTIPLY_KERNEL(multiply_double, double, double)
MEM_DIVIDE_KERNEL(divide_int, int, unsigned)
MEM_DIVIDE_KERNEL(divide_float, float, float)
MEM_DIVIDE_KERNEL(divide_double, double, double)

/* The operands of multiply and divide, as the paper fills its arrays (`rand() > RANDHALF ? 3 :
 * 2`) for ints; the floating-point ones are 1 +- 2^-12 at random instead, so that the products
 * stay normal numbers (of 2s and 3s they overflow within a few hundred elements, and inf is
 * not what the paper timed). Written over the whole buffer: every array carved from it. */
static void fill_operands(unsigned char *buf, size_t bytes, int elem, uint64_t seed) {
  uint64_t rng = bspp_rng_seed(seed, 0x6f70, (uint64_t)elem, 0), bits = 0;
  size_t count = bytes / (size_t)elem_size[elem];
  for (size_t i = 0; i < count; i++) {
    if (i % 64 == 0) bits = bspp_rng_next(&rng);
    int heads = (int)(bits >> (i % 64) & 1);
    if (elem == MEM_ELEM_INT) ((int *)buf)[i] = heads ? 3 : 2;
    else if (elem == MEM_ELEM_FLOAT) ((float *)buf)[i] = heads ? 1.0f + 0x1p-12f : 1.0f - 0x1p-12f;
    else ((double *)buf)[i] = heads ? 1.0 + 0x1p-12 : 1.0 - 0x1p-12;
  }
}

/* The buffer's contents before the first combination and after every fill_neutral: doubles
 * of 1.0, read as normal numbers (or zeros) in every element type. */
static void fill_neutral(unsigned char *buf, size_t bytes) {
  for (size_t i = 0; i < bytes / sizeof(double); i++) ((double *)buf)[i] = 1.0;
}

static void one_pass(probe_ctx *c, int op, int elem, void *a, long n, long stride) {
  switch (op) {
    case MEM_OP_READ:
      if (elem == MEM_ELEM_INT) c->isink = c->isink + (long)read_int(a, n, stride);
      else if (elem == MEM_ELEM_FLOAT) c->sink = c->sink + read_float(a, n, stride);
      else c->sink = c->sink + read_double(a, n, stride);
      break;
    case MEM_OP_WRITE:
      if (elem == MEM_ELEM_INT) write_int(a, n, stride, INT_FILL);
      else if (elem == MEM_ELEM_FLOAT) write_float(a, n, stride, 1.0f);
      else write_double(a, n, stride, 1.0);
      break;
    case MEM_OP_MULTIPLY:
      if (elem == MEM_ELEM_INT) c->sink = c->sink + multiply_int(a, n, stride);
      else if (elem == MEM_ELEM_FLOAT) c->sink = c->sink + multiply_float(a, n, stride);
      else c->sink = c->sink + multiply_double(a, n, stride);
      break;
    default:
      if (elem == MEM_ELEM_INT) c->sink = c->sink + divide_int(a, n, stride);
      else if (elem == MEM_ELEM_FLOAT) c->sink = c->sink + divide_float(a, n, stride);
      else c->sink = c->sink + divide_double(a, n, stride);
  }
}

/* Reads one byte of every line of buf: afterwards no line of anything else is in a cache
 * (buf is larger than the last level), and the dirty lines have been written back. */
static void flush_caches(probe_ctx *c, const unsigned char *buf, size_t bytes, int line) {
  unsigned acc = 0;
  for (size_t i = 0; i < bytes; i += (size_t)line) acc += buf[i];
  c->isink = c->isink + (long)acc;
}

/* STREAM's copy as a loop, not the memcpy GCC would turn it into (glibc's memcpy streams
 * large copies past the caches, which the loop of a program does not). */
#if defined(__GNUC__) && !defined(__clang__)
#define STREAM_NO_MEMCPY __attribute__((optimize("no-tree-loop-distribute-patterns")))
#define STREAM_COPY_NOTE "GCC's loop-to-memcpy rewrite switched off"
#else
#define STREAM_NO_MEMCPY
#define STREAM_COPY_NOTE "the compiler may have made it a memcpy call"
#endif
static MEM_NOINLINE STREAM_NO_MEMCPY void stream_copy(double *restrict a, const double *restrict b,
                                                      long n) {
  for (long i = 0; i < n; i++) a[i] = b[i];
}

/* ---- measuring ------------------------------------------------------------------------------ */

typedef struct {
  int op, elem, cold, all; /* all: every process at once; else process 0 alone */
} mem_combo;

/* Progress over the whole suite, in points (a cold point counts 1/reps per round). */
typedef struct {
  char what[96];
  long done, total;
} mem_progress;

typedef struct {
  unsigned char *buf; /* page-aligned, every page touched; the arrays are carved from it */
  size_t buf_bytes;
  unsigned char *flush;
  size_t flush_bytes; /* allocated */
  size_t flush_walk;  /* walked before a batch */
  long page;
  int line;
  long long batch_footprint; /* cold: the most line bytes one flush serves */
} mem_area;

static unsigned char *page_aligned(unsigned char *raw, long page) {
  uintptr_t u = (uintptr_t)raw;
  return (unsigned char *)((u + (uintptr_t)page - 1) & ~((uintptr_t)page - 1));
}

static long long round_up(long long v, long long to) { return (v + to - 1) / to * to; }

/* Cold: in each round every point gets one sample, the points in a new random order and cut
 * into batches; one flush serves a batch, each point of it on its own region of the buffer
 * (a page apart, so that no prefetch reaches the next), which nothing touches between the
 * flush and its sample: its lines are in no cache when its sample starts, as after a flush
 * of its own. A batch of writes dirties at most batch_footprint bytes of lines, so that a
 * later write of the batch, like one after its own flush, evicts clean lines only. */
static void measure_cold(probe_ctx *c, const mem_area *ar, const mem_combo *cb, const point_list *g,
                         int reps, uint64_t seed, double *smp, long *seq_first,
                         const mem_progress *pg) {
  const int active = cb->all || c->s == 0;
  long *order = xmalloc((size_t)g->n * sizeof *order);
  size_t *offset = xmalloc((size_t)g->n * sizeof *offset);
  for (int r = 0; r < reps; r++) {
    uint64_t rng = bspp_rng_seed(seed, 0xc01d, (uint64_t)r, 0);
    for (long i = 0; i < g->n; i++) order[i] = i;
    bspp_rng_shuffle_long(&rng, order, g->n);
    if (r == 0)
      for (long i = 0; i < g->n; i++) seq_first[order[i]] = i;
    long i = 0;
    while (i < g->n) {
      long j = i;
      size_t off = 0;
      long long fp = 0;
      while (j < g->n) {
        const mem_point *p = &g->pt[order[j]];
        size_t region = (size_t)round_up(p->array_bytes, ar->page) + (size_t)ar->page;
        if (j > i && (off + region > ar->buf_bytes || fp + p->footprint > ar->batch_footprint))
          break;
        offset[order[j]] = off;
        off += region;
        fp += p->footprint;
        j++;
      }
      if (active) flush_caches(c, ar->flush, ar->flush_walk, ar->line);
      for (long k = i; k < j; k++) {
        long pi = order[k];
        const mem_point *p = &g->pt[pi];
        if (cb->all) bsp_sync(); /* common start */
        if (!active) continue;
        void *a = ar->buf + offset[pi];
        double t0 = bspk_monotonic_seconds();
        one_pass(c, cb->op, cb->elem, a, p->n, p->stride);
        smp[pi * reps + r] = bspk_monotonic_seconds() - t0;
      }
      i = j;
      bspp_progress(c, pg->what, pg->done + ((long)r * g->n + j) / reps, pg->total, 0);
    }
  }
  free(offset);
  free(order);
}

/* Warm: per point (in a random order) one pass to bring the array in, one timed pass to
 * choose the passes per sample (>= warm_sample_s), then reps samples of that many passes. */
static void measure_warm(probe_ctx *c, const mem_area *ar, const mem_combo *cb, const point_list *g,
                         int reps, double sample_s, uint64_t seed, double *smp, long *seq_first,
                         long *passes, const mem_progress *pg) {
  const int active = cb->all || c->s == 0;
  long *order = xmalloc((size_t)g->n * sizeof *order);
  uint64_t rng = bspp_rng_seed(seed, 0x3a53, 0, 0);
  for (long i = 0; i < g->n; i++) order[i] = i;
  bspp_rng_shuffle_long(&rng, order, g->n);
  void *a = ar->buf;
  for (long i = 0; i < g->n; i++) {
    long pi = order[i];
    const mem_point *p = &g->pt[pi];
    seq_first[pi] = i;
    double np = 1;
    if (cb->all) bsp_sync();
    if (active) {
      double t0 = bspk_monotonic_seconds();
      one_pass(c, cb->op, cb->elem, a, p->n, p->stride);
      double t = bspk_monotonic_seconds() - t0;
      if (t < sample_s) { /* the first pass brought the array in; time a warm one */
        t0 = bspk_monotonic_seconds();
        one_pass(c, cb->op, cb->elem, a, p->n, p->stride);
        t = bspk_monotonic_seconds() - t0;
        np = t > 0 ? ceil(sample_s / t) : 1e6;
        if (np > 1e6) np = 1e6;
        if (np < 1) np = 1;
      }
    }
    if (cb->all) np = bspk_max_over_processes(np, c->allv); /* the same passes everywhere */
    passes[pi] = (long)np;
    for (int r = 0; r < reps; r++) {
      if (cb->all) bsp_sync();
      if (!active) continue;
      double t0 = bspk_monotonic_seconds();
      for (long k = 0; k < passes[pi]; k++) one_pass(c, cb->op, cb->elem, a, p->n, p->stride);
      smp[pi * reps + r] = (bspk_monotonic_seconds() - t0) / (double)passes[pi];
    }
    bspp_progress(c, pg->what, pg->done + i + 1, pg->total, 0);
  }
  free(order);
}

static void emit_caches(probe_ctx *c, const cache_info *ci, long long max_bytes,
                        long long flush_alone, long long flush_all) {
  jbuf *j = &c->j;
  bspp_json_begin(j, "caches");
  bspp_json_arr_begin(j, "levels");
  for (int i = 0; i < ci->n; i++) {
    const cache_level *l = &ci->lv[i];
    bspp_json_obj_begin(j, NULL);
    bspp_json_int(j, "level", l->level);
    bspp_json_str(j, "type", l->type);
    bspp_json_int(j, "size_bytes", l->size_bytes);
    bspp_json_int(j, "line_bytes", l->line_bytes);
    bspp_json_int(j, "ways", l->ways);
    bspp_json_str(j, "shared_cpus", l->shared_cpus);
    bspp_json_obj_end(j);
  }
  bspp_json_arr_end(j);
  bspp_json_int(j, "page_bytes", ci->page_bytes);
  bspp_json_str(j, "source", ci->n > 0 ? CACHE_DIR : NULL);
  bspp_json_int(j, "mem_max_bytes", max_bytes);
  bspp_json_int(j, "flush_bytes", flush_alone);
  if (c->p > 1) bspp_json_int(j, "flush_bytes_all", flush_all);
  const char *names[MEM_NOPS + MEM_NELEMS];
  int n = 0;
  for (int i = 0; i < MEM_NOPS; i++)
    if (c->opt->mem_ops >> i & 1) names[n++] = bspp_mem_op_names[i];
  bspp_json_strs(j, "mem_ops", names, n);
  n = 0;
  for (int i = 0; i < MEM_NELEMS; i++)
    if (c->opt->mem_elems >> i & 1) names[n++] = bspp_mem_elem_names[i];
  bspp_json_strs(j, "mem_elems", names, n);
  bspp_emit(c);
}

static void emit_points(probe_ctx *c, const mem_combo *cb, const point_list *g, int reps,
                        const double *smp, const long *seq_first, const long *passes,
                        long seq_base) {
  jbuf *j = &c->j;
  for (long i = 0; i < g->n; i++) {
    const mem_point *p = &g->pt[i];
    bspp_json_begin(j, "mem");
    bspp_json_str(j, "op", bspp_mem_op_names[cb->op]);
    bspp_json_str(j, "elem", bspp_mem_elem_names[cb->elem]);
    bspp_json_int(j, "elem_bytes", elem_size[cb->elem]);
    bspp_json_int(j, "n", p->n);
    bspp_json_int(j, "stride", p->stride);
    bspp_json_str(j, "cache", cb->cold ? "cold" : "warm");
    bspp_json_int(j, "procs", cb->all ? c->p : 1);
    bspp_json_int(j, "lines", p->lines);
    bspp_json_int(j, "footprint_bytes", p->footprint);
    bspp_json_nums(j, "samples_s", smp + i * reps, reps, "%.6g");
    bspp_json_int(j, "reps", reps);
    if (!cb->cold) bspp_json_int(j, "passes", passes[i]);
    bspp_json_int(j, "seq", seq_base + seq_first[i]);
    bspp_emit(c);
  }
}

/* Gathers the samples of every point to process 0 (max over processes per sample), as many
 * points per superstep as the gather area holds. */
static void gather_points(probe_ctx *c, double *smp, long npts, int reps) {
  long per = c->gather_stride / reps;
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  for (long i = 0; i < npts; i += per) {
    long k = npts - i < per ? npts - i : per;
    memcpy(c->local, smp + i * reps, (size_t)(k * reps) * sizeof(double));
    bspp_gather_max(c, c->local, (int)(k * reps), out);
    if (c->s == 0) memcpy(smp + i * reps, out, (size_t)(k * reps) * sizeof(double));
  }
  free(out);
}

static void measure_stream(probe_ctx *c, long long bytes, const char *why_smaller) {
  long n = (long)(bytes / (long long)sizeof(double));
  /* memcpy's repetitions in the full mode; fewer in the quick one, where a copy of arrays of
   * 4 x the last-level cache would take much of the suite's time */
  int reps = c->opt->reps > 0 ? c->opt->reps : c->opt->quick ? 10 : c->prm.memcpy_reps;
  if (reps > c->gather_stride) reps = c->gather_stride;
  double *a = xmalloc((size_t)n * sizeof *a), *b = xmalloc((size_t)n * sizeof *b);
  for (long i = 0; i < n; i++) { /* every page in before timing */
    a[i] = 0;
    b[i] = (double)(i & 1023);
  }
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  const int npass = c->p > 1 ? 2 : 1;
  for (int pass = 0; pass < npass; pass++) {
    int all = pass == 1;
    bspp_progress(c, all ? "stream, every process at once" : "stream, process 0 alone", pass, npass,
                  1);
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up, not kept */
      if (all) bsp_sync();
      if (!all && c->s != 0) continue;
      double t0 = bspk_monotonic_seconds();
      stream_copy(a, b, n);
      double t = bspk_monotonic_seconds() - t0;
      c->sink = c->sink + a[n / 2];
      if (r >= 0) (all ? c->local : out)[r] = t;
    }
    if (all) bspp_gather_max(c, c->local, reps, out);
    else bsp_sync(); /* the others wait here */
    if (c->s == 0) {
      char note[512];
      jbuf *j = &c->j;
      bspp_json_begin(j, "stream");
      bspp_json_str(j, "kernel", "copy");
      bspp_json_int(j, "bytes", (long long)n * (long long)sizeof(double));
      bspp_json_int(j, "bytes_moved", 2LL * n * (long long)sizeof(double));
      bspp_json_int(j, "procs", all ? c->p : 1);
      bspp_json_nums(j, "samples_s", out, reps, "%.6g");
      bspp_json_int(j, "reps", reps);
      snprintf(note, sizeof note,
               "%s; a[i] = b[i] as a loop (%s); arrays of %.0f MiB per process%s%s; 1 warm-up "
               "copy not kept",
               all ? "every process copies at once (after a common bsp_sync), sample = max over "
                     "processes"
                   : "process 0 alone, the other p-1 processes waiting in bsp_sync",
               STREAM_COPY_NOTE, (double)bytes / 1048576.0, why_smaller ? ", " : "",
               why_smaller ? why_smaller : "");
      bspp_json_str(j, "note", note);
      bspp_emit(c);
    }
  }
  free(out);
  free(b);
  free(a);
}

/* ---- the section ---------------------------------------------------------------------------- */

void bspp_measure_mem(probe_ctx *c) {
  cache_info ci;
  read_caches(&ci);
  const int quick = c->opt->quick;
  const long long llc = ci.llc;
  if (!ci.llc_known && c->s == 0)
    bspp_add_warning(c, "mem: no cache sizes in " CACHE_DIR "; assuming a last level of %lld MiB",
                     llc >> 20);

  /* Memory: the buffers of p processes may take half the machine at most. */
  long long phys = (long long)sysconf(_SC_PHYS_PAGES) * ci.page_bytes;
  long long per_proc = phys > 0 ? phys / 2 / c->p : 1LL << 40;
  /* The flush walks twice the last level: larger than every cache together. When every
   * process flushes at once, those sharing the last level share the walk; each still walks
   * twice its private levels. */
  long long flush_bytes = 2 * llc, private_bytes = 0;
  for (int l = 0; l + 1 < ci.n; l++) private_bytes += ci.lv[l].size_bytes;
  int llc_sharers = ci.n > 0 ? count_cpus(ci.lv[ci.n - 1].shared_cpus) : 1;
  if (llc_sharers > c->p) llc_sharers = c->p;
  if (llc_sharers < 1) llc_sharers = 1;
  long long flush_all = 2 * llc / llc_sharers + 2 * private_bytes;
  if (flush_all > flush_bytes) flush_all = flush_bytes;
  flush_all = round_up(flush_all, ci.page_bytes);
  mem_params mp = {
      .min_data = 2048,
      .per_level = quick ? 10 : 20,
      .per_memory = quick ? 8 : 16,
      .per_boundary = quick ? 2 : 6,
      .reps = c->opt->reps > 0 ? c->opt->reps : c->prm.mem_reps,
      .warm_sample_s = 50e-6,
  };
  if (mp.reps > c->gather_stride) mp.reps = c->gather_stride;
  long long dflt = quick ? 2 * llc : 4 * llc, dmin = quick ? 32LL << 20 : 64LL << 20;
  if (dflt < dmin) dflt = dmin;
  if (dflt > per_proc - flush_bytes) dflt = per_proc - flush_bytes;
  if (dflt < 1LL << 20) dflt = 1LL << 20;
  mp.max_bytes = c->opt->mem_max_bytes > 0 ? c->opt->mem_max_bytes : dflt;
  mp.mem_hi = quick ? 2 * llc : 4 * llc;

  const unsigned ops = c->opt->mem_ops, elems = c->opt->mem_elems;
  point_list grid[MEM_NELEMS] = {{0}};
  for (int e = 0; e < MEM_NELEMS; e++)
    if (elems >> e & 1) make_grid(&ci, &mp, e, c->opt->seed, &grid[e]);

  /* The buffer holds the largest array, and the batches of small cold arrays. */
  mem_area ar = {.page = ci.page_bytes, .line = ci.line};
  long long largest = 0;
  for (int e = 0; e < MEM_NELEMS; e++)
    for (long i = 0; i < grid[e].n; i++)
      if (grid[e].pt[i].array_bytes > largest) largest = grid[e].pt[i].array_bytes;
  ar.buf_bytes = (size_t)round_up(largest, ar.page) + (size_t)ar.page;
  if (ar.buf_bytes < (size_t)(llc / 2)) ar.buf_bytes = (size_t)round_up(llc / 2, ar.page);
  ar.flush_bytes = (size_t)flush_bytes;
  unsigned char *raw = xmalloc(ar.buf_bytes + (size_t)ar.page);
  unsigned char *raw_flush = xmalloc(ar.flush_bytes + (size_t)ar.page);
  ar.buf = page_aligned(raw, ar.page);
  ar.flush = page_aligned(raw_flush, ar.page);
  fill_neutral(ar.buf, ar.buf_bytes);
  memset(ar.flush, 1, ar.flush_bytes);

  /* The combinations, in a random order. Quick (p > 1): cold only with every process at once
   * (out of cache the processes contend for memory bandwidth), warm only with process 0
   * alone (in cache each works in its own caches, the shared last level aside); the passes
   * over arrays past the last-level cache are most of the suite's time. */
  mem_combo combos[MEM_NOPS * MEM_NELEMS * 4];
  int ncombo = 0;
  for (int op = 0; op < MEM_NOPS; op++)
    for (int e = 0; e < MEM_NELEMS; e++)
      for (int cold = 0; cold < 2; cold++)
        for (int all = 0; all < 2; all++) {
          if (!(ops >> op & 1) || !(elems >> e & 1)) continue;
          if (all && c->p == 1) continue;
          if (quick && c->p > 1 && cold != all) continue;
          combos[ncombo++] = (mem_combo){op, e, cold, all};
        }
  long order[MEM_NOPS * MEM_NELEMS * 4];
  uint64_t rng = bspp_rng_seed(c->opt->seed, 0x6d656d, 2, 0);
  for (int i = 0; i < ncombo; i++) order[i] = i;
  bspp_rng_shuffle_long(&rng, order, ncombo);

  if (c->s == 0) emit_caches(c, &ci, mp.max_bytes, flush_bytes, flush_all);

  long maxpts = 0;
  for (int e = 0; e < MEM_NELEMS; e++)
    if (grid[e].n > maxpts) maxpts = grid[e].n;
  double *smp = xmalloc((size_t)(maxpts * mp.reps) * sizeof *smp);
  long *seq_first = xmalloc((size_t)maxpts * sizeof *seq_first);
  long *passes = xmalloc((size_t)maxpts * sizeof *passes);
  long seq_base = 0;
  mem_progress pg = {.total = 0};
  /* What the buffer holds: FILL_NEUTRAL (fill_neutral, or what writes left on it: normal
   * numbers or zeros in every type), or the operands of multiply and divide of an element
   * type (fill_operands). Multiply and divide need their own; the int operands read as
   * subnormal floating-point numbers, so reads and writes refill after them. A run of reads
   * and writes only (the default) never refills. */
  enum { FILL_NEUTRAL = -1 };
  int filled = FILL_NEUTRAL;
  for (int k = 0; k < ncombo; k++) pg.total += grid[combos[k].elem].n;
  for (int k = 0; k < ncombo; k++) {
    if (k > 0 && bspp_sentinels_on(c)) {          /* the suite's minutes get their visits too */
      bspp_sentinel_visit(c, "in mem", seq_base); /* milliseconds: no progress line of its own */
    }
    const mem_combo *cb = &combos[order[k]];
    const point_list *g = &grid[cb->elem];
    const int arithmetic = cb->op == MEM_OP_MULTIPLY || cb->op == MEM_OP_DIVIDE;
    if (arithmetic && filled != cb->elem) {
      fill_operands(ar.buf, ar.buf_bytes, cb->elem, c->opt->seed);
      filled = cb->elem;
    } else if (!arithmetic && filled == MEM_ELEM_INT) {
      fill_neutral(ar.buf, ar.buf_bytes);
      filled = FILL_NEUTRAL;
    }
    if (cb->op == MEM_OP_WRITE) filled = FILL_NEUTRAL; /* the writes leave their values */
    /* cold batches: the lines of a batch stay in the (shared) last level */
    ar.batch_footprint = cb->op == MEM_OP_WRITE ? llc / 2 / (cb->all ? llc_sharers : 1) : 1LL << 62;
    ar.flush_walk = cb->all ? (size_t)flush_all : ar.flush_bytes;
    snprintf(pg.what, sizeof pg.what, "mem: %s %s, %s, %s", bspp_mem_op_names[cb->op],
             bspp_mem_elem_names[cb->elem], cb->cold ? "cold" : "warm",
             cb->all ? "every process" : "process 0 alone");
    pg.done = seq_base;
    bspp_progress(c, pg.what, pg.done, pg.total, 1);
    uint64_t seed = bspp_rng_seed(c->opt->seed, 0x6d656d, 3, (uint64_t)order[k]);
    memset(smp, 0, (size_t)(g->n * mp.reps) * sizeof *smp);
    if (cb->cold) measure_cold(c, &ar, cb, g, mp.reps, seed, smp, seq_first, &pg);
    else measure_warm(c, &ar, cb, g, mp.reps, mp.warm_sample_s, seed, smp, seq_first, passes, &pg);
    if (cb->all) gather_points(c, smp, g->n, mp.reps);
    else bsp_sync(); /* the others waited here */
    if (c->s == 0) emit_points(c, cb, g, mp.reps, smp, seq_first, passes, seq_base);
    seq_base += g->n;
  }
  free(passes);
  free(seq_first);
  free(smp);
  free(raw_flush);
  free(raw);
  for (int e = 0; e < MEM_NELEMS; e++) free(grid[e].pt);

  /* STREAM's rule: arrays of at least 4 x the last level. */
  long long sbytes = 4 * llc;
  const char *why = NULL;
  if (c->opt->mem_max_bytes > 0 && sbytes > c->opt->mem_max_bytes) {
    sbytes = c->opt->mem_max_bytes;
    why = "lowered to --mem-max-bytes (below 4 x the last-level cache: partly cached)";
  } else if (2 * sbytes > per_proc) {
    sbytes = per_proc / 2;
    why = "lowered to a quarter of the memory per process (below 4 x the last-level cache)";
  }
  measure_stream(c, sbytes, why);
}
