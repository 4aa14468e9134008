// The values of a .par file (not part of the public API): what the Cactus flesh's parameter
// file grammar accepts to the right of `=`, read and evaluated in one pass.
//
//   value    := '+'? expr | '[' expr (',' expr)* ']'     (an array: elements 0, 1, ...)
//   expr     := and ('||' and)*           and := equal ('&&' equal)*
//   equal    := compare (('==' | '!=') compare)*
//   compare  := sum (('<' | '<=' | '>' | '>=') sum)?
//   sum      := product (('+' | '-') product)*
//   product  := power (('*' | '/' | '%') power)*
//   power    := unary ('**' unary)?        unary := ('-' | '!') unary | primary
//   primary  := number | name | "string" | 'string' | $var | ${var} | $ENV{NAME}
//             | Thorn::name | Thorn::name[expr] | func(expr, ...) | (expr) | ./path | /path
//
// As in the flesh: an integer literal (no '.') is an INT and INT op INT stays an INT (`/`
// truncates); `**` is REAL; yes/no/true/false are booleans, nan and inf reals, any other bare
// name a string (an unquoted keyword); `$parfile` is the file's name without `.par`, `$pi`
// is pi. A newline ends a value except inside parentheses or brackets and after a binary
// operator. Strings expand `$var`, take `\"` and `\\` as escapes, and on their second and
// later lines a '#' starts a comment. Nesting is bounded (kMaxDepth), never the stack.
#pragma once

#include "param/registry.hpp"
#include "support/cursor.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace saguaro::param::detail {

struct ParValue {
  enum class Type { Int, Real, Bool, String } type = Type::Int;
  long i = 0;
  double r = 0;
  bool b = false;
  std::string s;
  bool literal = false; // a string that is the value's text as written (`1+log`)
};

// What a value may refer to: $variables, $parfile, parameters set earlier in the file.
struct ParScope {
  std::string par_path; // whose name $parfile is
  std::map<std::string, ParValue> variables;
  // Thorn::name[index] as set earlier in the file, or nullptr.
  std::function<const ParValue*(const std::string&, const std::string&, int)> parameter;
};

constexpr int kMaxDepth = 64; // parentheses, unary operators and calls nested in one value

// Reads the value at `c` (after the '='), up to the end of its line (or the end of its last
// continued line), and evaluates it. Throws support::InputError at the culprit. `written`
// receives the value's text as written (its first line) and `loc` its place.
std::vector<ParValue> read_value(support::Cursor& c, ParScope& scope, std::string& written,
                                 support::SourceLoc& loc);

// A quoted string starting at the quote under `c`: its contents with $variables expanded,
// escapes resolved and comments of its later lines dropped; `loc` spans it on its first line.
std::string read_quoted(support::Cursor& c, const ParScope& scope, support::SourceLoc& loc);

// "INT 3", "REAL 0.5", "BOOLEAN yes", "STRING \"x\"" for messages.
std::string describe(const ParValue& value);

} // namespace saguaro::param::detail
