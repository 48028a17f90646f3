/*
 * bspk_machine.h - what the probe and the benchmarks record about the machine they ran on
 * (part of common/, see README.md). Linux files; elsewhere the answers are "unknown".
 */
#ifndef BSPK_MACHINE_H
#define BSPK_MACHINE_H

#include <stdio.h>
#include <string.h>

/* The CPU's model name from /proc/cpuinfo ("model name" on x86, "Hardware" or "cpu model"
 * on some other architectures), or "unknown". */
static inline void bspk_cpu_model(char *buf, size_t n) {
  snprintf(buf, n, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Hardware", 8) == 0 ||
        strncmp(line, "cpu model", 9) == 0) {
      char *v = strchr(line, ':');
      if (v) {
        v++;
        while (*v == ' ' || *v == '\t') v++;
        v[strcspn(v, "\n")] = 0;
        snprintf(buf, n, "%s", v);
        break;
      }
    }
  }
  fclose(f);
}

#endif /* BSPK_MACHINE_H */
