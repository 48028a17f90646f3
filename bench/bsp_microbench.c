/*
 * bsp_microbench.c - BSPlib primitives against their raw shared-memory counterparts.
 *
 * One BSP run at the p given by bsprun (bsp_begin(bsp_nprocs())). Every benchmark times
 * batches of "ours" (the BSPlib primitive) and "raw" (the same data movement done directly
 * with loads, stores, memcpy and a hand-written barrier among the same threads), alternating
 * ours and raw round after round, and reports the median per operation of each, their ratio,
 * and the minimum and quartiles. See usage() for the benchmarks and the options.
 *
 * The raw counterparts need the BSP processes to share one address space, so this program
 * runs only on the `threads` back end (each BSP process a thread; globals are shared).
 *
 * How a round is timed: every process aligns with the others (bsp_sync before an "ours"
 * batch, the raw barrier before a "raw" batch), reads CLOCK_MONOTONIC, runs the batch, reads
 * the clock again. The round's time is the MAXIMUM over processes of these per-process
 * times, gathered outside the timed region: each process bsp_puts its time into a
 * registered array on every process (an all-gather) and all processes take the max, so they
 * all agree on it bit for bit (the calibration below relies on that).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bsp.h"
#include "bspkit.h"
#include "bspk_clock.h"
#include "bspk_machine.h"
#include "bspk_spmd.h"
#include "microbench_common.h"

#ifndef BENCH_LIB
#define BENCH_LIB "bsp"
#endif
#if defined(__clang__) || !defined(__GNUC__)
#define BENCH_COMPILER __VERSION__ /* clang's starts with its name */
#else
#define BENCH_COMPILER "GCC " __VERSION__
#endif
#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

#define MAXP 512 /* most processes this program supports */
#define CACHELINE 64
#define BLOCK_BYTES (1 << 20) /* 1 MiB blocks */
#define MAX_COUNT 100000000L  /* most operations in one timed batch */

/* ---- options (set in main before bsp_begin; read by every process) --------------------- */

static int known_bench(const char *name, size_t len);
static mb_options opts = {.prog = "bsp_microbench",
                          .words = 100000,
                          .max_words = 10000000,
                          .ints = MB_DEFAULT_EXCHANGE_INTS,
                          .only_hint = " (see --list)",
                          .only_size = 1024,
                          .is_benchmark = known_bench};
static int opt_raw_barrier = 0; /* 0 auto, 1 spin, 2 pthread */
static const char *prog_name = "bsp_microbench";

/* ---- things shared between the BSP processes (threads back end) ------------------------ */

static unsigned char *g_area_put[MAXP];        /* each process's registered put target */
static unsigned char *g_area_get[MAXP];        /* each process's registered get source */
static _Thread_local volatile uint64_t g_sink; /* keeps results alive; per thread (no race) */
static int g_use_spin;                         /* raw barrier: 1 spin, 0 pthread_barrier_t */
static int g_cores;                            /* cores in the program's affinity mask at start */
static char g_loadavg_start[128], g_loadavg_end[128];

/* ---- a raw sense-reversing centralized spin barrier ------------------------------------ */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

static struct {
  _Alignas(CACHELINE) atomic_int count; /* processes still to arrive */
  _Alignas(CACHELINE) atomic_int sense; /* flips when the last one arrives */
  _Alignas(CACHELINE) int nprocs;
} g_spin;

static struct padded_sense { _Alignas(CACHELINE) int v; } g_local_sense[MAXP];

static pthread_barrier_t g_pbar;

static void spin_barrier_init(int p) {
  g_spin.nprocs = p;
  atomic_store(&g_spin.count, p);
  atomic_store(&g_spin.sense, 0);
  for (int i = 0; i < p; i++) g_local_sense[i].v = 0;
}

static void spin_barrier_wait(int pid) {
  int s = !g_local_sense[pid].v;
  g_local_sense[pid].v = s;
  if (atomic_fetch_sub_explicit(&g_spin.count, 1, memory_order_acq_rel) == 1) {
    atomic_store_explicit(&g_spin.count, g_spin.nprocs, memory_order_relaxed);
    atomic_store_explicit(&g_spin.sense, s, memory_order_release);
  } else {
    while (atomic_load_explicit(&g_spin.sense, memory_order_acquire) != s) cpu_relax();
  }
}

/* ---- per-process state ----------------------------------------------------------------- */

typedef struct {
  int pid, p, left, right;
  long words;              /* messages per batch in the one-word benchmarks */
  size_t area_bytes;       /* size of area_put / area_get */
  unsigned char *src;      /* local: BLOCK_BYTES, pattern of pid */
  unsigned char *dst;      /* local: BLOCK_BYTES, destination of gets */
  unsigned char *area_put; /* registered: destination of puts and raw stores */
  unsigned char *area_get; /* registered: source of gets, pattern of pid */
  uint64_t *wsrc;          /* local: words[i] = (pid << 32) | i */
  double *gather;          /* registered: p doubles, for bspk_max_over_processes */
  int tagsize;             /* current BSMP tag size */
  long recv_count;         /* last drain: messages received */
  uint64_t recv_sum, tag_sum;
  uint64_t read_sum; /* the *_read benchmarks' pass over the received block */
  int recv_bad;
  int verifying;   /* drain hashes the payloads (a stronger check than a sum) */
  mb_exchange xch; /* the total exchange's layout (--ints) */
  uint32_t *xsrc;  /* local: its h integers to send, by destination */
} ctx_t;

