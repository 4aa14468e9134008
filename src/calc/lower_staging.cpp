// Pass `staging`: a calculation's stores go into stages. Each intermediate grid function the
// stores read is stored by the stage its expression needs (after the intermediates it reads), the
// calculation's own stores by the last; then each stage's extent is the region later stages
// read it on. Last, the calculation's derived fields (inputs with their stencils, outputs,
// flops, radius) are filled, its inputs in declaration order.
#include "calc/lower_passes.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <vector>

namespace saguaro::calc {

namespace {

// The intermediates the calculation's stores read, directly or through other intermediates.
// The others are dropped: a nested mixed derivative whose every use was multiplied by zero
// (Euc^12 D_12 phi in par/wave.edl) would otherwise cost a stage that nothing reads.
std::set<int> live_intermediates(const CalculationLowering& work) {
  std::map<int, NodeId> value_of;
  for (const auto& [value, gf] : work.intermediate_of) value_of[gf] = value;
  std::set<int> live;
  std::vector<NodeId> frontier;
  for (const auto& [gf, value] : work.stores) frontier.push_back(value);
  while (!frontier.empty()) {
    std::vector<NodeId> next;
    for (NodeId id : work.calc.dag.reachable(frontier)) {
      const Node& n = work.calc.dag.node(id);
      if (n.op != Op::Load) continue;
      if (auto it = value_of.find(n.index); it != value_of.end() && live.insert(n.index).second)
        next.push_back(it->second);
    }
    frontier = std::move(next);
  }
  return live;
}

} // namespace

void build_stages(LoweringState& state, CalculationLowering& work) {
  Calculation& calc = work.calc;
  const std::set<int> live = live_intermediates(work);
  // Each live intermediate's stage, numbered without the stages the dead ones leave empty.
  std::vector<int> stage_of(work.intermediate_stage.size(), -1);
  std::set<int> used;
  for (int gf : live) used.insert(work.intermediate_stage[std::size_t(gf)]);
  for (int gf : live)
    stage_of[std::size_t(gf)] =
        int(std::distance(used.begin(), used.find(work.intermediate_stage[std::size_t(gf)])));
  const int last = int(used.size());
  calc.stages.assign(std::size_t(last) + 1, Stage{});
  for (const auto& [value, gf] : work.intermediate_of)
    if (live.count(gf))
      calc.stages[std::size_t(stage_of[std::size_t(gf)])].stores.push_back(Store{gf, value});
  for (auto& stage : calc.stages)
    std::sort(stage.stores.begin(), stage.stores.end(),
              [](const Store& a, const Store& b) { return a.grid_function < b.grid_function; });
  for (const auto& [gf, value] : work.stores) calc.stages[last].stores.push_back(Store{gf, value});

  for (int s = last - 1; s >= 0; --s) {
    Stage& stage = calc.stages[s];
    for (int later = s + 1; later <= last; ++later) {
      std::vector<NodeId> roots;
      for (const Store& st : calc.stages[later].stores) roots.push_back(st.value);
      for (NodeId id : calc.dag.reachable(roots)) {
        const Node& n = calc.dag.node(id);
        if (n.op != Op::Load || stage_of[n.index] != s) continue;
        for (int a = 0; a < 3; ++a) {
          stage.extent_lo[a] = std::max(stage.extent_lo[a], calc.stages[later].extent_lo[a] +
                                                                std::max(0, -n.offset[a]));
          stage.extent_hi[a] = std::max(stage.extent_hi[a],
                                        calc.stages[later].extent_hi[a] + std::max(0, n.offset[a]));
        }
      }
    }
  }

  analyse(calc);
  // Inputs in declaration order, which is how users think of their variables.
  const std::vector<std::string>& variables = state.program.variables;
  auto rank = [&](const InputStencil& in) {
    const std::string& name = calc.grid_functions[in.grid_function].name;
    return std::find(variables.begin(), variables.end(), name) - variables.begin();
  };
  std::stable_sort(calc.inputs.begin(), calc.inputs.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
}

} // namespace saguaro::calc
