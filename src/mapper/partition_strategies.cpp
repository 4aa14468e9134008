// The partition search's strategies (partition_search.hpp): the shared DAG nodes a stage may
// store as temporaries, Chemora's move proposals (steepest descent from a starting partition)
// and Fousek's covers (candidate kernel groups priced, the best partitions by ILP, cover.hpp).
// Apart from the bookkeeping (partition_search.cpp): these propose partitions; what a kernel
// or a partition costs, and in which order its kernels run, is asked of it.
#include "mapper/partition_search.hpp"
#include "mapper/cover.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace saguaro::mapper::detail {

namespace {

// The nodes `root`'s value is computed from, itself included.
std::vector<NodeId> cone(const calc::Dag& dag, NodeId root) {
  std::vector<NodeId> none;
  return calc::evaluated_nodes(dag, {root}, {}, none);
}

} // namespace

// Shared non-uniform DAG nodes of a stage worth storing as temporaries: reached from two or
// more stores, not loads, ranked by how much arithmetic sharing them saves.
std::vector<NodeId> Search::temporary_candidates(int stage) const {
  const calc::Dag& dag = calc_.dag;
  const auto& stores = calc_.stages[std::size_t(stage)].stores;
  std::vector<int> users(dag.size(), 0);
  for (const calc::Store& st : stores) {
    std::vector<char> seen(dag.size(), 0);
    std::vector<NodeId> stack{st.value};
    while (!stack.empty()) {
      NodeId id = stack.back();
      stack.pop_back();
      if (seen[id]) continue;
      seen[id] = 1;
      ++users[id];
      for (NodeId k : dag.node(id).kids) stack.push_back(k);
    }
  }
  std::vector<std::pair<double, NodeId>> ranked;
  for (NodeId id = 0; id < dag.size(); ++id) {
    const calc::Node& n = dag.node(id);
    if (users[id] < 2 || n.uniform || n.op == calc::Op::Load || n.op == calc::Op::Constant)
      continue;
    // Its cone: the arithmetic a temporary saves (users - 1) times.
    const calc::FlopCounts f = calc::count_flops(dag, cone(dag, id));
    if (f.total() < 3) continue;
    ranked.push_back({double(users[id] - 1) * double(f.total()), id});
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<NodeId> out;
  for (const auto& [score, id] : ranked) {
    if (int(out.size()) >= options_.max_temporary_candidates) break;
    out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The screen price of kernel `k` of a partition whose kernels store `stored` temporaries
// (those of the others are available to it); 0 for an empty kernel, kInf for one that has
// no plan or fits nowhere.
double Search::screen_price(int stage, const PartKernel& k, const std::set<NodeId>& stored) {
  if (k.stores.empty() && k.temporaries.empty()) return 0;
  std::set<NodeId> available = stored;
  for (NodeId t : k.temporaries) available.erase(t);
  try {
    const KernelPrice& p = price_kernel(stage, k, available, Level::Screen);
    return p.valid ? p.candidates.front().seconds : kInf;
  } catch (const calc::MappingError&) {
    return kInf;
  }
}

// One move proposal: `start` with some kernels replaced (an empty one is dropped) and one
// inserted; or, when temporaries move, a whole partition (already normalised).
struct Search::Proposal {
  std::vector<std::pair<std::size_t, PartKernel>> replace;
  std::optional<std::pair<std::size_t, PartKernel>> insert; // before this index of start
  Partition whole;
};

Partition Search::materialise(const Partition& start, const Proposal& p) {
  if (!p.whole.empty()) return p.whole;
  Partition q = start;
  for (const auto& [i, k] : p.replace) q[i] = k;
  if (p.insert) q.insert(q.begin() + long(p.insert->first), p.insert->second);
  return q; // normalise drops the empty kernels
}

// Chemora's move proposals from `start`, steepest descent as far as the budget allows: every
// proposal of a step is screened (Level::Screen), the move_candidates best-screened are
// priced coarse, and the one that lowers the total most is accepted, until none does.
// Pricing every proposal coarse cost BSSN's RHS 2 s for one step from 25 one-store
// kernels (about 1100 proposals, 500 new kernels, each Algorithm 1 at 11 configurations).
// A proposal that moves or merges stores changes one or two kernels and no temporary, so
// its screen is the start's less the kernels it replaces plus the ones it makes, and it
// is built and normalised (ordered, checked) only if it ranks among the best.
std::pair<Partition, double> Search::improve(int stage, Partition start,
                                             const std::vector<NodeId>& temporaries) {
  if (!normalise(stage, start)) return {start, kInf};
  double now = price_stage(stage, start);
  for (int step = 0; step < options_.max_moves && !stop(); ++step) {
    std::vector<Proposal> proposals;
    const std::size_t n = start.size();
    std::set<NodeId> stored;
    for (const PartKernel& k : start) stored.insert(k.temporaries.begin(), k.temporaries.end());
    std::vector<double> base(n); // each kernel's screen in `start`
    double base_total = 0;
    for (std::size_t a = 0; a < n && !stop(); ++a)
      base_total += base[a] = screen_price(stage, start[a], stored);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t s = 0; s < start[a].stores.size(); ++s) {
        const int store = start[a].stores[s];
        PartKernel without = start[a];
        without.stores.erase(without.stores.begin() + long(s));
        for (std::size_t b = 0; b <= n; ++b) { // b == n: a kernel of its own
          if (b == a || (b == n && start[a].stores.size() == 1 && start[a].temporaries.empty()))
            continue;
          Proposal q;
          q.replace.push_back({a, without});
          if (b == n) {
            q.insert = {{a + 1, PartKernel{{store}, {}}}};
          } else {
            PartKernel with = start[b];
            with.stores.insert(std::upper_bound(with.stores.begin(), with.stores.end(), store),
                               store);
            q.replace.push_back({b, std::move(with)});
          }
          proposals.push_back(std::move(q));
        }
      }
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) { // merge b into a
        PartKernel merged = start[a];
        for (int s : start[b].stores) merged.stores.push_back(s);
        for (NodeId t : start[b].temporaries) merged.temporaries.push_back(t);
        std::sort(merged.stores.begin(), merged.stores.end());
        std::sort(merged.temporaries.begin(), merged.temporaries.end());
        Proposal q;
        q.replace.push_back({a, std::move(merged)});
        q.replace.push_back({b, PartKernel{}});
        proposals.push_back(std::move(q));
      }
    for (NodeId t : temporaries) {
      if (stored.count(t)) { // copy: every kernel that needs it recomputes it
        Partition q = start;
        for (PartKernel& k : q) std::erase(k.temporaries, t);
        proposals.push_back({{}, {}, std::move(q)});
        continue;
      }
      // move: a kernel of its own before the others stores it; or each existing kernel does
      Partition q = start;
      q.insert(q.begin(), PartKernel{{}, {t}});
      proposals.push_back({{}, {}, std::move(q)});
      for (std::size_t a = 0; a < n; ++a) {
        Partition r = start;
        r[a].temporaries.push_back(t);
        std::sort(r[a].temporaries.begin(), r[a].temporaries.end());
        proposals.push_back({{}, {}, std::move(r)});
      }
    }
    // The screen: one model call per configuration of each new kernel.
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t i = 0; i < proposals.size() && !stop(); ++i) {
      Proposal& q = proposals[i];
      double t = 0;
      if (q.whole.empty()) {
        t = base_total;
        for (const auto& [a, k] : q.replace) t += screen_price(stage, k, stored) - base[a];
        if (q.insert) t += screen_price(stage, q.insert->second, stored);
      } else {
        if (!normalise(stage, q.whole)) continue; // correctness cannot be restored
        std::set<NodeId> its;
        for (const PartKernel& k : q.whole) its.insert(k.temporaries.begin(), k.temporaries.end());
        for (const PartKernel& k : q.whole) t += screen_price(stage, k, its);
      }
      if (std::isfinite(t)) ranked.push_back({t, i});
    }
    if (stop()) break; // a step half screened is no step
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    // The best-screened proposals that hold (normalise), priced coarse.
    double best = now;
    Partition chosen;
    int priced = 0;
    for (const auto& [screened, i] : ranked) {
      if (priced >= std::max(1, options_.move_candidates) || stop()) break;
      Partition q = materialise(start, proposals[i]);
      if (!normalise(stage, q)) continue; // correctness cannot be restored
      ++priced;
      const double t = price_stage(stage, q);
      if (t < best * (1 - 1e-9)) {
        best = t;
        chosen = std::move(q);
      }
    }
    if (chosen.empty()) break;
    start = std::move(chosen);
    now = best;
    ++stats.moves_accepted;
  }
  return {start, now};
}

