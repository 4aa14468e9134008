// Mapping files and the mapping cache.
//
// A mapping file holds mappings written by a person or by `saguaro map --save`, read back by
// `Saguaro::mapper = "fixed"`. It is YAML and names things (calculations, grid functions,
// strategies by letter), never indices, so people can write it:
//
//   # written by: saguaro map par/wave.edl --device configs/devices/h100.yaml --grid 256 --save F
//   device: NVIDIA H100 80GB HBM3        # informational
//   grid: [256, 256, 256]                # informational
//   calculations:
//     wave_rhs:                          # calculation name
//       hash: 9f3c...                    # calculation_hash() when written; a mismatch warns
//       predicted_seconds: 1.23e-3       # optional, informational
//       kernels:
//         - stage: 0                     # optional, default 0
//           stores: [phirhs, pirhs]      # grid functions this kernel stores in that stage
//           temporaries: [412]           # optional: DAG node ids stored for later kernels
//           block: z 32x8x8              # optional, default z 32x8x8
//           buffering: {phi: c, pi: u}   # optional: grid function -> u r b p c q
//
// The mapping cache keeps one such file per (calculation, device, grid size class, mapper
// method), so that the second start of a simulation does no search.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "model/device.hpp"
#include "support/diagnostics.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::mapper {

struct MappingFileEntry {
  std::string calculation;      // its name
  std::string hash;             // calculation_hash() when written ("" when not given)
  double predicted_seconds = 0; // informational; 0 when not given
  calc::Mapping mapping;
};

struct MappingFile {
  std::string device;                    // informational
  std::array<long, 3> grid{0, 0, 0};     // informational; zeros when not given
  std::vector<MappingFileEntry> entries; // in file order; calculations the file omits are absent
  std::vector<std::string> warnings;     // rendered diagnostics (a hash mismatch, ...)
};

// A mapping file that does not read or does not fit the program: the program's input error
// (support::InputError), so what() is the full diagnostic: "FILE:LINE:COL: error: ...", the
// line, a caret, and any notes.
class MappingFileError : public support::InputError {
public:
  using support::InputError::InputError;
  std::string file() const { return loc().file ? loc().file->name() : std::string(); }
  int line() const { return loc().valid() ? loc().line : 0; }     // 1-based; 0: no position
  int column() const { return loc().valid() ? loc().column : 0; } // 1-based; 0: no position
};

// The text of a mapping file for `program` (names resolved from its calculations); `comment`
// goes in a leading # line when not empty. An entry with an empty hash gets the calculation's
// current one. Throws calc::MappingError when an entry names no calculation of `program` or
// its mapping does not fit (calc::plan_kernels), so no file is written that cannot be read.
std::string format_mapping_file(const calc::Program& program, const MappingFile& file,
                                const std::string& comment = "");

// Parses `text` and resolves it against `program`. Throws MappingFileError for YAML syntax
// errors, unknown keys, calculations or grid functions (with "did you mean"), a bad strategy
// letter or block configuration, a store the stage does not make or made twice, and for any
// calc::MappingError of calc::plan_kernels (at the calculation's line).
MappingFile parse_mapping_file(const std::string& text, const std::string& filename,
                               const calc::Program& program);
MappingFile load_mapping_file(const std::string& path, const calc::Program& program);

// 16 hex digits (FNV-1a 64) of what a mapping depends on in a calculation: its grid functions,
// DAG nodes (op, function, index, offset, kids, weights, value, uniform) and stages. The same
// on every run and machine; any change of the lowered calculation changes it.
std::string calculation_hash(const calc::Calculation& calc);

// 16 hex digits (FNV-1a 64) of a device description's format_device text.
std::string device_hash(const model::Device& device);

// The grid size class: each axis rounded up to a power of two (200 -> 256; 0 and 1 -> 1), so
// that a mapping chosen for one grid is reused for similar ones.
std::array<long, 3> grid_class(const std::array<long, 3>& grid);

// One small mapping file per key in a directory. Safe for concurrent processes (MPI ranks):
// files appear whole (temporary name, then rename) and a broken one reads as a miss.
class MappingCache {
public:
  // "" -> $XDG_CACHE_HOME/saguaro/mappings, else $HOME/.cache/saguaro/mappings, else
  // <temp>/saguaro-cache/mappings (support::default_cache_dir).
  explicit MappingCache(std::string dir = "");

  const std::string& dir() const { return dir_; }

  // The cached mapping for this key, or nullopt when there is none, or the file does not
  // parse, does not fit `calc`, or was written for another calculation, device or grid class.
  // Never throws.
  std::optional<calc::Mapping> lookup(const calc::Program& program, const calc::Calculation& calc,
                                      const model::Device& device, const std::array<long, 3>& grid,
                                      const std::string& method) const;

  // Writes the mapping under its key, replacing any earlier one. Throws calc::MappingError
  // when the mapping does not fit `calc`, std::runtime_error when the file cannot be written.
  void store(const calc::Program& program, const calc::Calculation& calc,
             const model::Device& device, const std::array<long, 3>& grid,
             const std::string& method, const calc::Mapping& mapping, double predicted_seconds);

  // <dir>/<calculation name>-<key>.yaml; the key hashes calculation_hash, device_hash,
  // grid_class(grid), the cache format version and `method`.
  std::string path_for(const calc::Calculation& calc, const model::Device& device,
                       const std::array<long, 3>& grid, const std::string& method) const;

private:
  std::string dir_;
};

} // namespace saguaro::mapper
