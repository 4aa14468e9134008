#include "calc/mapping.hpp"

#include "calc/strategy.hpp"
#include "calc/sums_by_input.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace saguaro::calc {

char letter(Buffering b) {
  return std::size_t(b) < strategies().size() ? strategy(b).letter : '?';
}

bool buffering_from_letter(char c, Buffering& b) {
  const Strategy* s = strategy_for_letter(c);
  if (s != nullptr) b = s->id;
  return s != nullptr;
}

const char* describe(Buffering b) {
  return std::size_t(b) < strategies().size() ? strategy(b).name : "?";
}

namespace {

std::string offset_text(const Offset& o) {
  return "(" + std::to_string(o[0]) + "," + std::to_string(o[1]) + "," + std::to_string(o[2]) + ")";
}

} // namespace

bool buffering_applies(Buffering b, const std::vector<Offset>& offsets, int e, bool written,
                       std::string* why) {
  std::string reason;
  const bool ok = strategy(b).applies(offsets, e, written, reason);
  if (!ok && why) *why = std::move(reason);
  return ok;
}

std::vector<NodeId> evaluated_nodes(const Dag& dag, const std::vector<NodeId>& roots,
                                    const std::set<NodeId>& cut, std::vector<NodeId>& loaded) {
  std::vector<char> seen(dag.size(), 0);
  std::vector<NodeId> stack(roots.begin(), roots.end()), out;
  loaded.clear();
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = 1;
    if (!cut.empty() && cut.count(id)) {
      loaded.push_back(id); // each once: `seen`
      continue;
    }
    out.push_back(id);
    for (NodeId k : dag.node(id).kids)
      if (!seen[k]) stack.push_back(k);
  }
  std::sort(out.begin(), out.end());
  std::sort(loaded.begin(), loaded.end());
  return out;
}

std::vector<NodeId> evaluation_order(const Dag& dag, const KernelPlan& plan) {
  std::vector<char> state(dag.size(), 0); // 1: computed here, 2: loaded from a temporary, 3: done
  for (NodeId id : plan.nodes) state[id] = 1;
  for (NodeId id : plan.temporaries_in) state[id] = 2;
  // A kid that is a value loaded, or uniform times values loaded, is visited after its
  // siblings: loaded before them it would be held through their evaluation (a folded stage's
  // y0 and acc through the whole right-hand side of its variable).
  auto leaf = [&](NodeId id) {
    const Node& n = dag.node(id);
    if (n.op == Op::Load || state[id] == 2) return true;
    if (n.op != Op::Mul || state[id] != 1) return false;
    for (NodeId k : n.kids)
      if (!dag.node(k).uniform && dag.node(k).op != Op::Load && state[k] != 2) return false;
    return true;
  };
  std::vector<NodeId> order;
  // Post-order, iteratively (BSSN's expressions nest hundreds deep). `next` runs over the kids
  // twice, the first pass taking the others, the second the leaves (no list per node: the
  // fission asks for this order hundreds of thousands of times).
  std::vector<std::pair<NodeId, std::size_t>> stack;
  for (NodeId root : plan.roots) {
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& n = dag.node(id);
      if (state[id] == 0 || state[id] == 3 || n.uniform) {
        stack.pop_back();
        continue;
      }
      std::optional<NodeId> kid;
      while (!kid && state[id] == 1 && next < 2 * n.kids.size()) {
        const bool second = next >= n.kids.size();
        const NodeId k = n.kids[second ? next - n.kids.size() : next];
        ++next;
        if (leaf(k) == second) kid = k;
      }
      if (kid) {
        stack.push_back({*kid, 0});
        continue;
      }
      state[id] = 3;
      order.push_back(id);
      stack.pop_back();
    }
  }
  return order;
}

int max_live_values(const Dag& dag, const std::vector<NodeId>& order) {
  // Each value dies at its last use: the last value of `order` that takes it as a child, or
  // its own store (a root's, right after it).
  std::vector<std::size_t> last(dag.size(), 0);
  std::vector<char> present(dag.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    present[order[i]] = 1;
    last[order[i]] = i;
  }
  for (std::size_t i = 0; i < order.size(); ++i)
    for (NodeId k : dag.node(order[i]).kids)
      if (present[k]) last[k] = std::max(last[k], i);
  std::vector<int> dying(order.size() + 1, 0);
  for (NodeId id : order) ++dying[last[id]];
  int live = 0, most = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    ++live;
    most = std::max(most, live);
    live -= dying[i];
  }
  return most;
}

