/*
 * measure_hw.c - the section hw: what the hardware itself does, measured in the same run as
 * the library, so that a report can say "sync = 2.0x the raw barrier, put = 1.3x memcpy"
 * (issue 29). Part of bspprobe (see probe.h for the files' order); the records (`memcpy_h`,
 * `hw_barrier`, `hw_pingpong`) are described in docs/probe-format.md.
 *
 * - memcpy_h: for each h of the g grid (c*h* <= H_MAX), every process copies h words from its
 *   communication area src to its area dst (the buffers the h-relations use, so as hot as
 *   theirs), after a common bsp_sync; timed as a g point (timing.c bspp_time_point: the same
 *   warm-ups and repetition rule, the max over processes).
 * - hw_barrier: a sense-reversing spin barrier (one counter, one flag, C11 atomics) among the
 *   p BSP processes themselves, on the cores they run on: only where they share memory (the
 *   threads back end), and only when every process can have a core (a spinner that waits for
 *   a descheduled one measures the scheduler). Timed as a latency test: batches of rounds.
 * - hw_pingpong: one cache line passed back and forth between two cores (a round trip per
 *   call): between processes 0 and 1 where they share memory, or (p = 1, any back end)
 *   between process 0 and a thread of its own pinned to another core.
 * What is not measured gets a record with `skipped` (the reason) and no samples.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

/* ---- memcpy in the h-relation's regime --------------------------------------------------------
 */

/* The distinct h = c*h* of the planned grid, ascending; returns their number. */
static int grid_hs(const probe_ctx *c, long *hs, int cap) {
  long m[64], k[64];
  int nm, nk, n = 0;
  bspp_plan_grid_axes(c, m, &nm, k, &nk);
  for (int a = 0; a < nm; a++)
    for (int b = 0; b < nk; b++) {
      long h = m[a] * k[b];
      if (h > c->hmax) continue;
      int seen = 0;
      for (int i = 0; i < n && !seen; i++) seen = hs[i] == h;
      if (!seen && n < cap) hs[n++] = h;
    }
  for (int i = 1; i < n; i++) /* insertion sort */
    for (int j = i; j > 0 && hs[j - 1] > hs[j]; j--) {
      long t = hs[j];
      hs[j] = hs[j - 1];
      hs[j - 1] = t;
    }
  return n;
}

static void op_memcpy_h(probe_ctx *c, const void *arg) {
  long h = *(const long *)arg;
  memcpy(c->dst, c->src, (size_t)h * WORD_BYTES);
  c->sink = c->sink + c->dst[h - 1];
}

static void measure_memcpy_h(probe_ctx *c) {
  long hs[64 * 64];
  int n = grid_hs(c, hs, (int)(sizeof hs / sizeof hs[0]));
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  for (int i = 0; i < n; i++) {
    char what[96];
    snprintf(what, sizeof what, "hw memcpy h=%ld", hs[i]);
    bspp_progress(c, what, i, n, i == 0);
    int warm, stop = -1;
    double ci_rel = -1;
    int reps = bspp_time_point_adaptive(c, op_memcpy_h, &hs[i], out, &warm, &ci_rel, &stop);
    if (c->s == 0) {
      jbuf *j = &c->j;
      bspp_json_begin(j, "memcpy_h");
      bspp_json_int(j, "h", hs[i]);
      bspp_json_int(j, "bytes", hs[i] * WORD_BYTES);
      bspp_json_int(j, "procs", c->p);
      bspp_json_nums(j, "samples_s", out, reps, "%.6g");
      bspp_json_int(j, "reps", reps);
      bspp_json_int(j, "warmup", warm);
      bspp_json_adaptive(j, ci_rel, stop);
      bspp_json_str(j, "note",
                    "every process copies h words from its area src to its area dst (the "
                    "h-relations' buffers, reused: hot) after a common bsp_sync; timed as a g "
                    "point, sample = max over processes");
      bspp_emit(c);
    }
  }
  free(out);
}

/* ---- shared memory: the barrier and the ping-pong ----------------------------------------------
 */

typedef struct {
  alignas(128) atomic_int count; /* arrivals still expected in this round */
  alignas(128) atomic_int sense; /* flips when a round completes */
  alignas(128) atomic_long ball; /* the ping-pong's cache line: odd = ping, even = pong */
  alignas(128) atomic_int stop;  /* the helper thread's end (p = 1) */
} hw_shared;

typedef struct {
  hw_shared *sh;
  int *sense;  /* this process's sense of the barrier */
  long *round; /* this process's ping-pong round */
  int p;
} hw_op;

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static hw_shared *shared_new(int p) {
  hw_shared *sh = aligned_alloc(128, sizeof *sh);
  if (!sh) bsp_abort("bspprobe: out of memory (%zu bytes)\n", sizeof *sh);
  atomic_init(&sh->count, p);
  atomic_init(&sh->sense, 0);
  atomic_init(&sh->ball, 0);
  atomic_init(&sh->stop, 0);
  return sh;
}

