// host_space(): allocation, copies, the method of lines' linear combination, ghost-exchange
// packing, reductions and the outer boundary conditions, each against a straightforward loop.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/array_space.hpp"

namespace saguaro::test {
namespace {

using runtime::ArrayBox;
using runtime::ArraySpace;
using runtime::BoxSums;
using runtime::OuterFaces;

using Alloc = std::array<int, 3>;

std::size_t points(const Alloc& n) {
  return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]);
}

std::size_t at(const Alloc& n, int i, int j, int k) {
  return (std::size_t(k) * std::size_t(n[1]) + std::size_t(j)) * std::size_t(n[0]) + std::size_t(i);
}

// Random values in [-2, 2) (and some exact zeros and negatives for the reductions).
std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

// An array of `space` holding `values`, released at the end of scope.
class SpaceArray {
public:
  SpaceArray(ArraySpace& space, const std::vector<double>& values)
      : space_(space), n_(values.size()), data_(space.allocate(values.size())) {
    space_.from_host(data_, values.data(), n_);
  }
  ~SpaceArray() { space_.release(data_); }
  SpaceArray(const SpaceArray&) = delete;
  SpaceArray& operator=(const SpaceArray&) = delete;
  double* get() const { return data_; }
  std::vector<double> host() const {
    std::vector<double> v(n_);
    space_.to_host(v.data(), data_, n_);
    return v;
  }

private:
  ArraySpace& space_;
  std::size_t n_;
  double* data_;
};

template <class Fn>
void for_box(const ArrayBox& b, Fn&& fn) {
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) fn(i, j, k);
}

TEST(HostArraySpace, NameAllocateCopyRelease) {
  ArraySpace& space = runtime::host_space();
  EXPECT_EQ(&space, &runtime::host_space()); // one object for the process
  EXPECT_STREQ(space.name(), "host");
  EXPECT_FALSE(space.on_device());
  const std::size_t n = 1000;
  double* a = space.allocate(n);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(std::all_of(a, a + n, [](double x) { return x == 0.0; }));
  const std::vector<double> v = random_values(n, 1);
  space.from_host(a, v.data(), n);
  std::vector<double> back(n, -1.0);
  space.to_host(back.data(), a, n);
  EXPECT_EQ(back, v);
  space.synchronize();
  space.release(a);
  space.release(nullptr); // does nothing
  double* empty = space.allocate(0);
  space.release(empty);
}

// Marks keep their ids when earlier ones are released (a run reads step n's marks while step
// n + 1's are being made): a later mark's id never names another mark, and the marks kept
// still measure what they measured.
TEST(HostArraySpace, MarksKeepTheirIdsWhenEarlierOnesAreReleased) {
  ArraySpace& space = runtime::host_space();
  space.clear_marks();
  const int a = space.mark(ArraySpace::Queue::compute);
  const int b = space.mark(ArraySpace::Queue::compute);
  const int c = space.mark(ArraySpace::Queue::compute);
  const int d = space.mark(ArraySpace::Queue::compute);
  EXPECT_EQ(b, a + 1);
  const double cd = space.seconds(c, d);
  EXPECT_GE(space.seconds(a, d), cd);
  space.release_marks_before(c);
  EXPECT_DOUBLE_EQ(space.seconds(c, d), cd);
  EXPECT_THROW(space.seconds(a, d), std::out_of_range);
  const int e = space.mark(ArraySpace::Queue::compute);
  EXPECT_EQ(e, d + 1);
  EXPECT_GE(space.seconds(c, e), cd);
  space.clear_marks();
  EXPECT_GT(space.mark(ArraySpace::Queue::compute), e); // ids are never reused
  space.clear_marks();
}

TEST(HostArraySpace, ArrayBoxVolume) {
  ArrayBox b;
  b.alloc = {5, 6, 7};
  b.lo = {1, 2, 3};
  b.hi = {4, 6, 4};
  EXPECT_EQ(b.volume(), 3u * 4u * 1u);
  b.hi[1] = 1; // empty: hi < lo
  EXPECT_EQ(b.volume(), 0u);
}

