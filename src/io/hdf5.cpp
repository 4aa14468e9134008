// HDF5 output in CarpetIOHDF5's layout, and checkpoints (write, find, read on any rank count).
//
// Every HDF5 call's result is checked; a failure throws std::runtime_error naming the file, the
// operation and HDF5's own reason (read from the error stack). HDF5's automatic printing of
// the error stack is switched off for the duration of each public call and restored after.
#include "io/io.hpp"

#include "support/files.hpp"
#include "support/text.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace saguaro::io {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// HDF5 plumbing

// Silences HDF5's automatic error printing while alive; restores the previous handler.
class QuietHdf5 {
public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

herr_t collect_error(unsigned n, const H5E_error2_t* err, void* client) {
  auto* out = static_cast<std::string*>(client);
  if (n >= 4) return 0; // the outermost few entries say enough
  std::string line = err->func_name != nullptr ? std::string(err->func_name) + ": " : "";
  line += err->desc != nullptr ? err->desc : "";
  char minor[128] = {0};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof minor) > 0 && minor[0] != 0)
    line += std::string(" [") + minor + "]";
  if (!out->empty()) *out += "; ";
  *out += line;
  return 0;
}

// HDF5's reason for the last failure, from the default error stack (which it then clears).
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason.empty() ? "unknown HDF5 error" : reason;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what + " failed: " + hdf5_reason());
}

// An HDF5 identifier closed on scope exit.
class Id {
public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Id() { reset(); }
  Id(Id&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  // Closes now, reporting failure (H5Fclose flushes, so its result matters).
  void close(const std::string& path, const std::string& what) {
    const hid_t id = std::exchange(id_, H5I_INVALID_HID);
    if (id >= 0 && closer_(id) < 0) fail(path, what);
  }

private:
  void reset() {
    if (id_ >= 0) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

Id checked(hid_t id, Id::Closer closer, const std::string& path, const std::string& what) {
  if (id < 0) fail(path, what);
  return Id(id, closer);
}
void checked(herr_t status, const std::string& path, const std::string& what) {
  if (status < 0) fail(path, what);
}

// A file handle that knows its path, for error messages.
struct File {
  std::string path;
  Id id;
};

File create_file(const std::string& path) {
  return {path, checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                        path, "H5Fcreate")};
}
File open_file(const std::string& path, bool write) {
  return {path, checked(H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT),
                        H5Fclose, path, write ? "H5Fopen (read-write)" : "H5Fopen")};
}

bool link_exists(const File& file, hid_t loc, const std::string& name) {
  const htri_t exists = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail(file.path, "H5Lexists(" + name + ")");
  return exists > 0;
}

Id simple_space(const File& file, int rank, const hsize_t* dims) {
  return checked(H5Screate_simple(rank, dims, nullptr), H5Sclose, file.path, "H5Screate_simple");
}
Id scalar_space(const File& file) {
  return checked(H5Screate(H5S_SCALAR), H5Sclose, file.path, "H5Screate");
}

// Writes an attribute of `count` values (count 0: a scalar), replacing one of the same name.
void write_attribute(const File& file, hid_t loc, const char* name, hid_t type, const void* values,
                     hsize_t count) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists < 0) fail(file.path, std::string("H5Aexists(") + name + ")");
  if (exists > 0) checked(H5Adelete(loc, name), file.path, std::string("H5Adelete(") + name + ")");
  Id space = count == 0 ? scalar_space(file) : simple_space(file, 1, &count);
  Id attribute = checked(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                         file.path, std::string("H5Acreate2(") + name + ")");
  checked(H5Awrite(attribute, type, values), file.path, std::string("H5Awrite(") + name + ")");
  attribute.close(file.path, "H5Aclose");
}
void write_int(const File& file, hid_t loc, const char* name, int value) {
  write_attribute(file, loc, name, H5T_NATIVE_INT, &value, 0);
}
void write_ints(const File& file, hid_t loc, const char* name, const int* values, hsize_t n) {
  write_attribute(file, loc, name, H5T_NATIVE_INT, values, n);
}
void write_double(const File& file, hid_t loc, const char* name, double value) {
  write_attribute(file, loc, name, H5T_NATIVE_DOUBLE, &value, 0);
}
void write_doubles(const File& file, hid_t loc, const char* name, const double* values, hsize_t n) {
  write_attribute(file, loc, name, H5T_NATIVE_DOUBLE, values, n);
}
Id string_type(const File& file, std::size_t length) {
  Id type = checked(H5Tcopy(H5T_C_S1), H5Tclose, file.path, "H5Tcopy");
  checked(H5Tset_size(type, length + 1), file.path, "H5Tset_size");
  return type;
}
void write_string(const File& file, hid_t loc, const char* name, const std::string& value) {
  Id type = string_type(file, value.size());
  write_attribute(file, loc, name, type, value.c_str(), 0);
}
// A string too large for an attribute, as a scalar fixed-length string dataset (Carpet's
// WriteLargeAttribute), replacing one of the same name.
void write_string_dataset(const File& file, hid_t loc, const char* name, const std::string& value) {
  if (link_exists(file, loc, name))
    checked(H5Ldelete(loc, name, H5P_DEFAULT), file.path, std::string("H5Ldelete(") + name + ")");
  Id type = string_type(file, value.size());
  Id space = scalar_space(file);
  Id dataset = checked(H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose, file.path, std::string("H5Dcreate2(") + name + ")");
  checked(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, value.c_str()), file.path,
          std::string("H5Dwrite(") + name + ")");
  dataset.close(file.path, "H5Dclose");
}

