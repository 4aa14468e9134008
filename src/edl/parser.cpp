#include "edl/parser.hpp"

#include "edl/inherited.hpp"
#include "edl/parser_internal.hpp"
#include "support/diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace saguaro::edl {

const char* to_string(ParameterType type) {
  switch (type) {
  case ParameterType::Real: return "real";
  case ParameterType::Int: return "int";
  case ParameterType::Keyword: return "keyword";
  case ParameterType::Boolean: return "boolean";
  }
  return "?";
}

const std::vector<std::string>& known_features() {
  static const std::vector<std::string> features = {"loopcontrol", "vectors", "opencl",
                                                    "jacobian",    "cse",     "cakernel"};
  return features;
}

const std::vector<std::pair<std::string, int>>& known_functions() {
  static const std::vector<std::pair<std::string, int>> functions = {
      {"sin", 1},  {"cos", 1},  {"tan", 1},  {"asin", 1}, {"acos", 1}, {"atan", 1}, {"atan2", 2},
      {"sinh", 1}, {"cosh", 1}, {"tanh", 1}, {"exp", 1},  {"log", 1},  {"sqrt", 1}, {"abs", 1},
      {"pow", 2},  {"min", 2},  {"max", 2},  {"sign", 1}, {"if", 3}};
  return functions;
}

bool is_function_name(const std::string& name) {
  for (const auto& [f, arity] : known_functions())
    if (f == name) return true;
  return false;
}

