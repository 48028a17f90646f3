/*
 * mcbsp_style.c - a program written the way MulticoreBSP for C programs are: it includes
 * <mcbsp.h>, sets affinity hints before the SPMD section, uses MulticoreBSP's type names,
 * reads its neighbour's data with bsp_direct_get and sends with bsp_hpsend. Built with
 * bspcc as a user would (tests/compat/CMakeLists.txt). Exits 0 exactly when every check
 * passed; a failed check ends the run through bsp_vabort (status 1).
 *
 *   mcbsp_style [--no-direct-get]
 * --no-direct-get skips the bsp_direct_get checks (the mpi back end does not have it; the
 * test there checks its error message instead).
 *
 * bsp_direct_get reads the owner's memory while the owner runs: every read here is of data
 * the owner wrote in an earlier superstep and does not touch in the superstep of the read
 * (the rule in docs/compatibility.md), so the ThreadSanitizer build must find no race.
 *
 * The affinity hints read back as set, and unset as docs/compatibility.md says (the defaults,
 * and the cores of this program's affinity mask); bsp_begin(P) starts P processes although
 * mcbsp_set_maximum_threads said 1.
 */
#define _GNU_SOURCE /* sched_getaffinity and CPU_COUNT: the cores this program may use */
#include <mcbsp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NVALUES = 8 };

static int with_direct_get = 1;
/* bsp_nprocs() before bsp_init (bsprun -n), set before any process starts. */
static int asked_nprocs;

static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  bsp_vabort(format, args);
}

/* What process s holds at index i in round r: known to every process without asking. */
static long reference(MCBSP_PROCESSOR_INDEX_DATATYPE s, int i, int round) {
  return 1000L * s + 10L * i + round;
}

static void check_direct_get(long *values, int round) {
  mcbsp_pid_t s = bsp_pid(), p = bsp_nprocs();
  mcbsp_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
  long got[3] = {-1, -1, -1};
  /* Three values from the middle of the right neighbour's area (an offset, not index 0). */
  bsp_direct_get(right, values, 2 * (MCBSP_BYTESIZE_TYPE)sizeof(long), got, 3 * sizeof(long));
  for (int i = 0; i < 3; i++)
    if (got[i] != reference(right, 2 + i, round))
      fail("round %d: bsp_direct_get from %d at index %d gave %ld, not %ld", round, right, 2 + i,
           got[i], reference(right, 2 + i, round));
  /* The last value of the left neighbour's, and one of this process' own. */
  long last = -1, own = -1;
  bsp_direct_get(left, values, (NVALUES - 1) * sizeof(long), &last, sizeof last);
  bsp_direct_get(s, values, sizeof(long), &own, sizeof own);
  if (last != reference(left, NVALUES - 1, round) || own != reference(s, 1, round))
    fail("round %d: bsp_direct_get gave %ld and %ld, not %ld and %ld", round, last, own,
         reference(left, NVALUES - 1, round), reference(s, 1, round));
  /* A zero-byte read is allowed and copies nothing. */
  bsp_direct_get(right, values, 0, &last, 0);
}

static void check_hpsend(void) {
  mcbsp_pid_t s = bsp_pid(), p = bsp_nprocs();
  MCBSP_BYTESIZE_TYPE tag_size = sizeof(int);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  /* Unbuffered: tag and payload stay unchanged until the sync. */
  int tag = (int)s;
  double payload[2] = {s + 0.5, -s - 0.25};
  for (mcbsp_pid_t t = 0; t < p; t++) bsp_hpsend(t, &tag, payload, sizeof payload);
  bsp_sync();
  MCBSP_NUMMSG_TYPE nmessages = -1;
  MCBSP_BYTESIZE_TYPE total = -1;
  bsp_qsize(&nmessages, &total);
  if (nmessages != p || total != p * (MCBSP_BYTESIZE_TYPE)sizeof payload)
    fail("bsp_qsize after bsp_hpsend: %d messages of %d bytes, not %d of %d", nmessages, total, p,
         p * (int)sizeof payload);
  /* MulticoreBSP documents the byte count as optional: NULL asks for the messages alone */
  MCBSP_NUMMSG_TYPE counted = -1;
  bsp_qsize(&counted, NULL);
  if (counted != p) fail("bsp_qsize(&n, NULL) after bsp_hpsend: %d messages, not %d", counted, p);
  for (mcbsp_pid_t i = 0; i < p; i++) {
    MCBSP_BYTESIZE_TYPE status = -1;
    int from = -1;
    double got[2] = {0, 0};
    bsp_get_tag(&status, &from);
    bsp_move(got, sizeof got);
    if (status != (MCBSP_BYTESIZE_TYPE)sizeof got || from != i || got[0] != from + 0.5 ||
        got[1] != -from - 0.25)
      fail("message %d: status %d, tag %d, payload %g %g", i, status, from, got[0], got[1]);
  }
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  if (bsp_nprocs() != asked_nprocs)
    fail(
        "bsp_begin started %d processes, not the %d asked for (mcbsp_set_maximum_threads "
        "said 1: a hint only)",
        bsp_nprocs(), asked_nprocs);
  if (mcbsp_nprocs() != bsp_nprocs() || mcbsp_pid() != bsp_pid())
    fail("mcbsp_nprocs/mcbsp_pid (%d, %d) differ from bsp_nprocs/bsp_pid (%d, %d)", mcbsp_nprocs(),
         mcbsp_pid(), bsp_nprocs(), bsp_pid());
  mcbsp_pid_t s = bsp_pid();
  long *values = malloc(NVALUES * sizeof *values);
  if (!values) fail("out of memory");
  for (int i = 0; i < NVALUES; i++) values[i] = reference(s, i, 0);
  bsp_push_reg(values, NVALUES * sizeof *values);
  bsp_sync(); /* the registration takes effect; the writes above come before every read */

  if (with_direct_get) {
    check_direct_get(values, 0);
    bsp_sync(); /* every read of round 0 is done before anyone writes round 1 */
    for (int i = 0; i < NVALUES; i++) values[i] = reference(s, i, 1);
    bsp_sync();
    check_direct_get(values, 1);
  }
  check_hpsend();

  bsp_pop_reg(values);
  bsp_sync();
  free(values);
  bsp_end();
}

