// Checkpoints: round trip, reading on another rank count, completeness markers, keep, errors.
#include "grid/grid.hpp"
#include "io/io.hpp"
#include "io/io_test_support.hpp"
#include "mpi_support.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using saguaro::grid::Decomposition;
using saguaro::grid::GridSpec;
using saguaro::grid::Patch;
using saguaro::io::CheckpointState;
using saguaro::test::test_spec;

using saguaro::test::SharedTempDir;
using saguaro::test::world_rank;
using saguaro::test::world_size;

// A communicator of the first `n` world ranks (MPI_COMM_NULL on the others), freed on exit.
class SubComm {
public:
  explicit SubComm(int n) {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < n ? 0 : MPI_UNDEFINED, world_rank(), &comm_);
  }
  ~SubComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  MPI_Comm get() const { return comm_; }
  bool member() const { return comm_ != MPI_COMM_NULL; }

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

double f(int i, int j, int k) {
  return i + 100.0 * j + 10000.0 * k + 0.5;
}
// Values with every mantissa bit in use, so a lossy path would show.
double h(int i, int j, int k) {
  return std::sin(0.3 * i + 0.7 * j) * std::exp(0.1 * k) / 3.0;
}

template <class F>
std::vector<double> fill(const Patch& patch, F function) {
  std::vector<double> field(patch.points(), -7.0);
  const saguaro::grid::Box valid = patch.valid();
  for (int k = valid.lo[2]; k < valid.hi[2]; ++k)
    for (int j = valid.lo[1]; j < valid.hi[1]; ++j)
      for (int i = valid.lo[0]; i < valid.hi[0]; ++i)
        field[patch.linear(i, j, k)] = function(i, j, k);
  return field;
}

// Valid points (owned and outer boundary layers) bit-identical to `function`; every other
// point still `other`.
template <class F>
::testing::AssertionResult matches(const Patch& patch, const std::vector<double>& field, F function,
                                   double other) {
  const saguaro::grid::Box box = patch.allocated(), valid = patch.valid();
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j)
      for (int i = box.lo[0]; i < box.hi[0]; ++i) {
        const bool owned = i >= valid.lo[0] && i < valid.hi[0] && j >= valid.lo[1] &&
                           j < valid.hi[1] && k >= valid.lo[2] && k < valid.hi[2];
        const double expected = owned ? function(i, j, k) : other;
        const double got = field[patch.linear(i, j, k)];
        if (std::memcmp(&expected, &got, sizeof got) != 0)
          return ::testing::AssertionFailure()
                 << "at (" << i << "," << j << "," << k << "): " << got << " != " << expected;
      }
  return ::testing::AssertionSuccess();
}

