/*
 * bspalg-oocmm - out-of-core matrix multiplication C = A B of n x n doubles, every matrix on
 * disk: the program whose running time needs the memory-disk terms of Kang et al.'s IMH model
 * (003_5048c8ad6359ff8c, sec. 5.2.3-5.2.4: T_r + m_r tau_r per read call, T_w + m_w tau_w per
 * write call).
 *
 * Distribution: A and C by block rows (process s owns rows_s, the balanced share of
 * mm_part_start), B replicated: every process keeps its own copy on its own disk (node-local
 * disks, as on a cluster). Process s keeps A.s, B.s and C.s in a directory of its own that it
 * makes with mkdtemp under --dir and removes at the end, on every error (then exit status 1
 * with one message) and on SIGINT, SIGTERM and SIGHUP; a disk too small is refused up front.
 *
 * Schedule, per process, with three in-core buffers within --memory (choice of w and r:
 * choose_geometry):
 *   B as ceil(n / w) column panels (n x w_j, row-major, contiguous), A as ceil(rows_s / r) row
 *   blocks (r_b x n), C as r_b x w_j tiles in panel-major order (tile (j, b) is extent
 *   j * blocks + b);
 *   for each panel j: read B panel j
 *     for each block b: read A block b; tile = A block b * B panel j (cblas_dgemm); write tile
 * Every extent starts at a multiple of 4096 bytes and is transferred as its size rounded up to
 * 4096 (O_DIRECT's alignment), in calls of at most --chunk bytes: the same file layout and the
 * same calls in both --io modes. A process without rows does no I/O.
 *
 * BSP cost: one superstep, W = 2 n^2 ceil(n/p) flops (the process with the most rows), then an
 * all-gather of one status word (an I/O error on any process ends the run on all with the
 * files removed): H = p - 1 words, S = 1. The read and write calls of every process, and their
 * sizes, are counted and written in "params"; README.md has their closed form.
 */
#include <bsp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bspalg_driver.h"
#include "matmul_common.h"

enum {
  ALIGN = 4096,     /* O_DIRECT's alignment of buffers, offsets and sizes */
  MAX_CLASSES = 16, /* distinct call sizes: at most 5 reads and 5 writes occur */
  CHECK_ALL = 16384 /* a process with at most this many entries of C checks them all */
};

static const char prog[] = "bspalg-oocmm";
/* Options: set before bsp_init, read-only afterwards. */
static long opt_size = 1000;
static long opt_memory = 8L << 20;
static long opt_chunk = 4L << 20;
enum { IO_DIRECT, IO_FADVISE, IO_PAGE };
static int opt_io = IO_DIRECT;
static const char *opt_dir;
static long opt_max_file_bytes; /* 0: no limit of its own */
static const char *const io_names[] = {"direct", "fadvise", "page"};

static const char help[] =
    "Out-of-core C = A B of random N x N doubles, all three on disk: A and C by block rows, B\n"
    "replicated (a copy per process), streamed through buffers of --memory bytes.\n"
    "  --size N          matrix order (default 1000)\n"
    "  --memory BYTES    per-process budget for the in-core buffers: a B panel in half of it,\n"
    "                    an A block and a C tile in the rest (default 8388608)\n"
    "  --io direct|fadvise|page  direct: around the page cache with O_DIRECT, or as\n"
    "                    fadvise where the file system refuses it; fadvise: around the page\n"
    "                    cache by posix_fadvise DONTNEED + fsync of every call; page: buffered\n"
    "                    I/O, the files cached (default direct)\n"
    "  --chunk BYTES     largest read or write call, a multiple of 4096 (default 4194304)\n"
    "  --dir DIR         where each process makes its temporary directory (default $TMPDIR,\n"
    "                    else /tmp)\n"
    "  --max-file-bytes BYTES  limit every file of the run to BYTES (RLIMIT_FSIZE, set after\n"
    "                    start-up): a write beyond fails as on a full disk (to test that)\n";

