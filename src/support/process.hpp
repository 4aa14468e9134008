// Running another program: argument vectors only (posix_spawnp, no shell), standard input from
// /dev/null, its output captured. The CPU backend runs the compiler through it, the batch
// stage sbatch, squeue, sacct and scancel.
#pragma once

#include <string>
#include <vector>

namespace saguaro::support {

struct CommandResult {
  int status = -1;    // the exit status; -1 when the program was killed by a signal
  std::string output; // standard output and standard error together
};

// Runs argv[0] (looked up in PATH when it has no '/') with the arguments argv[1...], no
// shell, standard input from /dev/null. Throws std::runtime_error when it cannot be started.
CommandResult run_command(const std::vector<std::string>& argv);

struct SeparateResult {
  int status = -1; // as CommandResult's
  std::string out, err;
};

// The same with standard output and standard error kept apart (a job id on one, warnings on
// the other).
SeparateResult run_command_separately(const std::vector<std::string>& argv);

// The cores this process may run on (its CPU affinity: an MPI launcher that binds a rank to a
// core leaves one), at least 1. Parallel compiles are bounded by it.
int usable_cores();

// Whether `program` can be run: a path to an executable file, or a name found in PATH.
bool program_exists(const std::string& program);

} // namespace saguaro::support
