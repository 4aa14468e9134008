// Tests of the EDL lowering (calc/lower.hpp): tensor expansion, derivatives, stages, CSE and
// flop counts. Values are checked by evaluating the lowered DAG with the reference
// interpreter on known inputs.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <set>
#include <stdexcept>
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

using Field = std::function<double(double, double, double)>;

// One point of evaluation: fields by grid-function name, evaluated at the shifted coordinates.
struct Point {
  std::map<std::string, Field> fields;
  std::array<double, 3> x{0.3, -0.7, 1.1};
  std::array<double, 3> h{0.1, 0.1, 0.1};
  double t = 0.0;
  std::vector<double> parameters; // empty: the program's defaults
};

double eval_node(const Program& prog, const Calculation& c, NodeId id, const Point& pt) {
  Interpreter interp(c);
  PointInputs in;
  in.coordinate = pt.x;
  in.spacing = pt.h;
  in.time = pt.t;
  in.parameters = pt.parameters.empty() ? default_parameters(prog) : pt.parameters;
  in.load = [&](int gf, const Offset& o) {
    const std::string& name = c.grid_functions.at(gf).name;
    auto it = pt.fields.find(name);
    if (it == pt.fields.end()) throw std::runtime_error("no field for " + name);
    return it->second(pt.x[0] + o[0] * pt.h[0], pt.x[1] + o[1] * pt.h[1], pt.x[2] + o[2] * pt.h[2]);
  };
  return interp.evaluate_node(id, in);
}

double eval(const Program& prog, const Calculation& c, const std::string& gf, const Point& pt) {
  return eval_node(prog, c, store_of(c, gf), pt);
}

Field constant_field(double v) {
  return [v](double, double, double) { return v; };
}

std::string thorn(const std::string& body) {
  return "begin thorn T\n" + body + "\nend thorn\n";
}

// A thorn with one calculation `c` of the given equations over the given variables.
std::string simple(const std::string& variables, const std::string& equations,
                   const std::string& extra = "") {
  return thorn(extra + "\nbegin variables\n" + variables + "\nend variables\n" +
               "begin calculation c\n" + equations + "\nend calculation\n");
}

double rel_err(double a, double b) {
  return std::fabs(a - b) / std::max(1.0, std::fabs(b));
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
    Program prog = lower_text(simple("f d e", eq), p);
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

// ======================================================================= user operators

const char* kOperators = R"(
  begin parameters
    eps : real "dissipation", default: 0.5
  end parameters
  begin derivatives
    Dplus u_i  = (u_(i+1) - u_(i)) / h
    Dcen  u_i  = (u_(i+1) - u_(i-1)) / (2*h)
    Dxx   u_ii = (u_(i+1) - 2 u_(i) + u_(i-1)) / h**2
    Dxy   u_ij = (u_(i+1,j+1) - u_(i+1,j-1) - u_(i-1,j+1) + u_(i-1,j-1)) / (4 h_i h_j)
    Dskew u_ij = (u_(i+1,j-1) - u_(i)) / h_i
    Ddiss u_i  = eps * (u_(i+1) - 2 u_(i) + u_(i-1)) / h
    Dsp   u_i  = u_(i+1)
    Dsm   u_i  = u_(i-1)
  end derivatives
)";

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

// ======================================================================= derivative of an
// expression

// Runs `calc` on a block; `fields` fill every named variable over the whole block (ghosts too).
GridBlock run_on_block(const Program& prog, const Calculation& calc,
                       const std::map<std::string, Field>& fields, std::array<int, 3> size,
                       int ghost, std::array<double, 3> origin, std::array<double, 3> spacing) {
  GridBlock block(size, ghost, calc.grid_functions.size());
  block.origin = origin;
  block.spacing = spacing;
  for (const auto& [name, f] : fields) {
    int gf = calc.find_grid_function(name);
    if (gf < 0) continue;
    for (int k = -ghost; k < size[2] + ghost; ++k)
      for (int j = -ghost; j < size[1] + ghost; ++j)
        for (int i = -ghost; i < size[0] + ghost; ++i)
          block.at(gf, i, j, k) =
              f(block.coordinate(0, i), block.coordinate(1, j), block.coordinate(2, k));
  }
  run_calculation(calc, block, default_parameters(prog));
  return block;
}

