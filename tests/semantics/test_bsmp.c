/*
 * test_bsmp.c - bulk synchronous message passing: bsp_send, bsp_hpsend, bsp_qsize,
 * bsp_get_tag, bsp_move, bsp_hpmove, bsp_set_tagsize.
 *
 *  - the queue is empty at the start and before the first sync; messages arrive at the sync,
 *    from every process including the process itself, with the right tags and payloads
 *    (checked as a multiset: the order between senders is unspecified);
 *  - bsp_qsize counts messages and payload bytes and goes down with every move;
 *  - bsp_get_tag returns the first message's payload size and tag without removing it, and
 *    status -1 on an empty queue; bsp_hpmove returns -1 on an empty queue;
 *  - the default tag size is 0; bsp_set_tagsize returns the previous size and takes effect
 *    at the next sync: messages sent in the superstep that changes it keep the old size, and
 *    messages already in the queue keep theirs;
 *  - tag size 0, zero-length payloads;
 *  - messages not moved are gone after the next sync;
 *  - bsp_move copies at most reception_nbytes bytes (truncation; 0 copies nothing);
 *  - bsp_hpmove gives pointers to the tag and payload (valid until the next sync);
 *  - bsp_hpsend delivers like bsp_send;
 *  - 10^5 small messages per process in one superstep, all received once with the right
 *    contents.
 */
#include "testutil.h"

#define SENT 0xEE
#define MAXTAG 16
#define HPBUF (MAXTAG + 128) /* size of each bsp_hpsend buffer */

typedef struct {
  int src, len;
  uint64_t c; /* content seed */
  int matched;
} expmsg;

/* The messages process src sends to dst in superstep `step` (of a given section). */
static int nmsgs(int src, int dst, int step) {
  return (src + 2 * dst + step) % 3 + (src == dst); /* 0..3 */
}
static int msglen(int src, int dst, int step, int k) {
  int l = (src * 7 + dst * 3 + step * 5 + k * 11) % 9; /* 0..8 */
  return l == 8 ? 0 : l * 13;                          /* 0..91 bytes, zero-length often */
}
static uint64_t msgseed(int src, int dst, int step, int k) {
  return ((uint64_t)step << 40) ^ ((uint64_t)src << 24) ^ ((uint64_t)dst << 8) ^ (uint64_t)k;
}
static void msgtag(unsigned char *tag, int tagsize, int src, int dst, uint64_t c) {
  tu_fill(tag, (size_t)tagsize, (uint64_t)src, (uint64_t)dst, c ^ 0x7a67ULL);
}

/* Sends this process's messages of `step`, with tags of tagsize bytes. hp selects
 * bsp_hpsend for every other message (its buffers are kept until the next sync). */
static void send_step(int step, int tagsize, int hp, unsigned char **keep, int *nkeep) {
  int p = bsp_nprocs(), s = bsp_pid();
  for (int d = 0; d < p; d++)
    for (int k = 0; k < nmsgs(s, d, step); k++) {
      int len = msglen(s, d, step, k);
      uint64_t c = msgseed(s, d, step, k);
      if (hp && k % 2 == 0) {
        unsigned char *buf = (unsigned char *)tu_malloc(HPBUF);
        msgtag(buf, tagsize, s, d, c);
        tu_fill(buf + MAXTAG, (size_t)len, (uint64_t)s, (uint64_t)d, c);
        bsp_hpsend(d, buf, buf + MAXTAG, len);
        keep[(*nkeep)++] = buf;
      } else {
        unsigned char tag[MAXTAG], payload[128];
        msgtag(tag, tagsize, s, d, c);
        tu_fill(payload, (size_t)len, (uint64_t)s, (uint64_t)d, c);
        bsp_send(d, tag, payload, len);
        memset(tag, 0, sizeof tag); /* buffered: must not change the message */
        memset(payload, 0, sizeof payload);
      }
    }
}

