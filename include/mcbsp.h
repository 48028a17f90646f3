/*
 * mcbsp.h - MulticoreBSP for C's header, as bspkit provides it: programs written for
 * MulticoreBSP (Yzelman et al.) that `#include <mcbsp.h>` compile here unchanged.
 *
 * It gives bsp.h (the BSPlib standard, with MulticoreBSP's bsp_hpsend and bsp_direct_get)
 * plus the parts of MulticoreBSP's own interface that make sense on bspkit:
 *   - the types: MCBSP_PROCESSOR_INDEX_DATATYPE, MCBSP_NUMMSG_TYPE, MCBSP_BYTESIZE_TYPE
 *     (MulticoreBSP 1.x) and mcbsp_pid_t, mcbsp_nprocs_t, mcbsp_size_t (2.x). All are `int`,
 *     as in MulticoreBSP's MCBSP_COMPATIBILITY_MODE, because bspkit's BSPlib functions take
 *     `int` (bsp.h); code that passes size_t or unsigned values converts them implicitly,
 *     and in C the out-arguments of bsp_qsize, bsp_get_tag and bsp_set_tagsize may point to
 *     MulticoreBSP's native unsigned and size_t too (bsp.h, "One header, both type
 *     families");
 *   - bsp_vabort, and mcbsp_nprocs / mcbsp_pid;
 *   - the affinity and machine interface (mcbsp_set_* / mcbsp_get_*, the defaults and the
 *     1.x globals MCBSP_AFFINITY and MCBSP_MANUAL_AFFINITY). These are hints: bspkit
 *     records what is set (the getters return it) but places its processes itself (see
 *     BSPKIT_PIN in docs/backends.md), and bsp_begin(P) starts P processes whatever
 *     mcbsp_set_maximum_threads said. See docs/compatibility.md, "Programs written for
 *     MulticoreBSP or the Oxford toolset".
 * Its hierarchical runs (bsp_init/bsp_begin inside an SPMD section) work on the threads back
 * end (docs/semantics.md, "Nested SPMD sections"). Not provided: MulticoreBSP's C++ wrapper,
 * its resiliency (checkpoint) and accelerator interfaces.
 */
#ifndef BSPKIT_MCBSP_H
#define BSPKIT_MCBSP_H

#include <stdarg.h>
#include <stddef.h>

#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by MulticoreBSP's header; some programs test it to select MulticoreBSP code. */
#ifndef MCBSP_COMPATIBILITY_MODE
#define MCBSP_COMPATIBILITY_MODE
#endif

/* MulticoreBSP 1.x's type macros, as its compatibility mode defines them. */
#define MCBSP_PROCESSOR_INDEX_DATATYPE int
#define MCBSP_NUMMSG_TYPE int
#define MCBSP_BYTESIZE_TYPE int

/* MulticoreBSP 2.x's own names for the types of bsp.h. */
typedef bsp_pid_t mcbsp_pid_t;
typedef bsp_nprocs_t mcbsp_nprocs_t;
typedef bsp_size_t mcbsp_size_t;

/**
 * bsp_vabort - bsp_abort with the arguments as a va_list (MulticoreBSP)
 *
 * For a program's own variadic error helper: prints "bspkit: bsp_abort on process P: " and
 * the message (printf format, its arguments in args) on stderr and ends every process of the
 * run with exit status 1, as bsp_abort does. It does not return.
 *
 * \param format  a printf format
 * \param args    its arguments
 * \see bsp_abort(3)
 */
void bsp_vabort(const char *format, va_list args) BSPKIT_NORETURN;

/**
 * mcbsp_nprocs, mcbsp_pid - MulticoreBSP 2.x's names of bsp_nprocs and bsp_pid
 *
 * The same as bsp_nprocs() and bsp_pid(), with MulticoreBSP's types (both int here).
 *
 * \see bsp_nprocs(3), bsp_pid(3)
 */
static inline mcbsp_nprocs_t mcbsp_nprocs(void) { return bsp_nprocs(); }
static inline mcbsp_pid_t mcbsp_pid(void) { return bsp_pid(); }

/* ---- Affinity and machine hints -----------------------------------------------------------
 * MulticoreBSP pins its threads by these settings. bspkit accepts every one of them and
 * records it, so that programs compile and a later mcbsp_get_* returns what was set, but
 * does not act on them: process i runs on the i-th core of the affinity mask when there
 * are no more processes than cores (BSPKIT_PIN=0 turns that off), on every back end. */
