// The mapper's acceptance benchmark: does the mapping the model chooses run as fast as the best
// of many others, measured on the GPU at hand, and how long does the search take?
//
// For each benchmark (wave 2nd and 8th order, Maxwell, the Hu et al. micro-benchmark; the
// right-hand-side calculation bench_cuda times) on an n^3 interior:
//  * the mapper (Method::Model, grid n^3) runs 5 times: the median of MapResult::stats.seconds
//    and its model calls; Method::Default gives the default mapping;
//  * candidates: the model's mapping, the default, the mapper's runners-up, every uniform
//    strategy (u r b p c where it applies) on the model's partition and blocks and on one
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
//                [--benchmarks wave2,wave8,maxwell,microbench,bssn]  (bssn only when named)
//   bench_mapper --plan-only --device FILE.yaml ...     (no GPU: search and candidates only)
//   bench_mapper --compile-only --device FILE.yaml ...  (no GPU: also NVRTC for its arch)
#include "../common/benchmarks.hpp"
#include "../common/patch.hpp"
#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "codegen/cuda.hpp"
#include "edl/parser.hpp"
#include "mapper/block_search.hpp"
#include "mapper/mapper.hpp"
#include "model/model.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace saguaro;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kTargetRatio = 0.95;
constexpr double kTargetSearchSeconds = 0.1;
constexpr int kSearchRuns = 5;
constexpr int kFinalists = 5; // the fastest candidates timed again with the model's and default

// The suite's B1-B4 in bench_cuda's order (not B5, BSSN: compiling >= 50 candidate mappings of
// its 25-output kernel would take hours; see bench::suite_benchmarks()).
const std::vector<bench::Benchmark> kBenchmarks = {
    bench::suite_benchmarks()[0], bench::suite_benchmarks()[1], bench::suite_benchmarks()[3],
    bench::suite_benchmarks()[2]};
// bench_cuda's six blocks first (the model's strategies are tried at these), then others
// that are common choices; random samples take every other block from this list.
const std::vector<std::string> kCommonBlocks = {"z 32x8x8",  "z 32x4x16", "z 64x4x8",  "z 128x2x8",
                                                "y 32x8x8",  "z 32x8x32", "z 64x2x16", "z 128x1x8",
                                                "z 256x1x8", "z 64x4x4",  "z 32x16x4", "y 64x4x8",
                                                "z 128x2x4", "z 64x8x8",  "z 128x4x16"};

struct Options {
  int n = 256;
  std::string device_path = "auto", json_path, cache;
  int samples = 50;
  unsigned long seed = 1;
  int repeats = 15, final_repeats = 30, warmup = 3;
  int jobs = 0; // 0: the hardware's threads, at most 16
  std::vector<std::string> benchmarks;
  bool plan_only = false, compile_only = false;
  std::string command;
};

// A candidate's label in the JSON: the short form and what it leaves out, which stores and
// temporaries each kernel makes.
std::string mapping_key(const calc::Calculation& calc, const calc::Mapping& m) {
  std::string key = calc::to_string(calc, m);
  for (const calc::KernelMapping& k : m.kernels)
    key +=
        fmt::format("|{}:{}:{}", k.stage, fmt::join(k.stores, ","), fmt::join(k.temporaries, ","));
  return key;
}

// Whether the partitions (stages, stores, temporaries per kernel) of two mappings agree.
bool same_partition(const calc::Mapping& a, const calc::Mapping& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (std::size_t k = 0; k < a.kernels.size(); ++k)
    if (a.kernels[k].stage != b.kernels[k].stage || a.kernels[k].stores != b.kernels[k].stores ||
        a.kernels[k].temporaries != b.kernels[k].temporaries)
      return false;
  return true;
}

struct KernelResult {
  int registers = -1, spill_stores = 0, spill_loads = 0;
  std::size_t shared_bytes = 0;
  double predicted_ptxas_s = kNaN; // the model with ptxas's registers, spills and shared memory
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
  // in the set afterwards.
  bool add(const calc::Mapping& m, const std::string& kind, bool force = false) {
    for (Candidate& c : list)
      if (c.mapping == m) {
        c.kinds.push_back(kind);
        ++skipped.duplicates;
        return true;
      }
    Candidate c;
    c.mapping = m;
    c.key = mapping_key(calc_, m);
    c.short_form = calc::to_string(calc_, m);
    c.kinds.push_back(kind);
    try {
      c.priced = mapper::price_mapping(calc_, m, device_, options_);
    } catch (const std::exception& e) {
      ++skipped.mapping_invalid;
      note(kind, c.short_form, e.what());
      return false;
    }
    std::string why;
    for (const mapper::PricedKernel& k : c.priced.kernels)
      if (!k.prediction.valid && why.empty()) why = k.prediction.invalid_reason;
    if (!why.empty() || !std::isfinite(c.priced.seconds)) {
      if (!force) {
        ++skipped.model_invalid;
        note(kind, c.short_form, why.empty() ? "the model's time is not finite" : why);
        return false;
      }
    }
    list.push_back(std::move(c));
    return true;
  }

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

// The strategies that apply to input `in` of kernel `k` (plans[k]) at block `block`; u first.
std::vector<calc::Buffering> applicable(const calc::KernelPlan& plan, const calc::InputStencil& in,
                                        int axis) {
  const bool written =
      std::find(plan.outputs.begin(), plan.outputs.end(), in.grid_function) != plan.outputs.end();
  std::vector<calc::Buffering> out;
  for (calc::Buffering b : calc::kAllBufferings)
    if (calc::buffering_applies(b, in.offsets, axis, written)) out.push_back(b);
  return out;
}

// `m` with every kernel's inputs given strategy `b` where it applies (u elsewhere); false when
// `b` applies to no input (the mapping would repeat all-u).
bool uniform(const calc::Calculation& calc, calc::Mapping& m, calc::Buffering b) {
  for (calc::KernelMapping& k : m.kernels) k.buffering.clear();
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, m);
  bool any = b == calc::Buffering::Unbuffered;
  for (std::size_t k = 0; k < m.kernels.size(); ++k)
    for (const calc::InputStencil& in : plans[k].inputs) {
      const auto ok = applicable(plans[k], in, m.kernels[k].block.iteration_axis);
      if (b != calc::Buffering::Unbuffered && std::find(ok.begin(), ok.end(), b) != ok.end()) {
        m.kernels[k].buffering[in.grid_function] = b;
        any = true;
      }
    }
  return any;
}

