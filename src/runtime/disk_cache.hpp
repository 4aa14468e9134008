// The on-disk cache of compiled code, shared by the CPU backend (shared objects) and the CUDA
// backend (cubin): where it lives, a stable hash for its keys, and the two tools that let
// concurrent processes (MPI ranks) use one directory safely: files appear whole (written under
// a temporary name, then renamed) and a compile happens once (an flock per key).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace saguaro::runtime {

// FNV-1a, 64 bits: a hash that is the same in every build and on every machine.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ull);

// A hash as a cache key: 16 lowercase hexadecimal digits.
std::string hex_key(std::uint64_t hash);

// $XDG_CACHE_HOME/saguaro, else $HOME/.cache/saguaro, else <temp>/saguaro-cache.
std::string default_cache_dir();

// A name no other process or thread uses at the same time: <path>.tmp.<pid>.<n>.
std::string unique_temporary(const std::filesystem::path& path);

// Writes `bytes` to `path` through a temporary file and a rename, so readers never see a part.
// Throws std::runtime_error ("<who>: cannot write ...") on failure.
void write_atomically(const std::filesystem::path& path, std::string_view bytes,
                      const std::string& who = "saguaro cache");

// The whole content of a file (binary); throws std::runtime_error when it cannot be read.
std::string read_file_bytes(const std::filesystem::path& path,
                            const std::string& who = "saguaro cache");

// An exclusive flock on a file (created when missing), held for the object's life. Throws
// std::runtime_error ("<who>: cannot open the lock file ..." / "cannot lock ...").
class FileLock {
public:
  explicit FileLock(const std::filesystem::path& path, const std::string& who = "saguaro cache");
  ~FileLock(); // releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

private:
  int fd_ = -1;
};

} // namespace saguaro::runtime
