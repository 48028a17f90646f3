/*
 * test_collectives.c - bspkit extensions: bspk_broadcast, bspk_reduce, bspk_backend,
 * bspk_cores, bspk_superstep.
 *
 *  - broadcast from every root, 8 bytes and 1 MiB + 3 bytes (not divisible by p), in place
 *    on the root (dst == src), and 0 bytes;
 *  - reduce with bspk_op_sum_long, bspk_op_max_double, bspk_op_sum_double, the other
 *    ready-made operations and two user operations on odd element sizes (6 and 12 bytes),
 *    for counts 1, p-1, p, 3p+1 and 100003; results compared with a sequential computation
 *    of the same data; a double sum must have identical bits on every process;
 *  - puts issued before a collective are delivered by it; the collectives leave the
 *    message queue empty and the tag size as it was;
 *  - bspk_backend() is "threads" (or $BSPKIT_BACKEND where set) at any time;
 *    bspk_superstep() counts syncs.
 */
#include <math.h>

#include "testutil.h"

#define SENT 0xC3

/* ---- data every process can compute for every process ---- */
static long val_long(int q, int i) {
  return (long)(tu_mix64(((uint64_t)q << 32) ^ (uint64_t)i ^ 0x1111) % (1ULL << 40)) - (1L << 39);
}
static double val_double(int q, int i) {
  uint64_t h = tu_mix64(((uint64_t)q << 32) ^ (uint64_t)i ^ 0x2222);
  return ((double)(h >> 11) / 9007199254740992.0 - 0.5) * 2.0e6;
}
static int val_int(int q, int i) {
  return (int)(tu_mix64(((uint64_t)q << 32) ^ (uint64_t)i ^ 0x3333) % 2000001) - 1000000;
}

/* ---- user operations ---- */
typedef struct {
  uint16_t sum, max, xr;
} e6; /* 6 bytes, combined field by field */

static void op_e6(void *result, const void *left, const void *right, bsp_size_t *nbytes) {
  if (*nbytes < 0 || *nbytes % 6 != 0)
    bsp_abort("user op (6-byte elements) called with nbytes = %d, not a multiple of 6\n",
              (int)*nbytes);
  int n = *nbytes / 6;
  for (int i = 0; i < n; i++) {
    uint16_t l[3], r[3], o[3];
    memcpy(l, (const char *)left + 6 * i, 6);
    memcpy(r, (const char *)right + 6 * i, 6);
    o[0] = (uint16_t)(l[0] + r[0]);
    o[1] = l[1] > r[1] ? l[1] : r[1];
    o[2] = (uint16_t)(l[2] ^ r[2]);
    memcpy((char *)result + 6 * i, o, 6);
  }
}
static void val_e6(int q, int i, uint16_t out[3]) {
  uint64_t h = tu_mix64(((uint64_t)q << 32) ^ (uint64_t)i ^ 0x4444);
  out[0] = (uint16_t)h;
  out[1] = (uint16_t)(h >> 16);
  out[2] = (uint16_t)(h >> 32);
}

static void op_e12(void *result, const void *left, const void *right, bsp_size_t *nbytes) {
  if (*nbytes < 0 || *nbytes % 12 != 0)
    bsp_abort("user op (12-byte elements) called with nbytes = %d, not a multiple of 12\n",
              (int)*nbytes);
  int n = *nbytes / 12;
  for (int i = 0; i < n; i++) {
    int32_t l[3], r[3], o[3];
    memcpy(l, (const char *)left + 12 * i, 12);
    memcpy(r, (const char *)right + 12 * i, 12);
    o[0] = l[0] < r[0] ? l[0] : r[0];                  /* min */
    o[1] = (int32_t)((uint32_t)l[1] + (uint32_t)r[1]); /* wrapping sum */
    o[2] = l[2] | r[2];                                /* or */
    memcpy((char *)result + 12 * i, o, 12);
  }
}
static void val_e12(int q, int i, int32_t out[3]) {
  uint64_t h = tu_mix64(((uint64_t)q << 32) ^ (uint64_t)i ^ 0x5555);
  out[0] = (int32_t)(uint32_t)h;
  out[1] = (int32_t)(uint32_t)(h >> 32);
  out[2] = (int32_t)(1u << (h % 31));
}

