/*
 * c89_types.c - the type-generic bsp_qsize, bsp_get_tag and bsp_set_tagsize of bsp.h in
 * -std=c89 -pedantic (GCC's _Generic and inline as extensions, without a warning):
 * tests/compat/CMakeLists.txt builds it with -Werror, which only passes if the macros are
 * there (the int functions would be given an unsigned * and a size_t *), and runs it
 * (compat.c89_types.threads.p1): exit status 0 when the values written are right.
 * native_types.c checks the same calls byte by byte.
 */
#include <bsp.h>

int main(void) {
  unsigned nmessages = 0;
  size_t nbytes = 0, status = 0, tag_size = 0;
  int old_style = 0;
  bsp_begin(1);
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  bsp_qsize(&nmessages, &nbytes);
  bsp_qsize(&old_style, NULL);
  bsp_get_tag(&status, NULL);
  bsp_end();
  return nmessages == 0 && nbytes == 0 && old_style == 0 && status == (size_t)-1 ? 0 : 1;
}