int max_live_values(const Dag& dag, const KernelPlan& plan) {
  return max_live_values(dag, evaluation_order(dag, plan));
}

KernelPlan plan_kernel(const Calculation& calc, const KernelMapping& km,
                       const std::set<NodeId>& available, int k) {
  auto error = [&calc](int kernel, const std::string& what) {
    return MappingError("mapping of calculation '" + calc.name + "', kernel " +
                        std::to_string(kernel) + ": " + what);
  };
  const Dag& dag = calc.dag;
  if (km.stage < 0 || km.stage >= int(calc.stages.size()))
    throw error(k, "stage " + std::to_string(km.stage) + " does not exist (the calculation has " +
                       std::to_string(calc.stages.size()) + ")");
  KernelPlan plan;
  std::set<int> outputs;
  for (int st : km.stores) {
    if (st < 0 || st >= int(calc.stages[km.stage].stores.size()))
      throw error(k, "store " + std::to_string(st) + " does not exist in stage " +
                         std::to_string(km.stage));
    const Store& store = calc.stages[km.stage].stores[st];
    plan.roots.push_back(store.value);
    outputs.insert(store.grid_function);
  }
  for (NodeId t : km.temporaries) {
    if (t >= dag.size()) throw error(k, "temporary node " + std::to_string(t) + " does not exist");
    const Node& n = dag.node(t);
    if (n.uniform || n.op == Op::Constant)
      throw error(k, "temporary node " + std::to_string(t) +
                         " is uniform over the grid; it needs no array");
    if (n.op == Op::Load)
      throw error(k, "temporary node " + std::to_string(t) + " is a load of " +
                         calc.grid_functions[n.index].name + "; it needs no copy");
    plan.roots.push_back(t);
  }
  plan.nodes = evaluated_nodes(dag, plan.roots, available, plan.temporaries_in);
  for (NodeId t : km.temporaries)
    if (!std::binary_search(plan.nodes.begin(), plan.nodes.end(), t))
      throw error(k, "temporary node " + std::to_string(t) +
                         " is not computed by this kernel (an earlier kernel stores it)");

  // The loads as (grid function, offset), sorted and unique: a vector, not a map of sets, as
  // the mapper plans thousands of kernels of a thousand nodes each.
  std::vector<std::pair<int, Offset>> loads;
  for (NodeId id : plan.nodes) {
    const Node& n = dag.node(id);
    if (n.op == Op::Load) loads.push_back({n.index, n.offset});
  }
  std::sort(loads.begin(), loads.end());
  loads.erase(std::unique(loads.begin(), loads.end()), loads.end());
  for (std::size_t i = 0; i < loads.size();) {
    const int g = loads[i].first;
    InputStencil in{g, {}};
    for (; i < loads.size() && loads[i].first == g; ++i) {
      const Offset& o = loads[i].second;
      if (o != Offset{0, 0, 0} && outputs.count(g))
        throw error(k, "reads " + calc.grid_functions[g].name + " at offset " + offset_text(o) +
                           " and writes it: other threads' stores would race");
      in.offsets.push_back(o);
    }
    plan.inputs.push_back(std::move(in));
  }
  for (const auto& [g, b] : km.buffering) {
    if (g < 0 || g >= int(calc.grid_functions.size()))
      throw error(k, "buffering given for grid function " + std::to_string(g) +
                         ", which does not exist");
    auto it = std::find_if(plan.inputs.begin(), plan.inputs.end(),
                           [g = g](const InputStencil& in) { return in.grid_function == g; });
    if (it == plan.inputs.end()) {
      if (b == Buffering::Unbuffered) continue;
      throw error(k, std::string("strategy ") + letter(b) + " for " + calc.grid_functions[g].name +
                         ", which this kernel does not read");
    }
    std::string why;
    const std::vector<Offset>& stencil = it->offsets;
    if (!buffering_applies(b, stencil, km.block.iteration_axis, outputs.count(g) > 0, &why))
      throw error(k, std::string("strategy ") + letter(b) + " (" + describe(b) +
                         ") does not apply to " + calc.grid_functions[g].name + ": " + why);
  }
  plan.outputs.assign(outputs.begin(), outputs.end());
  if (km.block.sums_by_input) {
    const std::string rule = "its points cannot be summed by input (" + to_string(km.block) + "): ";
    if (km.block.tee < 2) throw error(k, rule + "a thread has one point (t_ee = 1)");
    if (!km.temporaries.empty()) throw error(k, rule + "it stores temporaries");
    for (const auto& [g, b] : km.buffering)
      if (strategy(b).shared_memory)
        throw error(k, rule + "strategy " + letter(b) + " for " + calc.grid_functions[g].name +
                           " is in shared memory; only registers and global loads (u, c, r, q) "
                           "are carried from input to input");
    if (std::string why; !sums_by_input(calc, plan, &why)) throw error(k, rule + why);
  }
  return plan;
}

