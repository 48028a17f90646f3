/*
 * bspalg-rdxsort - parallel LSD radix sort of n unsigned keys, block-distributed (Gerbessiotis
 * & Lee, sec. 5): rounds of parallel count sort on b-bit digits, least significant first
 * (default b = 8: four rounds for 32-bit keys, as the paper). Three variants (--variant):
 *
 *   plain     RDXSORT (Fig. 9): after the count sort, the keys of each digit value v go to
 *             their final positions, v = 0, 1, ..., 2^b - 1: one put per value and owner;
 *   opt       RDXSORTOPT (Fig. 10): the same, process s starting at v = s 2^b / p and wrapping
 *             around, so that the processes start on different receivers (the paper's
 *             "artificial delay" after each value is left out: buffered puts travel at the sync);
 *   combined  the paper's enhanced algorithm: the keys for one destination are one contiguous
 *             block after the count sort, sent as one message (p - 1 per round); the receiver
 *             moves each (source, digit value) piece to its place after the sync.
 *
 * The output is block-distributed like the input: process s ends with the keys of global ranks
 * [s n / p, (s + 1) n / p). One round (digit `rnd`, R = 2^b values), two supersteps:
 *
 *   superstep 1: local histogram of the digit (combined: fused with placing the     w = n_s
 *                pieces received in the previous round)
 *                put it to every other process (R words each)                      h = (p - 1) R
 *   superstep 2: global offsets of every (process, value) from the p histograms    w = p R
 *                stable count-sort scatter: a piece that stays here goes straight
 *                to its final place, the others into a local buffer                w = n_s
 *                put every key not staying here to its final owner                 h = max over
 *                (plain/opt: one request per digit value and owner; combined:        processes of
 *                one per owner, into the owner's staging buffer)                     keys sent or
 *                                                                                  received
 *   (combined: after the last round, placing the last pieces is a closing local step)
 *
 * Cost, with rounds = ceil(key_bits / b), k = key_bits / 64 words per key and x_s the keys
 * process s keeps (they never move) and r_s = n_s - x_s the keys it receives:
 * W = rounds (2 n_s + p R) key passes (+ r_s for combined's last placing),
 * H = rounds ((p - 1) R + max_s max(sent_s, received_s) k) words, S = 2 rounds. The output
 * block of a process is as large as its input block, so it sends and receives the same n_s -
 * x_s keys; skewed keys change x_s from process to process and round to round, so the driver
 * counts every request as made (exact for any input; algorithms/rdxsort/README.md).
 */
#include <bsp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspalg_driver.h"
#include "bspk_clock.h"
#include "rdxsort_kernels.h"

static const char prog[] = "bspalg-rdxsort";

enum variant { VARIANT_PLAIN, VARIANT_OPT, VARIANT_COMBINED, NVARIANTS };
enum primitive { PRIMITIVE_DEFAULT = -1, PRIMITIVE_PUT, PRIMITIVE_HPPUT };

/* The problem's options: set before bsp_init, read-only afterwards. */
static struct {
  long n;
  enum variant variant;
  int bits, key_bits;
  rdx_dist dist;
  enum primitive primitive; /* PRIMITIVE_DEFAULT: put for plain/opt, hpput for combined */
} opt = {1L << 24, VARIANT_PLAIN, 8, 32, RDX_UNIFORM, PRIMITIVE_DEFAULT};

/* Up to this many keys the check also compares every key with a sequential qsort. */
#define CHECK_EXACT_MAX_KEYS (1L << 22)
#define MAX_KEYS (1L << 36)

static const char help[] =
    "Parallel LSD radix sort of N random unsigned keys, block-distributed (Gerbessiotis & Lee,"
    " sec. 5).\n"
    "  --size N          keys (default 16777216 = 2^24)\n"
    "  --variant V       plain (RDXSORT, Fig. 9; default), opt (RDXSORTOPT, staggered, Fig. 10)"
    " or\n"
    "                    combined (one message per destination per round)\n"
    "  --bits B          digit bits per round, 1..16 (default 8: 4 rounds of 32-bit keys)\n"
    "  --key-bits K      32 (uint32_t, default) or 64 (uint64_t)\n"
    "  --dist D          uniform (default), zipf, sorted, few-distinct or equal\n"
    "  --primitive P     put or hpput for the keys (default: put for plain and opt, hpput for"
    " combined)\n";

