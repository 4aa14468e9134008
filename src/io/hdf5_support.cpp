// HDF5 plumbing shared by the output and the checkpoints (see hdf5_support.hpp).
#include "io/hdf5_support.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace saguaro::io::h5 {

namespace fs = std::filesystem;

namespace {

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

} // namespace

void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what + " failed: " + hdf5_reason());
}

Id checked(hid_t id, Id::Closer closer, const std::string& path, const std::string& what) {
  if (id < 0) fail(path, what);
  return Id(id, closer);
}
void checked(herr_t status, const std::string& path, const std::string& what) {
  if (status < 0) fail(path, what);
}

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
static void write_attribute(const File& file, hid_t loc, const char* name, hid_t type,
                            const void* values, hsize_t count) {
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
static Id string_type(const File& file, std::size_t length) {
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
void write_u64(const File& file, hid_t loc, const char* name, std::uint64_t value) {
  write_attribute(file, loc, name, H5T_NATIVE_UINT64, &value, 0);
}
bool attribute_exists(const File& file, hid_t loc, const char* name) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists < 0) fail(file.path, std::string("H5Aexists(") + name + ")");
  return exists > 0;
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

// The memory dataspace of a patch array (its allocated box, rows patch.pitch() points apart)
// with `part` selected.
Id array_selection(const File& file, const grid::Patch& patch, const grid::Box& part) {
  const grid::Box allocated = patch.allocated();
  grid::Index3 memory = extent(allocated);
  memory[0] = patch.pitch();
  const auto dims = zyx(memory);
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

} // namespace saguaro::io::h5
