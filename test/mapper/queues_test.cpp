// Register queues for the empirical finish (mapper/queues.hpp) and strategy q's plan; sums by
// input (calc/sums_by_input.hpp): the rule, the short form and the finish's candidates.
#include "mapper/queues.hpp"
#include "calc/code_plan.hpp"
#include "calc/sums_by_input.hpp"
#include "mapper/mapper.hpp"
#include "mapper/run_plan.hpp"
#include "mapper_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace saguaro::mapper {
namespace {

using testing::HasSubstr;

// The finish's lines when calculation `name` of `program` has its default mapping, `a` and `b` as
// candidates, timed at 3, 2 and 1 ms (the other calculations keep their default, untimed);
// `kept` is the mapping it keeps.
std::vector<std::string> finish_of_three(const calc::Program& program, const std::string& name,
                                         const calc::Mapping& a, const calc::Mapping& b,
                                         calc::Mapping& kept) {
  RunPlan plan;
  for (const calc::Calculation& c : program.calculations)
    plan.calculations.push_back({c.name, calc::default_mapping(c)});
  auto p = std::find_if(plan.calculations.begin(), plan.calculations.end(),
                        [&](const CalculationPlan& c) { return c.name == name; });
  if (p == plan.calculations.end()) {
    ADD_FAILURE() << "no calculation " << name;
    return {};
  }
  p->candidates = {p->mapping, a, b};
  const std::vector<std::string> lines = verify_candidates(
      program,
      [](std::size_t, const std::vector<calc::Mapping>&) {
        return std::vector<double>{3e-3, 2e-3, 1e-3};
      },
      plan);
  kept = p->mapping;
  return lines;
}

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
  calc::Mapping kept;
  const std::vector<std::string> lines = finish_of_three(wave, "wave_rhs", q, capped, kept);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("2.000 ms register queues, 1.000 ms register queues, 5/SM"));
  EXPECT_EQ(kept, capped);

  // Nothing to queue (the 2nd-order wave's initial data reads at the point only), and BSSN's
  // right-hand side, whose estimate is many times the cap.
  EXPECT_TRUE(register_queue_candidates(test::calc_named(wave, "wave_init"), h200).empty());
  const calc::Program bssn = test::lower_file("par/bssn/bssn.edl", 4);
  EXPECT_TRUE(register_queue_candidates(test::calc_named(bssn, "bssn_rhs"), h200).empty());
}

// The micro-benchmark's one sum splits into 11 groups: B's term, then A0 .. A9's nine terms
// each; Maxwell's right-hand sides into one group per field; BSSN's right-hand side not at all
// (products of two inputs).
TEST(SumsByInput, TheRuleGroupsEachValuesTermsByInput) {
  const calc::Program mb = test::lower_file("par/microbench.edl", 4);
  const calc::Calculation& b3 = test::calc_named(mb, "microbench");
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(b3, calc::default_mapping(b3));
  const std::optional<calc::SumsByInput> sums = calc::sums_by_input(b3, plans[0]);
  ASSERT_TRUE(sums);
  ASSERT_EQ(sums->values.size(), 1u);
  ASSERT_EQ(sums->groups.size(), 11u);
  EXPECT_EQ(b3.grid_functions[std::size_t(sums->groups[0].grid_function)].name, "B");
  for (std::size_t g = 1; g < 11; ++g) {
    ASSERT_EQ(sums->groups[g].sums.size(), 1u);
    EXPECT_EQ(sums->groups[g].sums[0].terms.size(), 9u);
    for (const auto& [node, weight] : sums->groups[g].sums[0].terms) {
      EXPECT_EQ(b3.dag.node(node).op, calc::Op::Load);
      EXPECT_EQ(b3.dag.node(node).index, sums->groups[g].grid_function);
    }
  }
  // The kernel plan carries one phase per group, each evaluating its own loads only.
  calc::Mapping summed = calc::buffered_mapping(b3, calc::Buffering::Queue,
                                                calc::parse_block_config("z 32x8x8 4/SM by-input"));
  ASSERT_TRUE(summed.kernels[0].block.sums_by_input);
  const calc::CodePlan plan = calc::plan_code(b3, summed).kernels[0];
  ASSERT_EQ(plan.phases.size(), 11u);
  EXPECT_EQ(plan.phases[1].steps.size(), 9u);
  EXPECT_THAT(calc::to_string(b3, plan), HasSubstr("sums by input: 1 sum over 8 points"));

  const calc::Program bssn = test::lower_file("par/bssn/bssn.edl", 4);
  const calc::Calculation& rhs = test::calc_named(bssn, "bssn_rhs");
  std::string why;
  EXPECT_FALSE(
      calc::sums_by_input(rhs, calc::plan_kernels(rhs, calc::default_mapping(rhs))[0], &why));
  EXPECT_THAT(why, HasSubstr("reads more than one grid function"));
  // Asked of every calculation, it goes where it applies: BSSN's stays point by point.
  const calc::Mapping asked = calc::buffered_mapping(rhs, calc::Buffering::Unbuffered,
                                                     calc::parse_block_config("z 32x8x8 by-input"));
  EXPECT_FALSE(asked.kernels[0].block.sums_by_input);
}

