/* api.c - starting and ending the SPMD section, enquiry functions: the top of the core,
 * which chooses the back end and tells the fatal path (errors.h) how to use it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspk_machine.h"
#include "bspkit.h"
#include "core/checkpoint.h"
#include "core/compiler.h"
#include "core/engine.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/profile.h"
#include "core/registrations.h"
#include "core/superstep.h"

static void (*spmd_function)(void);
static const bspk_engine_ops *active_ops;
static atomic_int exit_check_installed;
static atomic_int sections_ended; /* SPMD sections process 0 has ended */

/* ---- what the fatal path asks of this layer (errors.h) ---- */

static int current_pid(void) {
  const bspk_proc *self = bspk_self;
  return self ? self->pid : -1;
}

static const char *engine_job_dir(void) {
  return active_ops && active_ops->job_dir ? active_ops->job_dir() : NULL;
}

static void engine_terminate(int status) {
  if (active_ops && active_ops->terminate) active_ops->terminate(status);
}

static int engine_claim_report(void) {
  return active_ops && active_ops->claim_report ? active_ops->claim_report() : -1;
}

static const bspk_fatal_hooks fatal_hooks = {current_pid, bspk_describe_process, engine_job_dir,
                                             engine_terminate, engine_claim_report};

/* The back end, chosen by the first call that needs it (BSPKIT_BACKEND); from then on an
 * error anywhere names its process and ends the whole program through it. */
static const bspk_engine_ops *chosen_engine(void) {
  if (!active_ops) {
    bspk_set_fatal_hooks(&fatal_hooks);
    active_ops = bspk_engine_select();
  }
  return active_ops;
}

/* Without bsp_init, bsp_begin sits in main and the other processes re-enter main with the
 * program's own arguments, read back once from /proc/self/cmdline before they start. */
/* Weak: a program whose executable does not export main (the Python interpreter, which loads
 * libbsp with dlopen) can still load libbsp; it must not need main run again. */
extern int main(int argc, char **argv) __attribute__((weak));
static int main_argc = 1;
static char *main_argv_fallback[] = {"bsp-program", NULL};
static char **main_argv = main_argv_fallback;

static void read_program_arguments(void) {
  static char text[1 << 16];
  static char *args[1024];
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f) return;
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  int argc = 0;
  for (size_t i = 0; i < n && argc < 1023; i += strlen(text + i) + 1) args[argc++] = text + i;
  args[argc] = NULL;
  if (argc > 0) {
    main_argc = argc;
    main_argv = args;
  }
}

static void run_main_again(void) {
  if (!main)
    bspk_fatal("bsp_begin",
               "the other processes would run main again, but this program has none that "
               "libbsp can call: call bsp_init(spmd, argc, argv) first");
  main(main_argc, main_argv);
}

/* A process that leaves the program inside its SPMD section (exit, or return from main)
 * would leave the others waiting in bsp_sync: report it and end them all. */
static void check_exit_inside_spmd(void) {
  bspk_proc *self = bspk_self;
  if (!self || !self->begun) return;
  bspk_fatal_on("bsp_end", self->pid,
                "the process exited (exit() or a return from main) inside the SPMD section "
                "without calling bsp_end");
}

/* bsp_init or bsp_begin inside a running section: a nested section, where the back end has
 * them (threads); elsewhere the one error naming the call. */
static void check_nesting(const bspk_proc *self, const char *call) {
  if (!self->ops->parent_of)
    bspk_fatal(call,
               "called inside the SPMD section: nested SPMD sections (bsp_init and bsp_begin "
               "inside a running section) are supported on the threads back end only, not on %s",
               self->ops->name);
}

BSPK_API void bsp_init(void (*spmd_part)(void), int argc, char *argv[]) {
  bspk_proc *self = bspk_self;
  if (self) {
    /* Names the function of this process' nested sections: their other processes start
     * there (MulticoreBSP's hierarchical runs). argc and argv are not needed by threads. */
    check_nesting(self, "bsp_init");
    if (!spmd_part)
      bspk_fatal("bsp_init",
                 "the function given for a nested SPMD section is NULL: pass the function "
                 "that calls bsp_begin and bsp_end");
    self->child_spmd = spmd_part;
    return;
  }
  spmd_function = spmd_part;
  const bspk_engine_ops *ops = chosen_engine();
  if (ops->init) ops->init(spmd_part, argc, argv);
}

static int requested_nprocs(void) {
  if (active_ops && active_ops->available_procs) {
    int n = active_ops->available_procs();
    if (n > 0) return n;
  }
  const char *env = getenv("BSPKIT_NPROCS");
  if (env && *env) {
    char *end;
    long n = strtol(env, &end, 10);
    if (*end != '\0' || n < 1 || n > 1 << 20) {
      bspk_fatal_on("bsp_nprocs", -1, "BSPKIT_NPROCS='%s' is not a positive number", env);
    }
    return (int)n;
  }
  return bspk_cores_available();
}

/* A thread's own memory beyond its per-peer buffers: the kernel's stack for it, the first
 * pages of its stack and its thread-local storage (the stack's reserve is not committed). */
#define BSPK_THREAD_BYTES (64u << 10)