static int option(const char *arg, const char *value) {
  static const char *const variants[] = {"plain", "opt", "combined"};
  static const char *const primitives[] = {"put", "hpput"};
  static const char *const key_bits[] = {"32", "64"};
  if (!value) return 0;
  if (!strcmp(arg, "--size")) {
    opt.n = bspalg_parse_long(prog, "--size", value, 1, MAX_KEYS);
  } else if (!strcmp(arg, "--variant")) {
    opt.variant = (enum variant)bspalg_parse_choice(prog, "--variant", value, variants, NVARIANTS);
  } else if (!strcmp(arg, "--bits")) {
    opt.bits = (int)bspalg_parse_long(prog, "--bits", value, 1, 16);
  } else if (!strcmp(arg, "--key-bits")) {
    opt.key_bits = bspalg_parse_choice(prog, "--key-bits", value, key_bits, 2) ? 64 : 32;
  } else if (!strcmp(arg, "--dist")) {
    opt.dist = (rdx_dist)bspalg_parse_choice(prog, "--dist", value, rdx_dist_names, RDX_NDISTS);
  } else if (!strcmp(arg, "--primitive")) {
    opt.primitive = (enum primitive)bspalg_parse_choice(prog, "--primitive", value, primitives, 2);
  } else {
    return 0;
  }
  return 2;
}

static enum primitive key_primitive(void) {
  if (opt.primitive != PRIMITIVE_DEFAULT) return opt.primitive;
  return opt.variant == VARIANT_COMBINED ? PRIMITIVE_HPPUT : PRIMITIVE_PUT;
}

/* ------------------------------------------------------------- per-process state */

/* What one process checks about its final block, gathered on process 0. */
typedef struct {
  uint64_t keys, first_key, last_key;
  uint64_t fingerprint_in, fingerprint_out; /* of its input block and of its final block */
  uint64_t descent;                         /* first index out of order, == keys when none */
} block_summary;

/* Where a repetition stands (protected: a checkpoint ends every round). */
typedef struct {
  int round;   /* the next round */
  int pending; /* combined: the last round's pieces are still in the staging buffer */
} rdx_progress;

typedef struct {
  int p, s, key_bytes, rounds;
  size_t buckets; /* 2^bits: the widest round's digit values */
  uint64_t n, first, nloc;
  unsigned long seed;
  unsigned char *input;     /* this process' input block (each repetition starts from it) */
  unsigned char *buf[2];    /* registered: round r reads buf[r % 2] and fills buf[(r + 1) % 2] */
  unsigned char *sorted;    /* the local count sort's output for the keys that leave */
  unsigned char *staging;   /* combined, registered: each source's block, in source order */
  uint64_t *histograms;     /* registered, p x buckets: row t is process t's counts */
  uint64_t *starts;         /* p x buckets: global rank of the first key of (process t, value v) */
  uint64_t *next_counts;    /* combined: the next round's histogram, counted while placing;
                               measure_f: its counts */
  uint64_t *from_to;        /* combined: p x p keys process t sends to process u */
  void **out;               /* buckets: the scatter's write positions */
  block_summary *summaries; /* registered, p: the check's gathered summaries (process 0) */
  rdx_progress *progress;
} rdx_state;

static size_t key_bytes(void) { return (size_t)opt.key_bits / 8; }

/* Block distribution: process t holds global ranks [block_first(t), block_first(t + 1)). */
static uint64_t block_first(const rdx_state *st, int t) {
  return (uint64_t)(((unsigned __int128)st->n * (unsigned)t) / (unsigned)st->p);
}

/* The owner of global rank g: the largest t with block_first(t) <= g. */
static int owner_of(const rdx_state *st, uint64_t g) {
  int t = (int)(((unsigned __int128)g * (unsigned)st->p) / st->n);
  while (t + 1 < st->p && block_first(st, t + 1) <= g) t++;
  while (t > 0 && block_first(st, t) > g) t--;
  return t;
}

static unsigned char *key_slot(unsigned char *base, uint64_t index) {
  return base + index * key_bytes();
}

static void *alloc_keys(uint64_t count, const char *what) {
  /* touched now, so that the first repetition does not pay for the page faults */
  unsigned char *a = bspalg_alloc((size_t)(count ? count : 1) * key_bytes(),
                                  "for %s (%ld keys of %d bits)", what, opt.n, opt.key_bits);
  rdx_prefer_huge_pages(a, (size_t)(count ? count : 1) * key_bytes());
  memset(a, 0, (size_t)(count ? count : 1) * key_bytes());
  return a;
}

