// HDF5 output in CarpetIOHDF5's layout: one file per variable per rank, one dataset per output
// iteration, appended at a cost that does not grow with the file, and safe against a crash at
// any instant.
//
// Why not append in place (H5Fopen read-write, H5Dcreate, H5Fflush)? HDF5 1.10 updates a
// group's index (B-tree node, symbol table node, local heap) in place with several writes; a
// process killed between two of them leaves an index that loses the *earlier* datasets too.
// SWMR, which orders those writes for concurrent readers, cannot create datasets in 1.10, and
// leaves the file marked open after a crash (h5clear needed before h5py opens it). So the file
// readers see, `<var>.file_<rank>.h5`, is never modified: every write makes the next version
// under `<file>.tmp` and renames it over the file (support::write_atomically, durable).
//
// The next version is not copied from the file (that made the cost of a write grow with the
// run). The version the last write replaced is kept as `<file>.prev` (a hard link, moved there
// after the rename): it holds every dataset of the file but the newest one. A write renames
// `<file>.prev` to `<file>.tmp`, copies the file's newest dataset into it (H5Ocopy: the
// dataset named by the file's GH$iteration), adds its own dataset and renames it over the
// file; the replaced file becomes the next `<file>.prev`. The first write of a file leaves as
// `<file>.prev` the file without its dataset (the metadata alone), so that every later write
// does the same work: two datasets written per output, whatever the length of the run. Only
// when there is no `<file>.prev` (the first write of a run that continues an existing file, or
// after a crash in the middle of a write) is the file copied whole, once. finish_hdf5 removes
// `<file>.prev` at the end of a run.
#include "io/hdf5_support.hpp"
#include "io/io.hpp"

#include "support/files.hpp"
#include "support/text.hpp"

#include <mpi.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace saguaro::io {

namespace fs = std::filesystem;
using namespace h5;

