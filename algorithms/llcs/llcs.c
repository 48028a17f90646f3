/*
 * bspalg-llcs - length of the longest common subsequence of two random strings, by the BSP
 * blocked wavefront of the thesis (ch. 5, Fig. 5.2-5.4) with the simple dynamic-programming
 * kernel (Fig. 5.3) or the bit-parallel one of Crochemore et al. (Fig. 5.7).
 *
 * The DP table L (columns: string a, length m; rows: string b, length n) is cut into a
 * G x G grid of blocks, G = alpha p. Process s owns the block columns x = s, s + p, ...
 * (cyclic, alpha columns each; "one processor is always assigned blocks from the same
 * column", so what a block passes down stays local). Both strings are made on every process
 * from the seed (no input communication; the thesis fetched each block's part of b).
 *
 *   superstep d = 0 .. 2G-2: every process computes its blocks (x, y) with x + y = d (the
 *     anti-diagonal; at most alpha), then puts each block's right boundary to the owner of
 *     block column x + 1, process (s + 1) mod p (one put per block, pattern "shift"):
 *       dp:     the block's last column of L, bh 32-bit values (ceil(bh / 2) words);
 *       bitpar: the block's part of V = ~Delta L, nw 64-bit words (bh <= 64 nw rows);
 *     the row of L (dp) or the carries (bitpar) passed down stay with the process.
 *   superstep 2G-1: the owner of column G-1 (it holds L(m, n), or has summed the zero bits
 *     of every block's V in the last column) puts the LLCS to process 0 (one word).
 *
 * Cost with n = m, G | n (and 64 G | n for bitpar), b_G = n / G (derivation in README.md):
 *   W = b_G^2 (p alpha (alpha + 1) - alpha) cells                          (eq. 5.2)
 *   H = alpha (p alpha + p - 2) * b_G / 2 (dp) or b_G / 64 (bitpar) words, + 1 for p > 1
 *   S = 2G = 2 alpha p
 */
#include <bsp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "bspk_clock.h"
#include "llcs_kernels.h"

static const char prog[] = "bspalg-llcs";

enum kernel { KERNEL_DP, KERNEL_BITPAR };

/* The problem's options: set before bsp_init, read-only afterwards. */
static struct {
  long m, n;  /* lengths of a (columns) and b (rows) */
  long alpha; /* 0: choose (default_alpha) */
  enum kernel kernel;
  int sigma; /* alphabet size */
} opt = {100000, 100000, 0, KERNEL_BITPAR, 4};

/* The check (process 0, after the runs): up to this many cells against the sequential DP
 * (~1e9 cells/s), beyond against the sequential bit-parallel algorithm (a few 1e10 cells/s:
 * about as long as the run on one process; --no-check skips it). */
#define CHECK_DP_MAX_CELLS 5.0e7

/* ---------------------------------------------------------------------- the inputs */

/* Character i of string `which` (0: a, 1: b): a function of (seed, which, i) only, so that
 * every process makes the same strings. Uniform over 0 .. sigma-1 (multiply-shift). */
static unsigned char input_char(unsigned long seed, int which, long i, int sigma) {
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 2 + (uint64_t)which + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (unsigned char)(((z >> 32) * (uint64_t)sigma) >> 32);
}

static unsigned char *make_string(unsigned long seed, int which, long len, int sigma) {
  unsigned char *str =
      bspalg_alloc((size_t)len + 1, "for the strings (m = %ld, n = %ld)", opt.m, opt.n);
  for (long i = 0; i < len; i++) str[i] = input_char(seed, which, i, sigma);
  return str;
}

/* -------------------------------------------------------------------- the block grid */

/* Block column x covers a[col_start(x) .. col_start(x+1)); block row y covers rows
 * [row_start(y), row_start(y+1)) of b (dp) or words [row_start(y), ..) of V (bitpar): the
 * bit-parallel blocks start at word boundaries so that no vector needs shifting. Even
 * splits: sizes differ by at most one, and blocks are empty where G exceeds the length. */
