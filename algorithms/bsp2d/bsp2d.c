/*
 * bsp2d.c - BSP2D over bsp.h (bsp2d.h says what each part does and why).
 */
#include "bsp2d.h"

#include <bsp.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The tag of every message BSP2D sends: who sent it, its place among the sender's messages to
 * this destination in the superstep, and whose it is (0: the user's, else a collective's). */
typedef struct {
  int32_t src, seq, channel;
} message_tag;

typedef struct {
  void *ptr;
  size_t bytes;
  int used;      /* handed out and not released */
  int releasing; /* released in this superstep: free after the next sync */
} managed_buffer;

typedef enum { OP_BCAST, OP_ALLREDUCE } op_kind;

/* A collective under way. */
typedef struct {
  op_kind kind;
  bsp2d_scope scope;
  int phases_left; /* bsp2d_syncs still needed */
  int channel;     /* its messages' channel (allreduce) */
  int root;
  unsigned char *buf;
  size_t bytes;
  bsp2d_op op;
  long count;
} collective;

typedef struct {
  int src, seq, channel;
  const void *payload;
  size_t bytes;
} received_message;

enum { MAX_COLLECTIVES = 64 };

struct bsp2d_grid {
  int rows, cols, s, t, pid, p;
  bsp2d_hooks hooks;
  managed_buffer *buffers;
  int nbuffers, buffers_cap;
  long buffer_syncs;
  collective ops[MAX_COLLECTIVES];
  int nops;
  int next_channel;
  int *sent_to;               /* messages sent to each process in this superstep */
  received_message *messages; /* this superstep's, by (source, sequence number) */
  int nmessages, messages_cap;
  int *user_first, *user_count; /* per source: the user's messages among them */
  received_message *user_messages;
};

/* ------------------------------------------------------------------ grid */

bsp2d_grid *bsp2d_grid_create(int rows, int cols, const bsp2d_hooks *hooks) {
  int p = bsp_nprocs();
  if (rows < 1 || cols < 1 || (long)rows * cols != p)
    bsp_abort("bsp2d_grid_create: a %d x %d grid needs %ld processes, but there are %d\n", rows,
              cols, (long)rows * cols, p);
  bsp2d_grid *g = calloc(1, sizeof *g);
  if (!g) bsp_abort("bsp2d_grid_create: out of memory\n");
  g->rows = rows;
  g->cols = cols;
  g->p = p;
  g->pid = bsp_pid();
  g->s = g->pid / cols;
  g->t = g->pid % cols;
  if (hooks) g->hooks = *hooks;
  g->sent_to = calloc((size_t)p, sizeof *g->sent_to);
  g->user_first = calloc((size_t)p, sizeof *g->user_first);
  g->user_count = calloc((size_t)p, sizeof *g->user_count);
  if (!g->sent_to || !g->user_first || !g->user_count)
    bsp_abort("bsp2d_grid_create: out of memory\n");
  int tag_bytes = (int)sizeof(message_tag);
  bsp_set_tagsize(&tag_bytes);
  bsp_sync(); /* the tag size takes effect: messages can be sent from here on */
  return g;
}

void bsp2d_grid_destroy(bsp2d_grid *g) {
  if (!g) return;
  for (int b = 0; b < g->nbuffers; b++) {
    bsp_pop_reg(g->buffers[b].ptr);
  }
  bsp_sync(); /* the pops take effect before the memory goes */
  for (int b = 0; b < g->nbuffers; b++) free(g->buffers[b].ptr);
  free(g->buffers);
  free(g->sent_to);
  free(g->messages);
  free(g->user_messages);
  free(g->user_first);
  free(g->user_count);
  free(g);
}

int bsp2d_rows(const bsp2d_grid *g) { return g->rows; }
int bsp2d_cols(const bsp2d_grid *g) { return g->cols; }
int bsp2d_my_row(const bsp2d_grid *g) { return g->s; }
int bsp2d_my_col(const bsp2d_grid *g) { return g->t; }
int bsp2d_pid_of(const bsp2d_grid *g, int s, int t) { return s * g->cols + t; }

int bsp2d_scope_size(const bsp2d_grid *g, bsp2d_scope scope) {
  return scope == BSP2D_ROW ? g->cols : scope == BSP2D_COL ? g->rows : g->p;
}

int bsp2d_scope_rank(const bsp2d_grid *g, bsp2d_scope scope) {
  return scope == BSP2D_ROW ? g->t : scope == BSP2D_COL ? g->s : g->pid;
}

