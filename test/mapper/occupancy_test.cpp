// Full occupancy by a register cap (mapper/occupancy.hpp) and blocks per SM in a block
// configuration's short form (calc::BlockConfig::min_blocks).
#include "mapper/occupancy.hpp"
#include "mapper/mapper.hpp"
#include "mapper/mapping_file.hpp"
#include "mapper/run_plan.hpp"
#include "mapper_support.hpp"
#include "model/model.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace saguaro::mapper {
namespace {

TEST(BlocksPerSm, TheShortFormReadsBackAndRefusesWhatCannotBe) {
  const calc::BlockConfig b = calc::parse_block_config("z 32x8x1 8/SM");
  EXPECT_EQ(b, (calc::BlockConfig{2, 32, 8, 1, 8}));
  EXPECT_EQ(calc::to_string(b), "z 32x8x1 8/SM");
  EXPECT_EQ(calc::to_string(calc::parse_block_config("y 64x4x2")), "y 64x4x2");
  EXPECT_EQ(calc::parse_block_config("y 64x4x2").min_blocks, 0);
  for (const char* bad : {"z 32x8x1 8", "z 32x8x1 0/SM", "z 32x8x1 33/SM", "z 32x8x1 8/SM x",
                          "z 32x8x1 /SM", "z 32x8x1 8/sm"})
    EXPECT_THROW(calc::parse_block_config(bad), calc::MappingError) << bad;
  // A mapping checks it too.
  const calc::Program wave = test::lower_file("par/wave.edl", 4);
  calc::Mapping m = calc::default_mapping(wave.calculations[1]);
  m.kernels[0].block.min_blocks = -1;
  EXPECT_THROW(calc::plan_kernels(wave.calculations[1], m), calc::MappingError);
}

// Block sizes whose product overflows an int are refused as too many threads, not multiplied
// (fuzz_mapping_file found t_x = 323333333 in a mapping file: signed overflow).
TEST(BlocksPerSm, BlockSizesBeyondAnIntAreTooManyThreads) {
  EXPECT_THROW(calc::parse_block_config("z 323333333x8x16"), calc::MappingError);
  EXPECT_THROW(calc::parse_block_config("z 65536x65536x1"), calc::MappingError);
  const calc::Program wave = test::lower_file("par/wave.edl", 4);
  calc::Mapping m = calc::default_mapping(wave.calculations[1]);
  m.kernels[0].block.tx = 323333333;
  try {
    calc::plan_kernels(wave.calculations[1], m);
    FAIL() << "expected calc::MappingError";
  } catch (const calc::MappingError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the 1024 threads"), std::string::npos)
        << e.what();
  }
}

TEST(BlocksPerSm, AMappingFileKeepsThem) {
  const calc::Program program = test::lower_file("par/maxwell.edl", 4);
  MappingFile file;
  const calc::Calculation& rhs = test::calc_named(program, "maxwell_rhs");
  calc::Mapping m = calc::one_thread_per_point(rhs);
  m.kernels[0].block.min_blocks = 6;
  file.entries.push_back({rhs.name, "", 0, m});
  const std::string text = format_mapping_file(program, file);
  EXPECT_NE(text.find("z 32x8x1 6/SM"), std::string::npos) << text;
  const MappingFile back = parse_mapping_file(text, "test.yaml", program);
  ASSERT_EQ(back.entries.size(), 1u);
  EXPECT_EQ(back.entries[0].mapping, m);
}

TEST(FullOccupancy, TheCapFillsTheSmsThreadSlots) {
  const model::Device h100 = test::device("h100");
  EXPECT_EQ(full_occupancy_cap(h100, 256).blocks, 8);
  EXPECT_EQ(full_occupancy_cap(h100, 256).registers, 32);
  EXPECT_EQ(full_occupancy_cap(h100, 1024).blocks, 2);
  EXPECT_EQ(full_occupancy_cap(h100, 1024).registers, 32);
  EXPECT_EQ(full_occupancy_cap(h100, 64).blocks, 32);    // the SM's block slots
  EXPECT_EQ(full_occupancy_cap(h100, 64).registers, 32); // 2048 threads of 32
  model::Device bare = h100;
  bare.max_threads_per_sm = 0;
  EXPECT_EQ(full_occupancy_cap(bare, 256).blocks, 0);
}

// Offered for the small calculations, not for BSSN's right-hand side (its estimate is many
// times the cap); the model prices it with the capped registers; the finish times it.
TEST(FullOccupancy, OfferedForSmallKernelsAndTimedByTheFinish) {
  const model::Device h100 = test::device("h100");
  const calc::Program maxwell = test::lower_file("par/maxwell.edl", 4);
  const calc::Calculation& rhs = test::calc_named(maxwell, "maxwell_rhs");
  const std::optional<calc::Mapping> full = full_occupancy_candidate(rhs, h100);
  ASSERT_TRUE(full.has_value());
  calc::Mapping expected = calc::one_thread_per_point(rhs);
  for (calc::KernelMapping& k : expected.kernels) k.block.min_blocks = 8;
  EXPECT_EQ(*full, expected);
  const std::vector<model::KernelProfile> profiles = model::profile_mapping(rhs, *full);
  ASSERT_EQ(profiles.size(), 1u);
  const model::Prediction p = model::predict(profiles[0], h100);
  EXPECT_LE(p.registers_per_thread, 32);
  EXPECT_EQ(p.blocks_per_sm, 8);

  const MapResult r = map_calculation(rhs, h100);
  EXPECT_EQ(std::count_if(r.register_fits.begin(), r.register_fits.end(),
                          [&](const PricedMapping& m) { return m.mapping == *full; }),
            1);
  const std::vector<calc::Mapping> timed = finish_candidates(rhs, r, calc::default_mapping(rhs), 4);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), *full), 1);
  EXPECT_EQ(std::count(timed.begin(), timed.end(), calc::one_thread_per_point(rhs)), 1);

  const calc::Program bssn = test::lower_file("par/bssn/bssn.edl", 4);
  EXPECT_FALSE(full_occupancy_candidate(test::calc_named(bssn, "bssn_rhs"), h100).has_value());
}

} // namespace
} // namespace saguaro::mapper
