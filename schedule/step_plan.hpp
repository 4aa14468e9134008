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
// Folding: a right-hand side that alone computes the k of some evolved variables (nothing else
// in the step reads or changes those k) can compute a stage's combinations for them itself,
// where it would store k, when the stage writes no array its right-hand side reads (the
// table's methods write the new state to y1 and swap). The plan marks such launches `folded`
// and leaves those variables out of the stage's combinations; the driver launches the
// calculation's folded form (schedule/step_fold.hpp), with the stage's coefficients.
//
// A plan's start and end: with a deferred exchange, the last stage's exchange is left to the
// next step (exit_pending), and the plan begins by finishing it; code between steps that
// reads the ghosts finishes it itself (the driver keeps that one flag), and then the driver
// skips the plan's operations marked `carried`.
#pragma once

#include "runtime/array_space.hpp"
#include "schedule/integrators.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
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
  // The evolved variables (indices) whose k this function alone computes, and per stage
  // (1..stages; index 0 unused) whether it can compute the stage's combinations for them.
  std::vector<int> produces;
  std::vector<bool> folds;
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
    swap,            // the integrator's registers `registers` exchange their arrays
    time_tiled,      // functions[function] evaluates stages first_stage..stage of the step
                     //   on tiles kept on chip (all of them, or a part), writing the new state
                     //   (or stage+1's state) to register registers[0]
  };
  Kind kind = Kind::call;
  int stage = 0;     // 0: before the first stage; 1..stages
  Rational time;     // the state it acts on is at t + time dt
  int function = -1; // index into StepPlan::functions (not for combine)
  // Finishes the exchange (or applies the boundaries) the previous step left pending: a
  // driver skips it when something between the steps has done that already.
  bool carried = false;
  Combination combination; // combine
  // combine: variables a folded launch of the stage has combined already (skipped here).
  std::vector<int> folded_variables;
  // call, interior, shell: the function computes the stage's combinations (for its
  // `produces`) where it stores k.
  bool folded = false;
  std::array<int, 2> registers{0, 0}; // swap; time_tiled: registers[0], and [1] the
                                      //   accumulator a part that does not end the step writes
  // time_tiled: the first stage it evaluates, and a later part's inputs: the registers holding
  // that stage's state and the accumulator ({-1, -1} for a part starting the step).
  int first_stage = 1;
  std::array<int, 2> reads{-1, -1};
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
  // A time-tiled plan's tableau (its stages' coefficients, for the time_tiled operation).
  std::optional<ButcherTableau> tableau;

  // One line per operation: stage, time, what (for tests, the banner and verbose logs).
  std::string text() const;
  std::string describe(const StepOp& op) const;
};

// The plan of one step of `integrator` with the functions of MoL_CalcRHS and MoL_PostStep in
// their schedule order. `defer_exchange`: begin each exchange where its ghosts are first read
// (around a split right-hand side's interior); else where MoL_PostStep asks for it.
StepPlan build_step_plan(const Integrator& integrator, const std::vector<StepFunction>& calc_rhs,
                         const std::vector<StepFunction>& post_step, bool defer_exchange);

// The time-tiled step (Saguaro::time_tile, calc/time_tile.hpp): calc_rhs[tiled] evaluates every
// stage on tiles kept on chip and writes the new state to the register the integrator's last
// stage swaps into y; then that swap, and MoL_PostStep's functions once (the exchange and the
// boundaries, at t + dt). The other right-hand-side functions must have nothing to do (the
// host's decision: Boundary_RHS on a periodic box). `parts`: the stages per kernel in order
// (empty: all in one); a part that does not end the step writes the next stage's state to the
// right-hand side's register (which a time-tiled step has no other use for) and the accumulator
// to time_tile_accumulator's register, where the next part reads them. Throws
// std::invalid_argument when the integrator's tableau is not sub-diagonal, its last stage swaps
// no register into y, the parts do not add up to its stages, or they need an accumulator
// register it does not have.
StepPlan build_time_tiled_step_plan(const Integrator& integrator,
                                    const std::vector<StepFunction>& calc_rhs,
                                    const std::vector<StepFunction>& post_step, int tiled,
                                    const std::vector<int>& parts = {});

// The register that carries the accumulator between the parts of a time-tiled step: the last
// scratch register the last stage does not swap into y (RK4: acc); -1 when there is none (then a
// step is time-tiled in one kernel only).
int time_tile_accumulator(const Integrator& integrator);

// A time-tiled step's coefficients times dt: a[s] = a_{s+2,s+1} dt, b[s] = b_{s+1} dt, rounded
// as Coefficient::value rounds the table's.
void time_tile_coefficients(const ButcherTableau& tableau, double dt, std::vector<double>& a,
                            std::vector<double>& b);

// t + c dt, with t itself for c = 0 and the same rounding as the coefficients.
double time_at(double t, double dt, const Rational& c);

// The coefficients of a stage's combinations in the order a folded calculation takes them
// (every term of every combination, in order: calc::fold_stores's parameters).
std::vector<double> stage_coefficients(const Stage& stage, double dt);

// Carries out a plan's combinations and swaps on the evolved variables' arrays: `registers`
// [register][variable] (state and right-hand side, then as many of the integrator's scratch
// registers as the owner keeps; the others are allocated here from `space` and released by
// the destructor), `points` each.
//
// A swap exchanges two registers' arrays. With `on_swap`, the runner's table changes and
// on_swap(a, b) tells the owner, whose own table must follow (the arrays it hands to kernels
// then are the registers' current ones). Without it (an owner whose arrays cannot move, like
// MethodOfLines), the arrays' contents are exchanged instead, by copies.
class StepRunner {
public:
  using OnSwap = std::function<void(int register_a, int register_b)>;
  StepRunner(StepPlan plan, std::vector<std::vector<double*>> registers, std::size_t points,
             runtime::ArraySpace& space, OnSwap on_swap = {});
  StepRunner(StepPlan plan, std::vector<double*> state, std::vector<double*> rhs,
             std::size_t points, runtime::ArraySpace& space)
      : StepRunner(std::move(plan), {std::move(state), std::move(rhs)}, points, space) {}
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // One step from t to t + dt: each combination here, every other operation through
  // act(op, time of the state it acts on).
  void step(double t, double dt, const std::function<void(const StepOp&, double)>& act);

  const StepPlan& plan() const { return plan_; }
  // Register r's array of variable v now.
  double* array(int r, std::size_t v) const { return registers_.at(std::size_t(r)).at(v); }

private:
  void combine(const StepOp& op, double dt);
  void swap(const std::array<int, 2>& registers);

  StepPlan plan_;
  runtime::ArraySpace& space_;
  std::size_t points_;
  OnSwap on_swap_;
  std::vector<std::vector<double*>> registers_; // [register][variable]
  std::size_t owned_from_ = 0;                  // registers from here on are space_'s
  std::vector<double*> swap_scratch_;           // copy swaps' temporary, per variable
};

} // namespace saguaro::schedule
