#include "mapper/assignment.hpp"

#include "calc/strategy.hpp"

#include <cmath>
#include <map>

namespace saguaro::mapper {

using calc::Buffering;

const char* to_string(AssignmentMethod m) {
  switch (m) {
  case AssignmentMethod::Efficiency: return "efficiency";
  case AssignmentMethod::Performance: return "performance";
  case AssignmentMethod::Exhaustive: return "exhaustive";
  case AssignmentMethod::Unbuffered: return "unbuffered";
  }
  return "?";
}

std::vector<Buffering> buffering_moves(const model::KernelProfile::Input& input, int axis,
                                       StrategySet allowed) {
  std::vector<Buffering> out;
  if (input.offsets.size() < 2) return out; // no reuse: nothing to buffer
  for (const calc::Strategy* s : calc::strategies())
    if (s->resource != calc::ReuseResource::None && (allowed & strategy_bit(s->id)) &&
        calc::buffering_applies(s->id, input.offsets, axis, input.written))
      out.push_back(s->id);
  return out;
}

double launch_seconds(const model::KernelProfile& kernel, const PricingContext& context,
                      model::Prediction* prediction, const model::CompiledResources& compiled) {
  model::Prediction p = model::predict(kernel, *context.device, compiled);
  const double s = p.valid ? p.seconds(context.geometry, context.combination)
                           : std::numeric_limits<double>::infinity();
  if (prediction) *prediction = std::move(p);
  return s;
}

double exhaustive_size(const model::KernelProfile& kernel, StrategySet allowed) {
  double n = 1;
  for (const auto& in : kernel.inputs)
    n *= 1 + double(buffering_moves(in, kernel.block.iteration_axis, allowed).size());
  return n;
}

namespace {

Assignment exhaustive(model::KernelProfile kernel, const PricingContext& context) {
  Assignment best;
  std::vector<std::vector<Buffering>> options;
  for (auto& in : kernel.inputs) {
    in.strategy = Buffering::Unbuffered;
    std::vector<Buffering> o{Buffering::Unbuffered};
    for (Buffering b : buffering_moves(in, kernel.block.iteration_axis, context.strategies))
      o.push_back(b);
    options.push_back(std::move(o));
  }
  std::vector<std::size_t> digit(options.size(), 0);
  while (true) {
    for (std::size_t i = 0; i < digit.size(); ++i) kernel.inputs[i].strategy = options[i][digit[i]];
    model::Prediction p;
    const double s = launch_seconds(kernel, context, &p);
    ++best.model_calls;
    if (s < best.seconds) {
      best.seconds = s;
      best.prediction = std::move(p);
      best.strategies.clear();
      for (const auto& in : kernel.inputs) best.strategies.push_back(in.strategy);
    }
    std::size_t i = 0; // next combination, odometer order
    while (i < digit.size() && ++digit[i] == options[i].size()) digit[i++] = 0;
    if (i == digit.size()) break;
  }
  if (!best.valid()) { // report the all-unbuffered failure
    for (auto& in : kernel.inputs) in.strategy = Buffering::Unbuffered;
    launch_seconds(kernel, context, &best.prediction);
    best.strategies.assign(kernel.inputs.size(), Buffering::Unbuffered);
  }
  return best;
}

// A proposed move of Algorithm 1 and what the model says of it.
struct Move {
  int input = -1;
  Buffering to = Buffering::Unbuffered;
  model::Prediction prediction;
  double seconds = 0, dT = 0, efficiency = 0;
  double dM_reg = 0, dM_smem = 0, dM_roc = 0;
};

// Model calls shared by the passes of one assignment: an assignment priced once is not
// priced again (and not counted again).
class Priced {
public:
  explicit Priced(const PricingContext& context) : context_(context) {}
  long calls = 0;
  double operator()(const model::KernelProfile& k, model::Prediction* p) {
    std::string key;
    for (const auto& in : k.inputs) key += calc::letter(in.strategy);
    auto [it, fresh] = memo_.try_emplace(key);
    if (fresh) {
      it->second.first = launch_seconds(k, context_, &it->second.second);
      ++calls;
    }
    *p = it->second.second;
    return it->second.first;
  }

private:
  const PricingContext& context_;
  std::map<std::string, std::pair<double, model::Prediction>> memo_;
};

// Applies a change of one input's strategy to the kernel and the assignment and records it as
// a step of the trace; `step` brings what only the search that chose it knows (its efficiency,
// eq. 3's indicators, the moves it priced, whether it is the descent's).
void accept_change(model::KernelProfile& kernel, Assignment& a, int input, Buffering to,
                   double seconds, model::Prediction prediction, AssignmentStep step) {
  step.input = input;
  step.grid_function = kernel.inputs[std::size_t(input)].name;
  step.to = to;
  step.seconds_before = a.seconds;
  step.seconds_after = seconds;
  step.blocks_per_sm = prediction.blocks_per_sm;
  step.occupancy = prediction.occupancy;
  step.M_reg = prediction.M_reg;
  step.M_smem = prediction.M_smem;
  step.M_roc = prediction.M_roc;
  kernel.inputs[std::size_t(input)].strategy = to;
  a.seconds = seconds;
  a.prediction = std::move(prediction);
  a.trace.push_back(std::move(step));
}

// After Algorithm 1, a descent over single changes: any input to any of its strategies (u
// included), the largest drop first, until none lowers the time. Algorithm 1 never revisits an
// input, but buffering one input changes what the others cost (it leaves every other input's
// walk through L1 and the front of the launch in L2, docs/model.md): an early move a later one
// made worse is undone here. Each accepted change is a step of the trace.
void descend(model::KernelProfile& kernel, const std::vector<std::vector<Buffering>>& moves,
             Assignment& a, Priced& price) {
  const long calls_before = price.calls;
  std::vector<std::vector<Buffering>> choices = moves; // every strategy of each input, u too
  for (auto& c : choices) c.push_back(Buffering::Unbuffered);
  while (true) {
    int best_input = -1;
    Buffering best_to = Buffering::Unbuffered;
    double best_seconds = a.seconds;
    model::Prediction best_prediction;
    int priced = 0;
    for (std::size_t i = 0; i < kernel.inputs.size(); ++i) {
      const Buffering now = kernel.inputs[i].strategy;
      for (Buffering t : choices[i]) {
        if (t == now) continue;
        kernel.inputs[i].strategy = t;
        model::Prediction p;
        const long before = price.calls;
        const double s = price(kernel, &p);
        priced += int(price.calls - before);
        if (s < best_seconds * (1 - 1e-12)) {
          best_input = int(i);
          best_to = t;
          best_seconds = s;
          best_prediction = std::move(p);
        }
      }
      kernel.inputs[i].strategy = now;
    }
    if (best_input < 0) break;
    AssignmentStep step;
    step.efficiency = a.seconds - best_seconds;
    step.moves_priced = priced;
    step.descent = true;
    accept_change(kernel, a, best_input, best_to, best_seconds, std::move(best_prediction),
                  std::move(step));
  }
  a.descent_calls = price.calls - calls_before;
}

// Algorithm 1; by_efficiency false: Figure 3's "ByPerf" (E = -dT).
Assignment algorithm1(model::KernelProfile kernel, const PricingContext& context,
                      bool by_efficiency, Priced& price) {
  const model::Device& d = *context.device;
  const int axis = kernel.block.iteration_axis;
  Assignment a;
  for (auto& in : kernel.inputs) in.strategy = Buffering::Unbuffered;
  // Line 2: everything unbuffered.
  a.seconds = price(kernel, &a.prediction);
  std::vector<std::vector<Buffering>> moves;
  for (const auto& in : kernel.inputs)
    moves.push_back(buffering_moves(in, axis, context.strategies));

  while (true) { // line 4
    const model::Prediction& now = a.prediction;
    std::vector<Move> proposed;
    int priced = 0;
    // Lines 6-11: every move of an unbuffered grid function with reuse.
    for (std::size_t i = 0; i < kernel.inputs.size(); ++i) {
      if (kernel.inputs[i].strategy != Buffering::Unbuffered) continue;
      for (Buffering t : moves[i]) {
        kernel.inputs[i].strategy = t;
        Move m;
        m.input = int(i);
        m.to = t;
        const long before = price.calls;
        m.seconds = price(kernel, &m.prediction);
        priced += int(price.calls - before);
        kernel.inputs[i].strategy = Buffering::Unbuffered;
        m.dT = m.seconds - a.seconds;
        m.dM_reg = m.prediction.M_reg - now.M_reg;
        m.dM_smem = (m.prediction.shared_bytes - now.shared_bytes) / 8;
        m.dM_roc = m.prediction.M_roc - now.M_roc;
        proposed.push_back(std::move(m));
      }
    }
    if (proposed.empty()) break;

    // eq. 3's indicators: a resource is limited when buffering every still-unbuffered grid
    // function in it (each in its most demanding way) would not fit at today's occupancy.
    // Invalid moves count too: they are what "does not fit" looks like.
    double need_reg = 0, need_smem = 0, need_roc = 0;
    for (std::size_t i = 0; i < kernel.inputs.size(); ++i) {
      double reg = 0, smem = 0, roc = 0;
      for (const Move& m : proposed)
        if (m.input == int(i)) {
          reg = std::max(reg, m.dM_reg);
          smem = std::max(smem, m.dM_smem);
          roc = std::max(roc, m.dM_roc);
        }
      need_reg += reg;
      need_smem += smem;
      need_roc += roc;
    }
    const double resident = std::max(1, now.blocks_per_sm);
    const bool reg_limited = resident * (now.M_reg + need_reg) > d.K_reg();
    const bool smem_limited = resident * (now.shared_bytes / 8 + need_smem) > d.K_smem();
    const bool roc_limited = resident * (now.M_roc + need_roc) > now.K_roc;
    auto storage = [&](const Move& m) {
      auto factor = [](bool limited, double dM, double K) {
        return K > 0 ? std::exp(-(limited ? 1.0 : 0.0) * dM / K) : 1.0;
      };
      return factor(reg_limited, m.dM_reg, d.K_reg()) +
             factor(smem_limited, m.dM_smem, d.K_smem()) + factor(roc_limited, m.dM_roc, now.K_roc);
    };

    // Lines 12-16: the most efficient move among r/b/p (on-chip storage) and among c (the
    // read-only cache).
    const Move* best_rbp = nullptr;
    const Move* best_c = nullptr;
    for (Move& m : proposed) {
      if (!std::isfinite(m.seconds)) continue; // lines 9-11: invalid
      m.efficiency = by_efficiency ? -m.dT * storage(m) : -m.dT;
      const bool cache = calc::strategy(m.to).resource == calc::ReuseResource::ReadOnlyCache;
      const Move*& slot = cache ? best_c : best_rbp;
      if (slot == nullptr || m.efficiency > slot->efficiency) slot = &m;
    }
    // Lines 19-26: stop when neither lowers the time; else take the larger drop.
    const Move* accept = nullptr;
    for (const Move* m : {best_rbp, best_c})
      if (m != nullptr && m->dT < 0 && (accept == nullptr || m->dT < accept->dT)) accept = m;
    if (accept == nullptr) break;

    AssignmentStep step;
    step.efficiency = accept->efficiency;
    step.moves_priced = priced;
    step.reg_limited = reg_limited;
    step.smem_limited = smem_limited;
    step.roc_limited = roc_limited;
    accept_change(kernel, a, accept->input, accept->to, accept->seconds, accept->prediction,
                  std::move(step));
  }
  descend(kernel, moves, a, price);
  for (const auto& in : kernel.inputs) a.strategies.push_back(in.strategy);
  a.model_calls = price.calls;
  return a;
}

} // namespace

Assignment assign_buffering(const model::KernelProfile& kernel, const PricingContext& context,
                            AssignmentMethod method) {
  switch (method) {
  case AssignmentMethod::Exhaustive: return exhaustive(kernel, context);
  case AssignmentMethod::Unbuffered: {
    Assignment a;
    model::KernelProfile k = kernel;
    for (auto& in : k.inputs) in.strategy = Buffering::Unbuffered;
    a.seconds = launch_seconds(k, context, &a.prediction);
    a.model_calls = 1;
    a.strategies.assign(k.inputs.size(), Buffering::Unbuffered);
    return a;
  }
  case AssignmentMethod::Performance: {
    Priced price(context);
    return algorithm1(kernel, context, false, price);
  }
  case AssignmentMethod::Efficiency: {
    Priced price(context);
    return algorithm1(kernel, context, true, price);
  }
  }
  return {};
}

} // namespace saguaro::mapper
