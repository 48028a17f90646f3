/* test_profile.c - the superstep profile (BSPKIT_PROFILE, docs/profile-format.md): what each
 * process did in each superstep, as counted by the library, against what this program knows
 * it did. Two SPMD sections (bsp_init style); process 0 reads the file after the last
 * bsp_end and checks every process' records line by line. The last superstep of section 0
 * spins for BUSY_CPU_S of its thread's CPU time: its cpu_s must hold them, on a run with more
 * processes than cores too (each record's cpu_s lies between 0 and its compute_s).
 * Usage: test_profile --profile FILE [--nprocs P] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bsp.h"
#include "bspkit.h"

static const char *profile_path;
static int nprocs_arg;

#define WORD 8
static long words(long bytes) { return (bytes + WORD - 1) / WORD; }

/* The part of a superstep record this program can predict, from "ops" to "set_tagsize". */
typedef struct expected {
  char text[4096];
} expected;

/* Traffic of one process in one superstep: per destination (out) and per source (gets). */
typedef struct traffic {
  long out_msgs[64], out_words[64], get_msgs[64], get_words[64], self_words;
} traffic;

static void add(traffic *t, int me, int peer, int is_get, long bytes) {
  if (peer == me) {
    t->self_words += words(bytes);
  } else if (is_get) {
    t->get_msgs[peer]++;
    t->get_words[peer] += words(bytes);
  } else {
    t->out_msgs[peer]++;
    t->out_words[peer] += words(bytes);
  }
}

static void describe(expected *e, const char *ops, const traffic *t, int p, int push, int pop,
                     int tagsize) {
  size_t n = (size_t)snprintf(e->text, sizeof e->text, "\"ops\": {%s}, \"out\": [", ops);
  int first = 1;
  for (int q = 0; q < p; q++)
    if (t->out_msgs[q]) {
      n += (size_t)snprintf(e->text + n, sizeof e->text - n, "%s[%d, %ld, %ld]", first ? "" : ", ",
                            q, t->out_msgs[q], t->out_words[q]);
      first = 0;
    }
  n += (size_t)snprintf(e->text + n, sizeof e->text - n, "], \"in_get\": [");
  first = 1;
  for (int q = 0; q < p; q++)
    if (t->get_msgs[q]) {
      n += (size_t)snprintf(e->text + n, sizeof e->text - n, "%s[%d, %ld, %ld]", first ? "" : ", ",
                            q, t->get_msgs[q], t->get_words[q]);
      first = 0;
    }
  snprintf(e->text + n, sizeof e->text - n,
           "], \"self_words\": %ld, \"push_reg\": %d, \"pop_reg\": %d, \"set_tagsize\": %d",
           t->self_words, push, pop, tagsize);
}

/* The supersteps of section 0, for process s of p (the SPMD function below does them). */
enum { STEPS0 = 4 };
static void expect_section0(int s, int p, expected e[STEPS0]) {
  traffic t;
  memset(&t, 0, sizeof t);
  describe(&e[0], "", &t, p, 2, 0, 1); /* two registrations, the tag size */
  int next = (s + 1) % p, next2 = (s + 2) % p, prev = (s + p - 1) % p;
  add(&t, s, next, 0, 24); /* put 3 doubles */
  add(&t, s, next2, 0, 5); /* hpput 5 bytes */
  add(&t, s, prev, 1, 16); /* get 16 bytes */
  add(&t, s, next, 1, 9);  /* hpget 9 bytes */
  add(&t, s, next, 0, 20); /* two sends of a 20-byte payload (the 8-byte tags not counted) */
  add(&t, s, next, 0, 20);
  describe(&e[1],
           "\"put\": [1, 24], \"hpput\": [1, 5], \"get\": [1, 16], \"hpget\": [1, 9], "
           "\"send\": [2, 40]",
           &t, p, 0, 0, 0);
  memset(&t, 0, sizeof t);
  char ops[128] = "";
  if (s == 0 && p > 1) {
    for (int q = 1; q < p; q++) add(&t, s, q, 0, 100);
    snprintf(ops, sizeof ops, "\"coll\": [%d, %d]", p - 1, (p - 1) * 100);
  }
  describe(&e[2], ops, &t, p, 0, 0, 0); /* a 100-byte broadcast from 0 */
  memset(&t, 0, sizeof t);
  describe(&e[3], "", &t, p, 0, 2, 0); /* the last superstep, ended by bsp_end */
}

