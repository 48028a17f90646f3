/*
 * probe.h - declarations shared by the bspprobe sources (see bspprobe.c for the overview).
 *
 * Written against bsp.h only. On the threads back end every BSP process is a thread of one
 * program, so NOTHING here keeps per-process state in a global: each process has its own
 * probe_ctx (allocated in its SPMD function). The options are parsed in main before bsp_init
 * and only read afterwards.
 *
 * Every function and global shared between the files is named bspp_* (bspprobe_core is linked
 * into the algorithm drivers too); what one file alone uses is static there. The files call
 * one another one way only, each using those above it:
 *   output.c      JSON lines, warnings, progress on stderr, the load average
 *   rng.c         the PRNG (the same draws on every process)
 *   probe_ctx.c   the names, the mode's settings, the context, gather to process 0
 *   measure_f.c   f's kernels and the sections f and memcpy            (output, probe_ctx)
 *   timing.c      how a communication sample is timed: one point, batched latencies, the
 *                 h-relation of one g point, the l variants           (probe_ctx, rng)
 *   calibrate.c   the short calibration (also for other programs, calibration.h)
 *                                                   (measure_f, timing, output, probe_ctx)
 *   -- bspprobe_core ends here; the rest is the bspprobe program only --
 *   sentinel.c     the sentinels: a fixed point per regime re-measured through the run
 *                                              (timing, measure_f, output, probe_ctx)
 *   measure_comm.c  the sections g, validation, l, As; calibration rounds among the g points
 *                                    (sentinel, calibrate, timing, output, probe_ctx, rng)
 *   measure_hw.c   the section hw: memcpy in the h-relations' regime, a raw spin barrier,
 *                  a cache-line ping-pong              (timing, output, probe_ctx)
 *   measure_mem.c, measure_pp.c, measure_disk.c  the memory-hierarchy suites
 *                                                            (output, probe_ctx, rng)
 *   bspprobe.c    main: command line, header, footer, the order of the sections (all)
 */
#ifndef BSPPROBE_PROBE_H
#define BSPPROBE_PROBE_H

#include <stdint.h>
#include <stdio.h>

#include "bsp.h"
#include "bspk_alloc.h"
#include "bspk_clock.h"
#include "bspk_json.h"
#include "bspk_machine.h"
#include "bspk_state.h"
#include "bspk_spmd.h"

/* bspkit's extensions (back-end name, core count), only when building against bspkit. */
#if !defined(BSPPROBE_NO_EXTENSIONS) && defined(__has_include)
#if __has_include("bspkit.h")
#include "bspkit.h"
#endif
#endif

/* bspkit's version, which CMake gives (BSPKIT_VERSION_STRING, from the project's one
 * version); a build by hand against another BSPlib says "unknown". */
#ifndef BSPPROBE_VERSION
#ifdef BSPKIT_VERSION_STRING
#define BSPPROBE_VERSION BSPKIT_VERSION_STRING
#else
#define BSPPROBE_VERSION "unknown"
#endif
#endif

/* The type of bsp_get_tag's status: bsp_size_t (bspkit, MulticoreBSP), or int for libraries
 * with the plain 1998 API and no bsp_size_t (build with -DBSPPROBE_INT_API). */
#ifdef BSPPROBE_INT_API
typedef int probe_size_t;
#else
typedef bsp_size_t probe_size_t;
#endif

#if defined(__GNUC__)
#define PROBE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PROBE_PRINTF(fmt, args)
#endif

#define WORD_BYTES 8 /* all communication sizes are in 8-byte words (doubles) */

/* ---- sections, primitives, patterns --------------------------------------------------- */

/* f .. validation: the BSP parameters (hw: the hardware references they are compared with);
 * mem, pp, disk: the memory-hierarchy suites of Kang et al.
 * (`003_...` sec. 4.2), which the IMH model integrates. */
enum {
  SEC_F,
  SEC_MEMCPY,
  SEC_HW,
  SEC_G,
  SEC_L,
  SEC_AS,
  SEC_VALIDATION,
  SEC_MEM,
  SEC_PP,
  SEC_DISK,
  NSECTIONS
};
enum { PRIM_PUT, PRIM_HPPUT, PRIM_GET, PRIM_HPGET, PRIM_SEND, NPRIMS };
enum { PAT_ALLTOALL, PAT_PERMUTATION, PAT_SHIFT, NPATTERNS };

