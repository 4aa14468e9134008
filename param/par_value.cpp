// Values of a .par file: the flesh's expression grammar, read and evaluated in one pass
// (par_value.hpp has the grammar and the rules).
#include "param/par_value.hpp"

#include "param/detail.hpp"
#include "support/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

namespace saguaro::param::detail {

using support::Cursor;
using support::InputError;
using support::Position;
using support::SourceLoc;

namespace {

using Type = ParValue::Type;

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

ParValue make_int(long v) {
  ParValue p;
  p.type = Type::Int;
  p.i = v;
  return p;
}
ParValue make_real(double v) {
  ParValue p;
  p.type = Type::Real;
  p.r = v;
  return p;
}
ParValue make_bool(bool v) {
  ParValue p;
  p.type = Type::Bool;
  p.b = v;
  return p;
}
ParValue make_string(std::string s, bool literal = false) {
  ParValue p;
  p.type = Type::String;
  p.s = std::move(s);
  p.literal = literal;
  return p;
}

const char* type_name(Type t) {
  switch (t) {
  case Type::Int: return "INT";
  case Type::Real: return "REAL";
  case Type::Bool: return "BOOLEAN";
  case Type::String: return "STRING";
  }
  return "?";
}

bool numeric(const ParValue& v) {
  return v.type == Type::Int || v.type == Type::Real;
}
double real_of(const ParValue& v) {
  return v.type == Type::Int ? double(v.i) : v.r;
}

std::string parfile_name(const std::string& par_path) {
  std::filesystem::path path(par_path);
  std::string base = path.filename().string();
  if (path.extension() == ".par") base = path.stem().string();
  return base;
}

// `$name`, `${name}` or `$ENV{NAME}` at `c` (on the '$'): its value, or nullopt when the '$'
// starts none of them (it is then an ordinary character). Throws for an unknown variable.
std::optional<ParValue> variable(Cursor& c, const ParScope& scope) {
  const Position dollar = c.position();
  std::size_t i = 1;
  bool braced = c.peek(1) == '{';
  bool env = false;
  if (braced) i = 2;
  if (c.text().compare(dollar.offset + 1, 4, "ENV{") == 0) {
    env = braced = true;
    i = 5;
  }
  if (!is_name_start(c.peek(i)) && !(env && c.peek(i) == '_')) return std::nullopt;
  std::size_t end = i;
  while (is_name_char(c.peek(end))) ++end;
  std::string name = c.text().substr(dollar.offset + i, end - i);
  if (braced) {
    if (c.peek(end) != '}')
      throw InputError(c.at(dollar, int(end)),
                       fmt::format("expected '}}' after '${}{}'", env ? "ENV{" : "{", name));
    ++end;
  }
  c.advance(end);
  SourceLoc at = c.span(dollar);
  if (env) {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr)
      throw InputError(at, fmt::format("the environment variable {} is not set", name));
    return make_string(value);
  }
  if (name == "parfile") return make_string(parfile_name(scope.par_path));
  if (auto it = scope.variables.find(name); it != scope.variables.end()) return it->second;
  if (name == "pi") return make_real(M_PI);
  std::vector<std::string> known{"parfile", "pi"};
  for (const auto& [k, v] : scope.variables) known.push_back(k);
  std::vector<support::Note> notes = support::did_you_mean(name, known);
  notes.push_back({{}, "define it before its use: $" + name + " = value"});
  throw InputError(at, fmt::format("unknown variable ${}", name), notes);
}

class ValueReader {
public:
  ValueReader(Cursor& c, ParScope& scope) : c_(c), scope_(scope) {}

