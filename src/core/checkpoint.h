/*
 * checkpoint.h - checkpoints at superstep boundaries and the restart from them
 * (docs/checkpoint.md): what the rest of the core needs of them.
 */
#ifndef BSPKIT_CHECKPOINT_H
#define BSPKIT_CHECKPOINT_H

#include "core/proc.h"

/* From bsp_end, before the processes arrive at its end: waits for this process' writer. */
void bspk_checkpoint_before_end(bspk_proc *self);

/* From bsp_end, after every process arrived: process 0 completes the generation in flight;
 * the writer, the protected areas and the restart's state are freed (nothing when never
 * used). */
void bspk_checkpoint_free(bspk_proc *self);

/* sqrt(2 cost mtbf): Young's first-order optimum interval between checkpoints (seconds). */
double bspk_checkpoint_young_interval(double cost, double mtbf);

#endif
