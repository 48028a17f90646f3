/*
 * mpi_naive_engine.c - `mpi-naive`: a BSPlib on MPI without message combining, the
 * baseline the thesis compares the optimised libraries with (seed 000, sec. 2.3, line 385:
 * "a pure MPI implementation that provides BSPlib style functionality using non-blocking
 * send/blocking receive operations ... an unoptimized library"; sec. 2.5, "MPI Message
 * Passing (MPIMPASS)", lines 414-425: Isend and Recv, headers exchanged at the sync by
 * MPI_Alltoall(v), and the emulated DRMA in rounds: get requests and put data, then the
 * data of the gets).
 *
 * Every request is its own MPI message: each put, each BSMP message and each get request
 * goes out as one MPI_Isend at the sync, each get's answer as one more in a second round.
 * At the sync the processes first exchange, in one MPI_Alltoall, a header per pair (how many
 * messages and bytes follow, the record counts, flags, bsp_sync or bsp_end); then each
 * sends its messages and receives the announced number with blocking receives
 * (MPI_Mprobe + MPI_Mrecv, in arrival order), in place in one block per source. Nothing is
 * combined and nothing is large or one-sided: puts and messages arrive as the core's
 * records, in the order the sender made them, so the core delivers them in BSPlib's order
 * exactly as on `mpi`.
 *
 * The messages are the core's records (core/records.h) cut out of its combined block, one
 * record a message: the engine reads that format to find where each request ends, and the
 * receiver gets back the block the core expects. Everything but the data path (sections,
 * bsp_init and bsp_begin with rank 0 deciding, the end of the program, abort) is the `mpi`
 * back end's own, reached through its ops table in this plugin, so that both behave alike
 * wherever they are not meant to differ.
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "core/records.h"

#define BSPK_PLUGIN_API __attribute__((visibility("default")))

/* Defined by mpi_engine.c in the same plugin: the services the core sets when it loads it,
 * and the `mpi` back end, whose section handling this one uses. */
extern const bspk_services *bspk_engine_plugin_services;
extern const bspk_engine_ops bspk_engine_plugin_ops_mpi;
#define services bspk_engine_plugin_services
#define mpi_ops bspk_engine_plugin_ops_mpi

/* MPI tags: the superstep's requests, the answers to gets. A pair's messages of one tag
 * arrive in the order they were sent (MPI's non-overtaking rule), which keeps BSPlib's. */
enum { TAG_REQUESTS = 10, TAG_REPLIES = 11 };

/* What each process tells each other one at the start of a sync. */
typedef struct pair_header {
  uint64_t len, send_bytes; /* bytes of all messages; BSMP payload bytes */
  uint32_t nmessages;       /* MPI messages that follow: one per request */
  uint32_t n_put, n_send, n_coll, n_get;
  uint32_t flags;
  int32_t kind;
} pair_header;

struct bspk_engine {
  bspk_engine *sections; /* the mpi back end's state for this section (its own type) */
  MPI_Comm comm;         /* the section's processes, for this back end's messages */
  int pid, nprocs;
  pair_header *header_out, *header_in; /* [nprocs] */
  bspk_outbox *blocks;                 /* [nprocs] received in the last arrive()   */
  bspk_outbox *replies;                /* [nprocs] received in the last exchange() */
  const bspk_post *mine;
  bspk_post *posts; /* [nprocs] */
  char *regops;     /* every process' registration calls */
  size_t regops_cap;
  int *counts, *displs; /* [nprocs] for MPI_Allgatherv */
};

static bspk_engine engine;

static void *xrealloc(void *p, size_t n, const char *what) {
  return services->realloc(p, n, "bsp_sync", what);
}

/* The records (requests) in a block: each becomes one MPI message. */
static uint32_t count_records(const char *data, size_t len) {
  uint32_t n = 0;
  if (!len) return 0;
  for (const char *p = data, *end = data + len; p < end;
       p += bspk_record_size((const bspk_record *)p))
    n++;
  return n;
}