/* One round of the sense-reversing barrier: the last to arrive resets the count and flips
 * the flag; the others spin on the flag. */
static void op_barrier(probe_ctx *c, const void *arg) {
  (void)c;
  const hw_op *o = arg;
  int s = !*o->sense;
  *o->sense = s;
  if (atomic_fetch_sub_explicit(&o->sh->count, 1, memory_order_acq_rel) == 1) {
    atomic_store_explicit(&o->sh->count, o->p, memory_order_relaxed);
    atomic_store_explicit(&o->sh->sense, s, memory_order_release);
  } else {
    while (atomic_load_explicit(&o->sh->sense, memory_order_acquire) != s) relax();
  }
}

/* One round trip: process 0 writes an odd value and waits for the next; the other side
 * (process 1, or the helper thread) answers each odd value with the next. */
static void ping(hw_shared *sh, long *round) {
  long v = 2 * (*round)++ + 1;
  atomic_store_explicit(&sh->ball, v, memory_order_release);
  while (atomic_load_explicit(&sh->ball, memory_order_acquire) != v + 1) relax();
}

static void op_pingpong(probe_ctx *c, const void *arg) {
  const hw_op *o = arg;
  if (c->s == 0) {
    ping(o->sh, o->round);
  } else if (c->s == 1) {
    long v = 2 * (*o->round)++ + 1;
    while (atomic_load_explicit(&o->sh->ball, memory_order_acquire) != v) relax();
    atomic_store_explicit(&o->sh->ball, v + 1, memory_order_release);
  }
}

/* The helper of p = 1: pinned to a core other than `avoid`, answers pings until stop. */
typedef struct {
  hw_shared *sh;
  int avoid;
  atomic_int cpu; /* where it runs; -1: no other core; -2: not yet known */
} helper_arg;

static void *helper_main(void *argp) {
  helper_arg *a = argp;
  int cpu = -1;
#ifdef __linux__
  long online = sysconf(_SC_NPROCESSORS_CONF);
  for (int k = 0; k < CPU_SETSIZE && k < online && cpu < 0; k++) {
    if (k == a->avoid) continue;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(k, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0) cpu = k;
  }
#endif
  atomic_store(&a->cpu, cpu);
  if (cpu < 0) return NULL;
  long expect = 1;
  for (;;) {
    long v = atomic_load_explicit(&a->sh->ball, memory_order_acquire);
    if (v == expect) {
      atomic_store_explicit(&a->sh->ball, v + 1, memory_order_release);
      expect += 2;
    } else if (atomic_load_explicit(&a->sh->stop, memory_order_relaxed)) {
      return NULL;
    } else {
      relax();
    }
  }
}

/* The pointer `sh` of process 0, on every process (they share memory): one superstep. */
static hw_shared *share_pointer(probe_ctx *c, hw_shared *sh) {
  _Static_assert(sizeof(hw_shared *) <= sizeof(double), "a pointer fits in a double's bytes");
  double bits = 0;
  if (c->s == 0) {
    memcpy(&bits, &sh, sizeof sh);
    for (int t = 0; t < c->p; t++) bsp_put(t, &bits, c->allv, 0, sizeof bits);
  }
  bsp_sync();
  hw_shared *out;
  memcpy(&out, &c->allv[0], sizeof out);
  return out;
}

/* The core each process runs on (sched_getcpu; -1 unknown), on process 0: cpus[p]. */
static void gather_cpus(probe_ctx *c, double *cpus) {
  int n = c->p <= c->gather_stride ? c->p : c->gather_stride;
  for (int i = 0; i < n; i++) c->local[i] = -1;
#ifdef __linux__
  if (c->s < n) c->local[c->s] = sched_getcpu();
#endif
  bspp_gather_max(c, c->local, n, cpus);
}

static void write_skipped(probe_ctx *c, const char *type, const char *why) {
  if (c->s != 0) return;
  jbuf *j = &c->j;
  bspp_json_begin(j, type);
  bspp_json_int(j, "procs", c->p);
  bspp_json_str(j, "skipped", why);
  bspp_emit(c);
}

static void write_latency(probe_ctx *c, const char *type, const double *out, int n, long batch,
                          const double *cpus, int ncpus, const char *between, const char *note) {
  jbuf *j = &c->j;
  bspp_json_begin(j, type);
  bspp_json_int(j, "procs", c->p);
  bspp_json_nums(j, "samples_s", out, n, "%.6g");
  bspp_json_int(j, "batch", batch);
  bspp_json_nums(j, "cpus", cpus, ncpus, "%.0f");
  if (between) bspp_json_str(j, "between", between);
  bspp_json_str(j, "note", note);
  bspp_emit(c);
}

/* Whether the processes are threads of one program (bspkit's threads back end). */
static int processes_share_memory(void) {
#ifdef BSPKIT_EXTENSIONS
  return strcmp(bspk_backend(), "threads") == 0;
#else
  return 0;
#endif
}

