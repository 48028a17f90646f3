/* engine_registry.c - choosing the back end at run time (BSPKIT_BACKEND), and the services
 * the core gives it (engine.h).
 *
 * The threads and procs engines are built in. The MPI engines are plugins (libbspkit_mpi.so),
 * loaded only when asked for, so that programs on the default back end need no MPI installed. Which
 * names exist is set in src/CMakeLists.txt (BSPKIT_PLUGIN_BACKENDS, BSPKIT_ALL_BACKENDS). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buffers.h"
#include "core/engine.h"
#include "core/errors.h"

#ifndef BSPKIT_PLUGIN_BUILD_DIR
#define BSPKIT_PLUGIN_BUILD_DIR ""
#endif
#ifndef BSPKIT_PLUGIN_INSTALL_DIR
#define BSPKIT_PLUGIN_INSTALL_DIR ""
#endif
/* The back ends' names come from src/CMakeLists.txt, where they are listed once. */
#ifndef BSPKIT_PLUGIN_BACKENDS
#error "BSPKIT_PLUGIN_BACKENDS (the plugin back ends' names) is set by src/CMakeLists.txt"
#endif

/* Is `name` one of the space-separated words of `list`? */
static int is_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *w = list; *w;) {
    size_t len = strcspn(w, " ");
    if (len == n && strncmp(w, name, n) == 0) return 1;
    w += len;
    w += strspn(w, " ");
  }
  return 0;
}

/* The plugin engines live in one library; each exports its ops as
 * <BSPK_ENGINE_SYMBOL>_<its name with '-' as '_'>. */
static const bspk_engine_ops *load_plugin(const char *backend) {
  const char *dirs[] = {getenv("BSPKIT_PLUGIN_DIR"), BSPKIT_PLUGIN_BUILD_DIR,
                        BSPKIT_PLUGIN_INSTALL_DIR};
  char path[4096], last_error[1024] = "no plugin directory known";
  void *handle = NULL;
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !handle; i++) {
    if (!dirs[i] || !*dirs[i]) continue;
    snprintf(path, sizeof path, "%s/libbspkit_mpi.so", dirs[i]);
    handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) snprintf(last_error, sizeof last_error, "%s", dlerror());
  }
  if (!handle)
    bspk_fatal_on("bsp_begin", -1,
                  "back end '%s' needs the MPI plugin libbspkit_mpi.so, which could not be "
                  "loaded (%s); build bspkit with MPI (Debian: apt-get install "
                  "libopenmpi-dev) or set BSPKIT_PLUGIN_DIR",
                  backend, last_error);
  const bspk_services **services = dlsym(handle, BSPK_SERVICES_SYMBOL);
  if (!services)
    bspk_fatal_on("bsp_begin", -1, "back end '%s': the MPI plugin lacks %s", backend,
                  BSPK_SERVICES_SYMBOL);
  *services = &bspk_engine_services;
  char symbol[128];
  snprintf(symbol, sizeof symbol, "%s_%s", BSPK_ENGINE_SYMBOL, backend);
  for (char *c = symbol + strlen(BSPK_ENGINE_SYMBOL); *c; c++) /* within the snprintf'd text */
    if (*c == '-') *c = '_';
  const bspk_engine_ops *ops = dlsym(handle, symbol);
  if (!ops)
    bspk_fatal_on("bsp_begin", -1, "back end '%s': the MPI plugin lacks %s", backend, symbol);
  return ops;
}

const bspk_engine_ops *bspk_engine_select(void) {
  const char *name = getenv("BSPKIT_BACKEND");
  if (!name || !*name || strcmp(name, bspk_threads_engine.name) == 0) return &bspk_threads_engine;
  if (strcmp(name, bspk_procs_engine.name) == 0) return &bspk_procs_engine;
  if (is_listed(BSPKIT_PLUGIN_BACKENDS, name)) return load_plugin(name);
  bspk_fatal_on("bsp_begin", -1, "unknown back end '%s' (BSPKIT_BACKEND); available: %s", name,
                BSPKIT_ALL_BACKENDS);
}

/* ---- services for engines (engine.h): the built-in engine's, and each plugin's ---- */

static void *engine_realloc(void *p, size_t n, const char *call, const char *what) {
  return bspk_xrealloc(NULL, p, n, call, what);
}

const bspk_services bspk_engine_services = {bspk_fatal_on, engine_realloc, bspk_exit_after};
