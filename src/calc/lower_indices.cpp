// Pass `indices`, index analysis and tensor expansion: the derivative operators' definitions
// and direction indices and the groups' members are checked (once); each calculation is
// opened (its name unique, its schedule); each equation's left side is resolved, the free
// and summed indices of its right side found and checked against it, and the equation
// expanded into one component equation per value of its free indices. Summed indices are
// expanded where the stencils pass builds the sums.
#include "calc/lower_passes.hpp"

#include "edl/parser.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::calc {

using edl::EdlError;
using edl::Expr;
using edl::Index;

namespace {

std::string show_indices(const std::vector<IndexUse>& uses) {
  if (uses.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& u : uses) parts.push_back((u.upper ? "^" : "_") + u.symbol);
  return fmt::format("{}", fmt::join(parts, " "));
}

} // namespace

// ---- declarations ---------------------------------------------------------------------------

// A definition may refer to its operand (shifted along its own directions), `h` (the
// spacing), numbers, constants, parameters and functions.
void Lowerer::check_definition(const edl::DerivativeDef& d, const Expr& e) const {
  std::set<std::string> slots;
  for (const Index& i : d.operand.indices) slots.insert(i.symbol);
  if (e.kind == Expr::Kind::Tensor) {
    if (e.name == d.operand.name) {
      if (e.indices.empty())
        throw EdlError(e.loc, fmt::format("the operand '{}' needs its shifted index, as in "
                                          "'{}_(i+1)'",
                                          e.name, e.name));
      for (const Index& i : e.indices)
        if (!i.is_symbol() || !slots.count(i.symbol) || i.upper)
          throw EdlError(i.loc, fmt::format("expected one of the operator's direction indices "
                                            "{} (lower, possibly shifted)",
                                            fmt::join(slots, ", ")));
      return;
    }
    if (e.name == "h") {
      for (const Index& i : e.indices)
        if (!i.is_symbol() || !slots.count(i.symbol))
          throw EdlError(i.loc, fmt::format("'h' takes one of the operator's direction indices "
                                            "{}",
                                            fmt::join(slots, ", ")));
      if (e.indices.size() > 1) throw EdlError(e.loc, "'h' takes at most one index");
      if (e.indices.empty() && slots.size() > 1)
        throw EdlError(e.loc, "this operator has several directions: say which spacing, as in "
                              "'h_i'");
      return;
    }
    if (e.name == "PI" || e.name == "E" || s.parameter_index.count(e.name)) {
      if (!e.indices.empty()) throw EdlError(e.loc, fmt::format("'{}' takes no indices", e.name));
      return;
    }
    throw EdlError(e.loc, fmt::format("a derivative definition may only use its operand '{}', "
                                      "the spacing 'h', numbers, constants and parameters; "
                                      "found '{}'",
                                      d.operand.name, e.name));
  }
  if (e.kind == Expr::Kind::Derivative)
    throw EdlError(e.loc, "a derivative definition cannot apply another derivative operator; "
                          "write the stencil with shifted operands");
  if (e.kind == Expr::Kind::Call) check_call(e);
  for (const auto& a : e.args) check_definition(d, *a);
}

void analyse_declarations(LoweringState& state) {
  Lowerer lowerer(state);
  define_operators(state);
  for (const auto& group : state.thorn->groups) {
    std::vector<std::string>& members = state.program.groups[group.name];
    for (const auto& [ref, description] : group.members) {
      if (state.component_of.count(ref.name) && ref.indices.empty()) {
        members.push_back(ref.name); // one component by its flat name
        continue;
      }
      auto it = state.tensors.find(ref.name);
      if (it == state.tensors.end())
        throw lowerer.undeclared(ref.name, ref.loc, "a grid function", true);
      if (it->second.kind != TensorSymbol::Kind::Variable)
        throw EdlError(ref.loc,
                       fmt::format("'{}' is a temporary; a group holds grid functions", ref.name),
                       {{it->second.loc, "declared here"}});
      if (static_cast<int>(ref.indices.size()) != it->second.rank)
        throw EdlError(ref.loc,
                       fmt::format("'{}' has {} ind{}, listed with {}", ref.name, it->second.rank,
                                   it->second.rank == 1 ? "ex" : "ices", ref.indices.size()),
                       {{it->second.loc, "declared here"}});
      for (const auto& c : Lowerer::components(ref.name, it->second.rank)) members.push_back(c);
    }
  }
}

