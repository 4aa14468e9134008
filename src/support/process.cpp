#include "support/process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace saguaro::support {

namespace {

// Starts argv with standard input from /dev/null, standard output to `out_fd` and standard
// error to `err_fd`; returns its pid. Throws when it cannot be started.
pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  if (argv.empty() || argv[0].empty()) throw std::runtime_error("run_command: no program given");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(rc));
  return pid;
}

int wait_for(pid_t pid, const std::string& program) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error("waiting for '" + program + "': " + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
}

} // namespace

CommandResult run_command(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  make_pipe(pipe_fds);
  pid_t pid = -1;
  try {
    pid = spawn(argv, pipe_fds[1], pipe_fds[1]);
  } catch (...) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    throw;
  }
  close(pipe_fds[1]);

  CommandResult result;
  char buffer[65536];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, std::size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  result.status = wait_for(pid, argv[0]);
  return result;
}

SeparateResult run_command_separately(const std::vector<std::string>& argv) {
  int out_fds[2], err_fds[2];
  make_pipe(out_fds);
  try {
    make_pipe(err_fds);
  } catch (...) {
    close(out_fds[0]);
    close(out_fds[1]);
    throw;
  }
  pid_t pid = -1;
  try {
    pid = spawn(argv, out_fds[1], err_fds[1]);
  } catch (...) {
    for (int fd : {out_fds[0], out_fds[1], err_fds[0], err_fds[1]}) close(fd);
    throw;
  }
  close(out_fds[1]);
  close(err_fds[1]);

  // Both pipes drained together, so that a child filling one does not block on it.
  SeparateResult result;
  pollfd fds[2] = {{out_fds[0], POLLIN, 0}, {err_fds[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, std::size_t(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  result.status = wait_for(pid, argv[0]);
  return result;
}

bool program_exists(const std::string& program) {
  namespace fs = std::filesystem;
  if (program.empty()) return false;
  auto executable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string dirs = path;
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (executable(fs::path(dir) / program)) return true;
    start = end + 1;
  }
  return false;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

} // namespace saguaro::support
