/*
 * checkpoint.c - checkpoints at superstep boundaries and the restart from them
 * (docs/checkpoint.md).
 *
 * At the end of a superstep no message is in flight, so the processes' states after a sync
 * form a consistent cut: each process writes its protected memory, registrations, tag size
 * and delivered messages to a file of its own; process 0 completes the generation with a
 * manifest once every file is on disk, and only then deletes generations older than the two
 * newest complete ones. A restart takes the newest generation whose manifest exists and
 * whose files all match it (size and CRC-32), agreed by a vote over the processes.
 *
 * DIR/superstep-000000000012/process-0.ckpt ... process-<p-1>.ckpt, MANIFEST
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bspkit.h"
#include "core/bsmp.h"
#include "core/buffers.h"
#include "core/checkpoint.h"
#include "core/checks.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/records.h"
#include "core/registrations.h"
#include "core/superstep.h"

/* ---- configuration (set by bsprun: --checkpoint-dir, --checkpoint-every, --checkpoint-mtbf,
 * --restart) ---- */

static struct {
  const char *dir;        /* NULL: checkpoints off */
  double every;           /* seconds between checkpoints; 0: at every bspk_checkpoint call */
  int every_given;        /* BSPKIT_CHECKPOINT_EVERY is set */
  int restart;            /* the run is a restart: bspk_checkpoint_resume restores */
  const char *every_text; /* BSPKIT_CHECKPOINT_EVERY as given, when it is not a number */
  /* BSPKIT_CHECKPOINT_MTBF: the mean time between failures (seconds; 0: not given), from
   * which the interval is chosen once the first checkpoint's cost is measured. */
  double mtbf;
  const char *mtbf_text; /* as given, when it is not a number > 0 */
  /* BSPKIT_CHECKPOINT_BACKGROUND=0: each process writes its file at the checkpoint's sync
   * (the default, 1: a writer thread writes a copy while the program goes on). */
  int background;
  const char *background_text; /* as given, when it is neither 0 nor 1 */
  /* Fault injection for tests of a program's restart (BSPKIT_KILL_AT=PID:SUPERSTEP): process
   * PID ends itself with SIGKILL in the first bspk_checkpoint at or after SUPERSTEP. */
  int kill_pid;
  long kill_superstep;
  const char *kill_text; /* BSPKIT_KILL_AT as given, when it does not read PID:SUPERSTEP */
} config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* A number of decimal digits alone (no sign, no blank), at most max; -1 when s does not
 * start with one or it is larger. *end: where it ends. */
static long read_digits(const char *s, const char **end, long max) {
  *end = s;
  if (*s < '0' || *s > '9') return -1;
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  *end = e;
  return errno == ERANGE || v > max ? -1 : v;
}

static void read_config(void) {
  const char *dir = getenv("BSPKIT_CHECKPOINT_DIR");
  config.dir = dir && *dir ? dir : NULL;
  const char *every = getenv("BSPKIT_CHECKPOINT_EVERY");
  config.every_given = every && *every;
  if (every && *every) {
    char *end;
    config.every = strtod(every, &end);
    /* NaN and infinity read as numbers too, but are no interval (NaN: never due). */
    if (*end != '\0' || !(config.every >= 0 && config.every <= DBL_MAX)) config.every_text = every;
  }
  const char *mtbf = getenv("BSPKIT_CHECKPOINT_MTBF");
  if (mtbf && *mtbf) {
    char *end;
    config.mtbf = strtod(mtbf, &end);
    if (*end != '\0' || !(config.mtbf > 0 && config.mtbf <= DBL_MAX)) config.mtbf_text = mtbf;
  }
  const char *background = getenv("BSPKIT_CHECKPOINT_BACKGROUND");
  config.background = 1;
  if (background && *background) {
    if (strcmp(background, "0") == 0) config.background = 0;
    else if (strcmp(background, "1") != 0) config.background_text = background;
  }
  config.kill_pid = -1;
  const char *kill_at = getenv("BSPKIT_KILL_AT");
  if (kill_at && *kill_at) {
    const char *at;
    long pid = read_digits(kill_at, &at, INT_MAX), superstep = -1;
    if (pid >= 0 && *at == ':') superstep = read_digits(at + 1, &at, LONG_MAX);
    if (superstep < 0 || *at != '\0') config.kill_text = kill_at;
    else {
      config.kill_pid = (int)pid;
      config.kill_superstep = superstep;
    }
  }
  const char *restart = getenv("BSPKIT_RESTART");
  config.restart = restart && strcmp(restart, "1") == 0;
}

static void need_config(const char *call) {
  pthread_once(&config_once, read_config);
  if (config.every_text)
    bspk_fatal(call, "BSPKIT_CHECKPOINT_EVERY='%s' is not a number of seconds >= 0",
               config.every_text);
  if (config.mtbf_text)
    bspk_fatal(call, "BSPKIT_CHECKPOINT_MTBF='%s' is not a number of seconds > 0",
               config.mtbf_text);
  if (config.mtbf > 0 && config.every_given)
    bspk_fatal(call,
               "BSPKIT_CHECKPOINT_EVERY and BSPKIT_CHECKPOINT_MTBF are both set: give the interval "
               "or the mean time between failures it is chosen from, not both");
  if (config.background_text)
    bspk_fatal(call, "BSPKIT_CHECKPOINT_BACKGROUND='%s' is not 0 or 1", config.background_text);
  if (config.kill_text)
    bspk_fatal(call, "BSPKIT_KILL_AT='%s' is not PID:SUPERSTEP (two numbers >= 0)",
               config.kill_text);
  if (config.restart && !config.dir)
    bspk_fatal(call,
               "BSPKIT_RESTART=1 but BSPKIT_CHECKPOINT_DIR is not set: restart with "
               "bsprun --restart DIR");
}

/* snprintf for paths (and the messages holding them): a path too long for the buffer is an
 * error, never a file of another name. */
static void path_printf(char *buf, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void path_printf(char *buf, size_t size, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buf, size, format, args);
  va_end(args);
  if (n < 0 || (size_t)n >= size)
    bspk_fatal_on("bspk_checkpoint", -1,
                  "a path in the checkpoint directory is too long: %.200s...", buf);
}

/* ---- per-process state --------------------------------------------------------------- */

typedef struct protected_area {
  char *addr;
  size_t nbytes;
  int scratch; /* bspk_checkpoint_scratch: dead at checkpoints, its bytes not saved */
} protected_area;

struct bspk_checkpoint {
  protected_area *areas;
  int nareas;
  size_t areas_cap;
  double last_save;  /* process 0: when the last checkpoint ended (or the section began) */
  double interval;   /* process 0, with BSPKIT_CHECKPOINT_MTBF: chosen at the first checkpoint */
  int cost_measured; /* with BSPKIT_CHECKPOINT_MTBF: the first checkpoint was timed */
  /* In the background: the generation whose files are being written, or that are written
   * but not yet completed by process 0 (-1: none; the same on every process), the writer,
   * and the staging copy of the protected memory it writes from. */
  long pending;
  struct checkpoint_writer *writer;
  char *staging;
  size_t staging_cap;
  int resumed;     /* bspk_checkpoint_resume restored a checkpoint */
  int dir_checked; /* process 0: the directory was checked for an earlier run's files */
  char *messages;  /* the restored messages' tags and payloads */
};

