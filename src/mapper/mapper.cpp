// The mapper's entry points (mapper.hpp): map_calculation runs the partition search
// (partition_search.hpp) stage by stage and ranks the whole mappings it assembles;
// price_mapping prices a mapping as it is.
#include "mapper/mapper.hpp"
#include "mapper/fission.hpp"
#include "mapper/occupancy.hpp"
#include "mapper/queues.hpp"
#include "mapper/partition_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <tuple>

namespace saguaro::mapper {

using calc::NodeId;
using detail::KernelPrice;
using detail::Level;
using detail::Partition;
using detail::PartKernel;
using detail::Search;

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

// Coarse configurations: the best of the one-kernel search and of the largest one-store
// kernel's (mapper.hpp), five at most. They replace the one-kernel search's best five plus six
// fixed shapes (two of them outside the configurations block_search trusts): Algorithm 1 at
// eleven configurations per kernel was what made every partition expensive, and kernels
// between the two ends prefer what one of the ends prefers.
constexpr std::size_t kCoarseFromOneKernel = 3, kCoarseFromOneStore = 2;
// Partitions per stage whose kernels are searched over every configuration at the end (the
// best by coarse price); the others are dropped.
constexpr std::size_t kFullyPricedPartitions = 4;

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

// The model's pick is the cheapest mapping it priced: a register fit (sums by input, register
// queues, a capped or split kernel) that the model prices below the search's best becomes the
// pick, and the search's best the first runner-up. The search does not walk these shapes; the
// model prices them all the same (sums by input since the lockstep term, docs/model.md).
void promote_cheapest_register_fit(MapResult& result, int runners_up) {
  auto cheapest = std::min_element(
      result.register_fits.begin(), result.register_fits.end(),
      [](const PricedMapping& a, const PricedMapping& b) { return a.seconds < b.seconds; });
  if (cheapest == result.register_fits.end() || !(cheapest->seconds < result.best.seconds)) return;
  PricedMapping pick = std::move(*cheapest);
  result.register_fits.erase(cheapest);
  result.runners_up.insert(result.runners_up.begin(), std::move(result.best));
  if (int(result.runners_up.size()) > std::max(0, runners_up))
    result.runners_up.resize(std::size_t(std::max(0, runners_up)));
  result.best = std::move(pick);
  result.best_is_register_fit = true;
}

} // namespace

PricedMapping price_mapping(const calc::Calculation& calc, const calc::Mapping& mapping,
                            const model::Device& device, const MapperOptions& options,
                            const std::vector<model::CompiledResources>& compiled) {
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
    const std::size_t index = out.kernels.size();
    k.seconds =
        launch_seconds(profile, context, &k.prediction,
                       index < compiled.size() ? compiled[index] : model::CompiledResources{});
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
    // And each at kFissionTwinBlock, after them all: which block such kernels run fastest at
    // differs between GPUs by a few percent (fission.hpp), so the finish times both.
    if (options.partition) {
      const std::vector<FissionCandidate> fissions =
          register_fit_candidates(calc, device.max_registers_per_thread);
      for (const FissionCandidate& f : fissions) {
        if (f.mapping == result.best.mapping) continue;
        result.register_fits.push_back(price_mapping(calc, f.mapping, device, options));
        result.register_fits.back().origin = f.origin;
      }
      const calc::BlockConfig twin = calc::parse_block_config(kFissionTwinBlock);
      for (const FissionCandidate& f : fissions) {
        calc::Mapping m = f.mapping;
        for (calc::KernelMapping& k : m.kernels) k.block = twin;
        if (m == f.mapping || m == result.best.mapping) continue;
        result.register_fits.push_back(price_mapping(calc, m, device, options));
        result.register_fits.back().origin = f.origin + " at " + kFissionTwinBlock;
      }
    }
    // One thread per point with its registers capped for every thread slot (occupancy.hpp).
    if (std::optional<calc::Mapping> full = full_occupancy_candidate(calc, device);
        full && !(*full == result.best.mapping)) {
      const OccupancyCap cap = full_occupancy_cap(device, full->kernels.front().block.threads());
      result.register_fits.push_back(price_mapping(calc, *full, device, options));
      result.register_fits.back().origin = fmt::format(
          "one thread per point, {} blocks/SM (at most {} registers)", cap.blocks, cap.registers);
    }
    // Register queues along z at the default block (queues.hpp).
    for (const calc::Mapping& queues : register_queue_candidates(calc, device)) {
      if (queues == result.best.mapping) continue;
      result.register_fits.push_back(price_mapping(calc, queues, device, options));
      result.register_fits.back().origin =
          queues.kernels.front().block.min_blocks > 0
              ? fmt::format("register queues along z, {} blocks/SM",
                            queues.kernels.front().block.min_blocks)
              : "register queues along z";
    }
    // The same with a thread's points summed by input (queues.hpp).
    for (const calc::Mapping& summed : sums_by_input_candidates(calc, device)) {
      if (summed == result.best.mapping) continue;
      result.register_fits.push_back(price_mapping(calc, summed, device, options));
      const calc::BlockConfig& b = summed.kernels.front().block;
      result.register_fits.back().origin =
          b.min_blocks > 0
              ? fmt::format("sums by input, {} points, {} blocks/SM", b.tee, b.min_blocks)
              : fmt::format("sums by input, {} points", b.tee);
    }
    promote_cheapest_register_fit(result, options.runners_up);
    result.stats = search.stats;
  }
  if (options.trace) add_traces(result.best, device, options);
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

} // namespace saguaro::mapper
