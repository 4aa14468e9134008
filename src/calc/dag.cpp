#include "calc/dag.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace saguaro::calc {

namespace {
struct FunctionInfo {
  Function fn;
  const char* name;
};
constexpr FunctionInfo kFunctions[] = {
    {Function::Sin, "sin"},     {Function::Cos, "cos"},   {Function::Tan, "tan"},
    {Function::Asin, "asin"},   {Function::Acos, "acos"}, {Function::Atan, "atan"},
    {Function::Atan2, "atan2"}, {Function::Sinh, "sinh"}, {Function::Cosh, "cosh"},
    {Function::Tanh, "tanh"},   {Function::Exp, "exp"},   {Function::Log, "log"},
    {Function::Sqrt, "sqrt"},   {Function::Abs, "abs"},   {Function::Pow, "pow"},
    {Function::Min, "min"},     {Function::Max, "max"},   {Function::Sign, "sign"},
    {Function::Fmod, "fmod"},   {Function::IfThen, "if"},
};

bool is_integer(double x) {
  return std::isfinite(x) && x == std::floor(x);
}

double checked(double v) {
  if (!std::isfinite(v))
    throw std::domain_error("constant expression is not finite (division by zero or overflow)");
  return v == 0.0 ? 0.0 : v; // one zero: -0.0 and 0.0 must hash alike
}
} // namespace

const char* function_name(Function fn) {
  for (const auto& f : kFunctions)
    if (f.fn == fn) return f.name;
  return "?";
}

bool function_from_name(const std::string& name, Function& fn) {
  for (const auto& f : kFunctions)
    if (name == f.name) {
      fn = f.fn;
      return true;
    }
  return false;
}

double apply_function(Function fn, const double* a) {
  switch (fn) {
  case Function::Sin: return std::sin(a[0]);
  case Function::Cos: return std::cos(a[0]);
  case Function::Tan: return std::tan(a[0]);
  case Function::Asin: return std::asin(a[0]);
  case Function::Acos: return std::acos(a[0]);
  case Function::Atan: return std::atan(a[0]);
  case Function::Atan2: return std::atan2(a[0], a[1]);
  case Function::Sinh: return std::sinh(a[0]);
  case Function::Cosh: return std::cosh(a[0]);
  case Function::Tanh: return std::tanh(a[0]);
  case Function::Exp: return std::exp(a[0]);
  case Function::Log: return std::log(a[0]);
  case Function::Sqrt: return std::sqrt(a[0]);
  case Function::Abs: return std::fabs(a[0]);
  case Function::Pow: return std::pow(a[0], a[1]);
  case Function::Min: return std::fmin(a[0], a[1]);
  case Function::Max: return std::fmax(a[0], a[1]);
  case Function::Sign: return a[0] > 0 ? 1.0 : (a[0] < 0 ? -1.0 : 0.0);
  case Function::Fmod: return std::fmod(a[0], a[1]);
  case Function::IfThen: return a[0] != 0.0 ? a[1] : a[2];
  }
  return 0.0;
}

NodeId Dag::intern(Node node) {
  std::string key;
  key.reserve(32 + node.kids.size() * 12);
  auto put = [&key](const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); };
  put(&node.op, sizeof node.op);
  put(&node.fn, sizeof node.fn);
  put(&node.index, sizeof node.index);
  put(node.offset.data(), sizeof(int) * 3);
  put(&node.value, sizeof node.value);
  for (std::size_t i = 0; i < node.kids.size(); ++i) {
    put(&node.kids[i], sizeof(NodeId));
    if (i < node.weights.size()) put(&node.weights[i], sizeof(double));
  }
  auto [it, inserted] = index_.try_emplace(std::move(key), NodeId(nodes_.size()));
  if (inserted) {
    node.uniform = node.op != Op::Load && node.op != Op::Coordinate;
    for (NodeId k : node.kids) node.uniform = node.uniform && nodes_[k].uniform;
    nodes_.push_back(std::move(node));
    pinned_.push_back(0);
  }
  return it->second;
}

NodeId Dag::constant(double value) {
  Node n;
  n.op = Op::Constant;
  n.value = checked(value);
  return intern(std::move(n));
}

NodeId Dag::parameter(int index) {
  Node n;
  n.op = Op::Parameter;
  n.index = index;
  return intern(std::move(n));
}

