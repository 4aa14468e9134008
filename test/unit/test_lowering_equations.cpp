// Tests of the EDL lowering (calc/lower.hpp) of the equations themselves: tensor expansion
// (sums, Levi-Civita and Kronecker symbols, fixed components, traces, temporaries), D_t and
// schedules, parameters, numbers and syntax. Values are checked by evaluating the lowered DAG
// with the reference interpreter on known inputs (support.hpp's eval).
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calc/interpreter.hpp"
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "support.hpp"

namespace saguaro::calc {
namespace {

constexpr double kPi = std::numbers::pi;

using namespace saguaro::test;

// Whether `c` stores to `gf` in any stage.
bool has_store(const Calculation& c, const std::string& gf) {
  int index = c.find_grid_function(gf);
  for (const auto& stage : c.stages)
    for (const auto& s : stage.stores)
      if (s.grid_function == index) return true;
  return false;
}

// ======================================================================= tensor expansion

TEST(LowerTensors, EuclideanContractionMakesThreeStores) {
  Program p = lower_text(simple("v_i w^i", "v_i = Euc_ij w^j"));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"v1", "v2", "v3"}));
  for (int i = 1; i <= 3; ++i) {
    const Node& n = c.dag.node(store_of(c, std::string("v") + std::to_string(i)));
    ASSERT_EQ(n.op, Op::Load);
    EXPECT_EQ(c.grid_functions[n.index].name, std::string("w") + std::to_string(i));
    EXPECT_EQ(n.offset, (Offset{0, 0, 0}));
  }
  Point pt;
  pt.fields = {{"w1", constant_field(1.5)}, {"w2", constant_field(-2)}, {"w3", constant_field(7)}};
  EXPECT_EQ(eval(p, c, "v1", pt), 1.5);
  EXPECT_EQ(eval(p, c, "v2", pt), -2.0);
  EXPECT_EQ(eval(p, c, "v3", pt), 7.0);
}

TEST(LowerTensors, EinsteinSum) {
  Program p = lower_text(simple("s v_i w^i", "s = v_i w^i"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.fields = {{"v1", constant_field(2)}, {"v2", constant_field(-3)}, {"v3", constant_field(5)},
               {"w1", constant_field(7)}, {"w2", constant_field(11)}, {"w3", constant_field(-13)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "s", pt), 2 * 7 + -3 * 11 + 5 * -13);
  EXPECT_EQ(c.inputs.size(), 6u);
  EXPECT_EQ(c.flops.mul, 3);
  EXPECT_EQ(c.flops.add, 2);
}

TEST(LowerTensors, SumInsideLargerProduct) {
  // f v_i w^i: the pair is split across nested products.
  Program p = lower_text(simple("s f v_i w^i u^i", "s = f v_i (w^i - 2 u^i) - v_1"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.fields = {{"f", constant_field(0.5)},  {"v1", constant_field(2)}, {"v2", constant_field(-3)},
               {"v3", constant_field(5)},   {"w1", constant_field(7)}, {"w2", constant_field(11)},
               {"w3", constant_field(-13)}, {"u1", constant_field(1)}, {"u2", constant_field(2)},
               {"u3", constant_field(3)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "s", pt), 0.5 * (2 * 5 + -3 * 7 + 5 * -19) - 2);
  // Adding a scalar to a vector is an index error.
  EXPECT_THROW(lower_text(simple("s f v_i w^i", "s = f v_i (w^i + 1)")), edl::EdlError);
}

// Fields for the curl and divergence tests: polynomials of degree <= 4, where the 4th-order
// centered first derivative is exact.
double B1(double x, double y, double z) {
  return x * y * z + y * y;
}
double B2(double x, double, double z) {
  return x * x * z * z + 3 * z;
}
double B3(double x, double y, double z) {
  return x * y * y + z;
}

TEST(LowerTensors, CurlWithLeviCivita) {
  Program p = lower_text(simple("c_i B_i", "c_i = Euc_ia Eps^ajk D_j B_k"));
  const Calculation& c = p.calculations.at(0);
  ASSERT_EQ(output_names(c), (std::vector<std::string>{"c1", "c2", "c3"}));
  // c1 = D_2 B3 - D_3 B2 reads B3 along y and B2 along z only.
  auto loads = loads_below(c, store_of(c, "c1"));
  ASSERT_EQ(loads.size(), 2u);
  for (const Offset& o : loads.at("B3")) EXPECT_TRUE(o[0] == 0 && o[1] != 0 && o[2] == 0);
  for (const Offset& o : loads.at("B2")) EXPECT_TRUE(o[0] == 0 && o[1] == 0 && o[2] != 0);

  Point pt;
  pt.h = {0.1, 0.2, 0.15};
  pt.fields = {{"B1", B1}, {"B2", B2}, {"B3", B3}};
  double x = pt.x[0], y = pt.x[1], z = pt.x[2];
  // dB3/dy - dB2/dz, dB1/dz - dB3/dx, dB2/dx - dB1/dy
  double c1 = 2 * x * y - (2 * x * x * z + 3);
  double c2 = x * y - y * y;
  double c3 = 2 * x * z * z - (x * z + 2 * y);
  EXPECT_NEAR(eval(p, c, "c1", pt), c1, 1e-10);
  EXPECT_NEAR(eval(p, c, "c2", pt), c2, 1e-10);
  EXPECT_NEAR(eval(p, c, "c3", pt), c3, 1e-10);
}

TEST(LowerTensors, LeviCivitaSigns) {
  Program p = lower_text(simple("a b d e", "a = Eps_123 + 10 Eps_231 + 100 Eps_312\n"
                                           "b = Eps_213 + 10 Eps_132 + 100 Eps_321\n"
                                           "d = Eps_112 + Eps_133 + Eps^222\n"
                                           "e = Eps_ijk Eps^ijk"));
  const Calculation& c = p.calculations.at(0);
  double v = 0;
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "a"), &v));
  EXPECT_EQ(v, 111.0);
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "b"), &v));
  EXPECT_EQ(v, -111.0);
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "d"), &v));
  EXPECT_EQ(v, 0.0);
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "e"), &v));
  EXPECT_EQ(v, 6.0);
}

