// append_norms: the TSV header, values against a serial computation, appended lines, errors.
#include "grid/grid.hpp"
#include "io/io.hpp"
#include "io/io_test_support.hpp"
#include "mpi_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using saguaro::grid::Decomposition;
using saguaro::grid::GridSpec;
using saguaro::grid::Patch;
using saguaro::test::test_spec;

using saguaro::test::SharedTempDir;
using saguaro::test::world_rank;
using saguaro::test::world_size;

// Mixed signs, so min, max, norm1 and norm_inf all differ.
double g(int i, int j, int k) {
  return (i - 3) + 0.5 * j - 0.25 * k * k;
}

// Owned points take g; every ghost point a huge value that must not enter any norm.
std::vector<double> fill(const Patch& patch, double scale) {
  std::vector<double> field(patch.points(), 1e300);
  for (int k = patch.owned.lo[2]; k < patch.owned.hi[2]; ++k)
    for (int j = patch.owned.lo[1]; j < patch.owned.hi[1]; ++j)
      for (int i = patch.owned.lo[0]; i < patch.owned.hi[0]; ++i)
        field[patch.linear(i, j, k)] = scale * g(i, j, k);
  return field;
}

struct Expected {
  double min = 1e308, max = -1e308, l1 = 0, l2 = 0, linf = 0;
};
Expected serial_norms(const GridSpec& spec, double scale) {
  Expected e;
  double sum1 = 0, sum2 = 0;
  long long n = 0;
  for (int k = 0; k < spec.points[2]; ++k)
    for (int j = 0; j < spec.points[1]; ++j)
      for (int i = 0; i < spec.points[0]; ++i) {
        const double u = scale * g(i, j, k);
        e.min = std::min(e.min, u);
        e.max = std::max(e.max, u);
        e.linf = std::max(e.linf, std::abs(u));
        sum1 += std::abs(u);
        sum2 += u * u;
        ++n;
      }
  e.l1 = sum1 / n;
  e.l2 = std::sqrt(sum2 / n);
  return e;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, '\t');) fields.push_back(field);
  return fields;
}

// Rank 0's check of the TSV after three appends (a helper: ASSERT returns from here only).
void check_tsv(const std::string& path, const GridSpec& spec, const double* scales,
               const int* iterations, const double* times,
               const std::vector<saguaro::grid::Norms>& reduced) {
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].rfind("#", 0), 0u);
  EXPECT_NE(lines[0].find("phi"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1], "# iteration\ttime\tmin\tmax\tnorm1\tnorm2\tnorm_inf");
  for (int n = 0; n < 3; ++n) {
    const std::vector<std::string> f = split_tabs(lines[2 + n]);
    ASSERT_EQ(f.size(), 7u) << lines[2 + n];
    EXPECT_EQ(std::stoi(f[0]), iterations[n]);
    // Full precision: the text reads back to the very same doubles.
    EXPECT_EQ(std::strtod(f[1].c_str(), nullptr), times[n]);
    EXPECT_EQ(std::strtod(f[2].c_str(), nullptr), reduced[n].min);
    EXPECT_EQ(std::strtod(f[3].c_str(), nullptr), reduced[n].max);
    EXPECT_EQ(std::strtod(f[4].c_str(), nullptr), reduced[n].l1);
    EXPECT_EQ(std::strtod(f[5].c_str(), nullptr), reduced[n].l2);
    EXPECT_EQ(std::strtod(f[6].c_str(), nullptr), reduced[n].linf);
    // And those are the norms of the whole grid, ghosts excluded.
    const Expected e = serial_norms(spec, scales[n]);
    EXPECT_EQ(std::strtod(f[2].c_str(), nullptr), e.min);
    EXPECT_EQ(std::strtod(f[3].c_str(), nullptr), e.max);
    EXPECT_NEAR(std::strtod(f[4].c_str(), nullptr), e.l1, 1e-13 * e.l1);
    EXPECT_NEAR(std::strtod(f[5].c_str(), nullptr), e.l2, 1e-13 * e.l2);
    EXPECT_EQ(std::strtod(f[6].c_str(), nullptr), e.linf);
  }
}

