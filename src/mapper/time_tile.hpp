// Whether a run's step is time-tiled (calc/time_tile.hpp), and with which tile: the mapper's
// decision, priced by the model (model/time_tile.hpp) against the plain step, as a value the
// host carries out (schedule/step_plan.hpp's time-tiled plan) and prints in its banner.
//
// Saguaro::time_tile = "auto": time-tile where the run allows it and the model predicts the
// tiled step faster than the plain one; "yes": wherever the run allows it (the host reports why
// not as a parameter error); "no": never. The tile: every calc::time_tile_candidates entry
// priced with estimated registers, the `recheck` best compiled (by the host's `resources`) and
// priced again with ptxas's registers and spills, the fastest kept.
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
  // ptxas's resources of a tile's kernel (the backend compiles it); null: estimates only.
  std::function<model::CompiledResources(const calc::TimeTilePlan&)> resources;
  int recheck = 3;
};

struct TimeTileChoice {
  bool use = false;
  calc::TimeTilePlan plan;             // when use
  model::TimeTilePrediction predicted; // when use and priced
  double plain_seconds = std::numeric_limits<double>::quiet_NaN();
  std::string reason; // the banner's line: what was chosen and why, or why not
};

TimeTileChoice choose_time_tile(const calc::Calculation& calc, const TimeTileRequest& request);

} // namespace saguaro::mapper
