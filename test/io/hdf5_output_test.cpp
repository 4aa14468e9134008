// write_hdf5, read back with the HDF5 C API: file and dataset names, every attribute's type and
// value, the data in C order, the metadata group, appending, replacing, crash safety, the bytes a
// write moves, the previous version a write keeps, and removing a run's output.
#include "grid/grid.hpp"
#include "io/io.hpp"
#include "io/io_test_support.hpp"
#include "mpi_support.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// Distinct per axis, so a transposed or shifted read shows.
double f(int i, int j, int k) {
  return i + 100.0 * j + 10000.0 * k + 0.5;
}

std::vector<double> fill(const Patch& patch, double shift) {
  std::vector<double> field(patch.points());
  const saguaro::grid::Box box = patch.allocated();
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j)
      for (int i = box.lo[0]; i < box.hi[0]; ++i) field[patch.linear(i, j, k)] = f(i, j, k) + shift;
  return field;
}

// --- reading helpers (C API) ------------------------------------------------------------------

H5T_class_t attribute_class(hid_t loc, const char* name, hssize_t* count) {
  const hid_t attribute = H5Aopen(loc, name, H5P_DEFAULT);
  if (attribute < 0) return H5T_NO_CLASS;
  const hid_t type = H5Aget_type(attribute);
  const hid_t space = H5Aget_space(attribute);
  const H5T_class_t type_class = H5Tget_class(type);
  *count = H5Sget_simple_extent_npoints(space);
  H5Sclose(space);
  H5Tclose(type);
  H5Aclose(attribute);
  return type_class;
}

std::vector<int> int_attribute(hid_t loc, const char* name) {
  hssize_t count = 0;
  EXPECT_EQ(attribute_class(loc, name, &count), H5T_INTEGER) << name;
  std::vector<int> values(static_cast<std::size_t>(std::max<hssize_t>(count, 0)));
  const hid_t attribute = H5Aopen(loc, name, H5P_DEFAULT);
  if (attribute < 0) return {};
  EXPECT_GE(H5Aread(attribute, H5T_NATIVE_INT, values.data()), 0) << name;
  H5Aclose(attribute);
  return values;
}

std::vector<double> double_attribute(hid_t loc, const char* name) {
  hssize_t count = 0;
  EXPECT_EQ(attribute_class(loc, name, &count), H5T_FLOAT) << name;
  std::vector<double> values(static_cast<std::size_t>(std::max<hssize_t>(count, 0)));
  const hid_t attribute = H5Aopen(loc, name, H5P_DEFAULT);
  if (attribute < 0) return {};
  EXPECT_GE(H5Aread(attribute, H5T_NATIVE_DOUBLE, values.data()), 0) << name;
  H5Aclose(attribute);
  return values;
}

std::string string_attribute(hid_t loc, const char* name) {
  hssize_t count = 0;
  EXPECT_EQ(attribute_class(loc, name, &count), H5T_STRING) << name;
  const hid_t attribute = H5Aopen(loc, name, H5P_DEFAULT);
  if (attribute < 0) return {};
  const hid_t type = H5Aget_type(attribute);
  std::string value(H5Tget_size(type), '\0');
  EXPECT_GE(H5Aread(attribute, type, value.data()), 0) << name;
  H5Tclose(type);
  H5Aclose(attribute);
  return value.substr(0, value.find('\0'));
}

std::string string_dataset(hid_t loc, const char* name) {
  const hid_t dataset = H5Dopen2(loc, name, H5P_DEFAULT);
  if (dataset < 0) {
    ADD_FAILURE() << "no dataset " << name;
    return {};
  }
  const hid_t type = H5Dget_type(dataset);
  EXPECT_EQ(H5Tget_class(type), H5T_STRING);
  std::string value(H5Tget_size(type), '\0');
  EXPECT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()), 0);
  H5Tclose(type);
  H5Dclose(dataset);
  return value.substr(0, value.find('\0'));
}