bool looks_like_operator(const std::string& name) {
  if (name.empty() || name[0] != 'D') return false;
  for (std::size_t i = 1; i < name.size(); ++i)
    if (!std::islower(static_cast<unsigned char>(name[i])) &&
        !std::isdigit(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

Parser::Parser(std::shared_ptr<const SourceFile> file) : file_(std::move(file)) {
  Tokens lexed = tokenize_all(file_);
  tokens_ = std::move(lexed.tokens);
  lexer_errors_ = std::move(lexed.errors);
  for (const support::Diagnostic& d : lexer_errors_) lexer_error_lines_.insert(d.loc.line);
  collect_operator_names();
  collect_inherited_names();
}

// Every error of the file is collected (support::DiagnosticList: the first 50 in file order);
// after one the parser resynchronises at the next line, or at the `begin`/`end` line of a
// section, and reads on. Declarations and equations are line-based, so one bad line costs no
// more than itself.
Thorn Parser::parse() {
  skip_newlines();
  Thorn thorn;
  thorn.file = file_;
  thorn.loc = loc(peek());
  const bool begins = peek().is_name("begin");
  attempt(pos_, [&] {
    expect_word("begin", "'begin thorn NAME' to start the file");
    expect_word("thorn", "'thorn' after 'begin'");
    thorn.name = parse_uname("a thorn name");
    end_of_line();
  });
  // A file that does not start with `begin` is not EDL: its first error says so, and the rest
  // of it is not worth reading as EDL.
  if (begins) parse_thorn_items(thorn);
  // The lexer's and the parser's errors, merged in file order.
  std::vector<support::Diagnostic> all = std::move(lexer_errors_);
  all.insert(all.end(), errors_.begin(), errors_.end());
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::pair(a.loc.line, a.loc.column) < std::pair(b.loc.line, b.loc.column);
  });
  support::DiagnosticList list;
  for (support::Diagnostic& d : all) list.add(std::move(d));
  list.throw_if_any();
  return thorn;
}

void Parser::parse_thorn_items(Thorn& thorn) {
  while (true) {
    skip_newlines();
    const Token& t = peek();
    if (t.is(TokenKind::End)) {
      if (!reported_at(t)) record(error(t, "unexpected end of file: expected 'end thorn'"));
      return;
    }
    const std::size_t before = pos_;
    try {
      if (t.is_name("end") && peek(1).is_name("thorn")) {
        next();
        next();
        end_of_line();
        skip_newlines();
        if (!peek().is(TokenKind::End))
          record(error(peek(), "unexpected text after 'end thorn': expected end of file"));
        return;
      }
      if (t.is_name("end")) {
        // A wrong `end` line: an error, and the thorn's end when nothing but blanks follows.
        next();
        record(error(peek(), fmt::format("expected 'thorn' to close 'begin thorn {}', found {}",
                                         thorn.name, show(peek()))));
        skip_line();
        skip_newlines();
        if (peek().is(TokenKind::End)) return;
      } else if (t.is_name("begin")) {
        parse_section(thorn);
      } else if (t.is_name("inherit") || t.is_name("implement") || t.is_name("use") ||
                 t.is_name("disable")) {
        parse_option(thorn);
      } else {
        throw error(t, fmt::format("unexpected {} in thorn: expected 'begin SECTION', an option "
                                   "(inherit, implement, use, disable) or 'end thorn'",
                                   show(t)));
      }
    } catch (const EdlError& e) {
      record(e);
      recover(before);
    }
  }
}

// ---- error recovery -------------------------------------------------------------------------
void Parser::record(const EdlError& e) {
  for (const support::Diagnostic& d : e.diagnostics())
    if (!d.loc.valid() || !lexer_error_lines_.count(d.loc.line)) errors_.push_back(d);
}

bool Parser::reported_at(const Token& t) const {
  return !errors_.empty() && errors_.back().loc.line == t.line &&
         errors_.back().loc.column == t.column;
}

void Parser::recover(std::size_t before) {
  open_parens_.clear();
  stop_at_to_ = in_definition_ = in_algebra_ = false;
  if (!at_section_keyword()) skip_line();
  if (pos_ == before && !peek().is(TokenKind::End)) next();
}

void Parser::skip_line() {
  while (!peek().is(TokenKind::Newline) && !peek().is(TokenKind::End)) next();
  if (peek().is(TokenKind::Newline)) next();
}

void Parser::skip_unknown_section() {
  skip_line();
  while (true) {
    skip_newlines();
    if (peek().is(TokenKind::End) || peek().is_name("begin")) return;
    const bool closes = peek().is_name("end");
    skip_line();
    if (closes) return;
  }
}

void Parser::close_section(const std::string& word) {
  // `end thorn` with the section still open: the section ends there and the thorn with it.
  if (peek(1).is_name("thorn")) {
    record(error(peek(), fmt::format("expected 'end {}' before 'end thorn'", word)));
    return;
  }
  attempt(pos_, [&] {
    next(); // end
    expect_word(word, fmt::format("'end {}'", word));
    end_of_line();
  });
}

// ---- token access ---------------------------------------------------------------------------
std::string Parser::show(const Token& t) {
  switch (t.kind) {
  case TokenKind::Name: return fmt::format("'{}'", t.text);
  case TokenKind::Number: return fmt::format("number '{}'", t.text);
  case TokenKind::String: return fmt::format("string \"{}\"", t.text);
  default: return describe(t.kind);
  }
}
EdlError Parser::error(const Token& t, const std::string& message) const {
  // Inside parentheses that a later line has not closed, the unclosed '(' is the likely
  // culprit: say where it is.
  if (!open_parens_.empty() && open_parens_.back().line < t.line)
    return EdlError(loc(t), message,
                    {{loc(open_parens_.back()), "the '(' opened here is not "
                                                "closed"}});
  return EdlError(loc(t), message);
}
void Parser::end_of_line() {
  const Token& t = peek();
  if (t.is(TokenKind::Newline)) {
    next();
    return;
  }
  if (t.is(TokenKind::End)) return;
  throw error(t, fmt::format("unexpected {}: expected end of line", show(t)));
}
void Parser::expect_word(std::string_view word, const std::string& what) {
  const Token& t = peek();
  if (!t.is_name(word)) throw error(t, fmt::format("expected {}, found {}", what, show(t)));
  next();
}
const Token& Parser::expect(TokenKind kind, const std::string& what) {
  const Token& t = peek();
  if (!t.is(kind)) throw error(t, fmt::format("expected {}, found {}", what, show(t)));
  return next();
}
// Thorn, group and calculation names may hold `_`: glue adjacent tokens back together.
std::string Parser::parse_uname(const std::string& what) {
  const Token& first = peek();
  if (!first.is(TokenKind::Name))
    throw error(first, fmt::format("expected {}, found {}", what, show(first)));
  std::string name = next().text;
  while ((peek().is(TokenKind::Underscore) || peek().is(TokenKind::Name) ||
          peek().is(TokenKind::Number)) &&
         !peek().space_before) {
    if (peek().is(TokenKind::Number) &&
        peek().text.find_first_not_of("0123456789") != std::string::npos)
      break;
    name += next().text;
  }
  return name;
}

// Operators declared in derivatives blocks may be used before the block: collect their names
// first (the first name on each line of a `begin derivatives` block).
void Parser::collect_operator_names() {
  for (std::string_view name : kBuiltinOperators) operators_.emplace(name);
  bool in_block = false, line_start = true;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const Token& t = tokens_[i];
    if (t.is(TokenKind::Newline)) {
      line_start = true;
      continue;
    }
    if (line_start && t.is_name("begin") && i + 1 < tokens_.size() &&
        tokens_[i + 1].is_name("derivatives"))
      in_block = true;
    else if (line_start && t.is_name("end"))
      in_block = false;
    else if (in_block && line_start && t.is(TokenKind::Name))
      operators_.insert(t.text);
    line_start = false;
  }
}

