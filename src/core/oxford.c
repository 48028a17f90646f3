/* oxford.c - the Oxford BSP toolset's older names (declared in bsp.h): the same calls under
 * the names the program used, so that errors name them. In a file of their own so that a
 * program with its own function of one of these names links against the static libbsp.a
 * without a duplicate definition (this object is then not pulled in). */
#include "bsp.h"
#include "core/bsmp.h"
#include "core/compiler.h"
#include "core/registrations.h"

BSPK_API void bsp_pushregister(const void *ident, bsp_size_t size) {
  bspk_push_reg(ident, size, "bsp_pushregister");
}

BSPK_API void bsp_popregister(const void *ident) { bspk_pop_reg(ident, "bsp_popregister"); }

BSPK_API void bsp_set_tag_size(bsp_size_t *tag_nbytes) {
  bspk_set_tagsize(tag_nbytes, "bsp_set_tag_size");
}

BSPK_API void bsp_bsmp_info(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes) {
  bspk_qsize(nmessages, accum_nbytes, "bsp_bsmp_info");
}
