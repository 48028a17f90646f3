/*
 * bspalg-ftf - the end-to-end application FT.F of Kang et al. (`003_...` sec. 7, lines 960-1135,
 * Appendix III): a finite-element update of the nodes of a W x D x H grid (121 x 4 x 81 in the
 * paper), each node from its current value and the cells around it (a node and its seven
 * neighbours are a cell, Fig. 32), its nodes dealt to the processes in blocks of i and k, with
 * the ghost nodes on a block's right, top and top-right edges exchanged in the paper's three
 * steps. The paper does not give HEADS' arithmetic; this driver's stand-in has its data
 * movement (algorithms/ftf/README.md).
 *
 * Ownership (--variant): balanced (Fig. 38-39, the default): R x C blocks, R = 2 rows of
 * ceil(H/2) k-layers (the paper's kk = k / ((kmax+1)/2)) and C = p/2 columns of ceil(W/C)
 * i-columns (ii = i / (imax/nphalf), + 1 when it does not divide); odd p: R = 1, C = p.
 * original (Fig. 34-35): FT.F's ownership, which never uses more than six processes: 2 rows x
 * 3 columns of ceil(W/3) (41 for 121) on processes 0..5 and the others idle; below six
 * processes the balanced blocks (at p = 6 the two are the same). Process q owns block (row q / C,
 * column q % C); every block holds all D layers of j.
 *
 * One iteration (of --iters), six supersteps; cells: those whose lowest corner the process owns:
 *   1 r = 0; r(node) += mean of h over each cell    w = 16 cells (7 adds, 1 multiply, 8 adds)
 *     UPDADD step 1: ghost column's r to the right  h = D nk          (hpput, "shift")
 *   2 add what came; step 2: ghost row's r to the top  w = D nk, h = D ni  (hpput, "permutation")
 *   3 add; step 3: the corner's r to the top right  w = D ni, h = D    (hpput, "permutation")
 *   4 add; h = (h + r) / (1 + cells at the node)    w = D + 2 D ni nk
 *     UPDATE step 1: first column's h to the left   h = D nk          (hpput, "shift")
 *   5 copy it into the ghost column; UPDATE step 2: first row's h down   h = D ni  ("permutation")
 *   6 copy; UPDATE step 3: the first corner's h to the bottom left   h = D   ("permutation")
 * (ni, nk: the block's columns and layers; w and h: the maximum over the processes; a block
 * sends only where it has cells and a neighbour there.) The last copy is local and uncounted.
 * W = iters (16 cells + D (2 nk + ni + 1) + 2 D ni nk) per process at most, H = iters 2 D
 * (nk + ni + 1) at most, S = 6 iters. Kang et al.'s eq. (7) prices each three-step exchange as
 * 3 T_s + sum m_i tau_d (python/bspkit/model/costs/ftf.py).
 */
#include <bsp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "bspk_clock.h"

static const char prog[] = "bspalg-ftf";
enum { VARIANT_BALANCED, VARIANT_ORIGINAL, NVARIANTS };
static const char *const variant_names[NVARIANTS] = {"balanced", "original"};
static struct { /* set before bsp_init, read-only afterwards */
  long width, depth, height, iters;
  int variant;
} opt = {121, 4, 81, 10, VARIANT_BALANCED};

static const char help[] =
    "Kang et al.'s FT.F (sec. 7): a node update over a W x D x H grid, the nodes in blocks of i\n"
    "and k, the ghost nodes exchanged in three steps.\n"
    "  --size W          nodes along i, the width (default 121)\n"
    "  --depth D         nodes along j, every process holds all (default 4)\n"
    "  --height H        nodes along k (default 81)\n"
    "  --iters T         updates per repetition (default 10)\n"
    "  --variant V       balanced (the paper's load balancing, Fig. 39; default) or original\n"
    "                    (FT.F's ownership, Fig. 34: at most six processes work)\n";

static int option(const char *arg, const char *value) {
  if (!value) return 0;
  if (!strcmp(arg, "--size")) opt.width = bspalg_parse_long(prog, "--size", value, 2, 1L << 24);
  else if (!strcmp(arg, "--depth"))
    opt.depth = bspalg_parse_long(prog, "--depth", value, 2, 1L << 16);
  else if (!strcmp(arg, "--height"))
    opt.height = bspalg_parse_long(prog, "--height", value, 2, 1L << 24);
  else if (!strcmp(arg, "--iters"))
    opt.iters = bspalg_parse_long(prog, "--iters", value, 1, 1L << 20);
  else if (!strcmp(arg, "--variant"))
    opt.variant = bspalg_parse_choice(prog, "--variant", value, variant_names, NVARIANTS);
  else return 0;
  return 2;
}

