// The EDL syntax tree: what the parser produces and the lowering (calc/) consumes. Every node
// keeps its source location so that semantic errors can point at the culprit.
#pragma once

#include "edl/diagnostics.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::edl {

// One index slot of a tensor or operator: `_i` (symbol), `_1` (fixed component), or inside a
// user stencil `u_(i+1)` (symbol with a shift).
struct Index {
  enum class Kind { Symbol, Component };
  Kind kind = Kind::Symbol;
  bool upper = false;
  std::string symbol; // letter plus primes: "i", "j'"
  int component = 0;  // 1..3
  int shift = 0;      // only in derivative definitions
  SourceLoc loc;

  bool is_symbol() const { return kind == Kind::Symbol; }
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    Number,     // value
    Tensor,     // name + indices: grid function, temporary, parameter, builtin, coordinate
    Derivative, // name + indices applied to args[0]
    Call,       // name(args...)
    Negate,     // -args[0]
    Add,        // args[0] + args[1]
    Subtract,
    Multiply,
    Divide,
    Modulo,
    Power,
  };
  Kind kind = Kind::Number;
  SourceLoc loc;
  double value = 0.0;
  std::string name;
  std::vector<Index> indices;
  std::vector<ExprPtr> args;
  bool parenthesized = false; // written in ( ): a unit of its own for index summation
  int height = 1; // the longest path to a leaf, counting this node (bounded by the parser)
};

// `v_i`, `g_ij`, `phi` as declared or as the left side of an equation.
struct TensorRef {
  std::string name;
  std::vector<Index> indices;
  SourceLoc loc;
};

enum class ParameterType { Real, Int, Keyword, Boolean };
const char* to_string(ParameterType type);

struct ParameterDecl {
  std::string name;
  ParameterType type = ParameterType::Real;
  std::string description;
  ExprPtr default_value;    // real/int: a constant expression
  std::string default_word; // keyword: the default; boolean: "true"/"false"
  bool has_default = false;
  ExprPtr range_min, range_max; // nullptr: open end (-infinity / infinity) or no range
  bool has_range = false;
  std::vector<std::string> keyword_values;
  SourceLoc loc;
  SourceLoc default_loc, range_loc; // where the default and the range are written
};

// `begin group NAME ... end group`: its members are grid functions; a member not declared in
// `begin variables` is declared by the group (Kranc's groups declare their variables).
struct GroupDecl {
  std::string name;
  std::vector<std::pair<TensorRef, std::string>> members; // tensor, description
  SourceLoc loc;
};

// The built-in derivative operators (EDL.md, "Derivatives"): D (centered D_i, D_ij of the run's
// order) and the two parts of the upwinded first derivative, so that the advection term
// beta^k d_k u upwinded is written  beta^k DupwindAnti_k u + abs(beta^k) DupwindSymm_k u.
// A derivatives block may redefine any of them.
inline constexpr std::array<std::string_view, 3> kBuiltinOperators = {"D", "DupwindAnti",
                                                                      "DupwindSymm"};
inline bool is_builtin_operator(std::string_view name) {
  return std::find(kBuiltinOperators.begin(), kBuiltinOperators.end(), name) !=
         kBuiltinOperators.end();
}

// A derivative operator of a `begin derivatives` block, in one of two forms.
//  - Stencil form, `Dplus u_i = (u_(i+1) - u_(i)) / h`: `operand` holds the dummy grid function
//    and the direction slots; `rhs` refers to the operand with shifted indices and to `h`.
//  - Operator form (Kranc's shift algebra), `PDstandard2nd_ij = DZero_i DZero_j`: `algebra` is
//    set, `operand` has no name and holds the direction slots written on the operator, and
//    `rhs` is an expression in `shift_i`, `spacing_i`, other operators, numbers, parameters and
//    Kranc's StandardCenteredDifferenceOperator / StandardUpwindDifferenceOperator; a product
//    is a composition. The lowering turns it into the stencil form (calc/lower_operators.cpp).
// A name may have several definitions for different index patterns (`_i`, `_ij`, `_ii`).
struct DerivativeDef {
  std::string name;
  TensorRef operand;
  ExprPtr rhs;
  SourceLoc loc;
  bool algebra = false;
};

struct Equation {
  bool time_derivative = false; // `D_t lhs = rhs`
  TensorRef lhs;
  ExprPtr rhs;
  SourceLoc loc; // the whole left side
};

struct CalculationDecl {
  std::string name;
  std::string schedule_bin;  // empty: decided by the lowering (MoL_CalcRHS or analysis)
  std::string schedule_word; // "at" or "in"
  bool on_boundary = false;  // `on boundary`, or scheduled in MoL_RHSBoundaries
  std::vector<Equation> equations;
  SourceLoc loc;
};

struct Thorn {
  std::string name;
  std::shared_ptr<const SourceFile> file;
  SourceLoc loc;
  std::vector<std::string> inherits;
  std::vector<SourceLoc> inherit_locs; // where each of `inherits` is named
  std::string implements;
  std::map<std::string, bool> features; // use / disable
  std::vector<ParameterDecl> parameters;
  std::vector<TensorRef> variables;
  std::vector<TensorRef> temporaries;
  std::vector<GroupDecl> groups;
  std::vector<DerivativeDef> derivatives;
  std::vector<CalculationDecl> calculations;
};

} // namespace saguaro::edl