  std::vector<ParValue> read() {
    skip();
    if (c_.peek() == '[') return array();
    if (c_.peek() == '+') {
      c_.advance();
      skip();
    }
    return {expr()};
  }

private:
  // Blanks; with `lines` (after a binary operator, inside parentheses) newlines and comments.
  void skip(bool lines = false) {
    for (;;) {
      c_.skip_blanks();
      if (!(lines || open_ > 0)) return;
      if (c_.peek() == '\n') {
        c_.advance();
      } else if (c_.peek() == '#') {
        c_.skip_to_end_of_line();
      } else {
        return;
      }
    }
  }
  bool at(const char* op) const {
    for (std::size_t i = 0; op[i] != '\0'; ++i)
      if (c_.peek(i) != op[i]) return false;
    return true;
  }
  // The operator at the cursor among `ops` (longest first), or "".
  std::string op(std::initializer_list<const char*> ops) {
    for (const char* o : ops)
      if (at(o)) return o;
    return {};
  }
  void deeper(const Position& where) {
    if (++depth_ > kMaxDepth)
      throw InputError(c_.at(where),
                       fmt::format("the value is nested more than {} levels deep", kMaxDepth));
  }
  [[noreturn]] void type_error(const SourceLoc& at, const std::string& op, const ParValue& a,
                               const ParValue& b) {
    throw InputError(at,
                     fmt::format("cannot apply '{}' to {} and {}", op, describe(a), describe(b)));
  }

  std::vector<ParValue> array() {
    c_.advance(); // '['
    ++open_;
    std::vector<ParValue> out;
    for (;;) {
      skip();
      out.push_back(expr());
      skip();
      if (c_.peek() == ',') {
        c_.advance();
        continue;
      }
      if (c_.peek() == ']') break;
      throw InputError(c_.loc(), fmt::format("unexpected {}: expected ',' or ']' in the array",
                                             show(c_.peek())));
    }
    c_.advance();
    --open_;
    return out;
  }

  static std::string show(char c) {
    if (c == '\n' || c == '\0') return "end of line";
    return support::describe_character(c);
  }

  ParValue expr() {
    ParValue left = logic_and();
    for (skip(); at("||"); skip()) {
      SourceLoc where = c_.loc(2);
      c_.advance(2);
      skip(true);
      ParValue right = logic_and();
      if (left.type != Type::Bool || right.type != Type::Bool) type_error(where, "||", left, right);
      left = make_bool(left.b || right.b);
    }
    return left;
  }
  ParValue logic_and() {
    ParValue left = equality();
    for (skip(); at("&&"); skip()) {
      SourceLoc where = c_.loc(2);
      c_.advance(2);
      skip(true);
      ParValue right = equality();
      if (left.type != Type::Bool || right.type != Type::Bool) type_error(where, "&&", left, right);
      left = make_bool(left.b && right.b);
    }
    return left;
  }
  ParValue equality() {
    ParValue left = comparison();
    for (skip(); at("==") || at("!="); skip()) {
      std::string o = op({"==", "!="});
      SourceLoc where = c_.loc(2);
      c_.advance(2);
      skip(true);
      ParValue right = comparison();
      bool same;
      if (numeric(left) && numeric(right))
        same = real_of(left) == real_of(right);
      else if (left.type == Type::Bool && right.type == Type::Bool)
        same = left.b == right.b;
      else if (left.type == Type::String && right.type == Type::String)
        same = left.s == right.s;
      else
        type_error(where, o, left, right);
      left = make_bool(o == "==" ? same : !same);
    }
    return left;
  }
  ParValue comparison() {
    ParValue left = sum();
    skip();
    std::string o = op({"<=", ">=", "<", ">"});
    if (o.empty()) return left;
    SourceLoc where = c_.loc(int(o.size()));
    c_.advance(o.size());
    skip(true);
    ParValue right = sum();
    if (!numeric(left) || !numeric(right)) type_error(where, o, left, right);
    double a = real_of(left), b = real_of(right);
    return make_bool(o == "<" ? a < b : o == ">" ? a > b : o == "<=" ? a <= b : a >= b);
  }

