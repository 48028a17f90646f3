/*
 * rdxsort_mpi - the parallel LSD radix sort of bspalg-rdxsort written directly against MPI,
 * two-sided: the reference a user would write without BSP (issue #12; Gerbessiotis & Lee
 * compare with send-based LAM MPI). Same keys (rdx_make_keys: same --dist, --seed and --size
 * give the same input), same block distribution, same local kernels (rdxsort_kernels.h).
 *
 *   mpirun -n P rdxsort_mpi [--size N] [--bits B] [--key-bits 32|64] [--dist D] [-r R]
 *                           [--seed S]
 *   prints: rdxsort_mpi p=P n=N bits=B key_bits=K dist=D reps=R median_s=... min_s=...
 *
 * One round (digit of `width` bits, R = 2^width values), on every process s:
 *   1. local histogram of the digit;
 *   2. MPI_Allgather of the histograms: every process gets every process' count per value,
 *      and from them the global rank of each (process, value) piece. The "MPI_Alltoall
 *      of counts" is derived locally from these: what s sends to / receives from each process
 *      is the pieces' overlap with the blocks, so no second exchange is needed;
 *   3. the stable count-sort scatter: a piece that stays whole on s goes straight to its final
 *      place, the others into the send buffer, where (the local order following the global
 *      one) the keys for each destination are contiguous;
 *   4. MPI_Alltoallv of the keys;
 *   5. each received (source, value) piece, in source order and within it value order, is
 *      copied to its final place (as the combined BSP variant does after its sync).
 * The time of a repetition is from an MPI_Barrier to the end of the last round, the max over
 * processes; the line gives the median over repetitions. The result is checked after the
 * timed repetitions: every block in order, the blocks in order across processes, the output a
 * permutation of the input (rdx_fingerprint), and up to 2^22 keys key for key against
 * rdx_sort_sequential of the whole input. Exit status 1 when wrong, 2 for a usage error.
 */
#include <mpi.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspk_clock.h"
#include "bspk_stats.h"
#include "rdxsort_kernels.h"

static const char prog[] = "rdxsort_mpi";

#define MAX_REPS 1000
#define CHECK_EXACT_MAX_KEYS (1L << 22)

typedef struct {
  uint64_t n;
  int bits, key_bits, reps;
  rdx_dist dist;
  unsigned long seed;
} options;

typedef struct {
  int p, s, key_bytes;
  MPI_Datatype key_type;
  uint64_t n, first, nloc; /* this process holds global ranks [first, first + nloc) */
  size_t buckets;          /* 2^bits */
  unsigned char *cur, *next, *sendbuf, *recvbuf;
  uint64_t *counts; /* buckets: this process' histogram */
  uint64_t *all;    /* p x values: process t's count of value v at [t * values + v] */
  uint64_t *starts; /* p x values: global rank of the first key of piece (t, v) */
  void **out;       /* buckets: the scatter's write positions */
  int *sendcounts, *sdispls, *recvcounts, *rdispls; /* p each, in keys */
} sorter;

/* ------------------------------------------------------------------- options */

static int usage_error(int rank, const char *fmt, const char *arg) {
  if (rank == 0) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
  }
  return 0;
}

static int parse_long(int rank, const char *what, const char *text, long min, long max,
                      long *value) {
  char *end;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || *text == '\0' || *end != '\0' || v < min || v > max) {
    if (rank == 0)
      fprintf(stderr, "%s: %s must be an integer from %ld to %ld, not '%s'\n", prog, what, min, max,
              text ? text : "");
    return 0;
  }
  *value = v;
  return 1;
}

static const char help[] =
    "usage: mpirun -n P rdxsort_mpi [options]\n"
    "Parallel LSD radix sort of N unsigned keys written directly against MPI (MPI_Allgather of\n"
    "the histograms, MPI_Alltoallv of the keys): the two-sided reference of bspalg-rdxsort.\n"
    "  --size N          keys (default 16777216 = 2^24)\n"
    "  --bits B          digit bits per round, 1..16 (default 8)\n"
    "  --key-bits K      32 (default) or 64\n"
    "  --dist D          uniform (default), zipf, sorted, few-distinct or equal\n"
    "  -r, --reps R      timed repetitions; the line gives their median (default 3)\n"
    "  --seed S          seed of the keys (default 1, as bspalg-rdxsort)\n";

