#include "mapper/run_plan.hpp"

#include "calc/fold.hpp"
#include "mapper/code_version.hpp"
#include "mapper/mapper.hpp"
#include "mapper/mapping_file.hpp"
#include "mapper/queues.hpp"
#include "model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace saguaro::mapper {
namespace {

// Between the mapping files of the root's choice and of its runners-up, in one broadcast.
constexpr const char* kSeparator = "\n#---saguaro-mapping-candidate---\n";

std::vector<std::string> split_text(const std::string& text) {
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t next = text.find(kSeparator, at);
    parts.push_back(text.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + std::string(kSeparator).size();
  }
  return parts;
}

// A mapping's structure: per kernel its stage, stores and temporaries (what it computes), not
// how (block shape, buffering).
std::vector<std::tuple<int, std::vector<int>, std::vector<calc::NodeId>>>
structure(const calc::Mapping& m) {
  std::vector<std::tuple<int, std::vector<int>, std::vector<calc::NodeId>>> out;
  for (const calc::KernelMapping& k : m.kernels) out.emplace_back(k.stage, k.stores, k.temporaries);
  return out;
}

std::vector<calc::BlockConfig> blocks(const calc::Mapping& m) {
  std::vector<calc::BlockConfig> out;
  for (const calc::KernelMapping& k : m.kernels) out.push_back(k.block);
  return out;
}

RunPlan choose_mappings(const calc::Program& program, const MappingRequest& request,
                        const Broadcast& broadcast);

// Every folded form takes its plain form's kernels (calc::follow_plain_forms), whatever chose
// them.
void follow_plain_forms(const calc::Program& program, RunPlan& plan) {
  std::vector<calc::Mapping> mappings = plan.mappings();
  calc::follow_plain_forms(program, mappings);
  for (const auto& [folded, form] : program.folded_forms) {
    CalculationPlan& p = plan.calculations.at(folded);
    p.mapping = std::move(mappings.at(folded));
    p.candidates.clear();
  }
}

// The method word of the empirical finish's verdicts: everything a verdict depends on beyond
// the calculation and the description (which the cache's key holds).
std::string verdict_method(const MappingRequest& request) {
  const std::array<long, 3>& n = request.grid;
  return fmt::format("{} + empirical finish of {} candidates on {}, {}x{}x{} points, code {}",
                     request.method, request.verify, request.device_name, n[0], n[1], n[2],
                     code_version());
}

// The root's search: its choice (and the empirical finish's other candidates) as mapping-file
// text, one file per rank of candidate, kSeparator between; "" when there is no description
// to map for (a log line says so). A calculation whose verdict is cached gets that mapping
// alone (nothing to time).
std::string search_on_root(const calc::Program& program, const MappingRequest& request,
                           RunPlan& plan) {
  std::vector<std::string>& log = plan.log;
  std::optional<model::Device> device = request.device;
  std::string origin = request.device_origin;
  if (!device) {
    const std::string path = model::find_device_description(request.device_name);
    if (path.empty()) {
      log.push_back(fmt::format(
          "mapper: no device description in configs/devices/ is for {}: default mappings "
          "(`saguaro calibrate` measures one; Saguaro::device_description names it)",
          request.device_name));
      return "";
    }
    device = model::load_device(path);
    origin = "from " + path;
  }
  const std::string& word = request.method;
  MapperOptions options;
  options.method = word == "exhaustive" ? Method::Exhaustive : Method::Model;
  options.grid = request.grid;
  options.runners_up = std::max(5, 2 * request.verify);
  MappingCache cache(request.cache_dir);
  const bool verify = request.verify > 0;
  // What the cache keeps: with the empirical finish its verdicts, else the search's choices.
  const std::string cache_word = verify ? verdict_method(request) : word;
  if (verify && request.mapping_cache)
    plan.verdicts = VerdictCache{request.cache_dir, *device, request.grid, cache_word};
  // A cached verdict (or, without the finish, a cached choice) ends a calculation's search;
  // the others are searched at once, a thread each (they share nothing, the model's scratch is
  // per thread): BSSN's right-hand side and constraints at fd order 8 took 17.9 and 9.2 s one
  // after the other.
  const std::size_t count = program.calculations.size();
  std::vector<std::optional<calc::Mapping>> cached(count);
  std::vector<std::future<MapResult>> searches(count);
  for (std::size_t i = 0; i < count; ++i) {
    const calc::Calculation& c = program.calculations[i];
    if (program.folded_forms.count(i)) continue;
    if (request.mapping_cache)
      cached[i] = cache.lookup(program, c, *device, options.grid, cache_word);
    if (!cached[i])
      searches[i] = std::async(std::launch::async, [&c, &device, &options] {
        return map_calculation(c, *device, options);
      });
  }
  std::vector<std::vector<calc::Mapping>> per_calculation;
  std::size_t ranks = 1;
  for (std::size_t i = 0; i < count; ++i) {
    const calc::Calculation& c = program.calculations[i];
    std::vector<calc::Mapping> chosen;
    std::string how;
    if (auto form = program.folded_forms.find(i); form != program.folded_forms.end()) {
      const std::size_t plain = form->second.plain;
      chosen.push_back(calc::fold_mapping(form->second, program.calculations.at(plain), c,
                                          per_calculation.at(plain).front()));
      how = fmt::format("the kernels of {}, folded", program.calculations.at(plain).name);
    } else if (cached[i]) {
      chosen.push_back(*cached[i]);
      how = verify ? "the empirical finish's verdict, from the mapping cache: nothing timed"
                   : "from the mapping cache";
    } else {
      const MapResult r = searches[i].get();
      chosen = verify ? finish_candidates(c, r, request.defaults.at(i), request.verify)
                      : std::vector<calc::Mapping>{r.best.mapping};
      how = fmt::format("predicted {:.3f} ms; search {:.1f} ms, {} model calls",
                        r.best.seconds * 1e3, r.stats.seconds * 1e3, r.stats.model_calls);
      if (verify) {
        how += fmt::format("; {} candidates to time", chosen.size());
      } else if (request.mapping_cache) {
        try {
          cache.store(program, c, *device, options.grid, cache_word, r.best.mapping,
                      r.best.seconds);
        } catch (const std::exception& e) { // a cache that cannot be written costs a search
          log.push_back(fmt::format("mapper: not cached: {}", e.what()));
        }
      }
    }
    log.push_back(
        fmt::format("mapper: {}: {} ({})", c.name, calc::to_string(c, chosen.front()), how));
    ranks = std::max(ranks, chosen.size());
    per_calculation.push_back(std::move(chosen));
  }
  std::vector<MappingFile> files(ranks);
  for (std::size_t i = 0; i < program.calculations.size(); ++i) {
    const calc::Calculation& c = program.calculations[i];
    const std::vector<calc::Mapping>& chosen = per_calculation[i];
    for (std::size_t j = 0; j < files.size(); ++j)
      files[j].entries.push_back(
          {c.name, calculation_hash(c), 0, chosen[std::min(j, chosen.size() - 1)]});
  }
  const std::array<long, 3>& n = request.grid;
  log.insert(log.begin(), fmt::format("mapper: {} on {} ({}), {}x{}x{} points per patch", word,
                                      device->name, origin, n[0], n[1], n[2]));
  std::string text;
  for (std::size_t j = 0; j < files.size(); ++j)
    text += (j ? kSeparator : "") + format_mapping_file(program, files[j]);
  return text;
}

} // namespace

