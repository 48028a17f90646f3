/*
 * microbench_common.h - the harness that bsp_microbench.c (BSPlib on the threads back end
 * against raw shared memory) and mpi_microbench.c (the MPI back ends against raw MPI) share:
 * the common options, calibration of the batch size, the alternating rounds, their
 * statistics, the table rows and the JSON lines. Each program keeps what is its own: its
 * benchmarks and their checks, how a batch is aligned, timed and reduced over processes, its
 * progress lines and the header lines of its table and JSON.
 *
 * Timing: the timed region (read the clock, run the batch, read the clock) stays inside the
 * program's own batch function, which the harness calls between timed regions only; what is
 * timed is the same code as when each program had its own copy of the harness.
 * Header-only (static inline), one copy per program.
 */
#ifndef BSPKIT_MICROBENCH_COMMON_H
#define BSPKIT_MICROBENCH_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "bsp.h"
#include "bspk_clock.h"
#include "bspk_json.h"
#include "bspk_stats.h"

#define MB_MAX_ROUNDS 1001 /* most rounds one benchmark may run (--rounds) */
/* The largest h of the total exchange (--ints): its areas of 4 h bytes stay registrable
 * (bsp_size_t is an int). */
#define MB_MAX_EXCHANGE_INTS (1L << 28)
#define MB_DEFAULT_EXCHANGE_INTS 65536L

/* At least `bytes`, in whole pages, page-aligned and zeroed by the calling process, so that
 * its pages are first touched (and placed) by the thread that uses them. bsp_abort when
 * out of memory. */
static inline void *mb_alloc_pages(const char *prog, size_t bytes) {
  size_t size = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
  void *q = aligned_alloc(4096, size);
  if (!q) bsp_abort("%s: out of memory (%zu bytes) on process %d\n", prog, size, (int)bsp_pid());
  memset(q, 0, size);
  return q;
}

/* ---- the options both programs take ------------------------------------------------------ */

typedef struct {
  const char *prog;      /* the program's name in messages */
  const char *json;      /* --json FILE, NULL: none */
  int quick;             /* --quick */
  int rounds;            /* --rounds N; 0: the program's default */
  double batch_ms;       /* --batch-ms X; 0: the program's default */
  long words;            /* --words W (set the default before parsing) */
  long max_words;        /* the largest W accepted */
  long ints;             /* --ints H: the total exchange's h (set the default before parsing) */
  const char *only_hint; /* appended to the message about an unknown --only name */
  size_t only_size;      /* room for --only names, NUL included (<= sizeof only) */
  char only[1024];       /* --only NAME[,NAME] (repeatable): comma-separated, empty: all */
  int (*is_benchmark)(const char *name, size_t len);
} mb_options;

/* Defines `static int fn(const char *name, size_t len)`, the is_benchmark above: whether
 * name[0..len) names one of the n entries of table (each with a .name). */
#define MB_DEFINE_IS_BENCHMARK(fn, table, n)                                                    \
  static int fn(const char *name, size_t len) {                                                 \
    for (int i = 0; i < (n); i++)                                                               \
      if (strlen((table)[i].name) == len && strncmp((table)[i].name, name, len) == 0) return 1; \
    return 0;                                                                                   \
  }

/* "<prog>: <fmt with arg>" and a hint to --help on stderr; exit status 2. */
static inline void mb_usage_error(const char *prog, const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry '%s --help'.\n", prog);
  exit(2);
}

static inline const char *mb_need_arg(const char *prog, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) mb_usage_error(prog, "option %s needs an argument", argv[*i]);
  return argv[++*i];
}

static inline void mb_add_only(mb_options *o, const char *v) {
  for (const char *s = v; *s;) {
    size_t len = strcspn(s, ",");
    if (len && !o->is_benchmark(s, len)) {
      char fmt[128];
      snprintf(fmt, sizeof fmt, "unknown benchmark in --only '%%s'%s", o->only_hint);
      mb_usage_error(o->prog, fmt, v);
    }
    s += len + (s[len] == ',');
  }
  size_t used = strlen(o->only);
  if (used + strlen(v) + 2 > o->only_size) mb_usage_error(o->prog, "--only list too long: '%s'", v);
  if (used) strcat(o->only, ",");
  strcat(o->only, v);
}

/* When argv[*i] is one of the common options: takes it (and its value, advancing *i) and
 * returns 1; a bad value ends the program with a usage error. Else returns 0. */
