/*
 * procs_engine.c - the process back end: one operating-system process per BSP process,
 * forked by process 0 at bsp_begin, exchanging through memory they all share.
 *
 * Why fork at bsp_begin: every process starts as a copy of process 0 at that call, with
 * its globals, its heap and its stack (the classic programs read P on process 0 after
 * bsp_init; Python programs start with their interpreter), and keeps per-process state in
 * globals that threads would share. Everything a run shares is mapped by process 0 before it
 * forks (MAP_SHARED | MAP_ANONYMOUS, inherited): nothing has a name, so nothing is left
 * behind whatever way the run ends.
 *
 * Shared memory of a run:
 *   control    the barrier (barrier.h with a process-shared futex), which process reports
 *              a failure, which processes have finished, their OS process ids;
 *   segments   for each process two halves, by superstep parity (the core's two outbox
 *              sets). A half holds a header (the arrival kind, tag size, registration
 *              calls, and where the block for each destination lies), a misc area, and an
 *              area per destination that the core writes its combined block into as the
 *              superstep goes (outbox_memory): at the end of the superstep nothing is
 *              copied, the header says where the blocks are, and after the barrier each
 *              process reads the blocks meant for it from the others' halves, as threads
 *              read them from each other's buffers. The misc area takes the registration
 *              calls, the get replies of an exchange(), and the copy of a block that
 *              outgrew its area (the core then moved it to memory of its own). A process
 *              can be at most one superstep ahead of any other, so the half it writes is
 *              never one being read. The halves are reserved, not committed
 *              (MAP_NORESERVE): pages appear when first written.
 * The engine has no direct access (the processes' registered memory is private): gets
 * travel as request records and are answered in one exchange(), as on mpi.
 *
 * Failing. A process that reports an error claims the report in control, ends the other
 * processes (SIGKILL) and exits with status 1; process 0 then exits with status 1 too. A
 * process that dies otherwise (a signal, an exit without bsp_end) is seen by a watcher
 * thread in process 0 (pidfds, or polling), which prints one line for it and ends the run
 * with status 1. The other processes get SIGTERM when process 0 dies (PR_SET_PDEATHSIG), and
 * one that outlives it ends at its next wait in the barrier (shm/barrier.c).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/engine.h"
#include "shm/barrier.h"
#include "shm/cpus.h"

#define services bspk_engine_services

/* Where a process' block for one destination lies in its half. */
typedef struct block_desc {
  uint64_t offset, len, send_bytes;
  uint32_t n_put, n_send, n_coll, n_get;
} block_desc;

/* The start of a process' half: what it posted at the end of a superstep. */
typedef struct post_header {
  int32_t kind, tagsize, nregops, unused;
  uint64_t regops_offset;   /* bspk_regop[nregops], from the half's start */
  uint64_t exchange_offset; /* block_desc[nprocs] of this superstep's exchange(), then data */
  block_desc blocks[];      /* [nprocs] */
} post_header;

typedef struct process_slot {
  _Atomic pid_t os_pid;
  atomic_int finished; /* it called bsp_end and exits now */
} process_slot;

typedef struct control {
  bspk_barrier barrier;
  _Alignas(64) atomic_int report_claimed; /* a process is reporting the run's error */
  int nprocs;
  size_t half_bytes;
  /* A half: [header][misc][the block for destination 0] ... [for destination nprocs - 1] */
  size_t header_bytes, misc_bytes, block_bytes;
  process_slot process[]; /* [nprocs] */
} control;

struct bspk_engine {
  control *shared;
  char *segments; /* [nprocs][2][half_bytes] */
  size_t control_bytes, segments_bytes;
  int pid, nprocs;
  uint32_t epoch;
  int parity;     /* of the superstep that ended last (the core's outbox set) */
  size_t written; /* end of what this process wrote in its half's misc area */
  bspk_post *posts;
  bspk_outbox *incoming, *exchanged; /* [nprocs] views into the others' halves */
  /* process 0 only */
  pthread_t watcher;
  int watching;
  int *pidfds; /* [nprocs], -1: none */
  int *cpus;
};

/* The run this process belongs to (for the fatal path, which has no engine at hand). */
static bspk_engine *current;

static size_t control_size(int nprocs) {
  return sizeof(control) + (size_t)nprocs * sizeof(process_slot);
}

static char *half_of(const bspk_engine *e, int q, unsigned parity) {
  return e->segments + ((size_t)q * 2 + parity) * e->shared->half_bytes;
}

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The room a process may write at the end of one superstep: the halves of all processes
 * must fit in the address space (2^46 bytes here, or an eighth of a limit set on it:
 * ulimit -v), and none needs more than 16 GiB. */