typedef struct {
  long G, m, n;
  long row_units; /* dp: n rows; bitpar: ceil(n / 64) words */
  enum kernel kernel;
} grid;

/* total * i fits in a long: total <= 2^30 and i <= G <= 2^26 */
static long split(long total, long parts, long i) { return total * i / parts; }
static long col_start(const grid *g, long x) { return split(g->m, g->G, x); }
static long row_start(const grid *g, long y) { return split(g->row_units, g->G, y); }

/* Rows of b (cells per column) in block row y. */
static long block_rows(const grid *g, long y) {
  if (g->kernel == KERNEL_DP) return row_start(g, y + 1) - row_start(g, y);
  long lo = 64 * row_start(g, y), hi = 64 * row_start(g, y + 1);
  if (hi > g->n) hi = g->n;
  return hi > lo ? hi - lo : 0;
}

/* Default alpha (documented in README.md):
 *   alpha = max(alpha_cache, 16), at most what keeps blocks >= 256 columns and >= 256 rows
 *   (dp) or >= 16 words (bitpar), at least 1.
 * alpha_cache is eq. 5.4 with b = LLCS_CACHE_BYTES: the data one row of a block touches
 * again and again must fit: dp 5 bytes per column (a 32-bit L value and a character), so
 * alpha >= 5 m / (p b); bitpar (1 + sigma) bits per row (the vector V and sigma masks), so
 * alpha >= (1 + sigma) n / (8 p b). The floor of 16 keeps the wavefront's fill and drain
 * small: the cells on the critical path exceed mn / p by a factor 1 + (p - 1) / G. */
#define LLCS_CACHE_KIB 256
#define LLCS_CACHE_BYTES (LLCS_CACHE_KIB * 1024L)
static long default_alpha(long m, long n, int p, enum kernel kernel, int sigma) {
  double want;
  long most;
  if (kernel == KERNEL_DP) {
    want = 5.0 * (double)m / ((double)p * LLCS_CACHE_BYTES);
    long shorter = m < n ? m : n;
    most = shorter / (256L * p);
  } else {
    want = (1.0 + sigma) * (double)n / (8.0 * p * LLCS_CACHE_BYTES);
    long words = (n + 63) / 64, by_words = words / (16L * p), by_cols = m / (256L * p);
    most = by_words < by_cols ? by_words : by_cols;
  }
  long alpha = (long)want + ((double)(long)want < want);
  if (alpha < 16) alpha = 16;
  if (alpha > most) alpha = most;
  return alpha < 1 ? 1 : alpha;
}

#define STRINGIFY(x) #x
#define STRING_OF(x) STRINGIFY(x)

/* --help: what it does and its own options */
static const char help[] =
    "LLCS of two random strings by the BSP blocked wavefront over a G x G grid, G = alpha P.\n"
    "  --size N          both strings have length N (default 100000)\n"
    "  --sizes M,N       string a (split into block columns) has length M, b length N\n"
    "  --kernel K        dp (dynamic programming, Fig. 5.3) or bitpar (bit-parallel, Fig. 5.7;\n"
    "                    default)\n"
    "  --alpha A         block columns per process (default: eq. 5.4 for a " STRING_OF(LLCS_CACHE_KIB)
    " KiB cache, at\n"
    "                    least 16, blocks at least 256 cells (dp) or 16 words (bitpar) high)\n"
    "  --alphabet K      characters drawn uniformly from K symbols, 1..256 (default 4)\n";

#define MAX_LENGTH (1L << 30) /* of a string */

