/*
 * bspalg-matmul - memory-efficient matrix multiplication C = A B (n x n) with q overpartitioning
 * blocks (thesis ch. 4, eq. 4.3-4.4), with the customized block-cyclic distribution (eq. 4.5-4.8)
 * or the static 2D distribution fetching rows with bsp_hpget (eq. 4.9-4.10).
 *
 * The n x n x n cube of elementary products is cut into q = Q^3 cubes of side s = ceil(n / Q):
 * cube (I, J, K) is V_IJK = A_IJ B_JK, and C_IK = sum_J V_IJK. Edge blocks are smaller
 * (n - I s, possibly empty when n is small next to Q); nothing assumes Q | n or sqrt(p) | n.
 *
 * Schedule (the same for both distributions). The Q^2 "columns" (I, K) (c = I Q + K) are
 * dealt out round-robin: process x computes every cube of the columns c = m p + x for
 * m < F = floor(Q^2 / p), one per superstep, accumulating C_IK itself; it visits a column's J
 * from (I + K) mod Q on (Cannon's skew: neighbouring columns start at different J, so the
 * processes of a round ask different owners for their blocks). The r = Q^2 mod p remaining
 * columns have their r Q cubes dealt out one per process and superstep (cube u of them to
 * process u mod p in step u / p); their partial products V_IJK go to the owners of C_IK, who
 * add them. These remainder steps come first, so that their sums are added while later steps
 * run. Logical supersteps:
 *   L = ceil(r Q / p) + Q F = ceil(q / p),
 * each two syncs, as in the thesis: an input phase (fetch A_IJ and B_JK) and an output phase
 * (local dgemm, then send the result where it belongs). Only when Q^2 < p (fewer columns than
 * processes) a closing superstep adds the last partial products.
 *
 * --dist blockcyclic (customized): A, B and C are stored in their s x s blocks; block (I, J) of
 *   each lives on process (I Q + J) mod p, contiguous, so a remote block is one bsp_hpget.
 *   Column c's owner computes it (c mod p = x), so only remainder columns have output: one
 *   bsp_send of V_IJK (tag: its place in C) to the owner of C_IK, which adds it.
 * --dist static2d: A, B and C are stored as one rectangle per process of a Pr x Pc grid
 *   (mm_grid: the factorization of p closest to square; p = 2, 3 give 1 x p), rows and columns
 *   split as evenly as possible, row-major. The input phase gathers A_IJ and B_JK row by row
 *   with one bsp_hpget per row piece per owner (rows that are whole rows of the owner's
 *   rectangle and of the block go as one hpget); a block inside this process' rectangle is used
 *   in place. A column's sum is kept in a buffer and, when its last J is done, stored into the
 *   owners' C with bsp_hpput (row pieces likewise); remainder columns send their V_IJK pieces
 *   with bsp_send to be added. With p = Q^2 the blocks are the grid's rectangles and this is
 *   Cannon's algorithm with gets.
 *
 * Cost (flops: 2 per multiply-add; words of 8 bytes). With n = Q s and r = 0:
 *   W = ceil(q/p) 2 s^3 = 2 n^3 / p                                                 (eq. 4.5)
 *   S = 2 ceil(q/p)                                                                 (eq. 4.7)
 *   H ~ ceil(q/p) 2 s^2, the thesis' input term (eq. 4.6), counted exactly per superstep:
 *     p = 1: 0;  blockcyclic, p = 2, Q even: Q n^2 / 4 (B_JK is always local, A_IJ remote in
 *     half of the steps);  static2d, p = Q^2: exactly ceil(q/p) 2 s^2 (and no output).
 * With r > 0 the r Q remainder cubes add output supersteps (h <= s^2 min(p - 1, Q)), and W the
 * additions of the received V_IJK (s^2 flops each); static2d adds an output phase every Q
 * steps for columns whose C_IK is not on their process (eq. 4.9's s^2 / q^(1/3) per step).
 * algorithms/matmul/README.md has the details; tests/python/test_matmul_cost.py checks the
 * counts against these formulas and against a model of the schedule.
 */
#include <bsp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "matmul_common.h"

