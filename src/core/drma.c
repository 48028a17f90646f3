/* drma.c - registrations and direct remote memory access (put, get, hpput, hpget). */
#include <stdio.h>

#include "core/internal.h"

/* ---- the registration index --------------------------------------------------------- */

static size_t hash_addr(const void *addr) {
  uint64_t x = (uint64_t)(uintptr_t)addr;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

int bspk_find_slot(const bspk_proc *self, const void *addr) {
  if (!self->index_slot) return -1;
  for (size_t h = hash_addr(addr) & self->index_mask;; h = (h + 1) & self->index_mask) {
    int s = self->index_slot[h];
    if (s == 0) return -1;
    if (self->index_key[h] == addr) return s - 1;
  }
}

static int compare_spans(const void *a, const void *b) {
  uintptr_t x = ((const bspk_span *)a)->lo, y = ((const bspk_span *)b)->lo;
  return (x > y) - (x < y);
}

/* The union of this process' active areas as sorted, disjoint spans. */
static void rebuild_own_spans(bspk_proc *self) {
  if (self->own_spans_cap < self->nslots) {
    self->own_spans_cap = self->nslots;
    self->own_spans = bspk_xrealloc(self, self->own_spans,
                                    (size_t)self->own_spans_cap * sizeof *self->own_spans,
                                    "bsp_sync", "the registration index");
  }
  int n = 0;
  for (int s = 0; s < self->nslots; s++) {
    const bspk_slot *slot = &self->slots[s];
    if (slot->active && slot->size > 0)
      self->own_spans[n++] = (bspk_span){(uintptr_t)slot->addr,
                                         (uintptr_t)slot->addr + (uintptr_t)slot->size};
  }
  if (n > 1) qsort(self->own_spans, (size_t)n, sizeof *self->own_spans, compare_spans);
  int merged = 0;
  for (int i = 0; i < n; i++) {
    if (merged > 0 && self->own_spans[i].lo <= self->own_spans[merged - 1].hi) {
      if (self->own_spans[i].hi > self->own_spans[merged - 1].hi)
        self->own_spans[merged - 1].hi = self->own_spans[i].hi;
    } else {
      self->own_spans[merged++] = self->own_spans[i];
    }
  }
  self->nown_spans = merged;
}

/* Whether [p, p + n) touches memory this process registered. */
static int in_own_area(const bspk_proc *self, const char *p, int n) {
  uintptr_t lo = (uintptr_t)p, hi = lo + (uintptr_t)n;
  int a = 0, b = self->nown_spans; /* the first span ending after lo */
  while (a < b) {
    int m = (a + b) / 2;
    if (self->own_spans[m].hi <= lo) a = m + 1; else b = m;
  }
  return a < self->nown_spans && self->own_spans[a].lo < hi;
}

/* Rebuilds the index after registrations changed (only at syncs): each address maps to
 * its newest active registration. */
static void rebuild_index(bspk_proc *self) {
  size_t want = 16;
  while (want < 2 * (size_t)self->nslots + 2) want *= 2;
  if (want - 1 != self->index_mask || !self->index_slot) {
    free(self->index_key);
    free(self->index_slot);
    self->index_key = bspk_xmalloc(self, want * sizeof *self->index_key, "bsp_sync",
                                   "the registration index");
    self->index_slot = bspk_xmalloc(self, want * sizeof *self->index_slot, "bsp_sync",
                                    "the registration index");
    self->index_mask = want - 1;
  }
  memset(self->index_slot, 0, want * sizeof *self->index_slot);
  for (int s = 0; s < self->nslots; s++) {
    const bspk_slot *slot = &self->slots[s];
    if (!slot->active) continue;
    size_t h = hash_addr(slot->addr) & self->index_mask;
    while (self->index_slot[h] != 0 && self->index_key[h] != slot->addr)
      h = (h + 1) & self->index_mask;
    int old = self->index_slot[h] - 1;
    if (old < 0 || self->slots[old].generation < slot->generation) {
      self->index_key[h] = slot->addr;
      self->index_slot[h] = s + 1;
    }
  }
  self->cached_addr = (const void *)UINTPTR_MAX; /* no valid area starts there */
  self->cached_slot = -1;
  rebuild_own_spans(self);
}

/* Appends one registration call to this superstep's log. */
static void log_regop(bspk_proc *self, bspk_regop op, const char *call) {
  if (self->nregops == self->regops_cap) {
    self->regops_cap = self->regops_cap ? 2 * self->regops_cap : 16;
    self->regops = bspk_xrealloc(self, self->regops, self->regops_cap * sizeof *self->regops,
                                 call, "the registration log");
  }
  self->regops[self->nregops++] = op;
  self->flags |= BSPK_HAS_REG;
}

BSPK_API void bsp_push_reg(const void *ident, bsp_size_t size) {
  bspk_proc *self = bspk_enter("bsp_push_reg");
  if (BSPK_CHECK(size < 0))
    bspk_fatal("bsp_push_reg", "negative size %d for the area at %p", size, ident);
  log_regop(self, (bspk_regop){1, -1, ident, size, 0}, "bsp_push_reg");
}

BSPK_API void bsp_pop_reg(const void *ident) {
  bspk_proc *self = bspk_enter("bsp_pop_reg");
  /* Registration calls take effect at the sync in the order made, so the registration a
   * pop removes is the newest one at that point: a push of ident earlier in this
   * superstep (then neither takes effect), else the newest active one not popped yet. */
  for (int i = self->nregops - 1; i >= 0; i--) {
    bspk_regop *op = &self->regops[i];
    if (op->is_push && !op->cancelled && op->addr == ident) {
      op->cancelled = 1;
      log_regop(self, (bspk_regop){0, BSPK_POP_PENDING(i), ident, 0, 0}, "bsp_pop_reg");
      return;
    }
  }
  int best = -1;
  for (int s = 0; s < self->nslots; s++) {
    const bspk_slot *slot = &self->slots[s];
    if (slot->active && !slot->popping && slot->addr == ident &&
        (best < 0 || slot->generation > self->slots[best].generation))
      best = s;
  }
  if (best < 0) bspk_fatal("bsp_pop_reg", "address %p is not registered", ident);
  self->slots[best].popping = 1;
  log_regop(self, (bspk_regop){0, best, ident, 0, 0}, "bsp_pop_reg");
}

static void describe_regops(const bspk_post *post, char *buf, size_t n) {
  size_t used = (size_t)snprintf(buf, n, "%d call(s): ", post->nregops);
  for (int i = 0; i < post->nregops && used < n; i++) {
    const bspk_regop *op = &post->regops[i];
    if (op->is_push)
      used += (size_t)snprintf(buf + used, n - used, "%spush_reg", i ? ", " : "");
    else if (op->slot < 0)
      used += (size_t)snprintf(buf + used, n - used, "%spop_reg(of call %d)", i ? ", " : "",
                               -2 - op->slot + 1);
    else
      used += (size_t)snprintf(buf + used, n - used, "%spop_reg(slot %d)", i ? ", " : "",
                               op->slot);
  }
}

/* Every process must have made the same push/pop calls in the same order (sizes may
 * differ). Every process checks, so each reaches the same verdict. */
static void registrations_differ(bspk_proc *self, const char *call, const bspk_post *first,
                                 const bspk_post *other, int q) {
  char a[256], b[256];
  describe_regops(first, a, sizeof a);
  describe_regops(other, b, sizeof b);
  bspk_fatal(call,
             "registrations differ between processes in superstep %ld: process 0 made %s; "
             "process %d made %s. bsp_push_reg and bsp_pop_reg are collective: every process "
             "makes the same calls in the same order",
             self->superstep, a, q, b);
}

/* A pop whose choice of registration differs between processes: an address registered
 * more than once on some of them (NULL for several empty arrays, say), so that "the newest
 * registration of ident" names different slots. The registration meant is then the newest
 * active one whose area on every process is the address that process popped, not popped
 * by an earlier call of this superstep. Every process computes the same answer from the
 * same posts; -1 if there is none. */
static const bspk_post *post_of(const bspk_proc *self, int q) {
  return self->ops->peer_post(self->engine, q);
}

static int resolve_pop(const bspk_proc *self, int i, const int *targets) {
  int best = -1;
  for (int s = 0; s < self->nslots; s++) {
    const bspk_slot *slot = &self->slots[s];
    if (!slot->active || (best >= 0 && slot->generation < self->slots[best].generation))
      continue;
    int fits = 1;
    for (int q = 0; fits && q < self->nprocs; q++)
      fits = slot->peer[q].addr == (const char *)post_of(self, q)->regops[i].addr;
    for (int j = 0; fits && j < i; j++) fits = targets[j] != s;
    if (fits) best = s;
  }
  return best;
}

/* Every process must have made the same push/pop calls in the same order (sizes may
 * differ). Every process checks, so each reaches the same verdict; pops are resolved into
 * pop_targets, the slot each pop removes. */
void bspk_registrations_check(bspk_proc *self, const char *call) {
  const bspk_post *first = post_of(self, 0);
  if (self->pop_targets_cap < self->nregops) {
    self->pop_targets_cap = self->nregops;
    self->pop_targets = bspk_xrealloc(self, self->pop_targets,
                                      (size_t)self->nregops * sizeof *self->pop_targets, call,
                                      "the registration log");
  }
  for (int q = 1; q < self->nprocs; q++) {
    const bspk_post *other = post_of(self, q);
    int same = other->nregops == first->nregops;
    for (int i = 0; same && i < first->nregops; i++)
      same = other->regops[i].is_push == first->regops[i].is_push;
    if (!same) registrations_differ(self, call, first, other, q);
  }
  for (int i = 0; i < first->nregops; i++) {
    if (first->regops[i].is_push) continue;
    int target = first->regops[i].slot, differs = -1, pending = 0;
    for (int q = 0; q < self->nprocs; q++) {
      int slot = post_of(self, q)->regops[i].slot;
      if (slot != target) differs = q;
      if (slot < 0) pending = 1; /* cancels a push of this superstep */
    }
    if (differs >= 0) {
      target = pending ? -1 : resolve_pop(self, i, self->pop_targets);
      if (target < 0) registrations_differ(self, call, first, post_of(self, differs), differs);
    }
    self->pop_targets[i] = target;
  }
}

static int free_slot(bspk_proc *self) {
  for (int s = 0; s < self->nslots; s++)
    if (!self->slots[s].active) return s;
  if (self->nslots == self->slots_cap) {
    int cap = self->slots_cap ? 2 * self->slots_cap : 16;
    self->slots = bspk_xrealloc(self, self->slots, cap * sizeof *self->slots, "bsp_sync",
                                "the registration table");
    memset(self->slots + self->slots_cap, 0, (cap - self->slots_cap) * sizeof *self->slots);
    self->slots_cap = cap;
  }
  return self->nslots++;
}

/* Applies this superstep's push/pop calls (after its puts landed: they used the old table). */
void bspk_registrations_apply(bspk_proc *self) {
  for (int i = 0; i < self->nregops; i++) {
    const bspk_regop *op = &self->regops[i];
    if (op->cancelled) continue; /* pushed, then popped in this superstep */
    if (!op->is_push) {
      int popped = self->pop_targets[i]; /* as agreed by all processes */
      if (op->slot >= 0) self->slots[op->slot].popping = 0;
      if (popped < 0) continue; /* the push it cancels never took effect */
      self->slots[popped].active = 0;
      self->slots[popped].popping = 0;
      if (self->ops->rma_deregister) self->ops->rma_deregister(self->engine, popped);
      continue;
    }
    int s = free_slot(self);
    bspk_slot *slot = &self->slots[s];
    if (!slot->peer)
      slot->peer = bspk_xmalloc(self, self->nprocs * sizeof *slot->peer, "bsp_sync",
                                "the registration table");
    for (int q = 0; q < self->nprocs; q++) {
      const bspk_regop *theirs = &post_of(self, q)->regops[i];
      slot->peer[q].addr = (char *)theirs->addr;
      slot->peer[q].size = theirs->size;
    }
    slot->addr = (char *)op->addr;
    slot->size = op->size;
    slot->active = 1;
    slot->popping = 0;
    slot->generation = self->next_generation++;
    if (self->ops->rma_register) self->ops->rma_register(self->engine, s, slot->addr, slot->size);
  }
  rebuild_index(self);
}

void bspk_registrations_free(bspk_proc *self) {
  for (int s = 0; s < self->slots_cap; s++) free(self->slots[s].peer);
  free(self->slots);
  free(self->index_key);
  free(self->index_slot);
  free(self->regops);
  free(self->pop_targets);
}

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

static inline char *remote_address(const bspk_proc *self, int slot, int pid, int offset) {
  return self->slots[slot].peer[pid].addr + offset;
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

/* Large puts on two-sided engines: a record without data in the block, the data as its own
 * message at the sync. Once one put to pid went this way in a superstep, the later ones
 * follow, so that the puts to pid still land in issue order. by_reference: hpput (the
 * caller keeps the buffer unchanged until the sync); otherwise the data is copied now. */
static inline int wants_large_path(const bspk_proc *self, int pid, int nbytes) {
  return self->large_started && pid != self->pid &&
         (nbytes >= self->large_put_bytes || self->large_started[pid]);
}

static void queue_large_put(bspk_proc *self, int pid, int slot, const void *src, int offset,
                            int nbytes, int by_reference, const char *call) {
  if (self->nlarge_sends == self->large_sends_cap) {
    self->large_sends_cap = self->large_sends_cap ? 2 * self->large_sends_cap : 16;
    self->large_sends = bspk_xrealloc(self, self->large_sends,
                                      self->large_sends_cap * sizeof *self->large_sends, call,
                                      "the list of large puts");
  }
  struct bspk_large_send *ls = &self->large_sends[self->nlarge_sends++];
  *ls = (struct bspk_large_send){pid, nbytes, by_reference ? src : NULL, 0};
  if (!by_reference) {
    size_t need = self->large_copies_len + (size_t)nbytes;
    if (need > self->large_copies_cap) {
      size_t cap = self->large_copies_cap ? 2 * self->large_copies_cap : (size_t)1 << 20;
      while (cap < need) cap *= 2;
      self->large_copies = bspk_xrealloc(self, self->large_copies, cap, call,
                                         "the buffer for large puts");
      self->large_copies_cap = cap;
    }
    ls->copy_at = self->large_copies_len;
    memcpy(self->large_copies + self->large_copies_len, src, (size_t)nbytes);
    self->large_copies_len = need;
  }
  bspk_outbox *ob = bspk_current_outbox(self, pid);
  bspk_record *rec = (bspk_record *)bspk_outbox_reserve(self, ob, sizeof *rec, call);
  *rec = (bspk_record){BSPK_REC_PUT_LARGE, slot, offset, nbytes};
  ob->n_put++;
  self->large_started[pid] = 1;
  self->flags |= BSPK_HAS_PUT | BSPK_HAS_LARGE_PUT;
}

/* Receiver: the data of a large put from src lands straight in the area. */
void bspk_expect_large_put(bspk_proc *self, int src, const bspk_record *rec) {
  if (self->nlarge_recvs == self->large_recvs_cap) {
    self->large_recvs_cap = self->large_recvs_cap ? 2 * self->large_recvs_cap : 16;
    self->large_recvs = bspk_xrealloc(self, self->large_recvs,
                                      self->large_recvs_cap * sizeof *self->large_recvs,
                                      "bsp_sync", "the list of large puts");
  }
  self->large_recvs[self->nlarge_recvs++] =
      (bspk_transfer){src, self->slots[rec->slot].addr + rec->offset, (size_t)rec->nbytes};
}

static int overlaps(const bspk_transfer *a, const bspk_transfer *b) {
  return a->data < b->data + b->nbytes && b->data < a->data + a->nbytes;
}

/* Moves this superstep's large puts. MPI forbids pending receives into overlapping memory,
 * so receives that overlap another go through a scratch buffer and are copied afterwards,
 * in issue order. */
void bspk_transfer_large_puts(bspk_proc *self) {
  int ns = self->nlarge_sends, nr = self->nlarge_recvs;
  bspk_transfer *sends = bspk_xmalloc(self, (size_t)(ns + 1) * sizeof *sends, "bsp_sync",
                                      "the list of large puts");
  for (int i = 0; i < ns; i++) {
    const struct bspk_large_send *ls = &self->large_sends[i];
    sends[i] = (bspk_transfer){ls->pid,
                               ls->ref ? (char *)ls->ref : self->large_copies + ls->copy_at,
                               (size_t)ls->nbytes};
  }
  bspk_transfer *recvs = self->large_recvs;
  char **final = NULL;
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < nr; j++)
      if (i != j && overlaps(&recvs[i], &recvs[j])) {
        if (!final) {
          final = bspk_xmalloc(self, (size_t)nr * sizeof *final, "bsp_sync", "large puts");
          memset(final, 0, (size_t)nr * sizeof *final);
        }
        final[i] = recvs[i].data; /* decided on the areas before any is redirected */
        break;
      }
  if (final)
    for (int i = 0; i < nr; i++)
      if (final[i]) recvs[i].data = bspk_xmalloc(self, recvs[i].nbytes, "bsp_sync", "a large put");
  self->ops->transfer(self->engine, sends, ns, recvs, nr);
  if (final)
    for (int i = 0; i < nr; i++)
      if (final[i]) {
        memcpy(final[i], recvs[i].data, recvs[i].nbytes);
        free(recvs[i].data);
      }
  free(final);
  free(sends);
  self->nlarge_sends = self->nlarge_recvs = 0;
  self->large_copies_len = 0;
  memset(self->large_started, 0, (size_t)self->nprocs);
}

BSPK_API void bsp_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
                      bsp_size_t nbytes) {
  bspk_proc *self = bspk_enter("bsp_put");
  int slot = check_access(self, "bsp_put", pid, dst, offset, nbytes);
  bspk_check_buffer("bsp_put", src, "the source", nbytes);
  if (nbytes == 0) return;
  if (BSPK_UNLIKELY(wants_large_path(self, pid, nbytes)))
    queue_large_put(self, pid, slot, src, offset, nbytes, 0, "bsp_put");
  else
    queue_put(self, pid, slot, src, offset, nbytes, "bsp_put");
}