std::vector<calc::Mapping> RunPlan::mappings() const {
  std::vector<calc::Mapping> out;
  for (const CalculationPlan& c : calculations) out.push_back(c.mapping);
  return out;
}

std::vector<std::vector<calc::Mapping>> RunPlan::candidates() const {
  std::vector<std::vector<calc::Mapping>> out;
  for (const CalculationPlan& c : calculations) out.push_back(c.candidates);
  return out;
}

bool RunPlan::any_split() const {
  return std::any_of(calculations.begin(), calculations.end(),
                     [](const CalculationPlan& c) { return c.split; });
}

std::string to_string(const calc::Program& program, const RunPlan& plan) {
  std::string out;
  for (std::size_t i = 0; i < plan.calculations.size(); ++i) {
    const CalculationPlan& p = plan.calculations[i];
    const calc::Calculation& c = program.calculations[i];
    out += fmt::format("{}: {}\n", p.name, calc::to_string(c, p.mapping));
    for (std::size_t j = 0; j < p.candidates.size(); ++j)
      out += fmt::format("  candidate {}: {}{}{}\n", j, calc::to_string(c, p.candidates[j]),
                         j < p.candidate_seconds.size()
                             ? fmt::format(" {:.3f} ms", p.candidate_seconds[j] * 1e3)
                             : std::string(),
                         !p.candidate_seconds.empty() && j == p.kept ? " (kept)" : "");
    if (!p.launch_reason.empty())
      out += fmt::format("  launches: {}: {}\n", p.split ? "split" : "whole", p.launch_reason);
  }
  if (!plan.exchange_words.empty()) out += "ghost exchange: " + plan.exchange_words + "\n";
  for (const std::string& line : plan.log) out += "log: " + line + "\n";
  return out;
}

