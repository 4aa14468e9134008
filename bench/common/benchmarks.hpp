// The benchmark problems every GPU benchmark shares: an EDL file, a finite-difference order,
// and the right-hand-side calculation that is timed (the one scheduled in MoL_CalcRHS, or in
// evol for the micro-benchmark, which updates its output in place).
#pragma once

#include "calc/lower.hpp"
#include "edl/parser.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::bench {

struct Benchmark {
  std::string name; // "wave2"
  std::string file; // relative to the source tree, "par/wave.edl"
  int fd_order = 4;
  std::string title; // what the suite's table calls it
};

// B1-B4 of the benchmark suite (bench/suite), in its order; bench_cuda adds wave4.
inline const std::vector<Benchmark>& suite_benchmarks() {
  static const std::vector<Benchmark> list = {
      {"wave2", "par/wave.edl", 2, "B1 scalar wave, 2nd order"},
      {"wave8", "par/wave.edl", 8, "B2 scalar wave, 8th order"},
      {"microbench", "par/microbench.edl", 4, "B3 Hu et al. micro-benchmark (eq. 4)"},
      {"maxwell", "par/maxwell.edl", 4, "B4 vacuum Maxwell, 4th order"}};
  return list;
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
                          calc::LowerOptions{b.fd_order});
  const auto& calcs = l.program.calculations;
  auto it = std::find_if(calcs.begin(), calcs.end(), [](const calc::Calculation& c) {
    return c.schedule_bin == "MoL_CalcRHS" || c.schedule_bin == "evol";
  });
  if (it == calcs.end()) throw std::runtime_error(b.file + " has no right-hand-side calculation");
  l.rhs = std::size_t(it - calcs.begin());
  return l;
}

} // namespace saguaro::bench
