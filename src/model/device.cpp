// Device descriptions: the table of quantities, and reading and writing them as YAML.
#include "model/device.hpp"

#include "support/diagnostics.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace saguaro::model {

double Device::elements_per_cycle_per_sm(double gb_per_s) const {
  if (clock_ghz <= 0 || sm_count <= 0) return 0;
  return gb_per_s / (8.0 * clock_ghz * sm_count);
}

const std::vector<Quantity>& quantities() {
  static const std::vector<Quantity> table = {
      {"sm_count", "count", "N_SM", "streaming multiprocessors", &Device::sm_count, true},
      {"clock_ghz", "GHz", "", "SM clock that cycle counts refer to", &Device::clock_ghz, true},
      {"dram_bandwidth", "GB/s", "W_GM", "achievable DRAM bandwidth, read + write",
       &Device::dram_bandwidth, true},
      {"l2_bandwidth", "GB/s", "W_L2", "achievable L2-to-SM bandwidth", &Device::l2_bandwidth,
       true},
      {"dram_latency", "cycles", "L_g", "global load missing L2", &Device::dram_latency, true},
      {"l2_latency", "cycles", "L_L2", "global load hitting L2", &Device::l2_latency, true},
      {"shared_latency", "cycles", "L_s", "shared-memory load", &Device::shared_latency, true},
      {"barrier_latency", "cycles", "L_b", "__syncthreads of a full block",
       &Device::barrier_latency, true},
      {"readonly_latency", "cycles", "L_c", "load hitting the read-only / L1 cache",
       &Device::readonly_latency, true},
      {"fp_latency", "cycles", "L_f", "dependent FP64 operation", &Device::fp_latency, true},
      {"readonly_line", "bytes", "LS_c", "read-only / L1 cache line", &Device::readonly_line, true},
      {"l2_line", "bytes", "LS_L2", "L2 access granule", &Device::l2_line, true},
      {"registers_per_sm", "registers", "K_reg", "32-bit registers per SM",
       &Device::registers_per_sm, true},
      {"shared_memory_per_sm", "bytes", "K_smem", "shared memory per SM",
       &Device::shared_memory_per_sm, true},
      {"readonly_cache_per_sm", "bytes", "K_roc", "read-only / L1 data cache per SM",
       &Device::readonly_cache_per_sm, true},
      {"unified_l1_shared_per_sm", "bytes", "", "one array for L1 and shared memory (0: separate)",
       &Device::unified_l1_shared_per_sm, true},
      {"l2_size", "bytes", "K_L2", "L2 cache", &Device::l2_size, true},
      {"max_threads_per_block", "threads", "", "", &Device::max_threads_per_block, true},
      {"max_threads_per_sm", "threads", "", "", &Device::max_threads_per_sm, true},
      {"max_blocks_per_sm", "blocks", "", "", &Device::max_blocks_per_sm, true},
      {"max_registers_per_thread", "registers", "", "", &Device::max_registers_per_thread, true},
      {"shared_memory_per_block", "bytes", "", "the most one block may use (opt-in)",
       &Device::shared_memory_per_block, true},
      {"register_allocation_unit", "registers", "", "registers are given to warps in units of",
       &Device::register_allocation_unit, true},
      {"warp_size", "threads", "", "", &Device::warp_size, true},
      {"global_loads_cached_in_l1", "flag", "",
       "1: plain global loads go through L1 (cc >= 7.0); 0: L2 only",
       &Device::global_loads_cached_in_l1, true},
      {"launch_overhead", "us", "T_launch", "an empty kernel's launch to completion",
       &Device::launch_overhead, true},
      {"fp64_rate", "instructions/cycle/SM", "theta_fp", "FP64 add, mul, fma", &Device::fp64_rate,
       true},
      {"fp64_div_rate", "instructions/cycle/SM", "theta_div", "whole FP64 divisions",
       &Device::fp64_div_rate, true},
      {"fp64_sqrt_rate", "instructions/cycle/SM", "theta_sqrt", "whole FP64 square roots",
       &Device::fp64_sqrt_rate, true},
      {"fp64_special_rate", "instructions/cycle/SM", "theta_sf", "whole FP64 sin/exp/log/pow",
       &Device::fp64_special_rate, true},
      {"load_store_rate", "instructions/cycle/SM", "theta_ls", "load and store instructions",
       &Device::load_store_rate, true},
      {"parallel_global", "count", "lambda_g", "global accesses in flight per thread",
       &Device::parallel_global, true},
      {"parallel_l2", "count", "lambda_L2", "L2 accesses in flight per thread",
       &Device::parallel_l2, true},
      {"parallel_shared", "count", "lambda_s", "shared accesses in flight per thread",
       &Device::parallel_shared, true},
      {"parallel_barrier", "count", "lambda_b", "barrier overlap", &Device::parallel_barrier, true},
      {"parallel_readonly", "count", "lambda_c", "read-only accesses in flight per thread",
       &Device::parallel_readonly, true},
      {"parallel_fp", "count", "lambda_f", "FP operations in flight per thread",
       &Device::parallel_fp, true},
      {"parallel_register_exponent", "1", "gamma_R",
       "lambda_g and lambda_L2 scale as (registers per thread / 64)^gamma_R (absent: 0, the "
       "paper's constants)",
       &Device::parallel_register_exponent, false, true},
      {"lockstep_exponent", "1", "gamma_P",
       "lambda_g and lambda_L2 scale as (a thread's points summed by input in lockstep, at most "
       "16 running sums)^gamma_P (absent: 0, no such term)",
       &Device::lockstep_exponent, false, true},
      {"l2_front_share", "1", "phi_L2",
       "the share of L2 that keeps the resident blocks' tiles for reuse along e (absent: 0, the "
       "paper's L2 demand)",
       &Device::l2_front_share, false, true},
      {"iteration_overhead", "cycles", "L_m", "per iteration per thread block",
       &Device::iteration_overhead, true},
      {"beta", "1", "beta", "eq. 1: non-interference of data and latency", &Device::beta, true},
      {"chemora_overlap", "1", "", "Chemora's share of the non-maximal parts (0.35)",
       &Device::chemora_overlap, true},
      {"cores", "count", "", "CPU cores", &Device::cores, false},
      {"fp64_peak", "GFLOP/s", "", "achievable FP64 rate of all cores", &Device::fp64_peak, false},
      {"interconnect_latency", "us", "",
       "ghost exchange of an almost empty message between two ranks, one phase",
       &Device::interconnect_latency, false, true},
      {"interconnect_bandwidth", "GB/s", "",
       "bytes of one message per second of a ghost exchange between two ranks",
       &Device::interconnect_bandwidth, false, true},
      {"ghost_fill_latency", "us", "",
       "one ghost exchange's fill on the device (periodic wrap, copies) of almost no bytes",
       &Device::ghost_fill_latency, false, true},
      {"ghost_fill_bandwidth", "GB/s", "",
       "ghost points' bytes read and written per second of one exchange's fill on the device",
       &Device::ghost_fill_bandwidth, false, true},
  };
  return table;
}