typedef enum { DIST_BLOCKCYCLIC, DIST_STATIC2D } dist_kind;

static const char prog[] = "bspalg-matmul";
static const char *const dist_names[] = {"blockcyclic", "static2d"}; /* indexed by dist_kind */
static long opt_size = 1000;
static long opt_q = 8;
static dist_kind opt_dist = DIST_BLOCKCYCLIC;

/* --help: what it does and its own options */
static const char help[] =
    "Memory-efficient matrix multiplication C = A B of random n x n matrices with q\n"
    "overpartitioning blocks (thesis ch. 4); local products with cblas_dgemm on one thread.\n"
    "  --size N          matrix size n (default 1000)\n"
    "  --q Q             number of cubic blocks, a perfect cube: 1, 8, 27, 64, ... (default 8)\n"
    "  --dist D          blockcyclic (blocks pre-distributed block-cyclically, default) or\n"
    "                    static2d (a 2D grid of rectangles, rows fetched with bsp_hpget)\n";

static int option(const char *arg, const char *value) {
  if (!value) return 0;
  if (!strcmp(arg, "--size")) {
    opt_size = bspalg_parse_long(prog, "--size", value, 1, 1000000);
  } else if (!strcmp(arg, "--q")) {
    opt_q = bspalg_parse_long(prog, "--q", value, 1, 1000000);
    if (mm_cube_root(opt_q) < 0) {
      fprintf(stderr, "%s: --q must be a perfect cube (1, 8, 27, 64, 125, ...), not %ld\n", prog,
              opt_q);
      exit(2);
    }
  } else if (!strcmp(arg, "--dist")) {
    opt_dist = (dist_kind)bspalg_parse_choice(prog, "--dist", value, dist_names, 2);
  } else {
    return 0;
  }
  return 2;
}

/* Where a partial product belongs in C: the tag of a bsp_send. */
typedef struct {
  int row0, col0, rows, cols;
} rect_tag;

/* Where a repetition stands (protected: every logical superstep ends with a checkpoint). */
typedef struct {
  int t; /* the next logical superstep */
} mm_progress;

typedef struct {
  int p, pid;
  unsigned long seed;
  long n, s;
  int Q;
  int full_rounds; /* F = floor(Q^2 / p): rounds of whole columns per process */
  int rem_columns; /* r = Q^2 mod p */
  int rem_steps;   /* ceil(r Q / p) */
  int steps;       /* logical supersteps L = rem_steps + Q F */
  dist_kind dist;
  /* static2d: this process' rectangle of the Pr x Pc grid */
  int Pr, Pc, my_pr, my_pc;
  long my_r0, my_rows, my_c0, my_cols;
  /* storage: blockcyclic: slots of s x s per owned block; static2d: the local rectangles */
  long slots;
  double *A, *B, *C;
  /* work buffers (s x s): fetched blocks, a column's sum, a partial product, messages */
  double *abuf, *bbuf, *cbuf, *vbuf, *rbuf;
  /* the supersteps' labels (primitive, pattern) of the input and output phases */
  const char **in_label, **out_label;
  mm_progress *progress;
} mm_state;

static long block_size(const mm_state *st, int I) {
  long left = st->n - (long)I * st->s;
  return left <= 0 ? 0 : left < st->s ? left : st->s;
}

/* The cube process x computes in logical superstep t (0 when it has none). *stage is the
 * cube's place in its column's sequence (0 .. Q-1: 0 starts the sum, Q-1 completes it), or -1
 * for a remainder cube. A column's J are visited from (I + K) mod Q on, Cannon's skew: the
 * processes of a round hold neighbouring columns, so they start at different J and ask
 * different owners for their blocks instead of all asking the owner of A_I0 at once. */
static int cube_of(const mm_state *st, int x, int t, int *I, int *J, int *K, int *stage) {
  if (t < st->rem_steps) {
    long u = (long)t * st->p + x;
    if (u >= (long)st->rem_columns * st->Q) return 0;
    int col = st->p * st->full_rounds + (int)(u / st->Q);
    *I = col / st->Q;
    *K = col % st->Q;
    *J = (int)(u % st->Q);
    *stage = -1;
  } else {
    int t1 = t - st->rem_steps;
    int col = (t1 / st->Q) * st->p + x;
    *I = col / st->Q;
    *K = col % st->Q;
    *stage = t1 % st->Q;
    *J = (*stage + *I + *K) % st->Q;
  }
  return 1;
}

