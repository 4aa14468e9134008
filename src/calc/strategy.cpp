#include "calc/strategy.hpp"

#include <algorithm>
#include <stdexcept>

namespace saguaro::calc {

const char* axis_name(int axis) {
  return axis == 0 ? "x" : axis == 1 ? "y" : "z";
}

bool has_reuse(const std::vector<Offset>& offsets, std::string& why) {
  if (offsets.size() >= 2) return true;
  why = "it is read at one offset only, so there is nothing to reuse";
  return false;
}

ModelTerms per_offset_load_terms(const StencilShape& shape) {
  ModelTerms t;
  t.registers = 1;
  t.issue = shape.offsets;
  return t;
}

StencilShape stencil_shape(const std::vector<Offset>& offsets, int iteration_axis) {
  const int e = iteration_axis, f = 3 - iteration_axis;
  StencilShape s;
  if (offsets.empty()) return s;
  int xmin = 0, xmax = 0;
  int fmin = offsets[0][f], fmax = fmin, emin = offsets[0][e], emax = emin;
  for (const Offset& o : offsets) {
    xmin = std::min(xmin, o[0]);
    xmax = std::max(xmax, o[0]);
    fmin = std::min(fmin, o[f]);
    fmax = std::max(fmax, o[f]);
    emin = std::min(emin, o[e]);
    emax = std::max(emax, o[e]);
    const bool on_x = o[0] != 0, on_f = o[f] != 0, on_e = o[e] != 0;
    if (on_x && !on_e && !on_f)
      ++s.r_x;
    else if (!on_e && on_f)
      ++s.r_f;
    else if (on_e && !on_x && !on_f)
      ++s.r_e;
    else if (on_e)
      ++s.r_o;
  }
  s.s_xn = -xmin;
  s.s_xp = xmax;
  s.s_x = s.s_xn + s.s_xp;
  s.s_f = fmax - fmin;
  s.s_e = emax - emin;
  s.r = s.r_x + s.r_f + s.r_e + s.r_o;
  s.offsets = int(offsets.size());
  return s;
}

// ---- the plan's buffers -------------------------------------------------------------------

namespace {

// The box of `offsets` along each axis, [lo, hi], containing 0 when `with_zero`.
void extent_of(const std::vector<Offset>& offsets, bool with_zero, Offset& lo, Offset& hi) {
  lo = hi = Offset{0, 0, 0};
  bool first = !with_zero;
  for (const Offset& o : offsets) {
    for (int a = 0; a < 3; ++a) {
      lo[a] = first ? o[a] : std::min(lo[a], o[a]);
      hi[a] = first ? o[a] : std::max(hi[a], o[a]);
    }
    first = false;
  }
}

} // namespace

int PlanBuilder::add_pipeline(int g, const std::vector<Offset>& line, bool with_zero) {
  Offset lo, hi;
  extent_of(line, with_zero, lo, hi);
  plan_.pipelines.push_back({g, lo[std::size_t(e())], hi[std::size_t(e())]});
  return int(plan_.pipelines.size()) - 1;
}

int PlanBuilder::add_tile(int g, const std::vector<Offset>& offsets) {
  const std::size_t e = std::size_t(this->e()), f = std::size_t(this->f());
  SharedBuffer t;
  t.grid_function = g;
  extent_of(offsets, true, t.lo, t.hi);
  t.nx = block().tx + t.hi[0] - t.lo[0];
  t.nf = block().tf + t.hi[f] - t.lo[f];
  t.ne = block().tee + t.hi[e] - t.lo[e];
  t.base = shared_;
  shared_ += t.elements();
  plan_.tiles.push_back(t);
  return int(plan_.tiles.size()) - 1;
}

int PlanBuilder::add_plane(int g, const std::vector<Offset>& offsets, int fill) {
  const std::size_t f = std::size_t(this->f());
  SharedBuffer t;
  t.grid_function = g;
  extent_of(offsets, true, t.lo, t.hi);
  t.nx = block().tx + t.hi[0] - t.lo[0];
  t.nf = block().tf + t.hi[f] - t.lo[f];
  t.base = shared_;
  t.fill_pipeline = fill;
  const int threads = block().threads();
  t.halo_slots = (t.nx * t.nf + threads - 1) / threads;
  shared_ += t.elements();
  plan_.planes.push_back(t);
  return int(plan_.planes.size()) - 1;
}

Load PlanBuilder::pipeline_slot(int pipeline, const Offset& o) const {
  return {o, BufferKind::Register, pipeline, o[std::size_t(e())]};
}

Load PlanBuilder::tile_element(int tile, const Offset& o) const {
  const SharedBuffer& t = plan_.tiles[std::size_t(tile)];
  const long c = long(o[std::size_t(e())]) * t.nf * t.nx + long(o[std::size_t(f())]) * t.nx + o[0];
  return {o, BufferKind::SharedTile, tile, c};
}

Load PlanBuilder::plane_element(int plane, const Offset& o) const {
  const SharedBuffer& t = plan_.planes[std::size_t(plane)];
  return {o, BufferKind::SharedPlane, plane, long(o[std::size_t(f())]) * t.nx + o[0]};
}

// ---- the registry -------------------------------------------------------------------------

std::vector<Strategy> builtin_strategies(); // calc/strategies/list.cpp

namespace {

std::vector<const Strategy*>& registry() {
  static std::vector<Strategy> builtin = [] {
    std::vector<Strategy> list = builtin_strategies();
    for (std::size_t i = 0; i < list.size(); ++i) list[i].id = Buffering(i);
    return list;
  }();
  static std::vector<const Strategy*> all = [] {
    std::vector<const Strategy*> out;
    for (const Strategy& s : builtin) out.push_back(&s);
    return out;
  }();
  return all;
}

} // namespace

const std::vector<const Strategy*>& strategies() {
  return registry();
}

const Strategy& strategy(Buffering b) {
  const auto& all = registry();
  if (std::size_t(b) >= all.size())
    throw std::out_of_range("no buffering strategy number " + std::to_string(int(b)));
  return *all[std::size_t(b)];
}

const Strategy* strategy_for_letter(char c) {
  for (const Strategy* s : registry())
    if (s->letter == c) return s;
  return nullptr;
}

std::vector<std::string> strategy_letters() {
  std::vector<std::string> out;
  for (const Strategy* s : registry()) out.emplace_back(1, s->letter);
  return out;
}

ScopedStrategy::ScopedStrategy(Strategy s) : strategy_(std::move(s)) {
  auto& all = registry();
  if (strategy_for_letter(strategy_.letter) != nullptr)
    throw std::invalid_argument(std::string("a buffering strategy with letter '") +
                                strategy_.letter + "' exists");
  strategy_.id = Buffering(all.size());
  all.push_back(&strategy_);
}

ScopedStrategy::~ScopedStrategy() {
  auto& all = registry();
  all.erase(std::remove(all.begin(), all.end(), &strategy_), all.end());
}

} // namespace saguaro::calc
