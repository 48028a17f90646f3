/* registrations.c - bsp_push_reg and bsp_pop_reg: the registration table, the index from
 * address to slot, and the agreement of all processes at the sync. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "core/buffers.h"
#include "core/checks.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/registrations.h"

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
  BSPK_GROW(self, self->own_spans, self->own_spans_cap, self->nslots, 16, "bsp_sync",
            "the registration index");
  int n = 0;
  for (int s = 0; s < self->nslots; s++) {
    const bspk_slot *slot = &self->slots[s];
    if (slot->active && slot->size > 0)
      self->own_spans[n++] =
          (bspk_span){(uintptr_t)slot->addr, (uintptr_t)slot->addr + (uintptr_t)slot->size};
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
int bspk_in_own_area(const bspk_proc *self, const char *p, int n) {
  uintptr_t lo = (uintptr_t)p, hi = lo + (uintptr_t)n;
  int a = 0, b = self->nown_spans; /* the first span ending after lo */
  while (a < b) {
    int m = (a + b) / 2;
    if (self->own_spans[m].hi <= lo) a = m + 1;
    else b = m;
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
    self->index_key =
        bspk_xmalloc(self, want * sizeof *self->index_key, "bsp_sync", "the registration index");
    self->index_slot =
        bspk_xmalloc(self, want * sizeof *self->index_slot, "bsp_sync", "the registration index");
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
  BSPK_GROW(self, self->regops, self->regops_cap, self->nregops + 1, 16, call,
            "the registration log");
  self->regops[self->nregops++] = op;
  self->flags |= BSPK_HAS_REG;
}

void bspk_push_reg(const void *ident, int size, const char *call) {
  bspk_proc *self = bspk_enter(call);
  if (BSPK_CHECK(size < 0)) bspk_fatal(call, "negative size %d for the area at %p", size, ident);
  log_regop(self, (bspk_regop){1, -1, ident, size, 0}, call);
}

void bspk_pop_reg(const void *ident, const char *call) {
  bspk_proc *self = bspk_enter(call);
  /* Registration calls take effect at the sync in the order made, so the registration a
   * pop removes is the newest one at that point: a push of ident earlier in this
   * superstep (then neither takes effect), else the newest active one not popped yet. */
  for (int i = self->nregops - 1; i >= 0; i--) {
    bspk_regop *op = &self->regops[i];
    if (op->is_push && !op->cancelled && op->addr == ident) {
      op->cancelled = 1;
      log_regop(self, (bspk_regop){0, BSPK_POP_PENDING(i), ident, 0, 0}, call);
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
  if (best < 0) bspk_fatal(call, "address %p is not registered", ident);
  self->slots[best].popping = 1;
  log_regop(self, (bspk_regop){0, best, ident, 0, 0}, call);
}

BSPK_API void bsp_push_reg(const void *ident, bsp_size_t size) {
  bspk_push_reg(ident, size, "bsp_push_reg");
}

BSPK_API void bsp_pop_reg(const void *ident) { bspk_pop_reg(ident, "bsp_pop_reg"); }

static void describe_regops(const bspk_post *post, char *buf, size_t n) {
  size_t used = (size_t)snprintf(buf, n, "%d call(s): ", post->nregops);
  for (int i = 0; i < post->nregops && used < n; i++) {
    const bspk_regop *op = &post->regops[i];
    if (op->is_push) used += (size_t)snprintf(buf + used, n - used, "%spush_reg", i ? ", " : "");
    else if (op->slot < 0)
      used += (size_t)snprintf(buf + used, n - used, "%spop_reg(of call %d)", i ? ", " : "",
                               -2 - op->slot + 1);
    else
      used += (size_t)snprintf(buf + used, n - used, "%spop_reg(slot %d)", i ? ", " : "", op->slot);
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
    if (!slot->active || (best >= 0 && slot->generation < self->slots[best].generation)) continue;
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
  BSPK_GROW(self, self->pop_targets, self->pop_targets_cap, self->nregops, 16, call,
            "the registration log");
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
  size_t old_cap = self->slots_cap;
  BSPK_GROW(self, self->slots, self->slots_cap, (size_t)self->nslots + 1, 16, "bsp_sync",
            "the registration table");
  memset(self->slots + old_cap, 0, (self->slots_cap - old_cap) * sizeof *self->slots);
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
  for (size_t s = 0; s < self->slots_cap; s++) free(self->slots[s].peer);
  BSPK_FREE_ALL(self->slots, self->index_key, self->index_slot, self->regops, self->pop_targets,
                self->own_spans);
}