/* ---------------------------------------------------------------- block-cyclic storage */

static int bc_owner(const mm_state *st, int bi, int bj) { return (bi * st->Q + bj) % st->p; }
static long bc_offset(const mm_state *st, int bi, int bj) {
  return (long)((bi * st->Q + bj) / st->p) * st->s * st->s;
}

/* Block (bi, bj) of A or B: in place when it is ours, else one hpget into buf. */
static const double *bc_fetch(const mm_state *st, double *store, int bi, int bj, double *buf,
                              long *ld) {
  long rows = block_size(st, bi), cols = block_size(st, bj);
  int owner = bc_owner(st, bi, bj);
  *ld = cols > 0 ? cols : 1;
  if (owner == st->pid) return store + bc_offset(st, bi, bj);
  if (rows > 0 && cols > 0) {
    bsp_hpget(owner, store, (int)(bc_offset(st, bi, bj) * (long)sizeof(double)), buf,
              (int)(rows * cols * (long)sizeof(double)));
    bspalg_get(owner, rows * cols);
  }
  return buf;
}

/* ------------------------------------------------------------------ static 2D storage */

/* The owners' pieces of the rectangle [r0, r0 + rows) x [c0, c0 + cols), in order. */
typedef struct {
  int owner;
  long r0, c0, rows, cols; /* the piece, in global coordinates */
  long owner_r0, owner_c0; /* the owner's rectangle origin */
  long owner_cols;         /* the owner's row length (its leading dimension) */
} piece;

typedef void (*piece_fn)(const mm_state *st, const piece *pc, void *arg);

static void for_each_piece(const mm_state *st, long r0, long c0, long rows, long cols, piece_fn fn,
                           void *arg) {
  if (rows <= 0 || cols <= 0) return;
  for (int pr = mm_part_of(st->n, st->Pr, r0);
       pr < st->Pr && mm_part_start(st->n, st->Pr, pr) < r0 + rows; pr++) {
    long pr0 = mm_part_start(st->n, st->Pr, pr), pr1 = mm_part_start(st->n, st->Pr, pr + 1);
    for (int pc = mm_part_of(st->n, st->Pc, c0);
         pc < st->Pc && mm_part_start(st->n, st->Pc, pc) < c0 + cols; pc++) {
      long pc0 = mm_part_start(st->n, st->Pc, pc), pc1 = mm_part_start(st->n, st->Pc, pc + 1);
      piece x;
      x.owner = pr * st->Pc + pc;
      x.r0 = r0 > pr0 ? r0 : pr0;
      x.c0 = c0 > pc0 ? c0 : pc0;
      x.rows = (r0 + rows < pr1 ? r0 + rows : pr1) - x.r0;
      x.cols = (c0 + cols < pc1 ? c0 + cols : pc1) - x.c0;
      x.owner_r0 = pr0;
      x.owner_c0 = pc0;
      x.owner_cols = pc1 - pc0;
      if (x.rows > 0 && x.cols > 0) fn(st, &x, arg);
    }
  }
}

static int s2d_is_mine(const mm_state *st, long r0, long c0, long rows, long cols) {
  return r0 >= st->my_r0 && r0 + rows <= st->my_r0 + st->my_rows && c0 >= st->my_c0 &&
         c0 + cols <= st->my_c0 + st->my_cols;
}

/* A transfer between a contiguous rows x cols buffer (the block, origin r0, c0) and the owners'
 * rectangles of one matrix. */
typedef struct {
  double *store; /* the registered local rectangle of this matrix */
  double *buf;
  long r0, c0, cols;
  int to_owner; /* 1: hpput buf -> owners (store C); 0: hpget owners -> buf */
} s2d_transfer;

