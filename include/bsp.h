/*
 * bsp.h - the BSPlib standard interface (Hill et al., 1998), as implemented by bspkit's libbsp.
 *
 * Programs written for the Oxford BSP toolset, BSPonMPI, MulticoreBSP for C or BSPedupack
 * compile against this header unchanged. Two families of types meet here:
 *   - the 1998 API (Oxford, BSPonMPI) uses `int` for process ids, counts and sizes;
 *   - MulticoreBSP names them bsp_pid_t, bsp_nprocs_t and bsp_size_t, natively `unsigned`
 *     for ids and counts and `size_t` for sizes.
 * The typedefs here are all `int` (as MulticoreBSP's compatibility mode has them, and as
 * BSPedupack 2.0 expects), so the functions take `int`; a value of another integer type
 * (a size_t nbytes, an unsigned pid) converts implicitly, without a warning under -Wall
 * -Wextra. Sizes are limited to INT_MAX bytes per call, and a negative size is an error
 * (docs/semantics.md, "Types").
 * Out-arguments are where the families differ: a `size_t *` given to a function that writes
 * an `int` gets 4 of its 8 bytes written. So in C (C11, or GCC and Clang in any mode)
 * bsp_qsize, bsp_get_tag and bsp_set_tagsize are also macros that look at each pointer's
 * type and write an int, an unsigned or a size_t accordingly (the end of this file: "One
 * header, both type families"); in C++ they are the int functions alone, where a wrong
 * pointer type is a compile error, never a wrong value. docs/compatibility.md, "Types".
 */
#ifndef BSPKIT_BSP_H
#define BSPKIT_BSP_H

/* The Oxford toolset's bsp.h includes <stdio.h>, and programs written for it use printf and
 * stdout with nothing but #include "bsp.h": so does this one. */
#include <stdio.h>
/* size_t, for the out-arguments of both type families (the end of this file) */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BSPKIT_VERSION_MAJOR 0
#define BSPKIT_VERSION_MINOR 1
/* Defined by every BSPlib implementation that follows the 1998 standard. */
#define BSPLIB 1

typedef int bsp_pid_t;    /* a process id, 0 <= pid < bsp_nprocs() */
typedef int bsp_nprocs_t; /* a number of processes or of messages   */
typedef int bsp_size_t;   /* a size in bytes (or a status of -1)    */

#if defined(__GNUC__)
#define BSPKIT_NORETURN __attribute__((noreturn))
#define BSPKIT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define BSPKIT_NORETURN
#define BSPKIT_PRINTF(fmt, args)
#endif

/* Each function below is documented where it is declared: what it does and when its effect
 * takes place, its parameters, and the errors it reports. scripts/man3.py turns these
 * comments into the man pages bsp_put(3) etc. An error prints one line on stderr,
 *   bspkit: error in bsp_put on process 1: pid 7 is out of range: there are 2 processes (0..1)
 * and ends every process of the run with exit status 1, on every back end (docs/semantics.md).
 * Every function but bsp_init, bsp_begin, bsp_nprocs and bsp_abort reports a call outside
 * the SPMD section (before bsp_begin or after bsp_end) that way. */

/* ---- Initialisation and the SPMD section ---------------------------------------------- */

/**
 * bsp_init - name the function that holds the SPMD section
 *
 * Call it first thing in main when the SPMD section (bsp_begin ... bsp_end) is in a function
 * of its own rather than in main itself. bsp_begin then starts the other processes in
 * spmd_part, while process 0 continues in main, which must call spmd_part itself. On the
 * MPI back ends only process 0 continues main after bsp_init: the others wait, so set what
 * spmd_part needs before bsp_init, or read it on process 0 and send it. With bsp_init, a
 * program may run several SPMD sections one after another (the same function again or
 * another one given to a later bsp_init); without it only one.
 *
 * Inside a running SPMD section, on the threads back end, bsp_init names the function of
 * a nested section instead (Multi-BSP, as in MulticoreBSP for C): the process then calls
 * spmd_part itself, whose bsp_begin(k) makes it process 0 of a section of k processes, the
 * other k - 1 starting in spmd_part (see bsp_begin). It holds for this process' nested
 * sections until its own bsp_end; argc and argv are not used there.
 *
 * \param spmd_part  the function that calls bsp_begin and bsp_end
 * \param argc       main's argc
 * \param argv       main's argv
 * \error called inside a running SPMD section on the mpi or mpi-rma back end (nested
 *        sections run on threads only)
 * \error inside a running SPMD section: spmd_part is NULL
 * \error unknown back end in BSPKIT_BACKEND, or the MPI plugin cannot be loaded (as for bsp_begin)
 * \see bsp_begin(3), bsp_end(3)
 */
