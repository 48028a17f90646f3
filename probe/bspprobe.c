/*
 * bspprobe - measures what a machine and a BSPlib library deliver: f (time per operation of
 * several kernels), a memcpy reference, the hardware references (memcpy of h words, a raw
 * spin barrier, a cache-line round trip), g surfaces (time per word over message size h* x
 * message count c, for put, hpput, get, hpget and send, each with the patterns alltoall,
 * permutation and shift), l (empty sync, sync after a one-word shift, after one-word puts to
 * all), the As suite of Gerbessiotis & Lee (Empty, Comp, Full, Simple, Scatter, total
 * exchange) and random off-grid h-relations to validate the fitted model. Raw samples (every
 * repetition) go to a JSON-lines file in the format of docs/probe-format.md; `bspkit fit`
 * turns them into parameters.
 *
 * Written against bsp.h only (and the header-only helpers in common/plain and common/spmd,
 * which need nothing but the C library and bsp.h), so it builds against any BSPlib
 * implementation with -I common/plain -I common/spmd:
 *   bspkit (CMake target bspprobe):  cmake --build build  ->  build/probe/bspprobe
 *   by hand against bspkit (SRC = every .c file in probe/):
 *     cc -O2 -std=c11 -DBSPPROBE_HAVE_CBLAS -I common/plain -I common/spmd -I include $SRC
 *        build/src/libbsp.a -lopenblas -lm -pthread -ldl -o bspprobe
 *   or with bspkit's compiler wrapper:
 *     build/bin/bspcc -O2 -I common/plain -I common/spmd $SRC -lm -o bspprobe
 *   (no BLAS); against another BSPlib, with its compiler wrapper:
 *     OTHERBSP/bin/bspcc -O2 -DBSPPROBE_HAVE_CBLAS -I common/plain -I common/spmd $SRC
 *        -lopenblas -lm -pthread -o bspprobe-other
 *   (add -DBSPPROBE_INT_API when that library's bsp.h has no bsp_size_t, as in the 1998 API;
 *   leave out -DBSPPROBE_HAVE_CBLAS and -lopenblas where there is no CBLAS: the BLAS kernels
 *   are then skipped and the header says "blas": "none").
 * bspkit's extensions (the back-end name) are used only when bspkit.h is found
 * (BSPKIT_EXTENSIONS); -DBSPPROBE_NO_EXTENSIONS turns that off.
 *
 * Run: bsprun -n P bspprobe [options]   (bsp_begin(bsp_nprocs())); see usage() below.
 *
 * Sources: bspprobe.c (command line, header, footer, the order of the sections) and the files
 * that probe.h lists in the order they call one another. output.c, rng.c, probe_ctx.c,
 * measure_f.c, timing.c and calibrate.c form bspprobe_core, which the algorithm drivers link
 * for their --calibrate (calibration.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <dlfcn.h>
#include <sched.h>
#endif
#include <sys/mman.h>
#include <sys/utsname.h>

#include "probe.h"

#if defined(__clang__) || !defined(__GNUC__)
#define PROBE_COMPILER __VERSION__
#else
#define PROBE_COMPILER "GCC " __VERSION__
#endif

/* What main found out about the machine before the BSP processes started. */
typedef struct {
  char host[256];
  char cpu[256];
  char kernel[256];
  int cores;        /* available to the program (affinity mask at start) */
  int cores_online; /* sysconf(_SC_NPROCESSORS_ONLN) */
} machine_info;

/* Written by main before bsp_init, read-only afterwards (the processes of the threads back
 * end are threads that share them). */
static probe_opts g_opts;
static machine_info g_machine;
static int g_exit_status = 0; /* written by process 0 only */

#define DEFAULT_SEED 20240901ULL
#define DEFAULT_MAX_WORDS (1L << 20)
#define MAX_MAX_WORDS (1L << 27) /* 1 GiB per area: sizes must fit in an int */

