/*
 * test_bsp2d.c - the tests of BSP2D (bsp2d.h), one case per run:
 *
 *   bsprun -n P test_bsp2d --grid RxC CASE      (R C = P; exit 0: passed, 1: a check failed)
 *
 *  - grid: rows, cols, coordinates, pid_of (row-major, a bijection), scope sizes, ranks and
 *    pids, the same on every process; bsp2d_collective_supersteps.
 *  - maps: every index map against brute force for many (n, nb, nprocs): n % nb != 0,
 *    nb > n, n = 0, more coordinates than blocks.
 *  - buffers: the smallest free fitting buffer, the same registered name everywhere (a put
 *    from another process), a released buffer not handed out before the next bsp2d_sync but
 *    after it (at once with one process), a request no buffer meets registers a new one that
 *    takes puts at once; a buffer's index and the buffer at an index, and taking a free one
 *    by its index (a restart's way back to the buffers it held).
 *  - messages: many messages of different sizes (0 included) to every process in one
 *    superstep arrive in send order per source; supersteps do not mix; neither do user
 *    messages and an allreduce under way.
 *  - bcast: every scope and root, sizes 0, 1, fewer than the members, about 1 MB, different
 *    sizes per process row or column, bsp2d_pending and the supersteps taken; a row and a
 *    column broadcast sharing supersteps.
 *  - allreduce: SUM, MAX, MIN in every scope, counts 0, 1, < q, > q, large; results equal to
 *    the rank-order sequential fold, bit for bit (so identical on all members).
 *  - hooks: on_send's bytes per (source, destination) for messages, broadcasts and
 *    reductions; the sync hook is called once per bsp2d_sync and replaces bsp_sync; on_buffer
 *    is told of every buffer the manager allocates, reserved or new.
 *
 * State lives in locals: on the threads back end globals are shared between processes.
 */
#include <math.h>

#include "bsp2d.h"
#include "testutil.h"

static const char *scope_name(bsp2d_scope scope) {
  return scope == BSP2D_ROW ? "ROW" : scope == BSP2D_COL ? "COL" : "ALL";
}

static const char *op_name(bsp2d_op op) {
  return op == BSP2D_SUM ? "SUM" : op == BSP2D_MAX ? "MAX" : "MIN";
}

static int expected_supersteps(int q) { return q <= 1 ? 0 : q == 2 ? 1 : 2; }

/* A cheap byte pattern (the broadcasts move megabytes): byte i of the data named by seed. */
static unsigned char pattern_byte(uint64_t seed, size_t i) {
  uint64_t h = tu_mix64(seed);
  return (unsigned char)(h + i * 131u + (i >> 8) * 29u + (i >> 16) * (h >> 59));
}

static void fill_pattern(unsigned char *buf, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) buf[i] = pattern_byte(seed, i);
}

static void check_pattern(const char *what, const unsigned char *buf, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++)
    if (buf[i] != pattern_byte(seed, i))
      TU_CHECK(0, "%s: byte %zu of %zu: expected 0x%02x, got 0x%02x", what, i, n,
               pattern_byte(seed, i), buf[i]);
}

static uint64_t seed_of(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return tu_mix64(tu_mix64(tu_mix64(a) ^ b) ^ c) ^ d;
}

/* The scope of process x of the grid and the pid of its member of rank r (for checks made on
 * behalf of other processes). */
static int scope_pid_of(int rows, int cols, bsp2d_scope scope, int x, int r) {
  (void)rows;
  return scope == BSP2D_ROW ? x / cols * cols + r : scope == BSP2D_COL ? r * cols + x % cols : r;
}

static int in_scope_of(int cols, bsp2d_scope scope, int x, int y) {
  return scope == BSP2D_ROW ? x / cols == y / cols : scope == BSP2D_COL ? x % cols == y % cols : 1;
}

/* ------------------------------------------------------------------------------- grid */

