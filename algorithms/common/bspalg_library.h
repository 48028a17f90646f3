/*
 * bspalg_library.h - what the drivers take from their BSPlib beyond bsp.h, in one place.
 *
 * Built with bspkit (the default): bspkit.h's back-end name and profile phases. Built
 * portable (-DBSPKIT_PORTABLE, CMake's BSPKIT_PORTABLE=ON; docs/comparing-libraries.md)
 * against another library's bsp.h, or bspkit's own to test it: no bspkit.h, the phases are
 * no-ops (there is no superstep profile), and the run is labelled with the library's name
 * (BSPKIT_PORTABLE_LIBRARY). Everything else the drivers use (collectives, the maximum over
 * the processes, the calibration) is written on bsp.h and works on either.
 */
#ifndef BSPALG_LIBRARY_H
#define BSPALG_LIBRARY_H

#ifdef BSPKIT_PORTABLE
#ifndef BSPKIT_PORTABLE_LIBRARY
#define BSPKIT_PORTABLE_LIBRARY "unknown"
#endif
#define BSPALG_BUILD "portable"
#define BSPALG_LIBRARY BSPKIT_PORTABLE_LIBRARY
/* Another library has no notion of bspkit's back ends: the library's label stands for it. */
static inline const char *bspalg_backend(void) { return BSPKIT_PORTABLE_LIBRARY; }
static inline void bspalg_phase(const char *name) { (void)name; }
#else
#include <bspkit.h>
#define BSPALG_BUILD "bspkit"
#define BSPALG_LIBRARY "bspkit"
static inline const char *bspalg_backend(void) { return bspk_backend(); }
/* The phase of the superstep profile (BSPKIT_PROFILE) that the next supersteps belong to. */
static inline void bspalg_phase(const char *name) { bspk_profile_phase(name); }
#endif

#endif /* BSPALG_LIBRARY_H */
