/*
 * bspk_machine.h - what the probe and the benchmarks record about the machine they ran on
 * (part of common/plain/, see common/README.md). Linux files; elsewhere the answers are "unknown".
 */
#ifndef BSPK_MACHINE_H
#define BSPK_MACHINE_H

#include <stdio.h>
#include <stdlib.h>
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

/* One number from a file such as /sys/fs/cgroup/memory.max; 0 when absent or "max". */
static inline unsigned long long bspk_read_bytes_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char text[64] = "";
  unsigned long long v = 0;
  if (fgets(text, sizeof text, f) && text[0] >= '0' && text[0] <= '9') v = strtoull(text, NULL, 10);
  fclose(f);
  return v;
}

/* The memory a run can still use, in bytes: MemAvailable of /proc/meminfo, or less where a
 * cgroup (a container, a batch job) limits this process; 0 when unknown. Checked before a
 * big allocation so that a run too large is refused with the numbers instead of being
 * killed by the kernel's out-of-memory killer. */
static inline unsigned long long bspk_available_memory_bytes(void) {
  unsigned long long avail = 0;
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "MemAvailable:", 13) == 0) avail = strtoull(line + 13, NULL, 10) * 1024ull;
    fclose(f);
  }
  unsigned long long limit = bspk_read_bytes_file("/sys/fs/cgroup/memory.max");
  unsigned long long used = bspk_read_bytes_file("/sys/fs/cgroup/memory.current");
  if (limit > 0) {
    unsigned long long left = limit > used ? limit - used : 0;
    if (avail == 0 || left < avail) avail = left;
  }
  return avail;
}

#endif /* BSPK_MACHINE_H */
