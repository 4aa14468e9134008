// The step plan: where each operation of a step lands for RK4 and ICN with the right-hand
// side whole (the exchange where MoL_PostStep asks for it) and split around a deferred
// exchange; post-step calculations that read the ghosts; the runner's combinations and
// times.
#include "support.hpp"

#include <algorithm>

using namespace saguaro::schedule;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Role = StepFunction::Role;

namespace {

// MoL_CalcRHS as the simulation schedules it for par/wave.edl: the calculation, then the
// radiative boundaries (which difference along the faces: they read ghosts too).
std::vector<StepFunction> calc_rhs(bool split) {
  return {{"wave_rhs", Role::call, true, split}, {"Boundary_RHS", Role::call, true, false}};
}
std::vector<StepFunction> post_step() {
  return {{"Driver_SyncEvolved", Role::sync_evolved},
          {"Boundary_ApplyOuter", Role::boundary_state}};
}

// "stage: what" per operation.
std::vector<std::string> lines(const StepPlan& plan) {
  std::vector<std::string> out;
  for (const StepOp& op : plan.ops)
    out.push_back(std::to_string(op.stage) + ": " + plan.describe(op));
  return out;
}

std::vector<std::string> stage_lines(const StepPlan& plan, int stage) {
  std::vector<std::string> out;
  for (const StepOp& op : plan.ops)
    if (op.stage == stage) out.push_back(plan.describe(op));
  return out;
}

// The time-tiled variant: one launch of the right-hand side for every stage, writing the new
// state to y1, then the swap at t + dt; its coefficients are the tableau's. The launch reads its
// columns wrapped around the periodic box, never a ghost, so MoL_PostStep's exchange and the
// boundaries behind it are left pending at the step's entry and exit: what reads ghosts between
// steps does them.
TEST(StepPlan, TimeTiledRK4IsOneLaunchAndLeavesTheExchangeToItsReaders) {
  const StepPlan plan =
      build_time_tiled_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), 0);
  EXPECT_THAT(lines(plan),
              ElementsAre("4: wave_rhs, every stage time-tiled, new state to y1", "4: swap y y1"));
  EXPECT_EQ(plan.ops.front().time, (Rational{0, 1}));
  EXPECT_EQ(plan.ops.back().time, (Rational{1, 1}));
  EXPECT_TRUE(plan.deferred_exchange);
  EXPECT_TRUE(plan.entry_pending);
  EXPECT_TRUE(plan.exit_pending);
  EXPECT_TRUE(plan.exit_boundary_pending);
  EXPECT_THAT(plan.text(), HasSubstr("no time-tiled launch does"));
  // Without an exchange in MoL_PostStep nothing is pending.
  const StepPlan bare = build_time_tiled_step_plan(find_integrator("RK4"), calc_rhs(false), {}, 0);
  EXPECT_FALSE(bare.entry_pending);
  EXPECT_FALSE(bare.exit_pending);
  ASSERT_TRUE(plan.tableau);
  std::vector<double> a, b;
  const double dt = 0.1;
  time_tile_coefficients(*plan.tableau, dt, a, b);
  EXPECT_THAT(a, ElementsAre((dt * 1) / 2, (dt * 1) / 2, dt));
  EXPECT_THAT(b, ElementsAre((dt * 1) / 6, (dt * 1) / 3, (dt * 1) / 3, (dt * 1) / 6));

  // The runner swaps y and y1 after the launch, which the driver carries out.
  double y = 1, k = 0, acc = 0, y1 = 0, y0 = 0;
  StepRunner runner(plan, {{&y}, {&k}, {&acc}, {&y1}, {&y0}}, 1, saguaro::runtime::host_space());
  std::vector<std::string> acted;
  runner.step(0.0, dt, [&](const StepOp& op, double t) {
    acted.push_back(plan.describe(op) + " at " + std::to_string(t));
    if (op.kind == StepOp::Kind::time_tiled) *runner.array(op.registers[0], 0) = 2;
  });
  EXPECT_EQ(y, 2);             // y1's content moved into y by the swap (copies: no on_swap here)
  EXPECT_EQ(acted.size(), 1u); // the launch; the runner carries out the swap itself

  // Integrators whose tableau has more than a sub-diagonal have no time-tiled plan.
  try {
    build_time_tiled_step_plan(find_integrator("RK3"), calc_rhs(false), post_step(), 0);
    ADD_FAILURE() << "RK3 was time-tiled";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("RK3"));
  }
}

