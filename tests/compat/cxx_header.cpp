// cxx_header.cpp - bsp.h and mcbsp.h in C++ (tests/compat/CMakeLists.txt compiles it with
// g++ -fsyntax-only -Wall -Wextra -Werror; the CMake project itself is C only). C++ has no
// _Generic, so there bsp_qsize, bsp_get_tag and bsp_set_tagsize are the int functions alone
// (bsp.h, "One header, both type families"): this file must compile as it is, and with
// -DBSPKIT_TEST_SIZE_T_POINTER it must not (a size_t * is a compile error in C++, never a
// wrong value), nor with -DBSPKIT_TEST_UNSIGNED_POINTER.
#include <bsp.h>
#include <mcbsp.h>

#include <cstddef>

static void spmd() {
  bsp_begin(bsp_nprocs());
  int tag_size = 0;
  bsp_set_tagsize(&tag_size);
  bsp_sync();
  mcbsp_nprocs_t n = 0;
  mcbsp_size_t nbytes = 0;
  bsp_qsize(&n, &nbytes);
  bsp_qsize(&n, NULL);
  bsp_size_t status = 0;
  bsp_get_tag(&status, NULL);
  void (*qsize)(bsp_nprocs_t *, bsp_size_t *) = &bsp_qsize;
  qsize(&n, &nbytes);
  // MulticoreBSP's types, as C++ code passes them: through the width-explicit functions.
  unsigned count = 0;
  std::size_t total = 0;
  bspk_qsize_as(&count, BSPK_OUT_UNSIGNED, &total, BSPK_OUT_SIZE_T);
  bspk_get_tag_as(&total, BSPK_OUT_SIZE_T, NULL);
  // size_t and unsigned values where bsp.h takes int convert implicitly, as in C.
  double x[2] = {0, 0};
  bsp_push_reg(x, sizeof x);
  bsp_sync();
  std::size_t offset = sizeof(double), size = sizeof(double);
  unsigned pid = 0;
  bsp_put(pid, &x[0], x, offset, size);
#if defined(BSPKIT_TEST_SIZE_T_POINTER)
  std::size_t wrong = 0;
  bsp_qsize(&n, &wrong);
#elif defined(BSPKIT_TEST_UNSIGNED_POINTER)
  unsigned wrong = 0;
  bsp_qsize(&wrong, &nbytes);
#endif
  bsp_sync();
  bsp_pop_reg(x);
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
