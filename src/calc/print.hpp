// Readable text of a calculation's DAG: shared subexpressions (used twice or more, or named by
// the user) become numbered temporaries, then each stage's stores follow, as straight-line code.
#pragma once

#include "calc/calculation.hpp"

#include <string>
#include <vector>

namespace saguaro::calc {

std::string print_calculation(const Calculation& calc, const std::vector<Parameter>& parameters);

} // namespace saguaro::calc
