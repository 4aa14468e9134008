// The method of lines' integrators as data: each one a short table of linear combinations
// over per-variable registers, the way CarpetX's ODESolvers write them over one generic
// y <- sum_i a_i x_i (runtime::ArraySpace::linear_combination).
//
// The registers of an integrator are, per evolved variable, arrays of the patch: y (the state,
// which every right-hand side reads and every post-step acts on), k (the right-hand side the
// last stage computed) and scratch arrays the integrator names itself (y0, acc, ...). A stage
// evaluates k = f(t + c dt, y), then runs its combinations; after them y is the state at
// t + c' dt (the stage's `state_time`), on which the post-step (ghost exchange, boundaries)
// runs. The integrator's scratch is exactly the registers it names, so memory is visible in
// the table: RK4 needs y0 and one accumulator.
//
// The table (integrators.cpp) is written in the notation of the combinations themselves:
//   "acc = acc + 2 k; y = y0 + 1/2 dt k"
// a term is [rational] [dt] register, rationals p/q, terms joined by + or -. Adding an
// integrator is adding one entry there (and its keyword line in param/builtin/MoL.ccl, which a
// test holds to the table).
//
// A stage may end by exchanging registers: "swap y y1" makes the array that was y1 the state
// and the old state y1, without moving a byte. The table's methods use it so that no stage
// writes the array its right-hand side reads (the new state goes to y1, then the two swap):
// a stage's combinations are then pointwise in registers the right-hand side only reads at
// the point, so the right-hand-side kernel itself can compute them where it stores k (the
// step plan's folding, step_plan.hpp), and RK4 moves 12 arrays per variable and step instead
// of 25 (its entry's combinations: integrators.cpp).
//
// Low-storage Runge-Kutta fits the same form with one scratch register: Williamson's 2N
// scheme (as Carpenter & Kennedy's five-stage fourth-order one) is, per stage,
//   "dk = A_i dk + dt k; y = y + B_i dk"   at  c_i  with state time c_{i+1}
// (the combination may write a register it reads). test/schedule/integrators_test.cpp runs
// that scheme from a table entry of its own; its stages write y, so they are never folded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::schedule {

// A rational number num/den (den > 0): the tableaus' coefficients and times, exact in the
// table and in the text form.
struct Rational {
  std::int64_t num = 0, den = 1;
  bool zero() const { return num == 0; }
  std::string text() const; // "0", "2", "-1/3"
  bool operator==(const Rational&) const = default;
};

// A coefficient: a rational, times dt when `dt`. Its value is (dt * num) / den, so that the
// common dt/2, dt/6 round as the hand-written forms did.
struct Coefficient {
  Rational r{1, 1};
  bool dt = false;
  double value(double step) const;
  std::string text() const; // "1/2 dt", "dt", "2", "-1/3"
  bool operator==(const Coefficient&) const = default;
};

// Register numbers: the state, the right-hand side, then the integrator's scratch registers.
enum : int { kStateRegister = 0, kRhsRegister = 1, kFirstScratchRegister = 2 };

// target = sum terms[i].a * register terms[i].x, added in order.
struct Combination {
  struct Term {
    Coefficient a;
    int x = kStateRegister;
    bool operator==(const Term&) const = default;
  };
  int target = kStateRegister;
  std::vector<Term> terms;
  bool operator==(const Combination&) const = default;
};

struct Stage {
  Rational rhs_time;                     // k = f(t + rhs_time dt, y)
  std::vector<Combination> updates;      // then these
  std::vector<std::array<int, 2>> swaps; // then these register exchanges, in order
  Rational state_time;                   // the time of y after them (the post-step's)
  // Whether a combination writes y, the array the right-hand side read at neighbours: such a
  // stage cannot be computed by the right-hand-side kernel itself.
  bool writes_state() const;
};

struct Integrator {
  std::string name;                 // MoL::ODE_Method's keyword
  int order = 0;                    // of accuracy
  std::string description;          // as in param/builtin/MoL.ccl
  std::vector<std::string> scratch; // register names from kFirstScratchRegister on
  std::vector<Combination> start;   // before the first stage (y0 = y)
  std::vector<Stage> stages;
  // "y0", "k", ... for register r.
  std::string register_name(int r) const;
  // "acc = acc + 2 k"
  std::string text(const Combination& c) const;
  // "swap y y1"
  std::string text(const std::array<int, 2>& swap) const;
};

// The Butcher tableau an integrator's table computes, read off its combinations by running them
// symbolically: every register is a linear combination of the step's initial state y_n and the
// stages' dt k_s, so the state each right-hand side reads is y_n + dt sum_j a[s][j] k_j and the
// state after the last stage is y_n + dt sum_s b[s] k_s. Consumers that evaluate the step other
// than by the table (the time-tiled step, calc/time_tile.hpp) take their coefficients from here,
// so that the table stays the one place an integrator is written.
struct ButcherTableau {
  std::vector<std::vector<Rational>> a; // [stage][earlier stage], stage 0's empty
  std::vector<Rational> b;              // per stage
  std::vector<Rational> c;              // per stage: the right-hand side's time (Stage::rhs_time)
  // Whether a[s][j] = 0 except j = s - 1: each stage reads y_n + a_s dt k_{s-1} (RK4, the
  // midpoint rule, Heun, ICN, Euler), so that one accumulator carries the step.
  bool sub_diagonal() const;
  Rational sub(int stage) const; // a[stage][stage - 1]; stage >= 1
};

// The tableau of `integrator`; when its stages are not an explicit Runge-Kutta step of y_n (a
// register read before the step writes it, a state that is not y_n plus dt k terms), none, and
// `why` (if given) says where.
std::optional<ButcherTableau> butcher_tableau(const Integrator& integrator,
                                              std::string* why = nullptr);

// One entry of the table in its notation: stages are {rhs time, combinations, state time}.
struct IntegratorText {
  const char* name;
  int order;
  const char* description;
  const char* start;
  struct StageText {
    const char* rhs_time;
    const char* updates;
    const char* state_time;
  };
  std::vector<StageText> stages;
};

// Reads an entry; throws std::invalid_argument naming the integrator and the mistake (a bad
// term, more terms than ArraySpace::max_terms, a register read before it is written, the
// right-hand side written).
Integrator parse_integrator(const IntegratorText& text);

// The table: ICN, RK2, RK3, RK4.
const std::vector<Integrator>& integrators();
// By MoL::ODE_Method's keyword, ignoring case; throws support::InputError (with "did you mean").
const Integrator& find_integrator(const std::string& name);

} // namespace saguaro::schedule
