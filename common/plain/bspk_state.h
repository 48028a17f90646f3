/*
 * bspk_state.h - the machine's state beside a measurement (part of common/plain/, see
 * common/README.md): did each process hold its core while it was timed, and if not, who took it?
 *
 * A timing on a shared machine mixes two things: what the library and the hardware cost, and
 * what other programs (or the hypervisor) took from us meanwhile. The evidence that separates
 * them, read before and after a timed batch:
 *   per process (a few microseconds: clock_gettime, getrusage, one small /proc file):
 *     - its CPU time (the calling thread's CPU clock) against the wall time: the share of the
 *       batch it actually ran;
 *     - the time it was runnable but waited for a core (the scheduler's run delay,
 *       /proc/thread-self/schedstat): the direct evidence that another task had its core;
 *     - its involuntary context switches: how often the scheduler took its core away;
 *     - the core it ran on at the end (and whether that changed during the batch);
 *   machine-wide (process 0 only: it reads two files, tens of microseconds):
 *     - the VM's stolen time (/proc/stat, summed over the cores, in seconds);
 *     - CPU pressure (/proc/pressure/cpu "some": time in which some task was runnable and
 *       waited for a core), in seconds;
 *     - the runnable tasks at the end (/proc/stat procs_running, ourselves included).
 * Where the kernel does not offer one (no PSI, not Linux) the value is negative: "unknown".
 *
 * And what no scheduler counter shows: a process that holds its core may still run slower
 * because the core's clock dropped, or a sibling hyperthread or the other guests of the socket
 * share its pipeline, caches or memory bandwidth. A *canary* (bspk_canary_seconds) is a fixed
 * piece of work timed on every process right before and after a batch, outside its timing:
 * the same work every time, so a canary slower than its usual time says the machine was
 * slower then (issue 39).
 * The JSON object that bspprobe, the drivers and the profile write from these is described in
 * docs/probe-format.md ("The machine's state").
 */
#ifndef BSPK_STATE_H
#define BSPK_STATE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bspk_clock.h"

/* One process (thread) at one moment. */
typedef struct {
  /* CLOCK_MONOTONIC before and after the counters below were read: a delta's wall time runs
   * from one state's wall_s to the next one's wall_end_s, so it holds every wait the counters
   * saw (a thread preempted between reading its run delay and the clock would otherwise count a
   * wait outside the window: run delay above the wall time) */
  double wall_s, wall_end_s;
  double cpu_s;    /* this thread's CPU clock */
  double waited_s; /* time runnable but waiting for a core so far (schedstat); -1 unknown */
  long involuntary, voluntary; /* context switches so far (RUSAGE_THREAD) */
  int cpu;                     /* the core it is on now; -1 unknown */
  double canary_s; /* the canary's time taken with this state (bspk_canary_seconds); -1 none */
} bspk_thread_state;

/* The machine at one moment; negative: unknown. */
typedef struct {
  double steal_s;        /* stolen time so far, summed over the cores */
  double cpu_pressure_s; /* PSI cpu "some" total so far */
  int running;           /* runnable tasks now (ourselves included) */
} bspk_machine_counters;

/* What one process did during a batch: the difference of two bspk_thread_state. */
typedef struct {
  double wall_s, cpu_s, waited_s;
  long involuntary;
  int cpu_end, migrated; /* migrated: the core at the end differs from the one at the start */
  double canary_before_s, canary_after_s; /* the canary before and after the batch; -1 none */
} bspk_thread_delta;

/* The run delay of the calling thread: the 2nd field of /proc/thread-self/schedstat (ns); -1
 * where the kernel has no schedstat (CONFIG_SCHED_INFO off) or no /proc. */
static inline double bspk_thread_waited_s(void) {
  double waited = -1.0;
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  if (!f) return waited;
  unsigned long long run_ns, delay_ns;
  if (fscanf(f, "%llu %llu", &run_ns, &delay_ns) == 2) waited = 1e-9 * (double)delay_ns;
  fclose(f);
  return waited;
}

