/*
 * bspalg.c - cost accounting, repetitions and JSON output shared by the algorithm drivers
 * (see bspalg.h and docs/algorithm-output.md).
 */
#include "bspalg.h"

#include <bsp.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bspk_alloc.h"
#include "bspk_json.h"
#include "bspk_spmd.h"
#include "bspk_stats.h"
#include "bspalg_library.h"

/* One superstep's counts on this process. The words this process moved are kept per peer
 * (out_to: its puts and sends; in_from: its gets), so that process 0 can rebuild the whole
 * p x p traffic matrix and take h = max(sent, received) for every process (eq. 2.1), and
 * h_inout = sent + received (eq. 2.2). */
typedef struct {
  double work;
  double requests; /* requests issued to other processes */
  const char *primitive, *pattern;
} step_counts;

/* Per process: on the threads back end the processes are threads of one program. */
static _Thread_local struct {
  int active, p, pid;
  int steps, capacity; /* records closed by bspalg_sync, and room for them */
  step_counts *step;   /* capacity + 1 entries: step[steps] is the open one */
  double *out_to;      /* (capacity + 1) x p words */
  double *in_from;     /* (capacity + 1) x p words */
  double *sync_s;      /* per repetition: seconds inside bsp_sync (the last sync_cap) */
  int reps_seen, sync_cap;
} acc;

static void *xrealloc(void *ptr, size_t bytes) { return bspk_xrealloc("bspalg", ptr, bytes); }

static void clear_step(int k) {
  acc.step[k] = (step_counts){0.0, 0.0, NULL, NULL};
  memset(acc.out_to + (size_t)k * acc.p, 0, (size_t)acc.p * sizeof *acc.out_to);
  memset(acc.in_from + (size_t)k * acc.p, 0, (size_t)acc.p * sizeof *acc.in_from);
}

static void grow(int capacity) {
  size_t n = (size_t)capacity + 1, p = (size_t)acc.p;
  acc.step = xrealloc(acc.step, n * sizeof *acc.step);
  acc.out_to = xrealloc(acc.out_to, n * p * sizeof *acc.out_to);
  acc.in_from = xrealloc(acc.in_from, n * p * sizeof *acc.in_from);
  acc.capacity = capacity;
}

void bspalg_counters_begin(void) {
  acc.p = bsp_nprocs();
  acc.pid = bsp_pid();
  acc.capacity = 0;
  acc.step = NULL;
  acc.out_to = acc.in_from = NULL;
  grow(64);
  acc.active = 1;
  acc.reps_seen = 0;
  acc.sync_cap = 0;
  acc.sync_s = NULL;
  bspalg_counters_reset();
}

void bspalg_counters_end(void) {
  free(acc.step);
  free(acc.out_to);
  free(acc.in_from);
  free(acc.sync_s);
  memset(&acc, 0, sizeof acc);
}

void bspalg_counters_reset(void) {
  if (!acc.active) return;
  acc.steps = 0;
  clear_step(0);
  if (acc.reps_seen == acc.sync_cap) {
    acc.sync_cap = acc.sync_cap ? 2 * acc.sync_cap : 16;
    acc.sync_s = xrealloc(acc.sync_s, (size_t)acc.sync_cap * sizeof *acc.sync_s);
  }
  acc.sync_s[acc.reps_seen++] = 0.0;
}

void bspalg_work(double units) {
  if (acc.active) acc.step[acc.steps].work += units;
}

void bspalg_put(int dest, long words) {
  if (!acc.active || dest == acc.pid) return;
  acc.step[acc.steps].requests += 1.0;
  acc.out_to[(size_t)acc.steps * acc.p + dest] += (double)words;
}

void bspalg_get(int src, long words) {
  if (!acc.active || src == acc.pid) return;
  acc.step[acc.steps].requests += 1.0;
  acc.in_from[(size_t)acc.steps * acc.p + src] += (double)words;
}

/* The checkpoints bspalg_checkpoint_sync saved on this process since the section began (or
 * since the restart), and the superstep counts (bspk_superstep) after the first and the last:
 * the JSON's "checkpoints". Not reset with the counters: they cover the whole run. */
static _Thread_local struct { long saved, first, last; } checkpoints;

