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
 * \return "threads", "mpi", "mpi-rma" or "mpi-naive" (as given to bsprun -b, or BSPKIT_BACKEND)
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

/* ---- Checkpoint and restart (bsprun --checkpoint-dir, --restart; docs/checkpoint.md) ---- */

/**
 * bspk_checkpoint_protect - name memory that a checkpoint saves and a restart restores
 *
 * Local: adds the nbytes at addr to this process' protected memory, the state that
 * bspk_checkpoint(3) saves. Areas are told apart by the order of the calls: a restarted run
 * must protect the same number of areas, of the same sizes, in the same order, before it
 * calls bspk_checkpoint_resume(3) (the addresses may differ). Every registered area
 * (bsp_push_reg) must lie in protected memory when a checkpoint is taken, so that a restart
 * can register it again. The area must stay allocated while it is protected: free(3) of
 * protected memory is an error (checked where the program's free is the C library's;
 * realloc is not checked). Protecting costs nothing until a checkpoint is written.
 *
 * \param addr    the start of the area (not NULL when nbytes > 0)
 * \param nbytes  its size in bytes, at least 0
 * \error addr is NULL with nbytes > 0, or nbytes is negative
 * \error the area overlaps one that is protected already
 * \error called outside the SPMD section
 * \see bspk_checkpoint_unprotect(3), bspk_checkpoint(3), bspk_checkpoint_resume(3)
 */
void bspk_checkpoint_protect(void *addr, bsp_size_t nbytes);

/**
 * bspk_checkpoint_unprotect - stop saving an area in checkpoints
 *
 * Local: removes the area that bspk_checkpoint_protect(3) was given addr for; the areas
 * protected after it keep their order. Call it before freeing protected memory.
 *
 * \param addr  the start of a protected area
 * \error addr is not the start of a protected area
 * \error called outside the SPMD section
 * \see bspk_checkpoint_protect(3)
 */
void bspk_checkpoint_unprotect(void *addr);

/**
 * bspk_checkpoint_scratch - say whether a protected area holds state at the checkpoints
 *
 * Local: marks the protected area that starts at addr as scratch (scratch != 0) or as state
 * again (scratch == 0, what bspk_checkpoint_protect(3) makes it). The checkpoints taken while
 * an area is scratch skip its bytes (they are neither written nor, in the background,
 * copied); its registrations are still saved, and made again by a restart. A restart from
 * such a checkpoint leaves the area's bytes as the restarted program has them when it calls
 * bspk_checkpoint_resume(3) (as it allocated or set them), and restores the areas that were
 * state then. Use it for registered memory that is written before it is read after every
 * checkpoint, such as the target of the next superstep's puts; an area whose role changes
 * from superstep to superstep (two buffers used in turn) may be marked anew before each
 * checkpoint. The areas stay protected either way: a restart must protect the same areas,
 * and whether each was scratch need not match.
 *
 * \param addr     the start of a protected area
 * \param scratch  nonzero: the area is scratch at the checkpoints from now on; 0: state
 * \error addr is not the start of a protected area
 * \error called outside the SPMD section
 * \see bspk_checkpoint_protect(3), bspk_checkpoint(3)
 */
void bspk_checkpoint_scratch(void *addr, int scratch);

