// calc::split_region: the interior and the boundary shell of a region split around a ghost
// exchange tile the region exactly, and the interior keeps the margin from the exchanged faces.
#include "calc/calculation.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace saguaro::calc {
namespace {

using Faces = std::array<std::array<bool, 2>, 3>;

// How many times each point of `region` is covered by the interior and the shell boxes.
std::vector<int> coverage(const Region& region, const RegionSplit& split) {
  const std::array<int, 3> n{region.hi[0] - region.lo[0], region.hi[1] - region.lo[1],
                             region.hi[2] - region.lo[2]};
  std::vector<int> count(std::size_t(n[0] * n[1] * n[2]), 0);
  std::vector<Region> boxes = split.shell;
  boxes.push_back(split.interior);
  for (const Region& b : boxes)
    for (int k = b.lo[2]; k < b.hi[2]; ++k)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int i = b.lo[0]; i < b.hi[0]; ++i) {
          EXPECT_TRUE(i >= region.lo[0] && i < region.hi[0] && j >= region.lo[1] &&
                      j < region.hi[1] && k >= region.lo[2] && k < region.hi[2]);
          ++count[std::size_t(((k - region.lo[2]) * n[1] + (j - region.lo[1])) * n[0] +
                              (i - region.lo[0]))];
        }
  return count;
}

TEST(RegionSplit, InteriorAndShellTileTheRegion) {
  const Region region{{3, 3, 3}, {23, 17, 12}};
  Margin margin;
  margin.lo = {2, 1, 3};
  margin.hi = {1, 2, 3};
  for (int mask = 0; mask < 64; ++mask) {
    Faces faces{};
    for (int f = 0; f < 6; ++f) faces[f / 2][f % 2] = (mask >> f) & 1;
    const RegionSplit split = split_region(region, margin, faces);
    for (int c : coverage(region, split)) ASSERT_EQ(c, 1) << "faces mask " << mask;
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(split.interior.lo[a], region.lo[a] + (faces[a][0] ? margin.lo[a] : 0));
      EXPECT_EQ(split.interior.hi[a], region.hi[a] - (faces[a][1] ? margin.hi[a] : 0));
    }
    EXPECT_EQ(split.shell.size(), std::size_t(__builtin_popcount(unsigned(mask))));
  }
}

TEST(RegionSplit, ZFacesComeFirstAsWholePlanes) {
  const Region region{{2, 2, 2}, {34, 34, 34}};
  Margin margin;
  margin.lo = margin.hi = {2, 2, 2};
  Faces faces{};
  faces[2] = {true, true};
  const RegionSplit split = split_region(region, margin, faces);
  ASSERT_EQ(split.shell.size(), 2u);
  for (const Region& b : split.shell) {
    EXPECT_EQ(b.lo[0], 2);
    EXPECT_EQ(b.hi[0], 34); // whole x rows: full thread blocks
    EXPECT_EQ(b.hi[2] - b.lo[2], 2);
  }
  EXPECT_EQ(split.interior.points() + split.shell[0].points() + split.shell[1].points(),
            region.points());
}

TEST(RegionSplit, TooThinHasNoInterior) {
  const Region region{{2, 2, 2}, {10, 10, 5}};
  Margin margin;
  margin.lo = margin.hi = {2, 2, 2};
  Faces faces{};
  faces[2] = {true, true};
  const RegionSplit split = split_region(region, margin, faces);
  EXPECT_TRUE(split.interior.empty());
  ASSERT_EQ(split.shell.size(), 1u);
  EXPECT_EQ(split.shell[0], region);
}

} // namespace
} // namespace saguaro::calc