// The short form round-trips; a mapping the rule does not admit is refused with the reason.
TEST(SumsByInput, ShortFormAndRefusals) {
  for (const char* text : {"z 32x8x8 by-input", "y 16x4x3 4/SM by-input", "z 32x8x1 8/SM"})
    EXPECT_EQ(calc::to_string(calc::parse_block_config(text)), text);
  EXPECT_TRUE(calc::parse_block_config("z 32x8x8 by-input").sums_by_input);
  EXPECT_FALSE(calc::parse_block_config("z 32x8x8 4/SM").sums_by_input);
  for (const char* bad : {"z 32x8x8 by-input 4/SM", "z 32x8x8 byinput", "z 32x8x8 4/SM by-input x"})
    EXPECT_THROW(calc::parse_block_config(bad), calc::MappingError) << bad;

  const calc::Program mb = test::lower_file("par/microbench.edl", 4);
  const calc::Calculation& b3 = test::calc_named(mb, "microbench");
  auto refusal = [&b3](calc::Mapping m) {
    try {
      calc::plan_kernels(b3, m);
    } catch (const calc::MappingError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  calc::Mapping one_point = calc::default_mapping(b3);
  one_point.kernels[0].block = calc::parse_block_config("z 32x8x1 by-input");
  EXPECT_THAT(refusal(one_point), HasSubstr("a thread has one point"));
  calc::Mapping shared = calc::buffered_mapping(b3, calc::Buffering::Shared, calc::BlockConfig{});
  shared.kernels[0].block.sums_by_input = true;
  EXPECT_THAT(refusal(shared), HasSubstr("is in shared memory"));
}

// Offered to the finish where the sums apply to a stencil: the micro-benchmark at 8 points with
// ptxas's registers and capped at 4 blocks per SM (the estimate, 52 registers, and 16 for the 8
// sums allow 3), at 4 points (also in rows of 64 at 2/SM), and at 2 points with every thread slot
// filled; the wave equation's right-hand side alike; Maxwell's at 2 points (six sums, at most 16
// held); not BSSN's, nor pointwise initial data.
TEST(SumsByInput, OfferedToTheFinishWhereTheyApply) {
  const model::Device h200 = test::device("h200");
  const calc::Program mb = test::lower_file("par/microbench.edl", 4);
  const calc::Calculation& b3 = test::calc_named(mb, "microbench");
  const std::vector<calc::Mapping> offered = sums_by_input_candidates(b3, h200);
  ASSERT_EQ(offered.size(), 5u);
  const calc::Mapping expected = calc::buffered_mapping(
      b3, calc::Buffering::Queue, calc::parse_block_config("z 32x8x8 by-input"));
  EXPECT_EQ(offered[0], expected);
  EXPECT_EQ(calc::to_string(offered[1].kernels[0].block), "z 32x8x8 4/SM by-input");
  EXPECT_EQ(offered[2], calc::buffered_mapping(b3, calc::Buffering::Queue,
                                               calc::parse_block_config("z 32x8x4 by-input")));
  // The same in rows of 64 at 2 blocks per SM, and at 2 points with every thread slot filled
  // (8 blocks of 256 threads: 32 registers).
  EXPECT_EQ(offered[3], calc::buffered_mapping(b3, calc::Buffering::Queue,
                                               calc::parse_block_config("z 64x4x4 2/SM by-input")));
  EXPECT_EQ(offered[4], calc::buffered_mapping(b3, calc::Buffering::Queue,
                                               calc::parse_block_config("z 32x8x2 8/SM by-input")));
  const MapResult r = map_calculation(b3, h200);
  const std::vector<calc::Mapping> timed = finish_candidates(b3, r, calc::default_mapping(b3), 4);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), offered[1]), 1);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), offered[2]), 1);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), offered[3]), 1);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), offered[4]), 1);

  calc::Mapping kept;
  const std::vector<std::string> lines =
      finish_of_three(mb, "microbench", offered[0], offered[1], kept);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(
      lines[0],
      HasSubstr("2.000 ms sums by input, 8 points, 1.000 ms sums by input, 8 points, 4/SM"));
  EXPECT_EQ(kept, offered[1]);

  const calc::Program maxwell = test::lower_file("par/maxwell.edl", 4);
  const std::vector<calc::Mapping> maxwell_offered =
      sums_by_input_candidates(test::calc_named(maxwell, "maxwell_rhs"), h200);
  ASSERT_EQ(maxwell_offered.size(), 3u); // 2 points: none at half of them
  EXPECT_EQ(maxwell_offered[0].kernels[0].block.tee, 2);
  EXPECT_EQ(calc::to_string(maxwell_offered[2].kernels[0].block), "z 32x8x2 8/SM by-input");
  const calc::Program wave = test::lower_file("par/wave.edl", 8);
  const std::vector<calc::Mapping> wave_offered =
      sums_by_input_candidates(test::calc_named(wave, "wave_rhs"), h200);
  ASSERT_EQ(wave_offered.size(), 5u);
  EXPECT_EQ(calc::to_string(wave_offered[1].kernels[0].block), "z 32x8x8 4/SM by-input");
  EXPECT_TRUE(sums_by_input_candidates(test::calc_named(wave, "wave_init"), h200).empty());
  const calc::Program bssn = test::lower_file("par/bssn/bssn.edl", 4);
  EXPECT_TRUE(sums_by_input_candidates(test::calc_named(bssn, "bssn_rhs"), h200).empty());
}

