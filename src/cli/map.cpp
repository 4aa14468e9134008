#include "cli/map.hpp"

#include "calc/code_plan.hpp"
#include "calc/lower.hpp"
#include "cli/plan.hpp"
#include "edl/parser.hpp"
#include "mapper/mapping_file.hpp"
#include "model/device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

namespace saguaro::cli {

namespace {

constexpr int kBadInput = 2;

// "256" or "256x128x64" (blanks allowed around the numbers), each 1 to 1,000,000.
bool parse_grid(const std::string& text, std::array<long, 3>& grid) {
  std::vector<long> sizes;
  std::size_t at = 0;
  while (true) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    const std::size_t from = at;
    long n = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && at - from < 8)
      n = 10 * n + (text[at++] - '0');
    if (at == from || n < 1 || n > 1'000'000) return false;
    sizes.push_back(n);
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    if (at == text.size()) break;
    if (text[at] != 'x' || sizes.size() == 3) return false;
    ++at;
  }
  if (sizes.size() == 1) sizes.assign(3, sizes[0]);
  if (sizes.size() != 3) return false;
  std::copy(sizes.begin(), sizes.end(), grid.begin());
  return true;
}

std::string ms(double seconds) {
  return fmt::format("{:.4f} ms", seconds * 1e3);
}

// The strategies of a kernel as the figure's columns: one letter per input, in input order.
std::string letters(const model::KernelProfile& k) {
  std::string s;
  for (const auto& in : k.inputs)
    if (in.grid_function >= 0) s += calc::letter(in.strategy);
  return s;
}

std::string strategies_text(const model::KernelProfile& k) {
  std::vector<std::string> parts;
  for (const auto& in : k.inputs)
    parts.push_back(fmt::format("{}:{}", in.name, calc::letter(in.strategy)));
  return fmt::format("{}", fmt::join(parts, " "));
}

// The grid functions a kernel stores.
std::vector<std::string> store_names(const calc::Calculation& calc, const calc::KernelMapping& k) {
  std::vector<std::string> names;
  for (int st : k.stores)
    names.push_back(
        calc
            .grid_functions[std::size_t(
                calc.stages[std::size_t(k.stage)].stores[std::size_t(st)].grid_function)]
            .name);
  return names;
}

std::string stores_text(const calc::Calculation& calc, const calc::KernelMapping& k) {
  std::vector<std::string> names = store_names(calc, k);
  for (calc::NodeId t : k.temporaries) names.push_back(fmt::format("tmp{}", t));
  return fmt::format("{}", fmt::join(names, " "));
}

