// `saguaro inspect`: what the front end made of an EDL file, as text or JSON.
#pragma once

#include "calc/calculation.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace saguaro::cli {

nlohmann::json program_to_json(const calc::Program& program);
std::string program_to_text(const calc::Program& program);

} // namespace saguaro::cli
