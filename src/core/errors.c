/* errors.c - one clear message, then the whole program ends with a non-zero status. */
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "core/internal.h"

static atomic_int dying;

int bspk_claim_dying(void) {
  /* Another thread of this process is already reporting and ending the program: wait. */
  if (atomic_exchange(&dying, 1) != 0)
    for (;;) pause();
  /* Likewise another process of the program (process-based back ends). */
  const bspk_engine_ops *ops = bspk_active_engine();
  if (ops && ops->claim_report) ops->claim_report();
  return 1;
}

void bspk_terminate(int status) {
  fflush(stdout);
  fflush(stderr);
  const bspk_engine_ops *ops = bspk_active_engine();
  if (ops && ops->terminate) ops->terminate(status);
  _exit(status);
}

static void vreport(const char *call, int pid, const char *format, va_list ap) {
  char text[1024];
  vsnprintf(text, sizeof text, format, ap);
  if (pid >= 0)
    fprintf(stderr, "bspkit: error in %s on process %d: %s\n", call, pid, text);
  else
    fprintf(stderr, "bspkit: error in %s: %s\n", call, text);
}

void bspk_fatal(const char *call, const char *format, ...) {
  bspk_claim_dying();
  bspk_proc *self = bspk_self;
  va_list ap;
  va_start(ap, format);
  vreport(call, self ? self->pid : -1, format, ap);
  va_end(ap);
  bspk_terminate(1);
}

void bspk_fatal_outside(const char *call) {
  bspk_claim_dying();
  fprintf(stderr,
          "bspkit: error in %s: called outside the SPMD section (before bsp_begin or after "
          "bsp_end)\n",
          call);
  bspk_terminate(1);
}

BSPK_API void bsp_abort(const char *format, ...) {
  bspk_claim_dying();
  char text[4096];
  va_list ap;
  va_start(ap, format);
  vsnprintf(text, sizeof text, format, ap);
  va_end(ap);
  size_t n = strlen(text);
  while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
  bspk_proc *self = bspk_self;
  if (self)
    fprintf(stderr, "bspkit: bsp_abort on process %d: %s\n", self->pid, text);
  else
    fprintf(stderr, "bspkit: bsp_abort: %s\n", text);
  bspk_terminate(1);
}

void *bspk_xmalloc(bspk_proc *self, size_t n, const char *call, const char *what) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    (void)self;
    bspk_fatal(call, "out of memory: cannot allocate %zu bytes for %s", n, what);
  }
  return p;
}

void *bspk_xrealloc(bspk_proc *self, void *old, size_t n, const char *call, const char *what) {
  void *p = realloc(old, n ? n : 1);
  if (!p) {
    (void)self;
    bspk_fatal(call, "out of memory: cannot grow %s to %zu bytes", what, n);
  }
  return p;
}
