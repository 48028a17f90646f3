/* drma.c - direct remote memory access at the call: checks, and put, get, hpput, hpget
 * queued for the sync (or done at once where the engine allows). */
#include <stdint.h>
#include <string.h>

#include "bsp.h"
#include "core/buffers.h"
#include "core/checks.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/profile.h"
#include "core/records.h"
#include "core/registrations.h"

/* ---- access checks -------------------------------------------------------------------- */

/* Checks a remote access and returns the slot of the registered area `area`. */
static inline int check_access(bspk_proc *self, const char *call, int pid, const void *area,
                               int offset, int nbytes) {
  bspk_check_pid(self, call, pid);
  int slot = bspk_lookup(self, area);
#ifdef BSPKIT_UNCHECKED
  (void)offset;
  (void)nbytes;
#else
  if (BSPK_UNLIKELY(nbytes < 0 || offset < 0))
    bspk_fatal(call, "negative %s %d", nbytes < 0 ? "size" : "offset",
               nbytes < 0 ? nbytes : offset);
  if (BSPK_UNLIKELY(slot < 0))
    bspk_fatal(call,
               "address %p is not registered (register it with bsp_push_reg on every "
               "process; it takes effect at the next bsp_sync)",
               area);
  int size = self->slots[slot].peer[pid].size;
  if (BSPK_UNLIKELY((int64_t)offset + nbytes > size))
    bspk_fatal(call,
               "bytes %d..%lld are past the end of the %d-byte area registered at %p on "
               "process %d",
               offset, (long long)offset + nbytes - 1, size,
               (void *)self->slots[slot].peer[pid].addr, pid);
#endif
  return slot;
}

/* What every put and get does first: enter the call, check the remote access and the local
 * buffer. Returns the slot of the remote area, or -1 when there is nothing to move. */
static inline int begin_access(bspk_proc **self, const char *call, int pid, const void *area,
                               int offset, int nbytes, const void *buffer, const char *role) {
  *self = bspk_enter(call);
  int slot = check_access(*self, call, pid, area, offset, nbytes);
  bspk_check_buffer(call, buffer, role, nbytes);
  return nbytes == 0 ? -1 : slot;
}

/* ---- put and get ---------------------------------------------------------------------- */

static inline void queue_put(bspk_proc *self, int pid, int slot, const void *src, int offset,
                             int nbytes, const char *call) {
  /* One-sided engines move large buffered puts with RMA at the sync, small ones in the
   * block (delivered first). Once one put to pid went RMA in this superstep, the later ones
   * follow it, so that the puts to pid still land in issue order. */
  int one_sided = self->rma_puts && (self->rma_puts[pid].len || nbytes >= self->rma_min_bytes);
  bspk_outbox *ob = one_sided ? &self->rma_puts[pid] : bspk_current_outbox(self, pid);
  char *p = bspk_outbox_reserve(self, ob, sizeof(bspk_record) + bspk_pad8((size_t)nbytes), call);
  bspk_record *rec = (bspk_record *)p;
  rec->kind = BSPK_REC_PUT;
  rec->slot = slot;
  rec->offset = offset;
  rec->nbytes = nbytes;
  memcpy(p + sizeof *rec, src, (size_t)nbytes);
  ob->n_put++;
  self->flags |= one_sided ? BSPK_HAS_PUT | BSPK_HAS_RMA_PUT : BSPK_HAS_PUT;
}

/* Large puts (and gets, queue_get) on two-sided engines: a record without data in the
 * block, the data as its own message at the sync; the receiver keeps the order of all puts
 * (bspk_land_puts_with_large). by_reference: hpput (the caller keeps the buffer unchanged
 * until the sync); otherwise the data is copied now. */
static inline int wants_large_path(const bspk_proc *self, int pid, int nbytes) {
  return self->large_transfer_bytes > 0 && pid != self->pid && nbytes >= self->large_transfer_bytes;
}