// `m` with every kernel at `block`, keeping each strategy where it still applies.
calc::Mapping at_block(const calc::Calculation& calc, calc::Mapping m,
                       const calc::BlockConfig& block) {
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, m);
  for (std::size_t k = 0; k < m.kernels.size(); ++k) {
    m.kernels[k].block = block;
    std::map<int, calc::Buffering> kept;
    for (const calc::InputStencil& in : plans[k].inputs) {
      auto at = m.kernels[k].buffering.find(in.grid_function);
      if (at == m.kernels[k].buffering.end()) continue;
      const auto ok = applicable(plans[k], in, block.iteration_axis);
      if (std::find(ok.begin(), ok.end(), at->second) != ok.end()) kept.insert(*at);
    }
    m.kernels[k].buffering = std::move(kept);
  }
  return m;
}

// One kernel per stored grid function (per stage), each kernel at the block configuration and
// strategies the model prices best for it alone: fission's far end, against which the model's
// partition is measured (the BSSN issue).
calc::Mapping one_kernel_per_store(const calc::Calculation& calc, const model::Device& device,
                                   const std::array<long, 3>& grid) {
  calc::Mapping m;
  for (std::size_t s = 0; s < calc.stages.size(); ++s)
    for (std::size_t st = 0; st < calc.stages[s].stores.size(); ++st) {
      calc::KernelMapping km;
      km.stage = int(s);
      km.stores = {int(st)};
      const model::KernelProfile profile =
          model::profile_kernel(calc, km, calc::plan_kernel(calc, km, {}));
      mapper::BlockSearchOptions bo;
      bo.extent = mapper::kernel_extent(profile, grid);
      bo.keep = 1;
      const mapper::BlockSearchResult r = mapper::search_blocks(profile, device, bo);
      if (r.best.empty())
        throw std::runtime_error("no block configuration fits store " + std::to_string(st));
      mapper::apply(km, profile, r.best.front());
      m.kernels.push_back(std::move(km));
    }
  return m;
}

// One random mapping on `base`'s partition: per kernel a block (from the enumerated set or the
// common list, alternately) and per input a strategy among those that apply.
calc::Mapping sample(const calc::Calculation& calc, calc::Mapping m,
                     const std::vector<std::vector<calc::BlockConfig>>& enumerated,
                     const std::vector<calc::BlockConfig>& common, bool from_common,
                     std::mt19937_64& rng) {
  auto pick = [&rng](std::size_t size) { return std::size_t(rng() % size); };
  for (std::size_t k = 0; k < m.kernels.size(); ++k) {
    const auto& from = from_common || enumerated[k].empty() ? common : enumerated[k];
    m.kernels[k].block = from[pick(from.size())];
    m.kernels[k].buffering.clear();
  }
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, m);
  for (std::size_t k = 0; k < m.kernels.size(); ++k)
    for (const calc::InputStencil& in : plans[k].inputs) {
      const auto ok = applicable(plans[k], in, m.kernels[k].block.iteration_axis);
      const calc::Buffering b = ok[pick(ok.size())];
      if (b != calc::Buffering::Unbuffered) m.kernels[k].buffering[in.grid_function] = b;
    }
  return m;
}

// The per-run times of candidate `c` since `counts` (launches per kernel at the start): its
// kernels' event times summed run by run, the first `skip` runs dropped.
std::vector<std::size_t> launch_counts(const Candidate& c) {
  std::vector<std::size_t> counts(c.mapping.kernels.size(), 0);
  for (const runtime::KernelTiming& kt : c.backend->kernel_timings())
    if (kt.calculation == 0 && std::size_t(kt.kernel) < counts.size())
      counts[std::size_t(kt.kernel)] = kt.seconds.size();
  return counts;
}
std::vector<double> runs_since(const Candidate& c, const std::vector<std::size_t>& counts,
                               std::size_t skip) {
  std::vector<std::vector<double>> per_kernel(c.mapping.kernels.size());
  for (const runtime::KernelTiming& kt : c.backend->kernel_timings())
    if (kt.calculation == 0 && std::size_t(kt.kernel) < per_kernel.size()) {
      const std::size_t from = std::min(counts[std::size_t(kt.kernel)], kt.seconds.size());
      per_kernel[std::size_t(kt.kernel)].assign(kt.seconds.begin() + long(from), kt.seconds.end());
    }
  std::size_t runs = std::numeric_limits<std::size_t>::max();
  for (const auto& k : per_kernel) runs = std::min(runs, k.size());
  if (per_kernel.empty()) runs = 0;
  std::vector<double> out;
  for (std::size_t r = skip; r < runs; ++r) {
    double s = 0;
    for (const auto& k : per_kernel) s += k[r];
    out.push_back(s);
  }
  return out;
}

