// bench_mapper --replay RUN.json: a recorded GPU run's candidates priced again by the model of
// this build, without a GPU. Each candidate's mapping is read back from its key in the recording
// (the short form and, per kernel, its stage, stores and temporaries: mapping_key), so a change
// to the model, or to the search, is judged on exactly the kernels that ran; each kernel takes
// the recording's ptxas resources and measured median. Writes one row per kernel with the
// model's terms beside the measured time (TSV), so a change to the model, or a fit of its
// constants, is judged against hundreds of measured kernels in seconds.
#include "candidates.hpp"

#include "calc/sums_by_input.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace saguaro::bench::mapper_bench {

namespace {

std::vector<int> numbers(const std::string& list) {
  std::vector<int> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(std::stoi(item));
  return out;
}

// The mapping a recorded candidate's key names (candidates.cpp, mapping_key): "k0[s0 z 32x8x8
// phi:b +3tmp] k1[...]" then "|stage:stores:temporaries" per kernel. Throws on a key it cannot
// read (a grid function `calc` does not have, a malformed block).
calc::Mapping mapping_from_key(const calc::Calculation& calc, const std::string& key) {
  const std::size_t bar = key.find('|');
  if (bar == std::string::npos) throw std::runtime_error("no partition in the key");
  calc::Mapping m;
  std::istringstream parts(key.substr(bar + 1));
  for (std::string part; std::getline(parts, part, '|');) {
    const std::size_t a = part.find(':'), b = part.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos)
      throw std::runtime_error("bad partition " + part);
    calc::KernelMapping k;
    k.stage = std::stoi(part.substr(0, a));
    k.stores = numbers(part.substr(a + 1, b - a - 1));
    for (int t : numbers(part.substr(b + 1))) k.temporaries.push_back(calc::NodeId(t));
    m.kernels.push_back(std::move(k));
  }
  const std::string shortform = key.substr(0, bar);
  std::size_t at = 0;
  for (calc::KernelMapping& k : m.kernels) {
    const std::size_t open = shortform.find('[', at), close = shortform.find(']', open);
    if (open == std::string::npos || close == std::string::npos)
      throw std::runtime_error("fewer kernels than partitions");
    std::istringstream words(shortform.substr(open + 1, close - open - 1));
    std::string stage, axis, dims, word, block;
    words >> stage >> axis >> dims;
    block = axis + " " + dims;
    while (words >> word) {
      if ((word.size() > 3 && word.compare(word.size() - 3, 3, "/SM") == 0) || word == "by-input")
        block += " " + word;
      else if (word[0] == '+')
        continue; // "+3tmp": the partition says which
      else {
        const std::size_t colon = word.rfind(':');
        calc::Buffering b;
        if (colon == std::string::npos || colon + 2 != word.size() ||
            !calc::buffering_from_letter(word.back(), b))
          throw std::runtime_error("bad buffering " + word);
        const std::string name = word.substr(0, colon);
        int g = -1;
        for (std::size_t i = 0; i < calc.grid_functions.size(); ++i)
          if (calc.grid_functions[i].name == name) g = int(i);
        if (g < 0) throw std::runtime_error("no grid function " + name);
        k.buffering[g] = b;
      }
    }
    k.block = calc::parse_block_config(block);
    at = close + 1;
  }
  return m;
}

// The benchmark's recorded candidates, each mapping read back from its key and priced by
// `device`'s model; independent of this build's search.
Candidates recorded_candidates(const calc::Calculation& calc, const model::Device& device, int n,
                               const nlohmann::json& bench) {
  Candidates out(calc, device, n);
  for (const nlohmann::json& c : bench.at("candidates")) {
    const std::string key = c.value("key", "");
    const nlohmann::json kinds = c.value("kinds", nlohmann::json::array());
    const std::string kind = kinds.empty() ? key : kinds.front().get<std::string>();
    try {
      out.add(mapping_from_key(calc, key), kind, true);
    } catch (const std::exception& e) {
      std::printf("  replay: %s: %s\n", kind.c_str(), e.what());
    }
  }
  return out;
}