  // Strings in arithmetic: "a" + "b" joins, "a" * 3 repeats; any other mix is the text as
  // written (`1+log`, as the flesh's first parser read an unquoted value).
  ParValue sum() {
    const Position start = c_.position();
    ParValue left = product();
    for (skip(); (c_.peek() == '+' || c_.peek() == '-'); skip()) {
      char o = c_.peek();
      SourceLoc where = c_.loc();
      c_.advance();
      skip(true);
      ParValue right = product();
      if (left.type == Type::Int && right.type == Type::Int) {
        long r;
        if (o == '+' ? __builtin_add_overflow(left.i, right.i, &r)
                     : __builtin_sub_overflow(left.i, right.i, &r))
          throw InputError(where, "integer overflow");
        left = make_int(r);
      } else if (numeric(left) && numeric(right)) {
        left =
            make_real(o == '+' ? real_of(left) + real_of(right) : real_of(left) - real_of(right));
      } else if (o == '+' && left.type == Type::String && right.type == Type::String &&
                 !left.literal && !right.literal) {
        left = make_string(left.s + right.s);
      } else if (left.type != Type::Bool && right.type != Type::Bool) {
        left = make_string(trim(c_.since(start)), true);
      } else {
        type_error(where, std::string(1, o), left, right);
      }
    }
    return left;
  }
  ParValue product() {
    const Position start = c_.position();
    ParValue left = power();
    for (skip(); (c_.peek() == '*' && c_.peek(1) != '*') || c_.peek() == '/' || c_.peek() == '%';
         skip()) {
      char o = c_.peek();
      SourceLoc where = c_.loc();
      c_.advance();
      skip(true);
      ParValue right = power();
      if (left.type == Type::Int && right.type == Type::Int) {
        long r = 0;
        if (o != '*' && right.i == 0) throw InputError(where, "division by zero");
        if (o == '*' && __builtin_mul_overflow(left.i, right.i, &r))
          throw InputError(where, "integer overflow");
        left = make_int(o == '*' ? r : o == '/' ? left.i / right.i : left.i % right.i);
      } else if (numeric(left) && numeric(right) && o != '%') {
        if (o == '/' && real_of(right) == 0) throw InputError(where, "division by zero");
        left =
            make_real(o == '*' ? real_of(left) * real_of(right) : real_of(left) / real_of(right));
      } else if (o == '*' && left.type == Type::String && !left.literal &&
                 right.type == Type::Int) {
        if (right.i < 0 || double(left.s.size()) * double(right.i) > double(1 << 20))
          throw InputError(where, "the repeated string would be longer than 1 MiB or negative");
        std::string s;
        for (long k = 0; k < right.i; ++k) s += left.s;
        left = make_string(std::move(s));
      } else if (left.type != Type::Bool && right.type != Type::Bool && o != '%') {
        left = make_string(trim(c_.since(start)), true);
      } else {
        type_error(where, std::string(1, o), left, right);
      }
    }
    return left;
  }
  ParValue power() {
    ParValue base = unary();
    skip();
    if (!at("**")) return base;
    SourceLoc where = c_.loc(2);
    c_.advance(2);
    skip(true);
    ParValue exponent = unary();
    if (!numeric(base) || !numeric(exponent)) type_error(where, "**", base, exponent);
    return make_real(std::pow(real_of(base), real_of(exponent)));
  }
  ParValue unary() {
    skip();
    char o = c_.peek();
    if ((o == '-' || o == '!') && c_.peek(1) != '=') {
      const Position where = c_.position();
      deeper(where);
      c_.advance();
      skip();
      ParValue v = unary();
      --depth_;
      if (o == '-' && v.type == Type::Int) {
        if (v.i == std::numeric_limits<long>::min()) throw InputError(c_.at(where), "overflow");
        return make_int(-v.i);
      }
      if (o == '-' && v.type == Type::Real) return make_real(-v.r);
      if (o == '!' && v.type == Type::Bool) return make_bool(!v.b);
      throw InputError(c_.at(where), fmt::format("cannot apply '{}' to {}", o, describe(v)));
    }
    return primary();
  }

