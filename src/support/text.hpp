// Case folding. Cactus names (thorns, parameters, keywords, schedule groups and bins) and
// some of Saguaro's words compare without regard to case; ASCII only, as Cactus does.
#pragma once

#include <string>
#include <string_view>

namespace saguaro::support {

char to_lower(char c);
char to_upper(char c);
std::string lower(std::string_view text);
std::string upper(std::string_view text);
bool iequals(std::string_view a, std::string_view b);

} // namespace saguaro::support