static void case_grid(int rows, int cols) {
  bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
  int p = bsp_nprocs(), pid = bsp_pid();
  TU_EQ("bsp2d_rows", rows, bsp2d_rows(g));
  TU_EQ("bsp2d_cols", cols, bsp2d_cols(g));
  int s = bsp2d_my_row(g), t = bsp2d_my_col(g);
  TU_EQ("bsp2d_my_row (pid div cols)", pid / cols, s);
  TU_EQ("bsp2d_my_col (pid mod cols)", pid % cols, t);
  TU_EQ("bsp2d_pid_of(my_row, my_col)", pid, bsp2d_pid_of(g, s, t));
  char *seen = tu_malloc((size_t)p);
  memset(seen, 0, (size_t)p);
  for (int s2 = 0; s2 < rows; s2++)
    for (int t2 = 0; t2 < cols; t2++) {
      int x = bsp2d_pid_of(g, s2, t2);
      TU_CHECK(x == s2 * cols + t2, "bsp2d_pid_of(%d, %d): expected %d, got %d", s2, t2,
               s2 * cols + t2, x);
      TU_CHECK(!seen[x], "bsp2d_pid_of: pid %d given twice", x);
      seen[x] = 1;
    }
  free(seen);

  const bsp2d_scope scopes[] = {BSP2D_ROW, BSP2D_COL, BSP2D_ALL};
  const int sizes[] = {cols, rows, p}, ranks[] = {t, s, pid};
  for (int k = 0; k < 3; k++) {
    bsp2d_scope scope = scopes[k];
    int q = bsp2d_scope_size(g, scope), me = bsp2d_scope_rank(g, scope);
    TU_CHECK(q == sizes[k], "bsp2d_scope_size(%s): expected %d, got %d", scope_name(scope),
             sizes[k], q);
    TU_CHECK(me == ranks[k], "bsp2d_scope_rank(%s): expected %d, got %d", scope_name(scope),
             ranks[k], me);
    for (int r = 0; r < q; r++) {
      int x = bsp2d_scope_pid(g, scope, r);
      int expected = scope == BSP2D_ROW ? s * cols + r : scope == BSP2D_COL ? r * cols + t : r;
      TU_CHECK(x == expected, "bsp2d_scope_pid(%s, %d): expected %d, got %d", scope_name(scope), r,
               expected, x);
    }
  }
  for (int q = 0; q <= 9; q++)
    TU_CHECK(bsp2d_collective_supersteps(q) == expected_supersteps(q),
             "bsp2d_collective_supersteps(%d): expected %d, got %d", q, expected_supersteps(q),
             bsp2d_collective_supersteps(q));

  /* every process's own coordinates, seen by all: the same grid everywhere */
  int *coords = tu_malloc(2 * (size_t)p * sizeof *coords);
  bsp_push_reg(coords, 2 * p * (int)sizeof *coords);
  bsp_sync();
  int mine[2] = {s, t};
  for (int x = 0; x < p; x++) bsp_put(x, mine, coords, 2 * pid * (int)sizeof(int), sizeof mine);
  bsp_sync();
  for (int x = 0; x < p; x++)
    TU_CHECK(coords[2 * x] == x / cols && coords[2 * x + 1] == x % cols,
             "process %d says it is (%d, %d), expected (%d, %d)", x, coords[2 * x],
             coords[2 * x + 1], x / cols, x % cols);
  bsp_pop_reg(coords);
  bsp2d_grid_destroy(g); /* its sync makes the pop take effect */
  free(coords);
}

/* ------------------------------------------------------------------------------- maps */

static void check_map(long n, int nb, int nprocs) {
  bsp2d_map m = {n, nb, nprocs};
  long *count = tu_malloc((size_t)nprocs * sizeof *count);
  memset(count, 0, (size_t)nprocs * sizeof *count);
  long total = 0;
  for (long i = 0; i < n; i++) { /* brute force: block i / nb on coordinate (i / nb) % nprocs */
    int c = (int)(i / nb % nprocs);
    long li = count[c]++;
    TU_CHECK(bsp2d_owner(m, i) == c, "n %ld nb %d nprocs %d: bsp2d_owner(%ld): expected %d, got %d",
             n, nb, nprocs, i, c, bsp2d_owner(m, i));
    TU_CHECK(bsp2d_to_local(m, i) == li,
             "n %ld nb %d nprocs %d: bsp2d_to_local(%ld): expected %ld, got %ld", n, nb, nprocs, i,
             li, bsp2d_to_local(m, i));
    TU_CHECK(bsp2d_to_global(m, c, li) == i,
             "n %ld nb %d nprocs %d: bsp2d_to_global(%d, %ld): expected %ld, got %ld", n, nb,
             nprocs, c, li, i, bsp2d_to_global(m, c, li));
  }
  for (int c = 0; c < nprocs; c++) {
    TU_CHECK(bsp2d_local_count(m, c) == count[c],
             "n %ld nb %d nprocs %d: bsp2d_local_count(%d): expected %ld, got %ld", n, nb, nprocs,
             c, count[c], bsp2d_local_count(m, c));
    total += bsp2d_local_count(m, c);
  }
  TU_CHECK(total == n, "n %ld nb %d nprocs %d: the local counts sum to %ld", n, nb, nprocs, total);
  for (int c = 0; c < nprocs; c++) {
    long below = 0; /* c's indices below i */
    for (long i = 0; i <= n; i++) {
      TU_CHECK(bsp2d_local_before(m, c, i) == below,
               "n %ld nb %d nprocs %d: bsp2d_local_before(%d, %ld): expected %ld, got %ld", n, nb,
               nprocs, c, i, below, bsp2d_local_before(m, c, i));
      if (i < n && i / nb % nprocs == c) below++;
    }
  }
  free(count);
}

static void case_maps(int rows, int cols) {
  bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
  int p = bsp_nprocs(), pid = bsp_pid();
  /* the processes share the small cases; the grid's own dimensions on all */
  long k = 0;
  for (long n = 0; n <= 41; n++)
    for (int nb = 1; nb <= 12; nb++)
      for (int nprocs = 1; nprocs <= 7; nprocs++)
        if (k++ % p == pid) check_map(n, nb, nprocs);
  const long big[] = {0, 1, 97, 1000, 4097};
  const int nbs[] = {1, 5, 8, 64, 5000};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) {
      check_map(big[i], nbs[j], rows);
      check_map(big[i], nbs[j], cols);
    }
  bsp2d_grid_destroy(g);
}

/* ---------------------------------------------------------------------------- buffers */

/* Every process puts the pattern (buffer k, source) into `bytes[k]` bytes of bufs[k] on the
 * next process; after a bsp2d_sync each checks what came from the previous one. A buffer with
 * another registered name on some process gets the data elsewhere, or the put fails. */