static size_t half_bytes_for(int nprocs) {
  size_t space = (size_t)1 << 46;
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur / 8 < space)
    space = limit.rlim_cur / 8;
  size_t half = (size_t)1 << 34;
  while (half > ((size_t)1 << 16) && half * 2 * (size_t)nprocs > space) half >>= 1;
  return half;
}

/* Splits a half: the header, a quarter for the misc area, the rest in equal block areas
 * (none when they would be smaller than a page: the core's own memory then, copied). */
static void lay_out_halves(control *c, int nprocs) {
  size_t page = 4096;
  c->header_bytes =
      (sizeof(post_header) + (size_t)nprocs * sizeof(block_desc) + page - 1) / page * page;
  size_t rest = c->half_bytes > c->header_bytes ? c->half_bytes - c->header_bytes : 0;
  c->misc_bytes = rest / 4 / page * page;
  c->block_bytes = (rest - c->misc_bytes) / (size_t)nprocs / page * page;
  if (c->block_bytes < page) {
    c->block_bytes = 0;
    c->misc_bytes = rest / page * page;
  }
}

static size_t block_area(const control *c, int dest) {
  return c->header_bytes + c->misc_bytes + (size_t)dest * c->block_bytes;
}

/* end: the end of what is to be written, from the start of the misc area. */
static void make_room(bspk_engine *e, size_t end, const char *what) {
  if (end > e->shared->misc_bytes)
    services.fatal("bsp_sync", e->pid,
                   "%s need %zu bytes of shared memory in this superstep, more than the procs "
                   "back end has for them (%zu MiB at p = %d, a quarter of what a process may "
                   "send in one superstep, %zu MiB, which a limit on the address space lowers: "
                   "ulimit -v); send less per superstep",
                   what, end, e->shared->misc_bytes >> 20, e->nprocs, e->shared->half_bytes >> 20);
}

/* ---- failing ----------------------------------------------------------------------------- */

/* Process 0 is not killed: it ends the run itself, with status 1. */
static void kill_others(control *c, int self_pid) {
  for (int q = 1; q < c->nprocs; q++) {
    pid_t os = atomic_load(&c->process[q].os_pid);
    if (q != self_pid && os > 0) kill(os, SIGKILL);
  }
}

static int procs_claim_report(void) {
  bspk_engine *e = current;
  if (!e) return -1;
  return atomic_exchange(&e->shared->report_claimed, 1) == 0 ? 1 : 0;
}

/* After the report: the others end now; process 0 ends with status (its watcher, or the
 * caller's _exit, when this is process 0). */
static void procs_terminate(int status) {
  bspk_engine *e = current;
  (void)status;
  if (!e) return;
  kill_others(e->shared, e->pid);
}

static const char *signal_name(int sig) {
  const char *name = strsignal(sig);
  return name ? name : "unknown signal";
}

/* Process 0's watcher: one of its processes ended. Normal when it finished (bsp_end); else
 * the run ends here with status 1, with one line unless a process reported already. */