TEST(LowerTensors, KroneckerDelta) {
  Program p = lower_text(simple("u^i w^i s v_i", "u^i = delta^i_j w^j\n"
                                                 "s = delta^i_j v_i w^j + delta^1_2 + delta^3_3"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.fields = {{"v1", constant_field(2)}, {"v2", constant_field(-3)}, {"v3", constant_field(5)},
               {"w1", constant_field(7)}, {"w2", constant_field(11)}, {"w3", constant_field(-13)}};
  EXPECT_EQ(eval(p, c, "u1", pt), 7.0);
  EXPECT_EQ(eval(p, c, "u2", pt), 11.0);
  EXPECT_EQ(eval(p, c, "u3", pt), -13.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "s", pt), 2 * 7 + -3 * 11 + 5 * -13 + 0 + 1);
}

TEST(LowerTensors, FixedComponents) {
  Program p = lower_text(simple("v_i g_ij f", "v_1 = 2 f\n"
                                              "g_12 = 3\n"
                                              "g_j3 = v_j"));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"v1", "g12", "g13", "g23", "g33"}));
  EXPECT_FALSE(has_store(c, "v2"));
  EXPECT_FALSE(has_store(c, "g11"));
  Point pt;
  pt.fields = {{"f", constant_field(4)}, {"v2", constant_field(-1)}, {"v3", constant_field(9)}};
  EXPECT_EQ(eval(p, c, "v1", pt), 8.0);
  EXPECT_EQ(eval(p, c, "g12", pt), 3.0);
  // v1 was assigned earlier in this calculation: g13 sees the new value.
  EXPECT_EQ(eval(p, c, "g13", pt), 8.0);
  EXPECT_EQ(eval(p, c, "g23", pt), -1.0);
  EXPECT_EQ(eval(p, c, "g33", pt), 9.0);
  // Fixed components on the right: s = g_12 + v_3.
  Program q = lower_text(simple("s v_i g_ij", "s = g_12 + 10 v_3"));
  Point pq;
  pq.fields = {{"g12", constant_field(4)}, {"v3", constant_field(-1)}};
  EXPECT_EQ(eval(q, q.calculations[0], "s", pq), -6.0);
}