// Reads a numeric attribute of exactly `n` values (n = 1 also accepts a scalar).
void read_attribute(const File& file, hid_t loc, const std::string& where, const char* name,
                    hid_t type, void* values, hssize_t n) {
  const std::string what = "attribute '" + std::string(name) + "' of " + where;
  const htri_t exists = H5Aexists(loc, name);
  if (exists < 0) fail(file.path, "H5Aexists(" + what + ")");
  if (exists == 0) throw std::runtime_error(file.path + ": missing " + what);
  Id attribute =
      checked(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, file.path, "H5Aopen(" + what + ")");
  Id space = checked(H5Aget_space(attribute), H5Sclose, file.path, "H5Aget_space(" + what + ")");
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  if (count != n)
    throw std::runtime_error(file.path + ": " + what + " has " + std::to_string(count) +
                             " values, expected " + std::to_string(n));
  checked(H5Aread(attribute, type, values), file.path, "H5Aread(" + what + ")");
}
int read_int(const File& file, hid_t loc, const std::string& where, const char* name) {
  int value = 0;
  read_attribute(file, loc, where, name, H5T_NATIVE_INT, &value, 1);
  return value;
}
double read_double(const File& file, hid_t loc, const std::string& where, const char* name) {
  double value = 0;
  read_attribute(file, loc, where, name, H5T_NATIVE_DOUBLE, &value, 1);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Files and directories

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

void ensure_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Another rank may have created it at the same moment: only the outcome matters.
  if (!fs::is_directory(dir))
    throw std::runtime_error("cannot create directory " + dir +
                             (ec ? ": " + ec.message() : std::string()));
}

// A file made under `tmp` (a fixed name, so that a later run finds and removes the debris of a
// crashed write) and renamed over its final name once complete and on disk.
support::AtomicWrite durable_via(const std::string& tmp) {
  return support::AtomicWrite{"saguaro output", tmp, true};
}