/* Unset, the hints read back as MulticoreBSP's defaults, and as the MCBSP_DEFAULT_* globals
 * say once a program assigns them. */
static int check_defaults(void) {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 0;
  size_t cores = (size_t)CPU_COUNT(&mask);
  size_t *pins = mcbsp_get_pinning(), *res = mcbsp_get_reserved_cores();
  int ok = mcbsp_get_affinity_mode() == SCATTER && mcbsp_get_threads_per_core() == 1 &&
           mcbsp_get_thread_numbering() == CONSECUTIVE && mcbsp_get_available_cores() == cores &&
           mcbsp_get_maximum_threads() == cores && pins == NULL && res == NULL &&
           mcbsp_get_reserved_cores_number() == 0;
  MCBSP_DEFAULT_AFFINITY = COMPACT;
  MCBSP_DEFAULT_THREADS_PER_CORE = 4;
  MCBSP_DEFAULT_THREAD_NUMBERING = WRAPPED;
  ok = ok && mcbsp_get_affinity_mode() == COMPACT && mcbsp_get_threads_per_core() == 4 &&
       mcbsp_get_thread_numbering() == WRAPPED;
  return ok;
}

/* MulticoreBSP's affinity calls are hints here: accepted, recorded, read back. */
static int check_hints(void) {
  static int manual[2] = {1, 0};
  MCBSP_MANUAL_AFFINITY = manual; /* MulticoreBSP 1.x's globals */
  MCBSP_AFFINITY = COMPACT;
  mcbsp_set_affinity_mode(COMPACT);
  if (mcbsp_get_affinity_mode() != COMPACT) return 0;
  mcbsp_set_threads_per_core(2);
  mcbsp_set_thread_numbering(WRAPPED);
  mcbsp_set_available_cores(6);
  mcbsp_set_maximum_threads(1);
  size_t reserved[1] = {5};
  mcbsp_set_reserved_cores(reserved, 1);
  size_t pinning[3] = {0, 2, 1};
  mcbsp_set_pinning(pinning, 3);
  pinning[0] = 99; /* the library keeps its own copy */
  size_t *pins = mcbsp_get_pinning(), *res = mcbsp_get_reserved_cores();
  int ok = mcbsp_get_threads_per_core() == 2 && mcbsp_get_thread_numbering() == WRAPPED &&
           mcbsp_get_available_cores() == 6 && mcbsp_get_maximum_threads() == 1 &&
           mcbsp_get_affinity_mode() == MANUAL && pins && pins[0] == 0 && pins[1] == 2 &&
           pins[2] == 1 && mcbsp_get_reserved_cores_number() == 1 && res && res[0] == 5;
  free(pins);
  free(res);
  return ok;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-direct-get") == 0) {
      with_direct_get = 0;
    } else {
      fprintf(stderr, "usage: %s [--no-direct-get]\n", argv[0]);
      return 2;
    }
  }
  if (!check_defaults()) {
    fprintf(stderr, "mcbsp_style: the unset mcbsp_get_* hints are not the defaults\n");
    return 1;
  }
  asked_nprocs = bsp_nprocs();
  if (!check_hints()) {
    fprintf(stderr, "mcbsp_style: the mcbsp_set_* hints do not read back as set\n");
    return 1;
  }
  bsp_init(spmd, argc, argv);
  spmd();
  printf("mcbsp_style: all checks passed\n");
  return 0;
}