static int option(const char *arg, const char *value) {
  if (!value) return 0;
  if (!strcmp(arg, "--size")) opt_size = bspalg_parse_long(prog, "--size", value, 1, 1000000);
  else if (!strcmp(arg, "--memory"))
    opt_memory = bspalg_parse_long(prog, "--memory", value, 1, 1L << 40);
  else if (!strcmp(arg, "--io")) opt_io = bspalg_parse_choice(prog, "--io", value, io_names, 3);
  else if (!strcmp(arg, "--max-file-bytes"))
    opt_max_file_bytes = bspalg_parse_long(prog, "--max-file-bytes", value, 1, LONG_MAX);
  else if (!strcmp(arg, "--chunk")) {
    opt_chunk = bspalg_parse_long(prog, "--chunk", value, ALIGN, 1L << 30);
    if (opt_chunk % ALIGN) {
      fprintf(stderr, "%s: --chunk must be a multiple of %d (the O_DIRECT alignment), not %ld\n",
              prog, ALIGN, opt_chunk);
      exit(2);
    }
  } else if (!strcmp(arg, "--dir")) {
    if (!*value) {
      fprintf(stderr, "%s: --dir must name a directory, not ''\n", prog);
      exit(2);
    }
    opt_dir = value;
  } else return 0;
  return 2;
}

/* A write over a file-size limit (ulimit -f) then fails with EFBIG and is reported and cleaned
 * up like ENOSPC, rather than killing the process with its files left behind. */
static void before_init(void) {
  mm_blas_single_threaded();
  signal(SIGXFSZ, SIG_IGN);
}

static long pad(long bytes) { return (bytes + ALIGN - 1) / ALIGN * ALIGN; }

/* The panel width w and block height r for budget bytes: the widest B panel (a multiple of 8
 * columns unless narrower than 8 or all of B) in half of the budget, then the tallest A block
 * (at most rows_max rows) whose buffer and its C tile's fit in the rest, every buffer rounded
 * up to 4096 bytes. Returns 0 when not even w = r = 1 fits: that needs 2 pad(8 n) + 4096. */
static int choose_geometry(long n, long rows_max, long budget, long *w_out, long *r_out) {
  long w = budget / 2 / (8 * n);
  if (w > n) w = n;
  while (w > 0 && pad(8 * n * w) > budget / 2) w--;
  if (w <= 0) return 0;
  if (w < n && w >= 8) w -= w % 8;
  long rest = budget - pad(8 * n * w);
  long r = rest / (8 * (n + w));
  if (r > rows_max) r = rows_max;
  while (r > 0 && pad(8 * n * r) + pad(8 * r * w) > rest) r--;
  if (r <= 0) return 0;
  *w_out = w;
  *r_out = r;
  return 1;
}

/* The calls of one kind (read or write), by size: classes sorted by bytes, largest first. */
typedef struct {
  long bytes, calls;
} io_class;
typedef struct {
  int count;
  io_class cls[MAX_CLASSES];
} io_classes;
typedef struct {
  io_classes reads, writes;
} io_counts;

static void add_calls(io_classes *c, long bytes, long calls) {
  int k = 0;
  while (k < c->count && c->cls[k].bytes > bytes) k++;
  if (k < c->count && c->cls[k].bytes == bytes) {
    c->cls[k].calls += calls;
    return;
  }
  if (c->count == MAX_CLASSES) bsp_abort("%s: more than %d sizes of calls\n", prog, MAX_CLASSES);
  memmove(&c->cls[k + 1], &c->cls[k], (size_t)(c->count - k) * sizeof c->cls[0]);
  c->cls[k] = (io_class){bytes, calls};
  c->count++;
}

static long total_calls(const io_classes *c) {
  long sum = 0;
  for (int k = 0; k < c->count; k++) sum += c->cls[k].calls;
  return sum;
}

static long total_bytes(const io_classes *c) {
  long sum = 0;
  for (int k = 0; k < c->count; k++) sum += c->cls[k].bytes * c->cls[k].calls;
  return sum;
}

/* `times` transfers of one extent of `bytes`, each in calls of at most `chunk` bytes. */
static void add_extents(io_classes *c, long bytes, long times, long chunk) {
  if (times <= 0 || bytes <= 0) return;
  if (bytes / chunk) add_calls(c, chunk, bytes / chunk * times);
  if (bytes % chunk) add_calls(c, bytes % chunk, times);
}

/* The closed form of the calls of a process with `rows` rows (README.md): panels of w and of
 * n mod w columns, blocks of r and of rows mod r rows. */
