// What ptxas makes of the generated right-hand sides: for BSSN (fd orders 4 and 8) and the
// other suite benchmarks, under the one-kernel default mapping and every register-fit fission
// the mapper offers (mapper::register_fit_candidates), each kernel's live values in the order it
// is printed (calc::max_live_values) beside ptxas's registers and spill bytes, compiled by NVRTC
// as the CUDA backend compiles them (runtime::cuda::compile_generated). The check the issue asks
// of the evaluation order ("kernels of a few hundred values do not spill; check against
// ptxas"). Needs no GPU.
//
//   bench_registers [--only NAME] [--cache DIR] [--live-only] [--folded] [--n N]
//
// --n: the kernels are printed for the array layout of an N^3 patch, as a run of that size prints
// them (its strides as constants; default 256; 0: strides from the geometry argument). A row per
// kernel: the arrays it reads, live values, the model's register estimate
// (model::estimated_registers), ptxas's registers and spill bytes, and whether it was compiled
// with the whole register file; then per mapping the sum of spill bytes and the largest live
// count;
// --live-only: the live counts and arrays read alone, without compiling (seconds, not minutes);
// --folded: instead of the plain right-hand side, its RK4 folded forms (schedule::fold_step) under
// each fission, lowered as a run lowers it (mixed derivatives auto), for the table's RK4 and
// for the entry that accumulates as the stages go.
#include "../common/benchmarks.hpp"
#include "../common/patch.hpp"

#include "calc/fold.hpp"
#include "calc/mapping.hpp"
#include "codegen/cuda.hpp"
#include "mapper/fission.hpp"
#include "model/model.hpp"
#include "runtime/cuda.hpp"
#include "schedule/step_fold.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

// The suite's benchmarks and B5 at fd order 8.
std::vector<bench::Benchmark> cases() {
  std::vector<bench::Benchmark> out = bench::suite_benchmarks();
  out.push_back(bench::bssn_order8());
  return out;
}

// The arrays a kernel reads (grid functions and earlier kernels' temporaries): with its
// stencils, what its z window brings into L1
// (bench/results/2026-11-29-bssn-fission-profile-H200.md).
std::size_t arrays_read(const calc::KernelPlan& plan) {
  return plan.inputs.size() + plan.temporaries_in.size();
}

// The mapping's kernels compiled; one row per kernel, a summary line for the mapping.
void report(const bench::LoadedBenchmark& l, const calc::Mapping& mapping, const std::string& what,
            const std::string& cache, bool compile, int n) {
  std::vector<calc::Mapping> mappings;
  for (const calc::Calculation& c : l.program.calculations)
    mappings.push_back(calc::default_mapping(c));
  mappings[l.rhs] = mapping;
  const calc::Calculation& calc = l.calculation();
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, mapping);
  if (!compile) {
    std::string live;
    for (const calc::KernelPlan& kp : plans)
      live += fmt::format(" {} ({} arrays)", calc::max_live_values(calc.dag, kp), arrays_read(kp));
    std::cout << fmt::format("  = {}: {} kernels, live values (arrays read){}\n", what,
                             plans.size(), live);
    return;
  }
  runtime::cuda::CompileOptions options;
  options.cache_dir = cache;
  const auto t0 = std::chrono::steady_clock::now();
  const runtime::cuda::CompiledProgram p = runtime::cuda::compile_generated(
      l.program, mappings, "sm_90", options, int(l.rhs),
      n > 0 ? std::optional(bench::patch_layout(calc, n)) : std::nullopt);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<model::KernelProfile> profiles = model::profile_mapping(calc, mapping);
  int spill = 0, most_live = 0, k = 0;
  for (const codegen::CudaKernel& kernel : p.generated.kernels) {
    const runtime::cuda::PtxasReport& r = p.compiled.kernels.at(kernel.name);
    const calc::KernelPlan& plan = plans[std::size_t(k)];
    const int live = calc::max_live_values(calc.dag, plan);
    spill += r.spill_stores + r.spill_loads;
    most_live = std::max(most_live, live);
    const double estimate = model::estimated_registers(profiles[std::size_t(k)]);
    std::cout << fmt::format(
        "    k{:<2} {:>3} stores {:>3} tmp out {:>3} arrays in {:>4} live {:>5.0f} est {:>4} regs "
        "{:>6} B spill st {:>6} B spill ld{}\n",
        k, mapping.kernels[std::size_t(k)].stores.size(),
        mapping.kernels[std::size_t(k)].temporaries.size(), arrays_read(plan), live, estimate,
        r.registers, r.spill_stores, r.spill_loads,
        kernel.whole_register_file ? "  (whole register file)" : "");
    ++k;
  }
  std::cout << fmt::format("  = {}: {} kernels, most live {}, spill {} B per thread ({:.1f} s "
                           "compile{})\n",
                           what, mapping.kernels.size(), most_live, spill, seconds,
                           p.compiled.from_cache ? ", cached" : "");
  std::cout.flush();
}

