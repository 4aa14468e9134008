// Outer boundary conditions: flat, static and radiative (Sommerfeld, as Cactus NewRad).
#include "grid/grid.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace saguaro::grid {

BoundaryKind boundary_kind_from_string(const std::string& word) {
  std::string w = word;
  std::transform(w.begin(), w.end(), w.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (w == "flat") return BoundaryKind::Flat;
  if (w == "static") return BoundaryKind::Static;
  if (w == "radiative") return BoundaryKind::Radiative;
  if (w == "none") return BoundaryKind::None;
  throw std::invalid_argument("saguaro::grid: unknown boundary condition '" + word +
                              "' (expected flat, static, radiative or none)");
}

namespace {

// Calls fn(i, j, k) for every point of the ghost layer at distance `layer` (1..g) outside
// the owned region on side s of axis a, over the whole allocated extent of the other axes.
template <class Fn>
void for_layer(const Patch& p, int a, int s, int layer, Fn&& fn) {
  Box b = p.allocated();
  const int index = s == 0 ? p.owned.lo[a] - layer : p.owned.hi[a] - 1 + layer;
  b.lo[a] = index;
  b.hi[a] = index + 1;
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) fn(i, j, k);
}

// Is global point x (along axis a) in an outer boundary layer of the patch?
int outer_side(const Patch& p, int a, int x) {
  if (p.outer[a][0] && x < p.owned.lo[a]) return 0;
  if (p.outer[a][1] && x >= p.owned.hi[a]) return 1;
  return -1;
}

} // namespace

void apply_flat(const Patch& patch, double* field) {
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (!patch.outer[a][s]) continue;
      const int source = s == 0 ? patch.owned.lo[a] : patch.owned.hi[a] - 1;
      for (int layer = 1; layer <= patch.ghost(); ++layer)
        for_layer(patch, a, s, layer, [&](int i, int j, int k) {
          Index3 from{i, j, k};
          from[a] = source;
          field[patch.linear(i, j, k)] = field[patch.linear(from[0], from[1], from[2])];
        });
    }
}

void apply_static_rhs(const Patch& patch, double* rhs) {
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (!patch.outer[a][s]) continue;
      for (int layer = 1; layer <= patch.ghost(); ++layer)
        for_layer(patch, a, s, layer,
                  [&](int i, int j, int k) { rhs[patch.linear(i, j, k)] = 0.0; });
    }
}

void apply_radiative_rhs(const Patch& patch, const double* u, double* rhs, double u0, double v0) {
  const Box all = patch.allocated();
  auto at = [&](const Index3& q) { return u[patch.linear(q[0], q[1], q[2])]; };

  // d_b u at point q: one-sided second order pointing inward along an axis where q is in an
  // outer layer; centred elsewhere when both neighbours are allocated, else one-sided.
  auto derivative = [&](const Index3& q, int b) {
    const double h = patch.spec.spacing[b];
    int dir = 0; // 0: centred, +1: forward one-sided, -1: backward one-sided
    const int side = outer_side(patch, b, q[b]);
    if (side == 0)
      dir = +1;
    else if (side == 1)
      dir = -1;
    else if (q[b] - 1 < all.lo[b])
      dir = +1;
    else if (q[b] + 1 >= all.hi[b])
      dir = -1;
    Index3 q1 = q, q2 = q;
    if (dir == 0) {
      q1[b] -= 1;
      q2[b] += 1;
      return (at(q2) - at(q1)) / (2 * h);
    }
    q1[b] += dir;
    q2[b] += 2 * dir;
    // forward: (-3u0 + 4u1 - u2)/(2h); backward: (3u0 - 4u1 + u2)/(2h)
    return -dir * (3 * at(q) - 4 * at(q1) + at(q2)) / (2 * h);
  };

  // Axis by axis, layers nearest the interior first; a point in several outer layers (an
  // edge or corner) is set once, at the first axis it belongs to.
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (!patch.outer[a][s]) continue;
      for (int layer = 1; layer <= patch.ghost(); ++layer)
        for_layer(patch, a, s, layer, [&](int i, int j, int k) {
          const Index3 q{i, j, k};
          for (int b = 0; b < a; ++b)
            if (outer_side(patch, b, q[b]) >= 0) return; // done in axis b's pass
          Real3 x{};
          double r2 = 0;
          for (int b = 0; b < 3; ++b) {
            x[b] = patch.coordinate(b, q[b]);
            r2 += x[b] * x[b];
          }
          const double r = std::sqrt(r2);
          double& out = rhs[patch.linear(i, j, k)];
          if (!(r > 0)) { // at the origin the condition is singular: hold the point static
            out = 0.0;
            return;
          }
          double radial = 0; // (x^i / r) d_i u
          for (int b = 0; b < 3; ++b) radial += x[b] * derivative(q, b);
          radial /= r;
          out = -v0 * radial - v0 * (at(q) - u0) / r;
        });
    }
}

} // namespace saguaro::grid
