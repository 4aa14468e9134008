// bench_mapper's compiling and timing: every candidate compiled (NVRTC, in threads, through the
// disk cache the CUDA backend reads), then timed on the GPU with CUDA events, the finalists
// re-timed interleaved; without a GPU, what compiling tells (status, ptxas's resources). Apart
// from generating the candidates (candidates.cpp) and from reporting them (results.cpp).
#include "candidates.hpp"

#include "../common/patch.hpp"
#include "codegen/cuda.hpp"
#include "model/model.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace saguaro::bench::mapper_bench {

namespace {

// Launches per kernel of candidate `c` so far: where its timings stand before a pass.
std::vector<std::size_t> launch_counts(const Candidate& c) {
  std::vector<std::size_t> counts(c.mapping.kernels.size(), 0);
  for (const runtime::KernelTiming& kt : c.backend->kernel_timings())
    if (kt.calculation == 0 && std::size_t(kt.kernel) < counts.size())
      counts[std::size_t(kt.kernel)] = kt.seconds.size();
  return counts;
}
// Each kernel's event times of candidate `c` since `counts` (launch_counts at the start).
std::vector<std::vector<double>> kernel_runs_since(const Candidate& c,
                                                   const std::vector<std::size_t>& counts) {
  std::vector<std::vector<double>> per_kernel(c.mapping.kernels.size());
  for (const runtime::KernelTiming& kt : c.backend->kernel_timings())
    if (kt.calculation == 0 && std::size_t(kt.kernel) < per_kernel.size()) {
      const std::size_t from = std::min(counts[std::size_t(kt.kernel)], kt.seconds.size());
      per_kernel[std::size_t(kt.kernel)].assign(kt.seconds.begin() + long(from), kt.seconds.end());
    }
  return per_kernel;
}
// The per-run times: the kernels' times summed run by run, the first `skip` runs dropped.
std::vector<double> summed_runs(const std::vector<std::vector<double>>& per_kernel,
                                std::size_t skip) {
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

// The same for every kernel, from the backend's timings (ptxas's report of the loaded module),
// with each kernel's median over `per_kernel`'s runs after the first `skip` (the warm-up): the
// model is per kernel, so is what it is fitted to.
void record_resources(Candidate& c, const model::Device& device, int n,
                      const std::vector<std::vector<double>>& per_kernel, std::size_t skip) {
  for (const runtime::KernelTiming& kt : c.backend->kernel_timings())
    if (kt.calculation == 0) {
      const std::size_t k = std::size_t(kt.kernel);
      set_resources(c, k, kt.registers, kt.spill_stores, kt.spill_loads, kt.shared_bytes, device,
                    n);
      if (k < c.kernels.size() && k < per_kernel.size() && skip < per_kernel[k].size())
        c.kernels[k].measured_s = runtime::median(
            std::vector<double>(per_kernel[k].begin() + long(skip), per_kernel[k].end()));
    }
}

double median_or_nan(const std::vector<double>& v) {
  return v.empty() ? kNaN : runtime::median(v);
}

std::string first_line(const std::string& text) {
  const std::size_t at = text.find('\n');
  return at == std::string::npos ? text : text.substr(0, at);
}

// Compiles every candidate's module in `threads` threads, filling the disk cache that the
// backend's compile() reads next (the same source, options and directory give the same key).
// Without a GPU (`record`), the outcome is the candidate's result: its status, NVRTC's error,
// ptxas's resources and the prediction with them.
void precompile(std::vector<Candidate>& list, const calc::Program& program, const std::string& arch,
                const runtime::BackendOptions& backend_options, int threads, bool record,
                const model::Device& device, int n) {
  const std::string& cache = backend_options.cache_dir;
  const std::optional<calc::ArrayLayout>& layout = backend_options.array_layout;
  // Generating is checked here, single-threaded, so that a mapping that does not fit says so.
  std::vector<char> generates(list.size(), 0);
  for (std::size_t i = 0; i < list.size(); ++i) {
    try {
      generates[i] =
          !codegen::generate_cuda(program, {list[i].mapping}, {}, -1, layout).kernels.empty();
    } catch (const std::exception& e) {
      if (record) {
        list[i].status = "compile failed";
        list[i].error = first_line(e.what());
      }
    }
  }
  runtime::cuda::CompileOptions options;
  if (!cache.empty()) options.cache_dir = (std::filesystem::path(cache) / "cuda").string();
  // The backend's own two-pass compile (runtime::cuda::compile_generated), as the backend calls
  // it for the program's one calculation (`only` 0: the source names it, so the keys match;
  // with -1 every candidate was compiled again, one at a time, when it was timed).
  std::vector<std::optional<runtime::cuda::CompiledProgram>> modules(list.size());
  std::vector<std::string> errors(list.size());
  std::atomic<std::size_t> next{0};
  auto work = [&]() {
    for (std::size_t i = next++; i < list.size(); i = next++) {
      if (!generates[i]) continue;
      try {
        modules[i] =
            runtime::cuda::compile_generated(program, {list[i].mapping}, arch, options, 0, layout);
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

} // namespace

// Compiles the candidates (unless opt.plan_only) and, with a GPU, times them: the first pass,
// then the model's mapping, the default, the stand-in and the fastest re-timed interleaved.
Timing compile_and_time(Candidates& cands, Candidate* model_c, Candidate* default_c,
                        const bench::Benchmark& b, const calc::Program& program,
                        const calc::Calculation& calc, const Options& opt,
                        const model::Device& device, const Gpu& gpu,
                        const runtime::BackendOptions& backend_options, int threads,
                        nlohmann::json& out) {
  std::vector<Candidate>& list = cands.list;
  const int n = opt.n;

  // --- compile ---------------------------------------------------------------------------
  const std::string arch = gpu.present ? gpu.arch : (device.arch.empty() ? "sm_90" : device.arch);
  double precompile_s = 0;
  if (!opt.plan_only) {
    const auto t0 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "bench_mapper: %s: compiling %zu candidates for %s with %d threads...\n",
                 b.name.c_str(), list.size(), arch.c_str(), threads);
    precompile(list, program, arch, backend_options, threads, !gpu.present, device, n);
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
        const std::vector<std::vector<double>> per_kernel = kernel_runs_since(c, counts);
        c.samples = summed_runs(per_kernel, std::size_t(opt.warmup));
        c.measured = median_or_nan(c.samples);
        record_resources(c, device, n, per_kernel, std::size_t(opt.warmup));
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
        finalists[i]->final_samples =
            summed_runs(kernel_runs_since(*finalists[i], counts[i]), std::size_t(opt.warmup));
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
  return {precompile_s, timed, fallback_c};
}

} // namespace saguaro::bench::mapper_bench
