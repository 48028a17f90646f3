/*
 * measure_disk.c - the memory-disk benchmark of Kang et al. (`003_...` sec. 4.2.3, Fig. 12
 * and 13): the time to write and to read a file of m bytes, m from 4 KiB doubling to the
 * largest size (and a few sizes 1.5 times a power of two in the upper half, so that the linear
 * fit T + m tau of sec. 5.2.3 has points between the doublings). Part of bspprobe (see
 * bspprobe.c).
 *
 * Process 0 measures alone, the others wait in bsp_sync. Its files live in a temporary
 * directory (mkdtemp under --disk-dir, else $TMPDIR, else /tmp) that is removed afterwards,
 * also when an error ends the program: every error is fatal (one message naming the path and
 * the reason, bsp_abort, exit status 1), because a disk that fails half-way gives no model.
 *
 * For each m and each repetition, in this order: sequential access (blocks of min(m, 1 MiB)),
 * then random access (4 KiB blocks in a random order, only up to random_max_bytes to keep the
 * time bounded), each as
 *   write "page"   : buffered, no fsync (what a program that writes sees; the data may still
 *                    be in memory when the clock stops),
 *   read "page"    : the file just written, from the page cache,
 *   (untimed fsync: no dirty page of the buffered write is left to flush inside a direct write),
 *   write "direct" : O_DIRECT from aligned buffers, then fsync inside the clock (the data reached
 *                    the device); where the file system refuses O_DIRECT, buffered + fsync,
 *   read "direct"  : O_DIRECT; else fsync + posix_fadvise(POSIX_FADV_DONTNEED) before the clock,
 *                    so that the read comes from the device.
 * The clock covers the read/write calls (and the fsync of direct writes) only; open and close
 * are outside it, as in the paper. Before the samples of one m the file is written once (untimed)
 * so that no sample pays for allocating blocks. Written data is random (Fig. 13: "save random
 * data into buffer"), the read buffer is cleared before each read (Fig. 12), and a checksum of
 * what was read goes into c->isink.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "probe.h"

#define DISK_PAGE 4096L           /* O_DIRECT alignment, random block, smallest m */
#define DISK_SEQ_BLOCK (1L << 20) /* largest sequential block */

enum { OP_WRITE, OP_READ };
enum { ACC_SEQ, ACC_RANDOM };
enum { CACHE_PAGE, CACHE_DIRECT };

typedef struct {
  probe_ctx *c;
  const char *parent;
  char dir[PATH_MAX];
  char file[PATH_MAX + 16]; /* dir + "/data" */
  int have_dir, have_file;
  int fd; /* the open file, so that a fatal error can close it */
  int odirect;
  char *buf; /* DISK_SEQ_BLOCK bytes, 4096-aligned */
  long *order;
  uint64_t rng;
} disk_run;

/* ---- errors and cleanup ---------------------------------------------------------------------- */

static void cleanup_on_signals(const disk_run *d, int on);

static void disk_cleanup(disk_run *d) {
  if (d->have_dir) cleanup_on_signals(d, 0);
  if (d->fd >= 0) close(d->fd);
  d->fd = -1;
  if (d->have_file) unlink(d->file);
  d->have_file = 0;
  if (d->have_dir) rmdir(d->dir);
  d->have_dir = 0;
}

/* A run ended by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a timeout, mpirun passing on an abort)
 * removes the file and the directory too. Only process 0 runs the disk section, once at a time,
 * so one set of paths serves; they are copied before the handlers go in, and the handler calls
 * only unlink, rmdir and raise (async-signal-safe). */
static char signal_file[PATH_MAX + 16], signal_dir[PATH_MAX];
static struct sigaction signal_old[3];
static const int cleanup_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void remove_on_signal(int sig) {
  unlink(signal_file);
  rmdir(signal_dir);
  for (int k = 0; k < 3; k++)
    if (cleanup_signals[k] == sig) sigaction(sig, &signal_old[k], NULL);
  raise(sig);
}