/* ---- options (parsed in main before bsp_init; read-only afterwards) -------------------- */

typedef struct {
  int quick;
  const char *output; /* NULL: bspprobe-<host>-p<P>-<date>.jsonl */
  uint64_t seed;
  unsigned sections;        /* bit i: section i */
  unsigned primitives;      /* bit i: primitive i */
  unsigned patterns;        /* bit i: pattern i */
  long max_words;           /* H_MAX: most words one process sends in one superstep */
  const char *library_name; /* header.library */
  int reps;                 /* > 0: exactly this many repetitions per point (no time rule) */
  int procs;                /* -n P: bsp_begin(P); 0: bsp_nprocs() */
  int calibrate;            /* --calibrate: one calibration round instead of the sections */
  int calibration;          /* rounds among the validation points (--no-calibration: 0) */
  int sentinels;            /* sentinel visits: 1 on, 0 off, -1 the default (sentinel.c) */
  int mlock;                /* 1: lock the memory into RAM (mlockall); --no-mlock: 0 */
  long long mem_max_bytes;  /* mem: the largest array per process (0: the mode's default) */
  unsigned mem_ops;         /* mem: bit i: operation i of bspp_mem_op_names */
  unsigned mem_elems;       /* mem: bit i: element type i of bspp_mem_elem_names */
  long long pp_max_bytes;   /* pp: the largest message (0: the mode's default) */
  const char *disk_dir;     /* disk: where the temporary directory is made (NULL: $TMPDIR, /tmp) */
  long long disk_max_bytes; /* disk: the largest file (0: the mode's default) */
  int argc;
  char **argv;
} probe_opts;

/* ---- measurement parameters of one mode (quick or full) ------------------------------- */

typedef struct {
  int min_reps;       /* at least this many repetitions per point */
  int max_reps;       /* at most this many */
  double min_point_s; /* and repetitions until their total is at least this */
  /* the adaptive rule of the g, validation, memcpy_h and TotalExchange points (timing.c):
   * after min_reps, more until the 95% interval of the median is within +-target_ci_rel of
   * it, or max_reps, or the samples took max_point_s */
  double target_ci_rel;
  double max_point_s;
  /* the points of one measure_points order (g and validation) share this budget: a point may
   * take no more than the budget left over the points left (and max_point_s), beyond its
   * min_reps samples */
  double g_budget_s;
  int mem_reps;     /* samples per point of the mem suite */
  int l_samples;    /* samples of each l / As latency test */
  double l_batch_s; /* each such sample: a batch of supersteps lasting about this long */
  int validation_per_combo;
  /* f */
  long dot_n;
  long dot_pool_bytes;
  int dot_reps;
  int ijk_n;
  int ijk_reps;
  int gemm_n;
  int gemm_reps;
  /* memcpy */
  long memcpy_bytes;
  long memcpy_pool_bytes;
  int memcpy_reps;
} probe_params;

/* ---- JSON lines (process 0 only) ------------------------------------------------------ */

typedef struct {
  char *b;
  size_t n, cap;
  int depth;
  int first[16]; /* no comma needed before the next member at this depth */
} jbuf;

/* ---- f's kernels (measure_f.c), which the calibration rounds time too --------------------- */

enum { K_DOT_DOUBLE, K_DOT_DOUBLE_BLAS, K_DOT_INT, K_MM_DOUBLE, K_MM_DOUBLE_BLAS, K_MM_INT, NK };
typedef struct f_state {
  struct probe_ctx *c;
  void *pool; /* dot products: pairs of vectors, rotated */
  long pool_bytes;
  double *ad, *bd, *cd; /* matrices */
  int *ai, *bi, *ci;
  long rot; /* next pair */
} f_state;

/* ---- per-process context -------------------------------------------------------------- */