// Saguaro::mapper:
//   default  Saguaro::cuda_block and cuda_buffering for every kernel (request.defaults);
//   fixed    the mapping file read by load_setup, the default for calculations it omits;
//   model, exhaustive  on a backend whose mappings the model chooses, the mapper's choice for
//            the device's description and rank 0's patch (or the mapping cache's), the same
//            on every rank: rank 0 maps and broadcasts its choice (and Saguaro::mapper_verify's
//            candidates) as mapping-file text. Other backends run the default partition: the
//            model is a GPU model.
//   Folded forms (calc::Program::folded_forms) take their plain form's kernels, whichever chose.
RunPlan plan_mappings(const calc::Program& program, const MappingRequest& request,
                      const Broadcast& broadcast) {
  RunPlan plan = choose_mappings(program, request, broadcast);
  follow_plain_forms(program, plan);
  return plan;
}

namespace {

RunPlan choose_mappings(const calc::Program& program, const MappingRequest& request,
                        const Broadcast& broadcast) {
  RunPlan plan;
  for (std::size_t i = 0; i < program.calculations.size(); ++i) {
    CalculationPlan p;
    p.name = program.calculations[i].name;
    p.mapping = request.defaults.at(i);
    plan.calculations.push_back(std::move(p));
  }
  const std::string& word = request.method;
  if (word == "default") return plan;
  if (word == "fixed") {
    int n = 0;
    for (std::size_t i = 0; i < plan.calculations.size(); ++i)
      if (i < request.fixed.size() && request.fixed[i]) {
        plan.calculations[i].mapping = *request.fixed[i];
        ++n;
      }
    plan.log.push_back(fmt::format("mapper: fixed, {} of {} calculation(s) from {}", n,
                                   plan.calculations.size(), request.fixed_path));
    return plan;
  }
  if (!request.mapped_by_model) {
    for (std::size_t i = 0; i < plan.calculations.size(); ++i)
      plan.calculations[i].mapping = calc::default_mapping(program.calculations[i]);
    return plan;
  }

  std::string text, error;
  if (request.root) try {
      text = search_on_root(program, request, plan);
    } catch (const std::exception& e) {
      error = e.what();
    }
  // Every rank takes rank 0's choice (or its error).
  broadcast(error);
  if (!error.empty()) throw calc::MappingError("the mapper failed: " + error);
  broadcast(text);
  if (text.empty()) return plan;
  const std::vector<std::string> parts = split_text(text);
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const MappingFile mf = parse_mapping_file(parts[j], "<mapper>", program);
    for (const MappingFileEntry& e : mf.entries)
      for (std::size_t i = 0; i < program.calculations.size(); ++i)
        if (program.calculations[i].name == e.calculation) {
          if (j == 0) plan.calculations[i].mapping = e.mapping;
          auto& list = plan.calculations[i].candidates;
          if (request.verify > 0 && std::find(list.begin(), list.end(), e.mapping) == list.end())
            list.push_back(e.mapping);
        }
  }
  return plan;
}

} // namespace

