// Tests of the EDL lowering (calc/lower.hpp) of derivatives: the built-in finite-difference
// stencils exact to their order at every order (FdOrder), upwinded advection, and user-defined
// operators (a `begin derivatives` section). Values are checked by evaluating the lowered DAG
// with the reference interpreter on known inputs (support.hpp's eval).
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "calc/interpreter.hpp"
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "support.hpp"

namespace saguaro::calc {
namespace {

using namespace saguaro::test;

// ======================================================================= FD exactness

double factorial(int n) {
  double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

// d/dx x^d at x, k-th derivative.
double monomial_derivative(int degree, int k, double x) {
  if (degree < k) return 0.0;
  return factorial(degree) / factorial(degree - k) * std::pow(x, degree - k);
}

// x^degree, y^degree or z^degree for axis 0, 1 or 2.
Field axis_power(int axis, int degree) {
  return [axis, degree](double x, double y, double z) {
    double v[3] = {x, y, z};
    return std::pow(v[axis], degree);
  };
}

const char* kAxisNames = "123";

class FdOrder : public ::testing::TestWithParam<int> {};

TEST_P(FdOrder, FirstDerivativeExactToDegreeP) {
  const int p = GetParam(), m = p / 2;
  for (int axis = 0; axis < 3; ++axis) {
    std::string eq = std::string("d = D_") + kAxisNames[axis] + " f";
    Program prog = lower_text(simple("f d", eq), p);
    const Calculation& c = prog.calculations.at(0);
    // Stencil: +-1 .. +-m along the axis (the centre weight is zero).
    std::set<Offset> expected;
    for (int k = -m; k <= m; ++k) {
      if (k == 0) continue;
      Offset o{0, 0, 0};
      o[axis] = k;
      expected.insert(o);
    }
    EXPECT_EQ(offsets_of(c, "f"), expected) << "axis " << axis;
    std::array<int, 3> radius{0, 0, 0};
    radius[axis] = m;
    EXPECT_EQ(c.radius, radius);
    for (double h : {0.1, 0.37}) {
      for (int degree = 0; degree <= p + 1; ++degree) {
        Point pt;
        pt.h = {h, h, h};
        pt.h[(axis + 1) % 3] = 0.5; // other spacings must not matter
        pt.fields = {{"f", axis_power(axis, degree)}};
        double exact = monomial_derivative(degree, 1, pt.x[axis]);
        double num = eval(prog, c, "d", pt);
        if (degree <= p) {
          EXPECT_LT(rel_err(num, exact), 1e-9)
              << "p=" << p << " axis=" << axis << " h=" << h << " degree=" << degree;
        } else {
          // Leading error (m!)^2 h^p for x^(p+1), whatever the point.
          double err = std::fabs(num - exact);
          double predicted = factorial(m) * factorial(m) * std::pow(h, p);
          EXPECT_NEAR(err / predicted, 1.0, 1e-5)
              << "p=" << p << " axis=" << axis << " h=" << h << " degree=" << degree;
          EXPECT_GT(rel_err(num, exact), 1e-8) << "must not be exact at degree p+1";
        }
      }
    }
  }
}

TEST_P(FdOrder, SecondDerivativeExactToDegreePPlus1) {
  const int p = GetParam(), m = p / 2;
  for (int axis = 0; axis < 3; ++axis) {
    std::string eq = std::string("d = D_") + kAxisNames[axis] + kAxisNames[axis] + " f";
    Program prog = lower_text(simple("f d", eq), p);
    const Calculation& c = prog.calculations.at(0);
    std::set<Offset> expected;
    for (int k = -m; k <= m; ++k) {
      Offset o{0, 0, 0};
      o[axis] = k;
      expected.insert(o);
    }
    EXPECT_EQ(offsets_of(c, "f"), expected) << "axis " << axis;
    for (double h : {0.1, 0.37}) {
      for (int degree = 0; degree <= p + 2; ++degree) {
        Point pt;
        pt.h = {0.5, 0.5, 0.5};
        pt.h[axis] = h;
        pt.fields = {{"f", axis_power(axis, degree)}};
        double exact = monomial_derivative(degree, 2, pt.x[axis]);
        double num = eval(prog, c, "d", pt);
        if (degree <= p + 1) {
          EXPECT_LT(rel_err(num, exact), 1e-9)
              << "p=" << p << " axis=" << axis << " h=" << h << " degree=" << degree;
        } else {
          // Leading error 2 (m!)^2 h^p for x^(p+2).
          double err = std::fabs(num - exact);
          double predicted = 2 * factorial(m) * factorial(m) * std::pow(h, p);
          EXPECT_NEAR(err / predicted, 1.0, 1e-5)
              << "p=" << p << " axis=" << axis << " h=" << h << " degree=" << degree;
          EXPECT_GT(rel_err(num, exact), 1e-8);
        }
      }
    }
  }
}

TEST_P(FdOrder, MixedDerivativeExactOnProducts) {
  const int p = GetParam(), m = p / 2;
  const std::array<std::pair<int, int>, 3> pairs{{{0, 1}, {0, 2}, {1, 2}}};
  for (auto [a, b] : pairs) {
    std::string eq = std::string("d = D_") + kAxisNames[a] + kAxisNames[b] + " f\n" + "e = D_" +
                     kAxisNames[b] + kAxisNames[a] + " f";
    // The product stencil (the default below order 8; LowerIntermediates tests the nested form).
    Program prog = lower(edl::parse_string(simple("f d e", eq)), {p, MixedDerivatives::Product});
    const Calculation& c = prog.calculations.at(0);
    EXPECT_EQ(store_of(c, "d"), store_of(c, "e")) << "D_ab and D_ba are one stencil";
    // The product stencil without the zero-weight centre lines: p^2 points.
    std::set<Offset> expected;
    for (int i = -m; i <= m; ++i)
      for (int j = -m; j <= m; ++j) {
        if (i == 0 || j == 0) continue;
        Offset o{0, 0, 0};
        o[a] = i;
        o[b] = j;
        expected.insert(o);
      }
    EXPECT_EQ(offsets_of(c, "f"), expected);
    EXPECT_EQ(expected.size(), std::size_t(p * p));
    for (double h : {0.1, 0.37}) {
      Point pt;
      pt.h = {h, h, h};
      pt.h[b] = 0.9 * h; // different spacings along the two axes
      for (int i = 0; i <= p + 1; ++i)
        for (int j = 0; j <= p; ++j) {
          pt.fields = {{"f", [a, b, i, j](double x, double y, double z) {
                          double v[3] = {x, y, z};
                          return std::pow(v[a], i) * std::pow(v[b], j);
                        }}};
          double exact = monomial_derivative(i, 1, pt.x[a]) * monomial_derivative(j, 1, pt.x[b]);
          double num = eval(prog, c, "d", pt);
          if (i <= p) {
            EXPECT_LT(rel_err(num, exact), 1e-9)
                << "p=" << p << " axes " << a << b << " x^" << i << " y^" << j << " h=" << h;
          } else if (j == 1) {
            double predicted = factorial(m) * factorial(m) * std::pow(pt.h[a], p);
            EXPECT_NEAR(std::fabs(num - exact) / predicted, 1.0, 1e-5)
                << "p=" << p << " axes " << a << b << " x^" << i << " h=" << h;
          } else if (j >= 1) {
            EXPECT_GT(rel_err(num, exact), 1e-8);
          }
        }
    }
  }
}

TEST_P(FdOrder, CoordinatesAndUniformsUnderDerivatives) {
  const int p = GetParam();
  Program prog = lower_text(thorn(R"(
  begin parameters
    q : real "q", default: 3
  end parameters
  begin variables
    f d1 d2 d3 d4
  end variables
  begin calculation c
    d1 = D_1 x
    d2 = D_2 (x + 2 y + f)
    d3 = D_3 (q + t)
    d4 = D_11 (x + y)
  end calculation
)"),
                            p);
  const Calculation& c = prog.calculations.at(0);
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"f", [](double, double y, double) { return y * y; }}};
  EXPECT_NEAR(eval(prog, c, "d1", pt), 1.0, 1e-10);
  EXPECT_NEAR(eval(prog, c, "d2", pt), 2.0 + 2 * pt.x[1], 1e-10);
  EXPECT_NEAR(eval(prog, c, "d3", pt), 0.0, 1e-12);
  EXPECT_NEAR(eval(prog, c, "d4", pt), 0.0, 1e-9);
  EXPECT_EQ(c.stages.size(), 1u) << "linear operands need no intermediate";
}

// The derivative of a uniform expression is exactly zero, and a constant added to the operand
// costs nothing: the stencil weights sum to zero.
TEST_P(FdOrder, DerivativeOfUniformIsExactlyZero) {
  const int p = GetParam();
  Program prog = lower_text(thorn(R"(
  begin parameters
    q : real "q", default: 3
  end parameters
  begin variables
    f d e k
  end variables
  begin calculation c
    d = D_3 (q + t)
    e = D_1 (f + 1)
  end calculation
  begin calculation shifted1
    k = D_1 (f + 1)
  end calculation
  begin calculation plain1
    k = D_1 f
  end calculation
  begin calculation shifted2
    k = D_2 (f + q)
  end calculation
  begin calculation plain2
    k = D_2 f
  end calculation
  begin calculation shifted22
    k = D_22 (f + q)
  end calculation
  begin calculation plain22
    k = D_22 f
  end calculation
  begin calculation shifted33
    k = D_33 (f + 3)
  end calculation
  begin calculation plain33
    k = D_33 f
  end calculation
)"),
                            p);
  const Calculation& c = prog.calculations.at(0);
  double v = -1;
  EXPECT_TRUE(c.dag.is_constant(store_of(c, "d"), &v));
  EXPECT_EQ(v, 0.0);
  // No constant residue in the stencil sum of f + 1.
  for (NodeId id : c.dag.reachable({store_of(c, "e")})) {
    if (c.dag.node(id).op == Op::Add) {
      EXPECT_EQ(c.dag.node(id).value, 0.0);
    }
  }
  for (const char* axis : {"1", "2", "22", "33"}) {
    const Calculation& shifted = calc_named(prog, std::string("shifted") + axis);
    const Calculation& plain = calc_named(prog, std::string("plain") + axis);
    EXPECT_EQ(shifted.flops.total(), plain.flops.total()) << "D_" << axis;
    EXPECT_EQ(shifted.node_count, plain.node_count) << "D_" << axis;
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, FdOrder, ::testing::Values(2, 4, 6, 8));

TEST(LowerFd, UnsupportedOrderIsAnError) {
  for (int bad : {0, 1, 3, 10})
    EXPECT_THROW(lower_text(simple("f d", "d = D_1 f"), bad), edl::EdlError) << bad;
}

// beta DupwindAnti_1 u + |beta| DupwindSymm_1 u is the lopsided 4th-order stencil on the
// side the shift comes from: D+ (points -1..3) for beta > 0, its mirror D- for beta < 0.
TEST(LowerDerivatives, UpwindedAdvectionUsesTheUpstreamStencil) {
  Program p = lower_text(simple("a b u", "a = b DupwindAnti_1 u + abs(b) DupwindSymm_1 u"));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(c.radius, (std::array<int, 3>{3, 0, 0}));
  auto u = [](double x, double y, double z) { return std::exp(0.8 * x) * std::sin(y + z); };
  Point pt;
  pt.h = {0.05, 0.1, 0.1};
  const double h = pt.h[0], x = pt.x[0], y = pt.x[1], z = pt.x[2];
  auto at = [&](int k) { return u(x + k * h, y, z); };
  const double plus = (-3 * at(-1) - 10 * at(0) + 18 * at(1) - 6 * at(2) + at(3)) / (12 * h);
  const double minus = (3 * at(1) + 10 * at(0) - 18 * at(-1) + 6 * at(-2) - at(-3)) / (12 * h);
  for (double beta : {0.7, -0.7}) {
    pt.fields = {{"u", u}, {"b", constant_field(beta)}};
    EXPECT_NEAR(eval(p, c, "a", pt), beta * (beta > 0 ? plus : minus), 1e-12) << beta;
    // ... and a 4th-order first derivative: the error falls 16-fold with h.
    const double exact = 0.8 * u(x, y, z) * beta;
    const double coarse = eval(p, c, "a", pt) - exact;
    pt.h[0] = h / 2;
    const double fine = eval(p, c, "a", pt) - exact;
    pt.h[0] = h;
    EXPECT_NEAR(std::log2(std::fabs(coarse / fine)), 4.0, 0.2) << beta;
  }
}

// ======================================================================= user operators
// (the operators are support.hpp's kOperators, shared with test_lowering_intermediates.cpp)

TEST(LowerUserOperators, ForwardDifference) {
  for (int axis = 0; axis < 3; ++axis) {
    std::string eq = std::string("d = Dplus_") + kAxisNames[axis] + " f";
    Program p = lower_text(simple("f d", eq, kOperators));
    const Calculation& c = p.calculations.at(0);
    Offset one{0, 0, 0};
    one[axis] = 1;
    EXPECT_EQ(offsets_of(c, "f"), (std::set<Offset>{{0, 0, 0}, one}));
    Point pt;
    pt.h = {0.1, 0.2, 0.3};
    pt.fields = {{"f", [](double x, double y, double z) { return std::sin(x + 2 * y + 3 * z); }}};
    auto f = pt.fields["f"];
    std::array<double, 3> s = pt.x;
    s[axis] += pt.h[axis];
    double expected = (f(s[0], s[1], s[2]) - f(pt.x[0], pt.x[1], pt.x[2])) / pt.h[axis];
    EXPECT_NEAR(eval(p, c, "d", pt), expected, 1e-12);
  }
}

TEST(LowerUserOperators, CenteredMatchesBuiltinSecondOrder) {
  Program p = lower_text(simple("f d e", "d = Dcen_2 f\ne = D_2 f", kOperators), 2);
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(loads_below(c, store_of(c, "d")), loads_below(c, store_of(c, "e")));
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"f", [](double x, double y, double z) { return std::exp(x + y - z); }}};
  EXPECT_NEAR(eval(p, c, "d", pt), eval(p, c, "e", pt), 1e-12);
}

