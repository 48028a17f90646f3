/*
 * own_oxford_names.c - a program that brings its own definitions of the Oxford toolset's
 * names bsp_pushregister, bsp_popregister, bsp_set_tag_size and bsp_bsmp_info, as programs
 * carried between BSPlib implementations do (bsp.h declares these names too). Built three
 * ways by tests/compat/CMakeLists.txt, each with -Wall -Wextra -Werror:
 *   -DOWN_MACROS                            #define bsp_pushregister bsp_push_reg & co.,
 *                                           after #include <bsp.h>
 *   -DOWN_FUNCTIONS                         functions of those names, which take precedence
 *                                           over libbsp's
 *   -DOWN_STATIC -DBSPKIT_NO_OXFORD_NAMES   static functions of those names
 * Each run checks that the program's own definitions were the ones called (they count their
 * calls) and that they did their job. Exits 0 exactly when every check passed; a failed
 * check ends the run through bsp_abort (status 1).
 */
#include <bsp.h>

enum { MAX_PROCS = 64 };

#if defined(OWN_MACROS)
#define bsp_pushregister bsp_push_reg
#define bsp_popregister bsp_pop_reg
#define bsp_set_tag_size bsp_set_tagsize
#define bsp_bsmp_info bsp_qsize
static int own_calls(void) { return 4; } /* a macro is not counted: it cannot be missed */
#else
/* One count per process: on the threads back end the processes share globals. */
static int calls[MAX_PROCS];
static int own_calls(void) { return calls[bsp_pid()]; }
#if defined(OWN_STATIC)
#define OWN static
#else
#define OWN /* bsp.h's declarations are their prototypes */
#endif
OWN void bsp_pushregister(const void *ident, bsp_size_t size) {
  calls[bsp_pid()]++;
  bsp_push_reg(ident, size);
}
OWN void bsp_popregister(const void *ident) {
  calls[bsp_pid()]++;
  bsp_pop_reg(ident);
}
OWN void bsp_set_tag_size(bsp_size_t *tag_nbytes) {
  calls[bsp_pid()]++;
  bsp_set_tagsize(tag_nbytes);
}
OWN void bsp_bsmp_info(bsp_nprocs_t *nmessages, bsp_size_t *accum_nbytes) {
  calls[bsp_pid()]++;
  bsp_qsize(nmessages, accum_nbytes);
}
#endif

static void check(int ok, const char *what) {
  if (!ok) bsp_abort("own_oxford_names: %s\n", what);
}

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  check(p <= MAX_PROCS, "too many processes for this test");
  int value = -1;
  bsp_pushregister(&value, sizeof value);
  int tag_size = sizeof(int);
  bsp_set_tag_size(&tag_size);
  check(tag_size == 0, "bsp_set_tag_size did not give back the old tag size 0");
  bsp_sync();

  int right = (s + 1) % p;
  bsp_put(right, &s, &value, 0, sizeof s);
  bsp_send(right, &s, &s, sizeof s);
  bsp_sync();

  int left = (s + p - 1) % p;
  int nmessages = -1, nbytes = -1;
  bsp_bsmp_info(&nmessages, &nbytes);
  check(nmessages == 1 && nbytes == (int)sizeof(int), "bsp_bsmp_info counts are wrong");
  check(value == left, "the put into the area registered by bsp_pushregister went wrong");
  bsp_popregister(&value);
  bsp_sync();
  check(own_calls() == 4, "the program's own definitions were not the ones called");
  bsp_end();
  return 0;
}