void bsp_init(void (*spmd_part)(void), int argc, char *argv[]);

/**
 * bsp_begin - start the SPMD section on maxprocs processes
 *
 * Starts maxprocs BSP processes, exactly that many on the threads back end; on the MPI back
 * ends fewer when mpirun started fewer ranks (bsp_nprocs says how many run; BSPlib allows
 * fewer). Process 0's maxprocs decides on every back end: what the other processes pass is
 * ignored. Every process then runs the code that follows, up to bsp_end. Without bsp_init,
 * bsp_begin must be the first statement of main, and the other processes run main again
 * from the start with the same arguments. On the threads back end the processes are
 * threads of one program and share its global variables.
 *
 * Called inside a running SPMD section on the threads back end, after bsp_init(child, ...)
 * on this process, bsp_begin starts a nested section (Multi-BSP, as MulticoreBSP for C's
 * hierarchical runs): the calling process becomes its process 0 and maxprocs - 1 new
 * threads start in child. Until the nested section's bsp_end, bsp_pid, bsp_nprocs, the
 * registrations, the message queue, the tag size, bsp_time and the superstep count are
 * the nested section's (it starts with none of the parent's); after it the process
 * continues in the parent section with all of these as they were, its pending puts, gets
 * and messages included. Sections may nest to any depth (docs/semantics.md, "Nested SPMD
 * sections"). Errors in a nested section name it: "on process 1 of the section nested in
 * process 2". The superstep profile (BSPKIT_PROFILE) records top-level sections only.
 *
 * \param maxprocs  the number of processes, at least 1 (usually bsp_nprocs())
 * \error maxprocs is less than 1
 * \error called inside a running SPMD section without bsp_init on this process (threads),
 *        or at all on the mpi and mpi-rma back ends (nested sections run on threads only)
 * \error a second SPMD section without bsp_init
 * \error on the threads back end: the processes' buffers cannot fit in the memory available
 * \error unknown back end in BSPKIT_BACKEND, or the MPI plugin cannot be loaded for mpi or mpi-rma
 * \error BSPKIT_PROFILE names a file that cannot be written
 * \see bsp_init(3), bsp_end(3), bsp_nprocs(3), bsprun(1)
 */
void bsp_begin(bsp_pid_t maxprocs);

/**
 * bsp_end - end the SPMD section
 *
 * Every process must call it, after the same number of bsp_sync calls. It ends the
 * superstep like bsp_sync but delivers nothing: puts, gets and messages issued since the
 * last bsp_sync are dropped. Only process 0 returns from it; the other processes end (or,
 * with bsp_init on the MPI back ends, wait for the next section). A process that leaves the
 * program inside the SPMD section without bsp_end (exit, a return from main or from the SPMD
 * function) is an error too.
 *
 * \error a process called bsp_end while others called bsp_sync (the number of syncs differs)
 * \error a process exited inside the SPMD section without calling bsp_end
 * \error BSPKIT_PROFILE's file cannot be written at the end
 * \see bsp_begin(3), bsp_sync(3)
 */
void bsp_end(void);

/**
 * bsp_abort - end every process with a message
 *
 * Prints "bspkit: bsp_abort on process P: " and the message (printf format) on stderr and
 * ends every process of the run with exit status 1, on every back end. It can be called
 * from any process at any time, also outside the SPMD section; it does not return.
 *
 * \param format  a printf format, followed by its arguments
 * \see bsp_vabort in mcbsp.h (the same with a va_list)
 */
void bsp_abort(const char *format, ...) BSPKIT_NORETURN BSPKIT_PRINTF(1, 2);

/* ---- Enquiry -------------------------------------------------------------------------- */

