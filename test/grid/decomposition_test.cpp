// The decomposition: boxes, patch geometry, tiling of the grid by the ranks' owned boxes.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>

using namespace saguaro::grid;
using namespace saguaro::grid::test;

namespace {

// Grids that do not divide evenly; every one decomposes on 1..4 ranks with ghost width 3.
const std::vector<Index3> kShapes = {{13, 7, 5}, {10, 11, 9}, {40, 3, 4}};

} // namespace

TEST(GridBox, VolumeAndIntersect) {
  Box a{{0, 0, 0}, {4, 3, 2}};
  EXPECT_EQ(a.volume(), 24);
  EXPECT_FALSE(a.empty());
  Box b{{2, -1, 1}, {6, 2, 5}};
  Box c = intersect(a, b);
  EXPECT_EQ(c.lo, (Index3{2, 0, 1}));
  EXPECT_EQ(c.hi, (Index3{4, 2, 2}));
  EXPECT_EQ(c.volume(), 4);
  Box d{{5, 0, 0}, {7, 3, 2}};
  Box e = intersect(a, d);
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.volume(), 0);
  EXPECT_EQ((Box{{0, 0, 0}, {-1, 3, 3}}).volume(), 0);
}

TEST(GridDecomposition, OwnedBoxesTileTheGrid) {
  const int ranks = world_size();
  for (const Index3& shape : kShapes)
    for (const auto& periodic : all_periodicities())
      for (int g = 1; g <= 3; ++g) {
        SCOPED_TRACE(testing::Message()
                     << shape[0] << "x" << shape[1] << "x" << shape[2] << " periodic "
                     << periodic[0] << periodic[1] << periodic[2] << " g=" << g);
        const GridSpec spec = make_spec(shape, periodic, g);
        Decomposition d(spec, MPI_COMM_WORLD);
        const Patch& p = d.patch();
        EXPECT_EQ(d.dims()[0] * d.dims()[1] * d.dims()[2], ranks);
        EXPECT_EQ(p.ranks, ranks);
        EXPECT_EQ(p.rank, world_rank()); // reorder = false
        EXPECT_EQ(p.owned.lo, d.owned_by(p.rank).lo);
        EXPECT_EQ(p.owned.hi, d.owned_by(p.rank).hi);

        // Every point owned exactly once; the valid boxes tile the grid with its outer layers.
        const Box global{{0, 0, 0}, shape};
        Box global_valid = global;
        for (int a = 0; a < 3; ++a)
          if (!periodic[a]) {
            global_valid.lo[a] -= g;
            global_valid.hi[a] += g;
          }
        std::vector<int> owned_count(global.volume(), 0);
        long long total = 0;
        std::array<std::set<int>, 3> sizes;
        for (int r = 0; r < ranks; ++r) {
          const Box b = d.owned_by(r);
          EXPECT_FALSE(b.empty());
          total += b.volume();
          EXPECT_EQ(intersect(b, global).volume(), b.volume());
          for_box(b, [&](int i, int j, int k) {
            ++owned_count[(static_cast<std::size_t>(k) * shape[1] + j) * shape[0] + i];
          });
          for (int a = 0; a < 3; ++a) {
            sizes[a].insert(b.hi[a] - b.lo[a]);
            // a split or periodic axis needs at least g points on every rank
            if (d.dims()[a] > 1 || periodic[a]) {
              EXPECT_GE(b.hi[a] - b.lo[a], g);
            }
          }
        }
        EXPECT_EQ(total, global.volume());
        EXPECT_TRUE(
            std::all_of(owned_count.begin(), owned_count.end(), [](int c) { return c == 1; }));
        for (int a = 0; a < 3; ++a) EXPECT_LE(*sizes[a].rbegin() - *sizes[a].begin(), 1);

        // The ranks' own patches (gathered) agree with owned_by and tile the valid box.
        int mine[12];
        const Box v = p.valid();
        for (int a = 0; a < 3; ++a) {
          mine[a] = p.owned.lo[a];
          mine[3 + a] = p.owned.hi[a];
          mine[6 + a] = v.lo[a];
          mine[9 + a] = v.hi[a];
        }
        std::vector<int> all(12 * ranks);
        MPI_Allgather(mine, 12, MPI_INT, all.data(), 12, MPI_INT, MPI_COMM_WORLD);
        long long valid_total = 0;
        for (int r = 0; r < ranks; ++r) {
          const Box b = d.owned_by(r);
          Box vr;
          for (int a = 0; a < 3; ++a) {
            EXPECT_EQ(all[12 * r + a], b.lo[a]);
            EXPECT_EQ(all[12 * r + 3 + a], b.hi[a]);
            vr.lo[a] = all[12 * r + 6 + a];
            vr.hi[a] = all[12 * r + 9 + a];
          }
          valid_total += vr.volume();
          EXPECT_EQ(intersect(vr, global_valid).volume(), vr.volume());
          for (int s = r + 1; s < ranks; ++s) {
            Box vs;
            for (int a = 0; a < 3; ++a) {
              vs.lo[a] = all[12 * s + 6 + a];
              vs.hi[a] = all[12 * s + 9 + a];
            }
            EXPECT_TRUE(intersect(vr, vs).empty());
          }
        }
        EXPECT_EQ(valid_total, global_valid.volume());

        // Outer faces exactly where the grid ends on a non-periodic axis.
        for (int a = 0; a < 3; ++a) {
          EXPECT_EQ(p.outer[a][0], !periodic[a] && p.owned.lo[a] == 0);
          EXPECT_EQ(p.outer[a][1], !periodic[a] && p.owned.hi[a] == shape[a]);
        }
      }
}

