// Helpers shared by the test suites that run under mpirun: this rank's number and a
// temporary directory every rank of a communicator agrees on.
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace saguaro::test {

inline int world_rank(MPI_Comm comm = MPI_COMM_WORLD) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

inline int world_size(MPI_Comm comm = MPI_COMM_WORLD) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

// A fresh directory shared by all ranks of `comm` (rank 0 makes it and removes it).
class SharedTempDir {
public:
  explicit SharedTempDir(const std::string& tag = "test", MPI_Comm comm = MPI_COMM_WORLD)
      : comm_(comm) {
    std::string made;
    if (world_rank(comm) == 0) {
      std::string pattern =
          (std::filesystem::temp_directory_path() / ("saguaro-" + tag + "-XXXXXX")).string();
      if (mkdtemp(pattern.data()) != nullptr) made = pattern;
    }
    int length = static_cast<int>(made.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, comm);
    made.resize(static_cast<std::size_t>(length));
    MPI_Bcast(made.data(), length, MPI_CHAR, 0, comm);
    path_ = made;
  }
  ~SharedTempDir() {
    MPI_Barrier(comm_);
    if (world_rank(comm_) == 0 && !path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
    MPI_Barrier(comm_);
  }
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
  MPI_Comm comm_;
  std::string path_;
};

} // namespace saguaro::test
