/*
 * output.c - JSON lines, warnings, progress on stderr, the load average: everything the
 * probe writes (process 0 only). Part of bspprobe_core (see probe.h for the files' order).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

/* ---- load ---------------------------------------------------------------------------- */

void bspp_read_loadavg(double la[3]) {
  la[0] = la[1] = la[2] = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  if (fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3) la[0] = la[1] = la[2] = -1;
  fclose(f);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void j_grow(jbuf *j, size_t more) {
  if (j->n + more + 1 <= j->cap) return;
  size_t cap = j->cap ? j->cap : 4096;
  while (cap < j->n + more + 1) cap *= 2;
  j->b = bspk_xrealloc("bspprobe", j->b, cap);
  j->cap = cap;
}

static void j_raw(jbuf *j, const char *text) {
  size_t len = strlen(text);
  j_grow(j, len);
  memcpy(j->b + j->n, text, len + 1);
  j->n += len;
}

static void j_printf(jbuf *j, const char *fmt, ...) PROBE_PRINTF(2, 3);
static void j_printf(jbuf *j, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0) return;
  j_grow(j, (size_t)len);
  va_start(ap, fmt);
  vsnprintf(j->b + j->n, (size_t)len + 1, fmt, ap);
  va_end(ap);
  j->n += (size_t)len;
}

static void j_string(jbuf *j, const char *v) {
  char esc[8];
  j_raw(j, "\"");
  for (const unsigned char *q = (const unsigned char *)v; *q; q++)
    j_raw(j, bspk_json_escape_char(*q, esc));
  j_raw(j, "\"");
}

/* ,"key": before a member (key NULL inside arrays) */
static void j_key(jbuf *j, const char *key) {
  if (!j->first[j->depth]) j_raw(j, ",");
  j->first[j->depth] = 0;
  if (key) {
    j_string(j, key);
    j_raw(j, ":");
  }
}

void bspp_json_begin(jbuf *j, const char *type) {
  j->n = 0;
  j_grow(j, 64);
  j->b[0] = 0;
  j->depth = 0;
  j->first[0] = 1;
  j_raw(j, "{");
  bspp_json_str(j, "type", type);
}

void bspp_json_str(jbuf *j, const char *key, const char *v) {
  j_key(j, key);
  if (v) j_string(j, v);
  else j_raw(j, "null");
}

void bspp_json_int(jbuf *j, const char *key, long long v) {
  j_key(j, key);
  j_printf(j, "%lld", v);
}

static void j_double(jbuf *j, double v, const char *fmt) {
  char text[64];
  bspk_json_format_number(text, sizeof text, fmt, v);
  j_raw(j, text);
}

void bspp_json_num(jbuf *j, const char *key, double v) {
  j_key(j, key);
  j_double(j, v, "%.9g");
}

void bspp_json_raw(jbuf *j, const char *key, const char *json) {
  j_key(j, key);
  j_raw(j, json ? json : "null");
}

void bspp_json_bool(jbuf *j, const char *key, int v) {
  j_key(j, key);
  j_raw(j, v ? "true" : "false");
}

void bspp_json_null(jbuf *j, const char *key) {
  j_key(j, key);
  j_raw(j, "null");
}

/* An object or array opens a level: its first member needs no comma. */
static void j_open(jbuf *j, const char *key, const char *bracket) {
  j_key(j, key);
  j_raw(j, bracket);
  j->first[++j->depth] = 1;
}

static void j_close(jbuf *j, const char *bracket) {
  j_raw(j, bracket);
  j->depth--;
}

void bspp_json_obj_begin(jbuf *j, const char *key) { j_open(j, key, "{"); }
void bspp_json_obj_end(jbuf *j) { j_close(j, "}"); }
void bspp_json_arr_begin(jbuf *j, const char *key) { j_open(j, key, "["); }
void bspp_json_arr_end(jbuf *j) { j_close(j, "]"); }

void bspp_json_nums(jbuf *j, const char *key, const double *v, int n, const char *fmt) {
  bspp_json_arr_begin(j, key);
  for (int i = 0; i < n; i++) {
    j_key(j, NULL);
    j_double(j, v[i], fmt ? fmt : "%.9g");
  }
  bspp_json_arr_end(j);
}

