// bench_suite's rows for a benchmark's right-hand side: Saguaro's CUDA backend under the model's
// mapping, the default mapping and the mapping a run chooses (the empirical finish), Saguaro's
// Kokkos backend, and the naive kernel of naive.cu, each checked against the CPU reference and
// timed; with them the checking, the timing rule and the roofline (the triad) that every row,
// the whole step's included, uses. Apart from bench_suite.cpp, which runs the suite and writes
// what it finds, and from whole_step.cpp.
#include "suite_rows.hpp"

#include "calc/mapping.hpp"
#include "mapper/mapper.hpp"
#include "mapper/run_plan.hpp"
#include "runtime/backend_registry.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::bench::suite {

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

// The FP64 peak of a description [FLOP/s]: for a GPU 2 x fp64_rate (add, mul, fma instructions
// per cycle per SM, an fma counted once) x sm_count x clock_ghz, an fma being 2 flops as the
// Calculation's flop count (adds and muls separately) counts it; for a CPU its fp64_peak.
double fp64_peak_flops(const model::Device& d) {
  if (d.kind == "cpu") return d.fp64_peak * 1e9;
  return 2.0 * d.fp64_rate * d.sm_count * d.clock_ghz * 1e9;
}

namespace {

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
// mapper::verify_candidates. Fills the row's "finish" with every candidate's time and its
// price with ptxas's registers, spills and shared memory ("priced_s"); the candidate the model
// so picks, the mapper's choice once the compiler has spoken, is marked "priced_pick".
calc::Mapping empirical_finish(Context& ctx, const bench::Benchmark& b,
                               const bench::LoadedBenchmark& lb, const mapper::MapResult& r,
                               const mapper::MapperOptions& mo, json& row) {
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
  auto price = [&](std::size_t, const std::vector<calc::Mapping>& list) {
    std::vector<double> out(list.size(), std::nan(""));
    for (std::size_t j = 0; j < list.size(); ++j) {
      std::vector<model::CompiledResources> resources;
      for (const runtime::KernelResources& k : compiled[j][lb.rhs]->kernel_resources())
        resources.push_back(runtime::compiled_resources(k));
      if (!resources.empty())
        out[j] = mapper::price_mapping(calc, list[j], *ctx.device, mo, resources).seconds;
    }
    return out;
  };
  const std::vector<std::string> lines =
      mapper::verify_candidates(lb.program, time, plan, {}, price);
  json finish = json::array();
  const mapper::CalculationPlan& p = plan.calculations[lb.rhs];
  for (std::size_t j = 0; j < candidates.size(); ++j) {
    finish.push_back({{"mapping", calc::to_string(calc, candidates[j])},
                      {"median_s", p.candidate_seconds.at(j)},
                      {"kept", j == p.kept}});
    if (!p.candidate_priced.empty())
      finish.back().update(
          {{"priced_s", p.candidate_priced.at(j)}, {"priced_pick", j == p.priced_pick}});
  }
  row["finish"] = finish;
  if (!lines.empty()) std::printf("  %s\n", lines.front().c_str());
  return p.mapping;
}

} // namespace

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
      const calc::Mapping kept = empirical_finish(ctx, b, lb, r, mo, row);
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
    // std::string("A"), not "A": GCC 12 takes "A" + std::to_string(a) for an overlapping copy
    // here (-Wrestrict, a false positive) once run_naive is compiled on its own.
    for (int a = 0; a < 10; ++a) params.push_back(&gf(std::string("A") + std::to_string(a)));
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

} // namespace saguaro::bench::suite
