// Cactus param.ccl: access sections and parameter declarations.
//
//   private:
//   INT fd_order[3] "description" AS alias STEERABLE=always
//   {
//     2:8:2 :: "even orders"
//   } 4
//   shares: IO
//   USES STRING out_dir
//   EXTENDS KEYWORD method { "new" :: "..." }
//
// Keywords of the language (types, sections, USES, EXTENDS, STEERABLE, ...) are
// case-insensitive, as in Cactus.
//
// This is the language's syntax: ranges and defaults are kept as written (with their places),
// for the parameter subsystem (param/) to give them their values and check them, through the
// hooks it passes in, at the moment this reader meets them, and for the EDL stage to read an
// inherited thorn's parameters.
#include "ccl/param_ccl.hpp"

#include "ccl/literals.hpp"
#include "support/cursor.hpp"
#include "support/text.hpp"

#include <cctype>

#include <fmt/format.h>

namespace saguaro::ccl {

using support::InputError;
using support::SourceFile;
using support::SourceLoc;

namespace {

enum class Tok { Word, String, DoubleColon, LBrace, RBrace, Equals, Newline, End };

struct Token {
  Tok kind;
  std::string text; // Word: as written; String: without the quotes
  int line = 0, column = 0, length = 0;
  bool is(Tok k) const { return kind == k; }
  bool is_word(std::string_view word) const {
    return kind == Tok::Word && support::iequals(text, word);
  }
};

// Words are runs of anything but blanks, quotes, braces, '=', '#' and '::', so that ranges
// such as `(0:1]`, `-1:*` and `1.0d-3` stay in one piece.
class Lexer {
public:
  explicit Lexer(const std::shared_ptr<const SourceFile>& file) : c_(file) {}

  std::vector<Token> run() {
    while (!c_.at_end()) {
      char c = c_.peek();
      const support::Position start = c_.position();
      if (c == '\n') {
        c_.advance();
        if (!tokens_.empty() && !tokens_.back().is(Tok::Newline)) push(Tok::Newline, "\n", start);
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        c_.advance();
      } else if (c == '#') {
        c_.skip_to_end_of_line();
      } else if (c == '"') {
        c_.advance();
        const support::Position inside = c_.position();
        c_.advance_while([](char d) { return d != '"'; });
        std::string value(c_.since(inside));
        if (c_.at_end()) {
          std::size_t eol = c_.text().find('\n', start.offset);
          int length = int((eol == std::string::npos ? c_.text().size() : eol) - start.offset);
          throw InputError(c_.at(start, std::max(1, length)),
                           "unterminated string: expected a closing '\"'");
        }
        c_.advance();
        int length = value.find('\n') == std::string::npos ? int(c_.offset() - start.offset) : 1;
        push(Tok::String, std::move(value), start, length);
      } else if (c == ':' && c_.peek(1) == ':') {
        c_.advance(2);
        push(Tok::DoubleColon, "::", start, 2);
      } else if (c == '{' || c == '}' || c == '=') {
        c_.advance();
        push(c == '{'   ? Tok::LBrace
             : c == '}' ? Tok::RBrace
                        : Tok::Equals,
             std::string(1, c), start);
      } else {
        while (!c_.at_end()) {
          char d = c_.peek();
          if (std::isspace(static_cast<unsigned char>(d)) || d == '"' || d == '{' || d == '}' ||
              d == '=' || d == '#' || (d == ':' && c_.peek(1) == ':'))
            break;
          c_.advance();
        }
        push(Tok::Word, std::string(c_.since(start)), start, int(c_.offset() - start.offset));
      }
    }
    if (!tokens_.empty() && !tokens_.back().is(Tok::Newline))
      push(Tok::Newline, "\n", c_.position());
    push(Tok::End, "", c_.position());
    return std::move(tokens_);
  }

private:
  void push(Tok kind, std::string text, const support::Position& at, int length = 1) {
    tokens_.push_back({kind, std::move(text), at.line, at.column, length});
  }

