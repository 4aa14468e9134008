// The CUDA backend's public face. No CUDA header is needed to use it: the driver library is
// loaded at run time (dlopen of libcuda.so.1), so one build runs on machines with and without
// a GPU; NVRTC (linked) compiles generated code to cubin also where there is no GPU.
#pragma once

#include "codegen/cuda.hpp"
#include "runtime/array_space.hpp"
#include "runtime/kernel.hpp"

#include <array>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::runtime::cuda {

// The geometry argument of generated kernels (codegen/cuda.hpp) for a call's KernelArgs.
codegen::CudaGeometry geometry_of(const KernelArgs& args);

// Whether this build has the CUDA backend (SAGUARO_WITH_CUDA).
bool built_with_cuda();

// Whether a GPU can be used: the driver library loads, initialises and reports a device.
// When not, `why` says what failed ("libcuda.so.1 not found", "no CUDA device", ...).
bool available(std::string* why = nullptr);

struct DeviceInfo {
  int ordinal = 0;
  std::string name; // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int driver_version = 0;   // cuDriverGetVersion, e.g. 13000
  std::string arch() const; // "sm_90"
};
// The device this process uses: ordinal (local MPI rank) % device count. Throws when none.
DeviceInfo device_info();

// ptxas's report for one kernel (from NVRTC's log with -Xptxas=-v).
struct PtxasReport {
  int registers = -1;                    // per thread; -1 when unknown
  int spill_stores = 0, spill_loads = 0; // bytes
  int stack_bytes = 0;
  int shared_bytes = 0; // static shared memory
  int barriers = 0;
  int constant_bytes = 0;
};
// Parses every "Function properties for NAME" / "Used N registers" section of a ptxas log.
std::map<std::string, PtxasReport> parse_ptxas_log(const std::string& log);

struct CompileOptions {
  std::string cache_dir; // "" = $XDG_CACHE_HOME/saguaro/cuda or $HOME/.cache/saguaro/cuda
  std::vector<std::string> extra_options; // added to NVRTC's
  bool verbose = false;
};

struct CompiledModule {
  std::vector<char> cubin;
  std::string log;                            // NVRTC's log (ptxas -v report included)
  std::map<std::string, PtxasReport> kernels; // by kernel name
  bool from_cache = false;
  std::string key;            // hash of source + options + arch + NVRTC version
  double compile_seconds = 0; // 0 when from the cache
};

// NVRTC failed: what() has the log and the path where the source was saved.
class CompileError : public std::runtime_error {
public:
  CompileError(const std::string& message, std::string source_path, std::string log)
      : std::runtime_error(message), source_path_(std::move(source_path)), log_(std::move(log)) {}
  const std::string& source_path() const { return source_path_; }
  const std::string& log() const { return log_; }

private:
  std::string source_path_, log_;
};

// Compiles `source` for `arch` ("sm_90") into cubin with NVRTC (double precision, -O3 default,
// --std=c++17, -Xptxas=-v, -default-device, --no-cache: not NVRTC's own cache in the driver's,
// which skips ptxas and its report), or takes it from the disk cache: <cache>/<key>.cubin, .cu,
// .log. A failed compile saves <cache>/failed-<key>.cu and .log and throws CompileError.
// Works without a GPU.
CompiledModule compile(const std::string& source, const std::string& arch,
                       const CompileOptions& options = {});

// The kernels of `module` (generated for `program` under `mappings`) that the model expects to
// hold one block per SM whatever ptxas does: the register estimate (model::estimated_registers)
// times the block's threads above kOneBlockPerSmMargin halves of an SM's 64K registers. Given
// only the block size, ptxas sometimes leaves such a kernel short of registers it could have
// had for nothing: BSSN fd 4's last fission kernel in RK4's stage 2 form got 180 registers and
// ran at half the issue rate of its 254-register forms (4.77 against 2.57 ms on the H200,
// bench/results/2026-11-29-whole-register-file-one-block-per-sm-H200.md). The margin: the
// estimate is off by 18% on average, and a kernel ptxas would fit two blocks per SM must not
// lose them. Kernels whose mapping sets blocks per SM are not among them.
inline constexpr double kOneBlockPerSmMargin = 1.5;
std::set<std::string> one_block_per_sm(const calc::Program& program,
                                       const std::vector<calc::Mapping>& mappings,
                                       const codegen::CudaModule& module);