TEST(LowerUserOperators, ComposedShifts) {
  Program p = lower_text(simple("A d e", "d = Dsm_1 Dsp_2 A\ne = Dsp_3 Dsp_3 Dsm_2 A", kOperators));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(loads_below(c, store_of(c, "d")),
            (std::map<std::string, std::set<Offset>>{{"A", {{-1, 1, 0}}}}));
  EXPECT_EQ(loads_below(c, store_of(c, "e")),
            (std::map<std::string, std::set<Offset>>{{"A", {{0, -1, 2}}}}));
  EXPECT_EQ(c.flops.total(), 0);
}

TEST(LowerUserOperators, MultiDirection) {
  Program p =
      lower_text(simple("f d e g", "d = Dxy_12 f\ne = Dskew_13 f\ng = Dskew_31 f", kOperators));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(loads_below(c, store_of(c, "d")).at("f"),
            (std::set<Offset>{{1, 1, 0}, {1, -1, 0}, {-1, 1, 0}, {-1, -1, 0}}));
  EXPECT_EQ(loads_below(c, store_of(c, "e")).at("f"), (std::set<Offset>{{1, 0, -1}, {0, 0, 0}}));
  EXPECT_EQ(loads_below(c, store_of(c, "g")).at("f"), (std::set<Offset>{{-1, 0, 1}, {0, 0, 0}}));
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  // Cross difference: exact on x^2 y^2 -> 4xy.
  pt.fields = {{"f", [](double x, double y, double) { return x * x * y * y; }}};
  EXPECT_NEAR(eval(p, c, "d", pt), 4 * pt.x[0] * pt.x[1], 1e-10);
  // Dskew_13 f = (f(x+hx, z-hz) - f) / hx: on f = x it is 1, on f = z it is -hz/hx.
  pt.fields = {{"f", [](double x, double, double) { return x; }}};
  EXPECT_NEAR(eval(p, c, "e", pt), 1.0, 1e-12);
  EXPECT_NEAR(eval(p, c, "g", pt), -pt.h[0] / pt.h[2], 1e-12);
  pt.fields = {{"f", [](double, double, double z) { return z; }}};
  EXPECT_NEAR(eval(p, c, "e", pt), -pt.h[2] / pt.h[0], 1e-12);
  EXPECT_NEAR(eval(p, c, "g", pt), 1.0, 1e-12);
}

