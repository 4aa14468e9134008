#include "io/predictions.hpp"

#include "model/model.hpp"
#include "support/files.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <variant>

namespace saguaro::io {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json; // keys in column order, for people reading the file

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxSamples = 200;

// Every column once: the TSV, the JSON (both ways) and equality all walk this table, so a new
// field is one line here.
struct Field {
  const char* name;
  std::variant<std::string PredictionRecord::*, int PredictionRecord::*, long PredictionRecord::*,
               double PredictionRecord::*>
      member;
};

const std::vector<Field>& fields() {
  using R = PredictionRecord;
  static const std::vector<Field> table = {
      {"calculation", &R::calculation},
      {"kernel", &R::kernel},
      {"name", &R::name},
      {"mapping", &R::mapping},
      {"backend", &R::backend},
      {"device", &R::device},
      {"ranks", &R::ranks},
      {"iteration", &R::iteration},
      {"points", &R::points},
      {"launches", &R::launches},
      {"predicted_hu", &R::predicted_hu},
      {"predicted_chemora", &R::predicted_chemora},
      {"measured_median", &R::measured_median},
      {"measured_min", &R::measured_min},
      {"measured_max", &R::measured_max},
      {"error_hu", &R::error_hu},
      {"error_chemora", &R::error_chemora},
      {"share", &R::share},
      {"launch", &R::launch},
      {"l2", &R::l2},
      {"dram", &R::dram},
      {"data", &R::data},
      {"latency", &R::latency},
      {"issue", &R::issue},
      {"limiter", &R::limiter},
      {"registers", &R::registers},
      {"spill_bytes", &R::spill_bytes},
      {"occupancy", &R::occupancy},
      {"sample_every", &R::sample_every},
      {"note", &R::note},
  };
  return table;
}

bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// TSV cells hold no tabs or newlines.
std::string tsv_cell(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

void clear_prediction(PredictionRecord& r) {
  r.predicted_hu = r.predicted_chemora = kNaN;
  r.launch = r.l2 = r.dram = r.data = r.latency = r.issue = kNaN;
  r.occupancy = kNaN;
  r.limiter.clear();
}

// The measured side: median, extremes and every sample_every-th sample (at most kMaxSamples).
void fill_measured(PredictionRecord& r, const std::vector<double>& seconds) {
  if (seconds.empty()) {
    r.measured_median = r.measured_min = r.measured_max = kNaN;
    return;
  }
  r.measured_median = runtime::median(seconds);
  const auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
  r.measured_min = *lo;
  r.measured_max = *hi;
  r.sample_every = int((seconds.size() + kMaxSamples - 1) / kMaxSamples);
  for (std::size_t i = 0; i < seconds.size(); i += std::size_t(r.sample_every))
    r.samples.push_back(seconds[i]);
}

// The GPU model's prediction of one kernel, with its parts in seconds per launch.
void predict_gpu(PredictionRecord& r, const model::KernelProfile& profile,
                 const runtime::KernelTiming& t, const model::Device& device) {
  model::CompiledResources compiled;
  if (t.registers >= 0) {
    compiled.registers = t.registers;
    compiled.spill_bytes = t.spill_stores + t.spill_loads;
    compiled.shared_bytes = double(t.shared_bytes);
  }
  const model::Prediction p = model::predict(profile, device, compiled);
  if (!p.valid) {
    r.note = "the model calls this mapping invalid: " + p.invalid_reason;
    return;
  }
  r.predicted_hu = p.seconds(r.points, model::Combination::Hu);
  r.predicted_chemora = p.seconds(r.points, model::Combination::Chemora);
  const model::Prediction::LaunchParts parts = p.parts(r.points);
  r.launch = parts.launch;
  r.l2 = parts.l2;
  r.dram = parts.dram;
  r.data = parts.data;
  r.latency = parts.latency;
  r.issue = parts.issue;
  r.limiter = p.limiter;
  r.occupancy = p.occupancy;
  if (r.registers < 0) r.registers = p.registers_per_thread;
}

void predict_host(PredictionRecord& r, const calc::Calculation& calc, const model::Device& device) {
  const model::CpuPrediction p = model::predict_cpu(calc, device);
  r.predicted_hu = r.predicted_chemora = p.seconds(r.points);
  r.dram = r.data = p.T_memory * r.points;
  r.issue = p.T_compute * r.points;
  r.limiter = p.limiter;
}

} // namespace

bool PredictionRecord::operator==(const PredictionRecord& o) const {
  for (const Field& f : fields()) {
    const bool equal = std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), double PredictionRecord::*>)
            return same(this->*member, o.*member);
          else
            return this->*member == o.*member;
        },
        f.member);
    if (!equal) return false;
  }
  if (samples.size() != o.samples.size()) return false;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (!same(samples[i], o.samples[i])) return false;
  return true;
}

