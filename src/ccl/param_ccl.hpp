// Cactus's param.ccl, its syntax: access sections and parameter declarations, their ranges and
// defaults as written. The parameter subsystem (param/) gives them values and checks them into
// its registry; the EDL stage reads an inherited thorn's global and restricted parameters.
#pragma once

#include "support/diagnostics.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace saguaro::ccl {

enum class ParamType { Int, Real, Keyword, Boolean, String };
const char* to_string(ParamType type); // "INT", "REAL", "KEYWORD", "BOOLEAN", "STRING"

// The section a declaration is in. Global: every thorn sees it; Restricted: thorns that
// inherit this one's implementation; Private: this thorn alone (also a declaration under
// `shares:`, where Cactus expects only USES and EXTENDS lines).
enum class ParamAccess { Global, Restricted, Private, Shares };

// One item of a range block as written: `lo:hi:step` (INT, REAL; its parts joined, without
// the blanks between them), a keyword or a regular expression (one item per word or string).
struct ParamRange {
  std::string text;
  std::string description;
  support::SourceLoc loc; // the item; for INT and REAL all its parts when on one line
};

struct ParamDecl {
  std::string name;
  ParamType type = ParamType::Real;
  std::string description;
  std::vector<ParamRange> ranges;
  std::string default_text; // as written, without quotes
  support::SourceLoc default_loc;
  ParamAccess access = ParamAccess::Private; // Global, Restricted or Private
  std::string steerable = "never";           // never|always|recover (lower case)
  int array_size = 0;                        // `INT v[3] ...`: 3; a scalar: 0
  support::SourceLoc loc;                    // the name where it is declared
};

// Checks of what the syntax does not decide (a range's bounds, a STRING range's regular
// expression, a default of the declared type and in range), called as the reader meets each
// piece, so that the first error of a file is the first in reading order. Either may throw.
struct ParamCclHooks {
  // Each range item as it is read, of declarations and of EXTENDS blocks alike.
  std::function<void(ParamType, const ParamRange&)> range;
  // Each declaration once its default is read, before the rest of its line.
  std::function<void(const ParamDecl&)> declared;
};

// The declarations of a param.ccl file, in order (USES and EXTENDS lines are read and checked,
// not returned). Throws support::InputError (file:line:col) on a syntax error.
std::vector<ParamDecl> read_param_ccl(const std::shared_ptr<const support::SourceFile>& source,
                                      const ParamCclHooks& hooks = {});

} // namespace saguaro::ccl
