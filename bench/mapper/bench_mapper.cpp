// The mapper's acceptance benchmark: does the mapping the model chooses run as fast as the best
// of many others, measured on the GPU at hand, and how long does the search take?
//
// For each benchmark (wave 2nd and 8th order, Maxwell, the Hu et al. micro-benchmark; the
// right-hand-side calculation bench_cuda times) on an n^3 interior:
//  * the mapper (Method::Model, grid n^3) runs 5 times: the median of MapResult::stats.seconds
//    and its model calls; Method::Default gives the default mapping;
//  * candidates: the model's mapping, the default, the mapper's runners-up, every uniform
//    strategy (u r b p c q where it applies) on the model's partition and blocks and on one
//    kernel per stage at the model's block, the model's strategies at 6 other blocks, and
//    --samples random mappings (fixed --seed): the default's or the model's partition, per
//    kernel a block from mapper::block_configurations (or a list of common blocks, every
//    other sample) and per input a random strategy among u and those that apply.
//    Mappings the model marks invalid are left out (counted); duplicates (same short form,
//    stores and temporaries) are merged;
//  * every candidate is compiled on its own (NVRTC, --jobs threads filling the disk cache
//    first, then loaded one by one) and timed: --warmup launches, then --repeats timed ones
//    (CUDA events; a run's time is the sum of its kernels' event times), the median kept.
//    A candidate that fails to compile or launch is skipped and counted, never fatal;
//  * the model's mapping, the default and the 5 fastest candidates are timed again,
//    interleaved (one run of each per round, the order rotated every round) for
//    --final-repeats rounds, and those medians give
//      ratio = best measured / model's measured   (<= 1; the target is >= 0.95)
//    and the model's speedup over the default. When the model's mapping does not run (a
//    kernel needs more shared memory than the GPU allows, say), the ratio is absent and the
//    model's first choice among the candidates that ran is re-timed too and compared instead
//    (ratio_predicted_best_that_ran), as a secondary figure.
// Output: a table on stdout, and with --json everything (every candidate with its predicted
// and measured time, ptxas's resources and the prediction with them).
//
//   bench_mapper [--n 256] [--device FILE.yaml|auto] [--json FILE] [--cache DIR] [--samples 50]
//                [--seed 1] [--repeats 15] [--final-repeats 30] [--warmup 3] [--jobs N]
//                [--benchmarks wave2,wave8,maxwell,microbench,bssn,bssn8]  (bssn, bssn8 only
//                when named; bssn8 is B5 at finite-difference order 8)
//   bench_mapper --plan-only --device FILE.yaml ...     (no GPU: search and candidates only)
//   bench_mapper --compile-only --device FILE.yaml ...  (no GPU: also NVRTC for its arch)
//   bench_mapper --replay RUN.json [--replay-tsv OUT.tsv] [--replay-price FILE.yaml]
//                --device FILE.yaml ...
//                (no GPU, no search: the recorded run's candidates, read back from their keys,
//                priced by this build's model (--device, or --replay-price's description) with
//                their recorded ptxas resources, a row per kernel beside its measured time)
//
// This file runs the benchmarks: the options, the mapper's search, and run_benchmark, which calls
// the steps of candidates.cpp (the candidates), compile_and_time.cpp (compiling and timing them)
// and results.cpp (the JSON and the tables); candidates.hpp holds what they share.
#include "candidates.hpp"

#include "../common/benchmarks.hpp"
#include "../common/patch.hpp"
#include "calc/mapping.hpp"
#include "mapper/mapper.hpp"
#include "model/model.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace saguaro;

namespace saguaro::bench::mapper_bench {

namespace {

// The suite's B1-B4 in bench_cuda's order (not B5, BSSN: compiling >= 50 candidate mappings of
// its 25-output kernel would take hours; see bench::suite_benchmarks()).
const std::vector<bench::Benchmark> kBenchmarks = {
    bench::suite_benchmarks()[0], bench::suite_benchmarks()[1], bench::suite_benchmarks()[3],
    bench::suite_benchmarks()[2]};

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A command's first output line ("" when it cannot run): nvidia-smi's driver version.
std::string command_line_output(const char* command) {
  std::FILE* p = popen(command, "r");
  if (p == nullptr) return "";
  char buf[256] = {0};
  std::string out;
  if (std::fgets(buf, sizeof buf, p) != nullptr) out = buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' '))
    out.pop_back();
  return out;
}

