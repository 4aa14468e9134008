// Tests of the hash-consed canonical expression DAG (calc/dag.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "calc/dag.hpp"

namespace saguaro::calc {
namespace {

// Term weight of `kid` in the Add node `id`, or NaN when it is not a term.
double term_weight(const Dag& dag, NodeId id, NodeId kid) {
  const Node& n = dag.node(id);
  for (std::size_t k = 0; k < n.kids.size(); ++k)
    if (n.kids[k] == kid) return n.weights[k];
  return std::nan("");
}

// ---------------------------------------------------------------- hash-consing

TEST(DagHashConsing, SameLeafTwiceIsOneNode) {
  Dag dag;
  EXPECT_EQ(dag.load(0), dag.load(0));
  EXPECT_EQ(dag.load(0, {1, 0, 0}), dag.load(0, {1, 0, 0}));
  EXPECT_NE(dag.load(0), dag.load(0, {1, 0, 0}));
  EXPECT_NE(dag.load(0), dag.load(1));
  EXPECT_EQ(dag.parameter(2), dag.parameter(2));
  EXPECT_NE(dag.parameter(2), dag.parameter(3));
  EXPECT_EQ(dag.coordinate(1), dag.coordinate(1));
  EXPECT_NE(dag.coordinate(1), dag.coordinate(2));
  EXPECT_EQ(dag.spacing(0), dag.spacing(0));
  EXPECT_NE(dag.spacing(0), dag.spacing(1));
  EXPECT_EQ(dag.time(), dag.time());
  EXPECT_EQ(dag.constant(2.5), dag.constant(2.5));
  EXPECT_NE(dag.constant(2.5), dag.constant(3.5));
  // -0.0 and 0.0 are one constant.
  EXPECT_EQ(dag.constant(-0.0), dag.constant(0.0));
}

TEST(DagHashConsing, SameExpressionTwiceIsOneNode) {
  Dag dag;
  auto build = [&] {
    NodeId a = dag.load(0), b = dag.load(1), p = dag.parameter(0);
    return dag.add(dag.mul(p, dag.call(Function::Sin, {a})), dag.div(b, dag.coordinate(0)));
  };
  std::size_t before = 0;
  NodeId first = build();
  before = dag.size();
  NodeId second = build();
  EXPECT_EQ(first, second);
  EXPECT_EQ(dag.size(), before) << "building the same expression again must add no nodes";
}

TEST(DagHashConsing, AdditionAndMultiplicationCommute) {
  Dag dag;
  NodeId a = dag.load(0), b = dag.load(1), c = dag.load(2);
  EXPECT_EQ(dag.add(a, b), dag.add(b, a));
  EXPECT_EQ(dag.mul(a, b), dag.mul(b, a));
  // Associativity: nested sums and products flatten.
  EXPECT_EQ(dag.add(dag.add(a, b), c), dag.add(a, dag.add(b, c)));
  EXPECT_EQ(dag.mul(dag.mul(a, b), c), dag.mul(a, dag.mul(c, b)));
  const Node& sum = dag.node(dag.add(dag.add(a, b), c));
  EXPECT_EQ(sum.op, Op::Add);
  EXPECT_EQ(sum.kids.size(), 3u);
}

// ---------------------------------------------------------------- constant folding

TEST(DagFolding, ConstantArithmetic) {
  Dag dag;
  double v = 0;
  ASSERT_TRUE(dag.is_constant(dag.mul(dag.constant(2), dag.constant(3)), &v));
  EXPECT_EQ(v, 6.0);
  ASSERT_TRUE(dag.is_constant(dag.add(dag.constant(2), dag.constant(3)), &v));
  EXPECT_EQ(v, 5.0);
  ASSERT_TRUE(dag.is_constant(dag.sub(dag.constant(2), dag.constant(3)), &v));
  EXPECT_EQ(v, -1.0);
  ASSERT_TRUE(dag.is_constant(dag.div(dag.constant(3), dag.constant(4)), &v));
  EXPECT_EQ(v, 0.75);
  ASSERT_TRUE(dag.is_constant(dag.power(dag.constant(2), dag.constant(10)), &v));
  EXPECT_EQ(v, 1024.0);
  ASSERT_TRUE(dag.is_constant(dag.power(dag.constant(2), dag.constant(0.5)), &v));
  EXPECT_DOUBLE_EQ(v, std::sqrt(2.0));
}

TEST(DagFolding, ConstantCalls) {
  Dag dag;
  double v = -1;
  NodeId s = dag.call(Function::Sin, {dag.constant(0)});
  ASSERT_TRUE(dag.is_constant(s, &v));
  EXPECT_EQ(v, 0.0);
  EXPECT_EQ(s, dag.constant(0.0));
  ASSERT_TRUE(dag.is_constant(dag.call(Function::Cos, {dag.constant(0)}), &v));
  EXPECT_EQ(v, 1.0);
  ASSERT_TRUE(dag.is_constant(dag.call(Function::Max, {dag.constant(-2), dag.constant(5)}), &v));
  EXPECT_EQ(v, 5.0);
  ASSERT_TRUE(dag.is_constant(dag.call(Function::Atan2, {dag.constant(1), dag.constant(1)}), &v));
  EXPECT_DOUBLE_EQ(v, std::atan2(1.0, 1.0));
  ASSERT_TRUE(dag.is_constant(dag.call(Function::Sign, {dag.constant(-3)}), &v));
  EXPECT_EQ(v, -1.0);
  // pow(2, 3) is folded through power().
  ASSERT_TRUE(dag.is_constant(dag.call(Function::Pow, {dag.constant(2), dag.constant(3)}), &v));
  EXPECT_EQ(v, 8.0);
}

TEST(DagFolding, NonFiniteConstantsThrow) {
  Dag dag;
  EXPECT_THROW(dag.div(dag.constant(1), dag.constant(0)), std::domain_error);
  EXPECT_THROW(dag.call(Function::Log, {dag.constant(0)}), std::domain_error);
  EXPECT_THROW(dag.call(Function::Sqrt, {dag.constant(-1)}), std::domain_error);
}

// ---------------------------------------------------------------- simplification

TEST(DagSimplify, MultiplyByOneAndAddZero) {
  Dag dag;
  NodeId x = dag.load(0);
  EXPECT_EQ(dag.mul(x, dag.constant(1)), x);
  EXPECT_EQ(dag.mul(dag.constant(1), x), x);
  EXPECT_EQ(dag.add(x, dag.constant(0)), x);
  EXPECT_EQ(dag.add(dag.constant(0), x), x);
  EXPECT_EQ(dag.scale(x, 1.0), x);
  EXPECT_EQ(dag.mul(x, dag.constant(0)), dag.constant(0));
}

TEST(DagSimplify, XMinusXIsZero) {
  Dag dag;
  NodeId x = dag.load(0);
  EXPECT_EQ(dag.sub(x, x), dag.constant(0));
  NodeId e = dag.mul(dag.call(Function::Sin, {x}), dag.parameter(0));
  EXPECT_EQ(dag.sub(e, e), dag.constant(0));
  EXPECT_EQ(dag.add(e, dag.neg(e)), dag.constant(0));
  // (x + y) - y == x
  NodeId y = dag.load(1);
  EXPECT_EQ(dag.sub(dag.add(x, y), y), x);
}

TEST(DagSimplify, LikeTermsCollect) {
  Dag dag;
  NodeId x = dag.load(0);
  NodeId five_x = dag.add(dag.scale(x, 2), dag.scale(x, 3));
  const Node& n = dag.node(five_x);
  bool ok = (n.op == Op::Add && n.kids.size() == 1 && n.kids[0] == x && n.weights[0] == 5.0 &&
             n.value == 0.0) ||
            (n.op == Op::Mul && n.kids.size() == 1 && n.kids[0] == x && n.weights[0] == 1.0 &&
             n.value == 5.0);
  EXPECT_TRUE(ok) << "2x + 3x should be one term 5*x";
  EXPECT_EQ(five_x, dag.scale(x, 5));

  // Products with numeric coefficients collect too: 2ab + 3ba = 5ab.
  NodeId a = dag.load(1), b = dag.load(2);
  NodeId s = dag.add(dag.mul({{a, 1}, {b, 1}}, 2.0), dag.mul({{b, 1}, {a, 1}}, 3.0));
  EXPECT_EQ(s, dag.mul({{a, 1}, {b, 1}}, 5.0));

  // Within a longer sum: x + y + 2x -> 3x + y (x's weight 3).
  NodeId y = dag.load(3);
  NodeId sum = dag.add({{x, 1}, {y, 1}, {dag.scale(x, 2), 1}});
  ASSERT_EQ(dag.node(sum).op, Op::Add);
  EXPECT_EQ(dag.node(sum).kids.size(), 2u);
  EXPECT_EQ(term_weight(dag, sum, x), 3.0);
  EXPECT_EQ(term_weight(dag, sum, y), 1.0);
}

TEST(DagSimplify, XTimesXIsSquare) {
  Dag dag;
  NodeId x = dag.load(0);
  NodeId sq = dag.mul(x, x);
  const Node& n = dag.node(sq);
  ASSERT_EQ(n.op, Op::Mul);
  ASSERT_EQ(n.kids.size(), 1u);
  EXPECT_EQ(n.kids[0], x);
  EXPECT_EQ(n.weights[0], 2.0);
  EXPECT_EQ(n.value, 1.0);
  // x * x * x -> x^3
  NodeId cube = dag.mul(sq, x);
  ASSERT_EQ(dag.node(cube).op, Op::Mul);
  EXPECT_EQ(dag.node(cube).weights, std::vector<double>{3.0});
  // x^3 / x -> x^2
  EXPECT_EQ(dag.div(cube, x), sq);
}

TEST(DagSimplify, XOverXIsOne) {
  Dag dag;
  NodeId x = dag.load(0), y = dag.load(1);
  EXPECT_EQ(dag.div(x, x), dag.constant(1));
  // (x*y)/(y*x) == 1, (x*y)/y == x
  EXPECT_EQ(dag.div(dag.mul(x, y), dag.mul(y, x)), dag.constant(1));
  EXPECT_EQ(dag.div(dag.mul(x, y), y), x);
  // (6x)/(2x) == 3
  EXPECT_EQ(dag.div(dag.scale(x, 6), dag.scale(x, 2)), dag.constant(3));
}

TEST(DagSimplify, IntegerPowerIsMul) {
  Dag dag;
  NodeId x = dag.load(0);
  NodeId p2 = dag.power(x, dag.constant(2));
  EXPECT_EQ(p2, dag.mul(x, x));
  EXPECT_EQ(dag.call(Function::Pow, {x, dag.constant(2)}), p2);
  NodeId pm1 = dag.power(x, dag.constant(-1));
  EXPECT_EQ(pm1, dag.div(dag.constant(1), x));
  ASSERT_EQ(dag.node(pm1).op, Op::Mul);
  EXPECT_EQ(dag.node(pm1).weights, std::vector<double>{-1.0});
  EXPECT_EQ(dag.power(x, dag.constant(1)), x);
  EXPECT_EQ(dag.power(x, dag.constant(0)), dag.constant(1));
  // (2x)^2 = 4 x^2
  EXPECT_EQ(dag.power(dag.scale(x, 2), dag.constant(2)), dag.mul({{x, 2.0}}, 4.0));
}

TEST(DagSimplify, HalfPowerIsSqrt) {
  Dag dag;
  NodeId x = dag.load(0);
  NodeId r = dag.power(x, dag.constant(0.5));
  const Node& n = dag.node(r);
  ASSERT_EQ(n.op, Op::Call);
  EXPECT_EQ(n.fn, Function::Sqrt);
  EXPECT_EQ(n.kids, std::vector<NodeId>{x});
  EXPECT_EQ(r, dag.call(Function::Sqrt, {x}));
  // x**-0.5 = 1/sqrt(x)
  EXPECT_EQ(dag.power(x, dag.constant(-0.5)), dag.div(dag.constant(1), r));
  // A general exponent stays a Pow node.
  NodeId g = dag.power(x, dag.constant(1.5));
  EXPECT_EQ(dag.node(g).op, Op::Pow);
  NodeId v = dag.power(x, dag.load(1));
  EXPECT_EQ(dag.node(v).op, Op::Pow);
}

// ---------------------------------------------------------------- uniformity and shift

TEST(DagShift, UniformFlags) {
  Dag dag;
  EXPECT_TRUE(dag.node(dag.constant(3)).uniform);
  EXPECT_TRUE(dag.node(dag.parameter(0)).uniform);
  EXPECT_TRUE(dag.node(dag.spacing(1)).uniform);
  EXPECT_TRUE(dag.node(dag.time()).uniform);
  EXPECT_FALSE(dag.node(dag.load(0)).uniform);
  EXPECT_FALSE(dag.node(dag.coordinate(0)).uniform);
  EXPECT_TRUE(dag.node(dag.mul(dag.parameter(0), dag.call(Function::Sin, {dag.time()}))).uniform);
  EXPECT_FALSE(dag.node(dag.mul(dag.parameter(0), dag.load(0))).uniform);
}

TEST(DagShift, MovesLoadsAndCoordinatesKeepsUniforms) {
  Dag dag;
  NodeId p = dag.parameter(0), h = dag.spacing(0), t = dag.time();
  EXPECT_EQ(dag.shift(p, {1, 2, 3}), p);
  EXPECT_EQ(dag.shift(h, {1, 2, 3}), h);
  EXPECT_EQ(dag.shift(t, {1, 2, 3}), t);
  EXPECT_EQ(dag.shift(dag.load(4, {1, 0, -1}), {2, -1, 1}), dag.load(4, {3, -1, 0}));
  EXPECT_EQ(dag.shift(dag.coordinate(2), {0, 0, -2}), dag.coordinate(2, {0, 0, -2}));

  // e = p * sin(f + x) + g^2 / h + t
  auto build = [&](Offset o) {
    NodeId f = dag.load(0, o), g = dag.load(1, o), x = dag.coordinate(0, o);
    return dag.add({{dag.mul(p, dag.call(Function::Sin, {dag.add(f, x)})), 1.0},
                    {dag.div(dag.mul(g, g), h), 1.0},
                    {t, 1.0}});
  };
  NodeId e = build({0, 0, 0});
  EXPECT_EQ(dag.shift(e, {1, -2, 0}), build({1, -2, 0}));
  EXPECT_EQ(dag.shift(e, {0, 0, 0}), e);
  // Shifts compose.
  EXPECT_EQ(dag.shift(dag.shift(e, {1, 0, 0}), {0, 1, 1}), build({1, 1, 1}));
  EXPECT_EQ(dag.shift(dag.shift(e, {1, 0, 0}), {-1, 0, 0}), e);
  // The parameter node stays a kid of the shifted product.
  std::vector<NodeId> nodes = dag.reachable({dag.shift(e, {3, 0, 0})});
  EXPECT_TRUE(std::find(nodes.begin(), nodes.end(), p) != nodes.end());
  EXPECT_TRUE(std::find(nodes.begin(), nodes.end(), h) != nodes.end());
}

TEST(DagShift, StencilLinearity) {
  Dag dag;
  NodeId a = dag.load(0), b = dag.load(1), c = dag.parameter(0);
  // c * (a[1] - a[-1])
  NodeId centered = dag.mul(c, dag.sub(dag.load(0, {1, 0, 0}), dag.load(0, {-1, 0, 0})));
  EXPECT_TRUE(dag.is_stencil_linear(centered));
  EXPECT_TRUE(dag.is_stencil_linear(a));
  EXPECT_TRUE(dag.is_stencil_linear(c));
  EXPECT_TRUE(dag.is_stencil_linear(dag.add(dag.scale(a, 2), dag.coordinate(1))));
  EXPECT_TRUE(dag.is_stencil_linear(dag.div(dag.add(a, b), dag.spacing(0))));
  EXPECT_TRUE(dag.is_stencil_linear(dag.add(a, dag.constant(1))));
  EXPECT_FALSE(dag.is_stencil_linear(dag.mul(a, b)));
  EXPECT_FALSE(dag.is_stencil_linear(dag.mul(a, a)));
  EXPECT_FALSE(dag.is_stencil_linear(dag.div(a, b)));
  EXPECT_FALSE(dag.is_stencil_linear(dag.mul(a, dag.coordinate(0))));
  EXPECT_FALSE(dag.is_stencil_linear(dag.call(Function::Sin, {a})));
  EXPECT_FALSE(dag.is_stencil_linear(dag.add(a, dag.mul(a, b))));
  EXPECT_FALSE(dag.is_stencil_linear(dag.power(a, dag.parameter(1))));
}

TEST(DagReachable, TopologicalAndComplete) {
  Dag dag;
  NodeId a = dag.load(0), b = dag.load(1), unused = dag.load(7);
  NodeId s = dag.call(Function::Sin, {a});
  NodeId e1 = dag.add(dag.mul(s, b), dag.parameter(0));
  NodeId e2 = dag.div(s, dag.coordinate(2));
  std::vector<NodeId> order = dag.reachable({e1, e2});
  ASSERT_FALSE(order.empty());
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  std::set<NodeId> in(order.begin(), order.end());
  EXPECT_EQ(in.size(), order.size()) << "no duplicates";
  EXPECT_TRUE(in.count(e1) && in.count(e2) && in.count(a) && in.count(b) && in.count(s));
  EXPECT_FALSE(in.count(unused));
  // Every kid comes before its parent and is itself listed.
  std::map<NodeId, std::size_t> position;
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (NodeId id : order)
    for (NodeId k : dag.node(id).kids) {
      ASSERT_TRUE(position.count(k)) << "kid " << k << " of " << id << " missing";
      EXPECT_LT(position[k], position[id]);
      EXPECT_LT(k, id) << "children have smaller ids than parents";
    }
  // Closed under kids and nothing else: size equals the nodes reached by hand.
  std::set<NodeId> manual;
  std::vector<NodeId> stack{e1, e2};
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (!manual.insert(id).second) continue;
    for (NodeId k : dag.node(id).kids) stack.push_back(k);
  }
  EXPECT_EQ(manual, in);
}

} // namespace
} // namespace saguaro::calc
