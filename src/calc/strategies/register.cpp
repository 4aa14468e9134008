// r, register: values carried in registers from one point to the next along e. Applies to a
// stencil along e only, with reuse (more than one offset).
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy register_strategy() {
  Strategy s;
  s.letter = 'r';
  s.name = "register";
  s.summary = "registers carried along the iteration axis (stencils along that axis)";
  s.path = TrafficPath::Direct;
  s.resource = ReuseResource::OnChip;
  s.applies = [](const std::vector<Offset>& offsets, int e, bool, std::string& why) {
    if (!has_reuse(offsets, why)) return false;
    const int f = 3 - e;
    for (const Offset& o : offsets)
      if (!on_e_line(o, f)) {
        why = "offset (" + std::to_string(o[0]) + "," + std::to_string(o[1]) + "," +
              std::to_string(o[2]) + ") is off the iteration axis " + axis_name(e) +
              ": registers carry values along " + axis_name(e) + " only";
        return false;
      }
    return true;
  };
  s.plan = [](PlanBuilder& b, int g, const std::vector<Offset>& offsets) {
    const int pipeline = b.add_pipeline(g, offsets, false);
    std::vector<Load> loads;
    for (const Offset& o : offsets) loads.push_back(b.pipeline_slot(pipeline, o));
    return loads;
  };
  // Table IV: 1 + s_e registers; each point loads one new value, plus the s_e of the first.
  s.model = [](const StencilShape& sh, const ModelBlock& k) {
    ModelTerms t;
    t.registers = 1 + sh.s_e;
    t.traffic = (1 + sh.s_e / k.tee) * k.alpha;
    t.l2_footprint = round_line_plus(k.tx, k.LS_L2) * k.tf;
    t.issue = 1 + sh.s_e / k.tee;
    return t;
  };
  return s;
}

} // namespace saguaro::calc