// ptxas's resources of kernel `k` of `c` and the model's prediction with them.
void set_resources(Candidate& c, std::size_t k, int registers, int spill_stores, int spill_loads,
                   std::size_t shared_bytes, const model::Device& device, int n) {
  if (c.kernels.size() != c.mapping.kernels.size())
    c.kernels.assign(c.mapping.kernels.size(), KernelResult{});
  if (k >= c.kernels.size()) return;
  KernelResult& r = c.kernels[k];
  r.registers = registers;
  r.spill_stores = spill_stores;
  r.spill_loads = spill_loads;
  r.shared_bytes = shared_bytes;
  if (k >= c.priced.kernels.size()) return;
  const model::KernelProfile& profile = c.priced.kernels[k].profile;
  model::CompiledResources res;
  res.registers = registers;
  res.spill_bytes = spill_stores + spill_loads;
  res.shared_bytes = double(shared_bytes);
  const model::Prediction p = model::predict(profile, device, res);
  const model::LaunchGeometry g = model::launch_geometry(
      profile.block, mapper::kernel_extent(profile, {long(n), long(n), long(n)}), device);
  r.predicted_ptxas_s = p.valid ? p.seconds(g, model::Combination::Hu) : kNaN;
}

// The same for every kernel, from the backend's timings (ptxas's report of the loaded module).
void record_resources(Candidate& c, const model::Device& device, int n) {
  for (const runtime::KernelTiming& kt : c.backend->kernel_timings())
    if (kt.calculation == 0)
      set_resources(c, std::size_t(kt.kernel), kt.registers, kt.spill_stores, kt.spill_loads,
                    kt.shared_bytes, device, n);
}

double median_or_nan(const std::vector<double>& v) {
  return v.empty() ? kNaN : runtime::median(v);
}

nlohmann::json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

std::string first_line(const std::string& text) {
  const std::size_t at = text.find('\n');
  return at == std::string::npos ? text : text.substr(0, at);
}

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

struct Gpu {
  bool present = false;
  runtime::cuda::DeviceInfo info;
  std::string arch;
};