/* Closes the superstep's record after its sync, which took `seconds`. */
static void close_step(const char *primitive, const char *pattern, double seconds) {
  acc.sync_s[acc.reps_seen - 1] += seconds;
  acc.step[acc.steps].primitive = primitive;
  acc.step[acc.steps].pattern = pattern;
  if (acc.steps + 1 > acc.capacity) grow(2 * acc.capacity);
  acc.steps++;
  clear_step(acc.steps);
}

/* Each calls its sync itself, so that a superstep profile names it as the sync's site. */
void bspalg_sync(const char *primitive, const char *pattern) {
  double t0 = acc.active ? bsp_time() : 0.0;
  bsp_sync();
  if (acc.active) close_step(primitive, pattern, bsp_time() - t0);
}

int bspalg_checkpoint_sync(const char *primitive, const char *pattern) {
  double t0 = acc.active ? bsp_time() : 0.0;
  int saved = bspalg_library_checkpoint();
  if (acc.active) close_step(primitive, pattern, bsp_time() - t0);
  if (saved) {
    long superstep = bspalg_library_superstep();
    if (checkpoints.saved++ == 0) checkpoints.first = superstep;
    checkpoints.last = superstep;
  }
  return saved;
}

void bspalg_packing_begin(void) { bspalg_library_packing_begin(); }
void bspalg_packing_end(void) { bspalg_library_packing_end(); }

/* ------------------------------------------------------------------------- report */

double bspalg_median(const double *v, int n) {
  double *s = xrealloc(NULL, (size_t)n * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  bspk_sort_doubles(s, n);
  double m = bspk_median_of_sorted(s, n);
  free(s);
  return m;
}

static void json_number(FILE *f, double x) { bspk_json_write_number(f, "%.10g", x); }

/* v with `decimals` decimals, the thousands separated, the fraction's trailing zeros dropped
 * (350, not 350.0): python/bspkit/units.py's plain. */
static void fixed(char *buf, size_t size, double v, int decimals) {
  char raw[400], out[560];
  snprintf(raw, sizeof raw, "%.*f", decimals, fabs(v));
  size_t whole = strcspn(raw, "."), end = strlen(raw), k = 0;
  if (v < 0 && strspn(raw, "0.") != end) out[k++] = '-';
  for (size_t i = 0; i < whole; i++) {
    if (i > 0 && (whole - i) % 3 == 0) out[k++] = ',';
    out[k++] = raw[i];
  }
  while (end > whole + 1 && raw[end - 1] == '0') end--;
  if (end > whole + 1) {
    memcpy(out + k, raw + whole, end - whole);
    k += end - whole;
  }
  out[k] = '\0';
  snprintf(buf, size, "%s", out);
}

/* v with `digits` significant digits in fixed notation (units.py's plain). */
static void plain(char *buf, size_t size, double v, int digits) {
  if (v == 0.0) {
    snprintf(buf, size, "0");
  } else if (fabs(v) < 1e-3) {
    snprintf(buf, size, v > 0 ? "< 0.001" : "> -0.001");
  } else {
    int decimals = digits - 1 - (int)floor(log10(fabs(v)));
    fixed(buf, size, v, decimals > 0 ? decimals : 0);
  }
}

void bspalg_count(char *buf, size_t size, double v) {
  static const struct {
    double factor;
    const char *prefix;
  } prefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}};
  if (!isfinite(v)) {
    snprintf(buf, size, "\xe2\x80\x93"); /* units.py's MISSING, an en dash */
    return;
  }
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (fabs(v) >= prefixes[i].factor) {
      char digits[560];
      plain(digits, sizeof digits, v / prefixes[i].factor, 4);
      snprintf(buf, size, "%s %s", digits, prefixes[i].prefix);
      return;
    }
  if (fabs(v) >= 1000.0) fixed(buf, size, nearbyint(v), 0);
  else plain(buf, size, v, 4);
}

/* What one superstep cost, over all processes (process 0, after the gather). */
typedef struct {
  double w, h, h_inout, count, words, msg_words;
} step_cost;

/* bspkit's version, from CMake (the project's one version). */
#ifndef BSPKIT_VERSION_STRING
#define BSPKIT_VERSION_STRING "unknown"
#endif

