// What a time step is made of: the step plan and its operations, calculations launched over
// their regions, the evolved variables' ghost exchange, the outer boundary conditions.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace saguaro::host {

std::vector<double> Simulation::parameter_values() const {
  std::vector<double> values;
  const param::Registry& reg = setup_.registry;
  const std::string& thorn = setup_.program.thorn;
  // The thorn's own; the stage coefficients folded calculations take follow, set per launch.
  const auto& all = setup_.program.parameters;
  for (const calc::Parameter& p :
       std::vector<calc::Parameter>(all.begin(), all.begin() + folding_.first_coefficient)) {
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
  values.resize(all.size(), 0.0);
  return values;
}

runtime::KernelArgs Simulation::kernel_args(const CalcBinding& b) const {
  const grid::Patch& patch = decomposition_->patch();
  runtime::KernelArgs args;
  for (int f : b.field_index) args.fields.push_back(fields_->data(f));
  args.alloc = patch.alloc();
  args.pitch = patch.pitch();
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

// The boxes of a split launch's boundary shell, in as few launches as the backend can.
void Simulation::run_regions(const CalcBinding& b, const std::vector<calc::Region>& boxes,
                             const std::string& part) {
  runtime::KernelArgs args = kernel_args(b);
  args.region = part;
  b.kernel->run_boxes(args, boxes);
}

// Runs one calculation over its region: pointwise calculations on every allocated point (so
// initial data is defined on the outer boundary too), boundary calculations on the outer
// layers, the rest on the owned points. Outputs that later stencils or output read are
// exchanged. Between steps, a calculation that reads ghosts finishes the exchange the last
// step left pending; inside a step the plan has placed it.
void Simulation::run_calculation(const CalcBinding& b) {
  const grid::Patch& patch = decomposition_->patch();
  const int g = ghost_;
  if (!b.pointwise) ensure_ghosts();
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

// The step plan: MoL::ODE_Method's integrator over the functions of MoL_CalcRHS and
// MoL_PostStep (groups in them expanded) in schedule order. What the plan needs to know of
// each: the exchange and the boundaries on the state by their names, whether a function
// reads the evolved variables' ghosts (a stencil; Boundary_RHS, whose radiative condition
// differences along the faces) and whether a right-hand side is split around the exchange.
void Simulation::plan_step() {
  using Role = schedule::StepFunction::Role;
  std::vector<schedule::StepFunction> functions[2];
  std::vector<StepTarget> targets[2];
  std::function<void(const std::string&, int)> collect = [&](const std::string& group, int part) {
    for (const schedule::ScheduleItem* item : setup_.schedule.ordered(group)) {
      if (item->is_group) {
        collect(item->name, part);
        continue;
      }
      schedule::StepFunction f{item->name};
      StepTarget target{item, nullptr};
      const std::string name = support::lower(item->name);
      if (name == "driver_syncevolved") f.role = Role::sync_evolved;
      if (name == "boundary_applyouter") f.role = Role::boundary_state;
      if (name == "boundary_rhs") f.reads_ghosts = true;
      for (const auto& b : bindings_)
        if (support::lower(b->calc->name) == name) {
          target.binding = b.get();
          f.reads_ghosts = !b->pointwise;
          f.split = b->split;
        }
      functions[part].push_back(f);
      targets[part].push_back(target);
    }
  };
  collect("MoL_CalcRHS", 0);
  collect("MoL_PostStep", 1);
  const schedule::Integrator& integrator =
      schedule::find_integrator(setup_.registry.get_keyword("MoL", "ODE_Method"));
  // Folded right-hand sides: what they produce, and per stage their folded form's binding.
  for (int part = 0; part < 2; ++part)
    for (std::size_t i = 0; i < functions[part].size(); ++i) {
      StepTarget& target = targets[part][i];
      if (target.binding == nullptr) continue;
      auto forms = folding_.forms.find(int(calculation_of(target.binding)));
      if (forms == folding_.forms.end()) continue;
      functions[part][i].produces = folding_.produces.at(forms->first);
      functions[part][i].folds.assign(forms->second.size(), false);
      target.folded.assign(forms->second.size(), nullptr);
      for (std::size_t s = 0; s < forms->second.size(); ++s)
        if (forms->second[s] >= 0) {
          functions[part][i].folds[s] = true;
          target.folded[s] = bindings_[std::size_t(forms->second[s])].get();
        }
    }
  step_functions_[0] = functions[0];
  step_functions_[1] = functions[1];
  step_targets_ = targets[0];
  step_targets_.insert(step_targets_.end(), targets[1].begin(), targets[1].end());
  start_step(schedule::build_step_plan(integrator, functions[0], functions[1], exchange_overlap_));
}

void Simulation::start_step(schedule::StepPlan plan) {
  std::vector<std::vector<double*>> registers;
  for (const std::vector<int>& r : step_registers_) {
    registers.emplace_back();
    for (int f : r) registers.back().push_back(fields_->data(f));
  }
  step_ = std::make_unique<schedule::StepRunner>(
      std::move(plan), std::move(registers), decomposition_->patch().points(), fields_->space(),
      [this](int a, int b) {
        for (std::size_t v = 0; v < evolved_.size(); ++v)
          fields_->swap(step_registers_[std::size_t(a)][v], step_registers_[std::size_t(b)][v]);
      });
}

std::size_t Simulation::calculation_of(const CalcBinding* binding) const {
  std::size_t c = 0;
  while (c < bindings_.size() && bindings_[c].get() != binding) ++c;
  if (c == bindings_.size()) throw std::logic_error("a step function's binding is not the run's");
  return c;
}

// One operation of the step plan, booked to its scheduled function's timer (a split
// launch's shell and an exchange's end as parts of the call their start counted), with the
// step breakdown's timing marks.
void Simulation::run_step_op(const schedule::StepOp& op, double time) {
  using Kind = schedule::StepOp::Kind;
  time_ = time;
  if (op.kind == Kind::combine || op.kind == Kind::swap) return; // the StepRunner's
  if (op.carried && !step_carries_) {                            // done between the steps already
    exchange_skipped_ = exchange_skipped_ || op.kind == Kind::exchange_begin;
    return;
  }
  const StepTarget& target = step_targets_.at(std::size_t(op.function));
  const CalcBinding* b = target.binding;
  if (op.folded) { // its folded form, with this stage's coefficients
    b = target.folded.at(std::size_t(op.stage));
    const std::vector<double> c = schedule::stage_coefficients(
        step_->plan().integrator.stages.at(std::size_t(op.stage - 1)), dt_);
    std::copy(c.begin(), c.end(), parameters_.begin() + std::ptrdiff_t(folding_.first_coefficient));
  }
  schedule::Executor& ex = *executor_;
  runtime::ArraySpace& space = fields_->space();
  const bool timed = timing_step_ && !step_exchanges_.empty();
  switch (op.kind) {
  case Kind::combine:
  case Kind::swap: return;
  case Kind::call:
    joining_ = false;
    if (op.folded)
      ex.run_as(*target.item, [this, b] { run_calculation(*b); });
    else
      ex.run_as(*target.item, ex.bound(*target.item));
    return;
  case Kind::interior:
  case Kind::shell: {
    joining_ = false;
    const bool interior = op.kind == Kind::interior;
    // Around an exchange done between the steps, the parts are timed as a whole launch.
    const bool whole = timing_step_ && exchange_skipped_;
    ex.run_as(
        *target.item,
        [&] {
          const int before = whole ? space.mark(runtime::ArraySpace::Queue::compute) : -1;
          if (interior)
            run_region(*b, b->regions.interior, "interior");
          else
            run_regions(*b, b->regions.shell, "boundary shell");
          if (whole)
            step_whole_rhs_.push_back({before, space.mark(runtime::ArraySpace::Queue::compute)});
          else if (timed && !interior)
            step_exchanges_.back().shell_done = space.mark(runtime::ArraySpace::Queue::compute);
          interior_in_flight_ = interior && !exchange_skipped_;
        },
        interior ? 1 : 0);
    return;
  }
  case Kind::time_tiled:
    joining_ = false;
    ex.run_as(*target.item, [this, &op] { run_time_tile(op); });
    return;
  case Kind::exchange_begin:
    exchange_skipped_ = false;
    ex.run_as(*target.item, [this] { exchange_begin(); });
    return;
  case Kind::exchange_finish:
    ex.run_as(
        *target.item, [this] { exchange_finish(); }, 0);
    return;
  case Kind::boundary_state:
    ex.run_as(*target.item, [&] {
      boundary_state();
      // The flat boundaries the exchange held back belong to it (as the compute queue's wait).
      if (timed && joining_) {
        ExchangeMarks& m = step_exchanges_.back();
        m.joined = m.shell_done = space.mark(runtime::ArraySpace::Queue::compute);
      }
    });
    return;
  }
}

void Simulation::exchange_begin() {
  using Queue = runtime::ArraySpace::Queue;
  runtime::ArraySpace& space = fields_->space();
  std::vector<double*> state;
  for (int e : evolved_) state.push_back(fields_->data(e));
  ExchangeMarks m;
  if (timing_step_) m.before = space.mark(Queue::compute);
  decomposition_->begin_sync(state, space, timing_step_);
  if (timing_step_) step_exchanges_.push_back(m);
  interior_in_flight_ = false;
}

void Simulation::exchange_finish() {
  using Queue = runtime::ArraySpace::Queue;
  runtime::ArraySpace& space = fields_->space();
  ExchangeMarks* m = timing_step_ && !step_exchanges_.empty() ? &step_exchanges_.back() : nullptr;
  if (m) m->interior_done = interior_in_flight_ ? space.mark(Queue::compute) : m->before;
  decomposition_->finish_sync();
  interior_in_flight_ = false;
  joining_ = true;
  if (m) {
    m->joined = m->shell_done = space.mark(Queue::compute);
    const grid::Decomposition::Marks x = decomposition_->last_marks();
    m->started = x.started;
    m->finished = x.finished;
  }
}

void Simulation::ensure_ghosts() {
  if (!ghosts_pending_) return;
  ghosts_pending_ = false;
  exchange_begin();
  exchange_finish();
  if (boundary_pending_) {
    boundary_pending_ = false;
    boundary_state();
    if (timing_step_ && !step_exchanges_.empty()) {
      ExchangeMarks& m = step_exchanges_.back();
      m.joined = m.shell_done = fields_->space().mark(runtime::ArraySpace::Queue::compute);
    }
  }
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
