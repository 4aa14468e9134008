// Finite-difference weights for the equation language's derivative operators.
// Weights are exact rationals (not doubles) so that generated kernels contain
// exact literal coefficients such as -1/12 and results are reproducible.
#pragma once

#include <vector>

#include "calc/rational.hpp"

namespace saguaro::calc {

// One stencil term: weight multiplies f(x + offset*h) / h^m.
struct StencilWeight {
  int offset;
  Rational weight;
  friend bool operator==(const StencilWeight&, const StencilWeight&) = default;
};

// Weights for the m-th derivative at 0 from samples at the given distinct integer
// points (Fornberg's algorithm, in exact arithmetic). One entry per point, in the
// order given, zero weights included; exact for polynomials of degree < points.size().
// Throws std::invalid_argument if m < 0, points.size() <= m, or points are not distinct;
// std::overflow_error if the weights do not fit in int64 rationals.
std::vector<StencilWeight> fd_weights(int derivative_order, const std::vector<int>& points);

// Centered derivatives of accuracy order p in {2, 4, 6, 8} on points -p/2..p/2
// (throws std::invalid_argument otherwise). Zero weights are omitted; sorted by offset.
std::vector<StencilWeight> centered_first_derivative(int accuracy_order);
std::vector<StencilWeight> centered_second_derivative(int accuracy_order);

// The upwinded first derivative of accuracy order p in {2, 4, 6, 8}, split as McLachlan does
// so that a kernel needs no branch on the advection speed. With D+ the lopsided stencil on
// points -(p/2-1)..p/2+1 (biased towards +) and D- its mirror image,
//   beta (beta > 0 ? D+ : D-) u = beta antisymmetric(u) + |beta| symmetric(u),
//   antisymmetric = (D+ + D-)/2   (odd weights: a first derivative of order p),
//   symmetric     = (D+ - D-)/2   (even weights: h^p times a (p+2)-th derivative, dissipative).
// For beta > 0 the upwind side is +: d_t u = beta d_x u carries u towards -x. Both parts
// reach p/2+1 points, one more than the centered stencil. Zero weights omitted, by offset.
struct UpwindParts {
  std::vector<StencilWeight> antisymmetric, symmetric;
};
UpwindParts upwind_first_derivative(int accuracy_order);

} // namespace saguaro::calc
