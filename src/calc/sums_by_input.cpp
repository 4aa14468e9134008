#include "calc/sums_by_input.hpp"

#include <algorithm>
#include <map>

namespace saguaro::calc {

namespace {
constexpr int kNone = -1, kSeveral = -2; // what a node reads: no grid function, more than one
}

double points_in_lockstep(const BlockConfig& block, int stored_values) {
  if (!block.sums_by_input || block.tee < 2) return 1.0;
  return std::min(double(block.tee), double(kMaxRunningSums) / std::max(1, stored_values));
}

std::optional<SumsByInput> sums_by_input(const Calculation& calc, const KernelPlan& plan,
                                         std::string* why) {
  auto fail = [why](const std::string& what) -> std::optional<SumsByInput> {
    if (why) *why = what;
    return std::nullopt;
  };
  if (!plan.temporaries_in.empty()) return fail("the kernel loads temporaries");
  const Dag& dag = calc.dag;
  // The grid function each evaluated node reads (plan.nodes is in topological order).
  std::map<NodeId, int> reads;
  auto read_by = [&](NodeId id) {
    auto it = reads.find(id);
    return it == reads.end() ? kNone : it->second; // uniform nodes are not in plan.nodes
  };
  for (NodeId id : plan.nodes) {
    const Node& n = dag.node(id);
    int r = n.op == Op::Load ? n.index : kNone;
    for (NodeId kid : n.kids) {
      const int k = read_by(kid);
      if (k == kNone || k == r) continue;
      r = r == kNone ? k : kSeveral;
    }
    reads[id] = r;
  }

  SumsByInput out;
  std::map<int, InputGroup> groups; // kNone sorts first
  for (NodeId root : plan.roots) {
    if (std::any_of(out.values.begin(), out.values.end(),
                    [root](const auto& v) { return v.first == root; }))
      continue; // stored to two grid functions: one sum
    const Node& n = dag.node(root);
    std::vector<std::pair<NodeId, double>> terms;
    double start = 0.0;
    if (n.op == Op::Add && !n.uniform) {
      start = n.value;
      for (std::size_t k = 0; k < n.kids.size(); ++k) terms.emplace_back(n.kids[k], n.weights[k]);
    } else {
      terms.emplace_back(root, 1.0);
    }
    out.values.emplace_back(root, start);
    std::map<int, PartialSum> parts;
    for (const auto& term : terms) {
      const int g = read_by(term.first);
      if (g == kSeveral) {
        std::string stored = "node " + std::to_string(root);
        for (const Stage& stage : calc.stages)
          for (const Store& st : stage.stores)
            if (st.value == root) stored = calc.grid_functions[std::size_t(st.grid_function)].name;
        return fail("a term of the value stored in " + stored +
                    " reads more than one grid function (a product or function of several)");
      }
      PartialSum& p = parts[g];
      p.value = root;
      p.terms.push_back(term);
    }
    for (auto& [g, p] : parts) {
      groups[g].grid_function = g;
      groups[g].sums.push_back(std::move(p));
    }
  }
  for (auto& [g, group] : groups) out.groups.push_back(std::move(group));
  return out;
}

} // namespace saguaro::calc
