// Running a program (the host compiler), from support/process.hpp, under the runtime's names.
#pragma once

#include "runtime/disk_cache.hpp"
#include "support/process.hpp"

namespace saguaro::runtime {

using support::CommandResult;
using support::run_command;

} // namespace saguaro::runtime
