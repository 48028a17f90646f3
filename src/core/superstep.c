/* superstep.c - the end of a superstep: agree, serve gets, deliver puts and messages,
 * apply registrations. */
#include <stdio.h>
#include <string.h>

#include "bsp.h"
#include "core/bsmp.h"
#include "core/buffers.h"
#include "core/compiler.h"
#include "core/drma_sync.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/profile.h"
#include "core/records.h"
#include "core/registrations.h"
#include "core/superstep.h"

/* Writes the puts and collective data of one incoming block and indexes its messages. In a
 * superstep with large puts (with_large), the puts are listed instead, to be written in order
 * with the large ones (bspk_land_puts_with_large). */
static void deliver_block(bspk_proc *self, int src, const bspk_outbox *block, int with_large) {
  const char *p = block->data, *end = block->data + block->len;
  while (p < end) {
    const bspk_record *rec = (const bspk_record *)p;
    const char *payload = p + sizeof *rec;
    switch (rec->kind) {
      case BSPK_REC_PUT:
        if (with_large) bspk_expect_put(self, rec, payload);
        else memcpy(self->slots[rec->slot].addr + rec->offset, payload, (size_t)rec->nbytes);
        break;
      case BSPK_REC_SEND:
        self->queue[self->queue_len++] =
            (bspk_message){payload, payload + bspk_pad8((size_t)rec->slot), rec->nbytes};
        break;
      case BSPK_REC_COLL:
        memcpy(self->coll_buffer + rec->offset, payload, (size_t)rec->nbytes);
        break;
      case BSPK_REC_GET: /* answered before any put landed */
      case BSPK_REC_GET_LARGE: break;
      case BSPK_REC_PUT_LARGE: /* the data comes as its own message */
        bspk_expect_large_put(self, src, rec);
        break;
      default:
        bspk_fatal("bsp_sync", "internal error: corrupt communication block (kind %u)", rec->kind);
    }
    p += bspk_record_size(rec);
  }
}

static void report_end_mismatch(bspk_proc *self, const char *call) {
  char at_end[256] = "", at_sync[256] = "";
  size_t ne = 0, ns = 0;
  for (int q = 0; q < self->nprocs; q++) {
    int kind = self->ops->peer_post(self->engine, q)->kind;
    if (kind == BSPK_AT_END && ne < sizeof at_end)
      ne += (size_t)snprintf(at_end + ne, sizeof at_end - ne, "%s%d", ne ? ", " : "", q);
    else if (kind == BSPK_AT_SYNC && ns < sizeof at_sync)
      ns += (size_t)snprintf(at_sync + ns, sizeof at_sync - ns, "%s%d", ns ? ", " : "", q);
  }
  bspk_fatal(call,
             "process(es) %s called bsp_end while process(es) %s called bsp_sync (superstep "
             "%ld); every process must make the same number of bsp_sync calls before bsp_end%s",
             at_end, at_sync, self->superstep,
             self->parent ? " (in this nested section, also its process 0, which returns to "
                            "the parent section only through the nested section's bsp_end)"
                          : "");
}

/* Hands this superstep's post to the engine; returns when every process has arrived. */
static void arrive(bspk_proc *self, int kind, bspk_arrival *all) {
  bspk_post *post = &self->post[self->superstep & 1];
  post->kind = kind;
  post->parity = (int)(self->superstep & 1);
  post->outbox = self->outbox[self->superstep & 1];
  post->regops = self->regops;
  post->nregops = self->nregops;
  post->tagsize = (self->flags & BSPK_HAS_TAGSIZE) ? self->pending_tagsize : -1;
  if (BSPK_UNLIKELY(self->profile != NULL)) {
    double t = bspk_now();
    self->ops->arrive(self->engine, post, self->flags, all);
    bspk_profile_waited(self, bspk_now() - t);
  } else {
    self->ops->arrive(self->engine, post, self->flags, all);
  }
}

/* Every process has ended superstep s, so nobody reads the blocks of s - 1 any more. */
static void recycle_old_outboxes(bspk_proc *self) {
  bspk_outbox *old = self->outbox[(self->superstep & 1) ^ 1];
  for (int q = 0; q < self->nprocs; q++) bspk_outbox_clear(&old[q]);
}

/* Puts and collective data land in issue order; the queue then holds exactly the messages
 * of this superstep (unless a collective keeps the messages of the superstep before it:
 * it sends none itself). */
