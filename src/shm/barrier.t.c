/*
 * barrier.t.c - unit test of the shared-memory engines' barrier: nobody leaves a round before
 * everyone has arrived, every arrival gets the flags ORed over that round and the count of
 * arrivals marked "at end", round after round; with spinning, with yielding and with
 * sleeping at once (spin and yield limits 0), and with more threads than cores.
 */
#include "shm/barrier.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 2000
#define MAX_THREADS 8

static bspk_barrier barrier;
static int nthreads;
static _Atomic int arrived[ROUNDS];
static _Atomic int failures;

/* What thread t hands in at round r, chosen so that the OR and the count vary. */
static unsigned flags_of(int t, int r) { return (r + t) % 3 == 0 ? 1u << ((r + t) % 9) : 0; }
static int at_end_of(int t, int r) { return (r * 7 + t) % 5 == 0; }

static void *run(void *arg) {
  int t = (int)(long)arg;
  uint32_t epoch = 0;
  for (int r = 0; r < ROUNDS; r++) {
    arrived[r]++;
    int n_at_end = -1;
    unsigned flags =
        bspk_barrier_arrive(&barrier, &epoch, flags_of(t, r), at_end_of(t, r), &n_at_end);
    unsigned want_flags = 0;
    int want_at_end = 0;
    for (int u = 0; u < nthreads; u++) {
      want_flags |= flags_of(u, r);
      want_at_end += at_end_of(u, r);
    }
    if (arrived[r] != nthreads || flags != want_flags || n_at_end != want_at_end) {
      if (failures++ < 5)
        fprintf(stderr,
                "p=%d round %d thread %d: %d arrived, flags %#x (want %#x), at end %d (want %d)\n",
                nthreads, r, t, (int)arrived[r], flags, want_flags, n_at_end, want_at_end);
    }
  }
  return NULL;
}

static void run_case(int threads, long spin, long yield) {
  nthreads = threads;
  for (int r = 0; r < ROUNDS; r++) arrived[r] = 0;
  bspk_barrier_init(&barrier, threads, spin, yield, 0);
  pthread_t tid[MAX_THREADS];
  for (long t = 0; t < threads; t++) pthread_create(&tid[t], NULL, run, (void *)t);
  for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
}

int main(void) {
  const int counts[] = {1, 2, 3, 8};
  const long limits[][2] = {{200000, 100}, {100, 100}, {0, 0}};
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 3; l++)
      if (limits[l][0] < 1000 || counts[c] <= 2) /* long spins only where each thread has a core */
        run_case(counts[c], limits[l][0], limits[l][1]);
  if (failures) {
    fprintf(stderr, "barrier.t: %d failure(s)\n", (int)failures);
    return 1;
  }
  printf("barrier.t: all rounds passed\n");
  return 0;
}
