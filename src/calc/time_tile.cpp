// Whether and how a right-hand side is evaluated time-tiled (see time_tile.hpp).
#include "calc/time_tile.hpp"

#include "support/text.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::calc {

namespace {

// Below this fraction of useful stage evaluations the grown tile costs more than it saves.
constexpr double kMinUsefulFraction = 0.25;

int find_ignoring_case(const Calculation& calc, const std::string& name) {
  for (std::size_t g = 0; g < calc.grid_functions.size(); ++g)
    if (support::iequals(calc.grid_functions[g].name, name)) return int(g);
  return -1;
}

// The index in `stage`'s stores of the store of grid function `g`, or -1.
int store_of(const Stage& stage, int g) {
  for (std::size_t i = 0; i < stage.stores.size(); ++i)
    if (stage.stores[i].grid_function == g) return int(i);
  return -1;
}

} // namespace

std::size_t TimeTilePlan::shared_bytes() const {
  const auto planes = std::size_t(std::count(in_plane.begin(), in_plane.end(), true));
  return 2 * std::size_t(stages) * planes * std::size_t(threads()) * sizeof(double);
}

double TimeTilePlan::useful_fraction() const {
  const double iterations = tile.nz + 2.0 * stages * radius[2];
  return double(tile.tx) * tile.ty * tile.nz / (double(threads()) * iterations);
}

std::string TimeTilePlan::text() const {
  const int of = step_stages();
  const std::string which =
      stages == of ? std::to_string(stages)
                   : fmt::format("{}{} of {}", first,
                                 stages > 1 ? fmt::format("-{}", last()) : std::string(), of);
  return fmt::format("time tile {}x{}x{} (stages {}, halo {}x{}, {} threads)", tile.tx, tile.ty,
                     tile.nz, which, halo(0), halo(1), threads());
}

std::vector<std::vector<int>> time_tile_splits(int stages) {
  std::vector<std::vector<int>> out;
  if (stages < 1) return out;
  out.push_back({stages});
  for (int cut = 1; cut < stages; ++cut) out.push_back({cut, stages - cut});
  return out;
}

std::string time_tile_obstacle(const Calculation& calc, const std::vector<std::string>& state,
                               const std::vector<std::string>& rhs, int stages) {
  if (stages < 1) return "the integrator's tableau has more than a sub-diagonal";
  if (calc.on_boundary) return "it runs on the boundary";
  if (calc.stages.size() != 1)
    return "it computes intermediate grid functions (more than one stage)";
  const Stage& stage = calc.stages.front();
  std::set<int> states, stored;
  for (std::size_t v = 0; v < state.size(); ++v) {
    const int g = find_ignoring_case(calc, state[v]);
    const int k = find_ignoring_case(calc, rhs.at(v));
    if (k < 0 || store_of(stage, k) < 0)
      return fmt::format("it does not compute the right-hand side of {}", state[v]);
    if (g >= 0) states.insert(g);
    stored.insert(k);
  }
  for (const Store& s : stage.stores)
    if (!stored.count(s.grid_function))
      return fmt::format("it stores {}, which is no evolved variable's right-hand side",
                         calc.grid_functions[std::size_t(s.grid_function)].name);
  for (const InputStencil& in : calc.inputs) {
    if (!states.count(in.grid_function))
      return fmt::format("it reads {}, which is not an evolved variable",
                         calc.grid_functions[std::size_t(in.grid_function)].name);
    for (const Offset& o : in.offsets)
      if (o[2] != 0 && (o[0] != 0 || o[1] != 0))
        return fmt::format("it reads {} at a point off the z axis and off the x-y plane (a "
                           "mixed derivative with z)",
                           calc.grid_functions[std::size_t(in.grid_function)].name);
  }
  std::vector<NodeId> roots;
  for (const Store& s : stage.stores) roots.push_back(s.value);
  for (NodeId id : calc.dag.reachable(roots)) {
    const Node& n = calc.dag.node(id);
    if (n.op == Op::Coordinate) return "it uses coordinates (the tile wraps around the box)";
    if (n.op == Op::Time) return "it uses the time (each stage is at its own)";
  }
  return "";
}

TimeTilePlan plan_time_tile(const Calculation& calc, const std::vector<std::string>& state,
                            const std::vector<std::string>& rhs, int stages, const TimeTile& tile,
                            int first, int count) {
  if (std::string why = time_tile_obstacle(calc, state, rhs, stages); !why.empty())
    throw std::invalid_argument(fmt::format("{} cannot be time-tiled: {}", calc.name, why));
  if (count == 0) count = stages - first + 1;
  if (first < 1 || count < 1 || first + count - 1 > stages)
    throw std::invalid_argument(fmt::format("{}: stages {} to {} are not a part of a step of {}",
                                            calc.name, first, first + count - 1, stages));
  TimeTilePlan plan;
  plan.stages = count;
  plan.first = first;
  plan.total = stages;
  plan.tile = tile;
  plan.radius = calc.radius;
  const Stage& stage = calc.stages.front();
  for (std::size_t v = 0; v < state.size(); ++v) {
    plan.state.push_back(find_ignoring_case(calc, state[v]));
    plan.rhs.push_back(store_of(stage, find_ignoring_case(calc, rhs[v])));
    bool in_plane = false;
    for (const InputStencil& in : calc.inputs)
      if (in.grid_function == plan.state.back())
        for (const Offset& o : in.offsets) in_plane = in_plane || o[0] != 0 || o[1] != 0;
    plan.in_plane.push_back(in_plane);
  }
  if (tile.tx < 1 || tile.ty < 1 || tile.nz < 1 || plan.threads() > 1024)
    throw std::invalid_argument(
        fmt::format("{}: a block of {} threads (at most 1024)", plan.text(), plan.threads()));
  return plan;
}

std::vector<TimeTile> time_tile_candidates(const Calculation& calc, int stages) {
  std::vector<TimeTile> out;
  TimeTilePlan probe;
  probe.stages = stages;
  probe.radius = calc.radius;
  for (int tx : {16, 32, 64})
    for (int ty : {4, 8, 16, 32})
      for (int nz : {64, 128}) {
        probe.tile = {tx, ty, nz};
        if (probe.threads() <= 1024 && probe.useful_fraction() >= kMinUsefulFraction)
          out.push_back(probe.tile);
      }
  return out;
}

} // namespace saguaro::calc