BSPK_API void bsp_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
                        bsp_size_t nbytes) {
  bspk_proc *self = bspk_enter("bsp_hpput");
  int slot = check_access(self, "bsp_hpput", pid, dst, offset, nbytes);
  bspk_check_buffer("bsp_hpput", src, "the source", nbytes);
  if (nbytes == 0) return;
  if (self->ops->direct_access) {
    memcpy(remote_address(self, slot, pid, offset), src, (size_t)nbytes);
  } else if (self->ops->rma_put && nbytes >= self->rma_min_bytes) {
    self->ops->rma_put(self->engine, pid, slot, offset, src, nbytes);
    self->flags |= BSPK_HAS_PUT | BSPK_HAS_RMA_PUT; /* completed by the sync */
  } else if (wants_large_path(self, pid, nbytes)) {
    queue_large_put(self, pid, slot, src, offset, nbytes, 1, "bsp_hpput");
  } else {
    queue_put(self, pid, slot, src, offset, nbytes, "bsp_hpput");
  }
}

static void queue_get(bspk_proc *self, int pid, int slot, int offset, void *dst, int nbytes,
                      const char *call) {
  if (self->ngets == self->gets_cap) {
    self->gets_cap = self->gets_cap ? 2 * self->gets_cap : 64;
    self->gets = bspk_xrealloc(self, self->gets, self->gets_cap * sizeof *self->gets, call,
                               "the get requests");
  }
  int one_sided = self->ops->rma_get && nbytes >= self->rma_min_bytes;
  int into_registered = in_own_area(self, dst, nbytes);
  self->gets[self->ngets++] =
      (bspk_get_request){dst, pid, slot, offset, nbytes, one_sided, into_registered, -1};
  self->flags |= into_registered ? BSPK_HAS_GET | BSPK_HAS_GET_INTO_REG : BSPK_HAS_GET;
  if (self->ops->direct_access || one_sided) return;
  /* The owner reads its memory at the sync and answers in request order. */
  self->flags |= BSPK_HAS_GET_RECORD;
  bspk_outbox *ob = bspk_current_outbox(self, pid);
  bspk_record *rec = (bspk_record *)bspk_outbox_reserve(self, ob, sizeof *rec, call);
  *rec = (bspk_record){BSPK_REC_GET, slot, offset, nbytes};
  ob->n_get++;
}

