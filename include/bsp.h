/*
 * bsp.h - the BSPlib standard interface (Hill et al., 1998), as implemented by bspkit's libbsp.
 *
 * Programs written for the Oxford BSP toolset, BSPonMPI, MulticoreBSP for C or BSPedupack
 * compile against this header unchanged:
 *   - the 1998 API uses `int` for process ids, counts and sizes;
 *   - MulticoreBSP / BSPedupack 2.0 name them bsp_pid_t, bsp_nprocs_t and bsp_size_t.
 * Here all three are `int`, so both spellings declare the same functions and `int *` and
 * `bsp_size_t *` arguments are interchangeable. Sizes are therefore limited to INT_MAX bytes
 * per call, and a negative size is reported as an error (see README, "Compatibility").
 */
#ifndef BSPKIT_BSP_H
#define BSPKIT_BSP_H

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

/* ---- Initialisation and the SPMD section ---------------------------------------------- */

/* Names the function that holds the SPMD section (the one calling bsp_begin/bsp_end) when
 * that is not main itself. Call it first thing in main. */
void bsp_init(void (*spmd_part)(void), int argc, char *argv[]);
/* Starts maxprocs BSP processes (exactly that many on the threads back end). */
void bsp_begin(bsp_pid_t maxprocs);
/* Ends the SPMD section; only process 0 returns from it. Every process must call it. */
void bsp_end(void);
/* Ends every process with a message (printf format) and a non-zero exit status. */
void bsp_abort(const char *format, ...) BSPKIT_NORETURN BSPKIT_PRINTF(1, 2);

/* ---- Enquiry -------------------------------------------------------------------------- */

/* Inside the SPMD section: the number of processes. Before bsp_begin: the number of
 * processes bsprun asked for (-n), or else the number of cores this program may use. */
bsp_nprocs_t bsp_nprocs(void);
bsp_pid_t bsp_pid(void);
/* Seconds since this process entered the SPMD section (monotonic clock). */
double bsp_time(void);

/* ---- Superstep ------------------------------------------------------------------------ */

void bsp_sync(void);

/* ---- Direct remote memory access (DRMA) ----------------------------------------------- */

/* Collective: every process registers its area in the same order; effective at next sync. */
void bsp_push_reg(const void *ident, bsp_size_t size);
void bsp_pop_reg(const void *ident);
/* Buffered: the source is copied at the call, the data lands at the next sync. */
void bsp_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes);
/* Reads remote data at the next sync, before that superstep's puts land. */
void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes);
/* Unbuffered: may transfer at any time before the next sync completes; neither side may
 * touch the memory involved until then. */
void bsp_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes);
void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes);
/* MulticoreBSP for C: reads process pid's registered area now, without waiting for a sync,
 * and returns when the data is in dst. The owner must not write those bytes in the same
 * superstep (order the write and the read by a bsp_sync). threads and mpi-rma only; on mpi
 * it is an error. See README, "Programs written for MulticoreBSP or the Oxford toolset". */
void bsp_direct_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                    bsp_size_t nbytes);

/* ---- Bulk synchronous message passing (BSMP) ------------------------------------------ */

/* Sets the tag size (in bytes) to *tag_nbytes from the next sync on; returns the old one in
 * *tag_nbytes. Collective: every process passes the same value in the same superstep. */
void bsp_set_tagsize(bsp_size_t *tag_nbytes);
/* Buffered send: tag and payload are copied at the call; delivered at the next sync. */
void bsp_send(bsp_pid_t pid, const void *tag, const void *payload, bsp_size_t payload_nbytes);
/* Unbuffered send (MulticoreBSP, BSPWrapper HpSend): tag and payload must stay unchanged
 * until the next sync. */
void bsp_hpsend(bsp_pid_t pid, const void *tag, const void *payload, bsp_size_t payload_nbytes);
/* Number of messages in the queue and the sum of their payload sizes. */
void bsp_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes);
/* Status: payload size of the first message, or -1 when the queue is empty; copies its tag. */
void bsp_get_tag(bsp_size_t *status, void *tag);
/* Copies the first message's payload (at most reception_nbytes bytes) and removes it. */
void bsp_move(void *payload, bsp_size_t reception_nbytes);
/* Unbuffered move: points at the first message's tag and payload (valid until the next
 * sync), removes it from the queue, returns its payload size, or -1 when the queue is empty. */
bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr);

/* ---- The Oxford BSP toolset's older names --------------------------------------------- *
 * Programs written for the Oxford toolset (BSPlib 1.x of Hill, McColl et al.) still use the
 * names its bsp.h kept from the drafts of the standard. They are declared here rather than
 * in a header of their own because those programs include <bsp.h> and nothing else. They
 * are functions of libbsp, not macros, so that a program carrying its own shim for them
 * (`#define bsp_pushregister bsp_push_reg`, or a function of that name, which then takes
 * precedence at link time) still compiles and links; errors name the old call. A program
 * that defines one of these names as a static function defines BSPKIT_NO_OXFORD_NAMES. */
#ifndef BSPKIT_NO_OXFORD_NAMES
void bsp_pushregister(const void *ident, bsp_size_t size);             /* = bsp_push_reg    */
void bsp_popregister(const void *ident);                               /* = bsp_pop_reg     */
void bsp_set_tag_size(bsp_size_t *tag_nbytes);                         /* = bsp_set_tagsize */
void bsp_bsmp_info(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes); /* = bsp_qsize       */
#endif

#ifdef __cplusplus
}
#endif
#endif /* BSPKIT_BSP_H */
