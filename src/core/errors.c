/* errors.c - one clear message, then the whole program ends with a non-zero status. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "core/internal.h"
#include "mcbsp.h" /* bsp_vabort */

static atomic_int dying;

/* Seconds a process that lost the claim waits to be ended before it ends itself. */
enum { BSPK_LOSER_GRACE_S = 10 };

static void *exit_later(void *seconds) {
  sleep((unsigned)(uintptr_t)seconds);
  _exit(1);
  return NULL;
}

static void exit_after(unsigned seconds) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, exit_later, (void *)(uintptr_t)seconds) == 0)
    pthread_detach(thread);
}

/* Several processes of a process-based run may fail at once (the same bad argument on
 * every process, an error all of them see at a sync): the first to create bspkit-failed in
 * the run's directory reports and ends the run; the others wait to be ended, and end
 * themselves if that does not come. bsprun reads the file to give the run status 1. */
static void claim_report_in_job(void) {
  const char *dir = getenv("BSPKIT_JOB_DIR");
  const bspk_engine_ops *ops = bspk_active_engine();
  if ((!dir || !*dir) && ops && ops->job_dir) dir = ops->job_dir();
  if (!dir || !*dir) return; /* nowhere to agree: every failing process reports */
  char path[4096];
  snprintf(path, sizeof path, "%s/bspkit-failed", dir);
  int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd >= 0 || errno != EEXIST) {
    if (fd >= 0) close(fd);
    return;
  }
  exit_after(BSPK_LOSER_GRACE_S);
  for (;;) pause();
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
  const bspk_engine_ops *ops = bspk_active_engine();
  if (ops && ops->terminate) ops->terminate(status);
  _exit(status);
}

void bspk_describe_process(char *buf, size_t size, int pid) {
  int len = snprintf(buf, size, "process %d", pid);
  const bspk_proc *self = bspk_self;
  for (const bspk_proc *p = self ? self->parent : NULL; p && len >= 0 && (size_t)len < size;
       p = p->parent)
    len += snprintf(buf + len, size - (size_t)len, " of the section nested in process %d", p->pid);
}

static void vreport(const char *call, int pid, const char *format, va_list ap) {
  char text[1024], where[256];
  vsnprintf(text, sizeof text, format, ap);
  if (pid >= 0) {
    bspk_describe_process(where, sizeof where, pid);
    fprintf(stderr, "bspkit: error in %s on %s: %s\n", call, where, text);
  } else {
    fprintf(stderr, "bspkit: error in %s: %s\n", call, text);
  }
}

static void vfatal(const char *call, int pid, const char *format, va_list ap)
    __attribute__((noreturn));
static void vfatal(const char *call, int pid, const char *format, va_list ap) {
  bspk_claim_dying();
  if (pid < 0 && bspk_self) pid = bspk_self->pid;
  vreport(call, pid, format, ap);
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
  bspk_claim_dying();
  fprintf(stderr,
          "bspkit: error in %s: called outside the SPMD section (before bsp_begin or after "
          "bsp_end)\n",
          call);
  bspk_terminate(1);
}

/* MulticoreBSP's bsp_abort with a va_list (declared in mcbsp.h), and what bsp_abort does. */
BSPK_API void bsp_vabort(const char *format, va_list ap) {
  bspk_claim_dying();
  char text[4096];
  vsnprintf(text, sizeof text, format, ap);
  size_t n = strlen(text);
  while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
  bspk_proc *self = bspk_self;
  if (self) {
    char where[256];
    bspk_describe_process(where, sizeof where, self->pid);
    fprintf(stderr, "bspkit: bsp_abort on %s: %s\n", where, text);
  } else {
    fprintf(stderr, "bspkit: bsp_abort: %s\n", text);
  }
  bspk_terminate(1);
}

BSPK_API void bsp_abort(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  bsp_vabort(format, ap);
}

/* ---- services for engines (engine.h) ---- */

static void *engine_realloc(void *p, size_t n, const char *call, const char *what) {
  return bspk_xrealloc(NULL, p, n, call, what);
}

const bspk_services bspk_engine_services = {bspk_fatal_on, engine_realloc, exit_after};