std::string stem(const std::string& dir, int iteration) {
  return dir + "/checkpoint.chkpt.it_" + std::to_string(iteration);
}
std::string rank_file(const std::string& dir, int iteration, int rank) {
  return stem(dir, iteration) + ".file_" + std::to_string(rank) + ".h5";
}
int count_files(const std::string& dir, int iteration) {
  int n = 0;
  const std::string prefix = "checkpoint.chkpt.it_" + std::to_string(iteration) + ".";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

const std::vector<std::string> kNames = {"wave::u", "wave::rho"};
const char* kParameters = "Cactus::cctk_itlast = 100\n";

void write_on(MPI_Comm comm, const std::string& dir, int iteration, int keep = 2) {
  Decomposition decomposition(test_spec(), comm);
  const Patch& patch = decomposition.patch();
  const std::vector<double> u = fill(patch, f), rho = fill(patch, h);
  try {
    saguaro::io::write_checkpoint(dir, decomposition, kNames, {u.data(), rho.data()},
                                  {iteration, 0.125 * iteration, 0.125}, kParameters, keep);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "write_checkpoint: " << e.what();
  }
}
void write_world(const std::string& dir, int iteration, int keep = 2) {
  write_on(MPI_COMM_WORLD, dir, iteration, keep);
}

// Reads checkpoint `iteration` on the ranks of `comm` and checks every owned point. Errors are
// test failures, never exceptions: a rank leaving the test early would hang the others.
void read_and_check(const std::string& dir, int iteration, MPI_Comm comm) {
  Decomposition decomposition(test_spec(), comm);
  const Patch& patch = decomposition.patch();
  std::vector<double> u(patch.points(), 0.0), rho(patch.points(), 0.0);
  CheckpointState state;
  try {
    state =
        saguaro::io::read_checkpoint(dir, iteration, decomposition, kNames, {u.data(), rho.data()});
  } catch (const std::exception& e) {
    ADD_FAILURE() << "read_checkpoint: " << e.what();
    return;
  }
  EXPECT_EQ(state.iteration, iteration);
  EXPECT_EQ(state.time, 0.125 * iteration);
  EXPECT_EQ(state.dt, 0.125);
  EXPECT_TRUE(matches(patch, u, f, 0.0));
  EXPECT_TRUE(matches(patch, rho, h, 0.0));
}

// The file's own layout: the valid box with its global origin, the state, the rank count.
void check_layout(const std::string& dir, int it) {
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  const hid_t file = H5Fopen(rank_file(dir, it, patch.rank).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  int nprocs = 0, iteration = 0, points[3] = {0, 0, 0}, iorigin[3] = {0, 0, 0};
  hid_t attribute = H5Aopen(file, "nprocs", H5P_DEFAULT);
  H5Aread(attribute, H5T_NATIVE_INT, &nprocs);
  H5Aclose(attribute);
  attribute = H5Aopen(file, "iteration", H5P_DEFAULT);
  H5Aread(attribute, H5T_NATIVE_INT, &iteration);
  H5Aclose(attribute);
  EXPECT_EQ(nprocs, world_size());
  EXPECT_EQ(iteration, it);
  const hid_t dataset = H5Dopen2(file, "wave::u", H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  attribute = H5Aopen(dataset, "iorigin", H5P_DEFAULT);
  H5Aread(attribute, H5T_NATIVE_INT, iorigin);
  H5Aclose(attribute);
  attribute = H5Aopen(dataset, "grid_points", H5P_DEFAULT);
  H5Aread(attribute, H5T_NATIVE_INT, points);
  H5Aclose(attribute);
  const hid_t space = H5Dget_space(dataset);
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
  const saguaro::grid::Box valid = patch.valid();
  for (int axis = 0; axis < 3; ++axis) {
    const int size = valid.hi[axis] - valid.lo[axis];
    EXPECT_EQ(iorigin[axis], valid.lo[axis]);
    EXPECT_EQ(points[axis], patch.spec.points[axis]);
    EXPECT_EQ(dims[2 - axis], static_cast<hsize_t>(size)); // {nz, ny, nx}, no ghosts
  }
}

TEST(Checkpoint, RoundTripIsBitIdentical) {
  SharedTempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path() + "/chk"; // created on demand
  write_world(dir, 10);
  EXPECT_EQ(saguaro::io::newest_checkpoint(dir), 10);
  EXPECT_TRUE(fs::exists(stem(dir, 10) + ".done"));
  if (world_rank() == 0) {
    EXPECT_EQ(count_files(dir, 10), world_size() + 1); // the rank files and the marker
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      EXPECT_NE(it->path().extension(), ".tmp") << it->path();
  }
  read_and_check(dir, 10, MPI_COMM_WORLD);

  check_layout(dir, 10);
}

TEST(Checkpoint, ReadOnAnotherRankCount) {
  SharedTempDir tmp;
  write_world(tmp.path(), 20);

  {
    SubComm one(1); // read a checkpoint of `size` ranks on one rank
    if (one.member()) read_and_check(tmp.path(), 20, one.get());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_size() >= 3) {
    SubComm two(2);
    if (two.member()) read_and_check(tmp.path(), 20, two.get());
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // And the other way round: written by one rank, read by all of them.
  {
    SubComm one(1);
    if (one.member()) write_on(one.get(), tmp.path(), 30);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path()), 30);
  read_and_check(tmp.path(), 30, MPI_COMM_WORLD);
}

TEST(Checkpoint, NewestIgnoresIncompleteCheckpoints) {
  SharedTempDir tmp;
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path() + "/missing"), -1);
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path()), -1);

  write_world(tmp.path(), 5);
  if (world_rank() == 0) {
    // A crash while writing iteration 9: all files but no marker. Debris of other crashes.
    std::error_code ec;
    for (int r = 0; r < world_size(); ++r)
      EXPECT_TRUE(fs::copy_file(rank_file(tmp.path(), 5, r), rank_file(tmp.path(), 9, r), ec))
          << ec.message();
    std::ofstream(stem(tmp.path(), 12) + ".done.tmp");
    std::ofstream(rank_file(tmp.path(), 15, 0) + ".tmp");
    std::ofstream(stem(tmp.path(), 99) + ".done.old");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path()), 5);
  read_and_check(tmp.path(), 5, MPI_COMM_WORLD);
}

