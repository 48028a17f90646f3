/* barrier.c - spin-then-sleep central barrier (see barrier.h). */
#include "shm/barrier.h"

#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
/* A process-shared sleeper wakes every second: a process whose leader died (and which
 * survived the signal that brought it, PR_SET_PDEATHSIG) must not sleep forever. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected, int shared) {
  static const struct timespec second = {1, 0};
  syscall(SYS_futex, (uint32_t *)word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected,
          shared ? &second : NULL, NULL, 0);
}
static void futex_wake_all(_Atomic uint32_t *word, int shared) {
  syscall(SYS_futex, (uint32_t *)word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
          NULL, 0);
}
#else
static void futex_wait(_Atomic uint32_t *word, uint32_t expected, int shared) {
  (void)word;
  (void)expected;
  (void)shared;
  sched_yield();
}
static void futex_wake_all(_Atomic uint32_t *word, int shared) {
  (void)word;
  (void)shared;
}
#endif

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

void bspk_barrier_init(bspk_barrier *b, int nprocs, long spin_limit, long yield_limit,
                       int process_shared) {
  b->process_shared = process_shared;
  b->leader = process_shared ? (int)getpid() : 0;
  atomic_init(&b->arrivals, 0);
  atomic_init(&b->flags[0], 0);
  atomic_init(&b->flags[1], 0);
  atomic_init(&b->epoch, 0);
  atomic_init(&b->sleepers, 0);
  b->result_flags[0] = b->result_flags[1] = 0;
  b->result_at_end[0] = b->result_at_end[1] = 0;
  b->nprocs = nprocs;
  b->spin_limit = spin_limit;
  b->yield_limit = yield_limit;
}

static long wait_limit(const char *variable, long fallback) {
  const char *env = getenv(variable);
  return env && *env ? atol(env) : fallback;
}

void bspk_barrier_init_for(bspk_barrier *b, int nprocs, int oversubscribed, int process_shared) {
  bspk_barrier_init(b, nprocs, wait_limit("BSPKIT_SPIN", oversubscribed ? 100 : 200000),
                    wait_limit("BSPKIT_YIELD", oversubscribed ? 200 : 0), process_shared);
}

static void wait_for_epoch_change(bspk_barrier *b, uint32_t e) {
  for (long i = 0; i < b->spin_limit; i++) {
    if (atomic_load_explicit(&b->epoch, memory_order_acquire) != e) return;
    cpu_relax();
  }
  for (long i = 0; i < b->yield_limit; i++) {
    if (atomic_load_explicit(&b->epoch, memory_order_acquire) != e) return;
    sched_yield();
  }
  /* Sleep. The releaser stores the epoch and then reads sleepers; we add to sleepers and
   * then let the kernel compare the epoch: one of the two sees the other (seq_cst). */
  atomic_fetch_add(&b->sleepers, 1);
  while (atomic_load(&b->epoch) == e) {
    futex_wait(&b->epoch, e, b->process_shared);
    if (b->process_shared && getppid() != b->leader && getpid() != b->leader) _exit(1);
  }
  atomic_fetch_sub(&b->sleepers, 1);
}

unsigned bspk_barrier_arrive(bspk_barrier *b, uint32_t *epoch, unsigned flags, int at_end,
                             int *n_at_end) {
  uint32_t e = *epoch;
  int parity = (int)(e & 1);
  /* Ordered before our arrival by the acq_rel add below. */
  if (flags) atomic_fetch_or_explicit(&b->flags[parity], flags, memory_order_relaxed);
  uint64_t add = 1 + ((uint64_t)(at_end != 0) << 32);
  uint64_t before = atomic_fetch_add_explicit(&b->arrivals, add, memory_order_acq_rel);
  if ((uint32_t)before + 1 == (uint32_t)b->nprocs) {
    /* Last to arrive: publish the summary, prepare the next epoch, release everyone. The
     * other parity's flags were read by everybody before they arrived here. */
    b->result_at_end[parity] = (int)((before + add) >> 32);
    b->result_flags[parity] = atomic_load_explicit(&b->flags[parity], memory_order_relaxed);
    atomic_store_explicit(&b->flags[parity ^ 1], 0, memory_order_relaxed);
    atomic_store_explicit(&b->arrivals, 0, memory_order_relaxed);
    atomic_store(&b->epoch, e + 1);
    if (atomic_load(&b->sleepers) > 0) futex_wake_all(&b->epoch, b->process_shared);
  } else {
    wait_for_epoch_change(b, e);
  }
  *epoch = e + 1;
  if (n_at_end) *n_at_end = b->result_at_end[parity];
  return b->result_flags[parity];
}
