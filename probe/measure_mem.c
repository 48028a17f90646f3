/* measure_mem.c - placeholder until the mem suite lands (issue 14). */
#include "probe.h"

void measure_mem(probe_ctx *c) { (void)c; }
