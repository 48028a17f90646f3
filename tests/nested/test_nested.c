/*
 * test_nested.c - nested SPMD sections (Multi-BSP, MulticoreBSP's hierarchical runs) on
 * the threads back end.
 *
 * main calls bsp_init(outer) and outer(); every process s of the top-level section (p of
 * them, from bsprun -n) leaves state of its own in flight, then starts nested sections:
 *  - with bsp_init(child) and child() (the MulticoreBSP style): a section of 1 + s % 3
 *    processes, so that the children of different processes differ in size; in it each
 *    process learns who started it by a put from its process 0, sends it a message (BSMP,
 *    with a tag size of its own) and reads a neighbour with a get; process 0 of every child
 *    starts a third level (bsp_init(grandchild), 2 processes) and checks its own state after;
 *  - the same child function a second time in the same parent superstep;
 *  - bsp_begin inline in outer after bsp_init(inline_others): the caller runs the code
 *    after its bsp_begin, the other processes run inline_others (the same supersteps).
 * After each nested section the parent's pid, nprocs, superstep count, tag size,
 * registrations, message queue and the put it issued before the child are checked, and at
 * the end process 0 checks in main how many sections ran at each level.
 *
 * Per-process values are kept in locals and in _Thread_local variables: the thread of a
 * process that starts a child section is process 0 of the child. Exits 0 exactly when
 * every check passed.
 *
 * With --profile FILE the program sets BSPKIT_PROFILE itself and checks, after the last
 * bsp_end, that the profile holds the top-level section only (docs/semantics.md): one
 * header of p processes, OUTER_SUPERSTEPS superstep records and one process record per
 * top-level process, nothing of the nested sections.
 * Usage: test_nested [--nprocs P] [--profile FILE]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>

#include "testutil.h"

#define TAG_PARENT 4       /* the parent section's tag size */
#define TAG_CHILD 12       /* each child section's */
#define GRANDCHILD_P 2     /* the third level's size */
#define OUTER_SUPERSTEPS 6 /* outer's: five bsp_sync and bsp_end */

static int expected_p = -1;
static atomic_int child_processes;      /* processes that ran a child section's body */
static atomic_int grandchild_processes; /* the same for the third level */
static atomic_int inline_processes;
static int top_p_on_0 = -1;

/* The process of the enclosing section that is starting a section on this thread. */
static _Thread_local int starter_pid = -1;

static int child_size(int parent_pid) { return 1 + parent_pid % 3; }

/* ---- the third level -------------------------------------------------------------------- */

