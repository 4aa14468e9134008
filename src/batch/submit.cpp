#include "batch/submit.hpp"

#include "batch/slurm.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>

namespace saguaro::batch {
namespace fs = std::filesystem;

namespace {

// The simulation's directory, made whole under a temporary name beside it.
void build(const SubmissionPlan& plan, const fs::path& temporary) {
  auto inside = [&](const std::string& path) {
    return temporary / fs::path(path).lexically_relative(plan.dir);
  };
  for (const std::string& d : plan.directories) fs::create_directories(inside(d));
  for (const FileToCopy& c : plan.copies) {
    fs::copy_file(c.from, inside(c.to));
    if (c.executable)
      fs::permissions(inside(c.to), fs::perms::owner_all | fs::perms::group_read |
                                        fs::perms::group_exec | fs::perms::others_read |
                                        fs::perms::others_exec);
  }
  for (const FileToWrite& f : plan.files) {
    std::ofstream out(inside(f.path), std::ios::binary);
    out << f.content;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + inside(f.path).string());
    if (f.executable)
      fs::permissions(inside(f.path),
                      fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add);
  }
}

// Renames `from` to `to` unless `to` exists (an empty directory included).
void rename_into_place(const fs::path& from, const fs::path& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return;
  const int error = errno;
  if (error == EEXIST)
    throw BatchError(fmt::format("simulation directory {} appeared meanwhile", to.string()));
  throw BatchError(
      fmt::format("cannot rename {} to {}: {}", from.string(), to.string(), std::strerror(error)));
}

void cancel_quietly(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  try {
    support::run_command_separately(scancel_command(ids));
  } catch (const std::exception&) {
  }
}

std::string first_lines(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.empty() ? std::string("(it printed nothing)") : t;
}

} // namespace

std::vector<std::string> carry_out(const SubmissionPlan& plan, std::ostream& log) {
  if (!support::program_exists("sbatch"))
    throw BatchError("sbatch is not found in PATH: submitting needs Slurm's client commands "
                     "(Debian: slurm-client); --dry-run prints the scripts without them");
  std::error_code ec;
  if (fs::exists(plan.dir, ec))
    throw BatchError(fmt::format("simulation {} exists already ({}): choose another --name, "
                                 "or remove it",
                                 plan.name, plan.dir));
  bool made_basedir = false;
  if (!fs::is_directory(plan.basedir, ec)) {
    if (!fs::create_directories(plan.basedir, ec) || ec)
      throw BatchError(
          fmt::format("cannot make the simulations directory {}: {}", plan.basedir, ec.message()));
    made_basedir = true;
  }
  auto give_up = [&](const std::string& message) {
    if (made_basedir) fs::remove(plan.basedir, ec); // only if still empty
    throw BatchError(message);
  };

  const fs::path temporary = support::unique_temporary(plan.dir);
  try {
    build(plan, temporary);
    rename_into_place(temporary, plan.dir);
  } catch (const std::exception& e) {
    fs::remove_all(temporary, ec);
    give_up(fmt::format("cannot create simulation {}: {}", plan.dir, e.what()));
  }

  std::vector<std::string> ids;
  nlohmann::json record = plan.record;
  std::string failure;
  for (const Segment& s : plan.segments) {
    const std::vector<std::string> argv = sbatch_command(s, ids.empty() ? "" : ids.back());
    support::SeparateResult r;
    try {
      r = support::run_command_separately(argv);
    } catch (const std::exception& e) {
      failure = e.what();
      break;
    }
    const std::optional<std::string> id = r.status == 0 ? parse_job_id(r.out) : std::nullopt;
    if (!id) {
      failure = fmt::format("sbatch refused {} (status {}): {}", s.job_name, r.status,
                            first_lines(r.err + r.out));
      break;
    }
    ids.push_back(*id);
    record["segments"][std::size_t(s.index)]["job_id"] = *id;
    log << fmt::format("submitted {} as job {}{}\n", s.job_name, *id,
                       s.index == 0 ? std::string()
                                    : fmt::format(" ({}:{})", kDependency, ids[ids.size() - 2]));
  }
  if (failure.empty()) {
    try {
      support::write_atomically(plan.record_path, record.dump(2) + "\n", "saguaro submit");
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) {
    cancel_quietly(ids);
    fs::remove_all(plan.dir, ec);
    give_up(fmt::format("{}; {}, and {} was removed", failure,
                        ids.empty() ? std::string("nothing was submitted")
                                    : fmt::format("the {} job{} submitted before were cancelled",
                                                  ids.size(), ids.size() == 1 ? "" : "s"),
                        plan.dir));
  }
  return ids;
}

std::vector<std::string> cancel(const SimulationRecord& record) {
  std::vector<std::string> ids;
  for (const RecordedSegment& s : record.segments)
    if (!s.job_id.empty()) ids.push_back(s.job_id);
  if (ids.empty()) return {};
  if (!support::program_exists("scancel"))
    throw BatchError("scancel is not found in PATH: cancelling needs Slurm's client commands");
  const std::map<std::string, JobState> states = query_jobs(ids);
  std::vector<std::string> live;
  for (const std::string& id : ids)
    if (!finished_state(states.at(id).state)) live.push_back(id);
  if (live.empty()) return {};
  const support::SeparateResult r = support::run_command_separately(scancel_command(live));
  if (r.status != 0)
    throw BatchError(
        fmt::format("scancel refused (status {}): {}", r.status, first_lines(r.err + r.out)));
  return live;
}

} // namespace saguaro::batch
