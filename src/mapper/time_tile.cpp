// The time-tiled step's decision (see time_tile.hpp).
#include "mapper/time_tile.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace saguaro::mapper {

TimeTileChoice choose_time_tile(const calc::Calculation& calc, const TimeTileRequest& request) {
  TimeTileChoice out;
  out.plain_seconds = request.plain_seconds;
  if (request.mode == "no") {
    out.reason = "time-tiled step: off (Saguaro::time_tile = \"no\")";
    return out;
  }
  std::string obstacle = request.obstacle;
  if (obstacle.empty())
    obstacle = calc::time_tile_obstacle(calc, request.state, request.rhs, request.stages);
  std::vector<calc::TimeTile> tiles;
  if (obstacle.empty()) {
    tiles = calc::time_tile_candidates(calc, request.stages);
    if (tiles.empty())
      obstacle = fmt::format("no tile of at most 1024 threads keeps a quarter of its work useful "
                             "at stencil radius {}x{}",
                             calc.radius[0], calc.radius[1]);
  }
  if (!obstacle.empty()) {
    out.reason = fmt::format("time-tiled step: not for {} ({})", calc.name, obstacle);
    return out;
  }

  struct Priced {
    calc::TimeTilePlan plan;
    model::TimeTilePrediction prediction;
  };
  std::vector<Priced> priced;
  for (const calc::TimeTile& tile : tiles) {
    Priced p{calc::plan_time_tile(calc, request.state, request.rhs, request.stages, tile), {}};
    if (request.device)
      p.prediction = model::predict_time_tile(calc, p.plan, request.grid, *request.device);
    priced.push_back(std::move(p));
  }
  if (!request.device) { // nothing to price with: only "yes" takes it, with the first tile
    if (request.mode != "yes") {
      out.reason =
          fmt::format("time-tiled step: not for {} (no device description to price it)", calc.name);
      return out;
    }
    out.use = true;
    out.plan = priced.front().plan;
    out.reason = fmt::format("time-tiled step: {} by {} (Saguaro::time_tile = \"yes\"; not priced: "
                             "no device description)",
                             calc.name, out.plan.text());
    return out;
  }
  auto faster = [](const Priced& a, const Priced& b) {
    return a.prediction.seconds < b.prediction.seconds;
  };
  std::stable_sort(priced.begin(), priced.end(), faster);
  if (request.resources) {
    const std::size_t n =
        std::min<std::size_t>(priced.size(), std::size_t(std::max(1, request.recheck)));
    for (std::size_t i = 0; i < n; ++i)
      priced[i].prediction = model::predict_time_tile(
          calc, priced[i].plan, request.grid, *request.device, request.resources(priced[i].plan));
    std::stable_sort(priced.begin(), priced.begin() + std::ptrdiff_t(n), faster);
  }
  const Priced& best = priced.front();
  out.plan = best.plan;
  out.predicted = best.prediction;
  const bool pays = !std::isnan(request.plain_seconds) && best.prediction.valid &&
                    best.prediction.seconds < request.plain_seconds;
  out.use = best.prediction.valid && (pays || request.mode == "yes");
  const std::string against =
      std::isnan(request.plain_seconds)
          ? "the plain step not priced"
          : fmt::format("the plain step {:.3f} ms", request.plain_seconds * 1e3);
  if (!best.prediction.valid)
    out.reason = fmt::format("time-tiled step: not for {} ({})", calc.name, best.prediction.text());
  else if (out.use)
    out.reason = fmt::format("time-tiled step: {} by {}, predicted {} against {}{}", calc.name,
                             best.plan.text(), best.prediction.text(), against,
                             pays ? "" : " (Saguaro::time_tile = \"yes\")");
  else
    out.reason = fmt::format("time-tiled step: not for {} (the best tile, {}, predicted {}, is "
                             "not faster than {})",
                             calc.name, best.plan.text(), best.prediction.text(), against);
  return out;
}

} // namespace saguaro::mapper