/**
 * bsp_nprocs - the number of processes
 *
 * Inside the SPMD section: the number of processes running it. Before bsp_begin: the number
 * of processes asked for by bsprun -n (the environment variable BSPKIT_NPROCS), or else the
 * number of cores this program may use (its affinity mask), so that bsp_begin(bsp_nprocs())
 * starts what was asked for. After bsp_end: what it returned before bsp_begin.
 *
 * \return the number of processes (at least 1)
 * \error BSPKIT_NPROCS is set but is not a positive number
 * \see bsp_pid(3), bsp_begin(3)
 */
bsp_nprocs_t bsp_nprocs(void);

/**
 * bsp_pid - this process' id
 *
 * The processes of an SPMD section are numbered 0 to bsp_nprocs() - 1; process 0 is the one
 * that continues main after bsp_end.
 *
 * \return the id of the calling process, 0 <= pid < bsp_nprocs()
 * \error called outside the SPMD section
 * \see bsp_nprocs(3)
 */
bsp_pid_t bsp_pid(void);

/**
 * bsp_time - the time since this process began
 *
 * Read from a monotonic clock (CLOCK_MONOTONIC); each process counts from its own bsp_begin,
 * so times of different processes are not comparable to the microsecond.
 *
 * \return the seconds since this process entered the SPMD section (bsp_begin)
 * \error called outside the SPMD section
 */
double bsp_time(void);

/* ---- Superstep ------------------------------------------------------------------------ */

/**
 * bsp_sync - end the superstep
 *
 * Waits until every process has called bsp_sync, then completes the superstep's
 * communication in the order BSPlib defines: every get reads its source (before any put of
 * the superstep lands), then gets, puts and messages are written (puts in the order of the
 * sending process id, then of issue, so the last put to a byte from the highest pid wins;
 * where a get and a put write the same bytes, the put wins), then registrations and the
 * tag size set in the superstep take effect. The message queue then holds exactly the
 * messages sent to this process in the superstep. Every process must call it the same
 * number of times.
 *
 * \error registrations differ between processes: not every process made the same bsp_push_reg
 *        and bsp_pop_reg calls in the same order in this superstep
 * \error tag sizes differ: not every process asked bsp_set_tagsize for the same size in this
 *        superstep
 * \error a process called bsp_end while others called bsp_sync
 * \error out of memory for the superstep's data
 * \error called outside the SPMD section
 * \see bsp_put(3), bsp_get(3), bsp_send(3), bsp_push_reg(3)
 */
void bsp_sync(void);

/* ---- Direct remote memory access (DRMA) ----------------------------------------------- */

/**
 * bsp_push_reg - register an area for remote access
 *
 * Collective: every process registers its own area (sizes may differ between processes,
 * and ident may be NULL with size 0) in the same order within a superstep. The registration
 * takes effect at the next bsp_sync; from then on other processes address this process'
 * area by their own ident in bsp_put, bsp_get and their hp variants. Registering one
 * address twice stacks: bsp_pop_reg removes the newest.
 *
 * \param ident  the start of this process' area
 * \param size   its size in bytes, at least 0; puts and gets past it are errors
 * \error size is negative
 * \error at the next bsp_sync: the processes made different registration calls
 * \error called outside the SPMD section
 * \see bsp_pop_reg(3), bsp_put(3), bsp_get(3), bsp_sync(3)
 */
void bsp_push_reg(const void *ident, bsp_size_t size);

/**
 * bsp_pop_reg - remove a registration
 *
 * Collective like bsp_push_reg: every process pops in the same order within a superstep.
 * Removes the newest registration of ident at the next bsp_sync. Registration calls take
 * effect in the order made, so a push and a pop of the same address in one superstep cancel
 * out (the pop removes that push, not an older registration).
 *
 * \param ident  the address this process registered
 * \error ident is not registered (or its registrations are all popped already)
 * \error at the next bsp_sync: the processes made different registration calls
 * \error called outside the SPMD section
 * \see bsp_push_reg(3)
 */
void bsp_pop_reg(const void *ident);