static void cleanup_on_signals(const disk_run *d, int on) {
  if (!on) {
    for (int k = 0; k < 3; k++) sigaction(cleanup_signals[k], &signal_old[k], NULL);
    return;
  }
  snprintf(signal_file, sizeof signal_file, "%s", d->file);
  snprintf(signal_dir, sizeof signal_dir, "%s", d->dir);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = remove_on_signal;
  sigemptyset(&action.sa_mask);
  for (int k = 0; k < 3; k++) {
    sigaction(cleanup_signals[k], NULL, &signal_old[k]);
    if (signal_old[k].sa_handler != SIG_IGN) /* a signal ignored (nohup) stays ignored */
      sigaction(cleanup_signals[k], &action, NULL);
  }
}

/* Removes the temporary directory, then ends the whole program with one message. */
static void disk_fail(disk_run *d, const char *fmt, ...) PROBE_PRINTF(2, 3);
static void disk_fail(disk_run *d, const char *fmt, ...) {
  char msg[PATH_MAX + 512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  disk_cleanup(d);
  free(d->buf);
  free(d->order);
  if (d->c->tty && d->c->progress_len) fprintf(stderr, "\r%*s\r", d->c->progress_len, "");
  d->c->progress_len = 0;
  bsp_abort("bspprobe: error: disk: %s\n", msg);
}

static int open_file(disk_run *d, int flags) {
  int fd;
  do fd = open(d->file, flags, 0600);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) disk_fail(d, "cannot open '%s': %s", d->file, strerror(errno));
  d->fd = fd;
  return fd;
}

static void close_file(disk_run *d) {
  int fd = d->fd;
  d->fd = -1;
  if (close(fd) != 0 && errno != EINTR)
    disk_fail(d, "cannot close '%s': %s", d->file, strerror(errno));
}

static void sync_file(disk_run *d, int fd) {
  if (fsync(fd) != 0) disk_fail(d, "cannot fsync '%s': %s", d->file, strerror(errno));
}

/* pwrite of all n bytes. A buffered short write is continued (the next call says why it
 * stopped: ENOSPC, EFBIG); an O_DIRECT one cannot be (the rest is not aligned). */
static void write_all(disk_run *d, int fd, const char *b, long n, long off, int direct) {
  long done = 0;
  while (done < n) {
    ssize_t r = pwrite(fd, b + done, (size_t)(n - done), off + done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) disk_fail(d, "cannot write '%s': %s", d->file, strerror(errno));
    if (r == 0 || (direct && r < n - done))
      disk_fail(d, "cannot write '%s': short write (%ld of %ld bytes at offset %ld; disk full?)",
                d->file, done + (long)r, n, off);
    done += r;
  }
}

static void read_all(disk_run *d, int fd, char *b, long n, long off) {
  long done = 0;
  while (done < n) {
    ssize_t r = pread(fd, b + done, (size_t)(n - done), off + done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) disk_fail(d, "cannot read '%s': %s", d->file, strerror(errno));
    if (r == 0)
      disk_fail(d, "cannot read '%s': the file ends after %ld bytes, %ld expected", d->file,
                off + done, off + n);
    done += r;
  }
}

/* ---- setup ----------------------------------------------------------------------------------- */

