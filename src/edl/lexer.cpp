#include "edl/lexer.hpp"

#include "support/cursor.hpp"

#include <cctype>

#include <fmt/format.h>

namespace saguaro::edl {

const char* describe(TokenKind kind) {
  switch (kind) {
  case TokenKind::Name: return "a name";
  case TokenKind::Number: return "a number";
  case TokenKind::String: return "a string";
  case TokenKind::Newline: return "end of line";
  case TokenKind::Equals: return "'='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::Power: return "'**'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::Comma: return "','";
  case TokenKind::Underscore: return "'_'";
  case TokenKind::Caret: return "'^'";
  case TokenKind::Colon: return "':'";
  case TokenKind::Prime: return "'''";
  case TokenKind::Question: return "'?'";
  case TokenKind::End: return "end of file";
  }
  return "?";
}

namespace {

class Lexer {
public:
  explicit Lexer(const std::shared_ptr<const SourceFile>& file) : c_(file) {}

  Tokens run() {
    bool space = false;
    while (!c_.at_end()) {
      if (c_.skip_blanks()) {
        space = true;
        continue;
      }
      char c = c_.peek();
      if (c == '#') {
        c_.skip_to_end_of_line();
        continue;
      }
      const support::Position start = c_.position();
      if (c == '\n') {
        c_.advance();
        if (!tokens_.empty() && !tokens_.back().is(TokenKind::Newline))
          push(TokenKind::Newline, "\n", start, 1, space);
        space = false;
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c))) {
        const bool line_start = tokens_.empty() || tokens_.back().is(TokenKind::Newline);
        c_.advance_while([](char d) { return std::isalnum(static_cast<unsigned char>(d)) != 0; });
        push_since(TokenKind::Name, start, space);
        if (line_start && tokens_.back().text == "description") lex_description();
      } else if (c == '@') {
        fail(c_.loc(1), "unexpected character '@': raw Mathematica ('@{...}') is not "
                        "supported; write the expression in the script's own syntax");
        c_.advance();
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(start, space);
      } else if (c == '"') {
        lex_string(start, space);
      } else if (c == '*' && c_.peek(1) == '*') {
        c_.advance(2);
        push_since(TokenKind::Power, start, space);
      } else {
        TokenKind kind;
        switch (c) {
        case '=': kind = TokenKind::Equals; break;
        case '+': kind = TokenKind::Plus; break;
        case '-': kind = TokenKind::Minus; break;
        case '*': kind = TokenKind::Star; break;
        case '/': kind = TokenKind::Slash; break;
        case '%': kind = TokenKind::Percent; break;
        case '(': kind = TokenKind::LParen; break;
        case ')': kind = TokenKind::RParen; break;
        case ',': kind = TokenKind::Comma; break;
        case '_': kind = TokenKind::Underscore; break;
        case '^': kind = TokenKind::Caret; break;
        case ':': kind = TokenKind::Colon; break;
        case '\'': kind = TokenKind::Prime; break;
        case '?': kind = TokenKind::Question; break;
        default: {
          std::string shown = describe_character(c);
          fail(c_.loc(1), fmt::format("unexpected character {}; expected a name, number, "
                                      "operator or comment",
                                      shown));
          c_.advance(); // skipped: the parser reads on
          continue;
        }
        }
        c_.advance();
        push_since(kind, start, space);
      }
      space = false;
    }
    if (!tokens_.empty() && !tokens_.back().is(TokenKind::Newline))
      push(TokenKind::Newline, "\n", c_.position(), 1, false);
    push(TokenKind::End, "", c_.position(), 1, false);
    return {std::move(tokens_), std::move(errors_)};
  }

private:
  // An error is recorded and lexing goes on past the culprit. Only the first of a line is: the
  // rest of a mangled line (a pasted `@{...}`, UTF-8 bytes) would only repeat it.
  void fail(const SourceLoc& at, std::string message) {
    if (!errors_.empty() && errors_.back().loc.line == at.line) return;
    errors_.push_back(support::Diagnostic{"error", at, std::move(message), {}});
  }