// Opening a calculation belongs to the first pass that works per calculation, so that its
// checks come in the file's order among the other calculations' errors.
void open_calculation(LoweringState& state, CalculationLowering& work) {
  const edl::CalculationDecl& decl = *work.decl;
  auto [it, inserted] = state.calculation_at.emplace(decl.name, decl.loc);
  if (!inserted)
    throw EdlError(decl.loc, fmt::format("calculation '{}' is defined twice", decl.name),
                   {{it->second, "first defined here"}});
  Calculation& calc = work.calc;
  calc.name = decl.name;
  calc.loc = decl.loc;
  // MoL_RHSBoundaries is MoL's group for the right-hand sides on the outer boundary: a
  // calculation there runs on the boundary, as one marked `on boundary` does.
  calc.on_boundary = decl.on_boundary || support::lower(decl.schedule_bin) == "mol_rhsboundaries";
  if (decl.equations.empty())
    throw EdlError(decl.loc, fmt::format("calculation '{}' has no equations", decl.name));
  for (const auto& eq : decl.equations)
    work.has_time_derivative = work.has_time_derivative || eq.time_derivative;
  if (decl.schedule_bin.empty()) {
    calc.schedule_bin = work.has_time_derivative ? "MoL_CalcRHS" : "analysis";
    calc.schedule_word = work.has_time_derivative ? "in" : "at";
  } else {
    calc.schedule_bin = decl.schedule_bin;
    calc.schedule_word = decl.schedule_word;
  }
}

// ---- equations ------------------------------------------------------------------------------

// A component written by its flat name (`El1 = ...`, `D_t El1 = ...`) as its tensor with
// fixed components (`El_1`).
edl::TensorRef resolve_component(const LoweringState& state, const edl::TensorRef& ref) {
  auto c = state.component_of.find(ref.name);
  if (c == state.component_of.end() || !ref.indices.empty()) return ref;
  edl::TensorRef out{c->second, {}, ref.loc};
  for (std::size_t k = c->second.size(); k < ref.name.size(); ++k) {
    Index index;
    index.kind = Index::Kind::Component;
    index.component = ref.name[k] - '0';
    index.loc = ref.loc;
    out.indices.push_back(index);
  }
  return out;
}