static void check_same_names(bsp2d_grid *g, unsigned char **bufs, const size_t *bytes, int n,
                             int round) {
  int p = bsp_nprocs(), pid = bsp_pid(), next = (pid + 1) % p, prev = (pid + p - 1) % p;
  unsigned char **data = tu_malloc((size_t)n * sizeof *data);
  for (int k = 0; k < n; k++) {
    data[k] = tu_malloc(bytes[k]);
    fill_pattern(data[k], bytes[k], seed_of(round, k, pid, 1));
    bsp_hpput(next, data[k], bufs[k], 0, (int)bytes[k]);
  }
  bsp2d_sync(g);
  for (int k = 0; k < n; k++) {
    char what[96];
    snprintf(what, sizeof what, "round %d: buffer %d (%zu bytes) put by process %d", round, k,
             bytes[k], prev);
    check_pattern(what, bufs[k], bytes[k], seed_of(round, k, prev, 1));
    free(data[k]);
  }
  free(data);
}

static void case_buffers(int rows, int cols) {
  int p = bsp_nprocs();
  {
    /* the smallest free fitting buffer: had any request taken a bigger one than needed, a later
     * one would find none free and register a new buffer */
    bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
    const size_t reserved[] = {1000, 100, 100, 5000, 100};
    bsp2d_buffers_reserve(g, reserved, 5);
    TU_EQ("bsp2d_buffer_count after reserving 5", 5, bsp2d_buffer_count(g));
    bsp2d_sync(g); /* the registrations take effect */
    const size_t asked[] = {100, 1, 60, 101, 1000};
    unsigned char *bufs[5];
    for (int k = 0; k < 5; k++) {
      bufs[k] = bsp2d_buffer_get(g, asked[k]);
      TU_CHECK(bufs[k] != NULL, "bsp2d_buffer_get(%zu) returned NULL", asked[k]);
      for (int j = 0; j < k; j++)
        TU_CHECK(bufs[j] != bufs[k], "requests %d and %d got the same buffer", j, k);
    }
    TU_EQ("bsp2d_buffer_count: 100, 1, 60, 101, 1000 bytes from 100, 100, 100, 1000, 5000", 5,
          bsp2d_buffer_count(g));
    TU_EQ("bsp2d_buffer_syncs with no new buffer", 0, bsp2d_buffer_syncs(g));
    check_same_names(g, bufs, asked, 5, 0);
    for (int k = 0; k < 5; k++) bsp2d_buffer_release(g, bufs[k]);
    bsp2d_sync(g);
    /* all free again: 5000 first takes the 5000, then 1000 the 1000, then 3 x 100 */
    const size_t again[] = {4000, 999, 2, 3, 99};
    for (int k = 0; k < 5; k++) bufs[k] = bsp2d_buffer_get(g, again[k]);
    TU_EQ("bsp2d_buffer_count after the second round", 5, bsp2d_buffer_count(g));
    TU_EQ("bsp2d_buffer_syncs after the second round", 0, bsp2d_buffer_syncs(g));
    check_same_names(g, bufs, again, 5, 1);
    bsp2d_grid_destroy(g);
  }
  {
    /* released: used until the next bsp2d_sync (with p = 1 free at once) */
    bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
    const size_t reserved[] = {100, 100};
    bsp2d_buffers_reserve(g, reserved, 2);
    bsp2d_sync(g);
    unsigned char *a = bsp2d_buffer_get(g, 100);
    size_t hundred = 100;
    check_same_names(g, &a, &hundred, 1, 2);
    bsp2d_buffer_release(g, a);
    unsigned char *b = bsp2d_buffer_get(g, 100);
    if (p > 1)
      TU_CHECK(b != a, "a buffer released in this superstep was handed out again before the sync");
    TU_EQ("bsp2d_buffer_count (two reserved, one used)", 2, bsp2d_buffer_count(g));
    bsp2d_buffer_release(g, b);
    /* p > 1: a and b stay used: a third request registers a new buffer */
    unsigned char *c = bsp2d_buffer_get(g, 100);
    if (p > 1) {
      TU_CHECK(c != a && c != b, "a buffer released in this superstep was handed out again");
      TU_EQ("bsp2d_buffer_count after a request no free buffer meets", 3, bsp2d_buffer_count(g));
      TU_EQ("bsp2d_buffer_syncs after a request no free buffer meets", 1, bsp2d_buffer_syncs(g));
    } else {
      TU_CHECK(c == a || c == b, "with one process a released buffer is not free at once");
      TU_EQ("bsp2d_buffer_count (p = 1, released buffers free at once)", 2, bsp2d_buffer_count(g));
      TU_EQ("bsp2d_buffer_syncs (p = 1, released buffers free at once)", 0, bsp2d_buffer_syncs(g));
    }
    /* the new buffer takes puts at once (its registration was synchronised) */
    check_same_names(g, &c, &hundred, 1, 3);
    /* after that sync a and b are free (p > 1): the next two requests get them */
    bsp2d_buffer_release(g, c);
    unsigned char *d = bsp2d_buffer_get(g, 50), *e = bsp2d_buffer_get(g, 50);
    if (p > 1)
      TU_CHECK((d == a && e == b) || (d == b && e == a),
               "buffers released before a bsp2d_sync are not free after it");
    TU_EQ("bsp2d_buffer_count (released buffers reused)", p > 1 ? 3 : 2, bsp2d_buffer_count(g));
    unsigned char *de[2] = {d, e};
    size_t fifty[2] = {50, 50};
    check_same_names(g, de, fifty, 2, 4);
    /* indices: in the order the buffers were made; a free one taken by its index is in use */
    TU_EQ("bsp2d_buffer_index of the first reserved buffer", 0, bsp2d_buffer_index(g, a));
    if (p > 1)
      TU_EQ("bsp2d_buffer_index of the second reserved buffer", 1, bsp2d_buffer_index(g, b));
    if (p > 1) TU_EQ("bsp2d_buffer_index of the new buffer", 2, bsp2d_buffer_index(g, c));
    TU_EQ("bsp2d_buffer_index of no buffer", -1, bsp2d_buffer_index(g, &p));
    for (int k = 0; k < bsp2d_buffer_count(g); k++)
      TU_EQ("bsp2d_buffer_index of bsp2d_buffer_at", k,
            bsp2d_buffer_index(g, bsp2d_buffer_at(g, k)));
    TU_CHECK(bsp2d_buffer_at(g, -1) == NULL && bsp2d_buffer_at(g, bsp2d_buffer_count(g)) == NULL,
             "bsp2d_buffer_at of an index out of range is not NULL");
    bsp2d_buffer_release(g, d);
    bsp2d_buffer_release(g, e);
    bsp2d_sync(g);
    unsigned char *taken = bsp2d_buffer_take(g, 1);
    TU_CHECK(taken == bsp2d_buffer_at(g, 1), "bsp2d_buffer_take(1) is not buffer 1");
    unsigned char *next = bsp2d_buffer_get(g, 100);
    TU_CHECK(next != taken, "a buffer taken by its index was handed out again");
    bsp2d_buffer_release(g, taken);
    bsp2d_buffer_release(g, next);
    bsp2d_grid_destroy(g);
  }
  {
    /* with one process a released buffer is free at once; with more only after the sync */
    bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
    const size_t reserved[] = {64};
    bsp2d_buffers_reserve(g, reserved, 1);
    bsp2d_sync(g);
    unsigned char *a = bsp2d_buffer_get(g, 64);
    bsp2d_buffer_release(g, a);
    unsigned char *b = bsp2d_buffer_get(g, 64);
    if (p == 1) {
      TU_CHECK(b == a, "p = 1: a released buffer is not handed out again at once");
      TU_EQ("p = 1: bsp2d_buffer_count after release and request", 1, bsp2d_buffer_count(g));
    } else {
      TU_CHECK(b != a, "a released buffer was handed out again before the next bsp2d_sync");
      TU_EQ("bsp2d_buffer_count after release and request", 2, bsp2d_buffer_count(g));
    }
    bsp2d_grid_destroy(g);
  }
  {
    /* larger than all reserved: a new buffer, one sync, puts into it work at once */
    bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
    const size_t reserved[] = {64, 128};
    bsp2d_buffers_reserve(g, reserved, 2);
    bsp2d_sync(g);
    unsigned char *big = bsp2d_buffer_get(g, 4096);
    TU_EQ("bsp2d_buffer_count after a request larger than all reserved", 3, bsp2d_buffer_count(g));
    TU_EQ("bsp2d_buffer_syncs after a request larger than all reserved", 1, bsp2d_buffer_syncs(g));
    size_t bytes = 4096;
    check_same_names(g, &big, &bytes, 1, 5);
    unsigned char *small = bsp2d_buffer_get(g, 0);
    TU_EQ("bsp2d_buffer_count after a request of 0 bytes", 3, bsp2d_buffer_count(g));
    TU_CHECK(small != big, "a used buffer was handed out again");
    bsp2d_grid_destroy(g);
  }
}

