// The generated CUDA kernels against the memory-bandwidth limit of the GPU at hand.
//
// For each benchmark (an EDL file and finite-difference order) and each mapping variant
// (buffering strategy x block configuration) the right-hand-side calculation runs on an
// n^3 interior (ghost zones as the stencil needs) with arrays on the device: 3 warm-up
// launches, then `repeats` timed launches (CUDA events around each); the median is reported.
// Compulsory traffic counts each input grid function read once and each output written once
// over the interior; its rate is compared with the device-to-device copy bandwidth measured
// in the same run (a copy of 2 x 1 GiB arrays through the backend's own copy kernel, read +
// write counted, median of 20).
//
//   bench_cuda [--n 256] [--repeats 30] [--json FILE] [--cache DIR]
#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "edl/parser.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Benchmark {
  std::string name, file;
  int fd_order;
};

// Device-to-device copy bandwidth (bytes read + written per second), median of `repeats`.
double copy_bandwidth(runtime::ArraySpace& space, int repeats) {
  const std::size_t n = std::size_t(1) << 27; // 1 GiB of doubles
  double* a = space.allocate(n);
  double* b = space.allocate(n);
  std::vector<double> t;
  for (int r = 0; r < repeats + 3; ++r) {
    space.synchronize();
    auto start = std::chrono::steady_clock::now();
    space.copy(b, a, n);
    space.synchronize();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r >= 3) t.push_back(s);
  }
  space.release(a);
  space.release(b);
  return 2.0 * double(n) * sizeof(double) / median(t);
}

} // namespace