  support::Cursor c_;
  std::vector<Token> tokens_;
};

std::optional<ParamType> type_of(std::string_view word) {
  std::string w = support::lower(word);
  if (w.rfind("cctk_", 0) == 0) w = w.substr(5);
  if (w == "int") return ParamType::Int;
  if (w == "real") return ParamType::Real;
  if (w == "keyword") return ParamType::Keyword;
  if (w == "string") return ParamType::String;
  if (w == "boolean") return ParamType::Boolean;
  return std::nullopt;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

class Parser {
public:
  Parser(const std::shared_ptr<const SourceFile>& file, const ParamCclHooks& hooks)
      : file_(file), hooks_(hooks), tokens_(Lexer(file).run()) {}

  std::vector<ParamDecl> run() {
    for (;;) {
      skip_newlines();
      const Token& t = peek();
      if (t.is(Tok::End)) break;
      if (t.kind != Tok::Word) throw error(t, fmt::format("unexpected {}: {}", show(t), expected));
      if (section()) continue;
      if (t.is_word("USES")) {
        uses();
        continue;
      }
      if (t.is_word("EXTENDS")) {
        extends();
        continue;
      }
      if (type_of(t.text)) {
        declaration();
        continue;
      }
      throw error(t, fmt::format("unexpected {}: {}", show(t), expected));
    }
    return std::move(decls_);
  }

private:
  static constexpr const char* expected =
      "expected a declaration (INT, REAL, KEYWORD, STRING, BOOLEAN), an access section "
      "(global:, restricted:, private:, shares: THORN), USES or EXTENDS";

  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column, t.length}; }
  InputError error(const Token& t, const std::string& message) const {
    return InputError(loc(t), message);
  }
  static std::string show(const Token& t) {
    switch (t.kind) {
    case Tok::Word: return fmt::format("'{}'", t.text);
    case Tok::String: return fmt::format("string \"{}\"", t.text);
    case Tok::DoubleColon: return "'::'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::Equals: return "'='";
    case Tok::Newline: return "end of line";
    case Tok::End: return "end of file";
    }
    return "?";
  }
  void skip_newlines() {
    while (peek().is(Tok::Newline)) next();
  }
  void end_of_line(const char* after) {
    const Token& t = peek();
    if (t.is(Tok::Newline) || t.is(Tok::End)) {
      next();
      return;
    }
    throw error(
        t, fmt::format("unexpected {} after {}: expected the end of the line", show(t), after));
  }

  // `global:`, `restricted:`, `private:`, `shares: THORN` (also `shares:THORN`, `private :`).
  bool section() {
    const Token& t = peek();
    std::string word = support::lower(t.text);
    std::size_t colon = word.find(':');
    std::string head = word.substr(0, colon);
    if (head != "global" && head != "restricted" && head != "private" && head != "shares")
      return false;
    std::string rest = colon == std::string::npos ? "" : t.text.substr(colon + 1);
    if (colon == std::string::npos) {
      if (!(peek(1).kind == Tok::Word && peek(1).text.rfind(':', 0) == 0)) return false;
      next();
      rest = peek().text.substr(1);
    }
    const Token& last = next();
    if (head == "shares") {
      if (rest.empty()) {
        const Token& name = peek();
        if (name.kind != Tok::Word || !is_identifier(name.text))
          throw error(name, fmt::format("unexpected {}: expected the name of the thorn or "
                                        "implementation after 'shares:'",
                                        show(name)));
        next();
      } else if (!is_identifier(rest)) {
        throw error(last, fmt::format("'{}' is not a thorn name", rest));
      }
      access_ = ParamAccess::Shares;
      end_of_line("'shares: THORN'");
      return true;
    }
    if (!rest.empty())
      throw error(last, fmt::format("unexpected '{}' after '{}:': expected the end of the line",
                                    rest, head));
    access_ = head == "global"       ? ParamAccess::Global
              : head == "restricted" ? ParamAccess::Restricted
                                     : ParamAccess::Private;
    end_of_line(("'" + head + ":'").c_str());
    return true;
  }

  // `USES [TYPE] name [AS alias]`, optionally with a range block (accepted and ignored).
  void uses() {
    next();
    if (peek().kind == Tok::Word && type_of(peek().text)) next();
    const Token& name = peek();
    if (name.kind != Tok::Word || !is_identifier(name.text))
      throw error(name, fmt::format("unexpected {}: expected the name of a parameter after USES",
                                    show(name)));
    next();
    alias();
    if (block_follows()) {
      std::vector<ParamRange> ignored;
      range_block(ParamType::Keyword, ignored);
      optional_default_line();
    } else {
      end_of_line("the USES line");
    }
  }

