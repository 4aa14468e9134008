// bench_mapper's candidate generation: the mappings timed against the model's choice (the
// default, the runners-up, uniform strategies, the model's strategies at other blocks, fission's
// far ends and random samples), each priced by the model and merged with its duplicates. Apart
// from compiling and timing them (compile_and_time.cpp): all of this runs without a GPU.
#include "candidates.hpp"

#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "mapper/block_search.hpp"
#include "mapper/fission.hpp"
#include "mapper/mapper.hpp"
#include "model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::bench::mapper_bench {

namespace {

// bench_cuda's six blocks first (the model's strategies are tried at these), then others
// that are common choices; random samples take every other block from this list.
const std::vector<std::string> kCommonBlocks = {"z 32x8x8",  "z 32x4x16", "z 64x4x8",  "z 128x2x8",
                                                "y 32x8x8",  "z 32x8x32", "z 64x2x16", "z 128x1x8",
                                                "z 256x1x8", "z 64x4x4",  "z 32x16x4", "y 64x4x8",
                                                "z 128x2x4", "z 64x8x8",  "z 128x4x16"};

// A candidate's label in the JSON: the short form and what it leaves out, which stores and
// temporaries each kernel makes.
std::string mapping_key(const calc::Calculation& calc, const calc::Mapping& m) {
  std::string key = calc::to_string(calc, m);
  for (const calc::KernelMapping& k : m.kernels)
    key +=
        fmt::format("|{}:{}:{}", k.stage, fmt::join(k.stores, ","), fmt::join(k.temporaries, ","));
  return key;
}

// Whether the partitions (stages, stores, temporaries per kernel) of two mappings agree.
bool same_partition(const calc::Mapping& a, const calc::Mapping& b) {
  if (a.kernels.size() != b.kernels.size()) return false;
  for (std::size_t k = 0; k < a.kernels.size(); ++k)
    if (a.kernels[k].stage != b.kernels[k].stage || a.kernels[k].stores != b.kernels[k].stores ||
        a.kernels[k].temporaries != b.kernels[k].temporaries)
      return false;
  return true;
}

} // namespace

bool Candidates::add(const calc::Mapping& m, const std::string& kind, bool force) {
  for (Candidate& c : list)
    if (c.mapping == m) {
      c.kinds.push_back(kind);
      ++skipped.duplicates;
      return true;
    }
  Candidate c;
  c.mapping = m;
  c.key = mapping_key(calc_, m);
  c.short_form = calc::to_string(calc_, m);
  c.kinds.push_back(kind);
  try {
    c.priced = mapper::price_mapping(calc_, m, device_, options_);
  } catch (const std::exception& e) {
    ++skipped.mapping_invalid;
    note(kind, c.short_form, e.what());
    return false;
  }
  std::string why;
  for (const mapper::PricedKernel& k : c.priced.kernels)
    if (!k.prediction.valid && why.empty()) why = k.prediction.invalid_reason;
  if (!why.empty() || !std::isfinite(c.priced.seconds)) {
    if (!force) {
      ++skipped.model_invalid;
      note(kind, c.short_form, why.empty() ? "the model's time is not finite" : why);
      return false;
    }
  }
  list.push_back(std::move(c));
  return true;
}

namespace {

// The strategies that apply to input `in` of kernel `k` (plans[k]) at block `block`; u first.
std::vector<calc::Buffering> applicable(const calc::KernelPlan& plan, const calc::InputStencil& in,
                                        int axis) {
  const bool written =
      std::find(plan.outputs.begin(), plan.outputs.end(), in.grid_function) != plan.outputs.end();
  std::vector<calc::Buffering> out;
  for (calc::Buffering b : calc::kAllBufferings)
    if (calc::buffering_applies(b, in.offsets, axis, written)) out.push_back(b);
  return out;
}

// `m` with every kernel's inputs given strategy `b` where it applies (u elsewhere); false when
// `b` applies to no input (the mapping would repeat all-u).
bool uniform(const calc::Calculation& calc, calc::Mapping& m, calc::Buffering b) {
  for (calc::KernelMapping& k : m.kernels) k.buffering.clear();
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, m);
  bool any = b == calc::Buffering::Unbuffered;
  for (std::size_t k = 0; k < m.kernels.size(); ++k)
    for (const calc::InputStencil& in : plans[k].inputs) {
      const auto ok = applicable(plans[k], in, m.kernels[k].block.iteration_axis);
      if (b != calc::Buffering::Unbuffered && std::find(ok.begin(), ok.end(), b) != ok.end()) {
        m.kernels[k].buffering[in.grid_function] = b;
        any = true;
      }
    }
  return any;
}

