/*
 * bspalg-lu - LU decomposition with partial pivoting, P A = L U, of a random n x n matrix on an
 * M x N process grid (BSP2D), after Horvitz & Bisseling's BSP version of ScaLAPACK's PDGETRF
 * ("Designing a BSP version of ScaLAPACK", sec. 2).
 *
 * Distribution: two-dimensional block-cyclic with square nb x nb blocks (ScaLAPACK's, bsp2d_map):
 * row i on process row (i / nb) mod M, column j on process column (j / nb) mod N; each process
 * holds its rows x columns row-major (ld = its column count), so that a row interchange moves
 * contiguous memory; the panel is factored in a column-major copy (the buffer its broadcast
 * sends), and BLAS reads that copy transposed.
 *
 * Blocked right-looking, one stage per nb columns J = [j0, j1), w = j1 - j0; the stage's panel
 * lives on process column tc = (j0 / nb) mod N, its diagonal block on process row sr.
 *
 *   1. Panel (PSGETF2). M = 1: the panel is one process' own, factored by LAPACK dgetrf, no
 *      superstep. M > 1: one superstep per column j, in which every process of column tc puts its
 *      candidate (the largest |a(i, j)| among its rows i >= j, its row index and that row of the
 *      panel) to the others of the column, and its value and index to every other process: the
 *      replicated scalar outputs (sec. 2.1), so every process knows each pivot (and a singular
 *      column) without a broadcast. The owner of row j adds row j of the panel, so after the sync
 *      every process of the column swaps, scales and updates (dger) its rows of the panel on its
 *      own.
 *   2. One superstep (PSLASWP, sec. 2.3) for all the row interchanges of the stage, outside the
 *      panel: the stage's swaps are turned into where each row ends up (the cycle form), every
 *      row that changes process row moves once, into a registered buffer; local moves are copies.
 *      M = 1: every interchange is local (row swaps), after the panel broadcast brings the
 *      pivots. In the same superstep(s), column tc broadcasts its panel (and the pivots) within
 *      each process row (two-phase when N > 2, sec. 2.2).
 *   3. Process row sr: U12 = L11^-1 A12 (dtrsm) on its columns right of the panel, broadcast
 *      within each process column (M > 1; two-phase when M > 2).
 *   4. Everyone: A22 -= L21 U12 (dgemm) on its rows below and columns right of J.
 *
 * Supersteps per stage: 1 x N grid: bsp2d_collective_supersteps(N) (0, 1 or 2); M > 1: w + 1
 * (+1 when N > 2) + bsp2d_collective_supersteps(M). Buffers for the broadcasts and the swaps
 * come from BSP2D's registered-buffer manager (sec. 2.4): two of each size are registered once;
 * a stage asks for one and releases it at its end, and the used flag keeps the next stage
 * from getting the one a slower process may still be multiplying with.
 *
 * Work (flops, as counted): the panel sum_i (m_i + 2 m_i (w - i - 1)) over its columns (m_i the
 * rows below the diagonal), dtrsm w (w - 1) c, dgemm 2 m c w; in all LAPACK's count,
 * 2/3 n^3 - n^2/2 - n/6 (python/bspkit/lu_cost.py has the cost of every superstep).
 * nb' (--nb-alg, a multiple of nb; Horvitz & Bisseling line 74): a block of nb' columns is
 * factored by the stages of its nb-blocks restricted to its columns, then alg_trailing swaps,
 * distributes L and U12 and updates the rest once (see there). No checkpoints then.
 * A singular matrix (a column without a nonzero pivot) ends the run with exit status 1 and the
 * column named, as LAPACK's INFO > 0. The check: ||P A - L U||_1 / (n ||A||_1 eps) on process 0.
 */
#include <bsp.h>
#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp2d.h"
#include "bspalg_driver.h"
#include "bspk_clock.h"
#include "matmul_common.h"

/* LAPACK from OpenBLAS (32-bit integers, as Debian builds it). */
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);

static const char prog[] = "bspalg-lu";
static long opt_size = 1000;
static int opt_nb = 64;
static int opt_nb_alg = 0;             /* --nb-alg; 0: nb */
static int opt_rows = 0, opt_cols = 0; /* --grid; 0: the grid closest to square */
static long opt_singular_column = -1;

/* The check's bound on ||P A - L U||_1 / (n ||A||_1 eps) (LAPACK's tests use 30; random
 * matrices give well under 1, one wrong entry gives 10^10 and more). */
#define RESIDUAL_BOUND 10.0
/* Above this n the check (the whole matrix three times on process 0) is skipped. */
#define CHECK_MAX_N 6000L

static const char help[] =
    "LU decomposition with partial pivoting P A = L U of a random n x n matrix (entries in\n"
    "[-1, 1)), 2D block-cyclic on an R x C process grid through BSP2D (Horvitz & Bisseling):\n"
    "the pivot search with replicated outputs, the row swaps of a stage in one superstep,\n"
    "two-phase broadcasts of the panel and the U block row, dgemm/dtrsm of OpenBLAS.\n"
    "  --size N           matrix size n (default 1000)\n"
    "  --nb NB            block size of the distribution (default 64)\n"
    "  --nb-alg NB2       algorithmic block size, a multiple of NB (default NB): the panel of\n"
    "                     NB2 columns is factored by the process columns that hold it, the\n"
    "                     trailing matrix updated once per NB2 columns\n"
    "  --grid RxC         process grid, R rows x C columns, R C = P (default: the grid\n"
    "                     closest to square, 1 x 2 at P = 2, 2 x 2 at P = 4)\n"
    "  --singular-column J  make column J zero (0-based): the run must report it singular\n";

static int option(const char *arg, const char *value) {
  if (!value) return 0;
  if (!strcmp(arg, "--size")) opt_size = bspalg_parse_long(prog, "--size", value, 1, 200000);
  else if (!strcmp(arg, "--nb")) opt_nb = (int)bspalg_parse_long(prog, "--nb", value, 1, 4096);
  else if (!strcmp(arg, "--nb-alg"))
    opt_nb_alg = (int)bspalg_parse_long(prog, "--nb-alg", value, 1, 65536);
  else if (!strcmp(arg, "--singular-column"))
    opt_singular_column = bspalg_parse_long(prog, "--singular-column", value, 0, LONG_MAX);
  else if (!strcmp(arg, "--grid")) {
    char extra;
    if (sscanf(value, "%dx%d%c", &opt_rows, &opt_cols, &extra) != 2 || opt_rows < 1 ||
        opt_cols < 1) {
      fprintf(stderr, "%s: --grid must be RxC with R, C >= 1 (e.g. 2x1), not '%s'\n", prog, value);
      exit(2);
    }
  } else return 0;
  return 2;
}