// Kranc's grammar (kranc2.peg: `indices = (\_{lower_index}+|...)`, `index_symbol =
// [a-zA-Z]'*|[0-9]`) accepts a fixed component followed by an index letter, as in `g_2j`.
TEST(LowerTensors, DigitThenLetterIndex) {
  Program p = lower_text(simple("v_i g_ij", "g_2j = v_j\nv_1 = g_2j g^2j"));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"g21", "g22", "g23", "v1"}));
  Point pt;
  pt.fields = {{"v1", constant_field(2)}, {"v2", constant_field(3)}, {"v3", constant_field(5)}};
  EXPECT_EQ(eval(p, c, "g23", pt), 5.0);
  EXPECT_EQ(eval(p, c, "v1", pt), 4.0 + 9.0 + 25.0);
}

TEST(LowerTensors, Trace) {
  Program p = lower_text(simple("tr T_ij", "tr = T^i_i"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j)
      pt.fields[std::string("T") + std::to_string(i) + std::to_string(j)] =
          constant_field(10 * i + j);
  EXPECT_EQ(eval(p, c, "tr", pt), 11.0 + 22.0 + 33.0);
  // Only the diagonal is read.
  std::vector<std::string> read;
  for (const auto& in : c.inputs) read.push_back(c.grid_functions[in.grid_function].name);
  EXPECT_EQ(read, (std::vector<std::string>{"T11", "T22", "T33"}));
}

TEST(LowerTensors, Divergence) {
  Program p = lower_text(simple("d v^i", "d = D_i v^i"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"v1", [](double x, double y, double) { return x * x * y; }},
               {"v2", [](double, double y, double) { return y * y * y; }},
               {"v3", [](double x, double, double z) { return z * x + z * z * z * z; }}};
  double x = pt.x[0], y = pt.x[1], z = pt.x[2];
  EXPECT_NEAR(eval(p, c, "d", pt), 2 * x * y + 3 * y * y + x + 4 * z * z * z, 1e-10);
  EXPECT_EQ(offsets_of(c, "v1"), (std::set<Offset>{{-2, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {2, 0, 0}}));
  EXPECT_EQ(offsets_of(c, "v2"), (std::set<Offset>{{0, -2, 0}, {0, -1, 0}, {0, 1, 0}, {0, 2, 0}}));
  EXPECT_EQ(offsets_of(c, "v3"), (std::set<Offset>{{0, 0, -2}, {0, 0, -1}, {0, 0, 1}, {0, 0, 2}}));
}

TEST(LowerTensors, TwoFreeIndices) {
  Program p = lower_text(simple("g_ij v_i", "g_ij = v_i v_j"));
  const Calculation& c = p.calculations.at(0);
  std::vector<std::string> expected;
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j)
      expected.push_back(std::string("g") + std::to_string(i) + std::to_string(j));
  EXPECT_EQ(output_names(c), expected);
  Point pt;
  double v[4] = {0, 2, -3, 5};
  for (int i = 1; i <= 3; ++i)
    pt.fields[std::string("v") + std::to_string(i)] = constant_field(v[i]);
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j)
      EXPECT_EQ(eval(p, c, std::string("g") + std::to_string(i) + std::to_string(j), pt),
                v[i] * v[j])
          << i << j;
  // Symmetric components are one node.
  EXPECT_EQ(store_of(c, "g12"), store_of(c, "g21"));
}

TEST(LowerTensors, SecondDerivativeFamily) {
  Program p = lower_text(simple("H_ij f", "H_ij = D_ij f"));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(output_names(c).size(), 9u);
  // D_12 and D_21 build the same stencil.
  EXPECT_EQ(store_of(c, "H12"), store_of(c, "H21"));
  EXPECT_EQ(store_of(c, "H13"), store_of(c, "H31"));
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"f", [](double x, double y, double z) { return x * x * y + y * z * z * z; }}};
  double x = pt.x[0], y = pt.x[1], z = pt.x[2];
  EXPECT_NEAR(eval(p, c, "H11", pt), 2 * y, 1e-9);
  EXPECT_NEAR(eval(p, c, "H12", pt), 2 * x, 1e-9);
  EXPECT_NEAR(eval(p, c, "H22", pt), 0.0, 1e-9);
  EXPECT_NEAR(eval(p, c, "H23", pt), 3 * z * z, 1e-9);
  EXPECT_NEAR(eval(p, c, "H33", pt), 6 * y * z, 1e-9);
  EXPECT_NEAR(eval(p, c, "H13", pt), 0.0, 1e-9);
}

