// Machine descriptions (configs/machines/<name>.yaml): what `saguaro submit` needs to know of a
// cluster to write and submit its batch jobs: the scheduler and where jobs go (partition,
// account), the nodes (GPUs and cores), how MPI ranks are launched and bound, what the job's
// environment needs (modules, variables, shell lines), the longest walltime and where
// simulations live. The format is in docs/batch.md.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saguaro::batch {

// A usage error of the batch commands that no input file's place explains (an option out of
// the machine's range, a simulation that exists, sbatch refusing): the CLI prints
// "saguaro COMMAND: error: WHAT" and exits with status 2.
class BatchError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Launcher {
  std::string command = "srun";     // "srun", or "mpirun" (Open MPI's)
  std::vector<std::string> options; // after the ones Saguaro writes, before the executable
};

struct Machine {
  std::string name;
  std::string description;
  std::string file;                // where it was read from
  std::string scheduler = "slurm"; // the one scheduler there is
  std::string partition;           // "": the cluster's default
  std::string account;             // "": none given
  int gpus_per_node = 0;           // 0: a CPU machine
  int cores_per_node = 1;          // CPU cores of a node
  int ranks_per_node = 1;          // a CPU machine's MPI ranks per node (a GPU's: one per GPU)
  int max_nodes = 0;               // 0: not known, not checked
  long max_walltime = 0;           // seconds
  long walltime_margin = 300;      // seconds of a job kept for the final checkpoint
  std::string gpu_request = "gpus-per-node"; // or "gres" (#SBATCH --gres=gpu:G)
  std::string cpu_bind = "cores";            // "cores" or "none"
  Launcher launcher;
  std::vector<std::string> modules;                             // `module load` each
  std::vector<std::pair<std::string, std::string>> environment; // exported, in order
  std::vector<std::string> prologue;                            // shell lines before the launch
  std::vector<std::string> sbatch_options;                      // more #SBATCH lines
  std::string simulations; // as written; expand_path() resolves it

  bool gpu() const { return gpus_per_node > 0; }
};

// Reads a description from YAML text; every mistake is a support::InputError with its
// file:line:col (an unknown key with the nearest known one, a missing required key, a value
// of the wrong kind or out of range).
Machine parse_machine(const std::string& yaml_text, const std::string& file_name);
Machine load_machine(const std::string& path); // InputError when it cannot be read either

// --machine's argument: a path (it names a .yaml file or holds a '/') as it is, else
// NAME.yaml in $SAGUARO_MACHINES, then in the source tree's configs/machines/. Throws
// BatchError naming the directories searched and the machines they hold.
std::string find_machine(const std::string& name_or_path);
// The machines found there, sorted by name (for messages and `saguaro submit --help`).
std::vector<std::string> known_machines();

// "HH:MM:SS" (hours may exceed 24), "D-HH:MM:SS", "MM:SS" or "MM" in seconds; nullopt when
// it is none of these.
std::optional<long> parse_walltime(std::string_view text);
// Seconds as Slurm reads them: "HH:MM:SS", or "D-HH:MM:SS" from one day on.
std::string format_walltime(long seconds);

// A path as a machine description writes it: a leading "~/" is $HOME, "$NAME" and "${NAME}"
// are environment variables (looked up through `env`, which returns nullopt for an unset
// one). Throws BatchError naming an unset variable.
std::string expand_path(std::string_view text,
                        const std::function<std::optional<std::string>(const std::string&)>& env);

} // namespace saguaro::batch