/* The candidate record of one process in a pivot superstep, in doubles: the value, its global
 * row (-1: no rows), whether the record carries row j, the candidate's panel row, row j's. */
enum { CAND_VALUE, CAND_ROW, CAND_HAS_DIAG, CAND_DATA };
/* The panel broadcast's header: the stage's singular column (-1: none), then its pivots. */
enum { HDR_SINGULAR, HDR_PIVOTS };

/* One row of a stage's interchanges on this process: its local row, where it is in a buffer,
 * and (arriving rows) whether it comes from this process' own send buffer. */
typedef struct {
  long row, at;
  int local;
} row_move;

/* Where a repetition stands (protected: every stage ends with a checkpoint at its last sync,
 * and its local work after that sync, its tail, needs the stage's buffers). */
typedef struct {
  long j0;              /* the next stage's first column, or the stage whose tail is left */
  long singular_column; /* the first column without a pivot, -1 */
  int tail;             /* 1: stage j0 was checkpointed at its last sync, its tail is left */
  int lbuf, ubuf, swap; /* its buffers (bsp2d_buffer_index; -1: none) */
} lu_progress;

typedef struct {
  int p, pid;
  unsigned long seed;
  long n;
  int nb, M, N, s, t;
  int nb_alg;          /* the algorithmic block size nb', a multiple of nb */
  long col_lo, col_hi; /* the columns a stage swaps and updates: all, or its algorithmic block's */
  double *alg_l; /* nb' > nb: L of the block, my rows >= j0 (column-major), see alg_trailing */
  double *alg_u; /* and its rows of A12 (then U12) and L11, see alg_trailing */
  bsp2d_grid *grid;
  bsp2d_map rmap, cmap;
  long mloc, nloc, ld;
  long mloc_max, nloc_max;
  double *a;  /* the local matrix, row-major, ld */
  long *ipiv; /* ipiv[j]: the row swapped with row j at step j (all of them, everywhere) */
  lu_progress *progress;
  int checkpoint_next; /* the stage's last sync is coming: a checkpoint at the sync hook's */
  size_t cand_bytes, lpanel_bytes, upanel_bytes, swap_bytes;
  double *swap_send;         /* rows leaving, packed (local memory) */
  long *move_pos, *move_row; /* a stage's moves (stage_moves), 2 nb each */
  long *move_count;          /* M x M: rows from process row q to d (plan_moves) */
  long *move_offsets;        /* 3 M */
  row_move *out, *in;        /* 2 nb each: this process' rows leaving and arriving */
  int nout, nin;
  int *lapack_pivots;                          /* nb */
  const char *label_primitive, *label_pattern; /* the next superstep's, for bspalg_sync */
  int replay; /* measure_f: the local computation only, no requests and no syncs */
  double replay_flops;
  double *replay_buf[4]; /* in a replay: one buffer of each kind, from the last real stage */
} lu_state;

enum { BUF_CAND, BUF_LPANEL, BUF_UPANEL, BUF_SWAP };

static long panel_record(const lu_state *st) { return CAND_DATA + 2L * st->nb; }

static void work(lu_state *st, double flops) {
  if (st->replay) st->replay_flops += flops;
  else bspalg_work(flops);
}

static void on_send(void *ctx, int dest, size_t bytes) {
  (void)ctx;
  bspalg_put(dest, bspalg_words((long)bytes));
}

/* The sync hook: the stage's last sync (marked by checkpoint_next, the last of the supersteps
 * the broadcasts under way need) takes a checkpoint. */
static void labelled_sync(void *ctx) {
  lu_state *st = ctx;
  if (st->checkpoint_next && bsp2d_pending(st->grid) <= 1) {
    st->checkpoint_next = 0;
    bspalg_checkpoint_sync(st->label_primitive, st->label_pattern);
  } else {
    bspalg_sync(st->label_primitive, st->label_pattern);
  }
}

/* bsp2d's buffers are registered: a checkpoint saves them, and a stage's tail reads them. */
static void protect_buffer(void *ctx, void *ptr, size_t bytes) {
  (void)ctx;
  bspalg_checkpoint_protect(ptr, bytes);
}

/* Before the stage's last superstep: the progress says that its tail is left, with these
 * buffers, and the sync that ends it takes a checkpoint. */
static void checkpoint_at_last_sync(lu_state *st, long j0, const double *lbuf, const double *ubuf,
                                    const double *swap) {
  if (st->nb_alg != st->nb) return; /* nb' > nb: no checkpoints (a restart starts over) */
  lu_progress *pr = st->progress;
  pr->j0 = j0;
  pr->tail = 1;
  pr->lbuf = bsp2d_buffer_index(st->grid, lbuf);
  pr->ubuf = ubuf ? bsp2d_buffer_index(st->grid, ubuf) : -1;
  pr->swap = swap ? bsp2d_buffer_index(st->grid, swap) : -1;
  st->checkpoint_next = 1;
}

static void sync_now(lu_state *st) {
  st->label_primitive = "hpput";
  st->label_pattern = "alltoall";
  bsp2d_sync(st->grid);
}

/* A registered buffer of one kind for this stage (in a replay: the one kept from the run). */
static double *stage_buffer(lu_state *st, int kind, size_t bytes) {
  if (st->replay) return st->replay_buf[kind];
  double *b = bsp2d_buffer_get(st->grid, bytes);
  st->replay_buf[kind] = b;
  return b;
}

static void stage_release(lu_state *st, double *buf) {
  if (!st->replay && buf) bsp2d_buffer_release(st->grid, buf);
}

static void put(lu_state *st, int dest, const double *src, double *dst_base, long offset,
                long count) {
  if (st->replay || count <= 0) return;
  bsp_hpput(dest, src, dst_base, (int)(offset * (long)sizeof(double)),
            (int)(count * (long)sizeof(double)));
  bspalg_put(dest, count);
}

/* ------------------------------------------------------------------ the panel */

/* The panel is factored in a column-major copy P (panel_rows x w, leading dimension ldp) of the
 * panel process' rows >= j0, which is also what the panel broadcast sends: row r of P is local
 * row li0 + r. */
typedef struct {
  double *P;
  long ldp, panel_rows, li0;
} panel_copy;

