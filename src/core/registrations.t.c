/*
 * registrations.t.c - unit test of registrations.c: the index from address to slot, the
 * newest registration of an address winning, pops (also of a push of the same superstep),
 * slot reuse, each process' own addresses and sizes, and the own-area test that decides
 * which gets are staged.
 */
#include "bsp.h"
#include "core/fake_processes.t.h"
#include "core/proc.h"
#include "core/registrations.h"

#define P 3

/* Each process' areas (so that every process registers a different address). */
static double area_a[P][16], area_b[P][8];
static char many[P][1000];
static char window[P][256]; /* bytes 64..127 registered */

static void push_on_all(double (*areas)[16], int bytes) {
  for (int q = 0; q < P; q++) {
    fake_enter(q);
    bsp_push_reg(areas[q], bytes);
  }
}

static void pop_on_all(const void *base, size_t stride) {
  for (int q = 0; q < P; q++) {
    fake_enter(q);
    bsp_pop_reg((const char *)base + q * stride);
  }
}

int main(void) {
  fake_begin(P);

  /* Unregistered: not found, and no own area. */
  bspk_proc *p1 = fake_enter(1);
  EXPECT(bspk_lookup(p1, area_a[1]) < 0);
  EXPECT(!bspk_in_own_area(p1, (const char *)area_a[1], 8));

  /* a and b registered; every process sees every other's address and size. */
  push_on_all(area_a, sizeof area_a[0]);
  for (int q = 0; q < P; q++) {
    fake_enter(q);
    bsp_push_reg(area_b[q], (int)sizeof area_b[q] - q); /* sizes may differ */
    bsp_push_reg(window[q] + 64, 64);
  }
  fake_sync_registrations();
  p1 = fake_enter(1);
  int slot_a = bspk_lookup(p1, area_a[1]), slot_b = bspk_lookup(p1, area_b[1]);
  EXPECT(slot_a >= 0 && slot_b >= 0 && slot_a != slot_b);
  for (int q = 0; q < P; q++) {
    EXPECT(p1->slots[slot_a].peer[q].addr == (char *)area_a[q]);
    EXPECT(p1->slots[slot_b].peer[q].size == (int)sizeof area_b[q] - q);
    EXPECT(bspk_lookup(fake_procs[q], area_a[q]) == slot_a); /* the same slot everywhere */
  }
  EXPECT(bspk_lookup(p1, area_a[0]) < 0); /* another process' address is not ours */

  /* Own areas: inside, at the edges (the end is exclusive), overlapping an edge. */
  const char *w = window[1];
  EXPECT(bspk_in_own_area(p1, w + 64, 1) && bspk_in_own_area(p1, w + 127, 1));
  EXPECT(!bspk_in_own_area(p1, w + 128, 1) && !bspk_in_own_area(p1, w + 63, 1));
  EXPECT(bspk_in_own_area(p1, w + 60, 5) && bspk_in_own_area(p1, w, 256));
  EXPECT(!bspk_in_own_area(p1, window[2] + 64, 8)); /* process 2's area, not ours */
  EXPECT(bspk_in_own_area(p1, (const char *)area_b[1], 8));

  /* The same address again with another size: the newest registration wins; a pop
   * removes the newest, and the older one is back. */
  push_on_all(area_a, 8);
  fake_sync_registrations();
  p1 = fake_enter(1);
  int slot_a2 = bspk_lookup(p1, area_a[1]);
  EXPECT(slot_a2 >= 0 && slot_a2 != slot_a && p1->slots[slot_a2].size == 8);
  pop_on_all(area_a, sizeof area_a[0]);
  fake_sync_registrations();
  p1 = fake_enter(1);
  EXPECT(bspk_lookup(p1, area_a[1]) == slot_a);
  EXPECT(p1->slots[slot_a].size == (int)sizeof area_a[1]);

  /* Pushed and popped in one superstep: neither takes effect, the old one stays. */
  int slots_before = p1->nslots;
  push_on_all(area_a, 16);
  pop_on_all(area_a, sizeof area_a[0]);
  fake_sync_registrations();
  p1 = fake_enter(1);
  EXPECT(bspk_lookup(p1, area_a[1]) == slot_a);
  EXPECT(p1->nslots == slots_before);

  /* Many areas: the index grows; after popping every other one, exactly the rest is
   * found, and new pushes reuse the free slots. */
  for (int i = 0; i < 1000; i++)
    for (int q = 0; q < P; q++) {
      fake_enter(q);
      bsp_push_reg(&many[q][i], 1);
    }
  fake_sync_registrations();
  for (int i = 0; i < 1000; i += 2)
    for (int q = 0; q < P; q++) {
      fake_enter(q);
      bsp_pop_reg(&many[q][i]);
    }
  fake_sync_registrations();
  p1 = fake_enter(1);
  int found = 0, wrong = 0;
  for (int i = 0; i < 1000; i++) {
    int s = bspk_lookup(p1, &many[1][i]);
    if (i % 2) found += s >= 0 && p1->slots[s].addr == &many[1][i];
    else wrong += s >= 0;
  }
  EXPECT(found == 500 && wrong == 0);
  EXPECT(bspk_in_own_area(p1, &many[1][1], 1) && !bspk_in_own_area(p1, &many[1][2], 1));
  int slots_now = p1->nslots;
  for (int i = 0; i < 1000; i += 2)
    for (int q = 0; q < P; q++) {
      fake_enter(q);
      bsp_push_reg(&many[q][i], 1);
    }
  fake_sync_registrations();
  p1 = fake_enter(1);
  EXPECT(p1->nslots == slots_now);
  EXPECT(bspk_lookup(p1, &many[1][0]) >= 0 && bspk_lookup(p1, &many[1][998]) >= 0);

  return fake_end("registrations.t");
}
