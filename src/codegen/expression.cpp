#include "codegen/expression.hpp"

#include "codegen/cpp.hpp" // cpp_literal

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace saguaro::codegen {

const char* saguaro_helper(calc::Function fn) {
  using calc::Function;
  switch (fn) {
  case Function::Sin: return "saguaro_sin";
  case Function::Cos: return "saguaro_cos";
  case Function::Tan: return "saguaro_tan";
  case Function::Asin: return "saguaro_asin";
  case Function::Acos: return "saguaro_acos";
  case Function::Atan: return "saguaro_atan";
  case Function::Atan2: return "saguaro_atan2";
  case Function::Sinh: return "saguaro_sinh";
  case Function::Cosh: return "saguaro_cosh";
  case Function::Tanh: return "saguaro_tanh";
  case Function::Exp: return "saguaro_exp";
  case Function::Log: return "saguaro_log";
  case Function::Sqrt: return "saguaro_sqrt";
  case Function::Abs: return "saguaro_fabs";
  case Function::Pow: return "saguaro_pow";
  case Function::Min: return "saguaro_fmin";
  case Function::Max: return "saguaro_fmax";
  case Function::Sign: return "saguaro_sign";
  case Function::Fmod: return "saguaro_fmod";
  case Function::IfThen: return "saguaro_if";
  }
  return "?";
}

std::string row_offset_suffix(int dy, int dz) {
  if (dy == 0 && dz == 0) return "";
  auto part = [](const char* axis, int d) {
    return std::string("_") + axis + (d < 0 ? "m" : "") + std::to_string(std::abs(d));
  };
  return part("y", dy) + part("z", dz);
}

using calc::Function;
using calc::Node;
using calc::NodeId;
using calc::Op;

std::string cpp_literal(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("codegen: a constant is not finite");
  char buffer[64];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

int arity(Function fn) {
  switch (fn) {
  case Function::Atan2:
  case Function::Pow:
  case Function::Min:
  case Function::Max:
  case Function::Fmod: return 2;
  case Function::IfThen: return 3;
  default: return 1;
  }
}

std::string ExpressionEmitter::ref(NodeId id) const {
  const Node& n = dag_.node(id);
  if (n.op == Op::Constant) {
    std::string lit = cpp_literal(n.value);
    return n.value < 0 ? "(" + lit + ")" : lit;
  }
  return (n.uniform ? "u" : "n") + std::to_string(id);
}

std::string ExpressionEmitter::hoist(const std::string& text) {
  auto [it, inserted] = hoisted_.try_emplace(text, "h" + std::to_string(hoisted_.size()));
  if (inserted) hoisted_order_.emplace_back(it->second, text);
  return it->second;
}

std::string ExpressionEmitter::helper(const std::string& name) {
  if (name.rfind("saguaro_", 0) == 0) helpers_.insert(name);
  return name;
}

// base^e for e >= 1 by multiplications (squaring for even exponents).
std::string ExpressionEmitter::power(const std::string& base, long e) {
  if (e == 1) return base;
  if (e > 16) return helper("saguaro_powi") + "(" + base + ", " + std::to_string(e) + ")";
  if (e % 2 == 0) {
    std::string half = power(base, e / 2);
    return "(" + half + " * " + half + ")";
  }
  return "(" + power(base, e - 1) + " * " + base + ")";
}

namespace {
std::string coefficient(double value) {
  if (value == 1.0) return "";
  return value < 0 ? "(" + cpp_literal(value) + ")" : cpp_literal(value);
}
} // namespace

// coefficient * prod factors^e. When `hoist_uniform`, the coefficient and the uniform factors
// become one hoisted value (divisions by uniform values thereby become multiplications).
std::string ExpressionEmitter::product(const Node& n, bool hoist_uniform) {
  std::vector<std::pair<NodeId, long>> varying, uniform;
  for (std::size_t k = 0; k < n.kids.size(); ++k) {
    long e = std::lround(n.weights[k]);
    if (e == 0) continue;
    (hoist_uniform && dag_.node(n.kids[k]).uniform ? uniform : varying).emplace_back(n.kids[k], e);
  }
  if (!uniform.empty()) {
    std::string factor = product_text(coefficient(n.value), uniform);
    if (factor.find(' ') != std::string::npos) factor = hoist(factor); // else one value
    return product_text(factor, varying);
  }
  if (n.value == -1.0 && !varying.empty()) return "-(" + product_text("", varying) + ")";
  return product_text(coefficient(n.value), varying);
}

// factor * prod factors^e (factor "" for none): numerator / (denominator).
std::string ExpressionEmitter::product_text(const std::string& factor,
                                            const std::vector<std::pair<NodeId, long>>& factors) {
  std::string num = factor, den;
  int den_count = 0;
  for (const auto& [id, e] : factors) {
    if (e > 0) {
      num += (num.empty() ? "" : " * ") + power(ref(id), e);
    } else {
      den += (den.empty() ? "" : " * ") + power(ref(id), -e);
      ++den_count;
    }
  }
  std::string text = num.empty() ? "1.0" : num;
  if (!den.empty()) text += " / " + (den_count > 1 ? "(" + den + ")" : den);
  return text;
}

// value + sum w_k kid_k, left to right as the interpreter adds.
std::string ExpressionEmitter::sum(const Node& n, bool split) const {
  std::vector<std::pair<NodeId, double>> terms;
  for (std::size_t k = 0; k < n.kids.size(); ++k) terms.emplace_back(n.kids[k], n.weights[k]);
  return sum_text(n.value, terms, split);
}

std::string
ExpressionEmitter::weighted_sum(const std::vector<std::pair<NodeId, double>>& terms) const {
  return sum_text(0.0, terms, true);
}

// value + sum w_k term_k, left to right. A long sum inside the loop (`split`) is added as
// kSumChains contiguous partial sums, combined pairwise: one chain of dependent additions would
// make its latency, not the issue rate, the bound.
std::string ExpressionEmitter::sum_text(double value,
                                        const std::vector<std::pair<NodeId, double>>& kids,
                                        bool split) const {
  constexpr std::size_t kSplitTerms = 12, kSumChains = 4;
  struct Term {
    bool constant;
    double w;
    std::string r;
  };
  std::vector<Term> terms;
  if (value != 0.0) terms.push_back({true, 1.0, cpp_literal(value)});
  for (const auto& [id, w] : kids) terms.push_back({false, w, ref(id)});
  if (terms.empty()) return "0.0";
  auto chain = [&terms](std::size_t begin, std::size_t end) {
    std::string s;
    for (std::size_t t = begin; t < end; ++t) {
      const auto& [constant, w, r] = terms[t];
      if (constant) {
        s += t == begin ? r : (r[0] == '-' ? " - " + r.substr(1) : " + " + r);
      } else if (t == begin) {
        s += w == 1.0 ? r : w == -1.0 ? "-" + r : cpp_literal(w) + " * " + r;
      } else if (w == 1.0) {
        s += " + " + r;
      } else if (w == -1.0) {
        s += " - " + r;
      } else if (w < 0) {
        s += " - " + cpp_literal(-w) + " * " + r;
      } else {
        s += " + " + cpp_literal(w) + " * " + r;
      }
    }
    return s;
  };
  if (!split || terms.size() < kSplitTerms) return chain(0, terms.size());
  std::vector<std::string> parts;
  for (std::size_t c = 0; c < kSumChains; ++c)
    parts.push_back(
        "(" + chain(c * terms.size() / kSumChains, (c + 1) * terms.size() / kSumChains) + ")");
  while (parts.size() > 1) {
    std::vector<std::string> next;
    for (std::size_t i = 0; i + 1 < parts.size(); i += 2)
      next.push_back("(" + parts[i] + " + " + parts[i + 1] + ")");
    if (parts.size() % 2) next.push_back(parts.back());
    parts = next;
  }
  return parts[0];
}

std::string ExpressionEmitter::call(const Node& n) {
  std::string s = helper(function_name(n.fn)) + "(";
  int count = arity(n.fn);
  if (int(n.kids.size()) < count)
    throw std::invalid_argument(std::string("codegen: ") + calc::function_name(n.fn) +
                                " has too few arguments");
  for (int k = 0; k < count; ++k) s += (k ? ", " : "") + ref(n.kids[k]);
  return s + ")";
}

std::string ExpressionEmitter::pow_node(const Node& n) {
  return helper(function_name(Function::Pow)) + "(" + ref(n.kids[0]) + ", " + ref(n.kids[1]) + ")";
}

std::string ExpressionEmitter::uniform_expr(NodeId id) {
  const Node& n = dag_.node(id);
  switch (n.op) {
  case Op::Parameter:
  case Op::Spacing:
  case Op::Time: return uniform_leaf(n);
  case Op::Add: return sum(n, false);
  case Op::Mul: return product(n, false);
  case Op::Pow: return pow_node(n);
  case Op::Call: return call(n);
  default: break;
  }
  throw std::logic_error("codegen: a uniform node of unexpected kind");
}

std::string ExpressionEmitter::varying_expr(NodeId id) {
  const Node& n = dag_.node(id);
  switch (n.op) {
  case Op::Add: return sum(n, true);
  case Op::Mul: return product(n, true);
  case Op::Pow: return pow_node(n);
  case Op::Call: return call(n);
  default: break;
  }
  throw std::logic_error("codegen: a varying node of unexpected kind");
}

} // namespace saguaro::codegen