static void s2d_transfer_piece(const mm_state *st, const piece *pc, void *arg) {
  const s2d_transfer *tr = arg;
  double *local = tr->buf + (pc->r0 - tr->r0) * tr->cols + (pc->c0 - tr->c0);
  long remote = (pc->r0 - pc->owner_r0) * pc->owner_cols + (pc->c0 - pc->owner_c0); /* in doubles */
  if (pc->owner == st->pid) { /* our own rows: a local copy (packing, in the profile) */
    bspalg_packing_begin();
    for (long i = 0; i < pc->rows; i++) {
      double *mine = tr->store + remote + i * pc->owner_cols, *other = local + i * tr->cols;
      if (tr->to_owner) memcpy(mine, other, (size_t)pc->cols * sizeof(double));
      else memcpy(other, mine, (size_t)pc->cols * sizeof(double));
    }
    bspalg_packing_end();
    return;
  }
  /* whole rows on both sides are one contiguous piece: one request; else one per row */
  int whole = pc->cols == pc->owner_cols && pc->cols == tr->cols;
  long count = whole ? 1 : pc->rows, len = whole ? pc->rows * pc->cols : pc->cols;
  for (long i = 0; i < count; i++) {
    int offset = (int)((remote + i * pc->owner_cols) * (long)sizeof(double));
    int bytes = (int)(len * (long)sizeof(double));
    if (tr->to_owner) {
      bsp_hpput(pc->owner, local + i * tr->cols, tr->store, offset, bytes);
      bspalg_put(pc->owner, len);
    } else {
      bsp_hpget(pc->owner, tr->store, offset, local + i * tr->cols, bytes);
      bspalg_get(pc->owner, len);
    }
  }
}

/* Block (bi, bj) of A or B: in place when it lies in our rectangle, else gathered into buf. */
static const double *s2d_fetch(const mm_state *st, double *store, int bi, int bj, double *buf,
                               long *ld) {
  long r0 = (long)bi * st->s, c0 = (long)bj * st->s, rows = block_size(st, bi),
       cols = block_size(st, bj);
  if (s2d_is_mine(st, r0, c0, rows, cols)) {
    *ld = st->my_cols > 0 ? st->my_cols : 1;
    return store + (r0 - st->my_r0) * st->my_cols + (c0 - st->my_c0);
  }
  s2d_transfer tr = {store, buf, r0, c0, cols, 0};
  for_each_piece(st, r0, c0, rows, cols, s2d_transfer_piece, &tr);
  *ld = cols > 0 ? cols : 1;
  return buf;
}

/* ------------------------------------------------------- partial products to be added */

/* C[place] += data (rows x cols, contiguous), on this process. */
static void add_into_c(const mm_state *st, const rect_tag *place, const double *data) {
  double *dst;
  long ld;
  if (st->dist == DIST_BLOCKCYCLIC) {
    int I = (int)(place->row0 / st->s), K = (int)(place->col0 / st->s);
    ld = block_size(st, K);
    dst = st->C + bc_offset(st, I, K) + (place->row0 - (long)I * st->s) * ld +
          (place->col0 - (long)K * st->s);
  } else {
    ld = st->my_cols;
    dst = st->C + (place->row0 - st->my_r0) * ld + (place->col0 - st->my_c0);
  }
  for (long i = 0; i < place->rows; i++)
    for (long j = 0; j < place->cols; j++) dst[i * ld + j] += data[i * place->cols + j];
  bspalg_work((double)place->rows * (double)place->cols);
}

/* Adds the partial products that arrived with the last sync. */
static void add_received(const mm_state *st) {
  int messages = 0, bytes = 0;
  bsp_qsize(&messages, &bytes);
  for (int m = 0; m < messages; m++) {
    int status = 0;
    rect_tag place;
    bsp_get_tag(&status, &place);
    bsp_move(st->rbuf, status); /* a copy: the queue's payloads need not be 8-byte aligned */
    add_into_c(st, &place, st->rbuf);
  }
}

typedef struct {
  const double *v; /* the partial product, contiguous */
  long r0, c0, cols;
  double *pack;
} s2d_send;

