// What a time step is made of: calculations launched over their regions, the evolved
// variables' ghost exchange, the outer boundary conditions.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include <algorithm>

namespace saguaro::host {

std::vector<double> Simulation::parameter_values() const {
  std::vector<double> values;
  const param::Registry& reg = setup_.registry;
  const std::string& thorn = setup_.program.thorn;
  for (const calc::Parameter& p : setup_.program.parameters) {
    switch (p.type) {
    case edl::ParameterType::Real: values.push_back(reg.get_real(thorn, p.name)); break;
    case edl::ParameterType::Int: values.push_back(double(reg.get_int(thorn, p.name))); break;
    case edl::ParameterType::Boolean: values.push_back(reg.get_bool(thorn, p.name)); break;
    case edl::ParameterType::Keyword: {
      std::string word = reg.get_keyword(thorn, p.name);
      auto it = std::find(p.keyword_values.begin(), p.keyword_values.end(), word);
      values.push_back(double(it - p.keyword_values.begin()));
      break;
    }
    }
  }
  return values;
}

runtime::KernelArgs Simulation::kernel_args(const CalcBinding& b) const {
  const grid::Patch& patch = decomposition_->patch();
  runtime::KernelArgs args;
  for (int f : b.field_index) args.fields.push_back(fields_->data(f));
  args.alloc = patch.alloc();
  args.origin = patch.spec.origin;
  for (int a = 0; a < 3; ++a) args.index_offset[a] = patch.owned.lo[a] - ghost_;
  args.spacing = patch.spec.spacing;
  args.time = time_;
  args.parameters = parameters_;
  return args;
}

void Simulation::run_region(const CalcBinding& b, const calc::Region& region,
                            const std::string& part) {
  if (region.empty()) return;
  runtime::KernelArgs args = kernel_args(b);
  args.lo = region.lo;
  args.hi = region.hi;
  args.region = part;
  b.kernel->run(args);
}

// Runs one calculation over its region: pointwise calculations on every allocated point (so
// initial data is defined on the outer boundary too), boundary calculations on the outer
// layers, the rest on the owned points. Outputs that later stencils or output read are
// exchanged. A calculation that reads ghosts while the evolved variables' are out of date
// exchanges them first (overlapping its interior when it is split).
void Simulation::run_calculation(const CalcBinding& b) {
  const grid::Patch& patch = decomposition_->patch();
  const int g = ghost_;
  if (!b.pointwise && ghosts_stale_) {
    if (b.split) {
      exchange_state(&b);
      return; // a right-hand side: nothing of its own to exchange
    }
    ensure_ghosts();
  }
  runtime::KernelArgs args = kernel_args(b);
  grid::Index3 n = patch.size();
  if (b.calc->on_boundary) {
    // One launch per outer face layer, over the whole allocated extent of the other axes.
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s < 2; ++s) {
        if (!patch.outer[a][s]) continue;
        args.lo = {0, 0, 0};
        args.hi = args.alloc;
        args.lo[a] = s == 0 ? 0 : g + n[a];
        args.hi[a] = s == 0 ? g : 2 * g + n[a];
        b.kernel->run(args);
      }
  } else if (b.pointwise) {
    args.lo = {0, 0, 0};
    args.hi = args.alloc;
    b.kernel->run(args);
  } else {
    args.lo = {g, g, g};
    args.hi = {g + n[0], g + n[1], g + n[2]};
    const bool timed = timing_step_ && b.rhs;
    runtime::ArraySpace& space = fields_->space();
    const int before = timed ? space.mark(runtime::ArraySpace::Queue::compute) : -1;
    b.kernel->run(args);
    if (timed) step_whole_rhs_.push_back({before, space.mark(runtime::ArraySpace::Queue::compute)});
  }
  if (!b.rhs && !b.outputs.empty()) {
    std::vector<double*> out;
    for (int f : b.outputs) out.push_back(fields_->data(f));
    decomposition_->sync(out, fields_->space());
  }
}

void Simulation::exchange_state(const CalcBinding* overlap) {
  using Queue = runtime::ArraySpace::Queue;
  runtime::ArraySpace& space = fields_->space();
  std::vector<double*> state;
  for (int e : evolved_) state.push_back(fields_->data(e));
  ExchangeMarks m;
  const bool timed = timing_step_;
  if (timed) m.before = space.mark(Queue::compute);
  decomposition_->begin_sync(state, space, timed);
  if (overlap) run_region(*overlap, overlap->regions.interior, "interior");
  if (timed) m.interior_done = overlap ? space.mark(Queue::compute) : m.before;
  decomposition_->finish_sync();
  ghosts_stale_ = false;
  if (flat_pending_) {
    flat_pending_ = false;
    boundary_state();
  }
  if (timed) m.joined = space.mark(Queue::compute);
  if (overlap)
    for (const calc::Region& box : overlap->regions.shell)
      run_region(*overlap, box, "boundary shell");
  if (timed) {
    m.shell_done = overlap ? space.mark(Queue::compute) : m.joined;
    const grid::Decomposition::Marks x = decomposition_->last_marks();
    m.started = x.started;
    m.finished = x.finished;
    step_exchanges_.push_back(m);
  }
}

void Simulation::ensure_ghosts() {
  if (ghosts_stale_) exchange_state(nullptr);
}

// A copy of the patch whose outer faces are only those with boundary condition `kind`, so
// the grid's boundary routines act on exactly those faces.
static grid::Patch faces_with(const grid::Patch& patch,
                              const std::array<std::array<grid::BoundaryKind, 2>, 3>& kinds,
                              grid::BoundaryKind kind, bool& any) {
  grid::Patch p = patch;
  any = false;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      p.outer[a][s] = patch.outer[a][s] && kinds[a][s] == kind;
      any = any || p.outer[a][s];
    }
  return p;
}

void Simulation::boundary_rhs() {
  ensure_ghosts(); // the radiative condition differences along the face
  const grid::Patch& patch = decomposition_->patch();
  bool any = false;
  grid::Patch radiative = faces_with(patch, boundary_, grid::BoundaryKind::Radiative, any);
  const double v0 = setup_.registry.get_real("Saguaro", "radiative_speed");
  runtime::ArraySpace& space = fields_->space();
  if (any)
    for (std::size_t v = 0; v < evolved_.size(); ++v)
      grid::apply_radiative_rhs(radiative, fields_->data(evolved_[v]), fields_->data(rhs_[v]),
                                evolved_u0_[v], v0, space);
  // Static faces keep their values; flat faces are overwritten after the update anyway.
  for (grid::BoundaryKind kind : {grid::BoundaryKind::Static, grid::BoundaryKind::Flat}) {
    grid::Patch p = faces_with(patch, boundary_, kind, any);
    if (any)
      for (int r : rhs_) grid::apply_static_rhs(p, fields_->data(r), space);
  }
}

void Simulation::boundary_state() {
  bool any = false;
  grid::Patch flat = faces_with(decomposition_->patch(), boundary_, grid::BoundaryKind::Flat, any);
  if (any)
    for (int e : evolved_) grid::apply_flat(flat, fields_->data(e), fields_->space());
}

} // namespace saguaro::host
