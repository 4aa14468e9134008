// Argument checks shared by the backends (internal to runtime/).
#pragma once

#include "runtime/kernel.hpp"

#include <string>

namespace saguaro::runtime::detail {

// What run() needs to know of a calculation to check its arguments cheaply.
struct CallShape {
  std::string name;               // the calculation's name, for messages
  std::size_t grid_functions = 0; // Calculation::grid_functions.size()
  std::vector<int> used_fields;   // grid functions loaded or stored
  int parameters = 0;             // 1 + the largest parameter index used (0: none)
  Margin margin;                  // required_margin()
};

CallShape call_shape(const calc::Calculation& calc);

// Throws std::invalid_argument when `args` do not fit `shape`: too few or null fields, too few
// parameters, or a region whose margin reaches outside the allocation. Returns false when the
// region is empty (then nothing is computed, not even the earlier stages' extended regions).
bool check_args(const CallShape& shape, const KernelArgs& args);

} // namespace saguaro::runtime::detail