int bsp2d_scope_pid(const bsp2d_grid *g, bsp2d_scope scope, int r) {
  return scope == BSP2D_ROW   ? bsp2d_pid_of(g, g->s, r)
         : scope == BSP2D_COL ? bsp2d_pid_of(g, r, g->t)
                              : r;
}

/* ------------------------------------------------------------------ distribution */

long bsp2d_local_count(bsp2d_map m, int c) {
  long blocks = m.n / m.nb, extra = m.n % m.nb; /* full blocks, and the last one's size */
  long count = blocks / m.nprocs * m.nb;
  long rest = blocks % m.nprocs; /* coordinates 0 .. rest - 1 hold one more full block */
  if (c < rest) count += m.nb;
  else if (c == rest) count += extra;
  return count;
}

int bsp2d_owner(bsp2d_map m, long i) { return (int)(i / m.nb % m.nprocs); }

long bsp2d_to_local(bsp2d_map m, long i) { return i / ((long)m.nb * m.nprocs) * m.nb + i % m.nb; }

long bsp2d_to_global(bsp2d_map m, int c, long li) {
  return (li / m.nb * m.nprocs + c) * m.nb + li % m.nb;
}

long bsp2d_local_before(bsp2d_map m, int c, long i) {
  long cycle = (long)m.nb * m.nprocs;
  long count = i / cycle * m.nb, within = i % cycle - (long)c * m.nb; /* into c's block */
  if (within > 0) count += within < m.nb ? within : m.nb;
  return count;
}

/* ------------------------------------------------------------------ buffer manager */

static void add_buffer(bsp2d_grid *g, size_t bytes) {
  if (g->nbuffers == g->buffers_cap) {
    g->buffers_cap = g->buffers_cap ? 2 * g->buffers_cap : 8;
    g->buffers = realloc(g->buffers, (size_t)g->buffers_cap * sizeof *g->buffers);
    if (!g->buffers) bsp_abort("bsp2d: out of memory for the buffer list\n");
  }
  if (bytes > INT_MAX)
    bsp_abort("bsp2d: a buffer of %zu bytes is over BSPlib's registration limit (%d)\n", bytes,
              INT_MAX);
  void *ptr = calloc(bytes ? bytes : 1, 1);
  if (!ptr) bsp_abort("bsp2d: out of memory for a buffer of %zu bytes\n", bytes);
  if (g->hooks.on_buffer) g->hooks.on_buffer(g->hooks.ctx, ptr, bytes ? bytes : 1);
  bsp_push_reg(ptr, (int)bytes);
  g->buffers[g->nbuffers++] = (managed_buffer){.ptr = ptr, .bytes = bytes};
}

void bsp2d_buffers_reserve(bsp2d_grid *g, const size_t *bytes, int count) {
  for (int i = 0; i < count; i++) add_buffer(g, bytes[i]);
}

void *bsp2d_buffer_get(bsp2d_grid *g, size_t bytes) {
  int best = -1;
  for (int b = 0; b < g->nbuffers; b++) {
    const managed_buffer *mb = &g->buffers[b];
    if (!mb->used && mb->bytes >= bytes && (best < 0 || mb->bytes < g->buffers[best].bytes))
      best = b;
  }
  if (best < 0) { /* a new one: its registration needs a sync before anyone puts into it */
    add_buffer(g, bytes);
    best = g->nbuffers - 1;
    g->buffer_syncs++;
    bsp2d_sync(g);
  }
  g->buffers[best].used = 1;
  return g->buffers[best].ptr;
}

void bsp2d_buffer_release(bsp2d_grid *g, void *buf) {
  for (int b = 0; b < g->nbuffers; b++)
    if (g->buffers[b].ptr == buf) {
      if (!g->buffers[b].used || g->buffers[b].releasing)
        bsp_abort("bsp2d_buffer_release: buffer %p is not in use\n", buf);
      /* with one process nobody else can put into it: free at once (no sync may come) */
      if (g->p == 1) g->buffers[b].used = 0;
      else g->buffers[b].releasing = 1;
      return;
    }
  bsp_abort("bsp2d_buffer_release: %p is not a buffer of the manager\n", buf);
}

int bsp2d_buffer_index(const bsp2d_grid *g, const void *buf) {
  for (int b = 0; b < g->nbuffers; b++)
    if (g->buffers[b].ptr == buf) return b;
  return -1;
}

