/*
 * collectives.c - broadcast and reduce (bspkit.h), on the core's own records so that they
 * need no registration and leave the user's message queue alone during the superstep.
 *
 * Large data goes in two phases (Horvitz & Bisseling, sec. 2.2): scatter p blocks, then
 * every process sends its block to all (h about 2n, two syncs) instead of one process
 * sending everything to everyone (h = (p-1)n, one sync).
 */
#include <stdlib.h>
#include <string.h>

#include "bspkit.h"
#include "core/buffers.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/profile.h"
#include "core/records.h"
#include "core/superstep.h"

/* Below this many bytes per process, or with fewer than 4 processes, one superstep is
 * cheaper: the second sync costs more than the data it saves. */
#define BSPK_TWO_PHASE_MIN_BYTES 16384

static int two_phase(const bspk_proc *self, size_t nbytes) {
  return self->nprocs >= 4 && nbytes >= BSPK_TWO_PHASE_MIN_BYTES;
}

/* Queues nbytes at src to land at offset in pid's collective buffer at the next sync. */
static void coll_send(bspk_proc *self, int pid, const void *src, size_t offset, size_t nbytes,
                      const char *call) {
  if (nbytes == 0) return;
  bspk_outbox *ob = bspk_current_outbox(self, pid);
  char *p = bspk_outbox_reserve(self, ob, sizeof(bspk_record) + bspk_pad8(nbytes), call);
  bspk_record *rec = (bspk_record *)p;
  rec->kind = BSPK_REC_COLL;
  rec->slot = -1;
  rec->offset = (int32_t)offset;
  rec->nbytes = (int32_t)nbytes;
  memcpy(p + sizeof *rec, src, nbytes);
  ob->n_coll++;
  bspk_profile_op(self, BSPK_PROFILE_COLL, pid, (long)nbytes);
  self->flags |= BSPK_HAS_PUT;
}

static void coll_sync(bspk_proc *self, void *buffer, size_t size, const char *call) {
  self->coll_buffer = buffer;
  self->coll_buffer_size = size;
  bspk_end_superstep(self, BSPK_AT_SYNC, call, self->coll_site);
  self->coll_buffer = NULL;
}

/* The messages sent before a collective arrive at its first sync and must still be in
 * the queue after its last one, like after one bsp_sync. The senders' blocks they point
 * into are reused after the second sync, so a two-phase collective copies them here. */
static void keep_message_queue(bspk_proc *self, const char *call) {
  size_t need = 0, tagpad = bspk_pad8((size_t)self->queue_tagsize);
  for (int i = self->queue_head; i < self->queue_len; i++)
    need += tagpad + bspk_pad8((size_t)self->queue[i].nbytes);
  BSPK_GROW(self, self->kept_messages, self->kept_messages_cap, need, 4096, call,
            "the message queue");
  char *p = self->kept_messages;
  for (int i = self->queue_head; i < self->queue_len; i++) {
    bspk_message *m = &self->queue[i];
    memcpy(p, m->tag, (size_t)self->queue_tagsize);
    memcpy(p + tagpad, m->payload, (size_t)m->nbytes);
    m->tag = p;
    m->payload = p + tagpad;
    p += tagpad + bspk_pad8((size_t)m->nbytes);
  }
  self->keep_queue = 1;
}

static void second_coll_sync(bspk_proc *self, void *buffer, size_t size, const char *call) {
  keep_message_queue(self, call);
  coll_sync(self, buffer, size, call);
  self->keep_queue = 0;
}

/* Block b of n items split over p: [first, first + count). */
static void block_range(size_t n, int p, int b, size_t *first, size_t *count) {
  size_t base = n / (size_t)p, extra = n % (size_t)p;
  *first = (size_t)b * base + ((size_t)b < extra ? (size_t)b : extra);
  *count = base + ((size_t)b < extra ? 1 : 0);
}

BSPK_API void bspk_broadcast(bsp_pid_t root, const void *src, void *dst, bsp_size_t nbytes) {
  const char *call = "bspk_broadcast";
  bspk_proc *self = bspk_enter(call);
  self->coll_site = __builtin_return_address(0);
  if (root < 0 || root >= self->nprocs)
    bspk_fatal(call, "root %d is out of range: there are %d processes (0..%d)", root, self->nprocs,
               self->nprocs - 1);
  if (nbytes < 0) bspk_fatal(call, "negative size %d", nbytes);
  size_t n = (size_t)nbytes;
  int p = self->nprocs;
  if (!two_phase(self, n)) {
    if (self->pid == root) {
      for (int q = 0; q < p; q++)
        if (q != root) coll_send(self, q, src, 0, n, call);
      if (dst != src && n) memmove(dst, src, n);
    }
    coll_sync(self, dst, n, call);
    return;
  }
  if (self->pid == root) {
    for (int q = 0; q < p; q++) {
      size_t first, count;
      block_range(n, p, q, &first, &count);
      if (q != root) coll_send(self, q, (const char *)src + first, first, count, call);
    }
    if (dst != src) memmove(dst, src, n);
  }
  coll_sync(self, dst, n, call);
  size_t first, count;
  block_range(n, p, self->pid, &first, &count);
  /* The root has every block already. */
  for (int q = 0; q < p; q++)
    if (q != self->pid && q != root) coll_send(self, q, (char *)dst + first, first, count, call);
  second_coll_sync(self, dst, n, call);
}