/* ---- command line ---------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(
      f,
      "Usage: bsprun -n P bspprobe [options]\n"
      "\n"
      "Measures the BSP parameters of this machine and BSPlib library at P processes and\n"
      "writes every raw sample to a JSON-lines file (docs/probe-format.md); `bspkit fit`\n"
      "turns the file into f, g_inf, h_half, o and l. Progress goes to stderr.\n"
      "\n"
      "Options:\n"
      "  --quick               a coarse grid and fewer repetitions (under half a minute at\n"
      "                        p = 2 on 2 cores); default: the full probe (about a minute there).\n"
      "  --calibrate           only one round of the short calibration (below): header, one\n"
      "                        calibration record, footer; with --quick the quick mode's dot\n"
      "                        product size. Takes none of --only, --primitives, --patterns.\n"
      "  --calibration         11 calibration rounds among the validation points (below);\n"
      "                        off by default: on a busy machine they did not make the check\n"
      "                        better (the machine's state beside every point does; the\n"
      "                        report marks the points where a process lost its core).\n"
      "  --no-calibration      no calibration rounds (the default).\n"
      "  --sentinels           re-measure one fixed point per regime (compute, sync, small h,\n"
      "                        large h) at moments spread over the run: before the first\n"
      "                        section, after each section, between the parts of the mem\n"
      "                        suite and about 100 times (quick: 33) inside the g grid's\n"
      "                        order; `sentinel` records. The default\n"
      "                        when the g section runs and --reps is not given.\n"
      "  --no-sentinels        no sentinel visits.\n"
      "  -o FILE, --output FILE\n"
      "                        where to write the samples ('-': stdout). Default:\n"
      "                        bspprobe-<host>-p<P>-<UTC date>.jsonl in the current directory.\n"
      "  --seed N              seed of the random grid order, permutations and validation\n"
      "                        points (the same on every process). Default: %llu.\n"
      "  --only LIST           run only these sections (comma-separated), in the fixed order\n"
      "                        f, memcpy, hw, mem, l, g, validation, as, pp, disk:\n"
      "                          f           time per operation: dot product and matrix\n"
      "                                      product, int and double, plain loops and BLAS\n"
      "                                      (ddot, dgemm), on process 0 alone\n"
      "                          memcpy      time to copy 8 MiB blocks (cold), process 0 alone,\n"
      "                                      then every process at once\n"
      "                          hw          the hardware references: memcpy of h words (the\n"
      "                                      h of the g grid) by every process at once on\n"
      "                                      the h-relations' own (hot) buffers, timed as a g\n"
      "                                      point; a spin barrier among the processes and a\n"
      "                                      cache-line round trip between two cores (where\n"
      "                                      the processes share memory: the threads back\n"
      "                                      end; the round trip also at p = 1)\n"
      "                          l           bsp_sync alone, after a one-word shift, after\n"
      "                                      one-word puts to all other processes\n"
      "                          g           g surfaces: h* (words per request) x c (requests\n"
      "                                      per process) for each primitive and pattern\n"
      "                          validation  random h-relations off the grid (put/alltoall,\n"
      "                                      put/permutation, send/alltoall)\n"
      "                          as          the As suite: Empty, Comp, Full, Simple, Scatter,\n"
      "                                      total exchange with h doubling from 1 word per pair\n"
      "                          mem         processor-memory (Kang et al. 4.2.1): read and write\n"
      "                                      of int and double arrays (--mem-ops, --mem-elems:\n"
      "                                      more), N elements at stride S, out of cache and in\n"
      "                                      cache, one process alone and every process at\n"
      "                                      once; a STREAM-style copy\n"
      "                          pp          processor-processor (4.2.2): permutation,\n"
      "                                      ping-pong, scatter and broadcast, one word to\n"
      "                                      --pp-max-bytes\n"
      "                          disk        memory-disk (4.2.3): read and write of files,\n"
      "                                      sequential and random, through the page cache\n"
      "                                      and around it (O_DIRECT), on process 0\n"
      "                        Default: all.\n"
      "  --primitives LIST     primitives for g and validation, of put, hpput, get, hpget,\n"
      "                        send. Default: all.\n"
      "  --patterns LIST       patterns for g and validation, of alltoall, permutation,\n"
      "                        shift. Default: all.\n"
      "  --max-words N         H_MAX: the most words (8 bytes) one process sends in one\n"
      "                        superstep (g grid h = c*h* <= N, validation, total exchange);\n"
      "                        1 <= N <= %ld. Default: %ld (8 MiB).\n"
      "  --reps N              exactly N repetitions per g/validation/memcpy_h point, N\n"
      "                        samples per latency test (l, as, the hw barrier and round\n"
      "                        trip), N per f kernel and memcpy (for tests; default:\n"
      "                        repeat until the median is known well enough, see below);\n"
      "                        no sentinel visits unless --sentinels.\n"
      "  --mem-max-bytes N     mem: the largest array one process walks (N elements x\n"
      "                        stride S x element size); given, it also caps the STREAM\n"
      "                        arrays (else 4 x the last-level cache).\n"
      "                        Default: 4 x the last-level cache, at least 64 MiB (quick:\n"
      "                        2 x, at least 32 MiB), lowered to fit half the memory.\n"
      "  --mem-ops LIST        mem: the operations, of read (sum the elements), write,\n"
      "                        multiply (products of the elements), divide (a constant\n"
      "                        divided by each element), as Kang et al.'s Fig. 45-56.\n"
      "                        Default: read,write.\n"
      "  --mem-elems LIST      mem: the element types, of int, float (single precision),\n"
      "                        double. Default: int,double. The suite's time grows with\n"
      "                        the combinations of operation and type measured (all of\n"
      "                        both: 12 where the default measures 4).\n"
      "  --pp-max-bytes N      pp: the largest message in bytes, 8 <= N <= 1 GiB. Default:\n"
      "                        32 MiB (quick: 4 MiB). Scatter skips the sizes m at which\n"
      "                        its root would send (p-1) x m > 256 MiB.\n"
      "  --disk-dir DIR        disk: the directory in which a temporary directory is made\n"
      "                        for the files (always removed afterwards). Default:\n"
      "                        $TMPDIR, else /tmp.\n"
      "  --disk-max-bytes N    disk: the largest file. Default: 256 MiB (quick: 64 MiB),\n"
      "                        lowered to a quarter of the free space; an explicit N more\n"
      "                        than half the free space is an error (exit status 1, as for\n"
      "                        every error of the disk section: the directory is removed).\n"
      "  --no-mlock            do not lock the memory into RAM (by default bspprobe calls\n"
      "                        mlockall, so that pages the kernel would reclaim while idle -\n"
      "                        DAMON, ballooning - do not turn into page faults in g).\n"
      "  --library-name NAME   the BSPlib implementation named in the header. Default:\n"
      "                        \"bspkit\" when built against bspkit, else \"unknown\".\n"
      "  -n, --procs P         start P processes (bsp_begin(P)); default bsp_nprocs(), which\n"
      "                        bsprun -n sets. For a library whose programs start their\n"
      "                        own threads and need no launcher (MulticoreBSP for C).\n"
      "  -h, --help            print this help and exit.\n"
      "  -V, --version         print the version and exit.\n"
      "\n"
      "Grid: full: h* = 1, 2, 4, ..., c = 1, 2, 4, ... with c*h* <= H_MAX; quick:\n"
      "h* in {1, 16, 256, 4096, 65536}, c in {1, 8, 64, 512}, c*h* <= H_MAX. The points of all\n"
      "primitives and patterns are measured in one random order. Each sample: bsp_sync, clock,\n"
      "c requests, bsp_sync (send: and the receiver drains its queue), clock; the max over\n"
      "processes. Per point: 1-2 warm-ups, then 6 repetitions, then more (half as many again\n"
      "each time) until the 95%% interval of their median (order statistics) is within +-3%%\n"
      "(quick: +-5%%) of it, at most 400 (quick: 200) and no more once they took 20 ms\n"
      "(quick: 4 ms) or their share of the grid's budget of 90 s (quick: 20 s) left; the\n"
      "same for memcpy_h and the As total exchange (without the budget). Latency tests: 500\n"
      "(quick: 100) samples, each a batch of back-to-back supersteps lasting about 100 us.\n"
      "A fixed-work canary (bspk_state.h) runs on every process before and after every timed\n"
      "batch; its times are in the batch's state object.\n"
      "\n"
      "Calibration: a round times the f dot products (double, plain loop and BLAS; 5\n"
      "repetitions after 1 warm-up, process 0 alone), put/alltoall at (h*, c) = (256, 8) and\n"
      "(4096, 64) as g points (1-2 warm-ups, then at least 5 repetitions and until they took\n"
      "5 ms, at most 400 (quick: 200); the second point only when --max-words >= 262144) and\n"
      "the l variants empty and shift (30 samples each); with --reps N, N of each. Their\n"
      "ratio to a parameter file shows the machine's drift. With --calibration, when the g or\n"
      "validation section measures validation points, 11 rounds run among them: before the\n"
      "first point, after each tenth of the points and after the last.\n"
      "\n"
      "Output: one JSON object per line: a header (machine, library, back end, BLAS, timer,\n"
      "load), then f, memcpy, memcpy_h, hw_barrier, hw_pingpong, l, g, validation,\n"
      "calibration, sentinel, as and load records, then a\n"
      "footer (elapsed time, load, warnings such as a load average above the core count).\n"
      "Every record is flushed as it is written, so a run that is killed leaves a usable\n"
      "file.\n"
      "\n"
      "Exit status: 0 when the file was written; 1 on an error while running; 2 for a bad\n"
      "option.\n",
      (unsigned long long)DEFAULT_SEED, MAX_MAX_WORDS, DEFAULT_MAX_WORDS);
}

static void die_usage(const char *fmt, const char *arg) {
  /* one write: every MPI process parses its command line and may say this at once, and a
   * message written in pieces interleaves with theirs (and with the launcher's banner) */
  char what[512], msg[768];
  snprintf(what, sizeof what, fmt, arg);
  snprintf(msg, sizeof msg, "bspprobe: error: %s\nRun 'bspprobe --help' for the usage.\n", what);
  fputs(msg, stderr);
  exit(2);
}

