// Derivative operators of `begin derivatives` (part of pass `indices`): each definition checked
// and entered under its name, several per name for different index patterns (`PD_i`, `PD_ij`,
// `PD_ii`); Kranc's operator form (`PDstandard2nd_ij = DZero_i DZero_j`, expressions in
// `shift_i` and `spacing_i`) turned into the stencil form the stencils pass applies, exactly:
// the operator is expanded into a sum of shifts with rational weights, like terms combined.
#include "calc/lower_passes.hpp"

#include "calc/fd_coefficients.hpp"
#include "calc/rational.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::calc {

using edl::EdlError;
using edl::Expr;
using edl::ExprPtr;
using edl::Index;

namespace {

// One term of an operator: weight * prod(spacing_s ^ h[s]) * prod(other) * shift by `shift`.
struct Term {
  std::map<std::string, int> shift;
  Rational weight{1};
  std::map<std::string, int> h;
  std::vector<ExprPtr> other; // scalar factors: parameters, constants, calls, inexact numbers
};
using Poly = std::vector<Term>;

constexpr int kMaxDepth = 32;   // operators defined through operators, at most this deep
constexpr int kMaxTerms = 4096; // terms of one expanded operator
constexpr int kMaxPower = 16;   // |n| of `shift_i**n`, `DPlus_i**n`

bool same_kind(const Term& a, const Term& b) {
  return a.shift == b.shift && a.h == b.h && a.other == b.other;
}

// Like terms combined, zero terms dropped, in a fixed order.
Poly combine(Poly p) {
  Poly out;
  for (Term& t : p) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Term& o) { return same_kind(o, t); });
    if (it == out.end())
      out.push_back(std::move(t));
    else
      it->weight += t.weight;
  }
  out.erase(
      std::remove_if(out.begin(), out.end(), [](const Term& t) { return t.weight.is_zero(); }),
      out.end());
  return out;
}

Term times(const Term& a, const Term& b) {
  Term t = a;
  t.weight *= b.weight;
  for (const auto& [s, n] : b.shift)
    if ((t.shift[s] += n) == 0) t.shift.erase(s);
  for (const auto& [s, n] : b.h)
    if ((t.h[s] += n) == 0) t.h.erase(s);
  t.other.insert(t.other.end(), b.other.begin(), b.other.end());
  std::sort(t.other.begin(), t.other.end());
  return t;
}

ExprPtr node(Expr::Kind kind, const edl::SourceLoc& loc, std::vector<ExprPtr> args,
             double value = 0, std::string name = {}, std::vector<Index> indices = {}) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->loc = loc;
  e->args = std::move(args);
  e->value = value;
  e->name = std::move(name);
  e->indices = std::move(indices);
  for (const ExprPtr& a : e->args) e->height = std::max(e->height, a->height + 1);
  return e;
}

// A number as an exact rational where its decimal digits make one (0.5, 2, 1e-3).
bool exact_rational(double v, Rational& out) {
  double scale = 1;
  for (int k = 0; k <= 9; ++k, scale *= 10) {
    const double x = v * scale;
    if (std::abs(x) > 9.0e15) return false;
    if (std::abs(x - std::round(x)) <= 1e-9 * std::max(1.0, std::abs(x))) {
      out = Rational(static_cast<std::int64_t>(std::llround(x)), static_cast<std::int64_t>(scale));
      return true;
    }
  }
  return false;
}

int integer_argument(const Expr& e, const char* what) {
  double v = 0;
  if (e.kind == Expr::Kind::Number)
    v = e.value;
  else if (e.kind == Expr::Kind::Negate && e.args[0]->kind == Expr::Kind::Number)
    v = -e.args[0]->value;
  else
    throw EdlError(e.loc, fmt::format("expected an integer {}", what));
  if (v != std::round(v) || std::abs(v) > 64)
    throw EdlError(e.loc, fmt::format("expected an integer {} (at most 64)", what));
  return static_cast<int>(v);
}

class Expander {
public:
  explicit Expander(const LoweringState& state) : s(state) {}

