/*
 * mpi_engine.c - the MPI back ends, built as the plugin libbspkit_mpi.so (loaded by
 * libbsp only when BSPKIT_BACKEND asks for it, so the threads back end needs no MPI).
 *
 * `mpi` (two-sided, the thesis' MPIMPASS with message combining): the end of a superstep
 * is an all-to-all of a 40-byte header per pair (block length, record counts, flags,
 * bsp_sync or bsp_end; MPI_Alltoall, or a message per pair for a few processes), then the
 * combined block of each pair that has data as one message
 * (MPI_Isend/MPI_Irecv, no copy: the core's block is sent where it lies). Registration
 * calls and tag sizes, when any process made one, follow in one MPI_Allgatherv. Gets travel
 * as request records and are answered by the owner in a second round of messages, in the
 * same sync, without headers (transfer(): the requester knows what it will receive); large
 * puts and gets (BSPKIT_LARGE_PUT_BYTES) move as messages of their own in such rounds,
 * from the sender's memory into the destination.
 *
 * `mpi-rma` shares all of this; its DRMA goes through MPI-3 one-sided windows, one per
 * registration: MPI_Win_create when the push takes effect (a collective call, which a
 * registration is anyway), a passive-target epoch (MPI_Win_lock_all) for the window's
 * life, MPI_Put/MPI_Get at the sync from the core's buffers (hpput/hpget at the call), and
 * MPI_Win_flush_all plus a barrier to complete them; bsp_direct_get is an MPI_Get and an
 * MPI_Win_flush at the call. One window per registration, not one
 * dynamic window, because BSPlib programs may register overlapping areas (an array and a
 * slice of it), which MPI_Win_attach does not allow, and because a put then needs no
 * address translation. Accesses to the process itself are plain copies, so with one
 * process no window is made at all (Open MPI 4.1's MPI_Win_create fails at p = 1).
 *
 * Sections. Rank 0 decides: at each bsp_begin it broadcasts a command with its own
 * argument (the classic programs read P on process 0 only, after bsp_init) and which
 * function the other ranks run (as an offset from the first bsp_init's function, which
 * every rank knows); at exit it broadcasts the end. Between sections the other ranks wait
 * for that command, polling gently (rank 0 may be reading stdin for minutes), and
 * MPI_Finalize comes only at the end of the program, so that sections may follow each
 * other and bsp_nprocs() still works after bsp_end.
 *
 * Failing. Several ranks may fail at once, and Open MPI 4.1 may crash when two ranks call
 * MPI_Abort together; the core lets one rank report (see claim_report_in_job in
 * core/errors.c; job_dir below names where, when bsprun did not), and that rank calls
 * MPI_Abort. It does not wait for it forever: still alive some seconds later, it exits
 * with status 1 by itself, and mpirun then ends the rest.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <time.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/engine.h"

#define BSPK_PLUGIN_API __attribute__((visibility("default")))

/* What each process tells each other one at the end of a superstep. */
typedef struct block_header {
  uint64_t len, send_bytes;
  uint32_t n_put, n_send, n_coll, n_get;
  uint32_t flags;
  int32_t kind;
} block_header;

struct bspk_engine {
  MPI_Comm comm;
  int pid, nprocs;
  block_header *header_out, *header_in; /* [nprocs] */
  bspk_outbox *blocks;                  /* [nprocs] received in the last arrive()   */
  const bspk_post *mine;
  bspk_post *posts; /* [nprocs] */
  char *regops;     /* every process' registration calls        */
  size_t regops_cap;
  int *counts, *displs;  /* [nprocs] for MPI_Allgatherv              */
  MPI_Request *requests; /* [2 nprocs] */
  /* mpi-rma: one window per registration slot */
  MPI_Win *windows;
  char **window_base; /* this process' area of each slot */
  unsigned char *window_used;
  int nwindows;
  int separate_model; /* some window needs MPI_Win_sync for local visibility */
};

