// What the host hands a compiled calculation, and the backends that compile one.
//
// A backend turns a calc::Calculation into something that runs all of its stages over a
// region of one patch's arrays. The host knows grids, not EDL; a backend knows arrays, not
// MPI. The reference interpreter is one backend (the oracle); generated C++ and generated CUDA
// are the others. Each describes itself (BackendDescription), so the host decides by what a
// backend is, never by its name; backend_registry.hpp lists them by name.
#pragma once

#include "calc/calculation.hpp"
#include "calc/code_plan.hpp"
#include "calc/mapping.hpp"
#include "calc/time_tile.hpp"
#include "model/model.hpp"
#include "runtime/array_space.hpp"

#include <array>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::runtime {

// One patch's arrays as a calculation sees them. Arrays are C order [z][y][x], x fastest,
// `alloc` points per axis; local index (0,0,0) is the first allocated point.
struct KernelArgs {
  std::vector<double*> fields; // per Calculation::grid_functions index
  std::array<int, 3> alloc{0, 0, 0};
  int pitch = 0; // points between consecutive rows (grid::Patch::pitch); 0: alloc[0]
  // The region where the calculation's outputs (its last stage) are computed, local
  // indices, [lo, hi). Earlier stages cover it grown by their Stage::extent_lo/hi.
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
  // Coordinates: x = origin + (i + index_offset) * spacing for local index i, origin being
  // the grid's and index_offset the global index of local index 0. Computed from the global
  // index, a point's coordinate is the same bits on every rank, whatever the decomposition.
  std::array<double, 3> origin{0, 0, 0};
  std::array<int, 3> index_offset{0, 0, 0};
  std::array<double, 3> spacing{1, 1, 1};
  double time = 0.0;
  std::vector<double> parameters; // calc::Program::parameters order (keywords: their index)
  // What part of the calculation's region this launch is, for the timings: "" the whole,
  // "interior" or "boundary shell" when the host splits it around a ghost exchange.
  std::string region;

  int row_pitch() const { return runtime::row_pitch(pitch, alloc[0]); }
  calc::ArrayLayout layout() const { return {row_pitch(), alloc[1]}; }
  // Points of an array of this shape: row_pitch() * alloc[1] * alloc[2].
  std::size_t array_points() const {
    return std::size_t(row_pitch()) * std::size_t(alloc[1]) * std::size_t(alloc[2]);
  }
};

// What the compiler made of one kernel (ptxas's report), for the model's re-pricing
// (model::CompiledResources).
struct KernelResources {
  int registers = -1;           // per thread; -1: unknown
  int spill_bytes = 0;          // spill stores + loads, per thread
  std::size_t shared_bytes = 0; // per block, static + dynamic
};

// What the compiler made of a kernel, as the model takes it (model::predict).
inline model::CompiledResources compiled_resources(const KernelResources& r) {
  return {r.registers, r.spill_bytes, double(r.shared_bytes)};
}

class CompiledCalculation {
public:
  virtual ~CompiledCalculation() = default;
  // Per kernel of its mapping, in the mapping's order, what the compiler made of it; empty
  // where the backend does not know (the CPU's, the interpreter).
  virtual std::vector<KernelResources> kernel_resources() const { return {}; }
  // Runs every stage. The caller guarantees that the region grown by each stage's extent
  // and its stencil lies inside the allocated arrays (see required_margin()).
  virtual void run(const KernelArgs& args) const = 0;
  // Runs every stage over each of `boxes` (disjoint regions, each as args.lo/hi would be; args'
  // own lo/hi are ignored) in as few launches as the backend can: a boundary shell's boxes are
  // small, and one launch over all of them fills the GPU where one per box leaves it half idle.
  // Here: one run() per non-empty box.
  virtual void run_boxes(const KernelArgs& args, const std::vector<calc::Region>& boxes) const;
};

// The arrays and coefficients of one time-tiled step (calc/time_tile.hpp): KernelArgs give the
// patch (alloc, pitch, lo/hi the owned points of the periodic box, spacing, parameters).
struct TimeTileCall {
  std::vector<const double*> state; // per evolved variable (TimeTilePlan::state order)
  std::vector<double*> next;        // per evolved variable: the new state, or a part's Y_{last+1}
  // A part of a step (TimeTilePlan::first > 1 or not ends_step()): per evolved variable the
  // first stage's input Y_first and the accumulator it reads, and the accumulator it writes;
  // empty otherwise.
  std::vector<const double*> stage_input, accumulator;
  std::vector<double*> next_accumulator;
  // The tableau times dt: a[s] = a_{s+2,s+1} dt (stages - 1 entries), b[s] = b_{s+1} dt.
  std::vector<double> a, b;
};