static inline void raw_barrier(const ctx_t *c) {
  if (g_use_spin) spin_barrier_wait(c->pid);
  else pthread_barrier_wait(&g_pbar);
}

static inline void compiler_barrier(void) { __asm__ __volatile__("" ::: "memory"); }

static inline unsigned char pattern(int pid, size_t i) {
  return (unsigned char)(i * 131u + (size_t)pid * 17u + 1u);
}

static inline uint64_t word_of(int pid, long i) {
  return ((uint64_t)(unsigned)pid << 32) | (uint64_t)i;
}

/* splitmix64 finalizer: sums of hashes detect changed payloads that plain sums miss */
static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the benchmarks -------------------------------------------------------------------- */

/* 1. empty superstep vs raw barrier */
static void sync_ours(ctx_t *c, long n) {
  (void)c;
  for (long r = 0; r < n; r++) bsp_sync();
}
static void sync_raw(ctx_t *c, long n) {
  for (long r = 0; r < n; r++) raw_barrier(c);
}

/* 2-4. 1 MiB blocks. The *_read benchmarks (2b, 3b) have each process then read the block it
 * received (a sum of its words). Without the read, a memcpy into the neighbour's area leaves the
 * block's lines in the writer's cache from the second round on and moves nothing between cores
 * (nor does hpput, which is that memcpy), while bsp_put's receiver copies out of the sender's
 * buffer every round: the read makes the data cross cores on both sides, as a program that uses
 * what it received does. */
static void read_block(ctx_t *c) {
  const uint64_t *w = (const uint64_t *)(const void *)c->area_put;
  uint64_t sum = 0;
  for (size_t i = 0; i < BLOCK_BYTES / sizeof *w; i++) sum += w[i];
  c->read_sum += sum;
}
/* Called with constant flags only: inlined, each benchmark's loop has no branch on them. */
static inline void block_put_rounds(ctx_t *c, long n, int buffered, int read) {
  for (long r = 0; r < n; r++) {
    if (buffered) bsp_put(c->right, c->src, c->area_put, 0, BLOCK_BYTES);
    else bsp_hpput(c->right, c->src, c->area_put, 0, BLOCK_BYTES);
    bsp_sync();
    if (read) read_block(c);
  }
}
static inline void block_put_raw_rounds(ctx_t *c, long n, int read) {
  unsigned char *d = g_area_put[c->right];
  for (long r = 0; r < n; r++) {
    memcpy(d, c->src, BLOCK_BYTES);
    compiler_barrier();
    raw_barrier(c);
    if (read) read_block(c);
  }
}
static void hpput_ours(ctx_t *c, long n) { block_put_rounds(c, n, 0, 0); }
static void put_ours(ctx_t *c, long n) { block_put_rounds(c, n, 1, 0); }
static void block_put_raw(ctx_t *c, long n) { block_put_raw_rounds(c, n, 0); }
static void hpput_read_ours(ctx_t *c, long n) { block_put_rounds(c, n, 0, 1); }
static void put_read_ours(ctx_t *c, long n) { block_put_rounds(c, n, 1, 1); }
static void block_put_read_raw(ctx_t *c, long n) { block_put_raw_rounds(c, n, 1); }

static void get_ours(ctx_t *c, long n) {
  for (long r = 0; r < n; r++) {
    bsp_get(c->right, c->area_get, 0, c->dst, BLOCK_BYTES);
    bsp_sync();
  }
}
static void block_get_raw(ctx_t *c, long n) {
  const unsigned char *s = g_area_get[c->right];
  for (long r = 0; r < n; r++) {
    memcpy(c->dst, s, BLOCK_BYTES);
    compiler_barrier();
    raw_barrier(c);
  }
}
static void block_prepare_verify(ctx_t *c) {
  memset(c->area_put, 0, BLOCK_BYTES);
  memset(c->dst, 0, BLOCK_BYTES);
}
static int block_check(const unsigned char *buf, int owner, const char *what, const ctx_t *c) {
  for (size_t i = 0; i < BLOCK_BYTES; i++)
    if (buf[i] != pattern(owner, i)) {
      fprintf(stderr, "%s: VERIFY FAILED on process %d: %s byte %zu is %u, expected %u\n",
              prog_name, c->pid, what, i, buf[i], pattern(owner, i));
      return 0;
    }
  return 1;
}
static int put_block_verify(ctx_t *c) { return block_check(c->area_put, c->left, "put target", c); }
static int get_block_verify(ctx_t *c) {
  return block_check(c->dst, c->right, "get destination", c);
}