void remove_quietly(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

// HDF5 dims {z, y, x} of a box.
std::array<hsize_t, 3> zyx(const grid::Index3& extent) {
  return {static_cast<hsize_t>(extent[2]), static_cast<hsize_t>(extent[1]),
          static_cast<hsize_t>(extent[0])};
}
grid::Index3 extent(const grid::Box& box) {
  return {std::max(0, box.hi[0] - box.lo[0]), std::max(0, box.hi[1] - box.lo[1]),
          std::max(0, box.hi[2] - box.lo[2])};
}

// The memory dataspace of a patch array (its allocated box) with `part` selected.
Id array_selection(const File& file, const grid::Patch& patch, const grid::Box& part) {
  const grid::Box allocated = patch.allocated();
  const auto dims = zyx(extent(allocated));
  Id space = simple_space(file, 3, dims.data());
  const auto start = zyx(
      {part.lo[0] - allocated.lo[0], part.lo[1] - allocated.lo[1], part.lo[2] - allocated.lo[2]});
  const auto count = zyx(extent(part));
  checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
          file.path, "H5Sselect_hyperslab (memory)");
  return space;
}

// ---------------------------------------------------------------------------------------------
// MPI agreement: every rank throws the same error when any rank failed.

void agree(MPI_Comm comm, const std::string& local_error, const char* operation) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int mine = local_error.empty() ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return;
  std::string message = local_error;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
  throw std::runtime_error(
      std::string(operation) + ": " + message +
      (rank == first ? std::string() : " (on rank " + std::to_string(first) + ")"));
}

template <class F>
std::string capture(F&& work) {
  try {
    work();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Names

constexpr const char* kMetadataGroup = "Parameters and Global Attributes";
constexpr const char* kAllParameters = "All Parameters";

std::string checkpoint_stem(const std::string& dir, int iteration) {
  return (fs::path(dir) / ("checkpoint.chkpt.it_" + std::to_string(iteration))).string();
}
std::string checkpoint_file(const std::string& dir, int iteration, int rank) {
  return checkpoint_stem(dir, iteration) + ".file_" + std::to_string(rank) + ".h5";
}
std::string checkpoint_marker(const std::string& dir, int iteration) {
  return checkpoint_stem(dir, iteration) + ".done";
}

// Iterations of the complete checkpoints (those with a `.done` marker) in `dir`.
std::set<int> complete_checkpoints(const std::string& dir) {
  static const std::regex marker(R"(checkpoint\.chkpt\.it_(\d+)\.done)");
  std::set<int> found;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::smatch match;
    if (std::regex_match(name, match, marker) && match[1].length() < 10)
      found.insert(std::stoi(match[1].str()));
  }
  return found;
}

// Removes checkpoint `iteration`: its marker first (so it no longer counts), then every file.
void remove_checkpoint(const std::string& dir, int iteration) {
  remove_quietly(checkpoint_marker(dir, iteration));
  remove_quietly(checkpoint_marker(dir, iteration) + ".tmp");
  const std::regex file("checkpoint\\.chkpt\\.it_" + std::to_string(iteration) +
                        R"(\.file_\d+\.h5(\.tmp)?)");
  std::vector<fs::path> doomed;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec))
    if (std::regex_match(it->path().filename().string(), file)) doomed.push_back(it->path());
  for (const auto& path : doomed) remove_quietly(path.string());
}

} // namespace

// =============================================================================================
// Carpet-style output