/* ---------------------------------------------------------------------------- messages */

static int message_count(int step, int src, int dst) { return (step + 2 * src + dst) % 6; }

static size_t message_bytes(int step, int src, int dst, int k) {
  unsigned h = (unsigned)(step * 977 + src * 131 + dst * 31 + k * 7);
  return k == 1 ? 0 : k == 3 ? 3000 + h % 500 : h % 40;
}

static void send_step(bsp2d_grid *g, int step) {
  int p = bsp_nprocs(), pid = bsp_pid();
  unsigned char data[4096];
  for (int k = 0; k < 6; k++) /* interleaved over the destinations */
    for (int d = p - 1; d >= 0; d--)
      if (k < message_count(step, pid, d)) {
        size_t n = message_bytes(step, pid, d, k);
        fill_pattern(data, n, seed_of(step, pid, d, k));
        bsp2d_send(g, d, data, n);
      }
}

static void check_step(const bsp2d_grid *g, int step) {
  int p = bsp_nprocs(), pid = bsp_pid();
  for (int src = 0; src < p; src++) {
    int expected = step < 0 ? 0 : message_count(step, src, pid);
    TU_CHECK(bsp2d_received(g, src) == expected,
             "superstep %d: bsp2d_received(%d): expected %d messages, got %d", step, src, expected,
             bsp2d_received(g, src));
    for (int k = 0; k < expected; k++) {
      size_t n = 0;
      const unsigned char *m = bsp2d_message(g, src, k, &n);
      TU_CHECK(n == message_bytes(step, src, pid, k),
               "superstep %d: message %d from %d: expected %zu bytes, got %zu", step, k, src,
               message_bytes(step, src, pid, k), n);
      char what[80];
      snprintf(what, sizeof what, "superstep %d: message %d from %d", step, k, src);
      check_pattern(what, m, n, seed_of(step, src, pid, k));
    }
  }
}

static double int_value(int pid, long i, int salt) {
  return (double)((long)(tu_mix64(seed_of(pid, (uint64_t)i, salt, 7)) % 2001) - 1000);
}