static int option(const char *arg, const char *value) {
  static const char *const kernels[] = {"dp", "bitpar"}; /* indexed by enum kernel */
  if (!value) return 0;
  if (!strcmp(arg, "--size")) {
    opt.m = opt.n = bspalg_parse_long(prog, "--size", value, 1, MAX_LENGTH);
  } else if (!strcmp(arg, "--sizes")) {
    const char *comma = strchr(value, ',');
    if (!comma) {
      fprintf(stderr, "%s: --sizes must be M,N (two lengths), not '%s'\n", prog, value);
      exit(2);
    }
    char first[32];
    size_t len = (size_t)(comma - value);
    snprintf(first, sizeof first, "%.*s", (int)(len < sizeof first ? len : sizeof first - 1),
             value);
    opt.m = bspalg_parse_long(prog, "--sizes M", first, 1, MAX_LENGTH);
    opt.n = bspalg_parse_long(prog, "--sizes N", comma + 1, 1, MAX_LENGTH);
  } else if (!strcmp(arg, "--alpha")) {
    opt.alpha = bspalg_parse_long(prog, "--alpha", value, 1, 1000000);
  } else if (!strcmp(arg, "--alphabet")) {
    opt.sigma = (int)bspalg_parse_long(prog, "--alphabet", value, 1, 256);
  } else if (!strcmp(arg, "--kernel")) {
    opt.kernel = (enum kernel)bspalg_parse_choice(prog, "--kernel", value, kernels, 2);
  } else {
    return 0;
  }
  return 2;
}

/* ------------------------------------------------------------- per-process state */

/* Where a repetition stands (protected: every superstep of the wavefront ends with a
 * checkpoint), and what it carries from one superstep to the next besides the blocks' rows. */
typedef struct {
  long d;          /* the next superstep of the wavefront (anti-diagonal) */
  long last_value; /* dp: L(m, j) of the last row computed in column G-1 */
  int64_t answer;  /* registered; process 0 receives the LLCS here (bitpar: the owner of the
                      last column sums the zero bits of V in it) */
} llcs_progress;

typedef struct {
  grid g;
  int p, s;
  long ncols;            /* block columns owned: x = s + i p, i < ncols */
  long max_cols;         /* the widest block column (characters of a) */
  long max_units;        /* the tallest block row (dp: rows; bitpar: words) */
  size_t boundary_bytes; /* one block's right boundary: dp 4 * max_units, bitpar 8 * max_units */
  const unsigned char *a, *b;
  /* dp: per owned column, the row of L above the next block (max_cols + 1 values) */
  int32_t *rows;
  /* bitpar: per owned column, the carries passed down (max_cols); the match masks of all b */
  unsigned char *carries;
  uint64_t *masks;
  size_t mask_stride;
  /* per owned column, the right boundary of the block to its left (registered: the left
   * neighbour puts into it), and a scratch one for the blocks of column 0 */
  unsigned char *incoming, *first;
  llcs_progress *progress;
  long llcs;  /* process 0: the last repetition's LLCS (measuring f reuses answer) */
  long alpha; /* block columns per process: G = alpha p */
} llcs_state;

static void *xmalloc(size_t bytes) { return bspalg_alloc(bytes, "(%zu bytes)", bytes); }

/* The state at the start of a repetition: L = 0 above the table (dp), no carries (bitpar). */
static void reset_state(llcs_state *st) {
  if (st->g.kernel == KERNEL_DP)
    memset(st->rows, 0, (size_t)st->ncols * (size_t)(st->max_cols + 1) * sizeof *st->rows);
  else memset(st->carries, 0, (size_t)st->ncols * (size_t)st->max_cols);
  *st->progress = (llcs_progress){0, 0, 0};
}

/* Compute block (x, y) of owned column index i; its input boundary is `boundary` (the left
 * neighbour's output, or zeros / ones for x = 0), overwritten with this block's output.
 * Returns the cells computed. */
static double compute_block(llcs_state *st, long i, long x, long y, void *boundary) {
  const grid *g = &st->g;
  long k0 = col_start(g, x), bw = col_start(g, x + 1) - k0;
  long r0 = row_start(g, y), units = row_start(g, y + 1) - r0;
  if (g->kernel == KERNEL_DP) {
    int32_t *row = st->rows + (size_t)i * (size_t)(st->max_cols + 1);
    llcs_dp_block(st->a + k0, (size_t)bw, st->b + r0, (size_t)units, row, boundary);
  } else {
    unsigned char *carries = st->carries + (size_t)i * (size_t)st->max_cols;
    llcs_bitpar_block(st->masks + r0, st->mask_stride, st->a + k0, (size_t)bw, boundary,
                      (size_t)units, carries);
  }
  return (double)bw * (double)block_rows(g, y);
}