TEST(GridDecomposition, PatchGeometry) {
  const GridSpec spec = make_spec({13, 7, 5}, {true, false, false}, 2);
  Decomposition d(spec, MPI_COMM_WORLD);
  const Patch& p = d.patch();
  const Index3 n = p.size(), m = p.alloc();
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(n[a], p.owned.hi[a] - p.owned.lo[a]);
    EXPECT_EQ(m[a], n[a] + 4);
  }
  // Rows padded to the next multiple of row_alignment (8 by default) points.
  ASSERT_EQ(spec.row_alignment, 8);
  EXPECT_EQ(p.pitch(), (m[0] + 7) / 8 * 8);
  EXPECT_GE(p.pitch(), m[0]);
  const std::size_t pitch = static_cast<std::size_t>(p.pitch());
  EXPECT_EQ(p.points(), pitch * m[1] * m[2]);
  const Box all = p.allocated();
  EXPECT_EQ(p.linear(all.lo[0], all.lo[1], all.lo[2]), 0u);
  EXPECT_EQ(p.linear(all.hi[0] - 1, all.hi[1] - 1, all.hi[2] - 1),
            p.points() - 1 - (pitch - static_cast<std::size_t>(m[0])));
  const std::size_t base = p.linear(p.owned.lo[0], p.owned.lo[1], p.owned.lo[2]);
  EXPECT_EQ(p.linear(p.owned.lo[0] + 1, p.owned.lo[1], p.owned.lo[2]), base + 1);
  EXPECT_EQ(p.linear(p.owned.lo[0], p.owned.lo[1] + 1, p.owned.lo[2]), base + pitch);
  EXPECT_EQ(p.linear(p.owned.lo[0], p.owned.lo[1], p.owned.lo[2] + 1), base + pitch * m[1]);
  // linear() enumerates the allocated box in x-fastest order, rows `pitch` apart
  bool in_order = true;
  for_box(all, [&](int i, int j, int k) {
    const std::size_t row = static_cast<std::size_t>(k - all.lo[2]) * m[1] + (j - all.lo[1]);
    in_order =
        in_order && p.linear(i, j, k) == row * pitch + static_cast<std::size_t>(i - all.lo[0]);
  });
  EXPECT_TRUE(in_order);
  // Every array starts row_offset() points past an aligned address, so that the first owned
  // point of every row is aligned: in GridFunctions' host arrays at a 64-byte address.
  EXPECT_EQ((p.row_offset() + p.ghost()) % 8, 0);
  EXPECT_LT(p.row_offset(), 8);
  GridFunctions gf(p);
  const int u = gf.add("u");
  for (int k = p.owned.lo[2]; k < p.owned.hi[2]; ++k)
    for (int j = p.owned.lo[1]; j < p.owned.hi[1]; ++j) {
      const auto address =
          reinterpret_cast<std::uintptr_t>(gf.data(u) + p.linear(p.owned.lo[0], j, k));
      EXPECT_EQ(address % 64, 0u) << "row j=" << j << " k=" << k;
    }
  // Unpadded (row_alignment 1): the allocated box is the array, dense.
  GridSpec dense = spec;
  dense.row_alignment = 1;
  Decomposition dd(dense, MPI_COMM_WORLD);
  EXPECT_EQ(dd.patch().pitch(), m[0]);
  EXPECT_EQ(dd.patch().points(), static_cast<std::size_t>(all.volume()));
  EXPECT_EQ(dd.patch().row_offset(), 0);
  const Real3 x0 = p.array_origin();
  for (int a = 0; a < 3; ++a) {
    EXPECT_DOUBLE_EQ(x0[a], spec.origin[a] + (p.owned.lo[a] - 2) * spec.spacing[a]);
    EXPECT_DOUBLE_EQ(p.coordinate(a, 3), spec.origin[a] + 3 * spec.spacing[a]);
  }
  // valid: grown only at outer faces
  const Box v = p.valid();
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(v.lo[a], p.owned.lo[a] - (p.outer[a][0] ? 2 : 0));
    EXPECT_EQ(v.hi[a], p.owned.hi[a] + (p.outer[a][1] ? 2 : 0));
  }
  EXPECT_FALSE(p.outer[0][0]);
  EXPECT_FALSE(p.outer[0][1]);
}

