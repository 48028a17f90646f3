/*
 * native_types.c - MulticoreBSP's native types and the 1998 API's, side by side, through one
 * bsp.h: every out-argument of bsp_qsize, bsp_get_tag and bsp_set_tagsize is given as an
 * int *, an unsigned * and a size_t * (bsp_qsize's two in every combination), and unsigned
 * and size_t values go where bsp.h takes int (pids, offsets, sizes). Built by bspcc with
 * -Wall -Wextra -Werror (tests/compat/CMakeLists.txt), so each call must compile cleanly.
 *
 * Every variable written is filled with ones first (0xFF bytes) and followed by a guard of
 * the same type: a call that wrote 4 of a size_t's 8 bytes leaves its upper half
 * 0xFFFFFFFF, one that wrote 8 bytes into an unsigned overwrites the guard, and the check
 * fails. The message sizes add up to more than 2^20 bytes, so every byte of the low half
 * is checked too. Exits 0 exactly when every check passed; a failed check ends the run
 * through bsp_abort (status 1).
 *
 *   native_types                           the checks
 *   native_types --bad-type                bspk_qsize_as with a type none of the three: an error
 *   native_types --huge-tagsize size_t     bsp_set_tagsize with a size_t of 2^32 + 4: an error
 *   native_types --huge-tagsize unsigned   bsp_set_tagsize with an unsigned of UINT_MAX: an error
 * In the error modes the last process makes the call and the others wait in bsp_sync.
 * (Read as an int, the size_t's low half would be a valid tag size, 4, and UINT_MAX would be
 * -1: only a read of the whole variable reports them as too large.)
 */
#include <bsp.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A variable of type T and a guard right after it, both filled with one byte first. */
#define BOX(T) \
  struct {     \
    T value;   \
    T guard;   \
  }
#define FILL(box, byte) memset(&(box), (byte), sizeof(box))

enum { TAG_BYTES = sizeof(unsigned), BASE_NBYTES = 1 << 18 };

static void check(int ok, const char *what) {
  if (!ok) bsp_abort("native_types: %s\n", what);
}

/* Whether the n bytes at p all equal byte: a guard nobody wrote over. */
static int untouched(const void *p, size_t n, unsigned char byte) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != byte) return 0;
  return 1;
}

/* The payload size of the message from process s to process t: 2^18 plus a few bytes, so
 * that no two messages have the same size and the sum needs more than 20 bits. */
static size_t payload_nbytes(unsigned s, unsigned t) {
  return BASE_NBYTES + 4099u * s + 7u * t + 1u;
}

static size_t expected_bytes(unsigned me, unsigned p) {
  size_t sum = 0;
  for (unsigned s = 0; s < p; s++) sum += payload_nbytes(s, me);
  return sum;
}

