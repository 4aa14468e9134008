// Shared helpers of the grid tests (run under mpirun on any number of ranks).
#pragma once

#include "grid/grid.hpp"

#include <mpi.h>

#include <cmath>
#include <limits>
#include <vector>

namespace saguaro::grid::test {

inline int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Sum of a per-rank count over all ranks (so every rank checks the same number).
inline long long global_sum(long long local) {
  long long total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

inline GridSpec make_spec(Index3 points, std::array<bool, 3> periodic, int ghost) {
  GridSpec s;
  s.points = points;
  s.periodic = periodic;
  s.ghost = ghost;
  s.origin = {-0.5, 0.25, 1.0};
  s.spacing = {0.1, 0.2, 0.05};
  return s;
}

// Index along a periodic axis wrapped into [0, n); unchanged along a non-periodic axis.
inline int wrap(const GridSpec& s, int a, int i) {
  if (!s.periodic[a]) return i;
  const int n = s.points[a];
  return ((i % n) + n) % n;
}

// A distinct value per global point (and field m); also distinct for the outer boundary
// layers (indices -g..-1 and n..n+g-1).
inline double value(int m, int i, int j, int k) {
  return 1.0e7 * m + (i + 10) + 100.0 * (j + 10) + 10000.0 * (k + 10);
}

inline double wrapped_value(const GridSpec& s, int m, int i, int j, int k) {
  return value(m, wrap(s, 0, i), wrap(s, 1, j), wrap(s, 2, k));
}

inline bool contains(const Box& b, int i, int j, int k) {
  return i >= b.lo[0] && i < b.hi[0] && j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] && k < b.hi[2];
}

inline bool in_outer_layer(const Patch& p, int a, int x) {
  return (p.outer[a][0] && x < p.owned.lo[a]) || (p.outer[a][1] && x >= p.owned.hi[a]);
}

inline bool in_any_outer_layer(const Patch& p, int i, int j, int k) {
  return in_outer_layer(p, 0, i) || in_outer_layer(p, 1, j) || in_outer_layer(p, 2, k);
}

template <class Fn>
void for_box(const Box& b, Fn&& fn) {
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) fn(i, j, k);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Same value, or both NaN.
inline bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// All 8 combinations of periodicity.
inline std::vector<std::array<bool, 3>> all_periodicities() {
  std::vector<std::array<bool, 3>> out;
  for (int m = 0; m < 8; ++m) out.push_back({(m & 1) != 0, (m & 2) != 0, (m & 4) != 0});
  return out;
}

} // namespace saguaro::grid::test
