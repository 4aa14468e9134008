// c, read-only: every offset loaded through the read-only data cache (__ldg). Not for a grid
// function the kernel also writes: that cache is not coherent with the kernel's own stores.
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy read_only_strategy() {
  Strategy s;
  s.letter = 'c';
  s.name = "read-only";
  s.summary = "loads through the read-only data cache";
  s.path = TrafficPath::ReadOnly;
  s.resource = ReuseResource::ReadOnlyCache;
  s.applies = [](const std::vector<Offset>&, int, bool written, std::string& why) {
    if (written)
      why = "the kernel also writes it, and the read-only data cache is not coherent with the "
            "kernel's own stores";
    return !written;
  };
  s.plan = [](PlanBuilder& b, int, const std::vector<Offset>& offsets) {
    std::vector<Load> loads;
    for (const Offset& o : offsets) loads.push_back(b.read_only(o));
    return loads;
  };
  // Table IVd: one register; traffic and cache footprint are the read-only path's (model.cpp).
  s.model = [](const StencilShape& sh, const ModelBlock&) { return per_offset_load_terms(sh); };
  return s;
}

} // namespace saguaro::calc