// Compiles every candidate's module in `threads` threads, filling the disk cache that the
// backend's compile() reads next (the same source, options and directory give the same key).
// Without a GPU (`record`), the outcome is the candidate's result: its status, NVRTC's error,
// ptxas's resources and the prediction with them.
void precompile(std::vector<Candidate>& list, const calc::Program& program, const std::string& arch,
                const std::string& cache, int threads, bool record, const model::Device& device,
                int n) {
  // Generating is checked here, single-threaded, so that a mapping that does not fit says so.
  std::vector<char> generates(list.size(), 0);
  for (std::size_t i = 0; i < list.size(); ++i) {
    try {
      generates[i] = !codegen::generate_cuda(program, {list[i].mapping}).kernels.empty();
    } catch (const std::exception& e) {
      if (record) {
        list[i].status = "compile failed";
        list[i].error = first_line(e.what());
      }
    }
  }
  runtime::cuda::CompileOptions options;
  if (!cache.empty()) options.cache_dir = (std::filesystem::path(cache) / "cuda").string();
  // The backend's own two-pass compile (runtime::cuda::compile_generated), so its keys match.
  std::vector<std::optional<runtime::cuda::CompiledProgram>> modules(list.size());
  std::vector<std::string> errors(list.size());
  std::atomic<std::size_t> next{0};
  auto work = [&]() {
    for (std::size_t i = next++; i < list.size(); i = next++) {
      if (!generates[i]) continue;
      try {
        modules[i] = runtime::cuda::compile_generated(program, {list[i].mapping}, arch, options);
      } catch (const std::exception& e) {
        errors[i] = first_line(e.what()); // the backend's compile() tries again and says so
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (modules[i]) list[i].compile_seconds = modules[i]->compiled.compile_seconds;
    if (!record || !generates[i]) continue;
    if (!modules[i]) {
      list[i].status = "compile failed";
      list[i].error = errors[i];
      continue;
    }
    list[i].status = "compiled";
    for (const codegen::CudaKernel& k : modules[i]->generated.kernels) {
      const auto r = modules[i]->compiled.kernels.find(k.name);
      if (r == modules[i]->compiled.kernels.end()) continue;
      const std::size_t shared = k.shared_bytes + std::size_t(std::max(0, r->second.shared_bytes));
      set_resources(list[i], std::size_t(k.kernel), r->second.registers, r->second.spill_stores,
                    r->second.spill_loads, shared, device, n);
      // What the CUDA backend refuses at load time (cuda/backend.cpp), judged with the
      // description's opt-in limit.
      if (device.shared_memory_per_block > 0 && double(shared) > device.shared_memory_per_block &&
          list[i].status == "compiled") {
        list[i].status = "load would fail";
        list[i].error = fmt::format("kernel {} ({}) needs {} KiB of shared memory per block, the "
                                    "description allows {}",
                                    k.kernel, k.mapping, (shared + 1023) / 1024,
                                    long(device.shared_memory_per_block) / 1024);
      }
    }
  }
}

nlohmann::json candidate_json(const Candidate& c) {
  nlohmann::json kernels = nlohmann::json::array();
  for (std::size_t k = 0; k < c.priced.kernels.size(); ++k) {
    const mapper::PricedKernel& pk = c.priced.kernels[k];
    nlohmann::json j = {{"mapping", pk.profile.description},
                        {"predicted_s", number_or_null(pk.seconds)},
                        {"limiter", pk.prediction.limiter},
                        {"blocks_per_sm", pk.prediction.blocks_per_sm},
                        {"occupancy", pk.prediction.occupancy},
                        {"registers_estimated", pk.prediction.registers_per_thread}};
    if (k < c.kernels.size()) {
      const KernelResult& r = c.kernels[k];
      j["registers"] = r.registers;
      j["spill_stores"] = r.spill_stores;
      j["spill_loads"] = r.spill_loads;
      j["shared_bytes"] = r.shared_bytes;
      j["predicted_ptxas_s"] = number_or_null(r.predicted_ptxas_s);
    }
    kernels.push_back(std::move(j));
  }
  double ptxas = 0;
  bool have_ptxas = !c.kernels.empty();
  for (const KernelResult& r : c.kernels) {
    if (std::isnan(r.predicted_ptxas_s))
      have_ptxas = false;
    else
      ptxas += r.predicted_ptxas_s;
  }
  auto stats = [](const std::vector<double>& v) {
    if (v.empty()) return nlohmann::json();
    return nlohmann::json{{"median_s", runtime::median(v)},
                          {"min_s", *std::min_element(v.begin(), v.end())},
                          {"max_s", *std::max_element(v.begin(), v.end())},
                          {"p10_s", runtime::quantile(v, 0.1)},
                          {"p90_s", runtime::quantile(v, 0.9)},
                          {"runs", v.size()}};
  };
  std::vector<std::string> roles;
  for (const std::string& k : c.kinds) {
    std::string role = k.substr(0, k.find_first_of(" :"));
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) roles.push_back(role);
  }
  return {{"mapping", c.short_form},
          {"key", c.key},
          {"kinds", c.kinds},
          {"roles", roles},
          {"origin", c.priced.origin},
          {"kernels_count", c.mapping.kernels.size()},
          {"predicted_s", number_or_null(c.priced.seconds)},
          {"predicted_ptxas_s", have_ptxas ? number_or_null(ptxas) : nlohmann::json()},
          {"status", c.status},
          {"error", c.error},
          {"compile_s", c.compile_seconds},
          {"measured_s", number_or_null(c.measured)},
          {"first_pass", stats(c.samples)},
          {"final_s", number_or_null(c.final_measured)},
          {"final", stats(c.final_samples)},
          {"time_s", number_or_null(c.best_measured())},
          {"kernels", kernels}};
}

void print_candidates(const std::vector<const Candidate*>& order, bool measured) {
  std::printf("  %4s %10s %10s %10s  %-34s %s\n", "rank", "meas.[us]", "final[us]", "pred.[us]",
              "kinds", "mapping");
  int rank = 0;
  for (const Candidate* c : order) {
    std::string kinds;
    for (const std::string& k : c->kinds) kinds += (kinds.empty() ? "" : ", ") + k;
    if (kinds.size() > 34) kinds = kinds.substr(0, 31) + "...";
    auto us = [](double s) {
      return std::isnan(s) ? std::string("-") : fmt::format("{:.1f}", s * 1e6);
    };
    std::printf("  %4d %10s %10s %10s  %-34s %s%s\n", ++rank, us(c->measured).c_str(),
                us(c->final_measured).c_str(), us(c->priced.seconds).c_str(), kinds.c_str(),
                c->short_form.c_str(),
                (!measured || c->status == "timed") ? "" : ("  [" + c->status + "]").c_str());
  }
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

  // --- candidates ------------------------------------------------------------------------
  Candidates cands(calc, device, n);
  cands.add(result->best.mapping, "model", true);
  cands.add(def.best.mapping, "default", true);
  // Fission's comparison points: the model's best single kernel per stage (the mapper without
  // the partition search) and one kernel per output, each kernel at its model-best block.
  {
    mapper::MapperOptions single = mo;
    single.partition = false;
    cands.add(mapper::map_calculation(calc, device, single).best.mapping, "one kernel", true);
    try {
      cands.add(one_kernel_per_store(calc, device, mo.grid), "one kernel per output", true);
    } catch (const std::exception& e) {
      std::printf("  one kernel per output: %s\n", e.what());
    }
  }
  for (std::size_t i = 0; i < result->runners_up.size(); ++i)
    cands.add(result->runners_up[i].mapping,
              fmt::format("runner-up {}: {}", i + 1, result->runners_up[i].origin));
  const calc::Mapping& best = result->best.mapping;
  const calc::BlockConfig model_block = best.kernels.front().block;
  for (calc::Buffering s : calc::kAllBufferings) {
    calc::Mapping m = best;
    if (uniform(calc, m, s)) cands.add(m, fmt::format("uniform {}", calc::letter(s)));
    calc::Mapping d = calc::default_mapping(calc);
    for (calc::KernelMapping& k : d.kernels) k.block = model_block;
    if (uniform(calc, d, s))
      cands.add(d, fmt::format("uniform {} one kernel per stage", calc::letter(s)));
  }
  {
    int other = 0;
    for (const std::string& text : kCommonBlocks) {
      if (other == 6) break;
      const calc::BlockConfig blk = calc::parse_block_config(text);
      if (blk == model_block) continue;
      ++other;
      cands.add(at_block(calc, best, blk), "model-strategies at " + text);
    }
  }
  // Random samples on the default's and (when it differs) the model's partition.
  std::vector<calc::Mapping> bases{calc::default_mapping(calc)};
  if (!same_partition(best, bases.front())) bases.push_back(best);
  std::vector<std::vector<std::vector<calc::BlockConfig>>> enumerated;
  for (const calc::Mapping& base : bases) {
    std::vector<std::vector<calc::BlockConfig>> per_kernel;
    for (const model::KernelProfile& p : model::profile_mapping(calc, base))
      per_kernel.push_back(mapper::block_configurations(device, mapper::kernel_extent(p, mo.grid)));
    enumerated.push_back(std::move(per_kernel));
  }
  std::vector<calc::BlockConfig> common;
  for (const std::string& text : kCommonBlocks) common.push_back(calc::parse_block_config(text));
  std::mt19937_64 rng(opt.seed);
  int sampled = 0, attempts = 0, repeats = 0;
  const int max_attempts = std::max(1000, 40 * opt.samples);
  while (sampled < opt.samples && attempts < max_attempts) {
    ++attempts;
    const std::size_t base = std::size_t(rng() % bases.size());
    const bool from_common = (rng() & 1) != 0;
    calc::Mapping m;
    try {
      m = sample(calc, bases[base], enumerated[base], common, from_common, rng);
    } catch (const std::exception&) {
      ++cands.skipped.mapping_invalid;
      continue;
    }
    if (cands.contains(m)) { // a repeat of another candidate is drawn again
      ++repeats;
      continue;
    }
    if (cands.add(m, fmt::format("sample {}", sampled + 1))) ++sampled;
  }
  std::vector<Candidate>& list = cands.list;
  std::printf("  %zu candidates: model, default, %zu runners-up, uniform strategies, the model's "
              "strategies at 6 blocks, %d samples (%d draws, %d repeats); left out: %d invalid for "
              "the model, "
              "%d invalid mappings; %d merged duplicates\n",
              list.size(), result->runners_up.size(), sampled, attempts, repeats,
              cands.skipped.model_invalid, cands.skipped.mapping_invalid, cands.skipped.duplicates);
  std::fflush(stdout);

  Candidate* model_c = cands.find_role("model");
  Candidate* default_c = cands.find_role("default");

  // --- compile ---------------------------------------------------------------------------
  const std::string arch = gpu.present ? gpu.arch : (device.arch.empty() ? "sm_90" : device.arch);
  double precompile_s = 0;
  if (!opt.plan_only) {
    const auto t0 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "bench_mapper: %s: compiling %zu candidates for %s with %d threads...\n",
                 b.name.c_str(), list.size(), arch.c_str(), threads);
    precompile(list, program, arch, backend_options.cache_dir, threads, !gpu.present, device, n);
    precompile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "bench_mapper: %s: compiled in %.1f s\n", b.name.c_str(), precompile_s);
  } else {
    for (Candidate& c : list) c.status = "planned";
  }

  // --- time ------------------------------------------------------------------------------
  int timed = 0;
  std::vector<double*> arrays;
  Candidate* fallback_c = nullptr;
  if (gpu.present) {
    auto space_backend = runtime::make_backend("cuda", backend_options);
    runtime::ArraySpace& space = space_backend->space();
    runtime::KernelArgs args = bench::device_patch(program, calc, n, space, arrays, b.fill);

    // When the model's mapping cannot run, the candidate the model ranks first among those that
    // ran stands in for it (a secondary ratio): the timed candidate of least predicted time.
    auto fallback_now = [&]() -> Candidate* {
      Candidate* f = nullptr;
      for (Candidate& c : list)
        if (c.status == "timed" && (f == nullptr || c.priced.seconds < f->priced.seconds)) f = &c;
      return f;
    };
    // The candidates still able to be among the kFinalists fastest (with the model's, the
    // default and the stand-in) keep their compiled code; the others are released at once.
    auto prune = [&]() {
      const Candidate* fallback = fallback_now();
      std::vector<const Candidate*> timed_list;
      for (const Candidate& c : list)
        if (c.status == "timed") timed_list.push_back(&c);
      std::sort(timed_list.begin(), timed_list.end(),
                [](const Candidate* x, const Candidate* y) { return x->measured < y->measured; });
      std::set<const Candidate*> keep(
          timed_list.begin(),
          timed_list.begin() + long(std::min<std::size_t>(kFinalists, timed_list.size())));
      for (Candidate& c : list)
        if (c.compiled && c.status == "timed" && !keep.count(&c) && &c != model_c &&
            &c != default_c && &c != fallback) {
          c.compiled.reset();
          c.backend.reset();
        }
    };

    for (Candidate& c : list) {
      try {
        c.backend = runtime::make_backend("cuda", backend_options);
        std::vector<std::unique_ptr<runtime::CompiledCalculation>> compiled =
            c.backend->compile(program, {c.mapping});
        c.compiled = std::move(compiled.at(0));
      } catch (const std::exception& e) {
        c.error = first_line(e.what());
        // The module compiled but a kernel needs more shared memory than the GPU allows.
        const bool load = c.error.find("of shared memory per block") != std::string::npos;
        c.status = load ? "load failed" : "compile failed";
        ++(load ? cands.skipped.load_failed : cands.skipped.compile_failed);
        c.compiled.reset();
        c.backend.reset();
        std::fprintf(stderr, "bench_mapper: %s: %s: %s: %s\n", b.name.c_str(), c.short_form.c_str(),
                     c.status.c_str(), c.error.c_str());
        continue;
      }
      try {
        const std::vector<std::size_t> counts = launch_counts(c);
        for (int r = 0; r < opt.warmup + opt.repeats; ++r) c.compiled->run(args);
        c.samples = runs_since(c, counts, std::size_t(opt.warmup));
        c.measured = median_or_nan(c.samples);
        record_resources(c, device, n);
        c.status = std::isnan(c.measured) ? "launch failed" : "timed";
        if (c.status == "timed")
          ++timed;
        else {
          c.error = "no timings";
          ++cands.skipped.launch_failed;
        }
      } catch (const std::exception& e) {
        c.status = "launch failed";
        c.error = first_line(e.what());
        ++cands.skipped.launch_failed;
        c.compiled.reset();
        c.backend.reset();
        std::fprintf(stderr, "bench_mapper: %s: %s: launch failed: %s\n", b.name.c_str(),
                     c.short_form.c_str(), c.error.c_str());
        continue;
      }
      prune();
    }

    // Interleaved re-timing of the model's mapping, the default and the fastest candidates.
    std::vector<Candidate*> finalists;
    {
      std::vector<Candidate*> timed_list;
      for (Candidate& c : list)
        if (c.status == "timed" && c.compiled) timed_list.push_back(&c);
      std::sort(timed_list.begin(), timed_list.end(),
                [](const Candidate* x, const Candidate* y) { return x->measured < y->measured; });
      fallback_c = fallback_now();
      for (Candidate* c : {model_c, default_c, fallback_c})
        if (c != nullptr && c->status == "timed" && c->compiled &&
            std::find(finalists.begin(), finalists.end(), c) == finalists.end())
          finalists.push_back(c);
      const std::size_t fixed = finalists.size();
      for (Candidate* c : timed_list) {
        if (finalists.size() >= fixed + std::size_t(kFinalists)) break;
        if (std::find(finalists.begin(), finalists.end(), c) == finalists.end())
          finalists.push_back(c);
      }
    }
    std::vector<std::vector<std::size_t>> counts;
    for (Candidate* c : finalists) counts.push_back(launch_counts(*c));
    try {
      for (int r = 0; r < opt.warmup + opt.final_repeats; ++r)
        for (std::size_t i = 0; i < finalists.size(); ++i)
          finalists[(i + std::size_t(r)) % finalists.size()]->compiled->run(args);
      for (std::size_t i = 0; i < finalists.size(); ++i) {
        finalists[i]->final_samples = runs_since(*finalists[i], counts[i], std::size_t(opt.warmup));
        finalists[i]->final_measured = median_or_nan(finalists[i]->final_samples);
      }
    } catch (const std::exception& e) {
      std::printf("  re-timing failed: %s\n", e.what());
      out["final_error"] = e.what();
    }
    for (Candidate& c : list) {
      c.compiled.reset();
      c.backend.reset();
    }
    for (double* d : arrays) space.release(d);
  } else if (!opt.plan_only) {
    for (Candidate& c : list) {
      if (c.status == "compile failed") ++cands.skipped.compile_failed;
      if (c.status == "load would fail") ++cands.skipped.load_failed;
      // The stand-in the GPU run would time: the least predicted that compiled and would load.
      if (c.status == "compiled" &&
          (fallback_c == nullptr || c.priced.seconds < fallback_c->priced.seconds))
        fallback_c = &c;
    }
  }

  // --- results ---------------------------------------------------------------------------
  std::vector<const Candidate*> order;
  for (const Candidate& c : list) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [&](const Candidate* x, const Candidate* y) {
    const double a = gpu.present ? x->measured : x->priced.seconds;
    const double bb = gpu.present ? y->measured : y->priced.seconds;
    if (std::isnan(a) != std::isnan(bb)) return std::isnan(bb);
    return a < bb;
  });
  const Candidate* best_c = nullptr;
  for (const Candidate& c : list)
    if (!std::isnan(c.final_measured) &&
        (best_c == nullptr || c.final_measured < best_c->final_measured))
      best_c = &c;
  // The candidate the model ranks first (a search that missed it would show here).
  const Candidate* predicted_best = nullptr;
  for (const Candidate& c : list)
    if (std::isfinite(c.priced.seconds) &&
        (predicted_best == nullptr || c.priced.seconds < predicted_best->priced.seconds))
      predicted_best = &c;

  auto brief = [](const Candidate* c) {
    if (c == nullptr) return nlohmann::json();
    return nlohmann::json{{"mapping", c->short_form},
                          {"kinds", c->kinds},
                          {"predicted_s", number_or_null(c->priced.seconds)},
                          {"measured_s", number_or_null(c->measured)},
                          {"final_s", number_or_null(c->final_measured)}};
  };
  out["model"] = brief(model_c);
  out["default"] = brief(default_c);
  out["best"] = brief(best_c);
  out["predicted_best"] = brief(predicted_best);
  double ratio = kNaN, speedup = kNaN;
  if (model_c != nullptr && best_c != nullptr && !std::isnan(model_c->final_measured))
    ratio = best_c->final_measured / model_c->final_measured;
  if (model_c != nullptr && default_c != nullptr && !std::isnan(model_c->final_measured) &&
      !std::isnan(default_c->final_measured))
    speedup = default_c->final_measured / model_c->final_measured;
  int rank = 0;
  if (model_c != nullptr && !std::isnan(model_c->measured))
    for (const Candidate* c : order)
      if (!std::isnan(c->measured)) {
        ++rank;
        if (c == model_c) break;
      }
  out["ratio"] = number_or_null(ratio);
  // The stand-in: the model's first choice among the candidates that ran.
  double fallback_ratio = kNaN;
  if (fallback_c != nullptr && best_c != nullptr && !std::isnan(fallback_c->final_measured))
    fallback_ratio = best_c->final_measured / fallback_c->final_measured;
  out["model_ran"] = model_c != nullptr && model_c->status == "timed";
  out["model_status"] = model_c != nullptr ? model_c->status : "missing";
  out["model_error"] = model_c != nullptr ? model_c->error : "";
  out["predicted_best_that_ran"] = brief(fallback_c);
  out["ratio_predicted_best_that_ran"] = number_or_null(fallback_ratio);
  out["target_ratio"] = kTargetRatio;
  out["ratio_met"] = std::isnan(ratio) ? nlohmann::json() : nlohmann::json(ratio >= kTargetRatio);
  out["search_met"] = search_median < kTargetSearchSeconds;
  out["model_speedup_over_default"] = number_or_null(speedup);
  out["model_rank_first_pass"] = rank;
  out["candidates_total"] = list.size();
  out["candidates_timed"] = timed;
  out["samples"] = sampled;
  out["sample_draws"] = attempts;
  out["sample_repeats"] = repeats;
  out["skipped"] = {{"model_invalid", cands.skipped.model_invalid},
                    {"mapping_invalid", cands.skipped.mapping_invalid},
                    {"compile_failed", cands.skipped.compile_failed},
                    {"load_failed", cands.skipped.load_failed},
                    {"launch_failed", cands.skipped.launch_failed},
                    {"merged_duplicates", cands.skipped.duplicates},
                    {"examples", cands.skipped.examples}};
  out["precompile_s"] = precompile_s;
  nlohmann::json rows = nlohmann::json::array();
  for (const Candidate* c : order) rows.push_back(candidate_json(*c));
  out["candidates"] = std::move(rows);
  out["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

  // --- the table -------------------------------------------------------------------------
  auto us = [](double s) {
    return std::isnan(s) ? std::string("-") : fmt::format("{:.1f} us", s * 1e6);
  };
  if (model_c != nullptr)
    std::printf(
        "  model's mapping   %s: predicted %s, measured %s (first pass %s, rank %d of %d)\n",
        model_c->short_form.c_str(), us(model_c->priced.seconds).c_str(),
        us(model_c->final_measured).c_str(), us(model_c->measured).c_str(), rank, timed);
  if (best_c != nullptr)
    std::printf("  best measured     %s: predicted %s, measured %s [%s]\n",
                best_c->short_form.c_str(), us(best_c->priced.seconds).c_str(),
                us(best_c->final_measured).c_str(), best_c->kinds.front().c_str());
  if (default_c != nullptr)
    std::printf("  default mapping   %s: predicted %s, measured %s\n",
                default_c->short_form.c_str(), us(default_c->priced.seconds).c_str(),
                us(default_c->final_measured).c_str());
  if (predicted_best != nullptr && predicted_best != model_c)
    std::printf("  note: the model prices candidate %s (%s) below the mapper's choice: %s\n",
                predicted_best->short_form.c_str(), predicted_best->kinds.front().c_str(),
                us(predicted_best->priced.seconds).c_str());
  if (fallback_c != nullptr && fallback_c != model_c)
    std::printf("  the model's first choice among the candidates that %s: %s (%s): predicted %s, "
                "measured %s; ratio best/it = %s\n",
                gpu.present ? "ran" : "would load", fallback_c->short_form.c_str(),
                fallback_c->kinds.front().c_str(), us(fallback_c->priced.seconds).c_str(),
                us(fallback_c->final_measured).c_str(),
                std::isnan(fallback_ratio) ? "-" : fmt::format("{:.3f}", fallback_ratio).c_str());
  if (!std::isnan(ratio))
    std::printf("  ratio best/model = %.3f (target >= %.2f: %s); model/default speedup %.2fx\n",
                ratio, kTargetRatio, ratio >= kTargetRatio ? "met" : "NOT met", speedup);
  std::printf("  %d timed, skipped: %d compile failed, %d load failed%s (too much shared memory), "
              "%d launch failed, %d invalid for the model (left out before compiling)\n",
              timed, cands.skipped.compile_failed, cands.skipped.load_failed,
              gpu.present ? "" : " or would", cands.skipped.launch_failed,
              cands.skipped.model_invalid);
  if (model_c != nullptr && model_c->status != "timed" && model_c->status != "planned" &&
      model_c->status != "compiled")
    std::printf("  THE MODEL'S MAPPING DID NOT OR WOULD NOT RUN (%s): %s\n",
                model_c->status.c_str(), model_c->error.c_str());
  print_candidates(order, gpu.present);
  std::fflush(stdout);
  return out;
}