/* Checks that dst (nbytes) has the same bits on every process as on process 0. */
static void check_same_bits(const void *dst, int nbytes, const char *what) {
  int s = bsp_pid();
  unsigned char *copy = (unsigned char *)tu_malloc((size_t)nbytes);
  bsp_push_reg(dst, nbytes);
  bsp_sync();
  bsp_get(0, dst, 0, copy, nbytes);
  bsp_sync();
  if (s != 0) TU_MEMEQ(what, copy, dst, nbytes);
  bsp_pop_reg(dst);
  bsp_sync();
  free(copy);
}

static void test_broadcast(int root, int n, int inplace) {
  int s = bsp_pid();
  unsigned char *src = (unsigned char *)tu_malloc((size_t)n + 8);
  unsigned char *dst = (unsigned char *)tu_malloc((size_t)n + 8);
  memset(dst, SENT, (size_t)n + 8);
  memset(src, SENT, (size_t)n + 8);
  if (s == root) tu_fill(inplace ? dst : src, (size_t)n, (uint64_t)root, (uint64_t)n, 77);
  bspk_broadcast(root, (inplace && s == root) ? dst : src, dst, n);
  char what[128];
  snprintf(what, sizeof what, "broadcast of %d bytes from root %d%s", n, root,
           inplace ? " (in place on the root)" : "");
  TU_PATTERN(what, dst, n, (uint64_t)root, (uint64_t)n, 77, 0);
  TU_ALL(what, dst + n, SENT, 8);
  if (s == root && !inplace)
    TU_PATTERN("broadcast source on the root changed", src, n, (uint64_t)root, (uint64_t)n, 77, 0);
  free(src);
  free(dst);
}

static void test_reduce_long(int count, bspk_op op, int is_max, const char *opname) {
  int p = bsp_nprocs(), s = bsp_pid();
  long *src = (long *)tu_malloc(sizeof(long) * (size_t)(count + 1));
  long *dst = (long *)tu_malloc(sizeof(long) * (size_t)(count + 1));
  for (int i = 0; i < count; i++) src[i] = val_long(s, i);
  dst[count] = 12345;
  bspk_reduce(op, src, dst, count, (int)sizeof(long));
  for (int i = 0; i < count; i++) {
    long ref = val_long(0, i);
    for (int q = 1; q < p; q++)
      ref = is_max ? (val_long(q, i) > ref ? val_long(q, i) : ref) : ref + val_long(q, i);
    if (dst[i] != ref)
      TU_CHECK(0, "bspk_reduce(%s, count %d): element %d: expected %ld, got %ld", opname, count, i,
               ref, dst[i]);
    TU_CHECK(src[i] == val_long(s, i), "bspk_reduce changed its source");
  }
  TU_EQ("element after the reduce's destination", 12345, dst[count]);
  free(src);
  free(dst);
}

static void test_reduce_int(int count, bspk_op op, int is_max, const char *opname) {
  int p = bsp_nprocs(), s = bsp_pid();
  int *src = (int *)tu_malloc(sizeof(int) * (size_t)count);
  int *dst = (int *)tu_malloc(sizeof(int) * (size_t)count);
  for (int i = 0; i < count; i++) src[i] = val_int(s, i);
  bspk_reduce(op, src, dst, count, (int)sizeof(int));
  for (int i = 0; i < count; i++) {
    int ref = val_int(0, i);
    for (int q = 1; q < p; q++)
      ref = is_max ? (val_int(q, i) > ref ? val_int(q, i) : ref) : ref + val_int(q, i);
    if (dst[i] != ref)
      TU_CHECK(0, "bspk_reduce(%s, count %d): element %d: expected %d, got %d", opname, count, i,
               ref, dst[i]);
  }
  free(src);
  free(dst);
}

