/*
 * bspalg-cannon - Cannon-style matrix multiplication C = A B (n x n) of Gerbessiotis & Lee
 * (the Mult suite: MatMul with put, Fig. 7, MatMulG with get, Fig. 8, and MatMul with send, the
 * "Send" column of their Table 1), generalized to any number of processes.
 *
 * Distribution. The processes form a Pr x Pc grid (mm_grid: the factorization of p closest to
 * square, so Pr = Pc = sqrt(p) when p is a square, 1 x p when p is prime); process
 * (i, j) = (pid / Pc, pid % Pc). Rows of A and C are split into Pr parts, columns of B and C
 * into Pc parts, and the inner dimension into L = lcm(Pr, Pc) parts (for square p, L = sqrt(p)
 * and every block is N x N, N = n / sqrt(p), as in the paper). All splits are as even as
 * possible (sizes differ by at most one), so n need not be divisible by anything. Process
 * (i, j) computes C_ij and holds the blocks A_ik with k = j (mod Pc) and B_kj with k = i
 * (mod Pr), L/Pc + L/Pr blocks, each stored contiguously (one request moves one block).
 *
 * Rounds. In round l = 0 .. L-1 process (i, j) multiplies A_ik B_kj, k = (i + j + l) mod L
 * (MatMulG's skew, Fig. 8; MatMul's (l - i - j) mod L visits the same k in another order, and
 * using one skew for both variants makes them move exactly the same data). The Pc processes
 * of a grid row need Pc consecutive k in a round, one of each residue mod Pc, so every owner
 * sends exactly one A block per round (and likewise one B block). A block the process holds
 * itself is used in place; the others arrive in one of two buffers:
 *   put (MatMul):  the owner bsp_hpputs its block into the user's buffer;
 *   get (MatMulG): the user bsp_hpgets the block from its owner;
 *   send (MatMul, two-sided): the owner bsp_sends its block, tagged A or B (Fig. 7, lines 5-6
 *                  "put/send": seed 002_ed6c85674bf8f665.txt, lines 151 and 181-182), and the
 *                  user bsp_moves it from its queue into the buffer in the next superstep
 *                  (Fig. 7, line 7, "Receive"), before multiplying it: bulk-synchronous
 *                  message passing, BSPlib's two-sided communication (G & L's is MPI_Send +
 *                  MPI_Recv under LAM MPI, seed line 158; Table 1's "Send" column, line 218).
 * The "pipelining" of the paper: round l's blocks travel in superstep l while round l - 1 is
 * multiplied; two buffers (rounds alternate) keep a high-performance transfer from landing in
 * the blocks being multiplied (send needs them only to keep one layout for all variants: its
 * blocks wait in the queue until moved). cblas_dgemm on row-major blocks replaces the paper's
 * transpose (line 8) and loop (line 9).
 *
 * Local kernels (--kernel), for Kang et al.'s sec. 6, where the memory hierarchy decides:
 *   blas        cblas_dgemm (the default);
 *   naive       the straightforward triple loop, C_ij = sum_k A_ik B_kj with k innermost: A is
 *               read along a row, B down a column (stride: the block's row length), so most
 *               reads of B miss the cache (the paper's "straightforward implementation");
 *   transposed  the paper's memory-hierarchy-optimized version: B's block is first transposed
 *               into a scratch block, then both operands are read along rows.
 *
 *   superstep 0:           transfers of round 0
 *   superstep l (1..L-1):  C_ij += A_ik B_kj of round l - 1; transfers of round l
 *   superstep L:           C_ij += ... of round L - 1 (no communication)
 *
 * Cost, with Pr, Pc and L dividing n (the driver counts every case exactly):
 *   W = L * 2 (n/Pr)(n/L)(n/Pc) = 2 n^3 / p flops
 *   S = L + 1
 *   H = sum over rounds of h_l, h_l = n^2/(Pr L) [A block moves] + n^2/(L Pc) [B block moves]:
 *     p = 1:                  H = 0
 *     p = P^2 square, P >= 2: H = 2 n^2 / sqrt(p)   (2 N^2 per round, as in the paper's
 *                                                     2 (n^2/p) sqrt(p) g)
 *     Pr = 1 (p prime):       H = (p - 1) n^2 / p   (B never moves; round 0 is all local)
 *     in general              H <= n^2/Pr + n^2/Pc
 */
#include <bsp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "matmul_common.h"