// The boxes a wrap writes: two slabs per wrapped axis over the whole allocation of the others;
// a wrapped axis with fewer owned points than ghost layers is refused (the wraps shift by one
// period), an axis that is not wrapped may have any extent.
TEST(HostArraySpace, WrappedGhostBoxes) {
  const std::vector<ArrayBox> boxes =
      runtime::wrapped_ghost_boxes({10, 9, 8}, 16, 2, {true, false, true});
  ASSERT_EQ(boxes.size(), 4u);
  EXPECT_EQ(boxes[0].lo, (Alloc{0, 0, 0}));
  EXPECT_EQ(boxes[0].hi, (Alloc{2, 9, 8}));
  EXPECT_EQ(boxes[1].lo, (Alloc{8, 0, 0}));
  EXPECT_EQ(boxes[3].lo, (Alloc{0, 0, 6}));
  EXPECT_EQ(boxes[3].hi, (Alloc{10, 9, 8}));
  // z's ghosts arriving by message (on both sides): the x and y slabs keep to z's owned range,
  // their own axis still whole; the arriving axis's own slabs (had it been wrapped) stay.
  const std::vector<ArrayBox> except =
      runtime::wrapped_ghost_boxes({10, 9, 8}, 16, 2, {true, true, false}, {false, false, true});
  ASSERT_EQ(except.size(), 4u);
  EXPECT_EQ(except[0].lo, (Alloc{0, 0, 2}));
  EXPECT_EQ(except[0].hi, (Alloc{2, 9, 6}));
  EXPECT_EQ(except[3].lo, (Alloc{0, 7, 2}));
  EXPECT_EQ(except[3].hi, (Alloc{10, 9, 6}));
  const std::vector<ArrayBox> own =
      runtime::wrapped_ghost_boxes({10, 9, 8}, 16, 2, {false, false, true}, {false, false, true});
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[0].lo, (Alloc{0, 0, 0}));
  EXPECT_EQ(own[0].hi, (Alloc{10, 9, 2}));
  EXPECT_NO_THROW(runtime::wrapped_ghost_boxes({6, 5, 8}, 8, 2, {true, false, true}));
  EXPECT_THROW(runtime::wrapped_ghost_boxes({5, 9, 8}, 8, 2, {true, false, false}),
               std::invalid_argument);
}

// The linear combination bit for bit as the sum it stands for, its terms added in order: one
// to max_terms terms, none (zeros), the target among the terms (the state updated in place), a
// copy; on a short array and on one long enough for the OpenMP path. The combinations of the
// old hand-written updates (Euler y0 + c r, accumulate acc + w r) keep their bits.
TEST(HostArraySpace, LinearCombination) {
  ArraySpace& space = runtime::host_space();
  using Term = ArraySpace::Term;
  for (std::size_t n : {std::size_t(17), std::size_t(40000)}) {
    SCOPED_TRACE(n);
    std::vector<std::vector<double>> x;
    for (unsigned m = 0; m < ArraySpace::max_terms; ++m) x.push_back(random_values(n, 2 + m));
    const std::vector<double> a = {1.0, 0.0123, -0.75, 1.0 / 3.0, 2.0, -1.0 / 6.0, 0.5, 7.25};
    std::vector<std::unique_ptr<SpaceArray>> X;
    for (const auto& v : x) X.push_back(std::make_unique<SpaceArray>(space, v));
    SpaceArray OUT(space, random_values(n, 99));
    for (std::size_t count = 0; count <= ArraySpace::max_terms; ++count) {
      SCOPED_TRACE(count);
      std::vector<Term> terms;
      for (std::size_t m = 0; m < count; ++m) terms.push_back({a[m], X[m]->get()});
      space.linear_combination(OUT.get(), terms, n);
      std::vector<double> want(n, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        if (count == 0) continue;
        double s = a[0] * x[0][i];
        for (std::size_t m = 1; m < count; ++m) s += a[m] * x[m][i];
        want[i] = s;
      }
      EXPECT_EQ(OUT.host(), want);
    }
    // In place: x1 = 0.75 x0 + 0.25 x1 + 0.0123 x2 (an SSP stage).
    const std::vector<Term> blend = {
        {0.75, X[0]->get()}, {0.25, X[1]->get()}, {0.0123, X[2]->get()}};
    space.linear_combination(X[1]->get(), blend, n);
    std::vector<double> want(n);
    for (std::size_t i = 0; i < n; ++i)
      want[i] = 0.75 * x[0][i] + 0.25 * x[1][i] + 0.0123 * x[2][i];
    EXPECT_EQ(X[1]->host(), want);
    // The updates the integrators had by hand: Euler and accumulate, bit for bit.
    const double c = 0.3125e-1, w = 2.0;
    space.linear_combination(OUT.get(), std::vector<Term>{{1.0, X[0]->get()}, {c, X[2]->get()}}, n);
    for (std::size_t i = 0; i < n; ++i) want[i] = x[0][i] + c * x[2][i];
    EXPECT_EQ(OUT.host(), want);
    space.linear_combination(OUT.get(), std::vector<Term>{{1.0, OUT.get()}, {w, X[3]->get()}}, n);
    for (std::size_t i = 0; i < n; ++i) want[i] += w * x[3][i];
    EXPECT_EQ(OUT.host(), want);
    space.copy(OUT.get(), X[4]->get(), n);
    EXPECT_EQ(OUT.host(), x[4]);
  }
  double y = 0;
  const std::vector<Term> too_many(ArraySpace::max_terms + 1, Term{1.0, &y});
  EXPECT_THROW(space.linear_combination(&y, too_many, 1), std::invalid_argument);
}