static void expected_counts(long n, long rows, long w, long r, long chunk, io_counts *out) {
  memset(out, 0, sizeof *out);
  if (rows <= 0) return;
  const long cols[2] = {w, n % w}, panels[2] = {n / w, n % w > 0};
  const long heights[2] = {r, rows % r}, blocks[2] = {rows / r, rows % r > 0};
  for (int a = 0; a < 2; a++) {
    add_extents(&out->reads, pad(8 * n * cols[a]), panels[a], chunk); /* B panels */
    for (int b = 0; b < 2; b++) {
      add_extents(&out->reads, pad(8 * heights[b] * n), panels[a] * blocks[b], chunk);
      add_extents(&out->writes, pad(8 * heights[b] * cols[a]), panels[a] * blocks[b], chunk);
    }
  }
}

static int same_classes(const io_classes *a, const io_classes *b) {
  if (a->count != b->count) return 0;
  for (int k = 0; k < a->count; k++)
    if (a->cls[k].bytes != b->cls[k].bytes || a->cls[k].calls != b->cls[k].calls) return 0;
  return 1;
}

enum { FILE_A, FILE_B, FILE_C, FILES };
static const char file_names[FILES] = {'A', 'B', 'C'};

/* What failed, for the message: a status word is stage * 65536 + errno (0: a short transfer). */
enum { STAGE_MKDIR = 1, STAGE_OPEN, STAGE_WRITE, STAGE_FSYNC, STAGE_READ, STAGE_SPACE };

/* A process' directory and files, on a list a signal handler can walk: a run ended by SIGINT,
 * SIGTERM or SIGHUP (Ctrl-C, a timeout, mpirun passing on an abort) removes them too, rather
 * than leaving gigabytes behind. Entries are never freed (one per process and run); `live` says
 * whether there is anything to remove. */
typedef struct made_files {
  char dir[4096];
  char path[FILES][4200];
  atomic_int live;
  struct made_files *next;
} made_files;
static _Atomic(made_files *) made_list;
static atomic_int handlers_installed;

static void remove_made(made_files *m) {
  if (!atomic_exchange(&m->live, 0)) return;
  for (int f = 0; f < FILES; f++) unlink(m->path[f]);
  rmdir(m->dir);
}

/* Async-signal-safe: unlink and rmdir of paths made beforehand; then the signal's default. */
static void remove_on_signal(int sig) {
  for (made_files *m = atomic_load(&made_list); m; m = m->next) remove_made(m);
  raise(sig); /* SA_RESETHAND: now the default action */
}

