/*
 * checkpoint.h - checkpoints at superstep boundaries and the restart from them
 * (docs/checkpoint.md): what the rest of the core needs of them.
 */
#ifndef BSPKIT_CHECKPOINT_H
#define BSPKIT_CHECKPOINT_H

#include "core/proc.h"

/* From bsp_end: the protected areas and the restart's state (nothing when never used). */
void bspk_checkpoint_free(bspk_proc *self);

/* sqrt(2 cost mtbf): Young's first-order optimum interval between checkpoints (seconds). */
double bspk_checkpoint_young_interval(double cost, double mtbf);

#endif
