// p, plus (2.5D): registers along e for the offsets on the e line through the point, a shared
// plane (refilled every step between two barriers) for the offsets in the x-f plane through
// it, global loads for the rest. Applies to a stencil with reuse and an in-plane offset.
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy plus_strategy() {
  Strategy s;
  s.letter = 'p';
  s.name = "plus";
  s.summary = "plus (2.5D): registers along the iteration axis and a shared plane";
  s.path = TrafficPath::Direct;
  s.resource = ReuseResource::OnChip;
  s.shared_memory = true;
  s.applies = [](const std::vector<Offset>& offsets, int e, bool, std::string& why) {
    if (!has_reuse(offsets, why)) return false;
    const int f = 3 - e;
    for (const Offset& o : offsets)
      if (o[std::size_t(e)] == 0 && !on_e_line(o, f)) return true;
    why = std::string("no offset lies in the x-") + axis_name(f) +
          " plane through the point, so the shared plane would hold nothing (use r)";
    return false;
  };
  s.plan = [](PlanBuilder& b, int g, const std::vector<Offset>& offsets) {
    const std::size_t e = std::size_t(b.e());
    std::vector<Offset> line, plane;
    for (const Offset& o : offsets) {
      if (on_e_line(o, b.f())) line.push_back(o);
      if (o[e] == 0) plane.push_back(o);
    }
    const int pipeline = b.add_pipeline(g, line, true);
    const int q = b.add_plane(g, plane, pipeline);
    std::vector<Load> loads;
    for (const Offset& o : offsets)
      loads.push_back(on_e_line(o, b.f()) ? b.pipeline_slot(pipeline, o)
                      : o[e] == 0         ? b.plane_element(q, o)
                                          : b.global(o));
    return loads;
  };
  // Table IV: 1 + s_e registers and a plane of shared memory; L2 traffic for the offsets off
  // the line and the plane, one new value per step, the plane's halo.
  s.model = [](const StencilShape& sh, const ModelBlock& k) {
    ModelTerms t;
    t.registers = 1 + sh.s_e;
    t.smem_paper = (sh.s_x + k.tx) * (sh.s_f + k.tf);
    t.smem_code = (sh.s_x + k.tx) * (sh.s_f + k.tf);
    t.traffic = k.alpha * (sh.r_o + 1 + sh.s_e / k.tee + sh.s_f / k.tf) +
                (round_line(sh.s_xn, k.LS_L2) + round_line(sh.s_xp, k.LS_L2)) / k.tx;
    t.l2_footprint = round_line_plus(sh.s_x + k.tx, k.LS_L2) * (k.tf + sh.s_f);
    t.shared_loads = sh.r_x + sh.r_f;
    t.barriers = 1;
    t.issue =
        sh.r_o + 1 + sh.s_e / k.tee + sh.r_x + sh.r_f + (sh.s_x + k.tx) * (sh.s_f + k.tf) / k.plane;
    return t;
  };
  return s;
}

} // namespace saguaro::calc