void write_hdf5(const std::string& dir, const grid::Patch& patch, const std::string& thorn,
                const std::string& variable, const double* field, const OutputStamp& stamp,
                const std::string& parameters_text) {
  QuietHdf5 quiet;
  ensure_directory(dir);
  const std::string path =
      (fs::path(dir) / (support::lower(variable) + ".file_" + std::to_string(patch.rank) + ".h5"))
          .string();
  const std::string tmp = path + ".tmp";
  const std::string fullname = thorn + "::" + variable;
  const std::string dataset_name = fullname + " it=" + std::to_string(stamp.iteration) +
                                   " tl=0 rl=0 c=" + std::to_string(patch.rank);

  // The previous good file stays untouched until the new one is complete.
  support::write_atomically(
      path,
      [&](const fs::path&) {
        const bool existed = fs::exists(path);
        if (existed) {
          std::error_code ec;
          fs::copy_file(path, tmp, fs::copy_options::overwrite_existing, ec);
          if (ec)
            throw std::runtime_error("cannot copy " + path + " to " + tmp + ": " + ec.message());
        }
        File file = existed ? open_file(tmp, true) : create_file(tmp);
        file.path = path + " (via " + tmp + ")";

        // Global metadata, as CarpetIOHDF5's WriteMetadata writes it on file creation; the
        // iteration and time are kept current.
        {
          const bool has_group = existed && link_exists(file, file.id, kMetadataGroup);
          Id group = has_group ? checked(H5Gopen2(file.id, kMetadataGroup, H5P_DEFAULT), H5Gclose,
                                         file.path, "H5Gopen2(metadata)")
                               : checked(H5Gcreate2(file.id, kMetadataGroup, H5P_DEFAULT,
                                                    H5P_DEFAULT, H5P_DEFAULT),
                                         H5Gclose, file.path, "H5Gcreate2(metadata)");
          write_int(file, group, "nioprocs", patch.ranks);
          write_int(file, group, "carpet_reflevels", 1);
          write_int(file, group, "GH$iteration", stamp.iteration);
          write_int(file, group, "main loop index", stamp.iteration);
          write_double(file, group, "carpet_global_time", stamp.time);
          write_double(file, group, "carpet_delta_time", stamp.dt);
          if (!has_group) {
            write_string(file, group, "Cactus version", "Saguaro");
            write_string_dataset(file, group, "Datasets", fullname + "\n");
            write_string_dataset(file, group, kAllParameters, parameters_text);
          }
          group.close(file.path, "H5Gclose(metadata)");
        }

        // The dataset: the allocated box, C order [z][y][x].
        if (link_exists(file, file.id, dataset_name))
          checked(H5Ldelete(file.id, dataset_name.c_str(), H5P_DEFAULT), file.path,
                  "H5Ldelete(" + dataset_name + ")");
        const grid::Box box = patch.allocated();
        const auto dims = zyx(extent(box));
        Id space = simple_space(file, 3, dims.data());
        Id dataset = checked(H5Dcreate2(file.id, dataset_name.c_str(), H5T_IEEE_F64LE, space,
                                        H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                             H5Dclose, file.path, "H5Dcreate2(" + dataset_name + ")");
        if (dims[0] * dims[1] * dims[2] > 0)
          checked(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, field),
                  file.path, "H5Dwrite(" + dataset_name + ")");

        // The attributes of CarpetIOHDF5's AddAttributes, in its order and types.
        const int ghost = patch.ghost();
        int iorigin[3], nghost[3], bbox[6], ioffset[3] = {0, 0, 0}, ioffsetdenom[3] = {1, 1, 1};
        double origin[3], delta[3];
        for (int axis = 0; axis < 3; ++axis) {
          iorigin[axis] = box.lo[axis];
          origin[axis] = patch.coordinate(axis, box.lo[axis]);
          delta[axis] = patch.spec.spacing[axis];
          nghost[axis] = ghost;
          bbox[2 * axis] = patch.outer[axis][0] ? 1 : 0;
          bbox[2 * axis + 1] = patch.outer[axis][1] ? 1 : 0;
        }
        write_int(file, dataset, "level", 0);
        write_int(file, dataset, "carpet_mglevel", 0);
        write_int(file, dataset, "timestep", stamp.iteration); // Carpet: the iteration
        write_int(file, dataset, "group_timelevel", 0);
        write_double(file, dataset, "time", stamp.time);
        write_double(file, dataset, "cctk_delta_time", stamp.dt);
        write_string(file, dataset, "name", fullname);
        write_ints(file, dataset, "cctk_bbox", bbox, 6);
        write_ints(file, dataset, "cctk_nghostzones", nghost, 3);
        write_doubles(file, dataset, "origin", origin, 3);
        write_doubles(file, dataset, "delta", delta, 3);
        write_ints(file, dataset, "iorigin", iorigin, 3);
        write_ints(file, dataset, "ioffset", ioffset, 3);
        write_ints(file, dataset, "ioffsetdenom", ioffsetdenom, 3);

        dataset.close(file.path, "H5Dclose");
        space.close(file.path, "H5Sclose");
        file.id.close(file.path, "H5Fclose");
      },
      durable_via(tmp));
}

