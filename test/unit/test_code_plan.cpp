// The kernel plan (calc/code_plan.hpp): for a known stencil under each strategy, the buffers'
// geometry, the shared memory, every load's buffer, the evaluation order and the arguments.
#include "support.hpp"

#include "calc/code_plan.hpp"

#include <gtest/gtest.h>

namespace saguaro::calc {
namespace {

// u along z only (3 points), v in the x-y plane (5 points), q along every axis (7 points),
// second-order differences.
const char* kPlanDemo = R"(
begin thorn PlanDemo
  begin variables
    u v q a
  end variables
  begin calculation c scheduled at evol
    a = D_33 u + D_11 v + D_22 v + D_11 q + D_22 q + D_33 q
  end calculation
end thorn
)";

const BlockConfig kBlock{2, 32, 8, 8}; // z 32x8x8

struct Demo {
  Program program = test::lower_text(kPlanDemo, 2);
  const Calculation& calc = program.calculations.at(0);
  int gf(const std::string& name) const {
    for (std::size_t g = 0; g < calc.grid_functions.size(); ++g)
      if (calc.grid_functions[g].name == name) return int(g);
    throw std::runtime_error("no grid function " + name);
  }
  CodePlan plan(Buffering b) const {
    const CalculationPlan p = plan_code(calc, buffered_mapping(calc, b, kBlock));
    EXPECT_EQ(p.kernels.size(), 1u);
    return p.kernels.at(0);
  }
  const PlannedInput& input(const CodePlan& k, const std::string& name) const {
    for (const PlannedInput& in : k.inputs)
      if (in.grid_function == gf(name)) return in;
    throw std::runtime_error("no input " + name);
  }
  const Load& load(const CodePlan& k, const std::string& name, const Offset& o) const {
    for (const Load& l : input(k, name).loads)
      if (l.offset == o) return l;
    throw std::runtime_error("no load");
  }
};

TEST(CodePlan, UnbufferedReadsEveryOffsetFromGlobalMemory) {
  Demo d;
  const CodePlan k = d.plan(Buffering::Unbuffered);
  EXPECT_EQ(k.e, 2);
  EXPECT_EQ(k.f, 1);
  EXPECT_EQ(k.block, kBlock);
  EXPECT_TRUE(k.pipelines.empty());
  EXPECT_TRUE(k.tiles.empty());
  EXPECT_TRUE(k.planes.empty());
  EXPECT_EQ(k.shared_bytes, 0u);
  EXPECT_FALSE(k.barriers);
  ASSERT_EQ(k.inputs.size(), 3u);
  EXPECT_EQ(d.input(k, "u").loads.size(), 3u);
  EXPECT_EQ(d.input(k, "v").loads.size(), 5u);
  EXPECT_EQ(d.input(k, "q").loads.size(), 7u);
  for (const PlannedInput& in : k.inputs)
    for (const Load& l : in.loads) EXPECT_EQ(l.kind, BufferKind::Global);
  // The six offsets other than the point itself, named once each.
  EXPECT_EQ(k.global_offsets.size(), 6u);
  // Arguments: the three inputs and the output, a written.
  ASSERT_EQ(k.fields.size(), 4u);
  for (const FieldArgument& a : k.fields) EXPECT_EQ(a.written, a.grid_function == d.gf("a"));
}

TEST(CodePlan, RegisterPipelineCoversTheLineStencil) {
  Demo d;
  const CodePlan k = d.plan(Buffering::Register);
  // Only u's stencil lies on the z axis; v and q stay global.
  ASSERT_EQ(k.pipelines.size(), 1u);
  EXPECT_EQ(k.pipelines[0], (RegisterPipeline{d.gf("u"), -1, 1}));
  EXPECT_EQ(d.input(k, "u").strategy, Buffering::Register);
  EXPECT_EQ(d.input(k, "v").strategy, Buffering::Unbuffered);
  for (int dz : {-1, 0, 1}) {
    const Load& l = d.load(k, "u", {0, 0, dz});
    EXPECT_EQ(l.kind, BufferKind::Register);
    EXPECT_EQ(l.buffer, 0);
    EXPECT_EQ(l.element, dz);
  }
  EXPECT_EQ(k.shared_bytes, 0u);
  EXPECT_FALSE(k.barriers);
}

TEST(CodePlan, SharedTilesAreTheBlockGrownByTheStencil) {
  Demo d;
  const CodePlan k = d.plan(Buffering::Shared);
  ASSERT_EQ(k.tiles.size(), 3u);
  // In grid-function order; u grows along z only, v along x and y, q along all three.
  const SharedBuffer& u = k.tiles[0];
  const SharedBuffer& v = k.tiles[1];
  const SharedBuffer& q = k.tiles[2];
  EXPECT_EQ(u.grid_function, d.gf("u"));
  EXPECT_EQ((std::array{u.nx, u.nf, u.ne}), (std::array{32, 8, 10}));
  EXPECT_EQ((std::array{v.nx, v.nf, v.ne}), (std::array{34, 10, 8}));
  EXPECT_EQ((std::array{q.nx, q.nf, q.ne}), (std::array{34, 10, 10}));
  EXPECT_EQ(u.base, 0u);
  EXPECT_EQ(v.base, 2560u);
  EXPECT_EQ(q.base, 2560u + 2720u);
  EXPECT_EQ(k.shared_bytes, (2560u + 2720u + 3400u) * 8);
  EXPECT_TRUE(k.barriers);
  // Element offsets: x, then f (y) rows of nx, then e (z) planes of nx nf.
  EXPECT_EQ(d.load(k, "q", {1, 0, 0}).element, 1);
  EXPECT_EQ(d.load(k, "q", {0, -1, 0}).element, -34);
  EXPECT_EQ(d.load(k, "q", {0, 0, 1}).element, 340);
  EXPECT_EQ(d.load(k, "q", {0, 0, 1}).kind, BufferKind::SharedTile);
  EXPECT_EQ(d.load(k, "q", {0, 0, 1}).buffer, 2);
}

TEST(CodePlan, PlusIsAPipelineAlongEAndASharedPlane) {
  Demo d;
  const CodePlan k = d.plan(Buffering::Plus);
  // u has no in-plane offset: p does not apply, so it stays global.
  EXPECT_EQ(d.input(k, "u").strategy, Buffering::Unbuffered);
  ASSERT_EQ(k.pipelines.size(), 2u);
  EXPECT_EQ(k.pipelines[0], (RegisterPipeline{d.gf("v"), 0, 0}));
  EXPECT_EQ(k.pipelines[1], (RegisterPipeline{d.gf("q"), -1, 1}));
  ASSERT_EQ(k.planes.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(k.planes[i].nx, 34);
    EXPECT_EQ(k.planes[i].nf, 10);
    EXPECT_EQ(k.planes[i].ne, 1);
    EXPECT_EQ(k.planes[i].fill_pipeline, int(i));
    EXPECT_EQ(k.planes[i].halo_slots, 2); // 340 entries over 256 threads
  }
  EXPECT_EQ(k.planes[1].base, 340u);
  EXPECT_EQ(k.shared_bytes, 680u * 8);
  EXPECT_TRUE(k.barriers);
  EXPECT_EQ(d.load(k, "q", {0, 0, -1}).kind, BufferKind::Register);
  EXPECT_EQ(d.load(k, "q", {0, 0, -1}).element, -1);
  EXPECT_EQ(d.load(k, "q", {0, 0, 0}).kind, BufferKind::Register);
  EXPECT_EQ(d.load(k, "q", {0, 1, 0}).kind, BufferKind::SharedPlane);
  EXPECT_EQ(d.load(k, "q", {0, 1, 0}).element, 34);
  EXPECT_EQ(d.load(k, "v", {-1, 0, 0}).element, -1);
  EXPECT_EQ(d.load(k, "v", {-1, 0, 0}).buffer, 0);
}

TEST(CodePlan, ReadOnlyLoadsEveryInputThroughTheCache) {
  Demo d;
  const CodePlan k = d.plan(Buffering::ReadOnly);
  for (const PlannedInput& in : k.inputs) {
    EXPECT_EQ(in.strategy, Buffering::ReadOnly);
    for (const Load& l : in.loads) EXPECT_EQ(l.kind, BufferKind::ReadOnly);
  }
  EXPECT_EQ(k.global_offsets.size(), 6u);
}

TEST(CodePlan, EvaluationIsDepthFirstWithEachLoadOnceAndTheStoreLast) {
  Demo d;
  const CodePlan k = d.plan(Buffering::Unbuffered);
  ASSERT_FALSE(k.steps.empty());
  EXPECT_EQ(k.steps.back().kind, Step::Kind::StoreField);
  EXPECT_EQ(k.steps.back().target, d.gf("a"));
  std::set<NodeId> seen;
  int loads = 0;
  for (const Step& s : k.steps) {
    if (s.kind != Step::Kind::Evaluate) continue;
    EXPECT_TRUE(seen.insert(s.node).second) << "node " << s.node << " evaluated twice";
    for (NodeId kid : d.calc.dag.node(s.node).kids) // operands first
      EXPECT_TRUE(d.calc.dag.node(kid).uniform || seen.count(kid)) << "node " << s.node;
    if (d.calc.dag.node(s.node).op == Op::Load) ++loads;
  }
  EXPECT_EQ(loads, 15);
}

// The calculation `a = EXPRESSION` over variables u, v and b, lowered at fd order 2.
Program one_equation(const std::string& expression) {
  return test::lower_text("begin thorn Live\n"
                          "  begin variables\n    u v b a\n  end variables\n"
                          "  begin calculation c scheduled at evol\n    a = " +
                              expression +
                              "\n  end calculation\n"
                              "end thorn\n",
                          2);
}

// The values alive at once, counted on sums whose order is known: a = (u + v) * (u - v) loads u
// and v (2 live), computes u + v (3: u and v are still needed) and u - v (4, then u and v die),
// and the product (3, then both sums die): at most 4.
TEST(CodePlan, LiveValuesAreCountedFromFirstUseToLastUse) {
  const Program program = one_equation("(u + v) * (u - v)");
  const Calculation& calc = program.calculations.at(0);
  const KernelPlan plan = plan_kernels(calc, default_mapping(calc)).at(0);
  const std::vector<NodeId> order = evaluation_order(calc.dag, plan);
  ASSERT_EQ(order.size(), 5u); // u, v, u + v, u - v, the product
  EXPECT_EQ(max_live_values(calc.dag, order), 4);
}

// A value loaded at the point is loaded after its siblings are computed, not before them (a
// folded stage's y0 + 1/2 dt k held y0 through the whole right-hand side): a = b + (u + v) *
// (u - v) computes the product (4 alive at most, as above), then loads b; b first held 5.
TEST(CodePlan, AValueLoadedAtThePointIsLoadedAfterItsSiblings) {
  const Program program = one_equation("b + (u + v) * (u - v)");
  const Calculation& calc = program.calculations.at(0);
  const KernelPlan plan = plan_kernels(calc, default_mapping(calc)).at(0);
  const std::vector<NodeId> order = evaluation_order(calc.dag, plan);
  ASSERT_EQ(order.size(), 7u); // u, v, u + v, u - v, the product, b, the sum
  const Node& b = calc.dag.node(order[5]);
  EXPECT_EQ(b.op, Op::Load);
  EXPECT_EQ(calc.grid_functions[std::size_t(b.index)].name, "b");
  EXPECT_EQ(calc.dag.node(order[4]).op, Op::Mul);
  EXPECT_EQ(max_live_values(calc.dag, order), 4);
}

// A kernel loads an earlier kernel's temporary where it first uses it, not at the start of the
// body, so that it does not hold a register through everything computed before.
TEST(CodePlan, TemporariesAreLoadedWhereFirstUsed) {
  const Program program = test::lower_text(R"(
begin thorn Temps
  begin variables
    u v a b
  end variables
  begin calculation c scheduled at evol
    b = (v * v + 1) * (D_11 u * D_22 u + 3)
    a = D_11 u * D_22 u + 3
  end calculation
end thorn
)",
                                           2);
  const Calculation& calc = program.calculations.at(0);
  // Kernel 0 stores a and, as a temporary, the value a is (shared with b); kernel 1 stores b.
  auto store_of = [&](const std::string& name) {
    for (std::size_t st = 0; st < calc.stages[0].stores.size(); ++st)
      if (calc.grid_functions[std::size_t(calc.stages[0].stores[st].grid_function)].name == name)
        return int(st);
    throw std::runtime_error("no store " + name);
  };
  const NodeId shared = calc.stages[0].stores[std::size_t(store_of("a"))].value;
  Mapping m;
  m.kernels.push_back(KernelMapping{0, {store_of("a")}, {shared}, kBlock, {}});
  m.kernels.push_back(KernelMapping{0, {store_of("b")}, {}, kBlock, {}});
  const CalculationPlan p = plan_code(calc, m);
  const std::vector<Step>& steps = p.kernels.at(1).steps;
  std::size_t load = steps.size(), first_arithmetic = steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == Step::Kind::LoadTemporary) load = std::min(load, i);
    if (steps[i].kind == Step::Kind::Evaluate && calc.dag.node(steps[i].node).op != Op::Load)
      first_arithmetic = std::min(first_arithmetic, i);
  }
  ASSERT_LT(load, steps.size());
  EXPECT_GT(load, first_arithmetic) << "v * v + 1 is computed before the temporary is loaded";
  EXPECT_EQ(steps.back().kind, Step::Kind::StoreField);
}

TEST(CodePlan, TextNamesBuffersAndLoads) {
  Demo d;
  const std::string text = to_string(d.calc, d.plan(Buffering::Plus));
  EXPECT_NE(text.find("shared plane q: 34 x 10 x 1"), std::string::npos) << text;
  EXPECT_NE(text.find("register pipeline q: z offsets -1 .. 1"), std::string::npos) << text;
  EXPECT_NE(text.find("shared memory: 5440 bytes per block, barriers"), std::string::npos) << text;
  EXPECT_NE(text.find("(0,1,0)=shared plane[+34]"), std::string::npos) << text;
}

} // namespace
} // namespace saguaro::calc
