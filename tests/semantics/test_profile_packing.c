/* test_profile_packing.c - packing and idle time in the superstep profile (BSPKIT_PROFILE,
 * docs/profile-format.md), as Horvitz & Bisseling's breakdown reads them (bspkit profile).
 * Superstep 1: process s computes IMBALANCE_S * s, packs for PACK_S inside a marked region
 * (bspk_profile_packing_begin/_end, with a nested region and a put inside: counted once),
 * then puts and sends outside it (the library times those itself). Superstep 2 moves the
 * messages out, opens a region and syncs inside it: the region's parts before and after the
 * sync are packing of supersteps 2 and 3, the sync itself is not (the processes arrive
 * IMBALANCE_S apart, the last first). Every span is slept for on the wall clock (compute_s
 * is wall time): a sleeping process leaves the cores to the others, so the spans hold also
 * where processes share cores.
 * Process 0 reads the file after bsp_end and checks, per process and for the run: pack_s,
 * the program's part of it, compute_s - pack_s, and the idle time mean_s(max compute -
 * compute_s) against what was waited for: at least the sleep, at most the span each process
 * measured around it (a sleep may overrun on a busy machine) plus the library's own calls.
 * With --unbalanced FILE, it ends a region it never began: an error while profiling.
 * Usage: test_profile_packing --profile FILE | --unbalanced FILE */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bsp.h"
#include "bspkit.h"

#define IMBALANCE_S 0.03
#define PACK_S 0.015
#define PUTS 50
/* What a span may exceed its sleep by: a thread that waited for a core after its deadline
 * (a busy machine), and the library's own calls. */
#define SLACK_S 0.012

static const char *profile_path;
static int unbalanced;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The spans as this process measured them (its sleeps may overrun on a busy machine, above all
 * under a sanitizer): the profile is checked against these, each process' written to a file of
 * its own before bsp_end and read by process 0 after it. Index: the superstep. */
typedef struct {
  double imbalance[3]; /* the sleep before the region (supersteps 1 and 2) */
  double region[4];    /* the marked region's part in the superstep (1, 2, 3) */
  double compute1;     /* superstep 1 from the sync's return to the next sync */
} spans_t;
static _Thread_local spans_t spans;

static void spans_path(char *path, size_t size, int pid) {
  snprintf(path, size, "%s.spans.%d", profile_path, pid);
}

static void write_spans(int pid) {
  char path[4096];
  spans_path(path, sizeof path, pid);
  FILE *f = fopen(path, "w");
  if (!f) return; /* process 0 reports the missing file */
  fprintf(f, "%.9f %.9f %.9f %.9f %.9f %.9f\n", spans.imbalance[1], spans.imbalance[2],
          spans.region[1], spans.region[2], spans.region[3], spans.compute1);
  fclose(f);
}

static int read_spans(int pid, spans_t *m) {
  char path[4096];
  spans_path(path, sizeof path, pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int n = fscanf(f, "%lf %lf %lf %lf %lf %lf", &m->imbalance[1], &m->imbalance[2], &m->region[1],
                 &m->region[2], &m->region[3], &m->compute1);
  fclose(f);
  remove(path);
  return n == 6;
}

static void sleep_until(double t) {
  struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  if (unbalanced) bspk_profile_packing_end();
  int s = bsp_pid(), p = bsp_nprocs();
  static _Thread_local double area[PUTS];
  bsp_push_reg(area, sizeof area);
  bsp_size_t tag = sizeof(int);
  bsp_set_tagsize(&tag);
  bsp_sync();

  /* superstep 1 */
  spans_t *m = &spans;
  double start = now_s();
  sleep_until(start + IMBALANCE_S * s);
  double t = now_s();
  m->imbalance[1] = t - start;
  bspk_profile_packing_begin();
  bspk_profile_packing_begin(); /* nested: the outer region counts */
  double x = s;
  bsp_put((s + 1) % p, &x, area, 0, sizeof x); /* inside a region: the region's time */
  sleep_until(now_s() + PACK_S);
  bspk_profile_packing_end();
  bspk_profile_packing_end();
  m->region[1] = now_s() - t;
  for (int i = 0; i < PUTS; i++) bsp_put((s + 1) % p, &x, area, i * (int)sizeof x, sizeof x);
  bsp_send((s + 1) % p, &s, area, sizeof area);
  m->compute1 = now_s() - start;
  bsp_sync();

  /* superstep 2: unpacking, then a region open across the sync */
  int status, got;
  bsp_get_tag(&status, &got);
  bsp_move(area, status);
  t = now_s();
  sleep_until(t + IMBALANCE_S * (p - 1 - s));
  m->imbalance[2] = now_s() - t;
  t = now_s();
  bspk_profile_packing_begin();
  sleep_until(now_s() + PACK_S);
  m->region[2] = now_s() - t;
  bsp_sync();
  t = now_s();
  sleep_until(now_s() + PACK_S); /* superstep 3, ended by bsp_end */
  bspk_profile_packing_end();
  m->region[3] = now_s() - t;
  bsp_pop_reg(area);
  write_spans(s);
  bsp_end();
}

static int failures;
#define CHECK(cond, ...)                     \
  do {                                       \
    if (!(cond)) {                           \
      fprintf(stderr, "FAIL: " __VA_ARGS__); \
      fputc('\n', stderr);                   \
      failures++;                            \
    }                                        \
  } while (0)

/* The number after "key": in a record line, or -1 where the key is missing. */
static double number_of(const char *line, const char *key) {
  char quoted[64];
  snprintf(quoted, sizeof quoted, "\"%s\": ", key);
  const char *at = strstr(line, quoted);
  return at ? atof(at + strlen(quoted)) : -1.0;
}

enum { STEPS = 4, MAX_P = 64 };
typedef struct {
  double compute, pack, marked, direct, sync;
} span;

static void read_profile(int p, span rec[STEPS][MAX_P]) {
  FILE *f = fopen(profile_path, "r");
  if (!f) {
    fprintf(stderr, "FAIL: the profile %s was not written\n", profile_path);
    exit(1);
  }
  int seen = 0;
  char line[1 << 14];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "{\"type\": \"superstep\"", 20) != 0) continue;
    int pid = (int)number_of(line, "pid"), step = (int)number_of(line, "step");
    if (pid < 0 || pid >= p || step < 0 || step >= STEPS) {
      CHECK(0, "a superstep record of process %d, step %d: %s", pid, step, line);
      continue;
    }
    rec[step][pid] = (span){number_of(line, "compute_s"), number_of(line, "pack_s"),
                            number_of(line, "pack_marked_s"), number_of(line, "direct_s"),
                            number_of(line, "sync_s")};
    seen++;
  }
  fclose(f);
  CHECK(seen == STEPS * p, "%d superstep records, expected %d", seen, STEPS * p);
}