const std::vector<std::string>& prediction_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Field& f : fields()) out.push_back(f.name);
    return out;
  }();
  return names;
}

std::vector<PredictionRecord>
prediction_records(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                   const std::vector<runtime::KernelTiming>& timings,
                   const PredictionSource& source,
                   const std::vector<std::vector<calc::Mapping>>& alternatives) {
  std::vector<PredictionRecord> records;
  // Profiles per calculation, made once however many kernels it has.
  std::map<std::pair<int, std::size_t>, std::vector<model::KernelProfile>> profiles;
  std::map<std::pair<int, std::size_t>, std::string> profile_errors;
  double total = 0;
  std::vector<double> sums;
  for (const runtime::KernelTiming& t : timings) {
    if (t.calculation < 0 || std::size_t(t.calculation) >= program.calculations.size())
      throw std::logic_error("prediction log: timing of kernel " + t.name + " names calculation " +
                             std::to_string(t.calculation));
    if (t.launches == 0) continue; // compiled, never run (analysis without output, say)
    const calc::Calculation& calc = program.calculations[std::size_t(t.calculation)];
    PredictionRecord r;
    r.calculation = calc.name;
    r.kernel = t.kernel;
    // The interior and boundary-shell launches of a calculation split around the ghost
    // exchange are rows of their own: the model prices each over its own points.
    r.name = t.region.empty() ? t.name : t.name + " [" + t.region + "]";
    r.mapping = t.mapping;
    r.backend = source.backend;
    r.device = source.device != nullptr ? source.device->name : "";
    r.ranks = source.ranks;
    r.iteration = source.iteration;
    r.points = t.points;
    r.launches = t.launches;
    r.registers = t.registers;
    r.spill_bytes = t.spill_stores + t.spill_loads;

    fill_measured(r, t.seconds);
    const double sum = std::accumulate(t.seconds.begin(), t.seconds.end(), 0.0);
    sums.push_back(sum);
    total += sum;

    // Predicted.
    clear_prediction(r);
    r.note = source.note;
    const model::Device* device = source.device;
    const bool host = source.host;
    if (device != nullptr && (device->kind == "cpu") != host) {
      r.note = fmt::format("the device description '{}' is for a {}, the backend is {}",
                           device->name, device->kind == "cpu" ? "CPU" : "GPU", source.backend);
    } else if (device != nullptr && host) {
      predict_host(r, calc, *device);
    } else if (device != nullptr) {
      const int c = t.calculation;
      const std::size_t i = std::size_t(c);
      // Which mapping the timed kernel belongs to: the one compiled, else a candidate.
      std::vector<calc::Mapping> choices{i < mappings.size() && !mappings[i].kernels.empty()
                                             ? mappings[i]
                                             : calc::default_mapping(calc)};
      if (i < alternatives.size())
        choices.insert(choices.end(), alternatives[i].begin(), alternatives[i].end());
      std::size_t pick = 0;
      for (std::size_t m = 0; m < choices.size(); ++m)
        if (std::size_t(t.kernel) < choices[m].kernels.size() &&
            calc::to_string(calc, choices[m].kernels[std::size_t(t.kernel)]) == t.mapping) {
          pick = m;
          break;
        }
      const std::pair<int, std::size_t> key{c, pick};
      if (!profiles.count(key) && !profile_errors.count(key)) {
        try {
          profiles[key] = model::profile_mapping(calc, choices[pick]);
        } catch (const std::exception& e) {
          profile_errors[key] = e.what();
        }
      }
      if (auto error = profile_errors.find(key); error != profile_errors.end())
        r.note = "the model cannot read the mapping: " + error->second;
      else if (t.kernel < 0)
        r.note = "a time-tiled step (priced by the time-tiling model)";
      else if (std::size_t(t.kernel) >= profiles[key].size())
        r.note = fmt::format("the mapping has no kernel {}", t.kernel);
      else
        predict_gpu(r, profiles[key][std::size_t(t.kernel)], t, *device);
      if (pick > 0 && r.note.empty()) r.note = "a Saguaro::mapper_verify candidate";
    }
    r.error_hu = (r.predicted_hu - r.measured_median) / r.measured_median;
    r.error_chemora = (r.predicted_chemora - r.measured_median) / r.measured_median;
    records.push_back(std::move(r));
  }
  for (std::size_t i = 0; i < records.size(); ++i)
    records[i].share = total > 0 ? sums[i] / total : kNaN;
  return records;
}