static void measure_barrier(probe_ctx *c, int shared) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  char why[256];
  if (c->p == 1) {
    write_skipped(c, "hw_barrier", "p = 1: no other process to wait for");
    return;
  }
  if (!shared) {
    write_skipped(c, "hw_barrier",
                  "the processes do not share memory (back end not threads): no spin barrier "
                  "among them");
    return;
  }
  if (online > 0 && c->p > online) {
    snprintf(why, sizeof why,
             "p = %d > %ld cores online: a spin barrier among processes that share cores "
             "measures the scheduler",
             c->p, online);
    write_skipped(c, "hw_barrier", why);
    return;
  }
  bspp_progress(c, "hw barrier", 0, 1, 1);
  hw_shared *own = c->s == 0 ? shared_new(c->p) : NULL;
  int sense = 0;
  long round = 0;
  hw_op o = {share_pointer(c, own), &sense, &round, c->p};
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  double *cpus = xmalloc((size_t)c->gather_stride * sizeof *cpus);
  long batch;
  int n = bspp_time_batched(c, op_barrier, &o, c->prm.l_samples, out, &batch);
  gather_cpus(c, cpus);
  if (c->s == 0)
    write_latency(c, "hw_barrier", out, n, batch, cpus, c->p <= c->gather_stride ? c->p : 0, NULL,
                  "a sense-reversing spin barrier (one atomic counter, one flag on its own cache "
                  "line, C11 atomics, pause while spinning) among the p processes, each on its "
                  "own thread and core as the library runs them; a sample = batch rounds / "
                  "batch, max over processes");
  bsp_sync(); /* nobody touches the barrier any more */
  free(cpus);
  free(out);
  free(own);
}

static void measure_pingpong(probe_ctx *c, int shared) {
  const char *note =
      "one cache line (one atomic 8-byte word) written by one side and answered by the other "
      "(acquire/release, pause while spinning); a sample = the time of batch round trips / "
      "batch, max over processes";
  if (c->p > 1 && !shared) {
    write_skipped(c, "hw_pingpong",
                  "the processes do not share memory (back end not threads): no cache line "
                  "between them");
    return;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && c->p > online) {
    char why[256];
    snprintf(why, sizeof why,
             "p = %d > %ld cores online: processes 0 and 1 may share a core (the round trip "
             "would measure the scheduler)",
             c->p, online);
    write_skipped(c, "hw_pingpong", why);
    return;
  }
  bspp_progress(c, "hw ping-pong", 0, 1, 1);
  double *out = xmalloc((size_t)c->gather_stride * sizeof *out);
  double cpus[2] = {-1, -1};
  long batch = 0;
  int n = 0;
  long round = 0;
  if (c->p > 1) {
    hw_shared *own = c->s == 0 ? shared_new(c->p) : NULL;
    hw_op o = {share_pointer(c, own), NULL, &round, c->p};
    n = bspp_time_batched(c, op_pingpong, &o, c->prm.l_samples, out, &batch);
    double *all = xmalloc((size_t)c->gather_stride * sizeof *all);
    gather_cpus(c, all);
    if (c->s == 0) {
      cpus[0] = all[0];
      cpus[1] = all[1];
      write_latency(c, "hw_pingpong", out, n, batch, cpus, 2, "processes 0 and 1", note);
    }
    free(all);
    bsp_sync();
    free(own);
  } else {
    /* p = 1: process 0 and a thread of its own on another core; process 0 is pinned to the
     * core it is on for the time of the measurement */
    int me = -1;
#ifdef __linux__
    cpu_set_t saved;
    int have_saved = sched_getaffinity(0, sizeof saved, &saved) == 0;
    me = sched_getcpu();
    if (me >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(me, &one);
      sched_setaffinity(0, sizeof one, &one);
    }
#endif
    hw_shared *sh = shared_new(1);
    helper_arg ha = {sh, me, -2};
    pthread_t th;
    int started = pthread_create(&th, NULL, helper_main, &ha) == 0;
    int cpu = -1;
    if (started) {
      while ((cpu = atomic_load(&ha.cpu)) == -2) sched_yield();
    }
    if (cpu >= 0) {
      hw_op o = {sh, NULL, &round, 1};
      n = bspp_time_batched(c, op_pingpong, &o, c->prm.l_samples, out, &batch);
    }
    atomic_store(&sh->stop, 1);
    if (started) pthread_join(th, NULL);
    free(sh);
#ifdef __linux__
    if (have_saved) sched_setaffinity(0, sizeof saved, &saved);
#endif
    if (cpu < 0) {
      write_skipped(c, "hw_pingpong",
                    started ? "p = 1 and no second core for a thread of process 0"
                            : "p = 1 and no thread could be started");
    } else {
      cpus[0] = me;
      cpus[1] = cpu;
      write_latency(c, "hw_pingpong", out, n, batch, cpus, 2, "process 0 and a thread of its own",
                    note);
    }
  }
  free(out);
}

void bspp_measure_hw(probe_ctx *c) {
  int shared = processes_share_memory();
  measure_memcpy_h(c);
  measure_barrier(c, shared);
  measure_pingpong(c, shared);
}