/* The messages this process must receive from `step`. */
static expmsg *expected(int step, int *n, int *bytes) {
  int p = bsp_nprocs(), s = bsp_pid();
  int cnt = 0;
  for (int src = 0; src < p; src++) cnt += nmsgs(src, s, step);
  expmsg *e = (expmsg *)tu_malloc(sizeof(expmsg) * (size_t)(cnt + 1));
  int i = 0;
  *bytes = 0;
  for (int src = 0; src < p; src++)
    for (int k = 0; k < nmsgs(src, s, step); k++) {
      e[i].src = src;
      e[i].len = msglen(src, s, step, k);
      e[i].c = msgseed(src, s, step, k);
      e[i].matched = 0;
      *bytes += e[i].len;
      i++;
    }
  *n = cnt;
  return e;
}

static void check_empty(const char *what) {
  int n = -5, bytes = -5, status = -5;
  unsigned char tag[MAXTAG];
  memset(tag, SENT, sizeof tag);
  bsp_qsize(&n, &bytes);
  TU_EQ(what, 0, n);
  TU_EQ(what, 0, bytes);
  bsp_get_tag(&status, tag);
  TU_CHECK(status == -1, "%s: bsp_get_tag status on an empty queue: expected -1, got %d", what,
           status);
  void *tp = NULL, *pp = NULL;
  int r = bsp_hpmove(&tp, &pp);
  TU_CHECK(r == -1, "%s: bsp_hpmove on an empty queue: expected -1, got %d", what, r);
}

/* Finds an unmatched expected message with this tag (of tagsize bytes) and payload. */
static int match(expmsg *e, int n, int tagsize, const unsigned char *tag,
                 const unsigned char *payload, int len) {
  int s = bsp_pid();
  unsigned char et[MAXTAG], ep[128];
  for (int i = 0; i < n; i++) {
    if (e[i].matched || e[i].len != len) continue;
    msgtag(et, tagsize, e[i].src, s, e[i].c);
    if (memcmp(et, tag, (size_t)tagsize) != 0) continue;
    tu_fill(ep, (size_t)len, (uint64_t)e[i].src, (uint64_t)s, e[i].c);
    if (len > 0 && memcmp(ep, payload, (size_t)len) != 0) continue;
    e[i].matched = 1;
    return i;
  }
  return -1;
}

/* Receives up to `limit` messages of `step` (tags of tagsize bytes) with get_tag + move,
 * checking qsize along the way; limit < 0: all, and then the queue must be empty.
 * Returns the number of messages received. */
static int receive_step(int step, int tagsize, int limit, const char *what) {
  int nexp, bexp;
  expmsg *e = expected(step, &nexp, &bexp);
  int n = -1, bytes = -1;
  bsp_qsize(&n, &bytes);
  char w[160];
  snprintf(w, sizeof w, "%s: bsp_qsize number of messages", what);
  TU_EQ(w, nexp, n);
  snprintf(w, sizeof w, "%s: bsp_qsize payload bytes", what);
  TU_EQ(w, bexp, bytes);
  int todo = limit < 0 || limit > nexp ? nexp : limit;
  int left_bytes = bexp;
  for (int i = 0; i < todo; i++) {
    unsigned char tag[MAXTAG], tag2[MAXTAG], payload[128 + 8];
    int status = -2, status2 = -2;
    memset(tag, SENT, sizeof tag);
    memset(tag2, SENT, sizeof tag2);
    bsp_get_tag(&status, tag);
    TU_CHECK(status >= 0 && status <= 128, "%s: message %d of %d: bsp_get_tag status %d", what, i,
             nexp, status);
    TU_ALL("bytes of the tag buffer beyond the message's tag size", tag + tagsize, SENT,
           (size_t)(MAXTAG - tagsize));
    bsp_get_tag(&status2, tag2); /* does not remove the message */
    TU_EQ("bsp_get_tag twice: status", status, status2);
    TU_MEMEQ("bsp_get_tag twice: tag", tag, tag2, MAXTAG);
    bsp_qsize(&n, &bytes);
    TU_EQ("bsp_qsize after bsp_get_tag (must not remove)", nexp - i, n);
    memset(payload, SENT, sizeof payload);
    bsp_move(payload, status);
    TU_ALL("payload buffer beyond the message", payload + status, SENT, 8);
    int m = match(e, nexp, tagsize, tag, payload, status);
    if (m < 0) {
      fprintf(stderr, "%s: received message: %d payload bytes, tag", what, status);
      for (int j = 0; j < tagsize; j++) fprintf(stderr, " %02x", tag[j]);
      fprintf(stderr, "; expected (not yet received):");
      for (int j = 0; j < nexp; j++)
        if (!e[j].matched) fprintf(stderr, " [from %d, %d bytes]", e[j].src, e[j].len);
      fprintf(stderr, "\n");
      TU_CHECK(0,
               "%s: message %d of %d (%d bytes) matches no expected message (wrong "
               "tag, payload or duplicate)",
               what, i, nexp, status);
    }
    left_bytes -= status;
    bsp_qsize(&n, &bytes);
    TU_EQ("bsp_qsize number after bsp_move", nexp - i - 1, n);
    TU_EQ("bsp_qsize bytes after bsp_move", left_bytes, bytes);
  }
  if (limit < 0) check_empty("queue after moving every message");
  free(e);
  return todo;
}