// The largest relative error of the grid function `gf` of `calc` over the interior of `block`.
double max_interior_error(const GridBlock& block, const Calculation& calc, const std::string& gf,
                          const Field& exact) {
  const int index = calc.find_grid_function(gf);
  double worst = 0;
  for (int k = 0; k < block.size[2]; ++k)
    for (int j = 0; j < block.size[1]; ++j)
      for (int i = 0; i < block.size[0]; ++i) {
        double e = exact(block.coordinate(0, i), block.coordinate(1, j), block.coordinate(2, k));
        worst = std::max(worst, rel_err(block.at(index, i, j, k), e));
      }
  return worst;
}

TEST(LowerIntermediates, DerivativeOfProduct) {
  for (int p : {2, 4, 6}) {
    const int m = p / 2;
    Program prog = lower_text(simple("a b d", "d = D_1 (a b)"), p);
    const Calculation& c = prog.calculations.at(0);
    ASSERT_EQ(c.stages.size(), 2u);
    ASSERT_EQ(c.stages[0].stores.size(), 1u);
    const GridFunctionRef& tmp = c.grid_functions[c.stages[0].stores[0].grid_function];
    EXPECT_EQ(tmp.role, GridFunctionRole::Intermediate);
    EXPECT_EQ(c.stages[0].extent_lo, (std::array<int, 3>{m, 0, 0}));
    EXPECT_EQ(c.stages[0].extent_hi, (std::array<int, 3>{m, 0, 0}));
    ASSERT_EQ(c.stages[1].stores.size(), 1u);
    EXPECT_EQ(c.grid_functions[c.stages[1].stores[0].grid_function].name, "d");
    EXPECT_EQ(c.stages[1].extent_lo, (std::array<int, 3>{0, 0, 0}));
    EXPECT_EQ(output_names(c), (std::vector<std::string>{"d"}));
    // The inputs are a and b; the intermediate is not an input.
    EXPECT_EQ(c.inputs.size(), 2u);
    EXPECT_TRUE(input_of(c, "a") && input_of(c, "b"));
    EXPECT_FALSE(input_of(c, tmp.name));
    // The intermediate holds a*b: stage 0 reads a and b at the point itself.
    EXPECT_EQ(loads_below(c, c.stages[0].stores[0].value),
              (std::map<std::string, std::set<Offset>>{{"a", {{0, 0, 0}}}, {"b", {{0, 0, 0}}}}));
    // The output reads the intermediate along x at the stencil offsets.
    std::set<Offset> along_x;
    for (int k = -m; k <= m; ++k)
      if (k != 0) along_x.insert({k, 0, 0});
    EXPECT_EQ(loads_below(c, c.stages[1].stores[0].value),
              (std::map<std::string, std::set<Offset>>{{tmp.name, along_x}}));
    // The intermediate never becomes a thorn variable.
    EXPECT_EQ(std::count(prog.variables.begin(), prog.variables.end(), tmp.name), 0);

    // First derivatives are exact to degree p: a b is quadratic in x for p = 2, cubic for p > 2.
    std::map<std::string, Field> fields{
        {"a", [p](double x, double y, double) { return p == 2 ? x + y : x * x + y; }},
        {"b", [](double x, double, double z) { return x - 2 * z; }}};
    Field exact = [p](double x, double y, double z) {
      return p == 2 ? (x - 2 * z) + (x + y) : 2 * x * (x - 2 * z) + x * x + y;
    };
    GridBlock block =
        run_on_block(prog, c, fields, {5, 3, 2}, 2 * m, {0.2, -0.3, 0.5}, {0.1, 0.15, 0.2});
    EXPECT_LT(max_interior_error(block, c, "d", exact), 1e-9) << "p=" << p;
    // Too few ghost points are refused: the intermediate alone needs m beyond the interior.
    EXPECT_THROW(run_on_block(prog, c, fields, {5, 3, 2}, m - 1, {0, 0, 0}, {0.1, 0.1, 0.1}),
                 std::invalid_argument);
  }
}

