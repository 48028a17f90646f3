/* errors.c - one clear message, then the whole program ends with a non-zero status.
 * Which process fails and how the program ends it asks of the layers above through the
 * hooks they install (errors.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/errors.h"

static atomic_int dying;

/* Installed by the API layer before it starts a back end (bspk_set_fatal_hooks). */
static const bspk_fatal_hooks *hooks;

void bspk_set_fatal_hooks(const bspk_fatal_hooks *installed) { hooks = installed; }

/* Seconds a process that lost the claim waits to be ended before it ends itself. */
enum { BSPK_LOSER_GRACE_S = 10 };

static void *exit_later(void *seconds) {
  sleep((unsigned)(uintptr_t)seconds);
  _exit(1);
  return NULL;
}

void bspk_exit_after(unsigned seconds) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, exit_later, (void *)(uintptr_t)seconds) == 0)
    pthread_detach(thread);
}

/* Several processes of a process-based run may fail at once (the same bad argument on
 * every process, an error all of them see at a sync): the first to create bspkit-failed in
 * the run's directory reports and ends the run; the others wait to be ended, and end
 * themselves if that does not come. bsprun reads the file to give the run status 1. */
static void wait_to_be_ended(void) {
  bspk_exit_after(BSPK_LOSER_GRACE_S);
  for (;;) pause();
}

static void claim_report_in_job(void) {
  int claimed = hooks && hooks->claim_report ? hooks->claim_report() : -1;
  if (claimed == 0) wait_to_be_ended();
  if (claimed == 1) return;
  const char *dir = getenv("BSPKIT_JOB_DIR");
  if ((!dir || !*dir) && hooks && hooks->job_dir) dir = hooks->job_dir();
  if (!dir || !*dir) return; /* nowhere to agree: every failing process reports */
  char path[4096];
  snprintf(path, sizeof path, "%s/bspkit-failed", dir);
  int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd >= 0 || errno != EEXIST) {
    if (fd >= 0) close(fd);
    return;
  }
  wait_to_be_ended();
}

int bspk_claim_dying(void) {
  /* Another thread of this process is already reporting and ending the program: wait. */
  if (atomic_exchange(&dying, 1) != 0)
    for (;;) pause();
  claim_report_in_job();
  return 1;
}

void bspk_terminate(int status) {
  fflush(stdout);
  fflush(stderr);
  if (hooks && hooks->terminate) hooks->terminate(status);
  _exit(status);
}

/* "bspkit: error in CALL on process PID: TEXT" into line. */
static void vformat(char *line, size_t size, const char *call, int pid, const char *format,
                    va_list ap) {
  char text[1024], where[256];
  vsnprintf(text, sizeof text, format, ap);
  if (pid >= 0) {
    if (hooks && hooks->describe_process) hooks->describe_process(where, sizeof where, pid);
    else snprintf(where, sizeof where, "process %d", pid);
    snprintf(line, size, "bspkit: error in %s on %s: %s", call, where, text);
  } else {
    snprintf(line, size, "bspkit: error in %s: %s", call, text);
  }
}

/* A language binding's call in progress on this thread (bspk_trap_arm), or NULL. */
static _Thread_local bspk_trap *armed_trap;

void bspk_trap_arm(bspk_trap *trap) { armed_trap = trap; }

void bspk_trap_disarm(void) { armed_trap = NULL; }

static void vfatal(const char *call, int pid, const char *format, va_list ap)
    __attribute__((noreturn));
static void vfatal(const char *call, int pid, const char *format, va_list ap) {
  bspk_trap *trap = armed_trap;
  if (pid < 0 && hooks && hooks->current_pid) pid = hooks->current_pid();
  if (trap) { /* the binding raises the message in its language; nothing ends here */
    armed_trap = NULL;
    vformat(trap->message, sizeof trap->message, call, pid, format, ap);
    longjmp(trap->env, 1);
  }
  bspk_claim_dying();
  char line[1400];
  vformat(line, sizeof line, call, pid, format, ap);
  fprintf(stderr, "%s\n", line);
  bspk_terminate(1);
}

void bspk_fatal(const char *call, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vfatal(call, -1, format, ap);
}

void bspk_fatal_on(const char *call, int pid, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vfatal(call, pid, format, ap);
}

void bspk_fatal_outside(const char *call) {
  static const char text[] = "called outside the SPMD section (before bsp_begin or after bsp_end)";
  bspk_trap *trap = armed_trap;
  if (trap) {
    armed_trap = NULL;
    snprintf(trap->message, sizeof trap->message, "bspkit: error in %s: %s", call, text);
    longjmp(trap->env, 1);
  }
  bspk_claim_dying();
  fprintf(stderr, "bspkit: error in %s: %s\n", call, text);
  bspk_terminate(1);
}
