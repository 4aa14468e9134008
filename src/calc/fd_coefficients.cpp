#include "calc/fd_coefficients.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace saguaro::calc {

std::vector<StencilWeight> fd_weights(int derivative_order, const std::vector<int>& points) {
  const int m = derivative_order;
  if (m < 0) throw std::invalid_argument("fd_weights: negative derivative order");
  if (points.size() <= static_cast<std::size_t>(m))
    throw std::invalid_argument("fd_weights: need more than " + std::to_string(m) + " points");
  std::vector<int> sorted = points;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw std::invalid_argument("fd_weights: points are not distinct");

  // Fornberg (1988), expansion point z = 0. c[j][k] is the weight of x_j for the
  // k-th derivative using the points x_0..x_i seen so far.
  const std::size_t n = points.size();
  std::vector<std::vector<Rational>> c(n, std::vector<Rational>(m + 1));
  c[0][0] = 1;
  Rational c1 = 1;
  for (std::size_t i = 1; i < n; ++i) {
    const int mn = std::min<int>(static_cast<int>(i), m);
    const Rational xi = points[i], xprev = points[i - 1];
    Rational c2 = 1;
    for (std::size_t j = 0; j < i; ++j) {
      const Rational c3 = xi - Rational(points[j]);
      c2 *= c3;
      if (j == i - 1) {
        for (int k = mn; k >= 1; --k)
          c[i][k] = c1 * (Rational(k) * c[i - 1][k - 1] - xprev * c[i - 1][k]) / c2;
        c[i][0] = -c1 * xprev * c[i - 1][0] / c2;
      }
      for (int k = mn; k >= 1; --k) c[j][k] = (xi * c[j][k] - Rational(k) * c[j][k - 1]) / c3;
      c[j][0] = xi * c[j][0] / c3;
    }
    c1 = c2;
  }

  std::vector<StencilWeight> out;
  out.reserve(n);
  for (std::size_t j = 0; j < n; ++j) out.push_back({points[j], c[j][m]});
  return out;
}

namespace {

std::vector<StencilWeight> centered(int derivative_order, int accuracy_order) {
  if (accuracy_order < 2 || accuracy_order > 8 || accuracy_order % 2 != 0)
    throw std::invalid_argument("centered derivative: accuracy order must be 2, 4, 6 or 8, got " +
                                std::to_string(accuracy_order));
  const int r = accuracy_order / 2;
  std::vector<int> points;
  for (int k = -r; k <= r; ++k) points.push_back(k);
  std::vector<StencilWeight> w = fd_weights(derivative_order, points); // already sorted by offset
  std::erase_if(w, [](const StencilWeight& s) { return s.weight.is_zero(); });
  return w;
}

} // namespace

std::vector<StencilWeight> centered_first_derivative(int accuracy_order) {
  return centered(1, accuracy_order);
}
std::vector<StencilWeight> centered_second_derivative(int accuracy_order) {
  return centered(2, accuracy_order);
}

UpwindParts upwind_first_derivative(int accuracy_order) {
  if (accuracy_order < 2 || accuracy_order > 8 || accuracy_order % 2 != 0)
    throw std::invalid_argument("upwind derivative: accuracy order must be 2, 4, 6 or 8, got " +
                                std::to_string(accuracy_order));
  const int r = accuracy_order / 2;
  std::vector<int> points; // biased towards +: -(r - 1) .. r + 1
  for (int k = -(r - 1); k <= r + 1; ++k) points.push_back(k);
  const std::vector<StencilWeight> plus = fd_weights(1, points);
  // D- is D+ mirrored: w-(k) = -w+(-k). Both parts live on -(r + 1) .. r + 1.
  std::vector<Rational> wp(std::size_t(2 * r + 3)), wm(wp.size());
  for (const StencilWeight& w : plus) {
    wp[std::size_t(w.offset + r + 1)] += w.weight;
    wm[std::size_t(-w.offset + r + 1)] -= w.weight;
  }
  UpwindParts parts;
  for (int k = -(r + 1); k <= r + 1; ++k) {
    const Rational a = wp[std::size_t(k + r + 1)], b = wm[std::size_t(k + r + 1)];
    if (!(a + b).is_zero()) parts.antisymmetric.push_back({k, (a + b) / Rational(2)});
    if (!(a - b).is_zero()) parts.symmetric.push_back({k, (a - b) / Rational(2)});
  }
  return parts;
}

} // namespace saguaro::calc
