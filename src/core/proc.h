/*
 * proc.h - a BSP process' state (the record every part of the core works on), made at
 * bsp_begin and freed at bsp_end; the calling thread's process; the clock and the cores.
 */
#ifndef BSPKIT_PROC_H
#define BSPKIT_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/engine.h"
#include "core/errors.h"

/* Where one process' registered area is, as seen by another. */
typedef struct bspk_area {
  char *addr;
  int size;
} bspk_area;

/* A registration slot. Slot numbers agree on every process because every process makes
 * the same sequence of push/pop calls (checked at each sync). */
typedef struct bspk_slot {
  char *addr; /* this process' area                               */
  int size;
  int active;
  int popping;         /* pop_reg called in this superstep                 */
  uint64_t generation; /* registration order: the newest of an address wins */
  bspk_area *peer;     /* [nprocs]: every process' area of this slot       */
} bspk_slot;

typedef struct bspk_get_request {
  char *dst;
  int pid, slot, offset, nbytes;
  int one_sided;       /* done with rma_get, not answered by the owner                  */
  int alone;           /* answered by its own message, sent from the owner's memory      */
  int into_registered; /* dst lies in a registered area of this process              */
  ptrdiff_t stage_at;  /* where in get_stage the data waits for the end of all reads, */
                       /* or -1: read straight into dst                              */
} bspk_get_request;

/* A stretch of this process' memory inside some registered area. */
typedef struct bspk_span {
  uintptr_t lo, hi; /* [lo, hi) */
} bspk_span;

typedef struct bspk_message {
  const char *tag;
  const char *payload;
  int nbytes;
} bspk_message;

typedef struct bspk_proc {
  int pid, nprocs;
  int begun; /* bsp_begin seen on this process */
  /* Nested sections (threads): the process that started this section (read only here:
   * its pid and its own parent name where an error happened), or NULL at top level; and
   * the function this process gave bsp_init inside its section, for the sections it
   * starts (NULL: none yet). */
  struct bspk_proc *parent;
  void (*child_spmd)(void);
  long superstep;
  double start_time;
  const bspk_engine_ops *ops;
  bspk_engine *engine;
  unsigned flags; /* BSPK_HAS_* raised in this superstep */

  /* Registrations: slots, and an open-addressing index from address to newest slot. */
  bspk_slot *slots;
  int nslots;
  size_t slots_cap;
  uint64_t next_generation;
  const void **index_key;
  int *index_slot; /* slot + 1; 0 marks an empty bucket */
  size_t index_mask;
  const void *cached_addr;
  int cached_slot;
  bspk_regop *regops;
  int nregops;
  size_t regops_cap;
  int *pop_targets; /* [nregops]: the slot each pop removes, as all processes agree */
  size_t pop_targets_cap;
  /* The union of this process' registered areas, sorted: other processes' gets may read
   * there at a sync, so a get writing there waits until every get has read. */
  bspk_span *own_spans;
  int nown_spans;
  size_t own_spans_cap;

  /* Outgoing blocks, one per destination, double-buffered by superstep parity: receivers
   * read the blocks of superstep s (their message queue points into them) during s + 1. */
  bspk_outbox *outbox[2];
  bspk_get_request *gets;
  int ngets;
  size_t gets_cap;
  char *get_stage; /* get data read before, written after, every process' reads */
  size_t get_stage_cap;
  bspk_outbox *replies;  /* [nprocs]: answers to get requests (engines without direct access) */
  bspk_outbox *rma_puts; /* [nprocs]: buffered puts for an engine with one-sided access */
  int rma_min_bytes;     /* smaller transfers go two-sided: one RMA call costs microseconds */

  /* Large puts on engines with transfer(): what this process sends (data inside
   * large_copies for buffered puts, or the caller's buffer for hpput) and receives. Puts
   * and gets of large_transfer_bytes or more move as their own messages; it is 0 on
   * engines without transfer() and on one-sided ones. */
  int large_transfer_bytes;
  struct bspk_large_send {
    int pid;
    int nbytes;
    const char *ref;
    size_t copy_at;
  } * large_sends;
  int nlarge_sends;
  size_t large_sends_cap;
  char *large_copies;
  size_t large_copies_len, large_copies_cap;
  bspk_transfer *large_recvs;
  int nlarge_recvs;
  size_t large_recvs_cap;
  /* In a superstep with large puts: every put this process receives, in the order they
   * must land (sources in pid order, each in issue order): the data inline in the source's
   * block (payload), or large_recvs[large]. */
  struct bspk_landing {
    char *dest;
    const char *payload;
    size_t nbytes;
    int large; /* index into large_recvs, or -1 */
  } * landings;
  int nlandings;
  size_t landings_cap;

  /* BSMP */
  int tagsize, pending_tagsize, queue_tagsize;
  bspk_message *queue;
  int queue_len, queue_head;
  size_t queue_cap;
  size_t queue_bytes;

  /* Collectives: where COLL records land in this superstep; whether the sync leaves the
   * message queue alone; the copy of the queue's messages kept across a collective. */
  char *coll_buffer;
  size_t coll_buffer_size;
  int keep_queue;
  char *kept_messages;
  size_t kept_messages_cap;

  /* The superstep profile (profile.c), or NULL: not asked for (BSPKIT_PROFILE unset). */
  struct bspk_profile *profile;
  const void *coll_site; /* where the program called the collective now running */

  /* Checkpoints (checkpoint.c): the protected areas and the restart's state; NULL until
   * the program uses them. */
  struct bspk_checkpoint *checkpoint;

  /* Double-buffered like the outboxes: a slow process may still read superstep s's post
   * while a fast one fills the post of s + 1. */
  bspk_post post[2];
} bspk_proc;

/* The calling thread's BSP process; NULL outside an SPMD section. */
extern _Thread_local bspk_proc *bspk_self __attribute__((tls_model("initial-exec")));

/* The current process, or a clear error when called outside bsp_begin..bsp_end. */
static inline bspk_proc *bspk_enter(const char *call) {
  bspk_proc *self = bspk_self;
  if (BSPK_UNLIKELY(self == NULL || !self->begun)) bspk_fatal_outside(call);
  return self;
}

/* The block this process writes for process pid in the current superstep. */
static inline bspk_outbox *bspk_current_outbox(bspk_proc *self, int pid) {
  return &self->outbox[self->superstep & 1][pid];
}

bspk_proc *bspk_proc_create(const bspk_engine_ops *ops, bspk_engine *engine, int pid, int nprocs);
/* What one process of nprocs holds once it has written to every other process: its per-peer
 * records and the first capacity of its outboxes. */
size_t bspk_proc_bytes(const bspk_engine_ops *ops, int nprocs);
/* Frees the record and what it holds itself; the parts that keep state of their own in it
 * (registrations, checkpoints) are freed by their own calls first. */
void bspk_proc_free(bspk_proc *self);

/* "process PID" of the calling thread's section, followed in a nested section by
 * " of the section nested in process Q" for each section it is nested in. */
void bspk_describe_process(char *buf, size_t size, int pid);

double bspk_now(void);
int bspk_cores_available(void);

#endif