static const char *fs_name(long type, char *buf, size_t n) {
  static const struct {
    unsigned long magic;
    const char *name;
  } known[] = {{0xEF53, "ext2/3/4"},   {0x01021994, "tmpfs"},     {0x858458f6, "ramfs"},
               {0x58465342, "xfs"},    {0x9123683E, "btrfs"},     {0x6969, "nfs"},
               {0xFF534D42, "cifs"},   {0x794c7630, "overlayfs"}, {0x2fc12fc1, "zfs"},
               {0xF2F52010, "f2fs"},   {0x65735546, "fuse"},      {0x5346414F, "afs"},
               {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"},      {0x4244, "hfs"},
               {0x4d44, "vfat"},       {0x5346544e, "ntfs"}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (known[i].magic == (unsigned long)type) return known[i].name;
  snprintf(buf, n, "0x%lx", (unsigned long)type);
  return buf;
}

/* Whether O_DIRECT works here: open and one aligned write and read of a page. Returns 1, or 0
 * with the reason in why; any other error is fatal. */
static int probe_odirect(disk_run *d, char *why, size_t n) {
  int fd;
  do fd = open(d->file, O_WRONLY | O_CREAT | O_DIRECT, 0600);
  while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno != EINVAL) disk_fail(d, "cannot create '%s': %s", d->file, strerror(errno));
  d->have_file = 1;
  if (fd < 0) {
    snprintf(why, n, "open with O_DIRECT: %s", strerror(errno));
    return 0;
  }
  d->fd = fd;
  memset(d->buf, 7, DISK_PAGE);
  ssize_t r = pwrite(fd, d->buf, DISK_PAGE, 0);
  if (r < 0 && errno == EINVAL) {
    snprintf(why, n, "a write with O_DIRECT: %s", strerror(errno));
    close_file(d);
    return 0;
  }
  if (r != DISK_PAGE) write_all(d, fd, d->buf, DISK_PAGE, 0, 1); /* says why */
  close_file(d);
  fd = open_file(d, O_RDONLY | O_DIRECT);
  r = pread(fd, d->buf, DISK_PAGE, 0);
  if (r < 0 && errno == EINVAL) {
    snprintf(why, n, "a read with O_DIRECT: %s", strerror(errno));
    close_file(d);
    return 0;
  }
  if (r != DISK_PAGE) read_all(d, fd, d->buf, DISK_PAGE, 0);
  close_file(d);
  return 1;
}

/* The sizes: 4 KiB doubling up to max (max itself last when it is no power of two), and 1.5 m
 * for the powers of two m in [max/8, max/2] (multiples of 4 KiB). Ascending. */
static int plan_sizes(long max, long *sizes, int cap) {
  int n = 0;
  long m;
  for (m = DISK_PAGE; m <= max && n < cap; m *= 2) {
    sizes[n++] = m;
    long half = m + m / 2;
    if (m >= 2 * DISK_PAGE && m >= max / 8 && m <= max / 2 && half <= max && n < cap)
      sizes[n++] = half;
  }
  if (sizes[n - 1] != max && n < cap) sizes[n++] = max;
  return n;
}

/* ---- one sample ------------------------------------------------------------------------------ */

static double disk_sample(disk_run *d, int op, int access, int cache, long m) {
  const int direct = cache == CACHE_DIRECT && d->odirect;
  const long block = access == ACC_SEQ ? (m < DISK_SEQ_BLOCK ? m : DISK_SEQ_BLOCK) : DISK_PAGE;
  const long nblocks = (m + block - 1) / block;
  const long fill = m < DISK_SEQ_BLOCK ? m : DISK_SEQ_BLOCK;
  if (access == ACC_RANDOM) {
    for (long i = 0; i < nblocks; i++) d->order[i] = i;
    bspp_rng_shuffle_long(&d->rng, d->order, nblocks);
  }
  int fd;
  if (op == OP_WRITE) {
    for (long i = 0; i < fill / 8; i++) { /* new random data every sample */
      uint64_t v = bspp_rng_next(&d->rng);
      memcpy(d->buf + 8 * i, &v, 8);
    }
    fd = open_file(d, O_WRONLY | (direct ? O_DIRECT : 0));
  } else {
    memset(d->buf, 0, (size_t)fill);
    fd = open_file(d, O_RDONLY | (direct ? O_DIRECT : 0));
    if (cache == CACHE_DIRECT && !direct) { /* push the file out of the page cache */
      sync_file(d, fd);
      int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      if (e) disk_fail(d, "cannot posix_fadvise '%s': %s", d->file, strerror(e));
    }
  }
  if (access == ACC_RANDOM && !direct) posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); /* a hint */
  long sum = 0;
  double t0 = bspk_monotonic_seconds();
  for (long i = 0; i < nblocks; i++) {
    long b = access == ACC_SEQ ? i : d->order[i];
    long off = b * block, len = m - off < block ? m - off : block;
    if (op == OP_WRITE) {
      write_all(d, fd, d->buf + (access == ACC_SEQ ? 0 : (b % (fill / DISK_PAGE)) * DISK_PAGE), len,
                off, direct);
    } else {
      char *dst = d->buf + (access == ACC_SEQ ? 0 : (i % (fill / DISK_PAGE)) * DISK_PAGE);
      read_all(d, fd, dst, len, off);
      sum += dst[len - 1];
    }
  }
  if (op == OP_WRITE && cache == CACHE_DIRECT) sync_file(d, fd);
  double t = bspk_monotonic_seconds() - t0;
  close_file(d);
  d->c->isink = d->c->isink + sum;
  return t;
}

/* The file clean on disk (untimed): no dirty page is left to be flushed inside a later sample. */
static void settle(disk_run *d) {
  int fd = open_file(d, O_RDONLY);
  sync_file(d, fd);
  close_file(d);
}