  // `EXTENDS TYPE name ["description"] { ranges } [default]`: accepted, not honoured.
  void extends() {
    next();
    const Token& type_token = peek();
    std::optional<ParamType> type =
        type_token.kind == Tok::Word ? type_of(type_token.text) : std::nullopt;
    if (!type)
      throw error(type_token, fmt::format("unexpected {}: expected a type (KEYWORD, INT, ...) "
                                          "after EXTENDS",
                                          show(type_token)));
    next();
    const Token& name = peek();
    if (name.kind != Tok::Word || !is_identifier(name.text))
      throw error(name, fmt::format("unexpected {}: expected the name of the extended parameter",
                                    show(name)));
    next();
    if (peek().is(Tok::String)) next();
    alias();
    if (!block_follows())
      throw error(peek(),
                  fmt::format("unexpected {}: expected '{{' and the added ranges", show(peek())));
    std::vector<ParamRange> ignored;
    range_block(*type, ignored);
    optional_default_line();
  }

  void alias() {
    if (peek().is_word("AS")) {
      next();
      if (peek().kind != Tok::Word || !is_identifier(peek().text))
        throw error(peek(),
                    fmt::format("unexpected {}: expected an alias name after AS", show(peek())));
      next();
    }
  }

  bool block_follows() const {
    std::size_t i = 0;
    while (peek(i).is(Tok::Newline)) ++i;
    return peek(i).is(Tok::LBrace);
  }

  void optional_default_line() {
    if (peek().is(Tok::String) || peek().kind == Tok::Word) next();
    end_of_line("the range block");
  }

  // `{ range :: "description" ... }`; the closing brace is consumed.
  void range_block(ParamType type, std::vector<ParamRange>& block) {
    skip_newlines();
    const Token& open = peek();
    if (!open.is(Tok::LBrace))
      throw error(open,
                  fmt::format("unexpected {}: expected '{{' and the allowed ranges", show(open)));
    next();
    for (;;) {
      skip_newlines();
      const Token& first = peek();
      if (first.is(Tok::RBrace)) {
        next();
        return;
      }
      if (first.is(Tok::End))
        throw error(open, "this '{' is not closed: expected '}' after the ranges");
      std::vector<const Token*> parts;
      while (peek().kind == Tok::Word || peek().is(Tok::String)) parts.push_back(&next());
      if (parts.empty())
        throw error(peek(), fmt::format("unexpected {}: expected a range, as in '0:*' or "
                                        "\"word\", then ':: \"description\"'",
                                        show(peek())));
      std::string description;
      if (peek().is(Tok::DoubleColon)) {
        next();
        if (peek().is(Tok::String)) {
          description = next().text;
        } else {
          while (peek().kind == Tok::Word) {
            if (!description.empty()) description += ' ';
            description += next().text;
          }
        }
      }
      const Token& after = peek();
      if (!after.is(Tok::Newline) && !after.is(Tok::RBrace) && !after.is(Tok::End))
        throw error(after, fmt::format("unexpected {} after the range: expected a new line or "
                                       "'}}'",
                                       show(after)));
      add_items(type, parts, description, block);
    }
  }

  // A range line's items: one per word or string (KEYWORD, STRING), one of all its parts
  // (INT, REAL: `( 0 : 1 ]` is one range); each passed to the range hook as it is read.
  void add_items(ParamType type, const std::vector<const Token*>& parts,
                 const std::string& description, std::vector<ParamRange>& block) {
    if (type == ParamType::Boolean) return; // Cactus ignores a BOOLEAN's range
    if (type == ParamType::Keyword || type == ParamType::String) {
      for (const Token* t : parts) {
        block.push_back({t->text, description, loc(*t)});
        if (hooks_.range) hooks_.range(type, block.back());
      }
      return;
    }
    ParamRange item;
    for (const Token* t : parts) item.text += t->text;
    item.description = description;
    item.loc = loc(*parts.front());
    if (parts.back()->line == parts.front()->line)
      item.loc.length = parts.back()->column + parts.back()->length - parts.front()->column;
    block.push_back(std::move(item));
    if (hooks_.range) hooks_.range(type, block.back());
  }