// A step time-tiled in two parts: the first writes stage 3's state to k (which a time-tiled
// step computes no right-hand side into) and the accumulator to acc, the second reads them.
TEST(StepPlan, TimeTiledRK4InTwoPartsCarriesTheStateAndAccumulator) {
  const StepPlan plan =
      build_time_tiled_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), 0, {2, 2});
  EXPECT_THAT(lines(plan),
              ElementsAre("2: wave_rhs, stages 1-2 time-tiled, stage 3's state to k, accumulator "
                          "to acc",
                          "4: wave_rhs, stages 3-4 time-tiled from k and acc, new state to y1",
                          "4: swap y y1"));
  EXPECT_TRUE(plan.exit_pending);
  EXPECT_EQ(plan.ops[0].first_stage, 1);
  EXPECT_EQ(plan.ops[1].first_stage, 3);
  EXPECT_EQ(plan.ops[1].reads, (std::array<int, 2>{kRhsRegister, plan.ops[0].registers[1]}));
  EXPECT_EQ(time_tile_accumulator(find_integrator("RK4")), plan.ops[0].registers[1]);
  // Parts that do not add up to the integrator's stages, and integrators with no register for
  // the accumulator, are refused.
  EXPECT_THROW(
      build_time_tiled_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), 0, {2, 1}),
      std::invalid_argument);
  EXPECT_EQ(time_tile_accumulator(find_integrator("Euler")), -1);
}

TEST(StepPlan, RK4WholeExchangesWhereMoLPostStepAsks) {
  const StepPlan plan =
      build_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), false);
  EXPECT_FALSE(plan.deferred_exchange);
  EXPECT_FALSE(plan.exit_pending);
  EXPECT_THAT(stage_lines(plan, 0), ElementsAre());
  EXPECT_THAT(stage_lines(plan, 1),
              ElementsAre("wave_rhs", "Boundary_RHS", "y1 = y + 1/2 dt k", "swap y0 y", "swap y y1",
                          "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter"));
  EXPECT_THAT(stage_lines(plan, 4),
              ElementsAre("wave_rhs", "Boundary_RHS", "y1 = acc + 1/3 y + 1/6 dt k", "swap y y1",
                          "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter"));
  // Per stage 2 right-hand sides and 3 post-step operations; 5 combinations; 5 swaps.
  EXPECT_EQ(plan.ops.size(), 4u * 5u + 5u + 5u);
  // Times: the right-hand sides at the stage's time, the combinations and post-step at the
  // new state's.
  const std::string text = plan.text();
  EXPECT_THAT(text, HasSubstr("step plan: RK4, 4 stages, scratch 3\n"));
  EXPECT_THAT(text, HasSubstr("  2 t + 1/2 dt   wave_rhs\n"));
  EXPECT_THAT(text, HasSubstr("  3 t + dt       y1 = y0 + dt k\n"));
  EXPECT_THAT(text, HasSubstr("  4 t + dt       wave_rhs\n"));
}

