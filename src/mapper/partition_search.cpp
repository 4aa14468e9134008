// The partition search's bookkeeping (partition_search.hpp): each kernel's plan and its price
// at a level, memoised; a partition's kernel order and its price; the whole mapping assembled
// from one partition per stage. Apart from the strategies (partition_strategies.cpp), which
// propose partitions and ask these what they cost.
#include "mapper/partition_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace saguaro::mapper::detail {

// The plan of kernel `k` when `available` temporaries are stored by other kernels: memoised,
// because normalise and price_kernel plan the same kernels over and over (the same
// MappingError when it has none).
// A temporary the kernel's values do not depend on changes nothing in its plan, so the key
// holds only those of `available` in the cone of its roots: a move of a temporary then
// leaves the plans of the kernels it does not concern where they were (planning was a
// third of the search's time before).
const calc::KernelPlan& Search::plan(int stage, const PartKernel& k,
                                     const std::set<NodeId>& available) {
  std::vector<NodeId> relevant;
  if (!available.empty()) {
    const auto& stores = calc_.stages[std::size_t(stage)].stores;
    std::set<NodeId> cone_temporaries;
    for (int st : k.stores)
      if (st >= 0 && st < int(stores.size())) {
        const std::vector<NodeId>& r = reached(stores[std::size_t(st)].value, available);
        cone_temporaries.insert(r.begin(), r.end());
      }
    for (NodeId t : k.temporaries) {
      const std::vector<NodeId>& r = reached(t, available);
      cone_temporaries.insert(r.begin(), r.end());
    }
    for (NodeId t : available)
      if (cone_temporaries.count(t)) relevant.push_back(t);
  }
  auto key = std::make_tuple(stage, k.stores, k.temporaries, relevant);
  auto [it, fresh] = plans_.try_emplace(std::move(key));
  PlanEntry& e = it->second;
  if (fresh) {
    calc::KernelMapping km;
    km.stage = stage;
    km.stores = k.stores;
    km.temporaries = k.temporaries;
    try {
      e.plan = calc::plan_kernel(calc_, km, std::set<NodeId>(relevant.begin(), relevant.end()));
      stats.nodes_planned += long(e.plan.nodes.size());
      e.ok = true;
    } catch (const calc::MappingError& x) {
      e.error = x.what();
    }
  }
  if (!e.ok) throw calc::MappingError(e.error);
  return e.plan;
}