int main(int argc, char** argv) {
  int n = 256, repeats = 30;
  std::string json_path, cache;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::stoi(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc) repeats = std::stoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--cache" && i + 1 < argc) cache = argv[++i];
    else {
      std::cerr << "usage: bench_cuda [--n 256] [--repeats 30] [--json FILE] [--cache DIR]\n";
      return 2;
    }
  }
  std::string why;
  if (!runtime::cuda::available(&why)) {
    std::cerr << "bench_cuda: no GPU: " << why << "\n";
    return 1;
  }
  const runtime::cuda::DeviceInfo dev = runtime::cuda::device_info();
  runtime::BackendOptions options;
  options.cache_dir = cache;
  auto backend = runtime::make_backend("cuda", options);
  runtime::ArraySpace& space = backend->space();
  const double copy_bw = copy_bandwidth(space, 20);
  std::printf("GPU %s (%s), driver %d, NVRTC %s; %d^3 interior, median of %d launches\n",
              dev.name.c_str(), dev.arch().c_str(), dev.driver_version,
              runtime::cuda::nvrtc_version().c_str(), n, repeats);
  std::printf("device-to-device copy: %.1f GB/s (read + write)\n\n", copy_bw / 1e9);

  const std::vector<Benchmark> benchmarks = {
      {"wave2", "par/wave.edl", 2}, {"wave4", "par/wave.edl", 4}, {"wave8", "par/wave.edl", 8},
      {"microbench", "par/microbench.edl", 4}};
  const std::vector<std::string> blocks = {"z 32x8x8", "z 32x4x16", "z 64x4x8", "z 128x2x8",
                                           "y 32x8x8", "z 32x8x32"};
  nlohmann::json out;
  out["gpu"] = dev.name;
  out["arch"] = dev.arch();
  out["driver"] = dev.driver_version;
  out["nvrtc"] = runtime::cuda::nvrtc_version();
  out["n"] = n;
  out["repeats"] = repeats;
  out["copy_bandwidth_GBs"] = copy_bw / 1e9;
  out["results"] = nlohmann::json::array();

  std::printf("%-11s %-10s %-3s %9s %9s %7s %7s %5s %6s\n", "benchmark", "block", "buf",
              "time[us]", "GB/s", "%copy", "Gpts/s", "regs", "spill");
  for (const Benchmark& b : benchmarks) {
    const calc::Program program =
        calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/" + b.file),
                    calc::LowerOptions{b.fd_order});
    std::size_t rhs = 0;
    while (rhs < program.calculations.size() &&
           program.calculations[rhs].schedule_bin != "MoL_CalcRHS" &&
           program.calculations[rhs].schedule_bin != "evol")
      ++rhs;
    const calc::Calculation& calc = program.calculations.at(rhs);
    const runtime::Margin margin = runtime::required_margin(calc);
    const int g = margin.max();
    runtime::KernelArgs args;
    args.alloc = {n + 2 * g, n + 2 * g, n + 2 * g};
    args.lo = {g, g, g};
    args.hi = {g + n, g + n, g + n};
    args.spacing = {1.0 / n, 1.0 / n, 1.0 / n};
    for (const calc::Parameter& p : program.parameters) args.parameters.push_back(p.default_value);
    const std::size_t points = std::size_t(args.alloc[0]) * args.alloc[1] * args.alloc[2];
    std::vector<double*> arrays;
    std::vector<double> init(points);
    for (std::size_t gf = 0; gf < calc.grid_functions.size(); ++gf) {
      for (std::size_t i = 0; i < points; ++i) init[i] = std::sin(0.001 * double(i) + double(gf));
      double* d = space.allocate(points);
      space.from_host(d, init.data(), points);
      arrays.push_back(d);
    }
    args.fields = arrays;
    const double bytes =
        double(calc.inputs.size() + calc.outputs.size()) * double(n) * n * n * sizeof(double);

    for (const std::string& block_text : blocks)
      for (char letter : std::string("urbpc")) {
        calc::Buffering buf{};
        calc::buffering_from_letter(letter, buf);
        const calc::BlockConfig block = calc::parse_block_config(block_text);
        std::vector<calc::Mapping> mappings;
        for (const calc::Calculation& c : program.calculations)
          mappings.push_back(calc::buffered_mapping(c, buf, block));
        // Variants where the strategy applies to no input repeat the unbuffered one.
        bool applies = letter == 'u';
        for (const auto& k : mappings[rhs].kernels)
          for (const auto& [gf, s] : k.buffering) applies = applies || s == buf;
        if (!applies) continue;
        auto backend_k = runtime::make_backend("cuda", options);
        std::vector<std::unique_ptr<runtime::CompiledCalculation>> compiled;
        try {
          compiled = backend_k->compile(program, mappings);
        } catch (const std::exception& e) {
          std::printf("%-11s %-10s %-3c compile failed: %s\n", b.name.c_str(), block_text.c_str(),
                      letter, e.what());
          continue;
        }
        for (int r = 0; r < 3 + repeats; ++r) compiled[rhs]->run(args);
        backend_k->space().synchronize();
        std::vector<double> samples;
        runtime::KernelTiming ptx;
        for (const runtime::KernelTiming& t : backend_k->kernel_timings())
          if (t.calculation == int(rhs)) {
            ptx = t;
            samples.assign(t.seconds.begin() + std::min<std::size_t>(3, t.seconds.size()),
                           t.seconds.end());
          }
        const double t = median(samples);
        const double bw = bytes / t;
        std::printf("%-11s %-10s %-3c %9.1f %9.1f %6.1f%% %7.2f %5d %6d\n", b.name.c_str(),
                    block_text.c_str(), letter, t * 1e6, bw / 1e9, 100 * bw / copy_bw,
                    double(n) * n * n / t / 1e9, ptx.registers, ptx.spill_stores);
        double lo = samples.empty() ? 0 : *std::min_element(samples.begin(), samples.end());
        double hi = samples.empty() ? 0 : *std::max_element(samples.begin(), samples.end());
        out["results"].push_back({{"benchmark", b.name},
                                  {"edl", b.file},
                                  {"fd_order", b.fd_order},
                                  {"calculation", calc.name},
                                  {"block", block_text},
                                  {"buffering", std::string(1, letter)},
                                  {"median_s", t},
                                  {"min_s", lo},
                                  {"max_s", hi},
                                  {"samples", samples.size()},
                                  {"compulsory_bytes", bytes},
                                  {"bandwidth_GBs", bw / 1e9},
                                  {"percent_of_copy", 100 * bw / copy_bw},
                                  {"points_per_s", double(n) * n * n / t},
                                  {"registers", ptx.registers},
                                  {"spill_stores", ptx.spill_stores},
                                  {"spill_loads", ptx.spill_loads}});
      }
    for (double* d : arrays) space.release(d);
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(1) << "\n";
  return 0;
}