// The model's pick is the cheapest mapping it priced: on B3 the lockstep term prices the sums by
// input below the search's best, which becomes the first runner-up.
TEST(SumsByInput, TheModelPicksThemWhereItPricesThemCheapest) {
  const model::Device h200 = test::device("h200");
  const calc::Program mb = test::lower_file("par/microbench.edl", 4);
  const calc::Calculation& b3 = test::calc_named(mb, "microbench");
  const MapResult r = map_calculation(b3, h200);
  ASSERT_FALSE(r.best.mapping.kernels.empty());
  EXPECT_TRUE(r.best.mapping.kernels.front().block.sums_by_input)
      << calc::to_string(b3, r.best.mapping);
  for (const PricedMapping& f : r.register_fits) EXPECT_LE(r.best.seconds, f.seconds);
  ASSERT_FALSE(r.runners_up.empty());
  EXPECT_LT(r.best.seconds, r.runners_up.front().seconds);
  EXPECT_NE(r.runners_up.front().origin.find("one kernel"), std::string::npos)
      << r.runners_up.front().origin;
  // The finish times the search's own best second.
  EXPECT_TRUE(r.best_is_register_fit);
  const std::vector<calc::Mapping> timed = finish_candidates(b3, r, calc::default_mapping(b3), 4);
  ASSERT_GE(timed.size(), 2u);
  EXPECT_EQ(timed[0], r.best.mapping);
  EXPECT_EQ(timed[1], r.runners_up.front().mapping);
}

} // namespace
} // namespace saguaro::mapper