/* M = 1: the panel is this process' own rows j0 .. n - 1 (local rows are global rows). */
static void panel_local(lu_state *st, const panel_copy *pc, long j0, int w, long *stage_singular) {
  int m = (int)pc->panel_rows, wi = w, ld = (int)pc->ldp, info = 0;
  int *piv = st->lapack_pivots;
  dgetrf_(&m, &wi, pc->P, &ld, piv, &info);
  for (int i = 0; i < w; i++) {
    st->ipiv[j0 + i] = j0 + piv[i] - 1;
    double below = (double)(m - i - 1);
    work(st, below + 2.0 * below * (w - i - 1));
  }
  if (info > 0) *stage_singular = j0 + info - 1;
}

/* M > 1: one superstep per column; every process takes part (the replicated outputs). */
static void panel_distributed(lu_state *st, const panel_copy *pc, long j0, int w, int tc,
                              long *stage_singular) {
  long rec = panel_record(st), ldp = pc->ldp;
  int in_panel = st->t == tc;
  for (int jj = 0; jj < w; jj++) {
    long j = j0 + jj;
    double *cand = stage_buffer(st, BUF_CAND, st->cand_bytes);
    double *mine = cand + (long)st->pid * rec;
    long lr = bsp2d_local_before(st->rmap, st->s, j) - pc->li0; /* my first row >= j, in P */
    if (in_panel) {
      const double *col = pc->P + jj * ldp;
      long best = -1;
      double best_abs = -1.0;
      for (long r = lr; r < pc->panel_rows; r++)
        if (fabs(col[r]) > best_abs) best_abs = fabs(col[r]), best = r;
      mine[CAND_VALUE] = best >= 0 ? col[best] : 0.0;
      mine[CAND_ROW] = best >= 0 ? (double)bsp2d_to_global(st->rmap, st->s, pc->li0 + best) : -1.0;
      int has_diag = bsp2d_owner(st->rmap, j) == st->s;
      mine[CAND_HAS_DIAG] = has_diag;
      for (int c = 0; c < w; c++) {
        if (best >= 0) mine[CAND_DATA + c] = pc->P[c * ldp + best];
        if (has_diag) mine[CAND_DATA + st->nb + c] = pc->P[c * ldp + lr];
      }
      for (int q = 0; q < st->p; q++) {
        if (q == st->pid) continue;
        int same_column = q % st->N == tc;
        put(st, q, mine, cand, (long)st->pid * rec, same_column ? CAND_DATA + w : CAND_DATA);
        if (same_column && has_diag)
          put(st, q, mine + CAND_DATA + st->nb, cand, (long)st->pid * rec + CAND_DATA + st->nb, w);
      }
    }
    if (!st->replay) sync_now(st);

    /* the pivot: the largest |value| of the column's candidates, the lowest row on a tie */
    const double *winner = NULL, *diag = NULL;
    for (int s2 = 0; s2 < st->M; s2++) {
      const double *r = cand + (long)(st->replay ? st->pid : bsp2d_pid_of(st->grid, s2, tc)) * rec;
      if (r[CAND_HAS_DIAG] != 0.0) diag = r;
      if (r[CAND_ROW] < 0) continue;
      if (!winner || fabs(r[CAND_VALUE]) > fabs(winner[CAND_VALUE]) ||
          (fabs(r[CAND_VALUE]) == fabs(winner[CAND_VALUE]) && r[CAND_ROW] < winner[CAND_ROW]))
        winner = r;
      if (st->replay) break;
    }
    if (!winner || winner[CAND_VALUE] == 0.0) { /* no pivot: LAPACK's INFO, no swap */
      if (*stage_singular < 0) *stage_singular = j;
      st->ipiv[j] = j;
    } else {
      long piv = (long)winner[CAND_ROW];
      st->ipiv[j] = piv;
      if (in_panel) {
        if (!diag) diag = winner; /* a replay has only its own record */
        if (bsp2d_owner(st->rmap, j) == st->s)
          for (int c = 0; c < w; c++) pc->P[c * ldp + lr] = winner[CAND_DATA + c];
        if (piv != j && bsp2d_owner(st->rmap, piv) == st->s) {
          long lp = bsp2d_to_local(st->rmap, piv) - pc->li0;
          for (int c = 0; c < w; c++) pc->P[c * ldp + lp] = diag[CAND_DATA + st->nb + c];
        }
        long below = bsp2d_local_before(st->rmap, st->s, j + 1) - pc->li0;
        long mb = pc->panel_rows - below;
        if (mb > 0) {
          double *colj = pc->P + jj * ldp + below;
          cblas_dscal((int)mb, 1.0 / winner[CAND_DATA + jj], colj, 1);
          if (jj + 1 < w)
            cblas_dger(CblasColMajor, (int)mb, w - jj - 1, -1.0, colj, 1,
                       winner + CAND_DATA + jj + 1, 1, colj + ldp, (int)ldp);
          work(st, (double)mb * (1.0 + 2.0 * (w - jj - 1)));
        }
      }
    }
    stage_release(st, cand);
  }
}

/* Between the matrix (row-major) and the panel's column-major copy. */
static void panel_copy_in(const lu_state *st, const panel_copy *pc, long lc0, int w) {
  for (long r = 0; r < pc->panel_rows; r++) {
    const double *row = st->a + (pc->li0 + r) * st->ld + lc0;
    for (int c = 0; c < w; c++) pc->P[c * pc->ldp + r] = row[c];
  }
}

static void panel_copy_out(lu_state *st, const panel_copy *pc, long lc0, int w) {
  for (long r = 0; r < pc->panel_rows; r++) {
    double *row = st->a + (pc->li0 + r) * st->ld + lc0;
    for (int c = 0; c < w; c++) row[c] = pc->P[c * pc->ldp + r];
  }
}

/* ------------------------------------------------------------------ the row swaps */

/* The local columns that the swaps move on this process: the global columns [lo, hi) but those
 * of [skip0, skip1) (two ranges, either may be empty). A stage skips its panel, which the panel
 * factorization swapped already; it swaps every column, or (nb' > nb) its algorithmic block's. */
static void swap_columns(const lu_state *st, long lo, long skip0, long skip1, long hi,
                         long range[2][2]) {
  int t = st->t;
  range[0][0] = bsp2d_local_before(st->cmap, t, lo);
  range[0][1] = bsp2d_local_before(st->cmap, t, skip0);
  range[1][0] = bsp2d_local_before(st->cmap, t, skip1);
  range[1][1] = bsp2d_local_before(st->cmap, t, hi);
}

