/*
 * profile.c - the superstep profile (BSPKIT_PROFILE=FILE; format: docs/profile-format.md).
 *
 * Off, a process has no profile (self->profile == NULL) and every hook is one untaken
 * branch. On, each process counts its primitives per destination and times its
 * supersteps into memory; nothing touches the file during the run (a write there would be
 * part of some superstep's time), each process appends its records in bsp_end.
 *
 * Each superstep's compute is timed twice: on the wall clock (compute_s) and on the calling
 * thread's CPU clock (cpu_s), the work it did whatever else shared its core (a run with
 * more processes than cores). Each CPU span lies inside its wall span: the wall clock is
 * read first where a span starts and last where it ends.
 *
 * Packing (Horvitz & Bisseling's breakdown, seed 004 lines 217-219: "the time each process
 * spent in packing and unpacking data, including the time spent in local swaps") is the
 * part of compute_s spent in the buffering primitives (their profiled path times itself:
 * bspk_profile_timed) plus the regions the program marks with bspk_profile_packing_begin
 * and _end. A primitive inside a marked region is the region's time (counted once); data an
 * hpput or hpget moves at the call is communication (direct_s), inside a region too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bspk_json.h"
#include "bspk_state.h"
#include "bspkit.h"
#include "core/buffers.h"
#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "core/profile.h"

static const char *const op_names[BSPK_PROFILE_NOPS] = {"put",   "hpput", "get",
                                                        "hpget", "send",  "coll"};

/* Traffic with one other process in one superstep (out: data to it; get: data from it). */
typedef struct peer_traffic {
  int pid;
  int is_get;
  long messages, words;
} peer_traffic;

typedef struct superstep_record {
  long step;
  int at_end;
  double t_start, compute, cpu, sync, wait;
  double pack, pack_marked, direct; /* parts of compute: packing, the program's, moved */
  long op_calls[BSPK_PROFILE_NOPS], op_bytes[BSPK_PROFILE_NOPS];
  long self_words;
  int push_reg, pop_reg, set_tagsize;
  int site_object;
  uintptr_t site_offset;
  int phase;                 /* into the profile's phases[], or -1: none named yet */
  size_t first_peer, npeers; /* into the profile's peers[] */
} superstep_record;

typedef struct loaded_object {
  char *path;
  uintptr_t base;
} loaded_object;

struct bspk_profile {
  const char *path;
  long section;
  double t_start, t_enter, wait;
  double cpu_start, cpu_enter; /* the thread's CPU clock where compute starts and ends */
  /* the machine's state over the whole run (the process record's "state") */
  bspk_thread_state run_start;
  bspk_machine_counters machine_start;
  superstep_record current;
  /* This superstep's traffic by peer: [2 * nprocs] counters (out, then get), and how many
   * of them are non-zero (the sync's scan stops when it has found them all). */
  long *messages, *words;
  int ntouched;
  superstep_record *records;
  size_t nrecords, records_cap;
  peer_traffic *peers;
  size_t npeers, peers_cap;
  loaded_object *objects;
  int nobjects;
  char **phases; /* the names given to bspk_profile_phase, each once */
  int nphases, phase;
  const void *last_site;
  int last_object;
  uintptr_t last_offset;
  /* The program's packing regions: how deeply nested, and where the open one (or its part
   * in this superstep) began, with the data moved at calls by then (not packing). */
  int packing_depth;
  double packing_since, direct_at_packing_since;
};

/* This program's file, absolute (the path it was started by may be relative), or "". */
static const char *program_path(char buf[PATH_MAX]) {
  ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX - 1);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

/* The name of the host the process runs on (emulated hosts have their own), or "". */
static const char *host_name(char buf[256]) {
  buf[0] = '\0';
  gethostname(buf, 255);
  buf[255] = '\0';
  return buf;
}

/* Sections begun in this OS process: with threads, process 0 counts them for everyone. */
static atomic_long sections_done;

