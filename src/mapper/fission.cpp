// Register-fit fission (see fission.hpp).
#include "mapper/fission.hpp"

#include "calc/mapping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace saguaro::mapper {

using calc::NodeId;

int live_value_budget(double max_registers_per_thread) {
  return std::max(8, (int(max_registers_per_thread) - kAddressRegisters) / 2);
}

namespace {

// The values loaded rather than computed (the temporaries extracted so far), by node id.
using Available = std::vector<char>;

// The greedy's questions about the DAG, asked hundreds of thousands of times for BSSN at fd
// order 8 (the DAG's 4,800 nodes): each walk reuses the object's stamps instead of building a
// set, and merge() keeps each group's work and loads while the other groups change.
class Fissioner {
public:
  Fissioner(const calc::Calculation& calc, int stage)
      : calc_(calc), stage_(stage), seen_(calc.dag.size(), 0), root_(calc.dag.size(), 0) {}

  Available none() const { return Available(calc_.dag.size(), 0); }

  // The nodes evaluated for `roots` when those `available` (but the roots themselves) are
  // loaded, ascending (calc::evaluated_nodes); the available ones met go to `loaded`.
  std::vector<NodeId> reach(const std::vector<NodeId>& roots, const Available& available,
                            std::vector<NodeId>* loaded) const {
    const unsigned epoch = next_epoch();
    for (NodeId r : roots) root_[r] = epoch;
    stack_.assign(roots.begin(), roots.end());
    std::vector<NodeId> out;
    if (loaded) loaded->clear();
    while (!stack_.empty()) {
      const NodeId id = stack_.back();
      stack_.pop_back();
      if (seen_[id] == epoch) continue;
      seen_[id] = epoch;
      if (available[id] && root_[id] != epoch) {
        if (loaded) loaded->push_back(id);
        continue;
      }
      out.push_back(id);
      for (NodeId k : calc_.dag.node(id).kids)
        if (seen_[k] != epoch) stack_.push_back(k);
    }
    std::sort(out.begin(), out.end());
    if (loaded) std::sort(loaded->begin(), loaded->end());
    return out;
  }

  // The values alive at once in a kernel storing `roots` when `available` (but the roots
  // themselves) are loaded.
  int live(const std::vector<NodeId>& roots, const Available& available) const {
    calc::KernelPlan plan;
    plan.roots = roots;
    plan.nodes = reach(roots, available, &plan.temporaries_in);
    return calc::max_live_values(calc_.dag, plan);
  }

  // The arithmetic nodes computed for `roots` when `available` (but the roots) are loaded.
  std::vector<NodeId> work(const std::vector<NodeId>& roots, const Available& available) const {
    std::vector<NodeId> out;
    for (NodeId id : reach(roots, available, nullptr))
      if (arithmetic(id)) out.push_back(id);
    return out;
  }

  // work({root}, available).size(), without the list.
  std::size_t work_size(NodeId root, const Available& available) const {
    const unsigned epoch = next_epoch();
    stack_.assign(1, root);
    std::size_t count = 0;
    while (!stack_.empty()) {
      const NodeId id = stack_.back();
      stack_.pop_back();
      if (seen_[id] == epoch) continue;
      seen_[id] = epoch;
      if (available[id] && id != root) continue;
      count += arithmetic(id);
      for (NodeId k : calc_.dag.node(id).kids)
        if (seen_[k] != epoch) stack_.push_back(k);
    }
    return count;
  }

  // The temporaries a kernel storing `roots` loads.
  std::vector<NodeId> loads(const std::vector<NodeId>& roots, const Available& available) const {
    std::vector<NodeId> loaded;
    reach(roots, available, &loaded);
    return loaded;
  }

  NodeId value(int store) const {
    return calc_.stages[std::size_t(stage_)].stores[std::size_t(store)].value;
  }

