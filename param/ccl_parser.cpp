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
#include "param/detail.hpp"

#include "support/cursor.hpp"

#include <cctype>

#include <fmt/format.h>

namespace saguaro::param {

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

std::optional<Type> type_of(std::string_view word) {
  std::string w = support::lower(word);
  if (w.rfind("cctk_", 0) == 0) w = w.substr(5);
  if (w == "int") return Type::Int;
  if (w == "real") return Type::Real;
  if (w == "keyword") return Type::Keyword;
  if (w == "string") return Type::String;
  if (w == "boolean") return Type::Boolean;
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
  Parser(const std::shared_ptr<const SourceFile>& file, std::string thorn)
      : file_(file), thorn_(std::move(thorn)), tokens_(Lexer(file).run()) {}

  std::vector<Declaration> run() {
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
      access_ = Access::Shares;
      end_of_line("'shares: THORN'");
      return true;
    }
    if (!rest.empty())
      throw error(last, fmt::format("unexpected '{}' after '{}:': expected the end of the line",
                                    rest, head));
    access_ = head == "global"       ? Access::Global
              : head == "restricted" ? Access::Restricted
                                     : Access::Private;
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
      RangeBlock ignored;
      range_block(Type::Keyword, ignored);
      optional_default_line();
    } else {
      end_of_line("the USES line");
    }
  }

  // `EXTENDS TYPE name ["description"] { ranges } [default]`: accepted, not honoured.
  void extends() {
    next();
    const Token& type_token = peek();
    std::optional<Type> type =
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
    RangeBlock ignored;
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

  struct RangeBlock {
    std::vector<RangeItem> items;
  };

  // `{ range :: "description" ... }`; the closing brace is consumed.
  void range_block(Type type, RangeBlock& block) {
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

  void add_items(Type type, const std::vector<const Token*>& parts, const std::string& description,
                 RangeBlock& block) {
    if (type == Type::Boolean) return; // Cactus ignores a BOOLEAN's range
    if (type == Type::Keyword || type == Type::String) {
      for (const Token* t : parts) {
        RangeItem item;
        item.text = t->text;
        item.description = description;
        if (type == Type::String) {
          if (const std::string why = detail::pattern_error(item.text); !why.empty())
            throw error(*t,
                        fmt::format("'{}' is not a valid regular expression: {}", item.text, why));
        }
        block.items.push_back(std::move(item));
      }
      return;
    }
    RangeItem item;
    for (const Token* t : parts) item.text += t->text;
    item.description = description;
    std::string problem = detail::parse_numeric_range(item.text, type, item);
    if (!problem.empty()) {
      SourceLoc where = loc(*parts.front());
      if (parts.back()->line == parts.front()->line)
        where.length = parts.back()->column + parts.back()->length - parts.front()->column;
      throw InputError(where, "invalid range " + problem,
                       {{{},
                         "ranges are written 'lo:hi' or 'lo:hi:step' with '*' for no bound, "
                         "'(' or ')' for an open end, '[' or ']' for a closed one"}});
    }
    block.items.push_back(std::move(item));
  }

  Value parse_default(const Token& t, const Declaration& decl) {
    const std::string& text = t.text;
    switch (decl.type) {
    case Type::Int: {
      bool not_integral = false, too_large = false;
      std::optional<long> v = detail::parse_int(detail::trim(text), &not_integral, &too_large);
      if (!v)
        throw error(t,
                    fmt::format("the default '{}' of INT {} is not an integer", text, decl.name));
      return *v;
    }
    case Type::Real: {
      std::optional<double> v = detail::parse_real(detail::trim(text));
      if (!v)
        throw error(t, fmt::format("the default '{}' of REAL {} is not a number", text, decl.name));
      return *v;
    }
    case Type::Boolean: {
      std::optional<bool> v = detail::parse_bool(text);
      if (!v)
        throw error(t, fmt::format("the default '{}' of BOOLEAN {} is not a boolean: expected "
                                   "yes, no, true, false, 1 or 0",
                                   text, decl.name));
      return *v;
    }
    case Type::Keyword: {
      for (const RangeItem& r : decl.ranges)
        if (support::iequals(r.text, text)) return r.text;
      if (!decl.ranges.empty())
        throw error(t, fmt::format("the default \"{}\" of KEYWORD {} is not one of its keywords",
                                   text, decl.name));
      return text;
    }
    case Type::String: return text;
    }
    return text;
  }

  void declaration() {
    const Token& type_token = next();
    Declaration decl;
    decl.thorn = thorn_;
    decl.type = *type_of(type_token.text);
    decl.access = access_ == Access::Shares ? Access::Private : access_;
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
        size = detail::parse_int(size_text.substr(1, size_text.size() - 2));
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
    RangeBlock block;
    range_block(decl.type, block);
    decl.ranges = std::move(block.items);
    const Token& closing = tokens_[pos_ - 1];
    const Token& value = peek();
    if (!(value.kind == Tok::Word || value.is(Tok::String)) || value.line != closing.line)
      throw error(value, fmt::format("unexpected {}: expected the default value of {} after "
                                     "'}}'",
                                     show(value), decl.name));
    next();
    decl.default_value = parse_default(value, decl);
    if (!detail::value_allowed(decl, decl.default_value))
      throw InputError(loc(value),
                       fmt::format("the default {} of {} is outside its range",
                                   detail::format_value(decl.default_value, true), decl.name),
                       {{{}, "allowed: " + detail::format_ranges(decl)}});
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
  std::string thorn_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  Access access_ = Access::Private;
  std::vector<Declaration> decls_;
};

} // namespace

std::vector<Declaration> parse_param_ccl(const std::shared_ptr<const SourceFile>& source,
                                         const std::string& thorn) {
  return Parser(source, thorn).run();
}

} // namespace saguaro::param