static inline bspk_thread_state bspk_thread_state_now(void) {
  bspk_thread_state s;
  s.wall_s = bspk_monotonic_seconds();
  s.waited_s = bspk_thread_waited_s();
  s.cpu_s = bspk_thread_cpu_seconds();
  s.involuntary = s.voluntary = -1;
#ifdef RUSAGE_THREAD
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) {
    s.involuntary = ru.ru_nivcsw;
    s.voluntary = ru.ru_nvcsw;
  }
#endif
#ifdef __linux__
  s.cpu = sched_getcpu();
#else
  s.cpu = -1;
#endif
  s.canary_s = -1.0;
  s.wall_end_s = bspk_monotonic_seconds();
  return s;
}

static inline bspk_thread_delta bspk_thread_delta_of(bspk_thread_state a, bspk_thread_state b) {
  bspk_thread_delta d;
  d.wall_s = b.wall_end_s - a.wall_s;
  d.cpu_s = (a.cpu_s >= 0 && b.cpu_s >= 0) ? b.cpu_s - a.cpu_s : -1.0;
  d.waited_s = (a.waited_s >= 0 && b.waited_s >= 0) ? b.waited_s - a.waited_s : -1.0;
  d.involuntary = (a.involuntary >= 0 && b.involuntary >= 0) ? b.involuntary - a.involuntary : -1;
  d.cpu_end = b.cpu;
  d.migrated = (a.cpu >= 0 && b.cpu >= 0) ? a.cpu != b.cpu : -1;
  d.canary_before_s = a.canary_s;
  d.canary_after_s = b.canary_s;
  return d;
}

/* A delta as BSPK_STATE_WORDS doubles, for the gather of every process's delta to process 0
 * (bsp_put of a double array), and back. */
#define BSPK_STATE_WORDS 8
static inline void bspk_thread_delta_pack(bspk_thread_delta d, double *v) {
  v[0] = d.wall_s;
  v[1] = d.cpu_s;
  v[2] = d.waited_s;
  v[3] = (double)d.involuntary;
  v[4] = (double)d.cpu_end;
  v[5] = (double)d.migrated;
  v[6] = d.canary_before_s;
  v[7] = d.canary_after_s;
}
static inline bspk_thread_delta bspk_thread_delta_unpack(const double *v) {
  bspk_thread_delta d = {v[0], v[1], v[2], (long)v[3], (int)v[4], (int)v[5], v[6], v[7]};
  return d;
}

/* ---- the canary ------------------------------------------------------------------------------
 *
 * A fixed amount of work: BSPK_CANARY_PASSES passes over a buffer of BSPK_CANARY_BYTES (128 KiB:
 * in the L2 cache of every core of this century, so that what a batch left in the shared caches
 * does not change it), one load and one store per 64-byte line, each line's value folded into a
 * dependent chain of integer multiplies and shifts. Its time follows the core's clock and
 * pipeline (another guest or a sibling hyperthread on the core) and the core's private caches.
 * It is timed twice back to back and the canary's time is the shorter: the first also brings
 * the buffer back after a batch that evicted it, and an interrupt or a tick that hits one does
 * not count. About 2 x 25 us on a 4 GHz core. The buffer is the caller's (bspk_canary_buffer),
 * one per process: the processes must not share lines. work > 1 runs the passes that many
 * times (the test hook BSPKIT_CANARY_SLOW plants a slowdown with it). A 1 MiB buffer (past
 * L2) was tried first: after a batch of 8 MiB per process its time rose 1.2-2x in 75% of the
 * batches, two timings or not (the caches were full of the batch's dirty lines). */
#define BSPK_CANARY_BYTES ((size_t)128 << 10)
#define BSPK_CANARY_PASSES 8