// Checks one dataset's type, shape, data (index by index) and attributes.
void check_dataset(hid_t file, const std::string& name, const Patch& patch, int iteration,
                   double time, double dt, double shift) {
  SCOPED_TRACE(name);
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << "missing dataset";

  const hid_t type = H5Dget_type(dataset);
  EXPECT_GT(H5Tequal(type, H5T_IEEE_F64LE), 0) << "stored as IEEE F64LE";
  H5Tclose(type);

  const hid_t space = H5Dget_space(dataset);
  hsize_t dims[3] = {0, 0, 0};
  ASSERT_EQ(H5Sget_simple_extent_ndims(space), 3);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  H5Sclose(space);
  const saguaro::grid::Index3 alloc = patch.alloc();
  EXPECT_EQ(dims[0], static_cast<hsize_t>(alloc[2])); // {nz, ny, nx}
  EXPECT_EQ(dims[1], static_cast<hsize_t>(alloc[1]));
  EXPECT_EQ(dims[2], static_cast<hsize_t>(alloc[0]));

  const int g = patch.ghost();
  const std::vector<int> iorigin = int_attribute(dataset, "iorigin");
  ASSERT_EQ(iorigin.size(), 3u);
  for (int axis = 0; axis < 3; ++axis) EXPECT_EQ(iorigin[axis], patch.owned.lo[axis] - g);

  // value(z, y, x) = f(global index): C order, x fastest.
  std::vector<double> data(dims[0] * dims[1] * dims[2]);
  ASSERT_GE(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
  std::size_t wrong = 0;
  for (hsize_t z = 0; z < dims[0]; ++z)
    for (hsize_t y = 0; y < dims[1]; ++y)
      for (hsize_t x = 0; x < dims[2]; ++x) {
        const double expected =
            f(iorigin[0] + static_cast<int>(x), iorigin[1] + static_cast<int>(y),
              iorigin[2] + static_cast<int>(z)) +
            shift;
        if (data[(z * dims[1] + y) * dims[2] + x] != expected) ++wrong;
      }
  EXPECT_EQ(wrong, 0u);

  EXPECT_EQ(int_attribute(dataset, "level"), std::vector<int>{0});
  EXPECT_EQ(int_attribute(dataset, "carpet_mglevel"), std::vector<int>{0});
  EXPECT_EQ(int_attribute(dataset, "group_timelevel"), std::vector<int>{0});
  EXPECT_EQ(int_attribute(dataset, "timestep"), std::vector<int>{iteration}); // as Carpet
  EXPECT_EQ(double_attribute(dataset, "time"), std::vector<double>{time});
  EXPECT_EQ(double_attribute(dataset, "cctk_delta_time"), std::vector<double>{dt});
  EXPECT_EQ(string_attribute(dataset, "name"), "WaveToy::Phi");

  const std::vector<double> origin = double_attribute(dataset, "origin");
  const std::vector<double> delta = double_attribute(dataset, "delta");
  ASSERT_EQ(origin.size(), 3u);
  ASSERT_EQ(delta.size(), 3u);
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(origin[axis], patch.spec.origin[axis] + iorigin[axis] * patch.spec.spacing[axis]);
    EXPECT_EQ(delta[axis], patch.spec.spacing[axis]);
  }
  EXPECT_EQ(int_attribute(dataset, "cctk_nghostzones"), (std::vector<int>{g, g, g}));
  EXPECT_EQ(int_attribute(dataset, "ioffset"), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(int_attribute(dataset, "ioffsetdenom"), (std::vector<int>{1, 1, 1}));

  const std::vector<int> bbox = int_attribute(dataset, "cctk_bbox");
  ASSERT_EQ(bbox.size(), 6u);
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(bbox[2 * axis], patch.outer[axis][0] ? 1 : 0) << "axis " << axis;
    EXPECT_EQ(bbox[2 * axis + 1], patch.outer[axis][1] ? 1 : 0) << "axis " << axis;
    if (!patch.spec.periodic[axis]) { // an outer face is where the grid ends
      EXPECT_EQ(bbox[2 * axis], patch.owned.lo[axis] == 0 ? 1 : 0) << "axis " << axis;
      EXPECT_EQ(bbox[2 * axis + 1], patch.owned.hi[axis] == patch.spec.points[axis] ? 1 : 0)
          << "axis " << axis;
    }
  }
  H5Dclose(dataset);
}

hsize_t link_count(hid_t file) {
  H5G_info_t info{};
  H5Gget_info(file, &info);
  return info.nlinks;
}

std::vector<std::string> tmp_files(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".tmp") found.push_back(it->path().string());
  return found;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const char* kParameters = "Cactus::cctk_itlast = 10\nIOHDF5::out_every = 2\n";

struct Expect {
  std::string dataset;
  int iteration;
  double time, shift;
};