static void case_messages(int rows, int cols) {
  bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
  int pid = bsp_pid();
  send_step(g, 0);
  bsp2d_sync(g);
  check_step(g, 0);
  send_step(g, 1);
  bsp2d_sync(g);
  check_step(g, 1);
  bsp2d_sync(g); /* nothing sent */
  check_step(g, -1);

  /* user messages beside two allreduces under way, in every superstep they take */
  long n = 37;
  double *all = tu_malloc((size_t)n * sizeof *all), *row = tu_malloc((size_t)n * sizeof *row);
  for (long i = 0; i < n; i++) {
    all[i] = int_value(pid, i, 1);
    row[i] = int_value(pid, i, 2);
  }
  bsp2d_allreduce_start(g, BSP2D_ALL, BSP2D_SUM, all, n);
  bsp2d_allreduce_start(g, BSP2D_ROW, BSP2D_MAX, row, n);
  int step = 2;
  send_step(g, step);
  for (;;) {
    int pending = bsp2d_pending(g);
    bsp2d_sync(g);
    check_step(g, step);
    if (pending <= 1) break;
    send_step(g, ++step);
  }
  TU_EQ("bsp2d_pending after the allreduces", 0, bsp2d_pending(g));
  for (long i = 0; i < n; i++) {
    double sum = 0, most = -INFINITY;
    for (int x = 0; x < bsp_nprocs(); x++) sum += int_value(x, i, 1);
    for (int r = 0; r < cols; r++)
      most = fmax(most, int_value(bsp2d_pid_of(g, bsp2d_my_row(g), r), i, 2));
    TU_CHECK(all[i] == sum, "allreduce ALL SUM beside messages: element %ld: expected %g, got %g",
             i, sum, all[i]);
    TU_CHECK(row[i] == most, "allreduce ROW MAX beside messages: element %ld: expected %g, got %g",
             i, most, row[i]);
  }
  /* a message sent after the collectives are done: the next superstep has it alone */
  send_step(g, 9);
  bsp2d_sync(g);
  check_step(g, 9);
  free(all);
  free(row);
  bsp2d_grid_destroy(g);
}

/* ------------------------------------------------------------------------------- bcast */

enum { BIG_BYTES = (1 << 20) + 3, MAX_BYTES = (1 << 20) + 256, TAIL = 64 };

/* Gets a buffer (all processes, the same size), checked after the broadcast and cleared
 * before its release: it is ours until the next bsp2d_sync, so clearing is safe. */
typedef struct {
  bsp2d_scope scope;
  int root;
  size_t bytes;
  uint64_t seed;
  unsigned char *buf;
} bcast_case;

static void bcast_begin(bsp2d_grid *g, bcast_case *c) {
  c->buf = bsp2d_buffer_get(g, MAX_BYTES);
  if (bsp2d_scope_rank(g, c->scope) == c->root) fill_pattern(c->buf, c->bytes, c->seed);
  bsp2d_bcast_start(g, c->scope, c->root, c->buf, c->bytes);
}

static void bcast_end(bsp2d_grid *g, bcast_case *c) {
  char what[120];
  snprintf(what, sizeof what, "bcast %s root %d of %zu bytes", scope_name(c->scope), c->root,
           c->bytes);
  check_pattern(what, c->buf, c->bytes, c->seed);
  for (size_t i = c->bytes; i < c->bytes + TAIL; i++)
    TU_CHECK(c->buf[i] == 0, "%s: byte %zu after the data was written (0x%02x)", what, i,
             c->buf[i]);
  memset(c->buf, 0, c->bytes);
  bsp2d_buffer_release(g, c->buf);
}

/* The superstep count of bsp2d_complete, through bsp2d_pending and bspk_superstep. */
static void complete_counted(bsp2d_grid *g, int expected, const char *what) {
  TU_CHECK(bsp2d_pending(g) == expected, "%s: bsp2d_pending after start: expected %d, got %d", what,
           expected, bsp2d_pending(g));
  long before = bspk_superstep();
  bsp2d_complete(g);
  TU_CHECK(bspk_superstep() - before == expected,
           "%s: bsp2d_complete took %ld supersteps, expected %d", what, bspk_superstep() - before,
           expected);
  TU_EQ("bsp2d_pending after bsp2d_complete", 0, bsp2d_pending(g));
}

static void case_bcast(int rows, int cols) {
  bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
  const size_t reserved[] = {MAX_BYTES, MAX_BYTES, MAX_BYTES, MAX_BYTES};
  bsp2d_buffers_reserve(g, reserved, 4);
  bsp2d_sync(g);
  const bsp2d_scope scopes[] = {BSP2D_ROW, BSP2D_COL, BSP2D_ALL};
  for (int k = 0; k < 3; k++) {
    bsp2d_scope scope = scopes[k];
    int q = bsp2d_scope_size(g, scope);
    /* which instance of the scope I am in: the sizes differ between them */
    int var = scope == BSP2D_ROW ? bsp2d_my_row(g) : scope == BSP2D_COL ? bsp2d_my_col(g) : 0;
    const size_t sizes[] = {0, 1, q > 1 ? (size_t)q - 1 : 0, (size_t)BIG_BYTES + 11 * (size_t)var,
                            3 * (size_t)var};
    for (int root = 0; root < q; root++)
      for (int j = 0; j < 5; j++) {
        bcast_case c = {scope, root, sizes[j], seed_of(k, root, j, var), NULL};
        bcast_begin(g, &c);
        TU_CHECK(bsp2d_collective_supersteps(q) == expected_supersteps(q),
                 "bsp2d_collective_supersteps(%d) = %d", q, bsp2d_collective_supersteps(q));
        char what[80];
        snprintf(what, sizeof what, "bcast %s (q = %d) root %d of %zu bytes", scope_name(scope), q,
                 root, sizes[j]);
        complete_counted(g, expected_supersteps(q), what);
        bcast_end(g, &c);
        if (q == 1) bsp2d_sync(g); /* no superstep yet to free the released buffer */
      }
  }
  /* a row and a column broadcast (and a user put) sharing supersteps */
  int p = bsp_nprocs(), pid = bsp_pid();
  int *slot = tu_malloc((size_t)p * sizeof *slot);
  memset(slot, 0, (size_t)p * sizeof *slot);
  bsp_push_reg(slot, p * (int)sizeof *slot);
  bsp2d_sync(g);
  for (int j = 0; j < 4; j++) {
    int s = bsp2d_my_row(g), t = bsp2d_my_col(g);
    size_t row_bytes = j == 3 ? BIG_BYTES : (size_t)(j * 17 + s), col_bytes = (size_t)(j * 5 + t);
    bcast_case rc = {BSP2D_ROW, j % cols, row_bytes, seed_of(10, j, s, 1), NULL};
    bcast_case cc = {BSP2D_COL, (j + 1) % rows, col_bytes, seed_of(11, j, t, 2), NULL};
    bcast_begin(g, &rc);
    bcast_begin(g, &cc);
    int mark = 1000 * j + pid;
    bsp_put((pid + 1) % p, &mark, slot, pid * (int)sizeof(int), sizeof(int));
    int most = expected_supersteps(cols) > expected_supersteps(rows) ? expected_supersteps(cols)
                                                                     : expected_supersteps(rows);
    complete_counted(g, most, "a row and a column broadcast at once");
    bcast_end(g, &rc);
    bcast_end(g, &cc);
    if (most == 0) bsp2d_sync(g); /* frees the buffers and delivers the put */
    int from = (pid + p - 1) % p;
    TU_CHECK(slot[from] == 1000 * j + from, "the user's put beside the broadcasts: got %d",
             slot[from]);
  }
  bsp_pop_reg(slot);
  bsp2d_grid_destroy(g);
  free(slot);
}