/* Parses a comma-separated list of names into a bit mask. */
static unsigned parse_list(const char *opt, const char *arg, const char *const *names, int n) {
  unsigned mask = 0;
  const char *q = arg;
  if (!*arg) die_usage("%s needs a non-empty list", opt);
  while (*q) {
    const char *e = strchr(q, ',');
    size_t len = e ? (size_t)(e - q) : strlen(q);
    int found = -1;
    for (int i = 0; i < n; i++)
      if (strlen(names[i]) == len && strncmp(names[i], q, len) == 0) found = i;
    if (found < 0) {
      char msg[512];
      int w = snprintf(msg, sizeof msg, "%s: unknown name '%.*s'; choose from", opt, (int)len, q);
      for (int i = 0; i < n && w > 0 && w < (int)sizeof msg; i++)
        w += snprintf(msg + w, sizeof msg - (size_t)w, "%s %s", i ? "," : "", names[i]);
      die_usage("%s", msg);
    }
    mask |= 1u << found;
    q += len;
    if (*q == ',') {
      q++;
      if (!*q) die_usage("%s: the list ends with a comma", opt);
    }
  }
  return mask;
}

static long long parse_int(const char *opt, const char *arg, long long lo, long long hi) {
  char *end;
  errno = 0;
  long long v = strtoll(arg, &end, 10);
  if (errno || end == arg || *end || v < lo || v > hi) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s needs an integer from %lld to %lld, not '%%s'", opt, lo, hi);
    die_usage(msg, arg);
  }
  return v;
}