static void write_json(const bspalg_info *info, const double *max_times, int reps, double median,
                       const double sync_times[2], const step_cost *cost, int synced, int total,
                       double W, double H) {
  FILE *f = info->json;
  char host[256] = "unknown", date[32] = "";
  gethostname(host, sizeof host - 1);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  const char *backend = bspalg_backend();
  fputs("{\"format\": 1, \"tool\": \"bspalg\", \"bspkit_version\": ", f);
  bspk_json_write_string(f, BSPKIT_VERSION_STRING);
  fputs(", \"build\": \"" BSPALG_BUILD "\", \"library\": ", f);
  bspk_json_write_string(f, BSPALG_LIBRARY);
  fputs(", \"algorithm\": ", f);
  bspk_json_write_string(f, info->algorithm);
  fputs(", \"backend\": ", f);
  bspk_json_write_string(f, backend);
  fprintf(f, ", \"p\": %d, \"params\": %s, \"work_unit\": ", acc.p,
          info->params_json ? info->params_json : "{}");
  bspk_json_write_string(f, info->work_unit);
  fprintf(f, ", \"reps\": %d, \"times_s\": [", reps);
  for (int r = 0; r < reps; r++) {
    if (r) fputs(", ", f);
    json_number(f, max_times[r]);
  }
  fputs("], \"time_s\": ", f);
  json_number(f, median);
  fputs(", \"time_sync_s\": ", f);
  json_number(f, sync_times[0]);
  fputs(", \"time_sync_max_s\": ", f);
  json_number(f, sync_times[1]);
  fprintf(f, ", \"verified\": %s, \"check_note\": ",
          info->verified > 0   ? "true"
          : info->verified < 0 ? "false"
                               : "null");
  bspk_json_write_string(f, info->check_note);
  fputs(", \"result_digest\": ", f);
  bspk_json_write_string(f, info->result_digest);
  fprintf(f, ", \"restarted\": %s, \"checkpoints\": {\"saved\": %ld, \"first_superstep\": ",
          info->restarted ? "true" : "false", checkpoints.saved);
  if (checkpoints.saved)
    fprintf(f, "%ld, \"last_superstep\": %ld}", checkpoints.first, checkpoints.last);
  else fputs("null, \"last_superstep\": null}", f);
  fputs(", \"f_s_per_unit\": ", f);
  if (info->f_s_per_unit > 0) json_number(f, info->f_s_per_unit);
  else fputs("null", f);
  fputs(", \"f_note\": ", f);
  bspk_json_write_string(f, info->f_note);
  fputs(", \"f_all_s_per_unit\": ", f);
  if (info->f_all_s_per_unit > 0) json_number(f, info->f_all_s_per_unit);
  else fputs("null", f);
  if (info->calibration_before || info->calibration_after) {
    fputs(", \"calibration\": {\"before\": ", f);
    fputs(info->calibration_before ? info->calibration_before : "null", f);
    fputs(", \"after\": ", f);
    fputs(info->calibration_after ? info->calibration_after : "null", f);
    fputs(", \"seconds\": ", f);
    json_number(f, info->calibration_s);
    fputs("}", f);
  }
  fputs(", \"f_held_s_per_unit\": ", f);
  if (info->f_held_s_per_unit > 0) json_number(f, info->f_held_s_per_unit);
  else fputs("null", f);
  fputs(", \"f_all_held_s_per_unit\": ", f);
  if (info->f_all_held_s_per_unit > 0) json_number(f, info->f_all_held_s_per_unit);
  else fputs("null", f);
  if (info->state_json) {
    fputs(", \"state\": ", f);
    fputs(info->state_json, f);
  }
  fputs(", \"W\": ", f);
  json_number(f, W);
  fputs(", \"H\": ", f);
  json_number(f, H);
  fprintf(f, ", \"S\": %d, \"supersteps\": [", synced);
  for (int k = 0; k < total; k++) {
    const step_counts *sc = &acc.step[k];
    fprintf(f, "%s{\"w\": ", k ? ", " : "");
    json_number(f, cost[k].w);
    fputs(", \"h\": ", f);
    json_number(f, cost[k].h);
    fputs(", \"h_inout\": ", f);
    json_number(f, cost[k].h_inout);
    fputs(", \"count\": ", f);
    json_number(f, cost[k].count);
    fputs(", \"words\": ", f);
    json_number(f, cost[k].words);
    fputs(", \"msg_words\": ", f);
    json_number(f, cost[k].msg_words);
    fputs(", \"primitive\": ", f);
    bspk_json_write_string(f, sc->primitive);
    fputs(", \"pattern\": ", f);
    bspk_json_write_string(f, sc->pattern);
    fprintf(f, ", \"sync\": %s}", k < synced ? "true" : "false");
  }
  fputs("], \"blas_coretype\": ", f);
  bspk_json_write_string(f, getenv("OPENBLAS_CORETYPE"));
  fputs(", \"date\": ", f);
  bspk_json_write_string(f, date);
  fputs(", \"host\": ", f);
  bspk_json_write_string(f, host);
  fputs("}\n", f);
  fflush(f);
}

