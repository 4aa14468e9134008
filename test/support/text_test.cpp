// Case folding: ASCII only, as Cactus compares names.
#include "support/text.hpp"

#include <gtest/gtest.h>

namespace saguaro::support {
namespace {

TEST(Text, CaseFolding) {
  EXPECT_EQ(lower("MoL_CalcRHS"), "mol_calcrhs");
  EXPECT_EQ(upper("cctk_evol"), "CCTK_EVOL");
  EXPECT_EQ(lower("\xc3\x89t\xc3\xa9"), "\xc3\x89t\xc3\xa9"); // bytes above ASCII stay
  EXPECT_TRUE(iequals("Cactus", "CACTUS"));
  EXPECT_FALSE(iequals("Cactus", "Cactu"));
  EXPECT_FALSE(iequals("a_b", "a-b"));
  EXPECT_EQ(to_lower('Q'), 'q');
  EXPECT_EQ(to_upper('q'), 'Q');
}

} // namespace
} // namespace saguaro::support
