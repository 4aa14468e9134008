// Tests of the reference interpreter (calc/interpreter.hpp): point evaluation against
// hand-computed values, GridBlock layout, run_calculation, and the convergence of the wave
// equation's right-hand side.
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calc/interpreter.hpp"
#include "calc/lower.hpp"
#include "support.hpp"

namespace saguaro::calc {
namespace {

constexpr double kPi = std::numbers::pi;

using namespace saguaro::test;

// Index of `gf`'s store in the last stage.
std::size_t store_position(const Calculation& c, const std::string& gf) {
  int index = c.find_grid_function(gf);
  const auto& stores = c.stages.back().stores;
  for (std::size_t i = 0; i < stores.size(); ++i)
    if (stores[i].grid_function == index) return i;
  throw std::runtime_error("no store of " + gf);
}

// A thorn whose one calculation, `c`, sets `d` from `f` by `equation`, lowered at `fd_order`.
Program lower_derivative(const std::string& equation, int fd_order) {
  const std::string head = R"(
begin thorn T
  begin variables
    f d
  end variables
  begin calculation c
)";
  return lower_text(head + "    " + equation + "\n  end calculation\nend thorn\n", fd_order);
}

// ============================================================== point evaluation

const char* kThorn = R"(
begin thorn InterpTest
  begin parameters
    p : real "p", default: 3
    q : real "q", default: 0.5
  end parameters
  begin variables
    a b f r1 r2 r3 r4 r5 r6 r7 r8
  end variables
  begin derivatives
    Dsp u_i = u_(i+1)
    Dsm u_i = u_(i-1)
  end derivatives
  begin calculation values
    r1 = p*x + q*t**2 + dx*y - 3*sin(z) + dy*dz
    r2 = a / (b + p) + sqrt(a) + min(a, b) * max(a, b) + abs(b) + sign(b - a)
    r3 = pow(a, p) + a**0.5 + a**-2 + atan2(a, b) + a % p + exp(q) * log(a)
    r4 = x**2.5 + cosh(q) - tanh(b) + E**q
    r5 = Dsp_1 x + 10 Dsp_2 x + 100 Dsm_3 z + 1000 Dsp_2 y
    r6 = Dsm_1 Dsp_2 f + 10 Dsp_3 f
    r7 = D_1 x + D_2 y + D_3 z
    r8 = -a**2 / (2*b) + (1/2) (a + b)
  end calculation
end thorn
)";

PointInputs point_inputs(const Program& prog, std::map<std::string, double> at_point,
                         const Calculation& c) {
  PointInputs in;
  in.coordinate = {0.25, -1.5, 0.75};
  in.spacing = {0.1, 0.2, 0.4};
  in.time = 2.0;
  in.parameters = default_parameters(prog);
  // f is linear so loads at offsets are checkable: f = 1 + 2 x + 3 y + 5 z at the shifted point.
  in.load = [&c, at_point, in](int gf, const Offset& o) -> double {
    const std::string& name = c.grid_functions.at(gf).name;
    if (name == "f") {
      double x = in.coordinate[0] + o[0] * in.spacing[0];
      double y = in.coordinate[1] + o[1] * in.spacing[1];
      double z = in.coordinate[2] + o[2] * in.spacing[2];
      return 1 + 2 * x + 3 * y + 5 * z;
    }
    if (o != Offset{0, 0, 0}) throw std::runtime_error("unexpected offset load of " + name);
    return at_point.at(name);
  };
  return in;
}