double bspalg_report(const bspalg_info *info, const double *times, int reps) {
  int p = acc.p, pid = acc.pid;
  /* Every process sends its records and the open one after the last sync (the same number
   * everywhere); process 0 keeps the open one when some process did work in it. */
  int synced = acc.steps;
  int total = synced + 1;
  int stride = 2 + 2 * p; /* per superstep: work, requests, out_to[p], in_from[p] */
  size_t mine = (size_t)total * (size_t)stride;
  double *pack = xrealloc(NULL, (mine + 2 * (size_t)reps) * sizeof *pack);
  for (int k = 0; k < total; k++) {
    double *row = pack + (size_t)k * stride;
    row[0] = acc.step[k].work;
    row[1] = acc.step[k].requests;
    memcpy(row + 2, acc.out_to + (size_t)k * p, (size_t)p * sizeof *row);
    memcpy(row + 2 + p, acc.in_from + (size_t)k * p, (size_t)p * sizeof *row);
  }
  memcpy(pack + mine, times, (size_t)reps * sizeof *times);
  for (int r = 0; r < reps; r++) /* the sync times of the last `reps` repetitions */
    pack[mine + reps + r] =
        r + acc.reps_seen - reps >= 0 ? acc.sync_s[r + acc.reps_seen - reps] : 0.0;

  size_t each = mine + 2 * (size_t)reps;
  /* only process 0 receives; the others register a word so that every address is real */
  double *all = calloc(pid == 0 ? (size_t)p * each : 1, sizeof *all);
  if (!all) bsp_abort("bspalg: out of memory gathering the cost counters\n");
  bsp_push_reg(all, pid == 0 ? (int)((size_t)p * each * sizeof *all) : (int)sizeof *all);
  bsp_sync();
  bsp_put(0, pack, all, (int)((size_t)pid * each * sizeof *all), (int)(each * sizeof *all));
  bsp_sync();
  bsp_pop_reg(all);

  double median_time = 0.0;
  if (pid == 0) {
    double *max_times = xrealloc(NULL, 3 * (size_t)reps * sizeof *max_times);
    double *min_sync = max_times + reps, *max_sync = max_times + 2 * reps;
    for (int r = 0; r < reps; r++) {
      max_times[r] = max_sync[r] = 0.0;
      min_sync[r] = INFINITY;
      for (int s = 0; s < p; s++) {
        const double *theirs = all + (size_t)s * each + mine;
        max_times[r] = fmax(max_times[r], theirs[r]);
        min_sync[r] = fmin(min_sync[r], theirs[reps + r]);
        max_sync[r] = fmax(max_sync[r], theirs[reps + r]);
      }
    }
    median_time = bspalg_median(max_times, reps);
    double sync_times[2] = {bspalg_median(min_sync, reps), bspalg_median(max_sync, reps)};

    int open_used = 0;
    for (int t = 0; t < p; t++) {
      const double *row = all + (size_t)t * each + (size_t)synced * stride;
      open_used |= row[0] > 0 || row[1] > 0;
    }
    if (!open_used) total = synced;
    step_cost *cost = xrealloc(NULL, (size_t)(total ? total : 1) * sizeof *cost);
    double *sent = xrealloc(NULL, (size_t)p * sizeof *sent),
           *recv = xrealloc(NULL, (size_t)p * sizeof *recv);
    double W = 0.0, H = 0.0;
    for (int k = 0; k < total; k++) {
      step_cost c = {0};
      double requests = 0.0;
      for (int s = 0; s < p; s++) sent[s] = recv[s] = 0.0;
      for (int s = 0; s < p; s++) {
        const double *row = all + (size_t)s * each + (size_t)k * stride;
        c.w = fmax(c.w, row[0]);
        c.count = fmax(c.count, row[1]);
        requests += row[1];
        for (int t = 0; t < p; t++) {
          sent[s] += row[2 + t]; /* s put to t */
          recv[t] += row[2 + t];
          recv[s] += row[2 + p + t]; /* s got from t */
          sent[t] += row[2 + p + t];
          c.words += row[2 + t] + row[2 + p + t];
        }
      }
      for (int s = 0; s < p; s++) {
        c.h = fmax(c.h, fmax(sent[s], recv[s]));        /* eq. 2.1 */
        c.h_inout = fmax(c.h_inout, sent[s] + recv[s]); /* eq. 2.2 */
      }
      c.msg_words = requests > 0 ? c.words / requests : 0.0;
      cost[k] = c;
      W += c.w;
      H += c.h;
    }
    char W_text[64], H_text[64];
    bspalg_count(W_text, sizeof W_text, W);
    bspalg_count(H_text, sizeof H_text, H);
    printf(
        "%s on %d process%s: %.6f s (median of %d), W = %s %s, H = %s words, S = %d, check: "
        "%s%s%s\n",
        info->algorithm, p, p == 1 ? "" : "es", median_time, reps, W_text,
        info->work_unit ? info->work_unit : "units", H_text, synced,
        info->verified > 0   ? "passed"
        : info->verified < 0 ? "FAILED"
                             : "not done",
        /* a portable build says what it ran on: its numbers are another library's */
        strcmp(BSPALG_BUILD, "portable") == 0 ? " (portable build, library " BSPALG_LIBRARY ")"
                                              : "",
        info->restarted ? " (restarted from a checkpoint)" : "");
    fflush(stdout);
    if (info->json)
      write_json(info, max_times, reps, median_time, sync_times, cost, synced, total, W, H);
    free(cost);
    free(sent);
    free(recv);
    free(max_times);
  }
  free(all);
  free(pack);
  /* everyone returns process 0's median (times are >= 0, so the max over processes is it) */
  median_time = bspalg_max_over_procs(pid == 0 ? median_time : 0.0);
  return median_time;
}