  // The operator `def` as a sum of shifts, its direction letters renamed by `rename`.
  Poly expand(const edl::DerivativeDef& def, const std::map<std::string, std::string>& rename,
              const edl::SourceLoc& use, int depth) {
    if (depth > kMaxDepth)
      throw EdlError(use, fmt::format("derivative operator '{}' is defined in terms of itself "
                                      "(or more than {} operators deep)",
                                      def.name, kMaxDepth));
    Frame frame{&def, rename, depth};
    return eval(*def.rhs, frame);
  }

private:
  struct Frame {
    const edl::DerivativeDef* def;
    std::map<std::string, std::string> rename; // the definition's letters -> the outer ones
    int depth;
  };

  std::string slot(const Index& i, const Frame& f, const char* what) const {
    if (!i.is_symbol() || i.upper || !f.rename.count(i.symbol))
      throw EdlError(i.loc,
                     fmt::format("{} takes one of the direction letters of '{}' ({}), "
                                 "as in '{}_{}'",
                                 what, f.def->name, letters(f), what, f.rename.begin()->first));
    return f.rename.at(i.symbol);
  }
  static std::string letters(const Frame& f) {
    std::vector<std::string> out;
    for (const auto& [k, v] : f.rename) out.push_back(k);
    return fmt::format("{}", fmt::join(out, ", "));
  }
  static Poly scalar(ExprPtr e) { return {Term{{}, Rational(1), {}, {std::move(e)}}}; }

  Poly eval(const Expr& e, const Frame& f) {
    switch (e.kind) {
    case Expr::Kind::Number: {
      Rational r;
      if (exact_rational(e.value, r)) return {Term{{}, r, {}, {}}};
      return scalar(std::make_shared<Expr>(e));
    }
    case Expr::Kind::Tensor: return tensor(e, f);
    case Expr::Kind::Negate: {
      Poly p = eval(*e.args[0], f);
      for (Term& t : p) t.weight = -t.weight;
      return p;
    }
    case Expr::Kind::Add:
    case Expr::Kind::Subtract: {
      Poly out;
      for (const auto& [term, sign] : Lowerer::chain(e)) {
        Poly p = eval(*term, f);
        for (Term& t : p) {
          if (sign < 0) t.weight = -t.weight;
          out.push_back(std::move(t));
        }
      }
      return limited(combine(std::move(out)), e);
    }
    case Expr::Kind::Multiply: {
      Poly out{Term{}};
      for (const auto& [factor, sign] : Lowerer::chain(e)) out = product(out, eval(*factor, f), e);
      return out;
    }
    case Expr::Kind::Divide: return product(eval(*e.args[0], f), inverse(*e.args[1], f), e);
    case Expr::Kind::Power: return power(e, f);
    case Expr::Kind::Call: return call(e, f);
    case Expr::Kind::Derivative:
    case Expr::Kind::Modulo: break;
    }
    throw EdlError(e.loc, "a derivative definition is a sum of products of shifts, spacings, "
                          "operators, numbers and parameters; this is none of them");
  }

  Poly limited(Poly p, const Expr& e) const {
    if (static_cast<int>(p.size()) > kMaxTerms)
      throw EdlError(e.loc, fmt::format("this operator expands to more than {} terms", kMaxTerms));
    return p;
  }

  Poly product(const Poly& a, const Poly& b, const Expr& e) const {
    if (a.size() * b.size() > std::size_t(kMaxTerms) * 4)
      throw EdlError(e.loc, fmt::format("this operator expands to more than {} terms", kMaxTerms));
    Poly out;
    for (const Term& x : a)
      for (const Term& y : b) out.push_back(times(x, y));
    return limited(combine(std::move(out)), e);
  }

  // 1/x for a single term: a shift, a spacing, a number, a parameter.
  Poly inverse(const Expr& e, const Frame& f) {
    Poly p = eval(e, f);
    if (p.size() != 1)
      throw EdlError(e.loc, "a derivative definition may divide only by a single term (a "
                            "number, a spacing, a shift or a product of them), not by a sum");
    Term t = p[0];
    if (t.weight.is_zero()) throw EdlError(e.loc, "division by zero");
    t.weight = Rational(1) / t.weight;
    for (auto& [s, n] : t.shift) n = -n;
    for (auto& [s, n] : t.h) n = -n;
    for (ExprPtr& o : t.other)
      o = node(Expr::Kind::Divide, o->loc, {node(Expr::Kind::Number, o->loc, {}, 1.0), o});
    return {t};
  }