/* kind: 0 sum, 1 max, 2 min; integer_valued: data are integers (the sum is then exact). */
static void test_reduce_double(int count, bspk_op op, int kind, int integer_valued,
                               const char *opname) {
  int p = bsp_nprocs(), s = bsp_pid();
  double *src = (double *)tu_malloc(sizeof(double) * (size_t)count);
  double *dst = (double *)tu_malloc(sizeof(double) * (size_t)count);
#define VD(q, i) (integer_valued ? (double)val_int((q), (i)) : val_double((q), (i)))
  for (int i = 0; i < count; i++) src[i] = VD(s, i);
  bspk_reduce(op, src, dst, count, (int)sizeof(double));
  for (int i = 0; i < count; i++) {
    double ref = VD(0, i), mag = fabs(ref);
    for (int q = 1; q < p; q++) {
      double v = VD(q, i);
      mag += fabs(v);
      if (kind == 0) ref += v;
      else if (kind == 1) ref = v > ref ? v : ref;
      else ref = v < ref ? v : ref;
    }
    int ok = (kind != 0 || integer_valued) ? dst[i] == ref : fabs(dst[i] - ref) <= 1e-12 * mag;
    if (!ok)
      TU_CHECK(0, "bspk_reduce(%s, count %d): element %d: expected %.17g, got %.17g", opname, count,
               i, ref, dst[i]);
  }
#undef VD
  char what[128];
  snprintf(what, sizeof what, "bspk_reduce(%s, count %d): bits differ from process 0's", opname,
           count);
  check_same_bits(dst, (int)sizeof(double) * count, what);
  free(src);
  free(dst);
}

static void test_reduce_e6(int count) {
  int p = bsp_nprocs(), s = bsp_pid();
  unsigned char *src = (unsigned char *)tu_malloc(6 * (size_t)count);
  unsigned char *dst = (unsigned char *)tu_malloc(6 * (size_t)count + 6);
  for (int i = 0; i < count; i++) {
    uint16_t v[3];
    val_e6(s, i, v);
    memcpy(src + 6 * i, v, 6);
  }
  memset(dst + 6 * count, SENT, 6);
  bspk_reduce(op_e6, src, dst, count, 6);
  for (int i = 0; i < count; i++) {
    uint16_t ref[3], v[3], got[3];
    val_e6(0, i, ref);
    for (int q = 1; q < p; q++) {
      val_e6(q, i, v);
      ref[0] = (uint16_t)(ref[0] + v[0]);
      ref[1] = v[1] > ref[1] ? v[1] : ref[1];
      ref[2] = (uint16_t)(ref[2] ^ v[2]);
    }
    memcpy(got, dst + 6 * i, 6);
    if (memcmp(ref, got, 6) != 0)
      TU_CHECK(0,
               "bspk_reduce(user op, 6-byte elements, count %d): element %d: expected "
               "(%u, %u, %u), got (%u, %u, %u)",
               count, i, ref[0], ref[1], ref[2], got[0], got[1], got[2]);
  }
  TU_ALL("bytes after the reduce's destination", dst + 6 * count, SENT, 6);
  free(src);
  free(dst);
}