BSPK_API void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                      bsp_size_t nbytes) {
  bspk_proc *self = bspk_enter("bsp_get");
  int slot = check_access(self, "bsp_get", pid, src, offset, nbytes);
  bspk_check_buffer("bsp_get", dst, "the destination", nbytes);
  if (nbytes == 0) return;
  queue_get(self, pid, slot, offset, dst, nbytes, "bsp_get");
}

BSPK_API void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                        bsp_size_t nbytes) {
  bspk_proc *self = bspk_enter("bsp_hpget");
  int slot = check_access(self, "bsp_hpget", pid, src, offset, nbytes);
  bspk_check_buffer("bsp_hpget", dst, "the destination", nbytes);
  if (nbytes == 0) return;
  if (self->ops->direct_access) {
    memcpy(dst, remote_address(self, slot, pid, offset), (size_t)nbytes);
  } else if (self->ops->rma_get && nbytes >= self->rma_min_bytes) {
    self->ops->rma_get(self->engine, pid, slot, offset, dst, nbytes);
    self->flags |= BSPK_HAS_GET; /* completed by the sync */
  } else {
    queue_get(self, pid, slot, offset, dst, nbytes, "bsp_hpget");
  }
}

/* One-sided engines: start every buffered put, in issue order per destination. */
void bspk_start_rma_puts(bspk_proc *self) {
  for (int q = 0; q < self->nprocs; q++) {
    bspk_outbox *ob = &self->rma_puts[q];
    for (const char *p = ob->data, *end = ob->data + ob->len; p < end;) {
      const bspk_record *rec = (const bspk_record *)p;
      self->ops->rma_put(self->engine, q, rec->slot, rec->offset, p + sizeof *rec, rec->nbytes);
      p += bspk_record_size(rec);
    }
  }
}

