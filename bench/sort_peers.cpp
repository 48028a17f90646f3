/*
 * sort_peers - the sorts people use, on the keys bspalg-rdxsort sorts (rdx_make_keys, 32-bit:
 * same --size, --dist and --seed give the same input), for bench/run_rdxsort_bench.sh:
 *
 *   gnu-parallel  __gnu_parallel::sort (libstdc++ parallel mode, OpenMP), T threads
 *   tbb           tbb::parallel_sort, at most T threads (tbb::global_control)
 *   spreadsort    boost::sort::spreadsort::spreadsort, one core
 *   vqsort        Google Highway's vectorized quicksort (hwy::Sorter, libhwy_contrib), one core
 *   std           std::sort, one core (the baseline)
 *   rdx-seq       our rdx_sort_sequential (LSD radix sort, --bits digits; 0: its choice by n),
 *                 one core
 *
 *   sort_peers --sort S [--size N] [--threads T] [-r R] [--dist D] [--seed S] [--bits B]
 *   prints: sort_peers sort=S threads=T n=N dist=D [bits=B] reps=R median_s=... min_s=...
 *
 * Each repetition copies the input into the array to sort (untimed) and times the sort
 * alone; one untimed warm-up first (thread pools started, memory of the sort's own buffers
 * touched once). The result is checked after every repetition: in order and a permutation of
 * the input (rdx_fingerprint); exit status 1 when wrong, 2 for a usage error or a peer this
 * build lacks (CMake compiles each in only when it finds its library).
 */
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "rdxsort_kernels.h"
}

#ifdef SORT_PEERS_HAVE_GNU_PARALLEL
#include <omp.h>
#include <parallel/algorithm>
#endif
#ifdef SORT_PEERS_HAVE_TBB
#include <tbb/global_control.h>
#include <tbb/parallel_sort.h>
#endif
#ifdef SORT_PEERS_HAVE_SPREADSORT
#include <boost/sort/spreadsort/spreadsort.hpp>
#endif
#ifdef SORT_PEERS_HAVE_VQSORT
#include <hwy/contrib/sort/vqsort.h>
#endif

namespace {

const char prog[] = "sort_peers";

struct Peer {
  const char *name;
  bool parallel;     // takes --threads; the others run on one core
  const char *lacks; // why this build has not got it, or nullptr
};

const Peer peers[] = {
    {"gnu-parallel", true,
#ifdef SORT_PEERS_HAVE_GNU_PARALLEL
     nullptr
#else
     "CMake found no OpenMP for C++, which libstdc++'s parallel mode needs"
#endif
    },
    {"tbb", true,
#ifdef SORT_PEERS_HAVE_TBB
     nullptr
#else
     "CMake found no TBB; Debian: libtbb-dev"
#endif
    },
    {"spreadsort", false,
#ifdef SORT_PEERS_HAVE_SPREADSORT
     nullptr
#else
     "CMake found no boost/sort/spreadsort/spreadsort.hpp; Debian: libboost-dev"
#endif
    },
    {"vqsort", false,
#ifdef SORT_PEERS_HAVE_VQSORT
     nullptr
#else
     "CMake found no Highway (hwy, with hwy_contrib's vqsort); Debian: libhwy-dev"
#endif
    },
    {"std", false, nullptr},
    {"rdx-seq", false, nullptr},
};

struct Options {
  std::string sort;
  long n = 1L << 24;
  int threads = 1, reps = 3, bits = 0;
  rdx_dist dist = RDX_UNIFORM;
  unsigned long seed = 1;
};

void usage(FILE *to) {
  std::fprintf(
      to,
      "usage: %s --sort S [options]\n"
      "Sorts N 32-bit keys (the inputs of bspalg-rdxsort) with a peer sort and prints"
      " the median time.\n"
      "  --sort S      gnu-parallel, tbb (T threads), spreadsort, vqsort, std, rdx-seq (one"
      " core)\n"
      "  --size N      keys (default 16777216 = 2^24)\n"
      "  --threads T   threads of gnu-parallel and tbb (default 1; the others take 1)\n"
      "  -r, --reps R  timed repetitions (default 3)\n"
      "  --dist D      uniform (default), zipf, sorted, few-distinct or equal\n"
      "  --seed S      seed of the keys (default 1, as bspalg-rdxsort)\n"
      "  --bits B      digit bits of rdx-seq, 1..16, or 0 (default): rdx_sequential_bits(N)\n"
      "Built in:",
      prog);
  for (const Peer &p : peers)
    if (!p.lacks) std::fprintf(to, " %s", p.name);
  std::fprintf(to, "\n");
  for (const Peer &p : peers)
    if (p.lacks) std::fprintf(to, "Not built in: %s: %s\n", p.name, p.lacks);
}

// "prog: what 'value'" (value may be nullptr), the usage, exit status 2.
[[noreturn]] void usage_error(const char *what, const char *value) {
  if (value) std::fprintf(stderr, "%s: %s '%s'\n", prog, what, value);
  else std::fprintf(stderr, "%s: %s\n", prog, what);
  usage(stderr);
  std::exit(2);
}

long parse_long(const char *what, const char *text, long min, long max) {
  char *end = nullptr;
  long v = text ? std::strtol(text, &end, 10) : 0;
  if (!text || *text == '\0' || *end != '\0' || v < min || v > max) {
    std::fprintf(stderr, "%s: %s must be an integer from %ld to %ld, not '%s'\n", prog, what, min,
                 max, text ? text : "");
    std::exit(2);
  }
  return v;
}

Options parse_options(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    }
    const char *value = i + 1 < argc ? argv[++i] : nullptr;
    if (!value) usage_error("unknown option or missing value:", a.c_str());
    if (a == "--sort") o.sort = value;
    else if (a == "--size") o.n = parse_long("--size", value, 1, 1L << 32);
    else if (a == "--threads") o.threads = (int)parse_long("--threads", value, 1, 1024);
    else if (a == "-r" || a == "--reps") o.reps = (int)parse_long("--reps", value, 1, 1000);
    else if (a == "--seed") o.seed = (unsigned long)parse_long("--seed", value, 0, LONG_MAX);
    else if (a == "--bits") o.bits = (int)parse_long("--bits", value, 0, 16);
    else if (a == "--dist") {
      int d = 0;
      while (d < RDX_NDISTS && std::strcmp(value, rdx_dist_names[d])) d++;
      if (d == RDX_NDISTS)
        usage_error("--dist must be uniform, zipf, sorted, few-distinct or equal, not", value);
      o.dist = static_cast<rdx_dist>(d);
    } else usage_error("unknown option:", a.c_str());
  }
  if (o.sort.empty()) usage_error("--sort is required", nullptr);
  return o;
}

