// The benchmark problems every GPU benchmark shares: an EDL file, a finite-difference order,
// the right-hand-side calculation that is timed (the one scheduled in MoL_CalcRHS, or in
// evol for the micro-benchmark, which updates its output in place), and what the benchmark
// patch holds (bench/common/patch.hpp: the fill of its arrays, the parameters).
#pragma once

#include "calc/lower.hpp"
#include "edl/parser.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::bench {

// The data of the benchmark patch: grid function number gf (its index in the calculation's
// grid functions) holds base[its name] + amplitude * sin(0.001 i + gf) at linear index i of
// its allocated box (x fastest); base is 0 for names it does not list. The parameters are the
// EDL's defaults but for those named here. bench_suite records both in its manifest.json, and
// bench/suite/peers.py rebuilds the same arrays from it.
struct PatchFill {
  double amplitude = 1.0;
  std::map<std::string, double> base;       // grid function name -> offset
  std::map<std::string, double> parameters; // parameter name -> value (overrides the default)
};

struct Benchmark {
  std::string name; // "wave2"
  std::string file; // relative to the source tree, "par/wave.edl"
  int fd_order = 4;
  std::string title; // what the suite's table calls it
  PatchFill fill{};  // default: sin(0.001 i + gf) in every array, the EDL's parameters
  // Why bench/suite/naive.cu has no kernel for it (reported as n/a); empty: it has one.
  std::string no_naive{};
  // How D_ij (i != j) is lowered (calc::MixedDerivatives; auto: as a run lowers it).
  calc::MixedDerivatives mixed = calc::MixedDerivatives::Auto;
};

// B5's patch: sin(0.001 i + gf) alone is no metric (det gt could vanish, and 1/det gt blows
// up), so every variable is a small oscillation about flat space in the trivial slicing
// (gt_ij = delta_ij, alpha = 1, the rest 0), and the Kreiss-Oliger dissipation is on so that
// its terms are measured too.
inline PatchFill bssn_fill() {
  PatchFill f;
  f.amplitude = 0.05;
  f.base = {{"gt11", 1.0}, {"gt22", 1.0}, {"gt33", 1.0}, {"alpha", 1.0}};
  f.parameters = {{"epsdiss", 0.1}};
  return f;
}

// B1-B5 of the benchmark suite (bench/suite), in its order. bench_cuda and bench_mapper take
// B1-B4 by position (B5, BSSN, is left out there: their sweeps compile dozens of mappings per
// benchmark, minutes each for BSSN's 25 right-hand sides).
inline const std::vector<Benchmark>& suite_benchmarks() {
  static const std::vector<Benchmark> list = {
      {"wave2", "par/wave.edl", 2, "B1 scalar wave, 2nd order"},
      {"wave8", "par/wave.edl", 8, "B2 scalar wave, 8th order"},
      {"microbench", "par/microbench.edl", 4, "B3 Hu et al. micro-benchmark (eq. 4)"},
      {"maxwell", "par/maxwell.edl", 4, "B4 vacuum Maxwell, 4th order"},
      {"bssn", "par/bssn/bssn.edl", 4, "B5 BSSN (McLachlan's variables), 4th order", bssn_fill(),
       "no hand-written naive CUDA BSSN: its 25 right-hand sides, thousands of flops per point, "
       "are "
       "what Saguaro generates so that nobody writes them by hand"}};
  return list;
}

// B5 at finite-difference order 8, "bssn8" (Chemora measured McLachlan at 8th order; the BSSN
// issue records both orders). Not in the suite: bench_mapper and bench_registers take it.
inline Benchmark bssn_order8() {
  for (Benchmark b : suite_benchmarks())
    if (b.name == "bssn") {
      b.name = "bssn8";
      b.fd_order = 8;
      // The product stencils, as its recordings were made (raw/2026-11-28-mapper-bssn8-layout-
      // H200.json.gz, replayed by bench.model_replay); a run at order 8 nests D_12 and D_13
      // (docs/edl.md, "Mixed derivatives").
      b.mixed = calc::MixedDerivatives::Product;
      b.title = "B5 BSSN (McLachlan's variables), 8th order";
      return b;
    }
  throw std::logic_error("suite_benchmarks() has no bssn");
}

// A benchmark's program and the index of its right-hand-side calculation.
struct LoadedBenchmark {
  calc::Program program;
  std::size_t rhs = 0;
  const calc::Calculation& calculation() const { return program.calculations.at(rhs); }
};

inline LoadedBenchmark load_benchmark(const Benchmark& b) {
  LoadedBenchmark l;
  l.program = calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/" + b.file),
                          calc::LowerOptions{b.fd_order, b.mixed});
  const auto& calcs = l.program.calculations;
  auto it = std::find_if(calcs.begin(), calcs.end(), [](const calc::Calculation& c) {
    return c.schedule_bin == "MoL_CalcRHS" || c.schedule_bin == "evol";
  });
  if (it == calcs.end()) throw std::runtime_error(b.file + " has no right-hand-side calculation");
  l.rhs = std::size_t(it - calcs.begin());
  return l;
}

// The parameter values of a benchmark's patch, in the program's order: the defaults, with
// the fill's overrides (a name the program lacks is an error, so a renamed parameter is not
// silently left at its default).
inline std::vector<double> patch_parameters(const calc::Program& program, const PatchFill& fill) {
  std::vector<double> values;
  for (const calc::Parameter& p : program.parameters) {
    auto it = fill.parameters.find(p.name);
    values.push_back(it == fill.parameters.end() ? p.default_value : it->second);
  }
  for (const auto& [name, value] : fill.parameters) {
    (void)value;
    if (std::none_of(program.parameters.begin(), program.parameters.end(),
                     [&](const calc::Parameter& p) { return p.name == name; }))
      throw std::runtime_error("benchmark patch: the program has no parameter " + name);
  }
  return values;
}

} // namespace saguaro::bench
