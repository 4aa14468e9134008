// The literals of the CCL languages (param.ccl defaults and ranges) and of .par files: Cactus's
// numbers and booleans. The parameter subsystem (param/) and the EDL stage's inherited thorns
// read them alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace saguaro::ccl {

std::string trim(std::string_view text);

// A Cactus number literal: `-2`, `.5`, `1.`, `1e-3`, `1.0d-3` (Fortran exponent), `+4E2`.
bool is_number_literal(std::string_view text);
// The value of such a literal (nullopt when `text` is not one).
std::optional<double> parse_real(std::string_view text);
// An integer literal, or a real literal with an integral value that fits in a long (`1e6`).
// Sets `not_integral` when it is a number but not an integer.
std::optional<long> parse_int(std::string_view text, bool* not_integral = nullptr,
                              bool* too_large = nullptr);
// yes/no/true/false/1/0, case-insensitive.
std::optional<bool> parse_bool(std::string_view text);

} // namespace saguaro::ccl