static void s2d_send_piece(const mm_state *st, const piece *pc, void *arg) {
  const s2d_send *sd = arg;
  const double *from = sd->v + (pc->r0 - sd->r0) * sd->cols + (pc->c0 - sd->c0);
  rect_tag place = {(int)pc->r0, (int)pc->c0, (int)pc->rows, (int)pc->cols};
  if (pc->cols != sd->cols) { /* not whole rows of V: pack the piece */
    bspalg_packing_begin();
    for (long i = 0; i < pc->rows; i++)
      memcpy(sd->pack + i * pc->cols, from + i * sd->cols, (size_t)pc->cols * sizeof(double));
    bspalg_packing_end();
    from = sd->pack;
  }
  if (pc->owner == st->pid) {
    add_into_c(st, &place, from);
    return;
  }
  bsp_send(pc->owner, &place, from, (int)(pc->rows * pc->cols * (long)sizeof(double)));
  bspalg_put(pc->owner, pc->rows * pc->cols);
}

/* ------------------------------------------------------------- labels of supersteps */

typedef struct {
  int remote;
  int self;
} remote_probe;

static void note_remote(const mm_state *st, const piece *pc, void *arg) {
  (void)st;
  remote_probe *rp = arg;
  if (pc->owner != rp->self) rp->remote = 1;
}

static int s2d_has_remote(const mm_state *st, int x, long r0, long c0, long rows, long cols) {
  remote_probe rp = {0, x};
  for_each_piece(st, r0, c0, rows, cols, note_remote, &rp);
  return rp.remote;
}

/* Whether any process moves data to or from another in the input (output = 0) or output
 * phase of logical superstep t; the label of a superstep without communication is NULL. */
