// `saguaro calibrate` on a GPU (calibrate/calibrate.hpp): microbenchmark kernels, compiled with
// NVRTC and launched through the driver, each built so that the one quantity it measures
// dominates its time; every measurement is repeated and the median kept. Sizes and limits come
// from the driver's device attributes; what is neither measured nor an attribute (line sizes,
// the paper's software parameters, ...) from a base description or documented defaults.
//
// Cycle counts come from clock64() (the SM clock) inside the kernels; rates from event-timed
// wall time converted to cycles with clock_ghz, the SM clock measured here (a kernel spinning
// on clock64() for a known number of cycles, timed with events). When the GPU clocks down under
// load the rates come out lower per cycle of clock_ghz, which is what the model, converting
// cycles to time with clock_ghz, needs to predict wall time.
#include "calibrate/gpu_bench.hpp"

#include "runtime/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::calibrate {
namespace {

using namespace gpu; // the microbenchmarks (gpu_bench.hpp)
using runtime::median;

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
constexpr std::size_t kPage = 2 * MiB;  // the GPU's large page (the DRAM chase's unit)
constexpr std::size_t kChaseLine = 128; // one chain node per 128-byte line: no two share a line

std::string size_text(std::size_t bytes) {
  if (bytes >= GiB && bytes % GiB == 0) return fmt::format("{} GiB", bytes / GiB);
  if (bytes >= MiB) return fmt::format("{:.4g} MiB", double(bytes) / double(MiB));
  return fmt::format("{:.4g} KiB", double(bytes) / double(KiB));
}

// One measured value and how it was measured (for its source and the progress line).
struct Measurement {
  double value = 0;
  std::string how;
  std::string detail; // progress only: side results worth seeing
};

class Calibration {
public:
  Calibration(const CalibrationOptions& options, Bench& bench)
      : bench_(bench), info_(bench.driver().info()) {
    quick_ = options.quick;
    repeats_ = options.repeats > 0 ? options.repeats : (quick_ ? 5 : 20);
    sm_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    l2_size_ = std::size_t(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    max_threads_per_block_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  }

  int attribute(CUdevice_attribute a) {
    Driver& d = bench_.driver();
    int v = 0;
    SAGUARO_CU(d, cuDeviceGetAttribute(&v, a, d.device()));
    return v;
  }
  int repeats() const { return repeats_; }

  // SM clock [GHz]: a kernel on every SM spinning for a known number of clock64() cycles.
  Measurement clock_ghz() {
    CUfunction spin = bench_.function("spin");
    DeviceBuffer elapsed(sizeof(long long));
    long long cycles = quick_ ? 20'000'000 : 200'000'000; // ~10 ms / ~100 ms at 2 GHz
    CUdeviceptr out = elapsed.get();
    void* params[] = {&cycles, &out};
    bench_.time_ms(spin, unsigned(sm_count_), 1, params); // wakes the GPU up to its clocks
    const int repeats = std::max(3, repeats_ / 4);
    std::vector<double> ghz;
    for (int r = 0; r < repeats; ++r) {
      const double ms = bench_.time_ms(spin, unsigned(sm_count_), 1, params);
      ghz.push_back(double(bench_.cycles(out)) / (ms * 1e-3) / 1e9);
    }
    clock_ghz_ = median(ghz);
    return {clock_ghz_,
            fmt::format("clock64() cycles of a kernel spinning {:.3g} cycles on every SM / its "
                        "event time, median of {}",
                        double(cycles), repeats),
            ""};
  }

  // DRAM bandwidth (read + write) [GB/s]: STREAM copy and triad, the better of the two.
  Measurement dram_bandwidth() {
    // Arrays far larger than L2 (at least 16x, 8x when quick), at most a fifth of memory each.
    std::size_t bytes = quick_ ? std::max<std::size_t>(256 * MiB, 8 * l2_size_)
                               : std::max<std::size_t>(1 * GiB, 16 * l2_size_);
    bytes = std::min(bytes, info_.memory_bytes / 5);
    bytes = bytes / kPage * kPage;
    if (bytes < 2 * l2_size_ || bytes < kPage)
      throw std::runtime_error("calibrate: too little GPU memory for arrays larger than L2");
    stream_bytes_ = bytes;
    a_ = std::make_unique<DeviceBuffer>(bytes);
    b_ = std::make_unique<DeviceBuffer>(bytes);
    c_ = std::make_unique<DeviceBuffer>(bytes);

    fill(*a_, 1.0);
    fill(*b_, 2.0);
    fill(*c_, 0.5);

    CUfunction copy = bench_.function("stream_copy");
    CUfunction triad = bench_.function("stream_triad");
    u64 n2 = bytes / 16;
    CUdeviceptr a = a_->get(), b = b_->get(), c = c_->get();
    double q = 0.5;
    void* copy_params[] = {&a, &b, &n2};
    void* triad_params[] = {&a, &b, &c, &q, &n2};
    // Two launch shapes: one wave of blocks striding over the arrays, and one 16-byte element
    // per thread (the same kernels: their loops then run once); the best of the four counts.
    struct Variant {
      const char* kernel;
      const char* shape;
      CUfunction f;
      unsigned blocks;
      void** params;
      double arrays; // read + written
      double gbs = 0;
    };
    const unsigned one_per_thread = unsigned((n2 + 255) / 256);
    std::vector<Variant> variants = {
        {"copy", "one wave", copy, bench_.full_wave(copy, 256, sm_count_), copy_params, 2},
        {"triad", "one wave", triad, bench_.full_wave(triad, 256, sm_count_), triad_params, 3},
        {"copy", "one element per thread", copy, one_per_thread, copy_params, 2},
        {"triad", "one element per thread", triad, one_per_thread, triad_params, 3},
    };
    bench_.time_ms(copy, variants[0].blocks, 256, copy_params); // first touch, clocks up
    std::vector<std::vector<double>> ms(variants.size());
    for (int r = 0; r < repeats_; ++r) // interleaved: a drift in clocks touches all alike
      for (std::size_t v = 0; v < variants.size(); ++v)
        ms[v].push_back(bench_.time_ms(variants[v].f, variants[v].blocks, 256, variants[v].params));
    std::string all;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      variants[v].gbs = variants[v].arrays * double(bytes) / (median(ms[v]) * 1e-3) / 1e9;
      all += fmt::format("{}{} {} {:.0f}", v ? ", " : "", variants[v].kernel, variants[v].shape,
                         variants[v].gbs);
    }
    const Variant& best =
        *std::max_element(variants.begin(), variants.end(),
                          [](const Variant& x, const Variant& y) { return x.gbs < y.gbs; });
    Measurement m;
    m.value = best.gbs;
    m.how = fmt::format("{} of {} x {}, {} ({} blocks x 256), grid-stride 16-byte accesses, "
                        "read + write counted, median of {}; the best of {} GB/s",
                        best.kernel, int(best.arrays), size_text(bytes), best.shape, best.blocks,
                        repeats_, all);
    m.detail = fmt::format("{}; GB/s over {}", all, size_text(bytes));
    return m;
  }