/* The CPU time of this thread: what the library's cpu_s counts. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define BUSY_CPU_S 0.02
/* Work of a known CPU time, however long the wall clock takes for it (shared cores). */
static void busy(double cpu_s) {
  volatile double x = 1.0;
  double until = thread_cpu_s() + cpu_s;
  while (thread_cpu_s() < until)
    for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
}

static void section0(void) {
  bsp_begin(bsp_nprocs());
  int s = bsp_pid(), p = bsp_nprocs();
  static _Thread_local double area[4];
  static _Thread_local char bytes[32];
  double src[3] = {1, 2, 3};
  char tmp[32];
  bsp_push_reg(area, sizeof area);
  bsp_push_reg(bytes, sizeof bytes);
  bsp_size_t tag = 8;
  bsp_set_tagsize(&tag);
  bsp_sync();
  bspk_profile_phase("traffic"); /* marks superstep 1 and what follows */
  bsp_put((s + 1) % p, src, area, 0, 24);
  bsp_hpput((s + 2) % p, "hello", bytes, 0, 5);
  bsp_get((s + p - 1) % p, area, 0, tmp, 16);
  bsp_hpget((s + 1) % p, bytes, 8, tmp + 16, 9);
  char tagbuf[8] = "tagtag1", payload[20] = "payload";
  bsp_send((s + 1) % p, tagbuf, payload, 20);
  bsp_send((s + 1) % p, tagbuf, payload, 20);
  bsp_sync();
  char block[100] = {0};
  bspk_profile_phase("phase \"two\""); /* a name JSON must escape */
  bspk_profile_phase("traffic");       /* a name given before: the same phase again */
  bspk_profile_phase("collective");
  bspk_broadcast(0, block, block, 100);
  busy(BUSY_CPU_S); /* superstep 3 */
  bsp_pop_reg(bytes);
  bsp_pop_reg(area);
  bsp_end();
}

static void section1(void) {
  bsp_begin(bsp_nprocs());
  bsp_sync();
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

static char **read_lines(const char *path, int *nlines) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "FAIL: the profile %s was not written\n", path);
    exit(1);
  }
  char **lines = NULL;
  int n = 0;
  char buf[1 << 16];
  while (fgets(buf, sizeof buf, f)) {
    lines = realloc(lines, (size_t)(n + 1) * sizeof *lines);
    lines[n++] = strdup(buf);
  }
  fclose(f);
  *nlines = n;
  return lines;
}

/* The number after "key": in a record line, or -1 where the key is missing. */
static double number_of(const char *line, const char *key) {
  char quoted[64];
  snprintf(quoted, sizeof quoted, "\"%s\": ", key);
  const char *at = strstr(line, quoted);
  return at ? atof(at + strlen(quoted)) : -1.0;
}

/* cpu_s: the thread's CPU time over compute_s's span, which lies inside it. The slack: the
 * two clocks may differ by NTP's slew (at most 500 ppm) and by the scheduler clock's
 * granularity when the thread moves between cores (microseconds on a virtual machine). */
static void check_cpu(const char *line, int pid, int step, double at_least) {
  double compute = number_of(line, "compute_s"), cpu = number_of(line, "cpu_s");
  CHECK(cpu >= 0, "process %d superstep %d: no cpu_s >= 0 in %s", pid, step, line);
  CHECK(cpu <= compute * 1.001 + 1e-5, "process %d superstep %d: cpu_s %.9f > compute_s %.9f", pid,
        step, cpu, compute);
  CHECK(cpu >= at_least, "process %d superstep %d: cpu_s %.9f, but it spun for %.3f s of CPU", pid,
        step, cpu, at_least);
}

/* The line of a record type for section/pid/step (step < 0: none), or NULL. */
static const char *find(char **lines, int n, const char *type, int section, int pid, int step) {
  char key[160];
  if (step >= 0)
    snprintf(key, sizeof key, "{\"type\": \"%s\", \"section\": %d, \"pid\": %d, \"step\": %d, ",
             type, section, pid, step);
  else
    snprintf(key, sizeof key, "{\"type\": \"%s\", \"section\": %d, \"pid\": %d, ", type, section,
             pid);
  const char *found = NULL;
  for (int i = 0; i < n; i++)
    if (strncmp(lines[i], key, strlen(key)) == 0) {
      CHECK(!found, "two lines start with %s", key);
      found = lines[i];
    }
  return found;
}

