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

TEST(StepPlan, RK4WholeExchangesWhereMoLPostStepAsks) {
  const StepPlan plan =
      build_step_plan(find_integrator("RK4"), calc_rhs(false), post_step(), false);
  EXPECT_FALSE(plan.deferred_exchange);
  EXPECT_FALSE(plan.exit_pending);
  EXPECT_THAT(stage_lines(plan, 0), ElementsAre("y0 = y"));
  EXPECT_THAT(stage_lines(plan, 1),
              ElementsAre("wave_rhs", "Boundary_RHS", "acc = k", "y = y0 + 1/2 dt k",
                          "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter"));
  EXPECT_THAT(stage_lines(plan, 4),
              ElementsAre("wave_rhs", "Boundary_RHS", "y = y0 + 1/6 dt acc + 1/6 dt k",
                          "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter"));
  // y0 = y; per stage 2 right-hand sides and 3 post-step operations; 7 combinations.
  EXPECT_EQ(plan.ops.size(), 1u + 4u * 5u + 7u);
  // Times: the right-hand sides at the stage's time, the combinations and post-step at the
  // new state's.
  const std::string text = plan.text();
  EXPECT_THAT(text, HasSubstr("step plan: RK4, 4 stages, scratch 2\n"));
  EXPECT_THAT(text, HasSubstr("  2 t + 1/2 dt   wave_rhs\n"));
  EXPECT_THAT(text, HasSubstr("  3 t + dt       y = y0 + dt k\n"));
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
                          "wave_rhs shell", "Boundary_RHS", "y = y0 + 1/6 dt acc + 1/6 dt k"));
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
              ElementsAre("0: y0 = y", "1: wave_rhs", "1: Boundary_RHS", "1: y = y0 + 1/2 dt k",
                          "1: exchange begins (Driver_SyncEvolved)",
                          "1: exchange finishes (Driver_SyncEvolved)", "1: Boundary_ApplyOuter",
                          "2: wave_rhs", "2: Boundary_RHS", "2: y = y0 + 1/2 dt k",
                          "2: exchange begins (Driver_SyncEvolved)",
                          "2: exchange finishes (Driver_SyncEvolved)", "2: Boundary_ApplyOuter",
                          "3: wave_rhs", "3: Boundary_RHS", "3: y = y0 + dt k",
                          "3: exchange begins (Driver_SyncEvolved)",
                          "3: exchange finishes (Driver_SyncEvolved)", "3: Boundary_ApplyOuter"));
  const StepPlan split = build_step_plan(icn, calc_rhs(true), post_step(), true);
  EXPECT_THAT(stage_lines(split, 3),
              ElementsAre("exchange begins (Driver_SyncEvolved)", "wave_rhs interior",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "wave_rhs shell", "Boundary_RHS", "y = y0 + dt k"));
  // A deferred exchange without a split right-hand side: the first reader finishes it whole.
  const StepPlan deferred = build_step_plan(icn, calc_rhs(false), post_step(), true);
  EXPECT_THAT(stage_lines(deferred, 2),
              ElementsAre("exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "wave_rhs", "Boundary_RHS", "y = y0 + 1/2 dt k"));
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
              ElementsAre("wave_rhs", "Boundary_RHS", "y = 1/2 y0 + 1/2 y + 1/2 dt k",
                          "constraints_pointwise", "exchange begins (Driver_SyncEvolved)",
                          "exchange finishes (Driver_SyncEvolved)", "Boundary_ApplyOuter",
                          "constraints"));
}

TEST(StepPlan, SyncAmongTheRightHandSidesIsRefused) {
  EXPECT_THROW(build_step_plan(find_integrator("RK2"), post_step(), {}, false),
               std::invalid_argument);
}

// The runner: combinations on the registers (y0 and acc of its own), every other operation
// handed over with its state's time.
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

} // namespace