TEST(LowerTensors, TemporariesAreSubstituted) {
  Program p = lower_text(simple("a b r v_i",
                                "tmp = a * b\n"
                                "q_i = 2 v_i\n"
                                "r = tmp + q_i q^i + 1",
                                "begin temporaries\n tmp q_i\nend temporaries\n"));
  const Calculation& c = p.calculations.at(0);
  ASSERT_EQ(output_names(c), (std::vector<std::string>{"r"}));
  EXPECT_EQ(c.find_grid_function("tmp"), -1) << "a temporary is never a grid function";
  EXPECT_EQ(c.find_grid_function("q1"), -1);
  // No variable named q here: the temporary tensor q_i is substituted.
  Point pt;
  pt.fields = {{"a", constant_field(3)},
               {"b", constant_field(4)},
               {"v1", constant_field(1)},
               {"v2", constant_field(2)},
               {"v3", constant_field(-1)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "r", pt), 12 + 4 * (1 + 4 + 1) + 1);
  EXPECT_EQ(std::count(p.variables.begin(), p.variables.end(), "tmp"), 0);
}

TEST(LowerTensors, TemporaryUsedBeforeAssignmentIsAnError) {
  EXPECT_THROW(lower_text(simple("a r", "r = tmp + a\ntmp = a",
                                 "begin temporaries\n tmp\nend temporaries\n")),
               edl::EdlError);
}

TEST(LowerTensors, IndexMismatchIsAnError) {
  EXPECT_THROW(lower_text(simple("v_i w_i", "v_i = w_j")), edl::EdlError);
  EXPECT_THROW(lower_text(simple("s v_i w_i", "s = v_i w_i")), edl::EdlError);
  EXPECT_THROW(lower_text(simple("v_i w_i", "v_i = w_i + w_j")), edl::EdlError);
}

// ======================================================================= D_t and schedule

TEST(LowerEvolution, TimeDerivativesStoreRhs) {
  Program p = lower_text(thorn(R"(
  begin variables
    pi phi u_i
  end variables
  begin calculation rhs
    D_t phi = pi
    D_t pi  = D_11 phi
    D_t u_i = D_i phi
  end calculation
)"));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(output_names(c),
            (std::vector<std::string>{"phirhs", "pirhs", "u1rhs", "u2rhs", "u3rhs"}));
  for (std::string v : {"phi", "pi", "u1", "u2", "u3"}) {
    int gf = c.find_grid_function(v + "rhs");
    ASSERT_GE(gf, 0) << v;
    EXPECT_EQ(c.grid_functions[gf].role, GridFunctionRole::RightHandSide) << v;
    EXPECT_EQ(c.grid_functions[gf].evolves, v);
  }
  // Evolved variables in declaration order.
  EXPECT_EQ(p.evolved, (std::vector<std::string>{"pi", "phi", "u1", "u2", "u3"}));
  EXPECT_EQ(p.variables, (std::vector<std::string>{"pi", "phi", "u1", "u2", "u3"}));
  // phirhs is the load of pi.
  const Node& n = c.dag.node(store_of(c, "phirhs"));
  ASSERT_EQ(n.op, Op::Load);
  EXPECT_EQ(c.grid_functions[n.index].name, "pi");
  EXPECT_EQ(c.grid_functions[n.index].role, GridFunctionRole::Variable);
  // Default schedule for a calculation with D_t.
  EXPECT_EQ(c.schedule_bin, "MoL_CalcRHS");
  EXPECT_EQ(c.schedule_word, "in");
}

