// Lowering: EDL syntax tree -> Program of Calculations.
//
// Passes, per equation: index analysis (free and summed indices, checked against the left
// side), expansion into components (free indices make families, repeated up/down pairs are
// summed), and construction of the DAG, with derivatives replaced by their finite-difference
// stencils. A derivative of an expression that is not a pure stencil of loads puts that
// expression into an intermediate grid function computed in an earlier stage.
#pragma once

#include "calc/calculation.hpp"
#include "edl/ast.hpp"

namespace saguaro::calc {

struct LowerOptions {
  int fd_order = 4; // accuracy order of the built-in D_i and D_ij: 2, 4, 6 or 8
};

// Throws edl::EdlError for semantic errors (undeclared names, index mismatches, ...).
Program lower(const edl::Thorn& thorn, const LowerOptions& options = {});

} // namespace saguaro::calc
