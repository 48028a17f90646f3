/* bindings.c - libbsp for language bindings (bspkit_binding.h): each wrapper makes its call
 * under a trap (errors.h), so that a refused call returns -1 instead of ending the run. */
#include "bspkit_binding.h"

#include <stdio.h>
#include <stdlib.h>

#include "bspkit.h"
#include "core/compiler.h"
#include "core/errors.h"

/* On the heap, made at a thread's first refused call: a thread-local array would grow
 * libbsp's static TLS (bspk_self is initial-exec), and dlopen (Python's ctypes) fails with
 * "cannot allocate memory in static TLS block" when that exceeds glibc's small reserve. */
static _Thread_local char *last_error;

static void keep_error(const char *message) {
  if (!last_error) last_error = malloc(sizeof(((bspk_trap *)0)->message));
  if (last_error) snprintf(last_error, sizeof(((bspk_trap *)0)->message), "%s", message);
}

/* The call, under a trap: 0, or -1 with its message kept. */
#define BSPK_TRY(call)          \
  do {                          \
    bspk_trap trap;             \
    if (setjmp(trap.env)) {     \
      keep_error(trap.message); \
      return -1;                \
    }                           \
    bspk_trap_arm(&trap);       \
    call;                       \
    bspk_trap_disarm();         \
    return 0;                   \
  } while (0)

BSPK_API const char *bspk_binding_error(void) {
  return last_error ? last_error : ""; /* none yet, or no memory to keep it */
}

BSPK_API void bspk_binding_fail(const char *line) {
  bspk_claim_dying();
  fprintf(stderr, "%s\n", line);
  bspk_terminate(1);
}

BSPK_API int bspk_try_begin(bsp_pid_t maxprocs) { BSPK_TRY(bsp_begin(maxprocs)); }
BSPK_API int bspk_try_pid(bsp_pid_t *pid) { BSPK_TRY(*pid = bsp_pid()); }
BSPK_API int bspk_try_time(double *seconds) { BSPK_TRY(*seconds = bsp_time()); }
BSPK_API int bspk_try_push_reg(const void *ident, bsp_size_t size) {
  BSPK_TRY(bsp_push_reg(ident, size));
}
BSPK_API int bspk_try_pop_reg(const void *ident) { BSPK_TRY(bsp_pop_reg(ident)); }
BSPK_API int bspk_try_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
                          bsp_size_t nbytes) {
  BSPK_TRY(bsp_put(pid, src, dst, offset, nbytes));
}
BSPK_API int bspk_try_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
                            bsp_size_t nbytes) {
  BSPK_TRY(bsp_hpput(pid, src, dst, offset, nbytes));
}
BSPK_API int bspk_try_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                          bsp_size_t nbytes) {
  BSPK_TRY(bsp_get(pid, src, offset, dst, nbytes));
}
BSPK_API int bspk_try_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
                            bsp_size_t nbytes) {
  BSPK_TRY(bsp_hpget(pid, src, offset, dst, nbytes));
}
BSPK_API int bspk_try_set_tagsize(bsp_size_t *tag_nbytes) { BSPK_TRY(bsp_set_tagsize(tag_nbytes)); }
BSPK_API int bspk_try_send(bsp_pid_t pid, const void *tag, const void *payload, bsp_size_t nbytes) {
  BSPK_TRY(bsp_send(pid, tag, payload, nbytes));
}
BSPK_API int bspk_try_qsize(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes) {
  BSPK_TRY(bsp_qsize(nmessages, accum_nbytes));
}
BSPK_API int bspk_try_get_tag(bsp_size_t *status, void *tag) { BSPK_TRY(bsp_get_tag(status, tag)); }
BSPK_API int bspk_try_move(void *payload, bsp_size_t reception_nbytes) {
  BSPK_TRY(bsp_move(payload, reception_nbytes));
}
BSPK_API int bspk_try_profile_phase(const char *name) { BSPK_TRY(bspk_profile_phase(name)); }
BSPK_API int bspk_try_profile_packing(int begin) {
  BSPK_TRY(begin ? bspk_profile_packing_begin() : bspk_profile_packing_end());
}
BSPK_API int bspk_try_checkpoint_protect(void *addr, bsp_size_t nbytes) {
  BSPK_TRY(bspk_checkpoint_protect(addr, nbytes));
}
BSPK_API int bspk_try_checkpoint_unprotect(void *addr) {
  BSPK_TRY(bspk_checkpoint_unprotect(addr));
}
BSPK_API int bspk_try_checkpoint_scratch(void *addr, int scratch) {
  BSPK_TRY(bspk_checkpoint_scratch(addr, scratch));
}