// a b is computed on the interior extended by m along x from a and b at the point itself, and
// d reads the intermediate at most m away: m ghost points are enough.
TEST(LowerIntermediates, DerivativeOfProductNeedsOnlyStencilRadiusGhosts) {
  for (int p : {2, 4}) {
    const int m = p / 2;
    Program prog = lower_text(simple("a b d", "d = D_1 (a b)"), p);
    const Calculation& c = prog.calculations.at(0);
    std::map<std::string, Field> fields{
        {"a", [](double x, double y, double) { return x + y; }},
        {"b", [](double x, double, double z) { return x - 2 * z; }}};
    Field exact = [](double x, double y, double z) { return (x - 2 * z) + (x + y); };
    GridBlock block =
        run_on_block(prog, c, fields, {4, 2, 2}, m, {0.2, -0.3, 0.5}, {0.1, 0.15, 0.2});
    EXPECT_LT(max_interior_error(block, c, "d", exact), 1e-9) << "p=" << p;
  }
  // Nested at order 2: stage 0 covers the interior extended by (1,1,0), reading b and c at the
  // point; stage 1 covers (1,0,0) and reads stage 0 one point along y: one ghost suffices.
  Program nested = lower_text(simple("a b cc d", "d = D_1 (a D_2 (b cc))"), 2);
  const Calculation& c = nested.calculations.at(0);
  std::map<std::string, Field> fields{{"a", [](double x, double y, double) { return x + y; }},
                                      {"b", [](double x, double, double) { return x; }},
                                      {"cc", [](double, double y, double z) { return y + z; }}};
  // a d/dy(b c) = (x + y) x; d/dx = 2x + y
  Field exact = [](double x, double y, double) { return 2 * x + y; };
  GridBlock block =
      run_on_block(nested, c, fields, {3, 2, 2}, 1, {0.3, -0.2, 0.1}, {0.1, 0.12, 0.2});
  EXPECT_LT(max_interior_error(block, c, "d", exact), 1e-9);
  EXPECT_THROW(run_on_block(nested, c, fields, {3, 2, 2}, 0, {0, 0, 0}, {0.1, 0.1, 0.1}),
               std::invalid_argument);
}

TEST(LowerIntermediates, DerivativeOfComputedVariable) {
  // a is computed from an intermediate; D_2 a then shifts a's stencil, so the intermediate is
  // needed on the interior extended along x and y.
  Program prog = lower_text(simple("a b cc d", "a = D_1 (b cc)\nd = D_2 a"));
  const Calculation& c = prog.calculations.at(0);
  ASSERT_EQ(c.stages.size(), 2u);
  EXPECT_EQ(c.stages[0].extent_lo, (std::array<int, 3>{2, 2, 0}));
  EXPECT_EQ(c.stages[0].extent_hi, (std::array<int, 3>{2, 2, 0}));
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"a", "d"}));
  std::map<std::string, Field> fields{
      {"b", [](double x, double y, double) { return x * y; }},
      {"cc", [](double x, double y, double z) { return x + y * z; }}};
  // b c = x^2 y + x y^2 z; a = 2 x y + y^2 z; d = 2 x + 2 y z
  Field a_exact = [](double x, double y, double z) { return 2 * x * y + y * y * z; };
  Field d_exact = [](double x, double y, double z) { return 2 * x + 2 * y * z; };
  GridBlock block = run_on_block(prog, c, fields, {3, 3, 2}, 4, {0.1, 0.4, -0.2}, {0.1, 0.2, 0.3});
  EXPECT_LT(max_interior_error(block, c, "a", a_exact), 1e-9);
  EXPECT_LT(max_interior_error(block, c, "d", d_exact), 1e-9);
}

TEST(LowerIntermediates, IntermediateFamilies) {
  // One intermediate per (i, j): v_i w^j.
  Program prog = lower_text(simple("v_i w^i u_i", "u_i = D_j (v_i w^j)"));
  const Calculation& c = prog.calculations.at(0);
  ASSERT_EQ(c.stages.size(), 2u);
  EXPECT_EQ(c.stages[0].stores.size(), 9u);
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"u1", "u2", "u3"}));
  std::map<std::string, Field> fields{{"v1", [](double x, double, double) { return x; }},
                                      {"v2", [](double, double y, double) { return y; }},
                                      {"v3", [](double, double, double z) { return z; }},
                                      {"w1", [](double, double y, double) { return y; }},
                                      {"w2", [](double, double, double z) { return z; }},
                                      {"w3", [](double x, double, double) { return x; }}};
  // u_i = d_j (v_i w^j) = w^j d_j v_i + v_i d_j w^j = w^i + 0 (div w = 0)
  GridBlock block = run_on_block(prog, c, fields, {2, 2, 2}, 4, {0.3, 0.5, 0.7}, {0.1, 0.2, 0.3});
  EXPECT_LT(max_interior_error(block, c, "u1", fields["w1"]), 1e-10);
  EXPECT_LT(max_interior_error(block, c, "u2", fields["w2"]), 1e-10);
  EXPECT_LT(max_interior_error(block, c, "u3", fields["w3"]), 1e-10);
}

