/*
 * mpi_microbench.c - BSPlib on the MPI back ends against the same data movement done with
 * raw MPI calls, in one run (bsprun -b mpi or -b mpi-rma -n P bsp_mpi_microbench).
 *
 * The library initializes MPI (bsp_init); this program shares its libmpi and calls MPI on
 * MPI_COMM_WORLD for the raw counterparts, between supersteps, when the library has no
 * communication in flight. Benchmarks (B = 8 MiB, W = --words one-word messages):
 *
 *   sync        empty bsp_sync                    vs MPI_Alltoall of one int
 *   put_8MiB    bsp_put of B to every other process, bsp_sync
 *                                                 vs MPI_Alltoallv of the same bytes
 *   hpput_8MiB  the same with bsp_hpput           vs the same MPI_Alltoallv
 *   put_word    W bsp_puts of 8 bytes to pseudo-random processes, bsp_sync
 *                                                 vs group by destination (counting sort),
 *                                                    MPI_Alltoall of the counts,
 *                                                    MPI_Alltoallv of the words
 *   send_word   W bsp_sends of 8 bytes (tag size 0) to the same processes, bsp_sync, the
 *               receiver drains its queue with bsp_get_tag + bsp_move
 *                                                 vs as put_word, then the receiver reads
 *                                                    the words it got
 *   texch_put   Gerbessiotis & Lee's total exchange (the As suite, microbench_common.h): h
 *               32-bit integers from every process (--ints), h/p to each process, itself
 *               included, one bsp_put a pair, bsp_sync (their BSPlib version)
 *                                                 vs the same by MPI_Put into a window
 *                                                    closed by MPI_Win_fence (their LAM MPI
 *                                                    put: LIOPUT/LIOSYNC, Fig. 4)
 *   texch_send  the same bsp_put exchange         vs MPI_Irecv from every process, then
 *                                                    MPI_Send to every process, MPI_Waitall
 *                                                    (their LAM MPI send, the best of the
 *                                                    two-sided combinations they timed)
 *   Both are timed per integer of h: G & L's t / h (seed 002_ed6c85674bf8f665.txt, line 133).
 *   Together the rows give the three columns of their Fig. 6: BSPlib put (ours), MPI put and
 *   MPI send (raw).
 *
 * Both versions deliver the same bytes to the same places, and both are checked once
 * before timing. Then ours and raw alternate, round after round (ours first in even
 * rounds). A round's sample is the maximum over processes of each process's batch time
 * (CLOCK_MONOTONIC, after aligning the processes with bsp_sync or MPI_Barrier), taken with
 * MPI_Allreduce outside the timed region, divided by the operations (or messages) in it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bsp.h"
#include "bspkit.h"
#include "bspk_clock.h"
#include "microbench_common.h"

#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

#define BLOCK ((size_t)8 << 20) /* bytes per pair in the h-relation */
#define MAX_COUNT 10000000L
#define SEED UINT64_C(0x5eed2024)

/* ---- options: parsed in main before bsp_init, so every MPI rank has them ------------- */

static const char *prog = "bsp_mpi_microbench";
static int is_bench(const char *s, size_t len);
static mb_options opts = {.prog = "bsp_mpi_microbench",
                          .words = 10000,
                          .max_words = 1000000,
                          .ints = MB_DEFAULT_EXCHANGE_INTS,
                          .only_hint = "",
                          .only_size = 512,
                          .is_benchmark = is_bench};
static char load_start[128], load_end[128];
static int exit_status;

/* ---- per-process state ----------------------------------------------------------------- */

typedef struct {
  int pid, p;
  long W;
  unsigned char *bsrc, *barea; /* p * BLOCK: segment q of bsrc goes to q's barea segment pid */
  int *bcnt, *bdsp;            /* Alltoallv counts/displacements (the same both ways) */
  uint64_t *wsrc;              /* W words to send */
  int *dest, *woff;            /* W: destination, byte offset there (pid*W + rank) * 8 */
  uint64_t *warea;             /* p * W words, registered: words from s land at s*W.. */
  uint64_t *sbuf;              /* W: raw send buffer grouped by destination */
  int *scnt, *sdsp, *rcnt, *rdsp, *fill; /* p each */
  uint64_t *expect;                      /* what this process should receive, in delivery order */
  long *expect_from;                     /* p: how many words from each source */
  long nexpect;
  uint64_t *seen; /* send_word check: the drained payloads */
  long nseen;
  int bad_status;
  volatile uint64_t sink;
  mb_exchange xch;     /* the total exchange's layout (--ints) */
  uint32_t *xsrc;      /* h integers to send, by destination */
  uint32_t *xarea;     /* h integers received by bsp_put (registered) */
  uint32_t *xwin_area; /* h integers received by MPI_Put (the window's memory) */
  uint32_t *xrecv;     /* h integers received by MPI_Irecv */
  MPI_Win xwin;        /* over xwin_area */
  MPI_Request *xreq;   /* p */
} ctx_t;

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
static uint64_t word_of(int s, long i) { return ((uint64_t)(s + 1) << 32) | (uint64_t)i; }
/* word j of the block process s sends process d */
static uint64_t block_word(int s, int d, size_t j) {
  return mix64(((uint64_t)s << 48) ^ ((uint64_t)d << 40) ^ j);
}
/* process s's i-th destination: the same sequence on every process */
static void destinations(int s, int p, long W, int *out) {
  uint64_t x = SEED ^ ((uint64_t)s * UINT64_C(0x632be59bd9b4e019));
  for (long i = 0; i < W; i++) {
    x = mix64(x);
    out[i] = (int)(((x >> 32) * (uint64_t)p) >> 32);
  }
}