std::vector<KernelPlan> plan_kernels(const Calculation& calc, const Mapping& mapping) {
  auto error = [&calc](std::size_t k, const std::string& what) {
    return MappingError("mapping of calculation '" + calc.name + "', kernel " + std::to_string(k) +
                        ": " + what);
  };
  if (mapping.kernels.empty())
    throw MappingError("mapping of calculation '" + calc.name + "' has no kernels");

  // Every store made exactly once, stages in order.
  std::vector<std::vector<int>> made(calc.stages.size());
  for (std::size_t s = 0; s < calc.stages.size(); ++s)
    made[s].assign(calc.stages[s].stores.size(), -1);
  int last_stage = 0;
  for (std::size_t k = 0; k < mapping.kernels.size(); ++k) {
    const KernelMapping& km = mapping.kernels[k];
    if (km.stage < 0 || km.stage >= int(calc.stages.size()))
      throw error(k, "stage " + std::to_string(km.stage) + " does not exist (the calculation has " +
                         std::to_string(calc.stages.size()) + ")");
    if (km.stage < last_stage)
      throw error(k, "stage " + std::to_string(km.stage) + " comes after a kernel of stage " +
                         std::to_string(last_stage) + "; kernels must follow stage order");
    last_stage = km.stage;
    for (int st : km.stores) {
      if (st < 0 || st >= int(made[km.stage].size()))
        throw error(k, "store " + std::to_string(st) + " does not exist in stage " +
                           std::to_string(km.stage));
      if (made[km.stage][st] >= 0)
        throw error(k,
                    "stores " +
                        calc.grid_functions[calc.stages[km.stage].stores[st].grid_function].name +
                        ", which kernel " + std::to_string(made[km.stage][st]) + " already stores");
      made[km.stage][st] = int(k);
    }
    const BlockConfig& b = km.block;
    if (b.iteration_axis != 1 && b.iteration_axis != 2)
      throw error(k, "the iteration axis must be y (1) or z (2)");
    if (b.tx < 1 || b.tf < 1 || b.tee < 1)
      throw error(k, "block sizes t_x, t_f and t_ee must be positive");
    if (b.too_many_threads())
      throw error(k, "a block of " + std::to_string(b.tx) + " x " + std::to_string(b.tf) +
                         " threads exceeds the 1024 threads a CUDA block may have");
    if (b.min_blocks < 0 || b.min_blocks > kMaxMinBlocks)
      throw error(k, "blocks per SM must be between 1 and " + std::to_string(kMaxMinBlocks) +
                         " (or none)");
  }
  for (std::size_t s = 0; s < made.size(); ++s)
    for (std::size_t st = 0; st < made[s].size(); ++st)
      if (made[s][st] < 0)
        throw MappingError("mapping of calculation '" + calc.name + "': no kernel stores " +
                           calc.grid_functions[calc.stages[s].stores[st].grid_function].name +
                           " (stage " + std::to_string(s) + ")");

  std::vector<KernelPlan> plans;
  std::map<NodeId, std::size_t> temporary_of;  // node -> kernel, within the current stage
  std::map<int, std::size_t> written_in_stage; // grid function -> kernel, current stage
  std::set<NodeId> used_temporaries;
  int stage = -1;
  for (std::size_t k = 0; k < mapping.kernels.size(); ++k) {
    const KernelMapping& km = mapping.kernels[k];
    if (km.stage != stage) {
      temporary_of.clear();
      written_in_stage.clear();
      stage = km.stage;
    }
    std::set<NodeId> available;
    for (const auto& [node, kernel] : temporary_of) available.insert(node);
    for (NodeId t : km.temporaries)
      if (auto it = temporary_of.find(t); it != temporary_of.end())
        throw error(k, "temporary node " + std::to_string(t) + " is already stored by kernel " +
                           std::to_string(it->second));
    KernelPlan plan = plan_kernel(calc, km, available, int(k));
    for (NodeId t : plan.temporaries_in) used_temporaries.insert(t);
    for (const InputStencil& in : plan.inputs)
      if (auto it = written_in_stage.find(in.grid_function); it != written_in_stage.end())
        throw error(k, "reads " + calc.grid_functions[in.grid_function].name + ", which kernel " +
                           std::to_string(it->second) +
                           " before it in the same stage writes: it would see the new values");
    for (int g : plan.outputs) written_in_stage.emplace(g, k);
    for (NodeId t : km.temporaries) temporary_of[t] = k;
    plans.push_back(std::move(plan));
  }
  for (std::size_t k = 0; k < mapping.kernels.size(); ++k)
    for (NodeId t : mapping.kernels[k].temporaries)
      if (!used_temporaries.count(t))
        throw error(k, "temporary node " + std::to_string(t) +
                           " is not used by any later kernel of its stage");
  return plans;
}

