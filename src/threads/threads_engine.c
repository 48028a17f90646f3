/*
 * threads_engine.c - the shared-memory back end: one thread per BSP process.
 *
 * Posts are exchanged by pointer: after the arrival barrier a process reads the blocks
 * other processes combined for it straight from their memory (no copy), and registered
 * areas of other processes are directly addressable (direct_access).
 *
 * A process may start a nested section (Multi-BSP, as MulticoreBSP for C allows): its
 * thread becomes process 0 of a run of its own (barrier, posts, threads) and returns to
 * its outer run at the nested section's finish. The threads of nested runs are not pinned
 * to one core each: they may run anywhere in the affinity mask the top-level section
 * started with (its threads are pinned, and a nested run would otherwise inherit its
 * starter's single core).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "shm/barrier.h"
#include "shm/cpus.h"

typedef struct threads_run threads_run;

struct bspk_engine {
  _Alignas(64) threads_run *run;
  int pid;
  uint32_t epoch;    /* this process' copy of the barrier epoch */
  unsigned arrivals; /* arrive() calls so far: selects the published post */
  pthread_t thread;
};

struct published_post {
  _Alignas(64) const bspk_post *post[2]; /* by arrival parity */
};

struct threads_run {
  int nprocs;
  void (*entry)(void);
  void *parent;       /* the core's record of the starting process (nested), or NULL */
  bspk_engine *outer; /* the starting thread's engine in its outer run, or NULL (top level) */
  bspk_barrier barrier;
  struct published_post *published; /* [nprocs] */
  bspk_engine *engines;             /* [nprocs] */
  int *cpus;                        /* CPU for each process, or NULL: no pinning */
  cpu_set_t original_mask;          /* the starting thread's affinity, restored at the end */
  cpu_set_t program_mask;           /* the top-level section's starting affinity */
};

static _Thread_local bspk_engine *started_engine __attribute__((tls_model("initial-exec")));
/* The engine of this thread's innermost running section, or NULL: none. */
static _Thread_local bspk_engine *current_engine __attribute__((tls_model("initial-exec")));
/* Process threads of all runs (the threads that start runs counted once): whether a new
 * nested run oversubscribes the cores. */
static atomic_int live_processes;

static void pin(const threads_run *run, int pid) {
  if (run->outer) {
    pthread_setaffinity_np(pthread_self(), sizeof run->program_mask, &run->program_mask);
    return;
  }
  if (!run->cpus) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(run->cpus[pid], &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *process_thread(void *arg) {
  bspk_engine *e = arg;
  pin(e->run, e->pid);
  started_engine = e;
  e->run->entry();
  /* bsp_end never returns on these processes, so the SPMD function ended without it. */
  bspk_engine_services.fatal("bsp_end", e->pid,
                             "process %d returned from the SPMD function without calling "
                             "bsp_end",
                             e->pid);
  return NULL;
}

static bspk_engine *threads_start(int nprocs, void (*entry)(void), void *parent) {
  threads_run *run = calloc(1, sizeof *run);
  bspk_engine *engines = aligned_alloc(64, sizeof(bspk_engine) * (size_t)nprocs);
  struct published_post *published =
      aligned_alloc(64, sizeof(struct published_post) * (size_t)nprocs);
  if (!run || !engines || !published)
    bspk_engine_services.fatal("bsp_begin", 0, "out of memory starting %d processes", nprocs);
  memset(engines, 0, sizeof(bspk_engine) * (size_t)nprocs);
  memset(published, 0, sizeof(struct published_post) * (size_t)nprocs);
  run->nprocs = nprocs;
  run->entry = entry;
  run->parent = parent;
  run->outer = current_engine;
  run->engines = engines;
  run->published = published;
  CPU_ZERO(&run->original_mask);
  if (sched_getaffinity(0, sizeof run->original_mask, &run->original_mask) != 0)
    CPU_SET(0, &run->original_mask);
  run->program_mask = run->outer ? run->outer->run->program_mask : run->original_mask;
  run->cpus = run->outer ? NULL : bspk_choose_cpus(&run->original_mask, nprocs);
  int added = run->outer ? nprocs - 1 : nprocs; /* a nested run's process 0 is counted */
  int live = atomic_fetch_add(&live_processes, added) + added;
  int oversubscribed = live > CPU_COUNT(&run->program_mask);
  bspk_barrier_init_for(&run->barrier, nprocs, oversubscribed, 0);
  for (int pid = 0; pid < nprocs; pid++) {
    engines[pid].run = run;
    engines[pid].pid = pid;
  }
  pin(run, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 16u << 20); /* BSP programs often keep arrays on the stack */
  for (int pid = 1; pid < nprocs; pid++) {
    int err = pthread_create(&engines[pid].thread, &attr, process_thread, &engines[pid]);
    if (err)
      bspk_engine_services.fatal("bsp_begin", 0, "cannot start process %d of %d as a thread: %s",
                                 pid, nprocs, strerror(err));
  }
  pthread_attr_destroy(&attr);
  current_engine = &engines[0];
  return &engines[0];
}

static bspk_engine *threads_attach(int maxprocs, int *pid, int *nprocs) {
  (void)maxprocs;
  bspk_engine *e = started_engine;
  if (!e) return NULL;
  started_engine = NULL;
  current_engine = e;
  *pid = e->pid;
  *nprocs = e->run->nprocs;
  return e;
}

static void threads_arrive(bspk_engine *e, const bspk_post *mine, unsigned flags,
                           bspk_arrival *all) {
  threads_run *run = e->run;
  /* Published before our arrival; read by others only after the barrier released them. */
  run->published[e->pid].post[e->arrivals & 1] = mine;
  all->flags = bspk_barrier_arrive(&run->barrier, &e->epoch, flags, mine->kind == BSPK_AT_END,
                                   &all->n_at_end);
  e->arrivals++;
}

static const bspk_post *threads_peer_post(bspk_engine *e, int src) {
  return e->run->published[src].post[(e->arrivals - 1) & 1];
}

static const bspk_outbox *threads_incoming(bspk_engine *e, int src) {
  return &threads_peer_post(e, src)->outbox[e->pid];
}

static void *threads_parent_of(bspk_engine *e) { return e->run->parent; }

static void threads_barrier(bspk_engine *e) {
  bspk_barrier_arrive(&e->run->barrier, &e->epoch, 0, 0, NULL);
}

static void threads_finish(bspk_engine *e, int pid) {
  if (pid != 0) pthread_exit(NULL);
  threads_run *run = e->run;
  for (int q = 1; q < run->nprocs; q++) pthread_join(run->engines[q].thread, NULL);
  atomic_fetch_sub(&live_processes, run->outer ? run->nprocs - 1 : run->nprocs);
  current_engine = run->outer;
  if (run->cpus || run->outer)
    pthread_setaffinity_np(pthread_self(), sizeof run->original_mask, &run->original_mask);
  free(run->cpus);
  free(run->published);
  free(run->engines);
  free(run);
}

const bspk_engine_ops bspk_threads_engine = {
    .name = "threads",
    .direct_access = 1,
    .init = NULL,
    .available_procs = NULL,
    .start = threads_start,
    .attach = threads_attach,
    .arrive = threads_arrive,
    .incoming = threads_incoming,
    .peer_post = threads_peer_post,
    .exchange = NULL,
    .barrier = threads_barrier,
    .finish = threads_finish,
    .terminate = NULL,
    .parent_of = threads_parent_of,
};