TEST(LowerIntermediates, ReassignmentIsSequential) {
  Program prog = lower_text(simple("a b", "a = 1\nb = a + 1\na = 3 b"));
  const Calculation& c = prog.calculations.at(0);
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"a", "b"}));
  double v = 0;
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "a"), &v));
  EXPECT_EQ(v, 6.0);
  ASSERT_TRUE(c.dag.is_constant(store_of(c, "b"), &v));
  EXPECT_EQ(v, 2.0);
}

TEST(LowerIntermediates, OneSidedOperatorOfProduct) {
  Program prog = lower_text(simple("a b d", "d = Dplus_2 (a b)", kOperators));
  const Calculation& c = prog.calculations.at(0);
  ASSERT_EQ(c.stages.size(), 2u);
  EXPECT_EQ(c.stages[0].extent_lo, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(c.stages[0].extent_hi, (std::array<int, 3>{0, 1, 0}));
  std::map<std::string, Field> fields{{"a", [](double, double y, double) { return y; }},
                                      {"b", [](double x, double y, double) { return y + x; }}};
  // ((y+h)(y+h+x) - y(y+x)) / h = 2y + x + h
  const double h = 0.25;
  Field exact = [h](double x, double y, double) { return 2 * y + x + h; };
  GridBlock block = run_on_block(prog, c, fields, {3, 3, 3}, 2, {0, 0, 0}, {0.1, h, 0.3});
  EXPECT_LT(max_interior_error(block, c, "d", exact), 1e-12);
}

TEST(LowerIntermediates, SameExpressionSharesOneIntermediate) {
  Program prog = lower_text(simple("a b d e", "d = D_1 (a b) + D_2 (b a)\ne = D_3 (a*b)"));
  const Calculation& c = prog.calculations.at(0);
  ASSERT_EQ(c.stages.size(), 2u);
  ASSERT_EQ(c.stages[0].stores.size(), 1u);
  EXPECT_EQ(c.stages[0].extent_lo, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(c.stages[0].extent_hi, (std::array<int, 3>{2, 2, 2}));
  std::map<std::string, Field> fields{
      {"a", [](double x, double y, double z) { return x + y * z; }},
      {"b", [](double x, double y, double z) { return y - x * z; }}};
  // ab = xy - x^2 z + y^2 z - x y z^2
  Field dd = [](double x, double y, double z) {
    return (y - 2 * x * z - y * z * z) + (x + 2 * y * z - x * z * z);
  };
  Field de_exact = [](double x, double y, double z) { return -x * x + y * y - 2 * x * y * z; };
  GridBlock block = run_on_block(prog, c, fields, {3, 3, 3}, 4, {0.1, 0.2, 0.3}, {0.1, 0.2, 0.3});
  EXPECT_LT(max_interior_error(block, c, "d", dd), 1e-9);
  EXPECT_LT(max_interior_error(block, c, "e", de_exact), 1e-9);
}

TEST(LowerIntermediates, NestedDerivativesMakeThreeStages) {
  Program prog = lower_text(simple("a b cc d", "d = D_1 (a D_2 (b cc))"));
  const Calculation& c = prog.calculations.at(0);
  ASSERT_EQ(c.stages.size(), 3u);
  for (int s = 0; s < 2; ++s) {
    ASSERT_EQ(c.stages[s].stores.size(), 1u);
    EXPECT_EQ(c.grid_functions[c.stages[s].stores[0].grid_function].role,
              GridFunctionRole::Intermediate);
  }
  EXPECT_EQ(c.stages[0].extent_lo, (std::array<int, 3>{2, 2, 0}));
  EXPECT_EQ(c.stages[0].extent_hi, (std::array<int, 3>{2, 2, 0}));
  EXPECT_EQ(c.stages[1].extent_lo, (std::array<int, 3>{2, 0, 0}));
  EXPECT_EQ(c.stages[1].extent_hi, (std::array<int, 3>{2, 0, 0}));
  EXPECT_EQ(c.stages[2].extent_lo, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"d"}));
  // Stage 1 reads the stage-0 intermediate along y only.
  auto loads = loads_below(c, c.stages[1].stores[0].value);
  const std::string& t0 = c.grid_functions[c.stages[0].stores[0].grid_function].name;
  ASSERT_TRUE(loads.count(t0));
  EXPECT_EQ(loads.at(t0), (std::set<Offset>{{0, -2, 0}, {0, -1, 0}, {0, 1, 0}, {0, 2, 0}}));

  std::map<std::string, Field> fields{{"a", [](double x, double y, double) { return x + y; }},
                                      {"b", [](double x, double y, double) { return x * y; }},
                                      {"cc", [](double, double y, double z) { return y + z; }}};
  // a d/dy(b c) = (x+y)(2xy + xz); d/dx = 4xy + 2xz + 2y^2 + yz
  Field exact = [](double x, double y, double z) {
    return 4 * x * y + 2 * x * z + 2 * y * y + y * z;
  };
  GridBlock block = run_on_block(prog, c, fields, {3, 4, 2}, 4, {0.3, -0.2, 0.1}, {0.1, 0.12, 0.2});
  EXPECT_LT(max_interior_error(block, c, "d", exact), 1e-9);
}

