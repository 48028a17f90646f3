/*
 * stream_bw - STREAM-style copy and triad (McCalpin's STREAM kernels, a[i] = b[i] and
 * a[i] = b[i] + s c[i] on doubles) on T threads at once, each on arrays of its own: the memory
 * bandwidth the machine offers, the reference of bench/run_rdxsort_bench.sh's sort rates.
 *
 *   stream_bw [--threads T] [--mib M] [-r R]
 *   prints: stream_bw threads=T mib_per_array=M reps=R copy_GBps=... triad_GBps=...
 *           copy_best_GBps=... triad_best_GBps=...
 *
 * Bytes counted as STREAM does: copy 2 x 8 bytes per element (one read, one write), triad 3 x
 * 8 (two reads, one write), summed over the threads; the write-allocate reads a cache brings in
 * are not counted. A repetition is timed from a common barrier until the last thread is done;
 * the rate is the median over R repetitions (copy_GBps, triad_GBps) and the best one
 * (*_best_GBps, STREAM's own report), after one untimed warm-up. Arrays of M MiB each (default
 * 64, beyond the last-level cache of the machines we run on), three per thread, touched by
 * their thread before timing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 1000

/* The loops as loops: GCC would turn the copy into a memcpy call, and glibc's memcpy streams
 * large copies past the caches, which a program's own loop does not. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_MEMCPY __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_MEMCPY __attribute__((noinline))
#endif

static NO_MEMCPY void copy(double *restrict a, const double *restrict b, size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = b[i];
}

static NO_MEMCPY void triad(double *restrict a, const double *restrict b, const double *restrict c,
                            double s, size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

typedef struct {
  int id, reps;
  size_t n;
  pthread_barrier_t *barrier;
  double *copy_s, *triad_s; /* thread 0 fills them: the time of each repetition */
  int failed;
} worker;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *run(void *arg) {
  worker *w = arg;
  size_t bytes = w->n * sizeof(double);
  double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  if (!a || !b || !c) w->failed = 1;
  else
    for (size_t i = 0; i < w->n; i++) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0; /* pages in */
  /* r = -1: the warm-up */
  for (int r = -1; r < w->reps; r++) {
    for (int kernel = 0; kernel < 2; kernel++) {
      pthread_barrier_wait(w->barrier);
      double t0 = now();
      if (!w->failed) {
        if (kernel == 0) copy(a, b, w->n);
        else triad(a, b, c, 3.0, w->n);
      }
      pthread_barrier_wait(w->barrier); /* every thread done */
      if (w->id == 0 && r >= 0) (kernel == 0 ? w->copy_s : w->triad_s)[r] = now() - t0;
    }
  }
  free(a);
  free(b);
  free(c);
  return NULL;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static long parse(const char *what, const char *text, long min, long max) {
  char *end = NULL;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || !*text || *end || v < min || v > max) {
    fprintf(stderr, "stream_bw: %s must be an integer from %ld to %ld, not '%s'\n", what, min, max,
            text ? text : "");
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  long threads = 1, mib = 64, reps = 5;
  for (int i = 1; i < argc; i++) {
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--threads")) threads = parse("--threads", value, 1, 1024);
    else if (!strcmp(argv[i], "--mib")) mib = parse("--mib", value, 1, 1L << 20);
    else if (!strcmp(argv[i], "-r") || !strcmp(argv[i], "--reps"))
      reps = parse("--reps", value, 1, MAX_REPS);
    else {
      fprintf(stderr, "usage: stream_bw [--threads T] [--mib M] [-r R] (unknown: '%s')\n", argv[i]);
      return 2;
    }
    i++;
  }
  size_t n = (size_t)mib * 1048576 / sizeof(double);
  double copy_s[MAX_REPS], triad_s[MAX_REPS];
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  worker *w = calloc((size_t)threads, sizeof *w);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  if (!w || !tid) {
    fprintf(stderr, "stream_bw: out of memory\n");
    return 1;
  }
  for (long t = 0; t < threads; t++) {
    w[t] = (worker){(int)t, (int)reps, n, &barrier, copy_s, triad_s, 0};
    if (t > 0 && pthread_create(&tid[t], NULL, run, &w[t])) {
      fprintf(stderr, "stream_bw: cannot start thread %ld\n", t);
      return 1;
    }
  }
  run(&w[0]);
  int failed = w[0].failed;
  for (long t = 1; t < threads; t++) {
    pthread_join(tid[t], NULL);
    failed |= w[t].failed;
  }
  if (failed) {
    fprintf(stderr, "stream_bw: out of memory for %ld x 3 arrays of %ld MiB\n", threads, mib);
    return 1;
  }
  double copy_bytes = 2.0 * 8.0 * (double)n * (double)threads;
  double triad_bytes = 3.0 * 8.0 * (double)n * (double)threads;
  double copy_med = median(copy_s, (int)reps), triad_med = median(triad_s, (int)reps);
  printf(
      "stream_bw threads=%ld mib_per_array=%ld reps=%ld copy_GBps=%.3f triad_GBps=%.3f "
      "copy_best_GBps=%.3f triad_best_GBps=%.3f\n",
      threads, mib, reps, copy_bytes / copy_med * 1e-9, triad_bytes / triad_med * 1e-9,
      copy_bytes / copy_s[0] * 1e-9, triad_bytes / triad_s[0] * 1e-9);
  free(w);
  free(tid);
  pthread_barrier_destroy(&barrier);
  return 0;
}