TEST(Checkpoint, KeepRemovesOlderCheckpoints) {
  SharedTempDir tmp;
  const int size = world_size();
  for (int it : {1, 2, 3, 4}) write_world(tmp.path(), it, 2);
  if (world_rank() == 0) {
    EXPECT_EQ(count_files(tmp.path(), 1), 0);
    EXPECT_EQ(count_files(tmp.path(), 2), 0);
    EXPECT_EQ(count_files(tmp.path(), 3), size + 1);
    EXPECT_EQ(count_files(tmp.path(), 4), size + 1);
  }
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path()), 4);
  read_and_check(tmp.path(), 3, MPI_COMM_WORLD);

  write_world(tmp.path(), 5, 1);
  if (world_rank() == 0) {
    EXPECT_EQ(count_files(tmp.path(), 3), 0);
    EXPECT_EQ(count_files(tmp.path(), 4), 0);
    EXPECT_EQ(count_files(tmp.path(), 5), size + 1);
  }

  // The checkpoint just written is never removed, even behind a newer one; keep <= 0 keeps all.
  write_world(tmp.path(), 2, 1);
  write_world(tmp.path(), 1, 0);
  if (world_rank() == 0) {
    EXPECT_EQ(count_files(tmp.path(), 1), size + 1);
    EXPECT_EQ(count_files(tmp.path(), 2), size + 1);
    EXPECT_EQ(count_files(tmp.path(), 5), size + 1);
  }
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path()), 5);
}

TEST(Checkpoint, RewritingAnIterationReplacesIt) {
  SharedTempDir tmp;
  write_world(tmp.path(), 7);
  write_world(tmp.path(), 7);
  EXPECT_EQ(saguaro::io::newest_checkpoint(tmp.path()), 7);
  read_and_check(tmp.path(), 7, MPI_COMM_WORLD);
}

// Every rank must throw, with a message naming `needles`.
template <class F>
void expect_collective_error(F&& work, const std::vector<std::string>& needles) {
  try {
    work();
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    for (const std::string& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "'" << needle << "' not in: " << e.what();
  }
}

TEST(Checkpoint, MissingVariableNamesVariableAndFile) {
  SharedTempDir tmp;
  write_world(tmp.path(), 40);
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  std::vector<double> u(patch.points()), nope(patch.points());
  expect_collective_error(
      [&] {
        saguaro::io::read_checkpoint(tmp.path(), 40, decomposition, {"wave::u", "wave::nope"},
                                     {u.data(), nope.data()});
      },
      {"wave::nope", "checkpoint.chkpt.it_40.file_"});
}

TEST(Checkpoint, OtherFailuresThrowOnEveryRank) {
  SharedTempDir tmp;
  write_world(tmp.path(), 50);
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  std::vector<double> u(patch.points()), rho(patch.points());

  // No such checkpoint.
  expect_collective_error(
      [&] {
        saguaro::io::read_checkpoint(tmp.path(), 51, decomposition, kNames, {u.data(), rho.data()});
      },
      {"checkpoint.chkpt.it_51.file_0.h5"});

  // A different grid.
  GridSpec other = test_spec();
  other.points[1] += 1;
  Decomposition other_decomposition(other, MPI_COMM_WORLD);
  std::vector<double> u2(other_decomposition.patch().points()),
      rho2(other_decomposition.patch().points());
  expect_collective_error(
      [&] {
        saguaro::io::read_checkpoint(tmp.path(), 50, other_decomposition, kNames,
                                     {u2.data(), rho2.data()});
      },
      {"checkpoint.chkpt.it_50.file_0.h5", "grid"});

  // A rank file replaced by another: its header says so (and some points would be read twice,
  // others never).
  if (world_size() >= 2) {
    std::error_code ec;
    if (world_rank() == 0)
      fs::copy_file(rank_file(tmp.path(), 50, 0), rank_file(tmp.path(), 50, 1),
                    fs::copy_options::overwrite_existing, ec);
    EXPECT_FALSE(ec) << ec.message();
    MPI_Barrier(MPI_COMM_WORLD);
    expect_collective_error(
        [&] {
          saguaro::io::read_checkpoint(tmp.path(), 50, decomposition, kNames,
                                       {u.data(), rho.data()});
        },
        {"checkpoint.chkpt.it_50.file_1.h5", "disagrees"});
  }

  // A write into a place that cannot be a directory.
  const std::string blocker = tmp.path() + "/a_file";
  if (world_rank() == 0) std::ofstream(blocker) << "x";
  MPI_Barrier(MPI_COMM_WORLD);
  expect_collective_error(
      [&] {
        saguaro::io::write_checkpoint(blocker, decomposition, kNames, {u.data(), rho.data()},
                                      {1, 0.0, 0.1}, "");
      },
      {blocker});
}

// Damage done by rank 0 to one rank file, then everybody proceeds.
void damage(const std::function<void()>& how) {
  if (world_rank() == 0) how();
  MPI_Barrier(MPI_COMM_WORLD);
}

// Flips one byte in the middle of the first chunk of `dataset` in `path`: the data, not the
// file's structure.
void flip_data_byte(const std::string& path, const char* dataset) {
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0) << path;
    const hid_t d = H5Dopen2(file, dataset, H5P_DEFAULT);
    ASSERT_GE(d, 0) << dataset;
    hsize_t offset[3] = {0, 0, 0};
    unsigned mask = 0;
    const hid_t space = H5Dget_space(d);
    EXPECT_GE(H5Dget_chunk_info(d, space, 0, offset, &mask, &address, &size), 0);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(file);
  }
  ASSERT_GT(size, 0u);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(address + size / 2));
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x10);
  file.seekp(static_cast<std::streamoff>(address + size / 2));
  file.write(&byte, 1);
}

