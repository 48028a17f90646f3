/*
 * checkpoint_bench.c - what a checkpoint costs: the time of bspk_checkpoint against bsp_sync,
 * each process saving M MiB of protected memory (bench/run_checkpoint_bench.sh runs it
 * beside dd and fio on the same directory).
 *
 *   bsprun -n P --checkpoint-dir DIR checkpoint_bench [--mib M] [--count K] [--gap S]
 *
 * --gap S: S seconds of sleep after each checkpoint (default 0), time for the background
 * writer to finish, so that the time of bspk_checkpoint is what the program waits for (the
 * staging copy); BSPKIT_CHECKPOINT_BACKGROUND=0 times the write itself (the bandwidth, as
 * bench/run_checkpoint_bench.sh does).
 *
 * Prints one line: p, MiB per process, the median and minimum over K checkpoints of the time
 * of one bspk_checkpoint on process 0 (it finishes last: it writes the manifest), the same for
 * bsp_sync, and the write bandwidth p * M MiB / median.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <bsp.h>
#include <bspkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long mib = 64, count = 5;
static double gap;

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  size_t bytes = (size_t)mib << 20;
  unsigned char *state = malloc(bytes);
  if (!state) bsp_abort("checkpoint_bench: out of memory for %ld MiB\n", mib);
  /* Data that does not compress or repeat, written once: the pages are all resident. */
  unsigned long long x = 0x9e3779b97f4a7c15ULL * (unsigned long long)(bsp_pid() + 1);
  for (size_t i = 0; i < bytes; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    memcpy(state + i, &x, 8);
  }
  bspk_checkpoint_protect(state, (bsp_size_t)bytes);
  bspk_checkpoint_resume();
  double *ckpt = calloc((size_t)count, sizeof *ckpt), *sync = calloc((size_t)count, sizeof *sync);
  int saved = 0;
  for (long k = 0; k < count; k++) {
    bsp_sync();
    double t = bsp_time();
    saved += bspk_checkpoint();
    ckpt[k] = bsp_time() - t;
    if (gap > 0) {
      struct timespec pause = {(time_t)gap, (long)((gap - (double)(time_t)gap) * 1e9)};
      nanosleep(&pause, NULL);
    }
    bsp_sync();
    t = bsp_time();
    bsp_sync();
    sync[k] = bsp_time() - t;
  }
  if (bsp_pid() == 0) {
    double c = median_of(ckpt, count), s = median_of(sync, count);
    printf(
        "p %d mib_per_process %ld checkpoints %d/%ld checkpoint_med_s %.6f checkpoint_min_s "
        "%.6f sync_med_s %.3g write_MBps %.1f\n",
        bsp_nprocs(), mib, saved, count, c, ckpt[0], s,
        (double)bsp_nprocs() * (double)bytes / c / 1e6);
  }
  bspk_checkpoint_unprotect(state);
  free(state);
  free(ckpt);
  free(sync);
  bsp_end();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) mib = atol(argv[++i]);
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = atol(argv[++i]);
    else if (strcmp(argv[i], "--gap") == 0 && i + 1 < argc) gap = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: checkpoint_bench [--mib M] [--count K] [--gap S]\n");
      return 2;
    }
  }
  if (mib < 1 || count < 1) {
    fprintf(stderr, "checkpoint_bench: --mib and --count must be at least 1\n");
    return 2;
  }
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
