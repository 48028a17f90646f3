/* drma_sync.c - direct remote memory access at the sync: gets (all read, then all write),
 * large puts as their own messages, one-sided puts. */
#include <stdlib.h>
#include <string.h>

#include "core/buffers.h"
#include "core/drma_sync.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/records.h"
#include "core/registrations.h"

/* ---- gets at the sync -------------------------------------------------------------------
 * Every get of a superstep reads before any get writes (two processes may swap values with
 * gets, or one get's source may be another's destination), and all before any put lands.
 * A get whose destination lies outside this process' registered areas cannot be another
 * get's source (nor a put's or the next superstep's hpput/hpget's target), so it is read
 * straight into place; the others (BSPK_HAS_GET_INTO_REG) wait in get_stage until every
 * process has read. */

/* How a get's data comes when not in a reply record: one-sided, or as its own message. */
static int is_one_sided(const bspk_get_request *g) { return g->one_sided; }
static int is_alone(const bspk_get_request *g) { return g->alone; }
static inline int moves_by_itself(const bspk_get_request *g) { return g->one_sided || g->alone; }

/* Decides where each get (those `which` selects; NULL: all) lands first; returns the bytes
 * of get_stage so planned, after which the caller may plan more. */
static size_t plan_get_stage(bspk_proc *self, int (*which)(const bspk_get_request *)) {
  size_t need = 0;
  for (int i = 0; i < self->ngets; i++) {
    bspk_get_request *g = &self->gets[i];
    g->stage_at = -1;
    if ((which && !which(g)) || !g->into_registered) continue;
    g->stage_at = (ptrdiff_t)need;
    need += (size_t)g->nbytes;
  }
  BSPK_GROW(self, self->get_stage, self->get_stage_cap, need, 4096, "bsp_sync", "the data of gets");
  return need;
}

static inline char *get_landing(const bspk_proc *self, const bspk_get_request *g) {
  return g->stage_at < 0 ? g->dst : self->get_stage + g->stage_at;
}

/* After every process has read: staged data to its destinations, in request order. */
static void unstage_gets(const bspk_proc *self) {
  for (int i = 0; i < self->ngets; i++) {
    const bspk_get_request *g = &self->gets[i];
    if (g->stage_at >= 0) memcpy(g->dst, self->get_stage + g->stage_at, (size_t)g->nbytes);
  }
}

/* A growable list of messages for transfer(). */
typedef struct transfer_list {
  bspk_transfer *items;
  int n;
  size_t cap;
} transfer_list;

static void add_transfer(bspk_proc *self, transfer_list *list, int pid, char *data, size_t nbytes) {
  BSPK_GROW(self, list->items, list->cap, (size_t)list->n + 1, 16, "bsp_sync",
            "the list of large gets");
  list->items[list->n++] = (bspk_transfer){pid, data, nbytes};
}

/* Without direct access: answer the get requests in src's block from this process' memory
 * (before any put of the superstep lands here), in request order: the small ones copied into
 * the reply block (so that the requester may write them as soon as they arrive), the large
 * ones listed in `alone` to be sent from where they lie. */
static void answer_gets(bspk_proc *self, int src, const bspk_outbox *block, transfer_list *alone) {
  bspk_outbox *reply = &self->replies[src];
  const char *p = block->data, *end = block->data + block->len;
  while (p < end) {
    const bspk_record *rec = (const bspk_record *)p;
    char *area = rec->kind == BSPK_REC_GET || rec->kind == BSPK_REC_GET_LARGE
                     ? self->slots[rec->slot].addr + rec->offset
                     : NULL;
    if (rec->kind == BSPK_REC_GET) {
      char *q = bspk_outbox_reserve(self, reply, sizeof *rec + bspk_pad8((size_t)rec->nbytes),
                                    "bsp_sync");
      *(bspk_record *)q = (bspk_record){BSPK_REC_REPLY, rec->slot, rec->offset, rec->nbytes};
      memcpy(q + sizeof *rec, area, (size_t)rec->nbytes);
    } else if (rec->kind == BSPK_REC_GET_LARGE) {
      add_transfer(self, alone, src, area, (size_t)rec->nbytes);
    }
    p += bspk_record_size(rec);
  }
}