TEST(StepPlan, RK4SplitOverlapsTheExchangeWithTheInterior) {
  const StepPlan plan = build_step_plan(find_integrator("RK4"), calc_rhs(true), post_step(), true);
  EXPECT_TRUE(plan.deferred_exchange);
  EXPECT_TRUE(plan.exit_pending);
  EXPECT_TRUE(plan.exit_boundary_pending);
  // Every stage, the first included (the previous step's exchange), runs the interior while
  // the messages are in flight; the flat boundaries follow the exchange, the shell them.
  for (int stage = 1; stage <= 4; ++stage) {
    SCOPED_TRACE(stage);
    std::vector<std::string> got = stage_lines(plan, stage);
    got.resize(6);
    EXPECT_THAT(got, ElementsAre("exchange begins (Driver_SyncEvolved)", "wave_rhs interior",
                                 "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                                 "wave_rhs shell", "Boundary_RHS"));
  }
  EXPECT_THAT(stage_lines(plan, 4),
              ElementsAre("exchange begins (Driver_SyncEvolved)", "wave_rhs interior",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "wave_rhs shell", "Boundary_RHS", "y1 = acc + 1/3 y + 1/6 dt k",
                          "swap y y1"));
  // The first stage's exchange and boundaries finish what the last step left: a driver skips
  // them when that was done between the steps; the later stages' are the step's own.
  std::vector<std::string> carried;
  for (const StepOp& op : plan.ops)
    if (op.carried) carried.push_back(std::to_string(op.stage) + ": " + plan.describe(op));
  EXPECT_THAT(carried,
              ElementsAre("1: exchange begins (Driver_SyncEvolved)",
                          "1: exchange finishes (Driver_SyncEvolved)", "1: Boundary_ApplyOuter"));
  EXPECT_THAT(plan.text(), HasSubstr("  1 t            Boundary_ApplyOuter [unless done since the "
                                     "last step]\n"));
  EXPECT_THAT(plan.text(), HasSubstr("exchange deferred to its first reader"));
  EXPECT_THAT(plan.text(), HasSubstr("(the last exchange is left to the next step)"));
}

TEST(StepPlan, IcnWholeAndSplit) {
  const Integrator& icn = find_integrator("ICN");
  const StepPlan whole = build_step_plan(icn, calc_rhs(false), post_step(), false);
  EXPECT_THAT(lines(whole),
              ElementsAre("1: wave_rhs", "1: Boundary_RHS", "1: y1 = y + 1/2 dt k", "1: swap y0 y",
                          "1: swap y y1", "1: exchange begins (Driver_SyncEvolved)",
                          "1: exchange finishes (Driver_SyncEvolved)", "1: Boundary_ApplyOuter",
                          "2: wave_rhs", "2: Boundary_RHS", "2: y1 = y0 + 1/2 dt k", "2: swap y y1",
                          "2: exchange begins (Driver_SyncEvolved)",
                          "2: exchange finishes (Driver_SyncEvolved)", "2: Boundary_ApplyOuter",
                          "3: wave_rhs", "3: Boundary_RHS", "3: y1 = y0 + dt k", "3: swap y y1",
                          "3: exchange begins (Driver_SyncEvolved)",
                          "3: exchange finishes (Driver_SyncEvolved)", "3: Boundary_ApplyOuter"));
  const StepPlan split = build_step_plan(icn, calc_rhs(true), post_step(), true);
  EXPECT_THAT(stage_lines(split, 3),
              ElementsAre("exchange begins (Driver_SyncEvolved)", "wave_rhs interior",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "wave_rhs shell", "Boundary_RHS", "y1 = y0 + dt k", "swap y y1"));
  // A deferred exchange without a split right-hand side: the first reader finishes it whole.
  const StepPlan deferred = build_step_plan(icn, calc_rhs(false), post_step(), true);
  EXPECT_THAT(stage_lines(deferred, 2),
              ElementsAre("exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "wave_rhs", "Boundary_RHS", "y1 = y0 + 1/2 dt k", "swap y y1"));
}

// A post-step calculation that reads ghosts finishes a deferred exchange there (no overlap);
// a pointwise one runs before it; the step then ends with nothing pending.
TEST(StepPlan, PostStepReadersFinishTheExchange) {
  std::vector<StepFunction> post = post_step();
  post.push_back({"constraints_pointwise", Role::call, false, false});
  post.push_back({"constraints", Role::call, true, false});
  const StepPlan plan = build_step_plan(find_integrator("RK2"), calc_rhs(true), post, true);
  EXPECT_FALSE(plan.exit_pending);
  EXPECT_FALSE(plan.entry_pending);
  EXPECT_TRUE(
      std::none_of(plan.ops.begin(), plan.ops.end(), [](const StepOp& op) { return op.carried; }));
  EXPECT_THAT(stage_lines(plan, 2),
              ElementsAre("wave_rhs", "Boundary_RHS", "y1 = 1/2 y0 + 1/2 y + 1/2 dt k", "swap y y1",
                          "constraints_pointwise", "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "constraints"));
}

TEST(StepPlan, SyncAmongTheRightHandSidesIsRefused) {
  EXPECT_THROW(build_step_plan(find_integrator("RK2"), post_step(), {}, false),
               std::invalid_argument);
}

// The runner: combinations on the registers (y0, y1 and acc of its own; swaps by copies, as
// the owner gave no way to follow them), every other operation handed over with its state's
// time.
TEST(StepRunner, RunsTheCombinationsAndHandsOverTheRest) {
  std::vector<double> y = {1.0, 2.0}, k = {0.0, 0.0};
  const StepPlan plan =
      build_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), false);
  StepRunner runner(plan, {y.data()}, {k.data()}, 2, saguaro::runtime::host_space());
  std::vector<std::string> seen;
  runner.step(1.0, 0.5, [&](const StepOp& op, double time) {
    seen.push_back(plan.describe(op) + "@" + std::to_string(time));
    if (op.kind == StepOp::Kind::call && op.function == 0)
      for (std::size_t i = 0; i < 2; ++i) k[i] = -y[i];
  });
  EXPECT_EQ(seen.size(), 4u * 5u);
  EXPECT_EQ(seen[0], "wave_rhs@1.000000");
  EXPECT_EQ(seen[4], "Boundary_ApplyOuter@1.250000");
  EXPECT_EQ(seen.back(), "Boundary_ApplyOuter@1.500000");
  // y' = -y over dt = 0.5 by classical RK4: y (1 - h + h^2/2 - h^3/6 + h^4/24).
  const double h = 0.5, g = 1 - h + h * h / 2 - h * h * h / 6 + h * h * h * h / 24;
  EXPECT_NEAR(y[0], g, 1e-15);
  EXPECT_NEAR(y[1], 2 * g, 1e-15);
}

// Folding: a right-hand side that produces variable 0 computes the stage's combinations for
// it; variable 1 (another function's) keeps the plain ones.
TEST(StepPlan, FoldedRightHandSidesLeaveTheirVariablesOutOfTheCombinations) {
  std::vector<StepFunction> rhs = calc_rhs(false);
  rhs[0].produces = {0};
  rhs[0].folds = {false, true, true, true, true};
  const StepPlan plan = build_step_plan(find_integrator("RK4"), rhs, post_step(), false);
  for (const StepOp& op : plan.ops) {
    if (op.kind == StepOp::Kind::call && op.function == 0) EXPECT_TRUE(op.folded);
    if (op.kind == StepOp::Kind::combine) EXPECT_EQ(op.folded_variables, std::vector<int>{0});
  }
  EXPECT_THAT(stage_lines(plan, 4),
              ElementsAre("wave_rhs (and the stage's combinations)", "Boundary_RHS",
                          "y1 = acc + 1/3 y + 1/6 dt k (variables 0 in their right-hand side)",
                          "swap y y1", "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter"));
  // A stage that writes the state the right-hand side reads is never folded.
  IntegratorText in_place{"inplace", 1, "", "", {{"0", "y = y + dt k", "1"}}};
  const StepPlan euler = build_step_plan(parse_integrator(in_place), rhs, post_step(), false);
  for (const StepOp& op : euler.ops) {
    EXPECT_FALSE(op.folded);
    EXPECT_TRUE(op.folded_variables.empty());
  }
}

// Swaps by renaming: the owner hears of each, and the runner's arrays follow. Classical RK4
// on y' = -y with the right-hand side reading the current state's array.
TEST(StepRunner, SwapsRenameTheArraysAndTellTheOwner) {
  std::vector<std::vector<double>> store(5, std::vector<double>(2, 0.0));
  store[0] = {1.0, 2.0};
  std::vector<std::vector<double*>> registers;
  for (auto& a : store) registers.push_back({a.data()});
  const StepPlan plan =
      build_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), false);
  std::vector<int> owner = {0, 1, 2, 3, 4}; // register -> store
  StepRunner runner(plan, registers, 2, saguaro::runtime::host_space(),
                    [&](int a, int b) { std::swap(owner[std::size_t(a)], owner[std::size_t(b)]); });
  runner.step(1.0, 0.5, [&](const StepOp& op, double) {
    if (op.kind == StepOp::Kind::call && op.function == 0) {
      EXPECT_EQ(runner.array(0, 0), store[std::size_t(owner[0])].data());
      for (std::size_t i = 0; i < 2; ++i) runner.array(1, 0)[i] = -runner.array(0, 0)[i];
    }
  });
  const double h = 0.5, g = 1 - h + h * h / 2 - h * h * h / 6 + h * h * h * h / 24;
  EXPECT_NE(owner[0], 0); // the new state is in another array
  EXPECT_NEAR(runner.array(0, 0)[0], g, 1e-15);
  EXPECT_NEAR(store[std::size_t(owner[0])][1], 2 * g, 1e-15);
}

} // namespace
