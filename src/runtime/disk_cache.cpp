#include "runtime/disk_cache.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

namespace saguaro::runtime {

namespace fs = std::filesystem;

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
