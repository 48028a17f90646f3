/*
 * records.h - the records of a combined block: what one process sends another in one
 * superstep, written at the call (drma.c, bsmp.c, collectives.c) and read at the sync.
 */
#ifndef BSPKIT_RECORDS_H
#define BSPKIT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

/* One record in a combined block; payloads follow, padded to 8 bytes so that a payload
 * handed out by bsp_hpmove is aligned for any scalar type. */
enum bspk_record_kind {
  BSPK_REC_PUT = 1,       /* data for a registered area                              */
  BSPK_REC_SEND = 2,      /* a BSMP message                                          */
  BSPK_REC_COLL = 3,      /* data for the receiver's collective buffer               */
  BSPK_REC_GET = 4,       /* a get request (engines without direct access); no data */
  BSPK_REC_REPLY = 5,     /* the data answering one get request                      */
  BSPK_REC_PUT_LARGE = 6, /* a put whose data follows as its own message; no data  */
  BSPK_REC_GET_LARGE = 7, /* a get answered by its own message from the owner's memory; no data */
};
typedef struct bspk_record {
  uint32_t kind;
  int32_t slot;   /* PUT, GET: registration slot; SEND: tag size */
  int32_t offset; /* PUT, GET: offset in the area; COLL: offset in the collective buffer */
  int32_t nbytes; /* payload bytes */
} bspk_record;

static inline size_t bspk_pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bytes a record takes in its block, header included. */
static inline size_t bspk_record_size(const bspk_record *rec) {
  switch (rec->kind) {
    case BSPK_REC_GET:
    case BSPK_REC_PUT_LARGE:
    case BSPK_REC_GET_LARGE: return sizeof *rec;
    case BSPK_REC_SEND:
      return sizeof *rec + bspk_pad8((size_t)rec->slot) + bspk_pad8((size_t)rec->nbytes);
    default: return sizeof *rec + bspk_pad8((size_t)rec->nbytes);
  }
}

#endif
