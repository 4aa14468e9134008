// The time-tiled step's decision (mapper/time_tile.hpp) without a GPU: the cuts of the step it
// prices, which it keeps, and what it says. The 4th-order wave equation's halo leaves no tile
// for a whole RK4 step, but two parts of two stages each fit; priced with the H100's
// description (estimated registers) they beat the plain step a run measured (1.80 ms at 256^3,
// bench/results/2026-11-27-finish-folded-form-H100.md).
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "mapper/time_tile.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

struct Wave {
  calc::Program program;
  const calc::Calculation* rhs = nullptr;
  explicit Wave(int order)
      : program(calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/par/wave.edl"),
                            calc::LowerOptions{order})) {
    for (const calc::Calculation& c : program.calculations)
      if (c.schedule_bin == "MoL_CalcRHS") rhs = &c;
  }
  mapper::TimeTileRequest request(double plain_ms) const {
    mapper::TimeTileRequest r;
    r.state = program.evolved;
    for (const std::string& v : program.evolved) r.rhs.push_back(v + "rhs");
    r.stages = 4;
    r.grid = {256, 256, 256};
    r.device = model::load_device(std::string(SAGUARO_SOURCE_DIR) + "/configs/devices/h100.yaml");
    r.plain_seconds = plain_ms * 1e-3;
    return r;
  }
};

TEST(TimeTileChoice, TheFourthOrderWaveTakesTwoPartsOfTwoStages) {
  const Wave wave(4);
  const mapper::TimeTileChoice choice = mapper::choose_time_tile(*wave.rhs, wave.request(1.80));
  ASSERT_TRUE(choice.use) << choice.reason;
  ASSERT_EQ(choice.parts.size(), 2u) << choice.reason;
  EXPECT_EQ(choice.parts[0].first, 1);
  EXPECT_EQ(choice.parts[0].stages, 2);
  EXPECT_EQ(choice.parts[1].first, 3);
  EXPECT_TRUE(choice.parts[1].ends_step());
  ASSERT_EQ(choice.predicted.size(), 2u);
  EXPECT_NEAR(choice.seconds, choice.predicted[0].seconds + choice.predicted[1].seconds, 1e-15);
  EXPECT_LT(choice.seconds, 1.80e-3);
  EXPECT_NE(choice.reason.find("stages 1-2 of 4"), std::string::npos) << choice.reason;
  EXPECT_NE(choice.reason.find(" then "), std::string::npos) << choice.reason;

  // Where the plain step is cheaper, it stays.
  const mapper::TimeTileChoice not_faster = mapper::choose_time_tile(*wave.rhs, wave.request(0.5));
  EXPECT_FALSE(not_faster.use);
  EXPECT_TRUE(not_faster.parts.empty());
  EXPECT_NE(not_faster.reason.find("not faster than the plain step 0.500 ms"), std::string::npos)
      << not_faster.reason;

  // An integrator without a register for the accumulator between parts: no cut, no tile.
  mapper::TimeTileRequest one_part = wave.request(1.80);
  one_part.max_parts = 1;
  const mapper::TimeTileChoice none = mapper::choose_time_tile(*wave.rhs, one_part);
  EXPECT_FALSE(none.use);
  EXPECT_NE(none.reason.find("no tile of at most 1024 threads"), std::string::npos) << none.reason;
}

// The 2nd-order wave keeps its whole step in one kernel (radius 1: its halo fits).
TEST(TimeTileChoice, TheSecondOrderWaveKeepsOneKernel) {
  const Wave wave(2);
  const mapper::TimeTileChoice choice = mapper::choose_time_tile(*wave.rhs, wave.request(1.80));
  ASSERT_TRUE(choice.use) << choice.reason;
  ASSERT_EQ(choice.parts.size(), 1u);
  EXPECT_EQ(choice.parts[0].stages, 4);
  EXPECT_TRUE(choice.parts[0].ends_step());
}

// Re-pricing with the compiler's registers: each compiled part is asked for once per tile, and
// only for the best cuts.
TEST(TimeTileChoice, RecompilesOnlyTheBestCutsTiles) {
  const Wave wave(4);
  mapper::TimeTileRequest r = wave.request(1.80);
  std::vector<calc::TimeTilePlan> asked;
  r.resources = [&](const calc::TimeTilePlan& plan) {
    asked.push_back(plan);
    model::CompiledResources c;
    c.registers = 96;
    return c;
  };
  const mapper::TimeTileChoice choice = mapper::choose_time_tile(*wave.rhs, r);
  ASSERT_TRUE(choice.use) << choice.reason;
  EXPECT_EQ(choice.parts.size(), 2u);
  EXPECT_GE(asked.size(), 6u); // 3 tiles for each of the two parts of the best cut
  EXPECT_TRUE(choice.predicted[0].registers_from_ptxas);
  EXPECT_TRUE(choice.predicted[1].registers_from_ptxas);
}

// A tile the compiler or the GPU refuses (say, more shared memory than an SM has) is priced out,
// not fatal: the choice goes to the next tile.
TEST(TimeTileChoice, ATileThatDoesNotCompileIsPricedOut) {
  const Wave wave(4);
  mapper::TimeTileRequest r = wave.request(1.80);
  calc::TimeTile refused{};
  bool first = true;
  r.resources = [&](const calc::TimeTilePlan& plan) {
    if (first) {
      first = false;
      refused = plan.tile;
      throw std::runtime_error("needs 300 KiB of shared memory");
    }
    model::CompiledResources c;
    c.registers = 96;
    return c;
  };
  const mapper::TimeTileChoice choice = mapper::choose_time_tile(*wave.rhs, r);
  ASSERT_TRUE(choice.use) << choice.reason;
  EXPECT_FALSE(choice.parts[0].tile == refused) << choice.reason;
}

} // namespace
