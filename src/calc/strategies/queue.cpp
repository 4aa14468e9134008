// q, queue: the offsets on the e line through the point from a register queue along e (as r),
// every other offset a global load (as u). So it applies where r does not: a stencil with
// offsets on that line and off it, such as a Laplacian's. What it saves is L1's work, not
// DRAM's: a stencil kernel of the wave equation at 8th order is bound by L1's wavefronts
// (bench/results/2026-11-28-b2-profile-H200.md), and a queue of 8 points along z took a
// hand-written one from 180.7 to 168.0 us on the H200 (2026-11-29-register-queues-H200.md).
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy queue_strategy() {
  Strategy s;
  s.letter = 'q';
  s.name = "queue";
  s.summary = "registers along the iteration axis for the line through the point, global loads "
              "elsewhere";
  s.path = TrafficPath::Global;
  s.resource = ReuseResource::OnChip;
  s.applies = [](const std::vector<Offset>& offsets, int e, bool, std::string& why) {
    int line = 0;
    for (const Offset& o : offsets) line += on_e_line(o, 3 - e);
    if (line < 2) {
      why = std::string("fewer than two offsets on the ") + axis_name(e) +
            " line through the point: nothing to carry";
      return false;
    }
    if (line == int(offsets.size())) {
      why = std::string("every offset is on the ") + axis_name(e) + " line (use r)";
      return false;
    }
    return true;
  };
  s.plan = [](PlanBuilder& b, int g, const std::vector<Offset>& offsets) {
    std::vector<Offset> line;
    for (const Offset& o : offsets)
      if (on_e_line(o, b.f())) line.push_back(o);
    const int pipeline = b.add_pipeline(g, line, false);
    std::vector<Load> loads;
    for (const Offset& o : offsets)
      loads.push_back(on_e_line(o, b.f()) ? b.pipeline_slot(pipeline, o) : b.global(o));
    return loads;
  };
  // The global path's traffic for the stencil (the line's values are the point's own column,
  // which that path counts once), the queue's registers, and one load issued per point for the
  // line instead of one per offset on it.
  s.model = [](const StencilShape& sh, const ModelBlock&) {
    ModelTerms t;
    t.registers = 1 + sh.s_e;
    t.issue = sh.offsets - sh.r_e;
    return t;
  };
  return s;
}

} // namespace saguaro::calc
