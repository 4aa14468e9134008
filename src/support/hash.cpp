#include "support/hash.hpp"

#include <cstdio>

namespace saguaro::support {

std::string hex_key(std::uint64_t hash) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

} // namespace saguaro::support
