/*
 * sign_compare.c - what stays of the type families' difference: bsp_nprocs, bsp_pid and
 * bsp_hpmove return int, so comparing a call with an unsigned variable or with SIZE_MAX
 * directly, as MulticoreBSP programs may, gets a -Wsign-compare warning under -Wextra (the
 * values are right; a comparison with a constant that fits an int, such as sizeof(size_t),
 * does not warn). docs/compatibility.md says so; compat.sign_compare checks that each of
 * the three lines marked below is warned about, with -Werror.
 */
#include <bsp.h>
#include <stdint.h>

int main(void) {
  bsp_begin(bsp_nprocs());
  unsigned count = 0;
  for (unsigned i = 0; i < bsp_nprocs(); i++) count++; /* line 15: warned about */
  void *tag, *payload;
  size_t expected = sizeof(size_t);
  int empty = bsp_hpmove(&tag, &payload) == SIZE_MAX;      /* line 18: warned about */
  int other = bsp_hpmove(&tag, &payload) != expected;      /* line 19: warned about */
  int fine = bsp_hpmove(&tag, &payload) != sizeof(size_t); /* a constant: no warning */
  bsp_end();
  return count > 0 && empty && other && fine ? 0 : 1;
}