  ParValue primary() {
    skip();
    const Position start = c_.position();
    char ch = c_.peek();
    if (is_digit(ch) || (ch == '.' && is_digit(c_.peek(1)))) return number();
    if (ch == '"' || ch == '\'') {
      SourceLoc loc;
      return make_string(read_quoted(c_, scope_, loc));
    }
    if (ch == '$') {
      if (std::optional<ParValue> v = variable(c_, scope_)) return *v;
      throw InputError(c_.loc(), "expected a variable name after '$'");
    }
    if (ch == '(') {
      deeper(start);
      c_.advance();
      ++open_;
      skip();
      ParValue v = expr();
      skip();
      if (c_.peek() != ')')
        throw InputError(c_.loc(), fmt::format("unexpected {}: expected ')' to close the '(' at "
                                               "column {}",
                                               show(c_.peek()), start.column));
      c_.advance();
      --open_;
      --depth_;
      return v;
    }
    if ((ch == '.' && c_.peek(1) == '/') || ch == '/') {
      c_.advance_while([](char k) { return is_name_char(k) || k == '.' || k == '/' || k == '-'; });
      return make_string(std::string(c_.since(start)));
    }
    if (is_name_start(ch)) return named(start);
    throw InputError(c_.loc(), fmt::format("unexpected {}: expected a value (a number, a word, a "
                                           "string in quotes, a $variable or an expression)",
                                           show(ch)));
  }

  // A number; `2nd` (a digit and two letters or more) is a word, as in the flesh.
  ParValue number() {
    const Position start = c_.position();
    if (is_digit(c_.peek()) && is_name_start(c_.peek(1)) &&
        (is_name_start(c_.peek(2)) || c_.peek(2) == '_')) {
      c_.advance();
      c_.advance_while(is_name_char);
      return make_string(std::string(c_.since(start)));
    }
    c_.advance_while(is_digit);
    bool dot = c_.peek() == '.';
    if (dot) {
      c_.advance();
      c_.advance_while(is_digit);
    }
    char e = c_.peek();
    if (e == 'e' || e == 'E' || e == 'd' || e == 'D') {
      std::size_t k = 1;
      if (c_.peek(1) == '+' || c_.peek(1) == '-') k = 2;
      if (is_digit(c_.peek(k))) {
        c_.advance(k);
        c_.advance_while(is_digit);
      } else if (!is_name_char(c_.peek(1))) {
        c_.advance();
        throw InputError(c_.span(start), fmt::format("'{}' is not a number: expected digits "
                                                     "after the exponent",
                                                     c_.since(start)));
      }
    }
    std::string text(c_.since(start));
    if (is_name_char(c_.peek()) || c_.peek() == '.') {
      c_.advance_while([](char k) { return is_name_char(k) || k == '.'; });
      throw InputError(c_.span(start), fmt::format("'{}' is not a value: expected a number, a "
                                                   "word, or a string in quotes",
                                                   c_.since(start)));
    }
    double v = *parse_real(text);
    if (!dot && std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9.2e18) {
      bool not_integral = false, too_large = false;
      if (std::optional<long> i = parse_int(text, &not_integral, &too_large)) return make_int(*i);
    }
    return make_real(v);
  }

  // A word, a function call, or a parameter Thorn::name[index].
  ParValue named(const Position& start) {
    c_.advance_while(is_name_char);
    std::string name(c_.since(start));
    if (c_.peek() == ':' && c_.peek(1) == ':') return parameter(start, name);
    if (c_.peek() == '.') { // `wave.edl`: a file name wants quotes (or ./ in front)
      c_.advance_while([](char k) { return is_name_char(k) || k == '.' || k == '/' || k == '-'; });
      throw InputError(c_.span(start),
                       fmt::format("'{}' is not a value: expected a number, a word, or a string "
                                   "in quotes",
                                   c_.since(start)),
                       {{{}, fmt::format("write \"{}\"", c_.since(start))}});
    }
    Cursor look = c_;
    look.skip_blanks();
    if (look.peek() == '(') {
      c_ = look;
      return call(start, name);
    }
    std::string low = support::lower(name);
    if (low == "yes" || low == "true") return make_bool(true);
    if (low == "no" || low == "false") return make_bool(false);
    if (low == "nan") return make_real(std::numeric_limits<double>::quiet_NaN());
    if (low == "inf") return make_real(std::numeric_limits<double>::infinity());
    return make_string(name);
  }

