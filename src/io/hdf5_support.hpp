// What the HDF5 output (hdf5.cpp) and the checkpoints (checkpoint.cpp) share: checked HDF5
// calls that throw std::runtime_error naming the file, the operation and HDF5's own reason,
// identifiers closed on scope exit, attributes, files and directories, and MPI agreement on
// errors. Not part of the io stage's interface.
#pragma once

#include "grid/grid.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>

namespace saguaro::io::h5 {

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

// Throws std::runtime_error "<path>: <what> failed: <HDF5's reason>".
[[noreturn]] void fail(const std::string& path, const std::string& what);

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

Id checked(hid_t id, Id::Closer closer, const std::string& path, const std::string& what);
void checked(herr_t status, const std::string& path, const std::string& what);

// A file handle that knows its path, for error messages.
struct File {
  std::string path;
  Id id;
};
File create_file(const std::string& path);
File open_file(const std::string& path, bool write);

bool link_exists(const File& file, hid_t loc, const std::string& name);
Id simple_space(const File& file, int rank, const hsize_t* dims);
Id scalar_space(const File& file);

// Attributes of `count` values (count 0: a scalar), replacing one of the same name.
void write_int(const File& file, hid_t loc, const char* name, int value);
void write_ints(const File& file, hid_t loc, const char* name, const int* values, hsize_t n);
void write_double(const File& file, hid_t loc, const char* name, double value);
void write_doubles(const File& file, hid_t loc, const char* name, const double* values, hsize_t n);
void write_string(const File& file, hid_t loc, const char* name, const std::string& value);
void write_u64(const File& file, hid_t loc, const char* name, std::uint64_t value);
// A string too large for an attribute, as a scalar fixed-length string dataset (Carpet's
// WriteLargeAttribute), replacing one of the same name.
void write_string_dataset(const File& file, hid_t loc, const char* name, const std::string& value);

// Reads a numeric attribute of exactly `n` values (n = 1 also accepts a scalar).
void read_attribute(const File& file, hid_t loc, const std::string& where, const char* name,
                    hid_t type, void* values, hssize_t n);
bool attribute_exists(const File& file, hid_t loc, const char* name);
int read_int(const File& file, hid_t loc, const std::string& where, const char* name);
double read_double(const File& file, hid_t loc, const std::string& where, const char* name);

std::string errno_text(int error);
void ensure_directory(const std::string& dir);
void remove_quietly(const std::string& path);

// HDF5 dims {z, y, x} of a box.
std::array<hsize_t, 3> zyx(const grid::Index3& extent);
grid::Index3 extent(const grid::Box& box);
// The memory dataspace of a patch array (its allocated box) with `part` selected.
Id array_selection(const File& file, const grid::Patch& patch, const grid::Box& part);

// MPI agreement: every rank throws the same std::runtime_error ("<operation>: <message>",
// the first failing rank's) when any rank's `local_error` is not empty.
void agree(MPI_Comm comm, const std::string& local_error, const char* operation);

// Runs `work`; its exception's message, or "" when it returned.
template <class F>
std::string capture(F&& work) {
  try {
    work();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

inline constexpr const char* kMetadataGroup = "Parameters and Global Attributes";
inline constexpr const char* kAllParameters = "All Parameters";

} // namespace saguaro::io::h5