/* Once per program, after bsp_begin (so that the MPI library's handlers, if any, come first). */
static void install_handlers(void) {
  if (atomic_exchange(&handlers_installed, 1)) return;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = remove_on_signal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t k = 0; k < sizeof signals / sizeof *signals; k++) {
    struct sigaction old;
    /* a signal someone chose to ignore (nohup) stays ignored */
    if (sigaction(signals[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(signals[k], &action, NULL);
  }
}

typedef struct {
  int pid, nprocs;
  unsigned long seed;
  long n, row0, rows, w, r, panels, blocks;
  long panel_stride, block_stride, tile_stride; /* bytes between extents in the files */
  double *bpanel, *ablock, *ctile;              /* 4096-aligned */
  double *exchange;                             /* 3 p, registered: status words, check */
  made_files *made;                             /* the directory and the files' paths */
  int fd[FILES];
  int direct;        /* --io direct and O_DIRECT was taken */
  int counting;      /* inside a repetition: count the calls */
  io_counts counts;  /* of the last repetition */
  long status;       /* this process' first failure, 0 while none */
  double free_bytes; /* on a failure for want of space: what the file system had */
} ooc_state;

static long panel_cols(const ooc_state *st, long j) {
  return j < st->panels - 1 ? st->w : st->n - j * st->w;
}

static long block_rows(const ooc_state *st, long b) {
  return b < st->blocks - 1 ? st->r : st->rows - b * st->r;
}

static void fail(ooc_state *st, int stage, int file, int err) {
  if (!st->status) st->status = ((long)stage * 4 + file) * 65536 + err;
}

/* One extent of a file at `offset`, in calls of at most --chunk bytes, counted inside a
 * repetition. On failure records it (st->status) and returns -1. The posix_fadvise fallback of
 * --io direct flushes every write and drops every transferred range from the page cache, so
 * that the next access to it goes to the disk, as O_DIRECT's would. */
static int transfer(ooc_state *st, int file, int writing, void *buf, long bytes, long offset) {
  int fd = st->fd[file];
  char *p = buf;
  for (long done = 0; done < bytes;) {
    long len = bytes - done < opt_chunk ? bytes - done : opt_chunk;
    ssize_t moved = writing ? pwrite(fd, p + done, (size_t)len, offset + done)
                            : pread(fd, p + done, (size_t)len, offset + done);
    if (moved != len) {
      fail(st, writing ? STAGE_WRITE : STAGE_READ, file, moved < 0 ? errno : 0);
      return -1;
    }
    if (opt_io != IO_PAGE && !st->direct) {
      if (writing && fsync(fd) != 0) {
        fail(st, STAGE_FSYNC, file, errno);
        return -1;
      }
      posix_fadvise(fd, offset + done, len, POSIX_FADV_DONTNEED);
    }
    if (st->counting) add_calls(writing ? &st->counts.writes : &st->counts.reads, len, 1);
    done += len;
  }
  return 0;
}

static void close_and_remove(ooc_state *st) {
  for (int f = 0; f < FILES; f++) {
    if (st->fd[f] >= 0) close(st->fd[f]);
    st->fd[f] = -1;
  }
  remove_made(st->made);
}

/* What the three files reach (an upper bound within a few extents' padding). */
static double files_bytes(const ooc_state *st) {
  if (st->rows == 0) return ALIGN; /* the O_DIRECT trial write */
  return (double)st->panels * (double)st->panel_stride +
         (double)st->blocks * (double)st->block_stride +
         (double)st->panels * (double)st->blocks * (double)st->tile_stride;
}

/* The processes whose files may share this disk: all of them on the threads back end, else at
 * most one per core here (more nodes, more disks), as bspalg_alloc counts memory. */
static int sharing_disk(void) {
  const char *backend = getenv("BSPKIT_BACKEND");
  int p = bsp_nprocs();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (backend && *backend && strcmp(backend, "threads") && cores > 0 && cores < p) p = (int)cores;
  return p;
}

static const char *base_dir(void) {
  const char *tmp = getenv("TMPDIR");
  return opt_dir ? opt_dir : tmp && *tmp ? tmp : "/tmp";
}

/* Opens the three files; in direct mode with O_DIRECT when the file system takes it (checked
 * with one aligned write, which some file systems refuse only then), else buffered and the
 * fadvise fallback. */
static int open_files(ooc_state *st) {
  for (int attempt = opt_io == IO_DIRECT ? 0 : 1; attempt < 2; attempt++) {
    st->direct = attempt == 0;
    int flags = O_RDWR | O_CREAT | O_TRUNC | (st->direct ? O_DIRECT : 0), f;
    for (f = 0; f < FILES; f++) {
      st->fd[f] = open(st->made->path[f], flags, 0600);
      if (st->fd[f] < 0) break;
    }
    if (f == FILES && st->direct) {
      memset(st->ctile, 0, ALIGN);
      if (pwrite(st->fd[FILE_C], st->ctile, ALIGN, 0) != ALIGN) f = 0, errno = EINVAL;
    }
    if (f == FILES) return 0;
    int err = errno;
    for (int g = 0; g < FILES; g++) {
      if (st->fd[g] >= 0) close(st->fd[g]);
      st->fd[g] = -1;
    }
    if (!(st->direct && err == EINVAL)) {
      fail(st, STAGE_OPEN, f < FILES ? f : FILE_C, err);
      return -1;
    }
  }
  return -1; /* not reached: the buffered attempt returns */
}

/* The temporary directory, the files, and A's block rows and B's panels written and flushed. */
static void make_files(ooc_state *st) {
  made_files *m = st->made;
  snprintf(m->dir, sizeof m->dir, "%s/%s.XXXXXX", base_dir(), prog);
  for (int f = 0; f < FILES; f++)
    snprintf(m->path[f], sizeof m->path[f], "%s/%c.%d", m->dir, file_names[f], st->pid);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &old); /* no signal between mkdtemp and `live` */
  char *made = mkdtemp(m->dir);
  int err = errno;
  if (made) {
    for (int f = 0; f < FILES; f++) /* mkdtemp filled in the XXXXXX */
      snprintf(m->path[f], sizeof m->path[f], "%s/%c.%d", m->dir, file_names[f], st->pid);
    atomic_store(&m->live, 1);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!made) {
    fail(st, STAGE_MKDIR, 0, err);
    return;
  }
  struct statvfs fs;
  if (statvfs(m->dir, &fs) == 0 &&
      (double)fs.f_bavail * (double)fs.f_frsize < (double)files_bytes(st) * sharing_disk()) {
    st->free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
    fail(st, STAGE_SPACE, 0, ENOSPC);
    return;
  }
  if (open_files(st) || st->rows == 0) return;
  long n = st->n;
  for (long j = 0; j < st->panels; j++) {
    long c = panel_cols(st, j);
    memset(st->bpanel, 0, (size_t)st->panel_stride);
    mm_fill_input(st->seed, MM_B, n, 0, j * st->w, n, c, st->bpanel, c);
    if (transfer(st, FILE_B, 1, st->bpanel, pad(8 * n * c), j * st->panel_stride)) return;
  }
  for (long b = 0; b < st->blocks; b++) {
    long q = block_rows(st, b);
    memset(st->ablock, 0, (size_t)st->block_stride);
    mm_fill_input(st->seed, MM_A, n, st->row0 + b * st->r, 0, q, n, st->ablock, n);
    if (transfer(st, FILE_A, 1, st->ablock, pad(8 * q * n), b * st->block_stride)) return;
  }
  for (int f = 0; f < FILES; f++)
    if (fsync(st->fd[f]) != 0) {
      fail(st, STAGE_FSYNC, f, errno);
      return;
    }
}

/* After an all-gather of the status words into exchange[0 .. p-1]: when a process failed,
 * every process removes its files, and process 0 ends the run with the first failure's
 * message (bsp_abort: exit status 1, one message). */
static void end_if_failed(ooc_state *st) {
  int first = -1;
  for (int t = 0; t < st->nprocs && first < 0; t++)
    if (st->exchange[t] != 0) first = t;
  if (first < 0) return;
  close_and_remove(st);
  bsp_sync();
  if (st->pid == 0) {
    long status = (long)st->exchange[first];
    int err = (int)(status % 65536), stage = (int)(status / 65536 / 4);
    int file = (int)(status / 65536 % 4);
    char buf[256];
    const char *why = err                   ? strerror_r(err, buf, sizeof buf)
                      : stage == STAGE_READ ? "a short read (fewer bytes than asked)"
                                            : "a short write (fewer bytes than asked)";
    if (stage == STAGE_MKDIR)
      bsp_abort("%s: cannot create a directory in %s: %s\n", prog, base_dir(), why);
    if (stage == STAGE_SPACE)
      bsp_abort(
          "%s: not enough space in %s: the files need %.3g GiB on each of %d processes "
          "sharing its disk, and %.3g GiB are free (process %d); use a smaller --size or "
          "another --dir\n",
          prog, base_dir(), st->exchange[2 * st->nprocs + first] / 0x1p30, sharing_disk(),
          st->exchange[st->nprocs + first] / 0x1p30, first);
    static const char *const verbs[] = {"", "", "opening", "writing", "flushing", "reading", ""};
    bsp_abort(
        "%s: %s %c.%d (process %d, in its directory under %s) failed: %s; every "
        "process' files were removed\n",
        prog, verbs[stage], file_names[file], first, first, base_dir(), why);
  }
  bsp_sync(); /* process 0 ends the run */
  exit(1);
}

/* Every process puts its status word into exchange[pid] of every process (plain BSPlib;
 * counted by the caller where it is inside a repetition); in setup (`with_space`) also the
 * free bytes and what the files need, into exchange[p + pid] and exchange[2 p + pid]. */
static void put_status(ooc_state *st, int counted, int with_space) {
  double mine[3] = {(double)st->status, st->free_bytes, files_bytes(st)};
  for (int t = 0; t < st->nprocs; t++)
    for (int k = 0; k < (with_space ? 3 : 1); k++) {
      bsp_put(t, &mine[k], st->exchange, (k * st->nprocs + st->pid) * (bsp_size_t)sizeof(double),
              sizeof(double));
      if (counted) bspalg_put(t, 1);
    }
}

static double *aligned_doubles(long bytes, const char *what) {
  char *raw = bspalg_alloc((size_t)bytes + ALIGN, "for %s (%ld bytes)", what, bytes);
  return (double *)(raw + (ALIGN - (uintptr_t)raw % ALIGN) % ALIGN);
}

static void *setup(const bspalg_common_opts *opts) {
  int p = bsp_nprocs(), s = bsp_pid();
  long n = opt_size, rows_max = (n + p - 1) / p, w, r;
  if (!choose_geometry(n, rows_max, opt_memory, &w, &r)) {
    if (s == 0)
      fprintf(stderr,
              "%s: --memory %ld is too small for n = %ld: a B panel of one column in half of it "
              "and one row of A and of C in the rest, each buffer rounded up to %d bytes, need "
              "--memory %ld or more\n",
              prog, opt_memory, n, ALIGN, 2 * pad(8 * n) + ALIGN);
    return NULL;
  }
  ooc_state *st = bspalg_alloc(sizeof *st, "for the state");
  *st = (ooc_state){.pid = s, .nprocs = p, .seed = opts->seed, .n = n, .w = w, .r = r};
  st->row0 = mm_part_start(n, p, s);
  st->rows = mm_part_size(n, p, s);
  st->panels = (n + w - 1) / w;
  st->blocks = (st->rows + r - 1) / r;
  st->panel_stride = pad(8 * n * w);
  st->block_stride = pad(8 * r * n);
  st->tile_stride = pad(8 * r * w);
  st->bpanel = aligned_doubles(st->panel_stride, "a panel of B");
  st->ablock = aligned_doubles(st->block_stride, "a block of A");
  st->ctile = aligned_doubles(st->tile_stride, "a tile of C");
  for (int f = 0; f < FILES; f++) st->fd[f] = -1;
  st->made = calloc(1, sizeof *st->made);
  if (!st->made) bsp_abort("%s: out of memory\n", prog);
  st->made->next = atomic_load(&made_list);
  while (!atomic_compare_exchange_weak(&made_list, &st->made->next, st->made)) {
  }
  install_handlers();
  st->exchange = bspalg_alloc(3 * (size_t)p * sizeof(double), "for the status words");
  bspalg_register(st->exchange, 3 * (size_t)p * sizeof(double));
  if (opt_max_file_bytes) { /* the soft limit only: the run's own files, from now on */
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 &&
        (limit.rlim_max == RLIM_INFINITY || (rlim_t)opt_max_file_bytes <= limit.rlim_max)) {
      limit.rlim_cur = (rlim_t)opt_max_file_bytes;
      setrlimit(RLIMIT_FSIZE, &limit);
    }
  }
  make_files(st);
  bsp_sync(); /* the registration takes effect */
  put_status(st, 0, 1);
  bsp_sync();
  end_if_failed(st);
  return st;
}

