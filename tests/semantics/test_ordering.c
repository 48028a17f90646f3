/*
 * test_ordering.c - the order in which a sync writes: every get reads before any get
 * writes, gets write before puts, registrations apply in call order.
 *
 *  - a get and a put to the same destination in one superstep: process i gets its right
 *    neighbour's y into x while its left neighbour puts into i's x; the put wins (Oxford
 *    BSPlib manual: a get's data is written after all remote reads, before any put's);
 *  - two processes swap values with gets (each gets the other's x into its own x);
 *  - a chain of gets: one get's source is another get's destination, on every process;
 *  - a get reading an area that the same process' other get writes (self-gets);
 *  - push_reg and pop_reg of the same address in one superstep: legal, and the older
 *    registration of that address is the one left (the pop removes the newer push);
 *    pop then push in one superstep leaves the new one;
 *  - an address registered twice on some processes only (NULL for empty arrays): a pop is
 *    the registration whose area on every process is the one popped there;
 *  - puts from every process into one array, wide and narrow, small and large mixed, all
 *    overlapping: the last put from the highest pid wins every byte (a large put from a lower
 *    pid must not land over a small one from a higher pid on mpi, where large puts travel
 *    after the others). On mpi-rma, where overlapping one-sided puts of different processes
 *    have no defined order (docs/semantics.md), only the sizes that stay two-sided run.
 * Each case runs at several sizes, so that every path of every back end is taken: records
 * in the combined block, puts sent as their own messages (mpi, >= 64 KiB) and one-sided
 * transfers (mpi-rma, >= 8 KiB).
 */
#include "testutil.h"

static void fill(int *a, int n, int base) {
  for (int k = 0; k < n; k++) a[k] = base + k;
}

/* Checks a[k] == base + k for every k. */
static void expect(const char *what, const int *a, int n, int base) {
  for (int k = 0; k < n; k++)
    if (a[k] != base + k)
      TU_CHECK(0, "%s (%d ints): element %d is %d, expected %d", what, n, k, a[k], base + k);
}

static void get_then_put_same_destination(int n) {
  int p = bsp_nprocs(), s = bsp_pid(), right = (s + 1) % p, left = (s + p - 1) % p;
  int *x = tu_malloc(sizeof(int) * (size_t)n), *y = tu_malloc(sizeof(int) * (size_t)n),
      *v = tu_malloc(sizeof(int) * (size_t)n);
  fill(x, n, 1000000 * 1 + s);
  fill(y, n, 1000000 * 2 + s * 1000);
  fill(v, n, 1000000 * 3 + s * 1000);
  bsp_push_reg(x, n * (int)sizeof(int));
  bsp_push_reg(y, n * (int)sizeof(int));
  bsp_sync();
  /* The get is issued first and the put second on every process, and vice versa for
   * half of the cases below: the order of issue must not matter. */
  bsp_get(right, y, 0, x, n * (int)sizeof(int));
  bsp_put(right, v, x, 0, n * (int)sizeof(int));
  fill(v, n, -7); /* put is buffered: the value at the call counts */
  bsp_sync();
  expect("x after get(right's y -> x) and left's put(-> x)", x, n, 1000000 * 3 + left * 1000);

  fill(v, n, 1000000 * 4 + s * 1000);
  bsp_put(right, v, x, 0, n * (int)sizeof(int));
  bsp_get(right, y, 0, x, n * (int)sizeof(int));
  bsp_sync();
  expect("x after left's put(-> x) and get(right's y -> x)", x, n, 1000000 * 4 + left * 1000);
  bsp_pop_reg(y);
  bsp_pop_reg(x);
  bsp_sync();
  free(x);
  free(y);
  free(v);
}

