// Pass `parameters`, parameter declaration: each parameter is claimed in the symbol table and
// its default and range ends are evaluated as constant expressions and checked. After this
// pass the program's parameters are complete, so a host can declare them (and read the
// finite-difference order a run asks for) before the rest of the lowering.
#include "calc/lower_passes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::calc {

using edl::EdlError;

// A default or range end: lowered into a scratch DAG, where it must fold to a constant.
double Lowerer::constant_value(const edl::Expr& e, const char* what) {
  constant_mode = true;
  Dag scratch;
  Dag* saved = dag;
  dag = &scratch;
  NodeId id = 0;
  try {
    analyse_indices(e);
    id = lower(e, {});
  } catch (...) {
    dag = saved;
    constant_mode = false;
    throw;
  }
  dag = saved;
  constant_mode = false;
  double value = 0.0;
  if (!scratch.is_constant(id, &value))
    throw EdlError(e.loc, fmt::format("{} must be a constant expression", what));
  return value;
}

void declare_parameters(LoweringState& state) {
  Lowerer lowerer(state);
  // An inherited thorn's parameters (its param.ccl's global and restricted ones), claimed
  // where the thorn is inherited: a script that declares one of them again is told so.
  for (const auto& [inherited, at] : state.inherited_parameters) {
    lowerer.claim_name(inherited.name, at, "parameter");
    Parameter p;
    p.name = inherited.name;
    p.type = inherited.type;
    p.description = inherited.description;
    p.default_value = inherited.default_value;
    p.default_keyword = inherited.default_keyword;
    p.keyword_values = inherited.keyword_values;
    p.inherited_from = inherited.thorn;
    state.parameter_index[p.name] = static_cast<int>(state.program.parameters.size());
    state.program.parameters.push_back(std::move(p));
  }
  for (const auto& decl : state.thorn->parameters) {
    lowerer.claim_name(decl.name, decl.loc, "parameter");
    Parameter p;
    p.name = decl.name;
    p.type = decl.type;
    p.description = decl.description;
    p.keyword_values = decl.keyword_values;
    if (decl.has_range) {
      if (decl.range_min) p.min = lowerer.constant_value(*decl.range_min, "a range end");
      if (decl.range_max) p.max = lowerer.constant_value(*decl.range_max, "a range end");
      if (p.min && p.max && *p.min > *p.max)
        throw EdlError(decl.range_loc, fmt::format("range of '{}' is empty: {} is above {}", p.name,
                                                   *p.min, *p.max));
    }
    if (decl.type == edl::ParameterType::Keyword) {
      p.default_keyword = decl.has_default
                              ? decl.default_word
                              : (decl.keyword_values.empty() ? "" : decl.keyword_values[0]);
      if (!p.keyword_values.empty() && std::find(p.keyword_values.begin(), p.keyword_values.end(),
                                                 p.default_keyword) == p.keyword_values.end())
        throw EdlError(decl.has_default ? decl.default_loc : decl.loc,
                       fmt::format("default \"{}\" of '{}' is not one of its values "
                                   "{}",
                                   p.default_keyword, p.name, fmt::join(p.keyword_values, ", ")));
    } else if (decl.type == edl::ParameterType::Boolean) {
      p.default_value = decl.default_word == "true" ? 1.0 : 0.0;
    } else if (decl.has_default) {
      p.default_value = lowerer.constant_value(*decl.default_value, "a default");
      if (decl.type == edl::ParameterType::Int && p.default_value != std::floor(p.default_value))
        throw EdlError(decl.default_value->loc,
                       fmt::format("default of int parameter '{}' is {}, not an integer", p.name,
                                   p.default_value));
    } else if (p.min) {
      p.default_value = *p.min; // Cactus requires a default; the range's low end is the safe one
    }
    if ((p.min && p.default_value < *p.min) || (p.max && p.default_value > *p.max))
      throw EdlError(decl.has_default && decl.default_value ? decl.default_value->loc : decl.loc,
                     fmt::format("default {} of '{}' is outside its range {} to {}",
                                 p.default_value, p.name,
                                 p.min ? fmt::format("{}", *p.min) : "-infinity",
                                 p.max ? fmt::format("{}", *p.max) : "infinity"));
    state.parameter_index[p.name] = static_cast<int>(state.program.parameters.size());
    state.program.parameters.push_back(std::move(p));
  }
}

} // namespace saguaro::calc