static void *setup(const bspalg_common_opts *opts) {
  int p = bsp_nprocs(), s = bsp_pid();
  rdx_state *st = bspalg_alloc(sizeof *st, "for the state");
  st->p = p;
  st->s = s;
  st->n = (uint64_t)opt.n;
  st->seed = opts->seed;
  st->key_bytes = (int)key_bytes();
  st->rounds = rdx_rounds(opt.key_bits, opt.bits);
  st->buckets = (size_t)1 << opt.bits;
  st->first = block_first(st, s);
  st->nloc = block_first(st, s + 1) - st->first;
  uint64_t widest = (st->n + (uint64_t)p - 1) / (uint64_t)p;
  if (widest * key_bytes() > 0x7fffffffu) {
    if (s == 0)
      fprintf(stderr,
              "%s: a block of %llu keys (%llu bytes) exceeds one registration (2^31 - 1 bytes):"
              " use more processes or fewer keys\n",
              prog, (unsigned long long)widest, (unsigned long long)(widest * key_bytes()));
    return NULL;
  }
  if ((double)p * (double)st->buckets * 8.0 > 0x7fffffff) {
    if (s == 0)
      fprintf(stderr,
              "%s: p 2^bits histograms (%d x %zu) exceed one registration: use fewer --bits\n",
              prog, p, st->buckets);
    return NULL;
  }
  st->input = alloc_keys(st->nloc, "the input");
  rdx_make_keys(st->input, st->key_bytes, opt.dist, st->seed, st->first, (size_t)st->nloc, st->n);
  for (int b = 0; b < 2; b++) {
    st->buf[b] = alloc_keys(st->nloc, "the keys");
    bspalg_register(st->buf[b], (size_t)(st->nloc ? st->nloc : 1) * key_bytes());
  }
  st->sorted = alloc_keys(st->nloc, "the local count sort");
  if (opt.variant == VARIANT_COMBINED) {
    st->staging = alloc_keys(st->nloc, "the staging buffer");
    bspalg_register(st->staging, (size_t)(st->nloc ? st->nloc : 1) * key_bytes());
    st->from_to = bspalg_alloc((size_t)p * (size_t)p * sizeof *st->from_to, "for the counts");
  }
  size_t table = (size_t)p * st->buckets;
  st->histograms = bspalg_alloc(table * sizeof *st->histograms, "for the histograms");
  bspalg_register(st->histograms, table * sizeof *st->histograms);
  st->starts = bspalg_alloc(table * sizeof *st->starts, "for the offsets");
  st->next_counts = bspalg_alloc(st->buckets * sizeof *st->next_counts, "for the histograms");
  st->out = bspalg_alloc(st->buckets * sizeof *st->out, "for the scatter");
  st->summaries = bspalg_alloc((size_t)p * sizeof *st->summaries, "for the check");
  bspalg_register(st->summaries, (size_t)p * sizeof *st->summaries);
  /* A checkpoint after every round: what the next round reads (the keys, and for combined the
   * pieces still staged with the histograms, offsets and counts that place them), and every
   * registered area. */
  st->progress = bspalg_alloc(sizeof *st->progress, "for the state");
  size_t keys = (size_t)(st->nloc ? st->nloc : 1) * key_bytes();
  bspalg_checkpoint_protect(st->progress, sizeof *st->progress);
  bspalg_checkpoint_protect(st->buf[0], keys);
  bspalg_checkpoint_protect(st->buf[1], keys);
  bspalg_checkpoint_protect(st->histograms, table * sizeof *st->histograms);
  bspalg_checkpoint_protect(st->summaries, (size_t)p * sizeof *st->summaries);
  if (opt.variant == VARIANT_COMBINED) {
    bspalg_checkpoint_protect(st->staging, keys);
    bspalg_checkpoint_protect(st->starts, table * sizeof *st->starts);
    bspalg_checkpoint_protect(st->from_to, (size_t)p * (size_t)p * sizeof *st->from_to);
  }
  return st;
}

static void prepare(void *state) {
  rdx_state *st = state;
  memcpy(st->buf[0], st->input, (size_t)st->nloc * key_bytes());
  *st->progress = (rdx_progress){0, 0};
}

/* ------------------------------------------------------------------- one round */

