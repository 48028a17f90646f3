/*
 * errors.h - one clear message, then the whole program ends with a non-zero status.
 *
 * The bottom of the core: it knows no process record and no back end. What the fatal path
 * needs of them (which BSP process is failing, how the program ends) it asks through
 * bspk_fatal_hooks, which the API layer installs before it starts a back end.
 */
#ifndef BSPKIT_ERRORS_H
#define BSPKIT_ERRORS_H

#include <setjmp.h>
#include <stddef.h>

/* Prints "bspkit: error in CALL on process PID: ..." once for the whole program, which then
 * ends with status 1. bspk_fatal names the calling BSP process (if any); bspk_fatal_on names
 * pid (pid < 0: the calling process, or none). */
void bspk_fatal(const char *call, const char *format, ...)
    __attribute__((noreturn, format(printf, 2, 3), cold));
void bspk_fatal_on(const char *call, int pid, const char *format, ...)
    __attribute__((noreturn, format(printf, 3, 4), cold));
void bspk_fatal_outside(const char *call) __attribute__((noreturn, cold));
/* Ends the whole program with status after a message was printed. */
void bspk_terminate(int status) __attribute__((noreturn));
/* Claims the right to print the one fatal message of this run; 0 if another thread has
 * it already (then this thread waits to be ended with the program). */
int bspk_claim_dying(void);
/* Ends this process with status 1 after `seconds`, whatever it is doing then. */
void bspk_exit_after(unsigned seconds);

/* What the fatal path asks of the layers above it; any hook may be NULL. Until they are
 * installed an error names no process and ends this OS process alone. */
typedef struct bspk_fatal_hooks {
  /* The calling thread's BSP process, or -1: none (outside an SPMD section). */
  int (*current_pid)(void);
  /* "process PID", with the sections the calling thread's section is nested in. */
  void (*describe_process)(char *buf, size_t size, int pid);
  /* A directory every process of this run can see, where they agree which of them reports
   * (used when bsprun gave none in BSPKIT_JOB_DIR), or NULL. */
  const char *(*job_dir)(void);
  /* Ends every process of the program now with status (returning: this process ends). */
  void (*terminate)(int status);
  /* 1: this process reports the run's error; 0: another one does; -1: ask job_dir. */
  int (*claim_report)(void);
} bspk_fatal_hooks;
/* From the layer that starts the back end, before it does (hooks must stay valid). */
void bspk_set_fatal_hooks(const bspk_fatal_hooks *hooks);

/* Language bindings (bindings.c): while a trap is armed on a thread, an error of a call
 * there does not end the program; the call returns through env (setjmp) with the line it
 * would have printed in message. Only calls that fail before they changed anything are
 * made under a trap (the arguments' checks); bsp_sync and bsp_end are not. */
typedef struct bspk_trap {
  jmp_buf env;
  char message[1400];
} bspk_trap;
void bspk_trap_arm(bspk_trap *trap);
void bspk_trap_disarm(void);

#endif