static struct bspk_checkpoint *state_of(bspk_proc *self) {
  if (!self->checkpoint) {
    self->checkpoint =
        bspk_xmalloc(self, sizeof *self->checkpoint, "bspk_checkpoint", "the checkpoint state");
    memset(self->checkpoint, 0, sizeof *self->checkpoint);
    self->checkpoint->last_save = bspk_now();
    self->checkpoint->pending = -1;
  }
  return self->checkpoint;
}

/* ---- protecting memory --------------------------------------------------------------- */

BSPK_API void bspk_checkpoint_protect(void *addr, bsp_size_t nbytes) {
  const char *call = "bspk_checkpoint_protect";
  bspk_proc *self = bspk_enter(call);
  if (BSPK_CHECK(nbytes < 0)) bspk_fatal(call, "negative size %ld", (long)nbytes);
  if (BSPK_CHECK(addr == NULL && nbytes > 0))
    bspk_fatal(call, "the address is NULL, but %ld byte(s) are to be protected", (long)nbytes);
  struct bspk_checkpoint *ck = state_of(self);
  uintptr_t lo = (uintptr_t)addr, hi = lo + (uintptr_t)nbytes;
  for (int i = 0; i < ck->nareas; i++) {
    uintptr_t a = (uintptr_t)ck->areas[i].addr, b = a + ck->areas[i].nbytes;
    if ((lo < b && a < hi) || (a == lo && addr != NULL))
      bspk_fatal(call,
                 "the area at %p (%ld bytes) overlaps protected area %d at %p (%zu bytes): "
                 "protect each byte once",
                 addr, (long)nbytes, i, (void *)ck->areas[i].addr, ck->areas[i].nbytes);
  }
  BSPK_GROW(self, ck->areas, ck->areas_cap, ck->nareas + 1, 8, call, "the protected areas");
  ck->areas[ck->nareas++] = (protected_area){addr, (size_t)nbytes, 0};
}

/* The protected area that starts at addr; fatal when there is none. */
static int area_starting_at(const struct bspk_checkpoint *ck, const void *addr, const char *call) {
  for (int i = 0; i < ck->nareas; i++)
    if (ck->areas[i].addr == addr) return i;
  bspk_fatal(call, "%p is not the start of a protected area (bspk_checkpoint_protect)", addr);
}

BSPK_API void bspk_checkpoint_scratch(void *addr, int scratch) {
  const char *call = "bspk_checkpoint_scratch";
  bspk_proc *self = bspk_enter(call);
  struct bspk_checkpoint *ck = state_of(self);
  ck->areas[area_starting_at(ck, addr, call)].scratch = scratch != 0;
}

BSPK_API void bspk_checkpoint_unprotect(void *addr) {
  const char *call = "bspk_checkpoint_unprotect";
  bspk_proc *self = bspk_enter(call);
  struct bspk_checkpoint *ck = state_of(self);
  int i = area_starting_at(ck, addr, call);
  memmove(&ck->areas[i], &ck->areas[i + 1], (size_t)(ck->nareas - i - 1) * sizeof *ck->areas);
  ck->nareas--;
}

/* The protected area holding addr (a size-0 registration may sit at an area's end), or -1. */
static int area_of(const struct bspk_checkpoint *ck, const char *addr) {
  for (int i = 0; i < ck->nareas; i++)
    if (addr >= ck->areas[i].addr && addr <= ck->areas[i].addr + ck->areas[i].nbytes) return i;
  return -1;
}

/* Freed memory of a size that malloc maps by itself (128 KiB and more) is unmapped at once:
 * reading it would crash, so each area's pages are checked first (smaller areas stay in the
 * heap, where a free cannot be told). */
static void check_areas_mapped(bspk_proc *self, const char *call) {
  const struct bspk_checkpoint *ck = self->checkpoint;
  long page = sysconf(_SC_PAGESIZE);
  unsigned char vec[4096]; /* on the stack: thread-local it would grow libbsp's static TLS */
  for (int i = 0; ck && i < ck->nareas; i++) {
    uintptr_t lo = (uintptr_t)ck->areas[i].addr & ~(uintptr_t)(page - 1);
    uintptr_t hi = (uintptr_t)ck->areas[i].addr + ck->areas[i].nbytes;
    for (uintptr_t at = lo; at < hi; at += sizeof vec * (uintptr_t)page) {
      size_t len = hi - at < sizeof vec * (uintptr_t)page ? hi - at : sizeof vec * (uintptr_t)page;
      if (mincore((void *)at, len, vec) != 0 && errno == ENOMEM)
        bspk_fatal(call,
                   "protected area %d at %p (%zu bytes) is no longer mapped: it was freed while "
                   "protected (call bspk_checkpoint_unprotect before freeing it)",
                   i, (void *)ck->areas[i].addr, ck->areas[i].nbytes);
    }
  }
}

/* ---- the file of one process --------------------------------------------------------- */

#define CHECKPOINT_MAGIC "BSPKCKP1"
typedef struct file_header {
  char magic[8];
  uint32_t pid, nprocs;
  int64_t superstep;
  uint64_t meta_bytes, data_bytes; /* the payload after the header: metadata, then the areas */
  uint32_t meta_crc, data_crc;
  uint32_t reserved[3];
  uint32_t header_crc; /* of the bytes before it */
} file_header;
_Static_assert(sizeof(file_header) == 64, "the header is 64 bytes on every build");

/* Metadata: nareas; per area its size and kind; tag sizes; registrations; messages. The data
 * after it: the areas that are not scratch, in order. */
enum { AREA_SAVED = 0, AREA_SCRATCH = 1 };
typedef struct saved_registration {
  int32_t area; /* -1: the NULL address */
  int32_t size;
  uint64_t offset;
} saved_registration;

typedef struct meta_writer {
  char *data;
  size_t len, cap;
} meta_writer;

static void meta_put(bspk_proc *self, meta_writer *w, const void *p, size_t n) {
  BSPK_GROW(self, w->data, w->cap, w->len + n, 4096, "bspk_checkpoint", "the checkpoint");
  memcpy(w->data + w->len, p, n);
  w->len += n;
}

static uint32_t crc_of(uint32_t crc, const void *p, size_t n) {
  return (uint32_t)crc32_z(crc, (const Bytef *)p, n);
}

/* The active registrations in the order they were made (newest generation last). */
static int compare_generation(const void *a, const void *b, void *slots) {
  const bspk_slot *s = slots;
  uint64_t x = s[*(const int *)a].generation, y = s[*(const int *)b].generation;
  return (x > y) - (x < y);
}
static int active_slots_in_order(bspk_proc *self, int **order) {
  int n = 0;
  *order = bspk_xmalloc(self, (size_t)(self->nslots + 1) * sizeof **order, "bspk_checkpoint",
                        "the registrations");
  for (int s = 0; s < self->nslots; s++)
    if (self->slots[s].active) (*order)[n++] = s;
  qsort_r(*order, (size_t)n, sizeof **order, compare_generation, self->slots);
  return n;
}