/* 5. one-word puts: to the right neighbour, or cycling over all processes */
static void word_put_ours(ctx_t *c, long n) {
  const long N = c->words;
  for (long r = 0; r < n; r++) {
    for (long i = 0; i < N; i++)
      bsp_put(c->right, &c->wsrc[i], c->area_put, (bsp_size_t)(i * 8), 8);
    bsp_sync();
  }
}
static void word_put_raw(ctx_t *c, long n) {
  const long N = c->words;
  volatile uint64_t *d = (volatile uint64_t *)(void *)g_area_put[c->right];
  for (long r = 0; r < n; r++) {
    for (long i = 0; i < N; i++) d[i] = c->wsrc[i];
    raw_barrier(c);
  }
}
static void word_put_cyclic_ours(ctx_t *c, long n) {
  const long N = c->words;
  for (long r = 0; r < n; r++) {
    int d = c->right;
    for (long i = 0; i < N; i++) {
      bsp_put(d, &c->wsrc[i], c->area_put, (bsp_size_t)(i * 8), 8);
      if (++d == c->p) d = 0;
    }
    bsp_sync();
  }
}
static void word_put_cyclic_raw(ctx_t *c, long n) {
  const long N = c->words;
  volatile uint64_t *dst[MAXP];
  for (int q = 0; q < c->p; q++) dst[q] = (volatile uint64_t *)(void *)g_area_put[q];
  for (long r = 0; r < n; r++) {
    int d = c->right;
    for (long i = 0; i < N; i++) {
      dst[d][i] = c->wsrc[i];
      if (++d == c->p) d = 0;
    }
    raw_barrier(c);
  }
}
static void word_prepare_verify(ctx_t *c) { memset(c->area_put, 0, (size_t)c->words * 8); }
static int word_check(ctx_t *c, int cyclic) {
  const uint64_t *a = (const uint64_t *)(const void *)c->area_put;
  for (long i = 0; i < c->words; i++) {
    /* at step i, source s writes to (s + 1 + i) mod p, so index i here comes from: */
    int s = cyclic ? (int)(((long)c->pid - 1 - i % c->p + 2L * c->p) % c->p) : c->left;
    if (a[i] != word_of(s, i)) {
      fprintf(stderr, "%s: VERIFY FAILED on process %d: word %ld is %#llx, expected %#llx\n",
              prog_name, c->pid, i, (unsigned long long)a[i], (unsigned long long)word_of(s, i));
      return 0;
    }
  }
  return 1;
}
static int word_put_verify(ctx_t *c) { return word_check(c, 0); }
static int word_put_cyclic_verify(ctx_t *c) { return word_check(c, 1); }

/* 6. one-word sends with a 0- or 4-byte tag, received with bsp_get_tag + bsp_move */
static void set_tagsize(ctx_t *c, int t) {
  bsp_size_t ts = t;
  bsp_set_tagsize(&ts);
  bsp_sync();
  c->tagsize = t;
}
static void send_setup_tag4(ctx_t *c) { set_tagsize(c, 4); }
static void send_teardown_tag4(ctx_t *c) { set_tagsize(c, 0); }

static void drain(ctx_t *c) {
  bsp_size_t status;
  uint32_t tag = 0;
  uint64_t x, sum = 0, tsum = 0;
  long cnt = 0;
  for (;;) {
    bsp_get_tag(&status, &tag);
    if (status == -1) break;
    if (status != 8) c->recv_bad = 1;
    bsp_move(&x, 8);
    if (c->verifying) { /* the payload sent with tag i is word i of the left neighbour */
      if (c->tagsize == 4 && x != word_of(c->left, (long)tag)) c->recv_bad = 1;
      x = mix64(x);
    }
    sum += x;
    tsum += tag;
    cnt++;
  }
  if (cnt != c->words) c->recv_bad = 1;
  c->recv_count = cnt;
  c->recv_sum = sum;
  c->tag_sum = tsum;
  g_sink = sum;
}
static void word_send_ours(ctx_t *c, long n) {
  const long N = c->words;
  for (long r = 0; r < n; r++) {
    uint32_t tag;
    for (long i = 0; i < N; i++) {
      tag = (uint32_t)i;
      bsp_send(c->right, &tag, &c->wsrc[i], 8);
    }
    bsp_sync();
    drain(c);
  }
}
/* Raw stores as in 5, then the receiver reads the words (the counterpart of draining the
 * queue). Double-buffered in the area so that the next stores cannot race with the reads. */
static void word_send_raw(ctx_t *c, long n) {
  const long N = c->words;
  volatile uint64_t *d = (volatile uint64_t *)(void *)g_area_put[c->right];
  const volatile uint64_t *mine = (const volatile uint64_t *)(const void *)c->area_put;
  for (long r = 0; r < n; r++) {
    long off = (r & 1) ? N : 0;
    for (long i = 0; i < N; i++) d[off + i] = c->wsrc[i];
    raw_barrier(c);
    uint64_t s = 0;
    for (long i = 0; i < N; i++) s += mine[off + i];
    g_sink = s;
  }
}
static void send_prepare_verify(ctx_t *c) {
  c->recv_count = -1;
  c->recv_sum = c->tag_sum = 0;
  c->recv_bad = 0;
  c->verifying = 1;
}
static int send_verify(ctx_t *c) {
  const uint64_t N = (uint64_t)c->words;
  uint64_t want_sum = 0;
  for (long i = 0; i < c->words; i++) want_sum += mix64(word_of(c->left, i));
  c->verifying = 0;
  uint64_t want_tags = c->tagsize == 4 ? N * (N - 1) / 2 : 0;
  if (c->recv_bad || c->recv_count != c->words || c->recv_sum != want_sum ||
      c->tag_sum != want_tags) {
    fprintf(stderr,
            "%s: VERIFY FAILED on process %d: received %ld messages (expected %ld), "
            "payload hash sum %#llx (expected %#llx), tag sum %llu (expected %llu)%s\n",
            prog_name, c->pid, c->recv_count, c->words, (unsigned long long)c->recv_sum,
            (unsigned long long)want_sum, (unsigned long long)c->tag_sum,
            (unsigned long long)want_tags,
            c->recv_bad ? ", wrong sizes or payload/tag mismatch" : "");
    return 0;
  }
  return 1;
}

