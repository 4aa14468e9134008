// The time-tiled step's decision (see time_tile.hpp).
#include "mapper/time_tile.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <tuple>

#include <fmt/format.h>

namespace saguaro::mapper {

std::string TimeTileChoice::text() const {
  std::string out;
  for (const calc::TimeTilePlan& p : parts) out += (out.empty() ? "" : " then ") + p.text();
  return out;
}

namespace {

struct PricedPart {
  calc::TimeTilePlan plan;
  model::TimeTilePrediction prediction;
  bool rechecked = false;
};

// One way of cutting the step: per part its tiles, fastest first.
struct Cut {
  std::vector<std::vector<PricedPart>> parts;
  double seconds = 0; // the parts' fastest tiles, summed
  bool valid = true;

  void total() {
    seconds = 0;
    valid = true;
    for (const std::vector<PricedPart>& tiles : parts) {
      seconds += tiles.front().prediction.seconds;
      valid = valid && tiles.front().prediction.valid;
    }
  }
};

bool faster(const PricedPart& a, const PricedPart& b) {
  return a.prediction.seconds < b.prediction.seconds;
}

} // namespace

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

  // Every cut whose parts all have a tile, each tile priced with estimated registers.
  std::vector<Cut> cuts;
  if (obstacle.empty()) {
    for (const std::vector<int>& counts : calc::time_tile_splits(request.stages)) {
      if (int(counts.size()) > request.max_parts) continue;
      Cut cut;
      int first = 1;
      for (int count : counts) {
        std::vector<PricedPart> tiles;
        for (const calc::TimeTile& tile : calc::time_tile_candidates(calc, count)) {
          PricedPart p{calc::plan_time_tile(calc, request.state, request.rhs, request.stages, tile,
                                            first, count),
                       {},
                       false};
          if (request.device)
            p.prediction = model::predict_time_tile(calc, p.plan, request.grid, *request.device);
          tiles.push_back(std::move(p));
        }
        if (tiles.empty()) break;
        std::stable_sort(tiles.begin(), tiles.end(), faster);
        cut.parts.push_back(std::move(tiles));
        first += count;
      }
      if (cut.parts.size() != counts.size()) continue;
      cut.total();
      cuts.push_back(std::move(cut));
    }
    if (cuts.empty())
      obstacle = fmt::format("no tile of at most 1024 threads keeps a quarter of its work useful "
                             "at stencil radius {}x{}, for the whole step or two parts of it",
                             calc.radius[0], calc.radius[1]);
  }
  if (!obstacle.empty()) {
    out.reason = fmt::format("time-tiled step: not for {} ({})", calc.name, obstacle);
    return out;
  }
  auto take = [&](const Cut& cut) {
    out.parts.clear();
    out.predicted.clear();
    for (const std::vector<PricedPart>& tiles : cut.parts) {
      out.parts.push_back(tiles.front().plan);
      out.predicted.push_back(tiles.front().prediction);
    }
    out.seconds = cut.seconds;
  };
  if (!request.device) { // nothing to price with: only "yes" takes it, with the first cut's tiles
    if (request.mode != "yes") {
      out.reason =
          fmt::format("time-tiled step: not for {} (no device description to price it)", calc.name);
      return out;
    }
    out.use = true;
    take(cuts.front());
    out.predicted.clear();
    out.seconds = std::numeric_limits<double>::quiet_NaN();
    out.reason = fmt::format("time-tiled step: {} by {} (Saguaro::time_tile = \"yes\"; not priced: "
                             "no device description)",
                             calc.name, out.text());
    return out;
  }
  auto by_time = [](const Cut& a, const Cut& b) {
    if (a.valid != b.valid) return a.valid;
    return a.seconds < b.seconds;
  };
  std::stable_sort(cuts.begin(), cuts.end(), by_time);
  // ptxas's registers and spills for the best tiles of the best cut, then of each next cut
  // whose estimate still beats the best re-priced one (ptxas seldom makes a tile cheaper). Not
  // where the best estimate is already kRecheckMargin times the plain step in "auto": ptxas
  // made the 4th-order wave's best cut 8.6% cheaper (0.918 -> 0.839 ms, H200, 2026-11-29), and
  // Maxwell's estimate, 3.791 ms against a plain step of 3.162, came out at 6.245 after ~2.5 s
  // of compiling at the run's start (bench/results/2026-11-29-sums-by-input-H200.md). Nor where
  // it already loses and its tiles already spill: ptxas then spills more (Maxwell's, estimated at
  // 480 and 960 bytes a thread, compiled to 1052 and 2336; 2026-11-29-lockstep-model-H200.md).
  constexpr double kRecheckMargin = 1.15;
  bool spills = false;
  for (const std::vector<PricedPart>& tiles : cuts.front().parts)
    spills = spills || tiles.front().prediction.spill_bytes > 0;
  const double estimate = cuts.front().seconds + request.exchange_seconds;
  const bool hopeless = request.mode == "auto" && !std::isnan(request.plain_seconds) &&
                        (estimate >= kRecheckMargin * request.plain_seconds ||
                         (spills && estimate >= request.plain_seconds));
  if (request.resources && !hopeless) {
    const std::size_t n = std::size_t(std::max(1, request.recheck));
    if (request.prefetch) {
      constexpr std::size_t kCutsAhead = 2;
      std::vector<calc::TimeTilePlan> ahead;
      for (std::size_t c = 0; c < cuts.size() && c < kCutsAhead; ++c)
        for (const std::vector<PricedPart>& tiles : cuts[c].parts)
          for (std::size_t i = 0; i < std::min(tiles.size(), n); ++i)
            ahead.push_back(tiles[i].plan);
      request.prefetch(ahead);
    }
    double best = std::numeric_limits<double>::infinity();
    for (Cut& cut : cuts) {
      if (cut.seconds >= best) break;
      for (std::vector<PricedPart>& tiles : cut.parts) {
        const std::size_t m = std::min(tiles.size(), n);
        for (std::size_t i = 0; i < m; ++i) {
          tiles[i].rechecked = true;
          try {
            tiles[i].prediction =
                model::predict_time_tile(calc, tiles[i].plan, request.grid, *request.device,
                                         request.resources(tiles[i].plan));
          } catch (const std::exception& e) { // the compiler or the GPU refuses this tile
            tiles[i].prediction.valid = false;
            tiles[i].prediction.invalid_reason = e.what();
            tiles[i].prediction.seconds = std::numeric_limits<double>::infinity();
          }
        }
        std::stable_sort(tiles.begin(), tiles.begin() + std::ptrdiff_t(m), faster);
      }
      cut.total();
      if (cut.valid) best = std::min(best, cut.seconds);
    }
    // Only re-priced cuts compete now (an estimate is not a price ptxas agreed with).
    std::stable_sort(cuts.begin(), cuts.end(), [&](const Cut& a, const Cut& b) {
      const bool ra = a.parts.front().front().rechecked, rb = b.parts.front().front().rechecked;
      if (ra != rb) return ra;
      return by_time(a, b);
    });
  }
  const Cut& chosen = cuts.front();
  take(chosen);
  const bool pays = !std::isnan(request.plain_seconds) && chosen.valid &&
                    chosen.seconds + request.exchange_seconds < request.plain_seconds;
  out.use = chosen.valid && (pays || request.mode == "yes");
  const std::string against =
      std::isnan(request.plain_seconds)
          ? "the plain step not priced"
          : fmt::format("the plain step {:.3f} ms", request.plain_seconds * 1e3);
  std::string predicted;
  for (const model::TimeTilePrediction& p : out.predicted)
    predicted += (predicted.empty() ? "" : " + ") + p.text();
  if (request.exchange_seconds > 0)
    predicted += fmt::format(" + the exchange {:.3f} ms", request.exchange_seconds * 1e3);
  if (out.predicted.size() > 1 || request.exchange_seconds > 0)
    predicted += fmt::format(" = {:.3f} ms", (out.seconds + request.exchange_seconds) * 1e3);
  if (!chosen.valid)
    out.reason = fmt::format("time-tiled step: not for {} ({})", calc.name, predicted);
  else if (out.use)
    out.reason =
        fmt::format("time-tiled step: {} by {}, predicted {} against {}{}", calc.name, out.text(),
                    predicted, against, pays ? "" : " (Saguaro::time_tile = \"yes\")");
  else
    out.reason = fmt::format("time-tiled step: not for {} (the best tiles, {}, predicted {}, are "
                             "not faster than {})",
                             calc.name, out.text(), predicted, against);
  if (!out.use) {
    out.parts.clear();
    out.predicted.clear();
  }
  return out;
}

} // namespace saguaro::mapper
