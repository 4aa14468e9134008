// The EDL parser: tokens -> Thorn syntax tree. Syntax errors throw one EdlError with every
// error of the file (each with its location, the quoted line and what was expected).
#pragma once

#include "edl/ast.hpp"

#include <string>
#include <vector>

namespace saguaro::edl {

// Features accepted by `use` / `disable` (Kranc's list).
const std::vector<std::string>& known_features();
// Functions callable in expressions, with their argument counts.
const std::vector<std::pair<std::string, int>>& known_functions();

Thorn parse_thorn(const std::shared_ptr<const SourceFile>& file);
Thorn parse_file(const std::string& path);
Thorn parse_string(const std::string& text, const std::string& name = "<input>");

} // namespace saguaro::edl