namespace {

std::string output_file(const std::string& dir, const std::string& variable, int rank) {
  return (fs::path(dir) / (support::lower(variable) + ".file_" + std::to_string(rank) + ".h5"))
      .string();
}

std::string dataset_name(const std::string& fullname, int iteration, int rank) {
  return fullname + " it=" + std::to_string(iteration) + " tl=0 rl=0 c=" + std::to_string(rank);
}

// Opens the working file `tmp` for the next version of `path`: from `<path>.prev` when there
// is one that opens (then `*behind` is set: it lacks the newest dataset of `path`), else from
// a copy of `path`, else a new file.
File open_working_copy(const std::string& path, const std::string& tmp, bool* behind) {
  const std::string prev = path + ".prev";
  *behind = false;
  if (!fs::exists(path)) return create_file(tmp);
  std::error_code ec;
  if (fs::exists(prev)) {
    fs::rename(prev, tmp, ec);
    if (!ec) {
      QuietHdf5 quiet;
      const hid_t id = H5Fopen(tmp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      if (id >= 0) {
        *behind = true;
        return {tmp, Id(id, H5Fclose)};
      }
      H5Eclear2(H5E_DEFAULT); // not a file we wrote: start from the file itself
    }
  }
  fs::copy_file(path, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) throw std::runtime_error("cannot copy " + path + " to " + tmp + ": " + ec.message());
  return open_file(tmp, true);
}

// Copies the newest dataset of `path` (the one its GH$iteration names) into `file`, replacing
// one of the same name.
void catch_up(File& file, const std::string& path, const std::string& fullname, int rank) {
  File current = open_file(path, false);
  if (!link_exists(current, current.id, kMetadataGroup)) return;
  Id group = checked(H5Gopen2(current.id, kMetadataGroup, H5P_DEFAULT), H5Gclose, path,
                     "H5Gopen2(metadata)");
  const std::string newest =
      dataset_name(fullname, read_int(current, group, kMetadataGroup, "GH$iteration"), rank);
  if (!link_exists(current, current.id, newest)) return;
  if (link_exists(file, file.id, newest))
    checked(H5Ldelete(file.id, newest.c_str(), H5P_DEFAULT), file.path,
            "H5Ldelete(" + newest + ")");
  checked(H5Ocopy(current.id, newest.c_str(), file.id, newest.c_str(), H5P_DEFAULT, H5P_DEFAULT),
          file.path, "H5Ocopy(" + newest + " from " + path + ")");
  group.close(path, "H5Gclose(metadata)");
  current.id.close(path, "H5Fclose");
}

// Global metadata, as CarpetIOHDF5's WriteMetadata writes it on file creation; the iteration
// and time are kept current.
void write_metadata(const File& file, const grid::Patch& patch, const std::string& fullname,
                    const OutputStamp& stamp, const std::string& parameters_text) {
  const bool has_group = link_exists(file, file.id, kMetadataGroup);
  Id group =
      has_group
          ? checked(H5Gopen2(file.id, kMetadataGroup, H5P_DEFAULT), H5Gclose, file.path,
                    "H5Gopen2(metadata)")
          : checked(H5Gcreate2(file.id, kMetadataGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
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

// The dataset: the allocated box, C order [z][y][x], with the attributes of CarpetIOHDF5's
// AddAttributes in its order and types; replaces one of the same name.
void write_dataset(const File& file, const grid::Patch& patch, const std::string& fullname,
                   const std::string& name, const double* field, const OutputStamp& stamp) {
  if (link_exists(file, file.id, name))
    checked(H5Ldelete(file.id, name.c_str(), H5P_DEFAULT), file.path, "H5Ldelete(" + name + ")");
  const grid::Box box = patch.allocated();
  const auto dims = zyx(extent(box));
  Id space = simple_space(file, 3, dims.data());
  Id dataset = checked(H5Dcreate2(file.id, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose, file.path, "H5Dcreate2(" + name + ")");
  if (dims[0] * dims[1] * dims[2] > 0) {
    // The array's rows are patch.pitch() points apart: the memory space says so.
    Id memory = array_selection(file, patch, box);
    checked(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory, H5S_ALL, H5P_DEFAULT, field), file.path,
            "H5Dwrite(" + name + ")");
  }

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
}

// `<variable>.file_<digits>.h5` and the names a write makes next to it.
bool is_output_file(std::string_view name, const std::string& stem) {
  if (name.substr(0, stem.size()) != stem) return false;
  name.remove_prefix(stem.size());
  std::size_t digits = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
  if (digits == 0) return false;
  name.remove_prefix(digits);
  for (std::string_view suffix : {".h5", ".h5.tmp", ".h5.prev", ".h5.prev.tmp"})
    if (name == suffix) return true;
  return false;
}

} // namespace

void write_hdf5(const std::string& dir, const grid::Patch& patch, const std::string& thorn,
                const std::string& variable, const double* field, const OutputStamp& stamp,
                const std::string& parameters_text) {
  QuietHdf5 quiet;
  ensure_directory(dir);
  const std::string path = output_file(dir, variable, patch.rank);
  const std::string tmp = path + ".tmp";
  const std::string fullname = thorn + "::" + variable;

  // The file stays untouched until the next version is complete; the version it replaces is
  // kept as <file>.prev for the next write.
  const bool first = !fs::exists(path);
  support::write_atomically(
      path,
      [&](const fs::path&) {
        bool behind = false;
        File file = open_working_copy(path, tmp, &behind);
        file.path = path + " (via " + tmp + ")";
        if (behind) catch_up(file, path, fullname, patch.rank);
        write_metadata(file, patch, fullname, stamp, parameters_text);
        write_dataset(file, patch, fullname, dataset_name(fullname, stamp.iteration, patch.rank),
                      field, stamp);
        file.id.close(file.path, "H5Fclose");
      },
      support::AtomicWrite{"saguaro output", tmp, true, path + ".prev"});
  if (!first) return;
  // The new file without its dataset, for the second write to start from.
  const std::string prev = path + ".prev", prev_tmp = prev + ".tmp";
  support::write_atomically(
      prev,
      [&](const fs::path&) {
        File file = create_file(prev_tmp);
        file.path = prev + " (via " + prev_tmp + ")";
        write_metadata(file, patch, fullname, stamp, parameters_text);
        file.id.close(file.path, "H5Fclose");
      },
      support::AtomicWrite{"saguaro output", prev_tmp, true});
}

void finish_hdf5(const std::string& dir, const std::string& variable, int rank) {
  const std::string path = output_file(dir, variable, rank);
  remove_quietly(path + ".prev");
  remove_quietly(path + ".prev.tmp");
}

void remove_hdf5_output(const std::string& dir, const std::string& variable, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string error = capture([&] {
    if (rank != 0) return;
    const std::string stem = support::lower(variable) + ".file_";
    std::vector<fs::path> doomed;
    std::error_code ec;
    fs::directory_iterator it(dir.empty() ? "." : dir, ec), end;
    for (; !ec && it != end; it.increment(ec))
      if (is_output_file(it->path().filename().string(), stem)) doomed.push_back(it->path());
    for (const fs::path& path : doomed)
      if (!fs::remove(path, ec) && ec)
        throw std::runtime_error("cannot remove " + path.string() + ": " + ec.message());
  });
  agree(comm, error, "remove_hdf5_output");
}

} // namespace saguaro::io