// RK4's folded forms (schedule::fold_step) of `mapping`, one report per form, under the
// table's entry and, for comparison, the entry that accumulates y + dt/6 (k1 + 2 k2 + 2 k3) as
// the stages go (8 arrays more per variable and step instead of 4).
void report_folded(const bench::LoadedBenchmark& loaded, const calc::Mapping& mapping,
                   const std::string& what, const std::string& cache, bool compile, int n) {
  const schedule::IntegratorText accumulating{
      "RK4-accumulating",
      4,
      "",
      "",
      {{"0", "acc = y + 1/6 dt k; y1 = y + 1/2 dt k; swap y0 y; swap y y1", "1/2"},
       {"1/2", "acc = acc + 1/3 dt k; y1 = y0 + 1/2 dt k; swap y y1", "1/2"},
       {"1/2", "acc = acc + 1/3 dt k; y1 = y0 + dt k; swap y y1", "1"},
       {"1", "y1 = acc + 1/6 dt k; swap y y1", "1"}}};
  for (const schedule::Integrator& integrator :
       {schedule::find_integrator("RK4"), schedule::parse_integrator(accumulating)}) {
    bench::LoadedBenchmark l = loaded;
    const std::size_t plain = l.program.calculations.size();
    schedule::fold_step(l.program, integrator, schedule::rhs_fields(l.program), "yes", true, true);
    for (std::size_t f = plain; f < l.program.calculations.size(); ++f) {
      const calc::FoldedForm& form = l.program.folded_forms.at(f);
      bench::LoadedBenchmark one{l.program, f};
      report(one, calc::fold_mapping(form, l.calculation(), l.program.calculations[f], mapping),
             integrator.name + " " + l.program.calculations[f].name + ", " + what, cache, compile,
             n);
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  std::string only, cache = "/tmp/saguaro-register-report";
  bool compile = true, folded = false;
  int n = 256;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--cache") && i + 1 < argc)
      cache = argv[++i];
    else if (!std::strcmp(argv[i], "--live-only"))
      compile = false;
    else if (!std::strcmp(argv[i], "--folded"))
      folded = true;
    else if (!std::strcmp(argv[i], "--n") && i + 1 < argc)
      n = std::atoi(argv[++i]);
    else {
      std::cerr << "usage: bench_registers [--only NAME] [--cache DIR] [--live-only] [--folded] "
                   "[--n N]\n";
      return 2;
    }
  }
  std::cout << fmt::format("NVRTC {}, sm_90\n", runtime::cuda::nvrtc_version());
  for (const bench::Benchmark& c : cases()) {
    if (!only.empty() && c.name != only) continue;
    bench::Benchmark as_run = c;
    if (folded) as_run.mixed = calc::MixedDerivatives::Auto; // as a run lowers it
    const bench::LoadedBenchmark l = bench::load_benchmark(as_run);
    const calc::Calculation& calc = l.calculation();
    std::cout << fmt::format("{} ({}, {} nodes)\n", c.name, calc.name, calc.dag.size());
    if (!folded) report(l, calc::default_mapping(calc), "one kernel", cache, compile, n);
    for (const mapper::FissionCandidate& f : mapper::register_fit_candidates(calc, 255)) {
      if (folded)
        report_folded(l, f.mapping, f.origin, cache, compile, n);
      else
        report(l, f.mapping, f.origin, cache, compile, n);
    }
  }
  return 0;
}