static void *profile_grow(bspk_proc *self, void *array, size_t *cap, size_t need,
                          size_t elem_size) {
  return bspk_grow(self, array, cap, need, elem_size, 64, "bsp_sync", "the superstep profile");
}

/* The header is written once by process 0 when the first section begins; the file is
 * created (emptied) then, so a run's profile never mixes with an older one. */
static void write_header(bspk_proc *self, bspk_profile *prof) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (prof->section == 0 ? O_TRUNC : 0);
  int fd = open(prof->path, flags, 0644);
  if (fd < 0)
    bspk_fatal("bsp_begin", "cannot write the profile BSPKIT_PROFILE='%s': %s", prof->path,
               strerror(errno));
  char host[256], program[PATH_MAX];
  char date[32];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) bspk_fatal("bsp_begin", "out of memory for the profile's header");
  fprintf(f,
          "{\"type\": \"header\", \"format\": 1, \"tool\": \"bspkit-profile\", "
          "\"bspkit_version\": \"%s\", \"section\": %ld, \"backend\": ",
          BSPKIT_VERSION_STRING, prof->section);
  bspk_json_write_string(f, self->ops->name);
  fprintf(f, ", \"nprocs\": %d, \"program\": ", self->nprocs);
  bspk_json_write_string(f, program_path(program));
  fputs(", \"argv\": [", f);
  FILE *cmd = fopen("/proc/self/cmdline", "rb");
  if (cmd) {
    int c, first = 1, open_arg = 0;
    while ((c = fgetc(cmd)) != EOF) {
      if (!open_arg) {
        fputs(first ? "\"" : ", \"", f);
        first = 0;
        open_arg = 1;
      }
      if (c == 0) {
        fputc('"', f);
        open_arg = 0;
      } else {
        char esc[8];
        fputs(bspk_json_escape_char((unsigned char)c, esc), f);
      }
    }
    if (open_arg) fputc('"', f);
    fclose(cmd);
  }
  fputs("], \"host\": ", f);
  bspk_json_write_string(f, host_name(host));
  fprintf(f, ", \"date\": \"%s\", \"word_bytes\": %d}\n", date, BSPK_PROFILE_WORD_BYTES);
  fclose(f);
  ssize_t written = write(fd, text, len);
  free(text);
  close(fd);
  if (written != (ssize_t)len) bspk_fatal("bsp_begin", "cannot write the profile '%s'", prof->path);
}

void bspk_profile_begin(bspk_proc *self) {
  const char *path = getenv("BSPKIT_PROFILE");
  if (!path || !*path) return;
  bspk_profile *prof = calloc(1, sizeof *prof);
  size_t n = 2 * (size_t)self->nprocs;
  if (prof) {
    prof->messages = calloc(n, sizeof *prof->messages);
    prof->words = calloc(n, sizeof *prof->words);
  }
  if (!prof || !prof->messages || !prof->words)
    bspk_fatal("bsp_begin", "out of memory for the superstep profile (BSPKIT_PROFILE)");
  prof->path = path;
  prof->section = atomic_load(&sections_done);
  prof->last_object = -1;
  prof->phase = -1;
  prof->t_start = self->start_time;
  self->profile = prof;
  if (self->pid == 0) write_header(self, prof);
  prof->machine_start = bspk_machine_counters_now();
  prof->run_start = bspk_thread_state_now();
  prof->cpu_start =
      bspk_thread_cpu_seconds(); /* after the header: writing it is not the program's work */
}

void bspk_profile_count(bspk_proc *self, enum bspk_profile_op op, int peer, long nbytes) {
  bspk_profile *prof = self->profile;
  prof->current.op_calls[op]++;
  prof->current.op_bytes[op] += nbytes;
  long words = (nbytes + BSPK_PROFILE_WORD_BYTES - 1) / BSPK_PROFILE_WORD_BYTES;
  if (peer == self->pid) {
    prof->current.self_words += words;
    return;
  }
  int is_get = op == BSPK_PROFILE_GET || op == BSPK_PROFILE_HPGET;
  int index = is_get * self->nprocs + peer;
  if (prof->messages[index]++ == 0) prof->ntouched++;
  prof->words[index] += words;
}