void bspp_json_longs(jbuf *j, const char *key, const long *v, int n) {
  bspp_json_arr_begin(j, key);
  for (int i = 0; i < n; i++) {
    j_key(j, NULL);
    j_printf(j, "%ld", v[i]);
  }
  bspp_json_arr_end(j);
}

void bspp_json_strs(jbuf *j, const char *key, const char *const *v, int n) {
  bspp_json_arr_begin(j, key);
  for (int i = 0; i < n; i++) bspp_json_str(j, NULL, v[i]);
  bspp_json_arr_end(j);
}

/* One record per line, flushed at once: a run that is killed leaves every finished record. */
void bspp_emit(probe_ctx *c) {
  j_raw(&c->j, "}\n");
  if (c->out) {
    if (fwrite(c->j.b, 1, c->j.n, c->out) != c->j.n || fflush(c->out) != 0)
      bsp_abort("bspprobe: cannot write the output file (disk full?)\n");
  }
  c->records++;
}

void bspp_add_warning(probe_ctx *c, const char *fmt, ...) {
  if (c->nwarnings >= (int)(sizeof c->warnings / sizeof c->warnings[0])) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->warnings[c->nwarnings], sizeof c->warnings[0], fmt, ap);
  va_end(ap);
  if (c->s == 0) {
    if (c->tty && c->progress_len) fprintf(stderr, "\r%*s\r", c->progress_len, "");
    c->progress_len = 0;
    fprintf(stderr, "bspprobe: warning: %s\n", c->warnings[c->nwarnings]);
  }
  c->nwarnings++;
}

/* ---- progress ----------------------------------------------------------------------------- */

static void fmt_duration(char *buf, size_t n, double s) {
  if (s < 0 || !isfinite(s)) snprintf(buf, n, "?");
  else if (s < 1) snprintf(buf, n, "<1 s");
  else if (s < 100) snprintf(buf, n, "%.0f s", s);
  else snprintf(buf, n, "%d min %02d s", (int)(s / 60), (int)s % 60);
}

void bspp_progress(probe_ctx *c, const char *what, long k, long n, int force) {
  if (c->s != 0) return;
  double t = bspk_monotonic_seconds();
  if (!force && t - c->last_progress < (c->tty ? 0.25 : 5.0)) return;
  c->last_progress = t;
  char el[32], left[32], line[512];
  fmt_duration(el, sizeof el, t - c->t0);
  if (k > 0 && n > 0)
    fmt_duration(left, sizeof left, (t - c->sec_t0) * (double)(n - k) / (double)k);
  else snprintf(left, sizeof left, "?");
  int len = snprintf(line, sizeof line, "bspprobe: %s, %ld of %ld, elapsed %s, section left ~%s",
                     what, k, n, el, left);
  if (len < 0) return;
  if (len >= (int)sizeof line) len = (int)sizeof line - 1;
  if (c->tty) {
    fprintf(stderr, "\r%s", line);
    if (len < c->progress_len) fprintf(stderr, "%*s", c->progress_len - len, "");
    c->progress_len = len;
  } else {
    fprintf(stderr, "%s\n", line);
  }
  fflush(stderr);
  bspp_maybe_load_record(c, 0);
}

void bspp_progress_end(probe_ctx *c, const char *section) {
  if (c->s != 0) return;
  double t = bspk_monotonic_seconds();
  char tot[32];
  fmt_duration(tot, sizeof tot, t - c->t0);
  if (c->tty && c->progress_len) fprintf(stderr, "\r%*s\r", c->progress_len, "");
  c->progress_len = 0;
  fprintf(stderr, "bspprobe: %s done in %.2f s (elapsed %s)\n", section, t - c->sec_t0, tot);
  fflush(stderr);
}

/* A `load` record at most every 30 s (or now when forced), process 0. */
void bspp_maybe_load_record(probe_ctx *c, int force) {
  if (c->s != 0) return;
  double t = bspk_monotonic_seconds();
  if (!force && t - c->last_load < 30.0) return;
  c->last_load = t;
  double la[3];
  bspp_read_loadavg(la);
  if (la[0] < 0) return;
  bspp_json_begin(&c->j, "load");
  bspp_json_num(&c->j, "t_s", t - c->t0);
  bspp_json_nums(&c->j, "loadavg", la, 3, "%.2f");
  bspp_emit(c);
}