/* 1 when the options are good, 0 after a usage error (said on rank 0), -1 after --help. */
static int parse_options(int argc, char **argv, int rank, options *o) {
  *o = (options){1UL << 24, 8, 32, 3, RDX_UNIFORM, 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    long v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0) fputs(help, stdout);
      return -1;
    }
    if (!value) return usage_error(rank, "unknown option or missing value: '%s'", a);
    i++;
    if (!strcmp(a, "--size")) {
      if (!parse_long(rank, "--size", value, 1, 1L << 36, &v)) return 0;
      o->n = (uint64_t)v;
    } else if (!strcmp(a, "--bits")) {
      if (!parse_long(rank, "--bits", value, 1, 16, &v)) return 0;
      o->bits = (int)v;
    } else if (!strcmp(a, "--key-bits")) {
      if (strcmp(value, "32") && strcmp(value, "64"))
        return usage_error(rank, "--key-bits must be 32 or 64, not '%s'", value);
      o->key_bits = atoi(value);
    } else if (!strcmp(a, "-r") || !strcmp(a, "--reps")) {
      if (!parse_long(rank, "the number of repetitions", value, 1, MAX_REPS, &v)) return 0;
      o->reps = (int)v;
    } else if (!strcmp(a, "--seed")) {
      if (!parse_long(rank, "the seed", value, 0, LONG_MAX, &v)) return 0;
      o->seed = (unsigned long)v;
    } else if (!strcmp(a, "--dist")) {
      int d = 0;
      while (d < RDX_NDISTS && strcmp(value, rdx_dist_names[d])) d++;
      if (d == RDX_NDISTS)
        return usage_error(
            rank, "--dist must be uniform, zipf, sorted, few-distinct or equal, not '%s'", value);
      o->dist = (rdx_dist)d;
    } else {
      return usage_error(rank, "unknown option: '%s'", a);
    }
  }
  return 1;
}

/* ------------------------------------------------------------------- the sort */

/* Block distribution, as bspalg-rdxsort: process t holds [block_first(t), block_first(t + 1)). */
static uint64_t block_first(const sorter *so, int t) {
  return (uint64_t)(((unsigned __int128)so->n * (unsigned)t) / (unsigned)so->p);
}

static unsigned char *slot(const sorter *so, unsigned char *base, uint64_t index) {
  return base + index * (uint64_t)so->key_bytes;
}