/* The stage's swaps as moves: position pos[x] receives the row that was at lab[x] (a move
 * when lab[x] != pos[x]); x is the same on every process. */
static int stage_moves(const lu_state *st, long j0, int w, long *pos, long *lab) {
  int count = 0;
  for (int jj = 0; jj < w; jj++) {
    long rows[2] = {j0 + jj, st->ipiv[j0 + jj]};
    int at[2];
    for (int e = 0; e < 2; e++) {
      at[e] = -1;
      for (int x = 0; x < count; x++)
        if (pos[x] == rows[e]) at[e] = x;
      if (at[e] < 0) {
        pos[count] = lab[count] = rows[e];
        at[e] = count++;
      }
    }
    long tmp = lab[at[0]];
    lab[at[0]] = lab[at[1]];
    lab[at[1]] = tmp;
  }
  return count;
}

/* Where the moving rows go in the buffers: those that process row q sends to process row d travel
 * together, in move order, in q's region of d's receive buffer (the send buffer holds one region
 * per destination). A row is `width` doubles there (its columns outside the panel). */
static void plan_moves(lu_state *st, const long *pos, const long *lab, int moves, long width) {
  int M = st->M, s = st->s;
  long *count = st->move_count; /* count[q * M + d]: rows from process row q to d */
  memset(count, 0, (size_t)M * M * sizeof *count);
  for (int x = 0; x < moves; x++)
    if (lab[x] != pos[x])
      count[bsp2d_owner(st->rmap, lab[x]) * M + bsp2d_owner(st->rmap, pos[x])]++;
  long *send_at = st->move_offsets, *recv_at = send_at + M, *used = recv_at + M;
  for (int q = 0; q < M; q++) {
    send_at[q] = q ? send_at[q - 1] + count[s * M + q - 1] * width : 0;
    recv_at[q] = q ? recv_at[q - 1] + count[(q - 1) * M + s] * width : 0;
  }
  memset(used, 0, (size_t)M * sizeof *used);
  st->nout = st->nin = 0;
  for (int x = 0; x < moves; x++) { /* rows leaving mine */
    int from = bsp2d_owner(st->rmap, lab[x]), to = bsp2d_owner(st->rmap, pos[x]);
    if (lab[x] == pos[x] || from != s) continue;
    st->out[st->nout++] =
        (row_move){bsp2d_to_local(st->rmap, lab[x]), send_at[to] + width * used[to]++, 0};
  }
  memset(used, 0, (size_t)M * sizeof *used);
  for (int x = 0; x < moves; x++) { /* rows arriving in mine */
    int from = bsp2d_owner(st->rmap, lab[x]), to = bsp2d_owner(st->rmap, pos[x]);
    if (lab[x] == pos[x] || to != s) continue;
    long at = (from == s ? send_at[s] : recv_at[from]) + width * used[from]++;
    st->in[st->nin++] = (row_move){bsp2d_to_local(st->rmap, pos[x]), at, from == s};
  }
}

static void copy_row_out(const lu_state *st, long lrow, long range[2][2], double *out) {
  for (int part = 0; part < 2; part++) {
    long cols = range[part][1] - range[part][0];
    memcpy(out, st->a + lrow * st->ld + range[part][0], (size_t)cols * sizeof *out);
    out += cols;
  }
}

static void copy_row_in(lu_state *st, long lrow, long range[2][2], const double *in) {
  for (int part = 0; part < 2; part++) {
    long cols = range[part][1] - range[part][0];
    memcpy(st->a + lrow * st->ld + range[part][0], in, (size_t)cols * sizeof *in);
    in += cols;
  }
}

/* M > 1: pack the rows leaving this process and put them (the caller ends the superstep). */
static void swaps_issue(lu_state *st, long range[2][2], double *recv, const long *pos,
                        const long *lab, int moves) {
  long width = range[0][1] - range[0][0] + range[1][1] - range[1][0];
  plan_moves(st, pos, lab, moves, width);
  bspalg_packing_begin(); /* H&B's packing (004 line 217): the rows leaving, into one buffer */
  for (int i = 0; i < st->nout; i++)
    copy_row_out(st, st->out[i].row, range, st->swap_send + st->out[i].at);
  bspalg_packing_end();
  const long *count = st->move_count, *send_at = st->move_offsets;
  for (int d = 0; d < st->M; d++) {
    long rows = count[st->s * st->M + d];
    if (d == st->s || rows == 0) continue;
    long there = 0; /* my region in d's buffer: after those of the process rows above mine */
    for (int q = 0; q < st->s; q++) there += count[q * st->M + d] * width;
    put(st, bsp2d_pid_of(st->grid, d, st->t), st->swap_send + send_at[d], recv, there,
        rows * width);
  }
}

/* After the sync: every row moving into mine, from the receive buffer or my own packing. */
static void swaps_finish(lu_state *st, long range[2][2], const double *recv) {
  bspalg_packing_begin(); /* unpacking */
  for (int i = 0; i < st->nin; i++)
    copy_row_in(st, st->in[i].row, range, (st->in[i].local ? st->swap_send : recv) + st->in[i].at);
  bspalg_packing_end();
}

/* M = 1: the interchanges are all local, row by row in the order they were made. */
static void swaps_local(lu_state *st, long j0, int w, long range[2][2]) {
  bspalg_packing_begin(); /* H&B count the local swaps with the packing (004 line 217) */
  for (int i = 0; i < w; i++) {
    long r1 = j0 + i, r2 = st->ipiv[j0 + i];
    if (r1 == r2) continue;
    for (int part = 0; part < 2; part++) {
      long cols = range[part][1] - range[part][0];
      if (cols > 0)
        cblas_dswap((int)cols, st->a + r1 * st->ld + range[part][0], 1,
                    st->a + r2 * st->ld + range[part][0], 1);
    }
  }
  bspalg_packing_end();
}

/* ------------------------------------------------------------------ one stage */

/* Stage j0; with `tail`, only its local work after its last sync, restarted from the
 * checkpoint taken there (the buffers the progress names hold what that work reads). */