/* 7. Gerbessiotis & Lee's total exchange (microbench_common.h): h integers from every process,
 * h / p to each process, itself included, one bsp_put a pair (their BSPlib version, seed 002
 * line 133), starting with itself and going round; times per integer of h (t / h). */
static void exchange_ours(ctx_t *c, long n) {
  const mb_exchange *x = &c->xch;
  for (long r = 0; r < n; r++) {
    MB_FOR_EACH_PROCESS_FROM(c->pid, c->p, d) {
      if (x->send_count[d] > 0)
        bsp_put(d, c->xsrc + x->send_offset[d], c->area_put, (bsp_size_t)x->dest_offset[d] * 4,
                (bsp_size_t)x->send_count[d] * 4);
    }
    bsp_sync();
  }
}
static void exchange_raw(ctx_t *c, long n) {
  const mb_exchange *x = &c->xch;
  for (long r = 0; r < n; r++) {
    MB_FOR_EACH_PROCESS_FROM(c->pid, c->p, d) {
      memcpy(g_area_put[d] + (size_t)x->dest_offset[d] * 4, c->xsrc + x->send_offset[d],
             (size_t)x->send_count[d] * 4);
    }
    compiler_barrier();
    raw_barrier(c);
  }
}
static void exchange_prepare_verify(ctx_t *c) { memset(c->area_put, 0, (size_t)c->xch.h * 4); }
static int exchange_verify(ctx_t *c) {
  return mb_exchange_check(&c->xch, prog_name, "VERIFY FAILED: texch_put", c->pid, c->p,
                           (const uint32_t *)(const void *)c->area_put);
}

typedef struct {
  const char *name;
  const char *help;     /* what ours does */
  const char *raw_help; /* what raw does (barrier named separately) */
  const char *per;      /* the operation the times are per: "barrier", "block", "msg" */
  int per_message;      /* 1: times are divided by the number of messages per batch */
  int bytes;            /* bytes moved per process per operation (GB/s), 0: none */
  void (*setup)(ctx_t *);
  void (*teardown)(ctx_t *);
  void (*ours)(ctx_t *, long);
  void (*raw)(ctx_t *, long);
  void (*prepare_verify)(ctx_t *);
  int (*verify)(ctx_t *);
  int exchange; /* 1: the total exchange: times per integer of h, in ns (messages_per_op = h) */
} bench_t;

static const bench_t benches[] = {
    {"sync", "empty bsp_sync", "raw barrier", "barrier", 0, 0, NULL, NULL, sync_ours, sync_raw,
     NULL, NULL, 0},
    {"hpput_1MiB", "bsp_hpput of 1 MiB to the right neighbour, bsp_sync",
     "memcpy of 1 MiB to the right neighbour's area, raw barrier", "block", 0, BLOCK_BYTES, NULL,
     NULL, hpput_ours, block_put_raw, block_prepare_verify, put_block_verify, 0},
    {"put_1MiB", "bsp_put (buffered) of 1 MiB to the right neighbour, bsp_sync",
     "memcpy of 1 MiB to the right neighbour's area, raw barrier", "block", 0, BLOCK_BYTES, NULL,
     NULL, put_ours, block_put_raw, block_prepare_verify, put_block_verify, 0},
    {"hpput_1MiB_read", "as hpput_1MiB, then every process reads the block it received",
     "as hpput_1MiB's, then every process reads the block it received", "block", 0, BLOCK_BYTES,
     NULL, NULL, hpput_read_ours, block_put_read_raw, block_prepare_verify, put_block_verify, 0},
    {"put_1MiB_read", "as put_1MiB, then every process reads the block it received",
     "as put_1MiB's, then every process reads the block it received", "block", 0, BLOCK_BYTES, NULL,
     NULL, put_read_ours, block_put_read_raw, block_prepare_verify, put_block_verify, 0},
    {"get_1MiB", "bsp_get of 1 MiB from the right neighbour, bsp_sync",
     "memcpy of 1 MiB from the right neighbour's area, raw barrier", "block", 0, BLOCK_BYTES, NULL,
     NULL, get_ours, block_get_raw, block_prepare_verify, get_block_verify, 0},
    {"put_word", "W bsp_puts of 8 bytes to the right neighbour, bsp_sync",
     "W volatile 8-byte stores to the right neighbour's array, raw barrier", "msg", 1, 0, NULL,
     NULL, word_put_ours, word_put_raw, word_prepare_verify, word_put_verify, 0},
    {"put_word_cyclic", "as put_word, destination cycling over all processes",
     "as put_word, destination cycling over all processes", "msg", 1, 0, NULL, NULL,
     word_put_cyclic_ours, word_put_cyclic_raw, word_prepare_verify, word_put_cyclic_verify, 0},
    {"send_word", "W bsp_sends of 8 bytes, tag size 0, bsp_sync, bsp_get_tag+bsp_move all",
     "as put_word, then the receiver reads the W words (double-buffered)", "msg", 1, 0, NULL, NULL,
     word_send_ours, word_send_raw, send_prepare_verify, send_verify, 0},
    {"send_word_tag4", "as send_word with a 4-byte tag", "as send_word", "msg", 1, 0,
     send_setup_tag4, send_teardown_tag4, word_send_ours, word_send_raw, send_prepare_verify,
     send_verify, 0},
    {"texch_put",
     "G & L's total exchange: h/p ints to every process (itself too), a bsp_put each, bsp_sync",
     "memcpy of the same h/p ints into every process's area, raw barrier", "int", 0, 0, NULL, NULL,
     exchange_ours, exchange_raw, exchange_prepare_verify, exchange_verify, 1},
};
#define NBENCH ((int)(sizeof benches / sizeof benches[0]))