static void grandchild(void) {
  bsp_begin(GRANDCHILD_P);
  int p = bsp_nprocs(), s = bsp_pid();
  TU_EQ("bsp_nprocs() in the grandchild", GRANDCHILD_P, p);
  TU_CHECK(s >= 0 && s < p, "bsp_pid() = %d in the grandchild", s);
  TU_EQ("superstep at the grandchild's start", 0, bspk_superstep());
  /* Exchange pids with a put: each writes its pid into the other's slot. */
  int slots[GRANDCHILD_P] = {-1, -1};
  bsp_push_reg(slots, (int)sizeof slots);
  bsp_sync();
  bsp_put((s + 1) % p, &s, slots, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  TU_EQ("grandchild: the pid put by the other process", (s + 1) % p, slots[(s + 1) % p]);
  bsp_pop_reg(slots);
  bsp_sync();
  atomic_fetch_add(&grandchild_processes, 1);
  bsp_end();
}

/* ---- the second level ------------------------------------------------------------------- */

static void child(void) {
  bsp_begin(child_size(starter_pid)); /* process 0's argument decides; the others' is -1 */
  int k = bsp_nprocs(), c = bsp_pid();
  TU_CHECK(c >= 0 && c < k, "bsp_pid() = %d in a child of %d processes", c, k);
  TU_EQ("superstep at the child's start", 0, bspk_superstep());
  bsp_nprocs_t qn = 99;
  bsp_size_t qbytes = 99;
  bsp_qsize(&qn, &qbytes);
  TU_EQ("messages queued at the child's start (the parent's are not the child's)", 0, qn);

  /* Process 0 tells every process of the child which parent process started it. */
  int parent = c == 0 ? starter_pid : -1;
  bsp_push_reg(&parent, (int)sizeof parent);
  bsp_size_t tag = TAG_CHILD;
  bsp_set_tagsize(&tag);
  TU_EQ("bsp_set_tagsize returns the old (initial) tag size", 0, tag);
  bsp_sync();
  if (c == 0)
    for (int q = 1; q < k; q++) bsp_put(q, &parent, &parent, 0, (int)sizeof parent);
  bsp_sync();
  TU_CHECK(parent >= 0, "child process %d did not get its parent's pid", c);
  TU_EQ("the child's size for its parent", child_size(parent), k);

  /* BSMP: everyone sends process 0 (its pid, parent) with a 12-byte tag. */
  char tagbuf[TAG_CHILD];
  memset(tagbuf, 0, sizeof tagbuf);
  memcpy(tagbuf, &c, sizeof c);
  int payload[2] = {c, parent};
  bsp_send(0, tagbuf, payload, (int)sizeof payload);
  int mine = 100 * parent + c, next = -1;
  bsp_push_reg(&mine, (int)sizeof mine);
  bsp_sync();
  bsp_nprocs_t nmsg = -1;
  bsp_size_t nbytes = -1;
  bsp_qsize(&nmsg, &nbytes);
  TU_EQ("child: messages on process 0 (none elsewhere)", c == 0 ? k : 0, nmsg);
  TU_EQ("child: bytes on process 0", c == 0 ? k * (int)sizeof payload : 0, nbytes);
  for (int i = 0; i < nmsg; i++) {
    bsp_size_t status = -1;
    char got_tag[TAG_CHILD];
    int got[2];
    bsp_get_tag(&status, got_tag);
    bsp_move(got, (int)sizeof got);
    int from = -1;
    memcpy(&from, got_tag, sizeof from);
    TU_EQ("child: message i is from process i (tag)", i, from);
    TU_EQ("child: message i is from process i (payload)", i, got[0]);
    TU_EQ("child: every process names the same parent", parent, got[1]);
  }
  /* DRMA get: read the next process' value from a registered variable. */
  bsp_get((c + 1) % k, &mine, 0, &next, (int)sizeof next);
  bsp_sync();
  TU_EQ("child: get from the next process", 100 * parent + (c + 1) % k, next);

  if (c == 0) {
    /* Third level, from process 0 of the child only. */
    long step = bspk_superstep();
    bsp_init(grandchild, 0, NULL);
    grandchild();
    TU_EQ("child's pid after the grandchild", 0, bsp_pid());
    TU_EQ("child's nprocs after the grandchild", k, bsp_nprocs());
    TU_EQ("child's superstep after the grandchild", step, bspk_superstep());
  }
  bsp_pop_reg(&mine);
  bsp_pop_reg(&parent);
  bsp_sync();
  atomic_fetch_add(&child_processes, 1);
  bsp_end();
}

/* A child whose messages are checked where they arrive. */
static void child_messages(void) {
  bsp_begin(child_size(starter_pid));
  int k = bsp_nprocs(), c = bsp_pid();
  bsp_size_t tag = TAG_CHILD;
  bsp_set_tagsize(&tag);
  bsp_sync();
  char tagbuf[TAG_CHILD];
  memset(tagbuf, 0, sizeof tagbuf);
  memcpy(tagbuf, &c, sizeof c);
  int payload = 1000 + c;
  bsp_send(0, tagbuf, &payload, (int)sizeof payload);
  bsp_sync();
  bsp_nprocs_t nmsg = -1;
  bsp_size_t nbytes = -1;
  bsp_qsize(&nmsg, &nbytes);
  TU_EQ("child: messages on process 0", c == 0 ? k : 0, nmsg);
  TU_EQ("child: bytes on process 0", c == 0 ? k * (int)sizeof(int) : 0, nbytes);
  for (int i = 0; i < nmsg; i++) {
    bsp_size_t status = -1;
    char got_tag[TAG_CHILD];
    bsp_get_tag(&status, got_tag);
    TU_EQ("child: message size", (int)sizeof(int), status);
    int from, value;
    memcpy(&from, got_tag, sizeof from);
    bsp_move(&value, (int)sizeof value);
    TU_EQ("child: message i comes from process i", i, from);
    TU_EQ("child: payload", 1000 + i, value);
  }
  bsp_end();
}

/* ---- bsp_begin inline: the caller's side is in outer, the others run this --------------- */

static void inline_body(void) {
  int k = bsp_nprocs(), c = bsp_pid();
  int v = -1;
  bsp_push_reg(&v, (int)sizeof v);
  bsp_sync();
  int w = 7 * c + 1;
  bsp_put((c + 1) % k, &w, &v, 0, (int)sizeof w);
  bsp_sync();
  TU_EQ("inline child: value put by the previous process", 7 * ((c + k - 1) % k) + 1, v);
  bsp_pop_reg(&v);
  atomic_fetch_add(&inline_processes, 1);
}

static void inline_others(void) {
  bsp_begin(-1); /* ignored: process 0's argument decides */
  inline_body();
  bsp_end();
}

/* ---- the top level ---------------------------------------------------------------------- */

static void outer(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  if (s == 0) top_p_on_0 = p;

  /* State of the parent section in flight while its children run: a registration, a tag
   * size, a queue with one message from every process, and a put issued but not synced. */
  int *area = tu_malloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; i++) area[i] = -1;
  bsp_push_reg(area, (int)sizeof(int) * p);
  bsp_size_t tag = TAG_PARENT;
  bsp_set_tagsize(&tag);
  bsp_sync();
  int tagv = s;
  for (int q = 0; q < p; q++) bsp_send(q, &tagv, &s, (int)sizeof s);
  bsp_sync();
  int value = 10 * s + 3;
  bsp_put((s + 1) % p, &value, area, s * (int)sizeof(int), (int)sizeof(int));
  long step = bspk_superstep();
  double t0 = bsp_time();

  starter_pid = s;
  bsp_init(child, 0, NULL);
  child();
  child(); /* a second child section in the same parent superstep */
  bsp_init(child_messages, 0, NULL);
  child_messages();

  /* bsp_begin inline: this process runs the code after bsp_begin, the others inline_others. */
  bsp_init(inline_others, 0, NULL);
  bsp_begin(2 + s % 2);
  TU_EQ("inline child: process 0 is the caller", 0, bsp_pid());
  TU_EQ("inline child: size", 2 + s % 2, bsp_nprocs());
  inline_body();
  bsp_end();
  starter_pid = -1;

  TU_EQ("parent's bsp_pid() after its children", s, bsp_pid());
  TU_EQ("parent's bsp_nprocs() after its children", p, bsp_nprocs());
  TU_EQ("parent's superstep after its children", step, bspk_superstep());
  TU_CHECK(bsp_time() >= t0, "parent's bsp_time() went back: %g < %g", bsp_time(), t0);
  /* The queue of the parent's last sync is still there, with the parent's tag size. */
  bsp_nprocs_t nmsg = -1;
  bsp_size_t nbytes = -1;
  bsp_qsize(&nmsg, &nbytes);
  TU_EQ("parent's queue after its children", p, nmsg);
  TU_EQ("parent's queued bytes after its children", p * (int)sizeof(int), nbytes);
  for (int i = 0; i < p; i++) {
    bsp_size_t status = -1;
    int from = -1, got = -1;
    bsp_get_tag(&status, &from);
    TU_EQ("parent's message size", (int)sizeof(int), status);
    TU_EQ("parent's message i is from process i", i, from);
    bsp_move(&got, (int)sizeof got);
    TU_EQ("parent's message payload", i, got);
  }
  /* The put issued before the children lands at the parent's next sync. */
  bsp_sync();
  int prev = (s + p - 1) % p;
  TU_EQ("parent's put issued before its children", 10 * prev + 3, area[prev]);
  /* The registration is still valid for new puts and gets. */
  int again = 20 * s + 1;
  bsp_put((s + 1) % p, &again, area, s * (int)sizeof(int), (int)sizeof(int));
  int read = -1;
  bsp_get((s + 1) % p, area, s * (int)sizeof(int), &read, (int)sizeof read);
  bsp_sync();
  TU_EQ("parent's put after its children", 20 * prev + 1, area[prev]);
  TU_EQ("parent's get after its children (reads before puts land)", 10 * s + 3, read);
  bsp_size_t tag_now = 0;
  bsp_set_tagsize(&tag_now);
  TU_EQ("parent's tag size after its children", TAG_PARENT, tag_now);
  bsp_pop_reg(area);
  bsp_sync();
  free(area);
  bsp_end();
}