// pack: the box of every field, field after field, x fastest; unpack puts it back and touches
// nothing outside the box.
TEST(HostArraySpace, PackUnpackRoundTrip) {
  ArraySpace& space = runtime::host_space();
  const Alloc n{9, 7, 6};
  ArrayBox box;
  box.alloc = n;
  box.lo = {2, 0, 4};
  box.hi = {7, 7, 6};
  const std::vector<double> f0 = random_values(points(n), 6), f1 = random_values(points(n), 7);
  SpaceArray a0(space, f0), a1(space, f1);

  std::vector<double> buffer(2 * box.volume(), -1.0);
  space.pack({a0.get(), a1.get()}, box, buffer.data());
  std::vector<double> want;
  for (const std::vector<double>* f : {&f0, &f1})
    for_box(box, [&](int i, int j, int k) { want.push_back((*f)[at(n, i, j, k)]); });
  ASSERT_EQ(want.size(), buffer.size());
  EXPECT_EQ(buffer, want);

  // Into fresh arrays: the box gets the buffer, the rest stays zero.
  SpaceArray b0(space, std::vector<double>(points(n), 0.0)),
      b1(space, std::vector<double>(points(n), 0.0));
  space.unpack({b0.get(), b1.get()}, box, buffer.data());
  const std::vector<double> h0 = b0.host(), h1 = b1.host();
  long wrong = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const bool inside = i >= box.lo[0] && i < box.hi[0] && j >= box.lo[1] && j < box.hi[1] &&
                            k >= box.lo[2] && k < box.hi[2];
        const std::size_t p = at(n, i, j, k);
        if (h0[p] != (inside ? f0[p] : 0.0)) ++wrong;
        if (h1[p] != (inside ? f1[p] : 0.0)) ++wrong;
      }
  EXPECT_EQ(wrong, 0);

  // An empty box packs and unpacks nothing.
  ArrayBox empty = box;
  empty.hi[1] = empty.lo[1];
  std::vector<double> untouched(4, 3.0);
  space.pack({a0.get()}, empty, untouched.data());
  EXPECT_EQ(untouched, std::vector<double>(4, 3.0));
  space.unpack({b0.get()}, empty, untouched.data());
  EXPECT_EQ(b0.host(), h0);
}

TEST(HostArraySpace, ReduceMatchesADirectLoop) {
  ArraySpace& space = runtime::host_space();
  const Alloc n{8, 9, 5};
  std::vector<double> f = random_values(points(n), 8);
  f[at(n, 3, 3, 2)] = -7.5; // the extremes inside the box
  f[at(n, 4, 5, 3)] = 6.25;
  f[at(n, 0, 0, 0)] = -100.0; // and larger ones outside it
  f[at(n, 7, 8, 4)] = 100.0;
  SpaceArray a(space, f);
  ArrayBox box;
  box.alloc = n;
  box.lo = {2, 2, 1};
  box.hi = {6, 8, 4};

  double mn = std::numeric_limits<double>::infinity(), mx = -mn, linf = 0;
  long double s1 = 0, s2 = 0;
  for_box(box, [&](int i, int j, int k) {
    const double v = f[at(n, i, j, k)];
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    linf = std::max(linf, std::fabs(v));
    s1 += std::fabs(static_cast<long double>(v));
    s2 += static_cast<long double>(v) * static_cast<long double>(v);
  });
  const BoxSums s = space.reduce(a.get(), box);
  EXPECT_EQ(s.min, -7.5);
  EXPECT_EQ(s.max, 6.25);
  EXPECT_EQ(s.min, mn);
  EXPECT_EQ(s.max, mx);
  EXPECT_EQ(s.max_abs, linf);
  EXPECT_EQ(s.sum_abs, s1);
  EXPECT_EQ(s.sum_sq, s2);
  EXPECT_EQ(s.count, static_cast<long long>(box.volume()));

  ArrayBox empty = box;
  empty.hi[2] = empty.lo[2];
  const BoxSums e = space.reduce(a.get(), empty);
  EXPECT_EQ(e.min, std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.max, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.max_abs, 0.0);
  EXPECT_EQ(e.sum_abs, 0.0L);
  EXPECT_EQ(e.sum_sq, 0.0L);
  EXPECT_EQ(e.count, 0);
}

