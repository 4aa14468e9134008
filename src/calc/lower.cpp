#include "calc/lower.hpp"

#include "calc/fd_coefficients.hpp"
#include "edl/parser.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::calc {

using edl::EdlError;
using edl::Expr;
using edl::Index;
using edl::SourceLoc;

namespace {

const std::vector<std::string> kCoordinates = {"x", "y", "z"};
const std::vector<std::string> kSpacings = {"dx", "dy", "dz"};
const std::vector<std::string> kBuiltinNames = {"x",  "y",  "z", "t",   "dx",  "dy",
                                                "dz", "PI", "E", "Euc", "Eps", "delta"};

bool is_builtin(const std::string& name) {
  return std::find(kBuiltinNames.begin(), kBuiltinNames.end(), name) != kBuiltinNames.end();
}

int levi_civita(int a, int b, int c) {
  if (a == b || b == c || a == c) return 0;
  // Even permutations of (1,2,3) are +1.
  return ((b - a + 3) % 3 == 1 && (c - b + 3) % 3 == 1) ? 1 : -1;
}

struct IndexUse {
  std::string symbol;
  bool upper = false;
  SourceLoc loc;
};

struct IndexInfo {
  std::vector<IndexUse> free;       // free indices of this subexpression
  std::vector<std::string> dummies; // summed at this node
};

std::string show_indices(const std::vector<IndexUse>& uses) {
  if (uses.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& u : uses) parts.push_back((u.upper ? "^" : "_") + u.symbol);
  return fmt::format("{}", fmt::join(parts, " "));
}

class Lowerer {
public:
  Lowerer(const edl::Thorn& thorn, const LowerOptions& options)
      : thorn_(thorn), options_(options) {}

  Program run() {
    if (options_.fd_order < 2 || options_.fd_order > 8 || options_.fd_order % 2 != 0)
      throw EdlError({}, fmt::format("finite-difference order {} is not supported: expected 2, "
                                     "4, 6 or 8",
                                     options_.fd_order));
    program_.thorn = thorn_.name;
    program_.implements = thorn_.implements.empty() ? thorn_.name : thorn_.implements;
    program_.inherits = thorn_.inherits;
    program_.features = thorn_.features;
    program_.fd_order = options_.fd_order;
    declare_tensors(); // first, so a default naming a grid function is "not a constant"
    declare_parameters();
    declare_operators();
    declare_groups();
    std::map<std::string, SourceLoc> calc_names;
    for (const auto& decl : thorn_.calculations) {
      auto [it, inserted] = calc_names.emplace(decl.name, decl.loc);
      if (!inserted)
        throw EdlError(decl.loc, fmt::format("calculation '{}' is defined twice", decl.name),
                       {{it->second, "first defined here"}});
      program_.calculations.push_back(lower_calculation(decl));
    }
    for (const auto& v : program_.variables)
      if (evolved_at_.count(v)) program_.evolved.push_back(v);
    return std::move(program_);
  }

private:
  struct TensorInfo {
    enum class Kind { Variable, Temporary } kind;
    int rank = 0;
    SourceLoc loc;
  };

  // ---- declarations ---------------------------------------------------------------------
  void claim_name(const std::string& name, const SourceLoc& loc, const char* what) {
    if (is_builtin(name))
      throw EdlError(
          loc, fmt::format("'{}' is a built-in name and cannot be declared as a {}", name, what));
    bool is_operator = edl::is_builtin_operator(name);
    for (const auto& def : thorn_.derivatives) is_operator = is_operator || def.name == name;
    if (is_operator)
      throw EdlError(loc, fmt::format("'{}' is a derivative operator and cannot be declared as a "
                                      "{}",
                                      name, what));
    calc::Function fn;
    if (function_from_name(name, fn))
      throw EdlError(loc,
                     fmt::format("'{}' is a function and cannot be declared as a {}", name, what));
    if (auto c = component_of_.find(name); c != component_of_.end())
      throw EdlError(
          loc, fmt::format("'{}' is already the name of a component of '{}'", name, c->second),
          {{tensors_.at(c->second).loc, fmt::format("'{}' is declared here", c->second)}});
    auto [it, inserted] = declared_at_.emplace(name, loc);
    if (!inserted) {
      // Report at the later of the two, whatever order the sections are processed in.
      bool earlier = it->second.line < loc.line ||
                     (it->second.line == loc.line && it->second.column < loc.column);
      const SourceLoc& first = earlier ? it->second : loc;
      const SourceLoc& second = earlier ? loc : it->second;
      throw EdlError(second, fmt::format("'{}' is declared twice", name),
                     {{first, "first declared here"}});
    }
  }