/* --------------------------------------------------------------------------- allreduce */

static double value(int pid, long i, int salt, int integers) {
  if (integers) return int_value(pid, i, salt);
  uint64_t h = tu_mix64(seed_of(pid, (uint64_t)i, salt, 3));
  return ((double)(h >> 11) / 9007199254740992.0 - 0.5) * (1.0 + pid) * 1e3;
}

static double fold(bsp2d_op op, double a, double b) {
  return op == BSP2D_SUM ? a + b : op == BSP2D_MAX ? (b > a ? b : a) : (b < a ? b : a);
}

typedef struct {
  bsp2d_scope scope;
  bsp2d_op op;
  long count;
  int salt, integers;
  double *buf;
} reduce_case;

static void reduce_begin(bsp2d_grid *g, reduce_case *c) {
  c->buf = tu_malloc((size_t)(c->count + 1) * sizeof *c->buf);
  for (long i = 0; i < c->count; i++) c->buf[i] = value(bsp_pid(), i, c->salt, c->integers);
  c->buf[c->count] = 12345.0; /* past the end: untouched */
  bsp2d_allreduce_start(g, c->scope, c->op, c->buf, c->count);
}

static void reduce_end(bsp2d_grid *g, reduce_case *c) {
  int q = bsp2d_scope_size(g, c->scope);
  for (long i = 0; i < c->count; i++) { /* the fold in the order of the members' ranks */
    double expected = value(bsp2d_scope_pid(g, c->scope, 0), i, c->salt, c->integers);
    for (int r = 1; r < q; r++)
      expected =
          fold(c->op, expected, value(bsp2d_scope_pid(g, c->scope, r), i, c->salt, c->integers));
    if (memcmp(&expected, &c->buf[i], sizeof expected) != 0)
      TU_CHECK(0, "allreduce %s %s (q = %d) of %ld %s: element %ld: expected %.17g, got %.17g",
               scope_name(c->scope), op_name(c->op), q, c->count,
               c->integers ? "integers" : "doubles", i, expected, c->buf[i]);
  }
  TU_CHECK(c->buf[c->count] == 12345.0, "allreduce %s %s of %ld: wrote past the end",
           scope_name(c->scope), op_name(c->op), c->count);
  free(c->buf);
}

static void case_allreduce(int rows, int cols) {
  bsp2d_grid *g = bsp2d_grid_create(rows, cols, NULL);
  const bsp2d_scope scopes[] = {BSP2D_ROW, BSP2D_COL, BSP2D_ALL};
  const bsp2d_op ops[] = {BSP2D_SUM, BSP2D_MAX, BSP2D_MIN};
  int salt = 0;
  for (int k = 0; k < 3; k++) {
    bsp2d_scope scope = scopes[k];
    int q = bsp2d_scope_size(g, scope);
    int var = scope == BSP2D_ROW ? bsp2d_my_row(g) : scope == BSP2D_COL ? bsp2d_my_col(g) : 0;
    const long counts[] = {0, 1, q > 1 ? q - 1 : 0, q + 1, 20011 + 3 * var};
    for (int o = 0; o < 3; o++)
      for (int j = 0; j < 5; j++)
        for (int integers = 1; integers >= 0; integers--) {
          if (!integers && j != 3 && j != 4) continue;
          reduce_case c = {scope, ops[o], counts[j], ++salt, integers, NULL};
          reduce_begin(g, &c);
          char what[96];
          snprintf(what, sizeof what, "allreduce %s %s (q = %d) of %ld", scope_name(scope),
                   op_name(ops[o]), q, counts[j]);
          complete_counted(g, expected_supersteps(q), what);
          reduce_end(g, &c);
        }
  }
  /* a row and a column reduction at once, of different lengths */
  for (int j = 0; j < 3; j++) {
    reduce_case rc = {BSP2D_ROW, ops[j], 7 * j + bsp2d_my_row(g), 100 + j, j != 0, NULL};
    reduce_case cc = {BSP2D_COL, ops[(j + 1) % 3], 5 * j + 1, 200 + j, 1, NULL};
    reduce_begin(g, &rc);
    reduce_begin(g, &cc);
    int most = expected_supersteps(cols) > expected_supersteps(rows) ? expected_supersteps(cols)
                                                                     : expected_supersteps(rows);
    complete_counted(g, most, "a row and a column allreduce at once");
    reduce_end(g, &rc);
    reduce_end(g, &cc);
  }
  bsp2d_grid_destroy(g);
}

