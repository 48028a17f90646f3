/* cpus.c - pinning the processes of a shared-memory engine (see cpus.h). */
#include "shm/cpus.h"

#include <stdlib.h>
#include <string.h>

int *bspk_choose_cpus(const cpu_set_t *mask, int nprocs) {
  const char *env = getenv("BSPKIT_PIN");
  if (env && strcmp(env, "0") == 0) return NULL;
  if (nprocs > CPU_COUNT(mask)) return NULL;
  int *cpus = malloc((size_t)nprocs * sizeof *cpus);
  if (!cpus) return NULL;
  int next = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && next < nprocs; cpu++)
    if (CPU_ISSET(cpu, mask)) cpus[next++] = cpu;
  return cpus;
}