  Poly power(const Expr& e, const Frame& f) {
    const int n = integer_argument(*e.args[1], "exponent in a derivative definition");
    if (std::abs(n) > kMaxPower)
      throw EdlError(e.args[1]->loc,
                     fmt::format("exponent {} is too large (at most {})", n, kMaxPower));
    Poly base = n < 0 ? inverse(*e.args[0], f) : eval(*e.args[0], f);
    Poly out{Term{}};
    for (int k = 0; k < std::abs(n); ++k) out = product(out, base, e);
    return out;
  }

  Poly tensor(const Expr& e, const Frame& f) {
    const edl::DerivativeDef& def = *f.def;
    if (!def.algebra && e.name == def.operand.name) { // the operand, shifted: u_(i+1,j-1)
      Term t;
      for (const Index& i : e.indices)
        if ((t.shift[slot(i, f, "the operand")] += i.shift) == 0)
          t.shift.erase(f.rename.at(i.symbol));
      return {t};
    }
    if ((!def.algebra && e.name == "h") || (def.algebra && e.name == "spacing")) {
      Term t;
      if (e.indices.size() > 1) throw EdlError(e.loc, fmt::format("'{}' takes one index", e.name));
      if (e.indices.empty() && f.rename.size() != 1)
        throw EdlError(e.loc, "this operator has several directions: say which spacing, as in "
                              "'h_i'");
      t.h[e.indices.empty() ? f.rename.begin()->second : slot(e.indices[0], f, e.name.c_str())] = 1;
      return {t};
    }
    if (def.algebra && e.name == "shift") {
      if (e.indices.size() != 1)
        throw EdlError(e.loc, "'shift' takes one direction letter, as in 'shift_i'");
      Term t;
      t.shift[slot(e.indices[0], f, "shift")] = 1;
      return {t};
    }
    if (def.algebra && (s.thorn_operators.count(e.name) || is_kranc_operator(e.name)))
      return referenced(e, f);
    if (e.indices.empty() && (e.name == "PI" || e.name == "E" || s.parameter_index.count(e.name)))
      return scalar(std::make_shared<Expr>(e));
    if (def.algebra)
      throw EdlError(e.loc, fmt::format("'{}' is not known in an operator definition: expected "
                                        "shift_i, spacing_i, an operator (DPlus_i, DMinus_i, "
                                        "DZero_i or one of this block), a number or a parameter",
                                        e.name));
    throw EdlError(e.loc, fmt::format("a derivative definition may only use its operand '{}', "
                                      "the spacing 'h', numbers, constants and parameters; "
                                      "found '{}'",
                                      def.operand.name, e.name));
  }

  static bool is_kranc_operator(const std::string& name) {
    return name == "DPlus" || name == "DMinus" || name == "DZero";
  }

  // `DZero_i` inside an operator definition: that operator's expansion along the letters given.
  Poly referenced(const Expr& e, const Frame& f) {
    std::vector<std::string> letters;
    for (const Index& i : e.indices) letters.push_back(slot(i, f, e.name.c_str()));
    if (auto it = s.thorn_operators.find(e.name); it != s.thorn_operators.end()) {
      for (const edl::DerivativeDef* d : it->second) {
        if (d->operand.indices.size() != letters.size()) continue;
        std::map<std::string, std::string> rename;
        bool fits = true;
        for (std::size_t k = 0; k < letters.size(); ++k) {
          auto [r, inserted] = rename.emplace(d->operand.indices[k].symbol, letters[k]);
          fits = fits && (inserted || r->second == letters[k]);
        }
        if (fits) return expand(*d, rename, e.loc, f.depth + 1);
      }
      throw EdlError(e.loc, fmt::format("no definition of '{}' takes {} direction ind{}", e.name,
                                        letters.size(), letters.size() == 1 ? "ex" : "ices"));
    }
    if (letters.size() != 1)
      throw EdlError(e.loc,
                     fmt::format("'{}' takes one direction letter, as in '{}_i'", e.name, e.name));
    const std::string& a = letters[0];
    // Kranc's DPlus = (shift - 1)/spacing, DMinus = (1 - 1/shift)/spacing, DZero = their mean.
    Term up{{{a, 1}}, Rational(1), {{a, -1}}, {}}, here{{}, Rational(-1), {{a, -1}}, {}};
    Term down{{{a, -1}}, Rational(-1), {{a, -1}}, {}}, centre{{}, Rational(1), {{a, -1}}, {}};
    if (e.name == "DPlus") return {up, here};
    if (e.name == "DMinus") return {centre, down};
    up.weight = Rational(1, 2);
    down.weight = Rational(-1, 2);
    return {up, down};
  }

