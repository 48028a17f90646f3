/* mcbsp.c - MulticoreBSP for C's affinity and machine interface (mcbsp.h): every setting is
 * accepted and recorded, so that programs written for MulticoreBSP run unchanged and read
 * back what they set, but bspkit places its processes by its own rule (docs/compatibility.md). A
 * mutex guards the record: MulticoreBSP allows these calls from any thread, at any time. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/compiler.h"
#include "core/errors.h"
#include "core/proc.h"
#include "mcbsp.h"

BSPK_API enum mcbsp_affinity_mode MCBSP_DEFAULT_AFFINITY = SCATTER;
BSPK_API size_t MCBSP_DEFAULT_THREADS_PER_CORE = 1;
BSPK_API enum mcbsp_thread_numbering MCBSP_DEFAULT_THREAD_NUMBERING = CONSECUTIVE;
BSPK_API enum mcbsp_affinity_mode MCBSP_AFFINITY = SCATTER;
BSPK_API int *MCBSP_MANUAL_AFFINITY = NULL;

/* A setting and whether the program made it (else the default applies). */
typedef struct hint {
  size_t value;
  int set;
} hint;

typedef struct size_list {
  size_t *items;
  size_t length;
} size_list;

static pthread_mutex_t hints_lock = PTHREAD_MUTEX_INITIALIZER;
static hint affinity, available_cores, maximum_threads, threads_per_core, thread_numbering;
static size_list pinning, reserved_cores;

static void set_hint(hint *h, size_t value) {
  pthread_mutex_lock(&hints_lock);
  *h = (hint){value, 1};
  pthread_mutex_unlock(&hints_lock);
}

static size_t get_hint(const hint *h, size_t fallback) {
  pthread_mutex_lock(&hints_lock);
  size_t value = h->set ? h->value : fallback;
  pthread_mutex_unlock(&hints_lock);
  return value;
}

/* Replaces *list by a copy of items[0..length); a copy that cannot be made is an error. */
static void set_list(size_list *list, const size_t *items, size_t length, const char *call) {
  size_t *copy = NULL;
  if (items && length) {
    copy = malloc(length * sizeof *copy);
    if (!copy) bspk_fatal_on(call, -1, "out of memory: cannot copy %zu core numbers", length);
    memcpy(copy, items, length * sizeof *copy);
  }
  pthread_mutex_lock(&hints_lock);
  free(list->items);
  list->items = copy;
  list->length = copy ? length : 0;
  pthread_mutex_unlock(&hints_lock);
}

/* A malloc'd copy of *list (the caller frees it), or NULL when it is empty. */
static size_t *get_list(const size_list *list, const char *call) {
  pthread_mutex_lock(&hints_lock);
  size_t *copy = NULL;
  if (list->length) {
    copy = malloc(list->length * sizeof *copy);
    if (copy) memcpy(copy, list->items, list->length * sizeof *copy);
  }
  size_t length = list->length;
  pthread_mutex_unlock(&hints_lock);
  if (length && !copy)
    bspk_fatal_on(call, -1, "out of memory: cannot copy %zu core numbers", length);
  return copy;
}

BSPK_API void mcbsp_set_affinity_mode(enum mcbsp_affinity_mode mode) {
  set_hint(&affinity, (size_t)mode);
}
BSPK_API void mcbsp_set_available_cores(size_t num_cores) { set_hint(&available_cores, num_cores); }
BSPK_API void mcbsp_set_maximum_threads(size_t max) { set_hint(&maximum_threads, max); }
BSPK_API void mcbsp_set_threads_per_core(size_t n) { set_hint(&threads_per_core, n); }
BSPK_API void mcbsp_set_thread_numbering(enum mcbsp_thread_numbering numbering) {
  set_hint(&thread_numbering, (size_t)numbering);
}
BSPK_API void mcbsp_set_pinning(const size_t *cores, size_t length) {
  set_list(&pinning, cores, length, "mcbsp_set_pinning");
  set_hint(&affinity, MANUAL);
}
BSPK_API void mcbsp_set_reserved_cores(const size_t *cores, size_t length) {
  set_list(&reserved_cores, cores, length, "mcbsp_set_reserved_cores");
}

BSPK_API enum mcbsp_affinity_mode mcbsp_get_affinity_mode(void) {
  return (enum mcbsp_affinity_mode)get_hint(&affinity, (size_t)MCBSP_DEFAULT_AFFINITY);
}
BSPK_API size_t mcbsp_get_available_cores(void) {
  return get_hint(&available_cores, (size_t)bspk_cores_available());
}
BSPK_API size_t mcbsp_get_maximum_threads(void) {
  return get_hint(&maximum_threads, (size_t)bspk_cores_available());
}
BSPK_API size_t mcbsp_get_threads_per_core(void) {
  return get_hint(&threads_per_core, MCBSP_DEFAULT_THREADS_PER_CORE);
}
BSPK_API enum mcbsp_thread_numbering mcbsp_get_thread_numbering(void) {
  return (enum mcbsp_thread_numbering)get_hint(&thread_numbering,
                                               (size_t)MCBSP_DEFAULT_THREAD_NUMBERING);
}
BSPK_API size_t *mcbsp_get_pinning(void) { return get_list(&pinning, "mcbsp_get_pinning"); }
BSPK_API size_t mcbsp_get_reserved_cores_number(void) {
  pthread_mutex_lock(&hints_lock);
  size_t n = reserved_cores.length;
  pthread_mutex_unlock(&hints_lock);
  return n;
}
BSPK_API size_t *mcbsp_get_reserved_cores(void) {
  return get_list(&reserved_cores, "mcbsp_get_reserved_cores");
}