static inline uint64_t bspk_canary_pass(volatile uint64_t *buf, uint64_t x) {
  const size_t words = BSPK_CANARY_BYTES / sizeof *buf;
  for (size_t i = 0; i < words; i += 8) { /* one word per 64-byte line */
    uint64_t v = buf[i];
    x ^= v + i;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    buf[i] = v + (x & 1); /* stored back: the work has an effect the compiler must keep */
  }
  return x;
}

/* The canary's time in seconds (the shorter of two timings, each `work` times the fixed
 * work); -1 without a buffer. */
static inline double bspk_canary_seconds(uint64_t *buf, int work) {
  if (!buf) return -1.0;
  double best = -1.0;
  uint64_t x = buf[1];
  for (int timing = 0; timing < 2; timing++) {
    double t0 = bspk_monotonic_seconds();
    for (int w = 0; w < (work > 1 ? work : 1) * BSPK_CANARY_PASSES; w++)
      x = bspk_canary_pass(buf, x);
    double t = bspk_monotonic_seconds() - t0;
    if (best < 0 || t < best) best = t;
  }
  buf[0] += x & 1; /* the chain's result is kept too */
  return best;
}

/* A canary buffer (malloc'd, filled, and the canary run over it a few times, so that the first
 * canary timed finds it as later ones do; NULL when out of memory: then no canary is taken). */
static inline uint64_t *bspk_canary_buffer(void) {
  uint64_t *buf = (uint64_t *)malloc(BSPK_CANARY_BYTES);
  if (!buf) return NULL;
  for (size_t i = 0; i < BSPK_CANARY_BYTES / sizeof *buf; i++) buf[i] = (uint64_t)i * 2654435761u;
  for (int i = 0; i < 4; i++) bspk_canary_seconds(buf, 1);
  return buf;
}

/* The test hook (tests/python/test_noise.py): BSPKIT_CANARY_SLOW=N makes the canary around
 * the caller's N-th batch (counted from 0: bspprobe's batches in the order it times them, a
 * driver's repetitions) do three times its work, a planted slowdown. -1 when not set. */
static inline long bspk_canary_slow_batch(void) {
  const char *v = getenv("BSPKIT_CANARY_SLOW");
  if (!v || !*v) return -1;
  char *end;
  long n = strtol(v, &end, 10);
  return *end == 0 && n >= 0 ? n : -1;
}

static inline bspk_machine_counters bspk_machine_counters_now(void) {
  bspk_machine_counters m = {-1.0, -1.0, -1};
  FILE *f = fopen("/proc/stat", "r");
  if (f) {
    char line[512];
    long tick = sysconf(_SC_CLK_TCK);
    while (fgets(line, sizeof line, f)) {
      unsigned long long v[8];
      if (strncmp(line, "cpu ", 4) == 0 &&
          sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                 &v[4], &v[5], &v[6], &v[7]) == 8 &&
          tick > 0)
        m.steal_s = (double)v[7] / (double)tick; /* the 8th field: steal */
      else if (strncmp(line, "procs_running ", 14) == 0) m.running = atoi(line + 14);
    }
    fclose(f);
  }
  f = fopen("/proc/pressure/cpu", "r");
  if (f) {
    char line[256];
    if (fgets(line, sizeof line, f) && strncmp(line, "some ", 5) == 0) {
      const char *t = strstr(line, "total=");
      if (t) m.cpu_pressure_s = 1e-6 * strtod(t + 6, NULL);
    }
    fclose(f);
  }
  return m;
}

/* b - a, or -1 where either is unknown. */
static inline double bspk_counter_delta(double a, double b) {
  return a >= 0 && b >= 0 ? b - a : -1.0;
}

/* The cores online (the denominator of the steal share), or -1. */
static inline int bspk_cores_online(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : -1;
}

/* The state object of docs/probe-format.md ("The machine's state") as JSON text, malloc'd (the
 * caller frees it; NULL when out of memory): the p processes' deltas d[0..p) of one batch and
 * the machine's counters before (a) and after (b) it. Unknown values are null. */