void plan_launches(const calc::Program& program, const ExchangeRequest& request,
                   const Broadcast& broadcast, RunPlan& plan) {
  const std::vector<double>& bytes = request.phase_bytes;
  std::string phases;
  for (double b : bytes) phases += fmt::format("{}{:.3g} MB", phases.empty() ? "" : ", ", b * 1e-6);
  plan.exchange_words =
      fmt::format("{} evolved variables, {} phase{} of 2 messages ({}), {}", request.evolved,
                  bytes.size(), bytes.size() == 1 ? "" : "s", phases, request.transport);
  const bool modelled = request.device.has_value();
  if (modelled) {
    plan.exchange_predicted = 0;
    for (double b : bytes) plan.exchange_predicted += model::message_seconds(*request.device, b);
  }
  plan.log.push_back(
      fmt::format("ghost exchange: {}{}", plan.exchange_words,
                  modelled ? fmt::format("; predicted {:.3g} ms", plan.exchange_predicted * 1e3)
                           : std::string("; no interconnect description to predict it")));

  const std::string& mode = request.overlap;
  std::string decided; // '1'/'0' per considered calculation, in order: the root's decisions
  std::vector<std::size_t> considered;
  for (std::size_t i = 0; i < plan.calculations.size(); ++i) {
    CalculationPlan& p = plan.calculations[i];
    const calc::Calculation& c = program.calculations[i];
    if (i >= request.splittable.size() || !request.splittable[i] || mode == "no") continue;
    p.regions = calc::split_region(request.owned, calc::required_margin(c), request.shell_faces);
    if (p.regions.interior.empty()) {
      p.launch_reason = "whole: the patch is too thin for an interior";
    } else if (mode == "yes") {
      p.split = true;
      p.launch_reason = "split (Saguaro::exchange_overlap = yes)";
    } else if (modelled) {
      MapperOptions options;
      options.grid = request.grid;
      ExchangeCost cost;
      cost.seconds = plan.exchange_predicted;
      cost.faces = request.shell_faces;
      const calc::Mapping mapping =
          p.mapping.kernels.empty() ? calc::default_mapping(c) : p.mapping;
      const LaunchChoice choice = choose_launches(c, mapping, *request.device, options, cost);
      p.split = choice.split;
      p.launch_reason = choice.reason;
    } else {
      p.split = true;
      p.launch_reason = "split (no interconnect description to price the exchange)";
    }
    decided += p.split ? '1' : '0';
    considered.push_back(i);
  }
  // Every rank launches as rank 0 decided (the banner's words): a rank's patch, and with it
  // the prices, may differ by a point, and a mapping from the mapping cache may differ. (A
  // rank without an interior that is told to split computes its shell, all of it, after the
  // exchange.)
  broadcast(decided);
  for (std::size_t k = 0; k < considered.size(); ++k) {
    CalculationPlan& p = plan.calculations[considered[k]];
    p.split = k < decided.size() && decided[k] == '1';
    plan.log.push_back(fmt::format("{}: {}", p.name, p.launch_reason));
  }
}