std::string driver_api_version(int v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

// One benchmark: search, candidates, compile, time. Returns its JSON.
nlohmann::json run_benchmark(const bench::Benchmark& b, const Options& opt,
                             const model::Device& device, const Gpu& gpu,
                             runtime::BackendOptions backend_options, int threads) {
  const auto t_start = std::chrono::steady_clock::now();
  const bench::LoadedBenchmark loaded = bench::load_benchmark(b);
  const calc::Calculation& calc = loaded.program.calculations[loaded.rhs];
  calc::Program program = loaded.program;
  program.calculations = {calc};
  const int n = opt.n;
  // The candidates are compiled for the patch they run over, strides as constants, as a run
  // prints its kernels (before 2026-11-28 they took the strides from the geometry argument:
  // other kernels than a run's, 0.26-2.4x their times, 2026-11-28-mapper-layout-H100.md).
  backend_options.array_layout = bench::patch_layout(calc, n);
  nlohmann::json out = {{"name", b.name},
                        {"edl", b.file},
                        {"fd_order", b.fd_order},
                        {"calculation", calc.name},
                        {"stages", calc.stages.size()},
                        {"inputs", calc.inputs.size()},
                        {"outputs", calc.outputs.size()}};
  std::printf("\n== %s (%s, fd order %d, calculation '%s': %zu stage%s, %zu inputs, %zu outputs)\n",
              b.name.c_str(), b.file.c_str(), b.fd_order, calc.name.c_str(), calc.stages.size(),
              calc.stages.size() == 1 ? "" : "s", calc.inputs.size(), calc.outputs.size());

  // --- the mapper ------------------------------------------------------------------------
  mapper::MapperOptions mo;
  mo.method = mapper::Method::Model;
  mo.grid = {n, n, n};
  std::vector<double> search_times;
  std::optional<mapper::MapResult> result;
  try {
    for (int r = 0; r < kSearchRuns; ++r) {
      mapper::MapResult m = mapper::map_calculation(calc, device, mo);
      search_times.push_back(m.stats.seconds);
      if (!result) result = std::move(m);
    }
  } catch (const std::exception& e) {
    std::printf("  the mapper failed: %s\n", e.what());
    out["error"] = std::string("mapper: ") + e.what();
    return out;
  }
  mapper::MapperOptions dopt = mo;
  dopt.method = mapper::Method::Default;
  const mapper::MapResult def = mapper::map_calculation(calc, device, dopt);
  const mapper::SearchStatistics& st = result->stats;
  const double search_median = runtime::median(search_times);
  out["search"] = {{"runs_s", search_times},
                   {"median_s", search_median},
                   {"target_s", kTargetSearchSeconds},
                   {"model_calls", st.model_calls},
                   {"kernels_priced", st.kernels_priced},
                   {"configurations", st.configurations},
                   {"pruned", st.pruned},
                   {"partitions", st.partitions},
                   {"moves_accepted", st.moves_accepted},
                   {"cover_groups", st.cover_groups},
                   {"ilp_solves", st.ilp_solves},
                   {"origin", result->best.origin},
                   {"best", calc::to_string(calc, result->best.mapping)},
                   {"predicted_s", result->best.seconds},
                   {"runners_up", result->runners_up.size()},
                   {"default_search_s", def.stats.seconds}};
  std::printf("  mapper: median %.1f ms of %d searches (%s), %ld model calls, %ld kernels priced, "
              "%ld configurations (%ld pruned), %d ILP solves\n",
              search_median * 1e3, kSearchRuns,
              search_median < kTargetSearchSeconds ? "target < 100 ms met"
                                                   : "over the 100 ms target",
              st.model_calls, st.kernels_priced, st.configurations, st.pruned, st.ilp_solves);
  std::fflush(stdout);

  // --- candidates (candidates.cpp) -------------------------------------------------------
  Candidates cands(calc, device, n);
  const Sampling sampling = add_candidates(cands, calc, device, mo, *result, def, opt);
  Candidate* model_c = cands.find_role("model");
  Candidate* default_c = cands.find_role("default");

  // --- compile and time (compile_and_time.cpp) -------------------------------------------
  const Timing timing = compile_and_time(cands, model_c, default_c, b, program, calc, opt, device,
                                         gpu, backend_options, threads, out);

  // --- results and the table (results.cpp) -----------------------------------------------
  report_benchmark(cands, model_c, default_c, timing, sampling, search_median, gpu, t_start, out);
  return out;
}

int usage() {
  std::cerr
      << "usage: bench_mapper [--n 256] [--device FILE.yaml|auto] [--json FILE] [--cache DIR]\n"
         "                    [--samples 50] [--seed 1] [--repeats 15] [--final-repeats 30]\n"
         "                    [--warmup 3] [--jobs N] [--benchmarks "
         "wave2,wave8,maxwell,microbench]\n"
         "                    [--plan-only | --compile-only]   (these two need no GPU)\n"
         "                    [--replay RUN.json [--replay-tsv OUT.tsv] [--replay-price "
         "FILE.yaml]]\n"
         "                    (no GPU: the model's terms per kernel against a recorded run's\n"
         "                    measured times; --replay-price prices with another description)\n";
  return 2;
}

} // namespace

} // namespace saguaro::bench::mapper_bench

