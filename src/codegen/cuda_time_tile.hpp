// CUDA code generation for a time-tiled step (calc/time_tile.hpp): one kernel that evaluates
// every stage of an explicit Runge-Kutta step with a sub-diagonal tableau (or a part of them)
// on a tile kept on chip, reading the state once and writing the new state once.
//
// Calling convention, in this order (per evolved variable in TimeTilePlan::state order, each):
//   1. `const double* y`: the state;
//   2. `const double* x`: Y_first, the first stage's input, of a part after the first (else
//      unused: may be null);
//   3. `const double* acc`: the accumulator y + dt sum_{s<first} b_s k_s, likewise;
//   4. `double* y_out`: the new state, or Y_{last+1} of a part that does not end the step
//      (owned points only; the ghosts are the step's post-step's, or unused);
//   5. `double* acc_out`: the accumulator after the part's last stage, of a part that does not
//      end the step (else unused: may be null);
//   6. `saguaro_cuda_geometry g` (codegen/cuda.hpp): lo/hi the owned points, the periodic box;
//   7. `saguaro_tableau tab`: a[s] = a_{s+1} dt and b[s] = b_{s+1} dt, as
//      schedule::Coefficient::value computes them (the whole step's, whatever the part);
//   8. one `double` per entry of TimeTileKernel::parameters.
// Launch: block (threads, 1, 1), grid time_tile_grid(...), dynamic shared memory shared_bytes.
#pragma once

#include "calc/calculation.hpp"
#include "calc/time_tile.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace saguaro::codegen {

// The arrays a time-tiled kernel takes per evolved variable (y, x, acc, y_out, acc_out).
inline constexpr int kTimeTileArraysPerVariable = 5;
// The most stages a generated time-tiled kernel takes (the tableau argument's size).
inline constexpr int kMaxTimeTileStages = 8;

// The tableau argument as the host passes it (the kernel's `saguaro_tableau`): a[s] =
// a_{s+2,s+1} dt, b[s] = b_{s+1} dt, unused entries zero.
struct TimeTileTableau {
  double a[kMaxTimeTileStages] = {};
  double b[kMaxTimeTileStages] = {};
};
// From the coefficients times dt (stages - 1 and stages of them); throws std::invalid_argument
// beyond kMaxTimeTileStages stages.
TimeTileTableau time_tile_tableau(const std::vector<double>& a, const std::vector<double>& b);

struct TimeTileKernel {
  std::string name;            // the extern "C" symbol
  std::string source;          // the whole translation unit
  std::vector<int> parameters; // calc::Program::parameters indices, in argument order
  int threads = 0;
  std::size_t shared_bytes = 0;
};

// Throws std::invalid_argument when the plan has more than kMaxTimeTileStages stages.
TimeTileKernel generate_time_tile_cuda(const calc::Calculation& calc,
                                       const calc::TimeTilePlan& plan, const std::string& name);

// Blocks of a launch over the owned points [lo, hi).
std::array<unsigned, 3> time_tile_grid(const calc::TimeTilePlan& plan, const std::array<int, 3>& lo,
                                       const std::array<int, 3>& hi);

} // namespace saguaro::codegen