static inline int mb_parse_option(mb_options *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  char *end;
  if (!strcmp(a, "--json")) {
    o->json = mb_need_arg(o->prog, argc, argv, i);
  } else if (!strcmp(a, "--quick")) {
    o->quick = 1;
  } else if (!strcmp(a, "--rounds")) {
    const char *v = mb_need_arg(o->prog, argc, argv, i);
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > MB_MAX_ROUNDS) mb_usage_error(o->prog, "bad --rounds '%s'", v);
    o->rounds = (int)n;
  } else if (!strcmp(a, "--batch-ms")) {
    const char *v = mb_need_arg(o->prog, argc, argv, i);
    double x = strtod(v, &end);
    if (*end || !(x > 0) || x > 10000) mb_usage_error(o->prog, "bad --batch-ms '%s'", v);
    o->batch_ms = x;
  } else if (!strcmp(a, "--words")) {
    const char *v = mb_need_arg(o->prog, argc, argv, i);
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > o->max_words) {
      char fmt[64];
      snprintf(fmt, sizeof fmt, "bad --words '%%s' (1..%ld)", o->max_words);
      mb_usage_error(o->prog, fmt, v);
    }
    o->words = n;
  } else if (!strcmp(a, "--ints")) {
    const char *v = mb_need_arg(o->prog, argc, argv, i);
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > MB_MAX_EXCHANGE_INTS) {
      char fmt[64];
      snprintf(fmt, sizeof fmt, "bad --ints '%%s' (1..%ld)", MB_MAX_EXCHANGE_INTS);
      mb_usage_error(o->prog, fmt, v);
    }
    o->ints = n;
  } else if (!strcmp(a, "--only")) {
    mb_add_only(o, mb_need_arg(o->prog, argc, argv, i));
  } else {
    return 0;
  }
  return 1;
}

/* The usage's list of the n benchmarks, two lines each (what ours and what raw does, as
 * describe(i, ...) tells), then the heading of the options. */
static inline void mb_usage_benchmarks(FILE *f, int name_width, int n,
                                       void (*describe)(int i, const char **name, const char **ours,
                                                        const char **raw)) {
  for (int i = 0; i < n; i++) {
    const char *name, *ours, *raw;
    describe(i, &name, &ours, &raw);
    fprintf(f, "  %-*s ours: %s\n  %-*s raw:  %s\n", name_width, name, ours, name_width, "", raw);
  }
  fputs("\nOptions:\n", f);
}

/* Whether --only lets benchmark `name` run. */
static inline int mb_selected(const mb_options *o, const char *name) {
  if (!o->only[0]) return 1;
  size_t n = strlen(name);
  for (const char *s = o->only; *s;) {
    size_t len = strcspn(s, ",");
    if (len == n && strncmp(s, name, n) == 0) return 1;
    s += len + (s[len] == ',');
  }
  return 0;
}

/* ---- Gerbessiotis & Lee's total exchange (the As suite) ----------------------------------- */

/* Seed 002_ed6c85674bf8f665.txt, line 133: "total-exchanges where each processor communicates
 * a total of h integers to every other processor (including itself)", timed as t, "the cost of
 * communication is considered to be t/h" (us per 32-bit integer, their Fig. 6, line 166); h is
 * what one process sends in all, as line 212 reads Fig. 6 at h = 4 n^2 / p, one round of
 * MatMul's two blocks of n^2 / p doubles. So h / p integers go to every process, the sender
 * included; when p does not divide h, the h mod p left over go one each to the processes that
 * follow the sender ((d - s) mod p < h mod p), so every process also receives h. The integers
 * from s land in d's area in the order of s, each pair's contiguously. */
typedef struct {
  long h;
  int *send_count;  /* p: integers to process d */
  int *send_offset; /* p: where they start in this process' source array */
  int *dest_offset; /* p: where they land in d's area */
  int *recv_count;  /* p: integers from process s */
  int *recv_offset; /* p: where they land in this process' area */
} mb_exchange;

