// The driver of `saguaro submit` and `saguaro cancel`: carries out a submission plan and
// decides nothing on its own.
#pragma once

#include "batch/plan.hpp"
#include "batch/record.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace saguaro::batch {

// Carries out `plan`: checks that sbatch can be run and that the simulation is new, builds
// the directory under a temporary name beside it and renames it into place (no other process
// sees a part of it), submits the segments in order, each after the one before, and records
// their job ids in simulation.json. Whatever fails, nothing is left behind: jobs already
// submitted are cancelled and the directory removed; then it throws BatchError saying what
// failed (sbatch's own message included). Returns the job ids, one per segment.
std::vector<std::string> carry_out(const SubmissionPlan& plan, std::ostream& log);

// Cancels the jobs of a simulation that have not ended (scancel); returns those it cancelled.
// Throws BatchError when scancel cannot be run or refuses.
std::vector<std::string> cancel(const SimulationRecord& record);

} // namespace saguaro::batch