static void *alloc_or_die(size_t bytes, const char *what) {
  void *a = malloc(bytes ? bytes : 1);
  if (!a) {
    fprintf(stderr, "%s: out of memory for %s (%zu bytes)\n", prog, what, bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}

static void *alloc_keys(const sorter *so, const char *what) {
  size_t bytes = (size_t)(so->nloc ? so->nloc : 1) * (size_t)so->key_bytes;
  void *a = alloc_or_die(bytes, what);
  memset(a, 0, bytes); /* touched now: no page faults in the timed rounds */
  return a;
}

/* Keys of piece [g, end) that fall into [lo, hi). */
static uint64_t overlap(uint64_t g, uint64_t end, uint64_t lo, uint64_t hi) {
  uint64_t a = g > lo ? g : lo, b = end < hi ? end : hi;
  return a < b ? b - a : 0;
}

/* Whether piece (s, v) at [g, g + c) lies wholly in this process' block: then it never leaves. */
static int stays_whole(const sorter *so, uint64_t g, uint64_t c) {
  return c > 0 && g >= so->first && g + c <= so->first + so->nloc;
}

/* One round: keys from so->cur to their final places in so->next. */
static void sort_round(sorter *so, int shift, int width) {
  int p = so->p, s = so->s;
  size_t values = (size_t)1 << width;
  uint64_t lo = so->first, hi = so->first + so->nloc;

  rdx_histogram(so->cur, so->key_bytes, (size_t)so->nloc, shift, width, so->counts);
  MPI_Allgather(so->counts, (int)values, MPI_UINT64_T, so->all, (int)values, MPI_UINT64_T,
                MPI_COMM_WORLD);

  /* global rank of piece (t, v): the keys of smaller values everywhere, then those of value
   * v on processes before t */
  uint64_t rank = 0;
  for (size_t v = 0; v < values; v++)
    for (int t = 0; t < p; t++) {
      so->starts[(size_t)t * values + v] = rank;
      rank += so->all[(size_t)t * values + v];
    }

  /* write positions; what goes to each destination: this process' pieces ascend in global
   * rank, so one sweep cuts them at the blocks' ends */
  for (int u = 0; u < p; u++) so->sendcounts[u] = 0;
  uint64_t sent = 0;
  int u = 0;
  for (size_t v = 0; v < values; v++) {
    uint64_t g = so->starts[(size_t)s * values + v], c = so->counts[v];
    if (stays_whole(so, g, c)) {
      so->out[v] = slot(so, so->next, g - lo);
      continue;
    }
    so->out[v] = slot(so, so->sendbuf, sent);
    sent += c;
    for (uint64_t end = g + c; g < end;) {
      while (block_first(so, u + 1) <= g) u++;
      uint64_t stop = block_first(so, u + 1) < end ? block_first(so, u + 1) : end;
      so->sendcounts[u] += (int)(stop - g);
      g = stop;
    }
  }
  rdx_scatter(so->cur, so->key_bytes, (size_t)so->nloc, shift, width, so->out);

  /* what arrives from each source: its pieces' overlap with this block (from itself only the
   * pieces cut by the block's ends: the whole ones are in place already) */
  for (int t = 0; t < p; t++) {
    uint64_t from_t = 0;
    for (size_t v = 0; v < values; v++) {
      uint64_t g = so->starts[(size_t)t * values + v], c = so->all[(size_t)t * values + v];
      if (t == s && stays_whole(so, g, c)) continue;
      from_t += overlap(g, g + c, lo, hi);
    }
    so->recvcounts[t] = (int)from_t;
  }
  so->sdispls[0] = so->rdispls[0] = 0;
  for (int t = 1; t < p; t++) {
    so->sdispls[t] = so->sdispls[t - 1] + so->sendcounts[t - 1];
    so->rdispls[t] = so->rdispls[t - 1] + so->recvcounts[t - 1];
  }
  MPI_Alltoallv(so->sendbuf, so->sendcounts, so->sdispls, so->key_type, so->recvbuf, so->recvcounts,
                so->rdispls, so->key_type, MPI_COMM_WORLD);

  /* the block from each source holds its pieces that fall into this block, by value */
  uint64_t at = 0;
  for (int t = 0; t < p; t++)
    for (size_t v = 0; v < values; v++) {
      uint64_t g = so->starts[(size_t)t * values + v], c = so->all[(size_t)t * values + v];
      uint64_t keys = overlap(g, g + c, lo, hi);
      if (keys == 0 || (t == s && stays_whole(so, g, c))) continue;
      uint64_t to = (g > lo ? g : lo) - lo;
      memcpy(slot(so, so->next, to), slot(so, so->recvbuf, at), (size_t)keys * so->key_bytes);
      at += keys;
    }

  unsigned char *swap = so->cur;
  so->cur = so->next;
  so->next = swap;
}

static void sort_all_rounds(sorter *so, const options *o) {
  for (int rnd = 0; rnd < rdx_rounds(o->key_bits, o->bits); rnd++)
    sort_round(so, rnd * o->bits, rdx_digit_width(o->key_bits, o->bits, rnd));
}

/* ------------------------------------------------------------------- the check */

enum { SUM_KEYS, SUM_FIRST, SUM_LAST, SUM_FP_IN, SUM_FP_OUT, SUM_DESCENT, SUM_FIELDS };

/* Collective; 1 when right, else 0 with the reason in `wrong` (on rank 0). */
static int check_result(sorter *so, const options *o, const unsigned char *input, char *wrong,
                        size_t wrong_size) {
  int p = so->p, s = so->s, kb = so->key_bytes;
  const unsigned char *out = so->cur;
  uint64_t mine[SUM_FIELDS] = {so->nloc,
                               so->nloc ? rdx_key_at(out, kb, 0) : 0,
                               so->nloc ? rdx_key_at(out, kb, so->nloc - 1) : 0,
                               rdx_fingerprint(input, kb, (size_t)so->nloc),
                               rdx_fingerprint(out, kb, (size_t)so->nloc),
                               rdx_first_descent(out, kb, (size_t)so->nloc)};
  uint64_t *every = s == 0 ? alloc_or_die((size_t)p * sizeof mine, "the check") : NULL;
  MPI_Gather(mine, SUM_FIELDS, MPI_UINT64_T, every, SUM_FIELDS, MPI_UINT64_T, 0, MPI_COMM_WORLD);

  /* small inputs: the whole output on rank 0, against the sequential sort */
  int exact = o->n <= (uint64_t)CHECK_EXACT_MAX_KEYS;
  unsigned char *gathered = NULL;
  if (exact) {
    int *counts = NULL, *displs = NULL;
    if (s == 0) {
      gathered = alloc_or_die((size_t)o->n * (size_t)kb, "the check");
      counts = alloc_or_die((size_t)p * sizeof *counts, "the check");
      displs = alloc_or_die((size_t)p * sizeof *displs, "the check");
      for (int t = 0; t < p; t++) {
        displs[t] = (int)block_first(so, t);
        counts[t] = (int)(block_first(so, t + 1) - block_first(so, t));
      }
    }
    MPI_Gatherv(out, (int)so->nloc, so->key_type, gathered, counts, displs, so->key_type, 0,
                MPI_COMM_WORLD);
    free(counts);
    free(displs);
  }

  int right = 1;
  if (s == 0) {
    uint64_t in = 0, outsum = 0, previous = 0;
    int seen = 0;
    for (int t = 0; t < p && right; t++) {
      const uint64_t *b = every + (size_t)t * SUM_FIELDS;
      in += b[SUM_FP_IN];
      outsum += b[SUM_FP_OUT];
      if (b[SUM_DESCENT] < b[SUM_KEYS]) {
        snprintf(wrong, wrong_size, "process %d's block is out of order at its key %llu", t,
                 (unsigned long long)b[SUM_DESCENT]);
        right = 0;
      } else if (b[SUM_KEYS] && seen && b[SUM_FIRST] < previous) {
        snprintf(wrong, wrong_size,
                 "process %d's first key %llu is below the last key before it, %llu", t,
                 (unsigned long long)b[SUM_FIRST], (unsigned long long)previous);
        right = 0;
      }
      if (b[SUM_KEYS]) previous = b[SUM_LAST], seen = 1;
    }
    if (right && in != outsum) {
      snprintf(wrong, wrong_size,
               "the output is not a permutation of the input (fingerprints differ)");
      right = 0;
    }
    if (right && exact) {
      unsigned char *ref = alloc_or_die((size_t)o->n * (size_t)kb, "the check");
      unsigned char *tmp = alloc_or_die((size_t)o->n * (size_t)kb, "the check");
      rdx_make_keys(ref, kb, o->dist, o->seed, 0, (size_t)o->n, o->n);
      rdx_sort_sequential(ref, tmp, kb, (size_t)o->n, o->bits);
      for (uint64_t i = 0; i < o->n && right; i++)
        if (rdx_key_at(ref, kb, i) != rdx_key_at(gathered, kb, i)) {
          snprintf(wrong, wrong_size, "key %llu is %llu, the sequential sort has %llu",
                   (unsigned long long)i, (unsigned long long)rdx_key_at(gathered, kb, i),
                   (unsigned long long)rdx_key_at(ref, kb, i));
          right = 0;
        }
      free(ref);
      free(tmp);
    }
  }
  free(every);
  free(gathered);
  MPI_Bcast(&right, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return right;
}

/* ------------------------------------------------------------------- main */

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  sorter so = {0};
  MPI_Comm_size(MPI_COMM_WORLD, &so.p);
  MPI_Comm_rank(MPI_COMM_WORLD, &so.s);
  options o;
  int parsed = parse_options(argc, argv, so.s, &o);
  if (parsed <= 0) {
    MPI_Finalize();
    return parsed < 0 ? 0 : 2;
  }
  so.n = o.n;
  so.key_bytes = o.key_bits / 8;
  so.key_type = o.key_bits == 32 ? MPI_UINT32_T : MPI_UINT64_T;
  so.buckets = (size_t)1 << o.bits;
  so.first = block_first(&so, so.s);
  so.nloc = block_first(&so, so.s + 1) - so.first;
  if ((o.n + (uint64_t)so.p - 1) / (uint64_t)so.p > (uint64_t)INT_MAX) {
    if (so.s == 0)
      fprintf(stderr,
              "%s: a block of more than 2^31 - 1 keys exceeds MPI's int counts: use"
              " more processes or fewer keys\n",
              prog);
    MPI_Finalize();
    return 2;
  }

  unsigned char *input = alloc_keys(&so, "the input");
  rdx_make_keys(input, so.key_bytes, o.dist, o.seed, so.first, (size_t)so.nloc, o.n);
  so.cur = alloc_keys(&so, "the keys");
  so.next = alloc_keys(&so, "the keys");
  so.sendbuf = alloc_keys(&so, "the send buffer");
  so.recvbuf = alloc_keys(&so, "the receive buffer");
  so.counts = alloc_or_die(so.buckets * sizeof *so.counts, "the histogram");
  so.all = alloc_or_die((size_t)so.p * so.buckets * sizeof *so.all, "the histograms");
  so.starts = alloc_or_die((size_t)so.p * so.buckets * sizeof *so.starts, "the offsets");
  so.out = alloc_or_die(so.buckets * sizeof *so.out, "the scatter");
  size_t ints = (size_t)so.p * sizeof(int);
  so.sendcounts = alloc_or_die(ints, "the counts");
  so.sdispls = alloc_or_die(ints, "the counts");
  so.recvcounts = alloc_or_die(ints, "the counts");
  so.rdispls = alloc_or_die(ints, "the counts");

  double times[MAX_REPS];
  for (int rep = 0; rep < o.reps; rep++) {
    memcpy(so.cur, input, (size_t)so.nloc * (size_t)so.key_bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bspk_monotonic_seconds();
    sort_all_rounds(&so, &o);
    double mine = bspk_monotonic_seconds() - t0;
    MPI_Allreduce(&mine, &times[rep], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }

  char wrong[256] = "";
  int right = check_result(&so, &o, input, wrong, sizeof wrong);
  if (so.s == 0) {
    if (right) {
      bspk_sort_doubles(times, o.reps);
      printf("%s p=%d n=%llu bits=%d key_bits=%d dist=%s reps=%d median_s=%.6f min_s=%.6f\n", prog,
             so.p, (unsigned long long)o.n, o.bits, o.key_bits, rdx_dist_names[o.dist], o.reps,
             bspk_median_of_sorted(times, o.reps), times[0]);
    } else {
      fprintf(stderr, "%s: WRONG RESULT on %d processes (n = %llu, dist %s, %d-bit keys): %s\n",
              prog, so.p, (unsigned long long)o.n, rdx_dist_names[o.dist], o.key_bits, wrong);
    }
  }
  free(input);
  free(so.cur);
  free(so.next);
  free(so.sendbuf);
  free(so.recvbuf);
  free(so.counts);
  free(so.all);
  free(so.starts);
  free(so.out);
  free(so.sendcounts);
  free(so.sdispls);
  free(so.recvcounts);
  free(so.rdispls);
  MPI_Finalize();
  return right ? 0 : 1;
}
