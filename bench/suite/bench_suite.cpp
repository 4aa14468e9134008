// The benchmark suite's C++ half: where Saguaro's right-hand sides and whole time steps stand
// against the GPU's memory bandwidth, against its own default mapping, and against a naive
// hand-written CUDA kernel. (bench/suite/peers.py times JAX, CuPy and torch.compile on the same
// data; bench/suite/report.py puts both together; bench/suite/run.sh runs it all.)
//
// Per benchmark (B1-B5 of bench/common/benchmarks.hpp) on an n^3 interior, double precision:
//  1. the CPU reference: the CPU backend (generated C++, checked against the interpreter by the
//     test suite) runs the right-hand side once on the benchmark's patch (bench/common/patch.hpp,
//     with the benchmark's fill and parameters); its outputs over the interior go to
//     <data>/<benchmark>-<output>.npy, the calculation as straight-line code (what `saguaro
//     inspect --expressions` prints) to <data>/<benchmark>-expressions.txt, and manifest.json
//     describes them (fill, parameters, flops per point), so the peers can rebuild the inputs,
//     translate the formula where they have no hand-written one, and check themselves;
//  2. on the GPU, each system — Saguaro with the model's mapping (mapper::Method::Model for the
//     GPU's description in configs/devices), Saguaro with the default mapping, the naive kernel
//     of naive.cu (n/a where it has none: B5) — runs once on fresh data and is checked against
//     the reference: every output's max |x - ref| / max |ref| must be <= 1e-10, else the system
//     is "wrong", is not timed, and the run exits with status 1 (after writing everything);
//  3. timing, the same for every system here and in peers.py: after --warmup evaluations,
//     --repeats samples, each the wall time of --batch back-to-back evaluations between two
//     synchronisations, divided by the batch. Saguaro's kernels are also timed with CUDA events
//     (a run: the sum of its kernels'), which is what the model predicts;
//  4. derived: points per second, ns per point, effective bandwidth = compulsory bytes (each
//     input read once, each output written once, over the interior) / time, % of roofline = that
//     bandwidth / the triad bandwidth measured in this run (naive.cu's triad, best launch shape,
//     median of 20, measured before and after the benchmarks), GFLOP/s (the Calculation's flop
//     count per point) and % of the FP64 peak of the GPU's description (fp64_peak_flops).
// The whole steps (B1 and B5): one RK4 step of a periodic n^3 box of the benchmark's equations
// (par text written to <data>) as the `saguaro` driver runs it (host::Simulation, MoL updates,
// ghost exchange, boundaries): the CPU backend gives the reference step (state0 and state1 of
// every evolved variable in <data>), then the CUDA backend with each mapping is checked against
// it after one step and timed over --step-iterations steps (median of Simulation::step_seconds).
// The naive whole step of B1 is naive.cu's periodic kernel with RK4 stage kernels.
//
//   bench_suite [--n 256] [--data DIR] [--json FILE] [--repeats 30] [--batch 10] [--warmup 5]
//               [--benchmarks wave2,...,bssn] [--device auto|FILE.yaml] [--cache DIR]
//               [--step-iterations 25] [--no-step]
//   bench_suite --reference-only --n 32 --data DIR   (no GPU: the references and manifest only)
#include "../common/benchmarks.hpp"
#include "../common/patch.hpp"
#include "calc/mapping.hpp"
#include "calc/print.hpp"
#include "mapper/mapper.hpp"
#include "mapper/run_plan.hpp"
#include "model/device.hpp"
#include "runtime/backend_registry.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"
#include "schedule/simulation.hpp"
#include "support/files.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace saguaro;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr double kTolerance = 1e-10; // relative, against the CPU reference

struct Options {
  int n = 256;
  std::string data = "build/bench-suite", json_path, device_path = "auto", cache;
  int repeats = 30, batch = 10, warmup = 5, step_iterations = 25;
  std::vector<std::string> benchmarks;
  bool reference_only = false, step = true;
  std::string command;
};

// ---- files ---------------------------------------------------------------------------------

// A float64 array as NumPy's .npy (format 1.0).
void write_npy(const fs::path& path, const std::vector<double>& data, std::array<long, 3> shape) {
  std::string header =
      fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}, {}), }}", shape[0],
                  shape[1], shape[2]);
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const unsigned short len = static_cast<unsigned short>(header.size());
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += char(len & 0xff);
  bytes += char(len >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(double));
  support::write_atomically(path, bytes, "bench_suite");
}

void write_text(const fs::path& path, const std::string& text) {
  support::write_atomically(path, text, "bench_suite");
}

// ---- arrays --------------------------------------------------------------------------------

// The interior of an allocated array (rows `pitch` points apart): `size` points per axis
// (x, y, z) after a ghost width g, C order.
std::vector<double> interior(const std::vector<double>& full, const std::array<int, 3>& alloc,
                             int pitch, int g, const std::array<int, 3>& size) {
  std::vector<double> out(std::size_t(size[0]) * size[1] * size[2]);
  std::size_t o = 0;
  for (int k = g; k < g + size[2]; ++k)
    for (int j = g; j < g + size[1]; ++j)
      for (int i = g; i < g + size[0]; ++i)
        out[o++] = full[(std::size_t(k) * alloc[1] + std::size_t(j)) * pitch + std::size_t(i)];
  return out;
}
std::vector<double> interior(const std::vector<double>& full, const runtime::KernelArgs& args,
                             int g, int n) {
  return interior(full, args.alloc, args.row_pitch(), g, {n, n, n});
}

std::vector<double> download(runtime::ArraySpace& space, const double* array, std::size_t points) {
  std::vector<double> host(points);
  space.to_host(host.data(), array, points);
  return host;
}

