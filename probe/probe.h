/*
 * probe.h - declarations shared by the bspprobe sources (see bspprobe.c for the overview).
 *
 * Written against bsp.h only. On the threads back end every BSP process is a thread of one
 * program, so NOTHING here keeps per-process state in a global: each process has its own
 * probe_ctx (allocated in its SPMD function). The globals that exist (the options and the
 * machine description) are written once in main before bsp_init and only read afterwards.
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

/* f .. validation: the BSP parameters; mem, pp, disk: the memory-hierarchy suites of Kang et al.
 * (`003_...` sec. 4.2), which the IMH model integrates. */
enum {
  SEC_F,
  SEC_MEMCPY,
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

extern const char *const section_names[NSECTIONS];
extern const char *const prim_names[NPRIMS];
extern const char *const pattern_names[NPATTERNS];

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
  int calibrate;            /* --calibrate: one calibration round instead of the sections */
  int calibration;          /* rounds among the validation points (--no-calibration: 0) */
  int mlock;                /* 1: lock the memory into RAM (mlockall); --no-mlock: 0 */
  long long mem_max_bytes;  /* mem: the largest array per process (0: the mode's default) */
  long long pp_max_bytes;   /* pp: the largest message (0: the mode's default) */
  const char *disk_dir;     /* disk: where the temporary directory is made (NULL: $TMPDIR, /tmp) */
  long long disk_max_bytes; /* disk: the largest file (0: the mode's default) */
  int argc;
  char **argv;
} probe_opts;

/* What main found out about the machine before the BSP processes started. */
typedef struct {
  char host[256];
  char cpu[256];
  char kernel[256];
  int cores;        /* available to the program (affinity mask at start) */
  int cores_online; /* sysconf(_SC_NPROCESSORS_ONLN) */
} machine_info;

extern probe_opts g_opts;      /* read-only after main parsed the command line */
extern machine_info g_machine; /* read-only after main filled it in */

/* ---- measurement parameters of one mode (quick or full) ------------------------------- */

typedef struct {
  int min_reps;       /* at least this many repetitions per point */
  int max_reps;       /* at most this many */
  double min_point_s; /* and repetitions until their total is at least this */
  int l_samples;      /* samples of each l / As latency test */
  double l_batch_s;   /* each such sample: a batch of supersteps lasting about this long */
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

void j_begin(jbuf *j, const char *type);             /* starts a record {"type": type */
void j_key(jbuf *j, const char *key);                /* ,"key": (key NULL inside arrays) */
void j_str(jbuf *j, const char *key, const char *v); /* NULL -> null */
void j_int(jbuf *j, const char *key, long long v);
void j_num(jbuf *j, const char *key, double v); /* %.9g; not finite -> null */
void j_bool(jbuf *j, const char *key, int v);
void j_null(jbuf *j, const char *key);
void j_nums(jbuf *j, const char *key, const double *v, int n, const char *fmt);
void j_longs(jbuf *j, const char *key, const long *v, int n);
void j_strs(jbuf *j, const char *key, const char *const *v, int n);
void j_obj_begin(jbuf *j, const char *key);
void j_obj_end(jbuf *j);
void j_arr_begin(jbuf *j, const char *key);
void j_arr_end(jbuf *j);
void j_raw(jbuf *j, const char *text); /* appends text as is */

/* ---- per-process context -------------------------------------------------------------- */

struct f_state;

typedef struct probe_ctx {
  const probe_opts *opt;
  probe_params prm;
  int p, s;
  long hmax;         /* H_MAX in words */
  long area_words;   /* words in each of src and dst (>= hmax, >= p) */
  double *src, *dst; /* registered communication areas */
  double *gather;    /* registered: p * gather_stride doubles (gathers to process 0) */
  int gather_stride;
  double *allv;         /* registered: p doubles (all-gather of one value) */
  double *local;        /* this process's samples of the current point */
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
  struct f_state *cal_f; /* the calibration's dot-product pool: made once per run */
} probe_ctx;

/* ---- helpers (output.c) ------------------------------------------------------------------- */

void read_loadavg(double la[3]); /* -1s when unknown */
void emit(probe_ctx *c);         /* writes c->j as one line, flushes */
void add_warning(probe_ctx *c, const char *fmt, ...) PROBE_PRINTF(2, 3);
/* Progress on stderr (process 0): what, k of n done; rate-limited unless force. */
void progress(probe_ctx *c, const char *what, long k, long n, int force);
void progress_end(probe_ctx *c, const char *section);
void maybe_load_record(probe_ctx *c, int force);
/* bsp_abort with "bspprobe: out of memory (N bytes) on process P" on failure */
static inline void *xmalloc(size_t n) { return bspk_xmalloc("bspprobe", n); }

/* PRNG: splitmix64; every process that seeds it alike draws alike. */
uint64_t rng_next(uint64_t *state);
uint64_t rng_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);
long rng_below(uint64_t *state, long n); /* uniform in [0, n) */
double rng_unit(uint64_t *state);        /* uniform in [0, 1) */
void rng_shuffle_long(uint64_t *state, long *v, long n);
/* A random derangement of 0..p-1 (no fixed points; the identity when p = 1). */
void rng_derangement(uint64_t *state, int *perm, int p);