  void push(TokenKind kind, std::string text, const support::Position& at, int length, bool space) {
    tokens_.push_back(Token{kind, std::move(text), at.line, at.column, length, space});
  }
  // A token of the text from `start` up to the cursor.
  void push_since(TokenKind kind, const support::Position& start, bool space) {
    const std::string_view text = c_.since(start);
    push(kind, std::string(text), start, int(text.size()), space);
  }
  bool digit_at(std::size_t ahead) const {
    return std::isdigit(static_cast<unsigned char>(c_.peek(ahead))) != 0;
  }

  // 2, 0.5, 1., 1e-3, 1.5d0 (Fortran exponent), 2.5E+2.
  void lex_number(const support::Position& start, bool space) {
    while (digit_at(0)) c_.advance();
    if (c_.peek() == '.') {
      c_.advance();
      while (digit_at(0)) c_.advance();
    }
    char e = c_.peek();
    if (e == 'e' || e == 'E' || e == 'd' || e == 'D') {
      std::size_t sign = (c_.peek(1) == '+' || c_.peek(1) == '-') ? 1 : 0;
      if (digit_at(1 + sign)) {
        c_.advance(1 + sign);
        while (digit_at(0)) c_.advance();
      } else if (sign == 1 || std::isalpha(static_cast<unsigned char>(c_.peek(1))) == 0) {
        // `1e` or `1e+` followed by no digits is a malformed exponent, not `1 e`.
        fail(c_.at(start, int(c_.offset() - start.offset) + 1 + int(sign)),
             "malformed number: expected digits after the exponent letter");
      }
    }
    push_since(TokenKind::Number, start, space);
  }

  // After `description` at the start of a line: `:` and the free text up to the next
  // `default:` (Kranc's parameter syntax), or to the end of the line when none follows.
  void lex_description() {
    while (c_.peek() == ' ' || c_.peek() == '\t') c_.advance();
    if (c_.peek() != ':') return;
    const support::Position colon = c_.position();
    c_.advance();
    push_since(TokenKind::Colon, colon, false);
    while (c_.peek() == ' ' || c_.peek() == '\t') c_.advance();
    const support::Position start = c_.position();
    const std::string& text = c_.text();
    std::size_t stop = text.find("default:", c_.offset());
    if (stop == std::string::npos) stop = std::min(text.find('\n', c_.offset()), text.size());
    c_.advance(stop - c_.offset());
    std::string value(c_.since(start));
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
      value.pop_back();
    const std::size_t first_line = std::min(value.find('\n'), value.size());
    push(TokenKind::String, value, start, int(std::max<std::size_t>(first_line, 1)), true);
    if (stop < text.size() && text[stop] != '\n')
      push(TokenKind::Newline, "\n", c_.position(), 1, false);
  }

  void lex_string(const support::Position& start, bool space) {
    c_.advance();
    const support::Position inside = c_.position();
    c_.advance_while([](char d) { return d != '"' && d != '\n'; });
    std::string value(c_.since(inside));
    if (c_.peek() != '"') { // the end of the line or of the file: the string ends there
      fail(c_.at(start, int(c_.offset() - start.offset)),
           "unterminated string: expected a closing '\"' on the same line");
      push(TokenKind::String, value, start, int(c_.offset() - start.offset), space);
      return;
    }
    c_.advance();
    push(TokenKind::String, value, start, int(c_.offset() - start.offset), space);
  }

  support::Cursor c_;
  std::vector<Token> tokens_;
  std::vector<support::Diagnostic> errors_;
};

} // namespace

Tokens tokenize_all(const std::shared_ptr<const SourceFile>& file) {
  return Lexer(file).run();
}

std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file) {
  Tokens all = tokenize_all(file);
  if (!all.errors.empty()) {
    support::DiagnosticList errors;
    for (support::Diagnostic& d : all.errors) errors.add(std::move(d));
    errors.throw_if_any();
  }
  return std::move(all.tokens);
}

} // namespace saguaro::edl
