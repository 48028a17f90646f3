/* abort.c - bsp_abort: the program itself ends every process with its own message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bsp.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "mcbsp.h" /* bsp_vabort */

/* MulticoreBSP's bsp_abort with a va_list (declared in mcbsp.h), and what bsp_abort does. */
BSPK_API void bsp_vabort(const char *format, va_list ap) {
  bspk_claim_dying();
  char text[4096];
  vsnprintf(text, sizeof text, format, ap);
  size_t n = strlen(text);
  while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
  bspk_proc *self = bspk_self;
  if (self) {
    char where[256];
    bspk_describe_process(where, sizeof where, self->pid);
    fprintf(stderr, "bspkit: bsp_abort on %s: %s\n", where, text);
  } else {
    fprintf(stderr, "bspkit: bsp_abort: %s\n", text);
  }
  bspk_terminate(1);
}

BSPK_API void bsp_abort(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  bsp_vabort(format, ap);
}