// ---------------------------------------------------------------------------------------------
// Outer boundaries against a reference written from the definitions (docs/host.md).

OuterFaces make_faces(const Alloc& n, int ghost, const std::array<std::array<bool, 2>, 3>& outer) {
  OuterFaces f{};
  f.ghost = ghost;
  for (int a = 0; a < 3; ++a) {
    f.alloc[a] = n[a];
    f.outer[a][0] = outer[a][0];
    f.outer[a][1] = outer[a][1];
  }
  // A grid around the origin, so that the radiative condition's r varies in sign per axis.
  f.origin[0] = -0.5;
  f.origin[1] = -0.3;
  f.origin[2] = -0.45;
  f.index_offset[0] = -ghost;
  f.index_offset[1] = -ghost + 1; // as if a neighbour owned a point below
  f.index_offset[2] = -ghost;
  f.spacing[0] = 0.1;
  f.spacing[1] = 0.08;
  f.spacing[2] = 0.125;
  return f;
}

// -1: not in an outer layer along axis a; 0 lower; 1 upper.
int side(const OuterFaces& f, int a, int l) {
  if (f.outer[a][0] && l < f.ghost) return 0;
  if (f.outer[a][1] && l >= f.alloc[a] - f.ghost) return 1;
  return -1;
}

bool outer_point(const OuterFaces& f, int i, int j, int k) {
  return side(f, 0, i) >= 0 || side(f, 1, j) >= 0 || side(f, 2, k) >= 0;
}

const std::vector<std::array<std::array<bool, 2>, 3>>& face_sets() {
  static const std::vector<std::array<std::array<bool, 2>, 3>> sets = {
      {{{true, true}, {true, true}, {true, true}}},     // all six faces outer
      {{{true, false}, {false, false}, {false, true}}}, // x lower and z upper only
      {{{false, true}, {true, true}, {false, false}}},
  };
  return sets;
}

TEST(HostArraySpace, FlatBoundaryCopiesTheNearestValidPoint) {
  ArraySpace& space = runtime::host_space();
  const Alloc n{9, 8, 7};
  for (int ghost : {1, 2})
    for (const auto& outer : face_sets()) {
      SCOPED_TRACE(ghost);
      const OuterFaces f = make_faces(n, ghost, outer);
      const std::vector<double> u = random_values(points(n), 9);
      SpaceArray a(space, u);
      space.apply_flat(f, a.get());
      const std::vector<double> got = a.host();
      long wrong = 0;
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) {
            int q[3] = {i, j, k};
            for (int b = 0; b < 3; ++b) {
              if (side(f, b, q[b]) == 0) q[b] = ghost;
              if (side(f, b, q[b]) == 1) q[b] = n[b] - ghost - 1;
            }
            if (got[at(n, i, j, k)] != u[at(n, q[0], q[1], q[2])]) ++wrong;
          }
      EXPECT_EQ(wrong, 0);
    }
}

TEST(HostArraySpace, StaticBoundaryZeroesTheOuterLayersOnly) {
  ArraySpace& space = runtime::host_space();
  const Alloc n{9, 8, 7};
  for (int ghost : {1, 2})
    for (const auto& outer : face_sets()) {
      const OuterFaces f = make_faces(n, ghost, outer);
      const std::vector<double> rhs = random_values(points(n), 10);
      SpaceArray a(space, rhs);
      space.apply_static_rhs(f, a.get());
      const std::vector<double> got = a.host();
      long wrong = 0, zeroed = 0;
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) {
            const bool o = outer_point(f, i, j, k);
            zeroed += o;
            if (got[at(n, i, j, k)] != (o ? 0.0 : rhs[at(n, i, j, k)])) ++wrong;
          }
      EXPECT_EQ(wrong, 0);
      EXPECT_GT(zeroed, 0);
    }
}