static void parse_args(int argc, char **argv) {
  probe_opts *o = &g_opts;
  memset(o, 0, sizeof *o);
  o->seed = DEFAULT_SEED;
  o->sections = (1u << NSECTIONS) - 1;
  o->mlock = 1;
  o->calibration = 0; /* --calibration: see --help */
  o->sentinels = -1;  /* the default: sentinel.c */
  o->primitives = (1u << NPRIMS) - 1;
  o->patterns = (1u << NPATTERNS) - 1;
  o->max_words = 0;
  o->mem_ops = MEM_DEFAULT_MASK;
  o->mem_elems = MEM_DEFAULT_MASK;
  o->argc = argc;
  o->argv = argv;
  const char *selection = NULL; /* the last of --only, --primitives, --patterns given */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    char name[64];
    /* --name=value */
    const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    if (eq && (size_t)(eq - a) < sizeof name) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      val = eq + 1;
      a = name;
    }
#define VALUE() \
  (val ? val : (i + 1 < argc ? argv[++i] : (die_usage("option %s needs a value", a), "")))
#define NOVALUE()                                      \
  do {                                                 \
    if (val) die_usage("option %s takes no value", a); \
  } while (0)
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      NOVALUE();
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
      NOVALUE();
      printf("bspprobe %s (probe-format 1)\n", BSPPROBE_VERSION);
      exit(0);
    } else if (!strcmp(a, "--quick")) {
      NOVALUE();
      o->quick = 1;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      o->output = VALUE();
      if (!*o->output) die_usage("%s needs a file name", a);
    } else if (!strcmp(a, "--seed")) {
      const char *v = VALUE();
      char *end;
      errno = 0;
      unsigned long long s = strtoull(v, &end, 10);
      if (errno || end == v || *end || *v == '-')
        die_usage("--seed needs a non-negative integer, not '%s'", v);
      o->seed = s;
    } else if (!strcmp(a, "--only")) {
      o->sections = parse_list("--only", VALUE(), bspp_section_names, NSECTIONS);
      selection = "--only";
    } else if (!strcmp(a, "--primitives")) {
      o->primitives = parse_list("--primitives", VALUE(), bspp_prim_names, NPRIMS);
      selection = "--primitives";
    } else if (!strcmp(a, "--patterns")) {
      o->patterns = parse_list("--patterns", VALUE(), bspp_pattern_names, NPATTERNS);
      selection = "--patterns";
    } else if (!strcmp(a, "--max-words")) {
      o->max_words = (long)parse_int("--max-words", VALUE(), 1, MAX_MAX_WORDS);
    } else if (!strcmp(a, "--mem-max-bytes")) {
      o->mem_max_bytes = parse_int("--mem-max-bytes", VALUE(), 4096, 1LL << 40);
    } else if (!strcmp(a, "--mem-ops")) {
      o->mem_ops = parse_list("--mem-ops", VALUE(), bspp_mem_op_names, MEM_NOPS);
    } else if (!strcmp(a, "--mem-elems")) {
      o->mem_elems = parse_list("--mem-elems", VALUE(), bspp_mem_elem_names, MEM_NELEMS);
    } else if (!strcmp(a, "--pp-max-bytes")) {
      o->pp_max_bytes = parse_int("--pp-max-bytes", VALUE(), 8, 1LL << 30);
    } else if (!strcmp(a, "--disk-dir")) {
      o->disk_dir = VALUE();
      if (!*o->disk_dir) die_usage("%s needs a directory", a);
    } else if (!strcmp(a, "--disk-max-bytes")) {
      o->disk_max_bytes = parse_int("--disk-max-bytes", VALUE(), 4096, 1LL << 44);
    } else if (!strcmp(a, "--calibrate")) {
      NOVALUE();
      o->calibrate = 1;
    } else if (!strcmp(a, "--calibration")) {
      NOVALUE();
      o->calibration = 1;
    } else if (!strcmp(a, "--no-calibration")) {
      NOVALUE();
      o->calibration = 0;
    } else if (!strcmp(a, "--sentinels")) {
      NOVALUE();
      o->sentinels = 1;
    } else if (!strcmp(a, "--no-sentinels")) {
      NOVALUE();
      o->sentinels = 0;
    } else if (!strcmp(a, "--no-mlock")) {
      o->mlock = 0;
    } else if (!strcmp(a, "--reps")) {
      o->reps = (int)parse_int("--reps", VALUE(), 1, 1000);
    } else if (!strcmp(a, "-n") || !strcmp(a, "--procs")) {
      o->procs = (int)parse_int(a, VALUE(), 1, 1 << 20);
    } else if (!strcmp(a, "--library-name")) {
      o->library_name = VALUE();
      if (!*o->library_name) die_usage("%s needs a name", a);
    } else if (a[0] == '-') {
      die_usage("unknown option '%s'", argv[i]);
    } else {
      die_usage("unexpected argument '%s' (bspprobe takes only options)", a);
    }
