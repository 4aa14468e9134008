// Checkpoints: written one file per rank and marked complete, found, and read back on any rank
// count; recovery tries them newest first and skips the damaged ones.
//
// Every dataset carries a Fletcher-32 checksum (HDF5's filter, on chunks of at most 32 MiB), so
// a corrupted byte in the data is an error when it is read, not a wrong state; a truncated file
// fails in H5Fopen, a damaged header in HDF5's own checks or in the attributes read back.
#include "io/hdf5_support.hpp"
#include "io/io.hpp"

#include "support/files.hpp"
#include "support/hash.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
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

// ---------------------------------------------------------------------------------------------
// Names

constexpr std::string_view kPrefix = "checkpoint.chkpt.it_";

std::string checkpoint_stem(const std::string& dir, int iteration) {
  return (fs::path(dir) / (std::string(kPrefix) + std::to_string(iteration))).string();
}
std::string checkpoint_file(const std::string& dir, int iteration, int rank) {
  return checkpoint_stem(dir, iteration) + ".file_" + std::to_string(rank) + ".h5";
}
std::string checkpoint_marker(const std::string& dir, int iteration) {
  return checkpoint_stem(dir, iteration) + ".done";
}

// The iteration of a name `checkpoint.chkpt.it_<N><rest>` (N of at most 9 digits), with `rest`
// set to what follows the digits; -1 for any other name.
int parse_iteration(std::string_view name, std::string_view* rest) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  name.remove_prefix(kPrefix.size());
  std::size_t digits = 0;
  int iteration = 0;
  while (digits < name.size() && digits < 10 && name[digits] >= '0' && name[digits] <= '9')
    iteration = iteration * 10 + (name[digits++] - '0');
  if (digits == 0 || digits > 9) return -1;
  *rest = name.substr(digits);
  return iteration;
}

// `.file_<digits>.h5`, optionally followed by `.tmp`.
bool is_rank_file_suffix(std::string_view rest) {
  constexpr std::string_view file = ".file_";
  if (rest.substr(0, file.size()) != file) return false;
  rest.remove_prefix(file.size());
  std::size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0) return false;
  rest.remove_prefix(digits);
  return rest == ".h5" || rest == ".h5.tmp";
}

// Iterations of the complete checkpoints (those with a `.done` marker) in `dir`, oldest first.
std::vector<int> complete_checkpoints(const std::string& dir) {
  std::vector<int> found;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string_view rest;
    const std::string name = it->path().filename().string();
    const int iteration = parse_iteration(name, &rest);
    if (iteration >= 0 && rest == ".done") found.push_back(iteration);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Removes checkpoint `iteration`: its marker first (so it no longer counts), then every file.
void remove_checkpoint(const std::string& dir, int iteration) {
  remove_quietly(checkpoint_marker(dir, iteration));
  remove_quietly(checkpoint_marker(dir, iteration) + ".tmp");
  std::vector<fs::path> doomed;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string_view rest;
    const std::string name = it->path().filename().string();
    if (parse_iteration(name, &rest) == iteration && is_rank_file_suffix(rest))
      doomed.push_back(it->path());
  }
  for (const auto& path : doomed) remove_quietly(path.string());
}

// A file made under `tmp` (a fixed name, so that a later run finds and removes the debris of a
// crashed write) and renamed over its final name once complete and on disk.
support::AtomicWrite durable_via(const std::string& tmp) {
  return support::AtomicWrite{"saguaro checkpoint", tmp, true};
}

// Chunked storage with a Fletcher-32 checksum for a dataset of `dims` {z, y, x}: whole x-y
// planes (or rows, for planes above the limit) in chunks of at most 2^22 values. Empty
// datasets, which HDF5 cannot chunk, stay contiguous and carry no checksum.
Id checksummed_layout(const File& file, const std::array<hsize_t, 3>& dims) {
  Id plist = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, file.path, "H5Pcreate");
  if (dims[0] * dims[1] * dims[2] == 0) return plist;
  constexpr hsize_t kChunkValues = hsize_t(1) << 22;
  const hsize_t plane = dims[1] * dims[2];
  std::array<hsize_t, 3> chunk = dims;
  chunk[0] = std::clamp<hsize_t>(kChunkValues / plane, 1, dims[0]);
  if (plane > kChunkValues) chunk[1] = std::clamp<hsize_t>(kChunkValues / dims[2], 1, dims[1]);
  checked(H5Pset_chunk(plist, 3, chunk.data()), file.path, "H5Pset_chunk");
  checked(H5Pset_fletcher32(plist), file.path, "H5Pset_fletcher32");
  return plist;
}

// What a rank file holds besides its data, with a digest over it (attribute `digest`), so that
// a damaged value is an error when it is read rather than a wrong state.
struct FileHeader {
  int iteration = 0, nprocs = 0, rank = 0, ghost = 0;
  double time = 0.0, dt = 0.0;
  grid::Index3 points{};
  std::array<double, 3> origin{}, spacing{};

  std::uint64_t digest() const {
    std::string bytes;
    auto add = [&](const auto& value) {
      bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    };
    add(iteration), add(nprocs), add(rank), add(ghost), add(time), add(dt);
    add(points), add(origin), add(spacing);
    return support::fnv1a64(bytes);
  }
};

