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

/* Documented as in bsp.h (each function where it is declared; scripts/man3.py makes the man
 * pages bspk_broadcast(3) etc.); errors end the run the same way. */

/* ---- Run-time queries ----------------------------------------------------------------- */

/**
 * bspk_backend - the name of the back end this program runs on
 *
 * Valid at any time, also outside the SPMD section.
 *
 * \return "threads", "mpi" or "mpi-rma" (as given to bsprun -b, or BSPKIT_BACKEND)
 * \error unknown back end in BSPKIT_BACKEND, or the MPI plugin cannot be loaded
 * \see bsprun(1)
 */
const char *bspk_backend(void);

/**
 * bspk_cores - the number of cores this program may use
 *
 * The cores of the program's affinity mask (sched_getaffinity), whatever bsprun -n says.
 * Valid at any time.
 *
 * \return the number of cores, at least 1
 * \see bsp_nprocs(3)
 */
int bspk_cores(void);

/**
 * bspk_superstep - the number of supersteps this process has completed
 *
 * Counts the bsp_sync calls (a collective counts as the syncs it makes) of this process in
 * the current SPMD section.
 *
 * \return the number of completed supersteps, 0 in the first superstep
 * \error called outside the SPMD section
 * \see bsp_sync(3)
 */
long bspk_superstep(void);

/* ---- The superstep profile (BSPKIT_PROFILE=FILE; docs/profile-format.md) --------------- */

/**
 * bspk_profile_phase - name the phase of the program in the superstep profile
 *
 * Every superstep that ends from now on (until the next call) is marked with name in the
 * profile that BSPKIT_PROFILE asks for (docs/profile-format.md), so that
 * `bspkit profile --phase name` can take that part alone. Does nothing when no profile is
 * being written. The name is copied; call it on every process.
 *
 * \param name  the phase's name, a string
 * \error name is NULL (while a profile is being written)
 * \error out of memory for the profile
 * \error called outside the SPMD section
 * \see bspkit-profile(1)
 */
void bspk_profile_phase(const char *name);

/* ---- Collectives (call on every process in the same superstep; each ends with a sync) --
 * For everything else a collective acts as one bsp_sync: puts, gets and messages issued
 * before the call are delivered by it, and those messages are in the queue after it.
 * Small data: one superstep (cost about p*n*g + l). Large data: two-phase, as in
 * Horvitz & Bisseling sec. 2.2 (scatter, then all-gather: about 2*n*g + 2*l). */

/**
 * bspk_broadcast - copy data from one process to every process
 *
 * Collective: every process calls it in the same superstep, with the same root and nbytes.
 * Copies nbytes from src on process root to dst on every process. It ends with a sync and
 * acts as one bsp_sync for everything else: puts, gets and messages issued before it are
 * delivered by it, and those messages are in the queue after it. Small data takes one
 * superstep (h = (p-1) n on the root); 16 KiB and more with 4 or more processes take two,
 * as in Horvitz & Bisseling sec. 2.2 (scatter, then all-gather: h about 2n).
 *
 * \param root    the process that has the data, 0 <= root < bsp_nprocs()
 * \param src     the data on root (not read on the other processes)
 * \param dst     where the data goes on every process; may equal src on root
 * \param nbytes  how many bytes, at least 0
 * \error root is out of range
 * \error nbytes is negative
 * \error as bsp_sync: registrations or tag sizes of the superstep differ between processes,
 *        or processes call bsp_end while others are in the collective
 * \error called outside the SPMD section
 * \see bspk_reduce(3), bsp_sync(3)
 */
void bspk_broadcast(bsp_pid_t root, const void *src, void *dst, bsp_size_t nbytes);

/**
 * bspk_reduce - combine every process' elements into a result on every process
 *
 * Collective: every process calls it in the same superstep, with the same op, count and
 * elem_size. Reduces count elements of elem_size bytes from src over all processes into dst
 * on every process, combining the blocks in process-id order, so every process gets the same
 * bits. op is an associative and commutative element-wise operation: result[i] = left[i]
 * op right[i] for the *nbytes bytes (a whole number of elements) given; result may alias
 * left. Ready-made ones: bspk_op_sum_double(3) and the others of its page. It ends with a
 * sync and acts as one bsp_sync for everything else, as bspk_broadcast does; large data
 * takes two supersteps in the same way.
 *
 * \param op         the operation
 * \param src        this process' count elements
 * \param dst        where the result goes on every process (count elements)
 * \param count      the number of elements, at least 0
 * \param elem_size  the size of one element in bytes, at least 0
 * \error count or elem_size is negative
 * \error op is NULL
 * \error out of memory for the reduction's buffer
 * \error as bsp_sync: registrations or tag sizes of the superstep differ between processes,
 *        or processes call bsp_end while others are in the collective
 * \error called outside the SPMD section
 * \see bspk_op_sum_double(3), bspk_broadcast(3)
 */
typedef void (*bspk_op)(void *result, const void *left, const void *right, bsp_size_t *nbytes);
void bspk_reduce(bspk_op op, const void *src, void *dst, bsp_size_t count, bsp_size_t elem_size);

/**
 * bspk_op_sum_double, bspk_op_max_double, bspk_op_min_double, bspk_op_sum_long, bspk_op_max_long,
 * bspk_op_sum_int, bspk_op_max_int - ready-made operations for bspk_reduce
 *
 * Element-wise sum, maximum or minimum of double, long or int elements: result[i] =
 * left[i] op right[i] for the *nbytes / sizeof(element) elements. Pass them to bspk_reduce
 * with elem_size the size of the element type.
 *
 * \param result  out: the combined elements (may be left)
 * \param left    the left operands
 * \param right   the right operands
 * \param nbytes  in: the number of bytes of each operand, a whole number of elements
 * \see bspk_reduce(3)
 */
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