// The nodes of `among` in the cone of `root` (itself excluded), for plan's key: memoised
// per root for the candidate temporaries, which is what `among` always holds.
const std::vector<NodeId>& Search::reached(NodeId root, const std::set<NodeId>& among) {
  auto [it, fresh] = reach_.try_emplace(root);
  std::vector<NodeId>& out = it->second.second;
  std::set<NodeId>& known = it->second.first; // the nodes `out` was computed for
  bool covered = !fresh;
  for (NodeId t : among) covered = covered && known.count(t);
  if (covered) return out;
  known.insert(among.begin(), among.end());
  out.clear();
  const calc::Dag& dag = calc_.dag;
  std::vector<char> seen(dag.size(), 0);
  std::vector<NodeId> stack(dag.node(root).kids.begin(), dag.node(root).kids.end());
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    if (known.count(id)) out.push_back(id);
    for (NodeId kid : dag.node(id).kids) stack.push_back(kid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The kernel `k` with `available` temporaries of earlier kernels, priced at `level`:
// memoised block search. May throw calc::MappingError (no plan).
const KernelPrice& Search::price_kernel(int stage, const PartKernel& k,
                                        const std::set<NodeId>& available, Level level) {
  const calc::KernelPlan& kp = plan(stage, k, available);
  if (coarse.empty() || options_.method == Method::Exhaustive) level = Level::Full;
  auto key = std::make_tuple(int(level), stage, k.stores, k.temporaries, kp.temporaries_in);
  auto [it, fresh] = memo_.try_emplace(std::move(key));
  if (!fresh) return it->second;
  KernelPrice& price = it->second;
  calc::KernelMapping km;
  km.stage = stage;
  km.stores = k.stores;
  km.temporaries = k.temporaries;
  model::KernelProfile profile = model::profile_kernel(calc_, km, kp);
  BlockSearchOptions bo;
  bo.extent = kernel_extent(profile, options_.grid);
  bo.combination = options_.combination;
  bo.strategies = options_.strategies;
  bo.keep = std::max(1, options_.runners_up);
  bo.method = AssignmentMethod::Efficiency;
  switch (level) {
  case Level::Screen:
    bo.only = screen.empty() ? coarse : screen;
    bo.method = AssignmentMethod::Unbuffered;
    bo.prune = false; // the bound costs a model call too
    bo.keep = 1;
    break;
  case Level::Coarse:
    bo.only = coarse;
    bo.keep = 1; // the best decides; keeping one lets the lower bound prune
    break;
  case Level::Full:
    if (options_.method == Method::Exhaustive) {
      bo.prune = false;
      if (exhaustive_size(profile, options_.strategies) <= options_.max_exhaustive_assignments)
        bo.method = AssignmentMethod::Exhaustive;
    }
    break;
  }
  BlockSearchResult r = search_blocks(profile, device_, bo);
  ++stats.kernels_priced;
  stats.model_calls += r.model_calls;
  stats.configurations += r.configurations;
  stats.pruned += r.pruned;
  if (r.best.empty()) {
    price.valid = false;
    price.why = fmt::format("no block configuration fits kernel {} of calculation '{}' on {}",
                            profile.description, calc_.name, device_.name);
    return price;
  }
  price.valid = true;
  price.profile = apply(profile, r.best.front());
  price.candidates = std::move(r.best);
  return price;
}

// Orders `p` so that producers of temporaries come before their consumers and readers of a
// grid function before the kernel that writes it, and removes temporaries no later kernel
// loads and kernels that then do nothing. False when no order exists or a kernel breaks a
// rule of its own (plan_kernel).
bool Search::normalise(int stage, Partition& p) {
  for (int round = 0; round < 64; ++round) {
    p.erase(std::remove_if(
                p.begin(), p.end(),
                [](const PartKernel& k) { return k.stores.empty() && k.temporaries.empty(); }),
            p.end());
    const std::size_t n = p.size();
    std::map<NodeId, std::size_t> producer;
    for (std::size_t i = 0; i < n; ++i)
      for (NodeId t : p[i].temporaries)
        if (!producer.emplace(t, i).second) return false; // stored twice
    std::vector<std::set<int>> reads(n), writes(n);
    std::vector<std::set<std::size_t>> after(n); // after[i]: kernels that must follow i
    std::set<NodeId> loaded;
    for (std::size_t i = 0; i < n; ++i) {
      std::set<NodeId> available;
      for (const auto& [t, j] : producer)
        if (j != i) available.insert(t);
      const calc::KernelPlan* kp;
      try {
        kp = &plan(stage, p[i], available);
      } catch (const calc::MappingError&) {
        return false;
      }
      for (NodeId t : kp->temporaries_in) {
        after[producer.at(t)].insert(i);
        loaded.insert(t);
      }
      for (const calc::InputStencil& in : kp->inputs) reads[i].insert(in.grid_function);
      for (int g : kp->outputs) writes[i].insert(g);
    }
    // Dead temporaries: drop and start over (what the others load may change).
    bool dropped = false;
    for (PartKernel& k : p) {
      auto dead = [&](NodeId t) { return !loaded.count(t); };
      const auto before = k.temporaries.size();
      k.temporaries.erase(std::remove_if(k.temporaries.begin(), k.temporaries.end(), dead),
                          k.temporaries.end());
      dropped |= k.temporaries.size() != before;
    }
    if (dropped) continue;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j)
          for (int g : reads[i])
            if (writes[j].count(g)) after[i].insert(j);
    // Kahn's algorithm, keeping the current order where it is free to.
    std::vector<int> indegree(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j : after[i]) ++indegree[j];
    std::vector<bool> placed(n, false);
    Partition ordered;
    for (std::size_t step = 0; step < n; ++step) {
      std::size_t next = n;
      for (std::size_t i = 0; i < n && next == n; ++i)
        if (!placed[i] && indegree[i] == 0) next = i;
      if (next == n) return false; // a cycle
      placed[next] = true;
      for (std::size_t j : after[next]) --indegree[j];
      ordered.push_back(p[next]);
    }
    p = std::move(ordered);
    return true;
  }
  return false;
}

// The predicted seconds of a normalised stage partition at `level` (kInf when a kernel fits
// nowhere).
double Search::price_stage(int stage, const Partition& p, Level level) {
  if (level != Level::Screen) ++stats.partitions;
  double total = 0;
  std::set<NodeId> available;
  for (const PartKernel& k : p) {
    const KernelPrice* price;
    try {
      price = &price_kernel(stage, k, available, level);
    } catch (const calc::MappingError&) {
      return kInf;
    }
    if (!price->valid) return kInf;
    total += price->candidates.front().seconds;
    for (NodeId t : k.temporaries) available.insert(t);
  }
  return total;
}

// A whole mapping from one partition per stage, each kernel at its best (or `variant`-th
// best) candidate.
PricedMapping Search::assemble(const std::vector<Partition>& stages, std::string origin,
                               std::size_t vary_kernel, std::size_t variant) {
  PricedMapping out;
  out.origin = std::move(origin);
  std::size_t index = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::set<NodeId> available;
    for (const PartKernel& k : stages[s]) {
      const KernelPrice& price = price_kernel(int(s), k, available);
      const std::size_t pick = index == vary_kernel ? variant : 0;
      const KernelCandidate& c = price.candidates.at(pick);
      calc::KernelMapping km;
      km.stage = int(s);
      km.stores = k.stores;
      km.temporaries = k.temporaries;
      apply(km, price.profile, c);
      PricedKernel pk;
      pk.profile = apply(price.profile, c);
      pk.prediction = c.prediction;
      pk.seconds = c.seconds;
      out.seconds += c.seconds;
      out.mapping.kernels.push_back(std::move(km));
      out.kernels.push_back(std::move(pk));
      for (NodeId t : k.temporaries) available.insert(t);
      ++index;
    }
  }
  calc::plan_kernels(calc_, out.mapping); // the assembled mapping must hold as a whole
  return out;
}

std::size_t Search::candidates_of(const std::vector<Partition>& stages, std::size_t kernel) {
  std::size_t index = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::set<NodeId> available;
    for (const PartKernel& k : stages[s]) {
      if (index++ == kernel) return price_kernel(int(s), k, available).candidates.size();
      for (NodeId t : k.temporaries) available.insert(t);
    }
  }
  return 0;
}

} // namespace saguaro::mapper::detail