// Replaces the value of a double attribute of the file (a damaged header).
void rewrite_attribute(const std::string& path, const char* name, double value) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0) << path;
  const hid_t attribute = H5Aopen(file, name, H5P_DEFAULT);
  EXPECT_GE(H5Awrite(attribute, H5T_NATIVE_DOUBLE, &value), 0);
  H5Aclose(attribute);
  H5Fclose(file);
}

// Recovery takes the newest checkpoint that reads back whole: a truncated file, a corrupted
// byte of data (Fletcher-32) and a missing rank file are each reported, with the file, and
// the next older checkpoint tried; all ranks end with the same one.
TEST(Checkpoint, RecoveryFallsBackPastDamagedCheckpoints) {
  SharedTempDir tmp;
  for (int it : {10, 20, 30}) write_world(tmp.path(), it, 0);
  damage([&] { fs::resize_file(rank_file(tmp.path(), 30, 0), 2000); });
  damage([&] { flip_data_byte(rank_file(tmp.path(), 20, 0), "wave::rho"); });
  EXPECT_EQ(saguaro::io::complete_checkpoints(tmp.path(), MPI_COMM_WORLD),
            (std::vector<int>{30, 20, 10}));

  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  std::vector<double> u(patch.points(), 0.0), rho(patch.points(), 0.0);
  saguaro::io::Recovery found = saguaro::io::recover_newest_checkpoint(
      tmp.path(), decomposition, kNames, {u.data(), rho.data()});
  ASSERT_TRUE(found.state.has_value());
  EXPECT_EQ(found.state->iteration, 10);
  EXPECT_EQ(found.state->time, 1.25);
  EXPECT_TRUE(matches(patch, u, f, 0.0));
  EXPECT_TRUE(matches(patch, rho, h, 0.0));
  ASSERT_EQ(found.unusable.size(), 2u);
  EXPECT_EQ(found.unusable[0].iteration, 30);
  EXPECT_NE(found.unusable[0].reason.find(rank_file(tmp.path(), 30, 0)), std::string::npos)
      << found.unusable[0].reason;
  EXPECT_NE(found.unusable[0].reason.find("truncated"), std::string::npos)
      << found.unusable[0].reason;
  EXPECT_EQ(found.unusable[1].iteration, 20);
  EXPECT_NE(found.unusable[1].reason.find(rank_file(tmp.path(), 20, 0)), std::string::npos)
      << found.unusable[1].reason;
  EXPECT_NE(found.unusable[1].reason.find("H5Dread(wave::rho)"), std::string::npos)
      << found.unusable[1].reason;

  // With the last one gone too, none is usable: every one is listed, nothing is recovered.
  damage([&] { fs::remove(rank_file(tmp.path(), 10, world_size() - 1)); });
  found = saguaro::io::recover_newest_checkpoint(tmp.path(), decomposition, kNames,
                                                 {u.data(), rho.data()});
  EXPECT_FALSE(found.state.has_value());
  EXPECT_EQ(found.complete, (std::vector<int>{30, 20, 10}));
  ASSERT_EQ(found.unusable.size(), 3u);
  EXPECT_NE(found.unusable[2].reason.find(rank_file(tmp.path(), 10, world_size() - 1)),
            std::string::npos)
      << found.unusable[2].reason;

  // An empty directory: nothing found, nothing tried.
  found = saguaro::io::recover_newest_checkpoint(tmp.path() + "/none", decomposition, kNames,
                                                 {u.data(), rho.data()});
  EXPECT_FALSE(found.state.has_value());
  EXPECT_TRUE(found.complete.empty());
  EXPECT_TRUE(found.unusable.empty());
}

// A damaged value in a file's header (here its time) does not match the digest stored with it.
TEST(Checkpoint, ADamagedHeaderIsAnError) {
  SharedTempDir tmp;
  write_world(tmp.path(), 40);
  damage([&] { rewrite_attribute(rank_file(tmp.path(), 40, world_size() - 1), "time", 5.5); });
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  std::vector<double> u(patch.points()), rho(patch.points());
  expect_collective_error(
      [&] {
        saguaro::io::read_checkpoint(tmp.path(), 40, decomposition, kNames, {u.data(), rho.data()});
      },
      {rank_file(tmp.path(), 40, world_size() - 1), "digest"});
}

} // namespace
