// Building a step plan from an integrator and the schedule's functions, its text form, and
// the runner of its combinations (see step_plan.hpp).
#include "schedule/step_plan.hpp"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace saguaro::schedule {

namespace {

// Walks the step in order, placing every operation; `pending` and `boundary_pending` say
// where the evolved variables' ghosts stand at each point of the step, so that each exchange
// and each outer boundary lands where it must.
struct Placer {
  Placer(StepPlan& p, int sync_function, bool pending_at_start, bool boundary_pending_at_start,
         int boundary_function)
      : plan(p), sync(sync_function), pending(pending_at_start),
        boundary_pending(boundary_pending_at_start), boundary(boundary_function),
        carried(pending_at_start) {}

  StepPlan& plan;
  int sync; // the sync_evolved function, if any
  bool pending, boundary_pending;
  int boundary; // the boundary_state function deferred behind the exchange
  bool carried; // what is pending was left by the previous step
  int stage = 0;
  Rational time;

  void emit(StepOp::Kind kind, int function, bool carried_over = false) {
    StepOp op;
    op.kind = kind;
    op.stage = stage;
    op.time = time;
    op.function = function;
    op.carried = carried_over;
    plan.ops.push_back(std::move(op));
  }
  // The pending exchange, around `f`'s interior when it is split; then the boundaries it held
  // back. Returns whether `f` ran (as interior and shell).
  bool finish_exchange(int f) {
    const bool split = f >= 0 && plan.functions[std::size_t(f)].split;
    emit(StepOp::Kind::exchange_begin, sync, carried);
    if (split) emit(StepOp::Kind::interior, f);
    emit(StepOp::Kind::exchange_finish, sync, carried);
    pending = false;
    if (boundary_pending) {
      emit(StepOp::Kind::boundary_state, boundary, carried);
      boundary_pending = false;
    }
    carried = false;
    if (split) emit(StepOp::Kind::shell, f);
    return split;
  }
  void run(int f) {
    const StepFunction& fn = plan.functions[std::size_t(f)];
    switch (fn.role) {
    case StepFunction::Role::sync_evolved:
      if (plan.deferred_exchange) {
        pending = true;
        carried = false;
      } else {
        emit(StepOp::Kind::exchange_begin, f);
        emit(StepOp::Kind::exchange_finish, f);
      }
      return;
    case StepFunction::Role::boundary_state:
      if (pending) {
        boundary_pending = true;
        boundary = f;
      } else {
        emit(StepOp::Kind::boundary_state, f);
      }
      return;
    case StepFunction::Role::call:
      if (fn.reads_ghosts && pending && finish_exchange(f)) return;
      emit(StepOp::Kind::call, f);
      return;
    }
  }
  void combine(const Combination& c) {
    StepOp op;
    op.kind = StepOp::Kind::combine;
    op.stage = stage;
    op.time = time;
    op.combination = c;
    plan.ops.push_back(std::move(op));
  }
  void walk(std::size_t rhs_functions) {
    for (const Combination& c : plan.integrator.start) combine(c);
    for (const Stage& s : plan.integrator.stages) {
      ++stage;
      time = s.rhs_time;
      for (std::size_t f = 0; f < rhs_functions; ++f) run(int(f));
      time = s.state_time;
      for (const Combination& c : s.updates) combine(c);
      for (std::size_t f = rhs_functions; f < plan.functions.size(); ++f) run(int(f));
    }
  }
};

std::string time_text(const Rational& c) {
  if (c.zero()) return "t";
  if (c == Rational{1, 1}) return "t + dt";
  return fmt::format("t + {} dt", c.text());
}

} // namespace

