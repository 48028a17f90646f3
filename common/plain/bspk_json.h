/*
 * bspk_json.h - the pieces of JSON that the probe, the algorithm drivers and the benchmarks
 * write by hand (part of common/plain/, see common/README.md): one escaping rule for strings
 * and one rule for numbers that JSON cannot hold, so every file bspkit writes reads back alike.
 */
#ifndef BSPK_JSON_H
#define BSPK_JSON_H

#include <math.h>
#include <stdio.h>

/* The text that stands for byte `ch` inside a JSON string, written into out (NUL-ended):
 * the byte itself, or an escape for '"', '\\', the control characters and DEL
 * (\n and \t by name, so that messages stay readable). Returns out. */
static inline const char *bspk_json_escape_char(unsigned char ch, char out[8]) {
  if (ch == '"' || ch == '\\') {
    out[0] = '\\';
    out[1] = (char)ch;
    out[2] = 0;
  } else if (ch == '\n' || ch == '\t') {
    out[0] = '\\';
    out[1] = ch == '\n' ? 'n' : 't';
    out[2] = 0;
  } else if (ch < 0x20 || ch == 0x7f) {
    snprintf(out, 8, "\\u%04x", (unsigned)ch);
  } else {
    out[0] = (char)ch;
    out[1] = 0;
  }
  return out;
}

/* s as a quoted, escaped JSON string; null for NULL. */
static inline void bspk_json_write_string(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  char esc[8];
  fputc('"', f);
  for (const unsigned char *q = (const unsigned char *)s; *q; q++)
    fputs(bspk_json_escape_char(*q, esc), f);
  fputc('"', f);
}

/* v printed with the printf format fmt (e.g. "%.9g"), or null when v is not finite (JSON
 * has no NaN or infinity). Writes at most n bytes into out, NUL included. */
static inline void bspk_json_format_number(char *out, size_t n, const char *fmt, double v) {
  if (isfinite(v)) snprintf(out, n, fmt, v);
  else snprintf(out, n, "null");
}

/* The same, written to f. */
static inline void bspk_json_write_number(FILE *f, const char *fmt, double v) {
  char text[64];
  bspk_json_format_number(text, sizeof text, fmt, v);
  fputs(text, f);
}

#endif /* BSPK_JSON_H */
