// calibrate_cpu: the host's roofline for the CPU backend's model (model::predict_cpu), measured
// on all the OpenMP threads generated code runs on:
//  * DRAM bandwidth: STREAM's triad a = b + s c over arrays whose footprint is a multiple of
//    the whole last-level cache (every instance of it), so each repeat streams from memory.
//    Bytes are counted as STREAM does, 24 per element (write-allocate traffic not counted),
//    the same convention as the model's compulsory bytes per point.
//  * FP64 rate: independent chains of fused multiply-adds on every thread, enough chains to
//    cover the FMA latency on every FMA pipe, with 256-bit vectors where the CPU has AVX2 and
//    FMA: GCC vectorizes generated code (-march=native) at 256 bits by default even where
//    AVX-512 exists, so the wider rate would be one the generated code never reaches.
// Each is the median of repeats (turbo ramps, other processes and page faults hit single runs).
#include "calibrate/calibrate.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace saguaro::calibrate {
namespace {

using runtime::median;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "Intel(R) Xeon(R) Processor" from /proc/cpuinfo (x86: "model name"; some ARM kernels give
// only "Hardware" or nothing).
std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != "model name" && key != "Hardware") continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (!value.empty()) return value;
  }
  return "unknown CPU";
}

// An array of doubles on cache-line boundaries, pages placed by first touch (on the touching
// thread's NUMA node). Transparent huge pages are not asked for: zeroing 2 MiB pages at the
// fault costs more of the quick budget than their TLB reach gains a stream.
struct Array {
  double* data = nullptr;
  explicit Array(std::size_t n) {
    constexpr std::size_t kLine = 64;
    data = static_cast<double*>(
        std::aligned_alloc(kLine, (n * sizeof(double) + kLine - 1) / kLine * kLine));
    if (data == nullptr) throw std::bad_alloc();
  }
  ~Array() { std::free(data); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
};

struct Triad {
  double gb_per_s = 0;
  double mib_per_array = 0;
  int repeats = 0;
};

Triad measure_triad(bool quick, int repeats) {
  // Full: 8x the last-level cache; quick: 1.5x, enough to defeat LRU-like replacement while
  // keeping allocation and first touch inside the run-time budget.
  // The last-level cache of the whole machine (an EPYC has one L3 per CCD; sysconf reports
  // one): the triad must stream past all of them.
  const double llc = runtime::host_last_level_cache_bytes();
  const double footprint =
      std::max(quick ? 1.5 * llc : 8.0 * llc, quick ? 48.0 * (1 << 20) : 256.0 * (1 << 20));
  const long n = long(footprint / 3 / sizeof(double));
  const std::size_t size = std::size_t(n);
  Array a{size}, b{size}, c{size};
  double* pa = a.data;
  double* pb = b.data;
  double* pc = c.data;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    pa[i] = 0.0;
    pb[i] = 1.0;
    pc[i] = 2.0;
  }
  const double s = 3.0;
  std::vector<double> times;
  for (int r = 0; r < repeats + 1; ++r) { // the first run warms the threads and TLBs: dropped
    const Clock::time_point start = Clock::now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    const double t = seconds_since(start);
    if (r > 0) times.push_back(t);
  }
  volatile double sink = pa[n / 2]; // keeps the stores observable
  (void)sink;
  Triad out;
  out.gb_per_s = 24.0 * double(n) / median(times) * 1e-9;
  out.mib_per_array = double(n) * sizeof(double) / (1 << 20);
  out.repeats = repeats;
  return out;
}