/* d = each of the p processes, from `first` on, round the ring (the order of the sends). */
#define MB_FOR_EACH_PROCESS_FROM(first, p, d) \
  for (int d##_step = 0, d = (first); d##_step < (p); d##_step++, d = d + 1 == (p) ? 0 : d + 1)

static inline int mb_exchange_count(long h, int p, int s, int d) {
  return (int)(h / p + ((d - s + p) % p < h % p));
}

/* This process' layout of the exchange of h integers among p processes. */
static inline void mb_exchange_layout(mb_exchange *x, const char *prog, long h, int pid, int p) {
  x->h = h;
  int **arrays[] = {&x->send_count, &x->send_offset, &x->dest_offset, &x->recv_count,
                    &x->recv_offset};
  for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
    *arrays[a] = mb_alloc_pages(prog, (size_t)p * sizeof(int));
  for (int q = 0, sent = 0, received = 0; q < p; q++) {
    x->send_count[q] = mb_exchange_count(h, p, pid, q);
    x->send_offset[q] = sent;
    sent += x->send_count[q];
    x->recv_count[q] = mb_exchange_count(h, p, q, pid);
    x->recv_offset[q] = received;
    received += x->recv_count[q];
    x->dest_offset[q] = 0; /* what the processes before this one send q */
    for (int s = 0; s < pid; s++) x->dest_offset[q] += mb_exchange_count(h, p, s, q);
  }
}

static inline void mb_exchange_free(mb_exchange *x) {
  free(x->send_count);
  free(x->send_offset);
  free(x->dest_offset);
  free(x->recv_count);
  free(x->recv_offset);
}

/* Integer j of those process s sends process d: never 0 (what a cleared area holds), and
 * different for different (s, d, j) but for the rare collisions of a 32-bit hash. */
static inline uint32_t mb_exchange_value(int s, int d, long j) {
  uint64_t x = ((uint64_t)(unsigned)s << 46) ^ ((uint64_t)(unsigned)d << 28) ^ (uint64_t)j;
  x = (x + 1) * 0x9e3779b97f4a7c15ULL;
  uint32_t v = (uint32_t)(x >> 32) ^ (uint32_t)x;
  return v ? v : 1;
}

/* This process' h integers to send, by destination. */
static inline void mb_exchange_fill(const mb_exchange *x, int pid, int p, uint32_t *src) {
  for (int d = 0; d < p; d++)
    for (int j = 0; j < x->send_count[d]; j++)
      src[x->send_offset[d] + j] = mb_exchange_value(pid, d, j);
}

/* Whether `area` holds what every process sent this one; else a line on stderr saying which
 * integer differs ("<prog>: process <pid>: <what>: ..."). */
static inline int mb_exchange_check(const mb_exchange *x, const char *prog, const char *what,
                                    int pid, int p, const uint32_t *area) {
  for (int s = 0; s < p; s++)
    for (int j = 0; j < x->recv_count[s]; j++) {
      uint32_t got = area[x->recv_offset[s] + j], want = mb_exchange_value(s, pid, j);
      if (got != want) {
        fprintf(stderr,
                "%s: process %d: %s: integer %d of the %d from process %d is %#x, expected "
                "%#x\n",
                prog, pid, what, j, x->recv_count[s], s, got, want);
        return 0;
      }
    }
  return 1;
}

/* ---- calibration and the timed rounds ------------------------------------------------------ */

/* Defines `static double name(void *ctx, const void *bench, int raw, long count)`, a
 * program's timed batch (mb_bench_run.batch) on its types ctx_type and bench_type: align the
 * processes (align_raw(c) before a raw batch, bsp_sync before ours), read the clock, run
 * `count` operations (b->raw_fn or b->ours_fn), read the clock, and return
 * max_over_processes(c, t) of this process's time t. A macro, so that the aligning, the batch
 * and the clock are called directly in the timed region, as in a hand-written copy. */
#define MB_DEFINE_TIMED_BATCH(name, ctx_type, bench_type, ours_fn, raw_fn, align_raw, \
                              max_over_processes)                                     \
  static double name(void *ctx, const void *bench, int raw, long count) {             \
    ctx_type *c = ctx;                                                                \
    const bench_type *b = bench;                                                      \
    if (raw) align_raw(c);                                                            \
    else bsp_sync();                                                                  \
    double t0 = bspk_monotonic_seconds();                                             \
    (raw ? b->raw_fn : b->ours_fn)(c, count);                                         \
    double t = bspk_monotonic_seconds() - t0;                                         \
    return max_over_processes(c, t);                                                  \
  }

/* One benchmark of a program, as the harness drives it. */
typedef struct {
  /* The program's timed batch: align the processes, time `count` operations of ours
   * (raw = 0) or raw, return the max over processes (the same on every process). */
  double (*batch)(void *ctx, const void *bench, int raw, long count);
  void *ctx;
  const void *bench;
  const char *name;
  /* The program's progress line before round k (1-based) of `rounds`. */
  void (*show_round)(const void *ctx, const char *name, int k, int rounds);
} mb_bench_run;

/* Operations per batch for about `target` seconds, the same on every process (every
 * decision uses the max over processes). Grows the count until a batch takes half the
 * target, then times that count twice more and scales by the fastest of the three, so that
 * a disturbance (another program taking a core) does not shrink the batches. */