/**
 * bsp_put - write into another process' registered area at the next sync
 *
 * Buffered: the nbytes at src are copied at the call, so src may be changed at once; they
 * are written at offset of process pid's area registered as dst when the superstep ends
 * (bsp_sync). Puts land after every get of the superstep has read, in the order of the
 * sending process id and then of issue: of several puts to the same bytes, the last from
 * the highest pid wins (on mpi-rma, overlapping puts of BSPKIT_RMA_MIN_BYTES or more from
 * different processes land in no defined order). With nbytes 0 nothing moves, but the
 * arguments are checked all the same.
 *
 * \param pid     the destination process, 0 <= pid < bsp_nprocs()
 * \param src     the data to send (NULL only when nbytes is 0)
 * \param dst     the registered area, as this process registered it (bsp_push_reg)
 * \param offset  where in the area, in bytes, at least 0
 * \param nbytes  how many bytes, at least 0
 * \error pid is out of range
 * \error nbytes or offset is negative
 * \error dst is not registered (a registration takes effect only at the next bsp_sync)
 * \error offset + nbytes is past the end of the area process pid registered
 * \error src is NULL while nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_hpput(3), bsp_get(3), bsp_push_reg(3), bsp_sync(3)
 */
void bsp_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes);

/**
 * bsp_get - read from another process' registered area at the next sync
 *
 * The nbytes at offset of process pid's area registered as src are read when the superstep
 * ends (bsp_sync), before any put of that superstep lands, and written to dst; every get of
 * a superstep reads before any get writes, so two processes may swap data with gets. dst
 * must stay valid until the sync. With nbytes 0 nothing moves, but the arguments are
 * checked all the same.
 *
 * \param pid     the process to read from, 0 <= pid < bsp_nprocs()
 * \param src     the registered area, as this process registered it (bsp_push_reg)
 * \param offset  where in the area, in bytes, at least 0
 * \param dst     where the data goes on this process (NULL only when nbytes is 0)
 * \param nbytes  how many bytes, at least 0
 * \error pid is out of range
 * \error nbytes or offset is negative
 * \error src is not registered (a registration takes effect only at the next bsp_sync)
 * \error offset + nbytes is past the end of the area process pid registered
 * \error dst is NULL while nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_hpget(3), bsp_put(3), bsp_direct_get(3), bsp_sync(3)
 */
void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes);

/**
 * bsp_hpput - write into another process' registered area, unbuffered
 *
 * As bsp_put, but src is not copied at the call: the transfer may happen at any time from
 * the call until the next bsp_sync completes, so neither src on this process nor the
 * destination bytes on process pid may be touched until then. On the threads back end it
 * copies at once; on the MPI back ends large transfers go straight from src.
 *
 * \param pid     the destination process, 0 <= pid < bsp_nprocs()
 * \param src     the data to send, unchanged until the next bsp_sync (NULL only when nbytes is 0)
 * \param dst     the registered area, as this process registered it (bsp_push_reg)
 * \param offset  where in the area, in bytes, at least 0
 * \param nbytes  how many bytes, at least 0
 * \error pid is out of range
 * \error nbytes or offset is negative
 * \error dst is not registered
 * \error offset + nbytes is past the end of the area process pid registered
 * \error src is NULL while nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_put(3), bsp_hpget(3)
 */
void bsp_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes);

/**
 * bsp_hpget - read from another process' registered area, unbuffered
 *
 * As bsp_get, but the transfer may happen at any time from the call until the next
 * bsp_sync completes, so neither the source bytes on process pid nor dst may be touched
 * until then. On the threads back end it copies at once; on the MPI back ends large
 * transfers go straight from the owner's memory (into dst where it is not registered).
 *
 * \param pid     the process to read from, 0 <= pid < bsp_nprocs()
 * \param src     the registered area, as this process registered it (bsp_push_reg)
 * \param offset  where in the area, in bytes, at least 0
 * \param dst     where the data goes on this process (NULL only when nbytes is 0)
 * \param nbytes  how many bytes, at least 0
 * \error pid is out of range
 * \error nbytes or offset is negative
 * \error src is not registered
 * \error offset + nbytes is past the end of the area process pid registered
 * \error dst is NULL while nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_get(3), bsp_hpput(3)
 */
void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes);

