/* measure_pp.c - placeholder until the pp suite lands (issue 14). */
#include "probe.h"

void measure_pp(probe_ctx *c) { (void)c; }