/* Every repetition starts alike: direct, nothing of the files in the page cache; page, the
 * inputs cached (read once) and C's tiles of the last repetition written back. Local and
 * uncounted; a failure ends the next repetition's run (st->status). */
static void prepare(void *state) {
  ooc_state *st = state;
  if (st->status || st->rows == 0) return;
  if (fsync(st->fd[FILE_C]) != 0) fail(st, STAGE_FSYNC, FILE_C, errno);
  if (opt_io != IO_PAGE) {
    for (int f = 0; f < FILES; f++) posix_fadvise(st->fd[f], 0, 0, POSIX_FADV_DONTNEED);
    return;
  }
  for (long j = 0; j < st->panels && !st->status; j++)
    transfer(st, FILE_B, 0, st->bpanel, pad(8 * st->n * panel_cols(st, j)), j * st->panel_stride);
  for (long b = 0; b < st->blocks && !st->status; b++)
    transfer(st, FILE_A, 0, st->ablock, pad(8 * block_rows(st, b) * st->n), b * st->block_stride);
}

/* The schedule of the header, then the status all-gather: one superstep. */
static void repetition(void *state) {
  ooc_state *st = state;
  long n = st->n;
  memset(&st->counts, 0, sizeof st->counts);
  st->counting = 1;
  for (long j = 0; j < st->panels && st->rows > 0 && !st->status; j++) {
    long c = panel_cols(st, j);
    if (transfer(st, FILE_B, 0, st->bpanel, pad(8 * n * c), j * st->panel_stride)) break;
    for (long b = 0; b < st->blocks; b++) {
      long q = block_rows(st, b);
      if (transfer(st, FILE_A, 0, st->ablock, pad(8 * q * n), b * st->block_stride)) break;
      mm_dgemm(q, c, n, st->ablock, n, st->bpanel, c, 0.0, st->ctile, c);
      bspalg_work(2.0 * (double)q * (double)c * (double)n);
      if (transfer(st, FILE_C, 1, st->ctile, pad(8 * q * c),
                   (j * st->blocks + b) * st->tile_stride))
        break;
    }
  }
  st->counting = 0;
  put_status(st, 1, 0);
  bspalg_sync("put", "alltoall");
  end_if_failed(st);
}