// same_rows_on_every_rank against the ranks' own patches, gathered over MPI: grids split along
// z only, unevenly along x, and along several axes.
TEST(GridDecomposition, SameRowsOnEveryRankAgreesWithTheRanksPatches) {
  for (const Index3 points : {Index3{13, 7, 5}, Index3{8, 8, 48}, Index3{41, 3, 1}}) {
    Decomposition d(make_spec(points, {false, false, false}, 2), MPI_COMM_WORLD);
    const int mine[2] = {d.patch().pitch(), d.patch().alloc()[1]};
    std::vector<int> all(2 * std::size_t(world_size()));
    MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
    bool same = true;
    for (std::size_t r = 0; r < all.size(); r += 2)
      same = same && all[r] == mine[0] && all[r + 1] == mine[1];
    EXPECT_EQ(d.same_rows_on_every_rank(), same)
        << points[0] << "x" << points[1] << "x" << points[2] << " on " << world_size();
    if (world_size() == 1) EXPECT_TRUE(same);
  }
}

TEST(GridDecomposition, AxesWithFewPointsAreNotOverSplit) {
  const int ranks = world_size();
  // 40 x 3 x 1 with g = 2: y (3 points) and z (1 point) cannot be split, so x takes all ranks.
  Decomposition d(make_spec({40, 3, 1}, {false, false, false}, 2), MPI_COMM_WORLD);
  EXPECT_EQ(d.dims(), (Index3{ranks, 1, 1}));
  // The axis with the most points takes the largest factor.
  Decomposition e(make_spec({3, 4, 30}, {false, false, false}, 1), MPI_COMM_WORLD);
  const Index3 dims = e.dims();
  EXPECT_EQ(dims[2], *std::max_element(dims.begin(), dims.end()));
}

TEST(GridDecomposition, RejectsGridsThatCannotBeSplit) {
  const int ranks = world_size();
  // A periodic axis shorter than the ghost width: no decomposition on any rank count.
  EXPECT_THROW(Decomposition(make_spec({2, 8, 8}, {true, false, false}, 3), MPI_COMM_WORLD),
               std::invalid_argument);
  try {
    Decomposition(make_spec({2, 8, 8}, {true, false, false}, 3), MPI_COMM_WORLD);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at least g = 3 points"), std::string::npos) << e.what();
  }
  // A single point cannot be shared.
  if (ranks == 1) {
    EXPECT_NO_THROW(Decomposition(make_spec({1, 1, 1}, {false, false, false}, 1), MPI_COMM_WORLD));
  } else {
    EXPECT_THROW(Decomposition(make_spec({1, 1, 1}, {false, false, false}, 1), MPI_COMM_WORLD),
                 std::invalid_argument);
  }
  // 4 ranks on 3 x 3 x 3 with g = 2: every split leaves a rank 1 point along some axis.
  if (ranks == 4) {
    EXPECT_THROW(Decomposition(make_spec({3, 3, 3}, {false, false, false}, 2), MPI_COMM_WORLD),
                 std::invalid_argument);
  }
  EXPECT_THROW(Decomposition(make_spec({0, 3, 3}, {false, false, false}, 1), MPI_COMM_WORLD),
               std::invalid_argument);
  EXPECT_THROW(Decomposition(make_spec({5, 3, 3}, {false, false, false}, -1), MPI_COMM_WORLD),
               std::invalid_argument);
}

TEST(GridFunctions, AddFindZeroInitialised) {
  Decomposition d(make_spec({13, 7, 5}, {false, true, false}, 2), MPI_COMM_WORLD);
  GridFunctions gf(d.patch());
  EXPECT_EQ(gf.count(), 0);
  EXPECT_EQ(gf.find("u"), -1);
  const int u = gf.add("u"), v = gf.add("v");
  EXPECT_EQ(u, 0);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(gf.add("u"), 0);
  EXPECT_EQ(gf.count(), 2);
  EXPECT_EQ(gf.find("v"), 1);
  EXPECT_EQ(gf.name(1), "v");
  EXPECT_EQ(gf.patch().owned.lo, d.patch().owned.lo);
  const double* p = gf.data(v);
  EXPECT_TRUE(std::all_of(p, p + d.patch().points(), [](double x) { return x == 0.0; }));
  gf.data(u)[3] = 1.5;
  EXPECT_EQ(gf.data(u)[3], 1.5);
  EXPECT_EQ(gf.data(v)[3], 0.0);
}

TEST(GridBoundaryKind, FromString) {
  EXPECT_EQ(boundary_kind_from_string("flat"), BoundaryKind::Flat);
  EXPECT_EQ(boundary_kind_from_string("static"), BoundaryKind::Static);
  EXPECT_EQ(boundary_kind_from_string("radiative"), BoundaryKind::Radiative);
  EXPECT_EQ(boundary_kind_from_string("none"), BoundaryKind::None);
  EXPECT_EQ(boundary_kind_from_string("Radiative"), BoundaryKind::Radiative);
  EXPECT_THROW(boundary_kind_from_string("newrad"), std::invalid_argument);
  EXPECT_THROW(boundary_kind_from_string(""), std::invalid_argument);
}