NodeId Dag::spacing(int axis) {
  Node n;
  n.op = Op::Spacing;
  n.index = axis;
  return intern(std::move(n));
}

NodeId Dag::time() {
  Node n;
  n.op = Op::Time;
  return intern(std::move(n));
}

NodeId Dag::coordinate(int axis, Offset offset) {
  Node n;
  n.op = Op::Coordinate;
  n.index = axis;
  n.offset = offset;
  return intern(std::move(n));
}

NodeId Dag::load(int grid_function, Offset offset) {
  Node n;
  n.op = Op::Load;
  n.index = grid_function;
  n.offset = offset;
  return intern(std::move(n));
}

bool Dag::is_constant(NodeId id, double* value) const {
  if (nodes_[id].op != Op::Constant) return false;
  if (value) *value = nodes_[id].value;
  return true;
}

namespace {
// Sorts by id and merges duplicates by summing weights; drops zero weights.
void merge_terms(std::vector<std::pair<NodeId, double>>& terms) {
  std::sort(terms.begin(), terms.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < terms.size();) {
    NodeId id = terms[i].first;
    double w = 0.0;
    for (; i < terms.size() && terms[i].first == id; ++i) w += terms[i].second;
    if (w != 0.0) terms[out++] = {id, w};
  }
  terms.resize(out);
}
} // namespace

NodeId Dag::add(std::vector<std::pair<NodeId, double>> terms, double constant_term) {
  std::vector<std::pair<NodeId, double>> flat;
  flat.reserve(terms.size());
  // Flatten nested sums, fold constants, and pull numeric coefficients of products out into
  // term weights so that 2x + 3x collects to 5x.
  std::vector<std::pair<NodeId, double>> work(terms.rbegin(), terms.rend());
  while (!work.empty()) {
    auto [id, w] = work.back();
    work.pop_back();
    if (w == 0.0) continue;
    const Node& n = nodes_[id];
    if (n.op == Op::Constant) {
      constant_term += w * n.value;
    } else if (n.op == Op::Add && !pinned(id)) {
      constant_term += w * n.value;
      for (std::size_t k = n.kids.size(); k-- > 0;) work.emplace_back(n.kids[k], w * n.weights[k]);
    } else if (n.op == Op::Mul && n.value != 1.0 && !pinned(id)) {
      double c = n.value;
      std::vector<std::pair<NodeId, double>> factors;
      for (std::size_t k = 0; k < n.kids.size(); ++k) factors.emplace_back(n.kids[k], n.weights[k]);
      NodeId bare = mul(std::move(factors), 1.0); // may grow nodes_: `n` is not used after
      flat.emplace_back(bare, w * c);
    } else {
      flat.emplace_back(id, w);
    }
  }
  merge_terms(flat);
  constant_term = checked(constant_term);
  if (flat.empty()) return constant(constant_term);
  if (flat.size() == 1 && constant_term == 0.0) {
    if (flat[0].second == 1.0) return flat[0].first;
    return mul({{flat[0].first, 1.0}}, flat[0].second);
  }
  Node node;
  node.op = Op::Add;
  node.value = constant_term;
  for (auto& [id, w] : flat) {
    node.kids.push_back(id);
    node.weights.push_back(checked(w));
  }
  return intern(std::move(node));
}

NodeId Dag::mul(std::vector<std::pair<NodeId, double>> factors, double coefficient) {
  std::vector<std::pair<NodeId, double>> flat;
  std::vector<std::pair<NodeId, double>> work(factors.rbegin(), factors.rend());
  while (!work.empty()) {
    auto [id, e] = work.back();
    work.pop_back();
    if (e == 0.0) continue;
    const Node& n = nodes_[id];
    if (n.op == Op::Constant) {
      coefficient *= std::pow(n.value, e);
    } else if (n.op == Op::Mul && !pinned(id)) {
      coefficient *= std::pow(n.value, e);
      for (std::size_t k = n.kids.size(); k-- > 0;) work.emplace_back(n.kids[k], e * n.weights[k]);
    } else {
      flat.emplace_back(id, e);
    }
  }
  coefficient = checked(coefficient);
  merge_terms(flat);
  if (coefficient == 0.0) return constant(0.0);
  if (flat.empty()) return constant(coefficient);
  if (flat.size() == 1 && flat[0].second == 1.0 && coefficient == 1.0) return flat[0].first;
  Node node;
  node.op = Op::Mul;
  node.value = coefficient;
  for (auto& [id, e] : flat) {
    node.kids.push_back(id);
    node.weights.push_back(e);
  }
  return intern(std::move(node));
}