/* After rma_complete: the buffers may be reused. */
void bspk_reset_rma_puts(bspk_proc *self) {
  for (int q = 0; q < self->nprocs; q++) {
    self->rma_puts[q].len = 0;
    self->rma_puts[q].n_put = 0;
  }
}

/* ---- gets at the sync -------------------------------------------------------------------
 * Every get of a superstep reads before any get writes (two processes may swap values with
 * gets, or one get's source may be another's destination), and all before any put lands.
 * A get whose destination lies outside this process' registered areas cannot be another
 * get's source (nor a put's or the next superstep's hpput/hpget's target), so it is read
 * straight into place; the others (BSPK_HAS_GET_INTO_REG) wait in get_stage until every
 * process has read. */

/* Decides where each get (only the one-sided ones, if asked) lands first. */
static void plan_get_stage(bspk_proc *self, int only_one_sided) {
  size_t need = 0;
  for (int i = 0; i < self->ngets; i++) {
    bspk_get_request *g = &self->gets[i];
    g->stage_at = -1;
    if ((only_one_sided && !g->one_sided) || !g->into_registered) continue;
    g->stage_at = (ptrdiff_t)need;
    need += (size_t)g->nbytes;
  }
  if (need > self->get_stage_cap) {
    free(self->get_stage);
    self->get_stage = bspk_xmalloc(self, need, "bsp_sync", "the data of gets");
    self->get_stage_cap = need;
  }
}