/* Copies the answers to this process' get requests, which come back in request order. */
static void take_replies(bspk_proc *self, const bspk_outbox *replies) {
  const char *cursor[self->nprocs];
  for (int q = 0; q < self->nprocs; q++) cursor[q] = replies[q].len ? replies[q].data : NULL;
  for (int i = 0; i < self->ngets; i++) {
    const bspk_get_request *g = &self->gets[i];
    if (moves_by_itself(g)) continue;
    const bspk_record *rec = (const bspk_record *)cursor[g->pid];
    if (!rec || rec->kind != BSPK_REC_REPLY || rec->nbytes != g->nbytes)
      bspk_fatal("bsp_sync", "internal error: get reply from process %d does not match", g->pid);
    memcpy(g->dst, (const char *)rec + sizeof *rec, (size_t)g->nbytes);
    cursor[g->pid] += sizeof *rec + bspk_pad8((size_t)g->nbytes);
  }
  for (int q = 0; q < self->nprocs; q++) self->replies[q].len = 0;
}

/* Engines with transfer(): the reply blocks and the large gets' data in one round of
 * messages, without a round of headers first: each process knows what it will receive (the
 * replies to its own requests) as well as what it sends. Between a pair, the owner sends its
 * large answers in request order and then the reply block; the requester receives them in
 * that order. A large get lands in place, or in get_stage when its destination is
 * registered (another process may read there in this same round). */
static void move_replies(bspk_proc *self, transfer_list *sends) {
  const int p = self->nprocs;
  for (int q = 0; q < p; q++)
    if (q != self->pid && self->replies[q].len)
      add_transfer(self, sends, q, self->replies[q].data, self->replies[q].len);
  /* The replies this process expects from each owner, in get_stage after the staged gets. */
  size_t staged = plan_get_stage(self, is_alone), need = staged;
  size_t *expected =
      bspk_xmalloc(self, (size_t)p * sizeof *expected, "bsp_sync", "the get replies");
  memset(expected, 0, (size_t)p * sizeof *expected);
  for (int i = 0; i < self->ngets; i++) {
    const bspk_get_request *g = &self->gets[i];
    if (!moves_by_itself(g) && g->pid != self->pid) {
      expected[g->pid] += sizeof(bspk_record) + bspk_pad8((size_t)g->nbytes);
      need += sizeof(bspk_record) + bspk_pad8((size_t)g->nbytes);
    }
  }
  BSPK_GROW(self, self->get_stage, self->get_stage_cap, need, 4096, "bsp_sync", "the data of gets");
  transfer_list recvs = {0};
  for (int i = 0; i < self->ngets; i++) {
    const bspk_get_request *g = &self->gets[i];
    if (g->alone) add_transfer(self, &recvs, g->pid, get_landing(self, g), (size_t)g->nbytes);
  }
  bspk_outbox *views = bspk_xmalloc(self, (size_t)p * sizeof *views, "bsp_sync", "the get replies");
  memset(views, 0, (size_t)p * sizeof *views);
  size_t at = staged;
  for (int q = 0; q < p; q++) {
    if (q == self->pid) { /* a process' answers to itself never leave it */
      views[q] = self->replies[q];
    } else if (expected[q]) {
      views[q].data = self->get_stage + at;
      views[q].len = expected[q];
      add_transfer(self, &recvs, q, views[q].data, expected[q]);
      at += expected[q];
    }
  }
  if (sends->n || recvs.n)
    self->ops->transfer(self->engine, sends->items, sends->n, recvs.items, recvs.n);
  take_replies(self, views);
  unstage_gets(self);
  BSPK_FREE_ALL(expected, views, recvs.items);
}