/* The profile written by the run: the top-level section's records only. */
#define PID_KEY "\"pid\": "
#define NPROCS_KEY "\"nprocs\": "
static void check_profile(const char *path, int p) {
  FILE *f = fopen(path, "r");
  TU_CHECK_OUTSIDE(f != NULL, "cannot read the profile %s", path);
  static char line[1 << 16];
  int headers = 0, steps[64] = {0}, processes[64] = {0};
  while (fgets(line, sizeof line, f)) {
    const char *at = strstr(line, PID_KEY);
    int pid = at ? atoi(at + strlen(PID_KEY)) : -1;
    if (strstr(line, "\"type\": \"header\"")) {
      headers++;
      const char *n = strstr(line, NPROCS_KEY);
      TU_CHECK_OUTSIDE(n && atoi(n + strlen(NPROCS_KEY)) == p,
                       "profile header: nprocs is not %d: %s", p, line);
    } else if (strstr(line, "\"type\": \"superstep\"") || strstr(line, "\"type\": \"process\"")) {
      TU_CHECK_OUTSIDE(pid >= 0 && pid < p && pid < 64, "profile: a record of pid %d: %s", pid,
                       line);
      TU_CHECK_OUTSIDE(strstr(line, "\"section\": 0,") != NULL, "profile: not section 0: %s", line);
      if (strstr(line, "\"type\": \"superstep\"")) steps[pid]++;
      else processes[pid]++;
    }
  }
  fclose(f);
  TU_CHECK_OUTSIDE(headers == 1, "profile: %d headers, expected 1", headers);
  for (int pid = 0; pid < p && pid < 64; pid++) {
    TU_CHECK_OUTSIDE(steps[pid] == OUTER_SUPERSTEPS,
                     "profile: %d superstep records of process %d, expected %d", steps[pid], pid,
                     OUTER_SUPERSTEPS);
    TU_CHECK_OUTSIDE(processes[pid] == 1, "profile: %d process records of process %d",
                     processes[pid], pid);
  }
}