#undef VALUE
#undef NOVALUE
  }
  if (o->calibrate && selection)
    die_usage("%s does not apply to --calibrate (its round measures a fixed set)", selection);
  if (o->calibrate && o->sentinels == 1)
    die_usage("%s does not apply to --calibrate (its round measures a fixed set)", "--sentinels");
  if (o->calibrate) o->sections = 0;
  if (!o->max_words) o->max_words = DEFAULT_MAX_WORDS;
  if (!o->library_name) {
#ifdef BSPKIT_EXTENSIONS
    o->library_name = "bspkit";
#else
    o->library_name = "unknown";
#endif
  }
}

/* ---- the machine ----------------------------------------------------------------------------- */

static void read_machine(void) {
  machine_info *m = &g_machine;
  if (gethostname(m->host, sizeof m->host - 1) != 0) snprintf(m->host, sizeof m->host, "unknown");
  bspk_cpu_model(m->cpu, sizeof m->cpu);
  struct utsname u;
  if (uname(&u) == 0) snprintf(m->kernel, sizeof m->kernel, "%s %s", u.sysname, u.release);
  else snprintf(m->kernel, sizeof m->kernel, "unknown");
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  m->cores_online = online > 0 ? (int)online : 1;
  m->cores = m->cores_online;
#ifdef BSPKIT_EXTENSIONS
  m->cores = bspk_cores();
  /* an MPI launcher binds each process to its own core(s): the mask says nothing about the
   * cores of the node */
  if (strncmp(bspk_backend(), "mpi", 3) == 0 && m->cores < m->cores_online)
    m->cores = m->cores_online;
#elif defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) m->cores = CPU_COUNT(&set);
#endif
}

/* The MPI library's version when the program has MPI loaded (an MPI back end, or a BSPlib on
 * top of MPI): MPI_Get_library_version may be called at any time. Else NULL. */
static const char *mpi_version(char *buf, size_t n) {
#if defined(__linux__) && !defined(BSPPROBE_NO_DLSYM)
  void *sym = dlsym(RTLD_DEFAULT, "MPI_Get_library_version");
  if (!sym) return NULL;
  int (*fn)(char *, int *);
  memcpy(&fn, &sym, sizeof fn);
  static char text[16384]; /* >= MPI_MAX_LIBRARY_VERSION_STRING; process 0 only */
  int len = 0;
  if (fn(text, &len) != 0) return NULL;
  text[len > 0 && len < (int)sizeof text ? len : 0] = 0;
  size_t len1 = strcspn(text, "\n"); /* the first line */
  if (len1 >= n) len1 = n - 1;
  memcpy(buf, text, len1);
  buf[len1] = 0;
  return buf;
#else
  (void)buf;
  (void)n;
  return NULL;
#endif
}

/* ---- timer check ----------------------------------------------------------------------------- */

static void measure_timer(double *resolution, double *overhead, double *getres) {
  struct timespec ts;
  *getres =
      clock_getres(CLOCK_MONOTONIC, &ts) == 0 ? (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec : -1;
  double best = 1e9;
  for (int i = 0; i < 2000; i++) { /* smallest step the clock makes */
    double a = bspk_monotonic_seconds(), b;
    do b = bspk_monotonic_seconds();
    while (b == a);
    if (b - a < best) best = b - a;
  }
  *resolution = best;
  const int n = 200000;
  double t0 = bspk_monotonic_seconds(), sink = 0;
  for (int i = 0; i < n; i++) sink += bspk_monotonic_seconds();
  double t1 = bspk_monotonic_seconds();
  *overhead = (t1 - t0) / n;
  if (sink == 42) /* never: keeps the loop */
    fprintf(stderr, " ");
}

/* ---- header and footer ----------------------------------------------------------------------- */

static void iso_date(char *buf, size_t n, int compact) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, n, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void describe_binding(probe_ctx *c, char *buf, size_t n) {
  snprintf(buf, n, "unknown");
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int cnt = CPU_COUNT(&set);
    if (cnt == 1) {
      int cpu = 0;
      while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set)) cpu++;
      snprintf(buf, n, "pinned: process 0 bound to core %d%s", cpu,
               c->p <= g_machine.cores ? " (1 process per core)" : "");
    } else {
      snprintf(buf, n, "unpinned: process 0 may run on %d cores", cnt);
    }
  }
