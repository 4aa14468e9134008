// Tokens of EDL. Names are letters then letters/digits; `_` is a token of its own because
// it introduces indices (`v_i`), and the parser glues `wave_init`-style names back together
// where a thorn, group or calculation name is expected (tokens remember whether whitespace
// preceded them).
#pragma once

#include "edl/diagnostics.hpp"

#include <string>
#include <vector>

namespace saguaro::edl {

enum class TokenKind {
  Name,
  Number,
  String,
  Newline,
  Equals,     // =
  Plus,       // +
  Minus,      // -
  Star,       // *
  Slash,      // /
  Percent,    // %
  Power,      // **
  LParen,     // (
  RParen,     // )
  Comma,      // ,
  Underscore, // _
  Caret,      // ^
  Colon,      // :
  Prime,      // '
  Question,   // ? (Kranc's conditional `c ? a : b`)
  End,
};

const char* describe(TokenKind kind);

struct Token {
  TokenKind kind;
  std::string text; // as written; for String without the quotes
  int line = 0, column = 0, length = 0;
  bool space_before = false; // whitespace (not a newline) between this token and the previous

  bool is(TokenKind k) const { return kind == k; }
  bool is_name(std::string_view word) const { return kind == TokenKind::Name && text == word; }
};

// A file's tokens and the lexical errors met on the way (file order, at most one a line).
struct Tokens {
  std::vector<Token> tokens;
  std::vector<support::Diagnostic> errors;
};

// Splits a whole file into tokens. A character that cannot start a token is skipped, an
// unterminated string ends at the end of its line and a malformed number keeps its digits:
// each is an error in `errors`, and the tokens go on to the end of the file (the parser reads
// them all, so that one run reports every error of the file).
// Comments are dropped; consecutive newlines collapse into one. Kranc's parameter blocks write
// free text after `description:` up to the next `default:` (possibly over several lines): when
// `description` starts a line and `:` follows, that text is one String token (trimmed).
Tokens tokenize_all(const std::shared_ptr<const SourceFile>& file);
// The same, throwing EdlError with every lexical error when there is any.
std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file);

} // namespace saguaro::edl
