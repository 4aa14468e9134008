// The generated CUDA kernels against the memory-bandwidth limit of the GPU at hand, and the
// performance model's predictions against what was measured.
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
// With --device, every kernel also gets the model's prediction (both combination formulas,
// with ptxas's registers), and the run ends with the accuracy summary: median and 90th
// percentile of |predicted - measured| / measured. --replay recomputes the predictions of a
// recorded run with another (or a changed) description, without a GPU.
//
//   bench_cuda [--n 256] [--repeats 30] [--json FILE] [--cache DIR] [--device FILE.yaml|auto]
//   bench_cuda --replay RUN.json --device FILE.yaml [--json FILE]
#include "../common/benchmarks.hpp"
#include "../common/patch.hpp"
#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "edl/parser.hpp"
#include "model/model.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

// Order statistics of what may be no values at all (a benchmark without rows): 0 then.
double quantile_or_zero(const std::vector<double>& v, double q) {
  return v.empty() ? 0 : runtime::quantile(v, q);
}

// The suite's B1-B4 with the 4th-order wave between B1 and B2 (not B5, BSSN: 30 variants of its
// 25-output kernel would take most of an hour to compile; see bench::suite_benchmarks()).
const std::vector<bench::Benchmark> kBenchmarks = {
    bench::suite_benchmarks()[0],
    {"wave4", "par/wave.edl", 4, "scalar wave, 4th order"},
    bench::suite_benchmarks()[1],
    bench::suite_benchmarks()[3],
    bench::suite_benchmarks()[2]};
const std::vector<std::string> kBlocks = {"z 32x8x8",  "z 32x4x16", "z 64x4x8",
                                          "z 128x2x8", "y 32x8x8",  "z 32x8x32"};

const bench::LoadedBenchmark& load(const std::string& name) {
  static std::map<std::string, bench::LoadedBenchmark> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  const bench::Benchmark& b =
      *std::find_if(kBenchmarks.begin(), kBenchmarks.end(),
                    [&](const bench::Benchmark& x) { return x.name == name; });
  return cache[name] = bench::load_benchmark(b);
}

// The mapping variant of a row: strategy `letter` wherever it applies, block `block`.
calc::Mapping variant(const calc::Calculation& calc, char letter, const std::string& block) {
  calc::Buffering buf{};
  calc::buffering_from_letter(letter, buf);
  return calc::buffered_mapping(calc, buf, calc::parse_block_config(block));
}

// The model's prediction for a measured kernel row (benchmark, block, buffering, kernel,
// points, registers, spills, shared bytes), added to the row.
void predict_row(nlohmann::json& row, const model::Device& device) {
  const bench::LoadedBenchmark& l = load(row["benchmark"]);
  const calc::Calculation& calc = l.program.calculations[l.rhs];
  const calc::Mapping m = variant(calc, row["buffering"].get<std::string>()[0], row["block"]);
  const model::KernelProfile k = model::profile_mapping(calc, m).at(row.value("kernel", 0));
  model::CompiledResources r;
  r.registers = row["registers"];
  r.spill_bytes = int(row["spill_stores"]) + int(row["spill_loads"]);
  r.shared_bytes = row.value("shared_bytes", -1.0);
  const model::Prediction p = model::predict(k, device, r);
  const double points = row["points"], measured = row["median_s"];
  const double hu = p.seconds(points, model::Combination::Hu);
  const double chemora = p.seconds(points, model::Combination::Chemora);
  const model::Prediction::LaunchParts parts = p.parts(points);
  row["model"] = {{"device", device.name},
                  {"valid", p.valid},
                  {"invalid_reason", p.invalid_reason},
                  {"predicted_hu_s", hu},
                  {"predicted_chemora_s", chemora},
                  {"error_hu", (hu - measured) / measured},
                  {"error_chemora", (chemora - measured) / measured},
                  {"launch_s", parts.launch},
                  {"l2_s", parts.l2},
                  {"dram_s", parts.dram},
                  {"latency_s", parts.latency},
                  {"issue_s", parts.issue},
                  {"D_L2", p.D_L2_total},
                  {"D_GM", p.D_GM_total},
                  {"blocks_per_sm", p.blocks_per_sm},
                  {"occupancy", p.occupancy},
                  {"occupancy_limit", p.occupancy_limit},
                  {"limiter", p.limiter}};
}