/* ------------------------------------------------------------------------------- hooks */

typedef struct {
  long *sent;                 /* bytes this process reported per destination */
  long syncs;                 /* sync hook calls */
  int self_sends;             /* on_send calls naming this process (must be none) */
  long buffers, buffer_bytes; /* on_buffer calls, and the bytes they named */
} hook_counts;

static void count_buffer(void *ctx, void *ptr, size_t bytes) {
  hook_counts *h = ctx;
  if (ptr) h->buffers++;
  h->buffer_bytes += (long)bytes;
}

static void count_on_send(void *ctx, int dest, size_t bytes) {
  hook_counts *h = ctx;
  if (dest == bsp_pid()) h->self_sends++;
  else h->sent[dest] += (long)bytes;
}

static void count_sync(void *ctx) {
  ((hook_counts *)ctx)->syncs++;
  bsp_sync();
}

/* Every process's sent[] in matrix[x * p + y] (bytes x reported sending to y); a plain sync. */
static void exchange_sent(const long *sent, long *matrix) {
  int p = bsp_nprocs(), pid = bsp_pid();
  for (int y = 0; y < p; y++)
    bsp_put(y, sent, matrix, pid * p * (int)sizeof(long), p * (int)sizeof(long));
  bsp_sync();
}

/* Checks the bytes of a broadcast (is_bcast) of `amount` bytes or an allreduce of `amount`
 * doubles in scope, rooted at rank root, from every x to every y. */
static void check_traffic(const long *matrix, int rows, int cols, bsp2d_scope scope, int root,
                          long amount, int is_bcast) {
  int p = rows * cols;
  int q = scope == BSP2D_ROW ? cols : scope == BSP2D_COL ? rows : p;
  const char *what = is_bcast ? "bcast" : "allreduce";
  long unit = is_bcast ? 1 : (long)sizeof(double);
  long lo = amount / q, hi = (amount + q - 1) / q; /* the balanced pieces */
  for (int y = 0; y < p; y++) {
    long received = 0;
    int root_pid = scope_pid_of(rows, cols, scope, y, root);
    for (int x = 0; x < p; x++) {
      long b = matrix[x * p + y];
      received += b;
      int lo_ok, hi_ok;
      if (x == y || !in_scope_of(cols, scope, x, y)) lo_ok = hi_ok = b == 0;
      else if (q == 2) {
        long expected = is_bcast ? (x == root_pid ? amount : 0) : amount * unit;
        lo_ok = hi_ok = b == expected;
      } else if (is_bcast) { /* the root: piece y, then its own; others: their piece */
        int factor = x == root_pid ? 2 : y == root_pid ? 0 : 1;
        lo_ok = b >= factor * lo;
        hi_ok = b <= factor * hi;
      } else { /* piece y to y's reduction, then x's reduced piece */
        lo_ok = b >= 2 * lo * unit;
        hi_ok = b <= 2 * hi * unit;
      }
      TU_CHECK(lo_ok && hi_ok,
               "%s %s (q = %d) root %d of %ld: on_send says %d sent %ld bytes to %d (pieces of "
               "%ld..%ld)",
               what, scope_name(scope), q, root, amount, x, b, y, lo * unit, hi * unit);
    }
    if (q == 1) continue;
    long expected;
    if (is_bcast) expected = y == root_pid ? 0 : amount;
    else if (q == 2) expected = amount * unit;
    else expected = -1; /* ((q - 2) piece_y + amount) doubles: checked by bounds */
    if (expected >= 0)
      TU_CHECK(received == expected,
               "%s %s (q = %d) root %d of %ld: process %d received %ld bytes, expected %ld", what,
               scope_name(scope), q, root, amount, y, received, expected);
    else
      TU_CHECK(
          received >= ((q - 2) * lo + amount) * unit && received <= ((q - 2) * hi + amount) * unit,
          "allreduce %s (q = %d) of %ld: process %d received %ld bytes", scope_name(scope), q,
          amount, y, received);
  }
}