  // Kranc's StandardCenteredDifferenceOperator(p, m, i) (the p-th derivative on the points
  // -m..m) and StandardUpwindDifferenceOperator(p, m1, m2, i) (on -m1..m2); other functions of
  // numbers and parameters are scalar factors.
  Poly call(const Expr& e, const Frame& f) {
    const bool centered = e.name == "StandardCenteredDifferenceOperator";
    const bool upwind = e.name == "StandardUpwindDifferenceOperator";
    if (!centered && !upwind) {
      for (const ExprPtr& a : e.args) {
        Poly p = eval(*a, f);
        for (const Term& t : p)
          if (!t.shift.empty() || !t.h.empty())
            throw EdlError(a->loc, "a function's argument in a derivative definition cannot hold "
                                   "a shift, a spacing or an operator");
      }
      return scalar(std::make_shared<Expr>(e));
    }
    const std::size_t arity = centered ? 3 : 4;
    if (e.args.size() != arity)
      throw EdlError(e.loc, fmt::format("'{}' takes {} arguments ({}), given {}", e.name, arity,
                                        centered ? "p, m, i" : "p, m1, m2, i", e.args.size()));
    const int p = integer_argument(*e.args[0], "derivative order p");
    const int lo = integer_argument(*e.args[1], "number of points");
    const int hi = centered ? lo : integer_argument(*e.args[2], "number of points");
    const Expr& dir = *e.args[arity - 1];
    if (dir.kind != Expr::Kind::Tensor || !dir.indices.empty() || dir.name.size() != 1 ||
        !f.rename.count(dir.name))
      throw EdlError(dir.loc, fmt::format("expected one of the operator's direction letters ({})",
                                          letters(f)));
    std::vector<int> points;
    for (int k = -lo; k <= hi; ++k) points.push_back(k);
    if (p < 0 || lo < 0 || hi < 0 || static_cast<int>(points.size()) <= p)
      throw EdlError(
          e.loc, fmt::format("'{}' needs more points than the derivative's order {}", e.name, p));
    const std::string& a = f.rename.at(dir.name);
    Poly out;
    for (const StencilWeight& w : fd_weights(p, points)) {
      Term t;
      if (w.offset != 0) t.shift[a] = w.offset;
      t.weight = w.weight;
      if (p != 0) t.h[a] = -p;
      out.push_back(std::move(t));
    }
    return combine(std::move(out));
  }

  const LoweringState& s;
};

// The operator as a stencil-form definition: sum of weight * _u_(i+a, j+b) * h_i^n * others.
edl::DerivativeDef stencil_form(const edl::DerivativeDef& def, const Poly& poly) {
  edl::DerivativeDef out;
  out.name = def.name;
  out.loc = def.loc;
  out.operand = edl::TensorRef{"_u", def.operand.indices, def.operand.loc};
  const edl::SourceLoc& at = def.rhs->loc;
  // Spacing powers every term has are written once, outside the sum: (u1 - u0) / h.
  std::map<std::string, int> common = poly.empty() ? std::map<std::string, int>{} : poly[0].h;
  for (const Term& t : poly)
    for (auto it = common.begin(); it != common.end();)
      it = t.h.count(it->first) && t.h.at(it->first) == it->second ? std::next(it)
                                                                   : common.erase(it);
  auto spacing_power = [&](ExprPtr term, const std::string& letter, int n) {
    Index i;
    i.symbol = letter;
    i.loc = at;
    ExprPtr h = node(Expr::Kind::Tensor, at, {}, 0, "h", {i});
    return node(Expr::Kind::Multiply, at,
                {term, node(Expr::Kind::Power, at, {h, node(Expr::Kind::Number, at, {}, n)})});
  };
  ExprPtr sum;
  for (Term t : poly) {
    for (const auto& [letter, n] : common) t.h.erase(letter);
    std::vector<Index> shifted;
    std::set<std::string> seen;
    for (const Index& i : def.operand.indices) {
      if (!seen.insert(i.symbol).second) continue;
      Index s = i;
      s.shift = t.shift.count(i.symbol) ? t.shift.at(i.symbol) : 0;
      shifted.push_back(s);
    }
    ExprPtr term = node(Expr::Kind::Tensor, at, {}, 0, "_u", shifted);
    term = node(Expr::Kind::Multiply, at,
                {node(Expr::Kind::Number, at, {}, t.weight.to_double()), term});
    for (const auto& [letter, n] : t.h) term = spacing_power(term, letter, n);
    for (const ExprPtr& o : t.other) term = node(Expr::Kind::Multiply, at, {term, o});
    sum = sum ? node(Expr::Kind::Add, at, {sum, term}) : term;
  }
  if (sum) {
    sum = std::make_shared<Expr>(*sum);
    std::const_pointer_cast<Expr>(sum)->parenthesized = true;
    for (const auto& [letter, n] : common) sum = spacing_power(sum, letter, n);
  }
  out.rhs = sum ? sum : node(Expr::Kind::Number, at, {}, 0.0);
  return out;
}