static mb_result g_results[NBENCH]; /* written by process 0 only */

/* ---- the measurement loop -------------------------------------------------------------- */

/* A round's time: the max over processes, all-gathered with bsp_put. */
static inline double max_over_processes(ctx_t *c, double t) {
  return bspk_max_over_processes(t, c->gather);
}

MB_DEFINE_TIMED_BATCH(timed_batch, ctx_t, bench_t, ours, raw, raw_barrier, max_over_processes)

static int is_tty_err;

static void progress(const ctx_t *c, const char *name, const char *what, int k, int n) {
  if (c->pid != 0) return;
  if (k > 0)
    fprintf(stderr, "%s[p=%d] %-16s round %d of %d%s", is_tty_err ? "\r" : "", c->p, name, k, n,
            is_tty_err ? "   " : "\n");
  else
    fprintf(stderr, "%s[p=%d] %-16s %s%s", is_tty_err ? "\r" : "", c->p, name, what,
            is_tty_err ? "          " : "\n");
  fflush(stderr);
}

static void show_round(const void *c, const char *name, int k, int rounds) {
  progress(c, name, "", k, rounds);
}

static void run_bench(ctx_t *c, int bi, int rounds, double target) {
  const bench_t *b = &benches[bi];
  mb_result *res = &g_results[bi];
  const mb_bench_run run = {timed_batch, c, b, b->name, show_round};
  double w0 = bspk_monotonic_seconds();

  if (b->setup) b->setup(c);

  /* warm-up: calibration runs, one untimed batch of each, and a correctness check */
  progress(c, b->name, "warm-up and calibration", 0, rounds);
  long n_ours = mb_calibrate(&run, 0, target, MAX_COUNT);
  long n_raw = mb_calibrate(&run, 1, target, MAX_COUNT);
  timed_batch(c, b, 0, n_ours);
  timed_batch(c, b, 1, n_raw);
  int verified = -1;
  if (b->verify) {
    b->prepare_verify(c);
    bsp_sync();
    b->ours(c, 1);
    int ok = b->verify(c);
    verified = bspk_max_over_processes(ok ? 0.0 : 1.0, c->gather) == 0.0;
  }

  res->n_ours = n_ours;
  res->n_raw = n_raw;
  res->messages_per_op = b->exchange ? c->xch.h : b->per_message ? c->words : 1;
  mb_alternate_rounds(&run, c->pid, rounds, res);

  if (b->teardown) b->teardown(c);
  bsp_sync();

  if (c->pid == 0) {
    res->verified = verified;
    mb_summarize(res);
    res->wall_s = bspk_monotonic_seconds() - w0;
    if (is_tty_err) fputc('\n', stderr);
    fprintf(stderr, "[p=%d] %-16s done in %.2f s%s\n", c->p, b->name, res->wall_s,
            verified == 0 ? "  (VERIFY FAILED)" : "");
  }
}

/* ---- machine description --------------------------------------------------------------- */

static int affinity_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* name(&res_s, &call_s): the smallest positive difference between successive readings of
 * a clock, and the cost of a reading, in seconds. `none` is larger than any difference;
 * `seconds` converts the clock's unit. A macro, so that each clock is read directly in the
 * loop (an indirect call would add to the cost measured). */
#define DEFINE_CLOCK_RESOLUTION(name, type, read_clock, none, seconds) \
  static void name(double *res_s, double *call_s) {                    \
    type best = none, prev = read_clock(), t0 = prev;                  \
    const int n = 200000;                                              \
    for (int i = 0; i < n; i++) {                                      \
      type t = read_clock();                                           \
      if (t > prev && t - prev < best) best = t - prev;                \
      prev = t;                                                        \
    }                                                                  \
    *res_s = best == none ? 0 : (double)best * seconds;                \
    *call_s = (double)(prev - t0) * seconds / n;                       \
  }
DEFINE_CLOCK_RESOLUTION(clock_resolution, int64_t, now_ns, INT64_MAX, 1e-9)
DEFINE_CLOCK_RESOLUTION(bsp_time_resolution, double, bsp_time, 1e9, 1.0)

/* ---- output ---------------------------------------------------------------------------- */

static const char *raw_barrier_name(void) { return g_use_spin ? "spin" : "pthread_barrier"; }

typedef struct {
  char date[64], host[256], cpu[256], kernel[512];
  int p, cores, bspk_cores, rounds;
  double target_s, clk_res, clk_call, bt_res, bt_call, wall_s;
} header_t;

static const char *unit_of(const bench_t *b) { return b->per_message || b->exchange ? "ns" : "us"; }
static double scale_of(const bench_t *b) { return b->per_message || b->exchange ? 1e9 : 1e6; }