static void deliver_puts_and_messages(bspk_proc *self, unsigned flags) {
  const bspk_engine_ops *ops = self->ops;
  if (!self->keep_queue) {
    size_t nmessages = 0;
    if (flags & BSPK_HAS_SEND)
      for (int q = 0; q < self->nprocs; q++) nmessages += ops->incoming(self->engine, q)->n_send;
    self->queue_tagsize = self->tagsize;
    bspk_queue_reset(self, nmessages);
  }
  if (flags & (BSPK_HAS_PUT | BSPK_HAS_SEND))
    for (int q = 0; q < self->nprocs; q++) {
      const bspk_outbox *block = ops->incoming(self->engine, q);
      if (block->n_put + block->n_send + block->n_coll) {
        deliver_block(self, q, block, (flags & BSPK_HAS_LARGE_PUT) != 0);
        self->queue_bytes += block->send_bytes;
      }
    }
  if (flags & BSPK_HAS_LARGE_PUT) bspk_land_puts_with_large(self);
  if (flags & BSPK_HAS_RMA_PUT) {
    bspk_start_rma_puts(self);
    ops->rma_complete(self->engine);
    bspk_reset_rma_puts(self);
  }
}

/* Registrations and the tag size of this superstep take effect (after its puts landed:
 * they used the old table). */
static void apply_registrations_and_tagsize(bspk_proc *self) {
  if (BSPK_UNLIKELY(self->nregops)) bspk_registrations_apply(self);
  if (BSPK_UNLIKELY(self->flags & BSPK_HAS_TAGSIZE)) {
    self->tagsize = self->pending_tagsize;
    self->pending_tagsize = -1;
  }
  self->nregops = 0;
}

/* Whether this sync's writes (puts, gets into registered memory; on threads also the
 * registration logs, which all processes read) may meet what other processes do at once
 * in the next superstep: hpput/hpget straight into this process' memory (threads), or an
 * hpput written by its sender (mpi-rma). Then every process must be done first. */
static int writes_may_meet_next_superstep(const bspk_proc *self, unsigned flags) {
  if (self->ops->direct_access)
    return (flags & (BSPK_HAS_PUT | BSPK_HAS_REG | BSPK_HAS_GET_INTO_REG)) != 0;
  /* One-sided puts of this sync ended with rma_complete's barrier, after every write. */
  if (self->ops->rma_put)
    return (flags & (BSPK_HAS_PUT | BSPK_HAS_GET_INTO_REG)) && !(flags & BSPK_HAS_RMA_PUT);
  return 0;
}

/* The end of a superstep, in the order BSPlib defines: agree (same registrations, same
 * tag size, same kind of arrival), then every get reads and writes, then puts and
 * messages land, then registrations take effect. */
unsigned bspk_end_superstep(bspk_proc *self, int kind, const char *call, const void *site) {
  bspk_arrival all;
  if (BSPK_UNLIKELY(self->profile != NULL)) bspk_profile_sync_enter(self, site);
  arrive(self, kind, &all);
  if (BSPK_UNLIKELY(all.n_at_end != 0 && all.n_at_end != self->nprocs))
    report_end_mismatch(self, call);
  if (kind == BSPK_AT_END) {
    if (BSPK_UNLIKELY(self->profile != NULL)) bspk_profile_sync_exit(self, 1);
    return all.flags;
  }
  if (BSPK_UNLIKELY((all.flags ^ self->flags) & BSPK_HAS_CHECKPOINT))
    bspk_fatal(call,
               "this process called %s while other processes called bspk_checkpoint in the same "
               "superstep (%ld): a checkpoint is collective, every process must call it",
               call, self->superstep);
  recycle_old_outboxes(self);

  if (BSPK_UNLIKELY(all.flags & BSPK_HAS_REG)) bspk_registrations_check(self, call);
  if (BSPK_UNLIKELY(all.flags & BSPK_HAS_TAGSIZE)) bspk_tagsize_check(self, call);
  if (all.flags & BSPK_HAS_GET) {
    bspk_fetch_gets(self, all.flags);
    /* Puts written by their senders must not land before a get into the same memory. */
    if ((all.flags & BSPK_HAS_RMA_PUT) && (all.flags & BSPK_HAS_GET_INTO_REG))
      self->ops->barrier(self->engine);
  }
  deliver_puts_and_messages(self, all.flags);
  apply_registrations_and_tagsize(self);

  if (writes_may_meet_next_superstep(self, all.flags)) self->ops->barrier(self->engine);
  self->flags = 0;
  if (BSPK_UNLIKELY(self->profile != NULL)) bspk_profile_sync_exit(self, 0);
  self->superstep++;
  return all.flags;
}

BSPK_API void bsp_sync(void) {
  bspk_proc *self = bspk_enter("bsp_sync");
  bspk_end_superstep(self, BSPK_AT_SYNC, "bsp_sync", __builtin_return_address(0));
}