static void child_ended(bspk_engine *e, int q, int status) {
  control *c = e->shared;
  if (atomic_load(&c->process[q].finished) && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (atomic_exchange(&c->report_claimed, 1) == 0) {
    if (WIFSIGNALED(status))
      fprintf(stderr, "bspkit: error on process %d: killed by signal %d (%s)\n", q,
              WTERMSIG(status), signal_name(WTERMSIG(status)));
    else if (WIFEXITED(status))
      fprintf(stderr,
              "bspkit: error on process %d: the process exited with status %d inside the SPMD "
              "section, without bsp_end\n",
              q, WEXITSTATUS(status));
    else
      fprintf(stderr, "bspkit: error on process %d: the process ended inside the SPMD section\n",
              q);
  }
  fflush(stdout);
  kill_others(c, 0);
  _exit(1);
}

static int pidfd_of(pid_t pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  return -1;
#endif
}

static void *watch_processes(void *arg) {
  bspk_engine *e = arg;
  int n = e->nprocs;
  struct pollfd *fds = calloc((size_t)n, sizeof *fds);
  int *live = calloc((size_t)n, sizeof *live);
  if (!fds || !live) services.fatal("bsp_begin", 0, "out of memory watching the processes");
  int remaining = n - 1;
  for (int q = 1; q < n; q++) live[q] = 1;
  while (remaining > 0) {
    int nfds = 0, have_fds = 1;
    for (int q = 1; q < n; q++)
      if (live[q]) {
        if (e->pidfds[q] < 0) have_fds = 0;
        fds[nfds++] = (struct pollfd){.fd = e->pidfds[q], .events = POLLIN};
      }
    /* Without pidfds (an old kernel) look every 20 ms; with them, a check every second
     * covers a pidfd that never reports. */
    int r = poll(fds, (nfds_t)nfds, have_fds ? 1000 : 20);
    (void)r;
    for (int q = 1; q < n; q++) {
      if (!live[q]) continue;
      int status = 0;
      pid_t got = waitpid(atomic_load(&e->shared->process[q].os_pid), &status, WNOHANG);
      if (got == 0) continue;
      if (got < 0 && errno == ECHILD) /* reaped elsewhere (SIGCHLD ignored): did it finish? */
        status = atomic_load(&e->shared->process[q].finished) ? 0 : (1 << 8);
      else if (got < 0) continue;
      live[q] = 0;
      remaining--;
      child_ended(e, q, status);
    }
  }
  free(fds);
  free(live);
  return NULL;
}

/* ---- starting and ending a run ------------------------------------------------------------ */

static void pin(const bspk_engine *e) {
  if (!e->cpus) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(e->cpus[e->pid], &set);
  sched_setaffinity(0, sizeof set, &set);
}

/* A reservation is mapped inaccessible and unlocked before it is opened: under
 * mlockall(MCL_FUTURE) (bspprobe's default) a writable mapping would be filled at once. */
static void *map_shared(size_t bytes, int reserve_only) {
  int flags = MAP_SHARED | MAP_ANONYMOUS | (reserve_only ? MAP_NORESERVE : 0);
  void *p = mmap(NULL, bytes, reserve_only ? PROT_NONE : PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (reserve_only) {
    munlock(p, bytes);
    if (mprotect(p, bytes, PROT_READ | PROT_WRITE) != 0) {
      munmap(p, bytes);
      return NULL;
    }
  }
  return p;
}

static void cannot_map(size_t bytes, int nprocs) {
  services.fatal("bsp_begin", 0, "cannot map %zu KiB of shared memory for %d processes: %s",
                 bytes >> 10, nprocs, strerror(errno));
}

static void allocate_views(bspk_engine *e) {
  size_t n = (size_t)e->nprocs;
  e->posts = services.realloc(NULL, n * sizeof *e->posts, "bsp_begin", "the processes' posts");
  e->incoming = services.realloc(NULL, n * sizeof *e->incoming, "bsp_begin", "the blocks");
  e->exchanged = services.realloc(NULL, n * sizeof *e->exchanged, "bsp_begin", "the replies");
}

static bspk_engine *procs_start(int nprocs, void (*entry)(void), void *parent) {
  (void)entry; /* the other processes go on from bsp_begin, as copies of process 0 */
  (void)parent;
  bspk_engine *e = services.realloc(NULL, sizeof *e, "bsp_begin", "the procs back end");
  memset(e, 0, sizeof *e);
  e->nprocs = nprocs;
  e->control_bytes = control_size(nprocs);
  e->shared = map_shared(e->control_bytes, 0);
  if (!e->shared) cannot_map(e->control_bytes, nprocs);
  e->shared->nprocs = nprocs;
  /* Reserved, but counted against a limit on the address space (ulimit -v): ask for less
   * until it fits. */
  for (size_t half = half_bytes_for(nprocs); !e->segments; half /= 2) {
    e->shared->half_bytes = half;
    e->segments_bytes = (size_t)nprocs * 2 * half;
    e->segments = map_shared(e->segments_bytes, 1);
    if (!e->segments && half <= ((size_t)1 << 16)) cannot_map(e->segments_bytes, nprocs);
  }
  lay_out_halves(e->shared, nprocs);
  cpu_set_t mask; /* the cores this program may use, as on threads */
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) CPU_SET(0, &mask);
  bspk_barrier_init_for(&e->shared->barrier, nprocs, nprocs > CPU_COUNT(&mask), 1);
  e->cpus = bspk_choose_cpus(&mask, nprocs);
  allocate_views(e);
  e->pidfds = services.realloc(NULL, (size_t)nprocs * sizeof *e->pidfds, "bsp_begin", "pidfds");
  pid_t parent_os = getpid();
  atomic_store(&e->shared->process[0].os_pid, parent_os);
  fflush(NULL); /* what is buffered now would be written by every copy */
  for (int q = 1; q < nprocs; q++) {
    pid_t child = fork();
    if (child < 0) {
      int err = errno;
      kill_others(e->shared, 0);
      services.fatal("bsp_begin", 0, "cannot start process %d of %d (fork): %s", q, nprocs,
                     strerror(err));
    }
    if (child == 0) {
      /* End with process 0 (the thread that forked: the one in bsp_begin). TERM, not KILL:
       * a program's handler (removing its files) runs, as under mpirun; one that survives
       * it ends at its next wait in the barrier. */
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent_os) _exit(1);
      e->pid = q;
      free(e->pidfds);
      e->pidfds = NULL;
      pin(e);
      current = e;
      return e;
    }
    atomic_store(&e->shared->process[q].os_pid, child);
    e->pidfds[q] = pidfd_of(child);
  }
  e->pidfds[0] = -1;
  e->pid = 0;
  pin(e);
  current = e;
  if (nprocs > 1) {
    int err = pthread_create(&e->watcher, NULL, watch_processes, e);
    if (err) {
      kill_others(e->shared, 0);
      services.fatal("bsp_begin", 0, "cannot start the thread that watches the processes: %s",
                     strerror(err));
    }
    e->watching = 1;
  }
  return e;
}