#endif
#ifdef BSPKIT_EXTENSIONS
  const char *pin = getenv("BSPKIT_PIN");
  if (pin) {
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "; BSPKIT_PIN=%s", pin);
  }
#endif
  (void)c;
}

static int g_memory_locked = -1; /* 1 locked, 0 not asked (--no-mlock), -errno failed */

static void write_header(probe_ctx *c, const char *date) {
  jbuf *j = &c->j;
  char buf[512];
  double res, ovh, getres, la[3];
  measure_timer(&res, &ovh, &getres);
  bspp_read_loadavg(la);
  bspp_json_begin(j, "header");
  bspp_json_int(j, "format", 1);
  bspp_json_str(j, "tool", "bspprobe");
  bspp_json_str(j, "version", BSPPROBE_VERSION);
  bspp_json_str(j, "date", date);
  bspp_json_str(j, "host", g_machine.host);
  bspp_json_str(j, "cpu", g_machine.cpu);
  bspp_json_int(j, "cores", g_machine.cores);
  bspp_json_int(j, "cores_online", g_machine.cores_online);
  bspp_json_str(j, "kernel", g_machine.kernel);
  bspp_json_str(j, "compiler", PROBE_COMPILER);
  bspp_json_str(j, "library", c->opt->library_name);
#ifdef BSPKIT_EXTENSIONS
  bspp_json_str(j, "backend", bspk_backend());
#else
  bspp_json_str(j, "backend", "unknown");
#endif
  bspp_json_int(j, "p", c->p);
  describe_binding(c, buf, sizeof buf);
  bspp_json_str(j, "binding", buf);
  bspp_json_bool(j, "memory_locked", g_memory_locked == 1);
  if (g_memory_locked < 0)
    bspp_add_warning(c,
                     "mlockall failed (%s): pages reclaimed while idle may turn into page faults "
                     "in g (raise the memlock limit: ulimit -l unlimited)",
                     strerror(-g_memory_locked));
  bspp_json_str(j, "blas", bspp_blas_name(buf, sizeof buf));
  bspp_json_str(j, "blas_coretype", getenv("OPENBLAS_CORETYPE"));
  bspp_json_str(j, "blas_config", bspp_blas_config());
  bspp_json_str(j, "blas_corename", bspp_blas_corename());
  bspp_json_str(j, "mpi", mpi_version(buf, sizeof buf));
  {
    size_t len = 0;
    buf[0] = 0;
    char *cmd = NULL;
    for (int i = 0; i < c->opt->argc; i++) len += strlen(c->opt->argv[i]) + 1;
    cmd = xmalloc(len + 1);
    cmd[0] = 0;
    for (int i = 0; i < c->opt->argc; i++) {
      if (i) strcat(cmd, " ");
      strcat(cmd, c->opt->argv[i]);
    }
    bspp_json_str(j, "command", cmd);
    free(cmd);
  }
  bspp_json_str(j, "mode", c->opt->calibrate ? "calibrate" : c->opt->quick ? "quick" : "full");
  bspp_json_int(j, "seed", (long long)c->opt->seed);
  bspp_json_obj_begin(j, "timer");
  bspp_json_num(j, "resolution_s", res);
  bspp_json_num(j, "overhead_s", ovh);
  bspp_json_num(j, "getres_s", getres);
  bspp_json_str(j, "clock", "clock_gettime(CLOCK_MONOTONIC)");
  bspp_json_obj_end(j);
  if (la[0] >= 0) bspp_json_nums(j, "loadavg_start", la, 3, "%.2f");
  else bspp_json_null(j, "loadavg_start"); /* no /proc/loadavg */
  {
    long m[64], k[64];
    int nm, nk;
    bspp_plan_grid_axes(c, m, &nm, k, &nk);
    bspp_json_obj_begin(j, "grid");
    bspp_json_longs(j, "msg_words", m, nm);
    bspp_json_longs(j, "count", k, nk);
    bspp_json_int(j, "max_words", c->hmax);
    bspp_json_str(j, "rule", "points (h*, c) with c*h* <= max_words");
    const char *names[8];
    int n = 0;
    for (int i = 0; i < NPRIMS; i++)
      if (c->opt->primitives >> i & 1) names[n++] = bspp_prim_names[i];
    bspp_json_strs(j, "primitives", names, n);
    n = 0;
    for (int i = 0; i < NPATTERNS; i++)
      if (c->opt->patterns >> i & 1) names[n++] = bspp_pattern_names[i];
    bspp_json_strs(j, "patterns", names, n);
    bspp_json_int(j, "points_per_combo", bspp_grid_points_per_combo(c));
    bspp_json_obj_end(j);
  }
  {
    const char *names[NSECTIONS];
    int n = 0;
    for (int i = 0; i < NSECTIONS; i++)
      if (c->opt->sections >> i & 1) names[n++] = bspp_section_names[i];
    if (c->opt->calibrate) names[n++] = "calibration";
    bspp_json_strs(j, "sections", names, n);
  }
  bspp_json_obj_begin(j, "repetitions");
  if (c->opt->reps > 0) {
    bspp_json_int(j, "fixed", c->opt->reps);
  } else {
    bspp_json_int(j, "min_reps", c->prm.min_reps);
    bspp_json_int(j, "max_reps", c->prm.max_reps);
    bspp_json_num(j, "min_point_s", c->prm.min_point_s);
    bspp_json_int(j, "latency_samples", c->prm.l_samples);
    bspp_json_num(j, "latency_batch_s", c->prm.l_batch_s);
    bspp_json_str(j, "rule", "adaptive");
    bspp_json_num(j, "target_ci_rel", c->prm.target_ci_rel);
    bspp_json_num(j, "confidence", 0.95);
    bspp_json_num(j, "max_point_s", c->prm.max_point_s);
    bspp_json_num(j, "budget_s", c->prm.g_budget_s);
    bspp_json_int(j, "mem_reps", c->prm.mem_reps);
  }
  bspp_json_obj_end(j);
  bspp_json_obj_begin(j, "canary");
  bspp_json_int(j, "bytes", (long long)BSPK_CANARY_BYTES);
  bspp_json_int(j, "passes", BSPK_CANARY_PASSES);
  bspp_json_str(j, "kernel",
                "passes over the buffer, one load and one store per 64-byte line, folded into a "
                "chain of integer multiplies; timed twice, the shorter time kept");
  bspp_json_obj_end(j);
  if (bspp_sentinels_on(c)) {
    bspp_json_obj_begin(j, "sentinels");
    const char *regimes[] = {"compute", "sync", "small_h", "large_h"};
    bspp_json_strs(j, "regimes", regimes, 4);
    bspp_json_str(j, "visits",
                  "before the first section, after each section, and every so many points "
                  "inside the g grid's order");
    bspp_json_obj_end(j);
  } else {
    bspp_json_null(j, "sentinels");
  }
  bspp_emit(c);
  if (res > 1e-6) /* in the unit people read (1.5 µs, 10.0 ms), never e-notation */
    bspp_add_warning(c, "the clock's resolution is %.1f %s: short samples are coarse",
                     res < 1e-3 ? res * 1e6 : res * 1e3, res < 1e-3 ? "µs" : "ms");
  if (la[0] > g_machine.cores)
    bspp_add_warning(c, "load average %.2f > %d cores at start: noisy run", la[0], g_machine.cores);
  else if (la[0] >= 0.5 * g_machine.cores)
    bspp_add_warning(c,
                     "load average %.2f at start: other work uses about %.1f of the %d cores; "
                     "timings may be noisy",
                     la[0], la[0], g_machine.cores);
  if (c->p > g_machine.cores) {
#ifdef BSPKIT_EXTENSIONS
    if (strncmp(bspk_backend(), "mpi", 3) == 0)
      bspp_add_warning(c,
                       "p = %d > %d cores of this node: processes share cores unless they run on "
                       "several nodes",
                       c->p, g_machine.cores);
    else
#endif
      bspp_add_warning(c, "p = %d > %d cores: processes share cores (oversubscribed)", c->p,
                       g_machine.cores);
  }
}