  // L2 bandwidth [GB/s]: a full wave of threads reading a buffer well inside L2 with .cg loads.
  Measurement l2_bandwidth() {
    // The largest power of two not above a quarter of L2 (the mask indexing needs a power of 2).
    std::size_t bytes = 64 * KiB;
    while (2 * bytes <= l2_size_ / 4) bytes *= 2;
    DeviceBuffer buffer(bytes);
    fill(buffer, 1.0);
    CUdeviceptr p = buffer.get();
    DeviceBuffer sink(sizeof(double));
    CUdeviceptr out = sink.get();

    CUfunction read = bench_.function("l2_read");
    const unsigned blocks = bench_.full_wave(read, 256, sm_count_);
    u64 mask = bytes / 16 - 1;
    // Enough passes over the buffer for about a millisecond (quick) or five at several TB/s.
    const u64 passes = std::max<u64>(1, (quick_ ? 4 * GiB : 32 * GiB) / bytes);
    u64 total = passes * (bytes / 16);
    void* params[] = {&p, &mask, &total, &out};
    bench_.time_ms(read, blocks, 256, params); // warm: the buffer into L2
    std::vector<double> ms;
    for (int r = 0; r < repeats_; ++r) ms.push_back(bench_.time_ms(read, blocks, 256, params));
    const double gbs = double(total) * 16.0 / (median(ms) * 1e-3) / 1e9;
    return {gbs,
            fmt::format("{} passes of ld.global.cg 16-byte loads over {} (L2 {}), one wave of "
                        "{} blocks x 256, median of {}",
                        passes, size_text(bytes), size_text(l2_size_), blocks, repeats_),
            fmt::format("{} buffer, {:.3g} ms", size_text(bytes), median(ms))};
  }

