/*
 * bspalg-llcs - length of the longest common subsequence of two random strings, by the BSP
 * blocked wavefront of the thesis (ch. 5, Fig. 5.2-5.4) with the simple dynamic-programming
 * kernel (Fig. 5.3) or the bit-parallel one of Crochemore et al. (Fig. 5.7).
 *
 * The DP table L (columns: string a, length m; rows: string b, length n) is cut into a
 * G x G grid of blocks, G = alpha p. Process s owns the block columns x = s, s + p, ...
 * (cyclic, alpha columns each; "one processor is always assigned blocks from the same
 * column", so what a block passes down stays local). Two schedules (--schedule):
 *
 * antidiagonal (default): both strings are made on every process from the seed (no input
 * communication), one superstep per anti-diagonal:
 *   superstep d = 0 .. 2G-2: every process computes its blocks (x, y) with x + y = d (the
 *     anti-diagonal; at most alpha), then puts each block's right boundary to the owner of
 *     block column x + 1, process (s + 1) mod p (one put per block, pattern "shift"):
 *       dp:     the block's last column of L, bh 32-bit values (ceil(bh / 2) words);
 *       bitpar: the block's part of V = ~Delta L, nw 64-bit words (bh <= 64 nw rows);
 *     the row of L (dp) or the carries (bitpar) passed down stay with the process.
 *   superstep 2G-1: the owner of column G-1 (it holds L(m, n), or has summed the zero bits
 *     of every block's V in the last column) puts the LLCS to process 0 (one word).
 *   W = b_G^2 (p alpha (alpha + 1) - alpha) cells (eq. 5.2; n = m, G | n, b_G = n / G),
 *   H = alpha (p alpha + p - 2) * b_G / 2 (dp) or b_G / 64 (bitpar) words, + 1 for p > 1,
 *   S = 2G = 2 alpha p.
 *
 * thesis: Fig. 5.4 as written (seed 000, lines 1038-1064; "Fig. line" below is its own
 * numbering). a is stored by block columns (each process its own), b by block rows dealt
 * cyclically (block row y on process y mod p: "the input data distribution is block-cyclic
 * with blocks of size ceil(n/G)", seed line 995), and every (diag, block) iteration ends
 * with a sync:
 *   iteration j = diag alpha + block (diag = 0 .. 2G-2, block = 0 .. alpha-1): process s's
 *     block is x = block p + s, y = diag - x (Fig. lines 4-5; none where y is outside the grid).
 *   superstep j = 0 .. N-1, N = alpha (2G - 1): compute the block of iteration j - 1 (Fig.
 *     line 10) and put its right boundary to process (s + 1) mod p (line 14), then bsp_hpget
 *     the characters of b of iteration j's block from their owner (line 8), then sync
 *     (lines 9 and 16). The boundaries land in one of two slots per column, by the parity of y:
 * with one slot, the put that wraps from process p-1 to 0 would overwrite the boundary of the block
 * below before process 0 computed it. after sync N-1: the block of iteration N-1, (G-1, G-1), on
 * process (G-1) mod p: dp: local work after the last sync: the LLCS stays there (Fig. line 20: "on
 *       processor G mod p, broadcast if necessary"); S = alpha (2 alpha p - 1) (eq. 5.3);
 *     bitpar: its zero bits summed, the LLCS put to process 0 and one sync more ("one
 *       additional superstep", seed line 1138); S = alpha (2 alpha p - 1) + 1 (eq. 5.5).
 *   A superstep is labelled by what moves more words in it, all processes together: the
 *   boundaries ("put", "shift") or the parts of b ("hpget", "permutation": process s reads
 *   from (diag - s) mod p). W as above; H per superstep in README.md.
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
enum schedule { SCHEDULE_ANTIDIAGONAL, SCHEDULE_THESIS };

/* The problem's options: set before bsp_init, read-only afterwards. */
static struct {
  long m, n;  /* lengths of a (columns) and b (rows) */
  long alpha; /* 0: choose (default_alpha) */
  enum kernel kernel;
  int sigma; /* alphabet size */
  enum schedule schedule;
} opt = {100000, 100000, 0, KERNEL_BITPAR, 4, SCHEDULE_ANTIDIAGONAL};

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