static inline char *bspk_state_json(const bspk_thread_delta *d, int p, bspk_machine_counters a,
                                    bspk_machine_counters b) {
  size_t cap = 320 + (size_t)p * 144, n = 0;
  char *s = (char *)malloc(cap);
  if (!s) return NULL;
#define BSPK_STATE_ADD(...) (n += (size_t)snprintf(s + n, n < cap ? cap - n : 0, __VA_ARGS__))
  double wall = 0;
  for (int i = 0; i < p; i++)
    if (d[i].wall_s > wall) wall = d[i].wall_s;
  BSPK_STATE_ADD("{\"wall_s\": %.6g", wall);
  /* one list per quantity, p entries in pid order, null where unknown */
#define BSPK_STATE_LIST(key, known, fmt, value)                \
  do {                                                         \
    BSPK_STATE_ADD(", \"" key "\": [");                        \
    for (int i = 0; i < p; i++)                                \
      (known) ? BSPK_STATE_ADD("%s" fmt, i ? ", " : "", value) \
              : BSPK_STATE_ADD("%snull", i ? ", " : "");       \
    BSPK_STATE_ADD("]");                                       \
  } while (0)
  BSPK_STATE_LIST("cpu_s", d[i].cpu_s >= 0, "%.6g", d[i].cpu_s);
  BSPK_STATE_LIST("waited_s", d[i].waited_s >= 0, "%.6g", d[i].waited_s);
  BSPK_STATE_LIST("involuntary", d[i].involuntary >= 0, "%ld", d[i].involuntary);
  BSPK_STATE_LIST("cpus", d[i].cpu_end >= 0, "%d", d[i].cpu_end);
  BSPK_STATE_LIST("migrated", d[i].migrated >= 0, "%s", d[i].migrated ? "true" : "false");
  int canary = 0; /* the canary's lists only where some process timed it */
  for (int i = 0; i < p; i++) canary |= d[i].canary_before_s >= 0 || d[i].canary_after_s >= 0;
  if (canary) {
    BSPK_STATE_LIST("canary_before_s", d[i].canary_before_s >= 0, "%.4g", d[i].canary_before_s);
    BSPK_STATE_LIST("canary_after_s", d[i].canary_after_s >= 0, "%.4g", d[i].canary_after_s);
  }
#undef BSPK_STATE_LIST
  double steal = bspk_counter_delta(a.steal_s, b.steal_s);
  double pressure = bspk_counter_delta(a.cpu_pressure_s, b.cpu_pressure_s);
  BSPK_STATE_ADD(", \"steal_s\": ");
  steal >= 0 ? BSPK_STATE_ADD("%.6g", steal) : BSPK_STATE_ADD("null");
  BSPK_STATE_ADD(", \"cpu_pressure_s\": ");
  pressure >= 0 ? BSPK_STATE_ADD("%.6g", pressure) : BSPK_STATE_ADD("null");
  BSPK_STATE_ADD(", \"running\": ");
  b.running >= 0 ? BSPK_STATE_ADD("%d", b.running) : BSPK_STATE_ADD("null");
  BSPK_STATE_ADD(", \"cores_online\": %d}", bspk_cores_online());
#undef BSPK_STATE_ADD
  if (n >= cap) { /* cannot happen with the estimate above; never write a cut object */
    free(s);
    return NULL;
  }
  return s;
}

/* The state object of one process from `start` (its thread state) and `machine_start` (the
 * machine's counters then) until now: what a single process timed alone records. */
static inline char *bspk_state_json_since(bspk_thread_state start,
                                          bspk_machine_counters machine_start) {
  bspk_thread_delta ran = bspk_thread_delta_of(start, bspk_thread_state_now());
  return bspk_state_json(&ran, 1, machine_start, bspk_machine_counters_now());
}

#endif /* BSPK_STATE_H */