TEST(LowerEvolution, TwoTimeDerivativesOfOneVariableIsAnError) {
  EXPECT_THROW(lower_text(simple("a b", "D_t a = b\nD_t a = 2 b")), edl::EdlError);
}

TEST(LowerEvolution, DefaultAndExplicitSchedules) {
  Program p = lower_text(thorn(R"(
  begin variables
    a b
  end variables
  begin calculation noschedule
    a = b
  end calculation
  begin calculation withdt
    D_t a = b
  end calculation
  begin calculation explicit scheduled in MoL_PostStep
    a = 2 b
  end calculation
  begin calculation atinit scheduled at initial
    a = 1
  end calculation
  begin calculation bc scheduled at MoL_PostStep on boundary
    a = 0
  end calculation
  begin calculation bc2 on boundary
    b = 0
  end calculation
)"));
  EXPECT_EQ(calc_named(p, "noschedule").schedule_bin, "analysis");
  EXPECT_EQ(calc_named(p, "noschedule").schedule_word, "at");
  EXPECT_FALSE(calc_named(p, "noschedule").on_boundary);
  EXPECT_EQ(calc_named(p, "withdt").schedule_bin, "MoL_CalcRHS");
  EXPECT_EQ(calc_named(p, "explicit").schedule_bin, "MoL_PostStep");
  EXPECT_EQ(calc_named(p, "explicit").schedule_word, "in");
  EXPECT_EQ(calc_named(p, "atinit").schedule_bin, "initial");
  EXPECT_EQ(calc_named(p, "atinit").schedule_word, "at");
  EXPECT_TRUE(calc_named(p, "bc").on_boundary);
  EXPECT_EQ(calc_named(p, "bc").schedule_bin, "MoL_PostStep");
  EXPECT_TRUE(calc_named(p, "bc2").on_boundary);
  EXPECT_EQ(calc_named(p, "bc2").schedule_bin, "analysis");
  EXPECT_EQ(p.evolved, (std::vector<std::string>{"a"}));
}

// ======================================================================= parameters, numbers

TEST(LowerSyntax, ParameterDefaultsFromConstantExpressions) {
  Program p = lower_text(thorn(R"(
  begin parameters
    twopi : real "2 pi", default: 2*PI
    tenpi : real "10 pi", default: 10 PI*sin(PI/2)
    fort  : real "fortran", default: 1.5d0, range: -infinity to 2.5E+2
    small : real "small", default: 1e-3, range: 0 to infinity
    n     : int "count", default: 3, range: 0 to 2*5
    ee    : real "e squared", default: E**2
    nodef : real "no default", range: 0.25 to 1
  end parameters
  begin variables
    a
  end variables
  begin calculation c
    a = twopi
  end calculation
)"));
  ASSERT_EQ(p.parameters.size(), 7u);
  EXPECT_EQ(p.parameters[0].name, "twopi");
  EXPECT_DOUBLE_EQ(p.parameters[0].default_value, 2 * kPi);
  EXPECT_DOUBLE_EQ(p.parameters[1].default_value, 10 * kPi);
  EXPECT_EQ(p.parameters[2].default_value, 1.5);
  EXPECT_FALSE(p.parameters[2].min.has_value());
  ASSERT_TRUE(p.parameters[2].max.has_value());
  EXPECT_EQ(*p.parameters[2].max, 250.0);
  EXPECT_EQ(p.parameters[3].default_value, 1e-3);
  EXPECT_EQ(p.parameters[3].min, 0.0);
  EXPECT_FALSE(p.parameters[3].max.has_value());
  EXPECT_EQ(p.parameters[4].type, edl::ParameterType::Int);
  EXPECT_EQ(p.parameters[4].default_value, 3.0);
  EXPECT_EQ(p.parameters[4].max, 10.0);
  EXPECT_DOUBLE_EQ(p.parameters[5].default_value, std::exp(2.0));
  EXPECT_EQ(p.parameters[6].default_value, 0.25);
  // A parameter in an expression is a Parameter node with its index.
  const Calculation& c = p.calculations.at(0);
  const Node& n = c.dag.node(store_of(c, "a"));
  EXPECT_EQ(n.op, Op::Parameter);
  EXPECT_EQ(n.index, 0);
}

TEST(LowerSyntax, NonConstantDefaultIsAnError) {
  EXPECT_THROW(lower_text(thorn(R"(
  begin parameters
    a : real "a", default: x
  end parameters
  begin variables
    f
  end variables
  begin calculation c
    f = a
  end calculation
)")),
               edl::EdlError);
}

TEST(LowerSyntax, NumberFormats) {
  Program p = lower_text(simple("f r", "r = 1.5d0 f + 2.5E+2 + 1e-3 + 1. + 0.5 + 2D1"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.fields = {{"f", constant_field(2)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "r", pt), 3 + 250 + 1e-3 + 1 + 0.5 + 20);
}

TEST(LowerSyntax, Juxtaposition) {
  Program p = lower_text(thorn(R"(
  begin parameters
    amp : real "amplitude", default: 1.5
    k   : real "wave number", default: 2.0
  end parameters
  begin variables
    r s f
  end variables
  begin calculation c
    r = amp sin(k x)
    s = (1/2) (f + 3) 2 f
  end calculation
)"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.fields = {{"f", constant_field(5)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "r", pt), 1.5 * std::sin(2.0 * pt.x[0]));
  EXPECT_DOUBLE_EQ(eval(p, c, "s", pt), 0.5 * 8 * 2 * 5);
  // Parameter values passed to the interpreter are used.
  pt.parameters = {3.0, 0.5};
  EXPECT_DOUBLE_EQ(eval(p, c, "r", pt), 3.0 * std::sin(0.5 * pt.x[0]));
}

TEST(LowerSyntax, Precedence) {
  Program p = lower_text(simple("a b cc r1 r2 r3 r4 r5 r6 r7 r8", R"(
    r1 = -a**2
    r2 = 2**3**2
    r3 = a/b*cc
    r4 = (1/2) (a+b)
    r5 = a - b - cc
    r6 = 2**-1 + a/b/cc
    r7 = -a b + 2 a**2
    r8 = a % b
  )"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.fields = {{"a", constant_field(3)}, {"b", constant_field(4)}, {"cc", constant_field(2)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "r1", pt), -9.0);
  double v = 0;
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "r2"), &v));
  EXPECT_EQ(v, 512.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "r3", pt), 3.0 / 4.0 * 2.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "r4", pt), 3.5);
  EXPECT_DOUBLE_EQ(eval(p, c, "r5", pt), -3.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "r6", pt), 0.5 + 3.0 / 4.0 / 2.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "r7", pt), -12.0 + 18.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "r8", pt), 3.0);
}