  // DRAM latency [cycles]: a cold chain over the (by then idle) triad array c, far larger than
  // L2; pages in random order, in each page `per_page` random lines, so each load misses L2
  // and only one in `per_page` needs a new page's translation.
  Measurement dram_latency() {
    if (!c_) throw std::logic_error("calibrate: dram_latency needs the DRAM arrays");
    const std::size_t pages = stream_bytes_ / kPage;
    const std::size_t per_page = quick_ ? 32 : 128;
    std::vector<std::size_t> page_order(pages);
    std::iota(page_order.begin(), page_order.end(), std::size_t(0));
    std::shuffle(page_order.begin(), page_order.end(), rng_);
    std::vector<std::size_t> lines(kPage / kChaseLine);
    std::iota(lines.begin(), lines.end(), std::size_t(0));
    std::vector<u64> offsets;
    offsets.reserve(pages * per_page);
    for (std::size_t page : page_order) {
      // The first per_page of a random shuffle: distinct random lines of this page.
      for (std::size_t i = 0; i < per_page; ++i) {
        std::uniform_int_distribution<std::size_t> pick(i, lines.size() - 1);
        std::swap(lines[i], lines[pick(rng_)]);
        offsets.push_back(u64(page * kPage + lines[i] * kChaseLine));
      }
    }
    const u64 start = link(*c_, offsets);

    // Before each run: a copy of a into b flushes L2 of the chain.
    CUfunction copy = bench_.function("stream_copy");
    CUdeviceptr a = a_->get(), b = b_->get();
    u64 n2 = stream_bytes_ / 16;
    void* copy_params[] = {&a, &b, &n2};
    const unsigned copy_blocks = bench_.full_wave(copy, 256, sm_count_);
    const int repeats = std::max(3, repeats_ / 2);
    std::vector<double> per_load;
    for (int r = 0; r < repeats; ++r) {
      bench_.launch(copy, copy_blocks, 256, copy_params);
      per_load.push_back(chase("chase_cg", start, 0, int(offsets.size())));
    }
    // The arrays (a few GiB) are not needed any more.
    a_.reset();
    b_.reset();
    c_.reset();
    return {median(per_load),
            fmt::format("one thread chasing ld.global.cg pointers, {} loads over {} after L2 "
                        "was flushed: {} random 128-byte lines in each of {} 2 MiB pages in "
                        "random order, median of {}",
                        offsets.size(), size_text(stream_bytes_), per_page, pages, repeats),
            ""};
  }

