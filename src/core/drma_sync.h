/*
 * drma_sync.h - direct remote memory access at the sync: gets (all read, then all write),
 * large puts as their own messages, one-sided puts.
 */
#ifndef BSPKIT_DRMA_SYNC_H
#define BSPKIT_DRMA_SYNC_H

#include "core/proc.h"
#include "core/records.h"

/* The get phase of a sync (flags: ORed over all processes). */
void bspk_fetch_gets(bspk_proc *self, unsigned flags);
/* One-sided engines: start every buffered put; after rma_complete, reuse their buffers. */
void bspk_start_rma_puts(bspk_proc *self);
void bspk_reset_rma_puts(bspk_proc *self);
/* A superstep with large puts: every put is listed as its block is read, then all land in
 * order (bspk_land_puts_with_large). */
void bspk_expect_put(bspk_proc *self, const bspk_record *rec, const char *payload);
void bspk_expect_large_put(bspk_proc *self, int src, const bspk_record *rec);
void bspk_land_puts_with_large(bspk_proc *self);

#endif
