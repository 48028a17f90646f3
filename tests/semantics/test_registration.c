/*
 * test_registration.c - bsp_push_reg and bsp_pop_reg.
 *
 *  - push_reg takes effect at the next sync: the area can be used after it;
 *  - pop_reg, then register again (later, and in the same superstep as the pop);
 *  - the same address registered twice: stack semantics, pop removes the most recent
 *    registration (checked with processes that register two different areas in the slots
 *    where others register one address twice: after the pop, the remaining slot is used);
 *  - different sizes on different processes: a put or get within the destination's own size
 *    works even when it is larger than the sender's;
 *  - bsp_push_reg(NULL, 0) on some processes, with the others using the slot, and the
 *    registrations around it staying matched;
 *  - a registration in the middle popped first; many registrations popped in push order;
 *    overlapping areas (an array and a part of it) registered at the same time;
 *  - a put issued before the pop_reg of its area in the same superstep still lands.
 */
#include "testutil.h"

#define SENT 0x77

/* Every process puts the int (tag*1000 + s) into slot s of ident on every process. */
static void put_slots(const void *ident, int tag) {
  int p = bsp_nprocs(), s = bsp_pid();
  int v = tag * 1000 + s;
  for (int d = 0; d < p; d++) bsp_put(d, &v, (void *)ident, s * (int)sizeof(int), (int)sizeof(int));
}