/* starts[t][v] = global rank of the first key with digit v on process t: the keys of smaller
 * digits everywhere, then those of digit v on processes before t. */
static void global_starts(rdx_state *st, size_t values) {
  uint64_t rank = 0;
  for (size_t v = 0; v < values; v++)
    for (int t = 0; t < st->p; t++) {
      st->starts[(size_t)t * st->buckets + v] = rank;
      rank += st->histograms[(size_t)t * st->buckets + v];
    }
  bspalg_work((double)st->p * (double)values);
}

/* combined: from_to[t][u] = keys process t sends to process u. The pieces (v, t) in the
 * order of global_starts tile [0, n), so one sweep cuts them at the blocks' ends. */
static void count_from_to(rdx_state *st, size_t values) {
  memset(st->from_to, 0, (size_t)st->p * (size_t)st->p * sizeof *st->from_to);
  int u = 0;
  for (size_t v = 0; v < values; v++)
    for (int t = 0; t < st->p; t++) {
      uint64_t g = st->starts[(size_t)t * st->buckets + v];
      uint64_t end = g + st->histograms[(size_t)t * st->buckets + v];
      while (g < end) {
        while (block_first(st, u + 1) <= g) u++;
        uint64_t stop = block_first(st, u + 1) < end ? block_first(st, u + 1) : end;
        st->from_to[(size_t)t * (size_t)st->p + (size_t)u] += stop - g;
        g = stop;
      }
    }
}

/* One request of `count` keys from `src` to global rank g on process t (into `dst` there, at
 * the key offset `at`); to oneself a copy. */
static void send_keys(rdx_state *st, int t, const unsigned char *src, unsigned char *dst,
                      uint64_t at, uint64_t count) {
  size_t bytes = (size_t)count * key_bytes();
  if (t == st->s) {
    memcpy(key_slot(dst, at), src, bytes);
    return;
  }
  if (key_primitive() == PRIMITIVE_HPPUT)
    bsp_hpput(t, src, dst, (bsp_size_t)(at * key_bytes()), (bsp_size_t)bytes);
  else bsp_put(t, src, dst, (bsp_size_t)(at * key_bytes()), (bsp_size_t)bytes);
  bspalg_put(t, bspalg_words((long)bytes));
}

/* plain/opt: the keys of digit v that left the scatter in `sorted` (local ranks from `local`),
 * each part to its owner's final place. */
static void route_value(rdx_state *st, size_t v, uint64_t local, unsigned char *next) {
  uint64_t g = st->starts[(size_t)st->s * st->buckets + v];
  uint64_t end = g + st->histograms[(size_t)st->s * st->buckets + v];
  while (g < end) {
    int t = owner_of(st, g);
    uint64_t stop = block_first(st, t + 1) < end ? block_first(st, t + 1) : end;
    send_keys(st, t, key_slot(st->sorted, local), next, g - block_first(st, t), stop - g);
    local += stop - g;
    g = stop;
  }
}

/* combined, after the sync: the block from each source holds its pieces (v = 0, 1, ...) that
 * fall into this process' block, in order; each goes to its final place in `next`. With
 * `counts`, the digits of the next round (shift, width) are counted on the way, the keys that
 * stayed here included: the histogram pass of the next round, fused with the placing. */
static void place_received(rdx_state *st, size_t values, unsigned char *next, int shift, int width,
                           uint64_t *counts) {
  uint64_t lo = st->first, hi = st->first + st->nloc, at = 0, placed = 0;
  if (counts) memset(counts, 0, ((size_t)1 << width) * sizeof *counts);
  for (int t = 0; t < st->p; t++) {
    for (size_t v = 0; v < values; v++) {
      uint64_t g = st->starts[(size_t)t * st->buckets + v];
      uint64_t end = g + st->histograms[(size_t)t * st->buckets + v];
      uint64_t a = g > lo ? g : lo, b = end < hi ? end : hi;
      if (a >= b) continue;
      size_t count = (size_t)(b - a);
      if (t == st->s) { /* stayed here: already in place */
        if (counts)
          rdx_count_more(key_slot(next, a - lo), st->key_bytes, count, shift, width, counts);
        continue;
      }
      if (counts)
        rdx_copy_counting(key_slot(next, a - lo), key_slot(st->staging, at), st->key_bytes, count,
                          shift, width, counts);
      else memcpy(key_slot(next, a - lo), key_slot(st->staging, at), count * key_bytes());
      at += count;
      placed += count;
    }
    if (t == st->s) at += st->from_to[(size_t)t * (size_t)st->p + (size_t)st->s];
  }
  bspalg_work((double)(counts ? st->nloc : placed));
}