static void print_table(const header_t *h) {
  printf("# bsp_microbench  library=%s (%s build)  backend=%s  p=%d  cores=%d%s\n", BENCH_LIB,
         BENCH_BUILD_TYPE, bspk_backend(), h->p, h->cores,
         h->p > h->cores ? " (oversubscribed)" : "");
  printf(
      "# raw barrier: %s%s;  rounds=%d  batch target=%.1f ms  W=%ld messages per batch  "
      "h=%ld ints\n",
      raw_barrier_name(),
      g_use_spin ? " (sense-reversing centralized, C11 atomics)"
                 : " (pthread_barrier_t: spinning is useless when p > cores)",
      h->rounds, h->target_s * 1e3, opts.words, opts.ints);
  printf(
      "# round time = max over processes; clock CLOCK_MONOTONIC resolution %.0f ns "
      "(%.0f ns/call), bsp_time resolution %.0f ns (%.0f ns/call)\n",
      h->clk_res * 1e9, h->clk_call * 1e9, h->bt_res * 1e9, h->bt_call * 1e9);
  printf("# %s  host=%s  cpu=%s  loadavg start: %s  end: %s\n", h->date, h->host, h->cpu,
         g_loadavg_start, g_loadavg_end);
  mb_print_table_head(16, 10);
  for (int i = 0; i < NBENCH; i++) {
    const bench_t *b = &benches[i];
    const mb_result *r = &g_results[i];
    if (!r->ran) continue;
    char unit[32], notes[256] = "";
    snprintf(unit, sizeof unit, "%s/%s", unit_of(b), b->per);
    size_t k = 0;
    if (b->bytes) {
      k += (size_t)mb_gbps_note(notes, sizeof notes, b->bytes, r);
      k += (size_t)snprintf(notes + k, sizeof notes - k, "; ");
    }
    if (b->exchange) {
      k += (size_t)mb_exchange_note(notes, sizeof notes, opts.ints, h->p, r);
      k += (size_t)snprintf(notes + k, sizeof notes - k, "; ");
    }
    if (r->verified == 0) k += (size_t)snprintf(notes + k, sizeof notes - k, "VERIFY FAILED; ");
    snprintf(notes + k, sizeof notes - k, "raw=%s", raw_barrier_name());
    mb_print_table_row(16, 10, b->name, h->p, r, scale_of(b), unit, notes);
  }
  fflush(stdout);
}

static int write_json(const char *path, const header_t *h) {
  FILE *f = mb_json_open(prog_name, path);
  if (!f) return 0;
  fprintf(f, "{\"record\":\"header\",\"program\":\"bsp_microbench\"");
  mb_json_field(f, "library", BENCH_LIB);
  mb_json_field(f, "build_type", BENCH_BUILD_TYPE);
  mb_json_field(f, "backend", bspk_backend());
  mb_json_field(f, "date", h->date);
  mb_json_field(f, "host", h->host);
  mb_json_field(f, "cpu_model", h->cpu);
  mb_json_field(f, "kernel", h->kernel);
  mb_json_field(f, "compiler", BENCH_COMPILER);
  fprintf(f, ",\"p\":%d,\"cores_available\":%d,\"bspk_cores\":%d", h->p, h->cores, h->bspk_cores);
  mb_json_field(f, "OPENBLAS_CORETYPE", getenv("OPENBLAS_CORETYPE"));
  mb_json_field(f, "loadavg_start", g_loadavg_start);
  mb_json_field(f, "loadavg_end", g_loadavg_end);
  mb_json_field(f, "raw_barrier", raw_barrier_name());
  fprintf(f,
          ",\"rounds\":%d,\"batch_target_s\":%.6g,\"words_per_batch\":%ld,\"block_bytes\":%d,"
          "\"exchange_ints\":%ld",
          h->rounds, h->target_s, opts.words, BLOCK_BYTES, opts.ints);
  fprintf(f,
          ",\"clock\":\"CLOCK_MONOTONIC\",\"clock_resolution_s\":%.6g,\"clock_call_s\":%.6g"
          ",\"bsp_time_resolution_s\":%.6g,\"bsp_time_call_s\":%.6g",
          h->clk_res, h->clk_call, h->bt_res, h->bt_call);
  fprintf(f,
          ",\"round_time\":\"max over processes of each process's batch time, all-gathered "
          "with bsp_put outside the timed region\",\"order\":\"ours first in even rounds, raw "
          "first in odd rounds\",\"wall_s\":%.3f}\n",
          h->wall_s);
  for (int i = 0; i < NBENCH; i++) {
    const bench_t *b = &benches[i];
    const mb_result *r = &g_results[i];
    if (!r->ran) continue;
    fprintf(f, "{\"record\":\"benchmark\"");
    mb_json_field(f, "name", b->name);
    fprintf(f, ",\"p\":%d", h->p);
    mb_json_field(f, "ours", b->help);
    mb_json_field(f, "raw", b->raw_help);
    mb_json_field(f, "raw_barrier", raw_barrier_name());
    mb_json_field(f, "per", b->per);
    fprintf(f,
            ",\"messages_per_op\":%ld,\"ops_per_batch_ours\":%ld,\"ops_per_batch_raw\":%ld"
            ",\"rounds\":%d,\"verified\":%s",
            r->messages_per_op, r->n_ours, r->n_raw, r->rounds,
            r->verified < 0 ? "null"
            : r->verified   ? "true"
                            : "false");
    fprintf(f, ",\"unit\":\"%s/%s\"", unit_of(b), b->per);
    mb_json_stats_and_ratio(f, r, scale_of(b));
    if (b->bytes) mb_json_gbps(f, b->bytes, r);
    if (b->exchange) mb_json_exchange(f, opts.ints, r);
    char ours_key[64], raw_key[64]; /* the samples in seconds per operation */
    snprintf(ours_key, sizeof ours_key, "samples_s_per_%s_ours", b->per);
    snprintf(raw_key, sizeof raw_key, "samples_s_per_%s_raw", b->per);
    mb_json_samples_and_end(f, ours_key, raw_key, r, 1.0);
  }
  return mb_json_close(prog_name, path, f);
}

