/*
 * engine.h - the interface between the BSPlib core and a back end ("engine").
 *
 * The core (registration table, request buffers, message combining, checks) turns a
 * superstep into one combined block per destination plus a little metadata (the post).
 * An engine moves posts between processes and provides barriers:
 *
 *   arrive()    every process hands in its post; returns once all have arrived, with the
 *               flags ORed over all processes and how many arrived at bsp_end;
 *   peer_post() after arrive(): the post of process src as seen here. Its outbox[me] is the
 *               block src combined for this process. Valid until the next arrive().
 *   barrier()   a plain barrier (used between the phases of a superstep's end).
 *
 * Engines with shared memory (threads) set direct_access: then a registration's peer
 * addresses are usable here, hpput/hpget copy at once and gets are served at the sync by
 * reading the owner's memory. An engine without it exchanges blocks (MPI: counts by
 * Alltoall, data by Alltoallv) and the core sends get requests as records.
 */
#ifndef BSPKIT_ENGINE_H
#define BSPKIT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* What a process is doing when it arrives at the end of a superstep. */
enum bspk_arrival_kind { BSPK_AT_SYNC = 0, BSPK_AT_END = 1 };

/* Flags a process raises for the superstep it ends; arrive() ORs them over processes, so
 * every process knows which phases of the superstep's end it must take part in. */
enum bspk_superstep_flags {
  BSPK_HAS_GET = 1u << 0,     /* buffered gets to serve before puts land     */
  BSPK_HAS_PUT = 1u << 1,     /* puts (or collective data) to write          */
  BSPK_HAS_SEND = 1u << 2,    /* BSMP messages                               */
  BSPK_HAS_REG = 1u << 3,     /* push_reg/pop_reg calls to agree on          */
  BSPK_HAS_TAGSIZE = 1u << 4, /* set_tagsize calls to agree on               */
};

/* A combined block: all records one process sends one destination in one superstep. */
typedef struct bspk_outbox {
  char *data;
  size_t len, cap;
  uint32_t n_put, n_send, n_coll; /* records of each kind in data             */
  size_t send_bytes;              /* sum of BSMP payload sizes                */
} bspk_outbox;

/* One push_reg or pop_reg call, in call order. */
typedef struct bspk_regop {
  int is_push;
  int slot;          /* pop: the slot popped                                  */
  const void *addr;  /* push: the area                                        */
  int size;
} bspk_regop;

/* What one process hands the engine at the end of a superstep. */
typedef struct bspk_post {
  int kind;                     /* enum bspk_arrival_kind                      */
  const bspk_outbox *outbox;    /* [nprocs]                                    */
  const bspk_regop *regops;
  int nregops;
  int tagsize;                  /* tag size requested in this superstep, or -1 */
} bspk_post;

typedef struct bspk_arrival {
  unsigned flags; /* ORed over all processes */
  int n_at_end;   /* processes that arrived from bsp_end */
} bspk_arrival;

typedef struct bspk_engine bspk_engine; /* an engine's per-process state */

typedef struct bspk_engine_ops {
  const char *name;
  int direct_access;
  /* On the process that calls bsp_begin first (pid 0): start nprocs processes. The others
   * run `entry` (the SPMD function, or main) and come back through bsp_begin, where the
   * core calls attach(). Returns this process' engine state. */
  bspk_engine *(*start)(int nprocs, void (*entry)(void));
  /* For a started process: its engine state, pid and nprocs (NULL when not started by us). */
  bspk_engine *(*attach)(int *pid, int *nprocs);
  void (*arrive)(bspk_engine *e, const bspk_post *mine, unsigned flags, bspk_arrival *all);
  const bspk_post *(*peer_post)(bspk_engine *e, int src);
  void (*barrier)(bspk_engine *e);
  /* After the final arrive of bsp_end: process 0 waits for the others and frees the run;
   * the others never return. */
  void (*finish)(bspk_engine *e, int pid);
  /* Ends every process of the program now with the given exit status. */
  void (*terminate)(int status);
} bspk_engine_ops;

extern const bspk_engine_ops bspk_threads_engine;

/* The engine named by BSPKIT_BACKEND (default: threads); an unknown name is an error. */
const bspk_engine_ops *bspk_engine_select(void);

#endif