/* The get phase of a sync (flags: ORed over all processes; every process takes part in
 * the same collective steps). */
void bspk_fetch_gets(bspk_proc *self, unsigned flags) {
  const bspk_engine_ops *ops = self->ops;
  if (ops->direct_access) {
    plan_get_stage(self, NULL);
    for (int i = 0; i < self->ngets; i++) {
      const bspk_get_request *g = &self->gets[i];
      memcpy(get_landing(self, g), bspk_remote_address(self, g->slot, g->pid, g->offset),
             (size_t)g->nbytes);
    }
    ops->barrier(self->engine); /* every process has read */
    unstage_gets(self);
  } else {
    /* Owners answer requests from their memory: small ones into reply blocks, large ones
     * listed to be sent from where they lie. */
    transfer_list sends = {0};
    if (flags & BSPK_HAS_GET_RECORD)
      for (int q = 0; q < self->nprocs; q++) {
        const bspk_outbox *block = ops->incoming(self->engine, q);
        if (block->n_get) answer_gets(self, q, block, &sends);
      }
    if (ops->rma_get) {
      plan_get_stage(self, is_one_sided);
      for (int i = 0; i < self->ngets; i++) {
        const bspk_get_request *g = &self->gets[i];
        if (g->one_sided)
          ops->rma_get(self->engine, g->pid, g->slot, g->offset, get_landing(self, g), g->nbytes);
      }
      ops->rma_complete(self->engine); /* ends with a barrier: every process has read */
      unstage_gets(self);
    }
    if (flags & BSPK_HAS_GET_RECORD) {
      if (ops->transfer) move_replies(self, &sends);
      else take_replies(self, ops->exchange(self->engine, self->replies));
    }
    free(sends.items);
  }
  self->ngets = 0;
}

/* ---- puts in a superstep with large puts (two-sided engines) ------------------------------
 * Puts must land in one order: the sources in pid order, each source's in issue order (the
 * later put wins where they overlap). Small puts travel inline in the sources' blocks, large
 * ones as messages of their own after the blocks. So in a superstep with large puts the
 * receiver first lists every put in that order; when no large put overlaps another put, the
 * small ones are written at once and the large ones received in place; otherwise every large
 * one is received into a buffer of its own and all puts are written in the list's order. */

static void add_landing(bspk_proc *self, char *dest, const char *payload, size_t nbytes,
                        int large) {
  BSPK_GROW(self, self->landings, self->landings_cap, (size_t)self->nlandings + 1, 64, "bsp_sync",
            "the list of puts");
  self->landings[self->nlandings++] = (struct bspk_landing){dest, payload, nbytes, large};
}

/* Receiver: a put whose data is in the source's block. */
void bspk_expect_put(bspk_proc *self, const bspk_record *rec, const char *payload) {
  add_landing(self, self->slots[rec->slot].addr + rec->offset, payload, (size_t)rec->nbytes, -1);
}

/* Receiver: the data of a large put from src comes as its own message. */
void bspk_expect_large_put(bspk_proc *self, int src, const bspk_record *rec) {
  BSPK_GROW(self, self->large_recvs, self->large_recvs_cap, self->nlarge_recvs + 1, 16, "bsp_sync",
            "the list of large puts");
  char *dest = self->slots[rec->slot].addr + rec->offset;
  self->large_recvs[self->nlarge_recvs] = (bspk_transfer){src, dest, (size_t)rec->nbytes};
  add_landing(self, dest, NULL, (size_t)rec->nbytes, self->nlarge_recvs++);
}

static int by_address(const void *a, const void *b) {
  const struct bspk_landing *x = *(const struct bspk_landing *const *)a;
  const struct bspk_landing *y = *(const struct bspk_landing *const *)b;
  if (x->dest != y->dest) return x->dest < y->dest ? -1 : 1;
  return x < y ? -1 : x > y; /* the list's order */
}