// The kernels of `module` whose register estimate exceeds the registers a thread can have
// (kMaxRegistersPerThread): printed with their (f, e) tiles walked in groups
// (codegen::KernelForms::grouped_tiles). Such kernels spill or hold one block per SM, and their
// spills and z halos come back from L2 or DRAM; launched x fastest, one wave of 132 blocks
// covers a single z tile, and the planes it shares with the next have left L2 two waves later.
// Grouped (8 x 8), BSSN's step took 204.2 -> 177.5 ms at fd 8 on the H200 and 88.7 -> 83.1 ms
// at fd 4. Grouping every kernel compiled with the whole register file instead (4 x 4) cost fd
// 4's last fission kernel (estimate 243-252, 253 registers, no spill) 4.00 -> 4.37 ms in RK4's
// stage 2 form, hence the rule (bench/results/2026-11-29-grouped-tiles-H200.md,
// 2026-11-29-block-raster-whole-register-kernels-H200.md).
inline constexpr double kMaxRegistersPerThread = 255;
std::set<std::string> grouped_tiles(const calc::Program& program,
                                    const std::vector<calc::Mapping>& mappings,
                                    const codegen::CudaModule& module);

// The generated kernels of `program` under `mappings`, compiled: once as generate_cuda emits
// them, the kernels of one_block_per_sm given the whole register file and those of
// grouped_tiles their tiles in groups (codegen::KernelForms); then, if ptxas spilled in any kernel,
// again with those in the other form (the whole register file, or ptxas's choice for those that
// started with it), and a third time if that made some of them spill more, with those back in their
// first form. Each kernel ends in the form that spilled less, except a kernel whose mapping sets
// blocks per SM (calc::BlockConfig::min_blocks): it keeps the cap it asked for, spills and all.
// Every compile goes through compile()'s cache, so a rerun compiles nothing. `only` >= 0: that
// calculation's kernels alone, `layout`: strides as constants (codegen::generate_cuda's).
struct CompiledProgram {
  codegen::CudaModule generated;
  CompiledModule compiled;
};
CompiledProgram compile_generated(const calc::Program& program,
                                  const std::vector<calc::Mapping>& mappings,
                                  const std::string& arch, const CompileOptions& options = {},
                                  int only = -1,
                                  const std::optional<calc::ArrayLayout>& layout = std::nullopt);

// NVRTC's version as "13.0".
std::string nvrtc_version();

// A module of hand-written kernels (the benchmarks' references: the triad, naive stencils),
// compiled by compile() for this process's GPU, loaded, and launched on the stream the CUDA
// backend and device_space() use, so its launches queue and time like generated kernels'.
// Throws std::runtime_error when no GPU can be used, CompileError when NVRTC fails.
class KernelModule {
public:
  explicit KernelModule(const std::string& source, const CompileOptions& options = {});
  ~KernelModule();
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;

  // Queues kernel `name` (an extern "C" __global__ function of the source). `params`: a
  // pointer to each argument, as cuLaunchKernel takes them; `shared_bytes` of dynamic shared
  // memory per block.
  void launch(const std::string& name, const std::array<unsigned, 3>& grid,
              const std::array<unsigned, 3>& block, void** params, std::size_t shared_bytes = 0);
  // Seconds between CUDA events recorded before the first and after the last of `count`
  // back-to-back launches (waits for them).
  double time(const std::string& name, const std::array<unsigned, 3>& grid,
              const std::array<unsigned, 3>& block, void** params, int count = 1,
              std::size_t shared_bytes = 0);
  // ptxas's report per kernel (registers, spills).
  const std::map<std::string, PtxasReport>& resources() const;

private:
  struct Loaded;
  std::unique_ptr<Loaded> loaded_;
};

// The GPU's ArraySpace (the CUDA backend's space()): arrays in device memory and the fixed
// operations as kernels of a support module, compiled (or taken from the default cache) on
// first use. Throws std::runtime_error when no GPU can be used.
ArraySpace& device_space();

// The source of device_space()'s support module (boundary_point.hpp followed by
// cuda/support.cu, both embedded in the library), compiled with --fmad=false.
std::string support_source();

} // namespace saguaro::runtime::cuda