  void declare_parameters() {
    for (const auto& decl : thorn_.parameters) {
      claim_name(decl.name, decl.loc, "parameter");
      Parameter p;
      p.name = decl.name;
      p.type = decl.type;
      p.description = decl.description;
      p.keyword_values = decl.keyword_values;
      if (decl.has_range) {
        if (decl.range_min) p.min = constant_value(*decl.range_min, "a range end");
        if (decl.range_max) p.max = constant_value(*decl.range_max, "a range end");
        if (p.min && p.max && *p.min > *p.max)
          throw EdlError(decl.range_loc, fmt::format("range of '{}' is empty: {} is above {}",
                                                     p.name, *p.min, *p.max));
      }
      if (decl.type == edl::ParameterType::Keyword) {
        p.default_keyword = decl.has_default
                                ? decl.default_word
                                : (decl.keyword_values.empty() ? "" : decl.keyword_values[0]);
        if (!p.keyword_values.empty() && std::find(p.keyword_values.begin(), p.keyword_values.end(),
                                                   p.default_keyword) == p.keyword_values.end())
          throw EdlError(decl.has_default ? decl.default_loc : decl.loc,
                         fmt::format("default \"{}\" of '{}' is not one of its values "
                                     "{}",
                                     p.default_keyword, p.name, fmt::join(p.keyword_values, ", ")));
      } else if (decl.type == edl::ParameterType::Boolean) {
        p.default_value = decl.default_word == "true" ? 1.0 : 0.0;
      } else if (decl.has_default) {
        p.default_value = constant_value(*decl.default_value, "a default");
        if (decl.type == edl::ParameterType::Int && p.default_value != std::floor(p.default_value))
          throw EdlError(decl.default_value->loc,
                         fmt::format("default of int parameter '{}' is {}, not an integer", p.name,
                                     p.default_value));
      } else if (p.min) {
        p.default_value = *p.min; // Cactus requires a default; the range's low end is the safe one
      }
      if ((p.min && p.default_value < *p.min) || (p.max && p.default_value > *p.max))
        throw EdlError(decl.has_default && decl.default_value ? decl.default_value->loc : decl.loc,
                       fmt::format("default {} of '{}' is outside its range {} to {}",
                                   p.default_value, p.name,
                                   p.min ? fmt::format("{}", *p.min) : "-infinity",
                                   p.max ? fmt::format("{}", *p.max) : "infinity"));
      parameter_index_[p.name] = static_cast<int>(program_.parameters.size());
      program_.parameters.push_back(std::move(p));
    }
  }

  void declare_tensors() {
    auto declare = [&](const edl::TensorRef& ref, TensorInfo::Kind kind) {
      claim_name(ref.name, ref.loc,
                 kind == TensorInfo::Kind::Variable ? "grid function" : "temporary");
      std::set<std::string> symbols;
      for (const Index& index : ref.indices)
        if (!symbols.insert(index.symbol).second)
          throw EdlError(index.loc, fmt::format("index '{}' repeats in the declaration of '{}'; "
                                                "each index of a tensor needs its own letter",
                                                index.symbol, ref.name));
      tensors_[ref.name] = TensorInfo{kind, static_cast<int>(ref.indices.size()), ref.loc};
      for (const std::string& component : components(ref.name, int(ref.indices.size()))) {
        if (component != ref.name) {
          if (auto other = declared_at_.find(component); other != declared_at_.end())
            throw EdlError(ref.loc,
                           fmt::format("component '{}' of '{}' has the name of another "
                                       "declaration",
                                       component, ref.name),
                           {{other->second, fmt::format("'{}' is declared here", component)}});
          auto [it, inserted] = component_of_.emplace(component, ref.name);
          if (!inserted)
            throw EdlError(ref.loc,
                           fmt::format("component '{}' of '{}' is also a component of "
                                       "'{}'",
                                       component, ref.name, it->second),
                           {{tensors_.at(it->second).loc, "declared here"}});
        }
        if (kind == TensorInfo::Kind::Variable) program_.variables.push_back(component);
      }
      if (kind == TensorInfo::Kind::Variable && !ref.indices.empty())
        program_.tensors[ref.name] = components(ref.name, int(ref.indices.size()));
    };
    for (const auto& ref : thorn_.variables) declare(ref, TensorInfo::Kind::Variable);
    for (const auto& ref : thorn_.temporaries) declare(ref, TensorInfo::Kind::Temporary);
  }

  static std::vector<std::string> components(const std::string& name, int rank) {
    std::vector<std::string> out{name};
    for (int r = 0; r < rank; ++r) {
      std::vector<std::string> next;
      for (const auto& prefix : out)
        for (int c = 1; c <= 3; ++c) next.push_back(prefix + std::to_string(c));
      out = std::move(next);
    }
    return out;
  }

  void declare_operators() {
    for (const auto& def : thorn_.derivatives) {
      if (operators_.count(def.name))
        throw EdlError(def.loc, fmt::format("derivative operator '{}' is defined twice", def.name),
                       {{operators_[def.name]->loc, "first defined here"}});
      operators_[def.name] = &def;
      check_definition(def, *def.rhs);
    }
  }