/**
 * bsp_direct_get - read another process' registered area now (MulticoreBSP)
 *
 * Reads the nbytes at offset of process pid's area registered as src now, without waiting
 * for a sync, and returns when dst holds them. The rule: the owner must not write those
 * bytes in the superstep of the read, and a write of an earlier superstep is seen only
 * after a bsp_sync between the write and the read; otherwise the read is a data race (old
 * bytes, new bytes or a mix). On threads it is a memcpy from the owner's memory, on mpi-rma
 * an MPI_Get completed at once (it needs MPI's unified memory model); the mpi back end
 * cannot read another process' memory without its help and reports an error.
 *
 * \param pid     the process to read from, 0 <= pid < bsp_nprocs()
 * \param src     the registered area, as this process registered it (bsp_push_reg)
 * \param offset  where in the area, in bytes, at least 0
 * \param dst     where the data goes on this process (NULL only when nbytes is 0)
 * \param nbytes  how many bytes, at least 0
 * \error pid is out of range
 * \error nbytes or offset is negative
 * \error src is not registered
 * \error offset + nbytes is past the end of the area process pid registered
 * \error dst is NULL while nbytes is not 0
 * \error not available on the back end (mpi, or mpi-rma with MPI's separate memory model):
 *        the message says to use bsp_get or another back end
 * \error called outside the SPMD section
 * \see bsp_get(3), bsp_hpget(3)
 */
void bsp_direct_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                    bsp_size_t nbytes);

/* ---- Bulk synchronous message passing (BSMP) ------------------------------------------ */

/**
 * bsp_set_tagsize - set the size of message tags from the next sync on
 *
 * Collective: every process asks for the same size in the same superstep. The new size
 * holds for the messages sent after the next bsp_sync; messages sent in the superstep that
 * changes it keep the old size (as the Oxford toolset does). The size at the start is 0.
 *
 * In C, tag_nbytes may point to an int, an unsigned or a size_t (MulticoreBSP's type): the
 * macro bsp_set_tagsize reads and writes the type it points to (bspk_qsize_as(3)).
 *
 * \param tag_nbytes  in: the new tag size in bytes, at least 0; out: the size it replaces
 * \error tag_nbytes is NULL
 * \error the size is negative, or (an unsigned or size_t) larger than INT_MAX
 * \error at the next bsp_sync: the processes asked for different sizes
 * \error called outside the SPMD section
 * \see bsp_send(3), bsp_get_tag(3)
 */
void bsp_set_tagsize(bsp_size_t *tag_nbytes);

/**
 * bsp_send - send a message to another process' queue at the next sync
 *
 * Buffered: the tag (of the current tag size, bsp_set_tagsize) and the payload are copied
 * at the call. The message is in process pid's queue after the next bsp_sync, where the
 * messages arrive in the order of the sending process id and then of sending. A message may
 * have an empty payload.
 *
 * \param pid             the destination process, 0 <= pid < bsp_nprocs()
 * \param tag             the tag (NULL only when the tag size is 0)
 * \param payload         the payload (NULL only when payload_nbytes is 0)
 * \param payload_nbytes  the payload's size in bytes, at least 0
 * \error pid is out of range
 * \error payload_nbytes is negative
 * \error tag is NULL while the tag size is not 0, or payload is NULL while payload_nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_hpsend(3), bsp_qsize(3), bsp_get_tag(3), bsp_move(3), bsp_hpmove(3)
 */
void bsp_send(bsp_pid_t pid, const void *tag, const void *payload, bsp_size_t payload_nbytes);

/**
 * bsp_hpsend - send a message, unbuffered (MulticoreBSP)
 *
 * As bsp_send, but tag and payload must stay unchanged until the next bsp_sync: the library
 * may read them at any time until then. (On the threads back end the receiver reads a
 * message after the sender has moved on, so it copies once at the call, like bsp_send.)
 *
 * \param pid             the destination process, 0 <= pid < bsp_nprocs()
 * \param tag             the tag (NULL only when the tag size is 0)
 * \param payload         the payload (NULL only when payload_nbytes is 0)
 * \param payload_nbytes  the payload's size in bytes, at least 0
 * \error pid is out of range
 * \error payload_nbytes is negative
 * \error tag is NULL while the tag size is not 0, or payload is NULL while payload_nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_send(3)
 */
void bsp_hpsend(bsp_pid_t pid, const void *tag, const void *payload, bsp_size_t payload_nbytes);