static void test_reduce_e12(int count) {
  int p = bsp_nprocs(), s = bsp_pid();
  int32_t *src = (int32_t *)tu_malloc(12 * (size_t)count);
  int32_t *dst = (int32_t *)tu_malloc(12 * (size_t)count);
  for (int i = 0; i < count; i++) val_e12(s, i, src + 3 * i);
  bspk_reduce(op_e12, src, dst, count, 12);
  for (int i = 0; i < count; i++) {
    int32_t ref[3], v[3];
    val_e12(0, i, ref);
    for (int q = 1; q < p; q++) {
      val_e12(q, i, v);
      ref[0] = v[0] < ref[0] ? v[0] : ref[0];
      ref[1] = (int32_t)((uint32_t)ref[1] + (uint32_t)v[1]);
      ref[2] |= v[2];
    }
    if (memcmp(ref, dst + 3 * i, 12) != 0)
      TU_CHECK(0,
               "bspk_reduce(user op, 12-byte elements, count %d): element %d: expected "
               "(%d, %d, %d), got (%d, %d, %d)",
               count, i, (int)ref[0], (int)ref[1], (int)ref[2], (int)dst[3 * i],
               (int)dst[3 * i + 1], (int)dst[3 * i + 2]);
  }
  free(src);
  free(dst);
}

static const char *expected_backend(void) {
  const char *e = getenv("BSPKIT_BACKEND");
  return (e && *e) ? e : "threads";
}

