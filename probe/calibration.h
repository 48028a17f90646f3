/*
 * calibration.h - the short calibration of bspprobe (issue 17) for other BSP programs: the
 * algorithm drivers run it inside themselves, before and after their repetitions, so that it
 * measures the machine in the state their own process is in (on a shared VM that state is set
 * per process: two launches a second apart can differ by 3x in g and l). The record is the
 * `calibration` record of docs/probe-format.md, the same quantities as the probe's own rounds.
 * All three calls are collective (every process, between bsp_begin and bsp_end).
 */
#ifndef BSPPROBE_CALIBRATION_H
#define BSPPROBE_CALIBRATION_H

typedef struct bspp_calibration bspp_calibration;

/* Registers its areas (one superstep); quick: the quick probe's dot product size. */
bspp_calibration *bspp_calibration_begin(int quick);
/* One round; on process 0 the record as one line of JSON (without the newline; valid until
 * the next call), elsewhere NULL. */
const char *bspp_calibration_round(bspp_calibration *cal, int round);
/* Deregisters and frees (one superstep). */
void bspp_calibration_end(bspp_calibration *cal);

#endif /* BSPPROBE_CALIBRATION_H */