static void stage(lu_state *st, long j0, int tail) {
  int w = (int)(st->col_hi - j0 < st->nb ? st->col_hi - j0 : st->nb);
  long j1 = j0 + w;
  int tc = bsp2d_owner(st->cmap, j0), sr = bsp2d_owner(st->rmap, j0);
  int in_panel = st->t == tc;
  long lc0 = bsp2d_to_local(st->cmap, j0);            /* the panel's local columns (on tc) */
  long li0 = bsp2d_local_before(st->rmap, st->s, j0); /* my rows >= j0 */
  long lr1 = bsp2d_local_before(st->rmap, st->s, j1); /* my rows >= j1 */
  long lc1 = bsp2d_local_before(st->cmap, st->t, j1); /* my columns >= j1 (and < col_hi) */
  long panel_rows = st->mloc - li0;
  long right = bsp2d_local_before(st->cmap, st->t, st->col_hi) - lc1;
  long swap_range[2][2];
  swap_columns(st, st->col_lo, j0, j1, st->col_hi, swap_range);
  long stage_singular = -1;
  lu_progress *pr = st->progress;
  double *lbuf, *swap_recv = NULL, *ubuf = NULL;
  if (tail) { /* the buffers the stage held at its checkpoint */
    lbuf = bsp2d_buffer_take(st->grid, pr->lbuf);
    if (pr->swap >= 0) swap_recv = bsp2d_buffer_take(st->grid, pr->swap);
    if (pr->ubuf >= 0) ubuf = bsp2d_buffer_take(st->grid, pr->ubuf);
  } else {
    lbuf = stage_buffer(st, BUF_LPANEL, st->lpanel_bytes);
  }
  panel_copy pc = {lbuf + HDR_PIVOTS + st->nb, panel_rows > 0 ? panel_rows : 1, panel_rows, li0};

  /* The stage's last sync: M = 1, the panel broadcast's (2.); M > 1, the U broadcast's (3.). */
  if (!tail) {
    /* 1. the panel, factored in the buffer that the panel broadcast sends */
    if (in_panel) panel_copy_in(st, &pc, lc0, w);
    if (st->M == 1) {
      if (in_panel) panel_local(st, &pc, j0, w, &stage_singular);
    } else {
      panel_distributed(st, &pc, j0, w, tc, &stage_singular);
    }
    if (in_panel) panel_copy_out(st, &pc, lc0, w);

    /* 2. the panel (and the pivots) to the process rows, and the row interchanges */
    if (st->N > 1 && !st->replay) {
      if (in_panel) {
        lbuf[HDR_SINGULAR] = (double)stage_singular;
        for (int i = 0; i < w; i++) lbuf[HDR_PIVOTS + i] = (double)st->ipiv[j0 + i];
      }
      size_t bytes = (size_t)(HDR_PIVOTS + st->nb + (long)w * panel_rows) * sizeof(double);
      bsp2d_bcast_start(st->grid, BSP2D_ROW, tc, lbuf, bytes);
    }
    if (st->M > 1) {
      swap_recv = stage_buffer(st, BUF_SWAP, st->swap_bytes);
      int moves = stage_moves(st, j0, w, st->move_pos, st->move_row);
      swaps_issue(st, swap_range, swap_recv, st->move_pos, st->move_row, moves);
    }
    if (!st->replay && (st->M > 1 || bsp2d_pending(st->grid) > 0)) {
      if (st->M == 1) checkpoint_at_last_sync(st, j0, lbuf, NULL, NULL);
      sync_now(st);
      bsp2d_complete(st->grid);
    }
  } else if (st->M == 1) { /* the panel's process wrote it in the header, the others got it */
    stage_singular = (long)lbuf[HDR_SINGULAR];
  }

  double *a12 = st->a + li0 * st->ld + lc1; /* on sr: rows J, my columns >= j1 */
  if (!tail || st->M == 1) {
    if (st->N > 1 && !in_panel && !st->replay) { /* the pivots came with the panel */
      if (lbuf[HDR_SINGULAR] >= 0 && stage_singular < 0) stage_singular = (long)lbuf[HDR_SINGULAR];
      for (int i = 0; i < w; i++) st->ipiv[j0 + i] = (long)lbuf[HDR_PIVOTS + i];
    }
    if (st->M > 1) swaps_finish(st, swap_range, swap_recv);
    else swaps_local(st, j0, w, swap_range);
    if (stage_singular >= 0 && pr->singular_column < 0) pr->singular_column = stage_singular;

    /* 3. U12 = L11^-1 A12 on process row sr, to the process columns. L11 is the top of P,
     * column-major: read row-major it is L11^T, upper triangular, hence Upper and Trans. */
    if (st->s == sr && right > 0) {
      cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans, CblasUnit, w, (int)right, 1.0,
                  pc.P, (int)pc.ldp, a12, (int)st->ld);
      work(st, (double)w * (w - 1) * (double)right);
    }
    if (st->M > 1) {
      ubuf = stage_buffer(st, BUF_UPANEL, st->upanel_bytes);
      if (st->s == sr) {
        bspalg_packing_begin(); /* U12's rows, strided in A, into the broadcast's buffer */
        for (int r = 0; r < w; r++)
          memcpy(ubuf + r * right, a12 + r * st->ld, (size_t)right * sizeof(double));
        bspalg_packing_end();
      }
      if (!st->replay) {
        st->label_primitive = "hpput";
        st->label_pattern = "alltoall";
        bsp2d_bcast_start(st->grid, BSP2D_COL, sr, ubuf, (size_t)(w * right) * sizeof(double));
        checkpoint_at_last_sync(st, j0, lbuf, ubuf, swap_recv);
        bsp2d_complete(st->grid);
      }
    }
  }
  const double *U = a12; /* U12: in place on sr, from the broadcast elsewhere */
  long ldu = st->ld;
  if (st->M > 1 && st->s != sr) {
    U = ubuf;
    ldu = right > 0 ? right : 1;
  }

  /* 4. A22 -= L21 U12 (L21 column-major in P: Trans) */
  long rows_below = st->mloc - lr1;
  if (rows_below > 0 && right > 0) {
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows_below, (int)right, w, -1.0,
                pc.P + (lr1 - li0), (int)pc.ldp, U, (int)ldu, 1.0, st->a + lr1 * st->ld + lc1,
                (int)st->ld);
    work(st, 2.0 * (double)rows_below * (double)right * w);
  }
  stage_release(st, ubuf);
  stage_release(st, swap_recv);
  stage_release(st, lbuf);
  if (!st->replay) {
    pr->j0 = j1;
    pr->tail = 0;
  }
}

/* ------------------------------------------------------------------ nb' > nb */