void expand_equation(LoweringState& state, CalculationLowering& work, std::size_t equation) {
  const edl::Equation& eq = work.decl->equations[equation];
  Lowerer lowerer(state, &work);
  const edl::TensorRef lhs = resolve_component(state, eq.lhs);
  auto it = state.tensors.find(lhs.name);
  if (it == state.tensors.end()) {
    if (state.parameter_index.count(lhs.name))
      throw EdlError(lhs.loc, fmt::format("'{}' is a parameter and cannot be assigned", lhs.name));
    if (is_builtin(lhs.name))
      throw EdlError(lhs.loc, fmt::format("'{}' is built in and cannot be assigned", lhs.name));
    throw lowerer.undeclared(lhs.name, lhs.loc, "a grid function or temporary to assign");
  }
  const TensorSymbol& info = it->second;
  if (eq.time_derivative && info.kind == TensorSymbol::Kind::Temporary)
    throw EdlError(eq.loc, fmt::format("'{}' is a temporary: only grid functions can be "
                                       "evolved with D_t",
                                       lhs.name));
  if (static_cast<int>(lhs.indices.size()) != info.rank)
    throw EdlError(lhs.loc, fmt::format("'{}' has {} ind{}, assigned with {}", lhs.name, info.rank,
                                        info.rank == 1 ? "ex" : "ices", lhs.indices.size()));
  ExpandedEquation expanded;
  expanded.equation = &eq;
  expanded.temporary = info.kind == TensorSymbol::Kind::Temporary;
  std::vector<IndexUse>& lhs_free = expanded.free;
  for (const Index& i : lhs.indices) {
    if (!i.is_symbol()) continue;
    for (const auto& u : lhs_free)
      if (u.symbol == i.symbol)
        throw EdlError(i.loc, fmt::format("index '{}' appears twice on the left side", i.symbol));
    lhs_free.push_back({i.symbol, i.upper, i.loc});
  }
  const IndexInfo& rhs = lowerer.analyse_indices(*eq.rhs);
  for (const auto& dummy : lowerer.summed)
    for (const auto& free : lhs_free)
      if (free.symbol == dummy.symbol)
        throw EdlError(dummy.loc,
                       fmt::format("index '{}' is summed on the right side but is "
                                   "free on the left side; use another letter for "
                                   "the sum",
                                   dummy.symbol),
                       {{free.loc, "free here"}});
  for (const auto& r : rhs.free) {
    auto match = std::find_if(lhs_free.begin(), lhs_free.end(),
                              [&](const IndexUse& u) { return u.symbol == r.symbol; });
    if (match == lhs_free.end())
      throw EdlError(r.loc,
                     fmt::format("index '{}' is free on the right side but not on the "
                                 "left side ({}); free indices must match on both sides",
                                 r.symbol, show_indices(lhs_free)),
                     {{lhs.loc, "left side is here"}});
    if (match->upper != r.upper)
      throw EdlError(r.loc,
                     fmt::format("index mismatch: '{}' is {} on the left side but {} "
                                 "on the right side",
                                 r.symbol, match->upper ? "upper" : "lower",
                                 r.upper ? "upper" : "lower"),
                     {{match->loc, "left side index is here"}});
  }
  expanded.summed = std::move(lowerer.summed);

  // One equation per assignment of the free indices.
  std::size_t n = lhs_free.size();
  std::size_t count = 1;
  for (std::size_t k = 0; k < n; ++k) count *= 3;
  expanded.components.reserve(count);
  for (std::size_t combo = 0; combo < count; ++combo) {
    ExpandedEquation::Component component;
    std::size_t c = combo;
    for (std::size_t k = n; k-- > 0;) {
      component.env[lhs_free[k].symbol] = int(c % 3) + 1;
      c /= 3;
    }
    component.name = lhs.name;
    for (const Index& i : lhs.indices)
      component.name += std::to_string(i.is_symbol() ? component.env[i.symbol] : i.component);
    expanded.components.push_back(std::move(component));
  }
  work.equations.push_back(std::move(expanded));
}

// ---- index analysis of expressions ----------------------------------------------------------

void Lowerer::check_call(const Expr& e) const {
  for (const auto& [name, arity] : edl::known_functions()) {
    if (name != e.name) continue;
    if (static_cast<int>(e.args.size()) != arity)
      throw EdlError(e.loc, fmt::format("'{}' takes {} argument{}, given {}", name, arity,
                                        arity == 1 ? "" : "s", e.args.size()));
    return;
  }
  std::vector<std::string> names;
  for (const auto& [name, arity] : edl::known_functions()) names.push_back(name);
  throw EdlError(
      e.loc,
      fmt::format("unknown function '{}': expected one of {}", e.name, fmt::join(names, " ")),
      edl::did_you_mean(e.name, names));
}

// Groups index uses by letter: once = free, once up and once down = summed here.
IndexInfo Lowerer::contract(std::vector<IndexUse> uses) {
  IndexInfo info;
  std::map<std::string, std::vector<const IndexUse*>> by_symbol;
  std::vector<std::string> order;
  for (const auto& u : uses) {
    if (!by_symbol.count(u.symbol)) order.push_back(u.symbol);
    by_symbol[u.symbol].push_back(&u);
  }
  for (const auto& symbol : order) {
    const auto& list = by_symbol[symbol];
    if (list.size() == 1) {
      info.free.push_back(*list[0]);
    } else if (list.size() == 2) {
      if (list[0]->upper == list[1]->upper)
        throw EdlError(list[1]->loc,
                       fmt::format("index '{}' appears twice as {} index; a summed pair needs "
                                   "one upper and one lower index (as in 'v_{} w^{}')",
                                   symbol, list[0]->upper ? "an upper" : "a lower", symbol,
                                   symbol));
      info.dummies.push_back(symbol);
      summed.push_back(*list[0]);
    } else {
      throw EdlError(list[2]->loc, fmt::format("index '{}' appears {} times in one product; "
                                               "an index may appear at most twice",
                                               symbol, list.size()));
    }
  }
  return info;
}

std::vector<IndexUse> Lowerer::symbol_uses(const std::vector<Index>& indices) {
  std::vector<IndexUse> uses;
  for (const Index& i : indices)
    if (i.is_symbol()) uses.push_back({i.symbol, i.upper, i.loc});
  return uses;
}

