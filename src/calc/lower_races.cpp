// Pass `races`, the race check: a grid function a calculation writes may be read by it only at
// the point itself. Points are computed in parallel, in no order, so a neighbour may already
// hold the new value (a write-after-read hazard across points); intermediates are exempt, as
// staging computes them in an earlier stage, before any point reads them.
#include "calc/lower_passes.hpp"

#include <fmt/format.h>

namespace saguaro::calc {

void check_races(LoweringState& /*state*/, CalculationLowering& work) {
  const Calculation& calc = work.calc;
  std::vector<NodeId> roots;
  for (const Stage& stage : calc.stages)
    for (const Store& st : stage.stores) roots.push_back(st.value);
  for (NodeId id : calc.dag.reachable(roots)) {
    const Node& n = calc.dag.node(id);
    if (n.op != Op::Load || n.offset == Offset{0, 0, 0}) continue;
    auto written = work.stored_at.find(n.index);
    if (written == work.stored_at.end()) continue;
    auto used = work.stencil_use.find(n.index);
    edl::SourceLoc where = used != work.stencil_use.end() ? used->second : written->second;
    throw edl::EdlError(where,
                        fmt::format("grid function '{}' is written by calculation '{}' and also "
                                    "read at a neighbouring point (offset {},{},{}); the result "
                                    "would depend on the order points are computed in. Compute "
                                    "the derivative in an earlier calculation or write a new grid "
                                    "function",
                                    calc.grid_functions[n.index].name, calc.name, n.offset[0],
                                    n.offset[1], n.offset[2]),
                        {{written->second, "written here"}});
  }
}

} // namespace saguaro::calc