void *bsp2d_buffer_at(const bsp2d_grid *g, int index) {
  return index >= 0 && index < g->nbuffers ? g->buffers[index].ptr : NULL;
}

void *bsp2d_buffer_take(bsp2d_grid *g, int index) {
  if (index < 0 || index >= g->nbuffers)
    bsp_abort("bsp2d_buffer_take: there is no buffer %d (the manager has %d)\n", index,
              g->nbuffers);
  if (g->buffers[index].used) bsp_abort("bsp2d_buffer_take: buffer %d is in use\n", index);
  g->buffers[index].used = 1;
  return g->buffers[index].ptr;
}

int bsp2d_buffer_count(const bsp2d_grid *g) { return g->nbuffers; }
long bsp2d_buffer_syncs(const bsp2d_grid *g) { return g->buffer_syncs; }

/* ------------------------------------------------------------------ requests */

static void count_send(bsp2d_grid *g, int dest, size_t bytes) {
  if (dest != g->pid && g->hooks.on_send) g->hooks.on_send(g->hooks.ctx, dest, bytes);
}

static void put_bytes(bsp2d_grid *g, int dest, const void *src, void *dst_base, size_t offset,
                      size_t bytes) {
  if (bytes == 0 || dest == g->pid) return;
  bsp_hpput(dest, src, dst_base, (int)offset, (int)bytes);
  count_send(g, dest, bytes);
}

static void send_tagged(bsp2d_grid *g, int dest, int channel, const void *payload, size_t bytes) {
  if (bytes > INT_MAX)
    bsp_abort("bsp2d_send: a message of %zu bytes is over BSPlib's limit (%d)\n", bytes, INT_MAX);
  message_tag tag = {.src = g->pid, .seq = g->sent_to[dest]++, .channel = channel};
  bsp_send(dest, &tag, payload, (int)bytes);
  count_send(g, dest, bytes);
}

void bsp2d_send(bsp2d_grid *g, int dest, const void *payload, size_t bytes) {
  if (dest < 0 || dest >= g->p)
    bsp_abort("bsp2d_send: destination %d is not a process (0 .. %d)\n", dest, g->p - 1);
  send_tagged(g, dest, 0, payload, bytes);
}

/* After a sync: every message of the queue, placed by (source, sequence number) in linear time
 * (a source's sequence numbers are 0 .. its count - 1), and the user's ones apart. */
static void index_messages(bsp2d_grid *g) {
  int queued = 0;
  bsp_size_t queued_bytes = 0;
  bsp_qsize(&queued, &queued_bytes);
  if (queued > g->messages_cap) {
    g->messages_cap = queued;
    free(g->messages);
    free(g->user_messages);
    g->messages = malloc((size_t)queued * sizeof *g->messages);
    g->user_messages = malloc((size_t)queued * sizeof *g->user_messages);
    if (!g->messages || !g->user_messages) bsp_abort("bsp2d: out of memory for the messages\n");
  }
  int *from = calloc((size_t)g->p + 1, sizeof *from); /* per source, then prefix sums */
  received_message *arrived = queued ? malloc((size_t)queued * sizeof *arrived) : NULL;
  if (!from || (queued && !arrived)) bsp_abort("bsp2d: out of memory for the messages\n");
  for (int k = 0; k < queued; k++) {
    void *tag_ptr, *payload;
    int bytes = bsp_hpmove(&tag_ptr, &payload);
    message_tag tag;
    memcpy(&tag, tag_ptr, sizeof tag);
    arrived[k] = (received_message){tag.src, tag.seq, tag.channel, payload, (size_t)bytes};
    from[tag.src + 1]++;
  }
  for (int src = 0; src < g->p; src++) from[src + 1] += from[src];
  for (int k = 0; k < queued; k++) g->messages[from[arrived[k].src] + arrived[k].seq] = arrived[k];
  g->nmessages = queued;
  int users = 0;
  for (int src = 0; src < g->p; src++) {
    g->user_first[src] = users;
    for (int k = from[src]; k < from[src + 1]; k++)
      if (g->messages[k].channel == 0) g->user_messages[users++] = g->messages[k];
    g->user_count[src] = users - g->user_first[src];
  }
  free(arrived);
  free(from);
}

int bsp2d_received(const bsp2d_grid *g, int src) {
  return src >= 0 && src < g->p ? g->user_count[src] : 0;
}