static int step_has_remote(const mm_state *st, int t, int output) {
  for (int x = 0; x < st->p; x++) {
    int I, J, K, stage;
    if (!cube_of(st, x, t, &I, &J, &K, &stage)) continue;
    int rem = stage < 0;
    long bi = block_size(st, I), bj = block_size(st, J), bk = block_size(st, K);
    long ri = (long)I * st->s, rj = (long)J * st->s, rk = (long)K * st->s;
    if (!output) {
      if (st->dist == DIST_BLOCKCYCLIC) {
        if ((bi * bj > 0 && bc_owner(st, I, J) != x) || (bj * bk > 0 && bc_owner(st, J, K) != x))
          return 1;
      } else if (s2d_has_remote(st, x, ri, rj, bi, bj) || s2d_has_remote(st, x, rj, rk, bj, bk)) {
        return 1;
      }
    } else if (rem) {
      if (bi * bj * bk == 0) continue;
      if (st->dist == DIST_BLOCKCYCLIC ? bc_owner(st, I, K) != x
                                       : s2d_has_remote(st, x, ri, rk, bi, bk))
        return 1;
    } else if (st->dist == DIST_STATIC2D && stage == st->Q - 1 &&
               s2d_has_remote(st, x, ri, rk, bi, bk)) {
      return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------- one logical step */

static long min_long(long a, long b) { return a < b ? a : b; }
static long max_long(long a, long b) { return a > b ? a : b; }

static void zero_rect(double *c, long ld, long rows, long cols) {
  for (long i = 0; i < rows; i++) memset(c + i * ld, 0, (size_t)cols * sizeof *c);
}

/* Zero the parts of our C that receive added partial products (the remainder columns). */
static void zero_remainder_columns(const mm_state *st) {
  for (int c = st->p * st->full_rounds; c < st->Q * st->Q; c++) {
    int I = c / st->Q, K = c % st->Q;
    long r0 = (long)I * st->s, c0 = (long)K * st->s, rows = block_size(st, I),
         cols = block_size(st, K);
    if (st->dist == DIST_BLOCKCYCLIC) {
      if (bc_owner(st, I, K) == st->pid) zero_rect(st->C + bc_offset(st, I, K), cols, rows, cols);
    } else {
      long a0 = max_long(r0, st->my_r0), a1 = min_long(r0 + rows, st->my_r0 + st->my_rows);
      long b0 = max_long(c0, st->my_c0), b1 = min_long(c0 + cols, st->my_c0 + st->my_cols);
      if (a1 > a0 && b1 > b0)
        zero_rect(st->C + (a0 - st->my_r0) * st->my_cols + (b0 - st->my_c0), st->my_cols, a1 - a0,
                  b1 - b0);
    }
  }
}

/* One repetition of the whole algorithm, from the logical superstep the progress names (0,
 * or the one after a restart's checkpoint). */
static void multiply(const mm_state *st) {
  const char *const *in_label = st->in_label, *const *out_label = st->out_label;
  for (int t = st->progress->t; t < st->steps; t++) {
    /* input phase: add what arrived, fetch A_IJ and B_JK */
    add_received(st);
    int I = 0, J = 0, K = 0, stage = 0;
    int have = cube_of(st, st->pid, t, &I, &J, &K, &stage);
    int rem = stage < 0;
    long bi = block_size(st, I), bj = block_size(st, J), bk = block_size(st, K);
    const double *a = NULL, *b = NULL;
    long lda = 1, ldb = 1;
    if (have) {
      if (st->dist == DIST_BLOCKCYCLIC) {
        a = bc_fetch(st, st->A, I, J, st->abuf, &lda);
        b = bc_fetch(st, st->B, J, K, st->bbuf, &ldb);
      } else {
        a = s2d_fetch(st, st->A, I, J, st->abuf, &lda);
        b = s2d_fetch(st, st->B, J, K, st->bbuf, &ldb);
      }
    }
    bspalg_sync(in_label[2 * t], in_label[2 * t + 1]);

    /* output phase: the local product, then where it belongs */
    if (have) {
      long r0 = (long)I * st->s, c0 = (long)K * st->s;
      double flops = 2.0 * (double)bi * (double)bj * (double)bk;
      if (st->dist == DIST_BLOCKCYCLIC) {
        double *c = st->C + bc_offset(st, I, K);
        long ldc = bk > 0 ? bk : 1;
        if (!rem) { /* our own column: accumulate in place */
          mm_dgemm(bi, bk, bj, a, lda, b, ldb, stage == 0 ? 0.0 : 1.0, c, ldc);
          bspalg_work(flops);
        } else if (bi * bj * bk > 0) {
          int owner = bc_owner(st, I, K);
          if (owner == st->pid) {
            mm_dgemm(bi, bk, bj, a, lda, b, ldb, 1.0, c, ldc);
          } else {
            mm_dgemm(bi, bk, bj, a, lda, b, ldb, 0.0, st->vbuf, ldc);
            rect_tag place = {(int)r0, (int)c0, (int)bi, (int)bk};
            bsp_send(owner, &place, st->vbuf, (int)(bi * bk * (long)sizeof(double)));
            bspalg_put(owner, bi * bk);
          }
          bspalg_work(flops);
        }
      } else {
        int mine = s2d_is_mine(st, r0, c0, bi, bk);
        double *in_place = st->C + (r0 - st->my_r0) * st->my_cols + (c0 - st->my_c0);
        long ld_in_place = st->my_cols > 0 ? st->my_cols : 1, ldv = bk > 0 ? bk : 1;
        if (!rem) {
          if (mine) {
            mm_dgemm(bi, bk, bj, a, lda, b, ldb, stage == 0 ? 0.0 : 1.0, in_place, ld_in_place);
          } else {
            mm_dgemm(bi, bk, bj, a, lda, b, ldb, stage == 0 ? 0.0 : 1.0, st->cbuf, ldv);
          }
          bspalg_work(flops);
          if (!mine && stage == st->Q - 1) { /* the column is complete: store it at its owners */
            s2d_transfer tr = {st->C, st->cbuf, r0, c0, bk, 1};
            for_each_piece(st, r0, c0, bi, bk, s2d_transfer_piece, &tr);
          }
        } else if (bi * bj * bk > 0) {
          if (mine) {
            mm_dgemm(bi, bk, bj, a, lda, b, ldb, 1.0, in_place, ld_in_place);
          } else {
            mm_dgemm(bi, bk, bj, a, lda, b, ldb, 0.0, st->vbuf, ldv);
            s2d_send sd = {st->vbuf, r0, c0, bk, st->rbuf};
            for_each_piece(st, r0, c0, bi, bk, s2d_send_piece, &sd);
          }
          bspalg_work(flops);
        }
      }
    }
    st->progress->t = t + 1;
    bspalg_checkpoint_sync(out_label[2 * t], out_label[2 * t + 1]);
  }
  /* only when every step had remainder cubes (Q^2 < p): their last sums arrived with the
   * final sync and are added in a closing superstep */
  if (st->full_rounds == 0) {
    add_received(st);
    bspalg_sync(NULL, NULL);
  }
}

/* --------------------------------------------------------------------------- driver */

static void *setup(const bspalg_common_opts *opts) {
  mm_state *st = bspalg_alloc(sizeof *st, "for the state");
  *st = (mm_state){.p = bsp_nprocs(),
                   .pid = bsp_pid(),
                   .seed = opts->seed,
                   .n = opt_size,
                   .Q = mm_cube_root(opt_q),
                   .dist = opt_dist};
  st->s = (st->n + st->Q - 1) / st->Q;
  int columns = st->Q * st->Q;
  st->full_rounds = columns / st->p;
  st->rem_columns = columns % st->p;
  st->rem_steps = (int)(((long)st->rem_columns * st->Q + st->p - 1) / st->p);
  st->steps = st->rem_steps + st->Q * st->full_rounds;
  mm_grid(st->p, &st->Pr, &st->Pc);
  st->my_pr = st->pid / st->Pc;
  st->my_pc = st->pid % st->Pc;
  st->my_r0 = mm_part_start(st->n, st->Pr, st->my_pr);
  st->my_rows = mm_part_size(st->n, st->Pr, st->my_pr);
  st->my_c0 = mm_part_start(st->n, st->Pc, st->my_pc);
  st->my_cols = mm_part_size(st->n, st->Pc, st->my_pc);
  const long block = st->s * st->s;

  /* storage, and the BSPlib limit of INT_MAX bytes per registration */
  long local;
  if (st->dist == DIST_BLOCKCYCLIC) {
    st->slots = (columns + st->p - 1) / st->p;
    local = st->slots * block;
  } else {
    /* room for the largest rectangle on every process, so that all registrations are alike */
    local = ((st->n + st->Pr - 1) / st->Pr) * ((st->n + st->Pc - 1) / st->Pc);
  }
  if (!mm_fits_registration(prog, (double)(local > block ? local : block), " or a larger --q"))
    return NULL;
  st->A = mm_alloc_doubles(local, "A");
  st->B = mm_alloc_doubles(local, "B");
  st->C = mm_alloc_doubles(local, "C");
  st->abuf = mm_alloc_doubles(block, "a block of A");
  st->bbuf = mm_alloc_doubles(block, "a block of B");
  if (st->dist == DIST_STATIC2D) st->cbuf = mm_alloc_doubles(block, "a block of C");
  if (st->rem_columns > 0) {
    st->vbuf = mm_alloc_doubles(block, "a partial product");
    st->rbuf = mm_alloc_doubles(block, "received partial products");
  }
  if (st->dist == DIST_BLOCKCYCLIC) {
    for (int idx = st->pid; idx < columns; idx += st->p) {
      int bi = idx / st->Q, bj = idx % st->Q;
      long rows = block_size(st, bi), cols = block_size(st, bj);
      mm_fill_input(st->seed, MM_A, st->n, bi * st->s, bj * st->s, rows, cols,
                    st->A + bc_offset(st, bi, bj), cols);
      mm_fill_input(st->seed, MM_B, st->n, bi * st->s, bj * st->s, rows, cols,
                    st->B + bc_offset(st, bi, bj), cols);
    }
  } else {
    mm_fill_input(st->seed, MM_A, st->n, st->my_r0, st->my_c0, st->my_rows, st->my_cols, st->A,
                  st->my_cols);
    mm_fill_input(st->seed, MM_B, st->n, st->my_r0, st->my_c0, st->my_rows, st->my_cols, st->B,
                  st->my_cols);
  }
  mm_register_doubles(st->A, local);
  mm_register_doubles(st->B, local);
  mm_register_doubles(st->C, local);
  int tag_bytes = (int)sizeof(rect_tag);
  bsp_set_tagsize(&tag_bytes);
  /* A checkpoint after every logical superstep: C, the column's sum kept for its owners
   * (static2d), and A and B, registered; the partial products sent at its sync are in the
   * checkpoint's messages. */
  st->progress = bspalg_alloc(sizeof *st->progress, "for the state");
  bspalg_checkpoint_protect(st->progress, sizeof *st->progress);
  mm_protect_doubles(st->A, local);
  mm_protect_doubles(st->B, local);
  mm_protect_doubles(st->C, local);
  if (st->dist == DIST_STATIC2D) mm_protect_doubles(st->cbuf, block);

  /* the supersteps' labels, the same on every process */
  st->in_label =
      bspalg_alloc((size_t)(2 * st->steps + 2) * sizeof *st->in_label, "for the superstep labels");
  st->out_label =
      bspalg_alloc((size_t)(2 * st->steps + 2) * sizeof *st->out_label, "for the superstep labels");
  for (int t = 0; t < st->steps; t++) {
    if (step_has_remote(st, t, 0)) {
      st->in_label[2 * t] = "hpget";
      st->in_label[2 * t + 1] = "alltoall";
    }
    if (step_has_remote(st, t, 1)) {
      st->out_label[2 * t] = t < st->rem_steps ? "send" : "hpput";
      st->out_label[2 * t + 1] = "alltoall";
    }
  }
  return st;
}

static void prepare(void *state) {
  mm_state *st = state;
  zero_remainder_columns(st);
  st->progress->t = 0;
}

static void repetition(void *state) { multiply(state); }

/* This process' part of C: its blocks (blockcyclic) or its rectangle (static2d). */
static void result(void *state, const void **bytes, size_t *nbytes) {
  const mm_state *st = state;
  *bytes = st->C;
  *nbytes = (size_t)(st->dist == DIST_BLOCKCYCLIC ? st->slots * st->s * st->s
                                                  : st->my_rows * st->my_cols) *
            sizeof(double);
}

static const char *algorithm_of(void) {
  return opt_dist == DIST_BLOCKCYCLIC ? "matmul-blockcyclic" : "matmul-static2d";
}

/* Every process checks its part of C. */
static int check(void *state, bspalg_check_report *report) {
  const mm_state *st = state;
  double err = 0.0;
  if (st->dist == DIST_BLOCKCYCLIC) {
    for (int idx = st->pid; idx < st->Q * st->Q; idx += st->p) {
      int I = idx / st->Q, K = idx % st->Q;
      long rows = block_size(st, I), cols = block_size(st, K);
      err = fmax(err, mm_rect_error(st->seed, st->n, I * st->s, K * st->s, rows, cols,
                                    st->C + bc_offset(st, I, K), cols));
    }
  } else {
    err = mm_rect_error(st->seed, st->n, st->my_r0, st->my_c0, st->my_rows, st->my_cols, st->C,
                        st->my_cols);
  }
  return mm_check_collective(prog, algorithm_of(), st->n, err, report);
}

static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  const mm_state *st = state;
  double f = mm_measure_f(st->s, st->s, st->s);
  if (!every_process && f > 0)
    snprintf(note, note_size,
             "cblas_dgemm (1 thread) of s x s by s x s, s = %ld, median: on process 0 alone, and "
             "on every "
             "process at once (f_all)",
             st->s);
  return f;
}

static void params(void *state, char *json, size_t json_size) {
  const mm_state *st = state;
  if (st->dist == DIST_BLOCKCYCLIC)
    snprintf(json, json_size, "{\"n\": %ld, \"q\": %ld, \"s\": %ld, \"dist\": \"%s\"}", st->n,
             opt_q, st->s, dist_names[st->dist]);
  else
    snprintf(json, json_size,
             "{\"n\": %ld, \"q\": %ld, \"s\": %ld, \"dist\": \"%s\", \"grid_rows\": %d, "
             "\"grid_cols\": %d}",
             st->n, opt_q, st->s, dist_names[st->dist], st->Pr, st->Pc);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm_of = algorithm_of, .work_unit = "flop", .help = help, .option = option,
    .before_init = mm_blas_single_threaded, .setup = setup, .prepare = prepare, .repetition = repetition,
    .check = check, .measure_f = measure_f, .params = params, .result = result};
// clang-format on

BSPALG_MAIN(driver)
