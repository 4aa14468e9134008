// u, unbuffered: one global load per offset. Applies to every input; the mapper's start.
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy unbuffered_strategy() {
  Strategy s;
  s.letter = 'u';
  s.name = "unbuffered";
  s.summary = "unbuffered: a global load per offset";
  s.path = TrafficPath::Global;
  s.resource = ReuseResource::None;
  s.applies = [](const std::vector<Offset>&, int, bool, std::string&) { return true; };
  s.plan = [](PlanBuilder& b, int, const std::vector<Offset>& offsets) {
    std::vector<Load> loads;
    for (const Offset& o : offsets) loads.push_back(b.global(o));
    return loads;
  };
  // Table IVd: one register; traffic and L2 footprint are the global path's (model.cpp).
  s.model = [](const StencilShape& sh, const ModelBlock&) { return per_offset_load_terms(sh); };
  return s;
}

} // namespace saguaro::calc
