// A test-only buffering strategy, registered for the life of a calc::ScopedStrategy: the
// whole of what a new strategy built from existing buffer kinds needs (docs/gpu.md, "Adding a
// buffering strategy"). 'l', "line-cached": the offsets on the e line through the point from
// a register pipeline (as r), every other offset through the read-only data cache (as c).
// So it applies where r does not: a stencil with offsets on the e line and off it, in a grid
// function the kernel does not write.
#pragma once

#include "calc/strategy.hpp"

namespace saguaro::test {

inline calc::Strategy line_cached_strategy() {
  calc::Strategy s;
  s.letter = 'l';
  s.name = "line-cached";
  s.summary = "registers along the iteration axis, the read-only data cache elsewhere";
  s.path = calc::TrafficPath::ReadOnly;
  s.resource = calc::ReuseResource::ReadOnlyCache;
  s.applies = [](const std::vector<calc::Offset>& offsets, int e, bool written, std::string& why) {
    int line = 0;
    for (const calc::Offset& o : offsets) line += calc::on_e_line(o, 3 - e);
    if (written)
      why = "the kernel also writes it (the read-only cache is not coherent)";
    else if (line < 2)
      why = "fewer than two offsets on the iteration axis";
    else if (line == int(offsets.size()))
      why = "every offset is on the iteration axis (use r)";
    return !written && line >= 2 && line < int(offsets.size());
  };
  s.plan = [](calc::PlanBuilder& b, int g, const std::vector<calc::Offset>& offsets) {
    std::vector<calc::Offset> line;
    for (const calc::Offset& o : offsets)
      if (calc::on_e_line(o, b.f())) line.push_back(o);
    const int pipeline = b.add_pipeline(g, line, false);
    std::vector<calc::Load> loads;
    for (const calc::Offset& o : offsets)
      loads.push_back(calc::on_e_line(o, b.f()) ? b.pipeline_slot(pipeline, o) : b.read_only(o));
    return loads;
  };
  // The read-only path's terms for the stencil, and the pipeline's registers.
  s.model = [](const calc::StencilShape& sh, const calc::ModelBlock&) {
    calc::ModelTerms t;
    t.registers = 1 + sh.s_e;
    t.issue = sh.offsets - sh.r_e;
    return t;
  };
  return s;
}

} // namespace saguaro::test
