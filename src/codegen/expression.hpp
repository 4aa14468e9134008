// Writing DAG nodes as C++ expressions: the part of code generation that the C++ (CPU) and
// CUDA dialects share. A dialect says how functions are called and how the uniform leaves
// (parameters, spacings, time) are spelled; everything else (sums left to right as the
// interpreter adds, long sums split into partial chains, integer powers as multiplications,
// uniform factors of products folded into one hoisted value) is written once here.
#pragma once

#include "calc/dag.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::codegen {

// "saguaro_sin", ...: the helper a prelude defines for a function call, the names the C++ and
// Kokkos dialects share (the C++ one spells sqrt and fabs as std::).
const char* saguaro_helper(calc::Function fn);

// "_y1_zm2": the name part of a row offset (dy, dz) in generated names; "" for (0, 0).
std::string row_offset_suffix(int dy, int dz);

class ExpressionEmitter {
public:
  explicit ExpressionEmitter(const calc::Dag& dag) : dag_(dag) {}
  virtual ~ExpressionEmitter() = default;

  // The text that stands for node `id` inside an expression: a literal for constants,
  // u<id> for uniform values, n<id> for the others.
  std::string ref(calc::NodeId id) const;

  // The expression of a uniform node (parameters, spacings, time and what is computed from
  // them only), computed once per thread outside the loops.
  std::string uniform_expr(calc::NodeId id);

  // The expression of a varying arithmetic node (Add, Mul, Pow, Call) inside the loops.
  std::string varying_expr(calc::NodeId id);

  // sum w_k term_k (terms' refs), as a sum node's terms are written: calc/sums_by_input's
  // partial sums.
  std::string weighted_sum(const std::vector<std::pair<calc::NodeId, double>>& terms) const;

  // Hoisted values (h0, h1, ...) with their expressions, in creation order; they depend on
  // uniform values only.
  const std::vector<std::pair<std::string, std::string>>& hoisted() const { return hoisted_order_; }
  // A hoisted value with the given expression, shared by every use of the same one.
  std::string hoist(const std::string& text);

  // Names of helper functions (saguaro_*) the expressions call.
  const std::set<std::string>& helpers() const { return helpers_; }

protected:
  // The callee for a function node, e.g. "std::sin" or "saguaro_sin"; names beginning with
  // "saguaro_" are recorded as helpers.
  virtual std::string function_name(calc::Function fn) const = 0;
  // The text of a Parameter, Spacing or Time node.
  virtual std::string uniform_leaf(const calc::Node& n) const = 0;

  const calc::Dag& dag_;

private:
  std::string power(const std::string& base, long e);
  std::string product(const calc::Node& n, bool hoist_uniform);
  std::string product_text(const std::string& factor,
                           const std::vector<std::pair<calc::NodeId, long>>& factors);
  std::string sum(const calc::Node& n, bool split) const;
  std::string sum_text(double value, const std::vector<std::pair<calc::NodeId, double>>& terms,
                       bool split) const;
  std::string call(const calc::Node& n);
  std::string pow_node(const calc::Node& n);
  std::string helper(const std::string& name);

  std::set<std::string> helpers_;
  std::map<std::string, std::string> hoisted_;
  std::vector<std::pair<std::string, std::string>> hoisted_order_;
};

// Number of arguments a function takes.
int arity(calc::Function fn);

} // namespace saguaro::codegen