  // L2 latency [cycles]: the same chase over a few MiB of random lines, after a warm pass.
  Measurement l2_latency() {
    const std::size_t bytes = std::min<std::size_t>(4 * MiB, l2_size_ / 8);
    std::vector<u64> offsets(bytes / kChaseLine);
    for (std::size_t i = 0; i < offsets.size(); ++i) offsets[i] = u64(i * kChaseLine);
    std::shuffle(offsets.begin(), offsets.end(), rng_);
    DeviceBuffer buffer(bytes);
    const u64 start = link(buffer, offsets);
    const int n = int(offsets.size());
    std::vector<double> per_load;
    for (int r = 0; r < repeats_; ++r) per_load.push_back(chase("chase_cg", start, n, n));
    return {median(per_load),
            fmt::format("one thread chasing ld.global.cg pointers through {} random 128-byte "
                        "lines of {} after a warm pass, median of {}",
                        n, size_text(bytes), repeats_),
            ""};
  }

  // Read-only / L1 latency [cycles]: ld.global.nc over 16 KiB, after a warm pass.
  Measurement readonly_latency() {
    const std::size_t bytes = 16 * KiB;
    std::vector<u64> offsets(bytes / kChaseLine);
    for (std::size_t i = 0; i < offsets.size(); ++i) offsets[i] = u64(i * kChaseLine);
    std::shuffle(offsets.begin(), offsets.end(), rng_);
    DeviceBuffer buffer(bytes);
    const u64 start = link(buffer, offsets);
    const int n = int(offsets.size());
    const int steps = n * 64;
    std::vector<double> per_load;
    for (int r = 0; r < repeats_; ++r) per_load.push_back(chase("chase_nc", start, n, steps));
    return {median(per_load),
            fmt::format("one thread chasing ld.global.nc (__ldg) pointers, {} loads cycling "
                        "through {} random 128-byte lines of {} after a warm pass, median of {}",
                        steps, n, size_text(bytes), repeats_),
            ""};
  }

  // Shared-memory latency [cycles]: a chain of 1024 shared addresses in random order.
  Measurement shared_latency() {
    std::vector<unsigned> order(1024);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng_);
    DeviceBuffer order_buffer(order.size() * sizeof(unsigned));
    bench_.upload(order_buffer.get(), order);
    DeviceBuffer cycles(sizeof(long long)), sink(sizeof(unsigned));
    CUfunction f = bench_.function("chase_shared");
    CUdeviceptr order_p = order_buffer.get(), cycles_p = cycles.get(), sink_p = sink.get();
    int n = int(order.size());
    int steps = n * 16;
    void* params[] = {&order_p, &n, &steps, &cycles_p, &sink_p};
    return {median_cycles(f, 1, params, cycles_p, steps),
            fmt::format("one thread chasing ld.shared.u32 addresses, {} loads cycling through "
                        "1024 words in random order, median of {}",
                        steps, repeats_),
            ""};
  }

  // The median over repeats_ launches of one block of `threads` threads of the clock cycles `f`
  // counts into cycles_p, divided by `per` (the loads, barriers or operations it timed).
  double median_cycles(CUfunction f, unsigned threads, void** params, CUdeviceptr cycles_p,
                       double per) {
    std::vector<double> samples;
    for (int r = 0; r < repeats_; ++r) {
      bench_.launch(f, 1, threads, params);
      samples.push_back(double(bench_.cycles(cycles_p)) / per);
    }
    return median(samples);
  }

  // Barrier latency [cycles]: a block of the most threads passing __syncthreads() in a loop.
  Measurement barrier_latency() {
    CUfunction f = bench_.function("barriers");
    DeviceBuffer cycles(sizeof(long long));
    CUdeviceptr cycles_p = cycles.get();
    int count = quick_ ? 4096 : 65536;
    void* params[] = {&count, &cycles_p};
    const unsigned threads = unsigned(max_threads_per_block_);
    return {median_cycles(f, threads, params, cycles_p, count),
            fmt::format("one block of {} threads passing {} __syncthreads() in a loop, cycles "
                        "per barrier, median of {}",
                        threads, count, repeats_),
            ""};
  }

