/*
 * profile.h - the superstep profile (BSPKIT_PROFILE=FILE; docs/profile-format.md).
 */
#ifndef BSPKIT_PROFILE_H
#define BSPKIT_PROFILE_H

#include "core/compiler.h"
#include "core/proc.h"

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
/* What a primitive's time at the call was (Horvitz & Bisseling's packing; docs/profile-format.md):
 * copying into or out of the library's buffers, or recording a request (pack_s); or moving
 * the data to or from another process there and then (direct_s: hpput, hpget). */
enum bspk_profile_time { BSPK_PROFILE_PACKED, BSPK_PROFILE_MOVED };
/* The primitive's profiled path (one branch on self->profile chooses it) reads the clock
 * before its work and hands the reading here after it. */
void bspk_profile_timed(bspk_proc *self, double since, enum bspk_profile_time kind);
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

#endif