static inline char *get_landing(const bspk_proc *self, const bspk_get_request *g) {
  return g->stage_at < 0 ? g->dst : self->get_stage + g->stage_at;
}

/* After every process has read: staged data to its destinations, in request order. */
static void unstage_gets(const bspk_proc *self) {
  for (int i = 0; i < self->ngets; i++) {
    const bspk_get_request *g = &self->gets[i];
    if (g->stage_at >= 0) memcpy(g->dst, self->get_stage + g->stage_at, (size_t)g->nbytes);
  }
}

/* Without direct access: answer the get requests in src's block from this process' memory
 * (before any put of the superstep lands here), in request order. */
static void answer_gets(bspk_proc *self, int src, const bspk_outbox *block) {
  bspk_outbox *reply = &self->replies[src];
  const char *p = block->data, *end = block->data + block->len;
  while (p < end) {
    const bspk_record *rec = (const bspk_record *)p;
    if (rec->kind == BSPK_REC_GET) {
      char *q = bspk_outbox_reserve(self, reply, sizeof *rec + bspk_pad8((size_t)rec->nbytes),
                                    "bsp_sync");
      *(bspk_record *)q = (bspk_record){BSPK_REC_REPLY, rec->slot, rec->offset, rec->nbytes};
      memcpy(q + sizeof *rec, self->slots[rec->slot].addr + rec->offset, (size_t)rec->nbytes);
    }
    p += bspk_record_size(rec);
  }
}

