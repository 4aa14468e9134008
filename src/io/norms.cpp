// Norms of a grid function over the whole grid, appended as one TSV line per call; the file
// as a run starts: removed (a fresh run) or cut back to the iteration recovered from.
#include "io/io.hpp"

#include "support/files.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
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

std::filesystem::path norms_file(const std::string& dir, const std::string& variable) {
  return std::filesystem::path(dir.empty() ? "." : dir) / (variable + ".norms.tsv");
}

// The lines of `text` to keep when continuing from `iteration`: the comments and the whole
// records (ending in a newline) of iterations up to it. A line a crash cut short is dropped.
std::string lines_through(std::string_view text, int iteration) {
  std::string kept;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (end == std::string_view::npos) break; // cut short
    const std::string_view line = text.substr(0, end + 1);
    text.remove_prefix(end + 1);
    bool keep = line[0] == '#';
    if (!keep) {
      long long value = 0;
      std::size_t digits = 0;
      while (digits < line.size() && digits < 12 && line[digits] >= '0' && line[digits] <= '9')
        value = value * 10 + (line[digits++] - '0');
      keep = digits > 0 && digits < 12 && line[digits] == '\t' && value <= iteration;
    }
    if (keep) kept += line;
  }
  return kept;
}

// Runs `work` on rank 0; every rank throws "<operation>(<variable>): <why>" when it failed.
template <class F>
void on_rank_zero(MPI_Comm comm, const char* operation, const std::string& variable, F&& work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string error;
  if (rank == 0) {
    try {
      error = work();
    } catch (const std::exception& e) { // std::filesystem or allocation failures
      error = e.what();
    }
  }
  int length = static_cast<int>(error.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  if (length == 0) return;
  error.resize(static_cast<std::size_t>(length));
  MPI_Bcast(error.data(), length, MPI_CHAR, 0, comm);
  throw std::runtime_error(std::string(operation) + "(" + variable + "): " + error);
}

} // namespace

void truncate_norms(const std::string& dir, const std::string& variable, MPI_Comm comm) {
  on_rank_zero(comm, "truncate_norms", variable, [&]() -> std::string {
    const std::filesystem::path path = norms_file(dir, variable);
    std::error_code ec;
    if (!std::filesystem::remove(path, ec) && ec)
      return "cannot remove " + path.string() + ": " + ec.message();
    return {};
  });
}

void keep_norms_through(const std::string& dir, const std::string& variable, int iteration,
                        MPI_Comm comm) {
  on_rank_zero(comm, "keep_norms_through", variable, [&]() -> std::string {
    const std::filesystem::path path = norms_file(dir, variable);
    if (!std::filesystem::exists(path)) return {};
    const std::string text = support::read_file_bytes(path, "saguaro");
    const std::string kept = lines_through(text, iteration);
    if (kept != text) support::write_atomically(path, kept, "saguaro");
    return {};
  });
}

void append_norms(const std::string& dir, const grid::Decomposition& decomposition,
                  const std::string& variable, const double* field, const OutputStamp& stamp,
                  runtime::ArraySpace& space) {
  const grid::Norms norms = grid::reduce_norms(decomposition, field, space);
  MPI_Comm comm = decomposition.comm();
  // Every rank learns whether rank 0 succeeded, so all of them throw together.
  on_rank_zero(comm, "append_norms", variable,
               [&] { return append_line(norms_file(dir, variable), variable, norms, stamp); });
}

} // namespace saguaro::io
