/*
 * test_bspalg_count.c - bspalg_count writes a count as python/bspkit/units.py's count does
 * (the drivers' human line: W = 1 M flop, not 1e+06): the expected texts are count's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bspalg.h"

int main(void) {
  static const struct {
    double v;
    const char *text;
  } cases[] = {
      {0, "0"},
      {1, "1"},
      {0.5, "0.5"},
      {0.0001, "< 0.001"},
      {7, "7"},
      {999, "999"},
      {999.5, "999.5"},
      {1000, "1,000"},
      {1002, "1,002"},
      {12345, "12,345"},
      {999999, "999,999"},
      {999999.6, "1,000,000"},
      {1e6, "1 M"},
      {1000002, "1 M"},
      {2147483648.0, "2.147 G"},
      {3.5e12, "3.5 T"},
      {1.234e15, "1.234 P"},
      {2.5e18, "2,500 P"},
      {999.96e6, "1,000 M"},
      {-12345, "-12,345"},
      {1234.5, "1,234"},
      {-0.5, "-0.5"},
      {NAN, "\xe2\x80\x93"},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[64];
    bspalg_count(text, sizeof text, cases[i].v);
    if (strcmp(text, cases[i].text) != 0) {
      fprintf(stderr, "FAIL: bspalg_count(%.17g) = '%s', expected '%s'\n", cases[i].v, text,
              cases[i].text);
      failed = 1;
    }
  }
  if (!failed) printf("PASS: bspalg_count, %zu cases\n", sizeof cases / sizeof cases[0]);
  return failed;
}
