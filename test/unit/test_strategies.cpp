// The list of buffering strategies (calc/strategy.hpp): the five built in, in order, with
// their words and rules; a strategy registered by a test joins every derived list.
#include "support.hpp"

#include "../strategy_demo.hpp"
#include "calc/code_plan.hpp"
#include "calc/strategy.hpp"

#include <gtest/gtest.h>

namespace saguaro::calc {
namespace {

TEST(Strategies, TheListIsURBPCQAndItsPlacesAreTheEnumsValues) {
  const std::vector<const Strategy*>& all = strategies();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(strategy_letters(), (std::vector<std::string>{"u", "r", "b", "p", "c", "q"}));
  const std::pair<Buffering, const char*> named[] = {
      {Buffering::Unbuffered, "unbuffered"}, {Buffering::Register, "register"},
      {Buffering::Shared, "shared"},         {Buffering::Plus, "plus"},
      {Buffering::ReadOnly, "read-only"},    {Buffering::Queue, "queue"}};
  for (const auto& [b, name] : named) {
    EXPECT_EQ(strategy(b).id, b);
    EXPECT_STREQ(strategy(b).name, name);
    EXPECT_STREQ(describe(b), name);
    EXPECT_EQ(letter(b), strategy(b).letter);
    Buffering back{};
    ASSERT_TRUE(buffering_from_letter(letter(b), back));
    EXPECT_EQ(back, b);
  }
  Buffering none{};
  EXPECT_FALSE(buffering_from_letter('x', none));
  EXPECT_EQ(strategy_for_letter('x'), nullptr);
  EXPECT_EQ(strategy(Buffering::Unbuffered).resource, ReuseResource::None);
  EXPECT_EQ(strategy(Buffering::ReadOnly).resource, ReuseResource::ReadOnlyCache);
  EXPECT_EQ(strategy(Buffering::Plus).path, TrafficPath::Direct);
}

TEST(Strategies, EachSaysWhereItApplies) {
  const std::vector<Offset> line{{0, 0, -1}, {0, 0, 0}, {0, 0, 1}};
  const std::vector<Offset> plane{{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}};
  const std::vector<Offset> point{{0, 0, 0}};
  std::string why;
  EXPECT_TRUE(buffering_applies(Buffering::Register, line, 2, false));
  EXPECT_FALSE(buffering_applies(Buffering::Register, plane, 2, false, &why));
  EXPECT_NE(why.find("off the iteration axis z"), std::string::npos) << why;
  EXPECT_FALSE(buffering_applies(Buffering::Plus, line, 2, false, &why));
  EXPECT_NE(why.find("x-y plane"), std::string::npos) << why;
  EXPECT_TRUE(buffering_applies(Buffering::Plus, plane, 2, false));
  EXPECT_FALSE(buffering_applies(Buffering::Shared, point, 2, false, &why));
  EXPECT_NE(why.find("nothing to reuse"), std::string::npos) << why;
  EXPECT_TRUE(buffering_applies(Buffering::ReadOnly, point, 2, false));
  EXPECT_FALSE(buffering_applies(Buffering::ReadOnly, point, 2, true, &why));
  EXPECT_NE(why.find("not coherent"), std::string::npos) << why;
  EXPECT_TRUE(buffering_applies(Buffering::Unbuffered, point, 2, true));
}

TEST(Strategies, ATestStrategyJoinsTheListAndLeavesIt) {
  {
    const ScopedStrategy demo(test::line_cached_strategy());
    EXPECT_EQ(std::size_t(demo.id()), 6u);
    EXPECT_EQ(letter(demo.id()), 'l');
    EXPECT_EQ(strategy_letters().back(), "l");
    ASSERT_NE(strategy_for_letter('l'), nullptr);
    Buffering b{};
    ASSERT_TRUE(buffering_from_letter('l', b));
    EXPECT_EQ(b, demo.id());
    // A second strategy with the same letter is refused.
    EXPECT_THROW(ScopedStrategy(test::line_cached_strategy()), std::invalid_argument);

    // Its plan: q is read along every axis, so its z line comes from registers and the rest
    // through the read-only cache.
    const Program program = test::lower_text(R"(
begin thorn Demo
  begin variables
    q a
  end variables
  begin calculation c scheduled at evol
    a = D_11 q + D_22 q + D_33 q
  end calculation
end thorn
)",
                                             2);
    const Calculation& calc = program.calculations.at(0);
    const Mapping m = strategy_mapping(calc, "l", {2, 32, 8, 8});
    const CodePlan k = plan_code(calc, m).kernels.at(0);
    ASSERT_EQ(k.pipelines.size(), 1u);
    EXPECT_EQ(k.pipelines[0].lo, -1);
    EXPECT_EQ(k.pipelines[0].hi, 1);
    int registers = 0, read_only = 0;
    for (const Load& l : k.inputs.at(0).loads)
      (l.kind == BufferKind::Register ? registers : read_only) += 1;
    EXPECT_EQ(registers, 3);
    EXPECT_EQ(read_only, 4);
    EXPECT_EQ(k.inputs.at(0).strategy, demo.id());
    EXPECT_NE(to_string(calc, m).find("q:l"), std::string::npos);
  }
  EXPECT_EQ(strategies().size(), 6u);
  EXPECT_EQ(strategy_for_letter('l'), nullptr);
}

} // namespace
} // namespace saguaro::calc
