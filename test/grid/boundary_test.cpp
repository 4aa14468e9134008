// Outer boundary conditions (flat, static, radiative) and global norms.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace saguaro::grid;
using namespace saguaro::grid::test;

namespace {

int clamp_or_wrap(const GridSpec& s, int a, int i) {
  return s.periodic[a] ? wrap(s, a, i) : std::clamp(i, 0, s.points[a] - 1);
}

} // namespace

// Owned points set, sync, flat: every allocated point holds the value of its periodic image
// clamped into the grid along non-periodic axes (edges and corners included).
TEST(GridBoundary, FlatCopiesTheNearestValidPoint) {
  for (const Index3& shape : {Index3{13, 7, 5}, Index3{10, 11, 9}})
    for (const auto& periodic : all_periodicities())
      for (int g = 1; g <= 3; ++g) {
        SCOPED_TRACE(testing::Message()
                     << shape[0] << "x" << shape[1] << "x" << shape[2] << " periodic "
                     << periodic[0] << periodic[1] << periodic[2] << " g=" << g);
        const GridSpec spec = make_spec(shape, periodic, g);
        Decomposition d(spec, MPI_COMM_WORLD);
        const Patch& p = d.patch();
        std::vector<double> u(p.points(), kNaN);
        for_box(p.owned, [&](int i, int j, int k) { u[p.linear(i, j, k)] = value(0, i, j, k); });
        d.sync({u.data()});
        apply_flat(p, u.data());
        long long bad = 0;
        for_box(p.allocated(), [&](int i, int j, int k) {
          const double want = value(0, clamp_or_wrap(spec, 0, i), clamp_or_wrap(spec, 1, j),
                                    clamp_or_wrap(spec, 2, k));
          if (!same(u[p.linear(i, j, k)], want)) ++bad;
        });
        EXPECT_EQ(global_sum(bad), 0);
      }
}

TEST(GridBoundary, StaticZeroesTheOuterLayersOnly) {
  for (const auto& periodic : all_periodicities()) {
    const GridSpec spec = make_spec({10, 11, 9}, periodic, 2);
    Decomposition d(spec, MPI_COMM_WORLD);
    const Patch& p = d.patch();
    std::vector<double> rhs(p.points(), 7.0);
    apply_static_rhs(p, rhs.data());
    long long bad = 0;
    for_box(p.allocated(), [&](int i, int j, int k) {
      const double want = in_any_outer_layer(p, i, j, k) ? 0.0 : 7.0;
      if (rhs[p.linear(i, j, k)] != want) ++bad;
    });
    EXPECT_EQ(global_sum(bad), 0);
  }
}