/* C(row0 + i, j) read back from C.pid through the page cache (a descriptor of its own: O_DIRECT
 * takes no 8-byte reads) against the generator's sum; worst |error| / sum_k |a_ik b_kj|. */
static int check_entry(const ooc_state *st, int fd, long i, long j, double *worst) {
  long jp = j / st->w, b = i / st->r;
  long offset = (jp * st->blocks + b) * st->tile_stride +
                ((i % st->r) * panel_cols(st, jp) + j % st->w) * (long)sizeof(double);
  double got;
  if (pread(fd, &got, sizeof got, offset) != (ssize_t)sizeof got) return -1;
  double ref = 0.0, scale = 0.0;
  for (long k = 0; k < st->n; k++) {
    double t =
        mm_input(st->seed, MM_A, st->row0 + i, k, st->n) * mm_input(st->seed, MM_B, k, j, st->n);
    ref += t;
    scale += t < 0 ? -t : t;
  }
  double err = (got > ref ? got - ref : ref - got) / (scale > 0 ? scale : 1.0);
  if (!(err <= *worst)) *worst = err; /* NaN counts as the largest error */
  return 0;
}

/* Every process checks its part of C (all of it when small, else the corners of every tile and
 * 64 random entries) and its counted calls against the closed form; process 0 collects. */