static void queue_large_put(bspk_proc *self, int pid, int slot, const void *src, int offset,
                            int nbytes, int by_reference, const char *call) {
  BSPK_GROW(self, self->large_sends, self->large_sends_cap, self->nlarge_sends + 1, 16, call,
            "the list of large puts");
  struct bspk_large_send *ls = &self->large_sends[self->nlarge_sends++];
  *ls = (struct bspk_large_send){pid, nbytes, by_reference ? src : NULL, 0};
  if (!by_reference) {
    size_t need = self->large_copies_len + (size_t)nbytes;
    BSPK_GROW(self, self->large_copies, self->large_copies_cap, need, (size_t)1 << 20, call,
              "the buffer for large puts");
    ls->copy_at = self->large_copies_len;
    memcpy(self->large_copies + self->large_copies_len, src, (size_t)nbytes);
    self->large_copies_len = need;
  }
  bspk_outbox *ob = bspk_current_outbox(self, pid);
  bspk_record *rec = (bspk_record *)bspk_outbox_reserve(self, ob, sizeof *rec, call);
  *rec = (bspk_record){BSPK_REC_PUT_LARGE, slot, offset, nbytes};
  ob->n_put++;
  self->flags |= BSPK_HAS_PUT | BSPK_HAS_LARGE_PUT;
}

static inline void buffer_put(bspk_proc *self, int pid, int slot, const void *src, int offset,
                              int nbytes) {
  if (BSPK_UNLIKELY(wants_large_path(self, pid, nbytes)))
    queue_large_put(self, pid, slot, src, offset, nbytes, 0, "bsp_put");
  else queue_put(self, pid, slot, src, offset, nbytes, "bsp_put");
}

/* A primitive's profiled path: counted, and its time at the call (packing, or data moved
 * there and then) measured around it; the one branch the unprofiled path pays chooses it. */
BSPK_API void bsp_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
                      bsp_size_t nbytes) {
  bspk_proc *self;
  int slot = begin_access(&self, "bsp_put", pid, dst, offset, nbytes, src, "the source");
  if (slot < 0) return;
  if (BSPK_UNLIKELY(self->profile != NULL)) {
    double since = bspk_now();
    bspk_profile_count(self, BSPK_PROFILE_PUT, pid, nbytes);
    buffer_put(self, pid, slot, src, offset, nbytes);
    bspk_profile_timed(self, since, BSPK_PROFILE_PACKED);
    return;
  }
  buffer_put(self, pid, slot, src, offset, nbytes);
}

/* What hpput does at the call: BSPK_PROFILE_MOVED where the data reached pid now (or is on
 * its way), BSPK_PROFILE_PACKED where it was only queued for the sync. */
static inline enum bspk_profile_time hpput_now(bspk_proc *self, int pid, int slot, const void *src,
                                               int offset, int nbytes) {
  if (self->ops->direct_access) {
    memcpy(bspk_remote_address(self, slot, pid, offset), src, (size_t)nbytes);
  } else if (self->ops->rma_put && nbytes >= self->rma_min_bytes) {
    self->ops->rma_put(self->engine, pid, slot, offset, src, nbytes);
    self->flags |= BSPK_HAS_PUT | BSPK_HAS_RMA_PUT; /* completed by the sync */
  } else if (wants_large_path(self, pid, nbytes)) {
    queue_large_put(self, pid, slot, src, offset, nbytes, 1, "bsp_hpput");
    return BSPK_PROFILE_PACKED;
  } else {
    queue_put(self, pid, slot, src, offset, nbytes, "bsp_hpput");
    return BSPK_PROFILE_PACKED;
  }
  return BSPK_PROFILE_MOVED;
}

BSPK_API void bsp_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
                        bsp_size_t nbytes) {
  bspk_proc *self;
  int slot = begin_access(&self, "bsp_hpput", pid, dst, offset, nbytes, src, "the source");
  if (slot < 0) return;
  if (BSPK_UNLIKELY(self->profile != NULL)) {
    double since = bspk_now();
    bspk_profile_count(self, BSPK_PROFILE_HPPUT, pid, nbytes);
    bspk_profile_timed(self, since, hpput_now(self, pid, slot, src, offset, nbytes));
    return;
  }
  hpput_now(self, pid, slot, src, offset, nbytes);
}