/* The algorithmic block J = [j0, j1) of more than nb columns, after its panel was factored by
 * the stages of its nb-column blocks, each swapping and updating the columns of J only (so the
 * process columns that hold J all take part in its panel; Horvitz & Bisseling, seed 004 line 74:
 * with nb' = 2 nb two process columns take part in one algorithmic block). The rest of the
 * matrix in one update of inner dimension w = j1 - j0:
 *   1. J's interchanges on every column outside J (one superstep, the cycle form, M > 1; local,
 *      M = 1), and in the same superstep(s) L(rows >= j0, J) to every process of the process row
 *      (an allreduce of sums over the process row: each holds its columns of J, zeros elsewhere;
 *      a panel held by several process columns has several roots);
 *   2. the rows J of A12 and L11 (w x w) to every process of the process column (the same
 *      allreduce over the process column; J's rows span up to nb'/nb process rows);
 *   3. everyone: U12 = L11^-1 A12 (dtrsm, by every process row alike, instead of a chain of
 *      nb'/nb broadcasts), its own rows of U12 into the matrix, A22 -= L21 U12 (dgemm).
 * Supersteps: max([M > 1], C(N)) + C(M), C = bsp2d_collective_supersteps. */
static void alg_trailing(lu_state *st, long j0, long j1) {
  int w = (int)(j1 - j0);
  long li0 = bsp2d_local_before(st->rmap, st->s, j0), lr1 = bsp2d_local_before(st->rmap, st->s, j1);
  long lc0 = bsp2d_local_before(st->cmap, st->t, j0), lc1 = bsp2d_local_before(st->cmap, st->t, j1);
  long lrows = st->mloc - li0, right = st->nloc - lc1, ldl = lrows > 0 ? lrows : 1;
  long range[2][2];
  swap_columns(st, 0, j0, j1, st->n, range);

  /* 1. the swaps and L(rows >= j0, J), column-major with leading dimension ldl */
  double *L = st->alg_l, *swap_recv = NULL;
  bspalg_packing_begin(); /* L of the block, gathered column-major for the allreduce */
  memset(L, 0, (size_t)(w * ldl) * sizeof *L);
  for (long lc = lc0; lc < lc1; lc++) {
    long c = bsp2d_to_global(st->cmap, st->t, lc) - j0;
    for (long r = 0; r < lrows; r++) L[c * ldl + r] = st->a[(li0 + r) * st->ld + lc];
  }
  bspalg_packing_end();
  if (st->M > 1) {
    swap_recv = stage_buffer(st, BUF_SWAP, st->swap_bytes);
    int moves = stage_moves(st, j0, w, st->move_pos, st->move_row);
    swaps_issue(st, range, swap_recv, st->move_pos, st->move_row, moves);
  }
  if (!st->replay) {
    if (st->N > 1) bsp2d_allreduce_start(st->grid, BSP2D_ROW, BSP2D_SUM, L, w * lrows);
    if (st->M > 1 || bsp2d_pending(st->grid) > 0) {
      sync_now(st);
      bsp2d_complete(st->grid);
    }
  }
  if (st->M > 1) swaps_finish(st, range, swap_recv);
  else swaps_local(st, j0, w, range);
  stage_release(st, swap_recv);

  /* 2. rows J of A12 (row-major, leading dimension right) and L11 (column-major, w x w) */
  long ldu = right > 0 ? right : 1;
  double *U = st->alg_u, *L11 = U + w * ldu;
  memset(U, 0, (size_t)(w * ldu + w * w) * sizeof *U);
  for (long li = li0; li < lr1; li++) {
    long r = bsp2d_to_global(st->rmap, st->s, li) - j0;
    if (right > 0) memcpy(U + r * ldu, st->a + li * st->ld + lc1, (size_t)right * sizeof *U);
    for (int c = 0; c < w; c++) L11[c * w + r] = L[c * ldl + (li - li0)];
  }
  if (!st->replay && st->M > 1) {
    bsp2d_allreduce_start(st->grid, BSP2D_COL, BSP2D_SUM, U, w * ldu + (long)w * w);
    bsp2d_complete(st->grid);
  }

  /* 3. U12 (L11 column-major read row-major is L11^T: Upper, Trans), A22 -= L21 U12 */
  if (right > 0) {
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans, CblasUnit, w, (int)right, 1.0,
                L11, w, U, (int)ldu);
    work(st, (double)w * (w - 1) * (double)right);
    for (long li = li0; li < lr1; li++) {
      long r = bsp2d_to_global(st->rmap, st->s, li) - j0;
      memcpy(st->a + li * st->ld + lc1, U + r * ldu, (size_t)right * sizeof *U);
    }
    long rows_below = st->mloc - lr1;
    if (rows_below > 0) {
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows_below, (int)right, w, -1.0,
                  L + (lr1 - li0), (int)ldl, U, (int)ldu, 1.0, st->a + lr1 * st->ld + lc1,
                  (int)st->ld);
      work(st, 2.0 * (double)rows_below * (double)right * w);
    }
  }
}

/* nb' > nb: algorithmic block by block; a block of more than nb columns is factored by stages
 * restricted to its columns, then alg_trailing updates the rest. */
static void factor_algorithmic(lu_state *st) {
  for (long j0 = 0; j0 < st->n; j0 += st->nb_alg) {
    long j1 = st->n - j0 < st->nb_alg ? st->n : j0 + st->nb_alg;
    if (j1 - j0 > st->nb) {
      st->col_lo = j0;
      st->col_hi = j1;
    }
    for (long k0 = j0; k0 < j1; k0 += st->nb) stage(st, k0, 0);
    st->col_lo = 0;
    st->col_hi = st->n;
    if (j1 - j0 > st->nb) alg_trailing(st, j0, j1);
  }
}

/* From the stage the progress names (0, or a restart's: its tail first). */
static void factor(lu_state *st) {
  if (st->nb_alg != st->nb) {
    factor_algorithmic(st);
    return;
  }
  lu_progress *pr = st->progress;
  for (long j0 = pr->j0; j0 < st->n; j0 += st->nb) stage(st, j0, pr->tail);
}

/* ------------------------------------------------------------------ the driver */

static void fill(lu_state *st) {
  for (long li = 0; li < st->mloc; li++) {
    long gi = bsp2d_to_global(st->rmap, st->s, li);
    double *row = st->a + li * st->ld;
    for (long lj = 0; lj < st->nloc; lj++) {
      long gj = bsp2d_to_global(st->cmap, st->t, lj);
      row[lj] = gj == opt_singular_column ? 0.0 : mm_input(st->seed, MM_A, gi, gj, st->n);
    }
  }
}