// =============================================================================================
// Checkpoints

void write_checkpoint(const std::string& dir, const grid::Decomposition& decomposition,
                      const std::vector<std::string>& names,
                      const std::vector<const double*>& fields, const CheckpointState& state,
                      const std::string& parameters_text, int keep) {
  MPI_Comm comm = decomposition.comm();
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const grid::Patch& patch = decomposition.patch();
  const int iteration = state.iteration;

  // 1. Rank 0 makes the directory and clears any earlier checkpoint of this iteration, so a
  //    crash below cannot leave a marker next to a mix of old and new files.
  std::string error = capture([&] {
    if (names.size() != fields.size())
      throw std::invalid_argument("write_checkpoint: " + std::to_string(names.size()) +
                                  " names but " + std::to_string(fields.size()) + " fields");
    if (rank == 0) {
      ensure_directory(dir);
      remove_checkpoint(dir, iteration);
    }
  });
  agree(comm, error, "write_checkpoint");

  // 2. Every rank writes its valid box (owned points plus the outer boundary layers, which
  //    the time integration evolves too) to a temporary file and renames it when complete.
  const std::string path = checkpoint_file(dir, iteration, rank);
  const std::string tmp = path + ".tmp";
  error = capture([&] {
    QuietHdf5 quiet;
    support::write_atomically(
        path,
        [&](const fs::path&) {
          File file = create_file(tmp);
          file.path = path + " (via " + tmp + ")";
          const grid::Index3 points = patch.spec.points;
          write_int(file, file.id, "iteration", iteration);
          write_double(file, file.id, "time", state.time);
          write_double(file, file.id, "dt", state.dt);
          write_int(file, file.id, "nprocs", size);
          write_int(file, file.id, "rank", rank);
          write_ints(file, file.id, "grid_points", points.data(), 3);
          write_int(file, file.id, "ghost", patch.ghost());
          write_doubles(file, file.id, "origin", patch.spec.origin.data(), 3);
          write_doubles(file, file.id, "spacing", patch.spec.spacing.data(), 3);
          {
            Id group =
                checked(H5Gcreate2(file.id, kMetadataGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        H5Gclose, file.path, "H5Gcreate2(metadata)");
            write_int(file, group, "nioprocs", size);
            write_int(file, group, "GH$iteration", iteration);
            write_string_dataset(file, group, kAllParameters, parameters_text);
            group.close(file.path, "H5Gclose(metadata)");
          }

          const grid::Box owned = patch.valid();
          const auto dims = zyx(extent(owned));
          const bool empty = dims[0] * dims[1] * dims[2] == 0;
          for (std::size_t v = 0; v < names.size(); ++v) {
            const std::string& name = names[v];
            if (link_exists(file, file.id, name))
              throw std::invalid_argument(file.path + ": variable '" + name + "' given twice");
            Id space = simple_space(file, 3, dims.data());
            Id dataset = checked(H5Dcreate2(file.id, name.c_str(), H5T_IEEE_F64LE, space,
                                            H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                 H5Dclose, file.path, "H5Dcreate2(" + name + ")");
            if (!empty) {
              Id memory = array_selection(file, patch, owned);
              checked(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory, H5S_ALL, H5P_DEFAULT, fields[v]),
                      file.path, "H5Dwrite(" + name + ")");
            }
            write_ints(file, dataset, "iorigin", owned.lo.data(), 3);
            write_ints(file, dataset, "grid_points", points.data(), 3);
            dataset.close(file.path, "H5Dclose(" + name + ")");
          }
          file.id.close(file.path, "H5Fclose");
        },
        durable_via(tmp));
  });
  agree(comm, error, "write_checkpoint");

  // 3. Every file is in place: rank 0 marks the checkpoint complete, then drops old ones.
  error = capture([&] {
    if (rank != 0) return;
    const std::string marker = checkpoint_marker(dir, iteration);
    const std::string marker_tmp = marker + ".tmp";
    support::write_atomically(
        marker,
        [&](const fs::path&) {
          std::FILE* file = std::fopen(marker_tmp.c_str(), "w");
          if (file == nullptr)
            throw std::runtime_error("cannot create " + marker_tmp + ": " + errno_text(errno));
          std::fprintf(file, "iteration %d nprocs %d\n", iteration, size);
          if (std::fclose(file) != 0)
            throw std::runtime_error("cannot write " + marker_tmp + ": " + errno_text(errno));
        },
        durable_via(marker_tmp));

    // Keep this checkpoint and the newest keep-1 complete older ones; complete ones at later
    // iterations (an abandoned earlier run) are left alone. keep <= 0 keeps everything.
    if (keep > 0) {
      std::vector<int> older;
      for (int it : complete_checkpoints(dir))
        if (it < iteration) older.push_back(it);
      std::sort(older.rbegin(), older.rend());
      for (std::size_t i = static_cast<std::size_t>(keep - 1); i < older.size(); ++i)
        remove_checkpoint(dir, older[i]);
    }
  });
  agree(comm, error, "write_checkpoint");
}

int newest_checkpoint(const std::string& dir) {
  const std::set<int> found = complete_checkpoints(dir);
  return found.empty() ? -1 : *found.rbegin();
}

CheckpointState read_checkpoint(const std::string& dir, int iteration,
                                const grid::Decomposition& decomposition,
                                const std::vector<std::string>& names,
                                const std::vector<double*>& fields) {
  MPI_Comm comm = decomposition.comm();
  const grid::Patch& patch = decomposition.patch();
  CheckpointState state;

  const std::string error = capture([&] {
    QuietHdf5 quiet;
    if (names.size() != fields.size())
      throw std::invalid_argument("read_checkpoint: " + std::to_string(names.size()) +
                                  " names but " + std::to_string(fields.size()) + " fields");
    const std::string first = checkpoint_file(dir, iteration, 0);
    if (!fs::exists(first)) throw std::runtime_error(first + ": no such checkpoint file");
    int nprocs = 0;
    {
      File file = open_file(first, false);
      nprocs = read_int(file, file.id, "the file", "nprocs");
      const int stored = read_int(file, file.id, "the file", "iteration");
      if (stored != iteration)
        throw std::runtime_error(first + ": holds iteration " + std::to_string(stored) +
                                 ", expected " + std::to_string(iteration));
      state.iteration = stored;
      state.time = read_double(file, file.id, "the file", "time");
      state.dt = read_double(file, file.id, "the file", "dt");
      if (nprocs < 1) throw std::runtime_error(first + ": bad nprocs " + std::to_string(nprocs));
    }

    // The valid boxes of any decomposition tile the grid and its outer layers.
    const grid::Box owned = patch.valid();
    const grid::Index3 size = extent(owned);
    const std::size_t owned_points = static_cast<std::size_t>(size[0]) *
                                     static_cast<std::size_t>(size[1]) *
                                     static_cast<std::size_t>(size[2]);
    // How often each owned point of each variable was read: exactly once in the end.
    std::vector<std::vector<unsigned char>> covered(names.size(),
                                                    std::vector<unsigned char>(owned_points, 0));
    const grid::Index3 points = patch.spec.points;

    for (int r = 0; r < nprocs; ++r) {
      const std::string path = checkpoint_file(dir, iteration, r);
      if (!fs::exists(path))
        throw std::runtime_error(path + ": missing (checkpoint written by " +
                                 std::to_string(nprocs) + " ranks)");
      File file = open_file(path, false);
      int file_points[3];
      read_attribute(file, file.id, "the file", "grid_points", H5T_NATIVE_INT, file_points, 3);
      if (file_points[0] != points[0] || file_points[1] != points[1] || file_points[2] != points[2])
        throw std::runtime_error(
            path + ": grid differs: the checkpoint has " + std::to_string(file_points[0]) + "x" +
            std::to_string(file_points[1]) + "x" + std::to_string(file_points[2]) +
            " points, this run " + std::to_string(points[0]) + "x" + std::to_string(points[1]) +
            "x" + std::to_string(points[2]));

      for (std::size_t v = 0; v < names.size(); ++v) {
        const std::string& name = names[v];
        if (!link_exists(file, file.id, name))
          throw std::runtime_error(path + ": variable '" + name + "' missing from checkpoint");
        Id dataset = checked(H5Dopen2(file.id, name.c_str(), H5P_DEFAULT), H5Dclose, path,
                             "H5Dopen2(" + name + ")");
        Id space = checked(H5Dget_space(dataset), H5Sclose, path, "H5Dget_space(" + name + ")");
        hsize_t dims[3] = {0, 0, 0};
        if (H5Sget_simple_extent_ndims(space) != 3 ||
            H5Sget_simple_extent_dims(space, dims, nullptr) != 3)
          throw std::runtime_error(path + ": variable '" + name + "' is not a 3D dataset");
        grid::Box box;
        read_attribute(file, dataset, "'" + name + "'", "iorigin", H5T_NATIVE_INT, box.lo.data(),
                       3);
        for (int axis = 0; axis < 3; ++axis)
          box.hi[axis] = box.lo[axis] + static_cast<int>(dims[2 - axis]);
        const grid::Box part = grid::intersect(box, owned);
        if (part.empty()) continue;

        const auto start =
            zyx({part.lo[0] - box.lo[0], part.lo[1] - box.lo[1], part.lo[2] - box.lo[2]});
        const auto count = zyx(extent(part));
        checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                    nullptr),
                path, "H5Sselect_hyperslab(" + name + ")");
        Id memory = array_selection(file, patch, part);
        checked(H5Dread(dataset, H5T_NATIVE_DOUBLE, memory, space, H5P_DEFAULT, fields[v]), path,
                "H5Dread(" + name + ")");

        for (int k = part.lo[2]; k < part.hi[2]; ++k)
          for (int j = part.lo[1]; j < part.hi[1]; ++j)
            for (int i = part.lo[0]; i < part.hi[0]; ++i) {
              auto& n = covered[v][(static_cast<std::size_t>(k - owned.lo[2]) * size[1] +
                                    static_cast<std::size_t>(j - owned.lo[1])) *
                                       size[0] +
                                   static_cast<std::size_t>(i - owned.lo[0])];
              if (n < 255) ++n;
            }
      }
    }

    for (std::size_t v = 0; v < names.size(); ++v)
      for (std::size_t p = 0; p < owned_points; ++p)
        if (covered[v][p] != 1) {
          const int i = owned.lo[0] + static_cast<int>(p % size[0]);
          const int j = owned.lo[1] + static_cast<int>((p / size[0]) % size[1]);
          const int k =
              owned.lo[2] + static_cast<int>(p / (static_cast<std::size_t>(size[0]) * size[1]));
          throw std::runtime_error(checkpoint_stem(dir, iteration) + ".file_*.h5: variable '" +
                                   names[v] + "': point (" + std::to_string(i) + "," +
                                   std::to_string(j) + "," + std::to_string(k) + ") read " +
                                   std::to_string(covered[v][p]) + " times, expected once");
        }
  });
  agree(comm, error, "read_checkpoint");
  return state;
}

} // namespace saguaro::io