void bspk_profile_timed(bspk_proc *self, double since, enum bspk_profile_time kind) {
  bspk_profile *prof = self->profile;
  if (kind == BSPK_PROFILE_MOVED) prof->current.direct += bspk_now() - since;
  else if (prof->packing_depth == 0) prof->current.pack += bspk_now() - since;
}

/* The open packing region's time since it (or this superstep) began, less what calls in
 * it moved to or from other processes, is packing. */
static void close_packing(bspk_profile *prof, double now) {
  double packed =
      now - prof->packing_since - (prof->current.direct - prof->direct_at_packing_since);
  if (packed < 0) packed = 0;
  prof->current.pack += packed;
  prof->current.pack_marked += packed;
}

BSPK_API void bspk_profile_packing_begin(void) {
  bspk_proc *self = bspk_enter("bspk_profile_packing_begin");
  bspk_profile *prof = self->profile;
  if (!prof || prof->packing_depth++ > 0) return; /* nested: the outermost region counts */
  prof->packing_since = bspk_now();
  prof->direct_at_packing_since = prof->current.direct;
}

BSPK_API void bspk_profile_packing_end(void) {
  bspk_proc *self = bspk_enter("bspk_profile_packing_end");
  bspk_profile *prof = self->profile;
  if (!prof) return;
  if (prof->packing_depth == 0)
    bspk_fatal("bspk_profile_packing_end",
               "no packing region is open (each bspk_profile_packing_end ends one "
               "bspk_profile_packing_begin)");
  if (--prof->packing_depth == 0) close_packing(prof, bspk_now());
}

/* Which loaded object holds the sync's return address, and where in it: dladdr is asked
 * once per call site in a row (a loop's sync is the same site every time). */
static void locate_site(bspk_proc *self, bspk_profile *prof, const void *site) {
  if (site == prof->last_site && prof->last_object >= 0) return;
  prof->last_site = site;
  Dl_info info;
  if (!site || !dladdr(site, &info) || !info.dli_fbase) {
    prof->last_object = -1;
    prof->last_offset = (uintptr_t)site;
    return;
  }
  uintptr_t base = (uintptr_t)info.dli_fbase;
  prof->last_offset = (uintptr_t)site - base;
  for (int i = 0; i < prof->nobjects; i++)
    if (prof->objects[i].base == base) {
      prof->last_object = i;
      return;
    }
  /* The main program comes back as argv[0], which may be relative: name it absolutely. */
  char exe[PATH_MAX];
  const char *path = info.dli_fname;
  if (!path || path[0] != '/') path = program_path(exe);
  size_t cap = (size_t)prof->nobjects;
  prof->objects = bspk_xrealloc(self, prof->objects, (cap + 1) * sizeof *prof->objects, "bsp_sync",
                                "the superstep profile");
  prof->objects[prof->nobjects] = (loaded_object){strdup(path), base};
  prof->last_object = prof->nobjects++;
}

BSPK_API void bspk_profile_phase(const char *name) {
  bspk_proc *self = bspk_enter("bspk_profile_phase");
  bspk_profile *prof = self->profile;
  if (!prof) return;
  if (!name) bspk_fatal("bspk_profile_phase", "the phase name is NULL");
  for (int i = 0; i < prof->nphases; i++)
    if (strcmp(prof->phases[i], name) == 0) {
      prof->phase = i;
      return;
    }
  prof->phases = bspk_xrealloc(self, prof->phases, (size_t)(prof->nphases + 1) * sizeof(char *),
                               "bspk_profile_phase", "the superstep profile");
  prof->phases[prof->nphases] = strdup(name);
  if (!prof->phases[prof->nphases])
    bspk_fatal("bspk_profile_phase", "out of memory for the superstep profile");
  prof->phase = prof->nphases++;
}