  ParValue parameter(const Position& start, const std::string& thorn) {
    c_.advance(2);
    const Position name_at = c_.position();
    if (!is_name_start(c_.peek()))
      throw InputError(c_.loc(), fmt::format("expected a parameter name after '{}::'", thorn));
    c_.advance_while(is_name_char);
    std::string name(c_.since(name_at));
    int index = -1;
    if (c_.peek() == '[') {
      deeper(start);
      c_.advance();
      ++open_;
      ParValue i = expr();
      skip();
      if (i.type != Type::Int || i.i < 0 || i.i > (1 << 30) || c_.peek() != ']')
        throw InputError(c_.span(start), "invalid array index: expected a non-negative integer "
                                         "in brackets");
      c_.advance();
      --open_;
      --depth_;
      index = int(i.i);
    }
    const ParValue* v = scope_.parameter ? scope_.parameter(thorn, name, index) : nullptr;
    if (v == nullptr)
      throw InputError(c_.span(start),
                       fmt::format("{}::{}{} is not set before this line: a value may refer to a "
                                   "parameter set earlier in the file",
                                   thorn, name, index >= 0 ? fmt::format("[{}]", index) : ""));
    return *v;
  }

  ParValue call(const Position& start, const std::string& name) {
    deeper(start);
    c_.advance(); // '('
    ++open_;
    std::vector<ParValue> args;
    std::vector<SourceLoc> where;
    for (;;) {
      skip();
      where.push_back(c_.loc());
      args.push_back(expr());
      skip();
      if (c_.peek() == ',') {
        c_.advance();
        continue;
      }
      if (c_.peek() == ')') break;
      throw InputError(c_.loc(), fmt::format("unexpected {}: expected ',' or ')' in the call of "
                                             "{}()",
                                             show(c_.peek()), name));
    }
    c_.advance();
    --open_;
    --depth_;
    return apply(c_.span(start), support::lower(name), args);
  }

  static ParValue apply(const SourceLoc& at, const std::string& f, std::vector<ParValue>& args) {
    static const std::vector<std::string> known = {"min", "max", "trunc", "floor", "ceil", "sqrt",
                                                   "sin", "cos", "tan",   "asin",  "acos", "atan",
                                                   "exp", "log", "abs",   "int",   "real", "bool"};
    if (std::find(known.begin(), known.end(), f) == known.end()) {
      std::vector<support::Note> notes = support::did_you_mean(f, known);
      notes.push_back({{},
                       "functions: min max trunc floor ceil sqrt sin cos tan asin acos atan "
                       "exp log abs int real bool"});
      throw InputError(at, fmt::format("unknown function {}()", f), notes);
    }
    if (f == "min" || f == "max") {
      ParValue out = args[0];
      for (const ParValue& a : args) {
        if (!numeric(a))
          throw InputError(at, fmt::format("{}() takes numbers, not {}", f, describe(a)));
        bool pick = f == "min" ? real_of(a) < real_of(out) : real_of(a) > real_of(out);
        if (out.type == Type::Int && a.type == Type::Int)
          out = pick ? a : out;
        else
          out = make_real(pick ? real_of(a) : real_of(out));
      }
      return out;
    }
    if (args.size() != 1)
      throw InputError(at, fmt::format("{}() takes one argument, not {}", f, args.size()));
    const ParValue& a = args[0];
    if (f == "bool") {
      if (a.type == Type::Bool) return a;
      if (a.type == Type::Int) return make_bool(a.i != 0);
      if (a.type == Type::String)
        if (std::optional<bool> b = parse_bool(a.s)) return make_bool(*b);
      throw InputError(at, fmt::format("bool() cannot convert {}", describe(a)));
    }
    if (f == "int" || f == "real") {
      std::optional<double> v;
      if (numeric(a)) v = real_of(a);
      if (a.type == Type::Bool) v = a.b ? 1.0 : 0.0;
      if (a.type == Type::String) v = parse_real(trim(a.s));
      if (!v) throw InputError(at, fmt::format("{}() cannot convert {}", f, describe(a)));
      if (f == "real") return make_real(*v);
      if (!std::isfinite(*v) || std::fabs(*v) >= 9.2e18)
        throw InputError(at, "int() of a value out of the integer range");
      return make_int(long(std::llrint(*v)));
    }
    if (!numeric(a))
      throw InputError(at, fmt::format("{}() takes a number, not {}", f, describe(a)));
    double x = real_of(a);
    double r = f == "trunc"   ? std::trunc(x)
               : f == "floor" ? std::floor(x)
               : f == "ceil"  ? std::ceil(x)
               : f == "sqrt"  ? std::sqrt(x)
               : f == "sin"   ? std::sin(x)
               : f == "cos"   ? std::cos(x)
               : f == "tan"   ? std::tan(x)
               : f == "asin"  ? std::asin(x)
               : f == "acos"  ? std::acos(x)
               : f == "atan"  ? std::atan(x)
               : f == "exp"   ? std::exp(x)
               : f == "log"   ? std::log(x)
                              : std::fabs(x);
    return make_real(r);
  }