typedef struct probe_ctx {
  const probe_opts *opt;
  probe_params prm;
  int p, s;
  long hmax;         /* H_MAX in words */
  long area_words;   /* words in each of src and dst (>= hmax, >= p) */
  double *src, *dst; /* registered communication areas */
  double *gather;    /* registered: p * gather_stride doubles (gathers to process 0) */
  int gather_stride;
  double *allv;  /* registered: p doubles (all-gather of one value) */
  double *local; /* this process's samples of the current point */
  /* the machine's state around the current batch (timing.c): this process's start, and on
   * process 0 the machine's counters at the start and the last batch's state object (JSON) */
  bspk_thread_state batch_start;
  bspk_machine_counters batch_machine;
  char *batch_state_json;
  /* the canary (bspk_state.h) around each batch: this process's buffer, the time before the
   * current batch, its work (3 in the batch BSPKIT_CANARY_SLOW names, else 1), the batches
   * timed so far and the one the test hook slows (-1: none) */
  uint64_t *canary_buf;
  double canary_before_s;
  int canary_work;
  long batches, canary_slow;
  /* the current point's share of its section's budget (measure_comm.c; < 0: none) */
  double point_max_s;
  /* sentinel visits made so far (sentinel.c), the same count on every process */
  int sentinel_visits;
  double sentinel_s;    /* what they took (process 0's clock) */
  volatile double sink; /* keeps computed results alive */
  volatile long isink;
  /* process 0 only */
  FILE *out;
  jbuf j;
  long records;
  double t0;            /* start of the run (now()) */
  double sec_t0;        /* start of the current section */
  double last_progress; /* when the progress line was last written */
  double last_load;     /* when a load record was last written */
  int tty;
  int progress_len;
  char warnings[16][256];
  int nwarnings;
  double section_s[NSECTIONS];
  /* the calibration's dot-product pool (cal_f.pool): made by its first round, freed with the
   * context; NULL until then */
  f_state cal_f;
} probe_ctx;

/* bsp_abort with "bspprobe: out of memory (N bytes) on process P" on failure */
static inline void *xmalloc(size_t n) { return bspk_xmalloc("bspprobe", n); }

/* ---- output.c: JSON lines, warnings, progress, load ------------------------------------- */

/* key: the member's name, NULL inside arrays */
void bspp_json_begin(jbuf *j, const char *type);             /* starts a record {"type": type */
void bspp_json_str(jbuf *j, const char *key, const char *v); /* NULL -> null */
void bspp_json_int(jbuf *j, const char *key, long long v);
void bspp_json_num(jbuf *j, const char *key, double v); /* %.9g; not finite -> null */
void bspp_json_bool(jbuf *j, const char *key, int v);
void bspp_json_null(jbuf *j, const char *key);
void bspp_json_raw(jbuf *j, const char *key, const char *json); /* JSON text as is; NULL -> null */
void bspp_json_nums(jbuf *j, const char *key, const double *v, int n, const char *fmt);
void bspp_json_longs(jbuf *j, const char *key, const long *v, int n);
void bspp_json_strs(jbuf *j, const char *key, const char *const *v, int n);
void bspp_json_obj_begin(jbuf *j, const char *key);
void bspp_json_obj_end(jbuf *j);
void bspp_json_arr_begin(jbuf *j, const char *key);
void bspp_json_arr_end(jbuf *j);

void bspp_read_loadavg(double la[3]); /* -1s when unknown */
void bspp_emit(probe_ctx *c);         /* writes c->j as one line, flushes */
void bspp_add_warning(probe_ctx *c, const char *fmt, ...) PROBE_PRINTF(2, 3);
/* Progress on stderr (process 0): what, k of n done; rate-limited unless force. */
void bspp_progress(probe_ctx *c, const char *what, long k, long n, int force);
void bspp_progress_end(probe_ctx *c, const char *section);
void bspp_maybe_load_record(probe_ctx *c, int force);

/* ---- rng.c: splitmix64; every process that seeds it alike draws alike ------------------- */

uint64_t bspp_rng_next(uint64_t *state);
uint64_t bspp_rng_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);
double bspp_rng_unit(uint64_t *state); /* uniform in [0, 1) */
void bspp_rng_shuffle_long(uint64_t *state, long *v, long n);
/* A random derangement of 0..p-1 (no fixed points; the identity when p = 1). */
void bspp_rng_derangement(uint64_t *state, int *perm, int p);

/* ---- probe_ctx.c: names, the context, gathers -------------------------------------------- */

extern const char *const bspp_section_names[NSECTIONS];
extern const char *const bspp_prim_names[NPRIMS];
extern const char *const bspp_pattern_names[NPATTERNS];

/* Collective: the context of a run (opt must outlive it) with areas of hmax words, registered. */
probe_ctx *bspp_ctx_setup(const probe_opts *opt, long hmax);
void bspp_ctx_teardown(probe_ctx *c); /* collective: deregisters and frees */
/* timing.c: the machine's state around each timed batch (bspk_state.h). The words each process
 * appends to its samples for the gather; after it, process 0 holds the batch's state object in
 * c->batch_state_json, which the record writers put under "state". */
