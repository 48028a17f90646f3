/*
 * bspkit_binding.h - libbsp for language bindings (bspkit.bsp, the Python module).
 *
 * A binding cannot let a usage error end the program from inside a call: it raises the
 * error in its own language. Each bspk_try_* function makes one BSPlib call and returns 0,
 * or -1 when the call was refused (a bad pid, an area that is not registered, a put past
 * the end of one, a call outside the SPMD section): then nothing was done, and
 * bspk_binding_error() gives the line the library would have printed. Calls that fail at
 * a sync (bsp_sync, bsp_end, the collectives, checkpoints) are not wrapped: their errors
 * end the run as in C.
 */
#ifndef BSPKIT_BINDING_H
#define BSPKIT_BINDING_H

#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message of this thread's latest refused call ("bspkit: error in bsp_put on process
 * 1: ..."). */
const char *bspk_binding_error(void);
/* Reports line (the binding's uncaught error) as the run's one error line and ends every
 * process with status 1. */
void bspk_binding_fail(const char *line) BSPKIT_NORETURN;

int bspk_try_begin(bsp_pid_t maxprocs);
int bspk_try_pid(bsp_pid_t *pid);
int bspk_try_time(double *seconds);
int bspk_try_push_reg(const void *ident, bsp_size_t size);
int bspk_try_pop_reg(const void *ident);
int bspk_try_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes);
int bspk_try_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes);
int bspk_try_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes);
int bspk_try_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes);
int bspk_try_set_tagsize(bsp_size_t *tag_nbytes);
int bspk_try_send(bsp_pid_t pid, const void *tag, const void *payload, bsp_size_t nbytes);
int bspk_try_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes);
int bspk_try_get_tag(bsp_size_t *status, void *tag);
int bspk_try_move(void *payload, bsp_size_t reception_nbytes);
int bspk_try_profile_phase(const char *name);
int bspk_try_profile_packing(int begin);
int bspk_try_checkpoint_protect(void *addr, bsp_size_t nbytes);
int bspk_try_checkpoint_unprotect(void *addr);
int bspk_try_checkpoint_scratch(void *addr, int scratch);

#ifdef __cplusplus
}
#endif

#endif
