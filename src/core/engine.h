/*
 * engine.h - the interface between the BSPlib core and a back end ("engine").
 *
 * The core (registration table, request buffers, message combining, checks) turns a
 * superstep into one combined block per destination plus a little metadata (the post).
 * An engine moves posts between processes and provides barriers:
 *
 *   arrive()    every process hands in its post; returns once all have arrived, with the
 *               flags ORed over all processes and how many arrived at bsp_end;
 *   incoming()  after arrive(): the block process src combined for this process;
 *   peer_post() after arrive(): src's post (kind, registration calls, tag size);
 *               both stay valid until the next arrive() or exchange();
 *   exchange()  one more round of blocks (one per destination), for get replies on
 *               engines without direct access or transfer(); returns the blocks
 *               received ([nprocs], valid until the next exchange()); incoming() still
 *               gives the arrive's;
 *   barrier()   a plain barrier (between the phases of a superstep's end, needed only
 *               where processes touch each other's memory directly).
 *
 * Engines with shared memory (threads) set direct_access: then a registration's peer
 * addresses are usable here, hpput/hpget copy at once and gets are served at the sync by
 * reading the owner's memory. Engines without it (MPI) carry gets as request records to
 * the owner, who serves them before any put lands and answers in a second exchange.
 * Engines with one-sided access (mpi-rma) take puts and gets as RMA operations instead.
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
  BSPK_HAS_GET = 1u << 0,             /* buffered gets to serve before puts land     */
  BSPK_HAS_PUT = 1u << 1,             /* puts (or collective data) to write          */
  BSPK_HAS_SEND = 1u << 2,            /* BSMP messages                               */
  BSPK_HAS_REG = 1u << 3,             /* push_reg/pop_reg calls to agree on          */
  BSPK_HAS_TAGSIZE = 1u << 4,         /* set_tagsize calls to agree on               */
  BSPK_HAS_GET_RECORD = 1u << 5,      /* get requests sent as records (answered two-sided) */
  BSPK_HAS_LARGE_PUT = 1u << 6,       /* puts moved as their own messages (transfer())        */
  BSPK_HAS_RMA_PUT = 1u << 7,         /* puts written by their sender (rma_put)                */
  BSPK_HAS_GET_INTO_REG = 1u << 8,    /* a get writes into a registered area of its process,
                                       * which other processes may access: its data lands
                                       * after every read, and nobody goes on before it has */
  BSPK_HAS_CHECKPOINT = 1u << 9,      /* the superstep ends with bspk_checkpoint (all or none) */
  BSPK_CHECKPOINT_DUE = 1u << 10,     /* process 0: the checkpoint's interval has passed     */
  BSPK_CHECKPOINT_BAD = 1u << 11,     /* a restart's vote: this process' file is damaged     */
  BSPK_CHECKPOINT_WRITING = 1u << 12, /* this process' writer is still at the generation in
                                       * flight (checkpoint.c)                           */
};

/* One message of a transfer(): nbytes at data, to or from process pid. */
typedef struct bspk_transfer {
  int pid;
  char *data;
  size_t nbytes;
} bspk_transfer;

/* A combined block: all records one process sends one destination in one superstep. */
typedef struct bspk_outbox {
  char *data;
  size_t len, cap;
  uint32_t n_put, n_send, n_coll, n_get; /* records of each kind in data     */
  size_t send_bytes;                     /* sum of BSMP payload sizes                */
  int engine_memory; /* data is the engine's (outbox_memory): never resized or freed by the
                      * core; a block that outgrows it moves to memory of the core's own */
} bspk_outbox;

/* One push_reg or pop_reg call, in call order. */
typedef struct bspk_regop {
  int is_push;
  int slot;         /* pop: the slot popped, or BSPK_POP_PENDING(i): the push    */
                    /* made as call i of this superstep (it never takes effect)  */
  const void *addr; /* push: the area                                        */
  int size;
  int cancelled; /* push: popped again in the same superstep              */
} bspk_regop;
#define BSPK_POP_PENDING(i) (-2 - (i))

/* What one process hands the engine at the end of a superstep. */
typedef struct bspk_post {
  int kind;                  /* enum bspk_arrival_kind                      */
  int parity;                /* which of the two outbox sets: the superstep's parity */
  const bspk_outbox *outbox; /* [nprocs]                                    */
  const bspk_regop *regops;
  int nregops;
  int tagsize; /* tag size requested in this superstep, or -1 */
} bspk_post;

typedef struct bspk_arrival {
  unsigned flags; /* ORed over all processes */
  int n_at_end;   /* processes that arrived from bsp_end */
} bspk_arrival;

typedef struct bspk_engine bspk_engine; /* an engine's per-process state */