// A whole time step of one calculation, every stage evaluated on a tile kept on chip.
class CompiledTimeTile {
public:
  virtual ~CompiledTimeTile() = default;
  // The new state on the owned points [args.lo, args.hi); ghosts are the post-step's.
  virtual void run(const KernelArgs& args, const TimeTileCall& call) const = 0;
  // What the compiler made of it (registers -1: unknown), for the model's re-pricing.
  virtual KernelResources resources() const { return {}; }
};

using calc::Margin; // calc::required_margin: what the ghost width must cover
using calc::required_margin;

// CPU backend: whether the generated kernels write their stores with non-temporal (streaming)
// stores, which skip the read of each stored cache line (Saguaro::streaming_stores).
enum class StreamingStores {
  automatic, // where a launch's arrays outrun the host's last-level cache (streams_stores)
  always,
  never,
};

// Whether a launch touching `array_bytes` of arrays streams its stores under `policy` on a host
// whose last-level cache holds `cache_bytes`: automatic streams beyond the cache, where what a
// kernel stores is evicted before the next one reads it, and keeps cached stores below it.
bool streams_stores(StreamingStores policy, double array_bytes, double cache_bytes);
// The host's last-level caches in bytes: the distinct instances of the highest cache level
// sysfs lists, summed (else sysconf's level 3 or 2; 32 MiB when unknown).
double host_last_level_cache_bytes();

struct BackendOptions {
  std::string cache_dir;        // where compiled code is kept ("" = default)
  std::string compiler = "c++"; // CPU backend: the host compiler
  bool verbose = false;         // report compiles and cache hits on stderr
  // CUDA backend: launch each kernel with Hopper's programmatic dependent launch where the GPU
  // has it, so that it starts while the kernel before it finishes (Saguaro::programmatic_launch).
  bool programmatic_launch = true;
  // CPU backend: non-temporal stores (StreamingStores; the kokkos backend's kernels store
  // plainly), decided at compile for arrays of `array_points` points each (a run's patch with
  // its ghosts and row padding; 0: unknown, automatic then streams nothing) against this rank's
  // share of the host's last-level caches, `ranks_on_host` ranks sharing them.
  StreamingStores streaming_stores = StreamingStores::automatic;
  std::size_t array_points = 0;
  int ranks_on_host = 1;
  // The layout of every array the calculations will run over (a run's patch), when there is
  // one: the CUDA backend prints its kernels for it (strides as constants, checked at each
  // launch). None: kernels for any layout.
  std::optional<calc::ArrayLayout> array_layout;
};

// One generated GPU kernel: its resources as ptxas reported them, and its measured launches
// (CUDA events); for the performance model and the prediction log.
struct KernelTiming {
  std::string name;    // the generated kernel's symbol
  std::string mapping; // its mapping in short form
  int calculation = 0; // calc::Program::calculations index
  int kernel = 0;      // index into that calculation's Mapping::kernels; a time-tiled step's
                       // kernel: -(the first stage it evaluates), -1 for a whole step
  int registers = -1;  // per thread (-1: unknown)
  int spill_stores = 0, spill_loads = 0, stack_bytes = 0; // bytes per thread
  std::size_t shared_bytes = 0;                           // per block, static + dynamic
  std::string region; // KernelArgs::region of its launches (timed apart)
  long launches = 0;
  double points = 0;           // grid points of the last launch (its region with extents)
  std::vector<double> seconds; // one sample per timed launch (a GPU backend may time some only)
};

// Where a backend's kernels run.
enum class Hardware { host, gpu };
// How a backend times its kernels (KernelTiming::seconds).
enum class KernelClock {
  none,       // it does not (kernel_timings() is empty)
  host_clock, // steady_clock around each run()
  gpu_events, // events queued around each launch on the device's stream
};
// The performance-model description (model::Device) its kernels are predicted with.
enum class DeviceModel {
  none,            // not predicted (the prediction log is off)
  host_roofline,   // a CPU roofline: kind "cpu", measured at start or calibrated
  gpu_description, // a GPU's description: kind "gpu", configs/devices/ has one per model
};

