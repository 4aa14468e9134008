// The mapper's candidate strategies come from the list (calc/strategies/list.cpp): every
// strategy but u is a move, in the list's order, and a strategy a test registers is offered,
// priced by the model and planned like the five built in.
#include "mapper/assignment.hpp"
#include "mapper_support.hpp"
#include "model/model.hpp"
#include "strategy_demo.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace saguaro::mapper {
namespace {

const char* kSevenPoint = R"(
begin thorn Seven
  begin variables
    q a
  end variables
  begin calculation c scheduled at evol
    a = D_11 q + D_22 q + D_33 q
  end calculation
end thorn
)";

TEST(StrategyList, MovesAreEveryStrategyButUInTheListsOrder) {
  const calc::Program program = test::lower_text(kSevenPoint, 2);
  const calc::Calculation& calc = program.calculations.at(0);
  const model::KernelProfile k = model::profile_mapping(calc, calc::default_mapping(calc)).at(0);
  ASSERT_EQ(k.inputs.size(), 1u);
  // Off the z axis too, so r does not apply; b, p, c and q do.
  EXPECT_EQ(buffering_moves(k.inputs[0], 2),
            (std::vector<calc::Buffering>{calc::Buffering::Shared, calc::Buffering::Plus,
                                          calc::Buffering::ReadOnly, calc::Buffering::Queue}));
  EXPECT_EQ(buffering_moves(k.inputs[0], 2, strategy_bit(calc::Buffering::Plus)),
            std::vector<calc::Buffering>{calc::Buffering::Plus});
}

TEST(StrategyList, ATestStrategyIsOfferedPricedAndMapped) {
  const calc::ScopedStrategy demo(test::line_cached_strategy());
  const calc::Program program = test::lower_text(kSevenPoint, 2);
  const calc::Calculation& calc = program.calculations.at(0);
  model::KernelProfile k = model::profile_mapping(calc, calc::default_mapping(calc)).at(0);
  const std::vector<calc::Buffering> moves = buffering_moves(k.inputs[0], 2);
  ASSERT_FALSE(moves.empty());
  EXPECT_EQ(moves.back(), demo.id());
  EXPECT_EQ(exhaustive_size(k), 6.0); // u, b, p, c, q and the demo
  const std::vector<calc::Buffering> without =
      buffering_moves(k.inputs[0], 2, kAllStrategies & ~strategy_bit(demo.id()));
  EXPECT_EQ(std::count(without.begin(), without.end(), demo.id()), 0);

  // The model prices it: the pipeline's registers, the read-only path's traffic.
  const model::Device& d = test::device("h100");
  const model::Prediction plain = model::predict(k, d);
  k.inputs[0].strategy = demo.id();
  const model::Prediction p = model::predict(k, d);
  EXPECT_TRUE(p.valid) << p.invalid_reason;
  EXPECT_GT(p.M_reg, plain.M_reg);
  EXPECT_GT(p.D_L2_c, 0);

  // The exhaustive search and the whole mapper accept it, and what they choose is a mapping.
  PricingContext context{&d, model::launch_geometry(k.block, {64, 64, 64}, d)};
  const Assignment all = assign_buffering(k, context, AssignmentMethod::Exhaustive);
  EXPECT_EQ(all.model_calls, 6);
  EXPECT_TRUE(all.valid());
  const MapResult r = map_calculation(calc, d);
  EXPECT_NO_THROW(calc::plan_kernels(calc, r.best.mapping));
}

} // namespace
} // namespace saguaro::mapper