#define BSPP_STATE_WORDS BSPK_STATE_WORDS
/* The canary before a batch (before its warm-up); bspp_state_end times the one after it. */
void bspp_canary_before(probe_ctx *c);
void bspp_state_begin(probe_ctx *c);
int bspp_state_end(probe_ctx *c, int n);
void bspp_state_collect(probe_ctx *c, int n);

/* Gathers local[0..n) of every process to process 0, where out[i] = max over processes of
 * local[i]; one superstep. out may be NULL on processes other than 0. (The max of one value
 * on every process: bspk_max_over_processes(v, c->allv).) */
void bspp_gather_max(probe_ctx *c, const double *local, int n, double *out);

/* ---- measure_f.c: f and memcpy; f's kernels for the calibration ------------------------- */

extern const char *const bspp_f_kernel_names[NK];
int bspp_f_kernel_available(int k); /* the BLAS kernels need CBLAS */
void bspp_f_blas_one_thread(void);  /* f is the speed of one core: BLAS on one thread */
void bspp_f_fill_pool(f_state *st, int as_int);
/* One warm-up run of kernel k of size n, then reps timed runs into samples[] (process 0). */
void bspp_f_time_kernel(f_state *st, int k, long n, double *samples, int reps);
void bspp_measure_f(probe_ctx *c);
void bspp_measure_memcpy(probe_ctx *c);
const char *bspp_blas_name(char *buf, size_t n); /* "openblas 0.3.21" or "none" */
const char *bspp_blas_config(void);              /* OpenBLAS config string or NULL */
const char *bspp_blas_corename(void);            /* OpenBLAS core name or NULL */

/* ---- timing.c: how a communication sample is timed ---------------------------------------- */

/* One superstep (or a few) of the operation being timed; arg is the operation's own. */
typedef void (*op_fn)(probe_ctx *c, const void *arg);

/* One point: warm-up, repetitions (at least min_reps and until they took min_s, at most
 * max_reps; exactly --reps N when given); on process 0 out[] gets the max over processes of
 * each repetition. Returns the repetitions, *warmups the warm-up runs. */
int bspp_time_point(probe_ctx *c, op_fn fn, const void *arg, int min_reps, double min_s,
                    double *out, int *warmups);
/* The adaptive rule (c->prm: min_reps, max_reps, min_point_s, target_ci_rel, max_point_s).
 * Why a point stopped: */
enum { BSPP_STOP_CI, BSPP_STOP_MAX_REPS, BSPP_STOP_TIME, BSPP_STOP_FIXED, BSPP_NSTOPS };
extern const char *const bspp_stop_names[BSPP_NSTOPS]; /* "ci", "max_reps", "time", "fixed" */
typedef struct {
  int min_reps, max_reps;
  double min_s, target, max_s;
} bspp_adaptive_rule;
/* The 0-based rank j of the distribution-free 95% interval of the median of n samples,
 * [x_(j), x_(n-1-j)] of the sorted samples: the largest j with P(B <= j) <= 0.025 for B
 * binomial(n, 1/2); -1 for n < 6 (no such interval). */
int bspp_median_ci_rank(int n);
/* Half the width of that interval over the median (x is not changed); -1 when n < 6 or the
 * median is not positive. */
double bspp_median_ci_rel(const double *x, int n);
/* After n samples x (their sum elapsed_s): 0 when the point stops (*stop says why), else the
 * count of samples to reach before the next check. *ci_rel: bspp_median_ci_rel(x, n). */
int bspp_adaptive_next(const bspp_adaptive_rule *r, const double *x, int n, double elapsed_s,
                       double *ci_rel, int *stop);
/* One point under the adaptive rule (--reps N: exactly N, stop "fixed"); like bspp_time_point,
 * and on process 0 *ci_rel and *stop of the samples kept. */
int bspp_time_point_adaptive(probe_ctx *c, op_fn fn, const void *arg, double *out, int *warmups,
                             double *ci_rel, int *stop);
/* A record's median_ci_rel (null when undefined) and stop: the adaptive rule's outcome. */
void bspp_json_adaptive(jbuf *j, double ci_rel, int stop);

/* Batched latency samples: each = (time of `batch` back-to-back calls of fn) / batch, max over
 * processes; n samples (--reps N when given) into out (process 0). Returns their number,
 * *batch_out the batch size. */
