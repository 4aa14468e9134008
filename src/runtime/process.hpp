// Small system helpers of the CPU backend: running a program (and, through disk_cache.hpp,
// hashing bytes with fnv1a64).
#pragma once

#include "runtime/disk_cache.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::runtime {

struct CommandResult {
  int status = -1;    // the exit status; -1 when the program was killed by a signal
  std::string output; // standard output and standard error together
};

// Runs argv[0] (looked up in PATH when it has no '/') with the arguments argv[1...], no
// shell, standard input from /dev/null. Throws std::runtime_error when it cannot be started.
CommandResult run_command(const std::vector<std::string>& argv);

} // namespace saguaro::runtime
