// The choice between launching a calculation whole after the ghost exchange and splitting it
// into an interior that overlaps the exchange and a boundary shell after it (mapper.hpp).
#include "mapper/mapper.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace saguaro::mapper {

namespace {

// The mapping's predicted time over one region (a box of `points` per axis).
double region_seconds(const calc::Calculation& calc, const calc::Mapping& mapping,
                      const model::Device& device, MapperOptions options,
                      const calc::Region& region) {
  for (int a = 0; a < 3; ++a) options.grid[a] = region.hi[a] - region.lo[a];
  return price_mapping(calc, mapping, device, options).seconds;
}

// The boundary shell is one launch over its boxes (runtime::CompiledCalculation::run_boxes):
// priced as one region of their points, stacked along the axis they differ in, where they agree
// on the other two (a patch cut along one axis, the common case); otherwise box by box.
double shell_seconds(const calc::Calculation& calc, const calc::Mapping& mapping,
                     const model::Device& device, const MapperOptions& options,
                     const std::vector<calc::Region>& shell) {
  for (int a = 0; a < 3 && shell.size() > 1; ++a) {
    calc::Region stacked = shell.front();
    bool agree = true;
    for (std::size_t b = 1; b < shell.size() && agree; ++b)
      for (int other = 0; other < 3; ++other)
        if (other != a &&
            shell[b].hi[other] - shell[b].lo[other] != stacked.hi[other] - stacked.lo[other])
          agree = false;
    if (!agree) continue;
    for (std::size_t b = 1; b < shell.size(); ++b) stacked.hi[a] += shell[b].hi[a] - shell[b].lo[a];
    return region_seconds(calc, mapping, device, options, stacked);
  }
  double seconds = 0;
  for (const calc::Region& box : shell)
    seconds += region_seconds(calc, mapping, device, options, box);
  return seconds;
}

} // namespace

LaunchChoice choose_launches(const calc::Calculation& calc, const calc::Mapping& mapping,
                             const model::Device& device, const MapperOptions& options,
                             const ExchangeCost& exchange) {
  LaunchChoice choice;
  const calc::Region patch{{0, 0, 0},
                           {int(options.grid[0]), int(options.grid[1]), int(options.grid[2])}};
  const double whole = region_seconds(calc, mapping, device, options, patch);
  choice.whole = exchange.seconds + whole;
  bool any_face = false;
  for (const auto& axis : exchange.faces) any_face = any_face || axis[0] || axis[1];
  const calc::RegionSplit split =
      calc::split_region(patch, calc::required_margin(calc), exchange.faces);
  if (!any_face || split.interior.empty()) {
    choice.split_total = choice.whole;
    choice.reason = any_face ? "whole: the patch is too thin for an interior"
                             : "whole: no ghosts arrive by message";
    return choice;
  }
  choice.interior = region_seconds(calc, mapping, device, options, split.interior);
  choice.shell = shell_seconds(calc, mapping, device, options, split.shell);
  choice.split_total = std::max(choice.interior, exchange.seconds) + choice.shell;
  choice.split = choice.split_total < choice.whole;
  choice.reason = fmt::format(
      "{}: interior {:.3g} ms with the exchange ({:.3g} ms) in flight, then the boundary shell "
      "({} boxes, one launch) {:.3g} ms: {:.3g} ms; whole after the exchange {:.3g} ms",
      choice.split ? "split" : "whole", choice.interior * 1e3, exchange.seconds * 1e3,
      split.shell.size(), choice.shell * 1e3, choice.split_total * 1e3, choice.whole * 1e3);
  return choice;
}

} // namespace saguaro::mapper
