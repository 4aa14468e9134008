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

FoldedForm folded_form(std::size_t plain_index, const Calculation& plain, const Calculation& folded,
                       const std::vector<FoldedStore>& folds) {
  FoldedForm form;
  form.plain = plain_index;
  const std::vector<Store>& before = plain.stages.back().stores;
  const std::vector<Store>& after = folded.stages.back().stores;
  auto stores_of = [&](const std::string& grid_function) {
    const int gf = folded.find_grid_function(grid_function);
    for (std::size_t j = 0; j < after.size(); ++j)
      if (after[j].grid_function == gf) return int(j);
    throw std::invalid_argument(
        fmt::format("fold: {} does not store {}", folded.name, grid_function));
  };
  for (const Store& s : before) {
    const std::string& name = plain.grid_functions[std::size_t(s.grid_function)].name;
    std::vector<int> replacing;
    auto fold = std::find_if(folds.begin(), folds.end(),
                             [&](const FoldedStore& f) { return f.replaced == name; });
    if (fold == folds.end())
      replacing.push_back(stores_of(name));
    else
      for (const FoldedStore::Target& t : fold->targets)
        replacing.push_back(stores_of(t.grid_function));
    form.stores.push_back(std::move(replacing));
  }
  return form;
}

Mapping fold_mapping(const FoldedForm& form, const Calculation& plain, const Calculation& folded,
                     const Mapping& mapping) {
  const int last = int(plain.stages.size()) - 1;
  Mapping out = mapping;
  for (KernelMapping& k : out.kernels) {
    if (k.stage != last) continue;
    std::vector<int> stores;
    for (int s : k.stores) {
      if (s < 0 || std::size_t(s) >= form.stores.size())
        throw MappingError(fmt::format("fold: a kernel of {} stores store {} of {}", plain.name, s,
                                       form.stores.size()));
      const std::vector<int>& replacing = form.stores[std::size_t(s)];
      stores.insert(stores.end(), replacing.begin(), replacing.end());
    }
    k.stores = std::move(stores);
    // A folded store, p_0 y + p_1 k, has a term p_1 k that reads every input of k: its points
    // are summed by input only where k reads one input per term (the wave equation's pi, its
    // Laplacian of phi), not where a term of k reads two (Maxwell's curls).
    keep_sums_by_input_where_they_apply(folded, k);
  }
  return out;
}

void follow_plain_forms(const Program& program, std::vector<Mapping>& mappings) {
  for (const auto& [folded, form] : program.folded_forms)
    mappings.at(folded) = fold_mapping(form, program.calculations.at(form.plain),
                                       program.calculations.at(folded), mappings.at(form.plain));
}

} // namespace saguaro::calc
