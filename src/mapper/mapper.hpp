// The mapper: for one Calculation on one device, the Mapping the model predicts fastest — how
// the DAG is split into kernels, each kernel's block configuration and each input's buffering
// strategy — with the runners-up and what the search cost. It asks model/ and nothing else
// (ARCHITECTURE.md); codegen and the runtime take its Mapping as it is.
//
// Three nested searches:
//  * buffering assignment per kernel and block configuration (assignment.hpp: Hu et al.
//    Algorithm 1 with eq. 3, or exhaustive);
//  * block configuration per kernel (block_search.hpp: enumeration pruned by a lower bound);
//  * kernel partition per stage, two ways, the cheaper one wins:
//     - Chemora's move proposals from two starting points (one kernel; one kernel per store):
//       move a store to another kernel or a kernel of its own, merge two kernels, store a
//       shared DAG node as a temporary grid function for later kernels ("move") or recompute
//       it in every kernel that needs it ("copy"), accepted while the predicted total drops;
//       after every proposal the kernels are reordered so producers of temporaries come
//       before their consumers and readers of a grid function before its writer, and dead
//       temporaries and empty kernels are removed;
//     - Fousek's covers: candidate vertex groups (stores and candidate temporaries; connected
//       by shared inputs or data, convex) priced with the model, and the epsilon best
//       partitions by 0/1 set-partitioning ILP (cover.hpp, GLPK).
// Distinct kernels are priced once (memoised by stage, stores, temporaries and what they
// load), at three levels of effort:
//   screen  every input unbuffered at one or two block configurations (a model call each):
//           ranks the move proposals of a step, hundreds of new kernels when BSSN's 25
//           stores start in kernels of their own;
//   coarse  Algorithm 1 at a few block configurations (the best of the one-kernel search and
//           of the largest one-store kernel's), only the best kept (so the lower bound
//           prunes): prices the best-screened proposals, the cover groups and every partition
//           compared;
//   full    every block configuration, runners-up kept: the kernels of the mappings returned.
// The partition search is bounded by work, not time, so that its result does not depend on
// the machine: MapperOptions::partition_budget (model calls and planning), dealt out to the
// stages and within a stage to the three strategies in turn (each gets an equal share of what
// is left, so what one leaves goes to the next), and cover_nodes branch-and-bound nodes per
// ILP solve. partition_seconds of wall clock is only a safety net (a slow or loaded machine).
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "mapper/assignment.hpp"
#include "mapper/block_search.hpp"
#include "model/device.hpp"
#include "model/model.hpp"

#include <array>
#include <string>
#include <vector>