const IndexInfo& Lowerer::analyse_indices(const Expr& e) {
  if (auto it = s.index_info.find(&e); it != s.index_info.end()) return it->second;
  IndexInfo info;
  switch (e.kind) {
  case Expr::Kind::Number: break;
  case Expr::Kind::Tensor: {
    if (def != nullptr && (e.name == def->def->operand.name || e.name == "h")) break;
    int rank = tensor_rank(e);
    if (static_cast<int>(e.indices.size()) != rank)
      throw EdlError(e.loc, rank == 0 ? fmt::format("'{}' takes no indices", e.name)
                                      : fmt::format("'{}' has {} ind{}, used with {}", e.name, rank,
                                                    rank == 1 ? "ex" : "ices", e.indices.size()));
    info = contract(symbol_uses(e.indices));
    break;
  }
  case Expr::Kind::Derivative: {
    operator_slots(e); // checks the number of indices
    std::vector<IndexUse> uses = symbol_uses(e.indices);
    const IndexInfo& operand = analyse_indices(*e.args[0]);
    uses.insert(uses.end(), operand.free.begin(), operand.free.end());
    info = contract(std::move(uses));
    break;
  }
  case Expr::Kind::Call: {
    check_call(e);
    std::vector<IndexUse> uses;
    for (const auto& a : e.args) {
      const IndexInfo& arg = analyse_indices(*a);
      uses.insert(uses.end(), arg.free.begin(), arg.free.end());
    }
    info.free = disjoint(uses, "the arguments of '" + e.name + "'");
    break;
  }
  case Expr::Kind::Negate: info.free = analyse_indices(*e.args[0]).free; break;
  case Expr::Kind::Add:
  case Expr::Kind::Subtract: {
    auto terms = chain(e);
    const auto& first = analyse_indices(*terms[0].first).free;
    for (std::size_t k = 1; k < terms.size(); ++k) {
      const auto& other = analyse_indices(*terms[k].first).free;
      if (!same_indices(first, other))
        throw EdlError(terms[k].first->loc,
                       fmt::format("the terms of this sum have different free indices: {} in "
                                   "the first term, {} in this one",
                                   show_indices(first), show_indices(other)));
    }
    info.free = first;
    break;
  }
  case Expr::Kind::Multiply: {
    // One product term, however it is written: a letter summed across all its factors.
    std::vector<IndexUse> uses;
    for (const auto& [factor, sign] : chain(e)) {
      const auto& free = analyse_indices(*factor).free;
      uses.insert(uses.end(), free.begin(), free.end());
    }
    info = contract(std::move(uses));
    break;
  }
  case Expr::Kind::Divide:
  case Expr::Kind::Modulo: {
    std::vector<IndexUse> uses = analyse_indices(*e.args[0]).free;
    const auto& rhs = analyse_indices(*e.args[1]).free;
    uses.insert(uses.end(), rhs.begin(), rhs.end());
    info.free = disjoint(uses, "a division");
    break;
  }
  case Expr::Kind::Power: {
    info.free = analyse_indices(*e.args[0]).free;
    const auto& exponent = analyse_indices(*e.args[1]).free;
    if (!exponent.empty())
      throw EdlError(exponent[0].loc, fmt::format("an exponent cannot carry a free index ('{}')",
                                                  exponent[0].symbol));
    break;
  }
  }
  return s.index_info.emplace(&e, std::move(info)).first->second;
}

// Walked without recursion so that long sums cannot exhaust the stack; a parenthesised
// operand stays one operand.
std::vector<std::pair<const Expr*, double>> Lowerer::chain(const Expr& e) {
  bool sum = e.kind == Expr::Kind::Add || e.kind == Expr::Kind::Subtract;
  auto continues = [sum](const Expr& x) {
    if (x.parenthesized) return false;
    return sum ? (x.kind == Expr::Kind::Add || x.kind == Expr::Kind::Subtract)
               : x.kind == Expr::Kind::Multiply;
  };
  std::vector<std::pair<const Expr*, double>> operands;
  const Expr* node = &e;
  while (true) {
    double sign = node->kind == Expr::Kind::Subtract ? -1.0 : 1.0;
    operands.emplace_back(node->args[1].get(), sign);
    const Expr* left = node->args[0].get();
    if (!continues(*left)) {
      operands.emplace_back(left, 1.0);
      break;
    }
    node = left;
  }
  std::reverse(operands.begin(), operands.end());
  return operands;
}