namespace {

// An outgoing spherical wave u = u0 + F(r - v0 t)/r, F(s) = exp(-(s - 1)^2).
constexpr double kU0 = 0.3, kV0 = 1.5;
double wave_F(double s) {
  return std::exp(-(s - 1) * (s - 1));
}
double wave_dF(double s) {
  return -2 * (s - 1) * wave_F(s);
}

struct RadiativeResult {
  double max_error = 0;           // over outer boundary points, all ranks
  long long boundary_points = 0;  // in the ranks' valid boxes, all ranks
  long long interior_changed = 0; // rhs points outside the outer layers that were written
};

// The grid covers [-1, 1]^3 with n points per axis (outer layers outside it, r >= 1).
RadiativeResult radiative_on(int n, int g) {
  GridSpec spec;
  spec.points = {n, n, n};
  spec.ghost = g;
  const double h = 2.0 / (n - 1);
  spec.origin = {-1, -1, -1};
  spec.spacing = {h, h, h};
  Decomposition d(spec, MPI_COMM_WORLD);
  const Patch& p = d.patch();
  std::vector<double> u(p.points()), rhs(p.points(), -1234.5);
  auto radius = [&](int i, int j, int k) {
    const double x = p.coordinate(0, i), y = p.coordinate(1, j), z = p.coordinate(2, k);
    return std::sqrt(x * x + y * y + z * z);
  };
  for_box(p.allocated(), [&](int i, int j, int k) {
    const double r = radius(i, j, k);
    u[p.linear(i, j, k)] = kU0 + wave_F(r) / r;
  });
  apply_radiative_rhs(p, u.data(), rhs.data(), kU0, kV0);
  RadiativeResult out;
  double err = 0;
  long long count = 0, changed = 0;
  for_box(p.allocated(), [&](int i, int j, int k) {
    const double got = rhs[p.linear(i, j, k)];
    if (in_any_outer_layer(p, i, j, k)) {
      const double r = radius(i, j, k);
      const double exact = -kV0 * wave_dF(r) / r;
      err = std::max(err, std::fabs(got - exact));
      if (contains(p.valid(), i, j, k)) ++count; // each point counted on one rank
    } else if (got != -1234.5) {
      ++changed;
    }
  });
  MPI_Allreduce(&err, &out.max_error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  out.boundary_points = global_sum(count);
  out.interior_changed = global_sum(changed);
  return out;
}

} // namespace

TEST(GridBoundary, RadiativeConvergesAtSecondOrder) {
  for (int g = 1; g <= 2; ++g) {
    SCOPED_TRACE(testing::Message() << "g=" << g);
    const RadiativeResult coarse = radiative_on(21, g), fine = radiative_on(41, g);
    // every outer boundary point set, nothing else touched
    const auto layer_points = [g](long long n) {
      return (n + 2 * g) * (n + 2 * g) * (n + 2 * g) - n * n * n;
    };
    EXPECT_EQ(coarse.boundary_points, layer_points(21));
    EXPECT_EQ(fine.boundary_points, layer_points(41));
    EXPECT_EQ(coarse.interior_changed, 0);
    EXPECT_EQ(fine.interior_changed, 0);
    EXPECT_GT(coarse.max_error, 0.0);
    const double order = std::log2(coarse.max_error / fine.max_error);
    EXPECT_NEAR(order, 2.0, 0.3) << "errors " << coarse.max_error << " " << fine.max_error;
  }
}

// An outer boundary point at the origin gets a finite right-hand side (held static).
TEST(GridBoundary, RadiativeGuardsTheOrigin) {
  GridSpec spec;
  spec.points = {6, 5, 7};
  spec.ghost = 1;
  spec.spacing = {0.5, 0.5, 0.5};
  spec.origin = {0.5, 0.5, 0.5}; // point (-1, -1, -1) lies at the origin
  Decomposition d(spec, MPI_COMM_WORLD);
  const Patch& p = d.patch();
  std::vector<double> u(p.points(), 1.0), rhs(p.points(), 0.0);
  apply_radiative_rhs(p, u.data(), rhs.data(), 0.0, 1.0);
  long long bad = 0;
  for (double v : rhs)
    if (!std::isfinite(v)) ++bad;
  EXPECT_EQ(global_sum(bad), 0);
  if (contains(p.allocated(), -1, -1, -1)) {
    EXPECT_EQ(rhs[p.linear(-1, -1, -1)], 0.0);
  }
}

TEST(GridNorms, MatchASerialComputation) {
  for (const auto& periodic : all_periodicities())
    for (const Index3& shape : {Index3{13, 7, 5}, Index3{10, 11, 9}}) {
      const GridSpec spec = make_spec(shape, periodic, 2);
      Decomposition d(spec, MPI_COMM_WORLD);
      const Patch& p = d.patch();
      auto f = [](int i, int j, int k) {
        return std::sin(0.37 * i - 0.71 * j + 1.3 * k) + 0.25 + 1e-3 * i;
      };
      std::vector<double> u(p.points(), kNaN); // ghosts and outer layers must not count
      for_box(p.owned, [&](int i, int j, int k) { u[p.linear(i, j, k)] = f(i, j, k); });
      const Norms n = reduce_norms(d, u.data());

      double mn = INFINITY, mx = -INFINITY, linf = 0;
      long double s1 = 0, s2 = 0;
      const Box global{{0, 0, 0}, shape};
      for_box(global, [&](int i, int j, int k) {
        const double v = f(i, j, k);
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        linf = std::max(linf, std::fabs(v));
        s1 += std::fabs(static_cast<long double>(v));
        s2 += static_cast<long double>(v) * v;
      });
      const long long count = global.volume();
      const double l1 = static_cast<double>(s1 / count);
      const double l2 = static_cast<double>(std::sqrt(s2 / count));
      EXPECT_EQ(n.count, count);
      EXPECT_EQ(n.min, mn);
      EXPECT_EQ(n.max, mx);
      EXPECT_EQ(n.linf, linf);
      EXPECT_NEAR(n.l1, l1, 1e-14 * l1);
      EXPECT_NEAR(n.l2, l2, 1e-14 * l2);
    }
}