namespace {

// A YAML position as every input's diagnostics show it: file:line:col, the line and a caret.
[[noreturn]] void fail(const std::shared_ptr<const support::SourceFile>& file,
                       const YAML::Mark& mark, const std::string& message,
                       std::vector<support::Note> notes = {}) {
  throw DeviceError(support::render(support::Diagnostic{
      "error", support::loc_from_zero_based(file, mark.is_null() ? -1 : mark.line, mark.column),
      message, std::move(notes)}));
}

const Quantity* find_quantity(const std::string& name) {
  for (const Quantity& q : quantities())
    if (name == q.name) return &q;
  return nullptr;
}

std::string scalar(const std::shared_ptr<const support::SourceFile>& file, const YAML::Node& node,
                   const std::string& what) {
  if (!node.IsScalar()) fail(file, node.Mark(), what + " must be a single value");
  return node.Scalar();
}

} // namespace

Device parse_device(const std::string& yaml_text, const std::string& file_name) {
  auto file = std::make_shared<const support::SourceFile>(file_name, yaml_text);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    fail(file, e.mark, "not valid YAML: " + e.msg);
  }
  if (!root.IsMap())
    fail(file, root.Mark(), "a device description is a map: name, kind, quantities");

  Device d;
  std::set<std::string> seen;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (key == "name")
      d.name = scalar(file, value, "name");
    else if (key == "kind") {
      d.kind = scalar(file, value, "kind");
      if (d.kind != "gpu" && d.kind != "cpu")
        fail(file, value.Mark(), "kind is \"gpu\" or \"cpu\", not \"" + d.kind + "\"");
    } else if (key == "arch")
      d.arch = scalar(file, value, "arch");
    else if (key == "match") {
      if (!value.IsSequence())
        fail(file, value.Mark(), "match is a list of device-name substrings");
      for (const auto& m : value) d.match.push_back(scalar(file, m, "a match entry"));
    } else if (key == "quantities") {
      if (!value.IsMap())
        fail(file, value.Mark(), "quantities is a map of name: {value, unit, source}");
      for (const auto& q : value) {
        const std::string name = q.first.Scalar();
        const Quantity* quantity = find_quantity(name);
        if (quantity == nullptr) {
          std::vector<std::string> known;
          for (const Quantity& k : quantities()) known.push_back(k.name);
          const std::string near = support::nearest_name(name, known);
          fail(file, q.first.Mark(),
               "unknown quantity '" + name + "'" +
                   (near.empty() ? "" : "; did you mean '" + near + "'?"));
        }
        if (!seen.insert(name).second) fail(file, q.first.Mark(), "'" + name + "' given twice");
        const YAML::Node& body = q.second;
        if (!body.IsMap() || !body["value"] || !body["unit"] || !body["source"])
          fail(file, body.Mark(),
               "'" + name + "' needs value, unit and source, e.g. {value: 1, unit: " +
                   quantity->unit + ", source: \"datasheet ...\"}");
        const std::string unit = scalar(file, body["unit"], "unit");
        if (unit != quantity->unit)
          fail(file, body["unit"].Mark(),
               "'" + name + "' is in " + quantity->unit + ", not " + unit);
        const std::string text = scalar(file, body["value"], "value");
        try {
          std::size_t used = 0;
          const double v = std::stod(text, &used);
          if (used != text.size()) throw std::invalid_argument(text);
          d.*(quantity->member) = v;
        } catch (const std::exception&) {
          fail(file, body["value"].Mark(), "'" + name + "' needs a number, not '" + text + "'");
        }
        const std::string source = scalar(file, body["source"], "source");
        if (source.empty()) fail(file, body["source"].Mark(), "'" + name + "' needs a source");
        d.sources[name] = source;
      }
    } else {
      const std::string near =
          support::nearest_name(key, {"name", "kind", "arch", "match", "quantities"});
      fail(file, entry.first.Mark(),
           "unknown key '" + key + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
  }
  if (d.name.empty()) fail(file, root.Mark(), "the description has no name");
  std::vector<std::string> missing;
  for (const Quantity& q : quantities())
    if (!q.optional && q.gpu == (d.kind == "gpu") && !seen.count(q.name)) missing.push_back(q.name);
  if (d.kind == "cpu" && !seen.count("dram_bandwidth")) missing.push_back("dram_bandwidth");
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    fail(file, root.Mark(), "a " + d.kind + " description needs " + list);
  }
  return d;
}

