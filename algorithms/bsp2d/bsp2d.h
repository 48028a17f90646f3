/*
 * bsp2d.h - BSP2D, the BLACS-like layer for BSP that Horvitz & Bisseling propose (sec. 4 of
 * "Designing a BSP version of ScaLAPACK"), written against bsp.h only:
 *
 *   - a two-dimensional process grid p = rows x cols, process (s, t) = pid s * cols + t, with
 *     the scopes of a process row, a process column and the whole grid;
 *   - the two-dimensional block-cyclic distribution with block size nb (index maps);
 *   - the registered-buffer manager of sec. 2.4: buffers registered once and reused, requested
 *     in lock step, with a used flag so that a buffer released in one superstep is not handed
 *     out again before the next synchronisation;
 *   - ordered bulk messages (sec. 4): bsp_send with a tag (source, sequence number); after a
 *     bsp2d_sync the messages from each source are read in the order they were sent, straight
 *     from BSPlib's receive queue (bsp_hpmove, no copy);
 *   - broadcasts and reductions within a process row, a process column or the grid (sec. 2.2,
 *     4): one superstep when the scope has two processes, none for one, else two-phase (scatter
 *     the data over the scope, then every process sends its piece to all: about 2 n g + 2 l
 *     instead of (q - 1) n g + l). The number of supersteps depends on the scope's size only,
 *     never on the data size, so process rows with different amounts of data stay in step.
 *
 * Supersteps. Every operation that communicates is split-phase: *_start issues the first phase's
 * requests in the current superstep, and bsp2d_sync (which every process calls together, like
 * bsp_sync) ends the superstep and issues the next phase of every operation still under way.
 * bsp2d_pending says how many more bsp2d_syncs the operations under way need, the same number
 * on every process; bsp2d_complete makes them. So several operations (a broadcast in the
 * process rows, another in the process columns, the user's own puts) can share supersteps:
 *
 *   bsp2d_bcast_start(g, BSP2D_ROW, root_col, lbuf, lbytes);
 *   bsp2d_bcast_start(g, BSP2D_COL, root_row, ubuf, ubytes);
 *   bsp_hpput(...);                 // the user's own requests may join the first superstep
 *   bsp2d_complete(g);              // 0, 1 or 2 supersteps; then lbuf and ubuf hold the data
 *
 * Collective calls (marked so) are made by every process of the grid in the same order; scoped
 * operations are made by every process too, each within its own row or column, with the
 * same root and size within one scope (sizes may differ between scopes).
 *
 * Counting. A program that accounts for its BSP cost (the bspalg drivers) installs hooks:
 * on_send is told of every request to another process this layer issues, and sync replaces
 * bsp_sync (to label the superstep).
 */
#ifndef BSP2D_H
#define BSP2D_H

#include <stddef.h>

typedef enum {
  BSP2D_ROW, /* the processes of my process row: (s, 0 .. cols - 1) */
  BSP2D_COL, /* the processes of my process column: (0 .. rows - 1, t) */
  BSP2D_ALL  /* the whole grid */
} bsp2d_scope;

typedef enum { BSP2D_SUM, BSP2D_MAX, BSP2D_MIN } bsp2d_op;

typedef struct {
  void (*on_send)(void *ctx, int dest, size_t bytes); /* a request to dest != me */
  void (*sync)(void *ctx);                            /* instead of bsp_sync(); NULL: bsp_sync */
  void *ctx;
  /* Every buffer the manager allocates, before it is registered: a program that takes
   * checkpoints protects it here (registered memory must be saved); it undoes that before
   * bsp2d_grid_destroy frees it. NULL: nothing. */
  void (*on_buffer)(void *ctx, void *ptr, size_t bytes);
} bsp2d_hooks;

typedef struct bsp2d_grid bsp2d_grid;

/* ---------------------------------------------------------------------------- the grid */

/* Collective. The rows x cols grid over all bsp_nprocs() processes (rows * cols must equal it:
 * else bsp_abort with the numbers). BSP2D owns bulk synchronous message passing: it sets the
 * tag size and synchronises once (plain bsp_sync) so that it takes effect. hooks may be NULL. */
bsp2d_grid *bsp2d_grid_create(int rows, int cols, const bsp2d_hooks *hooks);
/* Collective. Pops the manager's registrations and frees the grid. */
void bsp2d_grid_destroy(bsp2d_grid *g);

int bsp2d_rows(const bsp2d_grid *g);
int bsp2d_cols(const bsp2d_grid *g);
int bsp2d_my_row(const bsp2d_grid *g);
int bsp2d_my_col(const bsp2d_grid *g);
/* The pid of process (s, t). */
int bsp2d_pid_of(const bsp2d_grid *g, int s, int t);
/* The scope's size, my rank in it (my column in a row, my row in a column, my pid in the grid),
 * and the pid of its member of rank r. */
int bsp2d_scope_size(const bsp2d_grid *g, bsp2d_scope scope);
int bsp2d_scope_rank(const bsp2d_grid *g, bsp2d_scope scope);
int bsp2d_scope_pid(const bsp2d_grid *g, bsp2d_scope scope, int r);

/* ------------------------------------------------- two-dimensional block-cyclic distribution */

/* One dimension of the distribution: n indices in blocks of nb, block b on process coordinate
 * b mod nprocs (ScaLAPACK's, with the first block on coordinate 0). A matrix is distributed by
 * one map for its rows over the grid's rows and one for its columns over the grid's columns. */
