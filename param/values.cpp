#include "param/detail.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <re2/re2.h>

namespace saguaro::param::detail {

std::string parse_numeric_range(std::string_view text, Type type, RangeItem& item) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.empty()) return "an empty range: expected 'lo:hi', 'lo:hi:step', '*' or a single value";
  item.lo.reset();
  item.hi.reset();
  item.lo_open = item.hi_open = false;
  item.step = 0;
  bool lo_bracket = false, hi_bracket = false;
  if (s.front() == '(' || s.front() == '[') {
    item.lo_open = s.front() == '(';
    lo_bracket = true;
    s.erase(0, 1);
  }
  if (!s.empty() && (s.back() == ')' || s.back() == ']')) {
    item.hi_open = s.back() == ')';
    hi_bracket = true;
    s.pop_back();
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = s.find(':', start);
    parts.push_back(s.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3)
    return fmt::format("'{}' has too many ':': expected 'lo:hi' or 'lo:hi:step'", text);
  auto bound = [&](const std::string& part, std::optional<double>& out) -> std::string {
    if (part.empty() || part == "*") return {};
    if (type == Type::Int) {
      bool not_integral = false;
      std::optional<long> v = parse_int(part, &not_integral);
      if (!v)
        return fmt::format("'{}' is not an integer: an INT range takes integer bounds or '*'",
                           part);
      out = static_cast<double>(*v);
      return {};
    }
    std::optional<double> v = parse_real(part);
    if (!v) return fmt::format("'{}' is not a number: expected a number or '*'", part);
    out = *v;
    return {};
  };
  if (parts.size() == 1) {
    if ((lo_bracket || hi_bracket) && parts[0] != "*")
      return fmt::format("'{}': a single value takes no brackets; write 'lo:hi' for an interval",
                         text);
    std::string error = bound(parts[0], item.lo);
    if (!error.empty()) return error;
    item.hi = item.lo;
    return {};
  }
  std::string error = bound(parts[0], item.lo);
  if (error.empty()) error = bound(parts[1], item.hi);
  if (!error.empty()) return error;
  if (parts.size() == 3 && !parts[2].empty() && parts[2] != "*") {
    if (type != Type::Int) return fmt::format("'{}': only INT ranges take a step", text);
    std::optional<long> step = parse_int(parts[2]);
    if (!step || *step <= 0) return fmt::format("'{}': the step must be a positive integer", text);
    item.step = *step;
  }
  if (item.lo && item.hi && *item.lo > *item.hi)
    return fmt::format("'{}' is empty: the lower bound is above the upper bound", text);
  return {};
}

bool in_range(const RangeItem& item, double value, Type type) {
  if (item.lo && (item.lo_open ? value <= *item.lo : value < *item.lo)) return false;
  if (item.hi && (item.hi_open ? value >= *item.hi : value > *item.hi)) return false;
  if (type == Type::Int && item.step > 0) {
    long base = item.lo ? static_cast<long>(*item.lo) : 0;
    long offset = static_cast<long>(value) - base;
    if (((offset % item.step) + item.step) % item.step != 0) return false;
  }
  return true;
}

namespace {
RE2::Options pattern_options() {
  RE2::Options options;
  options.set_log_errors(false);
  return options;
}
} // namespace

std::string pattern_error(const std::string& pattern) {
  const RE2 re(pattern, pattern_options());
  return re.ok() ? std::string() : re.error();
}

bool pattern_found(const std::string& pattern, std::string_view text) {
  const RE2 re(pattern, pattern_options());
  return re.ok() && RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re);
}

bool value_allowed(const Declaration& decl, const Value& value) {
  if (decl.ranges.empty()) return true;
  switch (decl.type) {
  case Type::Boolean: return true;
  case Type::Int:
  case Type::Real: {
    double v = decl.type == Type::Int ? static_cast<double>(std::get<long>(value))
                                      : std::get<double>(value);
    return std::any_of(decl.ranges.begin(), decl.ranges.end(),
                       [&](const RangeItem& r) { return in_range(r, v, decl.type); });
  }
  case Type::Keyword: {
    const std::string& word = std::get<std::string>(value);
    return std::any_of(decl.ranges.begin(), decl.ranges.end(),
                       [&](const RangeItem& r) { return support::iequals(r.text, word); });
  }
  case Type::String: {
    const std::string& text = std::get<std::string>(value);
    for (const RangeItem& r : decl.ranges) {
      if (r.text.empty()) return true;              // Cactus: "" matches anything
      if (pattern_found(r.text, text)) return true; // an invalid pattern matches nothing
    }
    return false;
  }
  }
  return true;
}

std::string format_value(const Value& value, bool quote) {
  if (const long* i = std::get_if<long>(&value)) return fmt::format("{}", *i);
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "yes" : "no";
  if (const double* d = std::get_if<double>(&value)) {
    std::string s = fmt::format("{}", *d);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  const std::string& s = std::get<std::string>(value);
  return quote ? "\"" + s + "\"" : s;
}

std::string format_ranges(const Declaration& decl) {
  std::string out;
  for (const RangeItem& r : decl.ranges) {
    if (!out.empty()) out += "; ";
    bool quoted = decl.type == Type::Keyword || decl.type == Type::String;
    out += quoted ? "\"" + r.text + "\"" : r.text;
    if (!r.description.empty()) out += " (" + r.description + ")";
  }
  return out;
}

} // namespace saguaro::param::detail