/* bsp_qsize into a variable of type NT and one of type BT, each checked with its guard. */
#define CHECK_QSIZE(NT, BT, n_expected, bytes_expected)                                         \
  do {                                                                                          \
    BOX(NT) n_box;                                                                              \
    BOX(BT) b_box;                                                                              \
    FILL(n_box, 0xFF);                                                                          \
    FILL(b_box, 0xFF);                                                                          \
    bsp_qsize(&n_box.value, &b_box.value);                                                      \
    if (n_box.value != (NT)(n_expected) || b_box.value != (BT)(bytes_expected) ||               \
        !untouched(&n_box.guard, sizeof n_box.guard, 0xFF) ||                                   \
        !untouched(&b_box.guard, sizeof b_box.guard, 0xFF))                                     \
      bsp_abort("native_types: bsp_qsize(" #NT " *, " #BT                                       \
                " *) gave %llu messages and %llu "                                              \
                "bytes, not %llu and %llu (or wrote past them)\n",                              \
                (unsigned long long)n_box.value, (unsigned long long)b_box.value,               \
                (unsigned long long)(n_expected), (unsigned long long)(bytes_expected));        \
    BOX(NT) alone;                                                                              \
    FILL(alone, 0xFF);                                                                          \
    bsp_qsize(&alone.value, NULL);                                                              \
    check(alone.value == (NT)(n_expected) && untouched(&alone.guard, sizeof alone.guard, 0xFF), \
          "bsp_qsize(" #NT " *, NULL) gave a wrong count");                                     \
  } while (0)

#define CHECK_QSIZE_ALL(n_expected, bytes_expected)              \
  do {                                                           \
    CHECK_QSIZE(int, int, n_expected, bytes_expected);           \
    CHECK_QSIZE(int, unsigned, n_expected, bytes_expected);      \
    CHECK_QSIZE(int, size_t, n_expected, bytes_expected);        \
    CHECK_QSIZE(unsigned, int, n_expected, bytes_expected);      \
    CHECK_QSIZE(unsigned, unsigned, n_expected, bytes_expected); \
    CHECK_QSIZE(unsigned, size_t, n_expected, bytes_expected);   \
    CHECK_QSIZE(size_t, int, n_expected, bytes_expected);        \
    CHECK_QSIZE(size_t, unsigned, n_expected, bytes_expected);   \
    CHECK_QSIZE(size_t, size_t, n_expected, bytes_expected);     \
  } while (0)

/* bsp_get_tag into a status of type T: the first message's size (or -1 as a T), its tag. */
#define CHECK_GET_TAG(T, fill_byte, status_expected, tag_expected)                             \
  do {                                                                                         \
    BOX(T) st;                                                                                 \
    FILL(st, fill_byte);                                                                       \
    unsigned tag = 0xDEADBEEFu;                                                                \
    bsp_get_tag(&st.value, &tag);                                                              \
    if (st.value != (T)(status_expected) || !untouched(&st.guard, sizeof st.guard, fill_byte)) \
      bsp_abort("native_types: bsp_get_tag(" #T " *) gave the status %llu, not %llu\n",        \
                (unsigned long long)st.value, (unsigned long long)(T)(status_expected));       \
    check(tag == (tag_expected), "bsp_get_tag gave a wrong tag");                              \
  } while (0)

/* bsp_set_tagsize with a T: the size it replaces comes back as a T, all of its bytes. */
#define SET_TAGSIZE(T, size, previous_expected)                                             \
  do {                                                                                      \
    BOX(T) ts;                                                                              \
    FILL(ts, 0xFF);                                                                         \
    ts.value = (T)(size);                                                                   \
    bsp_set_tagsize(&ts.value);                                                             \
    if (ts.value != (T)(previous_expected) || !untouched(&ts.guard, sizeof ts.guard, 0xFF)) \
      bsp_abort("native_types: bsp_set_tagsize(" #T " *) gave back %llu, not %llu\n",       \
                (unsigned long long)ts.value, (unsigned long long)(previous_expected));     \
  } while (0)

/* Each macro argument must be evaluated once: these count their calls. (No globals: on the
 * threads back end the processes share them.) */
struct counted {
  int calls;
  size_t size;
  unsigned count;
};
static size_t *next_size(struct counted *c) {
  c->calls++;
  return &c->size;
}
static unsigned *next_unsigned(struct counted *c) {
  c->calls++;
  return &c->count;
}

static void qsize_after_undef(int *nmessages, int *nbytes); /* at the end of this file */

static void errors_mode(int argc, char **argv) {
  unsigned last = (unsigned)bsp_nprocs() - 1u;
  if ((unsigned)bsp_pid() == last) {
    if (strcmp(argv[1], "--bad-type") == 0) {
      int n = 0;
      bspk_qsize_as(&n, (enum bspk_out_type)7, NULL, BSPK_OUT_INT);
    } else if (argc > 2 && strcmp(argv[2], "size_t") == 0) {
      size_t size = ((size_t)1 << 32) + 4; /* as an int: 4 */
      bsp_set_tagsize(&size);
    } else {
      unsigned size = UINT_MAX; /* as an int: -1 */
      bsp_set_tagsize(&size);
    }
  }
  bsp_sync();
  bsp_end();
  exit(0);
}

int main(int argc, char **argv) {
  bsp_begin(bsp_nprocs());
  if (argc > 1) errors_mode(argc, argv);
  unsigned p = bsp_nprocs(), s = bsp_pid(); /* MulticoreBSP's types: unsigned */
  size_t largest = payload_nbytes(p - 1, p - 1);
  unsigned char *payload = malloc(largest), *received = malloc(largest);
  check(payload != NULL && received != NULL, "out of memory");

  /* Superstep 0: a registration by a size_t size; the tag size set through a size_t. */
  double area[4] = {0, 0, 0, 0};
  bsp_push_reg(area, sizeof area);
  SET_TAGSIZE(size_t, TAG_BYTES, 0);
  bsp_sync();

  /* Superstep 1: a put and messages with unsigned pids and size_t sizes and offsets; the
   * next tag size (8) set through an unsigned; it replaces TAG_BYTES. */
  unsigned right = (s + 1) % p;
  double mine = 10.0 * s + 0.5;
  size_t offset = 2 * sizeof(double), nbytes = sizeof mine;
  bsp_put(right, &mine, area, offset, nbytes);
  for (unsigned t = 0; t < p; t++) {
    size_t n = payload_nbytes(s, t);
    memset(payload, (int)(s + 1), n);
    unsigned tag = 1000u + s;
    bsp_send(t, &tag, payload, n);
  }
  SET_TAGSIZE(unsigned, 8, TAG_BYTES);
  bsp_sync();

  /* Superstep 2: the queue read with every type. */
  unsigned left = (s + p - 1) % p;
  check(area[2] == 10.0 * left + 0.5, "the put with an unsigned pid and size_t sizes went wrong");
  CHECK_QSIZE_ALL(p, expected_bytes(s, p));
  for (unsigned from = 0; from < p; from++) { /* in the order of the sender's pid */
    size_t size = payload_nbytes(from, s);
    CHECK_GET_TAG(int, 0xFF, size, 1000u + from);
    CHECK_GET_TAG(unsigned, 0xFF, size, 1000u + from);
    CHECK_GET_TAG(size_t, 0xFF, size, 1000u + from);
    if (from % 2 == 0) {
      size_t room = largest; /* a size_t reception size */
      bsp_move(received, room);
      check(received[0] == from + 1 && received[size - 1] == from + 1, "bsp_move's payload");
    } else {
      void *tag, *data;
      size_t got = bsp_hpmove(&tag, &data); /* MulticoreBSP's return type */
      check(got == size, "bsp_hpmove's size in a size_t");
      check(((unsigned char *)data)[size - 1] == from + 1 && *(unsigned *)tag == 1000u + from,
            "bsp_hpmove's message");
    }
  }
  /* The queue is empty: 0 and 0, and a status of -1 in each type (written over 0x5A bytes:
   * the -1 must come from the call). */
  CHECK_QSIZE_ALL(0, 0);
  CHECK_GET_TAG(int, 0x5A, -1, 0xDEADBEEFu);
  CHECK_GET_TAG(unsigned, 0x5A, UINT_MAX, 0xDEADBEEFu);
  CHECK_GET_TAG(size_t, 0x5A, SIZE_MAX, 0xDEADBEEFu);
  void *tag, *data;
  size_t none = bsp_hpmove(&tag, &data);
  check(none == SIZE_MAX, "bsp_hpmove on an empty queue is not SIZE_MAX in a size_t");
  /* With the tag size of 8 set in superstep 1, one message to the left; the tag size back to
   * 0 through an int, replacing 8. */
  unsigned long long wide_tag = 0x0102030405060708ull + s;
  bsp_send(left, &wide_tag, NULL, 0);
  SET_TAGSIZE(int, 0, 8);
  bsp_sync();

  /* Superstep 3: the 8-byte tag; each argument evaluated once; the functions themselves. */
  unsigned long long tag_got = 0;
  size_t status = 1;
  bsp_get_tag(&status, &tag_got);
  check(status == 0 && tag_got == 0x0102030405060708ull + right,
        "the tag size set through an unsigned did not take effect");
  struct counted counted = {0, 7, 7};
  bsp_qsize(next_unsigned(&counted), next_size(&counted));
  check(counted.calls == 2 && counted.count == 1 && counted.size == 0,
        "bsp_qsize evaluated an argument more or less than once");
  bsp_get_tag(next_size(&counted), &tag_got);
  check(counted.calls == 3 && counted.size == 0, "bsp_get_tag evaluated its status twice");
  /* `&bsp_qsize` and `(bsp_qsize)(...)` are the int functions (no macro without a `(`). */
  void (*qsize_function)(bsp_nprocs_t *, bsp_size_t *) = &bsp_qsize;
  void (*get_tag_function)(bsp_size_t *, void *) = bsp_get_tag;
  int n = -1, b = -1, st = -2;
  qsize_function(&n, &b);
  check(n == 1 && b == 0, "bsp_qsize through a function pointer");
  n = b = -1;
  (bsp_qsize)(&n, &b);
  check(n == 1 && b == 0, "(bsp_qsize)(...)");
  get_tag_function(&st, &tag_got);
  check(st == 0, "bsp_get_tag through a function pointer");
  n = b = -1;
  qsize_after_undef(&n, &b);
  check(n == 1 && b == 0, "bsp_qsize after #undef bsp_qsize");
  bsp_move(NULL, 0);
  bsp_sync();

  bsp_pop_reg(area);
  free(payload); /* before bsp_end: only process 0 returns from it */
  free(received);
  bsp_end();
  return 0;
}

/* #undef gives the int function back for the rest of the file. */
#undef bsp_qsize
static void qsize_after_undef(int *nmessages, int *nbytes) { bsp_qsize(nmessages, nbytes); }