const void *bsp2d_message(const bsp2d_grid *g, int src, int k, size_t *bytes) {
  if (src < 0 || src >= g->p || k < 0 || k >= g->user_count[src])
    bsp_abort("bsp2d_message: there is no message %d from process %d (it sent %d)\n", k, src,
              src >= 0 && src < g->p ? g->user_count[src] : 0);
  const received_message *m = &g->user_messages[g->user_first[src] + k];
  if (bytes) *bytes = m->bytes;
  return m->payload;
}

/* ------------------------------------------------------------------ collectives */

int bsp2d_collective_supersteps(int q) { return q <= 1 ? 0 : q == 2 ? 1 : 2; }

/* Piece r of q of a vector of n items: [piece_start(n, q, r), piece_start(n, q, r + 1)). */
static size_t piece_start(size_t n, int q, int r) {
  return n / (size_t)q * (size_t)r + (size_t)(r < (int)(n % (size_t)q) ? r : (int)(n % (size_t)q));
}

static collective *new_op(bsp2d_grid *g, op_kind kind, bsp2d_scope scope) {
  if (g->nops == MAX_COLLECTIVES)
    bsp_abort("bsp2d: more than %d collectives under way; complete some first\n", MAX_COLLECTIVES);
  collective *op = &g->ops[g->nops++];
  *op = (collective){.kind = kind,
                     .scope = scope,
                     .phases_left = bsp2d_collective_supersteps(bsp2d_scope_size(g, scope)),
                     .channel = ++g->next_channel};
  return op;
}

void bsp2d_bcast_start(bsp2d_grid *g, bsp2d_scope scope, int root, void *buf, size_t bytes) {
  int q = bsp2d_scope_size(g, scope), me = bsp2d_scope_rank(g, scope);
  if (root < 0 || root >= q)
    bsp_abort("bsp2d_bcast: root %d is not in a scope of %d processes\n", root, q);
  if (bytes > INT_MAX)
    bsp_abort("bsp2d_bcast: %zu bytes are over BSPlib's limit (%d)\n", bytes, INT_MAX);
  if (q == 1) return;
  collective *op = new_op(g, OP_BCAST, scope);
  op->root = root;
  op->buf = buf;
  op->bytes = bytes;
  if (me != root) return;
  for (int r = 0; r < q; r++) { /* direct: all of it; two-phase: piece r to member r */
    if (r == root) continue;
    size_t from = q == 2 ? 0 : piece_start(bytes, q, r);
    size_t to = q == 2 ? bytes : piece_start(bytes, q, r + 1);
    put_bytes(g, bsp2d_scope_pid(g, scope, r), op->buf + from, buf, from, to - from);
  }
}

/* The second phase of a two-phase broadcast: my piece to every other member but the root. */
static void bcast_second_phase(bsp2d_grid *g, collective *op) {
  int q = bsp2d_scope_size(g, op->scope), me = bsp2d_scope_rank(g, op->scope);
  size_t from = piece_start(op->bytes, q, me), to = piece_start(op->bytes, q, me + 1);
  for (int r = 0; r < q; r++)
    if (r != me && r != op->root)
      put_bytes(g, bsp2d_scope_pid(g, op->scope, r), op->buf + from, op->buf, from, to - from);
}

static void combine(bsp2d_op op, double *into, const double *from, long n) {
  for (long i = 0; i < n; i++) {
    if (op == BSP2D_SUM) into[i] += from[i];
    else if (op == BSP2D_MAX) into[i] = from[i] > into[i] ? from[i] : into[i];
    else into[i] = from[i] < into[i] ? from[i] : into[i];
  }
}

/* The messages of one collective from scope member r, in send order. */
static const received_message *op_message(const bsp2d_grid *g, const collective *op, int src,
                                          int k) {
  int seen = 0;
  for (int i = 0; i < g->nmessages; i++) {
    const received_message *m = &g->messages[i];
    if (m->src == src && m->channel == op->channel && seen++ == k) return m;
  }
  return NULL;
}

void bsp2d_allreduce_start(bsp2d_grid *g, bsp2d_scope scope, bsp2d_op op_kind_, double *buf,
                           long count) {
  int q = bsp2d_scope_size(g, scope), me = bsp2d_scope_rank(g, scope);
  if (q == 1 || count < 0) return;
  collective *op = new_op(g, OP_ALLREDUCE, scope);
  op->op = op_kind_;
  op->buf = (unsigned char *)buf;
  op->count = count;
  for (int r = 0; r < q; r++) { /* direct: all of it; two-phase: piece r to member r */
    if (r == me) continue;
    size_t from = q == 2 ? 0 : piece_start((size_t)count, q, r);
    size_t to = q == 2 ? (size_t)count : piece_start((size_t)count, q, r + 1);
    send_tagged(g, bsp2d_scope_pid(g, scope, r), op->channel, buf + from,
                (to - from) * sizeof(double));
  }
}