static void build_meta(bspk_proc *self, meta_writer *w) {
  const struct bspk_checkpoint *ck = self->checkpoint;
  uint32_t nareas = (uint32_t)(ck ? ck->nareas : 0);
  meta_put(self, w, &nareas, sizeof nareas);
  for (uint32_t i = 0; i < nareas; i++) {
    uint64_t area[2] = {ck->areas[i].nbytes, ck->areas[i].scratch ? AREA_SCRATCH : AREA_SAVED};
    meta_put(self, w, area, sizeof area);
  }
  int32_t tags[2] = {self->tagsize, self->queue_tagsize};
  meta_put(self, w, tags, sizeof tags);

  int *order;
  uint32_t nregs = (uint32_t)active_slots_in_order(self, &order);
  meta_put(self, w, &nregs, sizeof nregs);
  for (uint32_t r = 0; r < nregs; r++) {
    const bspk_slot *slot = &self->slots[order[r]];
    saved_registration reg = {-1, slot->size, 0};
    if (slot->addr != NULL) {
      reg.area = ck ? area_of(ck, slot->addr) : -1;
      if (reg.area < 0) {
        free(order);
        bspk_fatal("bspk_checkpoint",
                   "the registered area at %p (%d bytes) is not in protected memory: protect "
                   "it with bspk_checkpoint_protect, so that a restart can register it again",
                   (void *)slot->addr, slot->size);
      }
      reg.offset = (uint64_t)(slot->addr - ck->areas[reg.area].addr);
    }
    meta_put(self, w, &reg, sizeof reg);
  }
  free(order);

  uint32_t nmessages = (uint32_t)(self->queue_len - self->queue_head);
  meta_put(self, w, &nmessages, sizeof nmessages);
  for (int m = self->queue_head; m < self->queue_len; m++) {
    const bspk_message *msg = &self->queue[m];
    int32_t nbytes = msg->nbytes;
    meta_put(self, w, &nbytes, sizeof nbytes);
    meta_put(self, w, msg->tag, (size_t)self->queue_tagsize);
    meta_put(self, w, msg->payload, (size_t)msg->nbytes);
  }
}

/* The piece of an area written (and summed) at a time. */
#define WRITE_CHUNK ((size_t)8 << 20)

/* write(2) until done; 0 or an errno. */
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n < (1u << 30) ? n : (1u << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n < (1u << 30) ? n : (1u << 30));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (r == 0) return -1; /* the file ends early */
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int fsync_path(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno;
  int err = fsync(fd) == 0 ? 0 : errno;
  close(fd);
  return err;
}

static void generation_path(char *buf, size_t size, long superstep) {
  path_printf(buf, size, "%s/superstep-%012ld", config.dir, superstep);
}

/* What one process writes for one generation: its file's header fields, metadata and data
 * pieces (the protected areas themselves in the foreground, the staging copy in the
 * background), and for process 0 the bookkeeping of the generations before it. Everything
 * the writer thread needs, so that it never reads the process' state. */
typedef struct data_piece {
  const char *addr;
  size_t len;
} data_piece;

typedef struct write_job {
  int pid, nprocs;
  long superstep;     /* the generation whose file this process writes; -1: none */
  char gen[PATH_MAX]; /* its directory */
  meta_writer meta;   /* owned */
  data_piece *pieces; /* owned (the bytes are not) */
  int npieces;
  long complete_superstep; /* process 0: complete this generation first; -1: none */
  int prune;               /* process 0: delete what the two newest complete ones make unneeded */
} write_job;

/* Writes the job's file: a temporary name, fsync, rename. Returns 0, or an errno with what
 * failed in `what`. */
static int write_process_file(const write_job *job, char *what, size_t what_size) {
  file_header h = {.pid = (uint32_t)job->pid,
                   .nprocs = (uint32_t)job->nprocs,
                   .superstep = job->superstep,
                   .meta_bytes = job->meta.len};
  memcpy(h.magic, CHECKPOINT_MAGIC, 8);
  h.meta_crc = crc_of(0, job->meta.data, job->meta.len);
  for (int i = 0; i < job->npieces; i++) h.data_bytes += job->pieces[i].len;

  /* The paths fit: save() checked the longest (the temporary name) before the job began. */
  char tmp[PATH_MAX + 32], final[PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s/.process-%d.ckpt.tmp", job->gen, job->pid);
  snprintf(final, sizeof final, "%s/process-%d.ckpt", job->gen, job->pid);
  int err = 0;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    err = errno;
    snprintf(what, what_size, "cannot create %s", tmp);
  } else {
    /* The header last (its data CRC is known then); the data in chunks, each one's CRC
     * taken while it is in the cache and its write-back started at once, so that the disk
     * works while the next chunk is summed (measured: 0.66 of dd's bandwidth without). */
    err = write_all(fd, (const char *)&h, sizeof h);
    if (!err) err = write_all(fd, job->meta.data, job->meta.len);
    off_t at = (off_t)(sizeof h + job->meta.len);
    uint32_t crc = 0;
    for (int i = 0; !err && i < job->npieces; i++)
      for (size_t done = 0; !err && done < job->pieces[i].len; done += WRITE_CHUNK) {
        const data_piece *piece = &job->pieces[i];
        size_t n = piece->len - done < WRITE_CHUNK ? piece->len - done : WRITE_CHUNK;
        crc = crc_of(crc, piece->addr + done, n);
        err = write_all(fd, piece->addr + done, n);
        if (!err) sync_file_range(fd, at, (off_t)n, SYNC_FILE_RANGE_WRITE);
        at += (off_t)n;
      }
    h.data_crc = crc;
    h.header_crc = crc_of(0, &h, offsetof(file_header, header_crc));
    if (!err && pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) err = errno ? errno : EIO;
    if (err) snprintf(what, what_size, "cannot write %s", tmp);
    else if (fsync(fd) != 0) {
      err = errno;
      snprintf(what, what_size, "cannot fsync %s", tmp);
    }
    if (close(fd) != 0 && !err) {
      err = errno;
      snprintf(what, what_size, "cannot close %s", tmp);
    }
    if (!err && rename(tmp, final) != 0) {
      err = errno;
      snprintf(what, what_size, "cannot rename %s", tmp);
    }
    if (err) unlink(tmp); /* a full disk keeps no half-written file */
  }
  return err;
}

/* ---- generations --------------------------------------------------------------------- */

typedef struct generation {
  long superstep;
  int complete; /* has a MANIFEST */
} generation;

static int compare_newest_first(const void *a, const void *b) {
  long x = ((const generation *)a)->superstep, y = ((const generation *)b)->superstep;
  return (x < y) - (x > y);
}

/* The generations in the checkpoint directory, newest first (malloc'd; *n of them); 0, or
 * an errno (none there: 0 with *n = 0). Any thread may call it. */