double bspalg_max_over_procs(double v) {
  int p = bsp_nprocs();
  double *all = xrealloc(NULL, (size_t)p * sizeof *all);
  bsp_push_reg(all, p * (int)sizeof *all);
  bsp_sync();
  double m = bspk_max_over_processes(v, all);
  bsp_pop_reg(all);
  bsp_sync();
  free(all);
  return m;
}

/* ------------------------------------------------------------------- command line */

const char bspalg_common_help[] =
    "  -n, --procs P     processes (default: all the back end offers, as bsprun -n says)\n"
    "  -r, --reps R      timed repetitions; the time reported is their median (default 3)\n"
    "      --json FILE   write the run as one JSON object to FILE ('-' = stdout)\n"
    "      --no-check    do not check the result against the sequential reference\n"
    "      --measure-f   after the runs, time the local kernel on process 0 alone (f, thesis 3.1)\n"
    "                    and on every process at once (f under the run's load)\n"
    "      --seed S      seed of the random inputs (default 1)\n"
    "      --calibrate MODE\n"
    "                    bspprobe's short calibration inside the run, before the repetitions\n"
    "                    and after them and f; MODE full or quick: the f size of the probe it\n"
    "                    is compared with (bspkit validate; docs/algorithm-output.md)\n"
    "      --checkpoint-every T\n"
    "                    save a checkpoint at most every T (seconds, or a number with s, m or h:\n"
    "                    90s, 5m, 1h) where the algorithm takes them; needs bsprun\n"
    "                    --checkpoint-dir DIR or --restart DIR (docs/checkpoint.md)\n"
    "  -h, --help        this help\n";

void bspalg_common_defaults(bspalg_common_opts *o) {
  o->procs = 0;
  o->reps = 3;
  o->json_path = NULL;
  o->check = 1;
  o->measure_f = 0;
  o->seed = 1;
  o->calibrate = 0;
  o->checkpoint_every = -1.0;
}

/* A time as bsprun --checkpoint-every takes it: seconds, or a number with s, m or h (digits
 * and at most one point: 90, 1.5m, 1h). */
