/*
 * test_stress.c - randomized stress test of put, get and send against a sequential model.
 *
 * Every process simulates the random choices of ALL processes with the same PRNG and seed,
 * so it knows what every process does in each superstep. Per superstep each process issues
 * a random number of
 *   - puts (random destination including itself, random size including 0, random offset)
 *     into its own region of the destination's registered array (regions keep the order
 *     between different senders out of the picture; several puts of one sender may overlap,
 *     and then the one issued last wins),
 *   - gets (random source process, offset anywhere in the array, size including 0) into a
 *     private buffer: they must return the array as it was BEFORE the superstep's puts,
 *   - sends (random destination, payload size including 0), with the tag size changed at
 *     random supersteps (messages keep the tag size of the superstep they were sent in),
 * and receives all or only some of its messages (the others must vanish at the next sync).
 * Other areas are registered and popped meanwhile (also in supersteps with puts into A).
 * After each sync a process compares its array, its gets and its messages with the model.
 *
 * Arguments: [--steps N] [--seed S]
 */
#include "testutil.h"

#define R 192    /* bytes of each sender's region in every array */
#define MAXOPS 7 /* at most MAXOPS-1 puts, gets and sends per process per superstep */
#define MAXPUT 48
#define MAXGET 80
#define MAXSEND 40
#define MAXTAG 12

typedef struct {
  int d, off, len;
  uint64_t c;
} op;

typedef struct {
  int nput, nget, nsend;
  op put[MAXOPS], get[MAXOPS], send[MAXOPS];
} ops;

typedef struct {
  int src, len;
  uint64_t c;
  int matched;
} expmsg;

static uint64_t g_seed_default = 0xb5b5c0ffee123ULL;

static void gen_ops(uint64_t seed, int step, int q, int p, ops *o) {
  tu_rng r = tu_rng_seed(seed, (uint64_t)step, (uint64_t)q);
  int area = p * R;
  o->nput = (int)tu_below(&r, MAXOPS);
  o->nget = (int)tu_below(&r, MAXOPS);
  o->nsend = (int)tu_below(&r, MAXOPS);
  if (tu_below(&r, 10) == 0) /* some quiet supersteps */
    o->nput = o->nget = o->nsend = 0;
  for (int i = 0; i < o->nput; i++) {
    op *x = &o->put[i];
    x->d = (int)tu_below(&r, (uint64_t)p);
    x->off = q * R + (int)tu_below(&r, R);
    int room = q * R + R - x->off;
    int maxlen = room < MAXPUT ? room : MAXPUT;
    x->len = tu_below(&r, 6) == 0 ? 0 : (int)tu_below(&r, (uint64_t)maxlen + 1);
    x->c = tu_next(&r);
  }
  for (int i = 0; i < o->nget; i++) {
    op *x = &o->get[i];
    x->d = (int)tu_below(&r, (uint64_t)p);
    x->off = (int)tu_below(&r, (uint64_t)area);
    int room = area - x->off;
    int maxlen = room < MAXGET ? room : MAXGET;
    x->len = tu_below(&r, 6) == 0 ? 0 : (int)tu_below(&r, (uint64_t)maxlen + 1);
    x->c = 0;
  }
  for (int i = 0; i < o->nsend; i++) {
    op *x = &o->send[i];
    x->d = (int)tu_below(&r, (uint64_t)p);
    x->off = 0;
    x->len = tu_below(&r, 5) == 0 ? 0 : (int)tu_below(&r, MAXSEND + 1);
    x->c = tu_next(&r);
  }
}

/* The tag size that bsp_set_tagsize is called with in this superstep, or -1. */
static int tagsize_change(uint64_t seed, int step) {
  tu_rng r = tu_rng_seed(seed, (uint64_t)step, 0xfeedULL);
  if (tu_below(&r, 12) != 0) return -1;
  static const int sizes[4] = {0, 4, 8, 12};
  return sizes[tu_below(&r, 4)];
}