/**
 * bspk_checkpoint - end the superstep, and save the program's state when one is due
 *
 * Collective: every process calls it in the same superstep, in place of bsp_sync. It ends
 * the superstep as bsp_sync does; then, when the run was started with
 * bsprun --checkpoint-dir DIR and the interval of --checkpoint-every has passed since the
 * last checkpoint (process 0's clock; without the option, at every call), every process
 * saves its protected memory (the areas that are not scratch, bspk_checkpoint_scratch(3)),
 * its registrations, its tag size, the messages this sync delivered and the superstep count
 * to DIR, one file per process, and process 0 completes the checkpoint with a manifest. At
 * the end of a superstep no message is in flight, so the files form a consistent state. The
 * files are written in the background: the protected memory is copied at this call and a
 * thread of the process writes the copy while the program goes on; the checkpoint is
 * complete (a restart may use it) once every process' file is durable, which a later
 * bspk_checkpoint call or bsp_end finds, and a checkpoint due while the previous one is still
 * being written waits for it (BSPKIT_CHECKPOINT_BACKGROUND=0: each is written and completed
 * before the call returns). Without --checkpoint-dir it is bsp_sync and saves nothing.
 * A checkpoint that cannot be written (the disk full, say) is reported on stderr and the run
 * goes on; a restart then uses the checkpoint before it.
 *
 * \return 1 when a checkpoint was taken at this call (on every process alike; complete once
 *         written, see above), else 0
 * \error some processes called bspk_checkpoint and others bsp_sync (or a collective)
 * \error a registered area does not lie in protected memory
 * \error the checkpoint directory holds the checkpoints of an earlier run, and this run
 *        was not started with bsprun --restart
 * \error as bsp_sync
 * \error called outside the SPMD section
 * \see bspk_checkpoint_resume(3), bspk_checkpoint_protect(3), bsprun(1)
 */
int bspk_checkpoint(void);

/**
 * bspk_checkpoint_resume - restore the newest checkpoint when the run is a restart
 *
 * Collective. In a run started with bsprun --restart DIR it takes the newest complete
 * checkpoint in DIR whose files are all intact (a torn or corrupt one is reported and the
 * one before it taken), and restores: every protected area's contents, the registrations
 * (made again at the protected memory's new addresses; those the program made before the
 * call must be the checkpoint's first ones, in order), the tag size, the messages delivered
 * at the checkpoint's sync (in the queue again) and the superstep count (bspk_superstep), all
 * as they were right after that checkpoint's bspk_checkpoint returned. The program goes on
 * from its own code after this call, so its protected memory must say where it was (a loop
 * counter moved on before the checkpoint). Call it once, after protecting the same areas as
 * the run that wrote the checkpoint, before its first bspk_checkpoint; in a run that is not
 * a restart it does nothing.
 *
 * \return 1 when the state was restored (skip the initialisation), 0 when the run is not
 *         a restart
 * \error the checkpoint was taken with another number of processes
 * \error the protected areas differ in number or size from the checkpoint's
 * \error the registrations made before the call are not the checkpoint's first ones
 * \error no complete, intact checkpoint in DIR
 * \error called outside the SPMD section
 * \see bspk_checkpoint(3), bsprun(1)
 */
int bspk_checkpoint_resume(void);

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

/**
 * bspk_profile_packing_begin - mark the start of packing in the superstep profile
 *
 * The time from here to the matching bspk_profile_packing_end is packing in the profile
 * that BSPKIT_PROFILE asks for (pack_s, docs/profile-format.md): copying data into or out
 * of buffers for communication, and local swaps, as Horvitz & Bisseling separate it from
 * computation. `bspkit profile` splits each superstep into synchronisation,
 * communication, packing, computation and idle time. Regions nest (the outermost counts);
 * one open at a bsp_sync goes on after it, the sync's own time is not packing. The time
 * bsp_put, bsp_send, bsp_get and bsp_move spend at the call is packing without a mark.
 * Does nothing when no profile is being written.
 *
 * \error called outside the SPMD section
 * \see bspk_profile_packing_end(3), bspkit-profile(1)
 */
void bspk_profile_packing_begin(void);

/**
 * bspk_profile_packing_end - mark the end of packing in the superstep profile
 *
 * Ends the region the last bspk_profile_packing_begin opened (bspk_profile_packing_begin(3)).
 * Does nothing when no profile is being written.
 *
 * \error no region is open (while a profile is being written)
 * \error called outside the SPMD section
 * \see bspk_profile_packing_begin(3), bspkit-profile(1)
 */
void bspk_profile_packing_end(void);

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