TEST(Interpreter, HandComputedValues) {
  Program prog = lower_text(kThorn);
  const Calculation& c = prog.calculations.at(0);
  Interpreter interp(c);
  const double a = 4, b = -2, p = 3, q = 0.5;
  PointInputs in = point_inputs(prog, {{"a", a}, {"b", b}}, c);
  const double x = 0.25, y = -1.5, z = 0.75, t = 2.0, dx = 0.1, dy = 0.2, dz = 0.4;
  std::vector<double> out = interp.evaluate(0, in);
  ASSERT_EQ(out.size(), 8u);
  auto at = [&](const char* name) { return out.at(store_position(c, name)); };

  EXPECT_NEAR(at("r1"), p * x + q * t * t + dx * y - 3 * std::sin(z) + dy * dz, 1e-14);
  // 4/1 + 2 + (-2)(4) + 2 + (-1)
  EXPECT_NEAR(at("r2"), a / (b + p) + 2 + -8 + 2 - 1, 1e-14);
  EXPECT_NEAR(at("r3"), 64 + 2 + 1.0 / 16 + std::atan2(a, b) + 1 + std::exp(q) * std::log(a),
              1e-13);
  EXPECT_NEAR(at("r4"), std::pow(x, 2.5) + std::cosh(q) - std::tanh(b) + std::exp(q), 1e-14);
  // Shifted coordinates move only along their own axis.
  EXPECT_NEAR(at("r5"), (x + dx) + 10 * x + 100 * (z - dz) + 1000 * (y + dy), 1e-12);
  auto f = [](double X, double Y, double Z) { return 1 + 2 * X + 3 * Y + 5 * Z; };
  EXPECT_NEAR(at("r6"), f(x - dx, y + dy, z) + 10 * f(x, y, z + dz), 1e-12);
  EXPECT_NEAR(at("r7"), 3.0, 1e-12);
  EXPECT_NEAR(at("r8"), -16.0 / -4.0 + 1.0, 1e-14);

  // evaluate_node agrees with evaluate for every store.
  for (const Store& s : c.stages.back().stores)
    EXPECT_EQ(interp.evaluate_node(s.value, in),
              out.at(store_position(c, c.grid_functions[s.grid_function].name)));

  // Parameters come from PointInputs, in Program::parameters order.
  in.parameters = {1.0, 2.0};
  out = interp.evaluate(0, in);
  EXPECT_NEAR(at("r1"), 1.0 * x + 2.0 * t * t + dx * y - 3 * std::sin(z) + dy * dz, 1e-13);
  EXPECT_NEAR(at("r3"),
              std::pow(a, 1.0) + 2 + 1.0 / 16 + std::atan2(a, b) + 0 + std::exp(2.0) * std::log(a),
              1e-12);
}

TEST(Interpreter, LoadsAreRequestedAtTheStencilOffsets) {
  Program prog = lower_derivative("d = D_12 f", 2);
  const Calculation& c = prog.calculations.at(0);
  Interpreter interp(c);
  std::map<Offset, int> requested;
  PointInputs in;
  in.spacing = {0.5, 0.25, 1.0};
  in.load = [&](int, const Offset& o) {
    ++requested[o];
    return double(o[0] * 10 + o[1]); // f(i, j) = 10 i + j: D_12 f = 0
  };
  std::vector<double> out = interp.evaluate(0, in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0], 0.0, 1e-14);
  EXPECT_EQ(requested.size(), 4u);
  for (const Offset& o : std::vector<Offset>{{1, 1, 0}, {1, -1, 0}, {-1, 1, 0}, {-1, -1, 0}})
    EXPECT_EQ(requested[o], 1) << o[0] << "," << o[1];
  // f = i*j (grid indices): D_12 f = 1 / (hx hy) with the order-2 product stencil.
  in.load = [](int, const Offset& o) { return double(o[0] * o[1]); };
  EXPECT_NEAR(interp.evaluate(0, in).at(0), 1.0 / (0.5 * 0.25), 1e-12);
}

// ============================================================== GridBlock and run_calculation

TEST(GridBlockTest, LayoutAndCoordinates) {
  GridBlock block({4, 3, 2}, 1, 2);
  ASSERT_EQ(block.data.size(), 2u);
  EXPECT_EQ(block.data[0].size(), std::size_t(6 * 5 * 4));
  EXPECT_EQ(block.linear(-1, -1, -1), 0u);
  EXPECT_EQ(block.linear(0, -1, -1), 1u);
  EXPECT_EQ(block.linear(-1, 0, -1), 6u);
  EXPECT_EQ(block.linear(-1, -1, 0), 30u);
  EXPECT_EQ(block.linear(4, 3, 2), std::size_t(6 * 5 * 4 - 1));
  block.at(1, 2, 1, 0) = 7.5;
  EXPECT_EQ(block.data[1][block.linear(2, 1, 0)], 7.5);
  EXPECT_EQ(block.data[0][block.linear(2, 1, 0)], 0.0);
  block.origin = {1.0, 2.0, 3.0};
  block.spacing = {0.5, 0.25, 0.125};
  EXPECT_DOUBLE_EQ(block.coordinate(0, -1), 0.5);
  EXPECT_DOUBLE_EQ(block.coordinate(1, 3), 2.75);
  EXPECT_DOUBLE_EQ(block.coordinate(2, 2), 3.25);
}

