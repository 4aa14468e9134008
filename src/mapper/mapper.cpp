#include "mapper/mapper.hpp"
#include "mapper/cover.hpp"
#include "mapper/fission.hpp"
#include "mapper/occupancy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace saguaro::mapper {

using calc::NodeId;

const char* to_string(Method m) {
  switch (m) {
  case Method::Model: return "model";
  case Method::Exhaustive: return "exhaustive";
  case Method::Default: return "default";
  case Method::Fixed: return "fixed";
  }
  return "?";
}

bool method_from_string(const std::string& text, Method& m) {
  for (Method x : {Method::Model, Method::Exhaustive, Method::Default, Method::Fixed})
    if (text == to_string(x)) {
      m = x;
      return true;
    }
  return false;
}

namespace {

const double kInf = std::numeric_limits<double>::infinity();

// Coarse configurations: the best of the one-kernel search and of the largest one-store
// kernel's (mapper.hpp), five at most. They replace the one-kernel search's best five plus six
// fixed shapes (two of them outside the configurations block_search trusts): Algorithm 1 at
// eleven configurations per kernel was what made every partition expensive, and kernels
// between the two ends prefer what one of the ends prefers.
constexpr std::size_t kCoarseFromOneKernel = 3, kCoarseFromOneStore = 2;
// Partitions per stage whose kernels are searched over every configuration at the end (the
// best by coarse price); the others are dropped.
constexpr std::size_t kFullyPricedPartitions = 4;

// The nodes `root`'s value is computed from, itself included.
std::vector<NodeId> cone(const calc::Dag& dag, NodeId root) {
  std::vector<NodeId> none;
  return calc::evaluated_nodes(dag, {root}, {}, none);
}

// One kernel of a stage's partition, before block configurations and strategies are chosen.
struct PartKernel {
  std::vector<int> stores;         // indices into the stage's stores, ascending
  std::vector<NodeId> temporaries; // nodes it stores for later kernels, ascending
  bool operator==(const PartKernel&) const = default;
  bool operator<(const PartKernel& o) const {
    return std::tie(stores, temporaries) < std::tie(o.stores, o.temporaries);
  }
};
using Partition = std::vector<PartKernel>; // launch order

// How hard a kernel is priced (mapper.hpp): a screen of one model call per configuration,
// coarse for comparing partitions, full for the kernels of the mappings returned.
enum class Level { Screen, Coarse, Full };

// The best block configuration and assignment of one kernel, found once and remembered.
struct KernelPrice {
  bool valid = false;
  std::string why;                         // when not valid
  model::KernelProfile profile;            // best block and strategies applied
  std::vector<KernelCandidate> candidates; // fastest first
};

// A kernel's plan given the temporaries earlier kernels store, or why it has none.
struct PlanEntry {
  bool ok = false;
  calc::KernelPlan plan;
  std::string error; // calc::MappingError's message
};

class Search {
public:
  Search(const calc::Calculation& calc, const model::Device& device, const MapperOptions& options)
      : calc_(calc), device_(device), options_(options), start_(std::chrono::steady_clock::now()) {}

