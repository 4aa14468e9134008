// The literals of the CCL languages and of .par files: Cactus's numbers (Fortran exponents
// too) and booleans.
#include "ccl/literals.hpp"

#include "support/text.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace saguaro::ccl {

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

namespace {
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
} // namespace

bool is_number_literal(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E' || s[i] == 'd' || s[i] == 'D')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exponent = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exponent;
    if (exponent == 0) return false;
  }
  return i == s.size();
}

std::optional<double> parse_real(std::string_view text) {
  if (!is_number_literal(text)) return std::nullopt;
  std::string s(text);
  for (char& c : s)
    if (c == 'd' || c == 'D') c = 'e';
  return std::strtod(s.c_str(), nullptr);
}

std::optional<long> parse_int(std::string_view text, bool* not_integral, bool* too_large) {
  if (not_integral) *not_integral = false;
  if (too_large) *too_large = false;
  std::optional<double> real = parse_real(text);
  if (!real) return std::nullopt;
  bool plain = text.find_first_of(".eEdD") == std::string_view::npos;
  if (plain) {
    errno = 0;
    std::string s(text);
    long value = std::strtol(s.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      if (too_large) *too_large = true;
      return std::nullopt;
    }
    return value;
  }
  if (!std::isfinite(*real) || std::floor(*real) != *real) {
    if (not_integral) *not_integral = true;
    return std::nullopt;
  }
  if (std::fabs(*real) >= 9.2e18) {
    if (too_large) *too_large = true;
    return std::nullopt;
  }
  return static_cast<long>(*real);
}

std::optional<bool> parse_bool(std::string_view text) {
  std::string s = support::lower(trim(text));
  if (s == "yes" || s == "true" || s == "1") return true;
  if (s == "no" || s == "false" || s == "0") return false;
  return std::nullopt;
}

} // namespace saguaro::ccl
