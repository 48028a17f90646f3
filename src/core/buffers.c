/* buffers.c - memory the library allocates: every failure is a clear "out of memory"
 * error naming the call and what was being allocated. */
#include <stdlib.h>
#include <string.h>

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
  if (ob->engine_memory) { /* the engine's area is full: go on in memory of our own */
    size_t cap = 2 * ob->cap;
    while (cap < ob->len + need) cap *= 2;
    char *mine = bspk_xmalloc(self, cap, call, "the communication buffer");
    memcpy(mine, ob->data, ob->len);
    ob->data = mine;
    ob->cap = cap;
    ob->engine_memory = 0;
    return;
  }
  BSPK_GROW(self, ob->data, ob->cap, ob->len + need, BSPK_OUTBOX_FIRST_BYTES, call,
            "the communication buffer");
}