/* FT.F's OWN_PL deals the grid to processes 0..5 whatever their number (Fig. 34). */
#define ORIGINAL_OWNERS 6

static const char *algorithm_name(void) {
  return opt.variant == VARIANT_ORIGINAL ? "ftf-original" : "ftf";
}

/* ---- the decomposition ---------------------------------------------------------------------- */

typedef struct {
  int rows, cols;      /* the blocks: process q < rows x cols owns (q / cols, q % cols) */
  long i0, i1, k0, k1; /* this process' nodes: [i0, i1) x [0, D) x [k0, k1) */
} layout;

static long ceil_div(long a, long b) { return (a + b - 1) / b; }

static layout layout_of(int q, int p) {
  layout l = {1, 1, 0, 0, 0, 0};
  if (opt.variant == VARIANT_ORIGINAL && p > ORIGINAL_OWNERS) p = ORIGINAL_OWNERS;
  if (p % 2 == 0) l.rows = 2, l.cols = p / 2;
  else l.cols = p;
  if (q >= l.rows * l.cols) return l; /* idle: no nodes */
  long bi = ceil_div(opt.width, l.cols), bk = ceil_div(opt.height, l.rows);
  long c = q % l.cols, r = q / l.cols;
  l.i0 = c * bi < opt.width ? c * bi : opt.width;
  l.i1 = l.i0 + bi < opt.width ? l.i0 + bi : opt.width;
  l.k0 = r * bk < opt.height ? r * bk : opt.height;
  l.k1 = l.k0 + bk < opt.height ? l.k0 + bk : opt.height;
  return l;
}

/* The cells whose lowest corner lies in the block (a cell spans nodes i..i+1, j..j+1, k..k+1). */
static long cells_i(const layout *l) {
  long e = l->i1 < opt.width - 1 ? l->i1 : opt.width - 1;
  return e > l->i0 ? e - l->i0 : 0;
}
static long cells_k(const layout *l) {
  long e = l->k1 < opt.height - 1 ? l->k1 : opt.height - 1;
  return e > l->k0 ? e - l->k0 : 0;
}
static int has_cells(const layout *l) { return cells_i(l) > 0 && cells_k(l) > 0; }
/* The ghost edges: where the block's cells reach nodes of the next block. */
static int ghost_right(const layout *l) { return has_cells(l) && l->i1 < opt.width; }
static int ghost_top(const layout *l) { return has_cells(l) && l->k1 < opt.height; }

/* ---- the state ------------------------------------------------------------------------------ */

/* Local arrays hold (ni + 1) x D x (nk + 1) nodes, i slowest, then k, then j: the owned block
 * plus the ghost column i = ni, the ghost row k = nk and their corner. */
typedef struct {
  unsigned long seed;
  layout me, left, right, below, above, diag_up, diag_down;
  int q_right, q_left, q_up, q_down, q_diag_up, q_diag_down;
  long ni, nk, D, ld; /* ld = nk + 1 */
  double *h, *r, *inv;
  double *send, *recv_col, *recv_row, *recv_corner; /* registered: recv_* */
  double *errors;                                   /* registered: p words, for the check */
} ftf_state;

static size_t at(const ftf_state *st, long i, long j, long k) {
  return ((size_t)i * (size_t)st->ld + (size_t)k) * (size_t)st->D + (size_t)j;
}

/* The initial value of global node (i, j, k): in [0, 1), from the seed alone (the paper's
 * GET_GR makes the initial values on every process). */