// The variables of inherited thorns whose names hold `_` (`w_lorentz`): `_` otherwise starts
// indices, so the parser glues them back together where it meets them.
void Parser::collect_inherited_names() {
  for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
    if (!tokens_[i].is_name("inherit") || (i > 0 && !tokens_[i - 1].is(TokenKind::Newline)))
      continue;
    for (std::size_t k = i + 1; k < tokens_.size() && tokens_[k].is(TokenKind::Name); ++k) {
      const InheritedThorn* thorn = find_inherited_thorn(tokens_[k].text);
      std::optional<InheritedThorn> read;
      if (thorn == nullptr) {
        try { // a thorn's own interface.ccl; lowering reports where it is missing or wrong
          read = find_ccl_thorn(file_->name(), tokens_[k].text);
        } catch (const support::InputError&) {
        }
        if (read) thorn = &*read;
      }
      if (thorn != nullptr)
        for (const InheritedVariable& v : thorn->variables)
          if (v.name.find('_') != std::string::npos) inherited_names_.insert(v.name);
    }
  }
}

std::string Parser::parse_name(const Token& first) {
  std::string name = first.text;
  if (inherited_names_.empty()) return name;
  // The longest run `a_b_c` (no spaces) that is an inherited name.
  std::size_t ahead = 0, best = 0;
  std::string glued = name, best_name = name;
  while (peek(ahead).is(TokenKind::Underscore) && !peek(ahead).space_before &&
         peek(ahead + 1).is(TokenKind::Name) && !peek(ahead + 1).space_before) {
    glued += "_" + peek(ahead + 1).text;
    ahead += 2;
    if (inherited_names_.count(glued)) {
      best = ahead;
      best_name = glued;
    }
  }
  for (std::size_t k = 0; k < best; ++k) next();
  return best_name;
}

// ---- indices --------------------------------------------------------------------------------
void Parser::add_index(std::vector<Index>& indices, Index index) {
  if (indices.size() == kMaxRank)
    throw EdlError(index.loc, fmt::format("more than {} indices: a tensor of rank {} has 3^{} "
                                          "components, more than any system needs (at most {})",
                                          kMaxRank, kMaxRank + 1, kMaxRank + 1, kMaxRank));
  indices.push_back(std::move(index));
}

// `(i+1)` or `(i+1,j-1)` after `_`: shifted index letters, in derivative definitions only.
void Parser::parse_shifted_group(std::vector<Index>& indices, bool upper) {
  const Token& open = peek();
  if (!in_definition_)
    throw error(open, "shifted indices like 'u_(i+1)' are only allowed in a derivatives block");
  next();
  while (true) {
    const Token& sym = expect(TokenKind::Name, "an index letter inside '( )'");
    if (sym.text.size() != 1 || !std::isalpha(static_cast<unsigned char>(sym.text[0])))
      throw error(sym, "expected a single index letter inside '( )', as in 'u_(i+1)'");
    Index index;
    index.upper = upper;
    index.symbol = sym.text;
    index.loc = loc(sym);
    if (peek().is(TokenKind::Plus) || peek().is(TokenKind::Minus)) {
      bool minus = next().is(TokenKind::Minus);
      const Token& n = expect(TokenKind::Number, "an integer shift, as in 'i+1'");
      if (n.text.find_first_not_of("0123456789") != std::string::npos)
        throw error(n, "expected an integer shift, as in 'i+1'");
      if (n.text.size() > 3 || std::atoi(n.text.c_str()) > kMaxShift)
        throw error(n, fmt::format("shift {} is too large: a stencil reaches at most {} points",
                                   n.text, kMaxShift));
      index.shift = std::atoi(n.text.c_str()) * (minus ? -1 : 1);
    }
    add_index(indices, std::move(index));
    if (peek().is(TokenKind::Comma)) {
      next();
      continue;
    }
    expect(TokenKind::RParen, "')' or ',' in a shifted index");
    return;
  }
}