static bspk_engine engine;
static void (*spmd_entry)(void);   /* the function of the latest bsp_init            */
static void (*first_spmd)(void);   /* that of the first: known to every rank         */
static int in_section;             /* between attach and finish on this rank        */
static int sections_run_from_init; /* ranks > 0: run_sections() holds next_section */
static jmp_buf next_section;

/* What rank 0 tells the others at each bsp_begin and at the end of the program. */
enum { COMMAND_START = 1, COMMAND_EXIT = 2 };
typedef struct section_command {
  int32_t kind;
  int32_t nprocs;       /* rank 0's argument of bsp_begin                */
  int64_t entry_offset; /* the function to run, from first_spmd         */
} section_command;
static section_command received;
static int received_valid; /* a START taken between sections, for the next attach */

/* Seconds the reporter waits for MPI_Abort to end the job before it ends itself. */
enum { ABORT_GRACE_S = 5 };

/* Where the ranks agree which one reports a failure when bsprun gave no directory: Open
 * MPI's session directory of the job (removed by Open MPI at the end). */
static const char *mpi_job_dir(void) { return getenv("OMPI_MCA_orte_jobfam_session_dir"); }

/* The core's services (engine.h), set by the core when it loads this plugin. */
BSPK_PLUGIN_API const bspk_services *bspk_engine_plugin_services;
#define services bspk_engine_plugin_services

static void *xrealloc(void *p, size_t n, const char *call, const char *what) {
  return services->realloc(p, n, call, what);
}

/* Rank 0 broadcasts, the others receive, a section command. The others poll and sleep:
 * they may wait while rank 0 reads its input or works between sections. */
static void exchange_command(section_command *c) {
  MPI_Request request;
  MPI_Ibcast(c, sizeof *c, MPI_BYTE, 0, MPI_COMM_WORLD, &request);
  int done = 0;
  for (long polls = 0; !done; polls++) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done && polls > 1000)
      nanosleep(&(struct timespec){0, polls > 100000 ? 2000000 : 50000}, NULL);
  }
}

/* Rank 0, at exit: the other ranks end too (they wait for this in follow_rank0). A rank 0
 * that exits inside its section is reported by the core instead. */
static void end_program_on_rank0(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized || in_section) return;
  section_command c = {COMMAND_EXIT, 0, 0};
  exchange_command(&c);
  MPI_Finalize();
}

static void ensure_initialized(void) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  MPI_Init(NULL, NULL);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) atexit(end_program_on_rank0);
}

static int mpi_available_procs(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
  }
  const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = getenv(names[i]);
    if (v && atoi(v) > 0) return atoi(v);
  }
  return 0;
}

/* Ranks other than 0 that called bsp_init: run each section's function; finish() comes
 * back here (longjmp) with the next one. Never returns. */
static void run_sections(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  sections_run_from_init = 1;
  setjmp(next_section);
  spmd_entry();
  services->fatal("bsp_end", rank,
                  "process %d returned from the SPMD function without calling bsp_end", rank);
}

/* Ranks other than 0 between sections (or outside one they take no part in): wait for rank
 * 0's next command. Never returns. */
static void follow_rank0(void) {
  section_command c;
  exchange_command(&c);
  if (c.kind == COMMAND_EXIT) {
    MPI_Finalize();
    exit(0);
  }
  if (!sections_run_from_init) {
    /* Rank 0 reports a second section without bsp_init; wait to be ended with it. */
    for (;;) pause();
  }
  received = c;
  received_valid = 1;
  spmd_entry = (void (*)(void))((char *)first_spmd + c.entry_offset);
  longjmp(next_section, 1);
}

/* bsp_init: every rank runs main up to here; ranks other than 0 go into the SPMD
 * function and follow rank 0 from section to section. */
static void mpi_init(void (*spmd)(void), int argc, char **argv) {
  (void)argc;
  (void)argv;
  ensure_initialized();
  spmd_entry = spmd;
  if (!first_spmd) first_spmd = spmd;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 || !spmd) return;
  run_sections();
}

