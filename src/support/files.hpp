// Files that appear whole: every writer of a file another process or a later run reads (the
// code caches, the mapping cache, device descriptions, the prediction log, HDF5 output and
// checkpoints, the norms, the benchmark suite's results) writes it through write_atomically,
// so a reader never sees a part and a crash leaves at most a temporary behind.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace saguaro::support {

// $XDG_CACHE_HOME/saguaro, else $HOME/.cache/saguaro, else <temp>/saguaro-cache.
std::string default_cache_dir();

// A name no other process or thread uses at the same time, next to `path`:
// <path>.tmp.<host>.<pid>.<n> (the host because ranks on different nodes may share a directory).
std::string unique_temporary(const std::filesystem::path& path);

struct AtomicWrite {
  std::string who = "saguaro"; // the start of error messages: "<who>: cannot write ..."
  // Where the file is made; "" for unique_temporary(path). A fixed name (`<path>.tmp`) lets a
  // later run find and remove the debris of a crashed write.
  std::filesystem::path temporary;
  // fsync the file before the rename and its directory after, so the file survives a crash
  // of the machine, not just of the process (checkpoints).
  bool durable = false;
  // When set and `path` exists, the version it replaces stays on disk under this name (HDF5
  // output: the next write starts from it). It is hard-linked to `<previous>.tmp` before the
  // rename and moved to `previous` after it, so `path` never disappears and `previous`, when
  // it exists, is always a whole earlier version. Where the file system has no hard links,
  // `previous` is removed instead.
  std::filesystem::path previous = {};
};

// Makes `path` whole or not at all: `make` writes the file at the temporary path it is given
// (with an ofstream, the HDF5 library, a compiler ...), which is then renamed over `path`
// (keeping the version it replaces as `how.previous` when that is set).
// When `make` throws, the temporary is removed and the exception passes on; a failed rename
// throws std::runtime_error ("<who>: cannot rename ...").
void write_atomically(const std::filesystem::path& path,
                      const std::function<void(const std::filesystem::path& temporary)>& make,
                      const AtomicWrite& how = {});

// The same for bytes in memory. Throws std::runtime_error ("<who>: cannot write ...").
void write_atomically(const std::filesystem::path& path, std::string_view bytes,
                      const std::string& who = "saguaro");

// The whole content of a file (binary); throws std::runtime_error ("<who>: cannot read ...").
std::string read_file_bytes(const std::filesystem::path& path, const std::string& who = "saguaro");

} // namespace saguaro::support