/* Lock the probe's memory (now and what it allocates later) into RAM. Some machines reclaim
 * pages that went unused for a moment (Linux DAMON with a pageout scheme, memory ballooning in
 * VMs): touching a reclaimed buffer again costs a page fault per page, which would show up as
 * a slow, random g. A communication library pins its buffers for the same reason. */
static void lock_memory(void) {
  if (!g_opts.mlock) {
    g_memory_locked = 0;
    return;
  }
  g_memory_locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? 1 : -errno;
}

static void write_footer(probe_ctx *c, double calibration_s) {
  double la[3];
  bspp_read_loadavg(la);
  /* the run's own processes are runnable while it measures: count them out */
  if (la[0] >= 0 && la[0] - c->p > g_machine.cores)
    bspp_add_warning(c,
                     "load average %.2f at the end (this run's %d processes included) > %d cores "
                     "+ %d: noisy run",
                     la[0], c->p, g_machine.cores, c->p);
  jbuf *j = &c->j;
  bspp_json_begin(j, "footer");
  bspp_json_num(j, "elapsed_s", bspk_monotonic_seconds() - c->t0);
  if (la[0] >= 0) bspp_json_nums(j, "loadavg_end", la, 3, "%.2f");
  else bspp_json_null(j, "loadavg_end");
  bspp_json_arr_begin(j, "warnings");
  for (int i = 0; i < c->nwarnings; i++) bspp_json_str(j, NULL, c->warnings[i]);
  bspp_json_arr_end(j);
  bspp_json_obj_begin(j, "section_s");
  for (int i = 0; i < NSECTIONS; i++)
    if (c->opt->sections >> i & 1) bspp_json_num(j, bspp_section_names[i], c->section_s[i]);
  if (c->opt->calibrate) bspp_json_num(j, "calibration", calibration_s);
  bspp_json_obj_end(j);
  if (bspp_sentinels_on(c)) {
    bspp_json_obj_begin(j, "sentinels");
    bspp_json_int(j, "visits", c->sentinel_visits);
    bspp_json_num(j, "seconds", c->sentinel_s);
    bspp_json_obj_end(j);
  }
  bspp_json_int(j, "records", c->records + 1);
  bspp_emit(c);
}

