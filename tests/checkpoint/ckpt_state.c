/*
 * ckpt_state.c - a BSPlib program whose every superstep depends on all the state a
 * checkpoint must carry, for the checkpoint tests (tests/checkpoint/ckpt_test.py).
 *
 *   ckpt_state [--iterations N] [--register-after] [--scratch] [--work K]
 *
 * Each iteration reads the messages (8-byte tags, so the tag size matters) and the puts that
 * the previous sync delivered, folds them into the process' digest, updates a block of
 * doubles, then sends a message to every process, puts into the next process' inbox and
 * bsp_hpputs into a registered area that a later registration covers, and ends with
 * bspk_checkpoint. The result, printed by process 0 ("digest 0123..."), is the same bits in
 * a run restarted from any checkpoint as in one that ran through, when the library restores
 * protected memory, registrations, tag size, messages and the superstep count.
 *
 * --register-after: register nothing before bspk_checkpoint_resume on a restart (the
 * library makes the registrations again); by default the program registers first (the
 * library checks them). --scratch: a fifth area, scratch at every checkpoint
 * (bspk_checkpoint_scratch), that every iteration puts into but nothing reads; the fresh run
 * registers it after bspk_checkpoint_resume, so a restart must make that registration again,
 * and must leave its bytes as the program set them before bspk_checkpoint_resume (checked).
 * Faults come from the library: BSPKIT_KILL_AT=PID:SUPERSTEP.
 */
#include <bsp.h>
#include <bspkit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BLOCK = 1 << 15 }; /* doubles: 256 KiB, an area malloc maps by itself */

static long iterations = 40;
static int register_after;
static int with_scratch;
enum { SCRATCH_FILL = 0x5a };
static long work = 1;

