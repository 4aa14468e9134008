// Checkpoints: written one file per rank and marked complete, found, and read back on any rank
// count. The plumbing it shares with the HDF5 output is in hdf5_support.hpp.
#include "io/hdf5_support.hpp"
#include "io/io.hpp"

#include "support/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace saguaro::io {

namespace fs = std::filesystem;
using namespace h5;

namespace {

// A file made under `tmp` (a fixed name, so that a later run finds and removes the debris of a
// crashed write) and renamed over its final name once complete and on disk.
support::AtomicWrite durable_via(const std::string& tmp) {
  return support::AtomicWrite{"saguaro output", tmp, true};
}

// ---------------------------------------------------------------------------------------------
// Names

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