static void within(const char *what, int pid, int step, double got, double low, double high) {
  CHECK(got >= low && got <= high, "process %d superstep %d: %s %.6f s, expected %.6f .. %.6f", pid,
        step, what, got, low, high);
}

static void check_profile(int p) {
  static span rec[STEPS][MAX_P];
  static spans_t m[MAX_P];
  read_profile(p, rec);
  for (int s = 0; s < p; s++)
    if (!read_spans(s, &m[s])) {
      CHECK(0, "process %d's measured spans (%s.spans.%d) were not written", s, profile_path, s);
      return;
    }
  /* Each span is at least what was slept and at most what the process measured, plus SLACK_S
   * for the library's own calls around it. */
  double idle = 0, measured_idle = 0, max_compute = 0, max_measured = 0;
  for (int s = 0; s < p; s++) {
    const span *r = &rec[1][s];
    /* the marked region and the puts and the send after it; nothing moved at the call */
    within("pack_s", s, 1, r->pack, PACK_S, m[s].region[1] + SLACK_S);
    within("pack_marked_s", s, 1, r->marked, PACK_S, r->pack);
    within("direct_s", s, 1, r->direct, 0, 0);
    within("compute_s - pack_s", s, 1, r->compute - r->pack, IMBALANCE_S * s,
           m[s].imbalance[1] + SLACK_S);
    if (r->compute > max_compute) max_compute = r->compute;
    if (m[s].compute1 > max_measured) max_measured = m[s].compute1;
    /* bsp_move's copy (the library's), then the region up to the sync (not the wait in it) */
    within("pack_s", s, 2, rec[2][s].pack, PACK_S, m[s].region[2] + SLACK_S);
    within("pack_marked_s", s, 2, rec[2][s].marked, PACK_S, rec[2][s].pack);
    within("compute_s - pack_s", s, 2, rec[2][s].compute - rec[2][s].pack,
           IMBALANCE_S * (p - 1 - s), m[s].imbalance[2] + SLACK_S);
    /* the region after the sync: the sync's time is not packing */
    within("pack_s", s, 3, rec[3][s].pack, PACK_S, m[s].region[3] + SLACK_S);
    within("pack_s", s, 3, rec[3][s].pack, 0, rec[3][s].compute);
    for (int step = 0; step < STEPS; step++)
      within("pack_s", s, step, rec[step][s].pack, 0, rec[step][s].compute);
  }
  /* Horvitz & Bisseling's idle time: the mean wait for the slowest process' computation, against
   * the same mean of the computations the processes measured */
  for (int s = 0; s < p; s++) {
    idle += (max_compute - rec[1][s].compute) / p;
    measured_idle += (max_measured - m[s].compute1) / p;
  }
  CHECK(idle >= measured_idle - SLACK_S && idle <= measured_idle + SLACK_S,
        "superstep 1: idle %.6f s, measured %.6f +- %.3f", idle, measured_idle, SLACK_S);
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    unbalanced |= strcmp(argv[i], "--unbalanced") == 0;
    if (strcmp(argv[i], "--profile") == 0 || strcmp(argv[i], "--unbalanced") == 0)
      profile_path = argv[i + 1];
  }
  if (!profile_path) {
    fprintf(stderr, "usage: test_profile_packing --profile FILE | --unbalanced FILE\n");
    return 2;
  }
  setenv("BSPKIT_PROFILE", profile_path, 1); /* before bsp_init: every process starts here */
  bsp_init(spmd, argc, argv);
  spmd();
  int p = bsp_nprocs();
  if (p > MAX_P) {
    fprintf(stderr, "test_profile_packing handles at most %d processes\n", MAX_P);
    return 2;
  }
  check_profile(p);
  if (failures) return 1;
  printf("test_profile_packing: %d processes, packing and idle as waited for\n", p);
  return 0;
}
