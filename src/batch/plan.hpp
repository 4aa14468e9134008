// `saguaro submit`, decided once: the submission plan is one value made by a pure function
// from the request (the command line), the machine description and what the run's .par file
// says; it holds every path, every segment's parameters and batch script, the files to write
// and copy, and the sbatch commands. `--dry-run` prints it; the driver (submit.hpp) carries it
// out and decides nothing.
#pragma once

#include "batch/machine.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace saguaro::batch {

// The command line of `saguaro submit`.
struct SubmitRequest {
  int nodes = 1;
  std::optional<int> gpus_per_node;       // default: every GPU of a node
  std::optional<long> walltime;           // seconds; default: the machine's max_walltime
  int chain = 1;                          // segments, each a job after the previous one
  std::optional<long> segment_iterations; // segment k stops by iteration (k+1)*N at the latest
  std::string name;                       // default: the .par file's name without .par
  std::string basedir;                    // expanded; default: the machine's simulations
};

// What the run's files say, read by the caller (the CLI loads the .par file with the host).
struct RunSettings {
  std::string par_file;     // absolute
  std::string edl_file;     // absolute; Saguaro::equations
  std::string device_file;  // absolute; Saguaro::device_description when a file, else ""
  std::string mapping_file; // absolute; Saguaro::mapping_file when the mapper reads one, else ""
  std::string terminate = "iteration"; // Cactus::terminate
  long itlast = 10;                    // Cactus::cctk_itlast
  double final_time = -1;              // Cactus::cctk_final_time
  double max_runtime = 0;              // Cactus::max_runtime (minutes)
  std::string executable;              // absolute: the saguaro to copy into the simulation
  std::string version;                 // its --version line
  std::string created;                 // the time of the submission (ISO 8601)
  std::string command_line;            // as typed, for the record
};

// How a segment waits for the one before: afterany (it starts whatever the previous job's
// end: a job the scheduler killed at its walltime still leaves its periodic checkpoints, and
// IO::recover = "auto" stops a segment that finds none). docs/batch.md says why not afterok.
inline constexpr const char* kDependency = "afterany";

struct Segment {
  int index = 0;
  std::string dir;                    // absolute: SIM/output-NNNN
  std::string job_name;               // NAME-NNNN
  std::string script;                 // the batch script's text
  std::string script_path;            // SIM/output-NNNN/job.sh
  std::string log_path;               // SIM/output-NNNN/job.out (Slurm's standard output and error)
  std::string out_dir;                // IO::out_dir of the segment
  std::vector<std::string> overrides; // `--set` texts (param::parse_override syntax)
  long stop_iteration = -1;           // with segment_iterations: where it stops at the latest
};

struct FileToWrite {
  std::string path; // absolute, under the simulation directory
  std::string content;
  bool executable = false;
};

struct FileToCopy {
  std::string from, to; // absolute; `to` under the simulation directory
  bool executable = false;
};

struct SubmissionPlan {
  std::string name;        // the simulation's name
  std::string basedir;     // where it goes
  std::string dir;         // absolute: basedir/name
  std::string machine;     // the machine's name
  std::string record_path; // dir/simulation.json
  std::string checkpoint_dir;
  std::string executable; // dir/exe/saguaro: the copy every segment runs
  // The run's inputs as recorded in every segment's directory (the .par file, its EDL, the
  // device description and mapping file it names, "" when none): what the segment's .par
  // file sees, by names relative to it.
  std::string par_name, edl_name, device_name, mapping_name;
  int nodes = 1, ranks_per_node = 1, ranks = 1, gpus_per_node = 0, cpus_per_task = 1;
  long walltime = 0;                    // seconds
  double max_runtime = 0;               // minutes: walltime less the machine's margin
  std::vector<std::string> directories; // absolute, parents first
  std::vector<FileToWrite> files;
  std::vector<FileToCopy> copies;
  std::vector<Segment> segments;
  nlohmann::json record; // simulation.json (job ids are added as they are submitted)
};

// The plan. Throws BatchError for a request the machine cannot take (too many nodes or GPUs,
// a walltime beyond the machine's or within its margin, a bad name or directory, a
// termination condition a chain cannot honour).
SubmissionPlan plan_submission(const SubmitRequest& request, const Machine& machine,
                               const RunSettings& run);

// The `--set` parameters of segment `index` (docs/batch.md, "Chains and recovery"): its
// inputs, output and checkpoint directories, recovery, and when it stops (the run's own
// condition, `stop_iteration` when not -1, or the walltime less the margin).
std::vector<std::string> segment_overrides(const RunSettings& run, const SubmissionPlan& plan,
                                           int index, const std::string& out_dir,
                                           long stop_iteration);

// The batch script of a segment (its #SBATCH lines, environment and launch).
std::string batch_script(const SubmissionPlan& plan, const Machine& machine,
                         const Segment& segment);

// sbatch's command for a segment: `sbatch --parsable [--dependency=afterany:PREVIOUS] SCRIPT`.
// `previous` is the job id of the segment before ("" for the first).
std::vector<std::string> sbatch_command(const Segment& segment, const std::string& previous);

// What --dry-run prints: the simulation's layout, every segment's script and the sbatch
// commands that would submit them.
std::string describe(const SubmissionPlan& plan);

// `text` quoted for a POSIX shell: as it is when it needs no quotes, else in single quotes.
std::string shell_quote(const std::string& text);

} // namespace saguaro::batch