  Cursor& c_;
  ParScope& scope_;
  int depth_ = 0;
  int open_ = 0; // unclosed parentheses and brackets: newlines continue the value
};

} // namespace

std::string describe(const ParValue& v) {
  switch (v.type) {
  case Type::Int: return fmt::format("INT {}", v.i);
  case Type::Real: return fmt::format("REAL {}", format_value(v.r, false));
  case Type::Bool: return fmt::format("BOOLEAN {}", v.b ? "yes" : "no");
  case Type::String: return fmt::format("STRING \"{}\"", support::printable(v.s));
  }
  return type_name(v.type);
}

std::vector<ParValue> read_value(Cursor& c, ParScope& scope, std::string& written, SourceLoc& loc) {
  c.skip_blanks();
  const Position start = c.position();
  std::vector<ParValue> values = ValueReader(c, scope).read();
  std::string_view text = c.since(start);
  written = trim(text.substr(0, text.find('\n')));
  std::size_t first_line = std::min(text.size(), text.find('\n'));
  loc = c.at(start, std::max(1, int(trim(text.substr(0, first_line)).size())));
  return values;
}

std::string read_quoted(Cursor& c, const ParScope& scope, SourceLoc& loc) {
  const Position open = c.position();
  const char quote = c.peek();
  c.advance();
  std::string out;
  const std::size_t first_eol = c.text().find('\n', open.offset);
  while (!c.at_end() && c.peek() != quote) {
    char ch = c.peek();
    if (ch == '\\' && (c.peek(1) == quote || c.peek(1) == '\\')) {
      out += c.peek(1);
      c.advance(2);
    } else if (ch == '$') {
      if (std::optional<ParValue> v = variable(c, scope)) {
        out += v->type == Type::String ? v->s
               : v->type == Type::Bool ? (v->b ? "yes" : "no")
               : v->type == Type::Int  ? std::to_string(v->i)
                                       : fmt::format("{:.15g}", v->r);
      } else {
        out += ch;
        c.advance();
      }
    } else if (ch == '#' && c.line() != open.line) {
      // A comment on a later line of the string, up to the line's end or the closing quote.
      c.advance_while([&](char k) { return k != '\n' && k != quote; });
    } else {
      out += ch;
      c.advance();
    }
  }
  if (c.at_end()) {
    std::size_t end = first_eol == std::string::npos ? c.text().size() : first_eol;
    throw InputError(
        c.at(open, std::max(1, int(end - open.offset))),
        fmt::format("unterminated string: expected a closing '{}'", quote),
        {{{}, fmt::format("a string may span several lines; it ends at the next {}", quote)}});
  }
  c.advance();
  std::size_t end = std::min(c.offset(), first_eol);
  loc = c.at(open, int(end - open.offset));
  return out;
}

} // namespace saguaro::param::detail