int main(int argc, char **argv) {
  expected_p = tu_expected_nprocs(argc, argv);
  const char *profile = NULL;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--profile") == 0) profile = argv[i + 1];
  if (profile) setenv("BSPKIT_PROFILE", profile, 1);
  bsp_init(outer, argc, argv);
  outer();
  TU_CHECK_OUTSIDE(top_p_on_0 >= 1, "the top-level section did not run");
  if (expected_p > 0)
    TU_CHECK_OUTSIDE(top_p_on_0 == expected_p, "top level ran on %d processes, expected %d",
                     top_p_on_0, expected_p);
  int p = top_p_on_0, children = 0, inline_total = 0;
  for (int s = 0; s < p; s++) {
    children += 2 * child_size(s);
    inline_total += 2 + s % 2;
  }
  TU_CHECK_OUTSIDE(atomic_load(&child_processes) == children,
                   "child sections ran %d process bodies, expected %d",
                   atomic_load(&child_processes), children);
  TU_CHECK_OUTSIDE(atomic_load(&grandchild_processes) == 2 * p * GRANDCHILD_P,
                   "grandchild sections ran %d process bodies, expected %d",
                   atomic_load(&grandchild_processes), 2 * p * GRANDCHILD_P);
  TU_CHECK_OUTSIDE(atomic_load(&inline_processes) == inline_total,
                   "inline child sections ran %d process bodies, expected %d",
                   atomic_load(&inline_processes), inline_total);
  TU_CHECK_OUTSIDE(bsp_nprocs() >= 1, "bsp_nprocs() after bsp_end = %d", bsp_nprocs());
  if (profile) check_profile(profile, p);
  return 0;
}
