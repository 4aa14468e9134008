// `saguaro submit`, `saguaro jobs` and `saguaro cancel`: the command line of the batch stage
// (src/batch/, docs/batch.md). The CLI reads the .par file with the host and the machine
// description, asks the batch stage for the plan, and prints it or has it carried out.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace saguaro::cli {

struct BatchCommand {
  std::string par_file;
  std::string machine; // a name or a .yaml path; "" = $SAGUARO_MACHINE
  int nodes = 1;
  std::optional<int> gpus_per_node;
  std::string walltime; // HH:MM:SS; "" = the machine's max_walltime
  int chain = 1;
  std::optional<long> segment_iterations;
  std::string name;
  std::string basedir; // "" = the machine's simulations directory
  bool dry_run = false;
  std::string sim; // jobs and cancel: a simulation's name or directory
  std::string command_line;
};

// The three subcommands on `app`, filling `command`.
struct BatchCommands {
  CLI::App* submit = nullptr;
  CLI::App* jobs = nullptr;
  CLI::App* cancel = nullptr;
};
BatchCommands add_batch_commands(CLI::App& app, BatchCommand& command);

// Each returns the exit status: 0; 2 (the message on `err`) for bad input: a missing or
// invalid machine description, a .par error, an option the machine cannot take, an existing
// simulation, sbatch missing or refusing.
int submit_main(const BatchCommand& command, std::ostream& out, std::ostream& err);
int jobs_main(const BatchCommand& command, std::ostream& out, std::ostream& err);
int cancel_main(const BatchCommand& command, std::ostream& out, std::ostream& err);

} // namespace saguaro::cli