typedef enum { VARIANT_PUT, VARIANT_GET, VARIANT_SEND } variant_kind;
static const char *const variant_names[] = {"put", "get", "send"}; /* in variant_kind order */
/* The primitive of each variant in the supersteps' labels, in variant_kind order. */
static const char *const variant_primitives[] = {"hpput", "hpget", "send"};
/* The tag of a block sent (send): which of the two it is. */
enum { TAG_A_BLOCK, TAG_B_BLOCK };
typedef enum { KERNEL_BLAS, KERNEL_NAIVE, KERNEL_TRANSPOSED } kernel_kind;
static const char *const kernel_names[] = {"blas", "naive",
                                           "transposed"}; /* in kernel_kind order */

static const char prog[] = "bspalg-cannon";
static long opt_size = 1000;
static variant_kind opt_variant = VARIANT_PUT;
static kernel_kind opt_kernel = KERNEL_BLAS;

/* --help: what it does and its own options */
static const char help[] =
    "Cannon-style matrix multiplication C = A B of random n x n matrices (Gerbessiotis & Lee:\n"
    "MatMul with put or send, MatMulG with get) on the process grid closest to square\n"
    "(sqrt(p) x sqrt(p) when p is a square; p prime gives 1 x p).\n"
    "  --size N          matrix size n (default 1000)\n"
    "  --variant V       put (MatMul, bsp_hpput, default), get (MatMulG, bsp_hpget) or send\n"
    "                    (MatMul with bsp_send, the blocks moved from the queue next superstep)\n"
    "  --kernel K        the local product: blas (cblas_dgemm, default), naive (the triple\n"
    "                    loop reading B down its columns) or transposed (B's block transposed\n"
    "                    first, then rows times rows): Kang et al. sec. 6\n";

static int option(const char *arg, const char *value) {
  if (!value) return 0;
  if (!strcmp(arg, "--size")) opt_size = bspalg_parse_long(prog, "--size", value, 1, 1000000);
  else if (!strcmp(arg, "--variant"))
    opt_variant = (variant_kind)bspalg_parse_choice(prog, "--variant", value, variant_names, 3);
  else if (!strcmp(arg, "--kernel"))
    opt_kernel = (kernel_kind)bspalg_parse_choice(prog, "--kernel", value, kernel_names, 3);
  else return 0;
  return 2;
}

/* Where a repetition stands (protected: every superstep ends with a checkpoint). */
typedef struct {
  int l; /* the next superstep */
} cannon_progress;

typedef struct {
  int p, pid;
  unsigned long seed;
  long n;
  int Pr, Pc, L; /* grid and number of rounds */
  int i, j;      /* this process' place in the grid */
  variant_kind variant;
  kernel_kind kernel;
  double *bt;          /* --kernel transposed: B's block transposed (b_slot doubles) */
  long a_slot, b_slot; /* doubles per stored block of A and of B (the largest block) */
  double *A, *B, *C;   /* the blocks held, and C_ij */
  double *abuf, *bbuf; /* two receive buffers each (rounds alternate) */
  cannon_progress *progress;
} cannon_state;