typedef struct progress {
  long iteration;
  uint64_t digest;
  long supersteps_seen; /* bspk_superstep at the checkpoint, to check its restore */
} progress;

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  progress *st = calloc(1, sizeof *st);
  double *block = calloc(BLOCK, sizeof *block);
  uint64_t *inbox = calloc((size_t)p, sizeof *inbox);
  /* Registered in iteration 3; hpput writes half (iteration % 2), the other half is read. */
  uint64_t *late = calloc((size_t)(2 * p), sizeof *late);
  bspk_checkpoint_protect(st, sizeof *st);
  bspk_checkpoint_protect(block, BLOCK * sizeof *block);
  bspk_checkpoint_protect(inbox, (bsp_size_t)(p * sizeof *inbox));
  bspk_checkpoint_protect(late, (bsp_size_t)(2 * p * sizeof *late));
  /* --scratch: puts land here at every checkpoint's sync, which a checkpoint does not save. */
  uint64_t *scratch = with_scratch ? malloc((size_t)p * sizeof *scratch) : NULL;
  if (with_scratch) {
    memset(scratch, SCRATCH_FILL, (size_t)p * sizeof *scratch);
    bspk_checkpoint_protect(scratch, (bsp_size_t)(p * sizeof *scratch));
    bspk_checkpoint_scratch(scratch, 1);
  }
  if (!register_after) {
    bsp_push_reg(inbox, (bsp_size_t)(p * sizeof *inbox));
    bsp_sync();
  }
  int restarted = bspk_checkpoint_resume();
  if (!restarted) {
    if (register_after) bsp_push_reg(inbox, (bsp_size_t)(p * sizeof *inbox));
    if (with_scratch) bsp_push_reg(scratch, (bsp_size_t)(p * sizeof *scratch));
    for (long i = 0; i < BLOCK; i++) block[i] = (double)(s + 1) / (double)(i + 1);
    bsp_size_t tag = sizeof(uint64_t);
    bsp_set_tagsize(&tag);
    bsp_sync();
  } else if (st->supersteps_seen != bspk_superstep()) {
    fprintf(stderr, "process %d: superstep %ld after the restart, %ld at the checkpoint\n", s,
            bspk_superstep(), st->supersteps_seen);
    bsp_abort("ckpt_state: the superstep count was not restored\n");
  }
  for (int q = 0; restarted && with_scratch && q < p; q++) {
    unsigned char *bytes = (unsigned char *)&scratch[q];
    for (size_t b = 0; b < sizeof *scratch; b++)
      if (bytes[b] != SCRATCH_FILL)
        bsp_abort("ckpt_state: process %d: the scratch area was restored from the checkpoint\n", s);
  }
  if (s == 0) printf("%s at iteration %ld\n", restarted ? "restarted" : "started", st->iteration);

  while (st->iteration < iterations) {
    bsp_nprocs_t nmessages;
    bsp_size_t bytes;
    bsp_qsize(&nmessages, &bytes);
    for (int m = 0; m < nmessages; m++) {
      bsp_size_t status;
      uint64_t tag, payload;
      bsp_get_tag(&status, &tag);
      bsp_move(&payload, sizeof payload);
      st->digest = mix(st->digest, tag ^ payload);
    }
    const uint64_t *written = late + (size_t)p * (size_t)((st->iteration + 1) % 2);
    for (int q = 0; q < p; q++) st->digest = mix(st->digest, inbox[q] ^ written[q]);
    double sum = 0;
    for (long k = 0; k < work; k++)
      for (long i = 0; i < BLOCK; i++) {
        block[i] = block[i] * 0.75 + (double)st->iteration / (double)(i + 1);
        sum += block[i];
      }
    uint64_t bits;
    memcpy(&bits, &sum, sizeof bits);
    st->digest = mix(st->digest, bits);

    if (st->iteration == 3) bsp_push_reg(late, (bsp_size_t)(2 * p * sizeof *late));
    for (int q = 0; q < p; q++) {
      uint64_t tag = (uint64_t)st->iteration * 1000 + (uint64_t)s,
               payload = st->digest + (uint64_t)q;
      bsp_send(q, &tag, &payload, sizeof payload);
    }
    bsp_put((s + 1) % p, &st->digest, inbox, (bsp_size_t)(s * sizeof *inbox), sizeof *inbox);
    if (with_scratch)
      bsp_put((s + 1) % p, &st->digest, scratch, (bsp_size_t)(s * sizeof *scratch),
              sizeof *scratch);
    if (st->iteration > 3)
      bsp_hpput((s + p - 1) % p, &st->digest, late,
                (bsp_size_t)(((st->iteration % 2) * p + s) * (long)sizeof *late), sizeof *late);
    st->iteration++;
    st->supersteps_seen = bspk_superstep() + 1;
    bspk_checkpoint();
  }

  /* The digests of all processes, in pid order, on process 0. */
  uint64_t *all = calloc((size_t)p, sizeof *all);
  bsp_push_reg(all, (bsp_size_t)(p * sizeof *all));
  bsp_sync();
  bsp_put(0, &st->digest, all, (bsp_size_t)(s * sizeof *all), sizeof *all);
  bsp_sync();
  if (s == 0) {
    uint64_t h = 0;
    for (int q = 0; q < p; q++) h = mix(h, all[q]);
    printf("digest %016llx after %ld iterations, superstep %ld\n", (unsigned long long)h,
           st->iteration, bspk_superstep());
  }
  bsp_pop_reg(all);
  if (with_scratch) bsp_pop_reg(scratch);
  bsp_sync();
  if (with_scratch) bspk_checkpoint_unprotect(scratch);
  free(scratch);
  bspk_checkpoint_unprotect(late);
  bspk_checkpoint_unprotect(inbox);
  bspk_checkpoint_unprotect(block);
  bspk_checkpoint_unprotect(st);
  free(all);
  free(late);
  free(inbox);
  free(block);
  free(st);
  bsp_end();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = atol(argv[++i]);
    else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc) work = atol(argv[++i]);
    else if (strcmp(argv[i], "--register-after") == 0) register_after = 1;
    else if (strcmp(argv[i], "--scratch") == 0) with_scratch = 1;
    else {
      fprintf(stderr,
              "usage: ckpt_state [--iterations N] [--work K] [--register-after] [--scratch]\n");
      return 2;
    }
  }
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
