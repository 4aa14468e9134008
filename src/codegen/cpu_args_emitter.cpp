#include "codegen/cpu_args_emitter.hpp"

#include <sstream>

namespace saguaro::codegen {

using calc::NodeId;
using calc::Op;

CpuArgsEmitter::CpuArgsEmitter(const calc::Calculation& calc, const calc::Mapping& mapping)
    : ExpressionEmitter(calc.dag), calc_(calc), mapping_(mapping),
      temporaries_(calc::temporary_arrays(mapping)) {
  for (std::size_t t = 0; t < temporaries_.size(); ++t) slots_.emplace(temporaries_[t], int(t));
}

std::string CpuArgsEmitter::function_head(const std::string& function_name,
                                          const std::vector<calc::KernelPlan>& plans) const {
  const calc::Calculation& c = calc_;
  std::ostringstream o;
  o << "// Calculation '" << c.name << "'";
  if (!c.schedule_bin.empty())
    o << " (scheduled " << c.schedule_word << " " << c.schedule_bin << ")";
  o << ": " << c.stages.size() << (c.stages.size() == 1 ? " stage, " : " stages, ") << plans.size()
    << (plans.size() == 1 ? " kernel, " : " kernels, ") << c.node_count << " DAG nodes, "
    << c.flops.total() << " flops per point.\n";
  o << "extern \"C\" void " << function_name << "(const saguaro_cpu_args* args) {\n";
  o << "  const std::ptrdiff_t sj = args->pitch;\n";
  o << "  const std::ptrdiff_t sk = std::ptrdiff_t(args->pitch) * args->alloc[1];\n";
  return o.str();
}

std::string CpuArgsEmitter::bindings(const std::string& indent) const {
  std::ostringstream o;
  for (int g : used_fields_)
    o << indent << "double* const f" << g << " = args->fields[" << g << "]; // "
      << calc_.grid_functions[std::size_t(g)].name << "\n";
  for (std::size_t t = 0; t < temporaries_.size(); ++t)
    o << indent << "double* const t" << t << " = args->temporaries[" << t << "]; // node "
      << temporaries_[t] << "\n";
  for (int a : coordinate_axes_)
    o << indent << "const double origin" << a << " = args->origin[" << a << "], spacing" << a
      << " = args->spacing[" << a << "];\n"
      << indent << "const int ioff" << a << " = args->index_offset[" << a << "];\n";
  return o.str();
}

std::string CpuArgsEmitter::uniform_values(const std::vector<calc::KernelPlan>& plans,
                                           const std::string& indent) {
  std::set<NodeId> uniform;
  for (const calc::KernelPlan& plan : plans)
    for (NodeId id : plan.nodes)
      if (dag_.node(id).uniform && dag_.node(id).op != Op::Constant) uniform.insert(id);
  std::ostringstream o;
  if (!uniform.empty() || !hoisted().empty()) o << indent << "// Values uniform over the grid.\n";
  for (NodeId id : uniform)
    o << indent << "const double u" << id << " = " << uniform_expr(id) << ";\n";
  for (const auto& [name, text] : hoisted())
    o << indent << "const double " << name << " = " << text << ";\n";
  return o.str();
}

std::string CpuArgsEmitter::uniform_leaf(const calc::Node& n) const {
  switch (n.op) {
  case Op::Parameter: return "args->parameters[" + std::to_string(n.index) + "]";
  case Op::Spacing: return "args->spacing[" + std::to_string(n.index) + "]";
  default: return "args->time";
  }
}

} // namespace saguaro::codegen
