// Exact rational numbers over int64, used for finite-difference coefficients so
// that generated kernels carry exact literal coefficients (e.g. -1/12) instead
// of rounded floating-point values.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <numeric>
#include <ostream>
#include <stdexcept>
#include <string>

namespace saguaro::calc {

// Always normalized: gcd(num, den) == 1, den > 0, zero is 0/1.
// Every operation checks for int64 overflow and throws std::overflow_error;
// a zero denominator throws std::domain_error.
struct Rational {
  std::int64_t num = 0, den = 1;

  constexpr Rational() = default;
  constexpr Rational(std::int64_t n, std::int64_t d = 1) : num(n), den(d) { normalize(); }

  double to_double() const { return static_cast<double>(num) / static_cast<double>(den); }
  std::string to_string() const {
    return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
  }
  constexpr bool is_zero() const { return num == 0; }

  constexpr Rational operator-() const { return Rational(checked_sub(0, num), den); }

  friend constexpr Rational operator+(const Rational& a, const Rational& b) {
    // Scale by lcm(a.den, b.den) rather than a.den * b.den to delay overflow.
    const std::int64_t g = std::gcd(a.den, b.den);
    const std::int64_t n =
        checked_add(checked_mul(a.num, b.den / g), checked_mul(b.num, a.den / g));
    return Rational(n, checked_mul(a.den, b.den / g));
  }
  friend constexpr Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }
  friend constexpr Rational operator*(const Rational& a, const Rational& b) {
    // Cross-cancel first; the result is then already in lowest terms.
    const std::int64_t g1 = std::gcd(a.num, b.den), g2 = std::gcd(b.num, a.den);
    if (g1 == 0 || g2 == 0) return Rational(); // a or b is zero
    return Rational(checked_mul(a.num / g1, b.num / g2), checked_mul(a.den / g2, b.den / g1));
  }
  friend constexpr Rational operator/(const Rational& a, const Rational& b) {
    if (b.num == 0) throw std::domain_error("Rational: division by zero");
    return a * Rational(b.den, b.num);
  }
  constexpr Rational& operator+=(const Rational& o) { return *this = *this + o; }
  constexpr Rational& operator-=(const Rational& o) { return *this = *this - o; }
  constexpr Rational& operator*=(const Rational& o) { return *this = *this * o; }
  constexpr Rational& operator/=(const Rational& o) { return *this = *this / o; }

  // Normalized representation makes memberwise equality exact.
  friend constexpr bool operator==(const Rational&, const Rational&) = default;
  friend constexpr std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
    return (a - b).num <=> 0;
  }

  friend std::ostream& operator<<(std::ostream& os, const Rational& r) {
    return os << r.to_string();
  }

private:
  static constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

  static constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b) {
    std::int64_t r{};
    if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("Rational: int64 overflow");
    return r;
  }
  static constexpr std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
    std::int64_t r{};
    if (__builtin_sub_overflow(a, b, &r)) throw std::overflow_error("Rational: int64 overflow");
    return r;
  }
  static constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
    std::int64_t r{};
    if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("Rational: int64 overflow");
    return r;
  }

  constexpr void normalize() {
    if (den == 0) throw std::domain_error("Rational: zero denominator");
    // INT64_MIN has no positive counterpart (std::gcd and sign flips would overflow).
    if (num == kMin || den == kMin) throw std::overflow_error("Rational: int64 overflow");
    if (den < 0) {
      num = -num;
      den = -den;
    }
    const std::int64_t g = std::gcd(num, den);
    num /= g;
    den /= g;
  }
};

} // namespace saguaro::calc
