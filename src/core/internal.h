/*
 * internal.h - per-process state of the BSPlib core and the helpers shared by its files.
 */
#ifndef BSPKIT_INTERNAL_H
#define BSPKIT_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "bspkit.h"
#include "core/engine.h"

#define BSPK_API __attribute__((visibility("default")))
#define BSPK_LIKELY(x) __builtin_expect(!!(x), 1)
#define BSPK_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* One record in a combined block; payloads follow, padded to 8 bytes so that a payload
 * handed out by bsp_hpmove is aligned for any scalar type. */
enum bspk_record_kind {
  BSPK_REC_PUT = 1,       /* data for a registered area                              */
  BSPK_REC_SEND = 2,      /* a BSMP message                                          */
  BSPK_REC_COLL = 3,      /* data for the receiver's collective buffer               */
  BSPK_REC_GET = 4,       /* a get request (engines without direct access); no data */
  BSPK_REC_REPLY = 5,     /* the data answering one get request                      */
  BSPK_REC_PUT_LARGE = 6, /* a put whose data follows as its own message; no data  */
};
typedef struct bspk_record {
  uint32_t kind;
  int32_t slot;   /* PUT, GET: registration slot; SEND: tag size */
  int32_t offset; /* PUT, GET: offset in the area; COLL: offset in the collective buffer */
  int32_t nbytes; /* payload bytes */
} bspk_record;

static inline size_t bspk_pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bytes a record takes in its block, header included. */
static inline size_t bspk_record_size(const bspk_record *rec) {
  switch (rec->kind) {
    case BSPK_REC_GET:
    case BSPK_REC_PUT_LARGE: return sizeof *rec;
    case BSPK_REC_SEND:
      return sizeof *rec + bspk_pad8((size_t)rec->slot) + bspk_pad8((size_t)rec->nbytes);
    default: return sizeof *rec + bspk_pad8((size_t)rec->nbytes);
  }
}

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
   * large_copies for buffered puts, or the caller's buffer for hpput) and receives.
   * large_put_bytes is 0 on other engines. */
  int large_put_bytes;
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

/* ---- errors (errors.c) ---- */
/* "process PID" of the calling thread's section, followed in a nested section by
 * " of the section nested in process Q" for each section it is nested in. */
void bspk_describe_process(char *buf, size_t size, int pid);
void bspk_fatal(const char *call, const char *format, ...)
    __attribute__((noreturn, format(printf, 2, 3), cold));
/* The same with the process named explicitly (pid < 0: the calling process, or none). */
void bspk_fatal_on(const char *call, int pid, const char *format, ...)
    __attribute__((noreturn, format(printf, 3, 4), cold));
void bspk_fatal_outside(const char *call) __attribute__((noreturn, cold));
/* Ends the whole program with status after a message was printed. */
void bspk_terminate(int status) __attribute__((noreturn));
/* Claims the right to print the one fatal message of this run; 0 if another thread has
 * it already (then this thread waits to be ended with the program). */
int bspk_claim_dying(void);

/* The current process, or a clear error when called outside bsp_begin..bsp_end. */
static inline bspk_proc *bspk_enter(const char *call) {
  bspk_proc *self = bspk_self;
  if (BSPK_UNLIKELY(self == NULL || !self->begun)) bspk_fatal_outside(call);
  return self;
}

#ifdef BSPKIT_UNCHECKED
#define BSPK_CHECK(cond) 0
#else
#define BSPK_CHECK(cond) BSPK_UNLIKELY(cond)
#endif

/* ---- buffers (buffers.c) ---- */
/* An outbox's first capacity. One per peer and kept between supersteps, so a superstep in
 * which every process writes to every other holds p^2 of them: small, and grown by doubling
 * (measured: 4096 made p = 2000 threads take 17 GB after one all-to-all). */
#define BSPK_OUTBOX_FIRST_BYTES 256
void bspk_outbox_grow(bspk_proc *self, bspk_outbox *ob, size_t need, const char *call);
static inline char *bspk_outbox_reserve(bspk_proc *self, bspk_outbox *ob, size_t n,
                                        const char *call) {
  if (BSPK_UNLIKELY(ob->cap - ob->len < n)) bspk_outbox_grow(self, ob, n, call);
  char *p = ob->data + ob->len;
  ob->len += n;
  return p;
}
static inline bspk_outbox *bspk_current_outbox(bspk_proc *self, int pid) {
  return &self->outbox[self->superstep & 1][pid];
}
/* An outbox emptied for another superstep (its buffer kept). */
static inline void bspk_outbox_clear(bspk_outbox *ob) {
  ob->len = 0;
  ob->n_put = ob->n_send = ob->n_coll = ob->n_get = 0;
  ob->send_bytes = 0;
}
void *bspk_xmalloc(bspk_proc *self, size_t n, const char *call, const char *what);
void *bspk_xrealloc(bspk_proc *self, void *p, size_t n, const char *call, const char *what);
/* Room for `need` elements in a growable array (capacity *cap, doubled, from `first`). */
void *bspk_grow(bspk_proc *self, void *array, size_t *cap, size_t need, size_t elem_size,
                size_t first, const char *call, const char *what);
#define BSPK_GROW(self, array, cap, need, first, call, what)                                      \
  ((array) = bspk_grow((self), (array), &(cap), (size_t)(need), sizeof *(array), (first), (call), \
                       (what)))