/* Characters first .. first + len - 1 of string `which`, into out. */
static void make_part(unsigned long seed, int which, long first, long len, int sigma,
                      unsigned char *out) {
  for (long i = 0; i < len; i++) out[i] = input_char(seed, which, first + i, sigma);
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

/* The first row of b (character) in block row y. */
static long first_row(const grid *g, long y) {
  return g->kernel == KERNEL_DP ? row_start(g, y) : 64 * row_start(g, y);
}

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
    "  --alphabet K      characters drawn uniformly from K symbols, 1..256 (default 4)\n"
    "  --schedule S      antidiagonal (default: one superstep per anti-diagonal, both strings\n"
    "                    on every process) or thesis (Fig. 5.4: a sync after every block\n"
    "                    iteration, b dealt by block rows and fetched with bsp_hpget)\n";

#define MAX_LENGTH (1L << 30) /* of a string */

static int option(const char *arg, const char *value) {
  static const char *const kernels[] = {"dp", "bitpar"};             /* indexed by enum kernel */
  static const char *const schedules[] = {"antidiagonal", "thesis"}; /* by enum schedule */
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
  } else if (!strcmp(arg, "--schedule")) {
    opt.schedule = (enum schedule)bspalg_parse_choice(prog, "--schedule", value, schedules, 2);
  } else {
    return 0;
  }
  return 2;
}

/* ------------------------------------------------------------- per-process state */

/* Where a repetition stands (protected: every superstep of the wavefront ends with a
 * checkpoint), and what it carries from one superstep to the next besides the blocks' rows. */