static void gets_read_before_gets_write(int n) {
  int p = bsp_nprocs(), s = bsp_pid(), right = (s + 1) % p;
  int *x = tu_malloc(sizeof(int) * (size_t)n), *w = tu_malloc(sizeof(int) * (size_t)n);
  bsp_push_reg(x, n * (int)sizeof(int));
  bsp_push_reg(w, n * (int)sizeof(int));
  bsp_sync();

  /* Swap (p = 2), rotation (p > 2), self-copy (p = 1): x <- right's x. */
  fill(x, n, 100000 * s);
  bsp_sync();
  bsp_get(right, x, 0, x, n * (int)sizeof(int));
  bsp_sync();
  expect("x after get(right's x -> x)", x, n, 100000 * right);

  /* A chain: w <- right's x and x <- right's w, both reading the old values. */
  fill(x, n, 100000 * s + 10000);
  fill(w, n, 100000 * s + 20000);
  bsp_sync();
  bsp_get(right, x, 0, w, n * (int)sizeof(int));
  bsp_get(right, w, 0, x, n * (int)sizeof(int));
  bsp_sync();
  expect("w after get(right's x -> w)", w, n, 100000 * right + 10000);
  expect("x after get(right's w -> x)", x, n, 100000 * right + 20000);

  /* The same chain from the process itself: reads of the old values, too. */
  fill(x, n, 100000 * s + 30000);
  fill(w, n, 100000 * s + 40000);
  bsp_sync();
  bsp_get(s, x, 0, w, n * (int)sizeof(int));
  bsp_get(s, w, 0, x, n * (int)sizeof(int));
  bsp_sync();
  expect("w after self-get(x -> w)", w, n, 100000 * s + 30000);
  expect("x after self-get(w -> x)", x, n, 100000 * s + 40000);
  bsp_pop_reg(w);
  bsp_pop_reg(x);
  bsp_sync();
  free(x);
  free(w);
}

static void push_and_pop_in_one_superstep(void) {
  int p = bsp_nprocs(), s = bsp_pid(), right = (s + 1) % p, left = (s + p - 1) % p;
  int a[4] = {0}, b[2] = {0};

  /* push(a) + pop(a) in one superstep: nothing of it remains; then a is registered
   * normally and works. */
  bsp_push_reg(a, sizeof a);
  bsp_pop_reg(a);
  bsp_sync();
  bsp_push_reg(a, sizeof a);
  bsp_sync();
  int v = 10 + s;
  bsp_put(right, &v, a, 3 * (int)sizeof(int), sizeof v);
  bsp_sync();
  TU_EQ("a[3] after put into a (registered after a push+pop)", 10 + left, a[3]);

  /* a is registered (16 bytes); push(a, 4 bytes) and pop(a) in one superstep: the pop
   * removes the newer push, so the 16-byte registration is left and the put to a[3]
   * (past 4 bytes) is legal. */
  bsp_push_reg(a, sizeof(int));
  bsp_pop_reg(a);
  bsp_sync();
  v = 20 + s;
  bsp_put(right, &v, a, 3 * (int)sizeof(int), sizeof v);
  bsp_sync();
  TU_EQ("a[3] after push+pop over an older registration", 20 + left, a[3]);

  /* pop(a) then push(a) in one superstep: the new registration is left. Pushing b in
   * between checks that slot numbers still agree across processes. */
  bsp_pop_reg(a);
  bsp_push_reg(b, sizeof b);
  bsp_push_reg(a, sizeof a);
  bsp_sync();
  v = 30 + s;
  bsp_put(right, &v, a, 2 * (int)sizeof(int), sizeof v);
  bsp_put(right, &v, b, 1 * (int)sizeof(int), sizeof v);
  bsp_sync();
  TU_EQ("a[2] after pop then push", 30 + left, a[2]);
  TU_EQ("b[1] after pop then push", 30 + left, b[1]);

  /* Two pushes of a and two pops in one superstep: nothing new remains; the
   * registration from before is still there. */
  bsp_push_reg(a, sizeof(int));
  bsp_push_reg(a, 2 * sizeof(int));
  bsp_pop_reg(a);
  bsp_pop_reg(a);
  bsp_sync();
  v = 40 + s;
  bsp_put(right, &v, a, 3 * (int)sizeof(int), sizeof v);
  bsp_sync();
  TU_EQ("a[3] after two pushes and two pops", 40 + left, a[3]);
  bsp_pop_reg(a);
  bsp_pop_reg(b);
  bsp_sync();
}