int bspp_time_batched(probe_ctx *c, op_fn fn, const void *arg, int n, double *out, long *batch_out);

/* The h-relation of one g point. */
typedef struct {
  int prim, pattern;
  long hs, count; /* h* (words per request), c (requests per process) */
  int target;     /* permutation and shift: where every request goes (or reads from) */
} comm_op;
/* Sets o->target for this process (perm: room for p ints); a permutation is drawn per point
 * from the seed. */
void bspp_comm_target(probe_ctx *c, comm_op *o, int *perm);
void bspp_comm_run(probe_ctx *c, const void *arg); /* an op_fn; arg: a comm_op */
/* One g point timed with bspp_time_point. */
int bspp_time_comm_point(probe_ctx *c, int prim, int pattern, long hs, long count, int min_reps,
                         double min_s, double *out, int *warmups);

/* A latency test (l, and Tests 1-5 of the As suite): one kind of superstep, timed in batches. */
typedef struct {
  const char *name;
  op_fn fn;
  const char *what; /* what one superstep of it does */
} latency_test;
void bspp_op_sync(probe_ctx *c, const void *arg); /* bsp_sync alone (l's empty, As's Empty) */

/* The l variants, timed by the l section and the calibration rounds. */
enum { L_EMPTY, L_SHIFT, L_ALLTOALL, NLVARIANTS };
extern const latency_test bspp_l_variants[NLVARIANTS];
/* `samples` batched samples of l variant `variant` (--reps N when given) into out (process
 * 0); returns their number, *batch the batch size. */
int bspp_time_l_variant(probe_ctx *c, int variant, int samples, double *out, long *batch);

/* ---- calibrate.c: the short calibration ------------------------------------------------------ */

/* One round (collective): f's dot products, two g points and two l variants, written as one
 * `calibration` record by process 0. seq < 0: null. */
void bspp_run_calibration_round(probe_ctx *c, int round, long seq);

/* ---- measure_comm.c: the communication sections ----------------------------------------- */

void bspp_measure_g(probe_ctx *c);
void bspp_measure_validation(probe_ctx *c);
void bspp_measure_l(probe_ctx *c);
void bspp_measure_as(probe_ctx *c);
/* The planned grid, for the header: fills msg_words[] and counts[] (each at most 64). */
void bspp_plan_grid_axes(const probe_ctx *c, long *msg_words, int *nm, long *counts, int *nc);
long bspp_grid_points_per_combo(const probe_ctx *c);

/* ---- sentinel.c: the machine's noise, re-measured through the run (issue 39) ------------ */

/* Whether this run makes sentinel visits (--sentinels, --no-sentinels, else the default: with
 * the g section and without --reps). */
int bspp_sentinels_on(const probe_ctx *c);
/* One visit (collective): the four regimes, one `sentinel` record each; where: the section it
 * follows or is inside, seq: the position in that section's order (-1: between sections). */
void bspp_sentinel_visit(probe_ctx *c, const char *where, long seq);
/* Inside the g section's order of n points: a visit before point i (i > 0) every so often. */
int bspp_sentinel_due(const probe_ctx *c, long i, long n);

/* ---- measure_hw.c: the hardware references (memcpy_h, hw_barrier, hw_pingpong) ---------- */

void bspp_measure_hw(probe_ctx *c);

/* ---- the memory-hierarchy suites of Kang et al. ----------------------------------------- */

void bspp_measure_mem(probe_ctx *c); /* measure_mem.c: processor-memory, sec. 4.2.1 */
/* the mem suite's operations and element types (--mem-ops, --mem-elems); the first two of
 * each are the default */
enum { MEM_OP_READ, MEM_OP_WRITE, MEM_OP_MULTIPLY, MEM_OP_DIVIDE, MEM_NOPS };
enum { MEM_ELEM_INT, MEM_ELEM_DOUBLE, MEM_ELEM_FLOAT, MEM_NELEMS };
#define MEM_DEFAULT_MASK 3u
extern const char *const bspp_mem_op_names[MEM_NOPS];
extern const char *const bspp_mem_elem_names[MEM_NELEMS];
void bspp_measure_pp(probe_ctx *c);   /* measure_pp.c: processor-processor, sec. 4.2.2 */
void bspp_measure_disk(probe_ctx *c); /* measure_disk.c: memory-disk, sec. 4.2.3 */

#endif /* BSPPROBE_PROBE_H */