static void *setup(const bspalg_common_opts *opts) {
  lu_state *st = bspalg_alloc(sizeof *st, "for the state");
  *st = (lu_state){.p = bsp_nprocs(),
                   .pid = bsp_pid(),
                   .seed = opts->seed,
                   .n = opt_size,
                   .nb = opt_nb,
                   .nb_alg = opt_nb_alg ? opt_nb_alg : opt_nb,
                   .col_lo = 0,
                   .col_hi = opt_size};
  if (opt_rows) st->M = opt_rows, st->N = opt_cols;
  else mm_grid(st->p, &st->M, &st->N);
  if ((long)st->M * st->N != st->p || opt_singular_column >= st->n || st->nb_alg % st->nb) {
    if (st->pid == 0) {
      if (st->nb_alg % st->nb)
        fprintf(stderr, "%s: --nb-alg %d must be a multiple of --nb %d\n", prog, st->nb_alg,
                st->nb);
      else if ((long)st->M * st->N != st->p)
        fprintf(stderr, "%s: --grid %dx%d needs %d processes, not %d\n", prog, st->M, st->N,
                st->M * st->N, st->p);
      else
        fprintf(stderr, "%s: --singular-column %ld is not a column of a %ld x %ld matrix\n", prog,
                opt_singular_column, st->n, st->n);
    }
    return NULL;
  }
  st->s = st->pid / st->N;
  st->t = st->pid % st->N;
  st->rmap = (bsp2d_map){st->n, st->nb, st->M};
  st->cmap = (bsp2d_map){st->n, st->nb, st->N};
  st->mloc = bsp2d_local_count(st->rmap, st->s);
  st->nloc = bsp2d_local_count(st->cmap, st->t);
  st->mloc_max = bsp2d_local_count(st->rmap, 0); /* coordinate 0 holds the most */
  st->nloc_max = bsp2d_local_count(st->cmap, 0);
  st->ld = st->nloc > 0 ? st->nloc : 1;
  if (!mm_fits_registration(prog, (double)st->mloc_max * (double)st->nloc_max,
                            " or a grid with more process rows"))
    return NULL;
  bsp2d_hooks hooks = {
      .on_send = on_send, .sync = labelled_sync, .ctx = st, .on_buffer = protect_buffer};
  st->grid = bsp2d_grid_create(st->M, st->N, &hooks);
  st->a = mm_alloc_doubles((st->mloc > 0 ? st->mloc : 1) * st->ld, "the matrix");
  mm_register_doubles(st->a, (st->mloc > 0 ? st->mloc : 1) * st->ld);
  st->ipiv = bspalg_alloc((size_t)st->n * sizeof *st->ipiv, "for the pivots");
  /* A checkpoint at the last sync of every stage: the matrix, the pivots, the progress, and
   * the registered buffers (protected as the manager makes them, below). */
  st->progress = bspalg_alloc(sizeof *st->progress, "for the state");
  bspalg_checkpoint_protect(st->progress, sizeof *st->progress);
  mm_protect_doubles(st->a, (st->mloc > 0 ? st->mloc : 1) * st->ld);
  bspalg_checkpoint_protect(st->ipiv, (size_t)st->n * sizeof *st->ipiv);
  /* the swaps of a stage, or of an algorithmic block (nb' pivots) */
  st->swap_send = mm_alloc_doubles(2L * st->nb_alg * st->nloc_max, "the rows leaving in a swap");
  st->move_pos = bspalg_alloc(4 * (size_t)st->nb_alg * sizeof(long), "for the row moves");
  st->move_row = st->move_pos + 2 * st->nb_alg;
  st->lapack_pivots = bspalg_alloc((size_t)st->nb * sizeof(int), "for the pivots");
  st->move_count =
      bspalg_alloc((size_t)(st->M * st->M + 3 * st->M) * sizeof(long), "for the moves");
  st->move_offsets = st->move_count + st->M * st->M;
  st->out = bspalg_alloc(4 * (size_t)st->nb_alg * sizeof(row_move), "for the moves");
  st->in = st->out + 2 * st->nb_alg;
  if (st->nb_alg != st->nb) {
    st->alg_l = mm_alloc_doubles((long)st->nb_alg * st->mloc_max, "the algorithmic block's L");
    st->alg_u = mm_alloc_doubles((long)st->nb_alg * (st->nloc_max + st->nb_alg),
                                 "the algorithmic block's U");
  }
  st->cand_bytes = (size_t)(st->p * panel_record(st)) * sizeof(double);
  st->lpanel_bytes = (size_t)(HDR_PIVOTS + st->nb + (long)st->nb * st->mloc_max) * sizeof(double);
  st->upanel_bytes = (size_t)((long)st->nb * st->nloc_max) * sizeof(double);
  st->swap_bytes = (size_t)(2L * st->nb_alg * st->nloc_max) * sizeof(double);
  /* two of each: a stage's buffers are released at its end and stay used until the next sync */
  size_t reserve[] = {st->cand_bytes,   st->cand_bytes,   st->lpanel_bytes, st->lpanel_bytes,
                      st->upanel_bytes, st->upanel_bytes, st->swap_bytes,   st->swap_bytes};
  bsp2d_buffers_reserve(st->grid, reserve, 8);
  for (int kind = 0; kind < 4; kind++) /* measure_f's replay: one of each, as reserved */
    st->replay_buf[kind] = bsp2d_buffer_at(st->grid, 2 * kind);
  return st;
}

static void prepare(void *state) {
  lu_state *st = state;
  fill(st);
  *st->progress = (lu_progress){0, -1, 0, -1, -1, -1};
}

static void repetition(void *state) {
  lu_state *st = state;
  factor(st);
  long singular = st->progress->singular_column;
  if (singular >= 0) { /* every process knows it: the replicated outputs */
    if (st->pid == 0)
      bsp_abort(
          "%s: the matrix is singular: column %ld has no pivot (its entries from row %ld "
          "down are all 0 after the elimination of the columns before it; U(%ld, %ld) = 0)\n",
          prog, singular, singular, singular, singular);
    bsp_sync();
  }
}

/* This process' part of L and U (its rows and columns of the factored matrix). */
static void result(void *state, const void **bytes, size_t *nbytes) {
  const lu_state *st = state;
  *bytes = st->a;
  *nbytes = (size_t)(st->mloc * st->nloc) * sizeof(double);
}

