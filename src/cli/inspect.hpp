// `saguaro inspect`: what the front end made of an EDL file, as text or JSON.
#pragma once

#include "calc/calculation.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace saguaro::cli {

nlohmann::json program_to_json(const calc::Program& program);
// `expressions`: also print every calculation as straight-line code.
std::string program_to_text(const calc::Program& program, bool expressions = false);

} // namespace saguaro::cli