void price_time_tile(PredictionRecord& r, const model::TimeTilePrediction& p) {
  clear_prediction(r);
  r.note = "a time-tiled step (model/time_tile.hpp)";
  if (!p.valid) return;
  r.predicted_hu = r.predicted_chemora = p.seconds;
  r.launch = p.launch;
  r.dram = p.dram;
  r.l2 = p.l2;
  r.data = std::max(p.dram, p.l2);
  (p.limiter == "latency" ? r.latency : r.issue) = p.compute;
  r.limiter = p.limiter;
  r.error_hu = r.error_chemora = (p.seconds - r.measured_median) / r.measured_median;
}

PredictionRecord exchange_record(const std::vector<double>& measured, double predicted,
                                 const std::string& transport, const PredictionSource& source) {
  PredictionRecord r;
  r.calculation = "ghost exchange";
  r.name = "exchange";
  r.mapping = transport;
  r.backend = source.backend;
  r.device = source.device != nullptr ? source.device->name : "";
  r.ranks = source.ranks;
  r.iteration = source.iteration;
  r.launches = long(measured.size());
  r.points = kNaN;
  fill_measured(r, measured);
  clear_prediction(r);
  r.predicted_hu = r.predicted_chemora = predicted;
  if (std::isnan(predicted)) {
    r.note = "no interconnect description (saguaro calibrate --interconnect measures one)";
  } else {
    r.limiter = "interconnect";
  }
  r.error_hu = r.error_chemora = (predicted - r.measured_median) / r.measured_median;
  r.share = kNaN;
  return r;
}

void write_predictions(const std::string& dir, const std::vector<PredictionRecord>& records) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("prediction log: cannot make the directory " + dir);

  std::string tsv;
  if (!records.empty()) {
    const PredictionRecord& r = records.front();
    tsv += fmt::format("# prediction log: {} backend, device {}, {} rank{} (rank 0's kernels), "
                       "iteration {}; times in seconds per launch, nan where there is none\n",
                       r.backend, r.device.empty() ? "(no description)" : r.device, r.ranks,
                       r.ranks == 1 ? "" : "s", r.iteration);
  }
  tsv += "# ";
  for (const Field& f : fields()) tsv += std::string(&f == &fields().front() ? "" : "\t") + f.name;
  tsv += "\n";
  std::string jsonl;
  for (const PredictionRecord& r : records) {
    Json j;
    bool first = true;
    for (const Field& f : fields()) {
      std::visit(
          [&](auto member) {
            const auto& value = r.*member;
            j[f.name] = value; // NaN becomes null
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
              tsv += (first ? "" : "\t") + tsv_cell(value);
            else if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>)
              tsv += fmt::format("{}{:.6g}", first ? "" : "\t", value);
            else
              tsv += fmt::format("{}{}", first ? "" : "\t", value);
          },
          f.member);
      first = false;
    }
    j["samples"] = r.samples;
    tsv += "\n";
    jsonl += j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  }
  const fs::path base(dir);
  support::write_atomically(base / "predictions.tsv", tsv, "prediction log");
  support::write_atomically(base / "predictions.jsonl", jsonl, "prediction log");
}

std::vector<PredictionRecord> read_predictions(const std::string& path) {
  fs::path file(path);
  if (fs::is_directory(file)) file /= "predictions.jsonl";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot read the prediction log");
  std::vector<PredictionRecord> records;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}: ", file.string(), number);
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::parse_error& e) {
      throw std::runtime_error(where + "not JSON: " + e.what());
    }
    if (!j.is_object()) throw std::runtime_error(where + "not a JSON object");
    PredictionRecord r;
    for (const Field& f : fields()) {
      if (!j.contains(f.name))
        throw std::runtime_error(where + "no '" + f.name + "': not a prediction log record");
      const Json& v = j[f.name];
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype(r.*member)>;
            if constexpr (std::is_same_v<T, std::string>) {
              if (!v.is_string())
                throw std::runtime_error(where + "'" + f.name + "' is not a string");
              r.*member = v.get<std::string>();
            } else if constexpr (std::is_same_v<T, double>) {
              if (!v.is_null() && !v.is_number())
                throw std::runtime_error(where + "'" + f.name + "' is not a number");
              r.*member = v.is_null() ? kNaN : v.get<double>();
            } else {
              if (!v.is_number_integer())
                throw std::runtime_error(where + "'" + f.name + "' is not an integer");
              r.*member = v.get<T>();
            }
          },
          f.member);
    }
    if (j.contains("samples")) {
      if (!j["samples"].is_array()) throw std::runtime_error(where + "'samples' is not an array");
      for (const Json& s : j["samples"]) {
        if (!s.is_null() && !s.is_number())
          throw std::runtime_error(where + "'samples' holds something other than numbers");
        r.samples.push_back(s.is_null() ? kNaN : s.get<double>());
      }
    }
    records.push_back(std::move(r));
  }
  return records;
}

} // namespace saguaro::io