StepPlan build_step_plan(const Integrator& integrator, const std::vector<StepFunction>& calc_rhs,
                         const std::vector<StepFunction>& post_step, bool defer_exchange) {
  StepPlan plan;
  plan.integrator = integrator;
  plan.functions = calc_rhs;
  plan.functions.insert(plan.functions.end(), post_step.begin(), post_step.end());
  int sync = -1;
  for (std::size_t f = 0; f < plan.functions.size(); ++f) {
    const StepFunction& fn = plan.functions[f];
    if (fn.role != StepFunction::Role::call && f < calc_rhs.size())
      throw std::invalid_argument(fmt::format(
          "step plan: {} belongs to MoL_PostStep, not to the right-hand sides", fn.name));
    if (fn.role == StepFunction::Role::sync_evolved) sync = int(f);
  }
  plan.deferred_exchange = defer_exchange && sync >= 0;

  // The step begins where the previous one ended: walk it once from fresh ghosts to learn
  // what it leaves pending, then place it from there.
  Placer dry(plan, sync, false, false, -1);
  dry.walk(calc_rhs.size());
  Placer place(plan, sync, dry.pending, dry.boundary_pending, dry.boundary);
  plan.ops.clear();
  plan.entry_pending = dry.pending;
  place.walk(calc_rhs.size());
  plan.exit_pending = place.pending;
  plan.exit_boundary_pending = place.boundary_pending;
  return plan;
}

std::string StepPlan::describe(const StepOp& op) const {
  const std::string name = op.function >= 0 ? functions[std::size_t(op.function)].name : "";
  switch (op.kind) {
  case StepOp::Kind::combine: return integrator.text(op.combination);
  case StepOp::Kind::call: return name;
  case StepOp::Kind::interior: return name + " interior";
  case StepOp::Kind::shell: return name + " shell";
  case StepOp::Kind::exchange_begin: return "exchange begins (" + name + ")";
  case StepOp::Kind::exchange_finish: return "exchange finishes (" + name + ")";
  case StepOp::Kind::boundary_state: return name;
  }
  return "?";
}

std::string StepPlan::text() const {
  std::string out = fmt::format("step plan: {}, {} stage{}, scratch {}{}\n", integrator.name,
                                integrator.stages.size(), integrator.stages.size() == 1 ? "" : "s",
                                integrator.scratch.size(),
                                deferred_exchange ? "; exchange deferred to its first reader" : "");
  for (const StepOp& op : ops)
    out += fmt::format("  {} {:<12} {}{}\n", op.stage, time_text(op.time), describe(op),
                       op.carried ? " [unless done since the last step]" : "");
  if (exit_pending) out += "  (the last exchange is left to the next step)\n";
  return out;
}

double time_at(double t, double dt, const Rational& c) {
  return c.zero() ? t : t + Coefficient{c, true}.value(dt);
}

StepRunner::StepRunner(StepPlan plan, std::vector<double*> state, std::vector<double*> rhs,
                       std::size_t points, runtime::ArraySpace& space)
    : plan_(std::move(plan)), space_(space), points_(points) {
  if (state.size() != rhs.size())
    throw std::invalid_argument(
        fmt::format("step: {} state arrays but {} right-hand sides", state.size(), rhs.size()));
  registers_.push_back(std::move(state));
  registers_.push_back(std::move(rhs));
  const std::size_t variables = registers_[0].size();
  try {
    for (std::size_t r = 0; r < plan_.integrator.scratch.size(); ++r) {
      registers_.emplace_back();
      for (std::size_t v = 0; v < variables; ++v) {
        scratch_.push_back(space_.allocate(points_));
        registers_.back().push_back(scratch_.back());
      }
    }
  } catch (...) {
    for (double* s : scratch_) space_.release(s);
    throw;
  }
}

StepRunner::~StepRunner() {
  for (double* s : scratch_) space_.release(s);
}

void StepRunner::combine(const Combination& c, double dt) {
  std::vector<runtime::ArraySpace::Term> terms(c.terms.size());
  for (std::size_t v = 0; v < registers_[0].size(); ++v) {
    for (std::size_t i = 0; i < c.terms.size(); ++i)
      terms[i] = {c.terms[i].a.value(dt), registers_[std::size_t(c.terms[i].x)][v]};
    space_.linear_combination(registers_[std::size_t(c.target)][v], terms, points_);
  }
}

void StepRunner::step(double t, double dt, const std::function<void(const StepOp&, double)>& act) {
  for (const StepOp& op : plan_.ops) {
    if (op.kind == StepOp::Kind::combine)
      combine(op.combination, dt);
    else
      act(op, time_at(t, dt, op.time));
  }
}

} // namespace saguaro::schedule