static bspk_engine *procs_attach(int maxprocs, int *pid, int *nprocs) {
  (void)maxprocs;
  (void)pid;
  (void)nprocs;
  return NULL; /* every process comes from start(), where process 0 forked it */
}

static int procs_pid_of(bspk_engine *e) { return e->pid; }

static void procs_finish(bspk_engine *e, int pid) {
  if (pid != 0) {
    atomic_store(&e->shared->process[pid].finished, 1);
    fflush(NULL);
    _exit(0);
  }
  if (e->watching) pthread_join(e->watcher, NULL);
  for (int q = 1; q < e->nprocs; q++)
    if (e->pidfds[q] >= 0) close(e->pidfds[q]);
  current = NULL;
  munmap(e->segments, e->segments_bytes);
  munmap(e->shared, e->control_bytes);
  free(e->pidfds);
  free(e->cpus);
  free(e->posts);
  free(e->incoming);
  free(e->exchanged);
  free(e);
}

/* ---- the end of a superstep --------------------------------------------------------------- */

/* The block a description in another process' half (starting at half) points to. */
static bspk_outbox block_in(char *half, const block_desc *d) {
  return (bspk_outbox){.data = half + d->offset,
                       .len = d->len,
                       .n_put = d->n_put,
                       .n_send = d->n_send,
                       .n_coll = d->n_coll,
                       .n_get = d->n_get,
                       .send_bytes = d->send_bytes};
}

static void procs_arrive(bspk_engine *e, const bspk_post *mine, unsigned flags, bspk_arrival *all) {
  int p = e->nprocs;
  const control *c = e->shared;
  int parity = mine->parity;
  char *half = half_of(e, e->pid, (unsigned)parity);
  char *misc = half + c->header_bytes;
  post_header *h = (post_header *)(void *)half;
  /* What goes into the misc area: the registration calls, and the blocks not in their own
   * area (the core moved them: they outgrew it). */
  size_t regops_bytes = (size_t)mine->nregops * sizeof(bspk_regop);
  size_t end = align64(regops_bytes);
  for (int q = 0; q < p; q++)
    if (!mine->outbox[q].engine_memory) end += align64(mine->outbox[q].len);
  make_room(e, end, "the registration calls and the blocks larger than their areas");
  h->kind = mine->kind;
  h->tagsize = mine->tagsize;
  h->nregops = mine->nregops;
  h->regops_offset = c->header_bytes;
  h->exchange_offset = 0;
  if (regops_bytes) memcpy(misc, mine->regops, regops_bytes);
  size_t at = align64(regops_bytes);
  for (int q = 0; q < p; q++) {
    const bspk_outbox *ob = &mine->outbox[q];
    size_t offset = ob->engine_memory ? (size_t)(ob->data - half) : c->header_bytes + at;
    h->blocks[q] =
        (block_desc){offset, ob->len, ob->send_bytes, ob->n_put, ob->n_send, ob->n_coll, ob->n_get};
    if (!ob->engine_memory) {
      if (ob->len) memcpy(misc + at, ob->data, ob->len);
      at += align64(ob->len);
    }
  }
  e->written = at;
  e->parity = parity;
  all->flags = bspk_barrier_arrive(&e->shared->barrier, &e->epoch, flags, mine->kind == BSPK_AT_END,
                                   &all->n_at_end);
  for (int q = 0; q < p; q++) {
    char *theirs = half_of(e, q, (unsigned)parity);
    const post_header *th = (const post_header *)(const void *)theirs;
    const block_desc *d = &th->blocks[e->pid];
    e->incoming[q] = block_in(theirs, d);
    e->posts[q] =
        (bspk_post){.kind = th->kind,
                    .parity = parity,
                    .outbox = NULL,
                    .regops = (const bspk_regop *)(const void *)(theirs + th->regops_offset),
                    .nregops = th->nregops,
                    .tagsize = th->tagsize};
  }
}