std::vector<calc::Mapping> finish_candidates(const calc::Calculation& calc, const MapResult& result,
                                             const calc::Mapping& default_mapping, int verify) {
  std::vector<calc::Mapping> out{result.best.mapping};
  auto add = [&](const calc::Mapping& m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  const calc::Mapping& best = result.best.mapping;
  // Where the pick is a register fit, the search's own best is the second opinion (and the pick
  // where folding changes the register fit: drop_candidates_changed_by_folding).
  if (result.best_is_register_fit && !result.runners_up.empty() && verify > 1)
    add(result.runners_up.front().mapping);
  // The fastest of another partition, else of other block shapes: a second opinion the model's
  // ranking does not crowd out with near-copies of its pick.
  const PricedMapping* other = nullptr;
  for (const PricedMapping& r : result.runners_up)
    if (structure(r.mapping) != structure(best)) {
      other = &r;
      break;
    }
  if (other == nullptr)
    for (const PricedMapping& r : result.runners_up)
      if (blocks(r.mapping) != blocks(best)) {
        other = &r;
        break;
      }
  if (other != nullptr && verify > 1) add(other->mapping);
  for (const PricedMapping& r : result.runners_up) {
    if (out.size() >= std::size_t(std::max(1, verify))) break;
    add(r.mapping);
  }
  add(default_mapping);
  add(calc::one_thread_per_point(calc));
  if (verify > 1)
    for (const PricedMapping& m : result.register_fits) add(m.mapping);
  return out;
}

void drop_candidates_changed_by_folding(const calc::Program& program, std::size_t plain,
                                        std::size_t folded, RunPlan& plan) {
  const calc::FoldedForm& form = program.folded_forms.at(folded);
  CalculationPlan& p = plan.calculations.at(plain);
  if (p.candidates.empty()) return;
  std::vector<calc::Mapping> kept, as_folded;
  for (const calc::Mapping& m : p.candidates) {
    calc::Mapping f = calc::fold_mapping(form, program.calculations.at(plain),
                                         program.calculations.at(folded), m);
    bool summed_no_more = false;
    for (std::size_t k = 0; k < m.kernels.size(); ++k)
      summed_no_more =
          summed_no_more || (m.kernels[k].block.sums_by_input && !f.kernels[k].block.sums_by_input);
    if (summed_no_more || std::find(as_folded.begin(), as_folded.end(), f) != as_folded.end())
      continue;
    as_folded.push_back(std::move(f));
    kept.push_back(m);
  }
  if (kept.empty()) kept.push_back(p.candidates.front()); // nothing else to run
  // The mapper's choice whose sums by input the folding drops (Maxwell's, which the model picks
  // for its plain form) would run as other kernels than the model priced: the next candidate is
  // the choice, and the folded forms follow it (the time-tile decision prices them).
  const bool choice_changed = !(kept.front() == p.candidates.front());
  p.candidates = std::move(kept);
  if (choice_changed) {
    p.mapping = p.candidates.front();
    follow_plain_forms(program, plan);
  }
}

std::size_t cheapest_price(const std::vector<double>& prices) {
  std::size_t best = prices.size();
  double lowest = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < prices.size(); ++j)
    if (prices[j] < lowest) { // NaN never is
      lowest = prices[j];
      best = j;
    }
  return best;
}

std::vector<double> step_weighted_times(const std::vector<double>& timed,
                                        const std::vector<std::size_t>& close,
                                        const std::vector<double>& step, int launches) {
  if (close.size() < 2 || step.size() != close.size() || launches < 1) return timed;
  std::size_t anchor = 0; // the close candidate fastest in the timed form
  for (std::size_t c = 1; c < close.size(); ++c)
    if (timed.at(close[c]) < timed.at(close[anchor])) anchor = c;
  const double ratio = step[anchor] / launches / timed.at(close[anchor]);
  std::vector<double> out(timed.size());
  for (std::size_t j = 0; j < timed.size(); ++j) out[j] = timed[j] * ratio;
  for (std::size_t c = 0; c < close.size(); ++c) out.at(close[c]) = step[c] / launches;
  return out;
}