static int check(void *state, bspalg_check_report *report) {
  ooc_state *st = state;
  long n = st->n;
  double worst = 0.0, unreadable = 0.0;
  io_counts expected;
  expected_counts(n, st->rows, st->w, st->r, opt_chunk, &expected);
  double miscounted = !same_classes(&expected.reads, &st->counts.reads) ||
                      !same_classes(&expected.writes, &st->counts.writes);
  if (st->rows > 0) {
    int fd = open(st->made->path[FILE_C], O_RDONLY);
    int bad = fd < 0;
    if (!bad && st->rows * n <= CHECK_ALL) {
      for (long i = 0; i < st->rows && !bad; i++)
        for (long j = 0; j < n && !bad; j++) bad = check_entry(st, fd, i, j, &worst) != 0;
    } else if (!bad) {
      for (long jp = 0; jp < st->panels && !bad; jp++)
        for (long b = 0; b < st->blocks && !bad; b++) {
          long i0 = b * st->r, i1 = i0 + block_rows(st, b) - 1;
          long j0 = jp * st->w, j1 = j0 + panel_cols(st, jp) - 1;
          bad = check_entry(st, fd, i0, j0, &worst) || check_entry(st, fd, i0, j1, &worst) ||
                check_entry(st, fd, i1, j0, &worst) || check_entry(st, fd, i1, j1, &worst);
        }
      uint64_t x = st->seed * 0x9E3779B97F4A7C15ull + (uint64_t)st->pid + 1;
      for (int k = 0; k < 64 && !bad; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        bad = check_entry(st, fd, (long)((x >> 33) % (uint64_t)st->rows),
                          (long)((x >> 13) % (uint64_t)n), &worst);
      }
    }
    if (fd >= 0) close(fd);
    unreadable = bad;
  }
  double mine[3] = {worst, unreadable, miscounted};
  bsp_put(0, mine, st->exchange, 3 * st->pid * (bsp_size_t)sizeof(double), sizeof mine);
  bsp_sync();
  if (st->pid != 0) return 1;
  double tol = 1e-12 * (double)n, max_err = 0.0;
  int where = 0;
  for (int t = 0; t < st->nprocs; t++) {
    const double *e = &st->exchange[3 * t];
    if (e[1] != 0) {
      snprintf(report->wrong, sizeof report->wrong, ": process %d could not read back C.%d", t, t);
      return -1;
    }
    if (e[2] != 0) {
      snprintf(report->wrong, sizeof report->wrong,
               ": process %d made other read or write calls than the closed form's (README.md)", t);
      return -1;
    }
    if (!(e[0] <= max_err)) max_err = e[0], where = t;
  }
  snprintf(report->note, sizeof report->note,
           "C read back from the files (all of it when a process holds at most %d entries, else "
           "the corners of every tile and 64 random entries) against the inputs: max |error| / "
           "sum |a_ik b_kj| %.3g, tolerance 1e-12 n; the calls match the closed form",
           CHECK_ALL, max_err);
  if (max_err <= tol) return 1;
  snprintf(report->wrong, sizeof report->wrong,
           ": n = %ld, p = %d: |error| / sum |a_ik b_kj| = %.6g on process %d exceeds 1e-12 n = "
           "%.3g",
           n, st->nprocs, max_err, where, tol);
  return -1;
}