  // Step 1: temporaries until the store fits, the largest subexpression that fits each time.
  // False when none fits and the store still does not.
  bool extract(int store, int budget, Available& available,
               std::vector<NodeId>& temporaries) const {
    while (live({value(store)}, available) > budget) {
      std::vector<std::pair<std::size_t, NodeId>> candidates; // (work, node), largest first
      for (NodeId id : work({value(store)}, available))
        if (id != value(store)) candidates.push_back({work_size(id, available), id});
      std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      bool found = false;
      for (const auto& [size, id] : candidates) {
        if (size < 2) break; // nothing left worth a kernel
        if (live({id}, available) <= budget) {
          available[id] = 1;
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
  // Each group's work and loads are kept, and the work pairs share: a merge changes one group.
  std::vector<std::vector<NodeId>> merge(std::vector<std::vector<NodeId>> groups, int budget,
                                         const Available& available) const {
    std::vector<std::vector<NodeId>> works, loaded;
    for (const auto& g : groups) {
      works.push_back(work(g, available));
      loaded.push_back(loads(g, available));
    }
    auto shared_work = [&](std::size_t i, std::size_t j) {
      std::size_t n = 0;
      auto a = works[i].begin(), b = works[j].begin();
      while (a != works[i].end() && b != works[j].end()) {
        if (*a < *b)
          ++a;
        else if (*b < *a)
          ++b;
        else
          ++n, ++a, ++b;
      }
      return n;
    };
    std::vector<std::vector<std::size_t>> shared(groups.size(),
                                                 std::vector<std::size_t>(groups.size(), 0));
    for (std::size_t i = 0; i < groups.size(); ++i)
      for (std::size_t j = i + 1; j < groups.size(); ++j) shared[i][j] = shared_work(i, j);
    // Whether the pair's merged kernel fits the budget (-1: not asked yet): it does not change
    // until one of the two groups does.
    std::vector<std::vector<signed char>> fits(groups.size(),
                                               std::vector<signed char>(groups.size(), -1));
    for (;;) {
      // (shared, i, j), but those known not to fit
      std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> pairs;
      for (std::size_t i = 0; i < groups.size(); ++i)
        for (std::size_t j = i + 1; j < groups.size(); ++j)
          if (fits[i][j] != 0) pairs.push_back({shared[i][j], i, j});
      std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : a < b;
      });
      bool merged = false;
      for (const auto& [common, i, j] : pairs) {
        std::vector<NodeId> both = groups[i];
        both.insert(both.end(), groups[j].begin(), groups[j].end());
        if (fits[i][j] < 0) fits[i][j] = live(both, available) <= budget;
        if (!fits[i][j]) continue;
        std::vector<std::vector<NodeId>> trial_loads = loaded;
        trial_loads[i] = loads(both, available);
        trial_loads.erase(trial_loads.begin() + std::ptrdiff_t(j));
        std::vector<std::vector<NodeId>> trial = groups;
        trial[i] = std::move(both);
        trial.erase(trial.begin() + std::ptrdiff_t(j));
        if (launch_order(trial, trial_loads).empty()) continue; // each needing the other's
        groups = std::move(trial);
        loaded = std::move(trial_loads);
        works[i] = work(groups[i], available);
        works.erase(works.begin() + std::ptrdiff_t(j));
        const std::ptrdiff_t gone = std::ptrdiff_t(j); // a structured binding: not capturable
        auto drop_j = [gone](auto& matrix) {
          matrix.erase(matrix.begin() + gone);
          for (auto& row : matrix) row.erase(row.begin() + gone);
        };
        drop_j(shared);
        drop_j(fits);
        for (std::size_t k = 0; k < groups.size(); ++k)
          if (k != i) {
            const std::size_t a = std::min(i, k), b = std::max(i, k);
            shared[a][b] = shared_work(a, b);
            fits[a][b] = -1; // group i changed
          }
        merged = true;
        break;
      }
      if (!merged) return groups;
    }
  }

  // An order the groups' kernels can be launched in (indices into `groups`): none before a
  // kernel whose temporaries it loads (`loaded[i]`: what group i's kernel loads, ascending).
  // Empty when there is none (two kernels each needing the other's), or no groups.
  static std::vector<std::size_t> launch_order(const std::vector<std::vector<NodeId>>& groups,
                                               const std::vector<std::vector<NodeId>>& loaded) {
    const std::size_t n = groups.size();
    std::vector<std::vector<std::size_t>> needs(n); // i needs j: i loads a temporary j stores
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && std::any_of(groups[j].begin(), groups[j].end(), [&](NodeId t) {
              return std::binary_search(loaded[i].begin(), loaded[i].end(), t);
            }))
          needs[i].push_back(j);
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

  std::vector<std::size_t> launch_order(const std::vector<std::vector<NodeId>>& groups,
                                        const Available& available) const {
    std::vector<std::vector<NodeId>> loaded;
    for (const auto& g : groups) loaded.push_back(loads(g, available));
    return launch_order(groups, loaded);
  }

private:
  unsigned next_epoch() const {
    if (++epoch_ == 0) { // wrapped: no stamp may look current
      std::fill(seen_.begin(), seen_.end(), 0u);
      std::fill(root_.begin(), root_.end(), 0u);
      epoch_ = 1;
    }
    return epoch_;
  }
  bool arithmetic(NodeId id) const {
    const calc::Node& n = calc_.dag.node(id);
    return !n.uniform && n.op != calc::Op::Load;
  }

  const calc::Calculation& calc_;
  int stage_;
  // Walk state, reused: a node is seen (a root) in this walk when its stamp is the epoch.
  mutable std::vector<unsigned> seen_, root_;
  mutable std::vector<NodeId> stack_;
  mutable unsigned epoch_ = 0;
};

// Step 1 for every store of a stage: the temporaries extracted and whether every store fits.
// The same for every merge budget, so register_fit_candidates extracts once per budget.
struct Extraction {
  Available available;
  std::vector<NodeId> temporaries;
  bool fits = true;
};

Extraction extract_stage(const Fissioner& f, const calc::Stage& s, int budget) {
  Extraction e{f.none(), {}, true};
  for (int st = 0; st < int(s.stores.size()); ++st)
    e.fits = f.extract(st, budget, e.available, e.temporaries) && e.fits;
  return e;
}

// Steps 2 and 3 after an extraction.
Fission merge_stage(const Fissioner& f, const calc::Stage& s, const Extraction& e,
                    int merge_budget) {
  Fission out;
  out.fits = e.fits;
  const Available& available = e.available;
  // Temporaries' kernels, merged while they fit, each launched after those whose temporaries
  // it loads; stores' kernels merged while they fit, with every temporary available.
  std::vector<std::vector<NodeId>> temporary_groups;
  for (NodeId t : e.temporaries) temporary_groups.push_back({t});
  temporary_groups = f.merge(temporary_groups, merge_budget, available);
  std::vector<std::vector<NodeId>> store_groups;
  for (int st = 0; st < int(s.stores.size()); ++st) store_groups.push_back({f.value(st)});
  store_groups = f.merge(store_groups, merge_budget, available);

  // A temporary merged into the kernel of one that uses it is computed there and loaded by no
  // one: it stays a value of that kernel, not a stored array.
  std::set<NodeId> loaded_somewhere;
  for (const auto* groups : {&temporary_groups, &store_groups})
    for (const auto& g : *groups)
      for (NodeId t : f.loads(g, available)) loaded_somewhere.insert(t);
  Available stored = f.none();
  for (std::size_t i : f.launch_order(temporary_groups, available)) {
    FissionKernel k;
    for (NodeId t : temporary_groups[i])
      if (loaded_somewhere.count(t)) k.temporaries.push_back(t);
    if (k.temporaries.empty()) continue;
    std::sort(k.temporaries.begin(), k.temporaries.end());
    for (NodeId t : k.temporaries) stored[t] = 1;
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

// Recomputation against storing: the values `fission`'s kernels compute more than once (a
// derivative of the metric that three kernels need, say), each stored once as a temporary by an
// earlier kernel and loaded by the others when that saves at least `min_saved` arithmetic
// operations per point (its arithmetic times the kernels beyond the first). Largest saving first,
// again and again (storing a value changes what its parts save), at most kMaxShared values.
// Returns `e` with the values added as temporaries.
constexpr int kMaxShared = 32;

Extraction share_values(const Fissioner& f, const calc::Stage& s, const Fission& fission,
                        const Extraction& e, int min_saved) {
  Extraction out = e;
  std::vector<std::vector<NodeId>> roots;
  for (const FissionKernel& k : fission.kernels) {
    std::vector<NodeId> r = k.temporaries;
    for (int st : k.stores) r.push_back(s.stores[std::size_t(st)].value);
    roots.push_back(std::move(r));
  }
  for (int added = 0; added < kMaxShared; ++added) {
    std::map<NodeId, int> kernels; // arithmetic node -> kernels computing it
    for (const auto& r : roots)
      for (NodeId id : f.work(r, out.available)) ++kernels[id];
    NodeId best = 0;
    std::size_t best_saved = 0;
    for (const auto& [id, n] : kernels) {
      if (n < 2) continue;
      const std::size_t saved = std::size_t(n - 1) * f.work_size(id, out.available);
      if (saved > best_saved) best = id, best_saved = saved;
    }
    if (best_saved == 0 || best_saved < std::size_t(min_saved)) break;
    out.available[best] = 1;
    out.temporaries.push_back(best);
  }
  return out;
}

// Every stage's fission as a mapping (register_fit_mapping), the stages' extractions at
// `budget` kept in `extractions` for the next budget pair with the same one; with `share` > 0
// the values computed twice that save at least `share` operations stored once (share_values).
calc::Mapping fission_mapping(const calc::Calculation& calc, int budget, int merge_budget,
                              std::map<std::pair<int, int>, Extraction>& extractions,
                              int share = 0) {
  if (merge_budget <= 0) merge_budget = budget;
  const calc::Mapping plain = calc::default_mapping(calc);
  calc::Mapping out;
  for (int stage = 0; stage < int(calc.stages.size()); ++stage) {
    const calc::Stage& s = calc.stages[std::size_t(stage)];
    const Fissioner f(calc, stage);
    auto [at, fresh] = extractions.try_emplace({stage, budget});
    if (fresh) at->second = extract_stage(f, s, budget);
    Fission fission = merge_stage(f, s, at->second, merge_budget);
    if (share > 0)
      fission = merge_stage(f, s, share_values(f, s, fission, at->second, share), merge_budget);
    for (const FissionKernel& k : fission.kernels) {
      calc::KernelMapping km = plain.kernels.at(std::size_t(stage));
      km.stores = k.stores;
      km.temporaries = k.temporaries;
      km.buffering.clear();
      out.kernels.push_back(std::move(km));
    }
  }
  return out;
}

} // namespace

Fission register_fit_fission(const calc::Calculation& calc, int stage, int budget,
                             int merge_budget) {
  if (merge_budget <= 0) merge_budget = budget;
  const calc::Stage& s = calc.stages.at(std::size_t(stage));
  const Fissioner f(calc, stage);
  return merge_stage(f, s, extract_stage(f, s, budget), merge_budget);
}

calc::Mapping register_fit_mapping(const calc::Calculation& calc, int budget, int merge_budget,
                                   int share) {
  std::map<std::pair<int, int>, Extraction> extractions;
  return fission_mapping(calc, budget, merge_budget, extractions, share);
}

bool too_many_temporaries(const calc::Calculation& calc, const calc::Mapping& mapping) {
  std::size_t stores = 0, temporaries = 0;
  for (const calc::Stage& s : calc.stages) stores += s.stores.size();
  for (const calc::KernelMapping& k : mapping.kernels) temporaries += k.temporaries.size();
  return temporaries > stores;
}

std::vector<FissionCandidate> register_fit_candidates(const calc::Calculation& calc,
                                                      double max_registers_per_thread,
                                                      const std::vector<FissionBudget>& budgets) {
  const double full = live_value_budget(max_registers_per_thread);
  std::vector<FissionCandidate> out;
  std::map<std::pair<int, int>, Extraction> extractions; // (stage, budget): pairs share one
  for (const FissionBudget& fraction : budgets) {
    const int budget = int(std::lround(fraction.extract * full));
    const int merge = int(std::lround(fraction.merge * full));
    calc::Mapping m = fission_mapping(calc, budget, merge, extractions, fraction.share);
    auto same = [&](const FissionCandidate& f) { return f.mapping == m; };
    if (m.kernels.size() <= calc.stages.size() || std::any_of(out.begin(), out.end(), same) ||
        too_many_temporaries(calc, m))
      continue;
    std::string origin =
        merge == budget
            ? fmt::format("register-fit fission ({} live values", budget)
            : fmt::format("register-fit fission ({} live values, merged to {}", budget, merge);
    if (fraction.share > 0)
      origin += fmt::format(", values computed twice stored if they save {}", fraction.share);
    out.push_back({std::move(m), origin + ")"});
  }
  return out;
}

} // namespace saguaro::mapper