static void ensure_capacity(bspk_outbox *box, size_t len) {
  if (len <= box->cap) return;
  free(box->data);
  box->data = xrealloc(NULL, len, "an MPI receive buffer");
  box->cap = len;
}

/* Sends every record of out[q] as its own message (MPI_Isend) to every other process q, and
 * receives with a blocking receive each the nmessages[q] messages (len[q] bytes in all) that
 * q sends here, in arrival order, each after the ones q sent before it in in[q].
 * At most SENDS_IN_FLIGHT sends are outstanding: with all of a superstep's sends posted at
 * once Open MPI 4.1.4 takes time quadratic in their number (10^5 messages of 32 bytes each
 * way between two processes on one machine: 7.9 to 9.1 s; with 32 to 128 in flight 0.05 to
 * 0.08 s), which would measure that queue, not one message per request. While it is full,
 * this process takes in what has come, so that senders of large (rendezvous) messages
 * always find their receiver. */
enum { SENDS_IN_FLIGHT = 64 };
static void move_records(bspk_engine *e, const bspk_outbox *out, bspk_outbox *in,
                         const uint32_t *nmessages, const size_t *len, int tag) {
  size_t to_receive = 0, at[e->nprocs];
  for (int q = 0; q < e->nprocs; q++) {
    at[q] = 0;
    if (q == e->pid) continue;
    to_receive += nmessages[q];
    ensure_capacity(&in[q], len[q]);
    in[q].len = len[q];
  }
  MPI_Request window[SENDS_IN_FLIGHT];
  int free_slots[SENDS_IN_FLIGHT], nfree = SENDS_IN_FLIGHT, done[SENDS_IN_FLIGHT];
  for (int i = 0; i < SENDS_IN_FLIGHT; i++) {
    window[i] = MPI_REQUEST_NULL;
    free_slots[i] = i;
  }
  /* The next record to send: to process q (starting after this one), at cursor. */
  int step = 1, q = (e->pid + 1) % e->nprocs;
  const char *cursor = out[q].data;
  for (;;) {
    while (nfree && step < e->nprocs) {
      if (cursor == out[q].data + out[q].len) { /* the next process */
        step++;
        q = (e->pid + step) % e->nprocs;
        cursor = out[q].data;
        continue;
      }
      size_t size = bspk_record_size((const bspk_record *)cursor);
      if (size > INT_MAX)
        services->fatal("bsp_sync", e->pid,
                        "a request of %zu bytes is too large for one MPI message on the "
                        "mpi-naive back end (at most %d bytes)",
                        size, INT_MAX);
      MPI_Isend(cursor, (int)size, MPI_BYTE, q, tag, e->comm, &window[free_slots[--nfree]]);
      cursor += size;
    }
    int all_sent = step >= e->nprocs;
    if (to_receive) {
      /* Block for the next message only when nothing is left to send. */
      int arrived = 1;
      MPI_Message message;
      MPI_Status status;
      if (all_sent) MPI_Mprobe(MPI_ANY_SOURCE, tag, e->comm, &message, &status);
      else MPI_Improbe(MPI_ANY_SOURCE, tag, e->comm, &arrived, &message, &status);
      if (arrived) {
        int src = status.MPI_SOURCE, nbytes;
        MPI_Get_count(&status, MPI_BYTE, &nbytes);
        if ((size_t)nbytes > len[src] - at[src])
          services->fatal("bsp_sync", e->pid,
                          "internal error: process %d sent more than the %zu bytes it announced",
                          src, len[src]);
        MPI_Mrecv(in[src].data + at[src], nbytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        at[src] += (size_t)nbytes;
        to_receive--;
        continue;
      }
    } else if (all_sent) {
      break;
    }
    int ndone;
    MPI_Testsome(SENDS_IN_FLIGHT, window, &ndone, done, MPI_STATUSES_IGNORE);
    for (int i = 0; i < ndone && ndone != MPI_UNDEFINED; i++) free_slots[nfree++] = done[i];
  }
  MPI_Waitall(SENDS_IN_FLIGHT, window, MPI_STATUSES_IGNORE);
  for (int src = 0; src < e->nprocs; src++)
    if (src != e->pid && at[src] != len[src])
      services->fatal("bsp_sync", e->pid,
                      "internal error: %zu bytes came from process %d, %zu were announced", at[src],
                      src, len[src]);
}

static bspk_engine *naive_attach(int maxprocs, int *pid, int *nprocs) {
  /* The mpi back end starts the section (rank 0 decides its size; ranks beyond it wait
   * there and never come back). */
  bspk_engine *sections = mpi_ops.attach(maxprocs, pid, nprocs);
  int p = *nprocs;
  bspk_engine *e = &engine;
  memset(e, 0, sizeof *e);
  e->sections = sections;
  e->pid = *pid;
  e->nprocs = p;
  /* Only the section's ranks are here: a communicator made by them alone. */
  MPI_Group world, section;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_range_incl(world, 1, (int[][3]){{0, p - 1, 1}}, &section);
  MPI_Comm_create_group(MPI_COMM_WORLD, section, 0, &e->comm);
  MPI_Group_free(&section);
  MPI_Group_free(&world);
  e->header_out = calloc((size_t)p, sizeof *e->header_out);
  e->header_in = calloc((size_t)p, sizeof *e->header_in);
  e->blocks = calloc((size_t)p, sizeof *e->blocks);
  e->replies = calloc((size_t)p, sizeof *e->replies);
  e->posts = calloc((size_t)p, sizeof *e->posts);
  e->counts = calloc((size_t)p, sizeof *e->counts);
  e->displs = calloc((size_t)p, sizeof *e->displs);
  if (!e->header_out || !e->header_in || !e->blocks || !e->replies || !e->posts || !e->counts ||
      !e->displs)
    services->fatal("bsp_begin", e->pid,
                    "out of memory: cannot allocate the mpi-naive engine's tables");
  return e;
}

/* Every process' push_reg/pop_reg calls and tag size of the superstep, to every process. */
static void gather_registrations(bspk_engine *e, const bspk_post *mine) {
  int me[2] = {mine->nregops, mine->tagsize};
  int *all = xrealloc(NULL, 2 * sizeof(int) * (size_t)e->nprocs, "the registration exchange");
  MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, e->comm);
  size_t total = 0;
  for (int q = 0; q < e->nprocs; q++) {
    e->counts[q] = all[2 * q] * (int)sizeof(bspk_regop);
    e->displs[q] = (int)total;
    total += (size_t)e->counts[q];
  }
  if (total > e->regops_cap) {
    e->regops = xrealloc(e->regops, total, "the registration exchange");
    e->regops_cap = total;
  }
  MPI_Allgatherv(mine->regops, e->counts[e->pid], MPI_BYTE, e->regops, e->counts, e->displs,
                 MPI_BYTE, e->comm);
  for (int q = 0; q < e->nprocs; q++) {
    e->posts[q].regops = (const bspk_regop *)(e->regops + e->displs[q]);
    e->posts[q].nregops = all[2 * q];
    e->posts[q].tagsize = all[2 * q + 1];
  }
  free(all);
}