enum mcbsp_affinity_mode {
  SCATTER = 0, /* MulticoreBSP's default: spread over the cores       */
  COMPACT,     /* fill the first cores                                 */
  MANUAL       /* the cores given to mcbsp_set_pinning                 */
};
enum mcbsp_thread_numbering {
  CONSECUTIVE = 0, /* the hardware threads of a core are numbered together */
  WRAPPED          /* they are numbered one per core, round robin           */
};

/**
 * mcbsp_set_affinity_mode, mcbsp_set_available_cores, mcbsp_set_maximum_threads,
 * mcbsp_set_threads_per_core, mcbsp_set_thread_numbering, mcbsp_set_pinning,
 * mcbsp_set_reserved_cores - MulticoreBSP's affinity and machine hints, recorded
 *
 * MulticoreBSP pins its threads by these settings. bspkit accepts every one and records it,
 * so that programs written for MulticoreBSP compile and a later mcbsp_get_* returns what was
 * set, but does not act on them: on every back end, process i runs on the i-th core of the
 * affinity mask when there are no more processes than cores (BSPKIT_PIN=0 turns that off),
 * and bsp_begin(P) starts P processes whatever mcbsp_set_maximum_threads said.
 * mcbsp_set_pinning and mcbsp_set_reserved_cores copy the array (the caller keeps and frees
 * its own); mcbsp_set_pinning implies MANUAL. They may be called at any time, also before
 * bsp_begin.
 *
 * \error out of memory while copying the array (mcbsp_set_pinning, mcbsp_set_reserved_cores)
 * \see mcbsp_get_affinity_mode(3), bsp_begin(3)
 */
void mcbsp_set_affinity_mode(enum mcbsp_affinity_mode mode);
void mcbsp_set_available_cores(size_t num_cores);
void mcbsp_set_maximum_threads(size_t max);
void mcbsp_set_threads_per_core(size_t threads_per_core);
void mcbsp_set_thread_numbering(enum mcbsp_thread_numbering numbering);
/* Copies the array (the caller keeps and frees its own); implies MANUAL. */
void mcbsp_set_pinning(const size_t *pinning, size_t length);
void mcbsp_set_reserved_cores(const size_t *reserved, size_t length);

/**
 * mcbsp_get_affinity_mode, mcbsp_get_available_cores, mcbsp_get_maximum_threads,
 * mcbsp_get_threads_per_core, mcbsp_get_thread_numbering, mcbsp_get_pinning,
 * mcbsp_get_reserved_cores_number, mcbsp_get_reserved_cores - what the MulticoreBSP hints say
 *
 * Each returns what the matching mcbsp_set_* recorded, or else the default:
 * MCBSP_DEFAULT_AFFINITY (SCATTER), the cores this program may use (as bspk_cores) for the
 * available cores and the maximum threads, MCBSP_DEFAULT_THREADS_PER_CORE (1) and
 * MCBSP_DEFAULT_THREAD_NUMBERING (CONSECUTIVE). mcbsp_get_pinning and mcbsp_get_reserved_cores
 * return copies (malloc; the caller frees them) of the arrays set, or NULL when none was set;
 * mcbsp_get_reserved_cores_number the length of the reserved cores' array. bspkit does not act
 * on any of them (mcbsp_set_affinity_mode(3)).
 *
 * \error out of memory while copying an array (mcbsp_get_pinning, mcbsp_get_reserved_cores)
 * \see mcbsp_set_affinity_mode(3)
 */
enum mcbsp_affinity_mode mcbsp_get_affinity_mode(void);
/* The value set, or else the cores this program may use (as bspk_cores()). */
size_t mcbsp_get_available_cores(void);
size_t mcbsp_get_maximum_threads(void);
size_t mcbsp_get_threads_per_core(void); /* default 1 */
enum mcbsp_thread_numbering mcbsp_get_thread_numbering(void);
/* Copies (malloc; the caller frees them) of the arrays set, or NULL when none was set. */
size_t *mcbsp_get_pinning(void);
size_t mcbsp_get_reserved_cores_number(void);
size_t *mcbsp_get_reserved_cores(void);

/* MulticoreBSP 2.x's defaults, read when nothing was set (also only recorded here). */
extern enum mcbsp_affinity_mode MCBSP_DEFAULT_AFFINITY;
extern size_t MCBSP_DEFAULT_THREADS_PER_CORE;
extern enum mcbsp_thread_numbering MCBSP_DEFAULT_THREAD_NUMBERING;
/* MulticoreBSP 1.x's settings, assigned by programs before bsp_begin (only recorded). */
extern enum mcbsp_affinity_mode MCBSP_AFFINITY;
extern int *MCBSP_MANUAL_AFFINITY;

#ifdef __cplusplus
}
#endif
#endif /* BSPKIT_MCBSP_H */