/* The input boundary of a block in column 0: L = 0 left of the table (dp), V = all ones. */
static void *first_column_boundary(llcs_state *st, long units) {
  if (st->g.kernel == KERNEL_DP) memset(st->first, 0, (size_t)units * sizeof(int32_t));
  else memset(st->first, 0xff, (size_t)units * sizeof(uint64_t));
  return st->first;
}

/* One run of the algorithm (S = 2G supersteps); the LLCS ends on process 0. It starts at the
 * superstep the progress names (0, or the one after a restart's checkpoint). */
static void run_wavefront(llcs_state *st) {
  const grid *g = &st->g;
  long G = g->G;
  int p = st->p, s = st->s;
  size_t unit_bytes = g->kernel == KERNEL_DP ? sizeof(int32_t) : sizeof(uint64_t);
  if (g->kernel == KERNEL_BITPAR)
    llcs_bitpar_masks(st->b, (size_t)g->n, opt.sigma, st->masks, st->mask_stride);
  llcs_progress *at = st->progress;
  for (long d = at->d; d <= 2 * G - 2; d++) {
    /* Columns in decreasing order: with p = 1 the output of block x goes straight into the
     * input of column x + 1, whose block on this anti-diagonal has then already run. */
    for (long i = st->ncols - 1; i >= 0; i--) {
      long x = s + i * p, y = d - x;
      if (y < 0 || y >= G) continue;
      long units = row_start(g, y + 1) - row_start(g, y);
      void *boundary =
          x == 0 ? first_column_boundary(st, units) : st->incoming + (size_t)i * st->boundary_bytes;
      bspalg_work(compute_block(st, i, x, y, boundary));
      size_t bytes = (size_t)units * unit_bytes;
      if (x < G - 1) {
        int dest = (int)((x + 1) % p);
        size_t offset = (size_t)((x + 1) / p) * st->boundary_bytes;
        if (bytes == 0) continue;
        if (dest == s) {
          memcpy(st->incoming + offset, boundary, bytes);
        } else {
          bsp_put(dest, boundary, st->incoming, (bsp_size_t)offset, (bsp_size_t)bytes);
          bspalg_put(dest, bspalg_words((long)bytes));
        }
      } else if (g->kernel == KERNEL_DP) {
        if (units > 0) at->last_value = ((const int32_t *)boundary)[units - 1];
      } else {
        at->answer += llcs_count_zeros(boundary, (size_t)units);
      }
    }
    int communicates = p > 1 && d < 2 * G - 2;
    at->d = d + 1;
    bspalg_checkpoint_sync(communicates ? "put" : NULL, communicates ? "shift" : NULL);
  }
  /* The extra superstep: the owner of the last column hands the LLCS to process 0. */
  int owner = (int)((G - 1) % p);
  if (s == owner) {
    if (g->kernel == KERNEL_DP) at->answer = at->last_value;
    if (owner != 0) {
      bsp_put(0, &at->answer, &at->answer, 0, sizeof at->answer);
      bspalg_put(0, 1);
    }
  }
  bspalg_sync(owner != 0 ? "put" : NULL, owner != 0 ? "shift" : NULL);
}

/* f on the calling process (process 0 alone, or every process at once for f_all): the kernel
 * on the blocks (0, 0), (0, 1), ... of this run's grid (column 0's shape), as many as make
 * >= 1e8 (dp) or 5e9 (bitpar) cells (at least one), median of the repetitions, which run for
 * >= 1 s (at least 3, at most 50): a kernel's rate wanders by 10-30% from one tenth of a
 * second to the next on a shared machine, so the median needs many short samples. Not
 * counted in W: the counts are those of the timed runs. */