TEST(LowerIntermediates, LinearOperandComposesWithoutIntermediate) {
  Program prog = lower_text(thorn(R"(
  begin parameters
    q : real "q", default: 2
  end parameters
  begin variables
    f d e
  end variables
  begin calculation c
    d = D_1 (q D_2 f)
    e = D_1 D_1 f
  end calculation
)"));
  const Calculation& c = prog.calculations.at(0);
  EXPECT_EQ(c.stages.size(), 1u);
  std::set<Offset> expected;
  for (int i : {-2, -1, 1, 2})
    for (int j : {-2, -1, 1, 2}) expected.insert({i, j, 0});
  EXPECT_EQ(loads_below(c, store_of(c, "d")).at("f"), expected);
  Point pt;
  pt.h = {0.1, 0.2, 0.3};
  pt.fields = {{"f", [](double x, double y, double) { return x * x * y + x * x * x * x; }}};
  EXPECT_NEAR(eval(prog, c, "d", pt), 2 * 2 * pt.x[0], 1e-9);
  EXPECT_NEAR(eval(prog, c, "e", pt), 2 * pt.x[1] + 12 * pt.x[0] * pt.x[0], 1e-9);
}

TEST(LowerIntermediates, WritingAndReadingAtOffsetIsAnError) {
  EXPECT_THROW(lower_text(simple("a b", "a = D_1 b\nb = 1")), edl::EdlError);
  EXPECT_THROW(lower_text(simple("a", "a = D_1 a")), edl::EdlError);
  // In place at the point itself is fine.
  EXPECT_NO_THROW(lower_text(simple("a", "a = 2 a + 1")));
}

// ======================================================================= CSE

std::size_t count_reachable(const Calculation& c, Op op) {
  std::vector<NodeId> roots;
  for (const auto& stage : c.stages)
    for (const auto& s : stage.stores) roots.push_back(s.value);
  std::size_t n = 0;
  for (NodeId id : c.dag.reachable(roots))
    if (c.dag.node(id).op == op) ++n;
  return n;
}

TEST(LowerCse, RepeatedCallIsOneNode) {
  Program p = lower_text(simple("s r", "s = sin(x) + sin(x)\nr = sin(x) * cos(x) + sin(x)"));
  const Calculation& c = p.calculations.at(0);
  // sin(x) once, cos(x) once.
  EXPECT_EQ(count_reachable(c, Op::Call), 2u);
  EXPECT_EQ(c.flops.transcendental, 2);
  Program q = lower_text(simple("s", "s = sin(x) + sin(x)"));
  EXPECT_EQ(count_reachable(q.calculations[0], Op::Call), 1u);
  EXPECT_EQ(q.calculations[0].flops.transcendental, 1);
  Point pt;
  EXPECT_DOUBLE_EQ(eval(q, q.calculations[0], "s", pt), 2 * std::sin(pt.x[0]));
}

TEST(LowerCse, RepeatedDerivativeIsOneSetOfNodes) {
  Program twice = lower_text(simple("f a b", "a = D_1 f\nb = 2 D_1 f + D_1 f * D_1 f"));
  Program once = lower_text(simple("f a", "a = D_1 f"));
  const Calculation& c = twice.calculations.at(0);
  EXPECT_EQ(count_reachable(c, Op::Load), 4u);
  // The stencil sum of `a` is a node below `b` too.
  std::vector<NodeId> below_b = c.dag.reachable({store_of(c, "b")});
  EXPECT_TRUE(std::find(below_b.begin(), below_b.end(), store_of(c, "a")) != below_b.end());
  // The stencil costs once: b adds only a few flops on top of a.
  const FlopCounts& f1 = once.calculations[0].flops;
  EXPECT_GT(c.flops.total(), f1.total());
  EXPECT_LE(c.flops.total(), f1.total() + 4);
  // Two new nodes at most (the square and the sum), not a second stencil.
  EXPECT_LE(c.node_count, once.calculations[0].node_count + 3);
  Point pt;
  pt.fields = {{"f", [](double x, double, double) { return x * x; }}};
  double d = 2 * pt.x[0];
  EXPECT_NEAR(eval(twice, c, "b", pt), 2 * d + d * d, 1e-10);
}

// ======================================================================= flop counts

TEST(LowerFlops, MicrobenchLikeSum) {
  Program p = lower_text(simple("B A0 A1 A2", R"(
    B = B + 0.1*A0 + 0.2*Dsm_1 A0 + 0.3*A1 + 0.4*Dsp_2 A1 + 0.5*A2 + 0.6*Dsm_3 A2
  )",
                                kOperators));
  const Calculation& c = p.calculations.at(0);
  EXPECT_EQ(c.flops.add, 6);
  EXPECT_EQ(c.flops.mul, 6);
  EXPECT_EQ(c.flops.div, 0);
  EXPECT_EQ(c.flops.total(), 12);
  EXPECT_EQ(c.flops.fma, 6);
  EXPECT_EQ(c.inputs.size(), 4u);
  EXPECT_EQ(offsets_of(c, "B"), (std::set<Offset>{{0, 0, 0}}));
  EXPECT_EQ(offsets_of(c, "A1"), (std::set<Offset>{{0, 0, 0}, {0, 1, 0}}));
  Point pt;
  pt.fields = {{"B", constant_field(1)},
               {"A0", [](double x, double, double) { return x; }},
               {"A1", [](double, double y, double) { return y; }},
               {"A2", [](double, double, double z) { return z; }}};
  double x = pt.x[0], y = pt.x[1], z = pt.x[2], h = pt.h[0];
  EXPECT_NEAR(eval(p, c, "B", pt),
              1 + 0.1 * x + 0.2 * (x - h) + 0.3 * y + 0.4 * (y + h) + 0.5 * z + 0.6 * (z - h),
              1e-12);
}

