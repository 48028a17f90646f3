/*
 * error_case.h - error test cases that carry their own expectation.
 *
 *   ERROR_CASE(name, PROCS, "labels", expect) { ...body... }
 *   ERROR_CASE_AROUND(name, before, after, PROCS, "labels", expect) { ...body... }
 *
 * define case `name`: `body` runs inside the SPMD section (return 1 to leave it without
 * bsp_end); `before` (or NULL) runs in main before it, `after` (or NULL) in main after
 * bsp_end on process 0. `expect` is the line the library must print on stderr, an extended
 * regular expression (grep -E), after which the program must end with status 1; NULL: the
 * program must only fail (a process killed by a signal says nothing). PROCS is
 * ERROR_PROCS (p = 2, 3, 4, 8) or ERROR_PROCS_AND_1 (also p = 1); "labels" are extra ctest
 * labels ("" or e.g. "nosan").
 *
 * tests/errors/CMakeLists.txt reads the first line of each definition (name, PROCS,
 * labels: keep them on the ERROR_CASE line) and makes the tests errors.<name>.<backend>.p<P>;
 * each test asks the program for its expectation (`PROGRAM --expect CASE`, see run_case.sh).
 */
#ifndef BSPKIT_TESTS_ERROR_CASE_H
#define BSPKIT_TESTS_ERROR_CASE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start of a libbsp error line. */
#define E "^bspkit: error in "

struct error_case {
  const char *name;
  int (*body)(void);
  void (*before)(void);
  void (*after)(void);
  const char *expect;
};

#define ERROR_CASES_MAX 128
static struct error_case error_cases[ERROR_CASES_MAX];
static int n_error_cases;

static inline void error_case_add(struct error_case c) {
  if (n_error_cases == ERROR_CASES_MAX) {
    fprintf(stderr, "error_case.h: more than %d cases: raise ERROR_CASES_MAX\n", ERROR_CASES_MAX);
    exit(2);
  }
  error_cases[n_error_cases++] = c;
}

/* Registered before main runs, so that a case is written in one place only. */
#define ERROR_CASE_AROUND(name, before_fn, after_fn, procs, labels, expect_re)               \
  static int case_##name(void);                                                              \
  __attribute__((constructor)) static void register_case_##name(void) {                      \
    error_case_add((struct error_case){#name, case_##name, before_fn, after_fn, expect_re}); \
  }                                                                                          \
  static int case_##name(void)
#define ERROR_CASE(name, procs, labels, expect_re) \
  ERROR_CASE_AROUND(name, NULL, NULL, procs, labels, expect_re)

/* The case named by argv[1]. Handles `--list` (the names, exit 0) and `--expect CASE` (the
 * expected status, "1" or "nonzero", then the regular expression, one per line; exit 0).
 * `extra` names one more valid argument that is not an error case (NULL: none); for it
 * NULL is returned. Anything else: the usage and the cases on stderr, exit 2. */
static inline const struct error_case *error_case_select(int argc, char **argv, const char *extra) {
  const char *arg = argc > 1 ? argv[1] : "";
  int expect = strcmp(arg, "--expect") == 0;
  const char *name = expect ? (argc > 2 ? argv[2] : "") : arg;
  if (extra && !expect && strcmp(name, extra) == 0) return NULL;
  for (int i = 0; i < n_error_cases; i++) {
    if (strcmp(name, error_cases[i].name) != 0) continue;
    if (expect) {
      const char *re = error_cases[i].expect;
      printf("%s\n%s\n", re ? "1" : "nonzero", re ? re : "");
      exit(0);
    }
    return &error_cases[i];
  }
  FILE *out = strcmp(arg, "--list") == 0 ? stdout : stderr;
  if (out == stderr)
    fprintf(stderr, "usage: %s [--expect] CASE%s%s; the cases are:\n", argv[0], extra ? " | " : "",
            extra ? extra : "");
  for (int i = 0; i < n_error_cases; i++) fprintf(out, "%s\n", error_cases[i].name);
  exit(out == stdout ? 0 : 2);
}

#endif
