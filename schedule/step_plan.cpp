// Building a step plan from an integrator and the schedule's functions, its text form, and
// the runner of its combinations (see step_plan.hpp).
#include "schedule/step_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

  std::vector<int> folded; // the variables this stage's folded launches combine

  void emit(StepOp::Kind kind, int function, bool carried_over = false) {
    StepOp op;
    op.kind = kind;
    op.stage = stage;
    op.time = time;
    op.function = function;
    op.carried = carried_over;
    if ((kind == StepOp::Kind::call || kind == StepOp::Kind::interior ||
         kind == StepOp::Kind::shell) &&
        folds(function)) {
      op.folded = true;
      for (int v : plan.functions[std::size_t(function)].produces)
        if (std::find(folded.begin(), folded.end(), v) == folded.end()) folded.push_back(v);
    }
    plan.ops.push_back(std::move(op));
  }
  bool folds(int f) const {
    if (stage < 1 || plan.integrator.stages[std::size_t(stage - 1)].writes_state()) return false;
    const StepFunction& fn = plan.functions[std::size_t(f)];
    return std::size_t(stage) < fn.folds.size() && fn.folds[std::size_t(stage)] &&
           !fn.produces.empty();
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
    op.folded_variables = folded;
    std::sort(op.folded_variables.begin(), op.folded_variables.end());
    plan.ops.push_back(std::move(op));
  }
  void walk(std::size_t rhs_functions) {
    for (const Combination& c : plan.integrator.start) combine(c);
    for (const Stage& s : plan.integrator.stages) {
      ++stage;
      folded.clear();
      time = s.rhs_time;
      for (std::size_t f = 0; f < rhs_functions; ++f) run(int(f));
      time = s.state_time;
      for (const Combination& c : s.updates) combine(c);
      for (const std::array<int, 2>& r : s.swaps) {
        StepOp op;
        op.kind = StepOp::Kind::swap;
        op.stage = stage;
        op.time = time;
        op.registers = r;
        plan.ops.push_back(std::move(op));
      }
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

namespace {

// The register the integrator's last stage swaps into y (the time-tiled step writes the new
// state there); -1 when there is none.
int next_state_register(const Integrator& integrator) {
  int next = -1;
  for (const std::array<int, 2>& w : integrator.stages.back().swaps)
    if (w[0] == kStateRegister || w[1] == kStateRegister)
      next = w[0] == kStateRegister ? w[1] : w[0];
  return next;
}

} // namespace

int time_tile_accumulator(const Integrator& integrator) {
  const int next = next_state_register(integrator);
  // The last one the entry names: RK4's acc (any but the next state's would do).
  for (int r = kFirstScratchRegister + int(integrator.scratch.size()) - 1;
       r >= kFirstScratchRegister; --r)
    if (r != next) return r;
  return -1;
}

StepPlan build_time_tiled_step_plan(const Integrator& integrator,
                                    const std::vector<StepFunction>& calc_rhs,
                                    const std::vector<StepFunction>& post_step, int tiled,
                                    const std::vector<int>& parts) {
  std::string why;
  std::optional<ButcherTableau> tableau = butcher_tableau(integrator, &why);
  if (!tableau || !tableau->sub_diagonal())
    throw std::invalid_argument(
        "step plan: no time-tiled step for " +
        (why.empty() ? integrator.name + ": its tableau is not sub-diagonal" : why));
  if (tiled < 0 || std::size_t(tiled) >= calc_rhs.size())
    throw std::invalid_argument("step plan: the time-tiled function is not a right-hand side");
  const int next = next_state_register(integrator);
  if (next < 0)
    throw std::invalid_argument("step plan: " + integrator.name +
                                "'s last stage swaps no register into the state");
  const int stages = int(integrator.stages.size());
  std::vector<int> counts = parts.empty() ? std::vector<int>{stages} : parts;
  int sum = 0;
  bool positive = true;
  for (int c : counts) {
    sum += c;
    positive = positive && c > 0;
  }
  if (!positive || sum != stages)
    throw std::invalid_argument(
        fmt::format("step plan: time-tiled parts of {} stages do not make {}'s {}",
                    fmt::join(counts, "+"), integrator.name, stages));
  const int acc = time_tile_accumulator(integrator);
  if (counts.size() > 1 && acc < 0)
    throw std::invalid_argument("step plan: " + integrator.name +
                                " has no register to carry the accumulator between parts");
  StepPlan plan;
  plan.integrator = integrator;
  plan.tableau = std::move(tableau);
  plan.functions = calc_rhs;
  plan.functions.insert(plan.functions.end(), post_step.begin(), post_step.end());
  int sync = -1;
  for (std::size_t f = 0; f < plan.functions.size(); ++f)
    if (plan.functions[f].role == StepFunction::Role::sync_evolved) sync = int(f);
  // A time-tiled kernel reads its tile's columns wrapped around the periodic box, never a
  // ghost: the exchange MoL_PostStep asks for is left pending, step after step, to the first
  // reader between steps (output, analysis, a checkpoint: Simulation::ensure_ghosts).
  plan.deferred_exchange = sync >= 0;
  plan.entry_pending = plan.deferred_exchange;
  Placer place(plan, sync, plan.entry_pending, false, -1);
  place.stage = stages;
  int first = 1;
  for (int count : counts) {
    StepOp op;
    op.kind = StepOp::Kind::time_tiled;
    op.first_stage = first;
    op.stage = first + count - 1;
    op.function = tiled;
    op.registers =
        op.stage == stages ? std::array<int, 2>{next, 0} : std::array<int, 2>{kRhsRegister, acc};
    if (first > 1) op.reads = {kRhsRegister, acc};
    plan.ops.push_back(op);
    first += count;
  }
  const Stage& last = integrator.stages.back();
  place.time = last.state_time;
  StepOp swap;
  swap.kind = StepOp::Kind::swap;
  swap.stage = place.stage;
  swap.time = last.state_time;
  swap.registers = {kStateRegister, next};
  plan.ops.push_back(swap);
  for (std::size_t f = calc_rhs.size(); f < plan.functions.size(); ++f) place.run(int(f));
  plan.exit_pending = place.pending;
  plan.exit_boundary_pending = place.boundary_pending;
  return plan;
}

void time_tile_coefficients(const ButcherTableau& tableau, double dt, std::vector<double>& a,
                            std::vector<double>& b) {
  a.clear();
  b.clear();
  for (std::size_t s = 0; s < tableau.b.size(); ++s) {
    if (s > 0) a.push_back(Coefficient{tableau.sub(int(s)), true}.value(dt));
    b.push_back(Coefficient{tableau.b[s], true}.value(dt));
  }
}

std::string StepPlan::describe(const StepOp& op) const {
  const std::string name = op.function >= 0 ? functions[std::size_t(op.function)].name : "";
  const std::string folded = op.folded ? " (and the stage's combinations)" : "";
  switch (op.kind) {
  case StepOp::Kind::combine: {
    std::string text = integrator.text(op.combination);
    if (!op.folded_variables.empty()) {
      std::string list;
      for (int v : op.folded_variables) list += (list.empty() ? "" : " ") + std::to_string(v);
      text += fmt::format(" (variables {} in their right-hand side)", list);
    }
    return text;
  }
  case StepOp::Kind::call: return name + folded;
  case StepOp::Kind::interior: return name + " interior" + folded;
  case StepOp::Kind::shell: return name + " shell" + folded;
  case StepOp::Kind::swap: return integrator.text(op.registers);
  case StepOp::Kind::exchange_begin: return "exchange begins (" + name + ")";
  case StepOp::Kind::exchange_finish: return "exchange finishes (" + name + ")";
  case StepOp::Kind::boundary_state: return name;
  case StepOp::Kind::time_tiled: {
    const bool ends = op.stage == int(integrator.stages.size());
    if (op.first_stage == 1 && ends)
      return fmt::format("{}, every stage time-tiled, new state to {}", name,
                         integrator.register_name(op.registers[0]));
    return fmt::format(
        "{}, stages {}-{} time-tiled{}, {} to {}{}", name, op.first_stage, op.stage,
        op.reads[0] >= 0 ? fmt::format(" from {} and {}", integrator.register_name(op.reads[0]),
                                       integrator.register_name(op.reads[1]))
                         : std::string(),
        ends ? "new state" : fmt::format("stage {}'s state", op.stage + 1),
        integrator.register_name(op.registers[0]),
        ends ? std::string()
             : fmt::format(", accumulator to {}", integrator.register_name(op.registers[1])));
  }
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
  if (exit_pending)
    out += tableau ? "  (the exchange is left to what reads ghosts between steps: no time-tiled "
                     "launch does)\n"
                   : "  (the last exchange is left to the next step)\n";
  return out;
}

double time_at(double t, double dt, const Rational& c) {
  return c.zero() ? t : t + Coefficient{c, true}.value(dt);
}

std::vector<double> stage_coefficients(const Stage& stage, double dt) {
  std::vector<double> out;
  for (const Combination& c : stage.updates)
    for (const Combination::Term& t : c.terms) out.push_back(t.a.value(dt));
  return out;
}

StepRunner::StepRunner(StepPlan plan, std::vector<std::vector<double*>> registers,
                       std::size_t points, runtime::ArraySpace& space, OnSwap on_swap)
    : plan_(std::move(plan)), space_(space), points_(points), on_swap_(std::move(on_swap)),
      registers_(std::move(registers)) {
  if (registers_.size() < 2 || registers_[0].size() != registers_[1].size())
    throw std::invalid_argument(fmt::format("step: {} state arrays but {} right-hand sides",
                                            registers_.empty() ? 0 : registers_[0].size(),
                                            registers_.size() < 2 ? 0 : registers_[1].size()));
  const std::size_t variables = registers_[0].size();
  const std::size_t wanted = kFirstScratchRegister + plan_.integrator.scratch.size();
  for (const auto& r : registers_)
    if (r.size() != variables)
      throw std::invalid_argument("step: every register needs one array per variable");
  if (registers_.size() > wanted)
    throw std::invalid_argument(
        fmt::format("step: {} registers given, the integrator has {}", registers_.size(), wanted));
  owned_from_ = registers_.size();
  bool any_swap = false;
  for (const Stage& s : plan_.integrator.stages) any_swap = any_swap || !s.swaps.empty();
  try {
    while (registers_.size() < wanted) {
      registers_.emplace_back();
      for (std::size_t v = 0; v < variables; ++v)
        registers_.back().push_back(space_.allocate(points_));
    }
    if (!on_swap_ && any_swap)
      for (std::size_t v = 0; v < variables; ++v) swap_scratch_.push_back(space_.allocate(points_));
  } catch (...) {
    for (std::size_t r = owned_from_; r < registers_.size(); ++r)
      for (double* a : registers_[r]) space_.release(a);
    for (double* a : swap_scratch_) space_.release(a);
    throw;
  }
}

// With swaps by renaming, the arrays move between registers, so the ones this runner
// allocated are wherever they are now: it releases what is in its own registers at the end,
// and the owner what is in its (the same set, permuted).
StepRunner::~StepRunner() {
  for (std::size_t r = owned_from_; r < registers_.size(); ++r)
    for (double* a : registers_[r]) space_.release(a);
  for (double* a : swap_scratch_) space_.release(a);
}

void StepRunner::combine(const StepOp& op, double dt) {
  const Combination& c = op.combination;
  std::vector<runtime::ArraySpace::Term> terms(c.terms.size());
  for (std::size_t v = 0; v < registers_[0].size(); ++v) {
    if (std::binary_search(op.folded_variables.begin(), op.folded_variables.end(), int(v)))
      continue;
    for (std::size_t i = 0; i < c.terms.size(); ++i)
      terms[i] = {c.terms[i].a.value(dt), registers_[std::size_t(c.terms[i].x)][v]};
    space_.linear_combination(registers_[std::size_t(c.target)][v], terms, points_);
  }
}

void StepRunner::swap(const std::array<int, 2>& r) {
  std::vector<double*>& a = registers_.at(std::size_t(r[0]));
  std::vector<double*>& b = registers_.at(std::size_t(r[1]));
  if (on_swap_) {
    std::swap(a, b);
    on_swap_(r[0], r[1]);
    return;
  }
  for (std::size_t v = 0; v < a.size(); ++v) {
    space_.copy(swap_scratch_[v], a[v], points_);
    space_.copy(a[v], b[v], points_);
    space_.copy(b[v], swap_scratch_[v], points_);
  }
}

void StepRunner::step(double t, double dt, const std::function<void(const StepOp&, double)>& act) {
  for (const StepOp& op : plan_.ops) {
    if (op.kind == StepOp::Kind::combine)
      combine(op, dt);
    else if (op.kind == StepOp::Kind::swap)
      swap(op.registers);
    else
      act(op, time_at(t, dt, op.time));
  }
}

} // namespace saguaro::schedule
