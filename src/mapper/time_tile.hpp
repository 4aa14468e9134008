// Whether a run's step is time-tiled (calc/time_tile.hpp), and with which tile: the mapper's
// decision, priced by the model (model/time_tile.hpp) against the plain step, as a value the
// host carries out (schedule/step_plan.hpp's time-tiled plan) and prints in its banner.
//
// Saguaro::time_tile = "auto": time-tile where the run allows it and the model predicts the
// tiled step faster than the plain one; "yes": wherever the run allows it (the host reports why
// not as a parameter error); "no": never. The depth of the fusion: every way of cutting the
// step into parts (calc::time_tile_splits: all stages in one kernel, or two parts) with, per
// part, every calc::time_tile_candidates entry priced with estimated registers; the `recheck`
// best tiles of each part of the two best cuts compiled (by the host's `resources`) and priced
// again with ptxas's registers and spills (not in "auto" where the best estimate is already
// 1.15 times the plain step, or already slower and spilling); the fastest cut kept (a step's
// time: its parts' and one exchange's).
#pragma once

#include "calc/calculation.hpp"
#include "calc/time_tile.hpp"
#include "model/device.hpp"
#include "model/model.hpp"
#include "model/time_tile.hpp"

#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::mapper {

struct TimeTileRequest {
  std::string mode = "auto";           // Saguaro::time_tile: auto, yes, no
  std::string obstacle;                // why the run cannot take a time-tiled step ("": it can)
  std::vector<std::string> state;      // the evolved variables
  std::vector<std::string> rhs;        // their right-hand sides' grid functions
  int stages = 0;                      // of the integrator (its tableau sub-diagonal)
  std::array<long, 3> grid{0, 0, 0};   // the periodic box's points per axis
  std::optional<model::Device> device; // to price with; none: "yes" takes the first tile
  double plain_seconds = std::numeric_limits<double>::quiet_NaN(); // the model's plain step
  // The ghost exchange a time-tiled step pays per step (model::ghost_fill_seconds of one
  // exchange, which plain_seconds counts at every exchange of the plain step, over the steps
  // between two readers of the ghosts): its tiles wrap the periodic box themselves and read no
  // ghost, so only output, checkpoints and stencils between steps exchange (wave at fd 4,
  // 256^3 on the H200: 0.115 ms a step for the plain step, 0.029 for one exchange).
  double exchange_seconds = 0;
  // ptxas's resources of a tile's kernel (the backend compiles it); null: estimates only.
  std::function<model::CompiledResources(const calc::TimeTilePlan&)> resources;
  // Called once before `resources`, with the tiles of the two best cuts it will ask for (the
  // `recheck` best of each part), so that the host compiles them at once, in parallel: one by
  // one, Maxwell's took ~5 s of a run's start on the H200. Null: nothing ahead.
  std::function<void(const std::vector<calc::TimeTilePlan>&)> prefetch;
  int recheck = 3;
  int max_parts = 2; // 1 where the integrator has no register for the accumulator between parts
};

struct TimeTileChoice {
  bool use = false;
  std::vector<calc::TimeTilePlan> parts;            // when use: the kernels, in launch order
  std::vector<model::TimeTilePrediction> predicted; // per part, when use and priced
  double seconds = std::numeric_limits<double>::quiet_NaN(); // the parts' predicted sum
  double plain_seconds = std::numeric_limits<double>::quiet_NaN();
  // "time tile 32x8x128 (stages 4, ...)", or the parts' joined by " then ".
  std::string text() const;
  // The step a run takes: text() when use, else "plain".
  std::string step() const { return use ? text() : "plain"; }
  std::string reason; // the banner's line: what was chosen and why, or why not
};

TimeTileChoice choose_time_tile(const calc::Calculation& calc, const TimeTileRequest& request);

} // namespace saguaro::mapper