static int digit_width(int rnd) { return rdx_digit_width(opt.key_bits, opt.bits, rnd); }

/* Round rnd: keys from buf[rnd % 2] to their places in buf[(rnd + 1) % 2]. For combined,
 * `pending` says the previous round's pieces are still in the staging buffer. The round's
 * last sync takes a checkpoint, with the progress at the next round. */
static void round_of(rdx_state *st, int rnd, int *pending) {
  int p = st->p, s = st->s, width = digit_width(rnd), shift = rnd * opt.bits;
  size_t values = (size_t)1 << width;
  unsigned char *cur = st->buf[rnd % 2], *next = st->buf[(rnd + 1) % 2];

  /* superstep 1: the histogram, to everyone */
  uint64_t *mine = st->histograms + (size_t)s * st->buckets;
  if (*pending) { /* the previous round's histograms are read while the new one is counted */
    place_received(st, (size_t)1 << digit_width(rnd - 1), cur, shift, width, st->next_counts);
    memcpy(mine, st->next_counts, values * sizeof *mine);
    *pending = 0;
  } else {
    rdx_histogram(cur, st->key_bytes, (size_t)st->nloc, shift, width, mine);
    bspalg_work((double)st->nloc);
  }
  for (int t = 0; t < p; t++) {
    if (t == s) continue;
    bsp_put(t, mine, st->histograms, (bsp_size_t)((size_t)s * st->buckets * sizeof *mine),
            (bsp_size_t)(values * sizeof *mine));
    bspalg_put(t, (long)values);
  }
  bspalg_sync(p > 1 ? "put" : NULL, p > 1 ? "alltoall" : NULL);

  /* superstep 2: offsets, the scatter, the keys to their owners */
  global_starts(st, values);
  uint64_t lo = st->first, hi = st->first + st->nloc, local = 0;
  for (size_t v = 0; v < values; v++) {
    uint64_t g = st->starts[(size_t)s * st->buckets + v], c = mine[v];
    /* a piece that stays whole goes straight to its place (all of them at p = 1) */
    st->out[v] = g >= lo && g + c <= hi ? key_slot(next, g - lo) : key_slot(st->sorted, local);
    local += c;
  }
  rdx_scatter(cur, st->key_bytes, (size_t)st->nloc, shift, width, st->out);
  bspalg_work((double)st->nloc);

  const char *primitive = key_primitive() == PRIMITIVE_HPPUT ? "hpput" : "put";
  if (opt.variant == VARIANT_COMBINED) {
    count_from_to(st, values);
    /* the keys for process t are local ranks [begin_t, begin_t + from_to[s][t]): the local
     * order follows the global one; the ones staying here that the scatter put in `sorted`
     * (a piece cut by a block's end) are copied now */
    uint64_t begin = 0;
    for (int t = 0; t < p; t++) {
      uint64_t count = st->from_to[(size_t)s * (size_t)p + (size_t)t];
      if (t == s) {
        uint64_t local_start = 0;
        for (size_t v = 0; v < values; local_start += mine[v], v++) {
          uint64_t g = st->starts[(size_t)s * st->buckets + v], c = mine[v];
          if (c == 0 || (g >= lo && g + c <= hi) || g + c <= lo || g >= hi) continue;
          uint64_t a = g > lo ? g : lo, b = g + c < hi ? g + c : hi;
          memcpy(key_slot(next, a - lo), key_slot(st->sorted, local_start + (a - g)),
                 (size_t)(b - a) * key_bytes());
        }
      } else if (count > 0) {
        /* this process' place in t's staging buffer: after the sources before it */
        uint64_t at = 0;
        for (int u = 0; u < s; u++) at += st->from_to[(size_t)u * (size_t)p + (size_t)t];
        send_keys(st, t, key_slot(st->sorted, begin), st->staging, at, count);
      }
      begin += count;
    }
    *pending = 1;
  } else {
    size_t first_value = opt.variant == VARIANT_OPT ? (size_t)s * values / (size_t)p : 0;
    /* local rank of each value's first key: the prefix of this process' counts */
    uint64_t local_start = 0;
    for (size_t v = 0; v < first_value; v++) local_start += mine[v];
    for (size_t k = 0; k < values; k++) {
      size_t v = (first_value + k) % values;
      if (v == 0) local_start = 0;
      uint64_t g = st->starts[(size_t)s * st->buckets + v], c = mine[v];
      if (c > 0 && !(g >= lo && g + c <= hi)) route_value(st, v, local_start, next);
      local_start += c;
    }
  }
  st->progress->round = rnd + 1;
  /* After this checkpoint cur is dead: round rnd + 1 fills it as its `next` (the scatter, the
   * copies and puts of keys, for combined also the placing in round rnd + 2 from the staging
   * buffer) before any of it is read, so the checkpoint saves `next` and the staging buffer
   * but not cur. */
  size_t keys = (size_t)(st->nloc ? st->nloc : 1) * key_bytes();
  bspalg_checkpoint_scratch(cur, keys, 1);
  bspalg_checkpoint_scratch(next, keys, 0);
  bspalg_checkpoint_sync(p > 1 ? primitive : NULL, p > 1 ? "alltoall" : NULL);
}