// What a backend says about itself, so that the host decides by properties, never by name.
struct BackendDescription {
  std::string name; // its registry name (runtime/backend_registry.hpp)
  Hardware hardware = Hardware::host;
  // The device it runs on by name ("NVIDIA H100 80GB HBM3": a configs/devices/ file's name) and
  // for the banner with its architecture ("NVIDIA H100 80GB HBM3, sm_90"); "" on the host.
  std::string device, device_detail;
  // Whether compile() runs a mapping's kernel partition (else it ignores mappings).
  bool takes_mappings = false;
  // Whether the mapper's model chooses its mappings (Saguaro::mapper = model, exhaustive): the
  // model is a GPU model; other backends run the default partition.
  bool mapped_by_model = false;
  DeviceModel model = DeviceModel::none;
  KernelClock clock = KernelClock::none;
  std::string array_space; // ArraySpace::name() of space(): "host", "cuda"
  // Whether compile_time_tile makes time-tiled steps (the generated CUDA's only, so far).
  bool time_tiles = false;
};
// One line: "cuda: GPU (NVIDIA H100 80GB HBM3, sm_90), takes mappings (chosen by the model),
// predicted with a GPU description, kernels timed by GPU events, arrays in cuda".
std::string to_string(const BackendDescription& description);

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual BackendDescription description() const = 0;
  // Compiles every calculation of `program` (one compile for all of them where the backend
  // can); result i belongs to program.calculations[i].
  virtual std::vector<std::unique_ptr<CompiledCalculation>>
  compile(const calc::Program& program) = 0;
  // The same under the given mappings (one per calculation, empty: defaults). The reference
  // interpreter ignores them; the cpu and cuda backends run exactly their kernel partitions.
  virtual std::vector<std::unique_ptr<CompiledCalculation>>
  compile(const calc::Program& program, const std::vector<calc::Mapping>& mappings) {
    (void)mappings;
    return compile(program);
  }
  // compile(program, set) for each of several mapping sets at once (the empirical finish's
  // candidates), result s belonging to sets[s]; a backend that can compiles them all in
  // parallel and compiles a calculation's kernels once where sets share its mapping.
  // `wanted` (empty: every calculation): the calculations to compile; the others' results are
  // null (what the empirical finish will choose again need not be compiled before it).
  virtual std::vector<std::vector<std::unique_ptr<CompiledCalculation>>>
  compile_sets(const calc::Program& program, const std::vector<std::vector<calc::Mapping>>& sets,
               const std::vector<bool>& wanted = {}) {
    std::vector<std::vector<std::unique_ptr<CompiledCalculation>>> out;
    for (const std::vector<calc::Mapping>& set : sets) {
      out.push_back(compile(program, set));
      for (std::size_t c = 0; c < wanted.size() && c < out.back().size(); ++c)
        if (!wanted[c]) out.back()[c].reset();
    }
    return out;
  }
  // The time-tiled step of program.calculations[calculation] under `plan` (compiled, cached
  // like the calculations), or null where description().time_tiles is false. A kernel the
  // device cannot run (too much shared memory) throws std::runtime_error.
  virtual std::unique_ptr<CompiledTimeTile>
  compile_time_tile(const calc::Program& program, int calculation, const calc::TimeTilePlan& plan) {
    (void)program;
    (void)calculation;
    (void)plan;
    return nullptr;
  }
  // Starts compiling the calculations `wanted` marks under `mappings` into the backend's cache
  // on threads of their own and returns at once; the future is ready when they are done. A
  // later compile of the same modules then loads them from the cache (the empirical finish
  // compiles the folded forms of the candidate the model prices cheapest while the candidates
  // are timed). Errors are left to that compile. Here: nothing to do, a ready future.
  virtual std::future<void> precompile(const calc::Program& program,
                                       std::vector<calc::Mapping> mappings,
                                       std::vector<bool> wanted) {
    (void)program;
    (void)mappings;
    (void)wanted;
    std::promise<void> done;
    done.set_value();
    return done.get_future();
  }
  // Compiles the time-tiled steps of `plans` ahead, at once (the CUDA backend: NVRTC in parallel
  // threads, into its cache), so that compile_time_tile then loads each from the cache. Errors
  // are left to compile_time_tile, which reports them per plan.
  virtual void precompile_time_tiles(const calc::Program& program, int calculation,
                                     const std::vector<calc::TimeTilePlan>& plans) {
    (void)program;
    (void)calculation;
    (void)plans;
  }
  // Where the arrays handed to compiled calculations must live.
  virtual ArraySpace& space() { return host_space(); }
  // One line on what the last compile() did, e.g. "4 kernels compiled by NVRTC in 1.2 s" or
  // "4 kernels from the cache (no compilation)"; "" when there is nothing to say.
  virtual std::string compile_summary() const { return ""; }
  // Per generated kernel, its measured launches (GPU backends; empty elsewhere).
  virtual std::vector<KernelTiming> kernel_timings() const { return {}; }
};

// The backend registered under `name` (runtime/backend_registry.hpp: "interpreter", "cpu",
// "cuda"; this last one throws std::runtime_error when the build has no CUDA or no GPU can be
// used). Throws std::invalid_argument for other names.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options);

} // namespace saguaro::runtime