/* ---- the SPMD part --------------------------------------------------------------------- */

static int g_exit_status;

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  double wall0 = bspk_monotonic_seconds();
  ctx_t ctx, *c = &ctx;
  memset(c, 0, sizeof *c);
  c->pid = bsp_pid();
  c->p = bsp_nprocs();
  c->left = (c->pid + c->p - 1) % c->p;
  c->right = (c->pid + 1) % c->p;
  c->words = opts.words;

  if (strcmp(bspk_backend(), "threads") != 0) {
    if (c->pid == 0)
      fprintf(stderr,
              "%s: needs the threads back end (raw counterparts use shared memory); "
              "this run uses '%s'\n",
              prog_name, bspk_backend());
    bsp_end();
    g_exit_status = 2;
    return;
  }
  if (c->p > MAXP) bsp_abort("%s: at most %d processes, not %d\n", prog_name, MAXP, c->p);

  /* buffers */
  c->area_bytes = BLOCK_BYTES;
  if ((size_t)c->words * 16 > c->area_bytes) c->area_bytes = (size_t)c->words * 16;
  if ((size_t)opts.ints * 4 > c->area_bytes) c->area_bytes = (size_t)opts.ints * 4;
  c->area_bytes = (c->area_bytes + 4095) / 4096 * 4096;
  c->src = mb_alloc_pages(prog_name, BLOCK_BYTES);
  c->dst = mb_alloc_pages(prog_name, BLOCK_BYTES);
  c->area_put = mb_alloc_pages(prog_name, c->area_bytes);
  c->area_get = mb_alloc_pages(prog_name, c->area_bytes);
  c->wsrc = mb_alloc_pages(prog_name, (size_t)c->words * sizeof(uint64_t));
  c->gather = mb_alloc_pages(prog_name, (size_t)c->p * sizeof(double));
  for (size_t i = 0; i < BLOCK_BYTES; i++) {
    c->src[i] = pattern(c->pid, i);
    c->area_get[i] = pattern(c->pid, i);
  }
  for (long i = 0; i < c->words; i++) c->wsrc[i] = word_of(c->pid, i);
  mb_exchange_layout(&c->xch, prog_name, opts.ints, c->pid, c->p);
  c->xsrc = mb_alloc_pages(prog_name, (size_t)opts.ints * 4);
  mb_exchange_fill(&c->xch, c->pid, c->p, c->xsrc);
  g_area_put[c->pid] = c->area_put;
  g_area_get[c->pid] = c->area_get;

  bsp_push_reg(c->gather, c->p * (bsp_size_t)sizeof(double));
  bsp_push_reg(c->area_put, (bsp_size_t)c->area_bytes);
  bsp_push_reg(c->area_get, (bsp_size_t)c->area_bytes);

  header_t h;
  memset(&h, 0, sizeof h);
  if (c->pid == 0) {
    g_use_spin = opt_raw_barrier == 1 || (opt_raw_barrier == 0 && c->p <= g_cores);
    spin_barrier_init(c->p);
    int e = pthread_barrier_init(&g_pbar, NULL, (unsigned)c->p);
    if (e) bsp_abort("%s: pthread_barrier_init: %s\n", prog_name, strerror(e));
    /* machine description and clock resolution (the others wait in the sync below) */
    mb_date_and_host(h.date, sizeof h.date, h.host, sizeof h.host);
    bspk_cpu_model(h.cpu, sizeof h.cpu);
    struct utsname u;
    if (uname(&u) == 0)
      snprintf(h.kernel, sizeof h.kernel, "%s %s %s %s", u.sysname, u.release, u.version,
               u.machine);
    else snprintf(h.kernel, sizeof h.kernel, "unknown");
    h.p = c->p;
    h.cores = g_cores;
    h.bspk_cores = bspk_cores();
    clock_resolution(&h.clk_res, &h.clk_call);
    bsp_time_resolution(&h.bt_res, &h.bt_call);
    is_tty_err = isatty(2);
  }
  bsp_sync(); /* registrations take effect; shared globals visible */

  int rounds = opts.rounds ? opts.rounds : opts.quick ? 7 : 21;
  if (!opts.rounds && c->p > g_cores)
    rounds = opts.quick ? 5 : 11; /* oversubscribed: keep the whole run short */
  double target = (opts.batch_ms > 0 ? opts.batch_ms : opts.quick ? 2.0 : 5.0) * 1e-3;
  if (c->pid == 0)
    fprintf(stderr, "%s: library %s, p=%d, cores=%d, raw barrier %s, %d rounds, batch %.1f ms\n",
            prog_name, BENCH_LIB, c->p, g_cores, raw_barrier_name(), rounds, target * 1e3);

  int failed = 0;
  for (int i = 0; i < NBENCH; i++)
    if (mb_selected(&opts, benches[i].name)) {
      run_bench(c, i, rounds, target);
      if (c->pid == 0 && g_results[i].verified == 0) failed = 1;
    }

  bsp_pop_reg(c->area_get);
  bsp_pop_reg(c->area_put);
  bsp_pop_reg(c->gather);
  bsp_sync();

  if (c->pid == 0) {
    mb_read_loadavg(g_loadavg_end, sizeof g_loadavg_end);
    h.rounds = rounds;
    h.target_s = target;
    h.wall_s = bspk_monotonic_seconds() - wall0;
    print_table(&h);
    if (opts.json && !write_json(opts.json, &h)) failed = 1;
    fprintf(stderr, "%s: p=%d finished in %.1f s\n", prog_name, c->p, h.wall_s);
    g_exit_status = failed ? 1 : 0;
  }
  bsp_sync();
  void *const buffers[] = {c->src, c->dst, c->area_put, c->area_get, c->wsrc, c->gather, c->xsrc};
  for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) free(buffers[i]);
  mb_exchange_free(&c->xch);
  bsp_end();
}

