/* proc.c - a BSP process' state: made at bsp_begin, freed at bsp_end; the calling thread's
 * process; the clock and the cores. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/buffers.h"
#include "core/errors.h"
#include "core/proc.h"

_Thread_local bspk_proc *bspk_self __attribute__((tls_model("initial-exec")));

/* Below this size a one-sided engine moves puts and gets two-sided: measured on Open MPI
 * 4.1 over shared memory, one MPI_Put costs about 1 us (a system call), a record in the
 * combined block about 17 ns plus the bytes. BSPKIT_RMA_MIN_BYTES overrides. */
#define BSPK_RMA_MIN_BYTES 8192
/* From this size a two-sided engine moves a put or get as its own message, sent from where
 * the data lies and received in place, not copied into and out of the combined block.
 * Measured at p = 2 on Open MPI 4.1 over shared memory (2026-11-29, 2 MiB per superstep in
 * messages of one size, each way alternately, ns per word): from 64 KiB a message of its
 * own was faster at every count (4 hpputs: 0.8-1.1 against 1.6-1.9; 1-4 hpgets: 1.1-1.5
 * against 1.9-2.7); at 32 KiB it won for 1-4 messages but not for 64 (hpput 1.2-1.5 against
 * 1.2-1.3, hpget 1.9-2.3 against 1.5), where each message's handshake costs more than the
 * two copies it saves. */
#define BSPK_LARGE_PUT_BYTES 65536

void bspk_describe_process(char *buf, size_t size, int pid) {
  int len = snprintf(buf, size, "process %d", pid);
  const bspk_proc *self = bspk_self;
  for (const bspk_proc *p = self ? self->parent : NULL; p && len >= 0 && (size_t)len < size;
       p = p->parent)
    len += snprintf(buf + len, size - (size_t)len, " of the section nested in process %d", p->pid);
}

double bspk_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bspk_cores_available(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

size_t bspk_proc_bytes(const bspk_engine_ops *ops, int nprocs) {
  /* outbox[2], replies; and the two outboxes' first capacity */
  size_t per_peer = 3 * sizeof(bspk_outbox) + 2 * BSPK_OUTBOX_FIRST_BYTES;
  if (ops->rma_put) per_peer += sizeof(bspk_outbox);
  return sizeof(bspk_proc) + (size_t)nprocs * per_peer;
}

bspk_proc *bspk_proc_create(const bspk_engine_ops *ops, bspk_engine *engine, int pid, int nprocs) {
  bspk_proc *self = calloc(1, sizeof *self);
  if (!self) {
    bspk_fatal_on("bsp_begin", pid, "out of memory");
  }
  self->pid = pid;
  self->nprocs = nprocs;
  self->ops = ops;
  self->engine = engine;
  self->pending_tagsize = -1;
  self->cached_addr = (const void *)UINTPTR_MAX;
  self->cached_slot = -1;
  self->replies = calloc((size_t)nprocs, sizeof(bspk_outbox));
  if (ops->transfer && !ops->rma_put) {
    const char *env = getenv("BSPKIT_LARGE_PUT_BYTES");
    self->large_transfer_bytes = env && *env ? atoi(env) : BSPK_LARGE_PUT_BYTES;
    if (self->large_transfer_bytes < 1) self->large_transfer_bytes = 1;
  }
  if (ops->rma_put) {
    self->rma_puts = calloc((size_t)nprocs, sizeof(bspk_outbox));
    const char *env = getenv("BSPKIT_RMA_MIN_BYTES");
    self->rma_min_bytes = env && *env ? atoi(env) : BSPK_RMA_MIN_BYTES;
  }
  for (int i = 0; i < 2; i++) {
    self->outbox[i] = calloc((size_t)nprocs, sizeof(bspk_outbox));
    if (!self->outbox[i] || !self->replies || (ops->rma_put && !self->rma_puts)) {
      bspk_fatal_on("bsp_begin", pid, "out of memory");
    }
    for (int q = 0; ops->outbox_memory && q < nprocs; q++) {
      bspk_outbox *ob = &self->outbox[i][q];
      ob->data = ops->outbox_memory(engine, i, q, &ob->cap);
      ob->engine_memory = ob->data != NULL;
      if (!ob->data) ob->cap = 0;
    }
  }
  self->start_time = bspk_now();
  return self;
}

void bspk_proc_free(bspk_proc *self) {
  if (!self) return;
  for (int i = 0; i < 2; i++) {
    for (int q = 0; q < self->nprocs; q++)
      if (!self->outbox[i][q].engine_memory) free(self->outbox[i][q].data);
    free(self->outbox[i]);
  }
  for (int q = 0; q < self->nprocs; q++) {
    free(self->replies[q].data);
    if (self->rma_puts) free(self->rma_puts[q].data);
  }
  BSPK_FREE_ALL(self->replies, self->rma_puts, self->landings, self->large_sends,
                self->large_copies, self->large_recvs, self->gets, self->get_stage, self->queue,
                self->kept_messages, self);
}