// `m` with every kernel at `block`, keeping each strategy where it still applies.
calc::Mapping at_block(const calc::Calculation& calc, calc::Mapping m,
                       const calc::BlockConfig& block) {
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, m);
  for (std::size_t k = 0; k < m.kernels.size(); ++k) {
    m.kernels[k].block = block;
    std::map<int, calc::Buffering> kept;
    for (const calc::InputStencil& in : plans[k].inputs) {
      auto at = m.kernels[k].buffering.find(in.grid_function);
      if (at == m.kernels[k].buffering.end()) continue;
      const auto ok = applicable(plans[k], in, block.iteration_axis);
      if (std::find(ok.begin(), ok.end(), at->second) != ok.end()) kept.insert(*at);
    }
    m.kernels[k].buffering = std::move(kept);
  }
  return m;
}

// One kernel per stored grid function (per stage), each kernel at the block configuration and
// strategies the model prices best for it alone: fission's far end, against which the model's
// partition is measured (the BSSN issue).
calc::Mapping one_kernel_per_store(const calc::Calculation& calc, const model::Device& device,
                                   const std::array<long, 3>& grid) {
  calc::Mapping m;
  for (std::size_t s = 0; s < calc.stages.size(); ++s)
    for (std::size_t st = 0; st < calc.stages[s].stores.size(); ++st) {
      calc::KernelMapping km;
      km.stage = int(s);
      km.stores = {int(st)};
      const model::KernelProfile profile =
          model::profile_kernel(calc, km, calc::plan_kernel(calc, km, {}));
      mapper::BlockSearchOptions bo;
      bo.extent = mapper::kernel_extent(profile, grid);
      bo.keep = 1;
      const mapper::BlockSearchResult r = mapper::search_blocks(profile, device, bo);
      if (r.best.empty())
        throw std::runtime_error("no block configuration fits store " + std::to_string(st));
      mapper::apply(km, profile, r.best.front());
      m.kernels.push_back(std::move(km));
    }
  return m;
}

// One random mapping on `base`'s partition: per kernel a block (from the enumerated set or the
// common list, alternately) and per input a strategy among those that apply.
calc::Mapping sample(const calc::Calculation& calc, calc::Mapping m,
                     const std::vector<std::vector<calc::BlockConfig>>& enumerated,
                     const std::vector<calc::BlockConfig>& common, bool from_common,
                     std::mt19937_64& rng) {
  auto pick = [&rng](std::size_t size) { return std::size_t(rng() % size); };
  for (std::size_t k = 0; k < m.kernels.size(); ++k) {
    const auto& from = from_common || enumerated[k].empty() ? common : enumerated[k];
    m.kernels[k].block = from[pick(from.size())];
    m.kernels[k].buffering.clear();
  }
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, m);
  for (std::size_t k = 0; k < m.kernels.size(); ++k)
    for (const calc::InputStencil& in : plans[k].inputs) {
      const auto ok = applicable(plans[k], in, m.kernels[k].block.iteration_axis);
      const calc::Buffering b = ok[pick(ok.size())];
      if (b != calc::Buffering::Unbuffered) m.kernels[k].buffering[in.grid_function] = b;
    }
  return m;
}

