// Tests of the EDL lowering (calc/lower.hpp) of derivatives of expressions, which become
// intermediate grid functions computed in earlier stages (run on a whole block with ghosts),
// and of the lowered DAG's cost: common-subexpression elimination and flop counts.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
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

using namespace saguaro::test;

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

// D_12 f and D_13 f nested (LowerOptions::mixed): D_1 f stored a stage earlier over the interior
// widened along y and z, shared by both, then differentiated; D_23 f the product stencil still;
// the same numbers as the product stencils (to rounding), all exact on a cubic, and no more
// ghost points than they need; auto nests from fd order 8 only.
TEST(LowerIntermediates, NestedMixedDerivativesEqualTheProductStencil) {
  const std::string text = simple("f d e g", "d = D_12 f\ne = D_31 f\ng = D_23 f");
  std::map<std::string, Field> fields{{"f", [](double x, double y, double z) {
                                         return x * x * x * y * y * z + x * y * y * y - z * z * y;
                                       }}};
  const Field d_exact = [](double x, double y, double z) { return 6 * x * x * y * z + 3 * y * y; };
  const Field e_exact = [](double x, double y, double) { return 3 * x * x * y * y; };
  const Field g_exact = [](double x, double y, double z) { return 2 * x * x * x * y - 2 * z; };
  for (int p : {4, 8}) {
    const int m = p / 2;
    SCOPED_TRACE(p);
    const Program product = lower(edl::parse_string(text), {p, MixedDerivatives::Product});
    const Program nested = lower(edl::parse_string(text), {p, MixedDerivatives::Nested});
    const Program automatic = lower(edl::parse_string(text), {p, MixedDerivatives::Auto});
    const Calculation& cp = product.calculations.at(0);
    const Calculation& cn = nested.calculations.at(0);
    EXPECT_EQ(cp.stages.size(), 1u);
    EXPECT_EQ(automatic.calculations.at(0).stages.size(), p >= 8 ? 2u : 1u);
    // One intermediate, D_1 f, for D_12 and D_13.
    ASSERT_EQ(cn.stages.size(), 2u);
    ASSERT_EQ(cn.stages[0].stores.size(), 1u);
    EXPECT_EQ(required_margin(cn).max(), m);
    EXPECT_EQ(loads_below(cn, store_of(cn, "g")), loads_below(cp, store_of(cp, "g")));
    EXPECT_EQ(cn.stages[0].extent_lo, (std::array<int, 3>{0, m, m}));
    EXPECT_EQ(cn.stages[0].extent_hi, (std::array<int, 3>{0, m, m}));
    // Each stage reads along one axis: 2m points, not the product's (2m)^2.
    std::set<Offset> along_x;
    for (int k = -m; k <= m; ++k)
      if (k != 0) along_x.insert({k, 0, 0});
    EXPECT_EQ(loads_below(cn, cn.stages[0].stores[0].value).at("f"), along_x);
    EXPECT_EQ(loads_below(cp, store_of(cp, "d")).at("f").size(), std::size_t(4 * m * m));
    EXPECT_LT(cn.flops.total(), cp.flops.total());
    const std::array<int, 3> size{6, 5, 4};
    const std::array<double, 3> origin{0.3, -0.2, 0.4}, h{0.1, 0.15, 0.2};
    const GridBlock bp = run_on_block(product, cp, fields, size, m, origin, h);
    const GridBlock bn = run_on_block(nested, cn, fields, size, m, origin, h); // m ghosts suffice
    for (const auto& [name, exact] :
         std::map<std::string, Field>{{"d", d_exact}, {"e", e_exact}, {"g", g_exact}}) {
      EXPECT_LT(max_interior_error(bp, cp, name, exact), 1e-9) << name;
      EXPECT_LT(max_interior_error(bn, cn, name, exact), 1e-9) << name;
      const int ip = cp.find_grid_function(name), in = cn.find_grid_function(name);
      double worst = 0;
      for (int k = 0; k < size[2]; ++k)
        for (int j = 0; j < size[1]; ++j)
          for (int i = 0; i < size[0]; ++i)
            worst = std::max(worst, rel_err(bn.at(in, i, j, k), bp.at(ip, i, j, k)));
      EXPECT_LT(worst, 1e-12) << name;
    }
  }
  // A nested mixed derivative nobody uses (multiplied by zero, as Euc^12 D_12 phi in
  // par/wave.edl) leaves no stage behind.
  const Program zero = lower(edl::parse_string(simple("f d", "d = 0 * D_12 f + D_11 f")),
                             {8, MixedDerivatives::Nested});
  EXPECT_EQ(zero.calculations.at(0).stages.size(), 1u);
  EXPECT_EQ(mixed_derivatives_from("nested"), MixedDerivatives::Nested);
  EXPECT_THROW(mixed_derivatives_from("tensor"), std::invalid_argument);
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