  // FP64 latency [cycles]: one thread, one dependent chain of fma.
  Measurement fp_latency() {
    CUfunction f = bench_.function("fma_chain");
    DeviceBuffer cycles(sizeof(long long)), out(sizeof(double));
    CUdeviceptr cycles_p = cycles.get(), out_p = out.get();
    double a = 0.999999, b = 1e-3;
    int count = quick_ ? 8192 : 65536;
    void* params[] = {&a, &b, &count, &cycles_p, &out_p};
    return {median_cycles(f, 1, params, cycles_p, count),
            fmt::format("one thread, a dependent chain of {} double fma, median of {}", count,
                        repeats_),
            ""};
  }

  // Launch overhead [us]: empty kernels launched back to back, per launch.
  Measurement launch_overhead() {
    CUfunction f = bench_.function("empty");
    const int count = quick_ ? 200 : 1000;
    bench_.time_ms(f, 1, 1, nullptr, count); // warm
    std::vector<double> us;
    for (int r = 0; r < repeats_; ++r)
      us.push_back(bench_.time_ms(f, 1, 1, nullptr, count) * 1e3 / count);
    return {median(us),
            fmt::format("{} empty kernels (1 block x 1 thread) launched back to back between "
                        "two events, time per launch, median of {}",
                        count, repeats_),
            ""};
  }

  // An issue rate [operations/cycle/SM]: `kernel` over one full wave of 256-thread blocks,
  // its iteration count grown until one run takes about `target_ms`.
  Measurement rate(const char* kernel, int ops_per_iteration, std::vector<void*> leading,
                   const std::string& what) {
    CUfunction f = bench_.function(kernel);
    const unsigned blocks = bench_.full_wave(f, kRateThreads, sm_count_);
    DeviceBuffer out(std::size_t(blocks) * kRateThreads * sizeof(double));
    DeviceBuffer cycles(sizeof(long long));
    CUdeviceptr out_p = out.get(), cycles_p = cycles.get();
    int iterations = 16;
    std::vector<void*> params = std::move(leading);
    params.insert(params.end(), {&iterations, &out_p, &cycles_p});

    const double target_ms = quick_ ? 4.0 : 25.0;
    auto run = [&] {
      bench_.zero(cycles_p, sizeof(long long));
      return bench_.time_ms(f, blocks, kRateThreads, params.data());
    };
    double ms = run();
    while (ms < target_ms / 8 && iterations < (1 << 26)) {
      iterations *= 8;
      ms = run();
    }
    iterations = int(std::clamp(double(iterations) * target_ms / ms, 1.0, double(1 << 30)));
    std::vector<double> times;
    const int repeats = std::max(3, repeats_ / 2);
    for (int r = 0; r < repeats; ++r) times.push_back(run());
    const double seconds = median(times) * 1e-3;
    const double ops_per_sm =
        double(blocks) * kRateThreads * double(iterations) * ops_per_iteration / sm_count_;
    const double rate = ops_per_sm / (seconds * clock_ghz_ * 1e9);
    const double run_ghz = double(bench_.cycles(cycles_p)) / (times.back() * 1e-3) / 1e9;
    return {rate,
            fmt::format("{}, one wave of {} blocks x {}, event time in cycles of clock_ghz, "
                        "median of {}",
                        what, blocks, kRateThreads, repeats),
            fmt::format("{:.3g} ms per run; SM clock during the run {:.3g} GHz "
                        "({:.4g}/cycle/SM at that clock)",
                        median(times), run_ghz, ops_per_sm / (seconds * run_ghz * 1e9))};
  }

