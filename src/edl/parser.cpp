#include "edl/parser.hpp"

#include "edl/lexer.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
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
      {"sin", 1},   {"cos", 1},  {"tan", 1},  {"asin", 1}, {"acos", 1}, {"atan", 1},
      {"atan2", 2}, {"sinh", 1}, {"cosh", 1}, {"tanh", 1}, {"exp", 1},  {"log", 1},
      {"sqrt", 1},  {"abs", 1},  {"pow", 2},  {"min", 2},  {"max", 2},  {"sign", 1}};
  return functions;
}

namespace {

bool is_function_name(const std::string& name) {
  for (const auto& [f, arity] : known_functions())
    if (f == name) return true;
  return false;
}

// Kranc's rule: derivative operators are named D followed by lower-case letters and digits.
bool looks_like_operator(const std::string& name) {
  if (name.empty() || name[0] != 'D') return false;
  for (std::size_t i = 1; i < name.size(); ++i)
    if (!std::islower(static_cast<unsigned char>(name[i])) &&
        !std::isdigit(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

class Parser {
public:
  explicit Parser(std::shared_ptr<const SourceFile> file)
      : file_(std::move(file)), tokens_(tokenize(file_)) {
    collect_operator_names();
  }

  Thorn parse() {
    skip_newlines();
    Thorn thorn;
    thorn.file = file_;
    thorn.loc = loc(peek());
    expect_word("begin", "'begin thorn NAME' to start the file");
    expect_word("thorn", "'thorn' after 'begin'");
    thorn.name = parse_uname("a thorn name");
    end_of_line();
    while (true) {
      skip_newlines();
      const Token& t = peek();
      if (t.is(TokenKind::End)) throw error(t, "unexpected end of file: expected 'end thorn'");
      if (t.is_name("end")) {
        next();
        expect_word("thorn", fmt::format("'thorn' to close 'begin thorn {}'", thorn.name));
        end_of_line();
        skip_newlines();
        if (!peek().is(TokenKind::End))
          throw error(peek(), "unexpected text after 'end thorn': expected end of file");
        return thorn;
      }
      if (t.is_name("begin")) {
        parse_section(thorn);
      } else if (t.is_name("inherit") || t.is_name("implement") || t.is_name("use") ||
                 t.is_name("disable")) {
        parse_option(thorn);
      } else {
        throw error(t, fmt::format("unexpected {} in thorn: expected 'begin SECTION', an option "
                                   "(inherit, implement, use, disable) or 'end thorn'",
                                   show(t)));
      }
    }
  }

private:
  // ---- token access -------------------------------------------------------------------------
  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column, t.length}; }
  static std::string show(const Token& t) {
    switch (t.kind) {
    case TokenKind::Name: return fmt::format("'{}'", t.text);
    case TokenKind::Number: return fmt::format("number '{}'", t.text);
    case TokenKind::String: return fmt::format("string \"{}\"", t.text);
    default: return describe(t.kind);
    }
  }
  EdlError error(const Token& t, const std::string& message) const {
    // Inside parentheses that a later line has not closed, the unclosed '(' is the likely
    // culprit: say where it is.
    if (!open_parens_.empty() && open_parens_.back().line < t.line)
      return EdlError(loc(t), message,
                      {{loc(open_parens_.back()), "the '(' opened here is not "
                                                  "closed"}});
    return EdlError(loc(t), message);
  }
  void skip_newlines() {
    while (peek().is(TokenKind::Newline)) next();
  }
  void end_of_line() {
    const Token& t = peek();
    if (t.is(TokenKind::Newline)) {
      next();
      return;
    }
    if (t.is(TokenKind::End)) return;
    throw error(t, fmt::format("unexpected {}: expected end of line", show(t)));
  }
  void expect_word(std::string_view word, const std::string& what) {
    const Token& t = peek();
    if (!t.is_name(word)) throw error(t, fmt::format("expected {}, found {}", what, show(t)));
    next();
  }
  const Token& expect(TokenKind kind, const std::string& what) {
    const Token& t = peek();
    if (!t.is(kind)) throw error(t, fmt::format("expected {}, found {}", what, show(t)));
    return next();
  }
  // Thorn, group and calculation names may hold `_`: glue adjacent tokens back together.
  std::string parse_uname(const std::string& what) {
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
  void collect_operator_names() {
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
      else if (in_block && line_start && t.is(TokenKind::Name) && looks_like_operator(t.text))
        operators_.insert(t.text);
      line_start = false;
    }
  }

  // ---- sections -----------------------------------------------------------------------------
  void parse_option(Thorn& thorn) {
    const Token& word = next();
    if (word.text == "inherit") {
      if (!peek().is(TokenKind::Name)) throw error(peek(), "expected a thorn name after 'inherit'");
      while (peek().is(TokenKind::Name)) thorn.inherits.push_back(parse_uname("a thorn name"));
    } else if (word.text == "implement") {
      thorn.implements = parse_uname("an implementation name after 'implement'");
    } else {
      bool enable = word.text == "use";
      if (!peek().is(TokenKind::Name))
        throw error(peek(), fmt::format("expected a feature after '{}': one of {}", word.text,
                                        fmt::join(known_features(), ", ")));
      while (peek().is(TokenKind::Name)) {
        const Token& f = next();
        bool known = false;
        for (const auto& k : known_features()) known = known || k == f.text;
        if (!known)
          throw error(f, fmt::format("unknown feature '{}': expected one of {}", f.text,
                                     fmt::join(known_features(), ", ")));
        thorn.features[f.text] = enable;
      }
    }
    end_of_line();
  }

  void parse_section(Thorn& thorn) {
    next(); // begin
    const Token& kind = peek();
    if (kind.is_name("variables") || kind.is_name("temporaries")) {
      std::string word = next().text;
      end_of_line();
      auto& list = word == "variables" ? thorn.variables : thorn.temporaries;
      while (true) {
        skip_newlines();
        if (peek().is_name("end")) {
          next();
          expect_word(word, fmt::format("'end {}'", word));
          end_of_line();
          return;
        }
        if (peek().is(TokenKind::End))
          throw error(peek(), fmt::format("unexpected end of file: expected 'end {}'", word));
        list.push_back(parse_declared_tensor());
      }
    }
    if (kind.is_name("parameters")) {
      next();
      end_of_line();
      while (true) {
        skip_newlines();
        if (peek().is_name("end")) {
          next();
          expect_word("parameters", "'end parameters'");
          end_of_line();
          return;
        }
        if (peek().is(TokenKind::End))
          throw error(peek(), "unexpected end of file: expected 'end parameters'");
        thorn.parameters.push_back(parse_parameter());
      }
    }
    if (kind.is_name("group")) {
      next();
      GroupDecl group;
      group.loc = loc(peek());
      group.name = parse_uname("a group name");
      end_of_line();
      while (true) {
        skip_newlines();
        if (peek().is_name("end")) {
          next();
          expect_word("group", "'end group'");
          end_of_line();
          thorn.groups.push_back(std::move(group));
          return;
        }
        if (peek().is(TokenKind::End))
          throw error(peek(), "unexpected end of file: expected 'end group'");
        TensorRef member = parse_declared_tensor();
        std::string description;
        if (peek().is(TokenKind::Colon)) {
          next();
          description = expect(TokenKind::String, "a quoted description after ':'").text;
        }
        end_of_line();
        group.members.emplace_back(std::move(member), std::move(description));
      }
    }
    if (kind.is_name("derivatives")) {
      next();
      end_of_line();
      while (true) {
        skip_newlines();
        if (peek().is_name("end")) {
          next();
          expect_word("derivatives", "'end derivatives'");
          end_of_line();
          return;
        }
        if (peek().is(TokenKind::End))
          throw error(peek(), "unexpected end of file: expected 'end derivatives'");
        thorn.derivatives.push_back(parse_derivative_def());
      }
    }
    if (kind.is_name("calculation")) {
      next();
      thorn.calculations.push_back(parse_calculation());
      return;
    }
    throw error(kind, fmt::format("unknown section {}: expected one of variables, temporaries, "
                                  "parameters, group, derivatives, calculation",
                                  show(kind)));
  }

  TensorRef parse_declared_tensor() {
    const Token& name = peek();
    if (!name.is(TokenKind::Name))
      throw error(name, fmt::format("expected a grid function name, found {}", show(name)));
    next();
    TensorRef ref{name.text, parse_indices(), loc(name)};
    for (const Index& index : ref.indices)
      if (!index.is_symbol())
        throw EdlError(index.loc, "a declaration takes index letters (as in 'v_i'), not fixed "
                                  "components");
    return ref;
  }

  ParameterDecl parse_parameter() {
    ParameterDecl p;
    const Token& name = expect(TokenKind::Name, "a parameter name");
    p.name = name.text;
    p.loc = loc(name);
    expect(TokenKind::Colon, fmt::format("':' after parameter name '{}'", p.name));
    const Token& type = expect(TokenKind::Name, "a parameter type (real, int, keyword, boolean)");
    if (type.text == "real")
      p.type = ParameterType::Real;
    else if (type.text == "int")
      p.type = ParameterType::Int;
    else if (type.text == "keyword")
      p.type = ParameterType::Keyword;
    else if (type.text == "boolean")
      p.type = ParameterType::Boolean;
    else
      throw error(type, fmt::format("unknown parameter type '{}': expected real, int, keyword or "
                                    "boolean",
                                    type.text));
    if (peek().is(TokenKind::String)) p.description = next().text;
    while (peek().is(TokenKind::Comma)) {
      next();
      const Token& key = expect(TokenKind::Name, "'default', 'range' or 'values'");
      expect(TokenKind::Colon, fmt::format("':' after '{}'", key.text));
      if (key.text == "default") {
        p.has_default = true;
        p.default_loc = loc(peek());
        if (p.type == ParameterType::Keyword) {
          p.default_word = expect(TokenKind::String, "a quoted keyword default").text;
        } else if (p.type == ParameterType::Boolean) {
          const Token& v = peek();
          std::string word = v.is(TokenKind::Number) ? v.text : v.text;
          if (word == "true" || word == "yes" || word == "1")
            p.default_word = "true";
          else if (word == "false" || word == "no" || word == "0")
            p.default_word = "false";
          else
            throw error(v, fmt::format("expected a boolean default (true, false, yes, no), "
                                       "found {}",
                                       show(v)));
          next();
        } else {
          p.default_value = parse_expression();
        }
      } else if (key.text == "range") {
        if (p.type == ParameterType::Keyword) {
          parse_keyword_values(p);
        } else if (p.type == ParameterType::Boolean) {
          throw error(key, "a boolean parameter takes no range");
        } else {
          p.has_range = true;
          p.range_loc = loc(peek());
          p.range_min = parse_range_end(true);
          expect_word("to", "'to' between the ends of a range (as in 'range: 0 to 1')");
          p.range_max = parse_range_end(false);
        }
      } else if (key.text == "values") {
        if (p.type != ParameterType::Keyword)
          throw error(key, "'values' lists the choices of a keyword parameter only");
        parse_keyword_values(p);
      } else {
        throw error(key, fmt::format("unknown parameter attribute '{}': expected default, range "
                                     "or values",
                                     key.text));
      }
    }
    end_of_line();
    return p;
  }

  void parse_keyword_values(ParameterDecl& p) {
    p.keyword_values.push_back(expect(TokenKind::String, "a quoted keyword value").text);
    while (peek().is(TokenKind::String) ||
           (peek().is(TokenKind::Comma) && peek(1).is(TokenKind::String))) {
      if (peek().is(TokenKind::Comma)) next();
      p.keyword_values.push_back(next().text);
    }
  }

  // `infinity`, `-infinity` (open ends) or a constant expression.
  ExprPtr parse_range_end(bool lower) {
    if (peek().is_name("infinity")) {
      if (lower) throw error(peek(), "the lower end of a range cannot be +infinity");
      next();
      return nullptr;
    }
    if (peek().is(TokenKind::Minus) && peek(1).is_name("infinity")) {
      if (!lower) throw error(peek(), "the upper end of a range cannot be -infinity");
      next();
      next();
      return nullptr;
    }
    stop_at_to_ = true;
    ExprPtr e = parse_expression();
    stop_at_to_ = false;
    return e;
  }

  DerivativeDef parse_derivative_def() {
    DerivativeDef def;
    const Token& name = peek();
    if (!name.is(TokenKind::Name) || !looks_like_operator(name.text))
      throw error(name, fmt::format("expected a derivative operator name (D followed by "
                                    "lower-case letters or digits, as in 'Dplus'), found {}",
                                    show(name)));
    next();
    def.name = name.text;
    def.loc = loc(name);
    if (peek().is(TokenKind::Underscore) || peek().is(TokenKind::Caret))
      throw error(peek(), "the operator's direction goes on its operand, as in 'Dplus u_i = ...'");
    const Token& operand = expect(TokenKind::Name, "the operand of the operator (as in 'u_i')");
    def.operand = TensorRef{operand.text, parse_indices(), loc(operand)};
    if (def.operand.indices.empty())
      throw error(operand, fmt::format("the operand '{}' needs a direction index, as in '{}_i'",
                                       operand.text, operand.text));
    for (const Index& index : def.operand.indices)
      if (!index.is_symbol() || index.upper)
        throw EdlError(index.loc, "the operand's directions are lower index letters, as in 'u_i'");
    expect(TokenKind::Equals, "'=' after the operator being defined");
    in_definition_ = true;
    def.rhs = parse_expression();
    in_definition_ = false;
    end_of_line();
    return def;
  }

  CalculationDecl parse_calculation() {
    CalculationDecl calc;
    calc.loc = loc(peek());
    calc.name = parse_uname("a calculation name");
    if (peek().is_name("scheduled")) {
      next();
      const Token& word = peek();
      if (!word.is_name("at") && !word.is_name("in"))
        throw error(word,
                    fmt::format("expected 'at' or 'in' after 'scheduled', found {}", show(word)));
      calc.schedule_word = next().text;
      calc.schedule_bin = parse_uname("a schedule bin or group (initial, MoL_CalcRHS, "
                                      "MoL_PostStep, analysis, ...)");
    }
    if (peek().is_name("on")) {
      next();
      expect_word("boundary", "'boundary' after 'on'");
      calc.on_boundary = true;
    }
    end_of_line();
    while (true) {
      skip_newlines();
      if (peek().is_name("end")) {
        next();
        expect_word("calculation", "'end calculation'");
        end_of_line();
        return calc;
      }
      if (peek().is(TokenKind::End))
        throw error(peek(), fmt::format("unexpected end of file: expected 'end calculation' for "
                                        "'{}'",
                                        calc.name));
      if (peek().is_name("begin"))
        throw error(peek(), fmt::format("expected 'end calculation' before a new section "
                                        "(calculation '{}' is still open)",
                                        calc.name));
      calc.equations.push_back(parse_equation());
    }
  }

  Equation parse_equation() {
    Equation eq;
    const Token& first = peek();
    if (!first.is(TokenKind::Name))
      throw error(first, fmt::format("expected an equation 'NAME = EXPRESSION' or "
                                     "'D_t NAME = EXPRESSION', found {}",
                                     show(first)));
    if (first.text == "D" && peek(1).is(TokenKind::Underscore) && peek(2).is_name("t")) {
      next();
      next();
      next();
      eq.time_derivative = true;
      const Token& name = peek();
      if (!name.is(TokenKind::Name))
        throw error(name,
                    fmt::format("expected the evolved variable after 'D_t', found {}", show(name)));
      next();
      eq.lhs = TensorRef{name.text, parse_indices(), loc(name)};
      eq.loc = SourceLoc{file_, first.line, first.column, name.column + name.length - first.column};
    } else {
      next();
      eq.lhs = TensorRef{first.text, parse_indices(), loc(first)};
      eq.loc = eq.lhs.loc;
    }
    if (!peek().is(TokenKind::Equals)) {
      if (operators_.count(first.text) && !eq.time_derivative)
        throw error(first, fmt::format("a derivative '{}' cannot be assigned to; the left side "
                                       "is a grid function, a temporary or 'D_t NAME'",
                                       first.text));
      throw error(peek(), fmt::format("expected '=' after the left side of the equation, found "
                                      "{}",
                                      show(peek())));
    }
    next();
    eq.rhs = parse_expression();
    end_of_line();
    return eq;
  }

  // ---- indices ------------------------------------------------------------------------------
  // After a name: any run of `_...` / `^...` groups written without spaces.
  std::vector<Index> parse_indices() {
    std::vector<Index> indices;
    while ((peek().is(TokenKind::Underscore) || peek().is(TokenKind::Caret)) &&
           !peek().space_before) {
      bool upper = next().is(TokenKind::Caret);
      const Token& t = peek();
      if (t.space_before) throw error(t, "expected index letters or digits right after '_' or '^'");
      if (t.is(TokenKind::Name) || t.is(TokenKind::Number)) {
        next();
        // `g_1i` lexes as the number 1 and the name i: one run of index characters.
        std::vector<Token> run{t};
        while ((peek().is(TokenKind::Name) || peek().is(TokenKind::Number)) && !peek().space_before)
          run.push_back(next());
        for (const Token& part : run) {
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
              throw EdlError(index.loc, fmt::format("component index '{}' is out of range: "
                                                    "expected 1, 2 or 3",
                                                    ch));
            } else {
              throw EdlError(index.loc, fmt::format("'{}' is not an index: expected a letter or "
                                                    "a component 1, 2 or 3",
                                                    ch));
            }
            if (indices.size() == kMaxRank)
              throw EdlError(index.loc,
                             fmt::format("more than {} indices: a tensor of rank {} has 3^{} "
                                         "components, more than any system needs (at most {})",
                                         kMaxRank, kMaxRank + 1, kMaxRank + 1, kMaxRank));
            indices.push_back(std::move(index));
          }
        }
        // Primes belong to the last index letter: `T_i'`.
        while (peek().is(TokenKind::Prime) && !peek().space_before) {
          next();
          if (!indices.back().is_symbol())
            throw error(t, "a prime can only follow an index letter");
          indices.back().symbol += "'";
        }
      } else if (t.is(TokenKind::LParen)) {
        if (!in_definition_)
          throw error(t, "shifted indices like 'u_(i+1)' are only allowed in a derivatives "
                         "block");
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
              throw error(n, fmt::format("shift {} is too large: a stencil reaches at most {} "
                                         "points",
                                         n.text, kMaxShift));
            index.shift = std::atoi(n.text.c_str()) * (minus ? -1 : 1);
          }
          indices.push_back(std::move(index));
          if (peek().is(TokenKind::Comma)) {
            next();
            continue;
          }
          expect(TokenKind::RParen, "')' or ',' in a shifted index");
          break;
        }
      } else {
        throw error(t, fmt::format("expected index letters or digits after '{}', found {}",
                                   upper ? "^" : "_", show(t)));
      }
    }
    return indices;
  }

  // ---- expressions --------------------------------------------------------------------------
  // Inside parentheses newlines do not end the equation; after a binary operator neither.
  void skip_continuation() {
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
  void skip_after_operator() { skip_newlines(); }

  static ExprPtr make(Expr::Kind kind, SourceLoc loc, std::vector<ExprPtr> args) {
    auto e = std::make_shared<Expr>();
    e->kind = kind;
    e->loc = std::move(loc);
    e->args = std::move(args);
    return bounded(std::move(e));
  }

  // Every node with operands goes through here: its height is bounded, so that no input can
  // exhaust the stack of the passes that walk the tree recursively (lowering, printing,
  // destruction). A flat chain `x+x+...+x` is as deep as it is long.
  static ExprPtr bounded(std::shared_ptr<Expr> e) {
    for (const ExprPtr& a : e->args) e->height = std::max(e->height, a->height + 1);
    if (e->height > kMaxHeight)
      throw EdlError(e->loc, fmt::format("expression of more than {} operations in a chain or "
                                         "nested; split it with temporaries",
                                         kMaxHeight));
    return e;
  }

  ExprPtr parse_expression() {
    skip_continuation();
    ExprPtr lhs = parse_term();
    while (true) {
      skip_continuation();
      const Token& op = peek();
      if (!op.is(TokenKind::Plus) && !op.is(TokenKind::Minus)) return lhs;
      next();
      skip_after_operator();
      ExprPtr rhs = parse_term();
      lhs = make(op.is(TokenKind::Plus) ? Expr::Kind::Add : Expr::Kind::Subtract, loc(op),
                 {lhs, rhs});
    }
  }

  // A '(' whose expression ran into a later line without its ')'.
  EdlError unclosed(const Token& paren) const {
    return EdlError(loc(paren), fmt::format("this '(' is not closed: expected ')' before {} at "
                                            "line {}",
                                            show(peek()), peek().line));
  }

  bool starts_primary(const Token& t) const {
    if (t.is(TokenKind::Number) || t.is(TokenKind::LParen)) return true;
    if (t.is(TokenKind::Name))
      return !(stop_at_to_ && t.text == "to") && t.text != "end" && t.text != "begin";
    return false;
  }

  ExprPtr parse_term() {
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

  // Nesting is bounded so that no input can exhaust the stack of the recursive passes.
  struct NestingGuard {
    Parser& p;
    NestingGuard(Parser& parser, const Token& t) : p(parser) {
      if (++p.nesting_ > kMaxNesting)
        throw p.error(t, fmt::format("expression nested more than {} levels deep; split it with "
                                     "temporaries",
                                     kMaxNesting));
    }
    ~NestingGuard() { --p.nesting_; }
  };

  ExprPtr parse_unary() {
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

  ExprPtr parse_power() {
    ExprPtr base = parse_primary();
    if (peek().is(TokenKind::Power)) {
      const Token& op = next();
      skip_after_operator();
      ExprPtr exponent = parse_unary(); // right-associative; `x**-1` allowed
      return make(Expr::Kind::Power, loc(op), {base, exponent});
    }
    return base;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    if (t.is(TokenKind::Newline) || t.is(TokenKind::End) || t.is_name("end") ||
        t.is_name("begin")) {
      // Usually an unclosed '(' or an operator left at the end of the last line.
      if (!open_parens_.empty()) throw unclosed(open_parens_.back());
      std::size_t before = pos_;
      while (before > 0 && tokens_[before - 1].is(TokenKind::Newline)) --before;
      if (before > 0)
        throw error(tokens_[before - 1],
                    fmt::format("expected an expression after {}", show(tokens_[before - 1])));
      throw error(t, fmt::format("expected an expression, found {}", show(t)));
    }
    if (t.is(TokenKind::Number)) {
      next();
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
    if (t.is(TokenKind::LParen)) {
      next();
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
    if (t.is(TokenKind::Name)) {
      next();
      if (t.text == "D" && peek().is(TokenKind::Underscore) && peek(1).is_name("t") &&
          !peek().space_before && !peek(1).space_before)
        throw error(t, "'D_t' may only stand on the left side of an equation");
      if (operators_.count(t.text)) return parse_derivative(t);
      if (peek().is(TokenKind::LParen) && (is_function_name(t.text) || !peek().space_before)) {
        return parse_call(t);
      }
      auto e = std::make_shared<Expr>();
      e->kind = Expr::Kind::Tensor;
      e->name = t.text;
      e->loc = loc(t);
      e->indices = parse_indices();
      return e;
    }

    throw error(t, fmt::format("expected an expression (a number, a name, a call or '('), found "
                               "{}",
                               show(t)));
  }

  ExprPtr parse_derivative(const Token& name) {
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

  ExprPtr parse_call(const Token& name) {
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

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  bool stop_at_to_ = false;
  bool in_definition_ = false;
  std::set<std::string> operators_;
  std::vector<Token> open_parens_;
  int nesting_ = 0;
  static constexpr int kMaxNesting = 256;
  static constexpr int kMaxHeight = 4000; // see bounded(); 7000 overflowed an ASan build
  // Indices per tensor: every rank expands to 3^rank components (rank 18 took 8.8 GB).
  static constexpr std::size_t kMaxRank = 6;
  static constexpr int kMaxShift = 64;
};

} // namespace

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