static void naive_arrive(bspk_engine *e, const bspk_post *mine, unsigned flags,
                         bspk_arrival *arrival) {
  for (int q = 0; q < e->nprocs; q++) {
    const bspk_outbox *ob = &mine->outbox[q];
    e->header_out[q] = (pair_header){.len = ob->len,
                                     .send_bytes = ob->send_bytes,
                                     .nmessages = count_records(ob->data, ob->len),
                                     .n_put = ob->n_put,
                                     .n_send = ob->n_send,
                                     .n_coll = ob->n_coll,
                                     .n_get = ob->n_get,
                                     .flags = flags,
                                     .kind = mine->kind};
  }
  MPI_Alltoall(e->header_out, sizeof(pair_header), MPI_BYTE, e->header_in, sizeof(pair_header),
               MPI_BYTE, e->comm);
  e->mine = mine;
  arrival->flags = 0;
  arrival->n_at_end = 0;
  uint32_t nmessages[e->nprocs];
  size_t len[e->nprocs];
  for (int q = 0; q < e->nprocs; q++) {
    const pair_header *h = &e->header_in[q];
    arrival->flags |= h->flags;
    arrival->n_at_end += h->kind == BSPK_AT_END;
    e->posts[q] = (bspk_post){.kind = h->kind, .nregops = 0, .tagsize = -1};
    e->blocks[q].n_put = h->n_put;
    e->blocks[q].n_send = h->n_send;
    e->blocks[q].n_coll = h->n_coll;
    e->blocks[q].n_get = h->n_get;
    e->blocks[q].send_bytes = h->send_bytes;
    nmessages[q] = h->nmessages;
    len[q] = h->len;
  }
  if (arrival->n_at_end) return; /* nothing is delivered at bsp_end */
  move_records(e, mine->outbox, e->blocks, nmessages, len, TAG_REQUESTS);
  if (arrival->flags & (BSPK_HAS_REG | BSPK_HAS_TAGSIZE)) gather_registrations(e, mine);
}