static inline long mb_calibrate(const mb_bench_run *run, int raw, double target, long max_count) {
  long count = 1;
  double t;
  for (;;) {
    t = run->batch(run->ctx, run->bench, raw, count);
    if (t >= 0.5 * target || count >= max_count) break;
    double f = t > 0 ? target / t : 16;
    f = f > 16 ? 16 : f < 2 ? 2 : f;
    count = (long)((double)count * f);
    if (count > max_count) count = max_count;
  }
  for (int k = 0; k < 2; k++) {
    double t2 = run->batch(run->ctx, run->bench, raw, count);
    if (t2 < t) t = t2;
  }
  double n = t > 0 ? (double)count * target / t : (double)count;
  return n < 1 ? 1 : n > max_count ? max_count : (long)(n + 0.5);
}

/* What one benchmark measured (kept on process 0). */
typedef struct {
  int ran;
  int verified;         /* 1: checked and right, 0: checked and WRONG, -1: not checked */
  long n_ours, n_raw;   /* operations per timed batch */
  long messages_per_op; /* 1, or W in the one-word benchmarks */
  int rounds;
  double ours[MB_MAX_ROUNDS], raw[MB_MAX_ROUNDS]; /* seconds per operation (per message) */
  stats_t so, sr;
  double wall_s;
} mb_result;

/* The timed rounds: ours and raw alternate, ours first in even rounds and raw first in odd
 * ones, so that a slow phase of the machine falls on both alike. Process 0 keeps each
 * round's time per operation, divided by res->messages_per_op, in res->ours and res->raw. */
static inline void mb_alternate_rounds(const mb_bench_run *run, int pid, int rounds,
                                       mb_result *res) {
  for (int k = 0; k < rounds; k++) {
    run->show_round(run->ctx, run->name, k + 1, rounds);
    for (int j = 0; j < 2; j++) {
      int raw = (k & 1) ^ j;
      long n = raw ? res->n_raw : res->n_ours;
      double t = run->batch(run->ctx, run->bench, raw, n);
      if (pid == 0)
        (raw ? res->raw : res->ours)[k] = t / ((double)n * (double)res->messages_per_op);
    }
  }
  res->rounds = rounds;
}

/* Min, quartiles and max of the rounds (process 0, after mb_alternate_rounds). */
static inline void mb_summarize(mb_result *res) {
  double sorted[MB_MAX_ROUNDS];
  memcpy(sorted, res->ours, (size_t)res->rounds * sizeof *sorted);
  bspk_sort_doubles(sorted, res->rounds);
  res->so = stats_of_sorted(sorted, res->rounds);
  memcpy(sorted, res->raw, (size_t)res->rounds * sizeof *sorted);
  bspk_sort_doubles(sorted, res->rounds);
  res->sr = stats_of_sorted(sorted, res->rounds);
  res->ran = 1;
}

/* ---- the machine -------------------------------------------------------------------------- */

/* The first line of /proc/loadavg, or "unknown". */
static inline void mb_read_loadavg(char *buf, size_t n) {
  snprintf(buf, n, "unknown");
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  if (fgets(buf, (int)n, f)) buf[strcspn(buf, "\n")] = 0;
  fclose(f);
}

/* The local date and time (ISO 8601 with the UTC offset) and the host name. */
static inline void mb_date_and_host(char *date, size_t date_size, char *host, size_t host_size) {
  time_t t = time(NULL);
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(date, date_size, "%Y-%m-%dT%H:%M:%S%z", &tm);
  if (gethostname(host, host_size) != 0) snprintf(host, host_size, "unknown");
  host[host_size - 1] = 0;
}

/* ---- the table ---------------------------------------------------------------------------- */

/* The column heads; name_width and unit_width are the widths of the first and the unit
 * columns, which differ between the programs. */
static inline void mb_print_table_head(int name_width, int unit_width) {
  printf("%-*s %3s %10s %10s %7s %10s %10s %10s %10s %10s %10s  %-*s %s\n", name_width, "benchmark",
         "p", "ours_med", "raw_med", "ratio", "ours_min", "ours_q1", "ours_q3", "raw_min", "raw_q1",
         "raw_q3", unit_width, "unit", "notes");
}