/* f: the in-memory kernel of one step, an A block times a B panel, without the disk. */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  const ooc_state *st = state;
  long q = st->rows < st->r ? st->rows : st->r;
  if (q <= 0) return 0.0;
  if (!every_process)
    snprintf(note, note_size,
             "cblas_dgemm of one A block by one B panel in memory (%ld x %ld times %ld x %ld, no "
             "disk), median per flop",
             q, st->n, st->n, st->w);
  return mm_measure_f(q, st->w, st->n);
}

/* {"read_calls": .., "read_bytes": .., "write_calls": .., "write_bytes": ..[, "reads": [[bytes,
 * calls], ...], "writes": [...]]} */
static int io_json(char *out, size_t size, const io_counts *c, int with_classes) {
  int len = snprintf(out, size,
                     "{\"read_calls\": %ld, \"read_bytes\": %ld, \"write_calls\": %ld, "
                     "\"write_bytes\": %ld",
                     total_calls(&c->reads), total_bytes(&c->reads), total_calls(&c->writes),
                     total_bytes(&c->writes));
  for (int kind = 0; with_classes && kind < 2; kind++) {
    const io_classes *cl = kind ? &c->writes : &c->reads;
    len += snprintf(out + len, size - (size_t)len, ", \"%s\": [", kind ? "writes" : "reads");
    for (int k = 0; k < cl->count; k++)
      len += snprintf(out + len, size - (size_t)len, "%s[%ld,%ld]", k ? "," : "", cl->cls[k].bytes,
                      cl->cls[k].calls);
    len += snprintf(out + len, size - (size_t)len, "]");
  }
  return len + snprintf(out + len, size - (size_t)len, "}");
}

/* Process 0's counted calls (io_p0) and the closed form's of the process with the most rows
 * (io_max: its counts are the largest of every process, as every count grows with the rows).
 * The call sizes ("reads", "writes") are left out, io_p0's first, where the skeleton's buffer
 * cannot hold them ("io_classes": false then). */
static void params(void *state, char *json, size_t json_size) {
  const ooc_state *st = state;
  io_counts most;
  expected_counts(st->n, (st->n + st->nprocs - 1) / st->nprocs, st->w, st->r, opt_chunk, &most);
  const char *method = opt_io == IO_PAGE ? "buffered" : st->direct ? "O_DIRECT" : "fadvise+fsync";
  char text[2048], p0[900], pmax[900];
  for (int detail = 2; detail >= 0; detail--) {
    io_json(p0, sizeof p0, &st->counts, detail >= 2);
    io_json(pmax, sizeof pmax, &most, detail >= 1);
    int len = snprintf(text, sizeof text,
                       "{\"n\": %ld, \"memory_bytes\": %ld, \"io\": \"%s\", \"method\": \"%s\", "
                       "\"chunk_bytes\": %ld, \"panel_cols\": %ld, \"block_rows\": %ld, "
                       "\"io_p0\": %s, \"io_max\": %s%s}",
                       st->n, opt_memory, opt_io == IO_PAGE ? "page" : "direct", method, opt_chunk,
                       st->w, st->r, p0, pmax, detail == 2 ? "" : ", \"io_classes\": false");
    if ((size_t)len < json_size || detail == 0) break;
  }
  snprintf(json, json_size, "%s", text);
}

static void teardown(void *state) { close_and_remove(state); }

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm = "oocmm", .work_unit = "flop", .help = help, .option = option,
    .before_init = before_init, .setup = setup, .prepare = prepare, .repetition = repetition,
    .check = check, .measure_f = measure_f, .params = params, .teardown = teardown};
// clang-format on

BSPALG_MAIN(driver)