/* free() each of a list of pointers: BSPK_FREE_ALL(self->a, self->b, ...). */
void bspk_free_each(void *const *pointers, size_t n);
#define BSPK_FREE_ALL(...)                     \
  bspk_free_each((void *const[]){__VA_ARGS__}, \
                 sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* The one check of a destination process id (put, get, send, collectives). */
static inline void bspk_check_pid(const bspk_proc *self, const char *call, int pid) {
  if (BSPK_CHECK(pid < 0 || pid >= self->nprocs))
    bspk_fatal(call, "pid %d is out of range: there are %d processes (0..%d)", pid, self->nprocs,
               self->nprocs - 1);
}

/* A pointer the library must write to (or read from) for a non-empty transfer. */
static inline void bspk_check_buffer(const char *call, const void *ptr, const char *what,
                                     long nbytes) {
  (void)ptr; /* unused where checks are compiled out */
  if (BSPK_CHECK(ptr == NULL && nbytes > 0))
    bspk_fatal(call, "%s is NULL, but %ld byte(s) are to be copied there", what, nbytes);
}

/* ---- registrations (registrations.c) ---- */
int bspk_find_slot(const bspk_proc *self, const void *addr);
static inline int bspk_lookup(bspk_proc *self, const void *addr) {
  if (BSPK_LIKELY(addr == self->cached_addr)) return self->cached_slot;
  int slot = bspk_find_slot(self, addr);
  if (slot >= 0) {
    self->cached_addr = addr;
    self->cached_slot = slot;
  }
  return slot;
}
/* Whether [p, p + n) touches memory this process registered (active registrations). */
int bspk_in_own_area(const bspk_proc *self, const char *p, int n);
/* Where process pid's area of a slot is, as this process sees it (direct access). */
static inline char *bspk_remote_address(const bspk_proc *self, int slot, int pid, int offset) {
  return self->slots[slot].peer[pid].addr + offset;
}
/* bsp_push_reg and bsp_pop_reg, under the name the program called them by (oxford.c). */
void bspk_push_reg(const void *ident, int size, const char *call);
void bspk_pop_reg(const void *ident, const char *call);
void bspk_registrations_check(bspk_proc *self, const char *call);
void bspk_registrations_apply(bspk_proc *self);
void bspk_registrations_free(bspk_proc *self);
/* ---- DRMA at the sync (drma_sync.c) ---- */
void bspk_fetch_gets(bspk_proc *self, unsigned flags);
void bspk_start_rma_puts(bspk_proc *self);
void bspk_reset_rma_puts(bspk_proc *self);
void bspk_expect_put(bspk_proc *self, const bspk_record *rec, const char *payload);
void bspk_expect_large_put(bspk_proc *self, int src, const bspk_record *rec);
void bspk_land_puts_with_large(bspk_proc *self);

/* ---- BSMP (bsmp.c) ---- */
void bspk_queue_reset(bspk_proc *self, size_t nmessages);
void bspk_tagsize_check(bspk_proc *self, const char *call);
/* bsp_set_tagsize and bsp_qsize, under the name the program called them by (oxford.c). */
void bspk_set_tagsize(bsp_size_t *tag_nbytes, const char *call);
void bspk_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes, const char *call);

/* ---- superstep (superstep.c) ---- */
/* site: the return address of the program's call (bsp_sync, bsp_end, a collective), for
 * the profile. */
/* Returns the flags ORed over all processes at the arrival (enum bspk_superstep_flags). */
unsigned bspk_end_superstep(bspk_proc *self, int kind, const char *call, const void *site);
bspk_proc *bspk_proc_create(const bspk_engine_ops *ops, bspk_engine *engine, int pid, int nprocs);
/* What one process of nprocs holds once it has written to every other process: its per-peer
 * records and the first capacity of its outboxes. */
size_t bspk_proc_bytes(const bspk_engine_ops *ops, int nprocs);
void bspk_proc_free(bspk_proc *self);

/* ---- the superstep profile (profile.c; docs/profile-format.md) ---- */
#define BSPK_PROFILE_WORD_BYTES 8 /* the unit of h, as the probe and the drivers count */
enum bspk_profile_op {
  BSPK_PROFILE_PUT,
  BSPK_PROFILE_HPPUT,
  BSPK_PROFILE_GET,
  BSPK_PROFILE_HPGET,
  BSPK_PROFILE_SEND,
  BSPK_PROFILE_COLL,
  BSPK_PROFILE_NOPS
};
typedef struct bspk_profile bspk_profile;
/* From bsp_begin: starts profiling this process when BSPKIT_PROFILE names a file. */
void bspk_profile_begin(bspk_proc *self);
void bspk_profile_count(bspk_proc *self, enum bspk_profile_op op, int peer, long nbytes);
void bspk_profile_sync_enter(bspk_proc *self, const void *site);
void bspk_profile_waited(bspk_proc *self, double seconds);
void bspk_profile_tagsize(bspk_proc *self);
void bspk_profile_sync_exit(bspk_proc *self, int at_end);
/* From bsp_end, after the last superstep: appends this process' records to the file. */
void bspk_profile_end(bspk_proc *self);
/* The one branch a call pays while nobody profiles. */
static inline void bspk_profile_op(bspk_proc *self, enum bspk_profile_op op, int peer,
                                   long nbytes) {
  if (BSPK_UNLIKELY(self->profile != NULL)) bspk_profile_count(self, op, peer, nbytes);
}

/* ---- checkpoints (checkpoint.c) ---- */
void bspk_checkpoint_free(bspk_proc *self);

/* ---- misc ---- */
/* The back end of this program once chosen (bsp_init, bsp_begin, bsp_nprocs), else NULL. */
const bspk_engine_ops *bspk_active_engine(void);
double bspk_now(void);
int bspk_cores_available(void);

#endif