// The kernels whose thread runs its points in lockstep, which the model is to learn to price
// (issue 20): the default partition at blocks of 2 to 16 points a thread, with register queues
// along z where they apply, each also with the points summed by input where that rule holds,
// and each at 2 to 8 blocks per SM.
void add_lockstep_family(Candidates& cands, const calc::Calculation& calc) {
  for (const char* text : {"z 32x8x2", "z 32x8x4", "z 32x8x8", "z 32x8x16", "z 64x4x4", "z 64x4x8",
                           "z 32x4x8", "z 128x2x4"}) {
    const calc::BlockConfig blk = calc::parse_block_config(text);
    for (calc::Buffering s : {calc::Buffering::Unbuffered, calc::Buffering::Queue}) {
      calc::Mapping m = calc::default_mapping(calc);
      for (calc::KernelMapping& k : m.kernels) k.block = blk;
      if (!uniform(calc, m, s)) continue; // q applies to no input (u always "applies")
      std::vector<calc::Mapping> forms;
      if (s == calc::Buffering::Queue) forms.push_back(m);
      calc::Mapping summed = m;
      for (calc::KernelMapping& k : summed.kernels) k.block.sums_by_input = true;
      try {
        calc::plan_kernels(calc, summed);
        forms.push_back(summed);
      } catch (const calc::MappingError&) {
      }
      for (const calc::Mapping& form : forms)
        for (int per_sm : {0, 2, 4, 8}) {
          calc::Mapping capped = form;
          for (calc::KernelMapping& k : capped.kernels) k.block.min_blocks = per_sm;
          cands.add(capped,
                    fmt::format("lockstep {}{}{}{}", text,
                                per_sm > 0 ? fmt::format(" {}/SM", per_sm) : "",
                                s == calc::Buffering::Queue ? " q" : "",
                                form.kernels.front().block.sums_by_input ? " by-input" : ""));
        }
    }
  }
}

} // namespace

