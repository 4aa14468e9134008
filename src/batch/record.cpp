#include "batch/record.hpp"

#include "batch/machine.hpp"
#include "support/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace saguaro::batch {
namespace fs = std::filesystem;

namespace {

// The number that starts `text` (after `prefix`), or -1.
long number_after(const std::string& line, const std::string& prefix) {
  const std::size_t at = line.find(prefix);
  if (at == std::string::npos) return -1;
  std::size_t i = at + prefix.size(), j = i;
  while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
  if (j == i || j - i > 12) return -1;
  return std::stol(line.substr(i, j - i));
}

// The job's log: progress lines ("it N/M  t = ..."), checkpoints and the end.
long from_log(const fs::path& log) {
  std::ifstream in(log);
  long best = -1;
  for (std::string line; std::getline(in, line);) {
    long n = -1;
    if (line.rfind("it ", 0) == 0) n = number_after(line, "it ");
    for (const char* p :
         {"checkpoint at iteration ", "finished at iteration ", "recovered from iteration "})
      n = std::max(n, number_after(line, p));
    best = std::max(best, n);
  }
  return best;
}

// The last data line of a norms file: its first column is the iteration.
long from_norms(const fs::path& file) {
  std::ifstream in(file);
  long last = -1;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') {
      const long n = number_after(line, "");
      if (n >= 0) last = n;
    }
  return last;
}

} // namespace

std::string locate_simulation(const std::string& sim, const std::string& basedir) {
  std::error_code ec;
  if (sim.find('/') != std::string::npos ||
      fs::is_regular_file(fs::path(sim) / "simulation.json", ec)) {
    if (!fs::is_regular_file(fs::path(sim) / "simulation.json", ec))
      throw BatchError(fmt::format("'{}' is not a simulation directory (no simulation.json)", sim));
    return fs::absolute(sim).lexically_normal().string();
  }
  if (basedir.empty())
    throw BatchError(fmt::format("where is simulation '{}'? give --machine NAME (or set "
                                 "$SAGUARO_MACHINE), --basedir DIR, or its directory",
                                 sim));
  const fs::path dir = fs::path(basedir) / sim;
  if (!fs::is_regular_file(dir / "simulation.json", ec)) {
    std::vector<std::string> known;
    for (const std::string& d : simulations_in(basedir))
      known.push_back(fs::path(d).filename().string());
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw BatchError(fmt::format("no simulation '{}' in {} (there: {})", sim, basedir,
                                 list.empty() ? std::string("none") : list));
  }
  return dir.lexically_normal().string();
}

std::vector<std::string> simulations_in(const std::string& basedir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(basedir, ec))
    if (e.is_directory(ec) && fs::is_regular_file(e.path() / "simulation.json", ec))
      out.push_back(e.path().lexically_normal().string());
  std::sort(out.begin(), out.end());
  return out;
}

SimulationRecord read_record(const std::string& dir) {
  const fs::path file = fs::path(dir) / "simulation.json";
  SimulationRecord r;
  r.dir = dir;
  try {
    r.json = nlohmann::json::parse(support::read_file_bytes(file));
    if (r.json.value("format", "") != "saguaro-simulation-1")
      throw std::runtime_error("not written by saguaro submit");
    r.name = r.json.at("name").get<std::string>();
    r.machine = r.json.at("machine").at("name").get<std::string>();
    r.walltime = r.json.value("walltime", "");
    for (const nlohmann::json& s : r.json.at("segments")) {
      RecordedSegment seg;
      seg.index = s.at("index").get<int>();
      seg.dir = (fs::path(dir) / s.at("dir").get<std::string>()).string();
      seg.job_name = s.value("job_name", "");
      if (s.contains("job_id") && s["job_id"].is_string()) seg.job_id = s["job_id"];
      r.segments.push_back(seg);
    }
  } catch (const std::exception& e) {
    throw BatchError(
        fmt::format("{}: cannot read the simulation's record: {}", file.string(), e.what()));
  }
  return r;
}

long last_iteration(const std::string& segment_dir) {
  long best = from_log(fs::path(segment_dir) / "job.out");
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(segment_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 10 && name.compare(name.size() - 10, 10, ".norms.tsv") == 0)
      best = std::max(best, from_norms(e.path()));
  }
  return best;
}

std::string format_status(const SimulationRecord& record,
                          const std::vector<SegmentStatus>& segments) {
  std::string out =
      fmt::format("simulation {} ({}), machine {}, {} segment{}{}\n", record.name, record.dir,
                  record.machine, segments.size(), segments.size() == 1 ? "" : "s",
                  record.walltime.empty() ? "" : " of " + record.walltime);
  auto row = [&](const std::string& a, const std::string& b, const std::string& c,
                 const std::string& d, const std::string& e, const std::string& f) {
    std::string line = fmt::format("  {:<12} {:>10}  {:<13} {:>10}  {:>14}  {}", a, b, c, d, e, f);
    while (line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  row("segment", "job", "state", "elapsed", "last iteration", "");
  long reached = -1;
  std::string running;
  for (const SegmentStatus& s : segments) {
    const std::string dir = fs::path(s.segment.dir).filename().string();
    const std::string it = s.last_iteration >= 0 ? std::to_string(s.last_iteration) : "-";
    // Why a job waits; an ended job's last reason would mislead.
    row(dir, s.segment.job_id.empty() ? "-" : s.segment.job_id, s.job.state,
        s.job.elapsed.empty() ? "-" : s.job.elapsed, it,
        finished_state(s.job.state) ? "" : s.job.reason);
    reached = std::max(reached, s.last_iteration);
    if (s.job.state == "RUNNING") running = dir;
  }
  std::size_t done = 0;
  for (const SegmentStatus& s : segments) done += finished_state(s.job.state) ? 1 : 0;
  out += fmt::format("  running: {}; last iteration reached: {}; {} of {} job{} ended\n",
                     running.empty() ? std::string("none") : running,
                     reached >= 0 ? std::to_string(reached) : std::string("none"), done,
                     segments.size(), segments.size() == 1 ? "" : "s");
  return out;
}

} // namespace saguaro::batch
