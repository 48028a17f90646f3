/*
 * buffers.h - memory the library allocates: every failure is a clear "out of memory" error
 * naming the call and what was being allocated; growable arrays; the combined blocks
 * (outboxes) a process writes its records into.
 */
#ifndef BSPKIT_BUFFERS_H
#define BSPKIT_BUFFERS_H

#include <stddef.h>

#include "core/compiler.h"
#include "core/engine.h" /* bspk_outbox */

struct bspk_proc; /* the process that allocates (proc.h) */

void *bspk_xmalloc(struct bspk_proc *self, size_t n, const char *call, const char *what);
void *bspk_xrealloc(struct bspk_proc *self, void *p, size_t n, const char *call, const char *what);
/* Room for `need` elements in a growable array (capacity *cap, doubled, from `first`). */
void *bspk_grow(struct bspk_proc *self, void *array, size_t *cap, size_t need, size_t elem_size,
                size_t first, const char *call, const char *what);
#define BSPK_GROW(self, array, cap, need, first, call, what)                                      \
  ((array) = bspk_grow((self), (array), &(cap), (size_t)(need), sizeof *(array), (first), (call), \
                       (what)))
/* free() each of a list of pointers: BSPK_FREE_ALL(self->a, self->b, ...). */
void bspk_free_each(void *const *pointers, size_t n);
#define BSPK_FREE_ALL(...)                     \
  bspk_free_each((void *const[]){__VA_ARGS__}, \
                 sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* An outbox's first capacity. One per peer and kept between supersteps, so a superstep in
 * which every process writes to every other holds p^2 of them: small, and grown by doubling
 * (measured: 4096 made p = 2000 threads take 17 GB after one all-to-all). */
#define BSPK_OUTBOX_FIRST_BYTES 256
void bspk_outbox_grow(struct bspk_proc *self, bspk_outbox *ob, size_t need, const char *call);
static inline char *bspk_outbox_reserve(struct bspk_proc *self, bspk_outbox *ob, size_t n,
                                        const char *call) {
  if (BSPK_UNLIKELY(ob->cap - ob->len < n)) bspk_outbox_grow(self, ob, n, call);
  char *p = ob->data + ob->len;
  ob->len += n;
  return p;
}
/* An outbox emptied for another superstep (its buffer kept). */
static inline void bspk_outbox_clear(bspk_outbox *ob) {
  ob->len = 0;
  ob->n_put = ob->n_send = ob->n_coll = ob->n_get = 0;
  ob->send_bytes = 0;
}

#endif
