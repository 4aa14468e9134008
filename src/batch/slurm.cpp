#include "batch/slurm.hpp"

#include "support/process.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace saguaro::batch {

namespace {

std::string joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t bar = line.find('|', start);
    out.push_back(line.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

bool job_id(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return trimmed(line).empty() ? "no output" : trimmed(line);
}

} // namespace

std::optional<std::string> parse_job_id(const std::string& sbatch_output) {
  std::istringstream in(sbatch_output);
  for (std::string line; std::getline(in, line);) {
    line = trimmed(line);
    if (line.empty()) continue;
    const std::string id = line.substr(0, line.find(';'));
    if (job_id(id)) return id;
    return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::string> squeue_command(const std::vector<std::string>& ids) {
  return {"squeue", "--noheader", "--states=all", "--jobs=" + joined(ids), "--format=%i|%T|%M|%r"};
}

std::vector<std::string> sacct_command(const std::vector<std::string>& ids) {
  return {"sacct",
          "--noheader",
          "--parsable2",
          "--allocations",
          "--jobs=" + joined(ids),
          "--format=JobID,State,Elapsed"};
}

std::vector<std::string> scancel_command(const std::vector<std::string>& ids) {
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  return argv;
}

std::vector<JobState> parse_squeue(const std::string& output) {
  std::vector<JobState> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = fields(trimmed(line));
    if (f.size() < 2 || !job_id(f[0])) continue;
    JobState s{f[0], f[1], f.size() > 2 ? f[2] : "", f.size() > 3 ? f[3] : ""};
    if (s.reason == "None") s.reason.clear();
    out.push_back(s);
  }
  return out;
}

std::vector<JobState> parse_sacct(const std::string& output) {
  std::vector<JobState> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = fields(trimmed(line));
    if (f.size() < 2 || !job_id(f[0])) continue;
    JobState s{f[0], f[1].substr(0, f[1].find(' ')), f.size() > 2 ? f[2] : "", ""};
    out.push_back(s);
  }
  return out;
}

bool finished_state(const std::string& state) {
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
                        "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT"})
    if (state == s) return true;
  return false;
}

std::map<std::string, JobState> query_jobs(const std::vector<std::string>& ids) {
  std::map<std::string, JobState> states;
  if (ids.empty()) return states;
  std::string why = "squeue and sacct do not know it";
  try {
    const support::SeparateResult r = support::run_command_separately(squeue_command(ids));
    for (const JobState& s : parse_squeue(r.out)) states[s.id] = s;
    if (r.status != 0 && states.empty()) why = "squeue: " + first_line(r.err);
  } catch (const std::exception& e) {
    why = e.what();
  }
  std::vector<std::string> rest;
  for (const std::string& id : ids)
    if (!states.count(id)) rest.push_back(id);
  if (!rest.empty()) {
    try {
      const support::SeparateResult r = support::run_command_separately(sacct_command(rest));
      for (const JobState& s : parse_sacct(r.out)) states.emplace(s.id, s);
      if (r.status != 0) why += "; sacct: " + first_line(r.err + r.out);
    } catch (const std::exception& e) {
      why += std::string("; ") + e.what();
    }
  }
  for (const std::string& id : ids)
    if (!states.count(id)) states[id] = JobState{id, "UNKNOWN", "", why};
  return states;
}

} // namespace saguaro::batch
