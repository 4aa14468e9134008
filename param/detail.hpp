// Helpers shared by the param.ccl parser, the .par parser and the registry (not part of the
// public API): number and boolean literals, range checks, value formatting. Names compare
// without regard to case through support/text.hpp.
#pragma once

#include "ccl/literals.hpp"
#include "param/registry.hpp"
#include "support/text.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::param::detail {

// The literals (trim, is_number_literal, parse_real, parse_int, parse_bool) are the CCL
// languages' own (ccl/literals.hpp), shared with the EDL stage's inherited thorns.
using ccl::is_number_literal;
using ccl::parse_bool;
using ccl::parse_int;
using ccl::parse_real;
using ccl::trim;

// Parses an INT or REAL range such as `(0:1]`, `0:*`, `1:8:2`, `3`. Returns an error message
// (empty when fine) and fills `item` (its text and description are left alone).
std::string parse_numeric_range(std::string_view text, Type type, RangeItem& item);

bool in_range(const RangeItem& item, double value, Type type);
// Whether `value` satisfies at least one of the declaration's ranges (always when none).
// Keywords compare case-insensitively; strings are regular expressions searched in the value.
bool value_allowed(const Declaration& decl, const Value& value);
// A STRING range's regular expression (RE2's syntax, close to ECMAScript's and POSIX's
// extended): "" when `pattern` is valid, else what is wrong with it. RE2 matches in time linear
// in the value without recursion, so no value, however long, can exhaust the stack.
std::string pattern_error(const std::string& pattern);
bool pattern_found(const std::string& pattern, std::string_view text);

// "10", "0.5", "1.0", "yes", "\"text\"" (strings and keywords quoted when `quote`).
std::string format_value(const Value& value, bool quote);
// "2:8:2 (even orders)" lines for messages, joined by "; ".
std::string format_ranges(const Declaration& decl);

} // namespace saguaro::param::detail
