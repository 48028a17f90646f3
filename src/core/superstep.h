/*
 * superstep.h - the end of a superstep: agree, serve gets, deliver puts and messages, apply
 * registrations (bsp_sync, bsp_end, the collectives and checkpoints end theirs here).
 */
#ifndef BSPKIT_SUPERSTEP_H
#define BSPKIT_SUPERSTEP_H

#include "core/proc.h"

/* kind: enum bspk_arrival_kind. site: the return address of the program's call (bsp_sync,
 * bsp_end, a collective), for the profile. Returns the flags ORed over all processes at
 * the arrival (enum bspk_superstep_flags). */
unsigned bspk_end_superstep(bspk_proc *self, int kind, const char *call, const void *site);

#endif
