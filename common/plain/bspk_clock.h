/*
 * bspk_clock.h - the clock every bspkit program times with (part of common/plain/, see
 * common/README.md).
 *
 * CLOCK_MONOTONIC: never steps back when the date is set, so differences are durations.
 * clock_gettime is POSIX: build with _GNU_SOURCE or _POSIX_C_SOURCE >= 199309L (as the
 * programs here do); a header cannot set that for the file that includes it.
 */
#ifndef BSPK_CLOCK_H
#define BSPK_CLOCK_H

#include <time.h>

/* Seconds since an arbitrary fixed point; only differences mean anything. */
static inline double bspk_monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The CPU time of the calling thread (a process of the threads back end is one), in seconds;
 * -1 where the clock cannot be read. */
static inline double bspk_thread_cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif /* BSPK_CLOCK_H */