static long rows_of(const cannon_state *st, int i) { return mm_part_size(st->n, st->Pr, i); }
static long cols_of(const cannon_state *st, int j) { return mm_part_size(st->n, st->Pc, j); }
static long inner_of(const cannon_state *st, int k) { return mm_part_size(st->n, st->L, k); }
static int round_k(const cannon_state *st, int i, int j, int l) { return (i + j + l) % st->L; }
static int pid_of(const cannon_state *st, int i, int j) { return i * st->Pc + j; }

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* Whether any block moves between processes in round l (else the superstep's label is NULL). */
static int round_has_remote(const cannon_state *st, int l) {
  for (int i = 0; i < st->Pr; i++)
    for (int j = 0; j < st->Pc; j++) {
      int k = round_k(st, i, j, l);
      if (inner_of(st, k) == 0) continue;
      if ((k % st->Pc != j && rows_of(st, i) > 0) || (k % st->Pr != i && cols_of(st, j) > 0))
        return 1;
    }
  return 0;
}

/* Issue round l's transfers; the buffers of round l are abuf/bbuf + (l % 2) slots. */
static void transfer_round(const cannon_state *st, int l) {
  long a_off = (long)(l % 2) * st->a_slot, b_off = (long)(l % 2) * st->b_slot;
  if (st->variant == VARIANT_GET) {
    int k = round_k(st, st->i, st->j, l);
    long m = rows_of(st, st->i), w = inner_of(st, k), c = cols_of(st, st->j);
    int a_owner = pid_of(st, st->i, k % st->Pc), b_owner = pid_of(st, k % st->Pr, st->j);
    if (a_owner != st->pid && m * w > 0) {
      bsp_hpget(a_owner, st->A, (int)((long)(k / st->Pc) * st->a_slot * (long)sizeof(double)),
                st->abuf + a_off, (int)(m * w * (long)sizeof(double)));
      bspalg_get(a_owner, m * w);
    }
    if (b_owner != st->pid && w * c > 0) {
      bsp_hpget(b_owner, st->B, (int)((long)(k / st->Pr) * st->b_slot * (long)sizeof(double)),
                st->bbuf + b_off, (int)(w * c * (long)sizeof(double)));
      bspalg_get(b_owner, w * c);
    }
    return;
  }
  /* put and send: send our A_ik to the process of this grid row that needs it in round l,
   * B_kj to the one of this grid column (one message a block) */
  for (int j2 = 0; j2 < st->Pc; j2++) {
    int k = round_k(st, st->i, j2, l);
    long bytes = rows_of(st, st->i) * inner_of(st, k) * (long)sizeof(double);
    if (k % st->Pc != st->j || j2 == st->j || bytes == 0) continue;
    int dest = pid_of(st, st->i, j2);
    const double *block = st->A + (long)(k / st->Pc) * st->a_slot;
    if (st->variant == VARIANT_SEND) {
      int tag = TAG_A_BLOCK;
      bsp_send(dest, &tag, block, (int)bytes);
    } else {
      bsp_hpput(dest, block, st->abuf, (int)(a_off * (long)sizeof(double)), (int)bytes);
    }
    bspalg_put(dest, bytes / (long)sizeof(double));
  }
  for (int i2 = 0; i2 < st->Pr; i2++) {
    int k = round_k(st, i2, st->j, l);
    long bytes = inner_of(st, k) * cols_of(st, st->j) * (long)sizeof(double);
    if (k % st->Pr != st->i || i2 == st->i || bytes == 0) continue;
    int dest = pid_of(st, i2, st->j);
    const double *block = st->B + (long)(k / st->Pr) * st->b_slot;
    if (st->variant == VARIANT_SEND) {
      int tag = TAG_B_BLOCK;
      bsp_send(dest, &tag, block, (int)bytes);
    } else {
      bsp_hpput(dest, block, st->bbuf, (int)(b_off * (long)sizeof(double)), (int)bytes);
    }
    bspalg_put(dest, bytes / (long)sizeof(double));
  }
}

/* send: move round l's blocks, sent in superstep l, from the queue into round l's buffers
 * (at most one A and one B block arrive a round). */
static void receive_round(const cannon_state *st, int l) {
  int messages = 0, queued_bytes = 0;
  bsp_qsize(&messages, &queued_bytes);
  for (int m = 0; m < messages; m++) {
    int bytes = 0, tag = -1;
    bsp_get_tag(&bytes, &tag);
    int is_a = tag == TAG_A_BLOCK;
    long slot = is_a ? st->a_slot : st->b_slot;
    if ((!is_a && tag != TAG_B_BLOCK) || bytes < 0 || bytes > slot * (long)sizeof(double))
      bsp_abort("%s: process %d: a message of %d bytes with tag %d in round %d\n", prog, st->pid,
                bytes, tag, l);
    bsp_move((is_a ? st->abuf : st->bbuf) + (long)(l % 2) * slot, bytes);
  }
}

/* C (+)= A B for row-major m x w by w x c blocks, with the kernel chosen (see the top). */
static void local_product(kernel_kind kernel, long m, long c, long w, const double *a,
                          const double *b, double beta, double *C, double *bt) {
  if (kernel == KERNEL_BLAS) {
    mm_dgemm(m, c, w, a, w > 0 ? w : 1, b, c > 0 ? c : 1, beta, C, c > 0 ? c : 1);
    return;
  }
  if (kernel == KERNEL_TRANSPOSED) {
    for (long k = 0; k < w; k++)
      for (long j = 0; j < c; j++) bt[j * w + k] = b[k * c + j];
  }
  for (long i = 0; i < m; i++) {
    const double *arow = a + i * w;
    for (long j = 0; j < c; j++) {
      double sum = beta == 0.0 ? 0.0 : C[i * c + j];
      if (kernel == KERNEL_NAIVE) {
        for (long k = 0; k < w; k++) sum += arow[k] * b[k * c + j];
      } else {
        const double *brow = bt + j * w;
        for (long k = 0; k < w; k++) sum += arow[k] * brow[k];
      }
      C[i * c + j] = sum;
    }
  }
}

/* C_ij (+)= A_ik B_kj of round l: blocks we hold are used in place. */
static void multiply_round(const cannon_state *st, int l) {
  int k = round_k(st, st->i, st->j, l);
  long m = rows_of(st, st->i), w = inner_of(st, k), c = cols_of(st, st->j);
  const double *a = k % st->Pc == st->j ? st->A + (long)(k / st->Pc) * st->a_slot
                                        : st->abuf + (long)(l % 2) * st->a_slot;
  const double *b = k % st->Pr == st->i ? st->B + (long)(k / st->Pr) * st->b_slot
                                        : st->bbuf + (long)(l % 2) * st->b_slot;
  local_product(st->kernel, m, c, w, a, b, l == 0 ? 0.0 : 1.0, st->C, st->bt);
  bspalg_work(2.0 * (double)m * (double)w * (double)c);
}

static void *setup(const bspalg_common_opts *opts) {
  cannon_state *st = bspalg_alloc(sizeof *st, "for the state");
  *st = (cannon_state){.p = bsp_nprocs(),
                       .pid = bsp_pid(),
                       .seed = opts->seed,
                       .n = opt_size,
                       .variant = opt_variant,
                       .kernel = opt_kernel};
  mm_grid(st->p, &st->Pr, &st->Pc);
  st->L = st->Pr / gcd(st->Pr, st->Pc) * st->Pc;
  st->i = st->pid / st->Pc;
  st->j = st->pid % st->Pc;
  long max_rows = (st->n + st->Pr - 1) / st->Pr, max_cols = (st->n + st->Pc - 1) / st->Pc;
  long max_inner = (st->n + st->L - 1) / st->L;
  st->a_slot = max_rows * max_inner;
  st->b_slot = max_inner * max_cols;
  long a_blocks = st->L / st->Pc, b_blocks = st->L / st->Pr;
  double biggest = fmax(fmax((double)a_blocks * st->a_slot, (double)b_blocks * st->b_slot),
                        fmax(2.0 * st->a_slot, 2.0 * st->b_slot));
  if (!mm_fits_registration(prog, biggest, "")) return NULL;
  st->A = mm_alloc_doubles(a_blocks * st->a_slot, "A");
  st->B = mm_alloc_doubles(b_blocks * st->b_slot, "B");
  st->C = mm_alloc_doubles(max_rows * max_cols, "C");
  if (st->kernel == KERNEL_TRANSPOSED) st->bt = mm_alloc_doubles(st->b_slot, "B transposed");
  st->abuf = mm_alloc_doubles(2 * st->a_slot, "the buffers for A");
  st->bbuf = mm_alloc_doubles(2 * st->b_slot, "the buffers for B");
  long my_rows = rows_of(st, st->i), my_cols = cols_of(st, st->j);
  long row0 = mm_part_start(st->n, st->Pr, st->i), col0 = mm_part_start(st->n, st->Pc, st->j);
  for (long t = 0; t < a_blocks; t++) { /* A_ik, k = j + t Pc: rows of part i, columns of part k */
    int k = st->j + (int)t * st->Pc;
    long w = inner_of(st, k);
    mm_fill_input(st->seed, MM_A, st->n, row0, mm_part_start(st->n, st->L, k), my_rows, w,
                  st->A + t * st->a_slot, w);
  }
  for (long t = 0; t < b_blocks; t++) { /* B_kj, k = i + t Pr */
    int k = st->i + (int)t * st->Pr;
    mm_fill_input(st->seed, MM_B, st->n, mm_part_start(st->n, st->L, k), col0, inner_of(st, k),
                  my_cols, st->B + t * st->b_slot, my_cols);
  }
  mm_register_doubles(st->A, a_blocks * st->a_slot);
  mm_register_doubles(st->B, b_blocks * st->b_slot);
  mm_register_doubles(st->abuf, 2 * st->a_slot);
  mm_register_doubles(st->bbuf, 2 * st->b_slot);
  if (st->variant == VARIANT_SEND) { /* from the skeleton's sync after setup on */
    int tag_bytes = (int)sizeof(int);
    bsp_set_tagsize(&tag_bytes);
  }
  /* A checkpoint after every superstep: C, and the blocks that arrived for the next round in
   * the (registered) buffers or, with send, in the checkpoint's messages; A and B are
   * registered too. */
  st->progress = bspalg_alloc(sizeof *st->progress, "for the state");
  bspalg_checkpoint_protect(st->progress, sizeof *st->progress);
  mm_protect_doubles(st->A, a_blocks * st->a_slot);
  mm_protect_doubles(st->B, b_blocks * st->b_slot);
  mm_protect_doubles(st->C, max_rows * max_cols);
  mm_protect_doubles(st->abuf, 2 * st->a_slot);
  mm_protect_doubles(st->bbuf, 2 * st->b_slot);
  return st;
}

static void prepare(void *state) {
  cannon_state *st = state;
  st->progress->l = 0;
}

/* Superstep l moves round l's blocks while round l - 1 is multiplied (send: after moving round
 * l - 1's blocks out of the queue); from the superstep the progress names (0, or the one after
 * a restart's checkpoint). */
static void repetition(void *state) {
  const cannon_state *st = state;
  const char *primitive = variant_primitives[st->variant];
  for (int l = st->progress->l; l <= st->L; l++) {
    if (l > 0 && st->variant == VARIANT_SEND) receive_round(st, l - 1);
    if (l > 0) multiply_round(st, l - 1);
    int moves = l < st->L && round_has_remote(st, l);
    if (l < st->L) transfer_round(st, l);
    st->progress->l = l + 1;
    bspalg_checkpoint_sync(moves ? primitive : NULL, moves ? "permutation" : NULL);
  }
}

/* C_ij. */
static void result(void *state, const void **bytes, size_t *nbytes) {
  const cannon_state *st = state;
  *bytes = st->C;
  *nbytes = (size_t)(rows_of(st, st->i) * cols_of(st, st->j)) * sizeof(double);
}

static const char *algorithm_of(void) {
  static const char *const names[] = {"cannon-put", "cannon-get",
                                      "cannon-send"}; /* in variant_kind order */
  return names[opt_variant];
}

static int check(void *state, bspalg_check_report *report) {
  const cannon_state *st = state;
  long my_rows = rows_of(st, st->i), my_cols = cols_of(st, st->j);
  long row0 = mm_part_start(st->n, st->Pr, st->i), col0 = mm_part_start(st->n, st->Pc, st->j);
  double err = mm_rect_error(st->seed, st->n, row0, col0, my_rows, my_cols, st->C,
                             my_cols > 0 ? my_cols : 1);
  return mm_check_collective(prog, algorithm_of(), st->n, err, report);
}

/* --measure-f replays the local product of the kernel chosen (one kernel per run). */
static void naive_product(long m, long n, long k, const double *a, const double *b, double *c,
                          double *scratch) {
  local_product(KERNEL_NAIVE, m, n, k, a, b, 1.0, c, scratch);
}
static void transposed_product(long m, long n, long k, const double *a, const double *b, double *c,
                               double *scratch) {
  local_product(KERNEL_TRANSPOSED, m, n, k, a, b, 1.0, c, scratch);
}

static double kernel_f(kernel_kind kernel, long m, long c, long w) {
  if (kernel == KERNEL_NAIVE) return mm_measure_f_of(m, c, w, naive_product);
  if (kernel == KERNEL_TRANSPOSED) return mm_measure_f_of(m, c, w, transposed_product);
  return mm_measure_f(m, c, w);
}

/* Process 0 alone: its block of round 0; every process at once: a block of its own size. */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  const cannon_state *st = state;
  if (every_process)
    return kernel_f(st->kernel, rows_of(st, st->pid), cols_of(st, st->pid), inner_of(st, st->pid));
  long m = rows_of(st, 0), w = inner_of(st, 0), c = cols_of(st, 0);
  double f = kernel_f(st->kernel, m, c, w);
  if (f > 0)
    snprintf(note, note_size,
             "the %s local product (1 thread) of %ld x %ld by %ld x %ld (process 0's block of a "
             "round), median: on process 0 alone, and every process its own block at once (f_all)",
             kernel_names[st->kernel], m, w, w, c);
  return f;
}

static void params(void *state, char *json, size_t json_size) {
  const cannon_state *st = state;
  snprintf(
      json, json_size,
      "{\"n\": %ld, \"variant\": \"%s\", \"kernel\": \"%s\", \"grid_rows\": %d, \"grid_cols\": "
      "%d, \"rounds\": %d}",
      st->n, variant_names[st->variant], kernel_names[st->kernel], st->Pr, st->Pc, st->L);
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm_of = algorithm_of, .work_unit = "flop", .help = help, .option = option,
    .before_init = mm_blas_single_threaded, .setup = setup, .prepare = prepare,
    .repetition = repetition, .check = check, .measure_f = measure_f, .params = params,
    .result = result};
// clang-format on

BSPALG_MAIN(driver)