// One rank's file: exactly the expected datasets (the last one the latest output) and the
// metadata group. A helper, so that ASSERT leaves only it, never the collective test body.
void check_file(const std::string& path, const Patch& patch, const std::vector<Expect>& expected) {
  ASSERT_TRUE(fs::exists(path)) << path;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0) << path;
  EXPECT_EQ(link_count(file), expected.size() + 1); // the datasets and the metadata group
  for (const Expect& e : expected)
    check_dataset(file, e.dataset, patch, e.iteration, e.time, 0.125, e.shift);

  const hid_t group = H5Gopen2(file, "Parameters and Global Attributes", H5P_DEFAULT);
  EXPECT_GE(group, 0);
  if (group >= 0) {
    EXPECT_EQ(int_attribute(group, "nioprocs"), std::vector<int>{world_size()});
    EXPECT_EQ(int_attribute(group, "carpet_reflevels"), std::vector<int>{1});
    EXPECT_EQ(int_attribute(group, "GH$iteration"), std::vector<int>{expected.back().iteration});
    EXPECT_EQ(int_attribute(group, "main loop index"), std::vector<int>{expected.back().iteration});
    EXPECT_EQ(double_attribute(group, "carpet_global_time"),
              std::vector<double>{expected.back().time});
    EXPECT_EQ(double_attribute(group, "carpet_delta_time"), std::vector<double>{0.125});
    EXPECT_EQ(string_dataset(group, "All Parameters"), kParameters);
    EXPECT_EQ(string_dataset(group, "Datasets"), "WaveToy::Phi\n");
    H5Gclose(group);
  }
  H5Fclose(file);
}

TEST(Hdf5Output, CarpetLayoutAndAttributes) {
  SharedTempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path() + "/out"; // created on demand
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  const int rank = world_rank();

  std::vector<double> field = fill(patch, 0.0);
  saguaro::io::write_hdf5(dir, patch, "WaveToy", "Phi", field.data(), {3, 0.375, 0.125},
                          kParameters);

  const std::string path = dir + "/phi.file_" + std::to_string(rank) + ".h5";
  const std::string first = "WaveToy::Phi it=3 tl=0 rl=0 c=" + std::to_string(rank);
  const std::string second = "WaveToy::Phi it=7 tl=0 rl=0 c=" + std::to_string(rank);
  check_file(path, patch, {{first, 3, 0.375, 0.0}});

  // A second output appends a dataset and keeps the first.
  field = fill(patch, 1.0);
  saguaro::io::write_hdf5(dir, patch, "WaveToy", "Phi", field.data(), {7, 0.875, 0.125},
                          kParameters);
  check_file(path, patch, {{first, 3, 0.375, 0.0}, {second, 7, 0.875, 1.0}});

  // Writing the same iteration again (a rerun) replaces that dataset.
  field = fill(patch, 2.0);
  saguaro::io::write_hdf5(dir, patch, "WaveToy", "Phi", field.data(), {7, 0.875, 0.125},
                          kParameters);
  check_file(path, patch, {{first, 3, 0.375, 0.0}, {second, 7, 0.875, 2.0}});

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    EXPECT_TRUE(tmp_files(dir).empty());
    for (int r = 0; r < world_size(); ++r)
      EXPECT_TRUE(fs::exists(dir + "/phi.file_" + std::to_string(r) + ".h5")) << r;
  }
}

TEST(Hdf5Output, StaleTemporaryFileIsReplaced) {
  SharedTempDir tmp;
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  const std::string path = tmp.path() + "/u.file_" + std::to_string(world_rank()) + ".h5";
  std::ofstream(path + ".tmp") << "debris of a crashed write";

  const std::vector<double> field = fill(patch, 0.0);
  saguaro::io::write_hdf5(tmp.path(), patch, "WaveToy", "u", field.data(), {0, 0.0, 0.1}, "");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0); // nothing collective follows but the destructors
  EXPECT_GT(H5Lexists(file, ("WaveToy::u it=0 tl=0 rl=0 c=" + std::to_string(world_rank())).c_str(),
                      H5P_DEFAULT),
            0);
  const hid_t group = H5Gopen2(file, "Parameters and Global Attributes", H5P_DEFAULT);
  ASSERT_GE(group, 0);
  EXPECT_EQ(string_dataset(group, "All Parameters"), "");
  H5Gclose(group);
  H5Fclose(file);
}

