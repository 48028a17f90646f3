/* bsmp.c - bulk synchronous message passing: send, the message queue, tag size.
 *
 * bsp_set_tagsize, bsp_qsize and bsp_get_tag are defined as `void (name)(...)`: in C bsp.h
 * also makes them macros (which pick the type of the out-arguments and call bspk_*_as), and
 * a function-like macro is not expanded where its name is not followed by `(`. */
#include <limits.h>
#include <string.h>

#include "bsp.h"
#include "core/bsmp.h"
#include "core/buffers.h"
#include "core/checks.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/profile.h"
#include "core/records.h"

/* The out-arguments of both type families (bsp.h, "One header, both type families"). */
static void check_out_type(const char *call, enum bspk_out_type type) {
  if (BSPK_CHECK(type != BSPK_OUT_INT && type != BSPK_OUT_UNSIGNED && type != BSPK_OUT_SIZE_T))
    bspk_fatal(call,
               "unknown type %d of an out-argument (BSPK_OUT_INT, BSPK_OUT_UNSIGNED or "
               "BSPK_OUT_SIZE_T)",
               (int)type);
}

/* Writes value through out as the type out points to, with all of that type's bytes; a
 * negative value converts as C converts it (-1: UINT_MAX, SIZE_MAX). */
static void store_out(void *out, enum bspk_out_type type, long long value) {
  switch (type) {
    case BSPK_OUT_UNSIGNED: *(unsigned *)out = (unsigned)value; break;
    case BSPK_OUT_SIZE_T: *(size_t *)out = (size_t)value; break;
    default: *(int *)out = (int)value; break;
  }
}

static inline void queue_message(bspk_proc *self, const char *call, int pid, const void *tag,
                                 const void *payload, int nbytes) {
  bspk_check_pid(self, call, pid);
  if (BSPK_CHECK(nbytes < 0)) bspk_fatal(call, "negative payload size %d", nbytes);
  size_t tagsize = (size_t)self->tagsize;
  bspk_check_buffer(call, tag, "the tag", (long)tagsize);
  bspk_check_buffer(call, payload, "the payload", nbytes);
  bspk_outbox *ob = bspk_current_outbox(self, pid);
  char *p = bspk_outbox_reserve(
      self, ob, sizeof(bspk_record) + bspk_pad8(tagsize) + bspk_pad8((size_t)nbytes), call);
  bspk_record *rec = (bspk_record *)p;
  rec->kind = BSPK_REC_SEND;
  rec->slot = (int32_t)tagsize;
  rec->offset = 0;
  rec->nbytes = nbytes;
  p += sizeof *rec;
  if (tagsize) memcpy(p, tag, tagsize);
  if (nbytes) memcpy(p + bspk_pad8(tagsize), payload, (size_t)nbytes);
  ob->n_send++;
  ob->send_bytes += (size_t)nbytes;
  self->flags |= BSPK_HAS_SEND;
}

/* The profiled path: the message counted (after the checks), its copy timed as packing. */
static void queue_message_profiled(bspk_proc *self, const char *call, int pid, const void *tag,
                                   const void *payload, int nbytes) {
  double since = bspk_now();
  queue_message(self, call, pid, tag, payload, nbytes);
  bspk_profile_count(self, BSPK_PROFILE_SEND, pid, nbytes);
  bspk_profile_timed(self, since, BSPK_PROFILE_PACKED);
}

BSPK_API void bsp_send(bsp_pid_t pid, const void *tag, const void *payload,
                       bsp_size_t payload_nbytes) {
  bspk_proc *self = bspk_enter("bsp_send");
  if (BSPK_UNLIKELY(self->profile != NULL))
    queue_message_profiled(self, "bsp_send", pid, tag, payload, payload_nbytes);
  else queue_message(self, "bsp_send", pid, tag, payload, payload_nbytes);
}

/* The receiver may read a message only after the sender has moved on, so an unbuffered
 * send still needs one copy on a shared-memory engine; it is made here, at the call. */
BSPK_API void bsp_hpsend(bsp_pid_t pid, const void *tag, const void *payload,
                         bsp_size_t payload_nbytes) {
  bspk_proc *self = bspk_enter("bsp_hpsend");
  if (BSPK_UNLIKELY(self->profile != NULL))
    queue_message_profiled(self, "bsp_hpsend", pid, tag, payload, payload_nbytes);
  else queue_message(self, "bsp_hpsend", pid, tag, payload, payload_nbytes);
}

static void set_tagsize(void *tag_nbytes, enum bspk_out_type type, const char *call) {
  bspk_proc *self = bspk_enter(call);
  check_out_type(call, type);
  if (BSPK_CHECK(tag_nbytes == NULL)) bspk_fatal(call, "NULL argument");
  int size;
  if (type == BSPK_OUT_SIZE_T) {
    size_t asked = *(const size_t *)tag_nbytes;
    if (BSPK_CHECK(asked > INT_MAX))
      bspk_fatal(call, "tag size %zu is too large (at most %d bytes)", asked, INT_MAX);
    size = (int)asked;
  } else if (type == BSPK_OUT_UNSIGNED) {
    unsigned asked = *(const unsigned *)tag_nbytes;
    if (BSPK_CHECK(asked > INT_MAX))
      bspk_fatal(call, "tag size %u is too large (at most %d bytes)", asked, INT_MAX);
    size = (int)asked;
  } else {
    size = *(const int *)tag_nbytes;
    if (BSPK_CHECK(size < 0)) bspk_fatal(call, "negative tag size %d", size);
  }
  int previous = self->pending_tagsize >= 0 ? self->pending_tagsize : self->tagsize;
  self->pending_tagsize = size;
  self->flags |= BSPK_HAS_TAGSIZE;
  if (BSPK_UNLIKELY(self->profile != NULL)) bspk_profile_tagsize(self);
  store_out(tag_nbytes, type, previous);
}