/* ---- main ------------------------------------------------------------------------------ */

static void describe(int i, const char **name, const char **ours, const char **raw) {
  *name = benches[i].name;
  *ours = benches[i].help;
  *raw = benches[i].raw_help;
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: bsprun -n P %s [options]\n"
      "\n"
      "Microbenchmarks of BSPlib (library: %s) against raw shared-memory counterparts, in one\n"
      "BSP run of P processes (threads back end only: the raw versions use the shared address\n"
      "space). Without bsprun, P is BSPKIT_NPROCS or the number of cores.\n"
      "\n"
      "Each benchmark is calibrated (batches of about the target time, --batch-ms), warmed up,\n"
      "checked for correct results once, and then timed in rounds that alternate the BSPlib\n"
      "version (ours) and the raw one (ours first in even rounds, raw first in odd ones). A\n"
      "round's time is the maximum over processes of each process's batch time (measured with\n"
      "CLOCK_MONOTONIC after aligning the processes; the per-process times are all-gathered\n"
      "with bsp_put outside the timed region). Reported: median per operation of ours and of\n"
      "raw, the ratio of medians (ours / raw), and the minimum and quartiles of each.\n"
      "\n"
      "The raw barrier is a sense-reversing centralized spin barrier (C11 atomics, pause\n"
      "instruction) when P <= cores, and a pthread_barrier_t when P > cores (spinning threads\n"
      "that outnumber the cores collapse); the table says which was used.\n"
      "\n"
      "Times are per barrier (sync, in us), per 1 MiB block (in us; also GB/s per process =\n"
      "2^20 bytes / median time), per message (in ns: the time of W messages and the sync\n"
      "that delivers them, and for sends their receipt, divided by W), or per integer (in ns:\n"
      "Gerbessiotis & Lee's t / h of a total exchange of h 32-bit integers a process; the\n"
      "notes give it in their unit, us per integer, and per 8-byte word). Every process\n"
      "moves the same amount at the same time, so p * GB/s is the total.\n"
      "\n"
      "Benchmarks (W = --words, default 100000; a process's right neighbour is pid+1 mod P):\n",
      prog_name, BENCH_LIB);
  mb_usage_benchmarks(f, 16, NBENCH, describe);
  fprintf(
      f,
      "  --json FILE        also write JSON lines to FILE: a header record (date, host, CPU\n"
      "                     model, kernel, compiler, p, cores, OPENBLAS_CORETYPE, load average\n"
      "                     at start and end, clock resolution, settings), then one record per\n"
      "                     benchmark with statistics and every per-round sample\n"
      "  --quick            fewer rounds (7, or 5 when P > cores) and 2 ms batches\n"
      "  --rounds N         rounds per benchmark (1..%d; default 21, or 11 when P > cores)\n"
      "  --batch-ms X       target duration of one timed batch in ms (default 5, quick 2)\n"
      "  --only NAME[,NAME] run only the named benchmarks (may be repeated)\n"
      "  --words W          messages per batch in the one-word benchmarks (default 100000)\n"
      "  --ints H           texch_put's h: 32-bit integers each process sends in all, H/p to\n"
      "                     every process including itself (default %ld)\n"
      "  --raw-barrier KIND raw barrier: auto (default), spin or pthread\n"
      "  --list             list the benchmark names and exit\n"
      "  -h, --help         show this help and exit\n"
      "\n"
      "Output: a table on stdout (times in us per barrier or block, ns per message or integer; "
      "GB/s per\n"
      "process for the 1 MiB blocks), progress on stderr. Exit status 0 on success, 1 when a\n"
      "result check failed or the JSON file could not be written, 2 on a usage error.\n",
      MB_MAX_ROUNDS, MB_DEFAULT_EXCHANGE_INTS);
}

MB_DEFINE_IS_BENCHMARK(known_bench, benches, NBENCH)

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  if (argc > 0 && argv[0]) {
    const char *s = strrchr(argv[0], '/');
    prog_name = s ? s + 1 : argv[0];
  }
  opts.prog = prog_name;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--list")) {
      for (int b = 0; b < NBENCH; b++) printf("%s\n", benches[b].name);
      return 0;
    } else if (mb_parse_option(&opts, argc, argv, &i)) {
      continue;
    } else if (!strcmp(a, "--raw-barrier")) {
      const char *v = mb_need_arg(prog_name, argc, argv, &i);
      if (!strcmp(v, "auto")) opt_raw_barrier = 0;
      else if (!strcmp(v, "spin")) opt_raw_barrier = 1;
      else if (!strcmp(v, "pthread")) opt_raw_barrier = 2;
      else mb_usage_error(prog_name, "bad --raw-barrier '%s' (auto, spin or pthread)", v);
    } else {
      mb_usage_error(prog_name, "unknown argument '%s'", a);
    }
  }
  mb_read_loadavg(g_loadavg_start, sizeof g_loadavg_start);
  g_cores = affinity_cores(); /* before bsp_begin: the library may pin its threads */
  spmd();
  return g_exit_status;
}