// Hu et al.'s Figure 3 for one kernel at its chosen block configuration: by efficiency
// (eq. 3) and by performance alone, one row per accepted move.
void print_trace(std::ostream& out, const model::KernelProfile& chosen, const model::Device& device,
                 const std::array<long, 3>& grid) {
  const mapper::PricingContext context{
      &device, model::launch_geometry(chosen.block, mapper::kernel_extent(chosen, grid), device),
      model::Combination::Hu, mapper::MapperOptions{}.strategies};
  for (auto method :
       {mapper::AssignmentMethod::Efficiency, mapper::AssignmentMethod::Performance}) {
    const mapper::Assignment a = mapper::assign_buffering(chosen, context, method);
    model::KernelProfile k = chosen;
    for (auto& in : k.inputs) in.strategy = calc::Buffering::Unbuffered;
    model::Prediction start;
    const double t0 = mapper::launch_seconds(k, context, &start);
    out << fmt::format("    assignment by {} ({}), {} model calls:\n",
                       method == mapper::AssignmentMethod::Efficiency ? "efficiency"
                                                                      : "performance",
                       method == mapper::AssignmentMethod::Efficiency
                           ? "Hu et al. Algorithm 1, eq. 3, then a descent"
                           : "Figure 3's ByPerf: -dT alone, then a descent",
                       a.model_calls);
    out << fmt::format(
        "      {:>4}  {:<{}}  {:>11}  {:>8}  {:>10}  {:>9}  {:>7}  {:>7}  {:>7}  {}\n", "step",
        "assignment", std::max<std::size_t>(10, letters(k).size()), "T", "dT", "efficiency",
        "blocks/SM", "M_reg", "M_smem", "M_roc", "limited (reg smem roc)");
    const std::size_t w = std::max<std::size_t>(10, letters(k).size());
    out << fmt::format(
        "      {:>4}  {:<{}}  {:>11}  {:>8}  {:>10}  {:>9}  {:>7.0f}  {:>7.0f}  {:>7.0f}\n", 0,
        letters(k), w, ms(t0), "", "", start.blocks_per_sm, start.M_reg, start.M_smem, start.M_roc);
    int step = 0;
    for (const mapper::AssignmentStep& s : a.trace) {
      k.inputs[std::size_t(s.input)].strategy = s.to;
      out << fmt::format("      {:>4}  {:<{}}  {:>11}  {:>+7.1f}%  {:>10.3g}  {:>9}  {:>7.0f}  "
                         "{:>7.0f}  {:>7.0f}  "
                         "{}   {} -> {}\n",
                         ++step, letters(k), w, ms(s.seconds_after),
                         100 * (s.seconds_after - s.seconds_before) / s.seconds_before,
                         s.efficiency * 1e3, s.blocks_per_sm, s.M_reg, s.M_smem, s.M_roc,
                         s.descent ? "descent"
                                   : fmt::format("{} {} {}", int(s.reg_limited),
                                                 int(s.smem_limited), int(s.roc_limited)),
                         s.grid_function, calc::letter(s.to));
    }
    out << fmt::format(
        "      final: {} buffered, {}\n",
        std::count_if(a.strategies.begin(), a.strategies.end(),
                      [](calc::Buffering b) { return b != calc::Buffering::Unbuffered; }),
        ms(a.seconds));
  }
}

nlohmann::json kernel_json(const calc::Calculation& calc, const calc::KernelMapping& km,
                           const mapper::PricedKernel& k) {
  nlohmann::json j;
  j["stage"] = km.stage;
  j["stores"] = store_names(calc, km);
  j["temporaries"] = km.temporaries;
  j["block"] = calc::to_string(km.block);
  nlohmann::json b = nlohmann::json::object();
  for (const auto& in : k.profile.inputs) b[in.name] = std::string(1, calc::letter(in.strategy));
  j["buffering"] = b;
  j["predicted_seconds"] = k.seconds;
  const model::Prediction& p = k.prediction;
  j["limiter"] = p.limiter;
  j["blocks_per_sm"] = p.blocks_per_sm;
  j["occupancy"] = p.occupancy;
  j["occupancy_limit"] = p.occupancy_limit;
  j["cycles_per_point"] = {{"T_hu", p.T_hu}, {"T_chemora", p.T_chemora}, {"T_L2", p.T_L2},
                           {"T_GM", p.T_GM}, {"T_data", p.T_data},       {"T_lat", p.T_lat},
                           {"s_i", p.s_i}};
  j["T_launch"] = p.T_launch;
  nlohmann::json trace = nlohmann::json::array();
  for (const auto& s : k.trace)
    trace.push_back({{"grid_function", s.grid_function},
                     {"to", std::string(1, calc::letter(s.to))},
                     {"seconds_before", s.seconds_before},
                     {"seconds_after", s.seconds_after},
                     {"efficiency", s.efficiency},
                     {"blocks_per_sm", s.blocks_per_sm},
                     {"limited", {s.reg_limited, s.smem_limited, s.roc_limited}},
                     {"descent", s.descent}});
  j["trace"] = trace;
  return j;
}

nlohmann::json mapping_json(const calc::Calculation& calc, const mapper::PricedMapping& m) {
  nlohmann::json j;
  j["predicted_seconds"] = m.seconds;
  j["origin"] = m.origin;
  j["short"] = calc::to_string(calc, m.mapping);
  j["kernels"] = nlohmann::json::array();
  for (std::size_t k = 0; k < m.kernels.size(); ++k)
    j["kernels"].push_back(kernel_json(calc, m.mapping.kernels[k], m.kernels[k]));
  return j;
}

} // namespace

