// A stable hash for cache keys (the code caches, the mapping cache).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace saguaro::support {

// FNV-1a, 64 bits: a hash that is the same in every build and on every machine.
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// A hash as a cache key: 16 lowercase hexadecimal digits.
std::string hex_key(std::uint64_t hash);

} // namespace saguaro::support