static void case_hooks(int rows, int cols) {
  int p = bsp_nprocs(), pid = bsp_pid();
  hook_counts h = {tu_malloc((size_t)p * sizeof(long)), 0, 0, 0, 0};
  memset(h.sent, 0, (size_t)p * sizeof(long));
  long *matrix = tu_malloc((size_t)p * p * sizeof *matrix);
  bsp_push_reg(matrix, p * p * (int)sizeof *matrix);
  bsp_sync();
  bsp2d_hooks hooks = {count_on_send, count_sync, &h, count_buffer};
  bsp2d_grid *g = bsp2d_grid_create(rows, cols, &hooks);
  long plain_syncs = 0, start = bspk_superstep(), syncs = 0; /* syncs: the bsp2d_syncs made */
  TU_EQ("sync hook calls after bsp2d_grid_create", 0, h.syncs);

  /* user messages: the bytes to every other process, none to myself */
  unsigned char data[256] = {0};
  for (int d = 0; d < p; d++) {
    bsp2d_send(g, d, data, (size_t)(d + pid + 1) * 3);
    bsp2d_send(g, d, data, 0);
  }
  bsp2d_sync(g);
  syncs++;
  for (int d = 0; d < p; d++)
    TU_CHECK(h.sent[d] == (d == pid ? 0 : (d + pid + 1) * 3),
             "on_send's bytes to %d for messages: expected %d, got %ld", d,
             d == pid ? 0 : (d + pid + 1) * 3, h.sent[d]);
  TU_EQ("on_send calls naming the sender itself", 0, h.self_sends);
  TU_EQ("sync hook calls after one bsp2d_sync", syncs, h.syncs);

  const size_t reserved[] = {8192, 8192};
  bsp2d_buffers_reserve(g, reserved, 2);
  TU_EQ("on_buffer calls after reserving 2 buffers", 2, h.buffers);
  TU_EQ("on_buffer's bytes after reserving 2 buffers of 8192", 2 * 8192, h.buffer_bytes);
  bsp2d_sync(g);
  syncs++;
  const bsp2d_scope scopes[] = {BSP2D_ROW, BSP2D_COL, BSP2D_ALL};
  for (int k = 0; k < 3; k++) {
    bsp2d_scope scope = scopes[k];
    int q = bsp2d_scope_size(g, scope);
    const long amounts[] = {0, 1, q - 1, 1000, 8191};
    for (int root = 0; root < q; root++)
      for (int j = 0; j < 5; j++) {
        memset(h.sent, 0, (size_t)p * sizeof(long));
        unsigned char *buf = bsp2d_buffer_get(g, 8192);
        bsp2d_bcast_start(g, scope, root, buf, (size_t)amounts[j]);
        syncs += bsp2d_pending(g);
        bsp2d_complete(g);
        bsp2d_buffer_release(g, buf);
        bsp2d_sync(g);
        syncs++;
        TU_EQ("sync hook calls (broadcasts)", syncs, h.syncs);
        exchange_sent(h.sent, matrix);
        plain_syncs++;
        check_traffic(matrix, rows, cols, scope, root, amounts[j], 1);
      }
    const long counts[] = {0, 1, q + 1, 1001};
    for (int j = 0; j < 4; j++) {
      memset(h.sent, 0, (size_t)p * sizeof(long));
      double *v = tu_malloc((size_t)counts[j] * sizeof *v + 1);
      for (long i = 0; i < counts[j]; i++) v[i] = (double)i;
      bsp2d_allreduce_start(g, scope, BSP2D_SUM, v, counts[j]);
      syncs += bsp2d_pending(g);
      bsp2d_complete(g);
      free(v);
      TU_EQ("sync hook calls (allreduces)", syncs, h.syncs);
      exchange_sent(h.sent, matrix);
      plain_syncs++;
      check_traffic(matrix, rows, cols, scope, 0, counts[j], 0);
    }
  }
  /* a buffer registration's sync goes through the hook too */
  unsigned char *big = bsp2d_buffer_get(g, 10000);
  syncs++;
  TU_EQ("bsp2d_buffer_syncs after a request larger than all reserved", 1, bsp2d_buffer_syncs(g));
  TU_EQ("sync hook calls after a buffer registration", syncs, h.syncs);
  TU_EQ("on_buffer calls after a new buffer", 3, h.buffers);
  TU_EQ("on_buffer's bytes after a new buffer of 10000", 2 * 8192 + 10000, h.buffer_bytes);
  bsp2d_buffer_release(g, big);
  TU_EQ("on_send calls naming the sender itself", 0, h.self_sends);
  /* the hook replaces bsp_sync: no other syncs were made */
  TU_CHECK(bspk_superstep() - start == h.syncs + plain_syncs,
           "bsp_sync was called %ld times, expected %ld (sync hook) + %ld (the test's own)",
           bspk_superstep() - start, h.syncs, plain_syncs);
  bsp_pop_reg(matrix);
  bsp2d_grid_destroy(g);
  free(matrix);
  free(h.sent);
}

/* ------------------------------------------------------------------------------- main */

typedef struct {
  const char *name;
  void (*run)(int rows, int cols);
} test_case;

int main(int argc, char **argv) {
  const test_case cases[] = {{"grid", case_grid},       {"maps", case_maps},
                             {"buffers", case_buffers}, {"messages", case_messages},
                             {"bcast", case_bcast},     {"allreduce", case_allreduce},
                             {"hooks", case_hooks}};
  int rows = 0, cols = 0;
  const test_case *chosen = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc) {
      char tail = 0;
      if (sscanf(argv[++i], "%dx%d%c", &rows, &cols, &tail) != 2 || rows < 1 || cols < 1) {
        fprintf(stderr, "test_bsp2d: --grid must be RxC with R, C >= 1, not '%s'\n", argv[i]);
        return 2;
      }
    } else {
      for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        if (strcmp(argv[i], cases[c].name) == 0) chosen = &cases[c];
      if (!chosen) {
        fprintf(stderr,
                "usage: test_bsp2d --grid RxC grid|maps|buffers|messages|bcast|"
                "allreduce|hooks\n");
        return 2;
      }
    }
  }
  if (!chosen || rows == 0) {
    fprintf(stderr, "usage: test_bsp2d --grid RxC CASE\n");
    return 2;
  }
  bsp_begin(bsp_nprocs());
  chosen->run(rows, cols);
  if (bsp_pid() == 0) printf("test_bsp2d %s %dx%d: passed\n", chosen->name, rows, cols);
  bsp_end();
  return 0;
}