/* ---- 1. empty superstep ------------------------------------------------------------------ */

static void sync_ours(ctx_t *c, long n) {
  (void)c;
  for (long r = 0; r < n; r++) bsp_sync();
}
static void sync_raw(ctx_t *c, long n) {
  int x = c->pid, y[256]; /* p <= 255 checked */
  for (long r = 0; r < n; r++) MPI_Alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
}

/* ---- 2. 8 MiB per pair ------------------------------------------------------------------ */

/* name(c, n): n times, `primitive` (bsp_put or bsp_hpput) of B to every other process, then
 * bsp_sync. A macro, so that each timed loop calls its primitive directly. */
#define DEFINE_BLOCK_OURS(name, primitive)                                                    \
  static void name(ctx_t *c, long n) {                                                        \
    for (long r = 0; r < n; r++) {                                                            \
      for (int k = 1; k < c->p; k++) {                                                        \
        int q = (c->pid + k) % c->p;                                                          \
        primitive(q, c->bsrc + (size_t)q * BLOCK, c->barea, c->pid * (int)BLOCK, (int)BLOCK); \
      }                                                                                       \
      bsp_sync();                                                                             \
    }                                                                                         \
  }
DEFINE_BLOCK_OURS(block_put_ours, bsp_put)
DEFINE_BLOCK_OURS(block_hpput_ours, bsp_hpput)
static void block_raw(ctx_t *c, long n) {
  for (long r = 0; r < n; r++)
    MPI_Alltoallv(c->bsrc, c->bcnt, c->bdsp, MPI_BYTE, c->barea, c->bcnt, c->bdsp, MPI_BYTE,
                  MPI_COMM_WORLD);
}
static int block_check(ctx_t *c) {
  for (int s = 0; s < c->p; s++) {
    const uint64_t *seg = (const uint64_t *)(const void *)(c->barea + (size_t)s * BLOCK);
    for (size_t j = 0; j < BLOCK / 8; j++) {
      uint64_t want = s == c->pid ? 0 : block_word(s, c->pid, j);
      if (seg[j] != want) {
        fprintf(stderr,
                "%s: process %d: word %zu of the block from process %d is %#llx, "
                "expected %#llx\n",
                prog, c->pid, j, s, (unsigned long long)seg[j], (unsigned long long)want);
        return 0;
      }
    }
  }
  return 1;
}
static void block_clear(ctx_t *c) { memset(c->barea, 0, (size_t)c->p * BLOCK); }

/* ---- 3. one-word puts and sends --------------------------------------------------------- */

static void word_put_ours(ctx_t *c, long n) {
  const long W = c->W;
  for (long r = 0; r < n; r++) {
    for (long i = 0; i < W; i++) bsp_put(c->dest[i], &c->wsrc[i], c->warea, c->woff[i], 8);
    bsp_sync();
  }
}

/* What a programmer does by hand: count per destination, group the words by destination,
 * tell every process how many it gets, one MPI_Alltoallv into the place they belong. */
