/*
 * records.t.c - unit test of the combined block's record layout (records.h), written by
 * the call side (drma.c, bsmp.c) and walked by the sync side with bspk_record_size: every
 * record header and every payload starts 8-byte aligned (bsp_hpmove hands payloads out in
 * place), records follow each other in issue order, and the bytes arrive intact.
 */
#include <string.h>

#include "bsp.h"
#include "core/fake_processes.t.h"
#include "core/proc.h"
#include "core/records.h"
#include "core/registrations.h"

static char area[2][64];

static int aligned8(const char *block, const char *p) { return (p - block) % 8 == 0; }

int main(void) {
  fake_begin(2);
  for (int q = 0; q < 2; q++) {
    fake_enter(q);
    bsp_push_reg(area[q], sizeof area[q]);
  }
  fake_sync_registrations();

  /* Process 0 sends process 1, in this order: puts and messages of odd sizes, a get. */
  bspk_proc *self = fake_enter(0);
  self->tagsize = 3;
  const char data[] = "abcdefghijklmnopqrstuvwxyz";
  const char tag[3] = {'T', 'A', 'G'};
  char got[8];
  const int put_sizes[] = {1, 7, 8, 9};
  for (int i = 0; i < 4; i++) bsp_put(1, data + i, area[0], 2 * i, put_sizes[i]);
  bsp_send(1, tag, data, 5);
  bsp_send(1, tag, data, 0);
  bsp_get(1, area[0], 8, got, 4);
  bsp_hpput(1, data + 3, area[0], 40, 11);

  const bspk_outbox *ob = bspk_current_outbox(self, 1);
  EXPECT(ob->n_put == 5 && ob->n_send == 2 && ob->n_get == 1 && ob->send_bytes == 5);
  EXPECT(bspk_current_outbox(self, 0)->len == 0); /* nothing for process 0 itself */

  /* Walk the block as the sync does. */
  const uint32_t kinds[] = {BSPK_REC_PUT,  BSPK_REC_PUT,  BSPK_REC_PUT, BSPK_REC_PUT,
                            BSPK_REC_SEND, BSPK_REC_SEND, BSPK_REC_GET, BSPK_REC_PUT};
  const int nbytes[] = {1, 7, 8, 9, 5, 0, 4, 11};
  const char *p = ob->data, *end = ob->data + ob->len;
  int n = 0;
  for (; p < end && n < 8; n++) {
    const bspk_record *rec = (const bspk_record *)p;
    const char *payload = p + sizeof *rec;
    EXPECT(aligned8(ob->data, p) && aligned8(ob->data, payload));
    EXPECT(rec->kind == kinds[n] && rec->nbytes == nbytes[n]);
    if (rec->kind == BSPK_REC_PUT) {
      int i = n < 4 ? n : 3; /* the hpput copies data + 3 */
      EXPECT(rec->slot == bspk_lookup(self, area[0]));
      EXPECT(rec->offset == (n < 4 ? 2 * n : 40));
      EXPECT(memcmp(payload, data + i, (size_t)rec->nbytes) == 0);
    } else if (rec->kind == BSPK_REC_SEND) {
      EXPECT(rec->slot == 3 && memcmp(payload, tag, 3) == 0);
      EXPECT(aligned8(ob->data, payload + bspk_pad8(3)));
      EXPECT(memcmp(payload + bspk_pad8(3), data, (size_t)rec->nbytes) == 0);
    } else {
      EXPECT(rec->offset == 8); /* a request: no data in the block */
    }
    p += bspk_record_size(rec);
  }
  EXPECT(n == 8 && p == end);
  return fake_end("records.t");
}