static void check_profile(int p) {
  int n;
  char **lines = read_lines(profile_path, &n);
  /* 2 headers; section 0: STEPS0 per process; section 1: 2 per process; 2 process lines */
  int want = 2 + p * (STEPS0 + 2) + 2 * p;
  CHECK(n == want, "%d lines in the profile, expected %d", n, want);
  for (int section = 0; section < 2; section++) {
    char header[128];
    snprintf(header, sizeof header, "\"section\": %d, \"backend\": \"%s\", \"nprocs\": %d,",
             section, bspk_backend(), p);
    int headers = 0;
    for (int i = 0; i < n; i++)
      if (strstr(lines[i], "{\"type\": \"header\"") == lines[i] && strstr(lines[i], header))
        headers++;
    CHECK(headers == 1, "section %d: %d header lines with %s", section, headers, header);
  }
  for (int s = 0; s < p; s++) {
    expected e[STEPS0];
    expect_section0(s, p, e);
    for (int step = 0; step < STEPS0; step++) {
      const char *line = find(lines, n, "superstep", 0, s, step);
      CHECK(line != NULL, "no record of process %d, superstep %d", s, step);
      if (!line) continue;
      CHECK(strstr(line, e[step].text) != NULL, "process %d superstep %d:\n  got  %s  want %s", s,
            step, line, e[step].text);
      const char *end = step == STEPS0 - 1 ? "\"end\": \"bsp_end\"" : "\"end\": \"bsp_sync\"";
      CHECK(strstr(line, end) != NULL, "process %d superstep %d: not %s", s, step, end);
      CHECK(strstr(line, "\"site\": [0, \"0x") != NULL, "process %d superstep %d: no sync site", s,
            step);
      static const char *const phases[STEPS0] = {"null", "\"traffic\"", "\"collective\"",
                                                 "\"collective\""};
      char phase[64];
      snprintf(phase, sizeof phase, "\"phase\": %s, ", phases[step]);
      CHECK(strstr(line, phase) != NULL, "process %d superstep %d: not %s", s, step, phase);
      check_cpu(line, s, step, step == STEPS0 - 1 ? BUSY_CPU_S : 0.0);
    }
    const char *proc = find(lines, n, "process", 0, s, -1);
    CHECK(proc && strstr(proc, "\"supersteps\": 4,"),
          "process %d: no process record for 4 supersteps", s);
    CHECK(proc && strstr(proc, "test_profile\", \"base\": \"0x"),
          "process %d: the sync sites' object is not this program", s);
    /* the machine's state over the run (bspk_state.h): this process's CPU time holds the
     * BUSY_CPU_S it spun, within the run's wall time */
    const char *state = proc ? strstr(proc, "\"state\": {\"wall_s\": ") : NULL;
    CHECK(state != NULL, "process %d: no state object in %s", s, proc ? proc : "(none)");
    if (state) {
      double wall = number_of(state, "wall_s"), cpu = atof(strstr(state, "\"cpu_s\": [") + 10);
      CHECK(cpu >= BUSY_CPU_S, "process %d: state cpu_s %.6f < the %.3f s it spun", s, cpu,
            BUSY_CPU_S);
      CHECK(cpu <= wall * 1.001 + 1e-4, "process %d: state cpu_s %.6f > wall_s %.6f", s, cpu, wall);
      CHECK(strstr(state, "\"waited_s\": [") && strstr(state, "\"cores_online\": "),
            "process %d: state without waited_s or cores_online: %s", s, state);
    }
    for (int step = 0; step < 2; step++) {
      const char *line = find(lines, n, "superstep", 1, s, step);
      CHECK(line != NULL, "process %d: no section 1 record of superstep %d", s, step);
      if (line) check_cpu(line, s, step, 0.0);
    }
  }
  for (int i = 0; i < n; i++) free(lines[i]);
  free(lines);
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--profile") == 0) profile_path = argv[i + 1];
    else if (strcmp(argv[i], "--nprocs") == 0) nprocs_arg = atoi(argv[i + 1]);
  }
  if (!profile_path) {
    fprintf(stderr, "usage: test_profile --profile FILE\n");
    return 2;
  }
  /* Before bsp_init: every process of every back end starts here. */
  setenv("BSPKIT_PROFILE", profile_path, 1);
  bsp_init(section0, argc, argv);
  section0();
  bsp_init(section1, argc, argv);
  section1();
  int p = bsp_nprocs();
  if (p > 64) {
    fprintf(stderr, "test_profile handles at most 64 processes\n");
    return 2;
  }
  check_profile(p);
  if (failures) return 1;
  printf("test_profile: %d processes, every record as expected\n", p);
  return 0;
}
