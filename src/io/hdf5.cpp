// HDF5 output in CarpetIOHDF5's layout: one file per variable per rank, a dataset per output
// iteration. The plumbing it shares with the checkpoints is in hdf5_support.hpp.
#include "io/hdf5_support.hpp"
#include "io/io.hpp"

#include "support/files.hpp"
#include "support/text.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace saguaro::io {

namespace fs = std::filesystem;
using namespace h5;

namespace {

// A file made under `tmp` (a fixed name, so that a later run finds and removes the debris of a
// crashed write) and renamed over its final name once complete and on disk.
support::AtomicWrite durable_via(const std::string& tmp) {
  return support::AtomicWrite{"saguaro output", tmp, true};
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

} // namespace saguaro::io
