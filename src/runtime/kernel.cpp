#include "runtime/kernel.hpp"

#include "runtime/check.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace saguaro::runtime {

namespace detail {

CallShape call_shape(const calc::Calculation& calc) {
  CallShape shape;
  shape.name = calc.name;
  shape.grid_functions = calc.grid_functions.size();
  std::set<int> used;
  std::vector<calc::NodeId> roots;
  for (const calc::Stage& stage : calc.stages)
    for (const calc::Store& st : stage.stores) {
      used.insert(st.grid_function);
      roots.push_back(st.value);
    }
  for (calc::NodeId id : calc.dag.reachable(roots)) {
    const calc::Node& n = calc.dag.node(id);
    if (n.op == calc::Op::Load) used.insert(n.index);
    if (n.op == calc::Op::Parameter) shape.parameters = std::max(shape.parameters, n.index + 1);
  }
  shape.used_fields.assign(used.begin(), used.end());
  shape.margin = required_margin(calc);
  return shape;
}

bool check_args(const CallShape& shape, const KernelArgs& args) {
  const std::string what = "calculation '" + shape.name + "': ";
  if (args.fields.size() < shape.grid_functions)
    throw std::invalid_argument(what + std::to_string(args.fields.size()) + " fields given, " +
                                std::to_string(shape.grid_functions) + " needed");
  for (int g : shape.used_fields)
    if (args.fields[g] == nullptr)
      throw std::invalid_argument(what + "field " + std::to_string(g) + " is null");
  if (int(args.parameters.size()) < shape.parameters)
    throw std::invalid_argument(what + std::to_string(args.parameters.size()) +
                                " parameters given, " + std::to_string(shape.parameters) +
                                " needed");
  for (int a = 0; a < 3; ++a)
    if (args.alloc[a] < 0) throw std::invalid_argument(what + "negative allocation size");
  if (args.pitch != 0 && args.pitch < args.alloc[0])
    throw std::invalid_argument(what + "row pitch " + std::to_string(args.pitch) + " below the " +
                                std::to_string(args.alloc[0]) + " allocated points along x");
  bool empty = false;
  for (int a = 0; a < 3; ++a) empty = empty || args.hi[a] <= args.lo[a];
  if (empty) return false;
  for (int a = 0; a < 3; ++a)
    if (args.lo[a] - shape.margin.lo[a] < 0 || args.hi[a] + shape.margin.hi[a] > args.alloc[a])
      throw std::invalid_argument(what + "the region [" + std::to_string(args.lo[a]) + ", " +
                                  std::to_string(args.hi[a]) + ") along axis " + std::to_string(a) +
                                  " with the margin (" + std::to_string(shape.margin.lo[a]) + ", " +
                                  std::to_string(shape.margin.hi[a]) +
                                  ") the calculation reads does not fit the " +
                                  std::to_string(args.alloc[a]) + " allocated points");
  return true;
}

} // namespace detail

void CompiledCalculation::run_boxes(const KernelArgs& args,
                                    const std::vector<calc::Region>& boxes) const {
  KernelArgs box_args = args;
  for (const calc::Region& box : boxes) {
    if (box.empty()) continue;
    box_args.lo = box.lo;
    box_args.hi = box.hi;
    run(box_args);
  }
}

} // namespace saguaro::runtime
