// Output: norms as TSV, grid functions as HDF5 in CarpetIOHDF5's layout, and checkpoints.
// HDF5 output and checkpoints take host arrays (grid::GridFunctions::host()); norms reduce
// in the arrays' space.
//
// HDF5 files are written one per variable per rank, `<dir>/<var>.file_<rank>.h5` (lowercase
// variable name), one dataset added at every output iteration, as CarpetIOHDF5 does with
// out3D/one_file_per_proc. Each rank writes its allocated box (owned points plus the ghost
// layers: ghosts between ranks, outer boundary points at outer faces), with
// cctk_nghostzones = ghost width and cctk_bbox marking outer faces, so kuibit, VisIt and yt
// strip the ghosts and stitch the components.
#pragma once

#include "grid/grid.hpp"

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

namespace saguaro::io {

// What every dataset is stamped with.
struct OutputStamp {
  int iteration = 0;
  double time = 0.0;
  double dt = 0.0;
};

// Norms of one variable over the whole grid, appended to `<dir>/<var>.norms.tsv` by rank 0
// (header on creation: `# iteration time min max norm1 norm2 norm_inf`). Collective.
// `field` belongs to `space` (reduced there; only the sums cross to the host).
void append_norms(const std::string& dir, const grid::Decomposition& decomposition,
                  const std::string& variable, const double* field, const OutputStamp& stamp,
                  runtime::ArraySpace& space = runtime::host_space());
// At the start of a run, what it takes over of `<dir>/<var>.norms.tsv` (rank 0 acts; collective,
// every rank throws when it fails). A fresh run with IO::truncate_files removes the file
// (truncate_norms); a recovered run keeps the lines up to the iteration it continues from
// (keep_norms_through), so that the file reads as if the run had never stopped.
void truncate_norms(const std::string& dir, const std::string& variable, MPI_Comm comm);
void keep_norms_through(const std::string& dir, const std::string& variable, int iteration,
                        MPI_Comm comm);

// One dataset `THORN::var it=N tl=0 rl=0 c=R` with the Carpet attributes, added to this
// rank's file for `var` (replacing one of the same name); the file is created with the group
// `Parameters and Global Attributes` (attributes nioprocs, carpet_version-like fields, and the
// parameter set as text). Not collective: every rank writes its own file.
// The file itself is never modified: the next version is made under `<file>.tmp` and renamed
// over it, so a crash at any instant leaves the file with every earlier dataset. The version
// it replaces is kept as `<file>.prev`, from which the next write starts (it lacks only the
// newest dataset), so that a write costs the same at the first output and the thousandth
// (hdf5.cpp says why not HDF5's in-place append).
void write_hdf5(const std::string& dir, const grid::Patch& patch, const std::string& thorn,
                const std::string& variable, const double* field, const OutputStamp& stamp,
                const std::string& parameters_text);
// The end of a run: removes this rank's `<file>.prev` of `var` (a later run that continues
// the file copies it once instead).
void finish_hdf5(const std::string& dir, const std::string& variable, int rank);
// A fresh run with IO::truncate_files: removes every rank's file of `var` from an earlier run
// (any rank count) and what its writes left beside it (rank 0 acts; collective).
void remove_hdf5_output(const std::string& dir, const std::string& variable, MPI_Comm comm);

// Checkpoints: `<dir>/checkpoint.chkpt.it_<N>.file_<rank>.h5`, written to a `.tmp` name and
// renamed when complete; a checkpoint counts only when every rank's file exists (rank 0
// writes `checkpoint.chkpt.it_<N>.done` after a barrier). Holds each variable's valid box (owned
// points and outer boundary layers, with a Fletcher-32 checksum) with its global origin, the
// state (iteration, time, dt), the number of ranks and the parameter text.
struct CheckpointState {
  int iteration = 0;
  double time = 0.0;
  double dt = 0.0;
};
// Collective. `fields[i]` belongs to `names[i]`.
void write_checkpoint(const std::string& dir, const grid::Decomposition& decomposition,
                      const std::vector<std::string>& names,
                      const std::vector<const double*>& fields, const CheckpointState& state,
                      const std::string& parameters_text, int keep = 2);
// The iteration of the newest complete checkpoint in `dir`, or -1.
int newest_checkpoint(const std::string& dir);
// Collective: the iterations of the complete checkpoints in `dir`, newest first, as rank 0
// finds them (so every rank has the same list).
std::vector<int> complete_checkpoints(const std::string& dir, MPI_Comm comm);
// Collective. Reads checkpoint `iteration` into the valid points of `fields` (any rank count
// may have written it: each rank reads the parts of every file that overlap its box). Throws
// std::runtime_error with the file name when a variable is missing or the grid differs.
CheckpointState read_checkpoint(const std::string& dir, int iteration,
                                const grid::Decomposition& decomposition,
                                const std::vector<std::string>& names,
                                const std::vector<double*>& fields);

// A complete checkpoint that could not be read back, and why (the error names the file).
struct UnusableCheckpoint {
  int iteration = 0;
  std::string reason;
};
// What recovery found in a directory.
struct Recovery {
  std::optional<CheckpointState> state;     // the checkpoint read, when one was usable
  std::vector<int> complete;                // the complete checkpoints, newest first
  std::vector<UnusableCheckpoint> unusable; // those tried before it, newest first
};
// Collective. Reads the newest complete checkpoint that reads back whole; a damaged one (a
// file missing, truncated or corrupted, a variable missing, another grid) is skipped and the
// next older one tried. Every rank tries the same checkpoints in the same order and agrees on
// each outcome, so all of them end with the same one. `state` is empty when no checkpoint is
// usable (or there is none: `complete` is empty).
Recovery recover_newest_checkpoint(const std::string& dir, const grid::Decomposition& decomposition,
                                   const std::vector<std::string>& names,
                                   const std::vector<double*>& fields);

} // namespace saguaro::io
