#include "edl/lexer.hpp"

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
  case TokenKind::End: return "end of file";
  }
  return "?";
}

namespace {

class Lexer {
public:
  explicit Lexer(const std::shared_ptr<const SourceFile>& file) : file_(file), s_(file->text()) {}

  std::vector<Token> run() {
    bool space = false;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        advance();
        space = true;
        continue;
      }
      if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
        continue;
      }
      int line = line_, column = column_;
      std::size_t start = pos_;
      if (c == '\n') {
        advance();
        if (!tokens_.empty() && !tokens_.back().is(TokenKind::Newline))
          push(TokenKind::Newline, "\n", line, column, 1, space);
        space = false;
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c))) {
        while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) advance();
        push(TokenKind::Name, s_.substr(start, pos_ - start), line, column, int(pos_ - start),
             space);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(line, column, space);
      } else if (c == '"') {
        lex_string(line, column, space);
      } else if (c == '*' && peek(1) == '*') {
        advance();
        advance();
        push(TokenKind::Power, "**", line, column, 2, space);
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
        default: {
          std::string shown = describe_character(c);
          throw EdlError(SourceLoc{file_, line, column, 1},
                         fmt::format("unexpected character {}; expected a name, number, "
                                     "operator or comment",
                                     shown));
        }
        }
        advance();
        push(kind, std::string(1, c), line, column, 1, space);
      }
      space = false;
    }
    if (!tokens_.empty() && !tokens_.back().is(TokenKind::Newline))
      push(TokenKind::Newline, "\n", line_, column_, 1, false);
    push(TokenKind::End, "", line_, column_, 1, false);
    return std::move(tokens_);
  }

private:
  char peek(std::size_t ahead) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  void push(TokenKind kind, std::string text, int line, int column, int length, bool space) {
    tokens_.push_back(Token{kind, std::move(text), line, column, length, space});
  }
  bool digit_at(std::size_t ahead) const {
    return std::isdigit(static_cast<unsigned char>(peek(ahead))) != 0;
  }

  // 2, 0.5, 1., 1e-3, 1.5d0 (Fortran exponent), 2.5E+2.
  void lex_number(int line, int column, bool space) {
    std::size_t start = pos_;
    while (digit_at(0)) advance();
    if (peek(0) == '.') {
      advance();
      while (digit_at(0)) advance();
    }
    char e = peek(0);
    if (e == 'e' || e == 'E' || e == 'd' || e == 'D') {
      std::size_t sign = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
      if (digit_at(1 + sign)) {
        for (std::size_t i = 0; i < 1 + sign; ++i) advance();
        while (digit_at(0)) advance();
      } else if (sign == 1 || std::isalpha(static_cast<unsigned char>(peek(1))) == 0) {
        // `1e` or `1e+` followed by no digits is a malformed exponent, not `1 e`.
        throw EdlError(SourceLoc{file_, line, column, int(pos_ - start) + 1 + int(sign)},
                       "malformed number: expected digits after the exponent letter");
      }
    }
    push(TokenKind::Number, s_.substr(start, pos_ - start), line, column, int(pos_ - start), space);
  }

  void lex_string(int line, int column, bool space) {
    std::size_t start = pos_;
    advance();
    std::string value;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\n') break;
      value += s_[pos_];
      advance();
    }
    if (pos_ >= s_.size() || s_[pos_] != '"') {
      throw EdlError(SourceLoc{file_, line, column, int(pos_ - start)},
                     "unterminated string: expected a closing '\"' on the same line");
    }
    advance();
    push(TokenKind::String, value, line, column, int(pos_ - start), space);
  }

  std::shared_ptr<const SourceFile> file_;
  const std::string& s_;
  std::size_t pos_ = 0;
  int line_ = 1, column_ = 1;
  std::vector<Token> tokens_;
};

} // namespace

std::vector<Token> tokenize(const std::shared_ptr<const SourceFile>& file) {
  return Lexer(file).run();
}

} // namespace saguaro::edl