/**
 * bsp_qsize - the number of messages in the queue and their size
 *
 * Counts the messages not yet taken from the queue (bsp_move, bsp_hpmove).
 *
 * In C, each argument may point to an int, an unsigned (MulticoreBSP's count) or a size_t
 * (MulticoreBSP's size), each on its own: the macro bsp_qsize writes the type each points
 * to, all of its bytes (bspk_qsize_as(3)). The function itself writes ints.
 *
 * \param nmessages     out: the number of messages in the queue
 * \param accum_nbytes  out: the sum of their payload sizes in bytes; NULL: not wanted (as
 *                     MulticoreBSP documents it)
 * \error nmessages is NULL
 * \error called outside the SPMD section
 * \see bsp_get_tag(3), bsp_move(3)
 */
void bsp_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes);

/**
 * bsp_get_tag - the first message's payload size and tag
 *
 * Looks at the first message of the queue without removing it.
 *
 * In C, status may point to an int, an unsigned or a size_t (MulticoreBSP's type): the macro
 * bsp_get_tag writes the type it points to (bspk_qsize_as(3)); an empty queue's -1 is then
 * UINT_MAX or SIZE_MAX, what MulticoreBSP writes.
 *
 * \param status  out: the payload size of the first message in bytes, or -1 when the queue
 *                is empty
 * \param tag     out: the first message's tag (as many bytes as the tag size it was sent
 *                with); not written when the queue is empty
 * \error status is NULL
 * \error tag is NULL while the tag size is not 0
 * \error called outside the SPMD section
 * \see bsp_move(3), bsp_qsize(3), bsp_set_tagsize(3)
 */
void bsp_get_tag(bsp_size_t *status, void *tag);

/**
 * bsp_move - take the first message's payload from the queue
 *
 * Copies the payload of the first message (at most reception_nbytes bytes of it) to payload
 * and removes the message from the queue.
 *
 * \param payload           where the payload goes (NULL only when reception_nbytes is 0)
 * \param reception_nbytes  the most bytes to copy, at least 0
 * \error reception_nbytes is negative
 * \error the queue is empty (check bsp_get_tag's status first)
 * \error payload is NULL while reception_nbytes is not 0
 * \error called outside the SPMD section
 * \see bsp_get_tag(3), bsp_hpmove(3)
 */
void bsp_move(void *payload, bsp_size_t reception_nbytes);

/**
 * bsp_hpmove - take the first message from the queue without copying it
 *
 * Points tag_ptr and payload_ptr at the first message's tag and payload in the library's
 * buffers (payloads are 8-byte aligned; valid until the next bsp_sync) and removes the
 * message from the queue.
 *
 * \param tag_ptr      out: the message's tag
 * \param payload_ptr  out: the message's payload
 * \return the payload size in bytes, or -1 when the queue is empty (nothing is written then);
 *         an int, which a MulticoreBSP program stores in a size_t: -1 becomes SIZE_MAX there,
 *         what MulticoreBSP returns
 * \error tag_ptr or payload_ptr is NULL
 * \error called outside the SPMD section
 * \see bsp_move(3), bsp_get_tag(3)
 */
bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr);

/* ---- The Oxford BSP toolset's older names --------------------------------------------- *
 * Programs written for the Oxford toolset (BSPlib 1.x of Hill, McColl et al.) still use the
 * names its bsp.h kept from the drafts of the standard. They are declared here rather than
 * in a header of their own because those programs include <bsp.h> and nothing else. They
 * are functions of libbsp, not macros, so that a program carrying its own shim for them
 * (`#define bsp_pushregister bsp_push_reg`, or a function of that name, which then takes
 * precedence at link time) still compiles and links; errors name the old call. A program
 * that defines one of these names as a static function defines BSPKIT_NO_OXFORD_NAMES.
 * For that reason, and because the Oxford toolset's own types are int, bsp_set_tag_size and
 * bsp_bsmp_info take int pointers only: they have no type-generic macros (below). */
#ifndef BSPKIT_NO_OXFORD_NAMES
/**
 * bsp_pushregister, bsp_popregister, bsp_set_tag_size, bsp_bsmp_info - the Oxford toolset's names
 *
 * The names the Oxford BSP toolset kept from the drafts of the standard: bsp_pushregister is
 * bsp_push_reg, bsp_popregister is bsp_pop_reg, bsp_set_tag_size is bsp_set_tagsize and
 * bsp_bsmp_info is bsp_qsize, with the same arguments, semantics and errors (the error
 * messages name the old call). They are functions, not macros, so a program with its own
 * shim of one of them still builds; one that defines one of these names as a static
 * function compiles with -DBSPKIT_NO_OXFORD_NAMES.
 *
 * \see bsp_push_reg(3), bsp_pop_reg(3), bsp_set_tagsize(3), bsp_qsize(3)
 */
