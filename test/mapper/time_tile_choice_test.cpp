// The time-tiled step's decision (mapper/time_tile.hpp) without a GPU: the cuts of the step it
// prices, which it keeps, and what it says. The 4th-order wave equation's halo leaves no tile
// for a whole RK4 step, but two parts of two stages each fit; priced with the H100's
// description (estimated registers) they beat the plain step a run measured (1.80 ms at 256^3,
// bench/results/2026-11-27-finish-folded-form-H100.md).
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "mapper/time_tile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

// An example thorn's right-hand side and an RK4 request for it at 256^3 on a described GPU.
struct Thorn {
  calc::Program program;
  const calc::Calculation* rhs = nullptr;
  Thorn(const char* file, int order)
      : program(calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/" + file),
                            calc::LowerOptions{order})) {
    for (const calc::Calculation& c : program.calculations)
      if (c.schedule_bin == "MoL_CalcRHS") rhs = &c;
  }
  mapper::TimeTileRequest request(double plain_ms, const char* device = "h100") const {
    mapper::TimeTileRequest r;
    r.state = program.evolved;
    for (const std::string& v : program.evolved) r.rhs.push_back(v + "rhs");
    r.stages = 4;
    r.grid = {256, 256, 256};
    r.device = model::load_device(std::string(SAGUARO_SOURCE_DIR) + "/configs/devices/" + device +
                                  ".yaml");
    r.plain_seconds = plain_ms * 1e-3;
    return r;
  }
};
struct Wave : Thorn {
  explicit Wave(int order) : Thorn("par/wave.edl", order) {}
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
  // The host is told ahead, once, before the first compile: the tiles of the two best cuts.
  std::vector<calc::TimeTilePlan> ahead;
  int prefetches = 0;
  r.prefetch = [&](const std::vector<calc::TimeTilePlan>& plans) {
    EXPECT_TRUE(asked.empty());
    ahead = plans;
    ++prefetches;
  };
  const mapper::TimeTileChoice choice = mapper::choose_time_tile(*wave.rhs, r);
  ASSERT_TRUE(choice.use) << choice.reason;
  EXPECT_EQ(choice.parts.size(), 2u);
  EXPECT_GE(asked.size(), 6u); // 3 tiles for each of the two parts of the best cut
  EXPECT_TRUE(choice.predicted[0].registers_from_ptxas);
  EXPECT_TRUE(choice.predicted[1].registers_from_ptxas);
  EXPECT_EQ(prefetches, 1);
  auto same = [](const calc::TimeTilePlan& a, const calc::TimeTilePlan& b) {
    return a.first == b.first && a.stages == b.stages && a.tile == b.tile;
  };
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_TRUE(std::any_of(ahead.begin(), ahead.end(),
                            [&](const calc::TimeTilePlan& p) { return same(p, asked[i]); }))
        << "tile " << i << " was compiled without being told ahead";
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

// The plain step pays an exchange at every stage, a time-tiled one those of the readers between
// steps (here one per step, as with output at every step): the tiles win against a plain step
// that costs the same work plus three more exchanges, and lose where their exchange tips the
// balance.
TEST(TimeTileChoice, TheTiledStepPaysOneExchange) {
  const Wave wave(4);
  const double tiles = mapper::choose_time_tile(*wave.rhs, wave.request(1.80)).seconds;
  ASSERT_GT(tiles, 0);
  mapper::TimeTileRequest r = wave.request(0);
  r.exchange_seconds = 45e-6;
  r.plain_seconds = tiles + 20e-6; // less than the tiles and their exchange
  mapper::TimeTileChoice choice = mapper::choose_time_tile(*wave.rhs, r);
  EXPECT_FALSE(choice.use) << choice.reason;
  EXPECT_NE(choice.reason.find("+ the exchange 0.045 ms"), std::string::npos) << choice.reason;
  r.plain_seconds = tiles - 20e-6 + 4 * r.exchange_seconds; // its work, and four exchanges
  choice = mapper::choose_time_tile(*wave.rhs, r);
  EXPECT_TRUE(choice.use) << choice.reason;
  EXPECT_NEAR(choice.seconds, tiles, 1e-12); // the tiles' own time; the exchange is apart
}

// Maxwell's best cut, priced with estimated registers on the H200, is already 1.2 times the plain
// step a run measured (3.79 against 3.16 ms): in "auto" nothing is compiled to re-price it (ptxas
// then made it 6.2 ms, after 2.5 s of a run's start); "yes" still re-prices.
TEST(TimeTileChoice, AHopelessStepCompilesNothing) {
  const Thorn maxwell("par/maxwell.edl", 4);
  ASSERT_NE(maxwell.rhs, nullptr);
  mapper::TimeTileRequest r = maxwell.request(3.162, "h200");
  int compiled = 0, told = 0;
  r.resources = [&](const calc::TimeTilePlan&) {
    ++compiled;
    model::CompiledResources c;
    c.registers = 96;
    return c;
  };
  r.prefetch = [&](const std::vector<calc::TimeTilePlan>&) { ++told; };
  const mapper::TimeTileChoice choice = mapper::choose_time_tile(*maxwell.rhs, r);
  EXPECT_FALSE(choice.use);
  EXPECT_NE(choice.reason.find("not faster than the plain step 3.162 ms"), std::string::npos)
      << choice.reason;
  EXPECT_EQ(compiled, 0);
  EXPECT_EQ(told, 0);
  // Within the margin, 1.08 times a plain step of 3.5 ms, but its tiles already spill in the
  // estimate (480 and 960 bytes): still nothing compiled.
  r.plain_seconds = 3.5e-3;
  EXPECT_FALSE(mapper::choose_time_tile(*maxwell.rhs, r).use);
  EXPECT_EQ(compiled, 0);
  r.mode = "yes";
  mapper::choose_time_tile(*maxwell.rhs, r);
  EXPECT_GT(compiled, 0);
  EXPECT_EQ(told, 1);
}

} // namespace
