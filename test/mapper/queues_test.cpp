// Register queues for the empirical finish (mapper/queues.hpp) and strategy q's plan.
#include "mapper/queues.hpp"
#include "calc/code_plan.hpp"
#include "mapper/mapper.hpp"
#include "mapper/run_plan.hpp"
#include "mapper_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace saguaro::mapper {
namespace {

using testing::HasSubstr;

// The 8th-order wave equation's right-hand side: phi's z line (9 offsets) from a queue, its 16
// offsets along x and y global loads, pi (read at the point only) left alone.
TEST(RegisterQueues, TheLineThroughThePointComesFromRegisters) {
  const calc::Program wave = test::lower_file("par/wave.edl", 8);
  const calc::Calculation& rhs = test::calc_named(wave, "wave_rhs");
  const calc::Mapping q = calc::buffered_mapping(rhs, calc::Buffering::Queue, calc::BlockConfig{});
  const calc::CalculationPlan plan = calc::plan_code(rhs, q);
  ASSERT_EQ(plan.kernels.size(), 1u);
  const calc::CodePlan& k = plan.kernels[0];
  ASSERT_EQ(k.pipelines.size(), 1u);
  EXPECT_EQ(k.pipelines[0].lo, -4);
  EXPECT_EQ(k.pipelines[0].hi, 4);
  int registers = 0, global = 0;
  for (const calc::PlannedInput& in : k.inputs)
    for (const calc::Load& l : in.loads) {
      registers += l.kind == calc::BufferKind::Register;
      global += l.kind == calc::BufferKind::Global;
      if (l.kind == calc::BufferKind::Register) EXPECT_EQ(l.offset[0] | l.offset[1], 0);
    }
  EXPECT_EQ(registers, 9);
  EXPECT_EQ(global, 17); // phi off the line, and pi
  // A stencil along z only is r's, not q's.
  std::string why;
  EXPECT_FALSE(
      calc::buffering_applies(calc::Buffering::Queue, {{0, 0, -1}, {0, 0, 1}}, 2, false, &why));
  EXPECT_THAT(why, HasSubstr("use r"));
  EXPECT_FALSE(
      calc::buffering_applies(calc::Buffering::Queue, {{0, 0, 0}, {1, 0, 0}}, 2, false, &why));
  EXPECT_THAT(why, HasSubstr("fewer than two offsets"));
}

// Offered twice to the finish for the small stencils, with ptxas's registers and one block per
// SM more than the expected registers allow; not for BSSN's right-hand side.
TEST(RegisterQueues, OfferedTwiceForSmallStencilsAndTimedByTheFinish) {
  const model::Device h200 = test::device("h200");
  const calc::Program wave = test::lower_file("par/wave.edl", 8);
  const calc::Calculation& rhs = test::calc_named(wave, "wave_rhs");
  const std::vector<calc::Mapping> offered = register_queue_candidates(rhs, h200);
  ASSERT_EQ(offered.size(), 2u);
  const calc::Mapping q = calc::buffered_mapping(rhs, calc::Buffering::Queue, calc::BlockConfig{});
  EXPECT_EQ(offered[0], q);
  // Estimated about 39 registers unbuffered and 9 values queued: ~57, 4 blocks of 256 threads; the
  // second is capped at 5 (ptxas then gives it 46, the fastest measured on the H200).
  calc::Mapping capped = q;
  capped.kernels[0].block.min_blocks = 5;
  EXPECT_EQ(offered[1], capped);

  const MapResult r = map_calculation(rhs, h200);
  const std::vector<calc::Mapping> timed = finish_candidates(rhs, r, calc::default_mapping(rhs), 4);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), q), 1);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), capped), 1);

  // The finish's line names them.
  RunPlan plan;
  for (const calc::Calculation& c : wave.calculations)
    plan.calculations.push_back({c.name, calc::default_mapping(c)});
  CalculationPlan& p = plan.calculations[1];
  ASSERT_EQ(p.name, "wave_rhs");
  p.candidates = {p.mapping, q, capped};
  const std::vector<std::string> lines = verify_candidates(
      wave,
      [](std::size_t, const std::vector<calc::Mapping>&) {
        return std::vector<double>{3e-3, 2e-3, 1e-3};
      },
      plan);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("2.000 ms register queues, 1.000 ms register queues, 5/SM"));
  EXPECT_EQ(p.mapping, capped);

  // Nothing to queue (the 2nd-order wave's initial data reads at the point only), and BSSN's
  // right-hand side, whose estimate is many times the cap.
  EXPECT_TRUE(register_queue_candidates(test::calc_named(wave, "wave_init"), h200).empty());
  const calc::Program bssn = test::lower_file("par/bssn/bssn.edl", 4);
  EXPECT_TRUE(register_queue_candidates(test::calc_named(bssn, "bssn_rhs"), h200).empty());
}

} // namespace
} // namespace saguaro::mapper
