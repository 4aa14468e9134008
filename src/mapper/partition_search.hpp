// The partition search of map_calculation (internal to mapper/): a stage's partition into
// kernels, each kernel's plan and price, memoised, and the strategies that look for good
// partitions. mapper.cpp drives it stage by stage. Its member functions are defined, and
// described, in two files: partition_search.cpp (the bookkeeping: plans, kernel and stage
// prices, kernel order, the assembled mapping) and partition_strategies.cpp (the candidate
// temporaries, Chemora's move proposals, Fousek's covers).
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "mapper/mapper.hpp"

#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace saguaro::mapper::detail {

using calc::NodeId;

const double kInf = std::numeric_limits<double>::infinity();

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

  // ---- bookkeeping (partition_search.cpp): plans, prices, kernel order, assembly ----------------
  const calc::KernelPlan& plan(int stage, const PartKernel& k, const std::set<NodeId>& available);
  const std::vector<NodeId>& reached(NodeId root, const std::set<NodeId>& among);
  const KernelPrice& price_kernel(int stage, const PartKernel& k, const std::set<NodeId>& available,
                                  Level level = Level::Full);
  bool normalise(int stage, Partition& p);
  double price_stage(int stage, const Partition& p, Level level = Level::Coarse);
  PricedMapping assemble(const std::vector<Partition>& stages, std::string origin,
                         std::size_t vary_kernel = std::size_t(-1), std::size_t variant = 0);
  std::size_t candidates_of(const std::vector<Partition>& stages, std::size_t kernel);

  // ---- strategies (partition_strategies.cpp): temporaries, moves, covers ------------------------
  std::vector<NodeId> temporary_candidates(int stage) const;
  double screen_price(int stage, const PartKernel& k, const std::set<NodeId>& stored);
  struct Proposal;
  static Partition materialise(const Partition& start, const Proposal& p);
  std::pair<Partition, double> improve(int stage, Partition start,
                                       const std::vector<NodeId>& temporaries);
  std::vector<std::pair<Partition, double>> covers(int stage,
                                                   const std::vector<NodeId>& temporaries);

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

} // namespace saguaro::mapper::detail
