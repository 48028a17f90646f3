/* buffers.c - memory the library allocates: every failure is a clear "out of memory"
 * error naming the call and what was being allocated. */
#include <stdlib.h>

#include "core/buffers.h"
#include "core/errors.h"

void *bspk_xmalloc(struct bspk_proc *self, size_t n, const char *call, const char *what) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    (void)self;
    bspk_fatal(call, "out of memory: cannot allocate %zu bytes for %s", n, what);
  }
  return p;
}

void *bspk_xrealloc(struct bspk_proc *self, void *old, size_t n, const char *call,
                    const char *what) {
  void *p = realloc(old, n ? n : 1);
  if (!p) {
    (void)self;
    bspk_fatal(call, "out of memory: cannot grow %s to %zu bytes", what, n);
  }
  return p;
}

void *bspk_grow(struct bspk_proc *self, void *array, size_t *cap, size_t need, size_t elem_size,
                size_t first, const char *call, const char *what) {
  if (need <= *cap) return array;
  size_t n = *cap ? 2 * *cap : first;
  while (n < need) n *= 2;
  array = bspk_xrealloc(self, array, n * elem_size, call, what);
  *cap = n;
  return array;
}

void bspk_free_each(void *const *pointers, size_t n) {
  for (size_t i = 0; i < n; i++) free(pointers[i]);
}

void bspk_outbox_grow(struct bspk_proc *self, bspk_outbox *ob, size_t need, const char *call) {
  BSPK_GROW(self, ob->data, ob->cap, ob->len + need, BSPK_OUTBOX_FIRST_BYTES, call,
            "the communication buffer");
}