int usage() {
  std::cerr
      << "usage: bench_mapper [--n 256] [--device FILE.yaml|auto] [--json FILE] [--cache DIR]\n"
         "                    [--samples 50] [--seed 1] [--repeats 15] [--final-repeats 30]\n"
         "                    [--warmup 3] [--jobs N] [--benchmarks "
         "wave2,wave8,maxwell,microbench]\n"
         "                    [--plan-only | --compile-only]   (these two need no GPU)\n";
  return 2;
}

} // namespace

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
      } else if (a == "--plan-only")
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
  if (benchmarks.empty()) {
    std::cerr << "bench_mapper: no benchmark matches --benchmarks (wave2, wave8, maxwell, "
                 "microbench, bssn)\n";
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

  // --- summary ---------------------------------------------------------------------------
  std::printf("\nsummary (ratio = best measured / model's measured, target >= %.2f; search "
              "target < %.0f ms)\n",
              kTargetRatio, kTargetSearchSeconds * 1e3);
  std::printf("%-11s %10s %10s %10s %7s %10s %8s %10s %8s %6s %7s\n", "benchmark", "pred.[us]",
              "model[us]", "best[us]", "ratio", "dflt[us]", "speedup", "search[ms]", "calls",
              "timed", "skipped");
  bool all_met = gpu.present;
  double worst_ratio = kNaN, worst_search = 0;
  for (const nlohmann::json& bj : out["benchmarks"]) {
    auto num = [](const nlohmann::json& j) { return j.is_number() ? j.get<double>() : kNaN; };
    auto get = [&](const char* a, const char* b) {
      return bj.contains(a) && bj[a].is_object() && bj[a].contains(b) ? num(bj[a][b]) : kNaN;
    };
    const double ratio = bj.contains("ratio") ? num(bj["ratio"]) : kNaN;
    const double search = get("search", "median_s");
    const double speedup =
        bj.contains("model_speedup_over_default") ? num(bj["model_speedup_over_default"]) : kNaN;
    if (std::isnan(ratio) || ratio < kTargetRatio) all_met = false;
    if (!(search < kTargetSearchSeconds)) all_met = false;
    if (!std::isnan(ratio))
      worst_ratio = std::isnan(worst_ratio) ? ratio : std::min(worst_ratio, ratio);
    if (!std::isnan(search)) worst_search = std::max(worst_search, search);
    int skipped = 0;
    if (bj.contains("skipped"))
      skipped = bj["skipped"].value("compile_failed", 0) + bj["skipped"].value("load_failed", 0) +
                bj["skipped"].value("launch_failed", 0) + bj["skipped"].value("model_invalid", 0);
    auto f = [](double x, double scale, int digits) {
      return std::isnan(x) ? std::string("-") : fmt::format("{:.{}f}", x * scale, digits);
    };
    std::printf(
        "%-11s %10s %10s %10s %7s %10s %8s %10s %8s %6d %7d\n",
        bj["name"].get<std::string>().c_str(), f(get("model", "predicted_s"), 1e6, 1).c_str(),
        f(get("model", "final_s"), 1e6, 1).c_str(), f(get("best", "final_s"), 1e6, 1).c_str(),
        f(ratio, 1, 3).c_str(), f(get("default", "final_s"), 1e6, 1).c_str(),
        std::isnan(speedup) ? "-" : fmt::format("{:.2f}x", speedup).c_str(),
        f(search, 1e3, 1).c_str(),
        bj.contains("search") ? std::to_string(bj["search"].value("model_calls", 0L)).c_str() : "-",
        bj.value("candidates_timed", 0), skipped);
    if (gpu.present && bj.value("model_status", std::string("timed")) != "timed")
      std::printf("%-11s the model's mapping did not run (%s); best / the model's first choice "
                  "that ran: %s\n",
                  "", bj.value("model_status", std::string("?")).c_str(),
                  f(bj.contains("ratio_predicted_best_that_ran")
                        ? num(bj["ratio_predicted_best_that_ran"])
                        : kNaN,
                    1, 3)
                      .c_str());
  }
  out["summary"] = {{"worst_ratio", number_or_null(worst_ratio)},
                    {"worst_search_s", worst_search},
                    {"all_targets_met", all_met}};
  if (gpu.present)
    std::printf("targets %s (worst ratio %.3f, slowest search %.1f ms)\n",
                all_met ? "met" : "NOT all met", worst_ratio, worst_search * 1e3);
  if (!opt.json_path.empty()) std::ofstream(opt.json_path) << out.dump(1) << "\n";
  return 0;
}