void bspk_profile_sync_enter(bspk_proc *self, const void *site) {
  bspk_profile *prof = self->profile;
  prof->cpu_enter = bspk_thread_cpu_seconds();
  prof->t_enter = bspk_now();
  prof->wait = 0;
  /* a region open across the sync: its part in this superstep ends here, the sync's time is
   * not packing (it goes on when the next superstep begins) */
  if (prof->packing_depth > 0) close_packing(prof, prof->t_enter);
  for (int i = 0; i < self->nregops; i++) {
    if (self->regops[i].is_push) prof->current.push_reg++;
    else prof->current.pop_reg++;
  }
  locate_site(self, prof, site);
}

void bspk_profile_waited(bspk_proc *self, double seconds) { self->profile->wait += seconds; }

void bspk_profile_tagsize(bspk_proc *self) { self->profile->current.set_tagsize++; }

void bspk_profile_sync_exit(bspk_proc *self, int at_end) {
  bspk_profile *prof = self->profile;
  double now = bspk_now();
  superstep_record *rec = &prof->current;
  rec->step = self->superstep;
  rec->at_end = at_end;
  rec->t_start = prof->t_start - self->start_time;
  rec->compute = prof->t_enter - prof->t_start;
  rec->cpu = prof->cpu_enter - prof->cpu_start;
  rec->sync = now - prof->t_enter;
  rec->wait = prof->wait;
  rec->site_object = prof->last_object;
  rec->site_offset = prof->last_offset;
  rec->phase = prof->phase;
  /* Peers in pid order, out before get: the file's order, whatever the call order was. */
  rec->first_peer = prof->npeers;
  rec->npeers = 0;
  for (int index = 0; index < 2 * self->nprocs && prof->ntouched > 0; index++) {
    if (!prof->messages[index]) continue;
    prof->peers =
        profile_grow(self, prof->peers, &prof->peers_cap, prof->npeers + 1, sizeof *prof->peers);
    prof->peers[prof->npeers++] = (peer_traffic){index % self->nprocs, index >= self->nprocs,
                                                 prof->messages[index], prof->words[index]};
    rec->npeers++;
    prof->messages[index] = prof->words[index] = 0;
    prof->ntouched--;
  }
  prof->records = profile_grow(self, prof->records, &prof->records_cap, prof->nrecords + 1,
                               sizeof *prof->records);
  prof->records[prof->nrecords++] = *rec;
  memset(rec, 0, sizeof *rec);
  prof->t_start = now;
  prof->packing_since = now;
  prof->direct_at_packing_since = 0;
  prof->cpu_start =
      bspk_thread_cpu_seconds(); /* after the bookkeeping above: the library's, not work */
}

static void write_peers(FILE *f, const bspk_profile *prof, const superstep_record *rec,
                        int is_get) {
  int first = 1;
  fputc('[', f);
  for (size_t i = rec->first_peer; i < rec->first_peer + rec->npeers; i++) {
    const peer_traffic *t = &prof->peers[i];
    if (t->is_get != is_get) continue;
    fprintf(f, "%s[%d, %ld, %ld]", first ? "" : ", ", t->pid, t->messages, t->words);
    first = 0;
  }
  fputc(']', f);
}

