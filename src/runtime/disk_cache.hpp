// The on-disk cache of compiled code, shared by the CPU backend (shared objects) and the CUDA
// backend (cubin): where it lives, a stable hash for its keys, and the two tools that let
// concurrent processes (MPI ranks) use one directory safely: files appear whole (written under
// a temporary name, then renamed) and a compile happens once (an flock per key).
#pragma once

#include "support/files.hpp"
#include "support/hash.hpp"

#include <filesystem>
#include <string>

namespace saguaro::runtime {

// The cache's names for the shared pieces it is built on (support/hash.hpp, support/files.hpp).
using support::default_cache_dir;
using support::fnv1a64;
using support::hex_key;
using support::read_file_bytes;
using support::unique_temporary;
using support::write_atomically;

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