void bsp_pushregister(const void *ident, bsp_size_t size);             /* = bsp_push_reg    */
void bsp_popregister(const void *ident);                               /* = bsp_pop_reg     */
void bsp_set_tag_size(bsp_size_t *tag_nbytes);                         /* = bsp_set_tagsize */
void bsp_bsmp_info(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes); /* = bsp_qsize       */
#endif

/* ---- One header, both type families ---------------------------------------------------- *
 * bsp_qsize, bsp_get_tag and bsp_set_tagsize write through pointers, and MulticoreBSP's
 * programs point them at its native types: an unsigned count and size_t sizes, where an
 * int-writing function would fill 4 of a size_t's 8 bytes. So in C each of the three is
 * also a macro that looks at the type each pointer points to and calls the function below
 * with the pointer and that type: int (the 1998 API; bsp_size_t and bsp_nprocs_t are int
 * here), unsigned or size_t, each argument on its own, each written with all of its bytes.
 *   - Any other pointer type goes to an int * prototype and gets the compiler's usual
 *     incompatible-pointer diagnostic, as without the macros (an error from GCC 14 on).
 *     unsigned long * is size_t * on 64-bit Linux, the same type; long * (signed) is neither
 *     family's type, so it is not accepted.
 *   - A null pointer (NULL, 0) is taken as an int *: bsp_qsize(&n, NULL) skips the byte
 *     count; a NULL where one is needed is the usual run-time error.
 *   - Each argument is evaluated exactly once (a _Generic's controlling expression is not
 *     evaluated at all).
 *   - A function-like macro is expanded only where its name is followed by `(`: so
 *     `&bsp_qsize`, a function pointer and `(bsp_qsize)(&n, &nbytes)` reach the int function
 *     itself, and so does libbsp's own definition, `void (bsp_qsize)(...)`; #undef bsp_qsize
 *     gives the function back for the rest of a file.
 *   - -DBSPKIT_NO_TYPE_GENERIC leaves the macros out (the int functions alone): for a program
 *     that declares or defines one of these names itself.
 *   - C: C11, and GCC (4.9 on) or Clang in older modes too (-std=c99, -std=c89), without a
 *     -pedantic warning. C++ has no
 *     _Generic and gets the int functions alone, no overloads: there an unsigned * or
 *     size_t * argument is a compile error (C++ converts no pointer types implicitly), never
 *     a wrong value; C++ code with MulticoreBSP's types calls bspk_qsize_as & co. itself.
 * bsp_hpmove returns an int whatever its caller's type: stored in a size_t, -1 (an empty
 * queue) becomes SIZE_MAX, what MulticoreBSP returns. */

/* The type an out-argument points to (bspk_qsize_as & co.). */
enum bspk_out_type {
  BSPK_OUT_INT = 0,      /* int: the 1998 API, bsp_size_t and bsp_nprocs_t here */
  BSPK_OUT_UNSIGNED = 1, /* unsigned int: MulticoreBSP's bsp_pid_t and bsp_nprocs_t */
  BSPK_OUT_SIZE_T = 2    /* size_t: MulticoreBSP's bsp_size_t */
};