/* Rank 0: the offset of this section's function from the first bsp_init's, which is how the
 * other ranks find it (addresses differ between processes; offsets within one file do not). */
static int64_t entry_offset(void) {
  if (!spmd_entry || !first_spmd || spmd_entry == first_spmd) return 0;
  Dl_info a, b;
  if (!dladdr((void *)spmd_entry, &a) || !dladdr((void *)first_spmd, &b) ||
      a.dli_fbase != b.dli_fbase)
    services->fatal("bsp_begin", 0,
                    "the SPMD function of this section and that of the first bsp_init are in "
                    "different files (program and shared library); on the MPI back ends they "
                    "must be in the same one");
  return (int64_t)((char *)spmd_entry - (char *)first_spmd);
}

static bspk_engine *mpi_attach(int maxprocs, int *pid, int *nprocs) {
  ensure_initialized();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Rank 0's argument decides; the others' may be unset (read on process 0 only). */
  section_command c;
  if (rank == 0) {
    if (maxprocs < 1)
      services->fatal("bsp_begin", 0, "asked for %d processes; the number must be at least 1",
                      maxprocs);
    c = (section_command){COMMAND_START, maxprocs, entry_offset()};
    exchange_command(&c);
  } else if (received_valid) {
    c = received;
    received_valid = 0;
  } else {
    exchange_command(&c);
    if (c.kind == COMMAND_EXIT) { /* rank 0 ended before its first section */
      MPI_Finalize();
      exit(0);
    }
  }
  int p = c.nprocs < size ? c.nprocs : size;
  /* Ranks beyond the processes asked for take no part (BSPlib allows fewer). */
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank < p ? 0 : MPI_UNDEFINED, rank, &comm);
  if (rank >= p) follow_rank0();
  bspk_engine *e = &engine;
  memset(e, 0, sizeof *e);
  e->comm = comm;
  e->pid = rank;
  e->nprocs = p;
  e->header_out = calloc((size_t)p, sizeof *e->header_out);
  e->header_in = calloc((size_t)p, sizeof *e->header_in);
  e->blocks = calloc((size_t)p, sizeof *e->blocks);
  e->posts = calloc((size_t)p, sizeof *e->posts);
  e->counts = calloc((size_t)p, sizeof *e->counts);
  e->displs = calloc((size_t)p, sizeof *e->displs);
  e->requests = calloc(2 * (size_t)p, sizeof *e->requests);
  if (!e->header_out || !e->header_in || !e->blocks || !e->posts || !e->counts || !e->displs ||
      !e->requests)
    services->fatal("bsp_begin", rank, "out of memory: cannot allocate the MPI engine's tables");
  *pid = rank;
  *nprocs = p;
  in_section = 1;
  return e;
}

/* Tags of the messages between the processes of a section, by phase of the sync. */
enum { TAG_HEADER = 0, TAG_BLOCK = 1, TAG_TRANSFER = 2 };

/* Up to this many processes the headers of a sync travel as one message per pair, without
 * Open MPI's collective layer: at p = 2 an empty sync took 0.196 us so against 0.214 us
 * with MPI_Alltoall (the best of 5 runs of 300000 syncs each, Open MPI 4.1.4, 2026-11-29).
 * At most 3 messages each way, this is as cheap as any algorithm; beyond, MPI_Alltoall's
 * algorithms for many processes (fewer messages per process) take over. */
#define HEADERS_BY_PAIRS_MAX 4

/* Every process' header_out[q] to header_in[pid] of process q: the one exchange of an
 * empty superstep. */
