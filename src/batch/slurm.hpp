// Slurm's client commands: the argument vectors of sbatch, squeue, sacct and scancel, and
// readers of what they print (pure, tested without a Slurm); query_jobs runs them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::batch {

struct JobState {
  std::string id;
  std::string state;   // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, ...; UNKNOWN
  std::string elapsed; // as Slurm prints it; "" when not known
  std::string reason;  // why it waits (squeue), or why the state is unknown
};

// The job id `sbatch --parsable` prints ("123" or "123;cluster"); nullopt when there is none.
std::optional<std::string> parse_job_id(const std::string& sbatch_output);

std::vector<std::string> squeue_command(const std::vector<std::string>& ids);
std::vector<std::string> sacct_command(const std::vector<std::string>& ids);
std::vector<std::string> scancel_command(const std::vector<std::string>& ids);

// squeue's lines as squeue_command asks for them: id|state|elapsed|reason.
std::vector<JobState> parse_squeue(const std::string& output);
// sacct's lines (-P, -X): id|state|elapsed. "CANCELLED by 0" reads as CANCELLED.
std::vector<JobState> parse_sacct(const std::string& output);

// Whether a job in this state will not run (again): COMPLETED, FAILED, CANCELLED, TIMEOUT ...
bool finished_state(const std::string& state);

// The state of every job: from squeue (jobs pending, running or recently ended), then sacct
// for the others (it needs Slurm's accounting); a job neither knows is UNKNOWN with the reason.
std::map<std::string, JobState> query_jobs(const std::vector<std::string>& ids);

} // namespace saguaro::batch
