// Lowering: EDL syntax tree -> Program of Calculations, as a sequence of named passes
// (calc/lowering.hpp lists them and holds the state they share; lower.cpp drives them).
#pragma once

#include "calc/calculation.hpp"
#include "calc/lowering.hpp"
#include "edl/ast.hpp"

namespace saguaro::calc {

// All passes. Throws edl::EdlError for semantic errors (undeclared names, index mismatches,
// ...): the first the file has.
Program lower(const edl::Thorn& thorn, const LowerOptions& options = {});

} // namespace saguaro::calc