void bspk_set_tagsize(bsp_size_t *tag_nbytes, const char *call) {
  set_tagsize(tag_nbytes, BSPK_OUT_INT, call);
}

BSPK_API void(bsp_set_tagsize)(bsp_size_t *tag_nbytes) {
  set_tagsize(tag_nbytes, BSPK_OUT_INT, "bsp_set_tagsize");
}

BSPK_API void bspk_set_tagsize_as(void *tag_nbytes, enum bspk_out_type tag_nbytes_type) {
  set_tagsize(tag_nbytes, tag_nbytes_type, "bsp_set_tagsize");
}

/* Every process must request the same tag size in the same superstep. */
void bspk_tagsize_check(bspk_proc *self, const char *call) {
  int first = self->ops->peer_post(self->engine, 0)->tagsize;
  for (int q = 1; q < self->nprocs; q++) {
    int theirs = self->ops->peer_post(self->engine, q)->tagsize;
    if (theirs != first)
      bspk_fatal(call,
                 "bsp_set_tagsize is collective, but in superstep %ld process 0 %s%d and "
                 "process %d %s%d (-1: did not call it)",
                 self->superstep, "asked for ", first, q, "asked for ", theirs);
  }
}

void bspk_queue_reset(bspk_proc *self, size_t nmessages) {
  self->queue_len = self->queue_head = 0;
  self->queue_bytes = 0;
  BSPK_GROW(self, self->queue, self->queue_cap, nmessages, 64, "bsp_sync", "the message queue");
}

static void qsize(void *nmessages, enum bspk_out_type nmessages_type, void *accum_nbytes,
                  enum bspk_out_type accum_nbytes_type, const char *call) {
  bspk_proc *self = bspk_enter(call);
  check_out_type(call, nmessages_type);
  check_out_type(call, accum_nbytes_type);
  if (BSPK_CHECK(nmessages == NULL))
    bspk_fatal(call, "the first argument is NULL (%s writes the number of messages there)", call);
  store_out(nmessages, nmessages_type, self->queue_len - self->queue_head);
  /* the byte count is optional, as MulticoreBSP documents it: NULL skips it */
  if (accum_nbytes) store_out(accum_nbytes, accum_nbytes_type, (long long)self->queue_bytes);
}

void bspk_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes, const char *call) {
  qsize(nmessages, BSPK_OUT_INT, accum_nbytes, BSPK_OUT_INT, call);
}

BSPK_API void(bsp_qsize)(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes) {
  qsize(nmessages, BSPK_OUT_INT, accum_nbytes, BSPK_OUT_INT, "bsp_qsize");
}

BSPK_API void bspk_qsize_as(void *nmessages, enum bspk_out_type nmessages_type, void *accum_nbytes,
                            enum bspk_out_type accum_nbytes_type) {
  qsize(nmessages, nmessages_type, accum_nbytes, accum_nbytes_type, "bsp_qsize");
}

BSPK_API void bspk_get_tag_as(void *status, enum bspk_out_type status_type, void *tag) {
  bspk_proc *self = bspk_enter("bsp_get_tag");
  check_out_type("bsp_get_tag", status_type);
  if (BSPK_CHECK(status == NULL)) bspk_fatal("bsp_get_tag", "the status argument is NULL");
  bspk_check_buffer("bsp_get_tag", tag, "the tag buffer", self->queue_tagsize);
  if (self->queue_head == self->queue_len) {
    store_out(status, status_type, -1);
    return;
  }
  const bspk_message *m = &self->queue[self->queue_head];
  store_out(status, status_type, m->nbytes);
  if (self->queue_tagsize) memcpy(tag, m->tag, (size_t)self->queue_tagsize);
}

BSPK_API void(bsp_get_tag)(bsp_size_t *status, void *tag) {
  bspk_get_tag_as(status, BSPK_OUT_INT, tag);
}

BSPK_API void bsp_move(void *payload, bsp_size_t reception_nbytes) {
  bspk_proc *self = bspk_enter("bsp_move");
  if (BSPK_CHECK(reception_nbytes < 0))
    bspk_fatal("bsp_move", "negative reception size %d", reception_nbytes);
  if (BSPK_CHECK(self->queue_head == self->queue_len))
    bspk_fatal("bsp_move", "the message queue is empty (check bsp_get_tag's status first)");
  bspk_check_buffer("bsp_move", payload, "the payload buffer", reception_nbytes);
  const bspk_message *m = &self->queue[self->queue_head++];
  int n = m->nbytes < reception_nbytes ? m->nbytes : reception_nbytes;
  if (BSPK_UNLIKELY(self->profile != NULL)) { /* unpacking: timed as packing */
    double since = bspk_now();
    if (n) memcpy(payload, m->payload, (size_t)n);
    bspk_profile_timed(self, since, BSPK_PROFILE_PACKED);
  } else if (n) {
    memcpy(payload, m->payload, (size_t)n);
  }
  self->queue_bytes -= (size_t)m->nbytes;
}

BSPK_API bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr) {
  bspk_proc *self = bspk_enter("bsp_hpmove");
  if (BSPK_CHECK(tag_ptr == NULL || payload_ptr == NULL))
    bspk_fatal("bsp_hpmove", "the %s argument is NULL", tag_ptr == NULL ? "tag" : "payload");
  if (self->queue_head == self->queue_len) return -1;
  const bspk_message *m = &self->queue[self->queue_head++];
  *tag_ptr = (void *)m->tag;
  *payload_ptr = (void *)m->payload;
  self->queue_bytes -= (size_t)m->nbytes;
  return m->nbytes;
}