static double measure_kernel(llcs_state *st, char *note, size_t note_size) {
  const grid *g = &st->g;
  double budget = g->kernel == KERNEL_DP ? 1e8 : 5e9;
  long blocks = 0;
  double cells = 0.0;
  while (blocks < g->G && (blocks == 0 || cells < budget))
    cells += (double)(col_start(g, 1) * block_rows(g, blocks++));
  if (cells <= 0.0) {
    snprintf(note, note_size, "not measured: the blocks of column 0 are empty");
    return 0.0;
  }
  double samples[50];
  int reps = 0;
  double start = bspk_monotonic_seconds();
  while (reps < 50 && (reps < 3 || bspk_monotonic_seconds() - start < 1.0)) {
    reset_state(st);
    if (g->kernel == KERNEL_BITPAR)
      llcs_bitpar_masks(st->b, (size_t)g->n, opt.sigma, st->masks, st->mask_stride);
    double t0 = bspk_monotonic_seconds();
    for (long y = 0; y < blocks; y++) {
      long units = row_start(g, y + 1) - row_start(g, y);
      compute_block(st, 0, 0, y, first_column_boundary(st, units));
    }
    samples[reps++] = bspk_monotonic_seconds() - t0;
  }
  double f = bspalg_median(samples, reps) / cells;
  snprintf(
      note, note_size,
      "%s kernel on process 0 alone: blocks (0, 0..%ld) of the run's grid, %ld columns x %.0f rows"
      " = %.4g cells, median of %d",
      g->kernel == KERNEL_DP ? "dp" : "bitpar", blocks - 1, col_start(g, 1),
      cells / (double)col_start(g, 1), cells, reps);
  return f;
}

static void *setup(const bspalg_common_opts *opts) {
  int p = bsp_nprocs(), s = bsp_pid();
  long alpha = opt.alpha ? opt.alpha : default_alpha(opt.m, opt.n, p, opt.kernel, opt.sigma);
  llcs_state *st = xmalloc(sizeof *st);
  st->g = (grid){alpha * p, opt.m, opt.n, opt.kernel == KERNEL_DP ? opt.n : (opt.n + 63) / 64,
                 opt.kernel};
  st->p = p;
  st->s = s;
  st->alpha = alpha;
  long G = st->g.G;
  if (G > (1L << 26))
    bsp_abort("%s: the grid G = alpha p = %ld is too large (at most 2^26)\n", prog, G);
  st->ncols = s < G ? (G - s + p - 1) / p : 0;
  st->max_cols = (opt.m + G - 1) / G;
  st->max_units = (st->g.row_units + G - 1) / G;
  st->boundary_bytes =
      (size_t)st->max_units * (opt.kernel == KERNEL_DP ? sizeof(int32_t) : sizeof(uint64_t));
  if ((double)st->ncols * (double)st->boundary_bytes > 0x7fffffff)
    bsp_abort(
        "%s: the boundaries of %ld block columns (%zu bytes each) exceed one registration (2^31 - 1"
        " bytes): use more processes or shorter strings\n",
        prog, st->ncols, st->boundary_bytes);
  st->a = make_string(opts->seed, 0, opt.m, opt.sigma);
  st->b = make_string(opts->seed, 1, opt.n, opt.sigma);
  size_t ncols_alloc = (size_t)(st->ncols > 0 ? st->ncols : 1);
  if (opt.kernel == KERNEL_DP) {
    st->rows = xmalloc(ncols_alloc * (size_t)(st->max_cols + 1) * sizeof *st->rows);
  } else {
    st->carries = xmalloc(ncols_alloc * (size_t)st->max_cols);
    st->mask_stride = (size_t)st->g.row_units;
    st->masks = xmalloc((size_t)opt.sigma * st->mask_stride * sizeof *st->masks);
  }
  st->incoming = xmalloc(ncols_alloc * st->boundary_bytes);
  st->first = xmalloc(st->boundary_bytes);
  st->progress = xmalloc(sizeof *st->progress);
  bspalg_register(st->incoming, ncols_alloc * st->boundary_bytes);
  bspalg_register(&st->progress->answer, sizeof st->progress->answer);
  /* A checkpoint after every superstep of the wavefront: the rows (dp) or carries (bitpar)
   * passed down each owned column, the boundaries passed right, and the progress. */
  bspalg_checkpoint_protect(st->progress, sizeof *st->progress);
  if (opt.kernel == KERNEL_DP)
    bspalg_checkpoint_protect(st->rows,
                              ncols_alloc * (size_t)(st->max_cols + 1) * sizeof *st->rows);
  else bspalg_checkpoint_protect(st->carries, ncols_alloc * (size_t)st->max_cols);
  bspalg_checkpoint_protect(st->incoming, ncols_alloc * st->boundary_bytes);
  return st;
}