static void queue_get(bspk_proc *self, int pid, int slot, int offset, void *dst, int nbytes,
                      const char *call) {
  BSPK_GROW(self, self->gets, self->gets_cap, self->ngets + 1, 64, call, "the get requests");
  int one_sided = self->ops->rma_get && nbytes >= self->rma_min_bytes;
  /* Two-sided engines: a large get is answered by a message of its own, sent from the
   * owner's memory and received in place (bspk_fetch_gets), not copied into a reply. */
  int alone = wants_large_path(self, pid, nbytes);
  int into_registered = bspk_in_own_area(self, dst, nbytes);
  self->gets[self->ngets++] =
      (bspk_get_request){dst, pid, slot, offset, nbytes, one_sided, alone, into_registered, -1};
  self->flags |= into_registered ? BSPK_HAS_GET | BSPK_HAS_GET_INTO_REG : BSPK_HAS_GET;
  if (self->ops->direct_access || one_sided) return;
  /* The owner reads its memory at the sync and answers in request order. */
  self->flags |= BSPK_HAS_GET_RECORD;
  bspk_outbox *ob = bspk_current_outbox(self, pid);
  bspk_record *rec = (bspk_record *)bspk_outbox_reserve(self, ob, sizeof *rec, call);
  *rec = (bspk_record){alone ? BSPK_REC_GET_LARGE : BSPK_REC_GET, slot, offset, nbytes};
  ob->n_get++;
}

BSPK_API void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                      bsp_size_t nbytes) {
  bspk_proc *self;
  int slot = begin_access(&self, "bsp_get", pid, src, offset, nbytes, dst, "the destination");
  if (slot < 0) return;
  if (BSPK_UNLIKELY(self->profile != NULL)) {
    double since = bspk_now();
    bspk_profile_count(self, BSPK_PROFILE_GET, pid, nbytes);
    queue_get(self, pid, slot, offset, dst, nbytes, "bsp_get");
    bspk_profile_timed(self, since, BSPK_PROFILE_PACKED);
    return;
  }
  queue_get(self, pid, slot, offset, dst, nbytes, "bsp_get");
}

/* What hpget does at the call (as hpput_now). */
static inline enum bspk_profile_time hpget_now(bspk_proc *self, int pid, int slot, int offset,
                                               void *dst, int nbytes) {
  if (self->ops->direct_access) {
    memcpy(dst, bspk_remote_address(self, slot, pid, offset), (size_t)nbytes);
  } else if (self->ops->rma_get && nbytes >= self->rma_min_bytes) {
    self->ops->rma_get(self->engine, pid, slot, offset, dst, nbytes);
    self->flags |= BSPK_HAS_GET; /* completed by the sync */
  } else {
    queue_get(self, pid, slot, offset, dst, nbytes, "bsp_hpget");
    return BSPK_PROFILE_PACKED;
  }
  return BSPK_PROFILE_MOVED;
}

BSPK_API void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                        bsp_size_t nbytes) {
  bspk_proc *self;
  int slot = begin_access(&self, "bsp_hpget", pid, src, offset, nbytes, dst, "the destination");
  if (slot < 0) return;
  if (BSPK_UNLIKELY(self->profile != NULL)) {
    double since = bspk_now();
    bspk_profile_count(self, BSPK_PROFILE_HPGET, pid, nbytes);
    bspk_profile_timed(self, since, hpget_now(self, pid, slot, offset, dst, nbytes));
    return;
  }
  hpget_now(self, pid, slot, offset, dst, nbytes);
}

/* MulticoreBSP's bsp_direct_get: the read happens now. On shared memory it is a plain copy
 * from the owner's memory, ordered after the owner's earlier writes by the syncs between
 * them; a write by the owner in the same superstep is a data race of the program. */
BSPK_API void bsp_direct_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                             bsp_size_t nbytes) {
  static const char call[] = "bsp_direct_get";
  bspk_proc *self = bspk_enter(call);
  int slot = check_access(self, call, pid, src, offset, nbytes);
  bspk_check_buffer(call, dst, "the destination", nbytes);
  if (self->ops->direct_access) {
    if (nbytes) memcpy(dst, bspk_remote_address(self, slot, pid, offset), (size_t)nbytes);
    return;
  }
  const char *refused =
      self->ops->read_process
          ? self->ops->read_process(self->engine, pid, bspk_remote_address(self, slot, pid, offset),
                                    dst, (size_t)nbytes)
      : self->ops->direct_get ? self->ops->direct_get(self->engine, pid, slot, offset, dst, nbytes)
                              : "it reads another process' memory without a sync, which needs "
                                "shared memory or one-sided MPI";
  if (refused)
    bspk_fatal(call,
               "not available on the %s back end: %s; use bsp_get (the data arrives at the "
               "next bsp_sync), or run with bsprun -b threads, procs or mpi-rma",
               self->ops->name, refused);
}