TEST(LowerUserOperators, RepeatedIndexOperator) {
  Program p = lower_text(simple("f d e g", "d = Dxx_1 f\ne = Dxx_11 f\ng = Dxx_3 f", kOperators));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(store_of(c, "d"), store_of(c, "e"));
  EXPECT_EQ(loads_below(c, store_of(c, "d")).at("f"),
            (std::set<Offset>{{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}}));
  EXPECT_EQ(loads_below(c, store_of(c, "g")).at("f"),
            (std::set<Offset>{{0, 0, -1}, {0, 0, 0}, {0, 0, 1}}));
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"f", [](double x, double, double z) { return x * x * x + z * z * z; }}};
  EXPECT_NEAR(eval(p, c, "d", pt), 6 * pt.x[0], 1e-9);
  EXPECT_NEAR(eval(p, c, "g", pt), 6 * pt.x[2], 1e-9);
  // Two different directions on a repeated index are an error.
  EXPECT_THROW(lower_text(simple("f d", "d = Dxx_12 f", kOperators)), edl::EdlError);
}

TEST(LowerUserOperators, ParameterInDefinition) {
  Program p = lower_text(simple("f d", "d = Ddiss_2 f", kOperators));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"f", [](double, double y, double) { return y * y; }}};
  // eps * (2 h^2) / h = 2 eps h
  EXPECT_NEAR(eval(p, c, "d", pt), 2 * 0.5 * 0.2, 1e-12);
  pt.parameters = {2.0};
  EXPECT_NEAR(eval(p, c, "d", pt), 2 * 2.0 * 0.2, 1e-12);
}

TEST(LowerUserOperators, SummedDirection) {
  // Dcen_j v^j: the operator's direction index takes part in the summation.
  Program p = lower_text(simple("v^i d", "d = Dcen_j v^j", kOperators));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"v1", [](double x, double, double) { return 3 * x; }},
               {"v2", [](double, double y, double) { return y * y; }},
               {"v3", [](double, double, double z) { return -z; }}};
  EXPECT_NEAR(eval(p, c, "d", pt), 3 + 2 * pt.x[1] - 1, 1e-10);
}

} // namespace
} // namespace saguaro::calc