// The candidates of one benchmark, added to `cands`: the model's mapping and the default first,
// then fission's comparison points, the runners-up, uniform strategies, the model's strategies
// at other blocks and opt.samples random mappings. Prints a line that counts them.
Sampling add_candidates(Candidates& cands, const calc::Calculation& calc,
                        const model::Device& device, const mapper::MapperOptions& mo,
                        const mapper::MapResult& result, const mapper::MapResult& def,
                        const Options& opt) {
  cands.add(result.best.mapping, "model", true);
  cands.add(def.best.mapping, "default", true);
  // Fission's comparison points: the model's best single kernel per stage (the mapper without
  // the partition search) and one kernel per output, each kernel at its model-best block.
  {
    mapper::MapperOptions single = mo;
    single.partition = false;
    cands.add(mapper::map_calculation(calc, device, single).best.mapping, "one kernel", true);
    try {
      cands.add(one_kernel_per_store(calc, device, mo.grid), "one kernel per output", true);
    } catch (const std::exception& e) {
      std::printf("  one kernel per output: %s\n", e.what());
    }
  }
  // The register-fit fissions (mapper/fission.hpp) over a wider grid of budgets than the
  // mapper's, each at the default block and at three others: the candidates of different
  // structure the BSSN issue measures the model over (subexpressions stored by kernels of their
  // own, outputs grouped by shared arithmetic). Calculations that fit one kernel give none.
  {
    std::vector<mapper::FissionBudget> budgets;
    for (double extract : {0.55, 0.64, 0.73, 0.86, 1.0})
      for (double merge : {0.0, 1.0, 1.18, 1.36, 1.55})
        budgets.push_back({extract, merge == 0.0 ? extract : merge});
    for (const mapper::FissionCandidate& f :
         mapper::register_fit_candidates(calc, device.max_registers_per_thread, budgets)) {
      cands.add(f.mapping, f.origin);
      for (const char* text : {"y 32x8x8", "z 32x4x8", "z 64x4x4"})
        cands.add(at_block(calc, f.mapping, calc::parse_block_config(text)),
                  f.origin + " at " + text);
    }
    // Recomputation against storing: the mapper's pairs with the values their kernels compute
    // more than once stored when that saves 50 to 400 operations per point, at the default
    // block and at z 32x4x8.
    std::vector<mapper::FissionBudget> shared;
    for (const mapper::FissionBudget& b : mapper::kFissionBudgets)
      for (int share : {400, 200, 100, 50}) shared.push_back({b.extract, b.merge, share});
    for (const mapper::FissionCandidate& f :
         mapper::register_fit_candidates(calc, device.max_registers_per_thread, shared)) {
      cands.add(f.mapping, f.origin);
      cands.add(at_block(calc, f.mapping, calc::parse_block_config("z 32x4x8")),
                f.origin + " at z 32x4x8");
    }
  }
  for (std::size_t i = 0; i < result.runners_up.size(); ++i)
    cands.add(result.runners_up[i].mapping,
              fmt::format("runner-up {}: {}", i + 1, result.runners_up[i].origin));
  const calc::Mapping& best = result.best.mapping;
  const calc::BlockConfig model_block = best.kernels.front().block;
  for (calc::Buffering s : calc::kAllBufferings) {
    calc::Mapping m = best;
    if (uniform(calc, m, s)) cands.add(m, fmt::format("uniform {}", calc::letter(s)));
    calc::Mapping d = calc::default_mapping(calc);
    for (calc::KernelMapping& k : d.kernels) k.block = model_block;
    if (uniform(calc, d, s))
      cands.add(d, fmt::format("uniform {} one kernel per stage", calc::letter(s)));
  }
  // The empirical finish's own candidates (one thread per point, register queues, sums by
  // input, each with ptxas's registers and capped), which the search does not rank.
  for (const mapper::PricedMapping& f : result.register_fits)
    cands.add(f.mapping, "finish: " + f.origin);
  add_lockstep_family(cands, calc);
  {
    int other = 0;
    for (const std::string& text : kCommonBlocks) {
      if (other == 6) break;
      const calc::BlockConfig blk = calc::parse_block_config(text);
      if (blk == model_block) continue;
      ++other;
      cands.add(at_block(calc, best, blk), "model-strategies at " + text);
    }
  }
  // Random samples on the default's and (when it differs) the model's partition.
  std::vector<calc::Mapping> bases{calc::default_mapping(calc)};
  if (!same_partition(best, bases.front())) bases.push_back(best);
  std::vector<std::vector<std::vector<calc::BlockConfig>>> enumerated;
  for (const calc::Mapping& base : bases) {
    std::vector<std::vector<calc::BlockConfig>> per_kernel;
    for (const model::KernelProfile& p : model::profile_mapping(calc, base))
      per_kernel.push_back(mapper::block_configurations(device, mapper::kernel_extent(p, mo.grid)));
    enumerated.push_back(std::move(per_kernel));
  }
  std::vector<calc::BlockConfig> common;
  for (const std::string& text : kCommonBlocks) common.push_back(calc::parse_block_config(text));
  std::mt19937_64 rng(opt.seed);
  int sampled = 0, attempts = 0, repeats = 0;
  const int max_attempts = std::max(1000, 40 * opt.samples);
  while (sampled < opt.samples && attempts < max_attempts) {
    ++attempts;
    const std::size_t base = std::size_t(rng() % bases.size());
    const bool from_common = (rng() & 1) != 0;
    calc::Mapping m;
    try {
      m = sample(calc, bases[base], enumerated[base], common, from_common, rng);
    } catch (const std::exception&) {
      ++cands.skipped.mapping_invalid;
      continue;
    }
    if (cands.contains(m)) { // a repeat of another candidate is drawn again
      ++repeats;
      continue;
    }
    if (cands.add(m, fmt::format("sample {}", sampled + 1))) ++sampled;
  }
  std::vector<Candidate>& list = cands.list;
  std::printf("  %zu candidates: model, default, %zu runners-up, uniform strategies, the model's "
              "strategies at 6 blocks, %d samples (%d draws, %d repeats); left out: %d invalid for "
              "the model, "
              "%d invalid mappings; %d merged duplicates\n",
              list.size(), result.runners_up.size(), sampled, attempts, repeats,
              cands.skipped.model_invalid, cands.skipped.mapping_invalid, cands.skipped.duplicates);
  std::fflush(stdout);
  return {sampled, attempts, repeats};
}

} // namespace saguaro::bench::mapper_bench
