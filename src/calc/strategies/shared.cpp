// b, shared: the block's tile grown by the stencil, loaded once into shared memory (one
// barrier), every offset read from it. Applies to any stencil with reuse.
#include "calc/strategy.hpp"

namespace saguaro::calc {

Strategy shared_strategy() {
  Strategy s;
  s.letter = 'b';
  s.name = "shared";
  s.summary = "the block's tile grown by the stencil in shared memory";
  s.path = TrafficPath::Direct;
  s.resource = ReuseResource::OnChip;
  s.shared_memory = true;
  s.applies = [](const std::vector<Offset>& offsets, int, bool, std::string& why) {
    return has_reuse(offsets, why);
  };
  s.plan = [](PlanBuilder& b, int g, const std::vector<Offset>& offsets) {
    const int tile = b.add_tile(g, offsets);
    std::vector<Load> loads;
    for (const Offset& o : offsets) loads.push_back(b.tile_element(tile, o));
    return loads;
  };
  // Table IV. Beyond the paper (whose M_smem keeps a rolling tile s_e + 1 planes deep): the
  // generated kernel keeps the whole tile of its t_ee points, s_e + t_ee planes, and that
  // decides whether a block fits.
  s.model = [](const StencilShape& sh, const ModelBlock& k) {
    ModelTerms t;
    t.registers = 1;
    t.smem_paper = (sh.s_x + k.tx) * (sh.s_f + k.tf) * (sh.s_e + 1);
    t.smem_code = (sh.s_x + k.tx) * (sh.s_f + k.tf) * (sh.s_e + k.tee);
    t.traffic = round_line_plus(sh.s_x + k.tx, k.LS_L2) * (sh.s_f + k.tf) * (sh.s_e + k.tee) /
                (k.plane * k.tee);
    t.l2_footprint = round_line_plus(sh.s_x + k.tx, k.LS_L2) * (k.tf + sh.s_f);
    t.shared_loads = sh.r;
    t.barriers = 1;
    t.issue = sh.offsets + round_line_plus(sh.s_x + k.tx, 1) * (sh.s_f + k.tf) * (sh.s_e + k.tee) /
                               (k.plane * k.tee) * 2; // fill: load + store
    return t;
  };
  return s;
}

} // namespace saguaro::calc
