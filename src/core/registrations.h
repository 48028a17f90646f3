/*
 * registrations.h - bsp_push_reg and bsp_pop_reg: the registration table, the index from
 * address to slot, and the agreement of all processes at the sync.
 */
#ifndef BSPKIT_REGISTRATIONS_H
#define BSPKIT_REGISTRATIONS_H

#include "core/compiler.h"
#include "core/proc.h"

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
/* At the sync: every process made the same calls (else a clear error); then they take
 * effect, after the superstep's puts landed. */
void bspk_registrations_check(bspk_proc *self, const char *call);
void bspk_registrations_apply(bspk_proc *self);
void bspk_registrations_free(bspk_proc *self);

#endif