typedef struct {
  long d;          /* the next superstep (antidiagonal: the anti-diagonal) */
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
  const unsigned char *a, *b; /* antidiagonal: the whole strings (thesis: NULL) */
  /* thesis: this process' block columns of a (column i at i max_cols), its block rows of b
   * (block row y = s + j p at j row_bytes; registered: the others fetch from it), the part
   * of b fetched for the next block, and (bitpar) the match masks of one block (Fig. 5.7
   * lines 1-4, per call) */
  unsigned char *a_cols, *b_rows, *fetched;
  size_t row_bytes;
  uint64_t *block_masks;
  /* dp: per owned column, the row of L above the next block (max_cols + 1 values) */
  int32_t *rows;
  /* bitpar: per owned column, the carries passed down (max_cols); the match masks of all b */
  unsigned char *carries;
  uint64_t *masks;
  size_t mask_stride;
  /* per owned column, the right boundary of the block to its left (registered: the left
   * neighbour puts into it; thesis: two, by the parity of the block row), and a scratch one
   * for the blocks of column 0 */
  unsigned char *incoming, *first;
  llcs_progress *progress;
  long llcs; /* its holder (llcs_holder): the last repetition's LLCS (measuring f reuses answer) */
  int llcs_known;     /* process 0 holds llcs (the holder is 0, or the check fetched it) */
  unsigned long seed; /* of the inputs: the check makes the strings again (thesis) */
  long alpha;         /* block columns per process: G = alpha p */
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
 * thesis: b_part holds the block's characters of b, and the bit-parallel kernel builds their
 * match masks first, as Fig. 5.7 does per call (antidiagonal: b_part is NULL, the whole
 * strings and the masks of all of b are at hand). Returns the cells computed. */
static double compute_block(llcs_state *st, long i, long x, long y, void *boundary,
                            const unsigned char *b_part) {
  const grid *g = &st->g;
  long k0 = col_start(g, x), bw = col_start(g, x + 1) - k0;
  long r0 = row_start(g, y), units = row_start(g, y + 1) - r0;
  const unsigned char *a_part = b_part ? st->a_cols + (size_t)i * (size_t)st->max_cols : st->a + k0;
  if (g->kernel == KERNEL_DP) {
    int32_t *row = st->rows + (size_t)i * (size_t)(st->max_cols + 1);
    llcs_dp_block(a_part, (size_t)bw, b_part ? b_part : st->b + r0, (size_t)units, row, boundary);
  } else {
    unsigned char *carries = st->carries + (size_t)i * (size_t)st->max_cols;
    const uint64_t *masks = st->masks + r0;
    size_t stride = st->mask_stride;
    if (b_part) {
      stride = (size_t)st->max_units;
      llcs_bitpar_masks(b_part, (size_t)block_rows(g, y), opt.sigma, st->block_masks, stride);
      masks = st->block_masks;
    }
    llcs_bitpar_block(masks, stride, a_part, (size_t)bw, boundary, (size_t)units, carries);
  }
  return (double)bw * (double)block_rows(g, y);
}

/* The input boundary of a block in column 0: L = 0 left of the table (dp), V = all ones. */
static void *first_column_boundary(llcs_state *st, long units) {
  if (st->g.kernel == KERNEL_DP) memset(st->first, 0, (size_t)units * sizeof(int32_t));
  else memset(st->first, 0xff, (size_t)units * sizeof(uint64_t));
  return st->first;
}

/* Offset in `incoming` of the boundary for block (x, y), x owned by this process: two slots
 * per column, by the parity of y, in the thesis' schedule (see the head of the file). */
static size_t incoming_offset(const llcs_state *st, long x, long y) {
  size_t column = (size_t)(x / st->p);
  if (opt.schedule == SCHEDULE_THESIS) column = 2 * column + (size_t)(y & 1);
  return column * st->boundary_bytes;
}

/* Block (x, y) is done: its right boundary goes to the owner of column x + 1 (both schedules;
 * a local copy where that is this process), or, in the last column, it holds the answer. */
static void pass_boundary(llcs_state *st, long x, long y, long units, const void *boundary) {
  const grid *g = &st->g;
  llcs_progress *at = st->progress;
  size_t bytes = (size_t)units * (g->kernel == KERNEL_DP ? sizeof(int32_t) : sizeof(uint64_t));
  if (x < g->G - 1) {
    int dest = (int)((x + 1) % st->p);
    size_t offset = incoming_offset(st, x + 1, y);
    if (bytes == 0) return;
    if (dest == st->s) {
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

/* One run of the antidiagonal schedule (S = 2G supersteps); the LLCS ends on process 0. It
 * starts at the superstep the progress names (0, or the one after a restart's checkpoint). */
static void run_antidiagonal(llcs_state *st) {
  const grid *g = &st->g;
  long G = g->G;
  int p = st->p, s = st->s;
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
      bspalg_work(compute_block(st, i, x, y, boundary, NULL));
      pass_boundary(st, x, y, units, boundary);
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

/* ---------------------------------------------------------- the thesis' schedule */

/* Fig. 5.4's iteration j (diag = j / alpha, block = j mod alpha, from 0) on process t: its
 * block (x, y) (lines 4-5); 0 when that lies outside the grid (line 7). */
static int thesis_block(const llcs_state *st, int t, long j, long *x, long *y) {
  long diag = j / st->alpha, block = j % st->alpha;
  *x = block * st->p + t;
  *y = diag - *x;
  return *y >= 0 && *y < st->g.G;
}

/* Words of one block's right boundary (dp: 32-bit values, bitpar: 64-bit words of V). */
static long boundary_words(const grid *g, long y) {
  long units = row_start(g, y + 1) - row_start(g, y);
  return bspalg_words(units * (long)(g->kernel == KERNEL_DP ? sizeof(int32_t) : sizeof(uint64_t)));
}

/* The label of thesis superstep j (it puts the boundaries of iteration j - 1 and fetches the
 * parts of b of iteration j): what moves more words, all processes together (puts on a tie);
 * NULL when nothing moves. The same on every process. */
static void thesis_label(const llcs_state *st, long j, const char **primitive,
                         const char **pattern) {
  const grid *g = &st->g;
  long put_words = 0, get_words = 0, N = st->alpha * (2 * g->G - 1), x, y;
  for (int t = 0; t < st->p && st->p > 1; t++) {
    if (j >= 1 && thesis_block(st, t, j - 1, &x, &y) && x < g->G - 1)
      put_words += boundary_words(g, y);
    if (j < N && thesis_block(st, t, j, &x, &y) && y % st->p != t)
      get_words += bspalg_words(block_rows(g, y));
  }
  *primitive = *pattern = NULL;
  if (put_words > 0 && put_words >= get_words) *primitive = "put", *pattern = "shift";
  else if (get_words > 0) *primitive = "hpget", *pattern = "permutation";
}

/* Fig. 5.4 lines 10-14: compute block (x, y) of this process with the part of b fetched for
 * it (or its own), and put its right boundary to the owner of column x + 1. */
static void thesis_compute(llcs_state *st, long x, long y) {
  const grid *g = &st->g;
  long i = x / st->p;
  int p = st->p, s = st->s;
  long units = row_start(g, y + 1) - row_start(g, y);
  void *boundary =
      x == 0 ? first_column_boundary(st, units) : st->incoming + incoming_offset(st, x, y);
  const unsigned char *b_part =
      y % p == s ? st->b_rows + (size_t)(y / p) * st->row_bytes : st->fetched;
  bspalg_work(compute_block(st, i, x, y, boundary, b_part));
  pass_boundary(st, x, y, units, boundary);
}

/* One run of the thesis' schedule: S = alpha (2G - 1) supersteps, and for bitpar one more
 * that hands the LLCS to process 0; for dp the last block is local work after the last sync
 * and the LLCS stays on process (G - 1) mod p. Starts at the superstep the progress names. */
static void run_thesis(llcs_state *st) {
  const grid *g = &st->g;
  long G = g->G, N = st->alpha * (2 * G - 1), x, y;
  int p = st->p, s = st->s;
  llcs_progress *at = st->progress;
  for (long j = at->d; j <= N; j++) {
    if (j >= 1 && thesis_block(st, s, j - 1, &x, &y)) thesis_compute(st, x, y);
    if (j == N) break;
    /* line 8: the part of b of the next block, from its owner (b is never written, so the
     * unbuffered get is safe; `fetched` was read by the block just computed, before the call) */
    if (thesis_block(st, s, j, &x, &y) && y % p != s) {
      long rows = block_rows(g, y);
      if (rows > 0) {
        bsp_hpget((int)(y % p), st->b_rows, (bsp_size_t)((size_t)(y / p) * st->row_bytes),
                  st->fetched, (bsp_size_t)rows);
        bspalg_get((int)(y % p), bspalg_words(rows));
      }
    }
    const char *primitive, *pattern;
    thesis_label(st, j, &primitive, &pattern);
    at->d = j + 1;
    bspalg_checkpoint_sync(primitive, pattern);
  }
  int owner = (int)((G - 1) % p);
  if (g->kernel == KERNEL_DP) {
    if (s == owner) at->answer = at->last_value;
    return;
  }
  /* the additional superstep of eq. 5.5: the sum of the zero bits to process 0 */
  if (s == owner && owner != 0) {
    bsp_put(0, &at->answer, &at->answer, 0, sizeof at->answer);
    bspalg_put(0, 1);
  }
  bspalg_sync(owner != 0 ? "put" : NULL, owner != 0 ? "shift" : NULL);
}

/* f on the calling process (process 0 alone, or every process at once for f_all): the kernel
 * on the blocks (0, 0), (0, 1), ... of this run's grid (column 0's shape), as many as make
 * >= 1e8 (dp) or 5e9 (bitpar) cells (at least one), median of the repetitions, which run for
 * >= 1 s (at least 3, at most 50): a kernel's rate wanders by 10-30% from one tenth of a
 * second to the next on a shared machine, so the median needs many short samples. Not
 * counted in W: the counts are those of the timed runs. The thesis' schedule times its own
 * column x = s on its own block rows y = s, s + p, ... (the only parts of a and b it holds),
 * the bit-parallel kernel building each block's masks as in the run. */
static double measure_kernel(llcs_state *st, char *note, size_t note_size) {
  const grid *g = &st->g;
  int thesis = opt.schedule == SCHEDULE_THESIS;
  long x = thesis ? st->s : 0, step = thesis ? st->p : 1,
       width = col_start(g, x + 1) - col_start(g, x);
  double budget = g->kernel == KERNEL_DP ? 1e8 : 5e9;
  long blocks = 0;
  double cells = 0.0;
  while (x + blocks * step < g->G && (blocks == 0 || cells < budget))
    cells += (double)(width * block_rows(g, x + step * blocks++));
  if (cells <= 0.0) {
    snprintf(note, note_size, "not measured: the blocks of column %ld are empty", x);
    return 0.0;
  }
  double samples[50];
  int reps = 0;
  double start = bspk_monotonic_seconds();
  while (reps < 50 && (reps < 3 || bspk_monotonic_seconds() - start < 1.0)) {
    reset_state(st);
    if (g->kernel == KERNEL_BITPAR && !thesis)
      llcs_bitpar_masks(st->b, (size_t)g->n, opt.sigma, st->masks, st->mask_stride);
    double t0 = bspk_monotonic_seconds();
    for (long k = 0; k < blocks; k++) {
      long y = x + step * k, units = row_start(g, y + 1) - row_start(g, y);
      const unsigned char *b_part = thesis ? st->b_rows + (size_t)k * st->row_bytes : NULL;
      compute_block(st, 0, x, y, first_column_boundary(st, units), b_part);
    }
    samples[reps++] = bspk_monotonic_seconds() - t0;
  }
  double f = bspalg_median(samples, reps) / cells;
  snprintf(note, note_size,
           "%s kernel on process 0 alone: blocks (%ld, %ld..%ld step %ld) of the run's grid, %ld"
           " columns x %.0f rows = %.4g cells, median of %d",
           g->kernel == KERNEL_DP ? "dp" : "bitpar", x, x, x + step * (blocks - 1), step, width,
           cells / (double)width, cells, reps);
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
  st->seed = opts->seed;
  long G = st->g.G;
  if (G > (1L << 26))
    bsp_abort("%s: the grid G = alpha p = %ld is too large (at most 2^26)\n", prog, G);
  st->ncols = s < G ? (G - s + p - 1) / p : 0;
  st->max_cols = (opt.m + G - 1) / G;
  st->max_units = (st->g.row_units + G - 1) / G;
  st->boundary_bytes =
      (size_t)st->max_units * (opt.kernel == KERNEL_DP ? sizeof(int32_t) : sizeof(uint64_t));
  int thesis = opt.schedule == SCHEDULE_THESIS;
  /* thesis: two boundary slots per column; one block row of b holds up to 64 rows a word */
  size_t slots = thesis ? 2 : 1;
  st->row_bytes = (size_t)st->max_units * (opt.kernel == KERNEL_DP ? 1 : 64);
  size_t largest =
      st->boundary_bytes * slots > st->row_bytes ? st->boundary_bytes * slots : st->row_bytes;
  if ((double)st->ncols * (double)largest > 0x7fffffff)
    bsp_abort(
        "%s: the boundaries or the parts of b of %ld block columns (%zu bytes each) exceed one"
        " registration (2^31 - 1 bytes): use more processes or shorter strings\n",
        prog, st->ncols, largest);
  size_t ncols_alloc = (size_t)(st->ncols > 0 ? st->ncols : 1);
  if (thesis) { /* its own block columns of a and block rows of b (as many: x, y = s mod p) */
    st->a_cols = xmalloc(ncols_alloc * (size_t)st->max_cols);
    st->b_rows = xmalloc(ncols_alloc * st->row_bytes);
    for (long i = 0; i < st->ncols; i++) {
      long z = s + i * p, first = col_start(&st->g, z);
      make_part(opts->seed, 0, first, col_start(&st->g, z + 1) - first, opt.sigma,
                st->a_cols + (size_t)i * (size_t)st->max_cols);
      make_part(opts->seed, 1, first_row(&st->g, z), block_rows(&st->g, z), opt.sigma,
                st->b_rows + (size_t)i * st->row_bytes);
    }
    st->fetched = xmalloc(st->row_bytes);
  } else {
    st->a = make_string(opts->seed, 0, opt.m, opt.sigma);
    st->b = make_string(opts->seed, 1, opt.n, opt.sigma);
  }
  if (opt.kernel == KERNEL_DP) {
    st->rows = xmalloc(ncols_alloc * (size_t)(st->max_cols + 1) * sizeof *st->rows);
  } else {
    st->carries = xmalloc(ncols_alloc * (size_t)st->max_cols);
    if (thesis) {
      st->block_masks = xmalloc((size_t)opt.sigma * (size_t)st->max_units * sizeof(uint64_t));
    } else {
      st->mask_stride = (size_t)st->g.row_units;
      st->masks = xmalloc((size_t)opt.sigma * st->mask_stride * sizeof *st->masks);
    }
  }
  size_t incoming_bytes = slots * ncols_alloc * st->boundary_bytes;
  st->incoming = xmalloc(incoming_bytes);
  st->first = xmalloc(st->boundary_bytes);
  st->progress = xmalloc(sizeof *st->progress);
  bspalg_register(st->incoming, incoming_bytes);
  bspalg_register(&st->progress->answer, sizeof st->progress->answer);
  if (thesis) bspalg_register(st->b_rows, ncols_alloc * st->row_bytes);
  /* A checkpoint after every superstep: the rows (dp) or carries (bitpar) passed down each
   * owned column, the boundaries passed right, the progress, and (thesis) the part of b
   * fetched for the next block. */
  bspalg_checkpoint_protect(st->progress, sizeof *st->progress);
  if (opt.kernel == KERNEL_DP)
    bspalg_checkpoint_protect(st->rows,
                              ncols_alloc * (size_t)(st->max_cols + 1) * sizeof *st->rows);
  else bspalg_checkpoint_protect(st->carries, ncols_alloc * (size_t)st->max_cols);
  bspalg_checkpoint_protect(st->incoming, incoming_bytes);
  if (thesis) {
    bspalg_checkpoint_protect(st->fetched, st->row_bytes);
    /* every registered area lies in a protected one; b is never written */
    bspalg_checkpoint_protect(st->b_rows, ncols_alloc * st->row_bytes);
  }
  return st;
}

/* The process that holds the LLCS after a run: process 0, but for dp in the thesis'
 * schedule the owner of the last block column (Fig. 5.4 line 20). */
static int llcs_holder(const llcs_state *st) {
  int thesis_dp = opt.schedule == SCHEDULE_THESIS && opt.kernel == KERNEL_DP;
  return thesis_dp ? (int)((st->g.G - 1) % st->p) : 0;
}

static void prepare(void *state) { reset_state(state); }

static void repetition(void *state) {
  llcs_state *st = state;
  if (opt.schedule == SCHEDULE_THESIS) run_thesis(st);
  else run_antidiagonal(st);
  st->llcs = (long)st->progress->answer;
  st->llcs_known = st->s == llcs_holder(st);
}

/* The LLCS, on the process that holds it (the others hold no part of the result). */
static void result(void *state, const void **bytes, size_t *nbytes) {
  const llcs_state *st = state;
  *bytes = &st->llcs;
  *nbytes = st->s == llcs_holder(st) ? sizeof st->llcs : 0;
}

static const char *kernel_name(void) { return opt.kernel == KERNEL_DP ? "dp" : "bitpar"; }

static const char *schedule_name(void) {
  return opt.schedule == SCHEDULE_THESIS ? "thesis" : "antidiagonal";
}

static const char *algorithm_of(void) {
  return opt.kernel == KERNEL_DP ? "llcs-dp" : "llcs-bitpar";
}

/* Process 0 holds the LLCS: against the sequential DP up to CHECK_DP_MAX_CELLS cells, beyond
 * against the sequential bit-parallel algorithm. */
static int check(void *state, bspalg_check_report *report) {
  llcs_state *st = state;
  int holder = llcs_holder(st);
  if (holder != 0) { /* Fig. 5.4 line 20's "broadcast if necessary", outside the counts */
    if (st->s == holder)
      bsp_put(0, &st->progress->answer, &st->progress->answer, 0, sizeof st->progress->answer);
    bsp_sync();
    if (st->s == 0) st->llcs = (long)st->progress->answer, st->llcs_known = 1;
  }
  if (st->s != 0) return 1;
  long llcs = st->llcs;
  /* the thesis' schedule holds parts of the strings only: process 0 makes them again */
  const unsigned char *a = st->a ? st->a : make_string(st->seed, 0, opt.m, opt.sigma);
  const unsigned char *b = st->b ? st->b : make_string(st->seed, 1, opt.n, opt.sigma);
  int by_dp = (double)opt.m * (double)opt.n <= CHECK_DP_MAX_CELLS;
  long ref = by_dp ? llcs_reference_dp(a, (size_t)opt.m, b, (size_t)opt.n)
                   : llcs_reference_bitpar(a, (size_t)opt.m, b, (size_t)opt.n, opt.sigma);
  if (ref < 0) bsp_abort("%s: out of memory for the sequential reference\n", prog);
  snprintf(report->note, sizeof report->note, "against the sequential %s (LLCS %ld)",
           by_dp ? "dynamic program (recurrence 5.1, two rows)"
                 : "bit-parallel algorithm (one vector over all of b, portable carry)",
           ref);
  if (llcs == ref) return 1;
  snprintf(report->wrong, sizeof report->wrong,
           " on %d processes (kernel %s, schedule %s, m = %ld, n = %ld, alpha = %ld): LLCS %ld, the"
           " sequential reference says %ld",
           st->p, kernel_name(), schedule_name(), opt.m, opt.n, st->alpha, llcs, ref);
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

/* "llcs": null where process 0 does not hold it (dp in the thesis' schedule, unchecked). */
static void params(void *state, char *json, size_t json_size) {
  const llcs_state *st = state;
  char llcs[32] = "null";
  if (st->s == 0 && st->llcs_known) snprintf(llcs, sizeof llcs, "%ld", st->llcs);
  snprintf(json, json_size,
           "{\"m\": %ld, \"n\": %ld, \"alpha\": %ld, \"G\": %ld, \"alphabet\": %d, \"kernel\": "
           "\"%s\", \"schedule\": \"%s\", \"llcs\": %s}",
           opt.m, opt.n, st->alpha, st->g.G, opt.sigma, kernel_name(), schedule_name(), llcs);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm_of = algorithm_of, .work_unit = "cell", .help = help, .option = option,
    .setup = setup, .prepare = prepare, .repetition = repetition, .check = check, .measure_f = measure_f,
    .params = params, .result = result};
// clang-format on

BSPALG_MAIN(driver)
