// Name helpers shared by the schedule's sources (internal; not part of the API).
//
// Cactus compares schedule names without regard to case: `MoL_CalcRHS`, `mol_calcrhs` and
// `MOL_CALCRHS` name the same group, and `CCTK_EVOL`, `evol` and `EVOL` the same bin.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace saguaro::schedule::detail {

inline std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// A bin name as bins() spells it: upper case, without Cactus's `CCTK_` prefix. The result
// need not be a bin; callers check.
inline std::string normalise_bin(std::string_view name) {
  std::string up = upper(name);
  if (up.size() > 5 && up.compare(0, 5, "CCTK_") == 0) up.erase(0, 5);
  return up;
}

} // namespace saguaro::schedule::detail