  Measurement fp64_rate() {
    double a = 0.999999, b = 1e-3;
    return rate("fp64_fma_rate", kFmaPerIteration, {&a, &b},
                "8 independent chains of double fma per thread (an fma counted as one)");
  }
  Measurement fp64_div_rate() {
    double a = 1.25;
    return rate("fp64_div_rate", kSlowOpsPerIteration, {&a},
                "4 independent chains of double division (x = a / x) per thread");
  }
  Measurement fp64_sqrt_rate() {
    double a = 0;
    return rate("fp64_sqrt_rate", kSlowOpsPerIteration, {&a},
                "4 independent chains of double sqrt per thread");
  }
  // sin and exp, the time per operation averaged (the model has one rate for all of them).
  Measurement fp64_special_rate() {
    double a = 0;
    const Measurement e = rate("fp64_exp_rate", kSlowOpsPerIteration, {&a}, "exp");
    const Measurement s = rate("fp64_sin_rate", kSlowOpsPerIteration, {&a}, "sin");
    const double combined = 2.0 / (1.0 / e.value + 1.0 / s.value);
    const int repeats = std::max(3, repeats_ / 2);
    return {combined,
            fmt::format("4 independent chains per thread of double exp (x = exp(-x), {:.3g}/"
                        "cycle/SM) and of sin (x = sin(x), {:.3g}/cycle/SM), time per operation "
                        "averaged, one wave of 256-thread blocks, event time in cycles of "
                        "clock_ghz, median of {}",
                        e.value, s.value, repeats),
            fmt::format("exp {:.3g}, sin {:.3g}; exp: {}", e.value, s.value, e.detail)};
  }
  Measurement load_store_rate() {
    return rate("shared_load_rate", kSharedLoadsPerIteration, {},
                "8-byte shared-memory loads (ld.shared.f64, conflict free) into 8 sums per "
                "thread, counted per thread");
  }

private:
  void fill(const DeviceBuffer& buffer, double value) {
    CUfunction f = bench_.function("fill");
    CUdeviceptr p = buffer.get();
    u64 n = buffer.bytes() / sizeof(double);
    void* params[] = {&p, &n, &value};
    bench_.launch(f, unsigned(sm_count_) * 8, 256, params);
    bench_.synchronize();
  }

  // Writes the pointer chain through `offsets` into `buffer`; returns its first address.
  u64 link(const DeviceBuffer& buffer, const std::vector<u64>& offsets) {
    DeviceBuffer offsets_buffer(offsets.size() * sizeof(u64));
    bench_.upload(offsets_buffer.get(), offsets);
    CUfunction f = bench_.function("link_chain");
    CUdeviceptr base = buffer.get(), offsets_p = offsets_buffer.get();
    int n = int(offsets.size());
    void* params[] = {&base, &offsets_p, &n};
    bench_.launch(f, unsigned(sm_count_) * 4, 256, params);
    bench_.synchronize();
    return u64(base) + offsets[0];
  }

  // Cycles per load of one thread's chase: `warm_steps` untimed, then `steps` timed.
  double chase(const char* kernel, u64 start, int warm_steps, int steps) {
    CUfunction f = bench_.function(kernel);
    DeviceBuffer cycles(sizeof(long long)), sink(sizeof(u64));
    CUdeviceptr cycles_p = cycles.get(), sink_p = sink.get();
    void* params[] = {&start, &warm_steps, &steps, &cycles_p, &sink_p};
    bench_.launch(f, 1, 1, params);
    return double(bench_.cycles(cycles_p)) / steps;
  }

  Bench& bench_;
  runtime::cuda::DeviceInfo info_;
  bool quick_ = false;
  int repeats_ = 0;
  int sm_count_ = 0;
  std::size_t l2_size_ = 0;
  int max_threads_per_block_ = 0;
  double clock_ghz_ = 0;
  std::size_t stream_bytes_ = 0;
  std::unique_ptr<DeviceBuffer> a_, b_, c_;
  std::mt19937_64 rng_{20240917}; // fixed: the same chains every run
};

// A value for the progress lines: sizes and counts in full, measurements to 4 digits.
std::string value_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

