/* measure_disk.c - placeholder until the disk suite lands (issue 14). */
#include "probe.h"

void measure_disk(probe_ctx *c) { (void)c; }