// max |x - ref| / max |ref|: the normwise relative error (a pointwise one is meaningless where
// the reference crosses zero).
double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::abs(x[i] - ref[i]);
    diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
    scale = std::max(scale, std::abs(ref[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// ---- timing --------------------------------------------------------------------------------

json statistics(const std::vector<double>& samples) {
  if (samples.empty()) return json{{"runs", 0}};
  return json{{"median_s", runtime::median(samples)},
              {"min_s", *std::min_element(samples.begin(), samples.end())},
              {"max_s", *std::max_element(samples.begin(), samples.end())},
              {"p10_s", runtime::quantile(samples, 0.1)},
              {"p90_s", runtime::quantile(samples, 0.9)},
              {"runs", samples.size()},
              {"samples_s", samples}};
}

// The suite's timing rule (see the top): per sample, the wall time of `batch` evaluations
// between synchronisations, divided by the batch.
std::vector<double> time_batches(const Options& opt, const std::function<void()>& evaluate,
                                 runtime::ArraySpace& space) {
  for (int w = 0; w < opt.warmup; ++w) evaluate();
  std::vector<double> samples;
  for (int r = 0; r < opt.repeats; ++r) {
    space.synchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int b = 0; b < opt.batch; ++b) evaluate();
    space.synchronize();
    samples.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
        opt.batch);
  }
  return samples;
}

// ---- the roofline --------------------------------------------------------------------------

std::string naive_source() {
  std::ifstream in(std::string(SAGUARO_SOURCE_DIR) + "/bench/suite/naive.cu");
  if (!in) throw std::runtime_error("cannot read bench/suite/naive.cu");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Triad bandwidth [B/s], bytes = 3 x 8 per element (b, c read, a written): the best over a few
// launch shapes (blocks of 256 threads, 1 to 32 per SM) of the median of `repeats` launches.
json triad_bandwidth(runtime::cuda::KernelModule& module, runtime::ArraySpace& space, int repeats) {
  const std::size_t n = std::size_t(1) << 27; // 1 GiB per array
  double* a = space.allocate(n);
  double* b = space.allocate(n);
  double* c = space.allocate(n);
  unsigned long long n2 = n / 2;
  double s = 3.0;
  void* params[] = {&a, &b, &c, &s, &n2};
  const int sms = runtime::cuda::device_info().multiprocessors;
  json shapes = json::array();
  double best = 0;
  for (unsigned per_sm : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const std::array<unsigned, 3> grid{per_sm * unsigned(sms), 1, 1}, block{256, 1, 1};
    module.time("triad", grid, block, params, 3);
    std::vector<double> t;
    for (int r = 0; r < repeats; ++r) t.push_back(module.time("triad", grid, block, params));
    const double bw = 3.0 * double(n) * sizeof(double) / runtime::median(t);
    shapes.push_back({{"blocks_per_sm", per_sm}, {"bandwidth_GBs", bw / 1e9}});
    best = std::max(best, bw);
  }
  space.release(a);
  space.release(b);
  space.release(c);
  return json{{"bandwidth_GBs", best / 1e9},
              {"shapes", shapes},
              {"array_bytes", n * sizeof(double)},
              {"repeats", repeats}};
}

// ---- one benchmark -------------------------------------------------------------------------

struct Reference {
  std::vector<std::string> outputs;        // grid function names
  std::vector<int> output_gf;              // their Calculation::grid_functions indices
  std::vector<std::vector<double>> values; // interior, per output
};

struct Patch {
  runtime::ArraySpace* space = nullptr;
  std::vector<double*> arrays;
  runtime::KernelArgs args;
  Patch(const calc::Program& program, const calc::Calculation& calc, int n, runtime::ArraySpace& s,
        const bench::PatchFill& fill)
      : space(&s) {
    args = bench::device_patch(program, calc, n, s, arrays, fill);
  }
  ~Patch() {
    for (double* d : arrays) space->release(d);
  }
  Patch(const Patch&) = delete;
  Patch& operator=(const Patch&) = delete;
};

// The reference's outputs, checked: the worst relative error, and "ok" or "wrong".
json check(const Reference& ref, Patch& patch, int n, int g) {
  const std::size_t points = patch.args.array_points();
  double worst = 0;
  json per_output = json::object();
  for (std::size_t o = 0; o < ref.outputs.size(); ++o) {
    const std::vector<double> got =
        interior(download(*patch.space, patch.args.fields[std::size_t(ref.output_gf[o])], points),
                 patch.args, g, n);
    const double e = relative_error(got, ref.values[o]);
    per_output[ref.outputs[o]] = e;
    worst = std::max(worst, e);
  }
  return json{{"max_rel_error", worst},
              {"per_output", per_output},
              {"status", worst <= kTolerance ? "ok" : "wrong"}};
}

struct Context {
  Options opt;
  std::optional<model::Device> device; // the model's description of this GPU
  std::string device_path;
  double triad_Bps = 0;
  double fp64_peak = 0; // [FLOP/s] from the description (0: none)
  bool failed = false;  // a system disagreed with the reference
};

// The FP64 peak of a description [FLOP/s]: for a GPU 2 x fp64_rate (add, mul, fma instructions
// per cycle per SM, an fma counted once) x sm_count x clock_ghz, an fma being 2 flops as the
// Calculation's flop count (adds and muls separately) counts it; for a CPU its fp64_peak.
double fp64_peak_flops(const model::Device& d) {
  if (d.kind == "cpu") return d.fp64_peak * 1e9;
  return 2.0 * d.fp64_rate * d.sm_count * d.clock_ghz * 1e9;
}

// Rates of a right-hand side's evaluation over `points` taking `seconds`: points per second,
// ns per point, effective bandwidth and % of the roofline (compulsory bytes), GFLOP/s and % of
// the FP64 peak (the Calculation's flop count per point).
void add_rates(json& row, double seconds, double points, double bytes, double flops_per_point,
               const Context& ctx) {
  row["points_per_s"] = points / seconds;
  row["ns_per_point"] = seconds / points * 1e9;
  row["bandwidth_GBs"] = bytes / seconds / 1e9;
  row["percent_of_roofline"] = 100.0 * bytes / seconds / ctx.triad_Bps;
  row["gflops"] = flops_per_point * points / seconds / 1e9;
  if (ctx.fp64_peak > 0)
    row["percent_of_fp64_peak"] = 100.0 * flops_per_point * points / seconds / ctx.fp64_peak;
}

// Saguaro under `method`: map, compile with the CUDA backend, check, time.
// Runs `rhs` once on a fresh patch of `space` and checks it against the reference (into `row`);
// when it agrees, times it (row's "wall" and "median_s"). False when it disagrees.
bool check_and_time(Context& ctx, const bench::Benchmark& b, const bench::LoadedBenchmark& lb,
                    const runtime::CompiledCalculation& rhs, runtime::ArraySpace& space,
                    const Reference& ref, json& row) {
  const calc::Calculation& calc = lb.calculation();
  const int n = ctx.opt.n, g = runtime::required_margin(calc).max();
  Patch patch(lb.program, calc, n, space, b.fill);
  rhs.run(patch.args);
  json verdict = check(ref, patch, n, g);
  row.update(verdict);
  if (verdict["status"] != "ok") {
    ctx.failed = true;
    return false;
  }
  const std::vector<double> wall = time_batches(
      ctx.opt, [&] { rhs.run(patch.args); }, space);
  row["wall"] = statistics(wall);
  row["median_s"] = runtime::median(wall);
  return true;
}

// The mapping a run chooses: the empirical finish's candidates (mapper::finish_candidates with
// Saguaro::mapper_verify's default, 4), each compiled (one backend for all, so that their
// timings stay apart from the row's) and timed as the suite times a row, the fastest kept by
// mapper::verify_candidates. Fills the row's "finish" with every candidate's time.
calc::Mapping empirical_finish(Context& ctx, const bench::Benchmark& b,
                               const bench::LoadedBenchmark& lb, const mapper::MapResult& r,
                               json& row) {
  const calc::Calculation& calc = lb.calculation();
  const std::vector<calc::Mapping> candidates =
      mapper::finish_candidates(calc, r, calc::default_mapping(calc), 4);
  std::vector<std::vector<calc::Mapping>> sets;
  for (const calc::Mapping& m : candidates) {
    std::vector<calc::Mapping> set;
    for (const calc::Calculation& c : lb.program.calculations)
      set.push_back(calc::default_mapping(c));
    set[lb.rhs] = m;
    sets.push_back(std::move(set));
  }
  runtime::BackendOptions bo;
  bo.cache_dir = ctx.opt.cache;
  bo.array_layout = bench::patch_layout(calc, ctx.opt.n); // as a run prints its kernels
  auto backend = runtime::make_backend("cuda", bo);
  const auto compiled = backend->compile_sets(lb.program, sets);
  mapper::RunPlan plan;
  for (const calc::Calculation& c : lb.program.calculations)
    plan.calculations.push_back({c.name, calc::default_mapping(c)});
  plan.calculations[lb.rhs].candidates = candidates;
  Patch patch(lb.program, calc, ctx.opt.n, backend->space(), b.fill);
  auto time = [&](std::size_t, const std::vector<calc::Mapping>& list) {
    std::vector<double> seconds;
    for (std::size_t j = 0; j < list.size(); ++j)
      seconds.push_back(runtime::median(time_batches(
          ctx.opt, [&] { compiled[j][lb.rhs]->run(patch.args); }, backend->space())));
    return seconds;
  };
  const std::vector<std::string> lines = mapper::verify_candidates(lb.program, time, plan);
  json finish = json::array();
  const mapper::CalculationPlan& p = plan.calculations[lb.rhs];
  for (std::size_t j = 0; j < candidates.size(); ++j)
    finish.push_back({{"mapping", calc::to_string(calc, candidates[j])},
                      {"median_s", p.candidate_seconds.at(j)},
                      {"kept", j == p.kept}});
  row["finish"] = finish;
  if (!lines.empty()) std::printf("  %s\n", lines.front().c_str());
  return p.mapping;
}

// Saguaro's CUDA backend on one benchmark: the model's pick ("saguaro-model"), the mapping a run
// chooses, the model's pick checked by the empirical finish ("saguaro-run", `finish`), or the
// default mapping ("saguaro-default").
json run_saguaro(Context& ctx, const bench::Benchmark& b, const bench::LoadedBenchmark& lb,
                 mapper::Method method, bool finish, const Reference& ref, double bytes) {
  const Options& opt = ctx.opt;
  const calc::Calculation& calc = lb.calculation();
  const int n = opt.n;
  json row{{"system", method == mapper::Method::Model ? (finish ? "saguaro-run" : "saguaro-model")
                                                      : "saguaro-default"},
           {"kind", "rhs"}};
  mapper::MapperOptions mo;
  mo.method = method;
  mo.grid = {n, n, n};
  mo.runners_up = 8;
  mapper::PricedMapping chosen;
  if (ctx.device) {
    const mapper::MapResult r = mapper::map_calculation(calc, *ctx.device, mo);
    chosen = r.best;
    row["search_s"] = r.stats.seconds;
    if (finish) {
      const calc::Mapping kept = empirical_finish(ctx, b, lb, r, row);
      if (!(kept == chosen.mapping)) chosen = mapper::price_mapping(calc, kept, *ctx.device, mo);
    }
  } else {
    if (method == mapper::Method::Model) {
      row["status"] = "failed";
      row["error"] = "no model description for this GPU in configs/devices";
      return row;
    }
    chosen.mapping = calc::default_mapping(calc);
  }
  row["mapping"] = calc::to_string(calc, chosen.mapping);
  if (ctx.device) row["predicted_s"] = chosen.seconds;

  std::vector<calc::Mapping> mappings;
  for (const calc::Calculation& c : lb.program.calculations)
    mappings.push_back(calc::default_mapping(c));
  mappings[lb.rhs] = chosen.mapping;
  runtime::BackendOptions bo;
  bo.cache_dir = opt.cache;
  bo.array_layout = bench::patch_layout(calc, n); // as a run prints its kernels
  auto backend = runtime::make_backend("cuda", bo);
  auto compiled = backend->compile(lb.program, mappings);
  runtime::CompiledCalculation& rhs = *compiled[lb.rhs];
  if (!check_and_time(ctx, b, lb, rhs, backend->space(), ref, row)) return row;
  // Kernel time per run from the CUDA events: all launches of the run are summed, kernel by
  // kernel in launch order (the check's run and the warm-up left out).
  std::vector<double> per_run;
  json kernels = json::array();
  const long skip = 1 + opt.warmup;
  for (const runtime::KernelTiming& kt : backend->kernel_timings()) {
    if (kt.calculation != int(lb.rhs)) continue;
    if (per_run.empty())
      per_run.assign(
          kt.seconds.size() > std::size_t(skip) ? kt.seconds.size() - std::size_t(skip) : 0, 0.0);
    for (std::size_t r = 0; r < per_run.size() && r + std::size_t(skip) < kt.seconds.size(); ++r)
      per_run[r] += kt.seconds[r + std::size_t(skip)];
    kernels.push_back({{"name", kt.name},
                       {"mapping", kt.mapping},
                       {"registers", kt.registers},
                       {"spill_stores", kt.spill_stores},
                       {"spill_loads", kt.spill_loads},
                       {"shared_bytes", kt.shared_bytes}});
  }
  row["kernels"] = kernels;
  row["kernel_time"] = statistics(per_run);
  if (!per_run.empty() && row.contains("predicted_s")) {
    const double measured = runtime::median(per_run);
    row["model_error"] = (double(row["predicted_s"]) - measured) / measured;
  }
  add_rates(row, row["median_s"], double(n) * n * n, bytes, double(calc.flops.total()), ctx);
  return row;
}

// Saguaro's Kokkos backend (default partition: it prints no buffering strategies yet) on the
// configured Kokkos's execution space: "n/a" with the reason when this build has no Kokkos.
json run_kokkos(Context& ctx, const bench::Benchmark& b, const bench::LoadedBenchmark& lb,
                const Reference& ref, double bytes) {
  const Options& opt = ctx.opt;
  const calc::Calculation& calc = lb.calculation();
  const int n = opt.n;
  json row{{"system", "saguaro-kokkos"}, {"kind", "rhs"}, {"mapping", "default (Kokkos MDRange)"}};
  const runtime::BackendEntry* entry = runtime::find_backend("kokkos");
  std::string why;
  if (entry == nullptr || (entry->available && !entry->available(&why))) {
    row["status"] = "n/a";
    row["error"] = entry == nullptr ? "no kokkos backend" : why;
    return row;
  }
  runtime::BackendOptions bo;
  bo.cache_dir = opt.cache;
  auto backend = runtime::make_backend("kokkos", bo);
  auto compiled = backend->compile(lb.program);
  runtime::CompiledCalculation& rhs = *compiled[lb.rhs];
  if (!check_and_time(ctx, b, lb, rhs, backend->space(), ref, row)) return row;
  add_rates(row, row["median_s"], double(n) * n * n, bytes, double(calc.flops.total()), ctx);
  return row;
}

// The naive kernel of naive.cu for benchmark `name`.
json run_naive(Context& ctx, runtime::cuda::KernelModule& module, const bench::Benchmark& b,
               const bench::LoadedBenchmark& lb, const Reference& ref, double bytes) {
  const std::string& name = b.name;
  const Options& opt = ctx.opt;
  const calc::Calculation& calc = lb.calculation();
  const int n = opt.n, g = runtime::required_margin(calc).max();
  json row{
      {"system", "naive-cuda"}, {"kind", "rhs"}, {"mapping", "one thread per point, block 32x8x1"}};
  runtime::ArraySpace& space = runtime::cuda::device_space();
  Patch patch(lb.program, calc, n, space, b.fill);
  int ax = patch.args.row_pitch(), ay = patch.args.alloc[1]; // the kernels' strides
  int nn = n, gg = g;
  const auto& h = patch.args.spacing;
  double ih[3] = {1 / h[0], 1 / h[1], 1 / h[2]};
  double ih2[3] = {ih[0] * ih[0], ih[1] * ih[1], ih[2] * ih[2]};
  auto gf = [&](const std::string& v) -> double*& {
    const int i = calc.find_grid_function(v);
    if (i < 0) throw std::runtime_error("naive: no grid function " + v + " in " + calc.name);
    return patch.args.fields[std::size_t(i)];
  };
  std::vector<void*> params;
  if (name == "wave2" || name == "wave8")
    params = {&gf("phi"), &gf("pi"), &gf("phirhs"), &gf("pirhs"), &nn,    &gg,
              &ax,        &ay,       &ih2[0],       &ih2[1],      &ih2[2]};
  else if (name == "microbench") {
    params = {&gf("B")};
    for (int a = 0; a < 10; ++a) params.push_back(&gf("A" + std::to_string(a)));
    for (void* p : {static_cast<void*>(&nn), static_cast<void*>(&gg), static_cast<void*>(&ax),
                    static_cast<void*>(&ay)})
      params.push_back(p);
  } else if (name == "maxwell") {
    for (const char* v : {"El1", "El2", "El3", "B1", "B2", "B3", "El1rhs", "El2rhs", "El3rhs",
                          "B1rhs", "B2rhs", "B3rhs"})
      params.push_back(&gf(v));
    for (void* p : {static_cast<void*>(&nn), static_cast<void*>(&gg), static_cast<void*>(&ax),
                    static_cast<void*>(&ay), static_cast<void*>(&ih[0]), static_cast<void*>(&ih[1]),
                    static_cast<void*>(&ih[2])})
      params.push_back(p);
  } else {
    row["status"] = "failed";
    row["error"] = "no naive kernel for " + name;
    return row;
  }
  const std::array<unsigned, 3> block{32, 8, 1};
  const std::array<unsigned, 3> grid{unsigned((n + 31) / 32), unsigned((n + 7) / 8), unsigned(n)};
  auto evaluate = [&] { module.launch(name, grid, block, params.data()); };
  evaluate();
  json verdict = check(ref, patch, n, g);
  row.update(verdict);
  if (verdict["status"] != "ok") {
    ctx.failed = true;
    return row;
  }
  const auto& res = module.resources();
  if (auto it = res.find(name); it != res.end())
    row["kernels"] = json::array({{{"name", name},
                                   {"registers", it->second.registers},
                                   {"spill_stores", it->second.spill_stores},
                                   {"spill_loads", it->second.spill_loads}}});
  const std::vector<double> wall = time_batches(opt, evaluate, space);
  row["wall"] = statistics(wall);
  row["median_s"] = runtime::median(wall);
  std::vector<double> events;
  for (int r = 0; r < opt.repeats; ++r)
    events.push_back(module.time(name, grid, block, params.data()));
  row["kernel_time"] = statistics(events);
  add_rates(row, row["median_s"], double(n) * n * n, bytes, double(calc.flops.total()), ctx);
  return row;
}

// ---- the whole step ------------------------------------------------------------------------

// A whole step: a periodic n^3 box of a benchmark's equations at its fd order, RK4, as the
// `saguaro` driver runs it. `settings` are the EDL thorn's parameters set in the .par (the
// benchmark patch's overrides and the initial data's).
struct WholeStep {
  std::string thorns; // ActiveThorns
  std::map<std::string, double> settings;
  std::string initial_data; // what the initial data is, for the manifest
};

// B1 (the wave's own initial data) and B5 (BSSN: a gauge wave and a linearized wave along x
// with the robust-stability noise on every variable, so that every variable and direction is
// non-trivial; the dissipation on as in B5's patch); none for the others.
std::optional<WholeStep> whole_step_of(const bench::Benchmark& b) {
  if (b.name == "wave2")
    return WholeStep{"Saguaro WaveDemo", b.fill.parameters,
                     "wave_init with the EDL's default parameters"};
  if (b.name == "bssn") {
    WholeStep s{
        "Saguaro SaguaroBSSN", b.fill.parameters,
        "bssn_init: gauge wave gwAmp 0.1 plus linearized wave lwAmp 0.05 along x, noiseAmp 0.01 on "
        "every variable"};
    s.settings["gwAmp"] = 0.1;
    s.settings["lwAmp"] = 0.05;
    s.settings["noiseAmp"] = 0.01;
    return s;
  }
  return std::nullopt;
}

std::string step_par(const Options& opt, const bench::Benchmark& b, const std::string& thorn,
                     const WholeStep& ws, const std::string& backend, const std::string& mapper,
                     int iterations, const fs::path& out_dir, const std::string& cache) {
  std::string text = fmt::format(
      R"(# bench_suite's whole step: {title} ({edl_rel}, fd order {order}), RK4, periodic {n}^3.
ActiveThorns = "{thorns}"
Saguaro::equations = "{edl}"
Saguaro::fd_order  = {order}
Saguaro::backend   = "{backend}"
Saguaro::mapper    = "{mapper}"
Saguaro::progress_every = 0
CoordBase::xmax = 1.0
CoordBase::ymax = 1.0
CoordBase::zmax = 1.0
CoordBase::spacing  = "numcells"
CoordBase::ncells_x = {n}
CoordBase::ncells_y = {n}
CoordBase::ncells_z = {n}
Periodic::periodic  = yes
MoL::ODE_Method = "RK4"
Time::dtfac     = 0.25
Cactus::terminate   = "iteration"
Cactus::cctk_itlast = {it}
IO::out_dir   = "{out}"
IO::out_every = 0
)",
      fmt::arg("title", b.title), fmt::arg("edl_rel", b.file), fmt::arg("order", b.fd_order),
      fmt::arg("n", opt.n), fmt::arg("thorns", ws.thorns),
      fmt::arg("edl", std::string(SAGUARO_SOURCE_DIR) + "/" + b.file), fmt::arg("backend", backend),
      fmt::arg("mapper", mapper), fmt::arg("it", iterations), fmt::arg("out", out_dir.string()));
  if (!cache.empty()) text += fmt::format("Saguaro::cache_dir = \"{}\"\n", cache);
  for (const auto& [name, value] : ws.settings)
    text += fmt::format("{}::{} = {}\n", thorn, name, value);
  return text;
}

struct StepRun {
  std::vector<std::string> variables;     // the evolved grid functions
  std::vector<std::vector<double>> state; // per variable, over the owned points (n^3)
  std::vector<double> step_seconds;
  std::string log;
  std::string variant; // "time tile 32x8x128 (...)" or "plain" (Saguaro::time_tile's decision)
  double dt = 0;
  std::array<double, 3> spacing{};
  std::array<int, 3> points{};
};

StepRun run_steps(const Options& opt, const bench::Benchmark& b, const std::string& thorn,
                  const WholeStep& ws, const std::string& backend, const std::string& mapper,
                  int iterations, const std::string& cache) {
  const fs::path dir =
      fs::absolute(opt.data) / fmt::format("step-{}-{}-{}", b.name, backend, mapper);
  fs::create_directories(dir);
  const fs::path par = dir / "step.par";
  write_text(par, step_par(opt, b, thorn, ws, backend, mapper, iterations, dir / "out", cache));
  std::ostringstream log;
  host::Simulation sim(host::load_setup(par.string()), MPI_COMM_WORLD, log);
  sim.run();
  StepRun r;
  r.log = log.str();
  r.variant = sim.time_tile().use ? sim.time_tile().plan.text() : "plain";
  r.step_seconds = sim.step_seconds();
  r.dt = sim.dt();
  const grid::Patch& patch = sim.decomposition().patch();
  r.spacing = patch.spec.spacing;
  const grid::Index3 size = patch.size();
  r.points = {size[0], size[1], size[2]};
  const grid::Index3 alloc = patch.alloc();
  r.variables = sim.setup().program.evolved;
  for (const std::string& v : r.variables) {
    const int f = sim.fields().find(v);
    if (f < 0) throw std::runtime_error("whole step: no grid function " + v);
    const double* h = sim.fields().host(f);
    std::vector<double> in = interior(std::vector<double>(h, h + patch.points()), alloc,
                                      patch.pitch(), patch.ghost(), r.points);
    r.state.push_back(std::move(in));
  }
  return r;
}

// max over the variables of the normwise relative error against the reference step.
double step_error(const StepRun& got, const StepRun& ref) {
  if (got.variables != ref.variables)
    throw std::runtime_error("whole step: the evolved variables differ");
  double worst = 0;
  for (std::size_t v = 0; v < ref.state.size(); ++v)
    worst = std::max(worst, relative_error(got.state[v], ref.state[v]));
  return worst;
}

// The naive whole step of B1: periodic right-hand side plus RK4 stage kernels.
json naive_step(Context& ctx, runtime::cuda::KernelModule& module, const StepRun& s0,
                const StepRun& s1) {
  const Options& opt = ctx.opt;
  json row{{"system", "naive-cuda"}, {"kind", "step"}, {"benchmark", "wave2"}};
  if (s0.variables != std::vector<std::string>{"phi", "pi"})
    throw std::runtime_error("naive step: the wave's evolved variables are not phi, pi");
  runtime::ArraySpace& space = runtime::cuda::device_space();
  const int n = s0.points[0];
  const std::size_t count = std::size_t(n) * n * n;
  std::vector<double*> a; // phi, pi, phi_s, pi_s, kphi, kpi, accphi, accpi
  for (int i = 0; i < 8; ++i) a.push_back(space.allocate(count));
  double ih2[3];
  for (int d = 0; d < 3; ++d) ih2[d] = 1.0 / (s0.spacing[d] * s0.spacing[d]);
  int nn = n;
  double dt = s0.dt;
  unsigned long long cnt = count;
  const std::array<unsigned, 3> block{32, 8, 1},
      grid{unsigned((n + 31) / 32), unsigned((n + 7) / 8), unsigned(n)};
  const int sms = runtime::cuda::device_info().multiprocessors;
  const std::array<unsigned, 3> lblock{256, 1, 1}, lgrid{unsigned(8 * sms), 1, 1};
  auto step = [&] {
    for (int stage = 1; stage <= 4; ++stage) {
      double* phi = stage == 1 ? a[0] : a[2];
      double* pi = stage == 1 ? a[1] : a[3];
      void* rp[] = {&phi, &pi, &a[4], &a[5], &nn, &ih2[0], &ih2[1], &ih2[2]};
      module.launch("wave2_periodic", grid, block, rp);
      for (int v = 0; v < 2; ++v) {
        int st = stage;
        void* up[] = {&a[std::size_t(v)],
                      &a[std::size_t(2 + v)],
                      &a[std::size_t(6 + v)],
                      &a[std::size_t(4 + v)],
                      &st,
                      &dt,
                      &cnt};
        module.launch("rk4_stage", lgrid, lblock, up);
      }
    }
  };
  auto upload = [&] {
    space.from_host(a[0], s0.state[0].data(), count);
    space.from_host(a[1], s0.state[1].data(), count);
  };
  upload();
  step();
  double worst = 0;
  for (int v = 0; v < 2; ++v)
    worst = std::max(
        worst, relative_error(download(space, a[std::size_t(v)], count), s1.state[std::size_t(v)]));
  row["max_rel_error"] = worst;
  row["status"] = worst <= kTolerance ? "ok" : "wrong";
  if (worst > kTolerance)
    ctx.failed = true;
  else {
    upload(); // steps chain from the initial state, as in the simulation
    const std::vector<double> wall = time_batches(opt, step, space);
    row["wall"] = statistics(wall);
    row["median_s"] = runtime::median(wall);
    row["points_per_s"] = double(count) / runtime::median(wall);
    row["ns_per_point"] = runtime::median(wall) / double(count) * 1e9;
  }
  for (double* p : a) space.release(p);
  return row;
}

void print_row(const std::string& bench, const json& row) {
  const std::string status = row.value("status", "?");
  if (status != "ok") {
    std::printf("%-11s %-16s %-5s %-7s %s\n", bench.c_str(),
                row["system"].get<std::string>().c_str(), row["kind"].get<std::string>().c_str(),
                status.c_str(), row.value("error", "").c_str());
    if (status == "wrong")
      std::fprintf(stderr, "WRONG: %s %s: relative error %.3g > %g\n",
                   row["system"].get<std::string>().c_str(), bench.c_str(),
                   row.value("max_rel_error", -1.0), kTolerance);
    return;
  }
  std::printf("%-11s %-16s %-5s %-7s %9.3g %10.1f", bench.c_str(),
              row["system"].get<std::string>().c_str(), row["kind"].get<std::string>().c_str(),
              status.c_str(), double(row["max_rel_error"]), double(row["median_s"]) * 1e6);
  if (row.contains("percent_of_roofline"))
    std::printf(" %8.1f %6.1f%%", double(row["bandwidth_GBs"]), double(row["percent_of_roofline"]));
  else if (row.contains("ns_per_point"))
    std::printf(" %8s %7s", "", "");
  if (row.contains("ns_per_point")) std::printf(" %7.3f", double(row["ns_per_point"]));
  if (row.contains("percent_of_fp64_peak"))
    std::printf(" %5.1f%%", double(row["percent_of_fp64_peak"]));
  if (row.contains("predicted_s")) std::printf("  model %.1f us", double(row["predicted_s"]) * 1e6);
  if (row.contains("mapping")) std::printf("  %s", row["mapping"].get<std::string>().c_str());
  std::printf("\n");
  std::fflush(stdout);
}

int run(Context& ctx) {
  const Options& opt = ctx.opt;
  fs::create_directories(opt.data);
  const bool gpu = !opt.reference_only;
  json out{{"command", opt.command}, {"n", opt.n},           {"repeats", opt.repeats},
           {"batch", opt.batch},     {"warmup", opt.warmup}, {"tolerance", kTolerance}};
  {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    out["date"] = buf;
  }
  std::unique_ptr<runtime::cuda::KernelModule> naive;
  if (gpu) {
    std::string why;
    if (!runtime::cuda::available(&why)) {
      std::fprintf(stderr, "bench_suite: no GPU: %s (use --reference-only)\n", why.c_str());
      return 1;
    }
    const runtime::cuda::DeviceInfo dev = runtime::cuda::device_info();
    out["gpu"] = dev.name;
    out["arch"] = dev.arch();
    out["cuda_driver_api"] = dev.driver_version;
    out["nvrtc"] = runtime::cuda::nvrtc_version();
    ctx.device_path =
        opt.device_path == "auto" ? model::find_device_description(dev.name) : opt.device_path;
    if (!ctx.device_path.empty()) ctx.device = model::load_device(ctx.device_path);
    out["device_description"] = ctx.device_path;
    if (ctx.device) {
      ctx.fp64_peak = fp64_peak_flops(*ctx.device);
      out["fp64_peak_GFLOPs"] = ctx.fp64_peak / 1e9;
      out["fp64_peak_source"] =
          ctx.device_path + ": 2 x fp64_rate x sm_count x clock_ghz (an fma = 2 flops)";
    }
    runtime::cuda::CompileOptions co;
    co.cache_dir = opt.cache;
    naive = std::make_unique<runtime::cuda::KernelModule>(naive_source(), co);
    out["triad_before"] = triad_bandwidth(*naive, runtime::cuda::device_space(), 20);
    ctx.triad_Bps = double(out["triad_before"]["bandwidth_GBs"]) * 1e9;
    std::printf("GPU %s (%s), NVRTC %s; %d^3 interior; model %s\ntriad %.1f GB/s (the roofline); "
                "FP64 peak %.0f "
                "GFLOP/s (the description's)\n\n",
                dev.name.c_str(), dev.arch().c_str(), out["nvrtc"].get<std::string>().c_str(),
                opt.n, ctx.device_path.empty() ? "(none)" : ctx.device_path.c_str(),
                ctx.triad_Bps / 1e9, ctx.fp64_peak / 1e9);
    std::printf("%-11s %-16s %-5s %-7s %9s %10s %8s %7s %7s %6s\n", "benchmark", "system", "kind",
                "status", "rel.err", "time[us]", "GB/s", "%roof", "ns/pt", "%fp64");
  }

  json manifest{
      {"n", opt.n},
      {"init",
       "base + amplitude*sin(0.001*i + gf): i the linear index over the allocated box (x fastest), "
       "gf the index in grid_functions; per benchmark its fill (amplitude 1, base 0 unless given)"},
      {"tolerance", kTolerance},
      {"benchmarks", json::array()}};
  json benchmarks = json::array();
  json steps = json::array();
  for (const bench::Benchmark& b : bench::suite_benchmarks()) {
    if (!opt.benchmarks.empty() &&
        std::find(opt.benchmarks.begin(), opt.benchmarks.end(), b.name) == opt.benchmarks.end())
      continue;
    const bench::LoadedBenchmark lb = bench::load_benchmark(b);
    const calc::Calculation& calc = lb.calculation();
    const int n = opt.n, g = runtime::required_margin(calc).max();
    const double bytes =
        double(calc.inputs.size() + calc.outputs.size()) * double(n) * n * n * sizeof(double);
    const std::vector<double> parameters = bench::patch_parameters(lb.program, b.fill);

    // 1. The CPU reference.
    Reference ref;
    json entry{
        {"name", b.name},
        {"title", b.title},
        {"edl", b.file},
        {"fd_order", b.fd_order},
        {"calculation", calc.name},
        {"ghost", g},
        {"compulsory_bytes", bytes},
        {"bytes_per_point", double(calc.inputs.size() + calc.outputs.size()) * sizeof(double)}};
    {
      json base = json::object(), params = json::object(), evolves = json::object();
      for (const auto& [name, value] : b.fill.base) base[name] = value;
      entry["fill"] = {{"formula", "base + amplitude*sin(0.001*i + gf)"},
                       {"amplitude", b.fill.amplitude},
                       {"base", base}};
      for (std::size_t p = 0; p < lb.program.parameters.size(); ++p)
        params[lb.program.parameters[p].name] = parameters[p];
      entry["parameters"] = params;
      const calc::FlopCounts& f = calc.flops;
      entry["flops_per_point"] = f.total();
      entry["flops"] = {{"add", f.add},
                        {"mul", f.mul},
                        {"div", f.div},
                        {"sqrt", f.sqrt},
                        {"transcendental", f.transcendental},
                        {"other", f.other},
                        {"fma_pairs", f.fma}};
      for (int o : calc.outputs)
        if (!calc.grid_functions[std::size_t(o)].evolves.empty())
          evolves[calc.grid_functions[std::size_t(o)].name] =
              calc.grid_functions[std::size_t(o)].evolves;
      entry["evolves"] = evolves;
      entry["stages"] = calc.stages.size();
      // The calculation as straight-line code, as `saguaro inspect --expressions` prints it: the
      // peers' formula for benchmarks without a hand-written one (peers.py translates it).
      const std::string expressions = b.name + "-expressions.txt";
      write_text(fs::path(opt.data) / expressions,
                 calc::print_calculation(calc, lb.program.parameters));
      entry["expressions"] = expressions;
    }
    {
      runtime::BackendOptions bo;
      bo.cache_dir = opt.cache.empty() ? "" : opt.cache + "/cpu";
      auto cpu = runtime::make_backend("cpu", bo);
      auto compiled = cpu->compile(lb.program);
      Patch patch(lb.program, calc, n, cpu->space(), b.fill);
      compiled[lb.rhs]->run(patch.args);
      const std::size_t points = patch.args.array_points();
      json names = json::array(), inputs = json::array(), outputs = json::array(),
           files = json::object();
      for (const calc::GridFunctionRef& f : calc.grid_functions) names.push_back(f.name);
      for (const calc::InputStencil& in : calc.inputs)
        inputs.push_back(calc.grid_functions[std::size_t(in.grid_function)].name);
      for (int f : calc.outputs) {
        const std::string name = calc.grid_functions[std::size_t(f)].name;
        outputs.push_back(name);
        ref.outputs.push_back(name);
        ref.output_gf.push_back(f);
        ref.values.push_back(interior(
            download(cpu->space(), patch.args.fields[std::size_t(f)], points), patch.args, g, n));
        const std::string file = b.name + "-" + name + ".npy";
        write_npy(fs::path(opt.data) / file, ref.values.back(), {n, n, n});
        files[name] = file;
      }
      entry["alloc"] = patch.args.alloc;
      entry["spacing"] = patch.args.spacing;
      entry["grid_functions"] = names;
      entry["inputs"] = inputs;
      entry["outputs"] = outputs;
      entry["reference"] = files;
    }
    manifest["benchmarks"].push_back(entry);
    write_text(fs::path(opt.data) / "manifest.json", manifest.dump(1) + "\n");

    // 2-4. Each system: check, then time.
    if (gpu) {
      json result = entry;
      result["systems"] = json::array();
      // One row per system; a system that throws is a "failed" row, and the suite fails.
      auto add_row = [&](const std::string& system, const std::function<json()>& run) {
        json row;
        try {
          row = run();
        } catch (const std::exception& e) {
          row =
              json{{"system", system}, {"kind", "rhs"}, {"status", "failed"}, {"error", e.what()}};
          ctx.failed = true;
        }
        print_row(b.name, row);
        result["systems"].push_back(row);
      };
      add_row("saguaro-run",
              [&] { return run_saguaro(ctx, b, lb, mapper::Method::Model, true, ref, bytes); });
      for (mapper::Method m : {mapper::Method::Model, mapper::Method::Default})
        add_row(m == mapper::Method::Model ? "saguaro-model" : "saguaro-default",
                [&] { return run_saguaro(ctx, b, lb, m, false, ref, bytes); });
      add_row("naive-cuda", [&] {
        if (!b.no_naive.empty())
          return json{
              {"system", "naive-cuda"}, {"kind", "rhs"}, {"status", "n/a"}, {"error", b.no_naive}};
        return run_naive(ctx, *naive, b, lb, ref, bytes);
      });
      add_row("saguaro-kokkos", [&] { return run_kokkos(ctx, b, lb, ref, bytes); });
      benchmarks.push_back(result);
    }

    // The whole step, where the benchmark has one.
    const std::optional<WholeStep> ws = whole_step_of(b);
    if (!opt.step || !ws) continue;
    const std::string& thorn = lb.program.thorn;
    // The CPU reference's compiled code is shared with the right-hand side's (the same source).
    const std::string cpu_cache = opt.cache.empty() ? "" : opt.cache + "/cpu";
    const StepRun s0 = run_steps(opt, b, thorn, *ws, "cpu", "default", 0, cpu_cache);
    const StepRun s1 = run_steps(opt, b, thorn, *ws, "cpu", "default", 1, cpu_cache);
    json state0 = json::object(), state1 = json::object(), settings = json::object(),
         step_params = json::object();
    const std::array<long, 3> shape{s1.points[2], s1.points[1], s1.points[0]};
    for (std::size_t v = 0; v < s1.variables.size(); ++v) {
      const std::string& var = s1.variables[v];
      const std::string f0 = fmt::format("step-{}-{}-0.npy", b.name, var);
      const std::string f1 = fmt::format("step-{}-{}-1.npy", b.name, var);
      write_npy(fs::path(opt.data) / f0, s0.state[v], shape);
      write_npy(fs::path(opt.data) / f1, s1.state[v], shape);
      state0[var] = f0;
      state1[var] = f1;
    }
    for (const auto& [name, value] : ws->settings) settings[name] = value;
    {
      bench::PatchFill run_parameters;
      run_parameters.parameters = ws->settings;
      const std::vector<double> values = bench::patch_parameters(lb.program, run_parameters);
      for (std::size_t p = 0; p < lb.program.parameters.size(); ++p)
        step_params[lb.program.parameters[p].name] = values[p];
    }
    json step{{"benchmark", b.name},
              {"method", "RK4"},
              {"dt", s1.dt},
              {"spacing", s1.spacing},
              {"points", s1.points},
              {"periodic", true},
              {"fd_order", b.fd_order},
              {"variables", s1.variables},
              {"settings", settings},
              {"parameters", step_params},
              {"initial_data", ws->initial_data},
              {"expressions", entry["expressions"]},
              {"evolves", entry["evolves"]},
              {"flops_per_point", entry["flops_per_point"]},
              {"state0", state0},
              {"reference", state1}};
    manifest["whole_steps"].push_back(step);
    write_text(fs::path(opt.data) / "manifest.json", manifest.dump(1) + "\n");
    if (!gpu) continue;
    json rows = json::array();
    const double points = double(s1.points[0]) * s1.points[1] * s1.points[2];
    for (const char* mapper : {"model", "default"}) {
      json row{
          {"system", std::string("saguaro-") + mapper}, {"kind", "step"}, {"benchmark", b.name}};
      try {
        const StepRun one = run_steps(opt, b, thorn, *ws, "cuda", mapper, 1, opt.cache);
        const double worst = step_error(one, s1);
        row["max_rel_error"] = worst;
        row["status"] = worst <= kTolerance ? "ok" : "wrong";
        if (worst > kTolerance)
          ctx.failed = true;
        else {
          const StepRun timed = run_steps(opt, b, thorn, *ws, "cuda", mapper,
                                          opt.warmup + opt.step_iterations, opt.cache);
          std::vector<double> t(timed.step_seconds.begin() +
                                    std::min<long>(opt.warmup, long(timed.step_seconds.size())),
                                timed.step_seconds.end());
          row["wall"] = statistics(t);
          row["median_s"] = runtime::median(t);
          row["points_per_s"] = points / runtime::median(t);
          row["ns_per_point"] = runtime::median(t) / points * 1e9;
          // The compulsory traffic of any step: the state read once, the new state written once.
          const double compulsory = 2.0 * double(timed.variables.size()) * 8 * points;
          row["compulsory_bytes"] = compulsory;
          row["effective_GBps"] = compulsory / runtime::median(t) / 1e9;
          row["step_variant"] = timed.variant;
          row["log"] = timed.log;
        }
      } catch (const std::exception& e) {
        row["status"] = "failed";
        row["error"] = e.what();
        ctx.failed = true;
      }
      print_row(b.name, row);
      rows.push_back(row);
    }
    json row;
    if (b.name != "wave2") {
      row = json{{"system", "naive-cuda"},
                 {"kind", "step"},
                 {"benchmark", b.name},
                 {"status", "n/a"},
                 {"error", b.no_naive.empty() ? "no naive whole step" : b.no_naive}};
    } else {
      try {
        row = naive_step(ctx, *naive, s0, s1);
      } catch (const std::exception& e) {
        row = json{{"system", "naive-cuda"},
                   {"kind", "step"},
                   {"benchmark", b.name},
                   {"status", "failed"},
                   {"error", e.what()}};
        ctx.failed = true;
      }
    }
    print_row(b.name, row);
    rows.push_back(row);
    step["systems"] = rows;
    steps.push_back(step);
  }
  if (gpu) {
    out["triad_after"] = triad_bandwidth(*naive, runtime::cuda::device_space(), 20);
    out["roofline_GBs"] = ctx.triad_Bps / 1e9;
    out["benchmarks"] = benchmarks;
    out["whole_steps"] = steps;
    if (!opt.json_path.empty()) write_text(opt.json_path, out.dump(1) + "\n");
    std::printf("\ntriad after: %.1f GB/s\n", double(out["triad_after"]["bandwidth_GBs"]));
  }
  std::printf("data for the peers: %s/manifest.json\n", opt.data.c_str());
  return ctx.failed ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
  Context ctx;
  Options& opt = ctx.opt;
  CLI::App app{
      "Saguaro's benchmark suite (C++ half): references, Saguaro and naive CUDA, the roofline"};
  app.add_option("--n", opt.n, "interior points per axis")->check(CLI::Range(8, 2048));
  app.add_option("--data", opt.data,
                 "directory for the references and manifest.json (peers.py reads it)");
  app.add_option("--json", opt.json_path, "write every result here");
  app.add_option("--repeats", opt.repeats, "timed samples per system")->check(CLI::Range(1, 10000));
  app.add_option("--batch", opt.batch, "evaluations per sample")->check(CLI::Range(1, 10000));
  app.add_option("--warmup", opt.warmup, "evaluations before timing")->check(CLI::Range(0, 10000));
  app.add_option("--step-iterations", opt.step_iterations, "timed whole steps")
      ->check(CLI::Range(1, 10000));
  app.add_option("--benchmarks", opt.benchmarks, "benchmarks to run (default: all)")
      ->delimiter(',');
  app.add_option("--device", opt.device_path,
                 "the model's description: auto (configs/devices) or a file");
  app.add_option("--cache", opt.cache, "cache directory for compiled code");
  app.add_flag("--reference-only", opt.reference_only,
               "no GPU: write the references and manifest only");
  bool no_step = false;
  app.add_flag("--no-step", no_step, "leave out the whole step");
  CLI11_PARSE(app, argc, argv);
  opt.step = !no_step;
  for (int i = 0; i < argc; ++i) opt.command += (i ? " " : "") + std::string(argv[i]);
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(ctx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_suite: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