int main(void) {
  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  int next = (s + 1) % p, prev = (s + p - 1) % p;
  unsigned char **keep = (unsigned char **)tu_malloc(sizeof(unsigned char *) * (size_t)(4 * p + 4));
  int nkeep = 0;

  /* ---- superstep 0: empty queue, default tag size 0 ---- */
  check_empty("queue at the start");
  send_step(0, 0, 0, keep, &nkeep);
  check_empty("queue before the first sync (messages delivered early)");
  bsp_sync();

  /* ---- superstep 1: receive (tag size 0), change the tag size to 8 half-way ---- */
  int got = receive_step(0, 0, nmsgs(0, s, 0) + 1, "superstep 1, messages with tag size 0");
  int t = 8;
  bsp_set_tagsize(&t);
  TU_EQ("bsp_set_tagsize: previous (default) tag size", 0, t);
  {
    /* the rest of the queue keeps tag size 0 */
    int nexp, bexp;
    expmsg *e = expected(0, &nexp, &bexp);
    free(e);
    int n, b;
    bsp_qsize(&n, &b);
    TU_EQ("bsp_qsize after bsp_set_tagsize", nexp - got, n);
    for (int i = got; i < nexp; i++) {
      unsigned char tag[MAXTAG];
      int status = -2;
      memset(tag, SENT, sizeof tag);
      bsp_get_tag(&status, tag);
      TU_CHECK(status >= 0, "queued message after bsp_set_tagsize: status %d", status);
      TU_ALL("tag of a queued 0-tag message after bsp_set_tagsize(8)", tag, SENT, MAXTAG);
      unsigned char none = SENT;
      bsp_move(&none, 0);
      TU_EQ("bsp_move(buf, 0) wrote into buf", SENT, none);
    }
    check_empty("queue after moving the rest");
  }
  send_step(1, 0, 0, keep, &nkeep); /* sent in the superstep that changes it: old size 0 */
  bsp_sync();

  /* ---- superstep 2: messages of superstep 1 have 0-byte tags; send with 8 ---- */
  receive_step(1, 0, -1, "superstep 2, messages sent while the tag size changed 0 -> 8");
  send_step(2, 8, 0, keep, &nkeep);
  t = 3;
  bsp_set_tagsize(&t);
  TU_EQ("bsp_set_tagsize: previous tag size", 8, t);
  bsp_sync();

  /* ---- superstep 3: 8-byte tags (sent in the superstep that changed it to 3) ---- */
  receive_step(2, 8, -1, "superstep 3, messages sent while the tag size changed 8 -> 3");
  send_step(3, 3, 1, keep, &nkeep); /* with hpsend for some */
  bsp_sync();
  for (int i = 0; i < nkeep; i++) /* hpsend buffers may be reused after the sync */
    memset(keep[i], 0, HPBUF), free(keep[i]);
  nkeep = 0;

  /* ---- superstep 4: 3-byte tags, half hpsend ---- */
  receive_step(3, 3, -1, "superstep 4, tag size 3, bsp_send and bsp_hpsend");
  t = 8;
  bsp_set_tagsize(&t);
  TU_EQ("bsp_set_tagsize: previous tag size", 3, t);
  bsp_sync();
  check_empty("queue after a sync without sends");

  /* ---- messages not moved are gone after the next sync ---- */
  send_step(5, 8, 0, keep, &nkeep);
  bsp_sync();
  receive_step(5, 8, 1, "partial receive");
  bsp_sync();
  check_empty("queue after a sync (unmoved messages must be dropped)");
  send_step(6, 8, 0, keep, &nkeep);
  bsp_sync();
  receive_step(6, 8, 0, "no receive at all");
  send_step(7, 8, 0, keep, &nkeep);
  bsp_sync();
  receive_step(7, 8, -1, "only the new messages after a superstep with unmoved ones");

  /* ---- truncation by bsp_move ---- */
  {
    unsigned char payload[100], tag[8], buf[128];
    tu_fill(payload, sizeof payload, (uint64_t)s, 90, 0);
    memset(tag, s, sizeof tag);
    bsp_send(next, tag, payload, 100);
    bsp_send(next, tag, payload, 100);
    bsp_send(next, tag, payload, 100);
    bsp_sync();
    int status;
    memset(buf, SENT, sizeof buf);
    bsp_get_tag(&status, tag);
    TU_EQ("status of a 100-byte message", 100, status);
    bsp_move(buf, 10);
    TU_PATTERN("bsp_move(buf, 10) of a 100-byte message", buf, 10, (uint64_t)prev, 90, 0, 0);
    TU_ALL("bsp_move(buf, 10): bytes beyond 10", buf + 10, SENT, sizeof buf - 10);
    bsp_move(buf + 20, 0); /* copies nothing, removes the message */
    TU_ALL("bsp_move(buf, 0) must copy nothing", buf + 10, SENT, sizeof buf - 10);
    int n, b;
    bsp_qsize(&n, &b);
    TU_EQ("messages left after two moves", 1, n);
    TU_EQ("bytes left after two moves", 100, b);
    bsp_move(buf, 128); /* more room than the payload */
    TU_PATTERN("bsp_move(buf, 128) of a 100-byte message", buf, 100, (uint64_t)prev, 90, 0, 0);
    TU_ALL("bsp_move(buf, 128): bytes beyond the payload", buf + 100, SENT, 28);
    check_empty("after the truncation tests");
  }

  /* ---- bsp_hpmove ---- */
  {
    send_step(8, 8, 1, keep, &nkeep);
    bsp_sync();
    for (int i = 0; i < nkeep; i++) /* hpsend buffers may be reused after the sync */
      memset(keep[i], 0, HPBUF), free(keep[i]);
    nkeep = 0;
    int nexp, bexp;
    expmsg *e = expected(8, &nexp, &bexp);
    void **tags = (void **)tu_malloc(sizeof(void *) * (size_t)(nexp + 1));
    void **pays = (void **)tu_malloc(sizeof(void *) * (size_t)(nexp + 1));
    int *lens = (int *)tu_malloc(sizeof(int) * (size_t)(nexp + 1));
    for (int i = 0; i < nexp; i++) {
      int n, b;
      bsp_qsize(&n, &b);
      TU_EQ("bsp_qsize before bsp_hpmove", nexp - i, n);
      tags[i] = pays[i] = NULL;
      lens[i] = bsp_hpmove(&tags[i], &pays[i]);
      TU_CHECK(lens[i] >= 0, "bsp_hpmove returned %d with %d messages queued", lens[i], n);
      TU_CHECK(tags[i] != NULL && (lens[i] == 0 || pays[i] != NULL),
               "bsp_hpmove gave a NULL pointer (tag %p, payload %p, size %d)", tags[i], pays[i],
               lens[i]);
    }
    check_empty("after bsp_hpmove of every message");
    /* all pointers are still valid until the next sync */
    for (int i = 0; i < nexp; i++) {
      int m = match(e, nexp, 8, (const unsigned char *)tags[i], (const unsigned char *)pays[i],
                    lens[i]);
      TU_CHECK(m >= 0, "bsp_hpmove message %d (%d bytes) matches no expected message", i, lens[i]);
    }
    free(e);
    free(tags);
    free(pays);
    free(lens);
  }

  /* ---- tag size 0 again, zero-length payloads, self messages, hpmove mixed with move ---- */
  t = 0;
  bsp_set_tagsize(&t);
  TU_EQ("bsp_set_tagsize: previous tag size", 8, t);
  bsp_sync();
  {
    char dummy = 'x';
    for (int k = 0; k < 5; k++) bsp_send(s, &dummy, &dummy, 0);
    bsp_send(next, &dummy, &dummy, 0);
    bsp_sync();
    int n, b;
    bsp_qsize(&n, &b);
    TU_EQ("zero-length messages queued", 6, n);
    TU_EQ("payload bytes of zero-length messages", 0, b);
    for (int k = 0; k < 6; k++) {
      int status = -2;
      unsigned char tag[4] = {1, 2, 3, 4};
      bsp_get_tag(&status, tag);
      TU_EQ("status of a zero-length message", 0, status);
      TU_CHECK(tag[0] == 1 && tag[1] == 2 && tag[2] == 3 && tag[3] == 4,
               "bsp_get_tag wrote into the tag buffer with tag size 0");
      if (k % 2 == 0) {
        bsp_move(&dummy, 0);
      } else {
        void *tp, *pp;
        TU_EQ("bsp_hpmove of a zero-length message", 0, bsp_hpmove(&tp, &pp));
      }
    }
    check_empty("after the zero-length messages");
    TU_EQ("dummy payload untouched", 'x', dummy);
  }

  /* ---- 10^5 small messages per process in one superstep ---- */
  t = 8;
  bsp_set_tagsize(&t);
  bsp_sync();
  {
    const int M = 100000;
    const uint64_t seed = 0x5eed0001ULL;
    unsigned char tag[8];
    uint64_t val;
    for (int i = 0; i < M; i++) {
      uint64_t h = tu_mix64(seed ^ ((uint64_t)s << 32) ^ (uint64_t)i);
      int d = (int)(h % (uint64_t)p);
      int len = (int)((h >> 20) % 3) * 4; /* 0, 4 or 8 bytes */
      int32_t src32 = s, i32 = i;
      memcpy(tag, &src32, 4);
      memcpy(tag + 4, &i32, 4);
      val = tu_mix64(h);
      bsp_send(d, tag, &val, len);
    }
    val = 0;
    memset(tag, 0, sizeof tag);
    bsp_sync();
    /* count what must arrive here */
    long expect_n = 0, expect_b = 0;
    for (int src = 0; src < p; src++)
      for (int i = 0; i < M; i++) {
        uint64_t h = tu_mix64(seed ^ ((uint64_t)src << 32) ^ (uint64_t)i);
        if ((int)(h % (uint64_t)p) == s) {
          expect_n++;
          expect_b += (long)((h >> 20) % 3) * 4;
        }
      }
    int n, b;
    bsp_qsize(&n, &b);
    TU_EQ("10^5 messages per process: number queued", expect_n, n);
    TU_EQ("10^5 messages per process: payload bytes queued", expect_b, b);
    unsigned char *seen = (unsigned char *)tu_malloc((size_t)p * (size_t)M);
    memset(seen, 0, (size_t)p * (size_t)M);
    for (long k = 0; k < expect_n; k++) {
      int status = -2;
      bsp_get_tag(&status, tag);
      int32_t src32, i32;
      memcpy(&src32, tag, 4);
      memcpy(&i32, tag + 4, 4);
      TU_CHECK(src32 >= 0 && src32 < p && i32 >= 0 && i32 < M,
               "message %ld: tag (%d, %d) out of range", k, (int)src32, (int)i32);
      uint64_t h = tu_mix64(seed ^ ((uint64_t)src32 << 32) ^ (uint64_t)i32);
      TU_CHECK((int)(h % (uint64_t)p) == s, "message %d from %d was meant for process %d", (int)i32,
               (int)src32, (int)(h % (uint64_t)p));
      int len = (int)((h >> 20) % 3) * 4;
      TU_CHECK(status == len, "message %d from %d: status %d, expected %d", (int)i32, (int)src32,
               status, len);
      TU_CHECK(!seen[(size_t)src32 * (size_t)M + (size_t)i32], "message %d from %d received twice",
               (int)i32, (int)src32);
      seen[(size_t)src32 * (size_t)M + (size_t)i32] = 1;
      uint64_t v = 0, ev = tu_mix64(h);
      bsp_move(&v, 8);
      TU_CHECK(memcmp(&v, &ev, (size_t)len) == 0, "message %d from %d: wrong payload", (int)i32,
               (int)src32);
    }
    check_empty("after receiving the 10^5-message superstep");
    free(seen);
  }

  bsp_sync();
  check_empty("at the end");
  free(keep);
  bsp_end();
  return 0;
}
