// Norms of a grid function over the whole grid, appended as one TSV line per call.
#include "io/io.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace saguaro::io {

namespace {

// Appends one line (and the header when the file is new or empty); flushes and closes.
// Returns an empty string on success, else the reason.
std::string append_line(const std::filesystem::path& path, const std::string& variable,
                        const grid::Norms& norms, const OutputStamp& stamp) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (!std::filesystem::is_directory(path.parent_path()))
    return "cannot create directory " + path.parent_path().string() +
           (ec ? ": " + ec.message() : std::string());

  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) return "cannot open " + path.string() + ": " + std::strerror(errno);
  int error = 0; // the first errno seen
  auto check = [&](bool ok) {
    if (!ok && error == 0) error = errno != 0 ? errno : EIO;
    return ok;
  };
  errno = 0;
  long size = -1;
  if (check(std::fseek(file, 0, SEEK_END) == 0)) check((size = std::ftell(file)) >= 0);
  if (error == 0 && size == 0)
    check(std::fprintf(file,
                       "# norms of %s over all owned points (N = %lld)\n"
                       "# iteration\ttime\tmin\tmax\tnorm1\tnorm2\tnorm_inf\n",
                       variable.c_str(), norms.count) >= 0);
  if (error == 0)
    check(std::fprintf(file, "%d\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n", stamp.iteration,
                       stamp.time, norms.min, norms.max, norms.l1, norms.l2, norms.linf) >= 0);
  check(std::fflush(file) == 0);
  check(std::fclose(file) == 0);
  if (error != 0) return "cannot write " + path.string() + ": " + std::strerror(error);
  return {};
}

} // namespace

void append_norms(const std::string& dir, const grid::Decomposition& decomposition,
                  const std::string& variable, const double* field, const OutputStamp& stamp,
                  runtime::ArraySpace& space) {
  const grid::Norms norms = grid::reduce_norms(decomposition, field, space);
  MPI_Comm comm = decomposition.comm();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);

  std::string error;
  if (rank == 0) {
    try {
      error =
          append_line(std::filesystem::path(dir.empty() ? "." : dir) / (variable + ".norms.tsv"),
                      variable, norms, stamp);
    } catch (const std::exception& e) { // std::filesystem or allocation failures
      error = e.what();
    }
  }
  // Every rank learns whether rank 0 succeeded, so all of them throw together.
  int length = static_cast<int>(error.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  if (length == 0) return;
  error.resize(static_cast<std::size_t>(length));
  MPI_Bcast(error.data(), length, MPI_CHAR, 0, comm);
  throw std::runtime_error("append_norms(" + variable + "): " + error);
}

} // namespace saguaro::io
