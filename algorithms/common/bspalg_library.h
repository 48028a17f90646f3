/*
 * bspalg_library.h - what the drivers take from their BSPlib beyond bsp.h, in one place.
 *
 * Built with bspkit (the default): bspkit.h's back-end name, profile phases and checkpoints.
 * Built portable (-DBSPKIT_PORTABLE, CMake's BSPKIT_PORTABLE=ON; docs/comparing-libraries.md)
 * against another library's bsp.h, or bspkit's own to test it: no bspkit.h, the phases are
 * no-ops (there is no superstep profile), a checkpoint is a plain bsp_sync that saves nothing
 * (and no run is a restart), and the run is labelled with the library's name
 * (BSPKIT_PORTABLE_LIBRARY). Everything else the drivers use (collectives, the maximum over
 * the processes, the calibration) is written on bsp.h and works on either.
 *
 * Drivers do not call the bspalg_library_checkpoint* functions themselves: they protect their
 * state with bspalg_checkpoint_protect (bspalg_driver.h) and end a stage with
 * bspalg_checkpoint_sync (bspalg.h), which count and release what these do.
 */
#ifndef BSPALG_LIBRARY_H
#define BSPALG_LIBRARY_H

#include <bsp.h>
#include <stddef.h>

#ifdef BSPKIT_PORTABLE
#ifndef BSPKIT_PORTABLE_LIBRARY
#define BSPKIT_PORTABLE_LIBRARY "unknown"
#endif
#define BSPALG_BUILD "portable"
#define BSPALG_LIBRARY BSPKIT_PORTABLE_LIBRARY
/* Another library has no notion of bspkit's back ends: the library's label stands for it. */
static inline const char *bspalg_backend(void) { return BSPKIT_PORTABLE_LIBRARY; }
static inline void bspalg_phase(const char *name) { (void)name; }
static inline void bspalg_library_packing_begin(void) {}
static inline void bspalg_library_packing_end(void) {}
static inline int bspalg_library_has_checkpoints(void) { return 0; }
static inline void bspalg_library_protect(void *ptr, size_t bytes) {
  (void)ptr;
  (void)bytes;
}
static inline void bspalg_library_unprotect(void *ptr) { (void)ptr; }
static inline void bspalg_library_scratch(void *ptr, int scratch) {
  (void)ptr;
  (void)scratch;
}
#define bspalg_library_checkpoint() (bsp_sync(), 0)
static inline int bspalg_library_resume(void) { return 0; }
static inline long bspalg_library_superstep(void) { return -1; }
#else
#include <bspkit.h>
#define BSPALG_BUILD "bspkit"
#define BSPALG_LIBRARY "bspkit"
static inline const char *bspalg_backend(void) { return bspk_backend(); }
/* The phase of the superstep profile (BSPKIT_PROFILE) that the next supersteps belong to. */
static inline void bspalg_phase(const char *name) { bspk_profile_phase(name); }
/* Packing in the superstep profile (bspalg_packing_begin, bspalg.h). */
static inline void bspalg_library_packing_begin(void) { bspk_profile_packing_begin(); }
static inline void bspalg_library_packing_end(void) { bspk_profile_packing_end(); }
/* Checkpoint and restart (bspkit.h, docs/checkpoint.md): protect memory, end a superstep with
 * a checkpoint when one is due (1 when it saved), restore the newest checkpoint in a restart
 * (1 when it did), and the superstep count. */
static inline int bspalg_library_has_checkpoints(void) { return 1; }
static inline void bspalg_library_protect(void *ptr, size_t bytes) {
  bspk_checkpoint_protect(ptr, (bsp_size_t)bytes);
}
static inline void bspalg_library_unprotect(void *ptr) { bspk_checkpoint_unprotect(ptr); }
static inline void bspalg_library_scratch(void *ptr, int scratch) {
  bspk_checkpoint_scratch(ptr, scratch);
}
/* a macro: the caller is the sync's site in a superstep profile */
#define bspalg_library_checkpoint() bspk_checkpoint()
static inline int bspalg_library_resume(void) { return bspk_checkpoint_resume(); }
static inline long bspalg_library_superstep(void) { return bspk_superstep(); }
#endif

#endif /* BSPALG_LIBRARY_H */