int main(void) {
  const char *b0 = bspk_backend();
  TU_CHECK_OUTSIDE(b0 && strcmp(b0, expected_backend()) == 0,
                   "bspk_backend() before bsp_begin: expected \"%s\", got \"%s\"",
                   expected_backend(), b0 ? b0 : "(null)");
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int next = (s + 1) % p, prev = (s + p - 1) % p;

  const char *b = bspk_backend();
  TU_CHECK(b && strcmp(b, expected_backend()) == 0, "bspk_backend(): expected \"%s\", got \"%s\"",
           expected_backend(), b ? b : "(null)");
  TU_CHECK(bspk_cores() >= 1, "bspk_cores() = %d", bspk_cores());

  /* bspk_superstep counts syncs */
  long st0 = bspk_superstep();
  TU_EQ("bspk_superstep() at the start", 0, st0);
  for (int k = 1; k <= 3; k++) {
    bsp_sync();
    TU_EQ("bspk_superstep() after k syncs", k, bspk_superstep());
  }

  /* user BSMP state that the collectives must leave alone */
  int t = 4;
  bsp_set_tagsize(&t);
  bsp_sync();

  /* a put issued before a collective is delivered by it */
  long box = -1;
  bsp_push_reg(&box, (int)sizeof box);
  bsp_sync();
  {
    long v = 31 + s;
    bsp_put(next, &v, &box, 0, (int)sizeof v);
    long before = bspk_superstep();
    unsigned char x8[8];
    tu_fill(x8, 8, 0, 8, 77);
    bspk_broadcast(0, x8, x8, 8);
    TU_EQ("put issued before bspk_broadcast", 31 + prev, box);
    TU_CHECK(bspk_superstep() > before,
             "bspk_superstep() did not advance over a broadcast "
             "(%ld before, %ld after)",
             before, bspk_superstep());
  }

  /* ---- broadcast ---- */
  const int LARGE = (1 << 20) + 3;
  for (int root = 0; root < p; root++) {
    test_broadcast(root, 8, 0);
    test_broadcast(root, 8, 1);
    test_broadcast(root, LARGE, 0);
    test_broadcast(root, 0, 0);
  }
  test_broadcast(p - 1, LARGE, 1);
  test_broadcast(0, 1, 0);
  test_broadcast(p / 2, 3 * p + 1, 0);

  /* ---- reduce ---- */
  int counts[5] = {1, p - 1, p, 3 * p + 1, 100003};
  for (int c = 0; c < 5; c++) {
    int n = counts[c];
    if (n < 1) continue;
    test_reduce_long(n, bspk_op_sum_long, 0, "bspk_op_sum_long");
    test_reduce_double(n, bspk_op_max_double, 1, 0, "bspk_op_max_double");
    test_reduce_double(n, bspk_op_sum_double, 0, 0, "bspk_op_sum_double");
    test_reduce_e6(n);
    if (n < 1000) {
      test_reduce_double(n, bspk_op_sum_double, 0, 1, "bspk_op_sum_double, integers");
      test_reduce_double(n, bspk_op_min_double, 2, 0, "bspk_op_min_double");
      test_reduce_long(n, bspk_op_max_long, 1, "bspk_op_max_long");
      test_reduce_int(n, bspk_op_sum_int, 0, "bspk_op_sum_int");
      test_reduce_int(n, bspk_op_max_int, 1, "bspk_op_max_int");
      test_reduce_e12(n);
    }
  }
  test_reduce_e12(20011);
  {
    /* count 0: nothing to combine, dst untouched (still a collective call) */
    long z_src = 5, z_dst = -77;
    bspk_reduce(bspk_op_sum_long, &z_src, &z_dst, 0, (int)sizeof(long));
    TU_EQ("destination of a reduce of 0 elements", -77, z_dst);
  }

  /* ---- the collectives left the message queue and tag size alone ---- */
  {
    int n = -1, nb = -1;
    bsp_qsize(&n, &nb);
    TU_EQ("messages in the queue after collectives", 0, n);
    int tag = 1000 + s, pay = 2000 + s;
    bsp_send(next, &tag, &pay, (int)sizeof pay);
    bsp_sync();
    bsp_qsize(&n, &nb);
    TU_EQ("messages after a send following collectives", 1, n);
    int status = -1, rtag = -1, rpay = -1;
    bsp_get_tag(&status, &rtag);
    TU_EQ("payload size", (int)sizeof(int), status);
    TU_EQ("tag (tag size 4 set before the collectives)", 1000 + prev, rtag);
    bsp_move(&rpay, (int)sizeof rpay);
    TU_EQ("payload", 2000 + prev, rpay);
    t = 0;
    bsp_set_tagsize(&t);
    TU_EQ("tag size after collectives", 4, t);
    bsp_sync();
  }

  /* ---- messages sent just before a collective are in the queue after it, whether it
   *      takes one superstep (small data) or two (two-phase, large data) ---- */
  {
    int four = (int)sizeof(int);
    bsp_set_tagsize(&four);
    bsp_sync();
  }
  for (int big = 0; big < 2; big++) {
    int nbytes = big ? (1 << 20) + 3 : 8;
    char *data = calloc((size_t)nbytes, 1);
    TU_CHECK(data != NULL, "calloc");
    int tag = 3000 + s, pay[3] = {s, big, -s};
    bsp_send(next, &tag, pay, (int)sizeof pay);
    bspk_broadcast(p - 1, data, data, nbytes);
    int n = -1, nb = -1;
    bsp_qsize(&n, &nb);
    TU_EQ("messages queued after a broadcast (sent before it)", 1, n);
    TU_EQ("bytes queued after a broadcast", (int)sizeof pay, nb);
    int status = -1, rtag = -1, rpay[3] = {0, 0, 0};
    bsp_get_tag(&status, &rtag);
    TU_EQ("tag of a message kept across a broadcast", 3000 + prev, rtag);
    bsp_move(rpay, (int)sizeof rpay);
    TU_EQ("payload[0] kept across a broadcast", prev, rpay[0]);
    TU_EQ("payload[1] kept across a broadcast", big, rpay[1]);
    TU_EQ("payload[2] kept across a broadcast", -prev, rpay[2]);
    bsp_send(next, &tag, pay, (int)sizeof pay);
    long one = 1, total = 0;
    bspk_reduce(bspk_op_sum_long, &one, &total, 1, (int)sizeof one);
    TU_EQ("sum of ones", (long)p, total);
    bsp_qsize(&n, &nb);
    TU_EQ("messages queued after a reduce (sent before it)", 1, n);
    free(data);
    bsp_sync();
  }

  bsp_pop_reg(&box);
  bsp_sync();
  bsp_end();
  return 0;
}