// rhs = -v0 (x^i / r) d_i u - v0 (u - u0) / r on the outer points (d_i one-sided pointing
// inward along axes where the point is in an outer layer, centred elsewhere unless at the
// array's edge); every other point untouched.
TEST(HostArraySpace, RadiativeBoundaryIsNewRadsCondition) {
  ArraySpace& space = runtime::host_space();
  const Alloc n{9, 8, 7};
  const double u0 = 0.25, v0 = 1.5;
  for (int ghost : {1, 2})
    for (const auto& outer : face_sets()) {
      SCOPED_TRACE(ghost);
      const OuterFaces f = make_faces(n, ghost, outer);
      const std::vector<double> u = random_values(points(n), 11);
      const std::vector<double> rhs = random_values(points(n), 12);
      SpaceArray U(space, u), R(space, rhs);
      space.apply_radiative_rhs(f, U.get(), R.get(), u0, v0);
      const std::vector<double> got = R.host();
      EXPECT_EQ(U.host(), u); // u is only read

      auto value = [&](int i, int j, int k) { return u[at(n, i, j, k)]; };
      long wrong = 0, checked = 0;
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) {
            const double g = got[at(n, i, j, k)];
            if (!outer_point(f, i, j, k)) {
              if (g != rhs[at(n, i, j, k)]) ++wrong;
              continue;
            }
            const int q[3] = {i, j, k};
            double x[3], r2 = 0;
            for (int b = 0; b < 3; ++b) {
              x[b] = f.origin[b] + (q[b] + f.index_offset[b]) * f.spacing[b];
              r2 += x[b] * x[b];
            }
            const double r = std::sqrt(r2);
            double want = 0;
            if (r > 0) {
              double radial = 0;
              for (int b = 0; b < 3; ++b) {
                int p1[3] = {i, j, k}, p2[3] = {i, j, k};
                const double h = f.spacing[b];
                double d;
                const bool forward = side(f, b, q[b]) == 0 || (side(f, b, q[b]) < 0 && q[b] == 0);
                const bool backward =
                    side(f, b, q[b]) == 1 || (side(f, b, q[b]) < 0 && q[b] == n[b] - 1);
                if (forward) {
                  p1[b] += 1;
                  p2[b] += 2;
                  d = (-3 * value(i, j, k) + 4 * value(p1[0], p1[1], p1[2]) -
                       value(p2[0], p2[1], p2[2])) /
                      (2 * h);
                } else if (backward) {
                  p1[b] -= 1;
                  p2[b] -= 2;
                  d = (3 * value(i, j, k) - 4 * value(p1[0], p1[1], p1[2]) +
                       value(p2[0], p2[1], p2[2])) /
                      (2 * h);
                } else {
                  p1[b] -= 1;
                  p2[b] += 1;
                  d = (value(p2[0], p2[1], p2[2]) - value(p1[0], p1[1], p1[2])) / (2 * h);
                }
                radial += x[b] / r * d;
              }
              want = -v0 * radial - v0 * (value(i, j, k) - u0) / r;
            }
            ++checked;
            if (!(std::fabs(g - want) <= 1e-12 * (1 + std::fabs(want)))) ++wrong;
          }
      EXPECT_EQ(wrong, 0);
      EXPECT_GT(checked, 0);
    }
}

// The origin is an outer point of no face here, so move it onto one: the condition is
// singular there and the right-hand side is 0.
TEST(HostArraySpace, RadiativeBoundaryIsZeroAtTheOrigin) {
  ArraySpace& space = runtime::host_space();
  const Alloc n{5, 5, 5};
  OuterFaces f = make_faces(n, 1, {{{true, true}, {true, true}, {true, true}}});
  for (int a = 0; a < 3; ++a) {
    f.origin[a] = 0.0;
    f.index_offset[a] = 0; // local index 0 is the origin, in the lower outer layers
  }
  SpaceArray U(space, random_values(points(n), 13)), R(space, random_values(points(n), 14));
  space.apply_radiative_rhs(f, U.get(), R.get(), 0.0, 1.0);
  const std::vector<double> got = R.host();
  EXPECT_EQ(got[at(n, 0, 0, 0)], 0.0);
  EXPECT_TRUE(std::isfinite(got[at(n, 0, 0, 1)]));
  EXPECT_NE(got[at(n, 0, 0, 1)], 0.0);
}

} // namespace
} // namespace saguaro::test
