#include <cstdint>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "calc/fd_coefficients.hpp"
#include "calc/rational.hpp"

namespace saguaro::calc {

// Readable failure messages (found by ADL; internal linkage avoids clashes with other tests).
[[maybe_unused]] static void PrintTo(const StencilWeight& s, std::ostream* os) {
  *os << "{" << s.offset << ", " << s.weight << "}";
}

namespace {

using W = std::vector<StencilWeight>;

Rational power(int base, int exp) {
  Rational r = 1; // 0^0 == 1
  for (int i = 0; i < exp; ++i) r *= Rational(base);
  return r;
}

// Stencil applied to x^d at 0 (h = 1), versus the exact m-th derivative of x^d at 0.
Rational apply(const W& w, int d) {
  Rational sum;
  for (const auto& s : w) sum += s.weight * power(s.offset, d);
  return sum;
}
Rational exact_derivative_at_zero(int m, int d) {
  if (d != m) return 0; // d!/(d-m)! * 0^(d-m) vanishes unless d == m
  Rational f = 1;
  for (int i = 2; i <= m; ++i) f *= Rational(i);
  return f;
}

Rational weight_at(const W& w, int offset) {
  for (const auto& s : w)
    if (s.offset == offset) return s.weight;
  return 0; // omitted == zero
}

// ---------------------------------------------------------------- Rational

TEST(Rational, NormalizesSignAndGcd) {
  EXPECT_EQ(Rational(2, -4), Rational(-1, 2));
  EXPECT_EQ(Rational(2, -4).num, -1);
  EXPECT_EQ(Rational(2, -4).den, 2);
  EXPECT_EQ(Rational(0, -7).den, 1);
  EXPECT_EQ(Rational(6, 3), Rational(2));
}

TEST(Rational, Arithmetic) {
  EXPECT_EQ(Rational(1, 2) + Rational(1, 3), Rational(5, 6));
  EXPECT_EQ(Rational(1, 2) - Rational(1, 3), Rational(1, 6));
  EXPECT_EQ(Rational(2, 3) * Rational(9, 4), Rational(3, 2));
  EXPECT_EQ(Rational(2, 3) / Rational(4, 9), Rational(3, 2));
  EXPECT_EQ(-Rational(1, 12), Rational(-1, 12));
  EXPECT_TRUE(Rational(-1, 12) < Rational(0));
  EXPECT_TRUE(Rational(1, 3) < Rational(1, 2));
  EXPECT_FALSE(Rational(1, 2) < Rational(1, 2));
  EXPECT_DOUBLE_EQ(Rational(-1, 4).to_double(), -0.25);
}

TEST(Rational, ToString) {
  EXPECT_EQ(Rational(-1, 12).to_string(), "-1/12");
  EXPECT_EQ(Rational(4, 2).to_string(), "2");
  EXPECT_EQ(Rational(0).to_string(), "0");
}

TEST(Rational, ErrorsThrow) {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW((void)Rational(1, 0), std::domain_error);
  EXPECT_THROW(Rational(1) / Rational(0), std::domain_error);
  EXPECT_THROW(Rational(big) + Rational(1), std::overflow_error);
  EXPECT_THROW(Rational(big) * Rational(2), std::overflow_error);
  EXPECT_THROW(Rational(1, big) + Rational(1, big - 1), std::overflow_error);
  EXPECT_THROW((void)Rational(std::numeric_limits<std::int64_t>::min()), std::overflow_error);
  EXPECT_EQ(Rational(big) * Rational(1, big), Rational(1)); // cross-cancellation avoids overflow
}

// ---------------------------------------------------------------- known values

TEST(FdCoefficients, KnownFirstDerivative) {
  EXPECT_EQ(centered_first_derivative(2), (W{{-1, {-1, 2}}, {1, {1, 2}}}));
  EXPECT_EQ(centered_first_derivative(4),
            (W{{-2, {1, 12}}, {-1, {-2, 3}}, {1, {2, 3}}, {2, {-1, 12}}}));
  EXPECT_EQ(centered_first_derivative(8), (W{{-4, {1, 280}},
                                             {-3, {-4, 105}},
                                             {-2, {1, 5}},
                                             {-1, {-4, 5}},
                                             {1, {4, 5}},
                                             {2, {-1, 5}},
                                             {3, {4, 105}},
                                             {4, {-1, 280}}}));
}

TEST(FdCoefficients, KnownSecondDerivative) {
  EXPECT_EQ(centered_second_derivative(2), (W{{-1, 1}, {0, -2}, {1, 1}}));
  EXPECT_EQ(centered_second_derivative(4),
            (W{{-2, {-1, 12}}, {-1, {4, 3}}, {0, {-5, 2}}, {1, {4, 3}}, {2, {-1, 12}}}));
}

TEST(FdCoefficients, OneSidedAndArbitraryStencils) {
  EXPECT_EQ(fd_weights(1, {0, 1}), (W{{0, -1}, {1, 1}}));
  EXPECT_EQ(fd_weights(1, {0, 1, 2}), (W{{0, {-3, 2}}, {1, 2}, {2, {-1, 2}}}));
  EXPECT_EQ(fd_weights(0, {3}), (W{{3, 1}}));
  // Points in arbitrary order keep their order; zero weights are kept.
  EXPECT_EQ(fd_weights(1, {1, 0, -1}), (W{{1, {1, 2}}, {0, 0}, {-1, {-1, 2}}}));
  // Interpolation at 0 from a stencil that does not contain 0.
  EXPECT_EQ(fd_weights(0, {1, 2}), (W{{1, 2}, {2, -1}}));
}

// ---------------------------------------------------------------- properties

class CenteredOrder : public ::testing::TestWithParam<int> {};

TEST_P(CenteredOrder, FirstDerivativeAccuracy) {
  const int p = GetParam();
  const W w = centered_first_derivative(p);
  for (int d = 0; d <= p; ++d) EXPECT_EQ(apply(w, d), exact_derivative_at_zero(1, d)) << "d=" << d;
  EXPECT_NE(apply(w, p + 1), exact_derivative_at_zero(1, p + 1));
}

TEST_P(CenteredOrder, SecondDerivativeAccuracy) {
  const int p = GetParam();
  const W w = centered_second_derivative(p);
  for (int d = 0; d <= p + 1; ++d)
    EXPECT_EQ(apply(w, d), exact_derivative_at_zero(2, d)) << "d=" << d;
  EXPECT_NE(apply(w, p + 2), exact_derivative_at_zero(2, p + 2));
}

TEST_P(CenteredOrder, ShapeSumAndSymmetry) {
  const int p = GetParam(), r = p / 2;
  const W first = centered_first_derivative(p), second = centered_second_derivative(p);
  EXPECT_EQ(first.size(), static_cast<std::size_t>(p)); // center weight omitted
  EXPECT_EQ(second.size(), static_cast<std::size_t>(p + 1));
  EXPECT_EQ(apply(first, 0), Rational(0));
  EXPECT_EQ(apply(second, 0), Rational(0));
  for (const W* w : {&first, &second}) {
    for (std::size_t i = 0; i < w->size(); ++i) {
      EXPECT_FALSE((*w)[i].weight.is_zero());
      EXPECT_LE(std::abs((*w)[i].offset), r);
      if (i > 0) {
        EXPECT_LT((*w)[i - 1].offset, (*w)[i].offset);
      }
    }
  }
  for (int k = 0; k <= r; ++k) {
    EXPECT_EQ(weight_at(first, k), -weight_at(first, -k)) << "k=" << k;
    EXPECT_EQ(weight_at(second, k), weight_at(second, -k)) << "k=" << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Orders, CenteredOrder, ::testing::Values(2, 4, 6, 8));

// The upwind parts recombine to the lopsided stencils: anti + symm is D+ on -(p/2-1)..p/2+1,
// anti - symm its mirror; anti is a first derivative of order p, symm vanishes on polynomials
// of degree <= p + 1 (it is h^p times a (p+2)-th derivative) and damps (negative at k = 0).
TEST_P(CenteredOrder, UpwindPartsRecombineToLopsidedStencils) {
  const int p = GetParam(), r = p / 2;
  const UpwindParts u = upwind_first_derivative(p);
  std::vector<int> points;
  for (int k = -(r - 1); k <= r + 1; ++k) points.push_back(k);
  const W plus = fd_weights(1, points);
  for (int k = -(r + 1); k <= r + 1; ++k) {
    EXPECT_EQ(weight_at(u.antisymmetric, k) + weight_at(u.symmetric, k), weight_at(plus, k))
        << "k=" << k;
    EXPECT_EQ(weight_at(u.antisymmetric, k) - weight_at(u.symmetric, k), -weight_at(plus, -k))
        << "k=" << k;
  }
  for (int d = 0; d <= p; ++d)
    EXPECT_EQ(apply(u.antisymmetric, d), exact_derivative_at_zero(1, d)) << "d=" << d;
  for (int d = 0; d <= p + 1; ++d) EXPECT_EQ(apply(u.symmetric, d), Rational(0)) << "d=" << d;
  EXPECT_NE(apply(u.symmetric, p + 2), Rational(0));
  EXPECT_LT(weight_at(u.symmetric, 0), Rational(0));
  for (const W* w : {&u.antisymmetric, &u.symmetric})
    for (const auto& s : *w) EXPECT_LE(std::abs(s.offset), r + 1);
}

// ---------------------------------------------------------------- invalid input

TEST(FdCoefficients, InvalidInputsThrow) {
  EXPECT_THROW(fd_weights(1, {0}), std::invalid_argument);
  EXPECT_THROW(fd_weights(2, {0, 1}), std::invalid_argument);
  EXPECT_THROW(fd_weights(0, {}), std::invalid_argument);
  EXPECT_THROW(fd_weights(-1, {0, 1}), std::invalid_argument);
  EXPECT_THROW(fd_weights(1, {0, 1, 0}), std::invalid_argument);
  for (int p : {-2, 0, 1, 3, 5, 7, 10}) {
    EXPECT_THROW(centered_first_derivative(p), std::invalid_argument) << "p=" << p;
    EXPECT_THROW(centered_second_derivative(p), std::invalid_argument) << "p=" << p;
    EXPECT_THROW(upwind_first_derivative(p), std::invalid_argument) << "p=" << p;
  }
}

} // namespace
} // namespace saguaro::calc
