// Register-fit fission (see fission.hpp).
#include "mapper/fission.hpp"

#include "calc/mapping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace saguaro::mapper {

using calc::NodeId;

int live_value_budget(double max_registers_per_thread) {
  return std::max(8, (int(max_registers_per_thread) - kAddressRegisters) / 2);
}

namespace {

class Fissioner {
public:
  Fissioner(const calc::Calculation& calc, int stage) : calc_(calc), stage_(stage) {}

  // The values alive at once in a kernel storing `roots` when `available` (but the roots
  // themselves) are loaded.
  int live(const std::vector<NodeId>& roots, std::set<NodeId> available) const {
    for (NodeId r : roots) available.erase(r);
    calc::KernelPlan plan;
    plan.roots = roots;
    plan.nodes = calc::evaluated_nodes(calc_.dag, roots, available, plan.temporaries_in);
    return calc::max_live_values(calc_.dag, plan);
  }

  // The arithmetic nodes computed for `roots` when `available` (but the roots) are loaded.
  std::vector<NodeId> work(const std::vector<NodeId>& roots, std::set<NodeId> available) const {
    for (NodeId r : roots) available.erase(r);
    std::vector<NodeId> loaded, out;
    for (NodeId id : calc::evaluated_nodes(calc_.dag, roots, available, loaded)) {
      const calc::Node& n = calc_.dag.node(id);
      if (!n.uniform && n.op != calc::Op::Load) out.push_back(id);
    }
    return out;
  }

  NodeId value(int store) const {
    return calc_.stages[std::size_t(stage_)].stores[std::size_t(store)].value;
  }

  // Step 1: temporaries until the store fits, the largest subexpression that fits each time.
  // False when none fits and the store still does not.
  bool extract(int store, int budget, std::set<NodeId>& available,
               std::vector<NodeId>& temporaries) const {
    while (live({value(store)}, available) > budget) {
      std::vector<std::pair<std::size_t, NodeId>> candidates; // (work, node), largest first
      for (NodeId id : work({value(store)}, available))
        if (id != value(store)) candidates.push_back({work({id}, available).size(), id});
      std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      bool found = false;
      for (const auto& [size, id] : candidates) {
        if (size < 2) break; // nothing left worth a kernel
        if (live({id}, available) <= budget) {
          available.insert(id);
          temporaries.push_back(id);
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  }

  // Steps 2 and 3: groups of roots merged while they fit, those sharing the most work first.
  std::vector<std::vector<NodeId>> merge(std::vector<std::vector<NodeId>> groups, int budget,
                                         const std::set<NodeId>& available) const {
    for (;;) {
      std::vector<std::vector<NodeId>> works;
      for (const auto& g : groups) works.push_back(work(g, available));
      std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> pairs; // (shared, i, j)
      for (std::size_t i = 0; i < groups.size(); ++i)
        for (std::size_t j = i + 1; j < groups.size(); ++j) {
          std::vector<NodeId> both;
          std::set_intersection(works[i].begin(), works[i].end(), works[j].begin(), works[j].end(),
                                std::back_inserter(both));
          pairs.push_back({both.size(), i, j});
        }
      std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : a < b;
      });
      bool merged = false;
      for (const auto& [shared, i, j] : pairs) {
        std::vector<NodeId> both = groups[i];
        both.insert(both.end(), groups[j].begin(), groups[j].end());
        if (live(both, available) > budget) continue;
        std::vector<std::vector<NodeId>> trial = groups;
        trial[i] = std::move(both);
        trial.erase(trial.begin() + std::ptrdiff_t(j));
        if (launch_order(trial, available).empty()) continue; // each needing the other's
        groups = std::move(trial);
        merged = true;
        break;
      }
      if (!merged) return groups;
    }
  }

  // An order the groups' kernels can be launched in (indices into `groups`): none before a
  // kernel whose temporaries it loads. Empty when there is none (two kernels each needing the
  // other's), or no groups.
  std::vector<std::size_t> launch_order(const std::vector<std::vector<NodeId>>& groups,
                                        const std::set<NodeId>& available) const {
    const std::size_t n = groups.size();
    std::vector<std::vector<std::size_t>> needs(n); // i needs j: i loads a temporary j stores
    for (std::size_t i = 0; i < n; ++i) {
      std::set<NodeId> others = available;
      for (NodeId r : groups[i]) others.erase(r);
      std::vector<NodeId> loaded;
      calc::evaluated_nodes(calc_.dag, groups[i], others, loaded);
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && std::any_of(groups[j].begin(), groups[j].end(), [&](NodeId t) {
              return std::binary_search(loaded.begin(), loaded.end(), t);
            }))
          needs[i].push_back(j);
    }
    std::vector<char> placed(n, 0); // repeated removal, earliest first: n is small
    std::vector<std::size_t> order;
    while (order.size() < n) {
      std::size_t next = n;
      for (std::size_t i = 0; i < n && next == n; ++i)
        if (!placed[i] && std::all_of(needs[i].begin(), needs[i].end(),
                                      [&](std::size_t j) { return placed[j] != 0; }))
          next = i;
      if (next == n) return {};
      placed[next] = 1;
      order.push_back(next);
    }
    return order;
  }

private:
  const calc::Calculation& calc_;
  int stage_;
};

} // namespace