/* Whether a large put overlaps any other put (empty ones overlap nothing). One sweep in
 * address order, O(n log n) (a radix sort issues a put per digit value and owner: 10^5 in
 * one superstep): a put overlaps an earlier one exactly when it starts before the furthest end
 * of those; a small one overlaps a large one when it starts before the furthest large end. */
static int large_put_overlaps(bspk_proc *self) {
  int n = self->nlandings, m = 0;
  const struct bspk_landing **order =
      bspk_xmalloc(self, (size_t)n * sizeof *order + 1, "bsp_sync", "the list of puts");
  for (int i = 0; i < n; i++)
    if (self->landings[i].nbytes > 0) order[m++] = &self->landings[i];
  qsort(order, (size_t)m, sizeof *order, by_address);
  const char *end_any = NULL, *end_large = NULL; /* the furthest ends so far */
  int found = 0;
  for (int k = 0; k < m && !found; k++) {
    const struct bspk_landing *l = order[k];
    const char *limit = l->large >= 0 ? end_any : end_large;
    found = limit && l->dest < limit;
    const char *end = l->dest + l->nbytes;
    if (!end_any || end > end_any) end_any = end;
    if (l->large >= 0 && (!end_large || end > end_large)) end_large = end;
  }
  free(order);
  return found;
}

/* After every block of the superstep was read (bspk_expect_put, bspk_expect_large_put):
 * moves the large puts and writes all puts in their order. */
void bspk_land_puts_with_large(bspk_proc *self) {
  int ns = self->nlarge_sends, nr = self->nlarge_recvs;
  bspk_transfer *sends =
      bspk_xmalloc(self, (size_t)(ns + 1) * sizeof *sends, "bsp_sync", "the list of large puts");
  for (int i = 0; i < ns; i++) {
    const struct bspk_large_send *ls = &self->large_sends[i];
    sends[i] = (bspk_transfer){
        ls->pid, ls->ref ? (char *)ls->ref : self->large_copies + ls->copy_at, (size_t)ls->nbytes};
  }
  bspk_transfer *recvs = self->large_recvs;
  int in_place = !large_put_overlaps(self);
  if (in_place) { /* no large put meets another put: the order cannot show */
    for (int i = 0; i < self->nlandings; i++) {
      const struct bspk_landing *l = &self->landings[i];
      if (l->large < 0) memcpy(l->dest, l->payload, l->nbytes);
    }
  } else {
    for (int i = 0; i < nr; i++)
      recvs[i].data = bspk_xmalloc(self, recvs[i].nbytes + 1, "bsp_sync", "a large put");
  }
  self->ops->transfer(self->engine, sends, ns, recvs, nr);
  if (!in_place) {
    for (int i = 0; i < self->nlandings; i++) {
      const struct bspk_landing *l = &self->landings[i];
      memcpy(l->dest, l->large < 0 ? l->payload : recvs[l->large].data, l->nbytes);
    }
    for (int i = 0; i < nr; i++) free(recvs[i].data);
  }
  free(sends);
  self->nlarge_sends = self->nlarge_recvs = self->nlandings = 0;
  self->large_copies_len = 0;
}

/* One-sided engines: start every buffered put, in issue order per destination. */
void bspk_start_rma_puts(bspk_proc *self) {
  for (int q = 0; q < self->nprocs; q++) {
    bspk_outbox *ob = &self->rma_puts[q];
    for (const char *p = ob->data, *end = ob->data + ob->len; p < end;) {
      const bspk_record *rec = (const bspk_record *)p;
      self->ops->rma_put(self->engine, q, rec->slot, rec->offset, p + sizeof *rec, rec->nbytes);
      p += bspk_record_size(rec);
    }
  }
}

/* After rma_complete: the buffers may be reused. */
void bspk_reset_rma_puts(bspk_proc *self) {
  for (int q = 0; q < self->nprocs; q++) {
    self->rma_puts[q].len = 0;
    self->rma_puts[q].n_put = 0;
  }
}