static void prepare(void *state) { reset_state(state); }

static void repetition(void *state) {
  llcs_state *st = state;
  run_wavefront(st);
  st->llcs = (long)st->progress->answer;
}

/* The LLCS, on process 0 (the others hold no part of the result). */
static void result(void *state, const void **bytes, size_t *nbytes) {
  const llcs_state *st = state;
  *bytes = &st->llcs;
  *nbytes = st->s == 0 ? sizeof st->llcs : 0;
}

static const char *kernel_name(void) { return opt.kernel == KERNEL_DP ? "dp" : "bitpar"; }

static const char *algorithm_of(void) {
  return opt.kernel == KERNEL_DP ? "llcs-dp" : "llcs-bitpar";
}

/* Process 0 holds the LLCS: against the sequential DP up to CHECK_DP_MAX_CELLS cells, beyond
 * against the sequential bit-parallel algorithm. */
static int check(void *state, bspalg_check_report *report) {
  const llcs_state *st = state;
  if (st->s != 0) return 1;
  long llcs = st->llcs;
  int by_dp = (double)opt.m * (double)opt.n <= CHECK_DP_MAX_CELLS;
  long ref = by_dp ? llcs_reference_dp(st->a, (size_t)opt.m, st->b, (size_t)opt.n)
                   : llcs_reference_bitpar(st->a, (size_t)opt.m, st->b, (size_t)opt.n, opt.sigma);
  if (ref < 0) bsp_abort("%s: out of memory for the sequential reference\n", prog);
  snprintf(report->note, sizeof report->note, "against the sequential %s (LLCS %ld)",
           by_dp ? "dynamic program (recurrence 5.1, two rows)"
                 : "bit-parallel algorithm (one vector over all of b, portable carry)",
           ref);
  if (llcs == ref) return 1;
  snprintf(report->wrong, sizeof report->wrong,
           " on %d processes (kernel %s, m = %ld, n = %ld, alpha = %ld): LLCS %ld, the sequential "
           "reference says %ld",
           st->p, kernel_name(), opt.m, opt.n, st->alpha, llcs, ref);
  return -1;
}

static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  llcs_state *st = state;
  if (st->ncols == 0) return 0.0;
  double f = measure_kernel(st, note, note_size);
  if (!every_process) {
    size_t used = strlen(note);
    snprintf(note + used, note_size - used, "; f_all: the same on every process at once");
  }
  return f;
}

static void params(void *state, char *json, size_t json_size) {
  const llcs_state *st = state;
  snprintf(json, json_size,
           "{\"m\": %ld, \"n\": %ld, \"alpha\": %ld, \"G\": %ld, \"alphabet\": %d, \"kernel\": "
           "\"%s\", \"llcs\": %ld}",
           opt.m, opt.n, st->alpha, st->g.G, opt.sigma, kernel_name(), st->s == 0 ? st->llcs : -1L);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm_of = algorithm_of, .work_unit = "cell", .help = help, .option = option,
    .setup = setup, .prepare = prepare, .repetition = repetition, .check = check, .measure_f = measure_f,
    .params = params, .result = result};
// clang-format on

BSPALG_MAIN(driver)