// After a name: any run of `_...` / `^...` groups written without spaces. A group holds index
// letters and digits (`_ij`, `_1i`) and, in derivative definitions, shifted letters in
// parentheses, one or several per pair and several pairs in a row (`u_(i+1,j-1)`,
// `u_(i+1)(j-1)`, Kranc's form).
std::vector<Index> Parser::parse_indices() {
  std::vector<Index> indices;
  while ((peek().is(TokenKind::Underscore) || peek().is(TokenKind::Caret)) &&
         !peek().space_before) {
    bool upper = next().is(TokenKind::Caret);
    const Token& t = peek();
    if (t.space_before) throw error(t, "expected index letters or digits right after '_' or '^'");
    if (!t.is(TokenKind::Name) && !t.is(TokenKind::Number) && !t.is(TokenKind::LParen))
      throw error(t, fmt::format("expected index letters or digits after '{}', found {}",
                                 upper ? "^" : "_", show(t)));
    bool first = true;
    while (first || ((peek().is(TokenKind::Name) || peek().is(TokenKind::Number) ||
                      peek().is(TokenKind::LParen)) &&
                     !peek().space_before)) {
      first = false;
      if (peek().is(TokenKind::LParen)) {
        parse_shifted_group(indices, upper);
        continue;
      }
      // `g_1i` lexes as the number 1 and the name i: one run of index characters.
      const Token& part = next();
      for (std::size_t c = 0; c < part.text.size(); ++c) {
        Index index;
        index.upper = upper;
        index.loc = SourceLoc{file_, part.line, part.column + int(c), 1};
        char ch = part.text[c];
        if (std::isalpha(static_cast<unsigned char>(ch)) && part.is(TokenKind::Name)) {
          index.symbol = std::string(1, ch);
        } else if (ch >= '1' && ch <= '3') {
          index.kind = Index::Kind::Component;
          index.component = ch - '0';
        } else if (std::isdigit(static_cast<unsigned char>(ch))) {
          throw EdlError(index.loc, fmt::format("component index '{}' is out of range: expected "
                                                "1, 2 or 3",
                                                ch));
        } else {
          throw EdlError(index.loc, fmt::format("'{}' is not an index: expected a letter or a "
                                                "component 1, 2 or 3",
                                                ch));
        }
        add_index(indices, std::move(index));
      }
      // Primes belong to the last index letter: `T_i'`.
      while (peek().is(TokenKind::Prime) && !peek().space_before) {
        next();
        if (!indices.back().is_symbol())
          throw error(part, "a prime can only follow an index letter");
        indices.back().symbol += "'";
      }
    }
  }
  return indices;
}

// ---- expressions --------------------------------------------------------------------------
// Inside parentheses newlines do not end the equation; after a binary operator neither.
void Parser::skip_continuation() {
  if (!open_parens_.empty()) {
    skip_newlines();
    return;
  }
  // No statement starts with a binary operator, so a line that does continues the last.
  std::size_t ahead = 0;
  while (peek(ahead).is(TokenKind::Newline)) ++ahead;
  if (ahead == 0) return;
  const Token& t = peek(ahead);
  if (t.is(TokenKind::Plus) || t.is(TokenKind::Minus) || t.is(TokenKind::Star) ||
      t.is(TokenKind::Slash) || t.is(TokenKind::Percent) || t.is(TokenKind::Power))
    skip_newlines();
}
void Parser::skip_after_operator() {
  skip_newlines();
}

ExprPtr Parser::make(Expr::Kind kind, SourceLoc loc, std::vector<ExprPtr> args) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->loc = std::move(loc);
  e->args = std::move(args);
  return bounded(std::move(e));
}