/* splitmix64's finalizer (rdxsort_kernels.c's mix64), for the pivots' fingerprint. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The pivot sequence in one number, sum of mix64(k n + ipiv[k]) modulo 2^64, which
 * examples/python/lu.py prints too: the same pivots, the same fingerprint. */
static uint64_t pivot_fingerprint(const long *ipiv, long n) {
  uint64_t sum = 0;
  for (long k = 0; k < n; k++) sum += mix64((uint64_t)k * (uint64_t)n + (uint64_t)ipiv[k]);
  return sum;
}

/* Process 0 gathers the factors and the pivots and computes ||P A - L U||_1 / (n ||A||_1 eps). */
static int check(void *state, bspalg_check_report *report) {
  lu_state *st = state;
  long n = st->n;
  if (n > CHECK_MAX_N) {
    if (st->pid == 0)
      snprintf(report->note, sizeof report->note,
               "not checked: n > %ld (the check holds the matrix three times on process 0)",
               CHECK_MAX_N);
    return 0;
  }
  double *lu = NULL, *piece = NULL;
  if (st->pid == 0) {
    lu = malloc((size_t)(n * n) * sizeof *lu);
    piece = malloc((size_t)(st->mloc_max * (st->nloc_max > 0 ? st->nloc_max : 1)) * sizeof *piece);
    if (!lu || !piece) bsp_abort("%s: out of memory for the check (n = %ld)\n", prog, n);
  }
  for (int q = 0; q < st->p; q++) { /* one process' matrix per superstep, row by row */
    int qs = q / st->N, qt = q % st->N;
    long qm = bsp2d_local_count(st->rmap, qs), qn = bsp2d_local_count(st->cmap, qt);
    if (st->pid == 0 && qn > 0)
      for (long r = 0; r < qm; r++)
        bsp_get(q, st->a, (int)(r * qn * (long)sizeof(double)), piece + r * qn,
                (int)(qn * (long)sizeof(double)));
    bsp_sync();
    if (st->pid == 0)
      for (long r = 0; r < qm; r++) {
        long gi = bsp2d_to_global(st->rmap, qs, r);
        for (long c = 0; c < qn; c++)
          lu[bsp2d_to_global(st->cmap, qt, c) * n + gi] = piece[r * qn + c];
      }
  }
  if (st->pid != 0) return 1;
  free(piece);
  double *x = calloc((size_t)(n * n), sizeof *x), *pa = malloc((size_t)(n * n) * sizeof *pa);
  if (!x || !pa) bsp_abort("%s: out of memory for the check (n = %ld)\n", prog, n);
  for (long j = 0; j < n; j++) /* X = U, then L U */
    memcpy(x + j * n, lu + j * n, (size_t)(j + 1) * sizeof *x);
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)n, (int)n, 1.0,
              lu, (int)n, x, (int)n);
  for (long j = 0; j < n; j++)
    for (long i = 0; i < n; i++)
      pa[j * n + i] = j == opt_singular_column ? 0.0 : mm_input(st->seed, MM_A, i, j, n);
  for (long k = 0; k < n; k++) /* P A: the interchanges in the order they were made */
    if (st->ipiv[k] != k) cblas_dswap((int)n, pa + k, (int)n, pa + st->ipiv[k], (int)n);
  double norm_a = 0.0, norm_r = 0.0;
  for (long j = 0; j < n; j++) {
    double col_a = 0.0, col_r = 0.0;
    for (long i = 0; i < n; i++) {
      col_r += fabs(pa[j * n + i] - x[j * n + i]);
      col_a += fabs(pa[j * n + i]);
    }
    norm_a = fmax(norm_a, col_a);
    norm_r = fmax(norm_r, col_r);
  }
  double resid = norm_a > 0 ? norm_r / ((double)n * norm_a * DBL_EPSILON) : norm_r;
  free(lu);
  free(x);
  free(pa);
  snprintf(report->note, sizeof report->note,
           "||P A - L U||_1 / (n ||A||_1 eps) = %.3g (bound %g), factors and pivots gathered on "
           "process 0, pivots 0x%016llx",
           resid, RESIDUAL_BOUND, (unsigned long long)pivot_fingerprint(st->ipiv, n));
  if (!(resid <= RESIDUAL_BOUND)) {
    snprintf(report->wrong, sizeof report->wrong,
             ": ||P A - L U||_1 / (n ||A||_1 eps) = %.3g, over the bound %g (n = %ld, nb = %d, "
             "grid %dx%d)",
             resid, RESIDUAL_BOUND, n, st->nb, st->M, st->N);
    return -1;
  }
  return 1;
}

/* f: the whole factorization's local computation on this process (panel, dtrsm, dgemm), without
 * the requests and the syncs, per flop counted (the kernel mix of the run itself). The matrix is
 * made again first; the broadcast buffers hold the last stage's data, which is as good to time. */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  lu_state *st = state;
  fill(st);
  st->replay = 1;
  st->replay_flops = 0.0;
  double t0 = bspk_monotonic_seconds();
  lu_progress kept = *st->progress; /* the run's: the replay factors from column 0 */
  *st->progress = (lu_progress){0, -1, 0, -1, -1, -1};
  factor(st);
  *st->progress = kept;
  double seconds = bspk_monotonic_seconds() - t0;
  st->replay = 0;
  if (!every_process && st->replay_flops > 0)
    snprintf(note, note_size,
             "the local computation of process 0's whole factorization (panels, dtrsm, dgemm; "
             "OpenBLAS, 1 thread), without communication, per flop counted: on process 0 alone, "
             "and every process its own at once (f_all)");
  return st->replay_flops > 0 ? seconds / st->replay_flops : 0.0;
}

static void params(void *state, char *json, size_t json_size) {
  const lu_state *st = state;
  snprintf(json, json_size,
           "{\"n\": %ld, \"nb\": %d, \"nb_alg\": %d, \"grid_rows\": %d, \"grid_cols\": %d, "
           "\"stages\": %ld}",
           st->n, st->nb, st->nb_alg, st->M, st->N, (st->n + st->nb - 1) / st->nb);
}

static void teardown(void *state) {
  lu_state *st = state;
  bsp2d_grid_destroy(st->grid);
}

// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm = "lu", .work_unit = "flop", .help = help, .option = option,
    .before_init = mm_blas_single_threaded, .setup = setup, .prepare = prepare,
    .repetition = repetition, .check = check, .measure_f = measure_f, .params = params,
    .teardown = teardown, .result = result};
// clang-format on

BSPALG_MAIN(driver)