int main(int argc, char **argv) {
  int steps = 200;
  uint64_t seed = g_seed_default;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--steps") == 0) steps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[i + 1], NULL, 0);
  }
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int area = p * R;

  unsigned char *A = (unsigned char *)tu_malloc((size_t)area);
  unsigned char *model = (unsigned char *)tu_malloc((size_t)area * (size_t)p);
  unsigned char *G = (unsigned char *)tu_malloc((size_t)MAXOPS * MAXGET);
  unsigned char *extra = (unsigned char *)tu_malloc(64);
  ops *all = (ops *)tu_malloc(sizeof(ops) * (size_t)p);
  expmsg *exp = (expmsg *)tu_malloc(sizeof(expmsg) * (size_t)(p * MAXOPS));
  /* initial contents, known to everyone */
  for (int q = 0; q < p; q++)
    tu_fill(model + (size_t)q * (size_t)area, (size_t)area, (uint64_t)q, 0x1417, seed);
  memcpy(A, model + (size_t)s * (size_t)area, (size_t)area);
  unsigned char pre[8];
  bsp_push_reg(pre, 8); /* registered before A, popped half-way while A is in use */
  bsp_push_reg(A, area);
  bsp_sync();

  int tagsize = 0; /* in effect in the current superstep */
  for (int step = 0; step < steps; step++) {
    for (int q = 0; q < p; q++) gen_ops(seed, step, q, p, &all[q]);
    ops *mine = &all[s];

    /* ---- issue this process's operations ---- */
    for (int i = 0; i < mine->nput; i++) {
      op *x = &mine->put[i];
      unsigned char buf[MAXPUT];
      tu_fill(buf, (size_t)x->len, (uint64_t)s, (uint64_t)x->d, x->c);
      bsp_put(x->d, buf, A, x->off, x->len);
      memset(buf, 0xdd, sizeof buf); /* the put must have copied it */
    }
    memset(G, 0xcc, (size_t)MAXOPS * MAXGET);
    for (int i = 0; i < mine->nget; i++) {
      op *x = &mine->get[i];
      bsp_get(x->d, A, x->off, G + i * MAXGET, x->len);
    }
    for (int i = 0; i < mine->nsend; i++) {
      op *x = &mine->send[i];
      unsigned char tag[MAXTAG], payload[MAXSEND];
      tu_fill(tag, (size_t)tagsize, (uint64_t)s, (uint64_t)x->d, x->c ^ 0x7a7a);
      tu_fill(payload, (size_t)x->len, (uint64_t)s, (uint64_t)x->d, x->c);
      bsp_send(x->d, tag, payload, x->len);
      memset(tag, 0xdd, sizeof tag);
      memset(payload, 0xdd, sizeof payload);
    }
    int newts = tagsize_change(seed, step);
    if (newts >= 0) {
      int t = newts;
      bsp_set_tagsize(&t);
      TU_CHECK(t == tagsize, "step %d: bsp_set_tagsize returned %d, expected the old size %d", step,
               t, tagsize);
    }
    /* registration churn that must not disturb A */
    if (step % 20 == 10) bsp_push_reg(extra, 64);
    if (step % 20 == 19) bsp_pop_reg(extra);
    if (step == steps / 2) bsp_pop_reg(pre);

    bsp_sync();

    /* ---- gets: the arrays as they were before this superstep's puts ---- */
    for (int i = 0; i < mine->nget; i++) {
      op *x = &mine->get[i];
      const unsigned char *ref = model + (size_t)x->d * (size_t)area + x->off;
      if (x->len > 0 && memcmp(ref, G + i * MAXGET, (size_t)x->len) != 0) {
        int b = 0;
        while (ref[b] == G[i * MAXGET + b]) b++;
        TU_CHECK(0,
                 "seed %#llx step %d: get %d from process %d, offset %d, %d bytes: "
                 "byte %d expected 0x%02x, got 0x%02x",
                 (unsigned long long)seed, step, i, x->d, x->off, x->len, b, ref[b],
                 G[i * MAXGET + b]);
      }
      TU_CHECK(G[i * MAXGET + x->len] == 0xcc || x->len == MAXGET,
               "step %d: get %d wrote past its %d bytes", step, i, x->len);
    }

    /* ---- apply every process's puts to the model, in sender and program order ---- */
    for (int q = 0; q < p; q++)
      for (int i = 0; i < all[q].nput; i++) {
        op *x = &all[q].put[i];
        tu_fill(model + (size_t)x->d * (size_t)area + x->off, (size_t)x->len, (uint64_t)q,
                (uint64_t)x->d, x->c);
      }
    const unsigned char *mref = model + (size_t)s * (size_t)area;
    if (memcmp(mref, A, (size_t)area) != 0) {
      int b = 0;
      while (mref[b] == A[b]) b++;
      TU_CHECK(0,
               "seed %#llx step %d: registered array differs from the model at byte %d "
               "(region of sender %d): expected 0x%02x, got 0x%02x",
               (unsigned long long)seed, step, b, b / R, mref[b], A[b]);
    }

    /* ---- messages sent in this superstep, with this superstep's tag size ---- */
    int nexp = 0, bexp = 0;
    for (int q = 0; q < p; q++)
      for (int i = 0; i < all[q].nsend; i++)
        if (all[q].send[i].d == s) {
          exp[nexp].src = q;
          exp[nexp].len = all[q].send[i].len;
          exp[nexp].c = all[q].send[i].c;
          exp[nexp].matched = 0;
          bexp += exp[nexp].len;
          nexp++;
        }
    int n = -1, nb = -1;
    bsp_qsize(&n, &nb);
    TU_CHECK(n == nexp && nb == bexp,
             "seed %#llx step %d: bsp_qsize: expected %d messages / %d bytes, got %d / %d",
             (unsigned long long)seed, step, nexp, bexp, n, nb);
    tu_rng rr = tu_rng_seed(seed, (uint64_t)step, 0x1000ULL + (uint64_t)s);
    int take = tu_below(&rr, 4) == 0 ? (int)tu_below(&rr, (uint64_t)nexp + 1) : nexp;
    for (int k = 0; k < take; k++) {
      unsigned char tag[MAXTAG + 4], payload[MAXSEND + 4], et[MAXTAG], ep[MAXSEND];
      int status = -2;
      memset(tag, 0xab, sizeof tag);
      bsp_get_tag(&status, tag);
      TU_CHECK(status >= 0 && status <= MAXSEND, "step %d: message %d: status %d", step, k, status);
      bsp_move(payload, MAXSEND + 4);
      int found = 0;
      for (int j = 0; j < nexp && !found; j++) {
        if (exp[j].matched || exp[j].len != status) continue;
        tu_fill(et, (size_t)tagsize, (uint64_t)exp[j].src, (uint64_t)s, exp[j].c ^ 0x7a7a);
        tu_fill(ep, (size_t)status, (uint64_t)exp[j].src, (uint64_t)s, exp[j].c);
        if (memcmp(et, tag, (size_t)tagsize) == 0 && memcmp(ep, payload, (size_t)status) == 0)
          found = exp[j].matched = 1;
      }
      TU_CHECK(found,
               "seed %#llx step %d: message %d of %d (%d bytes, tag size %d) matches "
               "no expected message",
               (unsigned long long)seed, step, k, nexp, status, tagsize);
    }
    if (take == nexp) {
      int status = 0;
      unsigned char tag[MAXTAG];
      bsp_get_tag(&status, tag);
      TU_CHECK(status == -1, "step %d: bsp_get_tag after moving all: status %d", step, status);
    }

    if (newts >= 0) tagsize = newts;
  }

  if (steps % 20 > 10) bsp_pop_reg(extra);
  if (steps < 1) bsp_pop_reg(pre);
  bsp_pop_reg(A);
  bsp_sync();
  free(A);
  free(model);
  free(G);
  free(extra);
  free(all);
  free(exp);
  bsp_end();
  return 0;
}