TEST(LowerSyntax, BuiltinsCoordinatesTimeSpacing) {
  Program p = lower_text(simple("r s", "r = x + 10 y + 100 z + 1000 t\n"
                                       "s = dx + 10 dy + 100 dz + PI + E"));
  const Calculation& c = p.calculations.at(0);
  Point pt;
  pt.x = {0.25, 0.5, 0.75};
  pt.h = {0.125, 0.0625, 0.03125};
  pt.t = 2.0;
  EXPECT_DOUBLE_EQ(eval(p, c, "r", pt), 0.25 + 5 + 75 + 2000);
  EXPECT_DOUBLE_EQ(eval(p, c, "s", pt), 0.125 + 0.625 + 3.125 + kPi + std::numbers::e);
}

TEST(LowerSyntax, CommentsAndContinuationInParentheses) {
  Program p = lower_text(R"(# leading comment
begin thorn T   # trailing comment
  # comment line
  begin variables
    a b r s   # the variables
  end variables
  begin calculation c
    # before an equation
    r = (a +     # inside parentheses a newline does not end the equation
         b) * (a
      - 1)       # closing
    s = max(a,
            b) + a   # + b  (commented out)
  end calculation
end thorn
)");
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"r", "s"}));
  Point pt;
  pt.fields = {{"a", constant_field(3)}, {"b", constant_field(4)}};
  EXPECT_DOUBLE_EQ(eval(p, c, "r", pt), 7.0 * 2.0);
  EXPECT_DOUBLE_EQ(eval(p, c, "s", pt), 4.0 + 3.0);
}

} // namespace
} // namespace saguaro::calc