/* ---- the SPMD part --------------------------------------------------------------------------- */

static void spmd(void) {
  bsp_begin(g_opts.procs ? g_opts.procs : bsp_nprocs());
  probe_ctx *c = bspp_ctx_setup(&g_opts, g_opts.max_words);

  /* process 0 opens the output; everyone learns whether that worked */
  char date[32], cdate[32], path[1024];
  double failed = 0;
  if (c->s == 0) {
    iso_date(date, sizeof date, 0);
    iso_date(cdate, sizeof cdate, 1);
    c->tty = isatty(STDERR_FILENO);
    if (c->opt->output) snprintf(path, sizeof path, "%s", c->opt->output);
    else snprintf(path, sizeof path, "bspprobe-%s-p%d-%s.jsonl", g_machine.host, c->p, cdate);
    c->out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w"); /* progress is on stderr */
    if (!c->out) {
      fprintf(stderr, "bspprobe: error: cannot open the output file '%s': %s\n", path,
              strerror(errno));
      failed = 1;
    }
  }
  if (bspk_max_over_processes(failed, c->allv) > 0) {
    if (c->s == 0) g_exit_status = 1;
  } else {
    if (c->s == 0) {
      fprintf(stderr, "bspprobe: %s%s at p = %d, writing %s\n",
              c->opt->calibrate ? "calibration, " : "", c->opt->quick ? "quick mode" : "full mode",
              c->p, path);
      write_header(c, date);
    }
    bsp_sync(); /* the others wait while process 0 checks the timer */
    static const int order[] = {SEC_F, SEC_MEMCPY,     SEC_HW, SEC_MEM, SEC_L,
                                SEC_G, SEC_VALIDATION, SEC_AS, SEC_PP,  SEC_DISK};
    double calibration_s = 0;
    if (c->opt->calibrate) {
      bsp_sync();
      /* no progress line: it would add a load record, and the file is header, calibration,
       * footer; a round takes a fraction of a second */
      double t = bspk_monotonic_seconds();
      bspp_run_calibration_round(c, 0, -1);
      calibration_s = bspk_monotonic_seconds() - t;
    }
    int sentinels = bspp_sentinels_on(c);
    if (sentinels) {
      bsp_sync();
      bspp_progress(c, "sentinels", 0, 1, 1);
      bspp_sentinel_visit(c, "start", -1);
    }
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
      int sec = order[i];
      if (!(c->opt->sections >> sec & 1)) continue;
      bsp_sync();
      c->sec_t0 = bspk_monotonic_seconds();
      switch (sec) {
        case SEC_F: bspp_measure_f(c); break;
        case SEC_MEMCPY: bspp_measure_memcpy(c); break;
        case SEC_HW: bspp_measure_hw(c); break;
        case SEC_L: bspp_measure_l(c); break;
        case SEC_G: bspp_measure_g(c); break;
        case SEC_VALIDATION: bspp_measure_validation(c); break;
        case SEC_AS: bspp_measure_as(c); break;
        case SEC_MEM: bspp_measure_mem(c); break;
        case SEC_PP: bspp_measure_pp(c); break;
        case SEC_DISK: bspp_measure_disk(c); break;
      }
      c->section_s[sec] = bspk_monotonic_seconds() - c->sec_t0;
      if (c->s == 0) {
        bspp_progress_end(c, bspp_section_names[sec]);
        bspp_maybe_load_record(c, 1);
      }
      if (sentinels) {
        char where[64];
        snprintf(where, sizeof where, "after %s", bspp_section_names[sec]);
        bsp_sync();
        bspp_sentinel_visit(c, where, -1);
      }
    }
    bsp_sync();
    if (c->s == 0) {
      write_footer(c, calibration_s);
      if ((c->out == stdout ? fflush(c->out) : fclose(c->out)) != 0) {
        fprintf(stderr, "bspprobe: error: cannot write '%s'\n", path);
        g_exit_status = 1;
      } else {
        fprintf(stderr, "bspprobe: done in %.1f s: %ld records in %s\n",
                bspk_monotonic_seconds() - c->t0, c->records, path);
      }
      c->out = NULL;
    }
  }
  bspp_ctx_teardown(c);
  bsp_end();
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  read_machine();
  lock_memory();
  bsp_init(spmd, argc, argv);
  spmd();
  return g_exit_status;
}