/* The sorted keys end in buf[rounds % 2]. */
static unsigned char *result_of(const rdx_state *st) { return st->buf[st->rounds % 2]; }

/* From the round the progress names (0, or the one after a restart's checkpoint). */
static void repetition(void *state) {
  rdx_state *st = state;
  rdx_progress *at = st->progress;
  for (int rnd = at->round; rnd < st->rounds; rnd++) round_of(st, rnd, &at->pending);
  if (at->pending)
    place_received(st, (size_t)1 << digit_width(st->rounds - 1), result_of(st), 0, 0, NULL);
  at->pending = 0;
}

static void result(void *state, const void **bytes, size_t *nbytes) {
  const rdx_state *st = state;
  *bytes = result_of(st);
  *nbytes = (size_t)st->nloc * key_bytes();
}

/* ------------------------------------------------------------------- the check */

static int key_cmp(const void *a, const void *b) {
  uint64_t x = rdx_key_at(a, (int)key_bytes(), 0), y = rdx_key_at(b, (int)key_bytes(), 0);
  return x < y ? -1 : x > y;
}

/* Every process: its final block in order, the blocks in order across processes, and the
 * output a permutation of the input (same fingerprint); up to CHECK_EXACT_MAX_KEYS also key
 * for key against qsort of the whole input on process 0. */
static int check(void *state, bspalg_check_report *report) {
  rdx_state *st = state;
  int p = st->p, s = st->s, kb = st->key_bytes;
  const unsigned char *out = result_of(st);
  block_summary mine = {st->nloc,
                        st->nloc ? rdx_key_at(out, kb, 0) : 0,
                        st->nloc ? rdx_key_at(out, kb, st->nloc - 1) : 0,
                        rdx_fingerprint(st->input, kb, (size_t)st->nloc),
                        rdx_fingerprint(out, kb, (size_t)st->nloc),
                        rdx_first_descent(out, kb, (size_t)st->nloc)};
  bsp_put(0, &mine, st->summaries, (bsp_size_t)((size_t)s * sizeof mine), sizeof mine);
  bsp_sync();
  int exact = st->n <= (uint64_t)CHECK_EXACT_MAX_KEYS;
  unsigned char *gathered = NULL;
  if (exact && s == 0) {
    gathered = malloc((size_t)st->n * key_bytes());
    if (!gathered) bsp_abort("%s: out of memory for the check\n", prog);
    for (int t = 0; t < p; t++) {
      uint64_t count = block_first(st, t + 1) - block_first(st, t);
      if (count)
        bsp_get(t, result_of(st), 0, key_slot(gathered, block_first(st, t)),
                (bsp_size_t)(count * key_bytes()));
    }
  }
  bsp_sync();
  if (s != 0) return 1;

  int verdict = 1;
  uint64_t in = 0, outsum = 0, previous = 0;
  int seen = 0;
  for (int t = 0; t < p && verdict > 0; t++) {
    const block_summary *b = &st->summaries[t];
    in += b->fingerprint_in;
    outsum += b->fingerprint_out;
    if (b->descent < b->keys) {
      snprintf(report->wrong, sizeof report->wrong,
               " on %d processes: process %d's block is out of order at its key %llu", p, t,
               (unsigned long long)b->descent);
      verdict = -1;
    } else if (b->keys && seen && b->first_key < previous) {
      snprintf(
          report->wrong, sizeof report->wrong,
          " on %d processes: process %d's first key %llu is below the last key before it, %llu", p,
          t, (unsigned long long)b->first_key, (unsigned long long)previous);
      verdict = -1;
    }
    if (b->keys) previous = b->last_key, seen = 1;
  }
  if (verdict > 0 && in != outsum) {
    snprintf(report->wrong, sizeof report->wrong,
             " on %d processes: the output is not a permutation of the input (fingerprints differ)",
             p);
    verdict = -1;
  }
  if (verdict > 0 && exact) {
    unsigned char *ref = malloc((size_t)st->n * key_bytes());
    if (!ref) bsp_abort("%s: out of memory for the check\n", prog);
    rdx_make_keys(ref, kb, opt.dist, st->seed, 0, (size_t)st->n, st->n);
    qsort(ref, (size_t)st->n, key_bytes(), key_cmp);
    for (uint64_t i = 0; i < st->n; i++)
      if (rdx_key_at(ref, kb, i) != rdx_key_at(gathered, kb, i)) {
        snprintf(report->wrong, sizeof report->wrong,
                 " on %d processes: key %llu is %llu, the sequential sort has %llu", p,
                 (unsigned long long)i, (unsigned long long)rdx_key_at(gathered, kb, i),
                 (unsigned long long)rdx_key_at(ref, kb, i));
        verdict = -1;
        break;
      }
    free(ref);
  }
  free(gathered);
  snprintf(report->note, sizeof report->note,
           "every block in order, the blocks in order, the output a permutation of the input "
           "(order-independent fingerprint 0x%016llx)%s",
           (unsigned long long)outsum,
           exact ? ", and key for key against qsort of the whole input" : "");
  return verdict;
}