const Peer &peer_named(const Options &o) {
  for (const Peer &p : peers) {
    if (o.sort != p.name) continue;
    if (p.lacks) {
      std::fprintf(stderr, "%s: this build has no %s: %s\n", prog, p.name, p.lacks);
      std::exit(2);
    }
    if (!p.parallel && o.threads != 1) {
      std::fprintf(stderr, "%s: %s runs on one core: --threads must be 1, not %d\n", prog, p.name,
                   o.threads);
      std::exit(2);
    }
    return p;
  }
  usage_error("--sort must be gnu-parallel, tbb, spreadsort, vqsort, std or rdx-seq, not",
              o.sort.c_str());
}

// Sorts keys with the peer `name`; scratch is rdx-seq's second array.
void run_sort(const std::string &name, std::vector<uint32_t> &keys, std::vector<uint32_t> &scratch,
              int bits) {
#ifdef SORT_PEERS_HAVE_GNU_PARALLEL
  if (name == "gnu-parallel") return __gnu_parallel::sort(keys.begin(), keys.end());
#endif
#ifdef SORT_PEERS_HAVE_TBB
  if (name == "tbb") return tbb::parallel_sort(keys.begin(), keys.end());
#endif
#ifdef SORT_PEERS_HAVE_SPREADSORT
  if (name == "spreadsort") return boost::sort::spreadsort::spreadsort(keys.begin(), keys.end());
#endif
#ifdef SORT_PEERS_HAVE_VQSORT
  if (name == "vqsort") {
    static hwy::Sorter sorter; // its buffer allocated once, outside the timed repetitions
    return sorter(keys.data(), keys.size(), hwy::SortAscending());
  }
#endif
  if (name == "std") return std::sort(keys.begin(), keys.end());
  rdx_sort_sequential(keys.data(), scratch.data(), 4, keys.size(), bits);
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse_options(argc, argv);
  const Peer &peer = peer_named(o);
  int threads = peer.parallel ? o.threads : 1;
#ifdef SORT_PEERS_HAVE_GNU_PARALLEL
  omp_set_num_threads(threads);
#endif
#ifdef SORT_PEERS_HAVE_TBB
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<size_t>(threads));
#endif

  size_t n = static_cast<size_t>(o.n);
  std::vector<uint32_t> input(n), keys(n), scratch(peer.name == std::string("rdx-seq") ? n : 0);
  rdx_make_keys(input.data(), 4, o.dist, o.seed, 0, n, n);
  uint64_t fingerprint = rdx_fingerprint(input.data(), 4, n);

  std::vector<double> times;
  for (int rep = -1; rep < o.reps; rep++) { // rep -1: the warm-up
    std::copy(input.begin(), input.end(), keys.begin());
    auto t0 = std::chrono::steady_clock::now();
    run_sort(o.sort, keys, scratch, o.bits);
    auto t1 = std::chrono::steady_clock::now();
    if (rep >= 0) times.push_back(std::chrono::duration<double>(t1 - t0).count());
    size_t descent = rdx_first_descent(keys.data(), 4, n);
    if (descent < n || rdx_fingerprint(keys.data(), 4, n) != fingerprint) {
      std::fprintf(stderr, "%s: WRONG RESULT of %s (n = %zu, dist %s): %s\n", prog, peer.name, n,
                   rdx_dist_names[o.dist],
                   descent < n ? "out of order" : "not a permutation of the input");
      return 1;
    }
  }
  std::sort(times.begin(), times.end());
  size_t m = times.size();
  double median = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
  std::string digits; // rdx-seq: the digit width it ran with
  if (o.sort == "rdx-seq")
    digits = " bits=" + std::to_string(o.bits ? o.bits : rdx_sequential_bits(n));
  std::printf("%s sort=%s threads=%d n=%zu dist=%s%s reps=%d median_s=%.6f min_s=%.6f\n", prog,
              peer.name, threads, n, rdx_dist_names[o.dist], digits.c_str(), o.reps, median,
              times[0]);
  return 0;
}