TEST(Hdf5Output, FailureLeavesThePreviousFileIntact) {
  SharedTempDir tmp;
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  const std::string path = tmp.path() + "/u.file_" + std::to_string(world_rank()) + ".h5";
  const std::string garbage = "this is not an HDF5 file";
  std::ofstream(path) << garbage;

  const std::vector<double> field = fill(patch, 0.0);
  try {
    saguaro::io::write_hdf5(tmp.path(), patch, "WaveToy", "u", field.data(), {0, 0.0, 0.1}, "");
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(file_bytes(path), garbage);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// Bytes this process has read and written through system calls so far (/proc/self/io: rchar
// plus wchar; sendfile and copy_file_range count too), or -1 where the kernel does not say.
long long io_bytes() {
  std::ifstream in("/proc/self/io");
  long long total = -1;
  std::string key;
  long long value = 0;
  while (in >> key >> value)
    if (key == "rchar:" || key == "wchar:") total = (total < 0 ? 0 : total) + value;
  return total;
}

// The 40th write to a file moves as many bytes as the 5th: a write does not copy, read or
// rewrite what the file already holds (issue 23: the whole file was copied at every output, so
// the cost of a write grew with the run).
TEST(Hdf5Output, AWriteMovesTheSameBytesWhateverTheFileHolds) {
  if (io_bytes() < 0) GTEST_SKIP() << "no /proc/self/io here";
  SharedTempDir tmp;
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  const std::vector<double> field = fill(patch, 0.0);
  std::vector<long long> moved;
  for (int it = 1; it <= 40; ++it) {
    const long long before = io_bytes();
    saguaro::io::write_hdf5(tmp.path(), patch, "WaveToy", "u", field.data(),
                            {it, 0.125 * it, 0.125}, kParameters);
    moved.push_back(io_bytes() - before);
  }
  const long long one_dataset = static_cast<long long>(patch.points() * sizeof(double));
  EXPECT_GT(moved[4], one_dataset);
  EXPECT_LT(moved[39], moved[4] * 3 / 2) << "write 5 moved " << moved[4] << " bytes, write 40 "
                                         << moved[39] << " (a dataset is " << one_dataset << ")";
}

std::vector<Expect> outputs(int rank, int from, int to) {
  std::vector<Expect> out;
  for (int it = from; it <= to; ++it)
    out.push_back({"WaveToy::Phi it=" + std::to_string(it) + " tl=0 rl=0 c=" + std::to_string(rank),
                   it, 0.125 * it, double(it)});
  return out;
}

// A write starts from the version the last one replaced (<file>.prev, a whole file that lacks
// only the newest dataset); without it, or with a damaged one, it starts from a copy of the file.
TEST(Hdf5Output, ThePreviousVersionIsKeptAndRebuiltWhenLost) {
  SharedTempDir tmp;
  Decomposition decomposition(test_spec(), MPI_COMM_WORLD);
  const Patch& patch = decomposition.patch();
  const int rank = world_rank();
  const std::string path = tmp.path() + "/phi.file_" + std::to_string(rank) + ".h5";
  auto write = [&](int it) {
    const std::vector<double> field = fill(patch, double(it));
    saguaro::io::write_hdf5(tmp.path(), patch, "WaveToy", "Phi", field.data(),
                            {it, 0.125 * it, 0.125}, kParameters);
  };
  for (int it = 1; it <= 4; ++it) write(it);
  check_file(path, patch, outputs(rank, 1, 4));
  check_file(path + ".prev", patch, outputs(rank, 1, 3));

  fs::remove(path + ".prev"); // lost (a crash between the renames): the file is copied
  write(5);
  check_file(path, patch, outputs(rank, 1, 5));
  check_file(path + ".prev", patch, outputs(rank, 1, 4));

  std::ofstream(path + ".prev") << "damaged"; // not an HDF5 file: the file is copied
  std::ofstream(path + ".tmp") << "debris of a crashed write";
  write(6);
  check_file(path, patch, outputs(rank, 1, 6));

  saguaro::io::finish_hdf5(tmp.path(), "Phi", rank); // the end of a run drops it
  EXPECT_FALSE(fs::exists(path + ".prev"));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  write(7); // a run that continues the file
  check_file(path, patch, outputs(rank, 1, 7));
  check_file(path + ".prev", patch, outputs(rank, 1, 6));
}

// A fresh run's truncation: every rank's file of the variable, of any rank count, and what
// writes left beside them; nothing else.
TEST(Hdf5Output, RemovingARunsOutputLeavesOtherFiles) {
  SharedTempDir tmp;
  const std::vector<std::string> doomed = {"phi.file_0.h5", "phi.file_7.h5", "phi.file_1.h5.prev",
                                           "phi.file_12.h5.tmp", "phi.file_3.h5.prev.tmp"};
  const std::vector<std::string> kept = {"Phi.norms.tsv", "phix.file_0.h5",    "pi.file_0.h5",
                                         "phi.file_.h5",  "phi.file_0.h5.old", "phi.h5"};
  if (world_rank() == 0)
    for (const auto* names : {&doomed, &kept})
      for (const std::string& name : *names) std::ofstream(tmp.path() + "/" + name) << "x";
  MPI_Barrier(MPI_COMM_WORLD);
  saguaro::io::remove_hdf5_output(tmp.path(), "Phi", MPI_COMM_WORLD);
  for (const std::string& name : doomed) EXPECT_FALSE(fs::exists(tmp.path() + "/" + name)) << name;
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(tmp.path() + "/" + name)) << name;
  saguaro::io::remove_hdf5_output(tmp.path() + "/none", "Phi", MPI_COMM_WORLD); // no directory
}

} // namespace
