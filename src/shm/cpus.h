/*
 * cpus.h - which core each BSP process of a shared-memory engine (threads, procs) is pinned
 * to: one process per core of the starting thread's affinity mask, in order.
 */
#ifndef BSPKIT_SHM_CPUS_H
#define BSPKIT_SHM_CPUS_H

#include <sched.h>

/* The CPU of each of nprocs processes ([nprocs], malloc'd), or NULL: no pinning (more
 * processes than CPUs in mask, BSPKIT_PIN=0, or no memory). */
int *bspk_choose_cpus(const cpu_set_t *mask, int nprocs);

#endif