static void check_slots(const int *area, int tag, const char *what) {
  int p = bsp_nprocs();
  for (int i = 0; i < p; i++) {
    char w[128];
    snprintf(w, sizeof w, "%s: slot %d", what, i);
    TU_EQ(w, tag * 1000 + i, area[i]);
  }
}

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int next = (s + 1) % p, prev = (s + p - 1) % p;
  size_t slotbytes = sizeof(int) * (size_t)p;

  /* ---- 1. push_reg, use after the sync ---- */
  int *a = (int *)tu_malloc(slotbytes);
  memset(a, 0, slotbytes);
  bsp_push_reg(a, (int)slotbytes);
  bsp_sync();
  put_slots(a, 1);
  bsp_sync();
  check_slots(a, 1, "area registered in the previous superstep");

  /* ---- 2. pop, then register again in a later superstep with another size ---- */
  bsp_pop_reg(a);
  bsp_sync();
  int *a2 = (int *)tu_malloc(2 * slotbytes);
  memset(a2, 0, 2 * slotbytes);
  bsp_push_reg(a2, (int)(2 * slotbytes));
  bsp_sync();
  {
    int v = 2000 + s;
    for (int d = 0; d < p; d++) /* into the second half: beyond the old size */
      bsp_put(d, &v, a2, (p + s) * (int)sizeof(int), (int)sizeof(int));
    bsp_sync();
    check_slots(a2 + p, 2, "second half of a re-registered (larger) area");
  }

  /* ---- 3. pop and push again in the same superstep (new size from the next sync) ---- */
  bsp_pop_reg(a2);
  bsp_push_reg(a2, (int)(2 * slotbytes));
  bsp_sync();
  {
    int v = 3000 + s;
    for (int d = 0; d < p; d++) bsp_put(d, &v, a2, (p + s) * (int)sizeof(int), (int)sizeof(int));
    bsp_sync();
    check_slots(a2 + p, 3, "area popped and pushed again in one superstep");
  }
  bsp_pop_reg(a2);
  bsp_sync();

  /* ---- 4. same address twice: pop removes the most recent registration ----
   * even pids: push(A), push(A); odd pids: push(B), push(C). All pop the most recent
   * (even: A, odd: C). Afterwards even's A must correspond to odd's B. */
  {
    int *A = (int *)tu_malloc(slotbytes), *B = (int *)tu_malloc(slotbytes);
    int *C = (int *)tu_malloc(slotbytes);
    memset(A, 0, slotbytes);
    memset(B, 0, slotbytes);
    memset(C, 0, slotbytes);
    int even = s % 2 == 0;
    if (even) {
      bsp_push_reg(A, (int)slotbytes);
      bsp_push_reg(A, (int)slotbytes);
    } else {
      bsp_push_reg(B, (int)slotbytes);
      bsp_push_reg(C, (int)slotbytes);
    }
    bsp_sync();
    bsp_pop_reg(even ? A : C);
    bsp_sync();
    put_slots(even ? A : B, 4);
    bsp_sync();
    if (even) {
      check_slots(A, 4, "address registered twice, popped once");
    } else {
      check_slots(B, 4, "first of two areas after popping the second");
      for (int i = 0; i < p; i++) TU_EQ("area whose registration was popped", 0, C[i]);
    }
    /* the remaining registration is still a stack entry: pop it, register again */
    bsp_pop_reg(even ? A : B);
    bsp_sync();
    bsp_push_reg(B, (int)slotbytes);
    bsp_sync();
    put_slots(B, 5);
    bsp_sync();
    check_slots(B, 5, "area registered after the earlier ones were all popped");
    bsp_pop_reg(B);
    bsp_sync();
    free(A);
    free(B);
    free(C);
  }

  /* ---- 5. different sizes on different processes ---- */
  {
    int mysize = 16 * (s + 1);
    int maxsize = 16 * p;
    unsigned char *D = (unsigned char *)tu_malloc((size_t)mysize);
    unsigned char *src = (unsigned char *)tu_malloc((size_t)maxsize);
    unsigned char *got = (unsigned char *)tu_malloc((size_t)maxsize * (size_t)p);
    tu_fill(D, (size_t)mysize, (uint64_t)s, 50, 0);
    bsp_push_reg(D, mysize);
    bsp_sync();
    /* prev fills our whole area; everyone reads every area whole (old contents) */
    int nsize = 16 * (next + 1);
    tu_fill(src, (size_t)nsize, (uint64_t)s, 51, 0);
    bsp_put(next, src, D, 0, nsize);
    for (int d = 0; d < p; d++) bsp_get(d, D, 0, got + (size_t)d * (size_t)maxsize, 16 * (d + 1));
    bsp_sync();
    TU_PATTERN("area of this process's own size, put by prev", D, mysize, (uint64_t)prev, 51, 0, 0);
    for (int d = 0; d < p; d++) {
      char w[96];
      snprintf(w, sizeof w, "whole area of process %d (size %d), read by get", d, 16 * (d + 1));
      TU_PATTERN(w, got + (size_t)d * (size_t)maxsize, 16 * (d + 1), (uint64_t)d, 50, 0, 0);
    }
    /* the last 8 bytes of each destination's area */
    for (int d = 0; d < p; d++) {
      unsigned char tail[8];
      tu_fill(tail, 8, (uint64_t)s, 52, (uint64_t)d);
      if (d == (s + 2) % p) bsp_put(d, tail, D, 16 * (d + 1) - 8, 8);
    }
    bsp_sync();
    int writer = ((s - 2) % p + p) % p; /* the process d with (d + 2) % p == s */
    TU_PATTERN("last 8 bytes of the own area", D + mysize - 8, 8, (uint64_t)writer, 52, (uint64_t)s,
               0);
    bsp_pop_reg(D);
    bsp_sync();
    free(D);
    free(src);
    free(got);
  }

  /* ---- 6. push_reg(NULL, 0) on odd processes, between two ordinary registrations ---- */
  {
    int *Z = (int *)tu_malloc(slotbytes), *E = (int *)tu_malloc(slotbytes);
    int *W = (int *)tu_malloc(slotbytes);
    memset(Z, 0, slotbytes);
    memset(E, 0, slotbytes);
    memset(W, 0, slotbytes);
    int even = s % 2 == 0;
    bsp_push_reg(Z, (int)slotbytes);
    if (even) bsp_push_reg(E, (int)slotbytes);
    else bsp_push_reg(NULL, 0);
    bsp_push_reg(W, (int)slotbytes);
    bsp_sync();
    put_slots(Z, 6);
    put_slots(W, 7);
    if (even) {
      int v = 8000 + s;
      for (int d = 0; d < p; d += 2) bsp_put(d, &v, E, s * (int)sizeof(int), (int)sizeof(int));
    }
    bsp_sync();
    check_slots(Z, 6, "area registered before a NULL registration");
    check_slots(W, 7, "area registered after a NULL registration");
    for (int i = 0; i < p; i++) {
      int expect = (even && i % 2 == 0) ? 8000 + i : 0;
      TU_EQ("area registered where odd processes registered NULL", expect, E[i]);
    }
    /* pop the middle one first (the NULL one on odd processes) */
    bsp_pop_reg(even ? (void *)E : NULL);
    bsp_sync();
    put_slots(Z, 9);
    put_slots(W, 10);
    bsp_sync();
    check_slots(Z, 9, "first area after popping the middle registration");
    check_slots(W, 10, "last area after popping the middle registration");
    bsp_pop_reg(W);
    bsp_pop_reg(Z);
    bsp_sync();
    free(Z);
    free(E);
    free(W);
  }

  /* ---- 7. many registrations, popped in push order; overlapping areas ---- */
  {
    enum { NREG = 300 };
    int **areas = (int **)tu_malloc(sizeof(int *) * NREG);
    for (int k = 0; k < NREG; k++) {
      areas[k] = (int *)tu_malloc(slotbytes);
      memset(areas[k], 0, slotbytes);
      bsp_push_reg(areas[k], (int)slotbytes);
    }
    bsp_sync();
    for (int k = 0; k < NREG; k++) {
      int v = k * 100 + s;
      bsp_put(next, &v, areas[k], s * (int)sizeof(int), (int)sizeof(int));
    }
    bsp_sync();
    for (int k = 0; k < NREG; k++) {
      char w[64];
      snprintf(w, sizeof w, "registration %d of %d", k, NREG);
      TU_EQ(w, k * 100 + prev, areas[k][prev]);
    }
    /* pop the first half in push order, use the second half */
    for (int k = 0; k < NREG / 2; k++) bsp_pop_reg(areas[k]);
    bsp_sync();
    for (int k = NREG / 2; k < NREG; k++) {
      int v = -(k * 100 + s);
      bsp_put(prev, &v, areas[k], s * (int)sizeof(int), (int)sizeof(int));
    }
    bsp_sync();
    for (int k = NREG / 2; k < NREG; k++) {
      char w[64];
      snprintf(w, sizeof w, "registration %d after popping 0..%d", k, NREG / 2 - 1);
      TU_EQ(w, -(k * 100 + next), areas[k][next]);
    }
    for (int k = NREG / 2; k < NREG; k++) bsp_pop_reg(areas[k]);
    bsp_sync();
    for (int k = 0; k < NREG; k++) free(areas[k]);
    free(areas);

    /* an array and a part of it, both registered */
    unsigned char *big = (unsigned char *)tu_malloc(64);
    memset(big, SENT, 64);
    bsp_push_reg(big, 64);
    bsp_push_reg(big + 16, 8);
    bsp_sync();
    unsigned char x1[4] = {1, 2, 3, 4}, x2[4] = {5, 6, 7, 8};
    bsp_put(next, x1, big, 40, 4);     /* big[40..44) */
    bsp_put(next, x2, big + 16, 4, 4); /* big[20..24) */
    bsp_sync();
    TU_MEMEQ("put through the whole array's registration", x1, big + 40, 4);
    TU_MEMEQ("put through the registration of its part", x2, big + 20, 4);
    TU_ALL("rest of the array", big, SENT, 20);
    TU_ALL("rest of the array", big + 24, SENT, 16);
    TU_ALL("rest of the array", big + 44, SENT, 20);
    bsp_pop_reg(big + 16);
    bsp_pop_reg(big);
    bsp_sync();
    free(big);
  }

  /* ---- 8. a put issued before its area's pop_reg in the same superstep lands ---- */
  {
    int *F = (int *)tu_malloc(slotbytes);
    memset(F, 0, slotbytes);
    bsp_push_reg(F, (int)slotbytes);
    bsp_sync();
    put_slots(F, 11);
    bsp_pop_reg(F);
    bsp_sync();
    check_slots(F, 11, "area popped in the superstep of the puts into it");
    free(F);
  }

  free(a);
  free(a2);
  bsp_end();
  return 0;
}
