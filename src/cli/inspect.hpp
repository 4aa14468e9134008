// `saguaro inspect`: what the front end made of an EDL file, as text or JSON.
#pragma once

#include "calc/calculation.hpp"
#include "calc/lowering.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace saguaro::cli {

nlohmann::json program_to_json(const calc::Program& program);
// `expressions`: also print every calculation as straight-line code.
std::string program_to_text(const calc::Program& program, bool expressions = false);

// `saguaro inspect --after PASS`: the lowering's state after the passes `state` has run: what
// each pass has added (names, parameters, expanded equations, each calculation's DAG, stages).
nlohmann::json lowering_to_json(const calc::LoweringState& state);
std::string lowering_to_text(const calc::LoweringState& state, bool expressions = false);

} // namespace saguaro::cli