// Every node with operands goes through here: its height is bounded, so that no input can
// exhaust the stack of the passes that walk the tree recursively (lowering, printing,
// destruction). A flat chain `x+x+...+x` is as deep as it is long.
ExprPtr Parser::bounded(std::shared_ptr<Expr> e) {
  for (const ExprPtr& a : e->args) e->height = std::max(e->height, a->height + 1);
  if (e->height > kMaxHeight)
    throw EdlError(e->loc, fmt::format("expression of more than {} operations in a chain or "
                                       "nested; split it with temporaries",
                                       kMaxHeight));
  return e;
}

// Kranc's conditional, loosest of all: `c ? a : b` is `if(c, a, b)` (a when c is not zero).
ExprPtr Parser::parse_expression() {
  ExprPtr value = parse_sum();
  if (!peek().is(TokenKind::Question)) return value;
  const Token& question = next();
  skip_after_operator();
  ExprPtr then = parse_sum();
  skip_continuation();
  expect(TokenKind::Colon, "':' between the two values of 'CONDITION ? A : B'");
  skip_after_operator();
  ExprPtr otherwise = parse_sum();
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Call;
  e->name = "if";
  e->loc = loc(question);
  e->args = {value, then, otherwise};
  return bounded(std::move(e));
}

ExprPtr Parser::parse_sum() {
  skip_continuation();
  ExprPtr lhs = parse_term();
  while (true) {
    skip_continuation();
    const Token& op = peek();
    if (!op.is(TokenKind::Plus) && !op.is(TokenKind::Minus)) return lhs;
    next();
    skip_after_operator();
    ExprPtr rhs = parse_term();
    lhs =
        make(op.is(TokenKind::Plus) ? Expr::Kind::Add : Expr::Kind::Subtract, loc(op), {lhs, rhs});
  }
}

// A '(' whose expression ran into a later line without its ')'.
EdlError Parser::unclosed(const Token& paren) const {
  return EdlError(loc(paren), fmt::format("this '(' is not closed: expected ')' before {} at "
                                          "line {}",
                                          show(peek()), peek().line));
}

bool Parser::starts_primary(const Token& t) const {
  if (t.is(TokenKind::Number) || t.is(TokenKind::LParen)) return true;
  if (t.is(TokenKind::Name))
    return !(stop_at_to_ && t.text == "to") && t.text != "end" && t.text != "begin";
  return false;
}

ExprPtr Parser::parse_term() {
  ExprPtr lhs = parse_unary();
  while (true) {
    skip_continuation();
    const Token& op = peek();
    Expr::Kind kind;
    if (op.is(TokenKind::Star))
      kind = Expr::Kind::Multiply;
    else if (op.is(TokenKind::Slash))
      kind = Expr::Kind::Divide;
    else if (op.is(TokenKind::Percent))
      kind = Expr::Kind::Modulo;
    else if (starts_primary(op)) {
      // Juxtaposition: `amp sin(k x)`, `(1/2) (a+b)`.
      ExprPtr rhs = parse_power();
      lhs = make(Expr::Kind::Multiply, lhs->loc, {lhs, rhs});
      continue;
    } else {
      return lhs;
    }
    next();
    skip_after_operator();
    ExprPtr rhs = parse_unary();
    lhs = make(kind, loc(op), {lhs, rhs});
  }
}

ExprPtr Parser::parse_unary() {
  const Token& t = peek();
  NestingGuard guard(*this, t);
  if (t.is(TokenKind::Minus)) {
    next();
    return make(Expr::Kind::Negate, loc(t), {parse_unary()});
  }
  if (t.is(TokenKind::Plus)) {
    next();
    return parse_unary();
  }
  return parse_power();
}

