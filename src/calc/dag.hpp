// The expression DAG of a calculation: hash-consed, so an expression built twice is one node
// (common-subexpression elimination by construction), and kept in a canonical form so that
// simple algebra folds as it is built:
//   Add  = constant + sum_k c_k * term_k     (terms distinct, sorted; numeric coefficients
//   collected) Mul  = coefficient * prod_k factor_k^e_k (integer exponents; x*x -> x^2, x/x -> 1)
// Children always have smaller ids than their parents, so id order is a topological order.
//
// Flattening a sum into a larger sum (or a product into a product) would copy a value that
// the user named once, a temporary say, into every place that uses it, and so compute it
// again in each. Nodes the lowering *pins* (named values, derivatives) therefore stay whole
// inside their parents: the user's factoring is kept, and shared values are computed once.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace saguaro::calc {

using NodeId = std::uint32_t;
using Offset = std::array<int, 3>;

enum class Op : std::uint8_t {
  Constant,   // value
  Parameter,  // index into the thorn's parameters (uniform)
  Spacing,    // grid spacing along axis (uniform)
  Time,       // simulation time (uniform)
  Coordinate, // coordinate along axis at the point shifted by offset
  Load,       // grid function `index` at the point shifted by offset
  Add,
  Mul,
  Pow,  // kids[0] ** kids[1], exponent not a constant integer or 1/2
  Call, // function `fn` of kids
};

enum class Function : std::uint8_t {
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Atan2,
  Sinh,
  Cosh,
  Tanh,
  Exp,
  Log,
  Sqrt,
  Abs,
  Pow,
  Min,
  Max,
  Sign,
  Fmod,
  IfThen, // if(c, a, b): a where c is not zero, else b (Kranc's IfThen, `c ? a : b`)
};
const char* function_name(Function fn);
bool function_from_name(const std::string& name, Function& fn);
double apply_function(Function fn, const double* args);

struct Node {
  Op op = Op::Constant;
  Function fn = Function::Sin;
  bool uniform = true; // the same value at every grid point (hoistable)
  int index = 0;       // Parameter: parameter; Spacing/Coordinate: axis; Load: grid function
  Offset offset{0, 0, 0};
  double value = 0.0; // Constant: value; Add: constant term; Mul: coefficient
  std::vector<NodeId> kids;
  std::vector<double> weights; // Add: term coefficients; Mul: exponents (integers)
};

class Dag {
public:
  const Node& node(NodeId id) const { return nodes_[id]; }
  std::size_t size() const { return nodes_.size(); }

  NodeId constant(double value);
  NodeId parameter(int index);
  NodeId spacing(int axis);
  NodeId time();
  NodeId coordinate(int axis, Offset offset = {0, 0, 0});
  NodeId load(int grid_function, Offset offset = {0, 0, 0});

  NodeId add(std::vector<std::pair<NodeId, double>> terms, double constant_term = 0.0);
  NodeId mul(std::vector<std::pair<NodeId, double>> factors, double coefficient = 1.0);
  NodeId power(NodeId base, NodeId exponent);
  NodeId call(Function fn, std::vector<NodeId> args);

  NodeId add(NodeId a, NodeId b) { return add({{a, 1.0}, {b, 1.0}}); }
  NodeId sub(NodeId a, NodeId b) { return add({{a, 1.0}, {b, -1.0}}); }
  NodeId mul(NodeId a, NodeId b) { return mul({{a, 1.0}, {b, 1.0}}); }
  NodeId div(NodeId a, NodeId b) { return mul({{a, 1.0}, {b, -1.0}}); }
  NodeId scale(NodeId a, double c) { return mul({{a, 1.0}}, c); }
  NodeId neg(NodeId a) { return scale(a, -1.0); }

  bool is_constant(NodeId id, double* value = nullptr) const;

  // Keeps `id` whole when later sums and products use it (see above). Pinning does not change
  // the node's identity, only how future parents are built.
  void pin(NodeId id) { pinned_[id] = 1; }
  bool pinned(NodeId id) const { return pinned_[id] != 0; }

  // The expression evaluated at the point shifted by `by` (loads and coordinates move,
  // uniform values stay).
  NodeId shift(NodeId id, Offset by);

  // True when the node is a linear combination of loads and coordinates with uniform
  // coefficients: a stencil operator can then be applied by shifting it, exactly.
  bool is_stencil_linear(NodeId id) const;

  // All nodes reachable from `roots`, in increasing id (topological) order.
  std::vector<NodeId> reachable(const std::vector<NodeId>& roots) const;

private:
  NodeId intern(Node node);

  std::vector<Node> nodes_;
  std::vector<char> pinned_;
  std::unordered_map<std::string, NodeId> index_;
  std::unordered_map<std::uint64_t, NodeId> shift_memo_;
};

} // namespace saguaro::calc
