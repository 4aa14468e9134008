// What bench_mapper's files share: its options and targets, the candidate mappings (Candidate,
// the set Candidates) and the GPU at hand, and the steps of one benchmark that run_benchmark
// (bench_mapper.cpp) calls in turn: add_candidates (candidates.cpp), compile_and_time
// (compile_and_time.cpp) and report_benchmark (results.cpp); summarize (results.cpp) ends the run.
#pragma once

#include "../common/benchmarks.hpp"
#include "calc/mapping.hpp"
#include "mapper/mapper.hpp"
#include "model/model.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace saguaro::bench::mapper_bench {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTargetRatio = 0.95;
constexpr double kTargetSearchSeconds = 0.1;
constexpr int kSearchRuns = 5;
constexpr int kFinalists = 5; // the fastest candidates timed again with the model's and default

struct Options {
  int n = 256;
  std::string device_path = "auto", json_path, cache;
  int samples = 50;
  unsigned long seed = 1;
  int repeats = 15, final_repeats = 30, warmup = 3;
  int jobs = 0; // 0: the hardware's threads, at most 16
  std::vector<std::string> benchmarks;
  bool plan_only = false, compile_only = false;
  std::string replay_path, replay_tsv; // --replay RUN.json [--replay-tsv OUT.tsv]: plan only
  std::string replay_price;            // --replay-price FILE.yaml: price with another model
  std::string command;
};

struct KernelResult {
  int registers = -1, spill_stores = 0, spill_loads = 0;
  std::size_t shared_bytes = 0;
  double predicted_ptxas_s = kNaN; // the model with ptxas's registers, spills and shared memory
  double measured_s = kNaN;        // its median over the first pass's runs (CUDA events)
};

struct Candidate {
  calc::Mapping mapping;
  std::string key, short_form;
  std::vector<std::string> kinds; // "model", "default", "runner-up 1: ...", "uniform c", ...
  mapper::PricedMapping priced;
  std::string status = "pending"; // "timed", "compile failed", "load failed" (more shared
                                  // memory than the GPU allows), "launch failed"; without a
                                  // GPU "planned", "compiled" or "load would fail"
  std::string error;
  double compile_seconds = 0;  // NVRTC, in the parallel pass (0: from the cache)
  std::vector<double> samples; // seconds per run, first pass
  double measured = kNaN;      // their median
  std::vector<double> final_samples;
  double final_measured = kNaN;
  std::vector<KernelResult> kernels;
  std::unique_ptr<runtime::Backend> backend;
  std::unique_ptr<runtime::CompiledCalculation> compiled;

  bool has(const std::string& role) const {
    for (const std::string& k : kinds)
      if (k.rfind(role, 0) == 0) return true;
    return false;
  }
  double best_measured() const { return std::isnan(final_measured) ? measured : final_measured; }
};

struct Skipped {
  int model_invalid = 0, mapping_invalid = 0, compile_failed = 0, load_failed = 0,
      launch_failed = 0;
  int duplicates = 0;
  std::vector<nlohmann::json> examples; // the first few left-out mappings and why
};

// The candidate set of one benchmark: deduplicated, each priced by the model.
class Candidates {
public:
  Candidates(const calc::Calculation& calc, const model::Device& device, int n)
      : calc_(calc), device_(device) {
    options_.method = mapper::Method::Fixed;
    options_.grid = {n, n, n};
  }

  // Adds `m` under `kind`, or merges `kind` into an equal candidate. `force`: keep it even if
  // the model finds it invalid (the model's and the default mapping). Returns whether `m` is
  // in the set afterwards. (candidates.cpp)
  bool add(const calc::Mapping& m, const std::string& kind, bool force = false);

  bool contains(const calc::Mapping& m) const {
    return std::any_of(list.begin(), list.end(),
                       [&](const Candidate& c) { return c.mapping == m; });
  }

  Candidate* find_role(const std::string& role) {
    for (Candidate& c : list)
      if (c.has(role)) return &c;
    return nullptr;
  }

  std::vector<Candidate> list;
  Skipped skipped;

private:
  void note(const std::string& kind, const std::string& mapping, const std::string& why) {
    if (skipped.examples.size() < 12)
      skipped.examples.push_back({{"kind", kind}, {"mapping", mapping}, {"why", why}});
  }

  const calc::Calculation& calc_;
  const model::Device& device_;
  mapper::MapperOptions options_;
};

struct Gpu {
  bool present = false;
  runtime::cuda::DeviceInfo info;
  std::string arch;
};

// How add_candidates drew its random samples: samples added, draws, draws that repeated a
// candidate.
struct Sampling {
  int sampled = 0, attempts = 0, repeats = 0;
};

// What compile_and_time leaves for the report: NVRTC's wall time, how many candidates were timed,
// and the model's first choice among those that ran (or, without a GPU, would load).
struct Timing {
  double precompile_s = 0;
  int timed = 0;
  Candidate* fallback_c = nullptr;
};

// The steps of one benchmark, in the order run_benchmark calls them (each described where it is
// defined), and the summary after the last benchmark.
Sampling add_candidates(Candidates& cands, const calc::Calculation& calc,
                        const model::Device& device, const mapper::MapperOptions& mo,
                        const mapper::MapResult& result, const mapper::MapResult& def,
                        const Options& opt);
Timing compile_and_time(Candidates& cands, Candidate* model_c, Candidate* default_c,
                        const bench::Benchmark& b, const calc::Program& program,
                        const calc::Calculation& calc, const Options& opt,
                        const model::Device& device, const Gpu& gpu,
                        const runtime::BackendOptions& backend_options, int threads,
                        nlohmann::json& out);
void report_benchmark(const Candidates& cands, const Candidate* model_c, const Candidate* default_c,
                      const Timing& timing, const Sampling& sampling, double search_median,
                      const Gpu& gpu, std::chrono::steady_clock::time_point t_start,
                      nlohmann::json& out);
void summarize(nlohmann::json& out, const Gpu& gpu);

// replay.cpp, bench_mapper --replay: each benchmark's recorded candidates (Options::replay_path)
// read back from their keys, priced by `device` (or Options::replay_price's description) with
// their recorded ptxas resources, a row per kernel beside its measured time written to
// Options::replay_tsv (stdout without). No search, no GPU.
void run_replay(const Options& opt, const std::vector<bench::Benchmark>& benchmarks,
                const model::Device& device);

} // namespace saguaro::bench::mapper_bench
