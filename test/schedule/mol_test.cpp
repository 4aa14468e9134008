// The method of lines: measured order of accuracy of every method on ODE systems whose
// right-hand sides read the state arrays, the times handed to calc_rhs and post_step, and
// the method names.
#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

using namespace saguaro::schedule;
using namespace saguaro::schedule::test;
using ::testing::HasSubstr;

namespace {

// An ODE system on `points` points of `vars` variables; `rhs(t, y, f, p)` fills f[v] at point p.
struct Problem {
  int vars = 1;
  std::size_t points = 1;
  std::function<double(int v, std::size_t p, double t)> exact;
  std::function<void(double t, const std::vector<double*>& y, const std::vector<double*>& f,
                     std::size_t p)>
      rhs;
};

// The largest error at t = 1 after integrating from t = 0 with `steps` steps.
double error_at_one(const Integrator& method, const Problem& problem, int steps) {
  std::vector<std::vector<double>> y(problem.vars, std::vector<double>(problem.points));
  std::vector<std::vector<double>> f(problem.vars, std::vector<double>(problem.points));
  MethodOfLines::System sys;
  for (int v = 0; v < problem.vars; ++v) {
    sys.state.push_back(y[v].data());
    sys.rhs.push_back(f[v].data());
    for (std::size_t p = 0; p < problem.points; ++p) y[v][p] = problem.exact(v, p, 0.0);
  }
  sys.points = problem.points;
  sys.calc_rhs = [&](double t) {
    for (std::size_t p = 0; p < problem.points; ++p) problem.rhs(t, sys.state, sys.rhs, p);
  };
  MethodOfLines mol(method, sys);
  double dt = 1.0 / steps;
  for (int n = 0; n < steps; ++n) mol.step(n * dt, dt);
  double err = 0;
  for (int v = 0; v < problem.vars; ++v)
    for (std::size_t p = 0; p < problem.points; ++p)
      err = std::max(err, std::abs(y[v][p] - problem.exact(v, p, 1.0)));
  return err;
}

Problem decay() { // y' = -y
  Problem pr;
  pr.exact = [](int, std::size_t, double t) { return std::exp(-t); };
  pr.rhs = [](double, const auto& y, const auto& f, std::size_t p) { f[0][p] = -y[0][p]; };
  return pr;
}

Problem oscillator() { // y1' = y2, y2' = -y1 at 5 points of different phase
  Problem pr;
  pr.vars = 2;
  pr.points = 5;
  pr.exact = [](int v, std::size_t p, double t) {
    double phase = 0.4 * double(p);
    return v == 0 ? std::sin(t + phase) : std::cos(t + phase);
  };
  pr.rhs = [](double, const auto& y, const auto& f, std::size_t p) {
    f[0][p] = y[1][p];
    f[1][p] = -y[0][p];
  };
  return pr;
}

Problem time_dependent() { // y' = cos(t) y, y = exp(sin t)
  Problem pr;
  pr.exact = [](int, std::size_t, double t) { return std::exp(std::sin(t)); };
  pr.rhs = [](double t, const auto& y, const auto& f, std::size_t p) {
    f[0][p] = std::cos(t) * y[0][p];
  };
  return pr;
}

class MolOrder : public ::testing::TestWithParam<std::string> {};

void expect_order(const std::string& name, const Problem& problem, const char* what) {
  const Integrator& method = find_integrator(name);
  const int steps = 20; // dt = 0.05, 0.025, 0.0125
  double e1 = error_at_one(method, problem, steps);
  double e2 = error_at_one(method, problem, 2 * steps);
  double e3 = error_at_one(method, problem, 4 * steps);
  double p12 = std::log2(e1 / e2), p23 = std::log2(e2 / e3);
  int expected = method.order;
  EXPECT_NEAR(p12, expected, 0.1) << what << ": errors " << e1 << " " << e2 << " " << e3;
  EXPECT_NEAR(p23, expected, 0.1) << what << ": errors " << e1 << " " << e2 << " " << e3;
}

TEST_P(MolOrder, Decay) {
  expect_order(GetParam(), decay(), "y' = -y");
}
TEST_P(MolOrder, Oscillator) {
  expect_order(GetParam(), oscillator(), "oscillator");
}
TEST_P(MolOrder, TimeDependent) {
  expect_order(GetParam(), time_dependent(), "y' = cos(t) y");
}

// Every integrator of the table (a new entry is tested by being there).
std::vector<std::string> integrator_names() {
  std::vector<std::string> names;
  for (const Integrator& i : integrators()) names.push_back(i.name);
  return names;
}
INSTANTIATE_TEST_SUITE_P(Methods, MolOrder, ::testing::ValuesIn(integrator_names()),
                         [](const auto& info) {
                           std::string name = info.param; // a test name takes no '-'
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The times of every calc_rhs and post_step call in one step from t = 2 with dt = 0.5.
struct Calls {
  std::vector<double> rhs, post;
};
Calls calls_of(const std::string& method) {
  double y = 1, f = 0;
  Calls calls;
  MethodOfLines::System sys;
  sys.state = {&y};
  sys.rhs = {&f};
  sys.points = 1;
  sys.calc_rhs = [&](double t) {
    calls.rhs.push_back(t);
    f = -y;
  };
  sys.post_step = [&](double t) { calls.post.push_back(t); };
  MethodOfLines mol(find_integrator(method), sys);
  mol.step(2.0, 0.5);
  return calls;
}

TEST(MolCalls, SubstepTimes) {
  using V = std::vector<double>;
  Calls icn = calls_of("ICN");
  EXPECT_EQ(icn.rhs, (V{2.0, 2.25, 2.25}));
  EXPECT_EQ(icn.post, (V{2.25, 2.25, 2.5}));
  Calls rk2 = calls_of("RK2");
  EXPECT_EQ(rk2.rhs, (V{2.0, 2.5}));
  EXPECT_EQ(rk2.post, (V{2.5, 2.5}));
  Calls rk3 = calls_of("RK3");
  EXPECT_EQ(rk3.rhs, (V{2.0, 2.5, 2.25}));
  EXPECT_EQ(rk3.post, (V{2.5, 2.25, 2.5}));
  Calls rk4 = calls_of("RK4");
  EXPECT_EQ(rk4.rhs, (V{2.0, 2.25, 2.25, 2.5}));
  EXPECT_EQ(rk4.post, (V{2.25, 2.25, 2.5, 2.5}));
}

TEST(MolCalls, PostStepChangesAreSeenByTheNextSubstep) {
  // A "boundary condition" that pins point 0 to 7 after every update: the final state keeps
  // it, and the interior point evolves freely.
  std::vector<double> y = {7.0, 1.0}, f(2);
  MethodOfLines::System sys;
  sys.state = {y.data()};
  sys.rhs = {f.data()};
  sys.points = 2;
  std::vector<double> seen;
  sys.calc_rhs = [&](double) {
    seen.push_back(y[0]);
    for (int p = 0; p < 2; ++p) f[p] = -y[p];
  };
  sys.post_step = [&](double) { y[0] = 7.0; };
  MethodOfLines mol(find_integrator("RK4"), sys);
  mol.step(0, 0.1);
  EXPECT_EQ(y[0], 7.0);
  EXPECT_EQ(seen, (std::vector<double>{7.0, 7.0, 7.0, 7.0}));
  EXPECT_NEAR(y[1], std::exp(-0.1), 1e-7);
}

TEST(MolCalls, LargeArraysMatchSinglePoints) {
  const std::size_t n = 100000;
  std::vector<double> y(n), f(n);
  for (std::size_t p = 0; p < n; ++p) y[p] = 1.0 + 1e-5 * double(p);
  MethodOfLines::System sys;
  sys.state = {y.data()};
  sys.rhs = {f.data()};
  sys.points = n;
  sys.calc_rhs = [&](double) {
    for (std::size_t p = 0; p < n; ++p) f[p] = -y[p];
  };
  MethodOfLines mol(find_integrator("RK3"), sys);
  for (int s = 0; s < 3; ++s) mol.step(0.1 * s, 0.1);
  for (std::size_t p : {std::size_t(0), n / 2, n - 1}) {
    double y0 = 1.0 + 1e-5 * double(p), f0 = 0;
    MethodOfLines::System one;
    one.state = {&y0};
    one.rhs = {&f0};
    one.points = 1;
    one.calc_rhs = [&](double) { f0 = -y0; };
    MethodOfLines single(find_integrator("RK3"), one);
    for (int s = 0; s < 3; ++s) single.step(0.1 * s, 0.1);
    EXPECT_DOUBLE_EQ(y[p], y0);
  }
}

TEST(MolSetup, InconsistentSystemsAreRefused) {
  double a = 0, b = 0;
  MethodOfLines::System sys;
  sys.state = {&a};
  sys.rhs = {};
  sys.points = 1;
  sys.calc_rhs = [](double) {};
  EXPECT_THROW(MethodOfLines(find_integrator("RK4"), sys), std::invalid_argument);
  sys.rhs = {nullptr};
  EXPECT_THROW(MethodOfLines(find_integrator("RK4"), sys), std::invalid_argument);
  sys.rhs = {&b};
  sys.calc_rhs = nullptr;
  EXPECT_THROW(MethodOfLines(find_integrator("RK4"), sys), std::invalid_argument);
}

TEST(MolMethods, NamesAndOrders) {
  EXPECT_EQ(find_integrator("ICN").name, "ICN");
  EXPECT_EQ(find_integrator("icn").name, "ICN");
  EXPECT_EQ(find_integrator("Rk2").name, "RK2");
  EXPECT_EQ(find_integrator("rk3").name, "RK3");
  EXPECT_EQ(find_integrator("RK4").name, "RK4");
  saguaro::support::InputError e = error_of([] { find_integrator("RK5"); });
  EXPECT_THAT(e.message(), HasSubstr("unknown MoL::ODE_Method 'RK5'"));
  EXPECT_THAT(notes_of(e), HasSubstr("did you mean"));
  EXPECT_EQ(find_integrator("ICN").order, 2);
  EXPECT_EQ(find_integrator("RK2").order, 2);
  EXPECT_EQ(find_integrator("RK3").order, 3);
  EXPECT_EQ(find_integrator("RK4").order, 4);
}

} // namespace