static void word_exchange_raw(ctx_t *c, uint64_t *recv) {
  const long W = c->W;
  const int p = c->p;
  memset(c->scnt, 0, (size_t)p * sizeof(int));
  for (long i = 0; i < W; i++) c->scnt[c->dest[i]]++;
  for (int q = 0, at = 0; q < p; q++) {
    c->sdsp[q] = c->fill[q] = at;
    at += c->scnt[q];
  }
  for (long i = 0; i < W; i++) c->sbuf[c->fill[c->dest[i]]++] = c->wsrc[i];
  MPI_Alltoall(c->scnt, 1, MPI_INT, c->rcnt, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoallv(c->sbuf, c->scnt, c->sdsp, MPI_UINT64_T, recv, c->rcnt, c->rdsp, MPI_UINT64_T,
                MPI_COMM_WORLD);
}
static void word_put_raw(ctx_t *c, long n) {
  for (long r = 0; r < n; r++) word_exchange_raw(c, c->warea);
}
static int word_check(ctx_t *c, const char *what) {
  long e = 0;
  for (int s = 0; s < c->p; s++) {
    for (long k = 0; k < c->W; k++) {
      uint64_t got = c->warea[(size_t)s * (size_t)c->W + (size_t)k];
      uint64_t want = k < c->expect_from[s] ? c->expect[e + k] : 0;
      if (got != want) {
        fprintf(stderr,
                "%s: process %d: %s: word %ld from process %d is %#llx, expected "
                "%#llx\n",
                prog, c->pid, what, k, s, (unsigned long long)got, (unsigned long long)want);
        return 0;
      }
    }
    e += c->expect_from[s];
  }
  return 1;
}
static void word_clear(ctx_t *c) { memset(c->warea, 0, (size_t)c->p * (size_t)c->W * 8); }

static void drain(ctx_t *c) {
  bsp_size_t status;
  uint64_t x, sum = 0, tag = 0;
  long n = 0;
  for (;;) {
    bsp_get_tag(&status, &tag);
    if (status < 0) break;
    if (status != 8) c->bad_status = 1;
    bsp_move(&x, 8);
    if (c->seen && n < c->nexpect) c->seen[n] = x;
    sum += x;
    n++;
  }
  c->nseen = n;
  c->sink = sum;
}
static void word_send_ours(ctx_t *c, long n) {
  const long W = c->W;
  for (long r = 0; r < n; r++) {
    for (long i = 0; i < W; i++) bsp_send(c->dest[i], NULL, &c->wsrc[i], 8);
    bsp_sync();
    drain(c);
  }
}
static void word_send_raw(ctx_t *c, long n) {
  for (long r = 0; r < n; r++) {
    word_exchange_raw(c, c->warea);
    uint64_t sum = 0;
    for (int s = 0; s < c->p; s++) {
      const uint64_t *w = c->warea + c->rdsp[s];
      for (int k = 0; k < c->rcnt[s]; k++) sum += w[k];
    }
    c->sink = sum;
  }
}
static int send_check(ctx_t *c) {
  if (c->bad_status || c->nseen != c->nexpect) {
    fprintf(stderr, "%s: process %d: send_word: received %ld messages (expected %ld)%s\n", prog,
            c->pid, c->nseen, c->nexpect, c->bad_status ? ", wrong payload sizes" : "");
    return 0;
  }
  for (long k = 0; k < c->nexpect; k++)
    if (c->seen[k] != c->expect[k]) {
      fprintf(stderr, "%s: process %d: send_word: message %ld is %#llx, expected %#llx\n", prog,
              c->pid, k, (unsigned long long)c->seen[k], (unsigned long long)c->expect[k]);
      return 0;
    }
  return 1;
}

/* ---- 4. Gerbessiotis & Lee's total exchange ----------------------------------------------- */

#define EXCHANGE_TAG 4242 /* the two-sided exchange's messages (MPI_COMM_WORLD) */

static void exchange_ours(ctx_t *c, long n) {
  const mb_exchange *x = &c->xch;
  for (long r = 0; r < n; r++) {
    MB_FOR_EACH_PROCESS_FROM(c->pid, c->p, d) {
      if (x->send_count[d] > 0)
        bsp_put(d, c->xsrc + x->send_offset[d], c->xarea, (bsp_size_t)x->dest_offset[d] * 4,
                (bsp_size_t)x->send_count[d] * 4);
    }
    bsp_sync();
  }
}
/* One-sided: a series of MPI_Puts, the epoch closed (and the next opened) by a fence, as G &
 * L's LIOPUT and LIOSYNC under MPI-2 (seed 002, Fig. 4); the window's displacement unit is an
 * integer. */
static void exchange_put_raw(ctx_t *c, long n) {
  const mb_exchange *x = &c->xch;
  for (long r = 0; r < n; r++) {
    MB_FOR_EACH_PROCESS_FROM(c->pid, c->p, d) {
      if (x->send_count[d] > 0)
        MPI_Put(c->xsrc + x->send_offset[d], x->send_count[d], MPI_UINT32_T, d, x->dest_offset[d],
                x->send_count[d], MPI_UINT32_T, c->xwin);
    }
    MPI_Win_fence(0, c->xwin);
  }
}
/* Two-sided: every receive posted first (MPI_Irecv), then the sends (MPI_Send), then wait for
 * the receives: no process blocks in a send that nobody has posted for. The waits complete
 * the exchange, so no barrier follows. */
static void exchange_send_raw(ctx_t *c, long n) {
  const mb_exchange *x = &c->xch;
  for (long r = 0; r < n; r++) {
    int posted = 0;
    MB_FOR_EACH_PROCESS_FROM(c->pid, c->p, s) {
      if (x->recv_count[s] > 0)
        MPI_Irecv(c->xrecv + x->recv_offset[s], x->recv_count[s], MPI_UINT32_T, s, EXCHANGE_TAG,
                  MPI_COMM_WORLD, &c->xreq[posted++]);
    }
    MB_FOR_EACH_PROCESS_FROM(c->pid, c->p, d) {
      if (x->send_count[d] > 0)
        MPI_Send(c->xsrc + x->send_offset[d], x->send_count[d], MPI_UINT32_T, d, EXCHANGE_TAG,
                 MPI_COMM_WORLD);
    }
    MPI_Waitall(posted, c->xreq, MPI_STATUSES_IGNORE);
  }
}

/* One operation of ours or raw on cleared memory, then the check. */
static int verify(ctx_t *c, int bench, int raw);

/* ---- the benchmark table ---------------------------------------------------------------- */

typedef struct {
  const char *name, *ours, *raw;
  int per_message; /* 1: per message (ns), 0: per operation (us) */
  int blocks;      /* moves BLOCK to each other process: GB/s */
  void (*run_ours)(ctx_t *, long);
  void (*run_raw)(ctx_t *, long);
  int exchange; /* 1: the total exchange: per integer of h (ns) */
} bench_t;

static const bench_t benches[] = {
    {"sync", "empty bsp_sync", "MPI_Alltoall of one int", 0, 0, sync_ours, sync_raw, 0},
    {"put_8MiB", "bsp_put of 8 MiB to every other process, bsp_sync",
     "MPI_Alltoallv of 8 MiB per pair", 0, 1, block_put_ours, block_raw, 0},
    {"hpput_8MiB", "bsp_hpput of 8 MiB to every other process, bsp_sync",
     "MPI_Alltoallv of 8 MiB per pair", 0, 1, block_hpput_ours, block_raw, 0},
    {"put_word", "W bsp_puts of 8 bytes to pseudo-random processes, bsp_sync",
     "group by destination, MPI_Alltoall of counts, MPI_Alltoallv of the words", 1, 0,
     word_put_ours, word_put_raw, 0},
    {"send_word", "W bsp_sends of 8 bytes (tag size 0), bsp_sync, bsp_get_tag+bsp_move all",
     "as put_word, then the receiver reads the words", 1, 0, word_send_ours, word_send_raw, 0},
    {"texch_put", "G & L's total exchange: h/p ints to every process (itself too), a bsp_put each",
     "the same by MPI_Put into a window, MPI_Win_fence", 0, 0, exchange_ours, exchange_put_raw, 1},
    {"texch_send", "as texch_put (bsp_put)",
     "MPI_Irecv from every process, MPI_Send to every process, MPI_Waitall", 0, 0, exchange_ours,
     exchange_send_raw, 1},
};
#define NBENCH ((int)(sizeof benches / sizeof benches[0]))

/* At p = 1 there is no other process to send blocks to, and no window (see setup). */
static int runs_at(const bench_t *b, int p) {
  return p > 1 || (!b->blocks && b->run_raw != exchange_put_raw);
}

static int verify(ctx_t *c, int bench, int raw) {
  const bench_t *b = &benches[bench];
  const char *what = raw ? "raw" : "ours";
  int ok = 1;
  if (b->blocks) {
    block_clear(c);
    bsp_sync();
    (raw ? b->run_raw : b->run_ours)(c, 1);
    ok = block_check(c);
  } else if (b->run_ours == word_put_ours) {
    word_clear(c);
    bsp_sync();
    (raw ? b->run_raw : b->run_ours)(c, 1);
    ok = word_check(c, what);
  } else if (b->exchange) {
    uint32_t *area = raw ? (b->run_raw == exchange_put_raw ? c->xwin_area : c->xrecv) : c->xarea;
    memset(area, 0, (size_t)c->xch.h * 4);
    /* the fence orders the clearing before the puts of other processes (the window's memory
     * is not written locally inside an epoch that others put into) */
    if (b->run_raw == exchange_put_raw) MPI_Win_fence(0, c->xwin);
    bsp_sync();
    (raw ? b->run_raw : b->run_ours)(c, 1);
    char label[64];
    snprintf(label, sizeof label, "%s %s", b->name, what);
    ok = mb_exchange_check(&c->xch, prog, label, c->pid, c->p, area);
  } else if (b->run_ours == word_send_ours) {
    word_clear(c);
    c->bad_status = 0;
    c->nseen = -1;
    bsp_sync();
    if (raw) {
      word_send_raw(c, 1);
      ok = word_check(c, "send_word raw");
      uint64_t want = 0;
      for (long k = 0; k < c->nexpect; k++) want += c->expect[k];
      if (ok && c->sink != want) {
        fprintf(stderr, "%s: process %d: send_word raw: sum %#llx, expected %#llx\n", prog, c->pid,
                (unsigned long long)c->sink, (unsigned long long)want);
        ok = 0;
      }
    } else {
      c->seen = mb_alloc_pages(prog, (size_t)(c->nexpect + 1) * 8);
      word_send_ours(c, 1);
      ok = send_check(c);
      free(c->seen);
      c->seen = NULL;
    }
  }
  return ok;
}

/* ---- measurement ------------------------------------------------------------------------ */

static mb_result results[NBENCH]; /* kept on process 0 */

/* The raw versions align with MPI_Barrier; a round's time is the max over processes,
 * taken with MPI_Allreduce. */
static inline void mpi_barrier(ctx_t *c) {
  (void)c;
  MPI_Barrier(MPI_COMM_WORLD);
}
static inline double max_over_processes(ctx_t *c, double t) {
  (void)c;
  double tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

MB_DEFINE_TIMED_BATCH(batch, ctx_t, bench_t, run_ours, run_raw, mpi_barrier, max_over_processes)

static int tty;
static void progress(const void *ctx, const char *name, int k, int n) {
  const ctx_t *c = ctx;
  if (c->pid != 0) return;
  if (k == 0) fprintf(stderr, "[p=%d] %-11s warm-up, calibration, check\n", c->p, name);
  else if (tty) fprintf(stderr, "\r[p=%d] %-11s round %d of %d ", c->p, name, k, n);
  fflush(stderr);
}

static void run_bench(ctx_t *c, int i, int rounds, double target) {
  const bench_t *b = &benches[i];
  mb_result *res = &results[i];
  const mb_bench_run run = {batch, c, b, b->name, progress};
  double w0 = bspk_monotonic_seconds();
  progress(c, b->name, 0, rounds);
  long n_ours = mb_calibrate(&run, 0, target, MAX_COUNT),
       n_raw = mb_calibrate(&run, 1, target, MAX_COUNT);
  for (int raw = 0; raw < 2; raw++) {
    int ok = verify(c, i, raw), all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      if (c->pid == 0)
        fprintf(stderr, "%s: VERIFY FAILED: %s (%s) delivered wrong data (details above)\n", prog,
                b->name, raw ? "raw" : "ours");
      bsp_abort("%s: %s: wrong results", prog, b->name);
    }
  }
  res->n_ours = n_ours;
  res->n_raw = n_raw;
  res->messages_per_op = b->exchange ? c->xch.h : b->per_message ? c->W : 1;
  mb_alternate_rounds(&run, c->pid, rounds, res);
  if (c->pid == 0) {
    res->verified = 1; /* a failed check ended the run above */
    mb_summarize(res);
    res->wall_s = bspk_monotonic_seconds() - w0;
    fprintf(stderr, "%s[p=%d] %-11s done in %.2f s (batches of %ld / %ld)\n", tty ? "\n" : "", c->p,
            b->name, res->wall_s, n_ours, n_raw);
  }
}

/* ---- output ----------------------------------------------------------------------------- */

typedef struct {
  char date[64], host[256], mpi[256], backend[64];
  int p, cores, rounds;
  long W;
  double target, clock_res, wall_s;
} header_t;

static double bytes_per_op(const ctx_t *c) { return (double)(c->p - 1) * (double)BLOCK; }
static const char *unit_of(const bench_t *b) {
  return b->exchange ? "ns/int" : b->per_message ? "ns/msg" : "us/op";
}
static double scale_of(const bench_t *b) { return b->per_message || b->exchange ? 1e9 : 1e6; }

static void print_table(const ctx_t *c, const header_t *h) {
  printf("# %s  backend=%s  p=%d  cores=%d%s  (%s build)\n", prog, h->backend, h->p, h->cores,
         h->p > h->cores ? " (oversubscribed)" : "", BENCH_BUILD_TYPE);
  printf("# MPI: %s\n", h->mpi);
  printf("# %s  host=%s  loadavg start: %s  end: %s\n", h->date, h->host, load_start, load_end);
  printf(
      "# rounds=%d  batch target=%.1f ms  W=%ld messages  block=8 MiB per pair  h=%ld ints  "
      "round time = max over processes  clock resolution %.0f ns\n",
      h->rounds, h->target * 1e3, h->W, c->xch.h, h->clock_res * 1e9);
  mb_print_table_head(12, 7);
  for (int i = 0; i < NBENCH; i++) {
    const bench_t *b = &benches[i];
    const mb_result *r = &results[i];
    if (!r->ran) continue;
    char notes[256] = "";
    if (b->blocks) mb_gbps_note(notes, sizeof notes, bytes_per_op(c), r);
    if (b->exchange) mb_exchange_note(notes, sizeof notes, c->xch.h, h->p, r);
    mb_print_table_row(12, 7, b->name, h->p, r, scale_of(b), unit_of(b), notes);
  }
  fflush(stdout);
}

static int write_json(const ctx_t *c, const char *path, const header_t *h) {
  FILE *f = mb_json_open(prog, path);
  if (!f) return 0;
  fprintf(f, "{\"record\":\"header\",\"program\":\"bsp_mpi_microbench\"");
  mb_json_field(f, "backend", h->backend);
  mb_json_field(f, "build_type", BENCH_BUILD_TYPE);
  mb_json_field(f, "date", h->date);
  mb_json_field(f, "host", h->host);
  mb_json_field(f, "mpi_library", h->mpi);
  fprintf(f, ",\"p\":%d,\"cores_online\":%d", h->p, h->cores);
  mb_json_field(f, "loadavg_start", load_start);
  mb_json_field(f, "loadavg_end", load_end);
  fprintf(f,
          ",\"rounds\":%d,\"batch_target_s\":%.6g,\"words\":%ld,\"block_bytes\":%zu,"
          "\"exchange_ints\":%ld,\"seed\":%llu,\"clock_resolution_s\":%.3g,\"round_time\":\"max "
          "over processes of "
          "each process's batch time (MPI_Allreduce outside the timed region)\",\"order\":"
          "\"ours first in even rounds, raw first in odd rounds\",\"wall_s\":%.3f}\n",
          h->rounds, h->target, h->W, BLOCK, c->xch.h, (unsigned long long)SEED, h->clock_res,
          h->wall_s);
  for (int i = 0; i < NBENCH; i++) {
    const bench_t *b = &benches[i];
    const mb_result *r = &results[i];
    if (!r->ran) continue;
    double sc = scale_of(b);
    fprintf(f, "{\"record\":\"benchmark\"");
    mb_json_field(f, "name", b->name);
    mb_json_field(f, "backend", h->backend);
    fprintf(f, ",\"p\":%d", h->p);
    mb_json_field(f, "ours", b->ours);
    mb_json_field(f, "raw", b->raw);
    fprintf(f,
            ",\"unit\":\"%s\",\"messages_per_op\":%ld,\"ops_per_batch_ours\":%ld,"
            "\"ops_per_batch_raw\":%ld,\"rounds\":%d,\"verified\":true",
            unit_of(b), r->messages_per_op, r->n_ours, r->n_raw, r->rounds);
    mb_json_stats_and_ratio(f, r, sc);
    if (b->blocks) {
      fprintf(f, ",\"bytes_per_process_per_op\":%.0f", bytes_per_op(c));
      mb_json_gbps(f, bytes_per_op(c), r);
    }
    if (b->exchange) mb_json_exchange(f, c->xch.h, r);
    mb_json_samples_and_end(f, "samples_ours", "samples_raw", r, sc); /* in the unit */
  }
  return mb_json_close(prog, path, f);
}

/* ---- the SPMD part ---------------------------------------------------------------------- */

static void setup(ctx_t *c) {
  const int p = c->p;
  const long W = c->W;
  c->bsrc = mb_alloc_pages(prog, (size_t)p * BLOCK);
  c->barea = mb_alloc_pages(prog, (size_t)p * BLOCK);
  c->bcnt = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  c->bdsp = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  for (int q = 0; q < p; q++) {
    uint64_t *seg = (uint64_t *)(void *)(c->bsrc + (size_t)q * BLOCK);
    for (size_t j = 0; j < BLOCK / 8; j++) seg[j] = q == c->pid ? 0 : block_word(c->pid, q, j);
    c->bcnt[q] = q == c->pid ? 0 : (int)BLOCK;
    c->bdsp[q] = q * (int)BLOCK;
  }
  c->wsrc = mb_alloc_pages(prog, (size_t)W * 8);
  c->dest = mb_alloc_pages(prog, (size_t)W * sizeof(int));
  c->woff = mb_alloc_pages(prog, (size_t)W * sizeof(int));
  c->warea = mb_alloc_pages(prog, (size_t)p * (size_t)W * 8);
  c->sbuf = mb_alloc_pages(prog, (size_t)W * 8);
  c->scnt = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  c->sdsp = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  c->rcnt = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  c->rdsp = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  c->fill = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  c->expect = mb_alloc_pages(prog, (size_t)p * (size_t)W * 8);
  c->expect_from = mb_alloc_pages(prog, (size_t)p * sizeof(long));
  destinations(c->pid, p, W, c->dest);
  for (long i = 0; i < W; i++) {
    c->wsrc[i] = word_of(c->pid, i);
    c->woff[i] = (int)((c->pid * W + c->fill[c->dest[i]]++) * 8); /* fill: rank per dest */
  }
  for (int s = 0; s < p; s++) c->rdsp[s] = (int)(s * W);
  /* the total exchange: its source, one area for each way it is received, and the window */
  const size_t xbytes = (size_t)opts.ints * 4;
  mb_exchange_layout(&c->xch, prog, opts.ints, c->pid, p);
  c->xsrc = mb_alloc_pages(prog, xbytes);
  c->xarea = mb_alloc_pages(prog, xbytes);
  c->xwin_area = mb_alloc_pages(prog, xbytes);
  c->xrecv = mb_alloc_pages(prog, xbytes);
  c->xreq = mb_alloc_pages(prog, (size_t)p * sizeof(MPI_Request));
  mb_exchange_fill(&c->xch, c->pid, p, c->xsrc);
  c->xwin = MPI_WIN_NULL;
  if (p > 1) { /* Open MPI 4.1's MPI_Win_create fails at p = 1 (src/mpi/mpi_engine.c) */
    MPI_Win_create(c->xwin_area, (MPI_Aint)xbytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &c->xwin);
    MPI_Win_fence(0, c->xwin); /* the first epoch: each exchange's fence closes one, opens one */
  }
  /* what arrives here, in delivery order: by source, then in issue order */
  int *d = mb_alloc_pages(prog, (size_t)W * sizeof(int));
  for (int s = 0; s < p; s++) {
    destinations(s, p, W, d);
    c->expect_from[s] = 0;
    for (long i = 0; i < W; i++)
      if (d[i] == c->pid) c->expect[c->nexpect + c->expect_from[s]++] = word_of(s, i);
    c->nexpect += c->expect_from[s];
  }
  free(d);
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  ctx_t ctx, *c = &ctx;
  memset(c, 0, sizeof *c);
  c->pid = bsp_pid();
  c->p = bsp_nprocs();
  c->W = opts.words;
  if (strncmp(bspk_backend(), "mpi", 3) != 0) {
    if (c->pid == 0)
      fprintf(stderr,
              "%s: needs an MPI back end (bsprun -b mpi or -b mpi-rma); this run uses "
              "'%s'\n",
              prog, bspk_backend());
    exit_status = 2;
    bsp_end();
    return;
  }
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  /* registered areas of p * 8 MiB and p * W words must fit in a bsp_size_t (int) */
  if (world != c->p || c->p > 255 || (double)c->p * (double)c->W * 8 > 2147483647.0)
    bsp_abort(
        "%s: needs every MPI rank as a BSP process, p <= 255 and p * W * 8 < 2^31 "
        "(p=%d, ranks=%d, W=%ld)",
        prog, c->p, world, c->W);
  double wall0 = bspk_monotonic_seconds();
  setup(c);
  bsp_push_reg(c->barea, (bsp_size_t)((size_t)c->p * BLOCK));
  bsp_push_reg(c->warea, (bsp_size_t)((size_t)c->p * (size_t)c->W * 8));
  bsp_push_reg(c->xarea, (bsp_size_t)((size_t)opts.ints * 4));
  bsp_sync();

  header_t h;
  memset(&h, 0, sizeof h);
  h.p = c->p;
  h.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  h.W = c->W;
  h.rounds = opts.rounds      ? opts.rounds
             : c->p > h.cores ? (opts.quick ? 5 : 11)
             : opts.quick     ? 7
                              : 21;
  h.target = (opts.batch_ms > 0 ? opts.batch_ms : opts.quick ? 2.0 : 10.0) * 1e-3;
  const char *be = getenv("BSPKIT_BACKEND");
  snprintf(h.backend, sizeof h.backend, "%s", be ? be : "(unset)");
  tty = isatty(2);
  if (c->pid == 0)
    fprintf(stderr, "%s: backend %s, p=%d, %d rounds, batch %.1f ms, W=%ld\n", prog, h.backend,
            c->p, h.rounds, h.target * 1e3, c->W);

  for (int i = 0; i < NBENCH; i++)
    if (mb_selected(&opts, benches[i].name) && runs_at(&benches[i], c->p))
      run_bench(c, i, h.rounds, h.target);

  bsp_pop_reg(c->xarea);
  bsp_pop_reg(c->warea);
  bsp_pop_reg(c->barea);
  bsp_sync();
  if (c->xwin != MPI_WIN_NULL) MPI_Win_free(&c->xwin);
  if (c->pid == 0) {
    mb_read_loadavg(load_end, sizeof load_end);
    mb_date_and_host(h.date, sizeof h.date, h.host, sizeof h.host);
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    v[len < (int)sizeof v ? len : (int)sizeof v - 1] = 0;
    v[strcspn(v, "\n")] = 0;
    snprintf(h.mpi, sizeof h.mpi, "%s", v);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    h.clock_res = (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
    h.wall_s = bspk_monotonic_seconds() - wall0;
    print_table(c, &h);
    if (opts.json && !write_json(c, opts.json, &h)) exit_status = 1;
    fprintf(stderr, "%s: p=%d finished in %.1f s\n", prog, c->p, h.wall_s);
  }
  free(c->bsrc);
  free(c->barea);
  free(c->bcnt);
  free(c->bdsp);
  free(c->wsrc);
  free(c->dest);
  free(c->woff);
  free(c->warea);
  free(c->sbuf);
  free(c->scnt);
  free(c->sdsp);
  free(c->rcnt);
  free(c->rdsp);
  free(c->fill);
  free(c->expect);
  free(c->expect_from);
  free(c->xsrc);
  free(c->xarea);
  free(c->xwin_area);
  free(c->xrecv);
  free(c->xreq);
  mb_exchange_free(&c->xch);
  bsp_end();
}

/* ---- main ------------------------------------------------------------------------------- */

static void describe(int i, const char **name, const char **ours, const char **raw) {
  *name = benches[i].name;
  *ours = benches[i].ours;
  *raw = benches[i].raw;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bsprun -b mpi|mpi-rma -n P %s [options]\n"
          "\n"
          "BSPlib on the MPI back ends against raw MPI doing the same data movement, in one run.\n"
          "Each benchmark is calibrated (batches of about --batch-ms), checked once (both\n"
          "versions must deliver the expected bytes; exit status 1 otherwise), then timed in\n"
          "rounds that alternate ours and raw. A sample is the maximum over processes of the\n"
          "batch time divided by its operations (us/op), messages (ns/msg) or integers of h\n"
          "(ns/int: Gerbessiotis & Lee's t / h; the notes give it in us per integer and per\n"
          "8-byte word). The table gives the medians, their ratio (ours/raw), minimum and\n"
          "quartiles.\n"
          "\n"
          "Benchmarks (W = --words, default 10000; destinations pseudo-random, fixed seed):\n",
          prog);
  mb_usage_benchmarks(f, 11, NBENCH, describe);
  fprintf(f,
          "  --json FILE         also write JSON lines: a header record, then one record per\n"
          "                      benchmark with statistics and every round's samples\n"
          "  --quick             7 rounds (5 when P > cores) of 2 ms batches\n"
          "  --rounds N          rounds (1..%d; default 21, or 11 when P > cores)\n"
          "  --batch-ms X        target batch duration in ms (default 10)\n"
          "  --only NAME[,NAME]  run only these benchmarks (may be repeated)\n"
          "  --words W           messages per superstep in put_word and send_word\n"
          "  --ints H            texch_put's and texch_send's h: 32-bit integers each process\n"
          "                      sends in all, H/p to every process including itself\n"
          "                      (default %ld)\n"
          "  -h, --help          this help\n"
          "\n"
          "Output: the table on stdout (header lines start with '#'), progress on stderr.\n",
          MB_MAX_ROUNDS, MB_DEFAULT_EXCHANGE_INTS);
}

MB_DEFINE_IS_BENCHMARK(is_bench, benches, NBENCH)

int main(int argc, char **argv) {
  /* Every MPI rank runs main up to bsp_init (ranks other than 0 then run spmd from
   * inside it), so the options are read here. */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      const char *rank = getenv("OMPI_COMM_WORLD_RANK");
      if (!rank) rank = getenv("PMI_RANK");
      if (!rank || !strcmp(rank, "0")) usage(stdout);
      return 0;
    } else if (!mb_parse_option(&opts, argc, argv, &i)) {
      mb_usage_error(prog, "unknown argument '%s'", a);
    }
  }
  mb_read_loadavg(load_start, sizeof load_start);
  bsp_init(spmd, argc, argv);
  spmd();
  return exit_status;
}