static int scan_generations(generation **out, int *n) {
  *n = 0;
  *out = NULL;
  DIR *d = opendir(config.dir);
  if (!d) return errno == ENOENT ? 0 : errno;
  generation *list = NULL;
  int cap = 0, err = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    long s;
    char extra;
    if (strlen(e->d_name) != 22 || sscanf(e->d_name, "superstep-%ld%c", &s, &extra) != 1) continue;
    if (*n == cap) {
      generation *more = realloc(list, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *list);
      if (!more) {
        err = ENOMEM;
        break;
      }
      list = more;
    }
    char manifest[PATH_MAX];
    int len = snprintf(manifest, sizeof manifest, "%s/%s/MANIFEST", config.dir, e->d_name);
    list[(*n)++] = (generation){s, len < (int)sizeof manifest && access(manifest, F_OK) == 0};
  }
  closedir(d);
  if (err) {
    free(list);
    *n = 0;
    return err;
  }
  if (*n > 1) qsort(list, (size_t)*n, sizeof *list, compare_newest_first);
  *out = list;
  return 0;
}

/* scan_generations, where a failure ends the program. */
static generation *list_generations(bspk_proc *self, const char *call, int *n) {
  (void)self;
  generation *list;
  int err = scan_generations(&list, n);
  if (err)
    bspk_fatal(call, "cannot read the checkpoint directory %s: %s", config.dir, strerror(err));
  return list;
}

static void remove_generation(long superstep) {
  char gen[PATH_MAX];
  snprintf(gen, sizeof gen, "%s/superstep-%012ld", config.dir, superstep);
  DIR *d = opendir(gen);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char path[PATH_MAX];
      if (snprintf(path, sizeof path, "%s/%s", gen, e->d_name) < (int)sizeof path) unlink(path);
    }
    closedir(d);
  }
  rmdir(gen);
}

static void warn(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof line, format, args);
  va_end(args);
  fprintf(stderr, "bspkit: warning: %s\n", line);
  fflush(stderr);
}

/* Whether h is an intact header of process pid's file (its own CRC checks out). */
static int header_intact(const file_header *h, int pid) {
  return memcmp(h->magic, CHECKPOINT_MAGIC, 8) == 0 &&
         h->header_crc == crc_of(0, h, offsetof(file_header, header_crc)) &&
         h->pid == (uint32_t)pid;
}

/* Reads and checks process q's header in gen; 0 when it is a whole file of this generation. */
static int read_header(const char *gen, int q, file_header *h, off_t *file_size) {
  char path[PATH_MAX];
  path_printf(path, sizeof path, "%s/process-%d.ckpt", gen, q);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  int bad = fstat(fd, &st) != 0 || read_all(fd, (char *)h, sizeof *h) != 0;
  close(fd);
  if (bad || !header_intact(h, q) ||
      (off_t)(sizeof *h + h->meta_bytes + h->data_bytes) != st.st_size)
    return -1;
  *file_size = st.st_size;
  return 0;
}

/* Writes text to path through a temporary file, fsync and rename. */
static int write_text_file(const char *path, const char *text) {
  char tmp[PATH_MAX];
  path_printf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = write_all(fd, text, strlen(text));
  if (!err && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) unlink(tmp);
  return err;
}

/* Deletes the generations that the two newest complete ones make unneeded: those older than
 * the older of the two (a newer, incomplete one is being written, or is a restart's). */
static void prune_generations(void) {
  int n;
  generation *list;
  if (scan_generations(&list, &n) != 0) return; /* kept: the next completion tries again */
  int complete = 0;
  long keep_from = LONG_MIN;
  for (int i = 0; i < n; i++)
    if (list[i].complete && ++complete == 2) keep_from = list[i].superstep;
  for (int i = 0; i < n && keep_from != LONG_MIN; i++)
    if (list[i].superstep < keep_from) remove_generation(list[i].superstep);
  free(list);
}

/* Process 0, once every process wrote its file of the generation at `superstep` (or failed
 * to): the manifest, which makes it complete; then, when `prune`, the deletion of what it
 * makes unneeded. Any thread may call it (the writer does, in the background). */
static void complete_generation(int nprocs, long superstep, int prune) {
  char gen[PATH_MAX];
  snprintf(gen, sizeof gen, "%s/superstep-%012ld", config.dir, superstep);
  size_t cap = 128 + (size_t)nprocs * 80, len = 0;
  char *text = malloc(cap);
  if (!text) {
    warn("the checkpoint at superstep %ld in %s is not complete: no memory for its manifest",
         superstep, config.dir);
    return;
  }
  len += (size_t)snprintf(text + len, cap - len, "bspkit-checkpoint 1\nsuperstep %ld\nnprocs %d\n",
                          superstep, nprocs);
  fsync_path(gen); /* the processes' renames */
  for (int q = 0; q < nprocs; q++) {
    file_header h;
    off_t size;
    if (read_header(gen, q, &h, &size) != 0 || h.superstep != superstep) {
      warn(
          "the checkpoint at superstep %ld in %s is incomplete (process %d's file is missing "
          "or damaged): a restart uses the one before it",
          superstep, config.dir, q);
      free(text);
      return;
    }
    len += (size_t)snprintf(text + len, cap - len,
                            "process %d bytes %lld meta_crc32 %08x data_crc32 %08x\n", q,
                            (long long)size, h.meta_crc, h.data_crc);
  }
  char manifest[PATH_MAX + 16]; /* gen fits in PATH_MAX */
  snprintf(manifest, sizeof manifest, "%s/MANIFEST", gen);
  int err = write_text_file(manifest, text);
  free(text);
  if (!err) err = fsync_path(gen);
  if (!err) err = fsync_path(config.dir);
  if (err) {
    unlink(manifest);
    warn(
        "the checkpoint at superstep %ld in %s is not complete: cannot write its manifest: %s; "
        "a restart uses the one before it",
        superstep, config.dir, strerror(err));
    return;
  }
  if (prune) prune_generations();
}

/* ---- the writer: one thread per process that writes its files in the background ------- */

/* One job at a time (at most one generation in flight): busy from the submission until the
 * job is done, which the process reads at its checkpoint calls and waits for when it must. */
typedef struct checkpoint_writer {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int busy, quit;
  write_job job;
} checkpoint_writer;

/* Runs a job: process 0's bookkeeping first, then the file. Warnings say what failed; the
 * run goes on. */
static void run_job(write_job *job) {
  if (job->complete_superstep >= 0) complete_generation(job->nprocs, job->complete_superstep, 1);
  else if (job->prune) prune_generations();
  if (job->superstep >= 0) {
    char what[PATH_MAX + 64] = "";
    int err = 0;
    if (mkdir(job->gen, 0755) != 0 && errno != EEXIST) {
      err = errno;
      snprintf(what, sizeof what, "cannot create %s", job->gen);
    }
    if (!err) err = write_process_file(job, what, sizeof what);
    if (err)
      warn(
          "process %d could not save its part of the checkpoint at superstep %ld: %s: %s; the "
          "run goes on",
          job->pid, job->superstep, what, strerror(err));
  }
  free(job->meta.data);
  free(job->pieces);
  job->meta = (meta_writer){0};
  job->pieces = NULL;
}

static void *writer_main(void *arg) {
  checkpoint_writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->busy && !w->quit) pthread_cond_wait(&w->cond, &w->lock);
    if (!w->busy) break; /* quit, nothing left */
    pthread_mutex_unlock(&w->lock);
    run_job(&w->job);
    pthread_mutex_lock(&w->lock);
    w->busy = 0;
    pthread_cond_broadcast(&w->cond);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* Whether the writer is still at its job (a generation's file, or process 0's bookkeeping). */