  // A definition may refer to its operand (shifted along its own directions), `h` (the
  // spacing), numbers, constants, parameters and functions.
  void check_definition(const edl::DerivativeDef& def, const Expr& e) {
    std::set<std::string> slots;
    for (const Index& i : def.operand.indices) slots.insert(i.symbol);
    if (e.kind == Expr::Kind::Tensor) {
      if (e.name == def.operand.name) {
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
      if (e.name == "PI" || e.name == "E" || parameter_index_.count(e.name)) {
        if (!e.indices.empty()) throw EdlError(e.loc, fmt::format("'{}' takes no indices", e.name));
        return;
      }
      throw EdlError(e.loc, fmt::format("a derivative definition may only use its operand '{}', "
                                        "the spacing 'h', numbers, constants and parameters; "
                                        "found '{}'",
                                        def.operand.name, e.name));
    }
    if (e.kind == Expr::Kind::Derivative)
      throw EdlError(e.loc, "a derivative definition cannot apply another derivative operator; "
                            "write the stencil with shifted operands");
    if (e.kind == Expr::Kind::Call) check_call(e);
    for (const auto& a : e.args) check_definition(def, *a);
  }

  void declare_groups() {
    for (const auto& group : thorn_.groups) {
      std::vector<std::string>& members = program_.groups[group.name];
      for (const auto& [ref, description] : group.members) {
        auto it = tensors_.find(ref.name);
        if (it == tensors_.end()) throw undeclared(ref.name, ref.loc, "a grid function", true);
        if (it->second.kind != TensorInfo::Kind::Variable)
          throw EdlError(ref.loc,
                         fmt::format("'{}' is a temporary; a group holds grid functions", ref.name),
                         {{it->second.loc, "declared here"}});
        if (static_cast<int>(ref.indices.size()) != it->second.rank)
          throw EdlError(ref.loc,
                         fmt::format("'{}' has {} ind{}, listed with {}", ref.name, it->second.rank,
                                     it->second.rank == 1 ? "ex" : "ices", ref.indices.size()),
                         {{it->second.loc, "declared here"}});
        for (const auto& c : components(ref.name, it->second.rank)) members.push_back(c);
      }
    }
  }

  // ---- errors ----------------------------------------------------------------------------
  EdlError undeclared(const std::string& name, const SourceLoc& loc, const char* what,
                      bool grid_functions_only = false) {
    std::vector<std::string> candidates;
    if (!grid_functions_only) {
      candidates.assign(kBuiltinNames.begin(), kBuiltinNames.end());
      for (const auto& [n, i] : parameter_index_) candidates.push_back(n);
    }
    for (const auto& [n, info] : tensors_)
      if (!grid_functions_only || info.kind == TensorInfo::Kind::Variable) candidates.push_back(n);
    return EdlError(loc, fmt::format("undeclared name '{}': expected {}", name, what),
                    edl::did_you_mean(name, candidates));
  }

  void check_call(const Expr& e) {
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

  // ---- constant expressions (parameter defaults and ranges) ------------------------------
  double constant_value(const Expr& e, const char* what) {
    constant_mode_ = true;
    Dag scratch;
    Dag* saved = dag_;
    dag_ = &scratch;
    NodeId id = 0;
    try {
      analyse_indices(e);
      id = lower(e, {});
    } catch (...) {
      dag_ = saved;
      constant_mode_ = false;
      throw;
    }
    dag_ = saved;
    constant_mode_ = false;
    double value = 0.0;
    if (!scratch.is_constant(id, &value))
      throw EdlError(e.loc, fmt::format("{} must be a constant expression", what));
    return value;
  }

  // ---- index analysis --------------------------------------------------------------------
  // Groups index uses by letter: once = free, once up and once down = summed here.
  IndexInfo contract(std::vector<IndexUse> uses) {
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
        summed_.push_back(*list[0]);
      } else {
        throw EdlError(list[2]->loc, fmt::format("index '{}' appears {} times in one product; "
                                                 "an index may appear at most twice",
                                                 symbol, list.size()));
      }
    }
    return info;
  }

  std::vector<IndexUse> symbol_uses(const std::vector<Index>& indices) {
    std::vector<IndexUse> uses;
    for (const Index& i : indices)
      if (i.is_symbol()) uses.push_back({i.symbol, i.upper, i.loc});
    return uses;
  }