const model::Quantity& quantity(const std::string& name) {
  for (const model::Quantity& q : model::quantities())
    if (name == q.name) return q;
  throw std::logic_error("calibrate: no quantity named " + name);
}

// The unified L1 / shared-memory array per SM by compute capability (CUDA C++ Programming
// Guide, "Compute Capabilities": Volta, Turing, Ampere, Ada, Hopper, Blackwell).
int unified_l1_shared_kib(int major, int minor) {
  const std::pair<int, int> known[] = {
      {70, 128}, {72, 128}, {75, 96},  {80, 192},  {86, 128},
      {87, 192}, {89, 128}, {90, 256}, {100, 256}, {120, 128},
  };
  for (const auto& [cc, kib] : known)
    if (cc == major * 10 + minor) return kib;
  return 0;
}

} // namespace

model::Device calibrate_gpu(const model::Device* base, const CalibrationOptions& options) {
  std::string why;
  if (!runtime::cuda::available(&why)) throw std::runtime_error("no GPU can be calibrated: " + why);
  Driver& d = Driver::get();
  const runtime::cuda::DeviceInfo& info = d.info();

  // Start from the base, so that what is not measured keeps its value and source there.
  model::Device device = base != nullptr ? *base : model::Device{};
  device.kind = "gpu";
  device.name = info.name;
  device.arch = info.arch();
  // The base may describe another model (an H100's file as the base for an H200): keep only
  // the `match` substrings that this GPU's name contains.
  device.match.erase(std::remove_if(device.match.begin(), device.match.end(),
                                    [&](const std::string& m) {
                                      return m.empty() || info.name.find(m) == std::string::npos;
                                    }),
                     device.match.end());
  // A CPU description's quantities do not belong in a GPU's; the optional ones (the
  // interconnect, measured by `saguaro calibrate --interconnect`) stay with their sources.
  for (const model::Quantity& q : model::quantities())
    if (!q.gpu && !q.optional) {
      device.*(q.member) = 0;
      device.sources.erase(q.name);
    }

  const std::string date = today();
  auto set = [&](const std::string& name, double value, const std::string& source,
                 const std::string& detail = "") {
    const model::Quantity& q = quantity(name);
    device.*(q.member) = value;
    device.sources[name] = source;
    if (options.progress)
      options.progress(fmt::format("{:<26} {:>10} {:<22}{}", name, value_text(value), q.unit,
                                   detail.empty() ? "" : "  (" + detail + ")"));
  };
  auto measured = [&](const std::string& name, const Measurement& m) {
    set(name, m.value,
        fmt::format("calibrated {} {} {}: {}", date, info.name, options.command, m.how), m.detail);
  };
  const std::string cc = fmt::format("{}.{}", info.cc_major, info.cc_minor);
  const std::string guide = "CUDA programming guide, compute capability " + cc;

  Bench bench(options);
  Calibration calibration(options, bench);

  // Properties: the driver's device attributes.
  auto attribute = [&](const std::string& name, CUdevice_attribute a, const char* a_name) {
    set(name, calibration.attribute(a), std::string("CUDA driver attribute ") + a_name);
  };
#define SAGUARO_ATTRIBUTE(name, a) attribute(name, a, #a)
  SAGUARO_ATTRIBUTE("sm_count", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  SAGUARO_ATTRIBUTE("registers_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  SAGUARO_ATTRIBUTE("shared_memory_per_sm",
                    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  SAGUARO_ATTRIBUTE("l2_size", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  SAGUARO_ATTRIBUTE("max_threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  SAGUARO_ATTRIBUTE("max_threads_per_sm", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  SAGUARO_ATTRIBUTE("max_blocks_per_sm", CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  SAGUARO_ATTRIBUTE("shared_memory_per_block",
                    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  SAGUARO_ATTRIBUTE("warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE);
#undef SAGUARO_ATTRIBUTE
  set("max_registers_per_thread", 255,
      guide + " (255 registers per thread; the driver has no attribute for it)");

  // Measurements. The clock first: the rates are converted to cycles with it.
  measured("clock_ghz", calibration.clock_ghz());
  measured("launch_overhead", calibration.launch_overhead());
  measured("dram_bandwidth", calibration.dram_bandwidth());
  measured("dram_latency", calibration.dram_latency());
  measured("l2_bandwidth", calibration.l2_bandwidth());
  measured("l2_latency", calibration.l2_latency());
  measured("readonly_latency", calibration.readonly_latency());
  measured("shared_latency", calibration.shared_latency());
  measured("barrier_latency", calibration.barrier_latency());
  measured("fp_latency", calibration.fp_latency());
  measured("fp64_rate", calibration.fp64_rate());
  measured("fp64_div_rate", calibration.fp64_div_rate());
  measured("fp64_sqrt_rate", calibration.fp64_sqrt_rate());
  measured("fp64_special_rate", calibration.fp64_special_rate());
  measured("load_store_rate", calibration.load_store_rate());

  // Neither measured nor an attribute: the base's where it has them, else defaults.
  auto otherwise = [&](const std::string& name, double value, const std::string& source) {
    if (base != nullptr && base->sources.count(name) != 0) {
      if (options.progress)
        options.progress(fmt::format("{:<26} {:>10} {:<22}  (from the base description)", name,
                                     value_text(device.*(quantity(name).member)),
                                     quantity(name).unit));
      return;
    }
    set(name, value, source);
  };
  int unified_kib = unified_l1_shared_kib(info.cc_major, info.cc_minor);
  std::string unified_source = guide;
  if (unified_kib == 0 && info.cc_major >= 7) {
    // A compute capability after this table: its carve-outs have so far always left 28 to 32
    // KiB of L1 beside the most shared memory, in a multiple of 32 KiB.
    const double shared_kib = device.shared_memory_per_sm / KiB;
    unified_kib = int(std::ceil((shared_kib + 28) / 32) * 32);
    unified_source = fmt::format("estimated for compute capability {} as shared_memory_per_sm + "
                                 "28 KiB, rounded up to 32 KiB (as for 7.0 to 12.0)",
                                 cc);
  }
  otherwise("unified_l1_shared_per_sm", unified_kib * double(KiB), unified_source);
  otherwise("readonly_cache_per_sm", unified_kib * double(KiB),
            guide + " (the whole unified L1 / shared array: the model carves out the shared "
                    "memory of resident blocks)");
  otherwise("readonly_line", 128, guide + " (128-byte L1 cache lines)");
  otherwise("l2_line", 32, guide + " (32-byte L2 sectors)");
  otherwise("register_allocation_unit", 256,
            guide + " (registers allocated per warp in units of 256: the occupancy calculator)");
  otherwise("global_loads_cached_in_l1", info.cc_major >= 7 ? 1 : 0,
            guide + (info.cc_major >= 7 ? " (global loads are cached in L1 by default)"
                                        : " (global loads are cached in L2 only by default)"));
  const std::string table_iiib = "default (Hu et al. Table IIIb)";
  otherwise("parallel_global", 3, table_iiib);
  otherwise("parallel_l2", 3,
            "default (Hu et al. Table IIIb: lambda_L2 is not listed there; lambda_g's value)");
  otherwise("parallel_shared", 3, table_iiib);
  otherwise("parallel_barrier", 3, table_iiib);
  otherwise("parallel_readonly", 3, table_iiib);
  otherwise("parallel_fp", 3, table_iiib);
  otherwise("iteration_overhead", 100, table_iiib);
  otherwise("beta", 0.8,
            "default (Hu et al. Sec. V-C, eq. 1: 0.8 works well for the codes studied)");
  otherwise("chemora_overlap", 0.35, "default (Chemora: 0.35 of the non-maximal parts)");
  return device;
}

} // namespace saguaro::calibrate