Fission register_fit_fission(const calc::Calculation& calc, int stage, int budget,
                             int merge_budget) {
  if (merge_budget <= 0) merge_budget = budget;
  const calc::Stage& s = calc.stages.at(std::size_t(stage));
  const Fissioner f(calc, stage);
  Fission out;
  std::set<NodeId> available;
  std::vector<NodeId> temporaries;
  for (int st = 0; st < int(s.stores.size()); ++st)
    out.fits = f.extract(st, budget, available, temporaries) && out.fits;

  // Temporaries' kernels, merged while they fit, each launched after those whose temporaries
  // it loads; stores' kernels merged while they fit, with every temporary available.
  std::vector<std::vector<NodeId>> temporary_groups;
  for (NodeId t : temporaries) temporary_groups.push_back({t});
  temporary_groups = f.merge(temporary_groups, merge_budget, available);
  std::vector<std::vector<NodeId>> store_groups;
  for (int st = 0; st < int(s.stores.size()); ++st) store_groups.push_back({f.value(st)});
  store_groups = f.merge(store_groups, merge_budget, available);

  // A temporary merged into the kernel of one that uses it is computed there and loaded by no
  // one: it stays a value of that kernel, not a stored array.
  std::set<NodeId> loaded_somewhere;
  auto note_loads = [&](const std::vector<NodeId>& roots) {
    std::set<NodeId> others = available;
    for (NodeId r : roots) others.erase(r);
    std::vector<NodeId> loaded;
    calc::evaluated_nodes(calc.dag, roots, others, loaded);
    loaded_somewhere.insert(loaded.begin(), loaded.end());
  };
  for (const auto& g : temporary_groups) note_loads(g);
  for (const auto& g : store_groups) note_loads(g);
  std::set<NodeId> stored;
  for (std::size_t i : f.launch_order(temporary_groups, available)) {
    FissionKernel k;
    for (NodeId t : temporary_groups[i])
      if (loaded_somewhere.count(t)) k.temporaries.push_back(t);
    if (k.temporaries.empty()) continue;
    std::sort(k.temporaries.begin(), k.temporaries.end());
    stored.insert(k.temporaries.begin(), k.temporaries.end());
    out.kernels.push_back(std::move(k));
  }
  for (FissionKernel& k : out.kernels) k.live_values = f.live(k.temporaries, stored);

  for (const auto& g : store_groups) {
    FissionKernel k;
    for (int st = 0; st < int(s.stores.size()); ++st)
      if (std::find(g.begin(), g.end(), f.value(st)) != g.end()) k.stores.push_back(st);
    k.live_values = f.live(g, stored);
    out.kernels.push_back(std::move(k));
  }
  for (const FissionKernel& k : out.kernels) out.fits = out.fits && k.live_values <= merge_budget;
  return out;
}

calc::Mapping register_fit_mapping(const calc::Calculation& calc, int budget, int merge_budget) {
  const calc::Mapping plain = calc::default_mapping(calc);
  calc::Mapping out;
  for (int stage = 0; stage < int(calc.stages.size()); ++stage)
    for (const FissionKernel& k : register_fit_fission(calc, stage, budget, merge_budget).kernels) {
      calc::KernelMapping km = plain.kernels.at(std::size_t(stage));
      km.stores = k.stores;
      km.temporaries = k.temporaries;
      km.buffering.clear();
      out.kernels.push_back(std::move(km));
    }
  return out;
}

bool too_many_temporaries(const calc::Calculation& calc, const calc::Mapping& mapping) {
  std::size_t stores = 0, temporaries = 0;
  for (const calc::Stage& s : calc.stages) stores += s.stores.size();
  for (const calc::KernelMapping& k : mapping.kernels) temporaries += k.temporaries.size();
  return temporaries > stores;
}

std::vector<FissionCandidate> register_fit_candidates(const calc::Calculation& calc,
                                                      double max_registers_per_thread) {
  const double full = live_value_budget(max_registers_per_thread);
  std::vector<FissionCandidate> out;
  for (const FissionBudget& fraction : kFissionBudgets) {
    const int budget = int(std::lround(fraction.extract * full));
    const int merge = int(std::lround(fraction.merge * full));
    calc::Mapping m = register_fit_mapping(calc, budget, merge);
    auto same = [&](const FissionCandidate& f) { return f.mapping == m; };
    if (m.kernels.size() <= calc.stages.size() || std::any_of(out.begin(), out.end(), same) ||
        too_many_temporaries(calc, m))
      continue;
    out.push_back(
        {std::move(m),
         merge == budget
             ? fmt::format("register-fit fission ({} live values)", budget)
             : fmt::format("register-fit fission ({} live values, merged to {})", budget, merge)});
  }
  return out;
}

} // namespace saguaro::mapper