static void exchange_headers(bspk_engine *e) {
  if (e->nprocs > HEADERS_BY_PAIRS_MAX) {
    MPI_Alltoall(e->header_out, sizeof(block_header), MPI_BYTE, e->header_in, sizeof(block_header),
                 MPI_BYTE, e->comm);
    return;
  }
  int n = 0;
  for (int q = 0; q < e->nprocs; q++)
    if (q != e->pid)
      MPI_Irecv(&e->header_in[q], sizeof(block_header), MPI_BYTE, q, TAG_HEADER, e->comm,
                &e->requests[n++]);
  for (int q = 0; q < e->nprocs; q++)
    if (q != e->pid)
      MPI_Isend(&e->header_out[q], sizeof(block_header), MPI_BYTE, q, TAG_HEADER, e->comm,
                &e->requests[n++]);
  e->header_in[e->pid] = e->header_out[e->pid];
  MPI_Waitall(n, e->requests, MPI_STATUSES_IGNORE);
}

/* Sends out[q] to every q that has data and receives into in[q] what headers announce. */
static void move_blocks(bspk_engine *e, const bspk_outbox *out, bspk_outbox *in, int tag) {
  int n = 0;
  for (int q = 0; q < e->nprocs; q++) {
    if (q == e->pid) continue;
    size_t len = e->header_in[q].len;
    in[q].len = len;
    if (len) {
      if (len > in[q].cap) {
        free(in[q].data);
        in[q].data = xrealloc(NULL, len, "bsp_sync", "an MPI receive buffer");
        in[q].cap = len;
      }
      MPI_Irecv(in[q].data, (int)len, MPI_BYTE, q, tag, e->comm, &e->requests[n++]);
    }
  }
  for (int q = 0; q < e->nprocs; q++)
    if (q != e->pid && out[q].len)
      MPI_Isend(out[q].data, (int)out[q].len, MPI_BYTE, q, tag, e->comm, &e->requests[n++]);
  MPI_Waitall(n, e->requests, MPI_STATUSES_IGNORE);
}

static void gather_registrations(bspk_engine *e, const bspk_post *mine) {
  int me[2] = {mine->nregops, mine->tagsize}, *all = malloc(2 * sizeof(int) * (size_t)e->nprocs);
  if (!all)
    services->fatal("bsp_sync", e->pid, "out of memory: cannot allocate the registration exchange");
  MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, e->comm);
  size_t total = 0;
  for (int q = 0; q < e->nprocs; q++) {
    e->counts[q] = all[2 * q] * (int)sizeof(bspk_regop);
    e->displs[q] = (int)total;
    total += (size_t)e->counts[q];
  }
  if (total > e->regops_cap) {
    e->regops = xrealloc(e->regops, total, "bsp_sync", "the registration exchange");
    e->regops_cap = total;
  }
  MPI_Allgatherv(mine->regops, me[0] * (int)sizeof(bspk_regop), MPI_BYTE, e->regops, e->counts,
                 e->displs, MPI_BYTE, e->comm);
  for (int q = 0; q < e->nprocs; q++) {
    e->posts[q].regops = (const bspk_regop *)(e->regops + e->displs[q]);
    e->posts[q].nregops = all[2 * q];
    e->posts[q].tagsize = all[2 * q + 1];
  }
  free(all);
}

static void mpi_arrive(bspk_engine *e, const bspk_post *mine, unsigned flags,
                       bspk_arrival *arrival) {
  for (int q = 0; q < e->nprocs; q++) {
    const bspk_outbox *ob = &mine->outbox[q];
    e->header_out[q] = (block_header){ob->len,    ob->send_bytes, ob->n_put, ob->n_send,
                                      ob->n_coll, ob->n_get,      flags,     mine->kind};
  }
  exchange_headers(e);
  e->mine = mine;
  arrival->flags = 0;
  arrival->n_at_end = 0;
  for (int q = 0; q < e->nprocs; q++) {
    const block_header *h = &e->header_in[q];
    arrival->flags |= h->flags;
    arrival->n_at_end += h->kind == BSPK_AT_END;
    e->posts[q].kind = h->kind;
    e->posts[q].nregops = 0;
    e->posts[q].tagsize = -1;
    e->blocks[q].n_put = h->n_put;
    e->blocks[q].n_send = h->n_send;
    e->blocks[q].n_coll = h->n_coll;
    e->blocks[q].n_get = h->n_get;
    e->blocks[q].send_bytes = h->send_bytes;
  }
  if (arrival->n_at_end) return; /* nothing is delivered at bsp_end */
  move_blocks(e, mine->outbox, e->blocks, TAG_BLOCK);
  if (arrival->flags & (BSPK_HAS_REG | BSPK_HAS_TAGSIZE)) gather_registrations(e, mine);
}