// Fousek's covers of one stage: the epsilon best partitions by ILP.
std::vector<std::pair<Partition, double>> Search::covers(int stage,
                                                         const std::vector<NodeId>& temporaries) {
  if (stop()) return {};
  const auto& stores = calc_.stages[std::size_t(stage)].stores;
  const int ns = int(stores.size()), nt = int(temporaries.size()), n = ns + nt;
  // Vertex v < ns: store v; else temporary temporaries[v - ns]. What each vertex's value
  // needs, stopping at other candidate temporaries; and what it loads.
  const calc::Dag& dag = calc_.dag;
  const std::set<NodeId> cut(temporaries.begin(), temporaries.end());
  CoverGraph data;  // u -> v: v uses u's value
  CoverGraph order; // data edges plus reader -> writer of a grid function
  data.vertices = order.vertices = n;
  const std::size_t count = std::size_t(n);
  std::vector<std::set<int>> reads(count);
  std::vector<std::set<NodeId>> uses(count); // candidate temporaries it reaches
  for (int v = 0; v < n; ++v) {
    const NodeId root = v < ns ? stores[std::size_t(v)].value : temporaries[std::size_t(v - ns)];
    std::vector<NodeId> met;
    const std::vector<NodeId> kids(dag.node(root).kids.begin(), dag.node(root).kids.end());
    for (NodeId id : calc::evaluated_nodes(dag, kids, cut, met))
      if (dag.node(id).op == calc::Op::Load) reads[std::size_t(v)].insert(dag.node(id).index);
    uses[std::size_t(v)].insert(met.begin(), met.end());
    for (NodeId t : uses[std::size_t(v)]) {
      const int u =
          ns + int(std::find(temporaries.begin(), temporaries.end(), t) - temporaries.begin());
      data.edges.push_back({u, v});
    }
  }
  order.edges = data.edges;
  for (int r = 0; r < n; ++r)
    for (int w = 0; w < ns; ++w)
      if (r != w && reads[std::size_t(r)].count(stores[std::size_t(w)].grid_function))
        order.edges.push_back({r, w});

  // Candidate groups: connected through data or a shared input grid function (links that
  // decide connectivity only), and convex in the data graph.
  std::vector<std::pair<int, int>> shared_inputs;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      bool shared = false;
      for (int g : reads[std::size_t(a)])
        if (reads[std::size_t(b)].count(g)) shared = true;
      if (shared) shared_inputs.push_back({a, b});
    }
  const FusibleSets connected =
      fusible_sets(data, options_.max_group_size, options_.max_groups, shared_inputs);
  CoverProblem problem;
  problem.vertices = n;
  std::vector<PartKernel> kernels;
  // Priced coarse in fusible_sets' order (by size) while the budget lasts: the ILP gets
  // every singleton (it needs them) and as many fusions as were priced.
  for (const std::vector<int>& set : connected.sets) {
    if (stop()) {
      if (set.size() == 1) return {}; // not even the singletons
      break;
    }
    PartKernel k;
    std::set<int> in(set.begin(), set.end());
    for (int v : set) {
      if (v < ns) {
        k.stores.push_back(v);
        continue;
      }
      bool needed_outside = false;
      for (const auto& [u, w] : data.edges)
        if (u == v && !in.count(w)) needed_outside = true;
      if (needed_outside) k.temporaries.push_back(temporaries[std::size_t(v - ns)]);
    }
    std::set<NodeId> available;
    for (int v = ns; v < n; ++v)
      if (!in.count(v)) available.insert(temporaries[std::size_t(v - ns)]);
    double cost = kInf;
    try {
      const KernelPrice& price = price_kernel(stage, k, available, Level::Coarse);
      if (price.valid) cost = price.candidates.front().seconds;
    } catch (const calc::MappingError&) {
    }
    ++stats.cover_groups;
    if (!std::isfinite(cost)) {
      if (set.size() > 1) continue;
      cost = 1e3; // a singleton must stay: priced out of any cover that can avoid it
    }
    problem.groups.push_back(set);
    problem.cost.push_back(cost);
    kernels.push_back(std::move(k));
  }
  problem.check = precedence_check(order, problem.groups);
  // The ILP's work is bounded by nodes (deterministic); its time by what is left of the
  // safety net. BSSN's initial data (25 pointwise stores, 400 groups of nearly equal cost)
  // ran glp_intopt for minutes before the limits.
  problem.node_limit = options_.cover_nodes;
  problem.time_limit = std::max(seconds_left(), 1e-3);
  CoverStats cs;
  const std::vector<Cover> found = best_covers(problem, options_.cover_epsilon, &cs);
  stats.ilp_solves += cs.ilp_solves;
  stats.ilp_stopped += cs.stopped;
  if (cs.out_of_time) stats.out_of_time = true;
  std::vector<std::pair<Partition, double>> out;
  for (const Cover& c : found) {
    Partition p;
    for (int g : c.groups) p.push_back(kernels[std::size_t(g)]);
    if (!normalise(stage, p)) continue;
    const double t = price_stage(stage, p);
    if (std::isfinite(t)) out.push_back({std::move(p), t});
  }
  return out;
}

} // namespace saguaro::mapper::detail
