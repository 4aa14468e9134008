// `saguaro inspect FILE.edl --plan` and `saguaro map --plan`: the kernel plans
// (calc/code_plan.hpp) of a program under given mappings, as text or JSON.
#pragma once

#include "calc/calculation.hpp"
#include "calc/code_plan.hpp"
#include "calc/mapping.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace saguaro::cli {

// One kernel's plan as JSON: iteration space, buffers, every load's buffer, shared memory,
// the evaluation's size and the arguments.
nlohmann::json plan_to_json(const calc::Calculation& calc, const calc::CodePlan& plan);

// Every calculation's plans under `mappings` (one per calculation). Throws calc::MappingError.
std::string plans_to_text(const calc::Program& program, const std::vector<calc::Mapping>& mappings);
nlohmann::json plans_to_json(const calc::Program& program,
                             const std::vector<calc::Mapping>& mappings);

} // namespace saguaro::cli