static double initial_value(unsigned long seed, long i, long j, long k) {
  uint64_t z =
      (uint64_t)seed * 0x9E3779B97F4A7C15ull +
      (((uint64_t)k * (uint64_t)opt.depth + (uint64_t)j) * (uint64_t)opt.width + (uint64_t)i) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

/* The cells at a node along one axis: 1 on the grid's faces, else 2. */
static int cells_along(long x, long n) { return (x > 0) + (x < n - 1); }
static double node_inverse(long i, long j, long k) {
  int cells = cells_along(i, opt.width) * cells_along(j, opt.depth) * cells_along(k, opt.height);
  return 1.0 / (1.0 + cells);
}

static void load_initial(ftf_state *st) {
  for (long i = 0; i <= st->ni; i++)
    for (long k = 0; k <= st->nk; k++)
      for (long j = 0; j < st->D; j++) {
        long gi = st->me.i0 + i, gk = st->me.k0 + k;
        st->h[at(st, i, j, k)] =
            gi < opt.width && gk < opt.height ? initial_value(st->seed, gi, j, gk) : 0.0;
      }
}

static void *setup(const bspalg_common_opts *opts) {
  int p = bsp_nprocs(), s = bsp_pid();
  ftf_state *st = bspalg_alloc(sizeof *st, "for the state");
  st->seed = opts->seed;
  st->me = layout_of(s, p);
  int cols = st->me.cols;
  st->ni = st->me.i1 - st->me.i0;
  st->nk = st->me.k1 - st->me.k0;
  st->D = opt.depth;
  st->ld = st->nk + 1;
  st->q_right = s + 1, st->q_left = s - 1, st->q_up = s + cols, st->q_down = s - cols;
  st->q_diag_up = s + cols + 1, st->q_diag_down = s - cols - 1;
  layout none = {0};
  int owners = st->me.rows * st->me.cols, col = s % cols;
  st->left = s < owners && col > 0 ? layout_of(s - 1, p) : none;
  st->below = s < owners && s >= cols ? layout_of(s - cols, p) : none;
  st->diag_down = s < owners && s >= cols && col > 0 ? layout_of(s - cols - 1, p) : none;
  size_t nodes = (size_t)(st->ni + 1) * (size_t)st->D * (size_t)(st->nk + 1);
  const char *why = "for W x D x H = %ld x %ld x %ld";
  st->h = bspalg_alloc(nodes * sizeof *st->h, why, opt.width, opt.depth, opt.height);
  st->r = bspalg_alloc(nodes * sizeof *st->r, why, opt.width, opt.depth, opt.height);
  st->inv = bspalg_alloc(nodes * sizeof *st->inv, why, opt.width, opt.depth, opt.height);
  long edge = (st->ni > st->nk ? st->ni : st->nk) + 1;
  size_t edge_words = (size_t)edge * (size_t)st->D;
  st->send = bspalg_alloc(edge_words * sizeof(double), why, opt.width, opt.depth, opt.height);
  /* what arrives: the left block's column (same layers), the lower block's row (same columns) */
  st->recv_col = bspalg_alloc(edge_words * sizeof(double), why, opt.width, opt.depth, opt.height);
  st->recv_row = bspalg_alloc(edge_words * sizeof(double), why, opt.width, opt.depth, opt.height);
  st->recv_corner = bspalg_alloc((size_t)st->D * sizeof(double), "for a corner");
  st->errors = bspalg_alloc((size_t)p * sizeof(double), "for the check");
  for (long i = 0; i < st->ni; i++)
    for (long k = 0; k < st->nk; k++)
      for (long j = 0; j < st->D; j++)
        st->inv[at(st, i, j, k)] = node_inverse(st->me.i0 + i, j, st->me.k0 + k);
  load_initial(st);
  /* what arrives in recv_col and recv_row comes from the blocks of the same row or column:
   * never more than this block's own edges */
  bspalg_register(st->recv_col, edge_words * sizeof(double));
  bspalg_register(st->recv_row, edge_words * sizeof(double));
  bspalg_register(st->recv_corner, (size_t)st->D * sizeof(double));
  bspalg_register(st->errors, (size_t)p * sizeof(double));
  return st;
}

static void prepare(void *state) { load_initial(state); }

/* ---- one iteration -------------------------------------------------------------------------- */

/* Packs column i (layers [0, nk)), row k (columns [0, ni)) or the node (i, k) of arr into send;
 * returns the words. */
static long pack_column(ftf_state *st, const double *arr, long i) {
  memcpy(st->send, arr + at(st, i, 0, 0), (size_t)(st->nk * st->D) * sizeof(double));
  return st->nk * st->D;
}
static long pack_row(ftf_state *st, const double *arr, long k) {
  for (long i = 0; i < st->ni; i++)
    memcpy(st->send + i * st->D, arr + at(st, i, 0, k), (size_t)st->D * sizeof(double));
  return st->ni * st->D;
}
static long pack_node(ftf_state *st, const double *arr, long i, long k) {
  memcpy(st->send, arr + at(st, i, 0, k), (size_t)st->D * sizeof(double));
  return st->D;
}

static void send_to(int dest, const ftf_state *st, double *area, long words) {
  bsp_hpput(dest, st->send, area, 0, (size_t)words * sizeof(double));
  bspalg_put(dest, words);
}

/* r over the block's cells: each cell's mean of h added to its eight nodes; returns the cells. */
static double cell_sums(ftf_state *st) {
  memset(st->r, 0, (size_t)(st->ni + 1) * (size_t)st->D * (size_t)st->ld * sizeof *st->r);
  long ci = cells_i(&st->me), ck = cells_k(&st->me);
  for (long i = 0; i < ci; i++)
    for (long k = 0; k < ck; k++)
      for (long j = 0; j + 1 < st->D; j++) {
        const double *a = st->h + at(st, i, j, k), *b = st->h + at(st, i, j, k + 1);
        const double *c = st->h + at(st, i + 1, j, k), *d = st->h + at(st, i + 1, j, k + 1);
        double mean = 0.125 * (a[0] + a[1] + b[0] + b[1] + c[0] + c[1] + d[0] + d[1]);
        double *ra = st->r + at(st, i, j, k), *rb = st->r + at(st, i, j, k + 1);
        double *rc = st->r + at(st, i + 1, j, k), *rd = st->r + at(st, i + 1, j, k + 1);
        ra[0] += mean, ra[1] += mean, rb[0] += mean, rb[1] += mean;
        rc[0] += mean, rc[1] += mean, rd[0] += mean, rd[1] += mean;
      }
  return (double)(ci * ck * (st->D - 1));
}

static void iteration(ftf_state *st) {
  const layout *me = &st->me;
  int right = ghost_right(me), top = ghost_top(me);
  /* UPDADD (Appendix III C.2): the ghost nodes' sums to their owners, three steps */
  bspalg_work(16.0 * cell_sums(st));
  if (right) send_to(st->q_right, st, st->recv_col, pack_column(st, st->r, st->ni));
  bspalg_sync("hpput", "shift");
  if (ghost_right(&st->left)) {
    for (long k = 0; k < st->nk; k++)
      for (long j = 0; j < st->D; j++) st->r[at(st, 0, j, k)] += st->recv_col[k * st->D + j];
    bspalg_work((double)(st->nk * st->D));
  }
  if (top) send_to(st->q_up, st, st->recv_row, pack_row(st, st->r, st->nk));
  bspalg_sync("hpput", "permutation");
  if (ghost_top(&st->below)) {
    for (long i = 0; i < st->ni; i++)
      for (long j = 0; j < st->D; j++) st->r[at(st, i, j, 0)] += st->recv_row[i * st->D + j];
    bspalg_work((double)(st->ni * st->D));
  }
  if (right && top)
    send_to(st->q_diag_up, st, st->recv_corner, pack_node(st, st->r, st->ni, st->nk));
  bspalg_sync("hpput", "permutation");
  if (ghost_right(&st->diag_down) && ghost_top(&st->diag_down)) {
    for (long j = 0; j < st->D; j++) st->r[at(st, 0, j, 0)] += st->recv_corner[j];
    bspalg_work((double)st->D);
  }
  /* the update of the owned nodes */
  for (long i = 0; i < st->ni; i++)
    for (long k = 0; k < st->nk; k++)
      for (long j = 0; j < st->D; j++) {
        size_t x = at(st, i, j, k);
        st->h[x] = (st->h[x] + st->r[x]) * st->inv[x];
      }
  bspalg_work(2.0 * (double)(st->ni * st->nk * st->D));
  /* UPDATE (C.3): the owners' new values to the ghost nodes, three steps back */
  if (ghost_right(&st->left)) send_to(st->q_left, st, st->recv_col, pack_column(st, st->h, 0));
  bspalg_sync("hpput", "shift");
  if (right)
    memcpy(st->h + at(st, st->ni, 0, 0), st->recv_col, (size_t)(st->nk * st->D) * sizeof(double));
  if (ghost_top(&st->below)) send_to(st->q_down, st, st->recv_row, pack_row(st, st->h, 0));
  bspalg_sync("hpput", "permutation");
  if (top)
    for (long i = 0; i < st->ni; i++)
      memcpy(st->h + at(st, i, 0, st->nk), st->recv_row + i * st->D,
             (size_t)st->D * sizeof(double));
  if (ghost_right(&st->diag_down) && ghost_top(&st->diag_down))
    send_to(st->q_diag_down, st, st->recv_corner, pack_node(st, st->h, 0, 0));
  bspalg_sync("hpput", "permutation");
  if (right && top)
    memcpy(st->h + at(st, st->ni, 0, st->nk), st->recv_corner, (size_t)st->D * sizeof(double));
}

static void repetition(void *state) {
  ftf_state *st = state;
  for (long t = 0; t < opt.iters; t++) iteration(st);
}

/* ---- the check ------------------------------------------------------------------------------ */

/* The same iterations over the whole grid on one process, the cells in order. */
static double *reference(unsigned long seed) {
  long W = opt.width, D = opt.depth, H = opt.height;
  size_t n = (size_t)W * (size_t)D * (size_t)H;
  double *h = malloc(n * sizeof *h), *r = malloc(n * sizeof *r);
  if (!h || !r) bsp_abort("%s: out of memory for the sequential reference\n", prog);
#define NODE(i, j, k) (((size_t)(k) * (size_t)D + (size_t)(j)) * (size_t)W + (size_t)(i))
  for (long k = 0; k < H; k++)
    for (long j = 0; j < D; j++)
      for (long i = 0; i < W; i++) h[NODE(i, j, k)] = initial_value(seed, i, j, k);
  for (long t = 0; t < opt.iters; t++) {
    memset(r, 0, n * sizeof *r);
    for (long k = 0; k + 1 < H; k++)
      for (long j = 0; j + 1 < D; j++)
        for (long i = 0; i + 1 < W; i++) {
          double sum = 0.0;
          for (int corner = 0; corner < 8; corner++)
            sum += h[NODE(i + (corner & 1), j + (corner >> 1 & 1), k + (corner >> 2))];
          for (int corner = 0; corner < 8; corner++)
            r[NODE(i + (corner & 1), j + (corner >> 1 & 1), k + (corner >> 2))] += sum / 8.0;
        }
    for (long k = 0; k < H; k++)
      for (long j = 0; j < D; j++)
        for (long i = 0; i < W; i++)
          h[NODE(i, j, k)] = (h[NODE(i, j, k)] + r[NODE(i, j, k)]) * node_inverse(i, j, k);
  }
  free(r);
  return h;
}

/* Every process computes the whole grid sequentially and compares its own nodes; process 0
 * gathers the largest differences. The sums are added in another order: a tolerance of a few
 * ulps per addition and iteration (the values stay in [0, 1)). */
static int check(void *state, bspalg_check_report *report) {
  ftf_state *st = state;
  int p = bsp_nprocs(), s = bsp_pid();
  double *ref = reference(st->seed), worst = 0.0;
  for (long i = 0; i < st->ni; i++)
    for (long k = 0; k < st->nk; k++)
      for (long j = 0; j < st->D; j++) {
        long gi = st->me.i0 + i, gk = st->me.k0 + k;
        size_t g = ((size_t)gk * (size_t)opt.depth + (size_t)j) * (size_t)opt.width + (size_t)gi;
        double d = fabs(st->h[at(st, i, j, k)] - ref[g]);
        if (!(d <= worst)) worst = d; /* a NaN stays */
      }
  free(ref);
  bsp_put(0, &worst, st->errors, s * (int)sizeof worst, sizeof worst);
  bsp_sync();
  if (s != 0) return 1;
  double most = 0.0;
  int at_q = 0;
  for (int q = 0; q < p; q++)
    if (!(st->errors[q] <= most)) most = st->errors[q], at_q = q;
  double tol = 64.0 * (double)opt.iters * 0x1.0p-52;
  snprintf(report->note, sizeof report->note,
           "every node against a sequential run of the same iterations: largest |difference| "
           "%.3g, tolerance %.3g",
           most, tol);
  if (most <= tol) return 1;
  snprintf(report->wrong, sizeof report->wrong,
           " on %d processes: a node of process %d is %.3g off the sequential run", p, at_q, most);
  return -1;
}

/* f: the cell sums on this process' block (the kernel of superstep 1), median per flop. */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  ftf_state *st = state;
  double cells = (double)(cells_i(&st->me) * cells_k(&st->me) * (st->D - 1));
  if (cells <= 0) {
    if (!every_process) snprintf(note, note_size, "process 0 has no cells to time");
    return 0.0;
  }
  double samples[15];
  for (int r = 0; r < 15; r++) {
    double t0 = bspk_monotonic_seconds();
    cell_sums(st);
    samples[r] = bspk_monotonic_seconds() - t0;
  }
  if (!every_process)
    snprintf(note, note_size, "the cell sums of %.0f cells, median of 15 (16 flops a cell)", cells);
  return bspalg_median(samples, 15) / (16.0 * cells);
}

static void params(void *state, char *json, size_t json_size) {
  (void)state;
  snprintf(json, json_size,
           "{\"width\": %ld, \"depth\": %ld, \"height\": %ld, \"iters\": %ld, \"variant\": \"%s\"}",
           opt.width, opt.depth, opt.height, opt.iters, variant_names[opt.variant]);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm_of = algorithm_name, .work_unit = "flop", .help = help,
    .option = option, .setup = setup, .prepare = prepare, .repetition = repetition, .check = check,
    .measure_f = measure_f, .params = params};
// clang-format on

BSPALG_MAIN(driver)