typedef struct {
  long n;
  int nb, nprocs;
} bsp2d_map;

/* The number of indices on coordinate c (ScaLAPACK's NUMROC). */
long bsp2d_local_count(bsp2d_map m, int c);
/* The coordinate that holds global index i. */
int bsp2d_owner(bsp2d_map m, long i);
/* Global index i's local index on its owner. */
long bsp2d_to_local(bsp2d_map m, long i);
/* Local index li of coordinate c as a global index. */
long bsp2d_to_global(bsp2d_map m, int c, long li);
/* The number of coordinate c's indices below global index i: its first local index at or after
 * i (so its indices >= i are the local ones from there on). */
long bsp2d_local_before(bsp2d_map m, int c, long i);

/* --------------------------------------------------------- the registered-buffer manager */

/* Collective: allocates and registers `count` buffers of the given sizes in bytes (the same on
 * every process), for bsp2d_buffer_get. Registration takes effect at the next sync. */
void bsp2d_buffers_reserve(bsp2d_grid *g, const size_t *bytes, int count);
/* Collective, in lock step (every process asks for the same size in the same order): the
 * smallest free buffer of at least `bytes`, marked used, so the same buffer (the same registered
 * name) is handed out on every process. When no reserved buffer fits, a new one is allocated
 * and registered, and the registration is a bsp2d_sync here (counted in bsp2d_buffer_syncs):
 * messages and collectives under way move on with it and the sync hook runs, so ask for
 * buffers before sending in a superstep. */
void *bsp2d_buffer_get(bsp2d_grid *g, size_t bytes);
/* Local: this process is done with the buffer. It stays used until the next bsp2d_sync (a
 * process still behind may put into it in this superstep), then it is free again (at once when
 * the grid has one process). Every process releases it in the same superstep. */
void bsp2d_buffer_release(bsp2d_grid *g, void *buf);
/* A buffer's place among the manager's buffers in the order they were made (0, 1, ...; -1:
 * not one of them), and the buffer at a place (NULL: none): the same on every process. For a
 * program that saves which buffers it holds (in a checkpoint) and takes them again. */
int bsp2d_buffer_index(const bsp2d_grid *g, const void *buf);
void *bsp2d_buffer_at(const bsp2d_grid *g, int index);
/* Collective, in lock step like bsp2d_buffer_get: hands out the buffer at `index`, which must
 * be free (else bsp_abort): a program restarted from a checkpoint takes the buffers it held. */
void *bsp2d_buffer_take(bsp2d_grid *g, int index);
/* The buffers the manager holds, and the extra syncs that its own registrations cost. */
int bsp2d_buffer_count(const bsp2d_grid *g);
long bsp2d_buffer_syncs(const bsp2d_grid *g);

/* -------------------------------------------------------------- supersteps */

/* Collective: ends the superstep (the hooks' sync, else bsp_sync), makes released buffers free,
 * orders the received messages, and issues the next phase of the operations under way. */
void bsp2d_sync(bsp2d_grid *g);
/* The bsp2d_syncs the operations under way still need (0, 1 or 2; the same on every process). */
int bsp2d_pending(const bsp2d_grid *g);
/* bsp2d_sync until nothing is pending. */
void bsp2d_complete(bsp2d_grid *g);

/* -------------------------------------------------------------- ordered bulk messages */

/* Sends `bytes` bytes (copied now) to process dest, tagged with (my pid, the number of messages
 * I sent to dest before in this superstep). Any size, zero included. */
void bsp2d_send(bsp2d_grid *g, int dest, const void *payload, size_t bytes);
/* After a bsp2d_sync: how many messages came from process src in the superstep it ended, and
 * the k-th of them in the order src sent them (its size in *bytes). The pointer is into
 * BSPlib's receive queue and valid until the next bsp2d_sync. */
int bsp2d_received(const bsp2d_grid *g, int src);
const void *bsp2d_message(const bsp2d_grid *g, int src, int k, size_t *bytes);

/* -------------------------------------------------------------- collectives */

/* Scoped: broadcast `bytes` bytes of buf from the scope's member of rank `root` to buf on every
 * member (buf is registered, e.g. from the manager, and the same registered name on all; the
 * root's data starts at buf on the root). Nobody touches buf until bsp2d_pending is 0. Direct
 * puts when the scope has two members (1 superstep), two-phase when it has more (2). */
void bsp2d_bcast_start(bsp2d_grid *g, bsp2d_scope scope, int root, void *buf, size_t bytes);

/* Scoped: every member ends with buf[i] = op over the members' buf[i], i < count (doubles).
 * Two-phase (sec. 4) when the scope has more than two members: member r reduces block r of
 * the vector and sends it to all. By bulk messages: buf need not be registered. Nobody touches
 * buf until bsp2d_pending is 0. */
void bsp2d_allreduce_start(bsp2d_grid *g, bsp2d_scope scope, bsp2d_op op, double *buf, long count);

/* The blocking forms: start, then bsp2d_complete. */
void bsp2d_bcast(bsp2d_grid *g, bsp2d_scope scope, int root, void *buf, size_t bytes);
void bsp2d_allreduce(bsp2d_grid *g, bsp2d_scope scope, bsp2d_op op, double *buf, long count);

/* The supersteps a broadcast or a reduction over a scope of q members takes: 0, 1 or 2. */
int bsp2d_collective_supersteps(int q);

#endif
