/*
 * wrong_pointer_type.c - a program that must not compile with -Werror: a long * status for
 * bsp_get_tag is neither family's type (int, unsigned, size_t; bsp.h, "One header, both type
 * families"), so it gets the compiler's incompatible-pointer diagnostic, as the int function
 * would give it, instead of 4 of its bytes written (tests/compat/CMakeLists.txt,
 * compat.wrong_pointer_type).
 */
#include <bsp.h>

int main(void) {
  long status = 0;
  bsp_begin(1);
  bsp_get_tag(&status, NULL);
  bsp_end();
  return status == -1 ? 0 : 1;
}