static const bspk_outbox *mpi_incoming(bspk_engine *e, int src) {
  return src == e->pid ? &e->mine->outbox[src] : &e->blocks[src];
}

static const bspk_post *mpi_peer_post(bspk_engine *e, int src) { return &e->posts[src]; }

static void mpi_barrier(bspk_engine *e) { MPI_Barrier(e->comm); }

static void mpi_transfer(bspk_engine *e, const bspk_transfer *sends, int nsends,
                         const bspk_transfer *recvs, int nrecvs) {
  MPI_Request *requests = malloc((size_t)(nsends + nrecvs + 1) * sizeof *requests);
  if (!requests)
    services->fatal("bsp_sync", e->pid,
                    "out of memory: cannot allocate the requests of large puts");
  int n = 0;
  for (int i = 0; i < nrecvs; i++)
    MPI_Irecv(recvs[i].data, (int)recvs[i].nbytes, MPI_BYTE, recvs[i].pid, TAG_TRANSFER, e->comm,
              &requests[n++]);
  for (int i = 0; i < nsends; i++)
    MPI_Isend(sends[i].data, (int)sends[i].nbytes, MPI_BYTE, sends[i].pid, TAG_TRANSFER, e->comm,
              &requests[n++]);
  MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
  free(requests);
}

static void grow_windows(bspk_engine *e, int slot) {
  if (slot < e->nwindows) return;
  int n = e->nwindows ? e->nwindows : 16;
  while (n <= slot) n *= 2;
  e->windows = xrealloc(e->windows, (size_t)n * sizeof *e->windows, "bsp_sync", "MPI windows");
  e->window_base =
      xrealloc(e->window_base, (size_t)n * sizeof *e->window_base, "bsp_sync", "MPI windows");
  e->window_used = xrealloc(e->window_used, (size_t)n, "bsp_sync", "MPI windows");
  for (int i = e->nwindows; i < n; i++) {
    e->windows[i] = MPI_WIN_NULL;
    e->window_base[i] = NULL;
    e->window_used[i] = 0;
  }
  e->nwindows = n;
}

static void rma_register(bspk_engine *e, int slot, void *addr, int size) {
  grow_windows(e, slot);
  e->window_base[slot] = addr;
  if (e->nprocs == 1) return;
  MPI_Win_create(addr, size, 1, MPI_INFO_NULL, e->comm, &e->windows[slot]);
  int *model, found = 0;
  MPI_Win_get_attr(e->windows[slot], MPI_WIN_MODEL, &model, &found);
  if (found && *model == MPI_WIN_SEPARATE) e->separate_model = 1;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, e->windows[slot]);
}

static void free_window(bspk_engine *e, int slot) {
  if (e->windows[slot] != MPI_WIN_NULL) {
    MPI_Win_unlock_all(e->windows[slot]);
    MPI_Win_free(&e->windows[slot]);
  }
  e->window_base[slot] = NULL;
}

static void rma_deregister(bspk_engine *e, int slot) { free_window(e, slot); }

static void rma_put(bspk_engine *e, int pid, int slot, int offset, const void *src, int nbytes) {
  if (pid == e->pid) {
    memmove(e->window_base[slot] + offset, src, (size_t)nbytes);
    return;
  }
  MPI_Put(src, nbytes, MPI_BYTE, pid, offset, nbytes, MPI_BYTE, e->windows[slot]);
  e->window_used[slot] = 1;
}

