// Folding combinations into a calculation's stores (see fold.hpp).
#include "calc/fold.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::calc {

namespace {

int grid_function_of(Calculation& c, const std::string& name) {
  int i = c.find_grid_function(name);
  if (i >= 0) return i;
  c.grid_functions.push_back({name, GridFunctionRole::Variable, ""});
  return int(c.grid_functions.size()) - 1;
}

// Whether `c` reads grid function `gf` anywhere (with away_only: at a neighbouring point).
bool reads(const Calculation& c, int gf, bool away_only) {
  for (const InputStencil& in : c.inputs)
    if (in.grid_function == gf)
      for (const Offset& o : in.offsets)
        if (!away_only || o != Offset{0, 0, 0}) return true;
  return false;
}

} // namespace

Calculation fold_stores(const Calculation& calc, const std::vector<FoldedStore>& folds,
                        const std::string& name) {
  Calculation c = calc;
  c.name = name;
  Stage& last = c.stages.back();
  std::map<std::string, NodeId> current; // a target's value once stored
  for (const FoldedStore& fold : folds) {
    const int replaced = c.find_grid_function(fold.replaced);
    auto store = std::find_if(last.stores.begin(), last.stores.end(),
                              [&](const Store& s) { return s.grid_function == replaced; });
    if (replaced < 0 || store == last.stores.end())
      throw std::invalid_argument(
          fmt::format("fold: calculation {} does not store {} last", calc.name, fold.replaced));
    if (reads(calc, replaced, false))
      throw std::invalid_argument(
          fmt::format("fold: calculation {} reads {}, which it would no longer store", calc.name,
                      fold.replaced));
    const NodeId value = store->value;
    last.stores.erase(store);
    for (const FoldedStore::Target& t : fold.targets) {
      const int target = grid_function_of(c, t.grid_function);
      if (reads(calc, target, true))
        throw std::invalid_argument(
            fmt::format("fold: calculation {} reads {} at neighbouring points, so it cannot also "
                        "write it",
                        calc.name, t.grid_function));
      std::vector<std::pair<NodeId, double>> sum;
      for (const FoldedStore::Term& term : t.terms) {
        NodeId x = value;
        if (!term.source.empty()) {
          auto it = current.find(term.source);
          x = it != current.end() ? it->second : c.dag.load(grid_function_of(c, term.source));
        }
        sum.push_back({c.dag.mul(c.dag.parameter(term.parameter), x), 1.0});
      }
      if (sum.empty()) throw std::invalid_argument("fold: a target without terms");
      const NodeId v = sum.size() == 1 ? sum[0].first : c.dag.add(std::move(sum));
      std::erase_if(last.stores, [&](const Store& s) { return s.grid_function == target; });
      last.stores.push_back({target, v});
      current[t.grid_function] = v;
    }
  }
  analyse(c);
  return c;
}

} // namespace saguaro::calc