namespace saguaro::mapper {

enum class Method {
  Model,      // efficiency-based assignment, pruned block search, moves + ILP covers
  Exhaustive, // exhaustive assignment (up to max_exhaustive_assignments per configuration),
              // every block configuration, every fusible group in the covers
  Default,    // calc::default_mapping: one kernel per stage, z 32x8x8, every input unbuffered
  Fixed,      // a mapping the user gives (mapping_file.hpp); the mapper only prices it
};
const char* to_string(Method m);
bool method_from_string(const std::string& text, Method& m); // "model" "exhaustive" ...

struct MapperOptions {
  Method method = Method::Model;
  std::array<long, 3> grid{256, 256, 256}; // interior points of one patch (x, y, z)
  model::Combination combination = model::Combination::Hu;
  int runners_up = 5;                      // distinct mappings reported after the best
  bool partition = true;                   // search kernel partitions (else one kernel per stage)
  int max_moves = 64;                      // accepted move proposals per starting point
  int max_temporary_candidates = 8;        // shared DAG nodes considered as temporaries, per stage
  int max_group_size = 4;                  // covers: largest candidate group
  std::size_t max_groups = 400;            // covers: candidate groups per stage
  int cover_epsilon = 8;                   // covers: how many covers to produce
  long cover_nodes = 50;                   // covers: branch-and-bound nodes per ILP solve
  int move_candidates = 6;                 // moves: best-screened proposals priced coarse per step
  double max_exhaustive_assignments = 1e5; // Exhaustive: above this, Algorithm 1 is used
  bool trace = false;                      // keep the assignment trace of every chosen kernel
  // The partition search's budget in work units: a model call is one, and planning a kernel
  // one per kKernelNodesPerUnit DAG nodes it evaluates (both take about 1.3 us on the
  // reference machine; planning is most of the time when BSSN's 25 stores start in kernels
  // of their own). The one-kernel search before it and the full search of the kernels
  // chosen after it are not counted. A simulation start must not wait minutes: this is under
  // a second (BSSN's right-hand side uses 400,000-600,000 units in 0.4-0.7 s, Release, on a
  // 2-core VM). Method::Model only: Exhaustive has no budget but partition_seconds.
  long partition_budget = 600000;
  // A safety net in wall-clock seconds for the whole search: the partition search stops
  // proposing (keeping the best found) and GLPK is stopped once it has taken this long.
  // Counted work (above) is what normally ends it, in about a second for BSSN's right-hand
  // side (Release, 2026); time depends on the machine and its load, so the net is ten times
  // that, and a Debug build or a busy machine still gets the same mapping.
  double partition_seconds = 10.0;
  // The strategies the search may assign (all; a set for experiments and tests).
  StrategySet strategies = kAllStrategies;
};

// One kernel of a priced mapping.
struct PricedKernel {
  model::KernelProfile profile; // block and strategies as chosen
  model::Prediction prediction;
  double seconds = 0;                // one launch over its region
  std::vector<AssignmentStep> trace; // when MapperOptions::trace
};

struct PricedMapping {
  calc::Mapping mapping;
  std::vector<PricedKernel> kernels; // one per mapping.kernels entry
  double seconds = 0;                // the calculation's predicted time: their sum
  std::string origin;                // how the search found it ("moves from one kernel", ...)
};

// Planning a kernel of this many DAG nodes is one unit of MapperOptions::partition_budget.
inline constexpr long kKernelNodesPerUnit = 8;

struct SearchStatistics {
  long model_calls = 0;    // model::predict and model::lower_bound evaluations
  long nodes_planned = 0;  // DAG nodes of the kernels planned (calc::plan_kernel)
  long kernels_priced = 0; // distinct kernels whose block configuration was searched
  long configurations = 0; // block configurations whose assignment was run
  long pruned = 0;         // block configurations skipped by the lower bound
  long partitions = 0;     // kernel partitions priced (moves and covers)
  long moves_accepted = 0;
  long cover_groups = 0; // candidate groups priced for the covers
  int ilp_solves = 0;
  int ilp_stopped = 0;        // ILP solves stopped by MapperOptions::cover_nodes (or time)
  bool out_of_budget = false; // a strategy used its share of MapperOptions::partition_budget
  bool out_of_time = false;   // the partition search hit MapperOptions::partition_seconds
  double seconds = 0;         // wall time of the whole search
};

struct MapResult {
  PricedMapping best;
  std::vector<PricedMapping> runners_up; // distinct, fastest first
  // Mappings made to fit a register budget, priced (Method::Model and Exhaustive only): the
  // register-fit fissions (fission.hpp: every stage split into kernels whose live values fit a
  // budget, unbuffered, at the default block configuration) at the budgets of kFissionBudgets,
  // distinct, where a stage splits, and then each again at kFissionTwinBlock; one thread per
  // point with its registers capped so an SM holds every thread it can (occupancy.hpp), where
  // that changes the kernel; the default mapping with register queues along z, and the same
  // with a thread's points summed by input (queues.hpp), where they apply. The empirical
  // finish always times them: the model's register estimate does not see what they save. The
  // one the model prices below the search's best is `best` instead (best_is_register_fit).
  std::vector<PricedMapping> register_fits;
  // Whether `best` is a register fit the model priced below the search's best, which is then
  // runners_up.front() (mapper.cpp, promote_cheapest_register_fit).
  bool best_is_register_fit = false;
  SearchStatistics stats;
};

// Throws calc::MappingError when no mapping of `calc` fits the device (every block
// configuration of some kernel runs out of registers or shared memory).
MapResult map_calculation(const calc::Calculation& calc, const model::Device& device,
                          const MapperOptions& options = {});

// Prices a given mapping (Method::Fixed, and the default mapping) with the same model; with
// `compiled` (per kernel, the mapping's order) what the compiler made of each kernel in place
// of the register estimate (an entry with registers -1 keeps the estimate). Throws
// calc::MappingError when it does not fit its calculation.
PricedMapping price_mapping(const calc::Calculation& calc, const calc::Mapping& mapping,
                            const model::Device& device, const MapperOptions& options = {},
                            const std::vector<model::CompiledResources>& compiled = {});

// Launching a calculation around a ghost exchange: either the whole region once the exchange
// has finished, or its interior while the messages are in flight and then the boundary shell
// (calc::split_region). The model prices both; the faster one is chosen, like any other part of
// a mapping. (It is decided per run, from the patch and the exchange, not kept in mapping files.)
struct ExchangeCost {
  double seconds = 0; // the exchange's predicted time (model::message_seconds of every phase)
  // [axis][lower/upper]: faces whose ghosts arrive by message; the shell lies along them.
  std::array<std::array<bool, 2>, 3> faces{};
};
struct LaunchChoice {
  bool split = false;
  double whole = 0;               // exchange + the calculation over the patch
  double split_total = 0;         // max(interior, exchange) + the shell
  double interior = 0, shell = 0; // the calculation over the interior, over the shell's boxes
  std::string reason;             // a line for the banner
};
// Prices `mapping` of `calc` over a patch of options.grid owned points (each launch with its
// own T_launch; the shell's boxes are one launch). No exchange (no faces) or no interior: whole.
LaunchChoice choose_launches(const calc::Calculation& calc, const calc::Mapping& mapping,
                             const model::Device& device, const MapperOptions& options,
                             const ExchangeCost& exchange);

} // namespace saguaro::mapper
