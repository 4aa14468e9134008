// One n^3 patch of a calculation's grid functions in an ArraySpace, as the benchmarks run
// it: ghost zones as wide as the calculation's stencils reach, smooth distinct data in every
// array, the parameters at their defaults. By default every array holds sin(0.001 i + gf)
// over its allocated box (i the linear index, x fastest; gf the grid function's index); a
// benchmark's PatchFill (bench/common/benchmarks.hpp) scales that and adds a base per grid
// function, and overrides parameters: base + amplitude * sin(0.001 i + gf).
// bench/suite/peers.py builds the same from bench_suite's manifest. Shared by bench_cuda,
// bench_mapper and bench_suite.
#pragma once

#include "benchmarks.hpp"
#include "calc/calculation.hpp"
#include "runtime/array_space.hpp"
#include "runtime/kernel.hpp"

#include <cmath>
#include <vector>

namespace saguaro::bench {

// Allocates the arrays in `space` (appended to `arrays`; the caller releases them) and returns
// the arguments of a launch over the n^3 interior.
inline runtime::KernelArgs device_patch(const calc::Program& program, const calc::Calculation& calc,
                                        int n, runtime::ArraySpace& space,
                                        std::vector<double*>& arrays, const PatchFill& fill = {}) {
  const int g = runtime::required_margin(calc).max();
  runtime::KernelArgs args;
  args.alloc = {n + 2 * g, n + 2 * g, n + 2 * g};
  args.lo = {g, g, g};
  args.hi = {g + n, g + n, g + n};
  args.spacing = {1.0 / n, 1.0 / n, 1.0 / n};
  args.parameters = patch_parameters(program, fill);
  const std::size_t points = std::size_t(args.alloc[0]) * args.alloc[1] * args.alloc[2];
  std::vector<double> init(points);
  const std::size_t first = arrays.size();
  for (std::size_t gf = 0; gf < calc.grid_functions.size(); ++gf) {
    const auto it = fill.base.find(calc.grid_functions[gf].name);
    const double base = it == fill.base.end() ? 0.0 : it->second;
    for (std::size_t i = 0; i < points; ++i)
      init[i] = base + fill.amplitude * std::sin(0.001 * double(i) + double(gf));
    double* d = space.allocate(points);
    space.from_host(d, init.data(), points);
    arrays.push_back(d);
  }
  args.fields.assign(arrays.begin() + long(first), arrays.end());
  return args;
}

} // namespace saguaro::bench