/* f: the local count sort of this process' input block by every round's digit (a histogram
 * and a scatter per round, as the rounds do, here without the keys moving between processes),
 * median of repetitions for >= 0.5 s (3 to 50); seconds per key pass. Runs after the check:
 * it uses the buffer the result is not in and the local one. */
static double measure_f(void *state, int every_process, char *note, size_t note_size) {
  rdx_state *st = state;
  if (st->nloc == 0) return 0.0;
  unsigned char *spare = st->buf[(st->rounds + 1) % 2];
  uint64_t *counts = st->next_counts;
  double samples[50];
  int reps = 0;
  double start = bspk_monotonic_seconds();
  while (reps < 50 && (reps < 3 || bspk_monotonic_seconds() - start < 0.5)) {
    double t0 = bspk_monotonic_seconds();
    const unsigned char *from = st->input;
    for (int rnd = 0; rnd < st->rounds; rnd++) {
      unsigned char *to = rnd % 2 ? spare : st->sorted;
      rdx_count_sort(from, to, st->key_bytes, (size_t)st->nloc, rnd * opt.bits, digit_width(rnd),
                     counts, st->out);
      from = to;
    }
    samples[reps++] = bspk_monotonic_seconds() - t0;
  }
  double f = bspalg_median(samples, reps) / (2.0 * st->rounds * (double)st->nloc);
  if (!every_process)
    snprintf(note, note_size,
             "the local LSD count sort (histogram and write-combined scatter, %d rounds) of "
             "process 0's %llu keys, median of %d, per key pass; f_all: the same on every "
             "process at once",
             st->rounds, (unsigned long long)st->nloc, reps);
  return f;
}

static const char *variant_name(void) {
  static const char *const names[] = {"rdxsort", "rdxsort-opt", "rdxsort-combined"};
  return names[opt.variant];
}

static void params(void *state, char *json, size_t json_size) {
  const rdx_state *st = state;
  snprintf(json, json_size,
           "{\"n\": %ld, \"bits\": %d, \"key_bits\": %d, \"rounds\": %d, \"dist\": \"%s\", "
           "\"primitive\": \"%s\"}",
           opt.n, opt.bits, opt.key_bits, st->rounds, rdx_dist_names[opt.dist],
           key_primitive() == PRIMITIVE_HPPUT ? "hpput" : "put");
}

/* The driver, read as a table (clang-format would give each field a line of its own). */
// clang-format off
static const bspalg_driver driver = {
    .program = prog, .algorithm_of = variant_name, .work_unit = "key", .help = help,
    .option = option, .setup = setup, .prepare = prepare, .repetition = repetition,
    .check = check, .measure_f = measure_f, .params = params, .result = result};
// clang-format on

BSPALG_MAIN(driver)