// A row per kernel of `cands` found in the recorded benchmark `bench` by key (the round trip of
// mapping_from_key), written to `tsv` (replay_header's columns).
void write_rows(const Candidates& cands, const nlohmann::json& bench, const std::string& name,
                const model::Device& device, int n, std::FILE* tsv) {
  std::map<std::string, const nlohmann::json*> by_key;
  for (const nlohmann::json& c : bench.at("candidates")) by_key[c.value("key", "")] = &c;
  int matched = 0, rows = 0;
  for (const Candidate& c : cands.list) {
    auto at = by_key.find(c.key);
    if (at == by_key.end()) continue;
    ++matched;
    const nlohmann::json& kernels = at->second->at("kernels");
    const nlohmann::json whole = at->second->value("measured_s", nlohmann::json());
    for (std::size_t k = 0; k < c.priced.kernels.size() && k < kernels.size(); ++k) {
      nlohmann::json rk = kernels[k];
      // Recordings before per-kernel times: a one-kernel candidate's time is its kernel's.
      if ((!rk.contains("measured_s") || rk["measured_s"].is_null()) && kernels.size() == 1 &&
          whole.is_number())
        rk["measured_s"] = whole;
      if (!rk.contains("registers") || rk["registers"].get<int>() < 0) continue;
      const double measured = rk.contains("measured_s") && rk["measured_s"].is_number()
                                  ? rk["measured_s"].get<double>()
                                  : std::nan("");
      const model::KernelProfile& profile = c.priced.kernels[k].profile;
      model::CompiledResources res;
      res.registers = rk.value("registers", -1);
      res.spill_bytes = rk.value("spill_stores", 0) + rk.value("spill_loads", 0);
      res.shared_bytes = rk.value("shared_bytes", 0.0);
      const model::Prediction p = model::predict(profile, device, res);
      if (!p.valid) continue;
      const model::LaunchGeometry g = model::launch_geometry(
          profile.block, mapper::kernel_extent(profile, {long(n), long(n), long(n)}), device);
      const double scale = g.rounds * g.points_per_block * p.seconds_per_cycle;
      const calc::FlopCounts& f = profile.flops;
      const double columns[] = {measured,
                                p.seconds(g, model::Combination::Hu),
                                double(res.registers),
                                double(res.spill_bytes),
                                double(p.blocks_per_sm),
                                p.occupancy,
                                p.T_L2 * scale,
                                p.T_GM * scale,
                                p.T_lat * scale,
                                p.s_i * scale,
                                p.T_launch,
                                p.D_L2_total,
                                p.D_L2_c,
                                p.D_GM_total,
                                p.N_g,
                                p.N_L2,
                                p.N_s,
                                p.N_b,
                                p.N_c,
                                p.N_f,
                                double(f.add + f.mul - f.fma),
                                double(f.fma),
                                double(f.total()),
                                double(profile.inputs.size()),
                                double(profile.stores),
                                whole.is_number() ? whole.get<double>() : std::nan(""),
                                calc::points_in_lockstep(profile.block, profile.stores)};
      // The kind with the candidate's number: fit_constants.py sums a candidate's kernels by it,
      // and two candidates may share a kind.
      std::fprintf(tsv, "%s\t%s #%d\t%zu\t%s\t%s", name.c_str(), c.kinds.front().c_str(), matched,
                   k, profile.description.c_str(), p.limiter.c_str());
      for (double v : columns) std::fprintf(tsv, "\t%.9g", v);
      std::fputc('\n', tsv);
      ++rows;
    }
  }
  std::printf("  replay: %d of %zu candidates matched the recording, %d kernels written\n", matched,
              bench.at("candidates").size(), rows);
}

const char* replay_header() {
  return "benchmark\tkind\tkernel\tmapping\tlimiter\tmeasured_s\tpredicted_s\tregisters\t"
         "spill_bytes\tblocks_per_sm\toccupancy\tT_L2_s\tT_GM_s\tT_lat_s\ts_i_s\tT_launch_s\t"
         "D_L2\tD_L2_c\tD_GM\tN_g\tN_L2\tN_s\tN_b\tN_c\tN_f\tfp_instructions\tfma\tflops\t"
         "inputs\tstores\tcandidate_measured_s\tlockstep_points\n";
}

} // namespace

void run_replay(const Options& opt, const std::vector<bench::Benchmark>& benchmarks,
                const model::Device& device) {
  std::ifstream in(opt.replay_path);
  if (!in) throw std::runtime_error("cannot read " + opt.replay_path);
  const nlohmann::json recorded = nlohmann::json::parse(in);
  const model::Device priced_by =
      opt.replay_price.empty() ? device : model::load_device(opt.replay_price);
  std::FILE* tsv = opt.replay_tsv.empty() ? stdout : std::fopen(opt.replay_tsv.c_str(), "a");
  if (tsv == nullptr) throw std::runtime_error("cannot write " + opt.replay_tsv);
  if (tsv == stdout || std::ftell(tsv) == 0) std::fputs(replay_header(), tsv); // a new file
  for (const bench::Benchmark& b : benchmarks) {
    std::printf("\n== %s (replay of %s)\n", b.name.c_str(), opt.replay_path.c_str());
    const nlohmann::json* bench = nullptr;
    for (const nlohmann::json& r : recorded.at("benchmarks"))
      if (r.value("name", "") == b.name) bench = &r;
    if (bench == nullptr) {
      std::printf("  replay: the recording has no benchmark %s\n", b.name.c_str());
      continue;
    }
    const bench::LoadedBenchmark loaded = bench::load_benchmark(b);
    write_rows(recorded_candidates(loaded.calculation(), priced_by, opt.n, *bench), *bench, b.name,
               priced_by, opt.n, tsv);
  }
  if (tsv != stdout) std::fclose(tsv);
}

} // namespace saguaro::bench::mapper_bench