TEST(LowerFlops, Operations) {
  Program p = lower_text(thorn(R"(
  begin parameters
    pa : real "p", default: 2
    pb : real "q", default: 3
  end parameters
  begin variables
    a b r1 r2 r3 r4 r5 r6 r7 r8
  end variables
  begin calculation c1
    r1 = a / b
  end calculation
  begin calculation c2
    r2 = sqrt(a)
  end calculation
  begin calculation c3
    r3 = min(a, b)
  end calculation
  begin calculation c4
    r4 = a * (pa*pb + sin(pa) / pb)
  end calculation
  begin calculation c5
    r5 = exp(a) + pow(a, b)
  end calculation
  begin calculation c6
    r6 = abs(a) + max(a, b) + sign(b)
  end calculation
  begin calculation c7
    r7 = a**3
  end calculation
  begin calculation c8
    r8 = pa*pb + sqrt(pa) + 1
  end calculation
)"));
  auto f = [&](const char* name) { return calc_named(p, name).flops; };
  EXPECT_EQ(f("c1").div, 1);
  EXPECT_EQ(f("c1").total(), 1);
  EXPECT_EQ(f("c2").sqrt, 1);
  EXPECT_EQ(f("c2").total(), 1);
  EXPECT_EQ(f("c3").other, 1);
  EXPECT_EQ(f("c3").total(), 1);
  // The uniform factor is hoisted: one multiplication per point.
  EXPECT_EQ(f("c4").mul, 1);
  EXPECT_EQ(f("c4").total(), 1);
  EXPECT_EQ(f("c5").transcendental, 2);
  EXPECT_EQ(f("c5").add, 1);
  EXPECT_EQ(f("c5").total(), 3);
  EXPECT_EQ(f("c6").other, 3);
  EXPECT_EQ(f("c6").add, 2);
  EXPECT_EQ(f("c7").mul, 2);
  EXPECT_EQ(f("c7").total(), 2);
  EXPECT_EQ(f("c8").total(), 0) << "parameter-only expressions cost nothing per point";
}

} // namespace
} // namespace saguaro::calc