// Saguaro::mapper_verify: the fastest candidate of each calculation is kept; every candidate's
// timing stays in the plan (and the CUDA backend's in the prediction log).
std::vector<std::string> verify_candidates(const calc::Program& program, const TimeCandidates& time,
                                           RunPlan& plan,
                                           const std::function<std::string(std::size_t)>& timed_as,
                                           const PriceCandidates& price) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < plan.calculations.size(); ++i) {
    CalculationPlan& p = plan.calculations[i];
    const std::vector<calc::Mapping>& list = p.candidates;
    if (list.size() < 2) continue;
    // Priced before timing: the timing releases the candidates' kernels.
    p.candidate_priced.clear();
    if (price) {
      p.candidate_priced = price(i, list);
      if (p.candidate_priced.size() != list.size())
        throw std::logic_error("verify_candidates: one price per candidate expected");
      p.priced_pick = cheapest_price(p.candidate_priced);
      if (p.priced_pick == list.size()) { // nothing the compiler reported
        p.candidate_priced.clear();
        p.priced_pick = 0;
      }
    }
    p.candidate_seconds = time(i, list);
    const std::vector<double>& seconds = p.candidate_seconds;
    if (seconds.size() != list.size())
      throw std::logic_error("verify_candidates: one timing per candidate expected");
    const std::size_t best =
        std::size_t(std::min_element(seconds.begin(), seconds.end()) - seconds.begin());
    const calc::Calculation& c = program.calculations[i];
    const calc::Mapping one_per_point = calc::one_thread_per_point(c);
    const calc::Mapping default_mapping = calc::default_mapping(c);
    const std::optional<calc::Mapping> queues = register_queue_mapping(c); // queues.hpp
    // `base` with its registers capped (occupancy.hpp, queues.hpp): the same kernels, every one
    // with the same blocks per SM set; 0 for any other mapping.
    auto capped = [](const calc::Mapping& m, const calc::Mapping& base) {
      if (m.kernels.size() != base.kernels.size() || m.kernels.empty()) return 0;
      const int blocks = m.kernels.front().block.min_blocks;
      for (std::size_t k = 0; k < m.kernels.size(); ++k) {
        calc::KernelMapping plain = m.kernels[k];
        plain.block.min_blocks = 0;
        if (m.kernels[k].block.min_blocks != blocks || !(plain == base.kernels[k])) return 0;
      }
      return blocks;
    };
    const std::string form = timed_as ? timed_as(i) : std::string();
    std::string line = form.empty() ? fmt::format("mapper_verify: {}:", c.name)
                                    : fmt::format("mapper_verify: {}, timed as {}:", c.name, form);
    std::vector<std::string> labels;
    for (std::size_t j = 0; j < list.size(); ++j) {
      std::string label = j == 0                         ? " model's pick"
                          : list[j] == one_per_point     ? " one thread per point"
                          : list[j] == default_mapping   ? " default"
                          : queues && list[j] == *queues ? " register queues"
                                                         : "";
      if (const int blocks = capped(list[j], one_per_point); j > 0 && blocks > 0)
        label = fmt::format(" one thread per point, {}/SM", blocks);
      if (const int blocks = queues ? capped(list[j], *queues) : 0; j > 0 && blocks > 0)
        label = fmt::format(" register queues, {}/SM", blocks);
      if (j > 0 && label.empty() && !list[j].kernels.empty() &&
          list[j].kernels.front().block.sums_by_input) {
        const calc::BlockConfig& b = list[j].kernels.front().block;
        label = b.min_blocks > 0
                    ? fmt::format(" sums by input, {} points, {}/SM", b.tee, b.min_blocks)
                    : fmt::format(" sums by input, {} points", b.tee);
      }
      line += fmt::format("{} {:.3f} ms{}", j ? "," : "", seconds[j] * 1e3, label);
      labels.push_back(label);
    }
    line += fmt::format("; kept {}", calc::to_string(c, list[best]));
    if (!p.candidate_priced.empty()) {
      const std::size_t q = p.priced_pick;
      const std::string which = q == 0              ? std::string("its own pick")
                                : labels[q].empty() ? fmt::format("candidate {}", q)
                                                    : "the" + labels[q];
      line += fmt::format("; with ptxas's registers the model picks {} (predicted {:.3f} ms, "
                          "measured {:.3f} ms: {:.2f} of the fastest)",
                          which, p.candidate_priced[q] * 1e3, seconds[q] * 1e3,
                          seconds[best] / seconds[q]);
    }
    p.kept = best;
    p.mapping = list[best];
    if (plan.verdicts) try {
        const VerdictCache& v = *plan.verdicts;
        MappingCache(v.dir).store(program, c, v.device, v.grid, v.method, p.mapping, seconds[best]);
      } catch (const std::exception& e) { // the next run times again
        line += fmt::format("; verdict not cached: {}", e.what());
      }
    plan.log.push_back(line);
    lines.push_back(line);
  }
  follow_plain_forms(program, plan);
  return lines;
}

} // namespace saguaro::mapper