TEST(Norms, HeaderValuesAndAppendedLines) {
  SharedTempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path() + "/not/yet/there"; // created on demand
  const GridSpec spec = test_spec();
  Decomposition decomposition(spec, MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();

  const double scales[] = {1.0, -2.5, 0.1};
  const int iterations[] = {0, 4, 8};
  const double times[] = {0.0, 0.1, 1.0 / 3.0};
  std::vector<saguaro::grid::Norms> reduced;
  for (int n = 0; n < 3; ++n) {
    const std::vector<double> field = fill(patch, scales[n]);
    reduced.push_back(saguaro::grid::reduce_norms(decomposition, field.data()));
    saguaro::io::append_norms(dir, decomposition, "phi", field.data(),
                              {iterations[n], times[n], 0.025});
  }

  if (world_rank() == 0)
    check_tsv(dir + "/phi.norms.tsv", spec, scales, iterations, times, reduced);
  MPI_Barrier(MPI_COMM_WORLD);

  // A later call (e.g. after a restart) appends without a second header.
  const std::vector<double> field = fill(patch, 1.0);
  saguaro::io::append_norms(dir, decomposition, "phi", field.data(), {12, 2.0, 0.025});
  if (world_rank() == 0) {
    const std::vector<std::string> lines = read_lines(dir + "/phi.norms.tsv");
    EXPECT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines.empty() ? "" : lines.back().substr(0, lines.back().find('\t')), "12");
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                            [](const std::string& l) { return l.rfind("#", 0) == 0; }),
              2);
  }
}

TEST(Norms, OneFilePerVariable) {
  SharedTempDir tmp;
  const GridSpec spec = test_spec();
  Decomposition decomposition(spec, MPI_COMM_WORLD);
  const std::vector<double> field = fill(decomposition.patch(), 1.0);
  saguaro::io::append_norms(tmp.path(), decomposition, "u", field.data(), {0, 0.0, 0.1});
  saguaro::io::append_norms(tmp.path(), decomposition, "v", field.data(), {0, 0.0, 0.1});
  if (world_rank() == 0) {
    EXPECT_EQ(read_lines(tmp.path() + "/u.norms.tsv").size(), 3u);
    EXPECT_EQ(read_lines(tmp.path() + "/v.norms.tsv").size(), 3u);
  }
}

TEST(Norms, UnwritableDirectoryThrowsOnEveryRank) {
  SharedTempDir tmp;
  const std::string blocker = tmp.path() + "/a_file";
  if (world_rank() == 0) std::ofstream(blocker) << "not a directory\n";
  MPI_Barrier(MPI_COMM_WORLD);
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const std::vector<double> field = fill(decomposition.patch(), 1.0);
  try {
    saguaro::io::append_norms(blocker, decomposition, "phi", field.data(), {0, 0.0, 0.1});
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(blocker), std::string::npos) << e.what();
  }
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// At the start of a run: a fresh one removes the file, a recovered one keeps the header and the
// whole lines up to its iteration (a last line a crash cut short goes too).
TEST(Norms, TruncatedForAFreshRunCutBackForARecoveredOne) {
  SharedTempDir tmp;
  const std::string path = tmp.path() + "/phi.norms.tsv";
  const std::string head = "# norms of phi over all owned points (N = 315)\n"
                           "# iteration\ttime\tmin\tmax\tnorm1\tnorm2\tnorm_inf\n";
  const std::string lines = "0\t0\t-1\t1\t0.5\t0.6\t1\n"
                            "10\t0.1\t-1\t1\t0.5\t0.6\t1\n"
                            "20\t0.2\t-1\t1\t0.5\t0.6\t1\n";
  if (world_rank() == 0) std::ofstream(path) << head << lines << "30\t0.3\t-1\t1\t0.5\t0.6\t1\n3";
  MPI_Barrier(MPI_COMM_WORLD);

  saguaro::io::keep_norms_through(tmp.path(), "phi", 20, MPI_COMM_WORLD);
  if (world_rank() == 0) EXPECT_EQ(file_text(path), head + lines);
  saguaro::io::keep_norms_through(tmp.path(), "phi", 5, MPI_COMM_WORLD);
  if (world_rank() == 0) EXPECT_EQ(file_text(path), head + "0\t0\t-1\t1\t0.5\t0.6\t1\n");
  saguaro::io::keep_norms_through(tmp.path(), "nothing", 5, MPI_COMM_WORLD); // no file: nothing

  saguaro::io::truncate_norms(tmp.path(), "phi", MPI_COMM_WORLD);
  EXPECT_FALSE(fs::exists(path));
  saguaro::io::truncate_norms(tmp.path(), "phi", MPI_COMM_WORLD); // nothing to remove
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const std::vector<double> field = fill(decomposition.patch(), 1.0);
  saguaro::io::append_norms(tmp.path(), decomposition, "phi", field.data(), {0, 0.0, 0.1});
  if (world_rank() == 0) EXPECT_EQ(read_lines(path).size(), 3u); // a new header, one line
}

} // namespace
