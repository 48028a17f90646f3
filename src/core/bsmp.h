/*
 * bsmp.h - bulk synchronous message passing: the message queue and the tag size.
 */
#ifndef BSPKIT_BSMP_H
#define BSPKIT_BSMP_H

#include <stddef.h>

#include "bsp.h"
#include "core/proc.h"

/* An empty queue with room for nmessages (at the sync, and the restart's restored queue). */
void bspk_queue_reset(bspk_proc *self, size_t nmessages);
/* At the sync: every process asked for the same tag size (else a clear error). */
void bspk_tagsize_check(bspk_proc *self, const char *call);
/* bsp_set_tagsize and bsp_qsize, under the name the program called them by (oxford.c). */
void bspk_set_tagsize(bsp_size_t *tag_nbytes, const char *call);
void bspk_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes, const char *call);

#endif