// Two definitions of one name clash when they take the same index pattern.
bool same_pattern(const edl::DerivativeDef& a, const edl::DerivativeDef& b) {
  const auto& x = a.operand.indices;
  const auto& y = b.operand.indices;
  if (x.size() != y.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k)
    for (std::size_t l = 0; l < x.size(); ++l)
      if ((x[k].symbol == x[l].symbol) != (y[k].symbol == y[l].symbol)) return false;
  return true;
}

} // namespace

void define_operators(LoweringState& state) {
  Lowerer lowerer(state);
  for (const auto& d : state.thorn->derivatives) {
    for (const edl::DerivativeDef* other : state.thorn_operators[d.name])
      if (same_pattern(*other, d))
        throw EdlError(d.loc,
                       fmt::format("derivative operator '{}' is defined twice for the same "
                                   "indices",
                                   d.name),
                       {{other->loc, "first defined here"}});
    state.thorn_operators[d.name].push_back(&d);
  }
  for (const auto& d : state.thorn->derivatives) {
    if (!d.algebra) {
      lowerer.check_definition(d, *d.rhs);
      state.operators[d.name].push_back(&d);
      continue;
    }
    std::map<std::string, std::string> identity;
    for (const Index& i : d.operand.indices) identity[i.symbol] = i.symbol;
    const Poly poly = Expander(state).expand(d, identity, d.loc, 0);
    state.synthesized_operators.push_back(stencil_form(d, poly));
    lowerer.check_definition(state.synthesized_operators.back(),
                             *state.synthesized_operators.back().rhs);
    state.operators[d.name].push_back(&state.synthesized_operators.back());
  }
}

const edl::DerivativeDef* select_operator(const LoweringState& state, const std::string& name,
                                          const std::vector<int>& axes) {
  auto it = state.operators.find(name);
  if (it == state.operators.end()) return nullptr;
  const edl::DerivativeDef* best = nullptr;
  int best_score = -1;
  for (const edl::DerivativeDef* d : it->second) {
    const auto& slots = d->operand.indices;
    if (slots.size() != axes.size()) continue;
    int score = 0;
    bool fits = true;
    for (std::size_t k = 0; k < slots.size(); ++k)
      for (std::size_t l = k + 1; l < slots.size(); ++l)
        if (slots[k].symbol == slots[l].symbol) {
          fits = fits && axes[k] == axes[l];
          ++score;
        }
    if (fits && score > best_score) {
      best = d;
      best_score = score;
    }
  }
  if (best != nullptr) return best;
  for (const edl::DerivativeDef* d : it->second) { // `Dxx u_ii` used as `Dxx_1 f`
    std::set<std::string> distinct;
    for (const Index& i : d->operand.indices) distinct.insert(i.symbol);
    if (distinct.size() == axes.size() && distinct.size() < d->operand.indices.size()) return d;
  }
  return nullptr;
}

const edl::DerivativeDef* one_direction_operator(const LoweringState& state,
                                                 const std::string& name) {
  auto it = state.operators.find(name);
  if (it == state.operators.end()) return nullptr;
  for (const edl::DerivativeDef* d : it->second)
    if (d->operand.indices.size() == 1) return d;
  return nullptr;
}

} // namespace saguaro::calc