/* Folds p operand blocks laid out one after another in pid order into result. */
static void fold_blocks(bspk_op op, char *result, const char *blocks, size_t block_bytes, int p) {
  if (block_bytes == 0) return;
  memcpy(result, blocks, block_bytes);
  for (int q = 1; q < p; q++) {
    bsp_size_t len = (bsp_size_t)block_bytes;
    op(result, result, blocks + (size_t)q * block_bytes, &len);
  }
}

BSPK_API void bspk_reduce(bspk_op op, const void *src, void *dst, bsp_size_t count,
                          bsp_size_t elem_size) {
  const char *call = "bspk_reduce";
  bspk_proc *self = bspk_enter(call);
  self->coll_site = __builtin_return_address(0);
  if (count < 0 || elem_size < 0)
    bspk_fatal(call, "negative %s %d", count < 0 ? "count" : "element size",
               count < 0 ? count : elem_size);
  if (!op) bspk_fatal(call, "the operation is NULL");
  int p = self->nprocs, me = self->pid;
  size_t es = (size_t)elem_size, n = (size_t)count * es;
  if (!two_phase(self, n)) {
    /* Everyone gets every operand and folds them in pid order: identical bits everywhere. */
    char *all = bspk_xmalloc(self, n * (size_t)p, call, "the reduction buffer");
    for (int q = 0; q < p; q++)
      if (q == me) memcpy(all + (size_t)me * n, src, n);
      else coll_send(self, q, src, (size_t)me * n, n, call);
    coll_sync(self, all, n * (size_t)p, call);
    fold_blocks(op, dst, all, n, p);
    free(all);
    return;
  }
  /* Phase 1: process b receives block b of every operand and folds it. */
  size_t my_first, my_count;
  block_range((size_t)count, p, me, &my_first, &my_count);
  size_t my_bytes = my_count * es;
  char *blocks = bspk_xmalloc(self, my_bytes * (size_t)p, call, "the reduction buffer");
  for (int q = 0; q < p; q++) {
    size_t first, cnt;
    block_range((size_t)count, p, q, &first, &cnt);
    const char *part = (const char *)src + first * es;
    if (q == me) memcpy(blocks + (size_t)me * my_bytes, part, cnt * es);
    else coll_send(self, q, part, (size_t)me * cnt * es, cnt * es, call);
  }
  coll_sync(self, blocks, my_bytes * (size_t)p, call);
  char *mine = (char *)dst + my_first * es;
  fold_blocks(op, mine, blocks, my_bytes, p);
  free(blocks);
  /* Phase 2: every process sends its folded block to all. */
  for (int q = 0; q < p; q++)
    if (q != me) coll_send(self, q, mine, my_first * es, my_bytes, call);
  second_coll_sync(self, dst, n, call);
}

#define BSPK_ELEMENTWISE(name, type, expr)                                                    \
  BSPK_API void name(void *result, const void *left, const void *right, bsp_size_t *nbytes) { \
    type *r = result;                                                                         \
    const type *a = left, *b = right;                                                         \
    size_t n = (size_t)*nbytes / sizeof(type);                                                \
    for (size_t i = 0; i < n; i++) r[i] = (expr);                                             \
  }

BSPK_ELEMENTWISE(bspk_op_sum_double, double, a[i] + b[i])
BSPK_ELEMENTWISE(bspk_op_max_double, double, a[i] > b[i] ? a[i] : b[i])
BSPK_ELEMENTWISE(bspk_op_min_double, double, a[i] < b[i] ? a[i] : b[i])
BSPK_ELEMENTWISE(bspk_op_sum_long, long, a[i] + b[i])
BSPK_ELEMENTWISE(bspk_op_max_long, long, a[i] > b[i] ? a[i] : b[i])
BSPK_ELEMENTWISE(bspk_op_sum_int, int, a[i] + b[i])
BSPK_ELEMENTWISE(bspk_op_max_int, int, a[i] > b[i] ? a[i] : b[i])