/* After a sync: fold what arrived into buf, and for the first phase of two send my reduced
 * piece to all. Every member folds the pieces in the order of the members' ranks, so all of them
 * end with the same bits. */
static void allreduce_after_sync(bsp2d_grid *g, collective *op) {
  int q = bsp2d_scope_size(g, op->scope), me = bsp2d_scope_rank(g, op->scope);
  double *buf = (double *)op->buf;
  if (q == 2 || op->phases_left == 2) { /* fold the pieces (all of it when q = 2) */
    size_t from = q == 2 ? 0 : piece_start((size_t)op->count, q, me);
    size_t n = (q == 2 ? (size_t)op->count : piece_start((size_t)op->count, q, me + 1)) - from;
    double *mine = malloc((n ? n : 1) * sizeof *mine),
           *folded = malloc((n ? n : 1) * sizeof *folded);
    if (!mine || !folded) bsp_abort("bsp2d_allreduce: out of memory\n");
    memcpy(mine, buf + from, n * sizeof *mine);
    for (int r = 0; r < q; r++) {
      const double *piece = mine;
      if (r != me) {
        const received_message *m = op_message(g, op, bsp2d_scope_pid(g, op->scope, r), 0);
        if (!m || m->bytes != n * sizeof(double))
          bsp_abort("bsp2d_allreduce: members disagree on the vector's length (%ld here)\n",
                    op->count);
        piece = m->payload;
      }
      if (r == 0) memcpy(folded, piece, n * sizeof *folded);
      else combine(op->op, folded, piece, (long)n);
    }
    memcpy(buf + from, folded, n * sizeof *folded);
    free(mine);
    free(folded);
    if (q > 2)
      for (int r = 0; r < q; r++)
        if (r != me)
          send_tagged(g, bsp2d_scope_pid(g, op->scope, r), op->channel, buf + from,
                      n * sizeof(double));
    return;
  }
  for (int r = 0; r < q; r++) { /* second phase: the others' reduced pieces */
    if (r == me) continue;
    size_t from = piece_start((size_t)op->count, q, r);
    size_t n = piece_start((size_t)op->count, q, r + 1) - from;
    const received_message *m = op_message(g, op, bsp2d_scope_pid(g, op->scope, r), 0);
    if (!m || m->bytes != n * sizeof(double))
      bsp_abort("bsp2d_allreduce: a reduced piece from member %d is missing\n", r);
    memcpy(buf + from, m->payload, n * sizeof(double));
  }
}

void bsp2d_bcast(bsp2d_grid *g, bsp2d_scope scope, int root, void *buf, size_t bytes) {
  bsp2d_bcast_start(g, scope, root, buf, bytes);
  bsp2d_complete(g);
}

void bsp2d_allreduce(bsp2d_grid *g, bsp2d_scope scope, bsp2d_op op, double *buf, long count) {
  bsp2d_allreduce_start(g, scope, op, buf, count);
  bsp2d_complete(g);
}

/* ------------------------------------------------------------------ supersteps */

int bsp2d_pending(const bsp2d_grid *g) {
  int most = 0;
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i].phases_left > most) most = g->ops[i].phases_left;
  return most;
}

void bsp2d_sync(bsp2d_grid *g) {
  if (g->hooks.sync) g->hooks.sync(g->hooks.ctx);
  else bsp_sync();
  for (int b = 0; b < g->nbuffers; b++)
    if (g->buffers[b].releasing) g->buffers[b].used = g->buffers[b].releasing = 0;
  memset(g->sent_to, 0, (size_t)g->p * sizeof *g->sent_to);
  index_messages(g);
  int kept = 0;
  for (int i = 0; i < g->nops; i++) {
    collective *op = &g->ops[i];
    if (op->kind == OP_ALLREDUCE) allreduce_after_sync(g, op);
    else if (op->phases_left == 2) bcast_second_phase(g, op);
    if (--op->phases_left > 0) g->ops[kept++] = *op;
  }
  g->nops = kept;
  if (kept == 0) g->next_channel = 0;
}

void bsp2d_complete(bsp2d_grid *g) {
  while (bsp2d_pending(g) > 0) bsp2d_sync(g);
}
