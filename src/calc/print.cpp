#include "calc/print.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace saguaro::calc {

namespace {

const char* kAxis[] = {"x", "y", "z"};
const char* kIndex[] = {"i", "j", "k"};
const char* kSpacing[] = {"dx", "dy", "dz"};

class Printer {
public:
  Printer(const Calculation& calc, const std::vector<Parameter>& parameters)
      : calc_(calc), parameters_(parameters) {}

  std::string run() {
    std::vector<NodeId> roots;
    for (const Stage& stage : calc_.stages)
      for (const Store& store : stage.stores) roots.push_back(store.value);
    std::vector<NodeId> nodes = calc_.dag.reachable(roots);
    std::map<NodeId, int> uses;
    for (NodeId id : nodes)
      for (NodeId kid : calc_.dag.node(id).kids) ++uses[kid];
    std::string out;
    for (NodeId id : nodes) {
      const Node& n = calc_.dag.node(id);
      bool compound = n.op == Op::Add || n.op == Op::Mul || n.op == Op::Pow || n.op == Op::Call;
      // Stores are not counted as uses: a value only stored is printed once, at its store.
      if (compound && (uses[id] > 1 || (uses[id] == 1 && calc_.dag.pinned(id)))) {
        out += fmt::format("  {} = {}\n", temp_name(id), expression(id, true));
        named_[id] = temp_name(id);
      }
    }
    for (std::size_t s = 0; s < calc_.stages.size(); ++s) {
      if (calc_.stages.size() > 1) out += fmt::format("  # stage {}\n", s);
      for (const Store& store : calc_.stages[s].stores)
        out += fmt::format("  {} = {}\n", calc_.grid_functions[store.grid_function].name,
                           expression(store.value));
    }
    return out;
  }

private:
  static std::string temp_name(NodeId id) { return fmt::format("t{}", id); }

  std::string number(double v) const { return fmt::format("{}", v); }

  std::string offset_index(const Offset& o) const {
    std::string s;
    for (int a = 0; a < 3; ++a) {
      if (a) s += ",";
      s += kIndex[a];
      if (o[a] > 0) s += fmt::format("+{}", o[a]);
      if (o[a] < 0) s += fmt::format("{}", o[a]);
    }
    return s;
  }

  // `top`: the whole right side, printed without its own name.
  std::string expression(NodeId id, bool top = false) const {
    if (!top)
      if (auto it = named_.find(id); it != named_.end()) return it->second;
    const Node& n = calc_.dag.node(id);
    switch (n.op) {
    case Op::Constant: return number(n.value);
    case Op::Parameter: return parameters_.at(n.index).name;
    case Op::Spacing: return kSpacing[n.index];
    case Op::Time: return "t";
    case Op::Coordinate:
      if (n.offset[n.index] == 0) return kAxis[n.index];
      return fmt::format("({} {:+} {})", kAxis[n.index], n.offset[n.index], kSpacing[n.index]);
    case Op::Load:
      return fmt::format("{}[{}]", calc_.grid_functions[n.index].name, offset_index(n.offset));
    case Op::Add: {
      std::string s;
      for (std::size_t k = 0; k < n.kids.size(); ++k) {
        double w = n.weights[k];
        std::string term = expression(n.kids[k]);
        if (std::fabs(w) != 1.0) term = factor(n.kids[k]);
        if (std::fabs(w) != 1.0) term = number(std::fabs(w)) + "*" + term;
        if (s.empty())
          s = (w < 0 ? "-" : "") + term;
        else
          s += (w < 0 ? " - " : " + ") + term;
      }
      if (n.value != 0.0) s += (n.value < 0 ? " - " : " + ") + number(std::fabs(n.value));
      return s;
    }
    case Op::Mul: {
      std::string numerator, denominator;
      auto append = [](std::string& to, const std::string& f) {
        to += (to.empty() ? "" : "*") + f;
      };
      if (std::fabs(n.value) != 1.0) append(numerator, number(std::fabs(n.value)));
      for (std::size_t k = 0; k < n.kids.size(); ++k) {
        long e = std::lround(n.weights[k]);
        std::string f = factor(n.kids[k]);
        if (std::labs(e) != 1) f += fmt::format("^{}", std::labs(e));
        append(e > 0 ? numerator : denominator, f);
      }
      if (numerator.empty()) numerator = "1";
      std::string s = (n.value < 0 ? "-" : "") + numerator;
      if (!denominator.empty())
        s += "/" +
             (denominator.find('*') == std::string::npos ? denominator : "(" + denominator + ")");
      return s;
    }
    case Op::Pow: return fmt::format("pow({}, {})", expression(n.kids[0]), expression(n.kids[1]));
    case Op::Call: {
      std::string args;
      for (NodeId kid : n.kids) args += (args.empty() ? "" : ", ") + expression(kid);
      return fmt::format("{}({})", function_name(n.fn), args);
    }
    }
    return "?";
  }

  // An operand of * or ^: sums, products and negative numbers get parentheses.
  std::string factor(NodeId id) const {
    std::string s = expression(id);
    const Node& n = calc_.dag.node(id);
    bool named = named_.count(id) != 0;
    bool negative = s.front() == '-';
    if (!named && (n.op == Op::Add || n.op == Op::Mul || negative)) return "(" + s + ")";
    return s;
  }

  const Calculation& calc_;
  const std::vector<Parameter>& parameters_;
  std::map<NodeId, std::string> named_;
};

} // namespace

std::string print_calculation(const Calculation& calc, const std::vector<Parameter>& parameters) {
  return Printer(calc, parameters).run();
}

} // namespace saguaro::calc