/* Copies the answers to this process' get requests, which come back in request order. */
static void take_replies(bspk_proc *self, const bspk_outbox *replies) {
  const char *cursor[self->nprocs];
  for (int q = 0; q < self->nprocs; q++) cursor[q] = replies[q].len ? replies[q].data : NULL;
  for (int i = 0; i < self->ngets; i++) {
    const bspk_get_request *g = &self->gets[i];
    if (g->one_sided) continue;
    const bspk_record *rec = (const bspk_record *)cursor[g->pid];
    if (!rec || rec->kind != BSPK_REC_REPLY || rec->nbytes != g->nbytes)
      bspk_fatal("bsp_sync", "internal error: get reply from process %d does not match", g->pid);
    memcpy(g->dst, (const char *)rec + sizeof *rec, (size_t)g->nbytes);
    cursor[g->pid] += sizeof *rec + bspk_pad8((size_t)g->nbytes);
  }
  for (int q = 0; q < self->nprocs; q++) self->replies[q].len = 0;
}

/* The get phase of a sync (flags: ORed over all processes; every process takes part in
 * the same collective steps). */
void bspk_fetch_gets(bspk_proc *self, unsigned flags) {
  const bspk_engine_ops *ops = self->ops;
  if (ops->direct_access) {
    plan_get_stage(self, 0);
    for (int i = 0; i < self->ngets; i++) {
      const bspk_get_request *g = &self->gets[i];
      memcpy(get_landing(self, g), remote_address(self, g->slot, g->pid, g->offset),
             (size_t)g->nbytes);
    }
    ops->barrier(self->engine); /* every process has read */
    unstage_gets(self);
  } else {
    /* Owners answer requests from their memory into reply blocks (a copy, so the
     * requester may write at once when they arrive). */
    if (flags & BSPK_HAS_GET_RECORD)
      for (int q = 0; q < self->nprocs; q++) {
        const bspk_outbox *block = ops->incoming(self->engine, q);
        if (block->n_get) answer_gets(self, q, block);
      }
    if (ops->rma_get) {
      plan_get_stage(self, 1);
      for (int i = 0; i < self->ngets; i++) {
        const bspk_get_request *g = &self->gets[i];
        if (g->one_sided)
          ops->rma_get(self->engine, g->pid, g->slot, g->offset, get_landing(self, g), g->nbytes);
      }
      ops->rma_complete(self->engine); /* ends with a barrier: every process has read */
      unstage_gets(self);
    }
    if (flags & BSPK_HAS_GET_RECORD) take_replies(self, ops->exchange(self->engine, self->replies));
  }
  self->ngets = 0;
}

void bspk_outbox_grow(bspk_proc *self, bspk_outbox *ob, size_t need, const char *call) {
  size_t cap = ob->cap ? 2 * ob->cap : 4096;
  while (cap < ob->len + need) cap *= 2;
  ob->data = bspk_xrealloc(self, ob->data, cap, call, "the communication buffer");
  ob->cap = cap;
}
