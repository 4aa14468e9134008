// A submitted simulation as `saguaro jobs` and `saguaro cancel` find it: its record
// (SIM/simulation.json, written by `saguaro submit`), the state of its jobs and how far each
// segment got.
#pragma once

#include "batch/slurm.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace saguaro::batch {

struct RecordedSegment {
  int index = 0;
  std::string dir; // absolute
  std::string job_name;
  std::string job_id; // "" when it was not submitted
};

struct SimulationRecord {
  std::string dir; // absolute
  std::string name, machine, walltime;
  std::vector<RecordedSegment> segments;
  nlohmann::json json;
};

// SIM as the user names it: a directory that holds simulation.json (a path with a '/', or one
// that exists), else a name under `basedir`. Throws BatchError when there is none.
std::string locate_simulation(const std::string& sim, const std::string& basedir);
// Every simulation directory under `basedir`, sorted.
std::vector<std::string> simulations_in(const std::string& basedir);
// Throws BatchError when the record is missing or not one `saguaro submit` wrote.
SimulationRecord read_record(const std::string& dir);

struct SegmentStatus {
  RecordedSegment segment;
  JobState job;
  long last_iteration = -1; // -1: none reached yet
};

// The newest iteration a segment reached, from its job's log (its progress lines, its
// checkpoints, "finished at iteration N") and its norms files; -1 when there is none.
long last_iteration(const std::string& segment_dir);

// `saguaro jobs`'s table for one simulation (pure).
std::string format_status(const SimulationRecord& record,
                          const std::vector<SegmentStatus>& segments);

} // namespace saguaro::batch