  const IndexInfo& analyse_indices(const Expr& e) {
    if (auto it = info_.find(&e); it != info_.end()) return it->second;
    IndexInfo info;
    switch (e.kind) {
    case Expr::Kind::Number: break;
    case Expr::Kind::Tensor: {
      if (def_ != nullptr && (e.name == def_->def->operand.name || e.name == "h")) break;
      int rank = tensor_rank(e);
      if (static_cast<int>(e.indices.size()) != rank)
        throw EdlError(e.loc, rank == 0
                                  ? fmt::format("'{}' takes no indices", e.name)
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
    return info_.emplace(&e, std::move(info)).first->second;
  }

  // The operands of a left-leaning chain of + and - (or of *), walked without recursion so that
  // long sums cannot exhaust the stack; a parenthesised operand stays one operand.
  static std::vector<std::pair<const Expr*, double>> chain(const Expr& e) {
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

  std::vector<IndexUse> disjoint(const std::vector<IndexUse>& uses, const std::string& where) {
    std::set<std::string> seen;
    for (const auto& u : uses)
      if (!seen.insert(u.symbol).second)
        throw EdlError(u.loc, fmt::format("index '{}' appears twice across {}; summation only "
                                          "applies within a product",
                                          u.symbol, where));
    return uses;
  }

  static bool same_indices(const std::vector<IndexUse>& a, const std::vector<IndexUse>& b) {
    auto key = [](const std::vector<IndexUse>& v) {
      std::set<std::pair<std::string, bool>> s;
      for (const auto& u : v) s.insert({u.symbol, u.upper});
      return s;
    };
    return a.size() == b.size() && key(a) == key(b);
  }

  int tensor_rank(const Expr& e) {
    if (auto it = tensors_.find(e.name); it != tensors_.end()) {
      if (constant_mode_)
        throw EdlError(e.loc, fmt::format("'{}' is not a constant: a default or range end must "
                                          "be a constant expression",
                                          e.name));
      return it->second.rank;
    }
    if (e.name == "Euc" || e.name == "delta") return 2;
    if (e.name == "Eps") return 3;
    if (e.name == "PI" || e.name == "E") return 0;
    if (is_builtin(e.name) || parameter_index_.count(e.name)) {
      if (constant_mode_)
        throw EdlError(e.loc, fmt::format("'{}' is not a constant: a default or range end must "
                                          "be a constant expression",
                                          e.name));
      return 0;
    }
    if (component_of_.count(e.name))
      throw EdlError(e.loc, fmt::format("'{}' is a component of the tensor '{}': write it with "
                                        "indices, as in '{}_{}'",
                                        e.name, component_of_[e.name], component_of_[e.name],
                                        e.name.substr(component_of_[e.name].size())));
    if (operators_.count(e.name) || edl::is_builtin_operator(e.name))
      throw EdlError(e.loc, fmt::format("derivative operator '{}' needs an operand", e.name));
    throw undeclared(e.name, e.loc, "a grid function, temporary, parameter or built-in");
  }

  // The number of direction indices the operator takes at a use.
  void operator_slots(const Expr& e) {
    auto it = operators_.find(e.name);
    if (it == operators_.end()) {
      if (!edl::is_builtin_operator(e.name))
        throw EdlError(e.loc, fmt::format("unknown derivative '{}'", e.name));
      if (e.name != "D" && e.indices.size() != 1)
        throw EdlError(e.loc, fmt::format("'{}' takes one direction index ({}_i f), given {}",
                                          e.name, e.name, e.indices.size()));
      if (e.indices.empty() || e.indices.size() > 2)
        throw EdlError(e.loc, fmt::format("'D' takes one or two direction indices (D_i f, D_ij "
                                          "f), given {}",
                                          e.indices.size()));
      return;
    }
    const auto& slots = it->second->operand.indices;
    std::set<std::string> distinct;
    for (const Index& i : slots) distinct.insert(i.symbol);
    if (e.name == "D" && slots.size() == 1 && e.indices.size() == 2) return; // D_ij = D_i D_j
    if (e.indices.size() != slots.size() && e.indices.size() != distinct.size())
      throw EdlError(e.loc,
                     fmt::format("'{}' takes {} direction ind{}, given {}", e.name, slots.size(),
                                 slots.size() == 1 ? "ex" : "ices", e.indices.size()));
  }

  // ---- calculations ----------------------------------------------------------------------
  Calculation lower_calculation(const edl::CalculationDecl& decl) {
    Calculation calc;
    calc.name = decl.name;
    calc.loc = decl.loc;
    calc.on_boundary = decl.on_boundary;
    calc_ = &calc;
    dag_ = &calc.dag;
    current_.clear();
    intermediate_of_.clear();
    intermediate_stage_.clear();
    stencil_use_.clear();
    if (decl.equations.empty())
      throw EdlError(decl.loc, fmt::format("calculation '{}' has no equations", decl.name));

    std::vector<std::pair<int, NodeId>> stores; // in first-assignment order
    std::map<int, SourceLoc> stored_at;
    bool has_time_derivative = false;
    for (const auto& eq : decl.equations) {
      has_time_derivative = has_time_derivative || eq.time_derivative;
      lower_equation(eq, stores, stored_at);
    }
    if (decl.schedule_bin.empty()) {
      calc.schedule_bin = has_time_derivative ? "MoL_CalcRHS" : "analysis";
      calc.schedule_word = has_time_derivative ? "in" : "at";
    } else {
      calc.schedule_bin = decl.schedule_bin;
      calc.schedule_word = decl.schedule_word;
    }
    build_stages(calc, stores);
    check_races(calc, stored_at);
    analyse(calc);
    // Inputs in declaration order, which is how users think of their variables.
    auto rank = [&](const InputStencil& in) {
      const std::string& name = calc.grid_functions[in.grid_function].name;
      return std::find(program_.variables.begin(), program_.variables.end(), name) -
             program_.variables.begin();
    };
    std::stable_sort(calc.inputs.begin(), calc.inputs.end(),
                     [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
    calc_ = nullptr;
    return calc;
  }

  int grid_function(const std::string& name, GridFunctionRole role, const std::string& evolves) {
    int index = calc_->find_grid_function(name);
    if (index >= 0) return index;
    calc_->grid_functions.push_back(GridFunctionRef{name, role, evolves});
    intermediate_stage_.push_back(-1);
    return static_cast<int>(calc_->grid_functions.size() - 1);
  }

  void lower_equation(const edl::Equation& eq, std::vector<std::pair<int, NodeId>>& stores,
                      std::map<int, SourceLoc>& stored_at) {
    const edl::TensorRef& lhs = eq.lhs;
    auto it = tensors_.find(lhs.name);
    if (it == tensors_.end()) {
      if (parameter_index_.count(lhs.name))
        throw EdlError(lhs.loc,
                       fmt::format("'{}' is a parameter and cannot be assigned", lhs.name));
      if (is_builtin(lhs.name))
        throw EdlError(lhs.loc, fmt::format("'{}' is built in and cannot be assigned", lhs.name));
      throw undeclared(lhs.name, lhs.loc, "a grid function or temporary to assign");
    }
    const TensorInfo& info = it->second;
    if (eq.time_derivative && info.kind == TensorInfo::Kind::Temporary)
      throw EdlError(eq.loc, fmt::format("'{}' is a temporary: only grid functions can be "
                                         "evolved with D_t",
                                         lhs.name));
    if (static_cast<int>(lhs.indices.size()) != info.rank)
      throw EdlError(lhs.loc,
                     fmt::format("'{}' has {} ind{}, assigned with {}", lhs.name, info.rank,
                                 info.rank == 1 ? "ex" : "ices", lhs.indices.size()));
    std::vector<IndexUse> lhs_free;
    for (const Index& i : lhs.indices) {
      if (!i.is_symbol()) continue;
      for (const auto& u : lhs_free)
        if (u.symbol == i.symbol)
          throw EdlError(i.loc, fmt::format("index '{}' appears twice on the left side", i.symbol));
      lhs_free.push_back({i.symbol, i.upper, i.loc});
    }
    summed_.clear();
    const IndexInfo& rhs = analyse_indices(*eq.rhs);
    for (const auto& dummy : summed_)
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

    // One equation per assignment of the free indices.
    std::size_t n = lhs_free.size();
    std::size_t count = 1;
    for (std::size_t k = 0; k < n; ++k) count *= 3;
    for (std::size_t combo = 0; combo < count; ++combo) {
      std::map<std::string, int> env;
      std::size_t c = combo;
      for (std::size_t k = n; k-- > 0;) {
        env[lhs_free[k].symbol] = int(c % 3) + 1;
        c /= 3;
      }
      std::string component = lhs.name;
      for (const Index& i : lhs.indices)
        component += std::to_string(i.is_symbol() ? env[i.symbol] : i.component);
      NodeId value = lower(*eq.rhs, env);
      dag_->pin(value); // a named value is computed once, however often it is used
      if (info.kind == TensorInfo::Kind::Temporary) {
        current_[component] = value;
        continue;
      }
      int gf;
      if (eq.time_derivative) {
        auto [first, inserted] = evolved_at_.emplace(component, eq.loc);
        if (!inserted)
          throw EdlError(eq.loc,
                         fmt::format("'{}' has two D_t equations; every evolved "
                                     "variable gets exactly one",
                                     component),
                         {{first->second, "the first is here"}});
        gf = grid_function(component + "rhs", GridFunctionRole::RightHandSide, component);
      } else {
        gf = grid_function(component, GridFunctionRole::Variable, "");
        current_[component] = value;
      }
      stored_at.emplace(gf, lhs.loc);
      auto existing =
          std::find_if(stores.begin(), stores.end(), [&](const auto& s) { return s.first == gf; });
      if (existing != stores.end())
        existing->second = value;
      else
        stores.emplace_back(gf, value);
    }
  }

  // ---- expressions -----------------------------------------------------------------------
  using Env = std::map<std::string, int>;

  int index_value(const Index& index, const Env& env, const SourceLoc& where) {
    if (!index.is_symbol()) return index.component;
    auto it = env.find(index.symbol);
    if (it == env.end())
      throw EdlError(where, fmt::format("internal error: index '{}' is unbound", index.symbol));
    return it->second;
  }

  // Calls `body` for every assignment of `dummies` (values 1..3) added to `env` and sums.
  NodeId sum_over(const std::vector<std::string>& dummies, const Env& env,
                  const std::function<NodeId(const Env&)>& body) {
    if (dummies.empty()) return body(env);
    std::vector<std::pair<NodeId, double>> terms;
    std::size_t count = 1;
    for (std::size_t k = 0; k < dummies.size(); ++k) count *= 3;
    for (std::size_t combo = 0; combo < count; ++combo) {
      Env inner = env;
      std::size_t c = combo;
      for (const auto& d : dummies) {
        inner[d] = int(c % 3) + 1;
        c /= 3;
      }
      terms.emplace_back(body(inner), 1.0);
    }
    return dag_->add(std::move(terms));
  }

  // Folding a constant may fail (0**-1, 1e308*10) and a composed stencil may grow too wide:
  // report either at the innermost expression being built.
  NodeId lower(const Expr& e, const Env& env) {
    try {
      return lower_node(e, env);
    } catch (const std::domain_error&) {
      throw EdlError(e.loc, "this constant expression has no finite value (division by zero, "
                            "overflow, or a function outside its domain)");
    } catch (const std::out_of_range&) {
      throw EdlError(e.loc, "the stencil of this derivative reaches more than 500 points from "
                            "the grid point");
    }
  }

  NodeId lower_node(const Expr& e, const Env& env) {
    const IndexInfo& info = analyse_indices(e);
    Dag& dag = *dag_;
    switch (e.kind) {
    case Expr::Kind::Number: return dag.constant(e.value);
    case Expr::Kind::Tensor:
      return sum_over(info.dummies, env, [&](const Env& inner) { return lower_tensor(e, inner); });
    case Expr::Kind::Derivative:
      return sum_over(info.dummies, env,
                      [&](const Env& inner) { return lower_derivative(e, inner); });
    case Expr::Kind::Call: {
      Function fn;
      function_from_name(e.name, fn);
      std::vector<NodeId> args;
      for (const auto& a : e.args) args.push_back(lower(*a, env));
      return dag.call(fn, std::move(args));
    }
    case Expr::Kind::Negate: return dag.neg(lower(*e.args[0], env));
    case Expr::Kind::Add:
    case Expr::Kind::Subtract: {
      std::vector<std::pair<NodeId, double>> terms;
      for (const auto& [term, sign] : chain(e)) terms.emplace_back(lower(*term, env), sign);
      return dag.add(std::move(terms));
    }
    case Expr::Kind::Multiply: {
      auto factors = chain(e);
      return sum_over(info.dummies, env, [&](const Env& inner) {
        std::vector<std::pair<NodeId, double>> values;
        for (const auto& [factor, sign] : factors) values.emplace_back(lower(*factor, inner), 1.0);
        return dag.mul(std::move(values));
      });
    }
    case Expr::Kind::Divide: {
      NodeId num = lower(*e.args[0], env), den = lower(*e.args[1], env);
      double d = 1.0;
      if (dag.is_constant(den, &d) && d == 0.0)
        throw EdlError(e.loc, "division by zero: the denominator is the constant 0");
      return dag.div(num, den);
    }
    case Expr::Kind::Modulo: {
      NodeId a = lower(*e.args[0], env), b = lower(*e.args[1], env);
      return dag.call(Function::Fmod, {a, b});
    }
    case Expr::Kind::Power: {
      NodeId a = lower(*e.args[0], env), b = lower(*e.args[1], env);
      return dag.power(a, b);
    }
    }
    return dag.constant(0.0);
  }

  NodeId lower_tensor(const Expr& e, const Env& env) {
    Dag& dag = *dag_;
    if (def_ != nullptr && e.name == def_->def->operand.name) {
      Offset offset{0, 0, 0};
      for (const Index& i : e.indices) offset[def_->axis_of.at(i.symbol)] += i.shift;
      return dag.shift(def_->operand, offset);
    }
    if (def_ != nullptr && e.name == "h") {
      int axis =
          e.indices.empty() ? def_->axis_of.begin()->second : def_->axis_of.at(e.indices[0].symbol);
      return dag.spacing(axis);
    }
    if (auto it = tensors_.find(e.name); it != tensors_.end()) {
      std::string component = e.name;
      for (const Index& i : e.indices) component += std::to_string(index_value(i, env, e.loc));
      if (auto cur = current_.find(component); cur != current_.end()) return cur->second;
      if (it->second.kind == TensorInfo::Kind::Temporary)
        throw EdlError(e.loc, fmt::format("temporary '{}' is used before it is assigned in "
                                          "calculation '{}'",
                                          component, calc_->name));
      return dag.load(grid_function(component, GridFunctionRole::Variable, ""));
    }
    if (auto it = parameter_index_.find(e.name); it != parameter_index_.end())
      return dag.parameter(it->second);
    for (int a = 0; a < 3; ++a) {
      if (e.name == kCoordinates[a]) return dag.coordinate(a);
      if (e.name == kSpacings[a]) return dag.spacing(a);
    }
    if (e.name == "t") return dag.time();
    if (e.name == "PI") return dag.constant(std::numbers::pi);
    if (e.name == "E") return dag.constant(std::numbers::e);
    if (e.name == "Euc" || e.name == "delta")
      return dag.constant(
          index_value(e.indices[0], env, e.loc) == index_value(e.indices[1], env, e.loc) ? 1.0
                                                                                         : 0.0);
    if (e.name == "Eps")
      return dag.constant(levi_civita(index_value(e.indices[0], env, e.loc),
                                      index_value(e.indices[1], env, e.loc),
                                      index_value(e.indices[2], env, e.loc)));
    throw undeclared(e.name, e.loc, "a grid function, temporary, parameter or built-in");
  }

  NodeId lower_derivative(const Expr& e, const Env& env) {
    Dag& dag = *dag_;
    std::vector<int> axes;
    for (const Index& i : e.indices) axes.push_back(index_value(i, env, e.loc) - 1);
    NodeId operand = lower(*e.args[0], env);
    // A stencil applied to a stencil composes exactly; anything else is computed first into an
    // intermediate grid function that the stencil then reads.
    if (!dag.is_stencil_linear(operand)) operand = dag.load(intermediate(operand));

    // A derivative is one value, as in Kranc's generated code: computed once, then used.
    NodeId result;
    auto it = operators_.find(e.name);
    if (it != operators_.end() && e.name == "D" && it->second->operand.indices.size() == 1 &&
        axes.size() == 2) {
      // A redefined one-direction D keeps D_ij meaning D_i D_j.
      NodeId inner = apply_user_operator(*it->second, e, {axes[1]}, operand);
      result = apply_user_operator(*it->second, e, {axes[0]}, inner);
    } else if (it != operators_.end()) {
      result = apply_user_operator(*it->second, e, axes, operand);
    } else if (e.name == "DupwindAnti" || e.name == "DupwindSymm") {
      const UpwindParts parts = upwind_first_derivative(options_.fd_order);
      result = apply_weights(
          operand, e.name == "DupwindAnti" ? parts.antisymmetric : parts.symmetric, axes[0]);
    } else if (axes.size() == 1) {
      result = apply_weights(operand, centered_first_derivative(options_.fd_order), axes[0]);
    } else if (axes[0] == axes[1]) {
      result = apply_weights(operand, centered_second_derivative(options_.fd_order), axes[0], 2);
    } else {
      auto first = centered_first_derivative(options_.fd_order);
      result = apply_weights(operand, first, axes[0], 1, &first, axes[1]);
    }
    dag.pin(result);
    // Remember where each grid function is first read at a neighbour, for the race check.
    for (NodeId id : dag.reachable({result})) {
      const Node& n = dag.node(id);
      if (n.op == Op::Load && n.offset != Offset{0, 0, 0})
        stencil_use_.emplace(n.index, e.args[0]->loc);
    }
    return result;
  }

  // sum_k w_k f(x + k e_a) / h_a^power; with `wb`, the product stencil of a mixed derivative
  // along axes a and b.
  NodeId apply_weights(NodeId operand, const std::vector<StencilWeight>& wa, int axis_a,
                       int power = 1, const std::vector<StencilWeight>* wb = nullptr,
                       int axis_b = -1) {
    Dag& dag = *dag_;
    // D(u + c) = D(u) for uniform c: drop the uniform terms first, so they leave no rounding
    // residue in the stencil sum.
    if (dag.node(operand).op == Op::Add) {
      Node sum = dag.node(operand);
      std::vector<std::pair<NodeId, double>> varying;
      for (std::size_t k = 0; k < sum.kids.size(); ++k)
        if (!dag.node(sum.kids[k]).uniform) varying.emplace_back(sum.kids[k], sum.weights[k]);
      operand = dag.add(std::move(varying));
    }
    // Points of the stencil where the shifted operand coincides (a uniform operand, or one
    // that does not vary along the axis) are summed exactly, so such a derivative is exactly 0.
    std::map<NodeId, Rational> weights;
    for (const auto& a : wa) {
      Offset offset{0, 0, 0};
      offset[axis_a] = a.offset;
      if (axis_b < 0) {
        weights[dag.shift(operand, offset)] += a.weight;
        continue;
      }
      for (const auto& b : *wb) {
        Offset both = offset;
        both[axis_b] += b.offset;
        weights[dag.shift(operand, both)] += a.weight * b.weight;
      }
    }
    std::vector<std::pair<NodeId, double>> terms;
    for (const auto& [node, w] : weights)
      if (!w.is_zero()) terms.emplace_back(node, w.to_double());
    std::vector<std::pair<NodeId, double>> factors{{dag.add(std::move(terms)), 1.0},
                                                   {dag.spacing(axis_a), -double(power)}};
    if (axis_b >= 0) factors.emplace_back(dag.spacing(axis_b), -1.0);
    return dag.mul(std::move(factors));
  }

  NodeId apply_user_operator(const edl::DerivativeDef& def, const Expr& use,
                             const std::vector<int>& axes, NodeId operand) {
    DefinitionContext ctx;
    ctx.def = &def;
    ctx.operand = operand;
    const auto& slots = def.operand.indices;
    std::vector<std::string> distinct;
    for (const Index& i : slots)
      if (std::find(distinct.begin(), distinct.end(), i.symbol) == distinct.end())
        distinct.push_back(i.symbol);
    if (axes.size() == slots.size()) {
      for (std::size_t k = 0; k < slots.size(); ++k) {
        auto [it, inserted] = ctx.axis_of.emplace(slots[k].symbol, axes[k]);
        if (!inserted && it->second != axes[k])
          throw EdlError(use.loc, fmt::format("'{}' is defined on '{}' with a repeated index, so "
                                              "its directions must be equal",
                                              def.name, def.operand.name));
      }
    } else {
      for (std::size_t k = 0; k < distinct.size(); ++k) ctx.axis_of[distinct[k]] = axes[k];
    }
    const DefinitionContext* saved = def_;
    def_ = &ctx;
    NodeId result;
    try {
      result = lower(*def.rhs, {});
    } catch (...) {
      def_ = saved;
      throw;
    }
    def_ = saved;
    return result;
  }

  // The intermediate grid function holding `value`; one per distinct expression.
  int intermediate(NodeId value) {
    if (auto it = intermediate_of_.find(value); it != intermediate_of_.end()) return it->second;
    int stage = 0;
    for (NodeId id : dag_->reachable({value})) {
      const Node& n = dag_->node(id);
      if (n.op == Op::Load && intermediate_stage_[n.index] >= 0)
        stage = std::max(stage, intermediate_stage_[n.index] + 1);
    }
    int gf = grid_function(fmt::format("{}_tmp{}", calc_->name, intermediate_of_.size() + 1),
                           GridFunctionRole::Intermediate, "");
    intermediate_stage_[gf] = stage;
    intermediate_of_[value] = gf;
    return gf;
  }

  // Intermediates go to their stages, outputs to the last; then each stage's extent is the
  // region later stages read it on.
  void build_stages(Calculation& calc, const std::vector<std::pair<int, NodeId>>& stores) {
    int last = 0;
    for (const auto& [value, gf] : intermediate_of_)
      last = std::max(last, intermediate_stage_[gf] + 1);
    calc.stages.assign(last + 1, Stage{});
    for (const auto& [value, gf] : intermediate_of_)
      calc.stages[intermediate_stage_[gf]].stores.push_back(Store{gf, value});
    for (auto& stage : calc.stages)
      std::sort(stage.stores.begin(), stage.stores.end(),
                [](const Store& a, const Store& b) { return a.grid_function < b.grid_function; });
    for (const auto& [gf, value] : stores) calc.stages[last].stores.push_back(Store{gf, value});

    for (int s = last - 1; s >= 0; --s) {
      Stage& stage = calc.stages[s];
      for (int later = s + 1; later <= last; ++later) {
        std::vector<NodeId> roots;
        for (const Store& st : calc.stages[later].stores) roots.push_back(st.value);
        for (NodeId id : calc.dag.reachable(roots)) {
          const Node& n = calc.dag.node(id);
          if (n.op != Op::Load || intermediate_stage_[n.index] != s) continue;
          for (int a = 0; a < 3; ++a) {
            stage.extent_lo[a] = std::max(stage.extent_lo[a], calc.stages[later].extent_lo[a] +
                                                                  std::max(0, -n.offset[a]));
            stage.extent_hi[a] = std::max(stage.extent_hi[a], calc.stages[later].extent_hi[a] +
                                                                  std::max(0, n.offset[a]));
          }
        }
      }
    }
  }

  // A grid function this calculation writes may not be read at a neighbouring point: on a
  // parallel machine the neighbour may already hold the new value.
  void check_races(const Calculation& calc, const std::map<int, SourceLoc>& stored_at) {
    std::vector<NodeId> roots;
    for (const Stage& stage : calc.stages)
      for (const Store& st : stage.stores) roots.push_back(st.value);
    for (NodeId id : calc.dag.reachable(roots)) {
      const Node& n = calc.dag.node(id);
      if (n.op != Op::Load || n.offset == Offset{0, 0, 0}) continue;
      auto written = stored_at.find(n.index);
      if (written == stored_at.end()) continue;
      auto used = stencil_use_.find(n.index);
      SourceLoc where = used != stencil_use_.end() ? used->second : written->second;
      throw EdlError(where,
                     fmt::format("grid function '{}' is written by calculation '{}' and also read "
                                 "at a neighbouring point (offset {},{},{}); the result would "
                                 "depend on the order points are computed in. Compute the "
                                 "derivative in an earlier calculation or write a new grid "
                                 "function",
                                 calc.grid_functions[n.index].name, calc.name, n.offset[0],
                                 n.offset[1], n.offset[2]),
                     {{written->second, "written here"}});
    }
  }

  struct DefinitionContext {
    const edl::DerivativeDef* def = nullptr;
    std::map<std::string, int> axis_of;
    NodeId operand = 0;
  };

  const edl::Thorn& thorn_;
  LowerOptions options_;
  Program program_;
  std::map<std::string, SourceLoc> declared_at_;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> component_of_;
  std::map<std::string, int> parameter_index_;
  std::map<std::string, const edl::DerivativeDef*> operators_;
  std::map<std::string, SourceLoc> evolved_at_;
  std::unordered_map<const Expr*, IndexInfo> info_;
  std::vector<IndexUse> summed_; // summed indices met while analysing one right side

  // Per calculation.
  Calculation* calc_ = nullptr;
  Dag* dag_ = nullptr;
  std::map<std::string, NodeId> current_; // values assigned earlier in this calculation
  std::map<NodeId, int> intermediate_of_;
  std::vector<int> intermediate_stage_; // per grid function; -1 unless an intermediate
  std::map<int, SourceLoc> stencil_use_;
  const DefinitionContext* def_ = nullptr;
  bool constant_mode_ = false;
};

} // namespace

Program lower(const edl::Thorn& thorn, const LowerOptions& options) {
  return Lowerer(thorn, options).run();
}

} // namespace saguaro::calc
