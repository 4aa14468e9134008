// What the C++ and Kokkos printers share: both print one extern "C" function per calculation
// over codegen::CpuArgs (cpp.hpp), so the function's head, the bindings of its fields, scratch
// arrays and coordinates, the uniform values and the spelling of the uniform leaves are written
// once here; each printer adds its own loops (an OpenMP nest, Kokkos parallel_fors).
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "codegen/expression.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace saguaro::codegen {

class CpuArgsEmitter : public ExpressionEmitter {
protected:
  CpuArgsEmitter(const calc::Calculation& calc, const calc::Mapping& mapping);

  // The comment naming the calculation, the signature and the row strides sj, sk.
  std::string function_head(const std::string& function_name,
                            const std::vector<calc::KernelPlan>& plans) const;
  // f<g>, t<t>, origin<a>/spacing<a>/ioff<a> for the fields, scratch arrays and coordinate
  // axes the kernels used (call after emitting them); each line prefixed by `indent`.
  std::string bindings(const std::string& indent) const;
  // The uniform values the plans' nodes use and the hoisted values, once, outside the loops.
  std::string uniform_values(const std::vector<calc::KernelPlan>& plans, const std::string& indent);

  std::string uniform_leaf(const calc::Node& n) const override;

  const calc::Calculation& calc_;
  const calc::Mapping& mapping_;
  std::vector<calc::NodeId> temporaries_; // scratch arrays, calc::temporary_arrays order
  std::map<calc::NodeId, int> slots_;     // node -> its scratch array
  std::set<int> used_fields_;             // filled by the printer's kernels
  std::set<int> coordinate_axes_;         // likewise
};

} // namespace saguaro::codegen