static void write_record(FILE *f, const bspk_proc *self, const bspk_profile *prof,
                         const superstep_record *rec) {
  fprintf(f, "{\"type\": \"superstep\", \"section\": %ld, \"pid\": %d, \"step\": %ld, ",
          prof->section, self->pid, rec->step);
  fprintf(f, "\"end\": \"%s\", \"t_start_s\": %.9f, \"compute_s\": %.9f, \"cpu_s\": %.9f, ",
          rec->at_end ? "bsp_end" : "bsp_sync", rec->t_start, rec->compute, rec->cpu);
  fprintf(f, "\"sync_s\": %.9f, ", rec->sync);
  fprintf(f, "\"wait_s\": %.9f, \"pack_s\": %.9f, \"pack_marked_s\": %.9f, \"direct_s\": %.9f, ",
          rec->wait, rec->pack, rec->pack_marked, rec->direct);
  fputs("\"ops\": {", f);
  int first = 1;
  for (int op = 0; op < BSPK_PROFILE_NOPS; op++) {
    if (!rec->op_calls[op]) continue;
    fprintf(f, "%s\"%s\": [%ld, %ld]", first ? "" : ", ", op_names[op], rec->op_calls[op],
            rec->op_bytes[op]);
    first = 0;
  }
  fputs("}, \"out\": ", f);
  write_peers(f, prof, rec, 0);
  fputs(", \"in_get\": ", f);
  write_peers(f, prof, rec, 1);
  fprintf(f, ", \"self_words\": %ld, \"push_reg\": %d, \"pop_reg\": %d, \"set_tagsize\": %d, ",
          rec->self_words, rec->push_reg, rec->pop_reg, rec->set_tagsize);
  fputs("\"phase\": ", f);
  bspk_json_write_string(f, rec->phase >= 0 ? prof->phases[rec->phase] : NULL);
  fputs(", ", f);
  if (rec->site_object >= 0)
    fprintf(f, "\"site\": [%d, \"0x%lx\"]}\n", rec->site_object, (unsigned long)rec->site_offset);
  else fputs("\"site\": null}\n", f);
}

void bspk_profile_end(bspk_proc *self) {
  bspk_profile *prof = self->profile;
  char *state = bspk_state_json_since(prof->run_start, prof->machine_start);
  self->profile = NULL;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) bspk_fatal("bsp_end", "out of memory for the superstep profile");
  for (size_t i = 0; i < prof->nrecords; i++) write_record(f, self, prof, &prof->records[i]);
  fprintf(f,
          "{\"type\": \"process\", \"section\": %ld, \"pid\": %d, \"supersteps\": %zu, "
          "\"t0_s\": %.9f, \"total_s\": %.9f, \"host\": ",
          prof->section, self->pid, prof->nrecords, self->start_time,
          bspk_now() - self->start_time);
  char host[256];
  bspk_json_write_string(f, host_name(host));
  fputs(", \"objects\": [", f);
  for (int i = 0; i < prof->nobjects; i++) {
    fputs(i ? ", {\"path\": " : "{\"path\": ", f);
    bspk_json_write_string(f, prof->objects[i].path);
    fprintf(f, ", \"base\": \"0x%lx\"}", (unsigned long)prof->objects[i].base);
  }
  fputs("], \"state\": ", f);
  fputs(state ? state : "null", f);
  free(state);
  fputs("}\n", f);
  fclose(f);
  /* One write per process with O_APPEND: the processes' lines never interleave. */
  int fd = open(prof->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ssize_t written = fd >= 0 ? write(fd, text, len) : -1;
  int err = errno;
  if (fd >= 0) close(fd);
  free(text);
  if (written != (ssize_t)len)
    bspk_fatal("bsp_end", "cannot write the profile BSPKIT_PROFILE='%s': %s", prof->path,
               written < 0 ? strerror(err) : "short write");
  /* When bsp_end returns on process 0, the file is complete (a program may read it then). */
  self->ops->barrier(self->engine);
  /* With threads the next section's processes read the count at their bsp_begin, which
   * comes after process 0's bsp_end. */
  if (self->pid == 0 || !self->ops->direct_access) atomic_fetch_add(&sections_done, 1);
  for (int i = 0; i < prof->nobjects; i++) free(prof->objects[i].path);
  for (int i = 0; i < prof->nphases; i++) free(prof->phases[i]);
  BSPK_FREE_ALL(prof->phases, prof->objects, prof->records, prof->peers, prof->messages,
                prof->words, prof);
}