NodeId Dag::power(NodeId base, NodeId exponent) {
  double b = 0.0, e = 0.0;
  bool base_constant = is_constant(base, &b);
  if (is_constant(exponent, &e)) {
    if (base_constant) return constant(std::pow(b, e));
    if (is_integer(e) && std::fabs(e) <= 64) return mul({{base, e}});
    if (e == 0.5) return call(Function::Sqrt, {base});
    if (e == -0.5) return mul({{call(Function::Sqrt, {base}), -1.0}});
  }
  Node node;
  node.op = Op::Pow;
  node.kids = {base, exponent};
  return intern(std::move(node));
}

NodeId Dag::call(Function fn, std::vector<NodeId> args) {
  if (fn == Function::Pow) return power(args.at(0), args.at(1));
  bool all_constant = true;
  std::vector<double> values;
  for (NodeId a : args) {
    double v = 0.0;
    all_constant = all_constant && is_constant(a, &v);
    values.push_back(v);
  }
  if (all_constant) return constant(apply_function(fn, values.data()));
  Node node;
  node.op = Op::Call;
  node.fn = fn;
  node.kids = std::move(args);
  return intern(std::move(node));
}

NodeId Dag::shift(NodeId id, Offset by) {
  if (by == Offset{0, 0, 0} || nodes_[id].uniform) return id;
  for (int d : by)
    if (d < -500 || d > 500) throw std::out_of_range("stencil offset too large");
  std::uint64_t key = std::uint64_t(id) << 30;
  for (int a = 0; a < 3; ++a) key |= std::uint64_t(by[a] + 512) << (10 * a);
  if (auto it = shift_memo_.find(key); it != shift_memo_.end()) return it->second;
  Node n = nodes_[id]; // copy: building below grows nodes_
  NodeId result = id;
  switch (n.op) {
  case Op::Load:
  case Op::Coordinate: {
    Offset moved{n.offset[0] + by[0], n.offset[1] + by[1], n.offset[2] + by[2]};
    result = n.op == Op::Load ? load(n.index, moved) : coordinate(n.index, moved);
    break;
  }
  case Op::Add:
  case Op::Mul: {
    std::vector<std::pair<NodeId, double>> parts;
    for (std::size_t k = 0; k < n.kids.size(); ++k)
      parts.emplace_back(shift(n.kids[k], by), n.weights[k]);
    result = n.op == Op::Add ? add(std::move(parts), n.value) : mul(std::move(parts), n.value);
    break;
  }
  case Op::Pow: result = power(shift(n.kids[0], by), shift(n.kids[1], by)); break;
  case Op::Call: {
    std::vector<NodeId> args;
    for (NodeId k : n.kids) args.push_back(shift(k, by));
    result = call(n.fn, std::move(args));
    break;
  }
  default: break;
  }
  shift_memo_.emplace(key, result);
  return result;
}

bool Dag::is_stencil_linear(NodeId id) const {
  const Node& n = nodes_[id];
  if (n.uniform || n.op == Op::Load || n.op == Op::Coordinate) return true;
  if (n.op == Op::Add) {
    for (NodeId k : n.kids)
      if (!is_stencil_linear(k)) return false;
    return true;
  }
  if (n.op == Op::Mul) {
    int varying = 0;
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
      if (nodes_[n.kids[k]].uniform) continue;
      if (++varying > 1 || n.weights[k] != 1.0 || !is_stencil_linear(n.kids[k])) return false;
    }
    return true;
  }
  return false;
}

std::vector<NodeId> Dag::reachable(const std::vector<NodeId>& roots) const {
  std::vector<char> seen(nodes_.size(), 0);
  std::vector<NodeId> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    for (NodeId k : nodes_[id].kids) stack.push_back(k);
  }
  std::vector<NodeId> out;
  for (NodeId id = 0; id < nodes_.size(); ++id)
    if (seen[id]) out.push_back(id);
  return out;
}

} // namespace saguaro::calc
