// One n^3 patch of a calculation's grid functions in an ArraySpace, as the benchmarks run
// it: ghost zones as wide as the calculation's stencils reach, smooth distinct data in every
// array (sin(0.001 i + gf) over the allocated box, i the linear index, gf the grid function's
// index: bench/suite/peers.py builds the same), the parameters at their defaults. Shared by
// bench_cuda, bench_mapper and bench_suite.
#pragma once

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
                                        std::vector<double*>& arrays) {
  const int g = runtime::required_margin(calc).max();
  runtime::KernelArgs args;
  args.alloc = {n + 2 * g, n + 2 * g, n + 2 * g};
  args.lo = {g, g, g};
  args.hi = {g + n, g + n, g + n};
  args.spacing = {1.0 / n, 1.0 / n, 1.0 / n};
  for (const calc::Parameter& p : program.parameters) args.parameters.push_back(p.default_value);
  const std::size_t points = std::size_t(args.alloc[0]) * args.alloc[1] * args.alloc[2];
  std::vector<double> init(points);
  const std::size_t first = arrays.size();
  for (std::size_t gf = 0; gf < calc.grid_functions.size(); ++gf) {
    for (std::size_t i = 0; i < points; ++i) init[i] = std::sin(0.001 * double(i) + double(gf));
    double* d = space.allocate(points);
    space.from_host(d, init.data(), points);
    arrays.push_back(d);
  }
  args.fields.assign(arrays.begin() + long(first), arrays.end());
  return args;
}

} // namespace saguaro::bench