typedef struct bspk_engine_ops {
  const char *name;
  int direct_access;
  /* From bsp_init (may be NULL): a process-based engine starts here, and its processes
   * other than 0 run spmd and never return. */
  void (*init)(void (*spmd)(void), int argc, char **argv);
  /* The number of processes bsp_nprocs() reports before bsp_begin, or 0: not known. */
  int (*available_procs)(void);
  /* On the process that calls bsp_begin first (pid 0): start nprocs processes. The others
   * run `entry` (the SPMD function, or main) and come back through bsp_begin, where the
   * core calls attach(). Returns this process' engine state. NULL: every process attaches.
   * `parent` is NULL for a top-level section; for a nested one (only where parent_of is
   * set) the core's opaque record of the process that starts it, which is the calling
   * thread: it becomes pid 0 of the new section and finish(e, 0) returns it to its own. */
  bspk_engine *(*start)(int nprocs, void (*entry)(void), void *parent);
  /* From bsp_begin: this process' engine state, pid and nprocs, or NULL when the process
   * was not started by the engine (then start() is called). maxprocs is bsp_begin's. */
  bspk_engine *(*attach)(int maxprocs, int *pid, int *nprocs);
  void (*arrive)(bspk_engine *e, const bspk_post *mine, unsigned flags, bspk_arrival *all);
  const bspk_outbox *(*incoming)(bspk_engine *e, int src);
  const bspk_post *(*peer_post)(bspk_engine *e, int src);
  const bspk_outbox *(*exchange)(bspk_engine *e, const bspk_outbox *out);
  void (*barrier)(bspk_engine *e);
  /* Two-sided engines (may be NULL): messages whose sizes both sides know, with no round
   * of headers: large puts and gets as their own messages, straight from the sender's
   * memory into the destination (the receiver copies nothing), and the replies to get
   * requests (then exchange() is not used for them). Sends and receives between a pair
   * match in the order given; returns when all are done. */
  void (*transfer)(bspk_engine *e, const bspk_transfer *sends, int nsends,
                   const bspk_transfer *recvs, int nrecvs);
  /* One-sided DRMA (mpi-rma; all NULL elsewhere). A slot's window is made when every
   * process applies the same push (collective, in slot order) and freed at its pop.
   * rma_put/rma_get start a transfer to/from process pid's area of slot; rma_complete
   * (collective) returns when every transfer started by any process has completed. */
  void (*rma_register)(bspk_engine *e, int slot, void *addr, int size);
  void (*rma_deregister)(bspk_engine *e, int slot);
  void (*rma_put)(bspk_engine *e, int pid, int slot, int offset, const void *src, int nbytes);
  void (*rma_get)(bspk_engine *e, int pid, int slot, int offset, void *dst, int nbytes);
  void (*rma_complete)(bspk_engine *e);
  /* bsp_direct_get on an engine without direct_access (may be NULL: not available there):
   * reads nbytes at offset of process pid's area of slot into dst now, without the owner
   * taking part, and returns when dst holds them. A string instead of the read: the reason
   * it cannot be done (then the core reports it), else NULL. */
  const char *(*direct_get)(bspk_engine *e, int pid, int slot, int offset, void *dst, int nbytes);
  /* May be NULL: memory of the engine's for the core's outbox to process dest in outbox set
   * parity (0 or 1), of *cap bytes, or NULL (the core allocates its own). An engine that
   * others read from in place (procs: shared memory) so takes blocks without copying them;
   * a block the core had to move elsewhere (it outgrew *cap) the engine copies. */
  char *(*outbox_memory)(bspk_engine *e, int parity, int dest, size_t *cap);
  /* bsp_direct_get where processes may read each other's memory by address (procs; may be
   * NULL): nbytes at process pid's address remote into dst now; NULL, or why it cannot. */
  const char *(*read_process)(bspk_engine *e, int pid, const void *remote, void *dst,
                              size_t nbytes);
  /* After the final arrive of bsp_end: process 0 waits for the others and frees the run;
   * the others never return. */
  void (*finish)(bspk_engine *e, int pid);
  /* Ends every process of the program now with the given exit status. */
  void (*terminate)(int status);
  /* May be NULL: a directory every process of this run can see, where they agree which of
   * them reports a fatal error (used when bsprun gave none in BSPKIT_JOB_DIR). */
  const char *(*job_dir)(void);
  /* Nested SPMD sections (may be NULL: bsp_init and bsp_begin inside a section are then an
   * error): what start() was given as `parent` for e's section (NULL: top level). */
  void *(*parent_of)(bspk_engine *e);
  /* May be NULL (pid 0): an engine whose start() forks returns in every process it made;
   * this says which process e is. */
  int (*pid_of)(bspk_engine *e);
  /* May be NULL (use job_dir): 1 if this process is the one to report the run's fatal error,
   * 0 if another one already is (this one then waits to be ended), -1: not known here. */
  int (*claim_report)(void);
} bspk_engine_ops;

extern const bspk_engine_ops bspk_procs_engine;

extern const bspk_engine_ops bspk_threads_engine;

/* ---- Services of the core for engines ----------------------------------------------------
 * Engines include nothing of the core but this header; what they need of it comes through
 * this table. The built-in engine uses bspk_engine_services; a plugin exports a pointer
 * named BSPK_SERVICES_SYMBOL, which the core sets to the same table when it loads it. */
typedef struct bspk_services {
  /* Prints "bspkit: error in CALL on process PID: ..." (PID < 0: the calling BSP process,
   * or none) once for the whole program, which then ends with status 1. */
  void (*fatal)(const char *call, int pid, const char *format, ...)
      __attribute__((noreturn, format(printf, 3, 4)));
  /* realloc(p, n), reporting a failure through fatal ("out of memory ... for WHAT"). */
  void *(*realloc)(void *p, size_t n, const char *call, const char *what);
  /* Ends this process with status 1 after `seconds`, whatever it is doing then (a process
   * that waits to be ended by another must not wait forever). */
  void (*exit_after)(unsigned seconds);
} bspk_services;

extern const bspk_services bspk_engine_services;
#define BSPK_SERVICES_SYMBOL "bspk_engine_plugin_services"

/* The plugin (libbspkit_mpi.so) exports each of its back ends' ops as
 * BSPK_ENGINE_SYMBOL "_" name, with '-' in the name as '_' (bspk_engine_plugin_ops_mpi_rma). */
#define BSPK_ENGINE_SYMBOL "bspk_engine_plugin_ops"

/* The engine named by BSPKIT_BACKEND (default: the built-in one); an unknown name is an
 * error. */
const bspk_engine_ops *bspk_engine_select(void);

#endif
