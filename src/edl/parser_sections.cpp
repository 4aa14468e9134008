// The EDL parser's sections: options, declarations, parameters (Saguaro's one-line form and
// Kranc's `name:` / `description:` / `default:` / `range:` form), groups, derivative
// definitions (stencil form and Kranc's operator form) and calculations with their equations.
#include "edl/inherited.hpp"
#include "edl/parser.hpp"
#include "edl/parser_internal.hpp"

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

namespace saguaro::edl {

// ---- sections -----------------------------------------------------------------------------
void Parser::parse_option(Thorn& thorn) {
  const Token& word = next();
  if (word.text == "inherit") {
    if (!peek().is(TokenKind::Name)) throw error(peek(), "expected a thorn name after 'inherit'");
    while (peek().is(TokenKind::Name)) {
      const Token& first = peek();
      thorn.inherits.push_back(parse_uname("a thorn name"));
      thorn.inherit_locs.push_back(
          SourceLoc{file_, first.line, first.column, int(thorn.inherits.back().size())});
    }
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

void Parser::parse_section(Thorn& thorn) {
  next(); // begin
  const Token& kind = peek();
  if (kind.is_name("calculation")) {
    next();
    thorn.calculations.push_back(parse_calculation());
    return;
  }
  if (kind.is_name("group")) {
    parse_group(thorn);
    return;
  }
  if (!kind.is_name("variables") && !kind.is_name("temporaries") && !kind.is_name("parameters") &&
      !kind.is_name("derivatives")) {
    record(error(kind, fmt::format("unknown section {}: expected one of variables, temporaries, "
                                   "parameters, group, derivatives, calculation",
                                   show(kind))));
    skip_unknown_section();
    return;
  }
  const std::string word = next().text;
  attempt(pos_, [&] { end_of_line(); });
  section_lines(word, "", "", [&](bool failed) {
    const Token& t = peek();
    // The later lines of a Kranc parameter whose first line was wrong: skipped, not read as
    // parameters of their own.
    if (failed && word == "parameters" && peek(1).is(TokenKind::Colon) &&
        (t.is_name("description") || t.is_name("default") || t.is_name("range"))) {
      skip_line();
      return true;
    }
    if (word == "variables")
      thorn.variables.push_back(parse_declared_tensor());
    else if (word == "temporaries")
      thorn.temporaries.push_back(parse_declared_tensor());
    else if (word == "parameters")
      thorn.parameters.push_back(t.is_name("name") && peek(1).is(TokenKind::Colon) &&
                                         !peek(2).is_name("real") && !peek(2).is_name("int") &&
                                         !peek(2).is_name("keyword") && !peek(2).is_name("boolean")
                                     ? parse_kranc_parameter()
                                     : parse_parameter());
    else
      thorn.derivatives.push_back(parse_derivative_def());
    return false;
  });
}

// `begin group NAME`, then members: grid functions (tensors) separated by spaces or lines,
// each line optionally ending in `: "description"`. A member not declared in `variables` is
// declared by the group.
void Parser::parse_group(Thorn& thorn) {
  next(); // group
  GroupDecl group;
  group.loc = loc(peek());
  attempt(pos_, [&] {
    group.name = parse_uname("a group name");
    end_of_line();
  });
  const bool closed = section_lines("group", "", "", [&](bool) {
    parse_group_line(group);
    return false;
  });
  if (closed) thorn.groups.push_back(std::move(group));
}

// One line of a group: members, then optionally `: "description"`.
void Parser::parse_group_line(GroupDecl& group) {
  const std::size_t first = group.members.size();
  while (peek().is(TokenKind::Name)) group.members.emplace_back(parse_declared_tensor(), "");
  if (group.members.size() == first)
    throw error(peek(), fmt::format("expected a grid function in group '{}', found {}", group.name,
                                    show(peek())));
  if (peek().is(TokenKind::Colon)) {
    next();
    const std::string description =
        expect(TokenKind::String, "a quoted description after ':'").text;
    for (std::size_t m = first; m < group.members.size(); ++m)
      group.members[m].second = description;
  }
  end_of_line();
}

TensorRef Parser::parse_declared_tensor() {
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

ParameterDecl Parser::parse_parameter() {
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

// Kranc's form, one attribute per line (the description is free text up to `default:`):
//   name: amp
//   description: The amplitude of the wave
//   default: 1.0
//   range: -infinity to infinity
// A real parameter; the range is optional.
ParameterDecl Parser::parse_kranc_parameter() {
  ParameterDecl p;
  next(); // name
  next(); // :
  const Token& name = expect(TokenKind::Name, "the parameter's name after 'name:'");
  p.name = name.text;
  p.loc = loc(name);
  p.type = ParameterType::Real;
  end_of_line();
  skip_newlines();
  expect_word("description", fmt::format("'description:' after 'name: {}'", p.name));
  expect(TokenKind::Colon, "':' after 'description'");
  if (peek().is(TokenKind::String)) p.description = next().text;
  end_of_line();
  skip_newlines();
  expect_word("default", fmt::format("'default:' after the description of '{}'", p.name));
  expect(TokenKind::Colon, "':' after 'default'");
  p.has_default = true;
  p.default_loc = loc(peek());
  p.default_value = parse_expression();
  end_of_line();
  skip_newlines();
  if (peek().is_name("range") && peek(1).is(TokenKind::Colon)) {
    next();
    next();
    p.has_range = true;
    p.range_loc = loc(peek());
    p.range_min = parse_range_end(true);
    expect_word("to", "'to' between the ends of a range (as in 'range: 0 to 1')");
    p.range_max = parse_range_end(false);
    end_of_line();
  }
  return p;
}

void Parser::parse_keyword_values(ParameterDecl& p) {
  p.keyword_values.push_back(expect(TokenKind::String, "a quoted keyword value").text);
  while (peek().is(TokenKind::String) ||
         (peek().is(TokenKind::Comma) && peek(1).is(TokenKind::String))) {
    if (peek().is(TokenKind::Comma)) next();
    p.keyword_values.push_back(next().text);
  }
}

// `infinity`, `-infinity` (open ends) or a constant expression.
ExprPtr Parser::parse_range_end(bool lower) {
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

// Stencil form `Dplus u_i = (u_(i+1) - u_(i))/h`, or Kranc's operator form
// `PDstandard2nd_ij = DZero_i DZero_j` (directions on the operator, no operand).
DerivativeDef Parser::parse_derivative_def() {
  DerivativeDef def;
  const Token& name = peek();
  if (!name.is(TokenKind::Name))
    throw error(name, fmt::format("expected a derivative operator name (as in 'Dplus u_i = ...' "
                                  "or 'PDstandard_i = DZero_i'), found {}",
                                  show(name)));
  next();
  def.name = name.text;
  def.loc = loc(name);
  def.algebra =
      (peek().is(TokenKind::Underscore) || peek().is(TokenKind::Caret)) && !peek().space_before;
  if (def.algebra) {
    def.operand = TensorRef{"", parse_indices(), loc(name)};
  } else {
    const Token& operand = expect(TokenKind::Name, fmt::format("the operand of '{}' (as in "
                                                               "'{} u_i = ...') or its "
                                                               "directions (as in '{}_i = ...')",
                                                               name.text, name.text, name.text));
    def.operand = TensorRef{operand.text, parse_indices(), loc(operand)};
    if (def.operand.indices.empty())
      throw error(operand, fmt::format("the operand '{}' needs a direction index, as in '{}_i'",
                                       operand.text, operand.text));
  }
  for (const Index& index : def.operand.indices)
    if (!index.is_symbol() || index.upper)
      throw EdlError(index.loc, "an operator's directions are lower index letters, as in 'u_i' "
                                "or 'PD_ij'");
  expect(TokenKind::Equals, "'=' after the operator being defined");
  in_definition_ = !def.algebra;
  in_algebra_ = def.algebra;
  def.rhs = parse_expression();
  in_definition_ = in_algebra_ = false;
  end_of_line();
  return def;
}

CalculationDecl Parser::parse_calculation() {
  CalculationDecl calc;
  calc.loc = loc(peek());
  attempt(pos_, [&] { parse_calculation_header(calc); });
  section_lines("calculation", fmt::format(" for '{}'", calc.name),
                fmt::format(" (calculation '{}' is still open)", calc.name), [&](bool) {
                  calc.equations.push_back(parse_equation());
                  return false;
                });
  return calc;
}

void Parser::parse_calculation_header(CalculationDecl& calc) {
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
    expect_word("boundary", "'boundary' after 'on' (the one domain a calculation may name)");
    calc.on_boundary = true;
  }
  end_of_line();
}

Equation Parser::parse_equation() {
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
    const std::string lhs = parse_name(name);
    eq.lhs = TensorRef{lhs, {}, SourceLoc{file_, name.line, name.column, int(lhs.size())}};
    eq.lhs.indices = parse_indices();
    eq.loc =
        SourceLoc{file_, first.line, first.column, name.column + int(lhs.size()) - first.column};
  } else {
    next();
    const std::string lhs = parse_name(first);
    eq.lhs = TensorRef{lhs, {}, SourceLoc{file_, first.line, first.column, int(lhs.size())}};
    eq.lhs.indices = parse_indices();
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

} // namespace saguaro::edl