Device load_device(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DeviceError(path + ": error: cannot read the device description");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_device(text.str(), path);
}

std::string format_device(const Device& d) {
  std::string out = fmt::format("# Device description for Saguaro's performance model "
                                "(docs/model.md). Units are fixed per quantity.\n");
  out += fmt::format("name: \"{}\"\nkind: {}\n", d.name, d.kind);
  if (!d.arch.empty()) out += fmt::format("arch: {}\n", d.arch);
  if (!d.match.empty()) {
    out += "match: [";
    for (std::size_t i = 0; i < d.match.size(); ++i)
      out += fmt::format("{}\"{}\"", i ? ", " : "", d.match[i]);
    out += "]\n";
  }
  out += "quantities:\n";
  for (const Quantity& q : quantities()) {
    const bool needed = (!q.optional && q.gpu == (d.kind == "gpu")) ||
                        (d.kind == "cpu" && std::string(q.name) == "dram_bandwidth");
    auto source = d.sources.find(q.name);
    if (!needed && source == d.sources.end()) continue;
    std::string src = source == d.sources.end() ? "unknown" : source->second;
    std::string escaped;
    for (char c : src) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    out += fmt::format("  {}: {{value: {:.6g}, unit: {}, source: \"{}\"}}", q.name, d.*(q.member),
                       q.unit, escaped);
    if (*q.symbol) out += fmt::format("  # {}", q.symbol);
    out += "\n";
  }
  return out;
}

std::string find_device_description(const std::string& device_name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SAGUARO_DEVICES"); env != nullptr && *env) dirs.push_back(env);
#ifdef SAGUARO_DEVICES_DIR
  dirs.push_back(SAGUARO_DEVICES_DIR);
#endif
  std::string by_match;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      try {
        const Device d = load_device(f.string());
        if (d.name == device_name) return f.string();
        for (const std::string& m : d.match)
          if (by_match.empty() && !m.empty() && device_name.find(m) != std::string::npos)
            by_match = f.string();
      } catch (const DeviceError&) {
        // A broken file elsewhere in the directory must not hide a good one.
      }
    }
  }
  return by_match;
}

} // namespace saguaro::model