void write_header(const File& file, const FileHeader& h) {
  write_int(file, file.id, "iteration", h.iteration);
  write_double(file, file.id, "time", h.time);
  write_double(file, file.id, "dt", h.dt);
  write_int(file, file.id, "nprocs", h.nprocs);
  write_int(file, file.id, "rank", h.rank);
  write_ints(file, file.id, "grid_points", h.points.data(), 3);
  write_int(file, file.id, "ghost", h.ghost);
  write_doubles(file, file.id, "origin", h.origin.data(), 3);
  write_doubles(file, file.id, "spacing", h.spacing.data(), 3);
  write_u64(file, file.id, "digest", h.digest());
}

// Reads the header back and checks its digest (files written before there was one have none).
FileHeader read_header(const File& file) {
  FileHeader h;
  const char* where = "the file";
  h.iteration = read_int(file, file.id, where, "iteration");
  h.time = read_double(file, file.id, where, "time");
  h.dt = read_double(file, file.id, where, "dt");
  h.nprocs = read_int(file, file.id, where, "nprocs");
  h.rank = read_int(file, file.id, where, "rank");
  read_attribute(file, file.id, where, "grid_points", H5T_NATIVE_INT, h.points.data(), 3);
  h.ghost = read_int(file, file.id, where, "ghost");
  read_attribute(file, file.id, where, "origin", H5T_NATIVE_DOUBLE, h.origin.data(), 3);
  read_attribute(file, file.id, where, "spacing", H5T_NATIVE_DOUBLE, h.spacing.data(), 3);
  if (attribute_exists(file, file.id, "digest")) {
    std::uint64_t stored = 0;
    read_attribute(file, file.id, where, "digest", H5T_NATIVE_UINT64, &stored, 1);
    if (stored != h.digest())
      throw std::runtime_error(file.path + ": the attributes do not match their digest (damaged)");
  }
  return h;
}

// A rank file's header against the first file's and this run's grid.
void check_header(const std::string& path, const FileHeader& h, const FileHeader& first, int rank,
                  const grid::Index3& points) {
  if (h.points != points)
    throw std::runtime_error(path + ": grid differs: the checkpoint has " +
                             std::to_string(h.points[0]) + "x" + std::to_string(h.points[1]) + "x" +
                             std::to_string(h.points[2]) + " points, this run " +
                             std::to_string(points[0]) + "x" + std::to_string(points[1]) + "x" +
                             std::to_string(points[2]));
  if (h.rank != rank || h.iteration != first.iteration || h.nprocs != first.nprocs ||
      std::memcmp(&h.time, &first.time, sizeof h.time) != 0 ||
      std::memcmp(&h.dt, &first.dt, sizeof h.dt) != 0)
    throw std::runtime_error(path + ": its rank, iteration, time or rank count disagrees with " +
                             "the checkpoint's first file (damaged or mixed up)");
}

} // namespace

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
          FileHeader header;
          header.iteration = iteration, header.nprocs = size, header.rank = rank;
          header.ghost = patch.ghost(), header.time = state.time, header.dt = state.dt;
          header.points = points, header.origin = patch.spec.origin;
          header.spacing = patch.spec.spacing;
          write_header(file, header);
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
            Id layout = checksummed_layout(file, dims);
            Id dataset = checked(H5Dcreate2(file.id, name.c_str(), H5T_IEEE_F64LE, space,
                                            H5P_DEFAULT, layout, H5P_DEFAULT),
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
  const std::vector<int> found = complete_checkpoints(dir);
  return found.empty() ? -1 : found.back();
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
    const std::string first_path = checkpoint_file(dir, iteration, 0);
    if (!fs::exists(first_path)) throw std::runtime_error(first_path + ": no such checkpoint file");
    FileHeader first;
    {
      File file = open_file(first_path, false);
      first = read_header(file);
      if (first.iteration != iteration)
        throw std::runtime_error(first_path + ": holds iteration " +
                                 std::to_string(first.iteration) + ", expected " +
                                 std::to_string(iteration));
      if (first.nprocs < 1)
        throw std::runtime_error(first_path + ": bad nprocs " + std::to_string(first.nprocs));
    }
    state.iteration = first.iteration;
    state.time = first.time;
    state.dt = first.dt;
    const int nprocs = first.nprocs;

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
      check_header(path, read_header(file), first, r, points);

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

std::vector<int> complete_checkpoints(const std::string& dir, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<int> found;
  if (rank == 0) found = complete_checkpoints(dir);
  int count = static_cast<int>(found.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, comm);
  found.resize(static_cast<std::size_t>(count));
  MPI_Bcast(found.data(), count, MPI_INT, 0, comm);
  std::reverse(found.begin(), found.end());
  return found;
}

Recovery recover_newest_checkpoint(const std::string& dir, const grid::Decomposition& decomposition,
                                   const std::vector<std::string>& names,
                                   const std::vector<double*>& fields) {
  Recovery recovery;
  recovery.complete = complete_checkpoints(dir, decomposition.comm());
  for (int iteration : recovery.complete) {
    try {
      recovery.state = read_checkpoint(dir, iteration, decomposition, names, fields);
      return recovery;
    } catch (const std::runtime_error& e) { // agreed: every rank throws it
      recovery.unusable.push_back({iteration, e.what()});
    }
  }
  return recovery;
}

} // namespace saguaro::io