/* Refuses, with the numbers, a section whose processes' buffers alone cannot fit in this
 * machine's memory: each process keeps buffers per peer, so their total grows with p^2 when
 * all processes share one address space, and the kernel would kill the run part-way
 * (measured: p = 2000 threads hold 2.2 GB after one all-to-all; the estimate says 2.4). */
static void check_room_for(int nprocs) {
  unsigned long long available = bspk_available_memory_bytes();
  unsigned long long each = bspk_proc_bytes(active_ops, nprocs) + BSPK_THREAD_BYTES;
  unsigned long long need = each * (unsigned long long)nprocs;
  if (available > 0 && need > available)
    bspk_fatal("bsp_begin",
               "%d processes need at least %.1f GiB (%.1f MiB each once it has written to all "
               "%d processes) but this machine has %.1f GiB available: use fewer processes",
               nprocs, (double)need / (1u << 30), (double)each / (1u << 20), nprocs,
               (double)available / (1u << 30));
}

/* bsp_begin inside a running section (threads): the calling thread becomes process 0 of a
 * new section of maxprocs processes, the others start in the function this process gave
 * bsp_init. Its state is the parent's until the nested section's bsp_end. */
static void begin_nested(bspk_proc *parent, int maxprocs) {
  check_nesting(parent, "bsp_begin");
  if (!parent->child_spmd)
    bspk_fatal("bsp_begin",
               "called inside the SPMD section without bsp_init: a nested SPMD section needs "
               "bsp_init(child, argc, argv) on this process first, with bsp_begin ... bsp_end "
               "in child, which this process then calls (the nested section's other processes "
               "start in child)");
  if (maxprocs < 1)
    bspk_fatal("bsp_begin", "asked for %d processes; the number must be at least 1", maxprocs);
  check_room_for(maxprocs);
  bspk_engine *engine = parent->ops->start(maxprocs, parent->child_spmd, parent);
  bspk_proc *self = bspk_proc_create(parent->ops, engine, 0, maxprocs);
  self->parent = parent;
  self->begun = 1;
  bspk_self = self; /* no profile: it records the top-level sections only */
}

BSPK_API void bsp_begin(bsp_pid_t maxprocs) {
  bspk_proc *self = bspk_self;
  if (self && self->begun) {
    begin_nested(self, maxprocs);
    return;
  }
  chosen_engine();
  /* The other processes of a later section start in the function given to bsp_init; without
   * one they could only start main again, from the top. */
  if (atomic_load(&sections_ended) > 0 && !spmd_function)
    bspk_fatal("bsp_begin",
               "a second SPMD section needs bsp_init: call bsp_init(spmd, argc, argv) first "
               "and put bsp_begin ... bsp_end in spmd, which main then calls once per section");
  if (atomic_exchange(&exit_check_installed, 1) == 0) atexit(check_exit_inside_spmd);

  int pid, nprocs;
  bspk_engine *engine = active_ops->attach(maxprocs, &pid, &nprocs);
  if (!engine) {
    if (maxprocs < 1)
      bspk_fatal("bsp_begin", "asked for %d processes; the number must be at least 1", maxprocs);
    pid = 0;
    nprocs = maxprocs;
    check_room_for(nprocs);
    if (!spmd_function) read_program_arguments();
    engine = active_ops->start(nprocs, spmd_function ? spmd_function : run_main_again, NULL);
    if (active_ops->pid_of) pid = active_ops->pid_of(engine); /* a forked process */
  }
  self = bspk_proc_create(active_ops, engine, pid, nprocs);
  /* A process of a nested section that its starter's engine started here. */
  if (active_ops->parent_of) self->parent = active_ops->parent_of(engine);
  self->begun = 1;
  bspk_self = self;
  if (!self->parent) bspk_profile_begin(self);
}

BSPK_API void bsp_end(void) {
  bspk_proc *self = bspk_enter("bsp_end");
  bspk_checkpoint_before_end(self); /* a checkpoint being written in the background */
  bspk_end_superstep(self, BSPK_AT_END, "bsp_end", __builtin_return_address(0));
  if (BSPK_UNLIKELY(self->profile != NULL)) bspk_profile_end(self);
  const bspk_engine_ops *ops = self->ops;
  bspk_engine *engine = self->engine;
  int pid = self->pid;
  bspk_proc *parent = self->parent;
  /* Process 0 of a nested section is its starter's thread, which goes on in the parent
   * section; the other processes of a nested section end in finish, as at top level. */
  bspk_self = pid == 0 ? parent : NULL;
  bspk_registrations_free(self);
  bspk_checkpoint_free(self);
  bspk_proc_free(self);
  if (pid == 0 && !parent) atomic_fetch_add(&sections_ended, 1);
  ops->finish(engine, pid);
}

BSPK_API bsp_nprocs_t bsp_nprocs(void) {
  bspk_proc *self = bspk_self;
  if (self && self->begun) return self->nprocs;
  chosen_engine();
  return requested_nprocs();
}

BSPK_API bsp_pid_t bsp_pid(void) { return bspk_enter("bsp_pid")->pid; }

BSPK_API double bsp_time(void) {
  bspk_proc *self = bspk_enter("bsp_time");
  return bspk_now() - self->start_time;
}

BSPK_API const char *bspk_backend(void) { return chosen_engine()->name; }

BSPK_API int bspk_cores(void) { return bspk_cores_available(); }

BSPK_API long bspk_superstep(void) { return bspk_enter("bspk_superstep")->superstep; }