/**
 * bspk_qsize_as, bspk_get_tag_as, bspk_set_tagsize_as - bsp_qsize, bsp_get_tag and bsp_set_tagsize
 * with out-arguments of a given type
 *
 * What the macros bsp_qsize, bsp_get_tag and bsp_set_tagsize of bsp.h call in C: the same
 * calls, with each out-argument given as a pointer and the type it points to, BSPK_OUT_INT
 * (int), BSPK_OUT_UNSIGNED (unsigned int) or BSPK_OUT_SIZE_T (size_t), so that a program
 * written with MulticoreBSP's types (an unsigned count, size_t sizes) gets all the bytes of
 * its variables written. A program need not call them: bsp_qsize(&n, &nbytes) picks the
 * types of n and nbytes itself. C++ programs, which get the int functions alone, may call
 * them directly.
 *
 * Values are converted as C converts them: an empty queue's status -1 is written as -1,
 * UINT_MAX or SIZE_MAX. A tag size given as an unsigned or size_t must be at most INT_MAX.
 * Their errors are those of the call they stand for, and name it (bspkit: error in
 * bsp_qsize on process P: ...).
 *
 * \param nmessages          out: the number of messages in the queue (bsp_qsize)
 * \param nmessages_type     the type nmessages points to
 * \param accum_nbytes       out: their payload sizes' sum in bytes; NULL: not wanted
 * \param accum_nbytes_type  the type accum_nbytes points to
 * \param status             out: the first message's payload size, or -1 (bsp_get_tag)
 * \param status_type        the type status points to
 * \param tag                out: the first message's tag (bsp_get_tag)
 * \param tag_nbytes         in: the new tag size; out: the size it replaces (bsp_set_tagsize)
 * \param tag_nbytes_type    the type tag_nbytes points to
 * \error a type is not one of BSPK_OUT_INT, BSPK_OUT_UNSIGNED and BSPK_OUT_SIZE_T
 * \error a tag size of type unsigned or size_t is larger than INT_MAX
 * \error the errors of bsp_qsize, bsp_get_tag and bsp_set_tagsize, under those names
 * \error called outside the SPMD section
 * \see bsp_qsize(3), bsp_get_tag(3), bsp_set_tagsize(3)
 */
void bspk_qsize_as(void *nmessages, enum bspk_out_type nmessages_type, void *accum_nbytes,
                   enum bspk_out_type accum_nbytes_type);
void bspk_get_tag_as(void *status, enum bspk_out_type status_type, void *tag);
void bspk_set_tagsize_as(void *tag_nbytes, enum bspk_out_type tag_nbytes_type);

#if !defined(__cplusplus) && !defined(BSPKIT_NO_TYPE_GENERIC) &&                         \
    ((defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) || defined(__clang__) || \
     (defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 9))))
#if defined(__GNUC__)
#define BSPKIT_EXTENSION_ __extension__ /* _Generic before C11, without -pedantic warnings */
#define BSPKIT_INLINE_ __inline__       /* inline, also in -std=c89 */
#else
#define BSPKIT_EXTENSION_
#define BSPKIT_INLINE_ inline
#endif
/* The pointer, checked against its type's prototype: the default is int *, so any other
 * type gets the compiler's usual diagnostic. size_t * is tried first, alone: where size_t
 * is unsigned int (32-bit systems) unsigned * is size_t *, and one _Generic may not name a
 * type twice. The functions are selected, then called, so that only the one selected
 * checks its argument. */
static BSPKIT_INLINE_ void *bspk_out_int(int *out) { return out; } /* or unsigned *, size_t * */
static BSPKIT_INLINE_ void *bspk_out_unsigned(unsigned *out) { return out; }
static BSPKIT_INLINE_ void *bspk_out_size_t(size_t *out) { return out; }
/* clang-format off */
#define BSPKIT_OUT_(p)                                                              \
  (BSPKIT_EXTENSION_ _Generic((p), size_t *: bspk_out_size_t,                       \
     default: _Generic((p), unsigned *: bspk_out_unsigned, default: bspk_out_int))(p))
#define BSPKIT_OUT_TYPE_(p)                                                         \
  (BSPKIT_EXTENSION_ _Generic((p), size_t *: BSPK_OUT_SIZE_T,                       \
     default: _Generic((p), unsigned *: BSPK_OUT_UNSIGNED, default: BSPK_OUT_INT)))
/* clang-format on */
#define bsp_qsize(nmessages, accum_nbytes)                                                      \
  bspk_qsize_as(BSPKIT_OUT_(nmessages), BSPKIT_OUT_TYPE_(nmessages), BSPKIT_OUT_(accum_nbytes), \
                BSPKIT_OUT_TYPE_(accum_nbytes))
#define bsp_get_tag(status, tag) \
  bspk_get_tag_as(BSPKIT_OUT_(status), BSPKIT_OUT_TYPE_(status), (tag))
#define bsp_set_tagsize(tag_nbytes) \
  bspk_set_tagsize_as(BSPKIT_OUT_(tag_nbytes), BSPKIT_OUT_TYPE_(tag_nbytes))
#endif

#ifdef __cplusplus
}
#endif
#endif /* BSPKIT_BSP_H */