  // The safety net: wall clock since the search began (MapperOptions::partition_seconds).
  double seconds_left() const {
    return options_.partition_seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool out_of_time() {
    if (!stats.out_of_time && seconds_left() <= 0) stats.out_of_time = true;
    return stats.out_of_time;
  }

  // The work done so far in MapperOptions::partition_budget's units.
  long work() const { return stats.model_calls + stats.nodes_planned / kKernelNodesPerUnit; }
  // The budget of the strategy running now (set_budget); none without one.
  void set_budget(long units) { budget_end_ = work() + units; }
  void clear_budget() { budget_end_ = -1; }
  bool out_of_budget() {
    if (budget_end_ < 0 || work() < budget_end_) return false;
    stats.out_of_budget = true;
    return true;
  }
  // Whether the partition search must stop: its share of the budget spent, or (safety net)
  // its time.
  bool stop() { return out_of_budget() || out_of_time(); }

  SearchStatistics stats;

  // Block configurations for pricing partitions (Level::Coarse), and the first one or two of
  // them for the screen. Kernels of one calculation read similar stencils, so what suits the
  // one-kernel mapping and the largest one-store kernel suits those in between; the kernels
  // of the partitions finally chosen are searched over every configuration (Level::Full).
  std::vector<calc::BlockConfig> coarse, screen;

  // The plan of kernel `k` when `available` temporaries are stored by other kernels: memoised,
  // because normalise and price_kernel plan the same kernels over and over (the same
  // MappingError when it has none).
  // A temporary the kernel's values do not depend on changes nothing in its plan, so the key
  // holds only those of `available` in the cone of its roots: a move of a temporary then
  // leaves the plans of the kernels it does not concern where they were (planning was a
  // third of the search's time before).
  const calc::KernelPlan& plan(int stage, const PartKernel& k, const std::set<NodeId>& available) {
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
  const std::vector<NodeId>& reached(NodeId root, const std::set<NodeId>& among) {
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
  const KernelPrice& price_kernel(int stage, const PartKernel& k, const std::set<NodeId>& available,
                                  Level level = Level::Full) {
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
  bool normalise(int stage, Partition& p) {
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
  double price_stage(int stage, const Partition& p, Level level = Level::Coarse) {
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

  // Shared non-uniform DAG nodes of a stage worth storing as temporaries: reached from two or
  // more stores, not loads, ranked by how much arithmetic sharing them saves.
  std::vector<NodeId> temporary_candidates(int stage) const {
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
  double screen_price(int stage, const PartKernel& k, const std::set<NodeId>& stored) {
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
  struct Proposal {
    std::vector<std::pair<std::size_t, PartKernel>> replace;
    std::optional<std::pair<std::size_t, PartKernel>> insert; // before this index of start
    Partition whole;
  };

  static Partition materialise(const Partition& start, const Proposal& p) {
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
  std::pair<Partition, double> improve(int stage, Partition start,
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
          for (const PartKernel& k : q.whole)
            its.insert(k.temporaries.begin(), k.temporaries.end());
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
  std::vector<std::pair<Partition, double>> covers(int stage,
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

  // A whole mapping from one partition per stage, each kernel at its best (or `variant`-th
  // best) candidate.
  PricedMapping assemble(const std::vector<Partition>& stages, std::string origin,
                         std::size_t vary_kernel = std::size_t(-1), std::size_t variant = 0) {
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

  std::size_t candidates_of(const std::vector<Partition>& stages, std::size_t kernel) {
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

  const calc::Calculation& calc_;
  const model::Device& device_;
  const MapperOptions& options_;
  std::chrono::steady_clock::time_point start_;
  long budget_end_ = -1; // work() at which the running strategy stops; -1: none
  // Keys: stage, stores, temporaries, and the temporaries of other kernels (plans_) or the
  // pricing level first and those the kernel loads last (memo_).
  std::map<std::tuple<int, std::vector<int>, std::vector<NodeId>, std::vector<NodeId>>, PlanEntry>
      plans_;
  std::map<NodeId, std::pair<std::set<NodeId>, std::vector<NodeId>>> reach_;
  std::map<std::tuple<int, int, std::vector<int>, std::vector<NodeId>, std::vector<NodeId>>,
           KernelPrice>
      memo_;
};

// The trace of every kernel's chosen assignment, recomputed (only when asked for).
void add_traces(PricedMapping& m, const model::Device& device, const MapperOptions& options) {
  for (PricedKernel& k : m.kernels) {
    PricingContext context{
        &device,
        model::launch_geometry(k.profile.block, kernel_extent(k.profile, options.grid), device),
        options.combination, options.strategies};
    k.trace = assign_buffering(k.profile, context, AssignmentMethod::Efficiency).trace;
  }
}

} // namespace

PricedMapping price_mapping(const calc::Calculation& calc, const calc::Mapping& mapping,
                            const model::Device& device, const MapperOptions& options) {
  const std::vector<model::KernelProfile> profiles = model::profile_mapping(calc, mapping);
  PricedMapping out;
  out.mapping = mapping;
  out.origin = to_string(options.method);
  for (const model::KernelProfile& profile : profiles) {
    PricedKernel k;
    k.profile = profile;
    PricingContext context{
        &device,
        model::launch_geometry(profile.block, kernel_extent(profile, options.grid), device),
        options.combination};
    k.seconds = launch_seconds(profile, context, &k.prediction);
    out.seconds += k.seconds;
    out.kernels.push_back(std::move(k));
  }
  return out;
}

MapResult map_calculation(const calc::Calculation& calc, const model::Device& device,
                          const MapperOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  MapResult result;
  if (options.method == Method::Default || options.method == Method::Fixed) {
    result.best = price_mapping(calc, calc::default_mapping(calc), device, options);
    result.best.origin = "default";
    result.stats.model_calls = long(result.best.kernels.size());
  } else {
    Search search(calc, device, options);
    // Per stage: the candidates from every strategy, best first.
    std::vector<std::vector<std::pair<Partition, std::string>>> per_stage;
    std::vector<Partition> best_stages;
    // The partition search's budget (Method::Model): the stages share it, each getting an
    // equal part of what the earlier ones left.
    const bool budgeted = options.method == Method::Model;
    long budget_left = options.partition_budget;
    for (std::size_t s = 0; s < calc.stages.size(); ++s) {
      const int stage = int(s);
      const int stores = int(calc.stages[s].stores.size());
      std::vector<std::tuple<double, Partition, std::string>> found;
      Partition one{PartKernel{}};
      for (int st = 0; st < stores; ++st) one[0].stores.push_back(st);
      Partition each;
      for (int st = 0; st < stores; ++st) each.push_back(PartKernel{{st}, {}});
      {
        // The configurations partitions are priced at: the best few of the one-kernel search
        // (over every configuration) and of the largest one-store kernel's, the two ends of
        // what a partition's kernels look like.
        search.coarse.clear();
        search.screen.clear();
        auto take = [&](const std::vector<KernelCandidate>& best, std::size_t count) {
          for (std::size_t i = 0; i < best.size() && i < count; ++i) {
            const calc::BlockConfig& b = best[i].block;
            if (std::find(search.coarse.begin(), search.coarse.end(), b) != search.coarse.end())
              continue;
            if (i == 0) search.screen.push_back(b);
            search.coarse.push_back(b);
          }
        };
        std::set<NodeId> none;
        take(search.price_kernel(stage, one[0], none, Level::Full).candidates,
             kCoarseFromOneKernel);
        if (options.partition && stores > 1) {
          std::size_t largest = 0, size = 0;
          for (std::size_t st = 0; st < each.size(); ++st) {
            try {
              const std::size_t nodes = search.plan(stage, each[st], none).nodes.size();
              if (nodes > size) largest = st, size = nodes;
            } catch (const calc::MappingError&) {
            }
          }
          try {
            take(search.price_kernel(stage, each[largest], none, Level::Full).candidates,
                 kCoarseFromOneStore);
          } catch (const calc::MappingError&) {
          }
        }
      }
      if (!options.partition) {
        found.push_back({search.price_stage(stage, one), one, "one kernel"});
      } else {
        const std::vector<NodeId> temporaries = search.temporary_candidates(stage);
        // The stage's part of the budget, dealt out to its strategies in turn.
        const long stage_budget = budget_left / long(calc.stages.size() - s);
        const long stage_start = search.work();
        int strategies_left = stores > 1 ? 3 : 2;
        auto begin_strategy = [&] {
          if (!budgeted) return;
          const long left = stage_budget - (search.work() - stage_start);
          search.set_budget(std::max(0L, left) / strategies_left--);
        };
        begin_strategy();
        auto [a, ta] = search.improve(stage, one, temporaries);
        found.push_back({ta, a, a == one ? "one kernel" : "moves from one kernel"});
        if (stores > 1) {
          begin_strategy();
          auto [b, tb] = search.improve(stage, each, temporaries);
          found.push_back(
              {tb, b, b == each ? "one kernel per store" : "moves from one kernel per store"});
        }
        begin_strategy();
        int c = 0;
        for (auto& [p, t] : search.covers(stage, temporaries))
          found.push_back({t, std::move(p), fmt::format("ILP cover {}", ++c)});
        search.clear_budget();
        budget_left -= search.work() - stage_start;
      }
      std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
        return std::get<0>(x) < std::get<0>(y);
      });
      if (found.empty() || !std::isfinite(std::get<0>(found.front()))) {
        // Say which kernel does not fit, from the one-kernel partition's price.
        std::set<NodeId> none;
        const KernelPrice& p = search.price_kernel(stage, one[0], none);
        throw calc::MappingError(
            p.valid ? "no mapping of calculation '" + calc.name + "' fits " + device.name : p.why);
      }
      std::vector<std::pair<Partition, std::string>> distinct;
      for (auto& [t, p, origin] : found) {
        if (!std::isfinite(t)) continue;
        bool seen = false;
        for (const auto& d : distinct) seen |= d.first == p;
        if (!seen) distinct.push_back({std::move(p), std::move(origin)});
      }
      best_stages.push_back(distinct.front().first);
      per_stage.push_back(std::move(distinct));
    }
    std::string origin;
    for (const auto& stage : per_stage)
      origin += (origin.empty() ? "" : "; ") + stage.front().second;
    result.best = search.assemble(best_stages, origin);

    // Runners-up: other partitions of a stage (the best few by coarse price: every kernel of
    // these is searched over every configuration), then other block/assignment candidates of
    // a kernel, each a whole mapping; distinct, fastest first.
    std::vector<PricedMapping> others;
    for (std::size_t s = 0; s < per_stage.size(); ++s)
      for (std::size_t i = 1; i < per_stage[s].size() && i < kFullyPricedPartitions; ++i) {
        std::vector<Partition> stages = best_stages;
        stages[s] = per_stage[s][i].first;
        others.push_back(search.assemble(stages, per_stage[s][i].second));
      }
    for (std::size_t k = 0; k < result.best.mapping.kernels.size(); ++k)
      for (std::size_t v = 1; v < search.candidates_of(best_stages, k); ++v)
        others.push_back(
            search.assemble(best_stages, fmt::format("kernel {}: candidate {}", k, v + 1), k, v));
    // Partitions were compared at the coarse configurations; every kernel here was searched
    // over all of them, so the order may change: the fastest whole mapping wins.
    others.insert(others.begin(), std::move(result.best)); // first among equals
    std::stable_sort(
        others.begin(), others.end(),
        [](const PricedMapping& a, const PricedMapping& b) { return a.seconds < b.seconds; });
    result.best = std::move(others.front());
    for (std::size_t i = 1; i < others.size(); ++i) {
      if (int(result.runners_up.size()) >= options.runners_up) break;
      auto same = [&](const PricedMapping& m) { return m.mapping == others[i].mapping; };
      if (others[i].mapping == result.best.mapping ||
          std::any_of(result.runners_up.begin(), result.runners_up.end(), same))
        continue;
      result.runners_up.push_back(std::move(others[i]));
    }
    // The register-fit fissions for the empirical finish, whatever the model thinks of them
    // (its register estimate does not see what fission saves: model.hpp). Unbuffered, at the
    // default block configuration: the shape whose live values the fission counted (the
    // model's strategies add register pipelines and planes, and its kernels then spilled:
    // H100, 2026-11-25, 64 ms against 32 ms unbuffered).
    if (options.partition)
      for (const FissionCandidate& f :
           register_fit_candidates(calc, device.max_registers_per_thread)) {
        if (f.mapping == result.best.mapping) continue;
        result.register_fits.push_back(price_mapping(calc, f.mapping, device, options));
        result.register_fits.back().origin = f.origin;
      }
    // One thread per point with its registers capped for every thread slot (occupancy.hpp).
    if (std::optional<calc::Mapping> full = full_occupancy_candidate(calc, device);
        full && !(*full == result.best.mapping)) {
      const OccupancyCap cap = full_occupancy_cap(device, full->kernels.front().block.threads());
      result.register_fits.push_back(price_mapping(calc, *full, device, options));
      result.register_fits.back().origin = fmt::format(
          "one thread per point, {} blocks/SM (at most {} registers)", cap.blocks, cap.registers);
    }
    result.stats = search.stats;
  }
  if (options.trace) add_traces(result.best, device, options);
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

} // namespace saguaro::mapper