std::vector<NodeId> temporary_arrays(const Mapping& mapping) {
  std::vector<NodeId> out;
  for (const KernelMapping& km : mapping.kernels)
    out.insert(out.end(), km.temporaries.begin(), km.temporaries.end());
  return out;
}

Mapping default_mapping(const Calculation& calc) {
  Mapping m;
  for (std::size_t s = 0; s < calc.stages.size(); ++s) {
    KernelMapping k;
    k.stage = int(s);
    for (std::size_t st = 0; st < calc.stages[s].stores.size(); ++st) k.stores.push_back(int(st));
    m.kernels.push_back(std::move(k));
  }
  return m;
}

Mapping one_thread_per_point(const Calculation& calc) {
  Mapping m = default_mapping(calc);
  for (KernelMapping& k : m.kernels) k.block = BlockConfig{2, 32, 8, 1};
  return m;
}

namespace {

Mapping assign(const Calculation& calc, const BlockConfig& block, bool mixed, Buffering every) {
  Mapping m = default_mapping(calc);
  for (KernelMapping& k : m.kernels) {
    k.block = block;
    k.block.sums_by_input = false; // set below where it applies
  }
  const std::vector<KernelPlan> plans = plan_kernels(calc, m);
  for (std::size_t k = 0; k < m.kernels.size(); ++k) {
    std::size_t turn = 0;
    for (const InputStencil& in : plans[k].inputs) {
      Buffering want = mixed ? strategies()[turn++ % strategies().size()]->id : every;
      const bool written = std::find(plans[k].outputs.begin(), plans[k].outputs.end(),
                                     in.grid_function) != plans[k].outputs.end();
      if (want != Buffering::Unbuffered &&
          buffering_applies(want, in.offsets, block.iteration_axis, written))
        m.kernels[k].buffering[in.grid_function] = want;
    }
    m.kernels[k].block.sums_by_input = block.sums_by_input;
    keep_sums_by_input_where_they_apply(calc, m.kernels[k]);
  }
  return m;
}

} // namespace

void keep_sums_by_input_where_they_apply(const Calculation& calc, KernelMapping& kernel) {
  if (!kernel.block.sums_by_input) return;
  try {
    plan_kernel(calc, kernel, {});
  } catch (const MappingError&) {
    kernel.block.sums_by_input = false;
  }
}