// Median and 90th percentile of |error| per combination, over all rows and per benchmark.
nlohmann::json accuracy(const nlohmann::json& rows) {
  auto summarize = [&](const std::string& bench) {
    std::vector<double> hu, chemora;
    for (const auto& r : rows)
      if (r.contains("model") && (bench.empty() || r["benchmark"] == bench)) {
        hu.push_back(std::fabs(double(r["model"]["error_hu"])));
        chemora.push_back(std::fabs(double(r["model"]["error_chemora"])));
      }
    return nlohmann::json{{"kernels", hu.size()},
                          {"hu_median", quantile_or_zero(hu, 0.5)},
                          {"hu_p90", quantile_or_zero(hu, 0.9)},
                          {"chemora_median", quantile_or_zero(chemora, 0.5)},
                          {"chemora_p90", quantile_or_zero(chemora, 0.9)}};
  };
  nlohmann::json out;
  out["all"] = summarize("");
  for (const bench::Benchmark& b : kBenchmarks) {
    nlohmann::json s = summarize(b.name);
    if (s["kernels"] != 0) out[b.name] = s;
  }
  return out;
}

void print_accuracy(const nlohmann::json& acc) {
  std::printf("\nmodel accuracy, |predicted - measured| / measured:\n");
  std::printf("%-11s %7s %10s %10s %12s %12s\n", "benchmark", "kernels", "hu median", "hu p90",
              "chem. median", "chem. p90");
  for (const auto& [name, s] : acc.items())
    std::printf("%-11s %7d %9.1f%% %9.1f%% %11.1f%% %11.1f%%\n", name.c_str(), int(s["kernels"]),
                100 * double(s["hu_median"]), 100 * double(s["hu_p90"]),
                100 * double(s["chemora_median"]), 100 * double(s["chemora_p90"]));
}

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
  return 2.0 * double(n) * sizeof(double) / runtime::median(t);
}