/* The core's outbox to dest in set parity lives in this process' half: nothing to copy at
 * the end of the superstep. */
static char *procs_outbox_memory(bspk_engine *e, int parity, int dest, size_t *cap) {
  const control *c = e->shared;
  if (!c->block_bytes) return NULL;
  *cap = c->block_bytes;
  return half_of(e, e->pid, (unsigned)parity) + block_area(c, dest);
}

static const bspk_outbox *procs_incoming(bspk_engine *e, int src) { return &e->incoming[src]; }

static const bspk_post *procs_peer_post(bspk_engine *e, int src) { return &e->posts[src]; }

static const bspk_outbox *procs_exchange(bspk_engine *e, const bspk_outbox *out) {
  int p = e->nprocs;
  unsigned parity = (unsigned)e->parity; /* this superstep's half */
  char *half = half_of(e, e->pid, parity);
  size_t start = e->shared->header_bytes + align64(e->written); /* from the half's start */
  size_t at = start + align64((size_t)p * sizeof(block_desc));
  size_t end = at;
  for (int q = 0; q < p; q++) end += align64(out[q].len);
  make_room(e, end - e->shared->header_bytes,
            "the registration calls, the blocks larger than their areas and the get replies");
  block_desc *descs = (block_desc *)(void *)(half + start);
  for (int q = 0; q < p; q++) {
    descs[q] = (block_desc){at,           out[q].len,    out[q].send_bytes,
                            out[q].n_put, out[q].n_send, out[q].n_coll,
                            out[q].n_get};
    if (out[q].len) memcpy(half + at, out[q].data, out[q].len);
    at += align64(out[q].len);
  }
  ((post_header *)(void *)half)->exchange_offset = start;
  e->written = at - e->shared->header_bytes;
  bspk_barrier_arrive(&e->shared->barrier, &e->epoch, 0, 0, NULL);
  for (int q = 0; q < p; q++) {
    char *theirs = half_of(e, q, parity);
    const block_desc *d =
        (const block_desc *)(const void *)(theirs + ((const post_header *)(const void *)theirs)
                                                        ->exchange_offset) +
        e->pid;
    e->exchanged[q] = block_in(theirs, d);
  }
  return e->exchanged;
}

/* bsp_direct_get: the kernel copies from the other process (process_vm_readv; a process may
 * read its siblings' memory, being of the same user, unless ptrace is restricted). */
static const char *procs_read_process(bspk_engine *e, int pid, const void *remote, void *dst,
                                      size_t nbytes) {
  /* Not thread-local (libbsp's static TLS must stay small for dlopen, as by Python): a
   * process of this back end has one thread that makes BSPlib calls. */
  static char reason[256];
  if (pid == e->pid) {
    memcpy(dst, remote, nbytes);
    return NULL;
  }
  struct iovec local = {dst, nbytes}, theirs = {(void *)(uintptr_t)remote, nbytes};
  ssize_t got =
      process_vm_readv(atomic_load(&e->shared->process[pid].os_pid), &local, 1, &theirs, 1, 0);
  if (got == (ssize_t)nbytes) return NULL;
  snprintf(reason, sizeof reason, "reading process %d's memory failed (process_vm_readv: %s)", pid,
           got < 0 ? strerror(errno) : "a short read");
  return reason;
}

static void procs_barrier(bspk_engine *e) {
  bspk_barrier_arrive(&e->shared->barrier, &e->epoch, 0, 0, NULL);
}

const bspk_engine_ops bspk_procs_engine = {
    .name = "procs",
    .direct_access = 0,
    .start = procs_start,
    .attach = procs_attach,
    .arrive = procs_arrive,
    .incoming = procs_incoming,
    .peer_post = procs_peer_post,
    .exchange = procs_exchange,
    .barrier = procs_barrier,
    .finish = procs_finish,
    .terminate = procs_terminate,
    .outbox_memory = procs_outbox_memory,
    .read_process = procs_read_process,
    .pid_of = procs_pid_of,
    .claim_report = procs_claim_report,
};
