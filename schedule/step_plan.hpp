// The time step as a plan: the operations of one step of the method of lines, in the order
// they run, decided once at setup and carried out by the driver (schedule::StepRunner runs
// the integrator's combinations and hands every other operation to the driver).
//
// Per stage of the integrator: the functions of MoL_CalcRHS (right-hand-side calculations,
// each whole or split into an interior and a boundary shell around the evolved variables'
// ghost exchange; Boundary_RHS), the stage's linear combinations, then the functions of
// MoL_PostStep (the ghost exchange, the outer boundaries on the state, post-step
// calculations). With a deferred exchange (a split right-hand side), the exchange that
// MoL_PostStep asks for begins only where its ghosts are first read, so that the next
// right-hand side's interior runs while the messages are in flight, and the outer boundaries
// that read the ghosts follow its end. The plan is the one place where the step's order is
// decided: fusing or reordering operations means changing the list, not the driver.
//
// A plan's start and end: with a deferred exchange, the last stage's exchange is left to the
// next step (exit_pending), and the plan begins by finishing it; code between steps that
// reads the ghosts finishes it itself (the driver keeps that one flag), and then the driver
// skips the plan's operations marked `carried`.
#pragma once

#include "runtime/array_space.hpp"
#include "schedule/integrators.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace saguaro::schedule {

// A scheduled function of MoL_CalcRHS or MoL_PostStep as the plan sees it.
struct StepFunction {
  enum class Role {
    call,           // runs as it is (a calculation, Boundary_RHS, anything else)
    sync_evolved,   // the evolved variables' ghost exchange (Driver_SyncEvolved)
    boundary_state, // the outer boundaries on the state, after the exchange (Boundary_ApplyOuter)
  };
  std::string name; // as scheduled: the timer its operations are booked to
  Role role = Role::call;
  bool reads_ghosts = false; // reads the evolved variables at neighbouring points
  bool split = false;        // a right-hand side run as interior + shell around the exchange
};

struct StepOp {
  enum class Kind {
    combine,         // a linear combination of the integrator, over every evolved variable
    call,            // functions[function], whole
    interior,        // functions[function]'s interior (the exchange in flight)
    shell,           // functions[function]'s boundary shell (after the exchange)
    exchange_begin,  // the evolved variables' ghost exchange starts (functions[function]
    exchange_finish, //   is the sync_evolved function, whose timer it is booked to)
    boundary_state,  // functions[function] (boundary_state) on the new ghosts
  };
  Kind kind = Kind::call;
  int stage = 0;     // 0: before the first stage; 1..stages
  Rational time;     // the state it acts on is at t + time dt
  int function = -1; // index into StepPlan::functions (not for combine)
  // Finishes the exchange (or applies the boundaries) the previous step left pending: a
  // driver skips it when something between the steps has done that already.
  bool carried = false;
  Combination combination; // combine
};

struct StepPlan {
  Integrator integrator;
  std::vector<StepFunction> functions; // MoL_CalcRHS's, then MoL_PostStep's, in order
  std::vector<StepOp> ops;
  bool deferred_exchange = false; // exchanges begin where their ghosts are first read
  // The step begins by finishing the exchange (and boundaries) the previous one left.
  bool entry_pending = false;
  // The step ends with the evolved variables' exchange (and the boundaries that follow it)
  // not yet done; the plan begins by doing it.
  bool exit_pending = false;
  bool exit_boundary_pending = false;

  // One line per operation: stage, time, what (for tests, the banner and verbose logs).
  std::string text() const;
  std::string describe(const StepOp& op) const;
};

// The plan of one step of `integrator` with the functions of MoL_CalcRHS and MoL_PostStep in
// their schedule order. `defer_exchange`: begin each exchange where its ghosts are first read
// (around a split right-hand side's interior); else where MoL_PostStep asks for it.
StepPlan build_step_plan(const Integrator& integrator, const std::vector<StepFunction>& calc_rhs,
                         const std::vector<StepFunction>& post_step, bool defer_exchange);

// t + c dt, with t itself for c = 0 and the same rounding as the coefficients.
double time_at(double t, double dt, const Rational& c);

// Carries out a plan's combinations on the evolved variables' arrays (state and right-hand
// side per variable, `points` each, in `space`); the integrator's scratch registers are
// allocated here once and released by the destructor.
class StepRunner {
public:
  StepRunner(StepPlan plan, std::vector<double*> state, std::vector<double*> rhs,
             std::size_t points, runtime::ArraySpace& space);
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // One step from t to t + dt: each combination here, every other operation through
  // act(op, time of the state it acts on).
  void step(double t, double dt, const std::function<void(const StepOp&, double)>& act);

  const StepPlan& plan() const { return plan_; }

private:
  void combine(const Combination& c, double dt);

  StepPlan plan_;
  runtime::ArraySpace& space_;
  std::size_t points_;
  std::vector<std::vector<double*>> registers_; // [register][variable]
  std::vector<double*> scratch_;                // from space_, released by the destructor
};

} // namespace saguaro::schedule