// --replay: the recorded run's rows predicted again with `device`.
int replay(const std::string& path, const model::Device& device, const std::string& json_path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "bench_cuda: cannot read " << path << "\n";
    return 2;
  }
  nlohmann::json run = nlohmann::json::parse(in);
  for (auto& row : run["results"]) predict_row(row, device);
  run["accuracy"] = accuracy(run["results"]);
  run["device_description"] = device.name;
  print_accuracy(run["accuracy"]);
  if (!json_path.empty()) std::ofstream(json_path) << run.dump(1) << "\n";
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int n = 256, repeats = 30;
  std::string json_path, cache, device_path, replay_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n" && i + 1 < argc)
      n = std::stoi(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc)
      repeats = std::stoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--cache" && i + 1 < argc)
      cache = argv[++i];
    else if (a == "--device" && i + 1 < argc)
      device_path = argv[++i];
    else if (a == "--replay" && i + 1 < argc)
      replay_path = argv[++i];
    else {
      std::cerr << "usage: bench_cuda [--n 256] [--repeats 30] [--json FILE] [--cache DIR] "
                   "[--device FILE.yaml]\n       bench_cuda --replay RUN.json --device FILE.yaml "
                   "[--json FILE]\n";
      return 2;
    }
  }
  std::optional<model::Device> device;
  auto load_description = [&]() {
    try {
      if (!device_path.empty()) device = model::load_device(device_path);
      return true;
    } catch (const model::DeviceError& e) {
      std::cerr << e.what();
      return false;
    }
  };
  if (!replay_path.empty()) {
    if (!load_description()) return 2;
    if (!device) {
      std::cerr << "bench_cuda: --replay needs --device\n";
      return 2;
    }
    return replay(replay_path, *device, json_path);
  }
  std::string why;
  if (!runtime::cuda::available(&why)) {
    std::cerr << "bench_cuda: no GPU: " << why << "\n";
    return 1;
  }
  const runtime::cuda::DeviceInfo dev = runtime::cuda::device_info();
  if (device_path == "auto") { // the description configs/devices has for this GPU
    device_path = model::find_device_description(dev.name);
    if (device_path.empty())
      std::printf("no description in configs/devices for %s\n", dev.name.c_str());
  }
  if (!load_description()) return 2;
  runtime::BackendOptions options;
  options.cache_dir = cache;
  auto backend = runtime::make_backend("cuda", options);
  runtime::ArraySpace& space = backend->space();
  const double copy_bw = copy_bandwidth(space, 20);
  std::printf("GPU %s (%s), driver %d, NVRTC %s; %d^3 interior, median of %d launches\n",
              dev.name.c_str(), dev.arch().c_str(), dev.driver_version,
              runtime::cuda::nvrtc_version().c_str(), n, repeats);
  std::printf("device-to-device copy: %.1f GB/s (read + write)\n", copy_bw / 1e9);
  if (device) std::printf("model: %s (%s)\n", device->name.c_str(), device_path.c_str());
  std::printf("\n");

  nlohmann::json out;
  out["gpu"] = dev.name;
  out["arch"] = dev.arch();
  out["driver"] = dev.driver_version;
  out["nvrtc"] = runtime::cuda::nvrtc_version();
  out["n"] = n;
  out["repeats"] = repeats;
  out["copy_bandwidth_GBs"] = copy_bw / 1e9;
  if (device) out["device_description"] = device_path;
  out["results"] = nlohmann::json::array();

  std::printf("%-11s %-10s %-3s %9s %9s %7s %7s %5s %6s %9s %9s\n", "benchmark", "block", "buf",
              "time[us]", "GB/s", "%copy", "Gpts/s", "regs", "spill", "hu[us]", "chem[us]");
  for (const bench::Benchmark& b : kBenchmarks) {
    const bench::LoadedBenchmark& loaded = load(b.name);
    const calc::Program& program = loaded.program;
    const std::size_t rhs = loaded.rhs;
    const calc::Calculation& calc = program.calculations.at(rhs);
    std::vector<double*> arrays;
    runtime::KernelArgs args = bench::device_patch(program, calc, n, space, arrays);
    const double bytes =
        double(calc.inputs.size() + calc.outputs.size()) * double(n) * n * n * sizeof(double);

    for (const std::string& block_text : kBlocks)
      for (char letter : std::string("urbpc")) {
        std::vector<calc::Mapping> mappings;
        for (const calc::Calculation& c : program.calculations)
          mappings.push_back(variant(c, letter, block_text));
        // Variants where the strategy applies to no input repeat the unbuffered one.
        bool applies = letter == 'u';
        for (const auto& k : mappings[rhs].kernels)
          for (const auto& [gf, s] : k.buffering) applies = applies || calc::letter(s) == letter;
        if (!applies) continue;
        runtime::BackendOptions options_k = options;
        options_k.array_layout = bench::patch_layout(calc, n); // as a run prints its kernels
        auto backend_k = runtime::make_backend("cuda", options_k);
        std::vector<std::unique_ptr<runtime::CompiledCalculation>> compiled;
        try {
          compiled = backend_k->compile(program, mappings);
          for (int r = 0; r < 3 + repeats; ++r) compiled[rhs]->run(args);
          backend_k->space().synchronize();
        } catch (const std::exception& e) {
          std::printf("%-11s %-10s %-3c failed: %s\n", b.name.c_str(), block_text.c_str(), letter,
                      e.what());
          continue;
        }
        for (const runtime::KernelTiming& kt : backend_k->kernel_timings()) {
          if (kt.calculation != int(rhs)) continue;
          std::vector<double> samples(
              kt.seconds.begin() + std::min<std::size_t>(3, kt.seconds.size()), kt.seconds.end());
          const double t = quantile_or_zero(samples, 0.5);
          const double bw = bytes / t;
          double lo = samples.empty() ? 0 : *std::min_element(samples.begin(), samples.end());
          double hi = samples.empty() ? 0 : *std::max_element(samples.begin(), samples.end());
          nlohmann::json row = {{"benchmark", b.name},
                                {"edl", b.file},
                                {"fd_order", b.fd_order},
                                {"calculation", calc.name},
                                {"kernel", kt.kernel},
                                {"mapping", kt.mapping},
                                {"block", block_text},
                                {"buffering", std::string(1, letter)},
                                {"points", kt.points},
                                {"median_s", t},
                                {"min_s", lo},
                                {"max_s", hi},
                                {"samples", samples.size()},
                                {"compulsory_bytes", bytes},
                                {"bandwidth_GBs", bw / 1e9},
                                {"percent_of_copy", 100 * bw / copy_bw},
                                {"points_per_s", double(n) * n * n / t},
                                {"registers", kt.registers},
                                {"spill_stores", kt.spill_stores},
                                {"spill_loads", kt.spill_loads},
                                {"shared_bytes", kt.shared_bytes}};
          if (device) predict_row(row, *device);
          std::printf("%-11s %-10s %-3c %9.1f %9.1f %6.1f%% %7.2f %5d %6d", b.name.c_str(),
                      block_text.c_str(), letter, t * 1e6, bw / 1e9, 100 * bw / copy_bw,
                      double(n) * n * n / t / 1e9, kt.registers, kt.spill_stores);
          if (device)
            std::printf(" %9.1f %9.1f", double(row["model"]["predicted_hu_s"]) * 1e6,
                        double(row["model"]["predicted_chemora_s"]) * 1e6);
          std::printf("\n");
          out["results"].push_back(std::move(row));
        }
      }
    for (double* d : arrays) space.release(d);
  }
  if (device) {
    out["accuracy"] = accuracy(out["results"]);
    print_accuracy(out["accuracy"]);
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(1) << "\n";
  return 0;
}