static int writer_busy(checkpoint_writer *w) {
  if (!w) return 0;
  pthread_mutex_lock(&w->lock);
  int busy = w->busy;
  pthread_mutex_unlock(&w->lock);
  return busy;
}

static void writer_wait(checkpoint_writer *w) {
  if (!w) return;
  pthread_mutex_lock(&w->lock);
  while (w->busy) pthread_cond_wait(&w->cond, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

/* The process' writer, started at its first background job; NULL when no thread can be
 * made (the job then runs in the foreground). */
static checkpoint_writer *writer_of(struct bspk_checkpoint *ck);

/* Hands the (idle) writer a job; the job's buffers are the writer's until it is done. */
static void writer_submit(checkpoint_writer *w, const write_job *job) {
  pthread_mutex_lock(&w->lock);
  w->job = *job;
  w->busy = 1;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static void writer_stop(checkpoint_writer *w) {
  if (!w) return;
  pthread_mutex_lock(&w->lock);
  w->quit = 1;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->cond);
  free(w);
}

/* Process 0 before the first checkpoint of a run that is not a restart: an earlier run's
 * checkpoints would be mixed with this one's (and the older ones deleted). Generations
 * without a manifest are what a run left that ended before it completed any (killed, or
 * ended by an error in its first checkpoint): no restart can use them, so they are removed
 * instead of refusing the directory, which would leave neither a fresh run nor a restart. */
static void check_fresh_directory(bspk_proc *self) {
  int n;
  generation *list = list_generations(self, "bspk_checkpoint", &n);
  long newest = -1;
  for (int i = 0; i < n && newest < 0; i++)
    if (list[i].complete) newest = list[i].superstep;
  if (newest >= 0) {
    free(list);
    bspk_fatal("bspk_checkpoint",
               "the checkpoint directory %s holds the checkpoints of an earlier run (the newest "
               "at superstep %ld): restart from them with bsprun --restart %s, or give an "
               "empty directory",
               config.dir, newest, config.dir);
  }
  for (int i = 0; i < n; i++) {
    warn(
        "removed the incomplete checkpoint at superstep %ld in %s, an earlier run's (it has no "
        "manifest: no restart can use it)",
        list[i].superstep, config.dir);
    remove_generation(list[i].superstep);
  }
  free(list);
}

/* Young's first-order optimum interval between checkpoints, sqrt(2 C M), for a checkpoint
 * that costs C seconds and a mean time between failures of M seconds (J. W. Young, "A first
 * order approximation to the optimum checkpoint interval", CACM 17(9), 1974; J. T. Daly, "A
 * higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3),
 * 2006, eq. (6), its first-order case; neither is among the project's seeds). Newton's
 * method from above, so that the library needs no libm. */
double bspk_checkpoint_young_interval(double cost, double mtbf) {
  double x = 2.0 * cost * mtbf;
  if (!(x > 0)) return 0;
  double r = x > 1 ? x : 1; /* >= sqrt(x): the iteration falls to it */
  for (int i = 0; i < 2100; i++) {
    double next = 0.5 * (r + x / r);
    if (!(next < r)) break;
    r = next;
  }
  return r;
}

/* Process 0, once the first checkpoint took `cost` seconds: the interval, said on one line. */
static void choose_interval(struct bspk_checkpoint *ck, double cost) {
  ck->interval = bspk_checkpoint_young_interval(cost, config.mtbf);
  fprintf(stderr,
          "bspkit: checkpoint interval %.6g s = sqrt(2 C MTBF), with C = %.6g s (the first "
          "checkpoint's time, measured) and MTBF = %.6g s (BSPKIT_CHECKPOINT_MTBF)\n",
          ck->interval, cost, config.mtbf);
  fflush(stderr);
}

static checkpoint_writer *writer_of(struct bspk_checkpoint *ck) {
  if (ck->writer) return ck->writer;
  checkpoint_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, NULL);
  /* Signals are the program's threads' business, not the writer's. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = pthread_create(&w->thread, NULL, writer_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
    return NULL;
  }
  return ck->writer = w;
}

/* The job of this process' file of the current generation, its pieces the protected areas
 * that are not scratch (the caller copies them, for the background). */
static void make_job(bspk_proc *self, write_job *job) {
  const struct bspk_checkpoint *ck = self->checkpoint;
  *job = (write_job){.pid = self->pid,
                     .nprocs = self->nprocs,
                     .superstep = self->superstep,
                     .complete_superstep = -1};
  generation_path(job->gen, sizeof job->gen, self->superstep);
  char longest[PATH_MAX]; /* the writer's paths are shorter: none is cut */
  path_printf(longest, sizeof longest, "%s/.process-%d.ckpt.tmp", job->gen, self->pid);
  build_meta(self, &job->meta);
  job->pieces = bspk_xmalloc(self, (size_t)(ck->nareas + 1) * sizeof *job->pieces,
                             "bspk_checkpoint", "the checkpoint");
  for (int i = 0; i < ck->nareas; i++)
    if (!ck->areas[i].scratch && ck->areas[i].nbytes > 0)
      job->pieces[job->npieces++] = (data_piece){ck->areas[i].addr, ck->areas[i].nbytes};
}

/* For the background: the pieces copied into the staging buffer, which then is the one
 * piece; 0, or -1 when there is no memory for it (the job is then written in the
 * foreground). */
static int stage_job(struct bspk_checkpoint *ck, write_job *job) {
  size_t total = 0;
  for (int i = 0; i < job->npieces; i++) total += job->pieces[i].len;
  if (total > ck->staging_cap) {
    free(ck->staging);
    ck->staging_cap = 0;
    ck->staging = malloc(total);
    if (!ck->staging) return -1;
    ck->staging_cap = total;
  }
  size_t at = 0;
  for (int i = 0; i < job->npieces; i++) {
    memcpy(ck->staging + at, job->pieces[i].addr, job->pieces[i].len);
    at += job->pieces[i].len;
  }
  job->npieces = total > 0;
  job->pieces[0] = (data_piece){ck->staging, total};
  return 0;
}

/* Takes the checkpoint, on every process. In the background (the default): the protected
 * memory is copied into the staging buffer at this sync and the writer writes the file while
 * the program goes on; the generation is completed (its manifest) by process 0 at a later
 * bspk_checkpoint, once every process' writer is done (or at bsp_end). At most one
 * generation is in flight: a checkpoint due while the previous one is still being written
 * waits for it (skipping it instead would leave the newest complete checkpoint two
 * intervals old, and make the interval a guess). In the foreground (BSPKIT_CHECKPOINT_
 * BACKGROUND=0, and the first checkpoint with BSPKIT_CHECKPOINT_MTBF, which is timed) every
 * process writes its file and process 0 completes the generation before the call returns. */
static void save(bspk_proc *self) {
  struct bspk_checkpoint *ck = state_of(self);
  /* BSPKIT_CHECKPOINT_MTBF: the first checkpoint is timed, and the interval chosen from it. */
  int measure = config.mtbf > 0 && !ck->cost_measured;
  check_areas_mapped(self, "bspk_checkpoint");
  writer_wait(ck->writer); /* this process' file of the generation in flight */
  if (self->pid == 0 && !ck->dir_checked) {
    if (!ck->resumed) {
      if (mkdir(config.dir, 0755) != 0 && errno != EEXIST)
        bspk_fatal("bspk_checkpoint", "cannot create the checkpoint directory %s: %s", config.dir,
                   strerror(errno));
      check_fresh_directory(self);
    }
    ck->dir_checked = 1;
  }
  /* Every process waits for the directory's check (nothing is written into an earlier run's)
   * and for its writer: the files of the generation in flight are all written now. */
  self->ops->barrier(self->engine);
  double start = bspk_now();
  int prune_later = 0;
  if (ck->pending >= 0) {
    /* Its deletions go to the writer's next job: a restart needs the manifest alone. */
    if (self->pid == 0) complete_generation(self->nprocs, ck->pending, !config.background);
    prune_later = config.background;
    ck->pending = -1;
  }
  write_job job;
  make_job(self, &job);
  int background = config.background && !measure;
  checkpoint_writer *w = background ? writer_of(ck) : NULL;
  if (w && stage_job(ck, &job) == 0) {
    /* Nobody may write into another process' memory (hpput) before it is copied. */
    self->ops->barrier(self->engine);
    job.prune = self->pid == 0 && prune_later;
    writer_submit(w, &job);
    ck->pending = self->superstep;
    if (self->pid == 0) ck->last_save = bspk_now();
  } else {
    run_job(&job);
    /* Nobody may write into another process' memory (hpput) before it is saved. */
    self->ops->barrier(self->engine);
    if (background) {
      /* This process could not write in the background (no thread or no staging memory)
       * while others may: the generation completes as theirs do, at a later call. */
      ck->pending = self->superstep;
      if (self->pid == 0) ck->last_save = bspk_now();
    } else if (self->pid == 0) {
      complete_generation(self->nprocs, self->superstep, 1);
      ck->last_save = bspk_now();
      if (measure) choose_interval(ck, ck->last_save - start);
    }
  }
  ck->cost_measured = 1;
}

/* ---- bspk_checkpoint ----------------------------------------------------------------- */

/* The seconds since the last checkpoint after which the next is due (process 0). */
static double interval_of(const struct bspk_checkpoint *ck) {
  if (config.mtbf > 0) return ck->cost_measured ? ck->interval : 0; /* the first: at once */
  return config.every;
}

BSPK_API int bspk_checkpoint(void) {
  const char *call = "bspk_checkpoint";
  bspk_proc *self = bspk_enter(call);
  need_config(call);
  struct bspk_checkpoint *ck = state_of(self);
  if (config.restart && !ck->resumed)
    bspk_fatal(call,
               "the run was started with bsprun --restart, but the program called "
               "bspk_checkpoint before bspk_checkpoint_resume: it would start over and replace "
               "the checkpoints in %s",
               config.dir);
  if (BSPK_UNLIKELY(config.kill_pid >= 0 && config.kill_pid < self->nprocs &&
                    self->superstep >= config.kill_superstep)) {
    /* The failure strikes between checkpoints: the ones taken before this call are made
     * complete first (every process knows the call, so all take part), so that a test knows
     * which one a restart takes. Kills at any moment, a write in flight included, are
     * bench/checkpoint_faults.py's. */
    if (config.dir) {
      writer_wait(ck->writer);
      self->ops->barrier(self->engine);
      if (ck->pending >= 0 && self->pid == 0) complete_generation(self->nprocs, ck->pending, 1);
      ck->pending = -1;
      self->ops->barrier(self->engine);
    }
    if (self->pid == config.kill_pid) {
      fflush(stdout);
      raise(SIGKILL);
    }
  }
  self->flags |= BSPK_HAS_CHECKPOINT;
  if (self->pid == 0 && config.dir && bspk_now() - ck->last_save >= interval_of(ck))
    self->flags |= BSPK_CHECKPOINT_DUE;
  if (ck->pending >= 0 && writer_busy(ck->writer)) self->flags |= BSPK_CHECKPOINT_WRITING;
  unsigned all = bspk_end_superstep(self, BSPK_AT_SYNC, call, __builtin_return_address(0));
  if (ck->pending >= 0 && !(all & (BSPK_CHECKPOINT_WRITING | BSPK_CHECKPOINT_DUE))) {
    /* Every process' file of the generation in flight is written (or failed, and said so):
     * process 0's writer, idle, completes it while the program goes on. */
    if (self->pid == 0 && ck->writer)
      writer_submit(
          ck->writer,
          &(write_job){.nprocs = self->nprocs, .superstep = -1, .complete_superstep = ck->pending});
    else if (self->pid == 0) /* no writer of its own (save's fallback): in the foreground */
      complete_generation(self->nprocs, ck->pending, 1);
    ck->pending = -1;
  }
  if (!(all & BSPK_CHECKPOINT_DUE)) return 0;
  save(self);
  return 1;
}

/* ---- the restart --------------------------------------------------------------------- */

typedef struct manifest_entry {
  long long bytes;
  uint32_t meta_crc, data_crc;
} manifest_entry;

/* Parses gen's MANIFEST; returns 0, or -1 with why. *nprocs is set (else -1) when the
 * manifest is whole: its process count is then the one the checkpoint was taken with, and a
 * restart with another is the user's error. A manifest has no checksum of its own, so it is
 * whole only when it is exactly the text complete_generation writes: the header line, then
 * processes 0 to nprocs - 1 in order, nothing after them. Any damaged byte (a digit of
 * nprocs, say) breaks that, or makes a process' file disagree with it. */
static int read_manifest(bspk_proc *self, const char *gen, long superstep, int *nprocs,
                         manifest_entry *mine, char *why, size_t why_size) {
  char path[PATH_MAX];
  path_printf(path, sizeof path, "%s/MANIFEST", gen);
  FILE *f = fopen(path, "r");
  *nprocs = -1;
  if (!f) {
    path_printf(why, why_size, "its manifest cannot be read: %s", strerror(errno));
    return -1;
  }
  int version = 0, found = 0;
  long s = -1;
  if (fscanf(f, "bspkit-checkpoint %d superstep %ld nprocs %d", &version, &s, nprocs) != 3 ||
      version != 1 || s != superstep) {
    *nprocs = -1;
    path_printf(why, why_size, "its manifest is damaged");
    fclose(f);
    return -1;
  }
  int q, count = 0, in_order = 1, c;
  manifest_entry e;
  while (fscanf(f, " process %d bytes %lld meta_crc32 %x data_crc32 %x", &q, &e.bytes, &e.meta_crc,
                &e.data_crc) == 4) {
    if (q != count++) in_order = 0;
    if (q == self->pid) {
      *mine = e;
      found = 1;
    }
  }
  while ((c = fgetc(f)) == ' ' || c == '\n') continue;
  fclose(f);
  if (c != EOF || !in_order || count != *nprocs) {
    *nprocs = -1;
    path_printf(why, why_size, "its manifest is damaged");
    return -1;
  }
  if (!found) {
    path_printf(why, why_size, "its manifest lists no file of process %d", self->pid);
    return -1;
  }
  return 0;
}

typedef struct restored {
  char *meta; /* the whole metadata block */
  size_t meta_bytes;
  int32_t tagsize, queue_tagsize;
  uint32_t nregs, nmessages;
  const saved_registration *regs;
  const char *messages;
  const char *areas; /* per area: uint64 size, uint64 kind (AREA_SAVED or AREA_SCRATCH) */
} restored;

/* Whether the checkpoint saved area i's bytes (it was not scratch then). */
static int area_saved(const restored *r, int i) {
  uint64_t kind;
  memcpy(&kind, r->areas + (size_t)i * 2 * sizeof kind + sizeof kind, sizeof kind);
  return kind == AREA_SAVED;
}

/* Takes the metadata apart; -1 when it does not hold together. Area count and sizes are the
 * program's business: a mismatch is an error of the program (not of the file). */
static int parse_meta(bspk_proc *self, restored *r) {
  const char *p = r->meta, *end = r->meta + r->meta_bytes;
#define TAKE(dst, n)                        \
  do {                                      \
    if ((size_t)(end - p) < (n)) return -1; \
    memcpy((dst), p, (n));                  \
    p += (n);                               \
  } while (0)
  uint32_t nareas;
  TAKE(&nareas, sizeof nareas);
  const struct bspk_checkpoint *ck = self->checkpoint;
  int have = ck ? ck->nareas : 0;
  if ((size_t)(end - p) / (2 * sizeof(uint64_t)) < nareas) return -1;
  if ((int)nareas != have)
    bspk_fatal("bspk_checkpoint_resume",
               "the checkpoint holds %u protected area(s) of this process; the program protected "
               "%d: protect the same areas, in the same order, before bspk_checkpoint_resume",
               nareas, have);
  r->areas = p;
  for (uint32_t i = 0; i < nareas; i++) {
    uint64_t n, kind;
    TAKE(&n, sizeof n);
    TAKE(&kind, sizeof kind);
    if (kind != AREA_SAVED && kind != AREA_SCRATCH) return -1;
    if (n != ck->areas[i].nbytes)
      bspk_fatal("bspk_checkpoint_resume",
                 "protected area %u of this process has %llu bytes in the checkpoint, %zu in the "
                 "program: protect the same areas, in the same order, before "
                 "bspk_checkpoint_resume",
                 i, (unsigned long long)n, ck->areas[i].nbytes);
  }
  int32_t tags[2];
  TAKE(tags, sizeof tags);
  r->tagsize = tags[0];
  r->queue_tagsize = tags[1];
  TAKE(&r->nregs, sizeof r->nregs);
  if ((size_t)(end - p) / sizeof(saved_registration) < r->nregs) return -1;
  r->regs = (const saved_registration *)p;
  for (uint32_t i = 0; i < r->nregs; i++)
    if (r->regs[i].area >= (int32_t)nareas ||
        (r->regs[i].area >= 0 && r->regs[i].offset > ck->areas[r->regs[i].area].nbytes))
      return -1;
  p += r->nregs * sizeof(saved_registration);
  TAKE(&r->nmessages, sizeof r->nmessages);
  r->messages = p;
  for (uint32_t m = 0; m < r->nmessages; m++) {
    int32_t nbytes;
    TAKE(&nbytes, sizeof nbytes);
    if (nbytes < 0 || r->queue_tagsize < 0 ||
        (size_t)(end - p) < (size_t)r->queue_tagsize + (size_t)nbytes)
      return -1;
    p += (size_t)r->queue_tagsize + (size_t)nbytes;
  }
#undef TAKE
  return p == end ? 0 : -1;
}

/* Reads this process' file of generation gen into the protected memory; 0, or -1 with why. */
static int read_process_file(bspk_proc *self, const char *gen, long superstep,
                             const manifest_entry *expect, restored *r, char *why,
                             size_t why_size) {
  char path[PATH_MAX];
  path_printf(path, sizeof path, "%s/process-%d.ckpt", gen, self->pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    path_printf(why, why_size, "process %d's file %s cannot be read: %s", self->pid, path,
                strerror(errno));
    return -1;
  }
  struct stat st;
  file_header h;
  int bad = fstat(fd, &st) != 0;
  if (!bad && st.st_size != expect->bytes) {
    path_printf(why, why_size, "process %d's file %s has %lld bytes, its manifest says %lld",
                self->pid, path, (long long)st.st_size, expect->bytes);
    bad = 1;
  } else if (!bad && (read_all(fd, (char *)&h, sizeof h) != 0 || !header_intact(&h, self->pid) ||
                      h.superstep != superstep)) {
    path_printf(why, why_size, "process %d's file %s has a damaged header", self->pid, path);
    bad = 1;
  } else if (!bad && (h.meta_crc != expect->meta_crc || h.data_crc != expect->data_crc ||
                      (long long)(sizeof h + h.meta_bytes + h.data_bytes) != expect->bytes)) {
    path_printf(why, why_size,
                "process %d's file %s does not match its manifest (CRC-32s or sizes differ)",
                self->pid, path);
    bad = 1;
  }
  if (!bad) {
    r->meta_bytes = h.meta_bytes;
    r->meta = bspk_xmalloc(self, h.meta_bytes + 1, "bspk_checkpoint_resume", "the checkpoint");
    if (read_all(fd, r->meta, h.meta_bytes) != 0 ||
        crc_of(0, r->meta, h.meta_bytes) != h.meta_crc || parse_meta(self, r) != 0) {
      path_printf(why, why_size, "process %d's file %s has damaged metadata (CRC-32 mismatch)",
                  self->pid, path);
      bad = 1;
    }
  }
  if (!bad) {
    const struct bspk_checkpoint *ck = self->checkpoint;
    uint64_t saved = 0;
    for (int i = 0; ck && i < ck->nareas; i++)
      if (area_saved(r, i)) saved += ck->areas[i].nbytes;
    if (saved != h.data_bytes) {
      path_printf(why, why_size, "process %d's file %s has damaged metadata (its sizes disagree)",
                  self->pid, path);
      bad = 1;
    }
  }
  if (!bad) {
    const struct bspk_checkpoint *ck = self->checkpoint;
    uint32_t crc = 0;
    for (int i = 0; !bad && ck && i < ck->nareas; i++) {
      if (!area_saved(r, i)) continue; /* scratch then: left as the program has it */
      if (read_all(fd, ck->areas[i].addr, ck->areas[i].nbytes) != 0) bad = 1;
      else crc = crc_of(crc, ck->areas[i].addr, ck->areas[i].nbytes);
    }
    if (bad || crc != h.data_crc) {
      path_printf(why, why_size, "process %d's file %s has damaged data (CRC-32 mismatch)",
                  self->pid, path);
      bad = 1;
    }
  }
  close(fd);
  return bad ? -1 : 0;
}

/* One empty superstep whose arrival ORs the flags given: the processes' vote. */
static unsigned vote(bspk_proc *self, unsigned flags, const void *site) {
  self->flags |= flags;
  return bspk_end_superstep(self, BSPK_AT_SYNC, "bspk_checkpoint_resume", site);
}

/* Where a saved registration is now: its area's new address plus its offset (NULL stays). */
static char *saved_address(const struct bspk_checkpoint *ck, const saved_registration *reg) {
  return reg->area < 0 ? NULL : ck->areas[reg->area].addr + reg->offset;
}

/* The registrations of the checkpoint. Those the program made before the call (the areas
 * it registers at its start, say) must be the first of the checkpoint's, in order; the rest
 * are made again (pushed now, in effect at the next sync) at the protected memory's new
 * addresses. */
static void restore_registrations(bspk_proc *self, const restored *r) {
  const struct bspk_checkpoint *ck = self->checkpoint;
  if (self->nregops != 0)
    bspk_fatal("bspk_checkpoint_resume",
               "called with bsp_push_reg or bsp_pop_reg calls of this superstep pending: call it "
               "right after a bsp_sync, or before registering anything");
  int *order;
  int n = active_slots_in_order(self, &order);
  for (int i = 0; i < n; i++) {
    const bspk_slot *slot = &self->slots[order[i]];
    const saved_registration *reg = (uint32_t)i < r->nregs ? &r->regs[i] : NULL;
    char *addr = reg ? saved_address(ck, reg) : NULL;
    if (!reg || addr != slot->addr || reg->size != slot->size) {
      free(order);
      if (!reg)
        bspk_fatal("bspk_checkpoint_resume",
                   "the program made %d registrations before bspk_checkpoint_resume, the "
                   "checkpoint holds %u: register nothing before it, or the checkpoint's first "
                   "registrations in the same order",
                   n, r->nregs);
      bspk_fatal("bspk_checkpoint_resume",
                 "the program's registration %d (%p, %d bytes) is not the checkpoint's (%p, %d "
                 "bytes): register nothing before bspk_checkpoint_resume, or the checkpoint's "
                 "first registrations in the same order",
                 i, (void *)slot->addr, slot->size, (void *)addr, reg->size);
    }
  }
  free(order);
  for (uint32_t i = (uint32_t)n; i < r->nregs; i++) {
    const saved_registration *reg = &r->regs[i];
    bspk_push_reg(saved_address(ck, reg), reg->size, "bspk_checkpoint_resume");
  }
}

/* The messages delivered at the checkpoint's sync, in the queue again (copies owned here). */
static void restore_messages(bspk_proc *self, const restored *r) {
  struct bspk_checkpoint *ck = self->checkpoint;
  size_t tag = bspk_pad8((size_t)r->queue_tagsize), total = 0;
  const char *p = r->messages;
  for (uint32_t m = 0; m < r->nmessages; m++) {
    int32_t nbytes;
    memcpy(&nbytes, p, sizeof nbytes);
    p += sizeof nbytes + (size_t)r->queue_tagsize + (size_t)nbytes;
    total += tag + bspk_pad8((size_t)nbytes);
  }
  free(ck->messages);
  ck->messages = bspk_xmalloc(self, total + 8, "bspk_checkpoint_resume", "the messages");
  bspk_queue_reset(self, r->nmessages);
  self->queue_tagsize = r->queue_tagsize;
  char *at = ck->messages;
  p = r->messages;
  for (uint32_t m = 0; m < r->nmessages; m++) {
    int32_t nbytes;
    memcpy(&nbytes, p, sizeof nbytes);
    p += sizeof nbytes;
    memcpy(at, p, (size_t)r->queue_tagsize);
    memcpy(at + tag, p + r->queue_tagsize, (size_t)nbytes);
    self->queue[self->queue_len++] = (bspk_message){at, at + tag, nbytes};
    self->queue_bytes += (size_t)nbytes;
    p += (size_t)r->queue_tagsize + (size_t)nbytes;
    at += tag + bspk_pad8((size_t)nbytes);
  }
}

BSPK_API int bspk_checkpoint_resume(void) {
  const char *call = "bspk_checkpoint_resume";
  const void *site = __builtin_return_address(0);
  bspk_proc *self = bspk_enter(call);
  need_config(call);
  if (!config.restart) return 0;
  struct bspk_checkpoint *ck = state_of(self);
  if (ck->resumed) bspk_fatal(call, "called a second time: the checkpoint is restored already");
  check_areas_mapped(self, call);
  int n;
  generation *list = list_generations(self, call, &n);
  int tried = 0;
  for (int i = 0; i < n; i++) {
    if (!list[i].complete) continue;
    char gen[PATH_MAX], why[PATH_MAX + 160] = "";
    generation_path(gen, sizeof gen, list[i].superstep);
    manifest_entry mine = {0};
    int nprocs;
    restored r = {0};
    /* A manifest that cannot be used is the same file for every process: one warning. */
    int manifest_bad = read_manifest(self, gen, list[i].superstep, &nprocs, &mine, why, sizeof why);
    if (manifest_bad == 0 || nprocs > 0) {
      if (nprocs != self->nprocs)
        bspk_fatal(call,
                   "the checkpoint in %s (superstep %ld) was taken by %d processes; this run has "
                   "%d: restart with bsprun -n %d",
                   config.dir, list[i].superstep, nprocs, self->nprocs, nprocs);
      if (!why[0]) read_process_file(self, gen, list[i].superstep, &mine, &r, why, sizeof why);
    }
    tried++;
    if (vote(self, why[0] ? BSPK_CHECKPOINT_BAD : 0, site) & BSPK_CHECKPOINT_BAD) {
      if (why[0] && (!manifest_bad || self->pid == 0))
        warn("the checkpoint at superstep %ld in %s is damaged: %s; trying the one before it",
             list[i].superstep, config.dir, why);
      free(r.meta);
      continue;
    }
    /* Every process read an intact file of this generation: restore the rest. */
    self->tagsize = r.tagsize;
    restore_registrations(self, &r);
    vote(self, 0, site);              /* the registrations take effect */
    self->ops->barrier(self->engine); /* nobody reads the last superstep's blocks any more */
    for (int b = 0; b < 2; b++)
      for (int q = 0; q < self->nprocs; q++) bspk_outbox_clear(&self->outbox[b][q]);
    self->superstep = list[i].superstep;
    restore_messages(self, &r);
    free(r.meta);
    ck->resumed = 1;
    if (self->pid == 0) {
      if (i > 0)
        warn(
            "restarted from the checkpoint at superstep %ld in %s (the newer ones are damaged "
            "or incomplete, and are removed)",
            list[i].superstep, config.dir);
      for (int j = 0; j < i; j++) remove_generation(list[j].superstep);
      ck->last_save = bspk_now();
    }
    free(list);
    return 1;
  }
  free(list);
  bspk_fatal(call, "no %scomplete checkpoint in %s to restart from%s", tried ? "intact " : "",
             config.dir, tried ? " (every one is damaged; see the warnings above)" : "");
}

/* ---- the end of the section ---------------------------------------------------------- */

void bspk_checkpoint_before_end(bspk_proc *self) {
  if (self->checkpoint) writer_wait(self->checkpoint->writer);
}

void bspk_checkpoint_free(bspk_proc *self) {
  struct bspk_checkpoint *ck = self->checkpoint;
  if (!ck) return;
  /* Every process waited for its writer before it arrived at bsp_end: the files of the
   * generation in flight are all written. */
  if (ck->pending >= 0 && self->pid == 0) complete_generation(self->nprocs, ck->pending, 1);
  writer_stop(ck->writer);
  BSPK_FREE_ALL(ck->staging, ck->areas, ck->messages, ck);
  self->checkpoint = NULL;
}
