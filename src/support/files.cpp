#include "support/files.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

namespace saguaro::support {

namespace fs = std::filesystem;

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return (fs::path(xdg) / "saguaro").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return (fs::path(home) / ".cache" / "saguaro").string();
  return (fs::temp_directory_path() / "saguaro-cache").string();
}

std::string unique_temporary(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  return path.string() + ".tmp." + host + "." + std::to_string(static_cast<long>(getpid())) + "." +
         std::to_string(counter++);
}

namespace {

// Flushes a file (or, best effort, a directory) to the disk.
void sync_path(const fs::path& path, bool directory, const std::string& who) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) {
    if (directory) return;
    throw std::runtime_error(who + ": cannot open " + path.string() +
                             " to sync it: " + std::strerror(errno));
  }
  const int status = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (status != 0 && !directory)
    throw std::runtime_error(who + ": cannot sync " + path.string() + ": " + std::strerror(error));
}

} // namespace

void write_atomically(const fs::path& path, const std::function<void(const fs::path&)>& make,
                      const AtomicWrite& how) {
  const fs::path tmp = how.temporary.empty() ? fs::path(unique_temporary(path)) : how.temporary;
  std::error_code ec;
  try {
    make(tmp);
    if (how.durable) sync_path(tmp, false, how.who);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  // The version being replaced, under a second name until the rename is done.
  fs::path kept;
  if (!how.previous.empty()) {
    kept = how.previous.string() + ".tmp";
    fs::remove(kept, ec);
    fs::create_hard_link(path, kept, ec);
    if (ec) kept.clear(); // no such file yet, or no hard links here
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    if (!kept.empty()) fs::remove(kept, ec);
    throw std::runtime_error(how.who + ": cannot rename " + tmp.string() + " to " + path.string() +
                             ": " + why);
  }
  if (!how.previous.empty()) {
    if (kept.empty())
      fs::remove(how.previous, ec);
    else
      fs::rename(kept, how.previous, ec);
    if (ec) { // the new file is in place; the next writer just finds no previous version
      fs::remove(kept, ec);
      fs::remove(how.previous, ec);
    }
  }
  if (how.durable) {
    const fs::path dir = path.parent_path();
    sync_path(dir.empty() ? fs::path(".") : dir, true, how.who);
  }
}

void write_atomically(const fs::path& path, std::string_view bytes, const std::string& who) {
  write_atomically(
      path,
      [&](const fs::path& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) throw std::runtime_error(who + ": cannot write " + tmp.string());
      },
      AtomicWrite{who, {}, false});
}

std::string read_file_bytes(const fs::path& path, const std::string& who) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(who + ": cannot read " + path.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error(who + ": cannot read " + path.string());
  return bytes;
}

} // namespace saguaro::support
