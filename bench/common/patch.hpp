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

// The layout of device_patch's arrays (a run's kernels are printed for their patch's layout:
// runtime::BackendOptions::array_layout).
inline calc::ArrayLayout patch_layout(const calc::Calculation& calc, int n, int row_alignment = 8) {
  const int alloc = n + 2 * runtime::required_margin(calc).max();
  return {runtime::aligned_pitch(alloc, row_alignment), alloc};
}

// Allocates the arrays in `space` (appended to `arrays`; the caller releases them) and returns
// the arguments of a launch over the n^3 interior. Rows are padded to a multiple of
// `row_alignment` points and start so that the first interior point of every row is aligned,
// as a run's grid lays them out (grid::GridSpec::row_alignment): `arrays` gets the allocated
// pointers (to release), args.fields the arrays' first points. i in the fill above counts the
// allocated box's points only, so the data do not depend on the padding.
inline runtime::KernelArgs device_patch(const calc::Program& program, const calc::Calculation& calc,
                                        int n, runtime::ArraySpace& space,
                                        std::vector<double*>& arrays, const PatchFill& fill = {},
                                        int row_alignment = 8) {
  const int g = runtime::required_margin(calc).max();
  const calc::ArrayLayout layout = patch_layout(calc, n, row_alignment);
  runtime::KernelArgs args;
  args.alloc = {layout.rows, layout.rows, layout.rows};
  args.pitch = layout.pitch;
  const std::size_t offset = std::size_t(runtime::aligned_row_offset(g, row_alignment));
  args.lo = {g, g, g};
  args.hi = {g + n, g + n, g + n};
  args.spacing = {1.0 / n, 1.0 / n, 1.0 / n};
  args.parameters = patch_parameters(program, fill);
  const std::size_t points = args.array_points();
  const std::size_t rows = std::size_t(args.alloc[1]) * std::size_t(args.alloc[2]);
  const std::size_t row = std::size_t(args.alloc[0]), pitch = std::size_t(args.pitch);
  std::vector<double> init(points, 0.0);
  for (std::size_t gf = 0; gf < calc.grid_functions.size(); ++gf) {
    const auto it = fill.base.find(calc.grid_functions[gf].name);
    const double base = it == fill.base.end() ? 0.0 : it->second;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t x = 0; x < row; ++x)
        init[r * pitch + x] =
            base + fill.amplitude * std::sin(0.001 * double(r * row + x) + double(gf));
    double* d = space.allocate(points + offset);
    space.from_host(d + offset, init.data(), points);
    arrays.push_back(d);
    args.fields.push_back(d + offset);
  }
  return args;
}

} // namespace saguaro::bench