static double parse_duration(const char *prog, const char *what, const char *text) {
  size_t digits = strspn(text, "0123456789."), len = strlen(text);
  const char *point = strchr(text, '.');
  char unit = len == digits + 1 ? text[digits] : 0;
  int ok = digits > 0 && (len == digits || (unit && strchr("smh", unit))) &&
           !(point && strchr(point + 1, '.')) && !(digits == 1 && text[0] == '.');
  double v = ok ? strtod(text, NULL) * (unit == 'h' ? 3600.0 : unit == 'm' ? 60.0 : 1.0) : -1.0;
  if (!ok || !(v < 1e9)) {
    fprintf(stderr,
            "%s: %s must be a time (seconds, or a number with s, m or h: 90s, 5m, 1h), not '%s'\n",
            prog, what, text);
    exit(2);
  }
  return v;
}

long bspalg_parse_long(const char *prog, const char *what, const char *text, long min, long max) {
  char *end = NULL;
  errno = 0;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || errno || end == text || *end || v < min || v > max) {
    fprintf(stderr, "%s: %s must be an integer from %ld to %ld, not '%s'\n", prog, what, min, max,
            text ? text : "(missing)");
    exit(2);
  }
  return v;
}

double bspalg_parse_double(const char *prog, const char *what, const char *text, double min,
                           double max) {
  char *end = NULL;
  errno = 0;
  double v = text ? strtod(text, &end) : 0.0;
  if (!text || errno || end == text || *end || !(v >= min && v <= max)) {
    fprintf(stderr, "%s: %s must be a number from %g to %g, not '%s'\n", prog, what, min, max,
            text ? text : "(missing)");
    exit(2);
  }
  return v;
}

static const char *value_of(const char *prog, int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "%s: option %s needs a value\n", prog, argv[*i]);
    exit(2);
  }
  return argv[++*i];
}

int bspalg_parse_common(const char *prog, bspalg_common_opts *o, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  if (!strcmp(a, "-n") || !strcmp(a, "--procs"))
    o->procs = (int)bspalg_parse_long(prog, "the number of processes",
                                      value_of(prog, argc, argv, i), 1, 1 << 20);
  else if (!strcmp(a, "-r") || !strcmp(a, "--reps"))
    o->reps = (int)bspalg_parse_long(prog, "the number of repetitions",
                                     value_of(prog, argc, argv, i), 1, 100000);
  else if (!strcmp(a, "--json")) o->json_path = value_of(prog, argc, argv, i);
  else if (!strcmp(a, "--no-check")) o->check = 0;
  else if (!strcmp(a, "--measure-f")) o->measure_f = 1;
  else if (!strcmp(a, "--calibrate")) {
    static const char *const modes[] = {"full", "quick"};
    o->calibrate =
        1 + bspalg_parse_choice(prog, "--calibrate", value_of(prog, argc, argv, i), modes, 2);
  } else if (!strcmp(a, "--checkpoint-every"))
    o->checkpoint_every = parse_duration(prog, "--checkpoint-every", value_of(prog, argc, argv, i));
  else if (!strcmp(a, "--seed"))
    o->seed = (unsigned long)bspalg_parse_long(prog, "the seed", value_of(prog, argc, argv, i), 0,
                                               0x7fffffffL);
  else return 0;
  return 1;
}

int bspalg_parse_choice(const char *prog, const char *what, const char *text,
                        const char *const *names, int n) {
  for (int k = 0; k < n; k++)
    if (!strcmp(text, names[k])) return k;
  fprintf(stderr, "%s: %s must be ", prog, what);
  for (int k = 0; k < n; k++)
    fprintf(stderr, "%s%s", names[k], k + 2 < n ? ", " : k + 2 == n ? " or " : "");
  fprintf(stderr, ", not '%s'\n", text);
  exit(2);
}

void bspalg_check_json_path(const char *prog, const char *path) {
  if (!path || !strcmp(path, "-")) return;
  const char *problem = NULL;
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) problem = "it is a directory";
    else if (access(path, W_OK) != 0) problem = strerror(errno);
  } else {
    /* not there yet: its directory must let us make it */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    if (access(dir, W_OK | X_OK) != 0) problem = strerror(errno);
  }
  if (problem) {
    fprintf(stderr, "%s: cannot write the JSON output '%s': %s\n", prog, path, problem);
    exit(2);
  }
}

FILE *bspalg_open_json(const char *prog, const char *path) {
  if (!path) return NULL;
  if (!strcmp(path, "-")) return stdout;
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write the JSON output '%s': %s\n", prog, path, strerror(errno));
    exit(2);
  }
  return f;
}