  void declaration() {
    const Token& type_token = next();
    ParamDecl decl;
    decl.type = *type_of(type_token.text);
    // A declaration after `shares:` (where Cactus expects only USES and EXTENDS) is the thorn's
    // own.
    decl.access = access_ == ParamAccess::Shares ? ParamAccess::Private : access_;
    const Token& name = peek();
    if (name.kind != Tok::Word)
      throw error(name, fmt::format("unexpected {}: expected the parameter's name after {}",
                                    show(name), to_string(decl.type)));
    next();
    std::string name_text = name.text;
    int bracket_column = 0;
    std::size_t bracket = name_text.find('[');
    std::string size_text;
    const Token* size_token = &name;
    if (bracket != std::string::npos) {
      size_text = name_text.substr(bracket);
      bracket_column = name.column + int(bracket);
      name_text = name_text.substr(0, bracket);
    } else if (peek().kind == Tok::Word && peek().text.rfind('[', 0) == 0) {
      size_token = &next();
      size_text = size_token->text;
      bracket_column = size_token->column;
    }
    if (!is_identifier(name_text))
      throw InputError(SourceLoc{file_, name.line, name.column, int(name_text.size())},
                       fmt::format("'{}' is not a parameter name: expected letters, digits and "
                                   "'_', starting with a letter",
                                   name_text));
    decl.name = name_text;
    decl.loc = SourceLoc{file_, name.line, name.column, int(name_text.size())};
    if (!size_text.empty()) {
      SourceLoc where{file_, size_token->line, bracket_column, int(size_text.size())};
      std::optional<long> size;
      if (size_text.size() >= 3 && size_text.back() == ']')
        size = parse_int(size_text.substr(1, size_text.size() - 2));
      if (!size || *size <= 0 || size_text.find_first_of(".eEdD") != std::string::npos)
        throw InputError(where, fmt::format("invalid array size '{}': expected a positive integer "
                                            "in brackets, as in '[3]'",
                                            size_text));
      decl.array_size = static_cast<int>(*size);
    }
    const Token& description = peek();
    if (!description.is(Tok::String))
      throw error(description, fmt::format("unexpected {}: expected the description of {} in "
                                           "double quotes",
                                           show(description), decl.name));
    decl.description = next().text;
    // Attributes: AS alias, STEERABLE=..., ACCUMULATOR=..., ACCUMULATOR-BASE=...
    for (;;) {
      const Token& t = peek();
      if (t.is_word("AS")) {
        alias();
      } else if (t.is_word("STEERABLE")) {
        next();
        expect_equals("STEERABLE");
        const Token& v = peek();
        std::string value = support::lower(v.text);
        if (v.kind != Tok::Word || (value != "never" && value != "always" && value != "recover"))
          throw error(
              v, fmt::format("unexpected {}: STEERABLE takes never, always or recover", show(v)));
        next();
        decl.steerable = value;
      } else if (t.is_word("ACCUMULATOR") || t.is_word("ACCUMULATOR-BASE") ||
                 t.is_word("ACCUMULATOR_BASE")) {
        next();
        expect_equals(t.text.c_str());
        const Token& v = peek();
        if (v.kind != Tok::Word && v.kind != Tok::String)
          throw error(v, fmt::format("unexpected {}: expected a value after '='", show(v)));
        next();
      } else {
        break;
      }
    }
    if (!block_follows()) {
      const Token& t = peek();
      throw error(t, fmt::format("unexpected {}: expected '{{' and the allowed ranges of {} "
                                 "(attributes are AS, STEERABLE, ACCUMULATOR)",
                                 show(t), decl.name));
    }
    range_block(decl.type, decl.ranges);
    const Token& closing = tokens_[pos_ - 1];
    const Token& value = peek();
    if (!(value.kind == Tok::Word || value.is(Tok::String)) || value.line != closing.line)
      throw error(value, fmt::format("unexpected {}: expected the default value of {} after "
                                     "'}}'",
                                     show(value), decl.name));
    next();
    decl.default_text = value.text;
    decl.default_loc = loc(value);
    if (hooks_.declared) hooks_.declared(decl);
    end_of_line("the default value");
    decls_.push_back(std::move(decl));
  }

  void expect_equals(const char* attribute) {
    if (!peek().is(Tok::Equals))
      throw error(peek(),
                  fmt::format("unexpected {}: expected '=' after {}", show(peek()), attribute));
    next();
  }

  std::shared_ptr<const SourceFile> file_;
  const ParamCclHooks& hooks_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  ParamAccess access_ = ParamAccess::Private;
  std::vector<ParamDecl> decls_;
};

} // namespace

const char* to_string(ParamType type) {
  switch (type) {
  case ParamType::Int: return "INT";
  case ParamType::Real: return "REAL";
  case ParamType::Keyword: return "KEYWORD";
  case ParamType::Boolean: return "BOOLEAN";
  case ParamType::String: return "STRING";
  }
  return "?";
}

std::vector<ParamDecl> read_param_ccl(const std::shared_ptr<const SourceFile>& source,
                                      const ParamCclHooks& hooks) {
  return Parser(source, hooks).run();
}

} // namespace saguaro::ccl