/* ---- collective helpers (measure_comm.c) ------------------------------------------------ */

/* The max over processes of one value: bspk_max_over_processes(v, c->allv). */
/* Gathers local[0..n) of every process to process 0, where out[i] = max over processes of
 * local[i]; one superstep. out may be NULL on processes other than 0. */
void gather_max(probe_ctx *c, const double *local, int n, double *out);

/* ---- what the calibration rounds share with the sections ---------------------------------- */

/* f's kernels (measure_f.c) */
enum { K_DOT_DOUBLE, K_DOT_DOUBLE_BLAS, K_DOT_INT, K_MM_DOUBLE, K_MM_DOUBLE_BLAS, K_MM_INT, NK };
extern const char *const f_kernel_names[NK];
typedef struct f_state {
  probe_ctx *c;
  void *pool; /* dot products: pairs of vectors, rotated */
  long pool_bytes;
  double *ad, *bd, *cd; /* matrices */
  int *ai, *bi, *ci;
  long rot; /* next pair */
} f_state;
int f_kernel_available(int k); /* the BLAS kernels need CBLAS */
void f_blas_one_thread(void);  /* f is the speed of one core: BLAS on one thread */
/* st->pool: dot_pool_bytes (at least 4 vectors of dot_n doubles), not filled */
void f_alloc_dot_pool(f_state *st, probe_ctx *c);
void f_fill_pool(f_state *st, int as_int);
/* One warm-up run of kernel k of size n, then reps timed runs into samples[] (process 0). */
void f_time_kernel(f_state *st, int k, long n, double *samples, int reps);

/* One g point (measure_comm.c) timed as in measure_g, with its own repetition rule: at least
 * min_reps and until they took min_s, at most max_reps (exactly --reps N when given); out
 * (process 0) gets each repetition's max over processes. Returns the repetitions. */
int measure_comm_point(probe_ctx *c, int prim, int pattern, long hs, long count, int min_reps,
                       double min_s, double *out, int *warmups);
/* The l variants (measure_comm.c): `samples` batched samples (--reps N when given) into out
 * (process 0); returns their number, *batch the batch size. */
enum { L_EMPTY, L_SHIFT, L_ALLTOALL, NLVARIANTS };
const char *l_variant_name(int variant);
int measure_l_variant(probe_ctx *c, int variant, int samples, double *out, long *batch);

/* One round of the short calibration (calibrate.c; collective): f's dot products, two g points
 * and two l variants, written as one `calibration` record by process 0. seq < 0: null. */
void calibration_round(probe_ctx *c, int round, long seq);
void calibration_free(probe_ctx *c); /* the dot-product pool, at the end of the run */

/* ---- the context (probe_ctx.c) ------------------------------------------------------------- */

void probe_set_params(probe_params *pr, int quick); /* the settings of the quick or full mode */
/* Collective: the context of a run (opt must outlive it) with areas of hmax words, registered. */
probe_ctx *probe_ctx_setup(const probe_opts *opt, long hmax);
void probe_ctx_teardown(probe_ctx *c); /* collective: deregisters and frees */

/* ---- sections ----------------------------------------------------------------------------- */

void measure_f(probe_ctx *c);               /* measure_f.c */
void measure_memcpy(probe_ctx *c);          /* measure_f.c */
const char *blas_name(char *buf, size_t n); /* "openblas 0.3.21" or "none" */
const char *blas_config(void);              /* OpenBLAS config string or NULL */
const char *blas_corename(void);            /* OpenBLAS core name or NULL */
void measure_g(probe_ctx *c);               /* measure_comm.c */
void measure_validation(probe_ctx *c);
void measure_l(probe_ctx *c);
void measure_as(probe_ctx *c);
void measure_mem(probe_ctx *c);  /* measure_mem.c: processor-memory, Kang et al. sec. 4.2.1 */
void measure_pp(probe_ctx *c);   /* measure_pp.c: processor-processor, sec. 4.2.2 */
void measure_disk(probe_ctx *c); /* measure_disk.c: memory-disk, sec. 4.2.3 */
/* The planned grid, for the header: fills msg_words[] and counts[] (each at most 64). */
void plan_grid_axes(const probe_ctx *c, long *msg_words, int *nm, long *counts, int *nc);
long grid_points_per_combo(const probe_ctx *c);

#endif /* BSPPROBE_PROBE_H */