Mapping buffered_mapping(const Calculation& calc, Buffering b, const BlockConfig& block) {
  return assign(calc, block, false, b);
}

Mapping mixed_mapping(const Calculation& calc, const BlockConfig& block) {
  return assign(calc, block, true, Buffering::Unbuffered);
}

BlockConfig parse_block_config(const std::string& text) {
  std::istringstream in(text);
  std::string axis, sizes;
  BlockConfig b;
  char x1 = 0, x2 = 0;
  if (!(in >> axis >> sizes) || (axis != "y" && axis != "z"))
    throw MappingError("block configuration '" + text +
                       "': expected the iteration axis (y or z), then t_x x t_f x t_ee, e.g. "
                       "\"z 32x8x8\"");
  std::istringstream n(sizes);
  std::string rest;
  if (!(n >> b.tx >> x1 >> b.tf >> x2 >> b.tee) || x1 != 'x' || x2 != 'x' || (n >> rest) ||
      b.tx < 1 || b.tf < 1 || b.tee < 1 || b.too_many_threads())
    throw MappingError("block configuration '" + text +
                       "': expected three positive sizes t_x x t_f x t_ee with t_x * t_f <= 1024, "
                       "e.g. \"z 32x8x8\"");
  // Then optionally "N/SM", then optionally "by-input", nothing after.
  std::vector<std::string> words;
  for (std::string w; in >> w && words.size() < 3;) words.push_back(w);
  std::size_t w = 0;
  if (w < words.size() && words[w] != "by-input") {
    std::istringstream m(words[w++]);
    std::string unit;
    if (!(m >> b.min_blocks) || !std::getline(m, unit) || unit != "/SM" || b.min_blocks < 1 ||
        b.min_blocks > kMaxMinBlocks)
      throw MappingError("block configuration '" + text +
                         "': after the sizes, expected the blocks an SM must hold, 1 to " +
                         std::to_string(kMaxMinBlocks) + " (e.g. \"z 32x8x1 8/SM\"), or by-input");
  }
  if (w < words.size() && words[w] == "by-input") {
    b.sums_by_input = true;
    ++w;
  }
  if (w < words.size())
    throw MappingError("block configuration '" + text + "': unexpected '" + words[w] +
                       "'; after the sizes only the blocks an SM must hold (\"8/SM\") and then "
                       "by-input may follow");
  b.iteration_axis = axis == "y" ? 1 : 2;
  return b;
}

std::string to_string(const BlockConfig& block) {
  return std::string(axis_name(block.iteration_axis)) + " " + std::to_string(block.tx) + "x" +
         std::to_string(block.tf) + "x" + std::to_string(block.tee) +
         (block.min_blocks > 0 ? " " + std::to_string(block.min_blocks) + "/SM" : "") +
         (block.sums_by_input ? " by-input" : "");
}

Mapping strategy_mapping(const Calculation& calc, const std::string& strategy,
                         const BlockConfig& block) {
  if (strategy == "mixed") return mixed_mapping(calc, block);
  Buffering b{};
  if (strategy.size() != 1 || !buffering_from_letter(strategy[0], b)) {
    std::string words;
    for (const std::string& w : strategy_letters()) words += w + ", ";
    throw MappingError("unknown buffering strategy '" + strategy + "': expected " + words +
                       "or mixed");
  }
  return buffered_mapping(calc, b, block);
}

std::string to_string(const Calculation& calc, const KernelMapping& kernel) {
  std::ostringstream o;
  o << "s" << kernel.stage << " " << to_string(kernel.block);
  for (const auto& [g, b] : kernel.buffering)
    if (b != Buffering::Unbuffered) o << " " << calc.grid_functions[g].name << ":" << letter(b);
  if (!kernel.temporaries.empty()) o << " +" << kernel.temporaries.size() << "tmp";
  return o.str();
}

std::string to_string(const Calculation& calc, const Mapping& mapping) {
  std::string out;
  for (std::size_t k = 0; k < mapping.kernels.size(); ++k)
    out += (k ? " k" : "k") + std::to_string(k) + "[" + to_string(calc, mapping.kernels[k]) + "]";
  return out;
}

} // namespace saguaro::calc