using namespace saguaro::bench::mapper_bench;

int main(int argc, char** argv) {
  Options opt;
  for (int i = 0; i < argc; ++i) opt.command += (i ? " " : "") + std::string(argv[i]);
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--n")
        opt.n = std::stoi(value());
      else if (a == "--device")
        opt.device_path = value();
      else if (a == "--json")
        opt.json_path = value();
      else if (a == "--cache")
        opt.cache = value();
      else if (a == "--samples")
        opt.samples = std::stoi(value());
      else if (a == "--seed")
        opt.seed = std::stoul(value());
      else if (a == "--repeats")
        opt.repeats = std::stoi(value());
      else if (a == "--final-repeats")
        opt.final_repeats = std::stoi(value());
      else if (a == "--warmup")
        opt.warmup = std::stoi(value());
      else if (a == "--jobs")
        opt.jobs = std::stoi(value());
      else if (a == "--benchmarks") {
        std::string list = value(), item;
        for (char ch : list + ",") {
          if (ch == ',') {
            if (!item.empty()) opt.benchmarks.push_back(item);
            item.clear();
          } else
            item += ch;
        }
      } else if (a == "--replay") {
        opt.replay_path = value();
        opt.plan_only = true;
      } else if (a == "--replay-tsv")
        opt.replay_tsv = value();
      else if (a == "--replay-price")
        opt.replay_price = value();
      else if (a == "--plan-only")
        opt.plan_only = true;
      else if (a == "--compile-only")
        opt.compile_only = true;
      else
        return usage();
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_mapper: " << e.what() << "\n";
    return usage();
  }
  if (opt.n < 1 || opt.samples < 0 || opt.repeats < 1 || opt.final_repeats < 1 || opt.warmup < 0)
    return usage();
  std::vector<bench::Benchmark> benchmarks;
  for (const bench::Benchmark& b : kBenchmarks)
    if (opt.benchmarks.empty() ||
        std::find(opt.benchmarks.begin(), opt.benchmarks.end(), b.name) != opt.benchmarks.end())
      benchmarks.push_back(b);
  // B5 (bssn) only when named: its fission measurement (bench/mapper/run.sh bssn).
  for (const bench::Benchmark& b : bench::suite_benchmarks())
    if (std::find(opt.benchmarks.begin(), opt.benchmarks.end(), b.name) != opt.benchmarks.end() &&
        std::none_of(kBenchmarks.begin(), kBenchmarks.end(),
                     [&](const bench::Benchmark& k) { return k.name == b.name; }))
      benchmarks.push_back(b);
  if (std::find(opt.benchmarks.begin(), opt.benchmarks.end(), "bssn8") != opt.benchmarks.end())
    benchmarks.push_back(bench::bssn_order8());
  if (benchmarks.empty()) {
    std::cerr << "bench_mapper: no benchmark matches --benchmarks (wave2, wave8, maxwell, "
                 "microbench, bssn, bssn8)\n";
    return 2;
  }

  Gpu gpu;
  if (!opt.plan_only && !opt.compile_only) {
    std::string why;
    if (!runtime::cuda::available(&why)) {
      std::cerr << "bench_mapper: no GPU: " << why << "\n";
      return 1;
    }
    gpu.present = true;
    gpu.info = runtime::cuda::device_info();
    gpu.arch = gpu.info.arch();
    if (opt.device_path == "auto") {
      opt.device_path = model::find_device_description(gpu.info.name);
      if (opt.device_path.empty()) {
        std::cerr << "bench_mapper: no description in configs/devices for " << gpu.info.name
                  << ": give one with --device FILE.yaml\n";
        return 2;
      }
    }
  } else if (opt.device_path == "auto") {
    std::cerr << "bench_mapper: --plan-only and --compile-only need --device FILE.yaml\n";
    return 2;
  }
  model::Device device;
  try {
    device = model::load_device(opt.device_path);
  } catch (const std::exception& e) {
    std::cerr << "bench_mapper: " << e.what() << "\n";
    return 2;
  }
  if (!opt.replay_path.empty()) {
    try {
      run_replay(opt, benchmarks, device);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "bench_mapper: " << e.what() << "\n";
      return 1;
    }
  }
  int threads =
      opt.jobs > 0 ? opt.jobs : std::clamp(int(std::thread::hardware_concurrency()), 1, 16);

  runtime::BackendOptions backend_options;
  backend_options.cache_dir = opt.cache;

  nlohmann::json out;
  out["tool"] = "bench_mapper";
  out["command"] = opt.command;
  out["date"] = utc_now();
  out["mode"] = gpu.present ? "measure" : opt.compile_only ? "compile-only" : "plan-only";
  if (gpu.present) {
    out["gpu"] = gpu.info.name;
    out["arch"] = gpu.arch;
    out["sms"] = gpu.info.multiprocessors;
    out["cuda_driver_api"] = driver_api_version(gpu.info.driver_version);
    out["driver_version_code"] = gpu.info.driver_version;
    out["driver"] = command_line_output(
        "nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null");
  } else {
    out["gpu"] = nlohmann::json();
    out["arch"] = device.arch;
  }
  try {
    out["nvrtc"] = runtime::cuda::nvrtc_version();
  } catch (const std::exception&) {
    out["nvrtc"] = nlohmann::json();
  }
  out["device_description"] = opt.device_path;
  out["device_name"] = device.name;
  out["n"] = opt.n;
  out["samples"] = opt.samples;
  out["seed"] = opt.seed;
  out["warmup"] = opt.warmup;
  out["repeats"] = opt.repeats;
  out["final_repeats"] = opt.final_repeats;
  out["finalists"] = kFinalists;
  out["search_runs"] = kSearchRuns;
  out["compile_threads"] = threads;
  out["cache"] = opt.cache;
  out["targets"] = {{"ratio", kTargetRatio}, {"search_s", kTargetSearchSeconds}};
  out["timing"] =
      "per run: the sum of its kernels' CUDA-event times; first pass: median of `repeats` runs "
      "after `warmup`; final: the model's mapping, the default and the 5 fastest re-timed "
      "interleaved (one run each per round, order rotated), median of `final_repeats` rounds "
      "after `warmup`; ratio = best final / model's final";

  std::printf("bench_mapper: %s", gpu.present ? gpu.info.name.c_str() : "no GPU");
  if (gpu.present)
    std::printf(" (%s), driver %s (CUDA %s), NVRTC %s", gpu.arch.c_str(),
                out["driver"].get<std::string>().c_str(),
                out["cuda_driver_api"].get<std::string>().c_str(),
                out["nvrtc"].is_string() ? out["nvrtc"].get<std::string>().c_str() : "?");
  std::printf("; %s mode\nmodel: %s (%s); %d^3 interior; %d samples, seed %lu; median of %d runs "
              "after %d warm-up, finalists %d interleaved rounds\n",
              out["mode"].get<std::string>().c_str(), device.name.c_str(), opt.device_path.c_str(),
              opt.n, opt.samples, opt.seed, opt.repeats, opt.warmup, opt.final_repeats);
  std::fflush(stdout);

  out["benchmarks"] = nlohmann::json::array();
  for (const bench::Benchmark& b : benchmarks) {
    try {
      out["benchmarks"].push_back(run_benchmark(b, opt, device, gpu, backend_options, threads));
    } catch (const std::exception& e) {
      std::printf("\n== %s failed: %s\n", b.name.c_str(), e.what());
      out["benchmarks"].push_back({{"name", b.name}, {"error", e.what()}});
    }
    if (!opt.json_path.empty()) std::ofstream(opt.json_path) << out.dump(1) << "\n"; // so far
  }

  summarize(out, gpu);
  if (!opt.json_path.empty()) std::ofstream(opt.json_path) << out.dump(1) << "\n";
  return 0;
}