TEST(RunCalculation, InteriorOnlyAndInPlace) {
  Program prog = lower_text(R"(
begin thorn T
  begin variables
    a b
  end variables
  begin calculation c
    a = 2 a + x + 10 y + 100 z + t
    b = a
  end calculation
end thorn
)");
  const Calculation& c = prog.calculations.at(0);
  GridBlock block({3, 2, 2}, 1, c.grid_functions.size());
  block.origin = {0.5, 1.0, -1.0};
  block.spacing = {0.1, 0.2, 0.3};
  block.time = 4.0;
  int a = c.find_grid_function("a"), b = c.find_grid_function("b");
  for (double& v : block.data[a]) v = 1.0;
  for (double& v : block.data[b]) v = -9.0;
  run_calculation(c, block, {});
  for (int k = -1; k < 3; ++k)
    for (int j = -1; j < 3; ++j)
      for (int i = -1; i < 4; ++i) {
        bool interior = i >= 0 && i < 3 && j >= 0 && j < 2 && k >= 0 && k < 2;
        double expected = 2 + block.coordinate(0, i) + 10 * block.coordinate(1, j) +
                          100 * block.coordinate(2, k) + 4.0;
        if (interior) {
          EXPECT_NEAR(block.at(a, i, j, k), expected, 1e-12);
          EXPECT_NEAR(block.at(b, i, j, k), expected, 1e-12) << "b sees the new a";
        } else {
          EXPECT_EQ(block.at(a, i, j, k), 1.0) << "ghosts are not written";
          EXPECT_EQ(block.at(b, i, j, k), -9.0);
        }
      }
}

TEST(RunCalculation, TooFewGhostsThrow) {
  Program prog = lower_derivative("d = D_11 f", 6);
  const Calculation& c = prog.calculations.at(0);
  GridBlock thin({2, 2, 2}, 2, c.grid_functions.size());
  EXPECT_THROW(run_calculation(c, thin, {}), std::invalid_argument);
  GridBlock enough({2, 2, 2}, 3, c.grid_functions.size());
  EXPECT_NO_THROW(run_calculation(c, enough, {}));
}

// ============================================================== the wave equation

struct WaveResult {
  double center_error = 0; // |pirhs - exact| at the centre point
  double max_rel_error = 0;
  double phirhs_error = 0;
};

WaveResult run_wave_rhs(const Program& prog, double h, double k) {
  const Calculation& c = calc_named(prog, "wave_rhs");
  const std::array<double, 3> x0{0.13, 0.21, 0.37};
  const int n = 3, ghost = 2;
  GridBlock block({n, n, n}, ghost, c.grid_functions.size());
  block.spacing = {h, h, h};
  for (int a = 0; a < 3; ++a) block.origin[a] = x0[a] - h; // interior point (1,1,1) is x0
  int phi = c.find_grid_function("phi"), pi = c.find_grid_function("pi");
  int pirhs = c.find_grid_function("pirhs"), phirhs = c.find_grid_function("phirhs");
  EXPECT_GE(phi, 0);
  EXPECT_GE(pirhs, 0);
  auto phi_at = [k](double x, double y, double z) {
    return std::sin(k * x) * std::sin(k * y) * std::sin(k * z);
  };
  for (int kk = -ghost; kk < n + ghost; ++kk)
    for (int j = -ghost; j < n + ghost; ++j)
      for (int i = -ghost; i < n + ghost; ++i) {
        double x = block.coordinate(0, i), y = block.coordinate(1, j), z = block.coordinate(2, kk);
        block.at(phi, i, j, kk) = phi_at(x, y, z);
        block.at(pi, i, j, kk) = std::cos(x + 2 * y + 3 * z);
      }
  run_calculation(c, block, default_parameters(prog));
  WaveResult r;
  for (int kk = 0; kk < n; ++kk)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double x = block.coordinate(0, i), y = block.coordinate(1, j), z = block.coordinate(2, kk);
        double exact = -3 * k * k * phi_at(x, y, z);
        double err = std::fabs(block.at(pirhs, i, j, kk) - exact);
        r.max_rel_error = std::max(r.max_rel_error, err / (3 * k * k));
        if (i == 1 && j == 1 && kk == 1) r.center_error = err;
        r.phirhs_error = std::max(r.phirhs_error,
                                  std::fabs(block.at(phirhs, i, j, kk) - block.at(pi, i, j, kk)));
      }
  return r;
}