static const bspk_outbox *naive_incoming(bspk_engine *e, int src) {
  return src == e->pid ? &e->mine->outbox[src] : &e->blocks[src];
}

static const bspk_post *naive_peer_post(bspk_engine *e, int src) { return &e->posts[src]; }

/* The answers to gets, one message each. This process knows what to expect from q without
 * asking: one answer per get request it sent q in this superstep, of that request's size. */
static const bspk_outbox *naive_exchange(bspk_engine *e, const bspk_outbox *out) {
  uint32_t nmessages[e->nprocs];
  size_t len[e->nprocs];
  for (int q = 0; q < e->nprocs; q++) {
    nmessages[q] = 0;
    len[q] = 0;
    const bspk_outbox *asked = &e->mine->outbox[q];
    for (const char *p = asked->data, *end = asked->data + asked->len; p < end;) {
      const bspk_record *rec = (const bspk_record *)p;
      if (rec->kind == BSPK_REC_GET) {
        nmessages[q]++;
        len[q] += sizeof *rec + bspk_pad8((size_t)rec->nbytes);
      }
      p += bspk_record_size(rec);
    }
  }
  move_records(e, out, e->replies, nmessages, len, TAG_REPLIES);
  /* A process' answers to itself never leave it. */
  bspk_outbox *self = &e->replies[e->pid];
  ensure_capacity(self, out[e->pid].len);
  if (out[e->pid].len) memcpy(self->data, out[e->pid].data, out[e->pid].len);
  self->len = out[e->pid].len;
  return e->replies;
}

static void naive_barrier(bspk_engine *e) { MPI_Barrier(e->comm); }

static void naive_finish(bspk_engine *e, int pid) {
  for (int q = 0; q < e->nprocs; q++) {
    free(e->blocks[q].data);
    free(e->replies[q].data);
  }
  free(e->header_out);
  free(e->header_in);
  free(e->blocks);
  free(e->replies);
  free(e->posts);
  free(e->regops);
  free(e->counts);
  free(e->displs);
  MPI_Comm_free(&e->comm);
  mpi_ops.finish(e->sections, pid); /* ranks other than 0 wait there for the next section */
}

/* The rest is the mpi back end's: bsp_init, process counts, ending the program. */
static void naive_init(void (*spmd)(void), int argc, char **argv) {
  mpi_ops.init(spmd, argc, argv);
}
static int naive_available_procs(void) { return mpi_ops.available_procs(); }
static void naive_terminate(int status) { mpi_ops.terminate(status); }
static const char *naive_job_dir(void) { return mpi_ops.job_dir(); }

BSPK_PLUGIN_API const bspk_engine_ops bspk_engine_plugin_ops_mpi_naive = {
    .name = "mpi-naive",
    .direct_access = 0,
    .init = naive_init,
    .available_procs = naive_available_procs,
    .attach = naive_attach,
    .arrive = naive_arrive,
    .incoming = naive_incoming,
    .peer_post = naive_peer_post,
    .exchange = naive_exchange,
    .barrier = naive_barrier,
    .finish = naive_finish,
    .terminate = naive_terminate,
    .job_dir = naive_job_dir,
};