int map_main(const MapCommand& command, std::ostream& out, std::ostream& err) {
  std::array<long, 3> grid{};
  if (!parse_grid(command.grid, grid)) {
    err << "saguaro map: --grid expects N or NXxNYxNZ (points per axis, 1 to 10^6), not '"
        << command.grid << "'\n";
    return kBadInput;
  }
  mapper::Method method{};
  if (!mapper::method_from_string(command.method, method) || method == mapper::Method::Fixed) {
    err << "saguaro map: --method expects model, exhaustive or default, not '" << command.method
        << "'\n";
    return kBadInput;
  }
  model::Device device;
  try {
    device = model::load_device(command.device_file);
  } catch (const model::DeviceError& e) {
    const std::string what = e.what();
    err << what << (what.empty() || what.back() != '\n' ? "\n" : "");
    return kBadInput;
  }
  const calc::Program program =
      calc::lower(edl::parse_file(command.edl_file),
                  calc::LowerOptions{command.fd_order,
                                     calc::mixed_derivatives_from(command.mixed_derivatives)});

  mapper::MapperOptions options;
  options.method = method;
  options.grid = grid;
  // JSON carries each chosen kernel's trace; the text prints it (and ByPerf's) itself.
  options.trace = command.format == "json";
  nlohmann::json doc;
  doc["edl"] = command.edl_file;
  doc["device"] = device.name;
  doc["device_file"] = command.device_file;
  doc["grid"] = grid;
  doc["method"] = command.method;
  doc["calculations"] = nlohmann::json::array();
  mapper::MappingFile saved;
  saved.device = device.name;
  saved.grid = grid;
  const bool text = command.format == "text";
  if (text)
    out << fmt::format("{}: {} calculation(s) on {} ({}), {}x{}x{} points per patch, mapper "
                       "'{}'\n",
                       command.edl_file, program.calculations.size(), device.name,
                       command.device_file, grid[0], grid[1], grid[2], command.method);
  for (const calc::Calculation& calc : program.calculations) {
    const mapper::MapResult r = mapper::map_calculation(calc, device, options);
    saved.entries.push_back(
        {calc.name, mapper::calculation_hash(calc), r.best.seconds, r.best.mapping});
    if (!text) {
      nlohmann::json c;
      c["name"] = calc.name;
      c["chosen"] = mapping_json(calc, r.best);
      if (command.plan) {
        c["chosen"]["plans"] = nlohmann::json::array();
        for (const calc::CodePlan& k : calc::plan_code(calc, r.best.mapping).kernels)
          c["chosen"]["plans"].push_back(plan_to_json(calc, k));
      }
      c["runners_up"] = nlohmann::json::array();
      for (const auto& m : r.runners_up) c["runners_up"].push_back(mapping_json(calc, m));
      c["register_fits"] = nlohmann::json::array();
      for (const auto& m : r.register_fits) c["register_fits"].push_back(mapping_json(calc, m));
      const auto& s = r.stats;
      c["search"] = {{"model_calls", s.model_calls},
                     {"nodes_planned", s.nodes_planned},
                     {"kernels_priced", s.kernels_priced},
                     {"configurations", s.configurations},
                     {"pruned", s.pruned},
                     {"partitions", s.partitions},
                     {"moves_accepted", s.moves_accepted},
                     {"cover_groups", s.cover_groups},
                     {"ilp_solves", s.ilp_solves},
                     {"ilp_stopped", s.ilp_stopped},
                     {"out_of_budget", s.out_of_budget},
                     {"out_of_time", s.out_of_time},
                     {"seconds", s.seconds}};
      doc["calculations"].push_back(c);
      continue;
    }
    out << fmt::format("\ncalculation {} ({} stage(s), {} DAG nodes): {} kernel(s), predicted "
                       "{} [{}]\n",
                       calc.name, calc.stages.size(), calc.node_count, r.best.kernels.size(),
                       ms(r.best.seconds), r.best.origin);
    for (std::size_t k = 0; k < r.best.kernels.size(); ++k) {
      const calc::KernelMapping& km = r.best.mapping.kernels[k];
      const mapper::PricedKernel& pk = r.best.kernels[k];
      const model::Prediction& p = pk.prediction;
      const double scale = (pk.seconds - p.T_launch) / std::max(p.T_hu, 1e-300);
      out << fmt::format("  kernel {} (stage {}): stores {}\n", k, km.stage, stores_text(calc, km));
      out << fmt::format("    block {}, strategies {}\n", calc::to_string(km.block),
                         strategies_text(pk.profile));
      out << fmt::format(
          "    predicted {}: DRAM {}, L2 {}, latency {}, issue {}, launch {:.1f} us; "
          "limiter {}; {} blocks/SM ({}), occupancy {:.0f}%\n",
          ms(pk.seconds), ms(p.T_GM * scale), ms(p.T_L2 * scale), ms(p.T_lat * scale),
          ms(p.s_i * scale), p.T_launch * 1e6, p.limiter, p.blocks_per_sm, p.occupancy_limit,
          100 * p.occupancy);
      print_trace(out, pk.profile, device, grid);
    }
    if (command.plan) {
      out << "  kernel plans:\n";
      for (const calc::CodePlan& k : calc::plan_code(calc, r.best.mapping).kernels) {
        std::istringstream lines(calc::to_string(calc, k));
        for (std::string line; std::getline(lines, line);) out << "    " << line << "\n";
      }
    }
    if (!r.runners_up.empty()) out << "  runners-up:\n";
    int rank = 1;
    for (const mapper::PricedMapping& m : r.runners_up)
      out << fmt::format("    {}. {} ({:+.1f}%) {} [{}]\n", ++rank, ms(m.seconds),
                         100 * (m.seconds / r.best.seconds - 1), calc::to_string(calc, m.mapping),
                         m.origin);
    for (const mapper::PricedMapping& m : r.register_fits) {
      out << fmt::format("  {} (timed by the empirical finish): {} ({:+.1f}%), {} kernels\n",
                         m.origin, ms(m.seconds), 100 * (m.seconds / r.best.seconds - 1),
                         m.mapping.kernels.size());
      for (std::size_t k = 0; k < m.mapping.kernels.size(); ++k) {
        const calc::KernelMapping& km = m.mapping.kernels[k];
        out << fmt::format("    kernel {}: stores {}; {}\n", k, stores_text(calc, km),
                           ms(m.kernels[k].seconds));
      }
    }
    const auto& s = r.stats;
    std::string ends;
    if (s.ilp_stopped > 0) ends += fmt::format(" ({} stopped by a limit)", s.ilp_stopped);
    if (s.out_of_budget)
      ends += "; a partition strategy used its share of the budget "
              "(MapperOptions::partition_budget) and kept its best";
    if (s.out_of_time)
      ends += "; the partition search ran out of time (MapperOptions::partition_seconds) and "
              "kept its best";
    out << fmt::format("  search: {:.1f} ms, {} model calls, {} DAG nodes planned, {} kernel(s) "
                       "searched, {} block configurations assigned ({} pruned), {} partitions, "
                       "{} moves accepted, {} cover groups, {} ILP solves{}\n",
                       s.seconds * 1e3, s.model_calls, s.nodes_planned, s.kernels_priced,
                       s.configurations, s.pruned, s.partitions, s.moves_accepted, s.cover_groups,
                       s.ilp_solves, ends);
  }
  if (!text) out << doc.dump(2) << "\n";
  if (!command.save.empty()) {
    std::ofstream f(command.save);
    f << mapper::format_mapping_file(program, saved,
                                     fmt::format("saguaro map {} --device {} --grid {}",
                                                 command.edl_file, command.device_file,
                                                 command.grid));
    if (!f) {
      err << "saguaro map: cannot write " << command.save << "\n";
      return 1;
    }
    if (text) out << "\nmappings saved to " << command.save << " (Saguaro::mapper = \"fixed\")\n";
  }
  return 0;
}

} // namespace saguaro::cli