TEST(WaveEquation, RhsConvergesAtFourthOrder) {
  Program prog = lower_file("par/wave.edl", 4);
  const Calculation& c = calc_named(prog, "wave_rhs");
  EXPECT_EQ(c.schedule_bin, "MoL_CalcRHS");
  EXPECT_EQ(c.radius, (std::array<int, 3>{2, 2, 2}));
  const double k = 2 * kPi;
  const double h = 0.04;
  WaveResult coarse = run_wave_rhs(prog, h, k);
  WaveResult fine = run_wave_rhs(prog, h / 2, k);
  EXPECT_EQ(coarse.phirhs_error, 0.0);
  EXPECT_EQ(fine.phirhs_error, 0.0);
  // pirhs ~ -3 k^2 phi, with a small error.
  EXPECT_LT(coarse.max_rel_error, 1e-3);
  EXPECT_GT(coarse.center_error, 0.0);
  double order = std::log2(coarse.center_error / fine.center_error);
  EXPECT_NEAR(order, 4.0, 0.3) << "errors " << coarse.center_error << " " << fine.center_error;
  // The leading error of the 4th-order Laplacian: sum over axes of -h^4/90 f^(6), i.e.
  // 3 (kh)^4 k^2 / 90 |phi| at the centre.
  double phi0 = std::sin(k * 0.13) * std::sin(k * 0.21) * std::sin(k * 0.37);
  double predicted = 3 * std::pow(k * h, 4) * k * k / 90 * std::fabs(phi0);
  EXPECT_NEAR(coarse.center_error / predicted, 1.0, 0.05);
}

TEST(WaveEquation, SecondOrderConvergesAtSecondOrder) {
  Program prog = lower_file("par/wave.edl", 2);
  const double k = 2 * kPi;
  WaveResult coarse = run_wave_rhs(prog, 0.04, k);
  WaveResult fine = run_wave_rhs(prog, 0.02, k);
  EXPECT_NEAR(std::log2(coarse.center_error / fine.center_error), 2.0, 0.3);
}

TEST(WaveEquation, InitialDataAndEnergy) {
  Program prog = lower_file("par/wave.edl", 4);
  ASSERT_EQ(prog.parameters.size(), 2u);
  EXPECT_EQ(prog.parameters[0].name, "amp");
  EXPECT_EQ(prog.parameters[1].name, "kwav");
  EXPECT_DOUBLE_EQ(prog.parameters[1].default_value, 2 * kPi);
  const Calculation& init = calc_named(prog, "wave_init");
  GridBlock block({4, 3, 2}, 0, init.grid_functions.size());
  block.origin = {0.1, 0.2, 0.3};
  block.spacing = {0.05, 0.07, 0.11};
  const double amp = 1.5, k = 3.0;
  run_calculation(init, block, {amp, k});
  int phi = init.find_grid_function("phi"), pi = init.find_grid_function("pi");
  for (int kk = 0; kk < 2; ++kk)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) {
        double x = block.coordinate(0, i), y = block.coordinate(1, j), z = block.coordinate(2, kk);
        EXPECT_NEAR(block.at(phi, i, j, kk),
                    amp * std::sin(k * x) * std::sin(k * y) * std::sin(k * z), 1e-14);
        EXPECT_EQ(block.at(pi, i, j, kk), 0.0);
      }

  // Energy density (pi^2 + |grad phi|^2) / 2 for phi = x y + z^2 (exact for 4th order), pi = 3.
  const Calculation& energy = calc_named(prog, "wave_energy");
  Interpreter interp(energy);
  PointInputs in;
  in.coordinate = {0.4, -0.3, 0.2};
  in.spacing = {0.1, 0.2, 0.3};
  in.parameters = {1.0, 2 * kPi};
  in.load = [&](int gf, const Offset& o) {
    const std::string& name = energy.grid_functions.at(gf).name;
    double x = in.coordinate[0] + o[0] * in.spacing[0];
    double y = in.coordinate[1] + o[1] * in.spacing[1];
    double z = in.coordinate[2] + o[2] * in.spacing[2];
    return name == "pi" ? 3.0 : x * y + z * z;
  };
  std::vector<double> out = interp.evaluate(0, in);
  ASSERT_EQ(out.size(), 1u);
  double gx = -0.3, gy = 0.4, gz = 0.4;
  EXPECT_NEAR(out[0], (9 + gx * gx + gy * gy + gz * gz) / 2, 1e-12);
}

} // namespace
} // namespace saguaro::calc
