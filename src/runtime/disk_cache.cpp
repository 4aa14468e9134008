#include "runtime/disk_cache.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

namespace saguaro::runtime {

namespace fs = std::filesystem;

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex_key(std::uint64_t hash) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return (fs::path(xdg) / "saguaro").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return (fs::path(home) / ".cache" / "saguaro").string();
  return (fs::temp_directory_path() / "saguaro-cache").string();
}

std::string unique_temporary(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  return path.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

void write_atomically(const fs::path& path, std::string_view bytes, const std::string& who) {
  std::string tmp = unique_temporary(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error(who + ": cannot write " + tmp);
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(who + ": cannot rename " + tmp + " to " + path.string());
  }
}

std::string read_file_bytes(const fs::path& path, const std::string& who) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(who + ": cannot read " + path.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error(who + ": cannot read " + path.string());
  return bytes;
}

FileLock::FileLock(const fs::path& path, const std::string& who) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error(who + ": cannot open the lock file " + path.string() + ": " +
                             std::strerror(errno));
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    close(fd_);
    throw std::runtime_error(who + ": cannot lock " + path.string() + ": " + std::strerror(err));
  }
}

FileLock::~FileLock() {
  close(fd_);
}

} // namespace saguaro::runtime