/* One benchmark's row: its times times scale (e.g. 1e6 for us) in `unit`. */
static inline void mb_print_table_row(int name_width, int unit_width, const char *name, int p,
                                      const mb_result *r, double scale, const char *unit,
                                      const char *notes) {
  printf("%-*s %3d %10.3f %10.3f %7.2f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f  %-*s %s\n",
         name_width, name, p, r->so.med * scale, r->sr.med * scale, r->so.med / r->sr.med,
         r->so.min * scale, r->so.q1 * scale, r->so.q3 * scale, r->sr.min * scale, r->sr.q1 * scale,
         r->sr.q3 * scale, unit_width, unit, notes);
}

/* The bandwidth note of a benchmark that moves `bytes` per process per operation; returns
 * the length written, as snprintf does. */
static inline int mb_gbps_note(char *buf, size_t n, double bytes, const mb_result *r) {
  return snprintf(buf, n, "GB/s per process: ours %.2f raw %.2f", bytes / r->so.med * 1e-9,
                  bytes / r->sr.med * 1e-9);
}

/* The note of a total exchange's row (its columns in ns per integer): h, and G & L's t / h in
 * their unit, us per 32-bit integer (Fig. 6), and per 8-byte word (two integers), medians.
 * Returns the length, as snprintf. */
static inline int mb_exchange_note(char *buf, size_t n, long h, int p, const mb_result *r) {
  char pair[64];
  if (h % p == 0) snprintf(pair, sizeof pair, "%ld", h / p);
  else snprintf(pair, sizeof pair, "%ld or %ld", h / p, h / p + 1);
  return snprintf(buf, n,
                  "h=%ld ints (%s per pair); t/h: ours %.6f raw %.6f us/int, ours %.6f raw "
                  "%.6f us/8-byte word",
                  h, pair, 1e6 * r->so.med, 1e6 * r->sr.med, 2e6 * r->so.med, 2e6 * r->sr.med);
}

/* ,"h_ints":h and G & L's t / h, medians: "us_per_int_ours", .._raw, "us_per_word_ours",
 * .._raw (an 8-byte word is two integers). */
static inline void mb_json_exchange(FILE *f, long h, const mb_result *r) {
  fprintf(f,
          ",\"h_ints\":%ld,\"us_per_int_ours\":%.6g,\"us_per_int_raw\":%.6g,"
          "\"us_per_word_ours\":%.6g,\"us_per_word_raw\":%.6g",
          h, 1e6 * r->so.med, 1e6 * r->sr.med, 2e6 * r->so.med, 2e6 * r->sr.med);
}

/* ---- JSON lines --------------------------------------------------------------------------- */

/* The JSON-lines file at path, or NULL with a message. */
static inline FILE *mb_json_open(const char *prog, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
  return f;
}

/* Closes it; 0 with a message when the data did not reach the file. */
static inline int mb_json_close(const char *prog, const char *path, FILE *f) {
  if (fclose(f) == 0) return 1;
  fprintf(stderr, "%s: error writing %s\n", prog, path);
  return 0;
}

/* ,"key":"value" (null for NULL). */
static inline void mb_json_field(FILE *f, const char *key, const char *value) {
  fprintf(f, ",\"%s\":", key);
  bspk_json_write_string(f, value);
}

/* ,"ours_stats":{..},"raw_stats":{..},"ratio_of_medians":x with the times times scale. */
static inline void mb_json_stats_and_ratio(FILE *f, const mb_result *r, double scale) {
  json_stats(f, "ours_stats", r->so, scale);
  json_stats(f, "raw_stats", r->sr, scale);
  fprintf(f, ",\"ratio_of_medians\":%.6g", r->so.med / r->sr.med);
}

static inline void mb_json_gbps(FILE *f, double bytes, const mb_result *r) {
  fprintf(f, ",\"GBps_per_process_ours\":%.6g,\"GBps_per_process_raw\":%.6g",
          bytes / r->so.med * 1e-9, bytes / r->sr.med * 1e-9);
}

/* ,"<ours_key>":[..],"<raw_key>":[..] (every round's sample times scale), ,"wall_s":..} and
 * the end of the line. */
static inline void mb_json_samples_and_end(FILE *f, const char *ours_key, const char *raw_key,
                                           const mb_result *r, double scale) {
  fprintf(f, ",\"%s\":[", ours_key);
  for (int k = 0; k < r->rounds; k++) fprintf(f, "%s%.6g", k ? "," : "", r->ours[k] * scale);
  fprintf(f, "],\"%s\":[", raw_key);
  for (int k = 0; k < r->rounds; k++) fprintf(f, "%s%.6g", k ? "," : "", r->raw[k] * scale);
  fprintf(f, "],\"wall_s\":%.3f}\n", r->wall_s);
}

#endif /* BSPKIT_MICROBENCH_COMMON_H */