static void rma_get(bspk_engine *e, int pid, int slot, int offset, void *dst, int nbytes) {
  if (pid == e->pid) {
    memmove(dst, e->window_base[slot] + offset, (size_t)nbytes);
    return;
  }
  MPI_Get(dst, nbytes, MPI_BYTE, pid, offset, nbytes, MPI_BYTE, e->windows[slot]);
  e->window_used[slot] = 1;
}

/* bsp_direct_get: one passive-target MPI_Get in the epoch every window keeps open, completed
 * at once by MPI_Win_flush. The owner's stores of earlier supersteps are in the window's
 * memory only under the unified memory model (MPI-3: one copy of the window); with the
 * separate model they would need an MPI_Win_sync by the owner, which does not take part. */
static const char *rma_direct_get(bspk_engine *e, int pid, int slot, int offset, void *dst,
                                  int nbytes) {
  if (pid == e->pid) {
    memmove(dst, e->window_base[slot] + offset, (size_t)nbytes);
    return NULL;
  }
  if (e->separate_model)
    return "this MPI library's windows use the separate memory model, where another "
           "process' latest writes may not be visible without its help";
  if (nbytes == 0) return NULL;
  MPI_Get(dst, nbytes, MPI_BYTE, pid, offset, nbytes, MPI_BYTE, e->windows[slot]);
  MPI_Win_flush(pid, e->windows[slot]);
  return NULL;
}

static void rma_complete(bspk_engine *e) {
  for (int s = 0; s < e->nwindows; s++)
    if (e->window_used[s]) {
      MPI_Win_flush_all(e->windows[s]);
      e->window_used[s] = 0;
    }
  if (e->separate_model)
    for (int s = 0; s < e->nwindows; s++)
      if (e->windows[s] != MPI_WIN_NULL) MPI_Win_sync(e->windows[s]);
  MPI_Barrier(e->comm);
  if (e->separate_model)
    for (int s = 0; s < e->nwindows; s++)
      if (e->windows[s] != MPI_WIN_NULL) MPI_Win_sync(e->windows[s]);
}

static void mpi_finish(bspk_engine *e, int pid) {
  for (int s = 0; s < e->nwindows; s++) free_window(e, s);
  free(e->windows);
  free(e->window_base);
  free(e->window_used);
  for (int q = 0; q < e->nprocs; q++) {
    free(e->blocks[q].data);
  }
  free(e->header_out);
  free(e->header_in);
  free(e->blocks);
  free(e->posts);
  free(e->regops);
  free(e->counts);
  free(e->displs);
  free(e->requests);
  MPI_Comm_free(&e->comm);
  in_section = 0;
  if (pid != 0) follow_rank0();
}

static void mpi_terminate(int status) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    services->exit_after(ABORT_GRACE_S);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  _exit(status);
}

/* What the two back ends share: everything but DRMA. Both answer gets with transfer()
 * (the core then needs no exchange()); large puts and gets go through it on mpi only,
 * mpi-rma moves them with RMA instead. */
#define MPI_ENGINE_COMMON_OPS                                                                     \
  .direct_access = 0, .init = mpi_init, .available_procs = mpi_available_procs, .start = NULL,    \
  .attach = mpi_attach, .arrive = mpi_arrive, .incoming = mpi_incoming,                           \
  .peer_post = mpi_peer_post, .exchange = NULL, .barrier = mpi_barrier, .transfer = mpi_transfer, \
  .finish = mpi_finish, .terminate = mpi_terminate, .job_dir = mpi_job_dir

BSPK_PLUGIN_API const bspk_engine_ops bspk_engine_plugin_ops_mpi = {
    .name = "mpi",
    MPI_ENGINE_COMMON_OPS,
};

BSPK_PLUGIN_API const bspk_engine_ops bspk_engine_plugin_ops_mpi_rma = {
    .name = "mpi-rma",
    MPI_ENGINE_COMMON_OPS,
    .rma_register = rma_register,
    .rma_deregister = rma_deregister,
    .rma_put = rma_put,
    .rma_get = rma_get,
    .rma_complete = rma_complete,
    .direct_get = rma_direct_get,
};