static void pop_of_an_address_registered_twice(void) {
  int p = bsp_nprocs(), s = bsp_pid(), right = (s + 1) % p, left = (s + p - 1) % p;
  int x[2] = {0, 0};
  /* Process 0 registers NULL twice, the others NULL and then x. */
  bsp_push_reg(NULL, 0);
  bsp_push_reg(s == 0 ? NULL : x, s == 0 ? 0 : (int)sizeof x);
  bsp_sync();
  /* The newest registration of NULL is the second on process 0 and the first elsewhere;
   * the pop means the first (NULL on every process). The second stays registered. */
  bsp_pop_reg(NULL);
  bsp_sync();
  if (p > 1) {
    int v = 50 + s;
    /* Process 0 names the area by its own address of that registration, NULL. */
    if (right != 0) bsp_put(right, &v, s == 0 ? NULL : x, sizeof(int), sizeof v);
    bsp_sync();
    if (s != 0) TU_EQ("x[1] after a put through the second registration", 50 + left, x[1]);
  }
  bsp_pop_reg(s == 0 ? NULL : x);
  bsp_sync();
}

/* Every process puts into process 0's x, round r: a wide put of width[(s + r) % 4] ints at 0
 * and then a narrow one of 5 ints at 7 s (mod n - 5). x must hold, per int, the value of the
 * last put covering it in the order pid, then issue. */
static int put_value(int s, int which, int k) {
  return 1000000 * (s + 1) + 100000 * which + k % 1000;
}

static void puts_land_in_pid_then_issue_order(void) {
  int p = bsp_nprocs(), s = bsp_pid();
  const char *backend = getenv("BSPKIT_BACKEND");
  int one_sided = backend && strcmp(backend, "mpi-rma") == 0;
  /* 37 ints: records everywhere; 4096 (16 KiB): one-sided on mpi-rma; 32768 (128 KiB): own
   * messages on mpi */
  const int widths[] = {1, 37, 4096, 32768};
  const int n = 32768, narrow = 5;
  int *x = tu_malloc(sizeof(int) * (size_t)n), *expected = tu_malloc(sizeof(int) * (size_t)n),
      *wide = tu_malloc(sizeof(int) * (size_t)n), small[5];
  bsp_push_reg(x, n * (int)sizeof(int));
  bsp_sync();
  for (int r = 0; r < 4; r++) {
    int rounds_width_bytes_max = 0;
    for (int q = 0; q < p; q++) {
      int w = widths[(q + r) % 4] * (int)sizeof(int);
      if (w > rounds_width_bytes_max) rounds_width_bytes_max = w;
    }
    if (one_sided && rounds_width_bytes_max >= 8192) continue;
    for (int k = 0; k < n; k++) x[k] = expected[k] = -1;
    bsp_sync();
    int w = widths[(s + r) % 4], at = (7 * s) % (n - narrow);
    for (int k = 0; k < w; k++) wide[k] = put_value(s, 1, k);
    for (int k = 0; k < narrow; k++) small[k] = put_value(s, 2, at + k);
    bsp_put(0, wide, x, 0, w * (int)sizeof(int));
    bsp_put(0, small, x, at * (int)sizeof(int), narrow * (int)sizeof(int));
    bsp_sync();
    if (s != 0) continue;
    for (int q = 0; q < p; q++) { /* the order the puts must land in */
      int wq = widths[(q + r) % 4], aq = (7 * q) % (n - narrow);
      for (int k = 0; k < wq; k++) expected[k] = put_value(q, 1, k);
      for (int k = aq; k < aq + narrow; k++) expected[k] = put_value(q, 2, k);
    }
    for (int k = 0; k < n; k++)
      if (x[k] != expected[k])
        TU_CHECK(0, "round %d: x[%d] is %d, expected %d (the last put from the highest pid)", r, k,
                 x[k], expected[k]);
  }
  bsp_pop_reg(x);
  bsp_sync();
  free(x);
  free(expected);
  free(wide);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  /* 1 int: records; 4096 ints (16 KiB): one-sided on mpi-rma; 32768 ints (128 KiB): own
   * messages on mpi. */
  const int sizes[] = {1, 37, 4096, 32768};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    get_then_put_same_destination(sizes[i]);
    gets_read_before_gets_write(sizes[i]);
  }
  puts_land_in_pid_then_issue_order();
  push_and_pop_in_one_superstep();
  pop_of_an_address_registered_twice();
  bsp_end();
  return 0;
}