ExprPtr Parser::parse_power() {
  ExprPtr base = parse_primary();
  if (peek().is(TokenKind::Power)) {
    const Token& op = next();
    skip_after_operator();
    ExprPtr exponent = parse_unary(); // right-associative; `x**-1` allowed
    return make(Expr::Kind::Power, loc(op), {base, exponent});
  }
  return base;
}

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  if (t.is(TokenKind::Newline) || t.is(TokenKind::End) || t.is_name("end") || t.is_name("begin")) {
    // Usually an unclosed '(' or an operator left at the end of the last line.
    if (!open_parens_.empty()) throw unclosed(open_parens_.back());
    std::size_t before = pos_;
    while (before > 0 && tokens_[before - 1].is(TokenKind::Newline)) --before;
    if (before > 0)
      throw error(tokens_[before - 1],
                  fmt::format("expected an expression after {}", show(tokens_[before - 1])));
    throw error(t, fmt::format("expected an expression, found {}", show(t)));
  }
  if (t.is(TokenKind::Number)) return parse_number(next());
  if (t.is(TokenKind::LParen)) return parse_parenthesized(next());
  if (t.is(TokenKind::Name)) {
    next();
    if (t.text == "D" && peek().is(TokenKind::Underscore) && peek(1).is_name("t") &&
        !peek().space_before && !peek(1).space_before)
      throw error(t, "'D_t' may only stand on the left side of an equation");
    // In an operator-form definition (`PD_ij = DZero_i DZero_j`) operators are values.
    if (operators_.count(t.text) && !in_algebra_) return parse_derivative(t);
    if (peek().is(TokenKind::LParen) && (is_function_name(t.text) || !peek().space_before)) {
      return parse_call(t);
    }
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Tensor;
    e->name = parse_name(t);
    e->loc = SourceLoc{file_, t.line, t.column, int(e->name.size())};
    e->indices = parse_indices();
    return e;
  }

  throw error(t, fmt::format("expected an expression (a number, a name, a call or '('), found "
                             "{}",
                             show(t)));
}

ExprPtr Parser::parse_number(const Token& t) {
  std::string text = t.text;
  for (char& c : text)
    if (c == 'd' || c == 'D') c = 'e';
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Number;
  e->loc = loc(t);
  e->value = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(e->value))
    throw error(t, fmt::format("number {} is too large for double precision", t.text));
  return e;
}

ExprPtr Parser::parse_parenthesized(const Token& t) {
  open_parens_.push_back(t);
  ExprPtr inner = parse_expression();
  skip_continuation();
  if (!peek().is(TokenKind::RParen)) {
    if (peek().line > t.line || peek().is(TokenKind::End)) throw unclosed(t);
    throw error(peek(), fmt::format("expected ')' to close the '(' at column {}, found {}",
                                    t.column, show(peek())));
  }
  open_parens_.pop_back();
  next();
  auto grouped = std::make_shared<Expr>(*inner);
  grouped->parenthesized = true;
  return grouped;
}

ExprPtr Parser::parse_derivative(const Token& name) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Derivative;
  e->name = name.text;
  e->loc = loc(name);
  e->indices = parse_indices();
  const Token& operand = peek();
  if (!starts_primary(operand))
    throw error(operand, fmt::format("expected the operand of '{}' (a grid function or a "
                                     "parenthesised expression), found {}",
                                     name.text, show(operand)));
  NestingGuard guard(*this, operand); // `D1 D1 D1 ... u` recurses here
  e->args.push_back(parse_primary());
  return bounded(std::move(e));
}

ExprPtr Parser::parse_call(const Token& name) {
  const Token& open = next(); // (
  open_parens_.push_back(open);
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Call;
  e->name = name.text;
  e->loc = loc(name);
  skip_newlines();
  if (!peek().is(TokenKind::RParen)) {
    while (true) {
      e->args.push_back(parse_expression());
      skip_newlines();
      if (peek().is(TokenKind::Comma)) {
        next();
        continue;
      }
      break;
    }
  }
  if (!peek().is(TokenKind::RParen)) {
    if (peek().line > open.line || peek().is(TokenKind::End)) throw unclosed(open);
    throw error(peek(), fmt::format("expected ',' or ')' in the call of '{}' opened at column "
                                    "{}, found {}",
                                    name.text, open.column, show(peek())));
  }
  next();
  open_parens_.pop_back();
  return bounded(std::move(e));
}

Thorn parse_thorn(const std::shared_ptr<const SourceFile>& file) {
  return Parser(file).parse();
}

Thorn parse_file(const std::string& path) {
  return parse_thorn(SourceFile::load(path));
}

Thorn parse_string(const std::string& text, const std::string& name) {
  return parse_thorn(std::make_shared<const SourceFile>(name, text));
}

} // namespace saguaro::edl