/* ---- the section ----------------------------------------------------------------------------- */

static void disk_emit(probe_ctx *c, disk_run *d, int op, int access, int cache, long m,
                      const double *samples, int reps) {
  jbuf *j = &c->j;
  bspp_json_begin(j, "disk");
  bspp_json_str(j, "op", op == OP_WRITE ? "write" : "read");
  bspp_json_str(j, "access", access == ACC_SEQ ? "sequential" : "random");
  bspp_json_str(j, "cache", cache == CACHE_PAGE ? "page" : "direct");
  bspp_json_str(j, "method",
                cache == CACHE_PAGE ? "buffered" : (d->odirect ? "O_DIRECT" : "fadvise+fsync"));
  bspp_json_int(j, "bytes", m);
  bspp_json_int(j, "block_bytes",
                access == ACC_SEQ ? (m < DISK_SEQ_BLOCK ? m : DISK_SEQ_BLOCK) : DISK_PAGE);
  bspp_json_nums(j, "samples_s", samples, reps, "%.6g");
  bspp_json_int(j, "reps", reps);
  bspp_emit(c);
}

static void disk_process0(probe_ctx *c) {
  disk_run d;
  memset(&d, 0, sizeof d);
  d.c = c;
  d.fd = -1;
  d.rng = bspp_rng_seed(c->opt->seed, 0xd15c, 0, 0);
  const char *tmpdir = getenv("TMPDIR");
  d.parent = c->opt->disk_dir ? c->opt->disk_dir : (tmpdir && *tmpdir ? tmpdir : "/tmp");
  char note[1024] = "";
  size_t nl = 0;
#define NOTE(...)                                                                           \
  do {                                                                                      \
    if (nl < sizeof note)                                                                   \
      nl += (size_t)snprintf(note + nl, sizeof note - nl, "%s", nl ? "; " : "");            \
    if (nl < sizeof note) nl += (size_t)snprintf(note + nl, sizeof note - nl, __VA_ARGS__); \
  } while (0)

  /* free space first: the sizes depend on it */
  struct statvfs vfs;
  if (statvfs(d.parent, &vfs) != 0)
    disk_fail(&d, "cannot use the directory '%s': %s", d.parent, strerror(errno));
  long long free_bytes = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
  long long max = c->opt->disk_max_bytes;
  if (max > 0) {
    if (max > free_bytes / 2)
      disk_fail(&d,
                "--disk-max-bytes %lld is more than half of the free space in '%s' (%lld "
                "bytes free); choose at most %lld",
                max, d.parent, free_bytes, free_bytes / 2 / DISK_PAGE * DISK_PAGE);
  } else {
    max = c->opt->quick ? 64LL << 20 : 256LL << 20; /* the main job: GiBs on request */
    if (max > free_bytes / 4) {
      long long lowered = free_bytes / 4 / DISK_PAGE * DISK_PAGE;
      if (lowered < DISK_PAGE)
        disk_fail(&d, "too little free space in '%s' (%lld bytes) for even a %ld-byte file",
                  d.parent, free_bytes, DISK_PAGE);
      NOTE("max_bytes lowered from %lld to %lld, a quarter of the free space", max, lowered);
      max = lowered;
    }
  }
  max = max / DISK_PAGE * DISK_PAGE; /* O_DIRECT needs whole pages */
  if (max > LONG_MAX / 2) max = LONG_MAX / 2;

  struct statfs sfs;
  char fsbuf[32];
  const char *fs =
      statfs(d.parent, &sfs) == 0 ? fs_name((long)sfs.f_type, fsbuf, sizeof fsbuf) : "unknown";

  if (snprintf(d.dir, sizeof d.dir, "%s/bspprobe-XXXXXX", d.parent) >= (int)sizeof d.dir)
    disk_fail(&d, "the directory name '%s' is too long", d.parent);
  if (!mkdtemp(d.dir))
    disk_fail(&d, "cannot create a temporary directory in '%s': %s", d.parent, strerror(errno));
  d.have_dir = 1;
  snprintf(d.file, sizeof d.file, "%s/data", d.dir);
  cleanup_on_signals(&d, 1);

  void *mem = NULL;
  int e = posix_memalign(&mem, DISK_PAGE, DISK_SEQ_BLOCK);
  if (e) disk_fail(&d, "cannot allocate %ld bytes: %s", DISK_SEQ_BLOCK, strerror(e));
  d.buf = mem;

  char why[256] = "";
  d.odirect = probe_odirect(&d, why, sizeof why);
  if (!d.odirect)
    NOTE("O_DIRECT refused (%s): direct reads after fsync + posix_fadvise(DONTNEED)", why);
  if (!strcmp(fs, "tmpfs") || !strcmp(fs, "ramfs"))
    NOTE("%s keeps files in memory: 'direct' measures memory, not a disk", fs);

  const long random_max = c->opt->quick ? 1L << 20 : 8L << 20;
  d.order = xmalloc((size_t)(random_max / DISK_PAGE) * sizeof *d.order);
  long sizes[96];
  const int nsizes = plan_sizes((long)max, sizes, 96);
  NOTE("random access (4 KiB blocks) up to %ld bytes", random_max);

  jbuf *j = &c->j;
  bspp_json_begin(j, "disk_info");
  bspp_json_str(j, "dir", d.parent);
  bspp_json_str(j, "filesystem", fs);
  bspp_json_int(j, "free_bytes", free_bytes);
  bspp_json_int(j, "max_bytes", max);
  bspp_json_str(j, "direct", d.odirect ? "O_DIRECT" : "fadvise");
  bspp_json_int(j, "random_max_bytes", random_max);
  bspp_json_str(j, "note", note);
  bspp_emit(c);
#undef NOTE

  long long work = 0, done = 0; /* progress in KiB of file per repetition */
  for (int k = 0; k < nsizes; k++) work += sizes[k] / 1024;
  const int max_reps = c->opt->reps > 0 ? c->opt->reps : (c->opt->quick ? 3 : 5);
  double *samples = xmalloc(8 * (size_t)max_reps * sizeof *samples);
  for (int k = 0; k < nsizes; k++) {
    const long m = sizes[k];
    /* 3 repetitions of the largest files keep the full mode near a minute */
    const int reps = c->opt->reps > 0 || c->opt->quick || m < (64L << 20) ? max_reps : 3;
    const int nacc = m <= random_max ? 2 : 1;
    bspp_progress(c, "disk, KiB of files done", (long)done, (long)work, k == 0);
    { /* the file written once, untimed: no sample pays for allocating its blocks */
      int fd = open_file(&d, O_WRONLY | O_CREAT);
      for (long off = 0; off < m; off += DISK_SEQ_BLOCK)
        write_all(&d, fd, d.buf, m - off < DISK_SEQ_BLOCK ? m - off : DISK_SEQ_BLOCK, off, 0);
      if (ftruncate(fd, m) != 0) disk_fail(&d, "cannot truncate '%s': %s", d.file, strerror(errno));
      sync_file(&d, fd);
      close_file(&d);
    }
    for (int r = 0; r < reps; r++) {
      for (int acc = 0; acc < nacc; acc++) {
        double *s = samples + (size_t)(4 * acc) * (size_t)max_reps;
        s[0 * max_reps + r] = disk_sample(&d, OP_WRITE, acc, CACHE_PAGE, m);
        s[1 * max_reps + r] = disk_sample(&d, OP_READ, acc, CACHE_PAGE, m);
        settle(&d);
        s[2 * max_reps + r] = disk_sample(&d, OP_WRITE, acc, CACHE_DIRECT, m);
        s[3 * max_reps + r] = disk_sample(&d, OP_READ, acc, CACHE_DIRECT, m);
      }
      bspp_progress(c, "disk, KiB of files done", (long)(done + (r + 1) * (m / 1024) / reps),
                    (long)work, 0);
    }
    done += m / 1024;
    for (int acc = 0; acc < nacc; acc++)
      for (int q = 0; q < 4; q++)
        disk_emit(c, &d, q % 2 == 0 ? OP_WRITE : OP_READ, acc, q < 2 ? CACHE_PAGE : CACHE_DIRECT, m,
                  samples + (size_t)(4 * acc + q) * (size_t)max_reps, reps);
  }
  free(samples);
  disk_cleanup(&d);
  free(d.order);
  free(d.buf);
}

void bspp_measure_disk(probe_ctx *c) {
  if (c->s == 0) disk_process0(c);
  bsp_sync(); /* the others wait here */
}
