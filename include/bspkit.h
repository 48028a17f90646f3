/*
 * bspkit.h - bspkit's extensions to BSPlib: collectives, back-end queries.
 * Programs that use them stay BSPlib programs; guard their use with
 * `#ifdef BSPKIT_EXTENSIONS` to keep them buildable against other libraries.
 */
#ifndef BSPKIT_BSPKIT_H
#define BSPKIT_BSPKIT_H

#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BSPKIT_EXTENSIONS 1

/* ---- Run-time queries ----------------------------------------------------------------- */

/* The name of the back end this program runs on (as given to bsprun -b, e.g. "threads").
 * Valid at any time. */
const char *bspk_backend(void);
/* Number of cores this program may use (the affinity mask), independent of bsprun -n. */
int bspk_cores(void);
/* Number of supersteps (bsp_sync calls) this process has completed in this SPMD section. */
long bspk_superstep(void);

/* ---- The superstep profile (BSPKIT_PROFILE=FILE; docs/profile-format.md) ---------------
 * Names the phase of the program that this superstep belongs to: every superstep that ends
 * from now on (until the next call) is marked with name in the profile, so that
 * `bspkit profile --phase name` can take that part alone. Does nothing when no profile is
 * being written. The name is copied; call it on every process. */
void bspk_profile_phase(const char *name);

/* ---- Collectives (call on every process in the same superstep; each ends with a sync) --
 * For everything else a collective acts as one bsp_sync: puts, gets and messages issued
 * before the call are delivered by it, and those messages are in the queue after it.
 * Small data: one superstep (cost about p*n*g + l). Large data: two-phase, as in
 * Horvitz & Bisseling sec. 2.2 (scatter, then all-gather: about 2*n*g + 2*l). */

/* Copies nbytes from src on process root to dst on every process (dst may equal src on root). */
void bspk_broadcast(bsp_pid_t root, const void *src, void *dst, bsp_size_t nbytes);

/* An associative and commutative element-wise operation: result[i] = left[i] op right[i]
 * for the *nbytes bytes (a whole number of elements) given. result may alias left. */
typedef void (*bspk_op)(void *result, const void *left, const void *right, bsp_size_t *nbytes);

/* Reduces count elements of elem_size bytes from src over all processes into dst on every
 * process. Blocks are combined in process-id order, so every process gets identical bits. */
void bspk_reduce(bspk_op op, const void *src, void *dst, bsp_size_t count, bsp_size_t elem_size);

/* Ready-made operations for bspk_reduce. */
void bspk_op_sum_double(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_op_max_double(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_op_min_double(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_op_sum_long(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_op_max_long(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_op_sum_int(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_op_max_int(void *result, const void *left, const void *right, bsp_size_t *nbytes);

#ifdef __cplusplus
}
#endif
#endif /* BSPKIT_BSPKIT_H */