// Independent FMA chains: `kChains` accumulators, each updated once per iteration, so the
// pipes always have kChains independent operations in flight (latency 4-5 cycles times 2
// FMA pipes needs 8-10). Returns the flops done and a value that depends on every chain.
constexpr int kChains = 12;

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) double fma_chains_avx2(long iterations, double& flops) {
  __m256d acc[kChains];
  const __m256d a = _mm256_set1_pd(0.9999999), b = _mm256_set1_pd(1e-9);
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_pd(1.0 + j);
  for (long i = 0; i < iterations; ++i)
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_pd(acc[j], a, b);
  __m256d sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm256_add_pd(sum, acc[j]);
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, sum);
  flops = double(iterations) * kChains * 4 * 2;
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// x86-64 without FMA: SSE2 multiply then add (two flops, two instructions).
double fma_chains_sse2(long iterations, double& flops) {
  __m128d acc[kChains];
  const __m128d a = _mm_set1_pd(0.9999999), b = _mm_set1_pd(1e-9);
  for (int j = 0; j < kChains; ++j) acc[j] = _mm_set1_pd(1.0 + j);
  for (long i = 0; i < iterations; ++i)
    for (int j = 0; j < kChains; ++j) acc[j] = _mm_add_pd(_mm_mul_pd(acc[j], a), b);
  __m128d sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm_add_pd(sum, acc[j]);
  alignas(16) double lanes[2];
  _mm_store_pd(lanes, sum);
  flops = double(iterations) * kChains * 2 * 2;
  return lanes[0] + lanes[1];
}
#else
// Other architectures: scalar chains the compiler may vectorize and contract as it does
// generated code.
double fma_chains_generic(long iterations, double& flops) {
  double acc[4 * kChains];
  for (int j = 0; j < 4 * kChains; ++j) acc[j] = 1.0 + j;
  for (long i = 0; i < iterations; ++i)
    for (int j = 0; j < 4 * kChains; ++j) acc[j] = acc[j] * 0.9999999 + 1e-9;
  double sum = 0;
  for (double v : acc) sum += v;
  flops = double(iterations) * 4 * kChains * 2;
  return sum;
}
#endif

struct Chains {
  double (*run)(long, double&);
  const char* what;
};

Chains fma_kernel() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {fma_chains_avx2, "256-bit AVX2 FMA"};
  return {fma_chains_sse2, "128-bit SSE2 multiply + add"};
#else
  return {fma_chains_generic, "scalar multiply-add, as the compiler vectorizes it"};
#endif
}

struct Fp64 {
  double gflop_per_s = 0;
  const char* what = "";
  int repeats = 0;
};

Fp64 measure_fp64(bool quick, int repeats) {
  const Chains kernel = fma_kernel();
  volatile double sink = 0;
  // One run of all threads; returns seconds, the flops in `flops`.
  auto run = [&](long iterations, double& flops) {
    double total = 0, result = 0;
    const Clock::time_point start = Clock::now();
#pragma omp parallel reduction(+ : total, result)
    {
      double f = 0;
      result += kernel.run(iterations, f);
      total += f;
    }
    const double t = seconds_since(start);
    sink = sink + result;
    flops = total;
    return t;
  };
  // Grow the run until it is long against thread start-up and timer resolution.
  const double target = quick ? 0.015 : 0.1;
  long iterations = 1 << 12;
  double flops = 0;
  while (run(iterations, flops) < target && iterations < (1L << 40)) iterations *= 2;
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const double t = run(iterations, flops);
    rates.push_back(flops / t * 1e-9);
  }
  return {median(rates), kernel.what, repeats};
}

} // namespace

model::Device calibrate_cpu(const CalibrationOptions& options) {
  const int repeats = options.repeats > 0 ? options.repeats : options.quick ? 3 : 20;
  const int threads = omp_get_max_threads();
  model::Device d;
  d.kind = "cpu";
  d.name = cpu_name();
  const std::string origin = "calibrated " + today() + " " + d.name + " " + options.command + ": ";
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };

  d.cores = threads;
  d.sources["cores"] = origin + "the OpenMP threads the measurements ran on (omp_get_max_threads)";
  say(fmt::format("cores: {} OpenMP threads", threads));

  const Triad triad = measure_triad(options.quick, repeats);
  d.dram_bandwidth = triad.gb_per_s;
  const std::string t = fmt::format("STREAM triad over {} threads, 3 arrays of {:.0f} MiB, 24 "
                                    "bytes per element, median of {}",
                                    threads, triad.mib_per_array, triad.repeats);
  d.sources["dram_bandwidth"] = origin + t;
  say(fmt::format("dram_bandwidth: {:.1f} GB/s ({})", triad.gb_per_s, t));

  const Fp64 fp = measure_fp64(options.quick, repeats);
  d.fp64_peak = fp.gflop_per_s;
  const std::string f = fmt::format("{} independent {} chains on each of {} threads, median of {}",
                                    kChains, fp.what, threads, fp.repeats);
  d.sources["fp64_peak"] = origin + f;
  say(fmt::format("fp64_peak: {:.1f} GFLOP/s ({})", fp.gflop_per_s, f));
  return d;
}

} // namespace saguaro::calibrate
