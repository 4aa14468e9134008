// The ghost exchange: faces, edges and corners, periodic and between ranks, several fields.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

using namespace saguaro::grid;
using namespace saguaro::grid::test;

namespace {

const std::vector<Index3> kShapes = {{13, 7, 5}, {10, 11, 9}};

// The global box of points that have a value somewhere: the grid plus its outer layers
// along non-periodic axes (periodic axes unbounded: indices wrap).
bool in_global_valid(const GridSpec& s, int i, int j, int k) {
  const Index3 q{i, j, k};
  for (int a = 0; a < 3; ++a)
    if (!s.periodic[a] && (q[a] < -s.ghost || q[a] >= s.points[a] + s.ghost)) return false;
  return true;
}

bool in_global_interior(const GridSpec& s, int i, int j, int k) {
  const Index3 q{i, j, k};
  for (int a = 0; a < 3; ++a)
    if (!s.periodic[a] && (q[a] < 0 || q[a] >= s.points[a])) return false;
  return true;
}

struct Fields {
  std::vector<std::vector<double>> data;
  std::vector<double*> pointers;
  Fields(const Patch& p, int count) : data(count, std::vector<double>(p.points(), kNaN)) {
    for (auto& v : data) pointers.push_back(v.data());
  }
};

// Sets the points of `region` of every field to value(m, wrapped index), the rest to NaN.
void fill(const Patch& p, Fields& f, const Box& region) {
  for (std::size_t m = 0; m < f.data.size(); ++m)
    for_box(p.allocated(), [&](int i, int j, int k) {
      f.data[m][p.linear(i, j, k)] =
          contains(region, i, j, k) ? wrapped_value(p.spec, static_cast<int>(m), i, j, k) : kNaN;
    });
}

// Mismatches (over all ranks) between the fields and `expect(m, i, j, k)` on allocated points.
template <class Expect>
long long mismatches(const Patch& p, const Fields& f, Expect&& expect) {
  long long bad = 0;
  for (std::size_t m = 0; m < f.data.size(); ++m)
    for_box(p.allocated(), [&](int i, int j, int k) {
      if (!same(f.data[m][p.linear(i, j, k)], expect(static_cast<int>(m), i, j, k))) ++bad;
    });
  return global_sum(bad);
}

} // namespace

TEST(GridSync, FullyPeriodicFacesEdgesCorners) {
  for (const Index3& shape : kShapes)
    for (int g = 1; g <= 3; ++g) {
      SCOPED_TRACE(testing::Message()
                   << shape[0] << "x" << shape[1] << "x" << shape[2] << " g=" << g);
      const GridSpec spec = make_spec(shape, {true, true, true}, g);
      Decomposition d(spec, MPI_COMM_WORLD);
      const Patch& p = d.patch();
      Fields f(p, 3);
      fill(p, f, p.owned);
      d.sync(f.pointers);
      EXPECT_EQ(
          mismatches(p, f,
                     [&](int m, int i, int j, int k) { return wrapped_value(spec, m, i, j, k); }),
          0);
    }
}

// Every periodicity: with the valid points set before sync (owned plus this rank's outer
// layers), every allocated point afterwards holds the value of the point it images, outer
// boundary points of neighbours included (edges where an outer face meets a rank face).
TEST(GridSync, ValidPointsOfNeighboursTravel) {
  for (const Index3& shape : kShapes)
    for (const auto& periodic : all_periodicities())
      for (int g = 1; g <= 3; ++g) {
        SCOPED_TRACE(testing::Message()
                     << shape[0] << "x" << shape[1] << "x" << shape[2] << " periodic "
                     << periodic[0] << periodic[1] << periodic[2] << " g=" << g);
        const GridSpec spec = make_spec(shape, periodic, g);
        Decomposition d(spec, MPI_COMM_WORLD);
        const Patch& p = d.patch();
        Fields f(p, 2);
        fill(p, f, p.valid());
        d.sync(f.pointers);
        EXPECT_EQ(mismatches(p, f,
                             [&](int m, int i, int j, int k) {
                               EXPECT_TRUE(in_global_valid(spec, i, j, k));
                               return wrapped_value(spec, m, i, j, k);
                             }),
                  0);
      }
}

// With only the owned points set, sync fills exactly the ghost points whose image is an
// owned point of some rank; outer boundary points (of this rank and of others) stay NaN,
// and this rank's valid points are never written.
TEST(GridSync, OuterBoundaryPointsAreNotFilled) {
  for (const Index3& shape : kShapes)
    for (const auto& periodic : all_periodicities()) {
      const int g = 2;
      SCOPED_TRACE(testing::Message() << shape[0] << "x" << shape[1] << "x" << shape[2]
                                      << " periodic " << periodic[0] << periodic[1] << periodic[2]);
      const GridSpec spec = make_spec(shape, periodic, g);
      Decomposition d(spec, MPI_COMM_WORLD);
      const Patch& p = d.patch();
      Fields f(p, 1);
      fill(p, f, p.owned);
      d.sync(f.pointers);
      EXPECT_EQ(mismatches(p, f,
                           [&](int m, int i, int j, int k) {
                             return in_global_interior(spec, i, j, k)
                                        ? wrapped_value(spec, m, i, j, k)
                                        : kNaN;
                           }),
                0);
      // Mark this rank's valid points; sync must leave them alone.
      const double mark = -42.0;
      for_box(p.valid(), [&](int i, int j, int k) {
        if (!contains(p.owned, i, j, k)) f.data[0][p.linear(i, j, k)] = mark;
      });
      d.sync(f.pointers);
      long long bad = 0;
      for_box(p.valid(), [&](int i, int j, int k) {
        const double want = contains(p.owned, i, j, k) ? wrapped_value(spec, 0, i, j, k) : mark;
        if (!same(f.data[0][p.linear(i, j, k)], want)) ++bad;
      });
      EXPECT_EQ(global_sum(bad), 0);
    }
}

// Buffers are reused between calls with different numbers of fields.
TEST(GridSync, RepeatedCallsWithDifferentFieldCounts) {
  const GridSpec spec = make_spec({13, 7, 5}, {true, false, true}, 2);
  Decomposition d(spec, MPI_COMM_WORLD);
  const Patch& p = d.patch();
  for (int count : {1, 4, 2, 5, 1}) {
    SCOPED_TRACE(testing::Message() << count << " fields");
    Fields f(p, count);
    fill(p, f, p.valid());
    d.sync(f.pointers);
    EXPECT_EQ(
        mismatches(p, f,
                   [&](int m, int i, int j, int k) { return wrapped_value(spec, m, i, j, k); }),
        0);
  }
  d.sync({}); // no fields: nothing to do, still collective-safe
}

// Ghost width 0: nothing allocated beyond the owned points, sync is a no-op.
TEST(GridSync, NoGhosts) {
  const GridSpec spec = make_spec({13, 7, 5}, {true, true, true}, 0);
  Decomposition d(spec, MPI_COMM_WORLD);
  const Patch& p = d.patch();
  EXPECT_EQ(p.alloc(), p.size());
  EXPECT_EQ(static_cast<long long>(p.points()),
            static_cast<long long>(p.pitch()) * p.size()[1] * p.size()[2]);
  Fields f(p, 1);
  fill(p, f, p.owned);
  d.sync(f.pointers);
  EXPECT_EQ(
      mismatches(p, f, [&](int m, int i, int j, int k) { return wrapped_value(spec, m, i, j, k); }),
      0);
}