std::vector<IndexUse> Lowerer::disjoint(const std::vector<IndexUse>& uses,
                                        const std::string& where) {
  std::set<std::string> seen;
  for (const auto& u : uses)
    if (!seen.insert(u.symbol).second)
      throw EdlError(u.loc, fmt::format("index '{}' appears twice across {}; summation only "
                                        "applies within a product",
                                        u.symbol, where));
  return uses;
}

bool Lowerer::same_indices(const std::vector<IndexUse>& a, const std::vector<IndexUse>& b) {
  auto key = [](const std::vector<IndexUse>& v) {
    std::set<std::pair<std::string, bool>> set;
    for (const auto& u : v) set.insert({u.symbol, u.upper});
    return set;
  };
  return a.size() == b.size() && key(a) == key(b);
}

int Lowerer::tensor_rank(const Expr& e) const {
  if (auto it = s.tensors.find(e.name); it != s.tensors.end()) {
    if (constant_mode)
      throw EdlError(e.loc, fmt::format("'{}' is not a constant: a default or range end must "
                                        "be a constant expression",
                                        e.name));
    return it->second.rank;
  }
  if (e.name == "Euc" || e.name == "delta") return 2;
  if (e.name == "Eps") return 3;
  if (e.name == "PI" || e.name == "E") return 0;
  if (is_builtin(e.name) || s.parameter_index.count(e.name)) {
    if (constant_mode)
      throw EdlError(e.loc, fmt::format("'{}' is not a constant: a default or range end must "
                                        "be a constant expression",
                                        e.name));
    return 0;
  }
  // A component by its flat name (`El1` for `El_i`), as Kranc scripts write them.
  if (auto c = s.component_of.find(e.name); c != s.component_of.end()) {
    if (constant_mode)
      throw EdlError(e.loc, fmt::format("'{}' is not a constant: a default or range end must "
                                        "be a constant expression",
                                        e.name));
    return 0;
  }
  if (s.operators.count(e.name) || edl::is_builtin_operator(e.name))
    throw EdlError(e.loc, fmt::format("derivative operator '{}' needs an operand", e.name));
  throw undeclared(e.name, e.loc, "a grid function, temporary, parameter or built-in");
}

// The number of direction indices the operator takes at a use.
void Lowerer::operator_slots(const Expr& e) const {
  auto it = s.operators.find(e.name);
  if (it == s.operators.end()) {
    if (!edl::is_builtin_operator(e.name))
      throw EdlError(e.loc, fmt::format("unknown derivative '{}'", e.name));
    if (e.name != "D" && e.indices.size() != 1)
      throw EdlError(e.loc, fmt::format("'{}' takes one direction index ({}_i f), given {}", e.name,
                                        e.name, e.indices.size()));
    if (e.indices.empty() || e.indices.size() > 2)
      throw EdlError(e.loc, fmt::format("'D' takes one or two direction indices (D_i f, D_ij "
                                        "f), given {}",
                                        e.indices.size()));
    return;
  }
  // Any index pattern a definition takes, or several directions composed from a one-direction
  // definition (`D_ij = D_i D_j`).
  std::set<std::size_t> counts;
  for (const edl::DerivativeDef* d : it->second) {
    std::set<std::string> distinct;
    for (const Index& i : d->operand.indices) distinct.insert(i.symbol);
    counts.insert(d->operand.indices.size());
    counts.insert(distinct.size());
    if (d->operand.indices.size() == 1)
      for (std::size_t k = 2; k <= 3; ++k) counts.insert(k);
  }
  if (!counts.count(e.indices.size())) {
    std::vector<std::string> shown;
    for (std::size_t n : counts) shown.push_back(std::to_string(n));
    const std::string last = shown.back();
    shown.pop_back();
    throw EdlError(e.loc, fmt::format("'{}' takes {}{}{} direction ind{}, given {}", e.name,
                                      fmt::join(shown, ", "), shown.empty() ? "" : " or ", last,
                                      counts.size() == 1 && *counts.begin() == 1 ? "ex" : "ices",
                                      e.indices.size()));
  }
}

} // namespace saguaro::calc
