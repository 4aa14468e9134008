// The backends behind the registry (backend_registry.hpp), for code that needs more than the
// Backend interface (tests, `saguaro inspect`): the CPU backend's cache and compiler statistics.
#pragma once

#include "runtime/kernel.hpp"

#include <string>
#include <vector>

namespace saguaro::runtime {

// The reference backend: calc::Interpreter point by point over KernelArgs (see kernel.cpp).
std::unique_ptr<Backend> make_interpreter_backend();

// Generated CUDA (codegen::generate_cuda) compiled by NVRTC for this process's GPU, cached on
// disk in <options.cache_dir>/cuda (default $XDG_CACHE_HOME/saguaro/cuda or
// $HOME/.cache/saguaro/cuda; see cuda::compile), run on the GPU with arrays in cuda::
// device_space(). Throws std::runtime_error with cuda::available()'s reason when the build has
// no CUDA or no GPU can be used.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options);

// Generated Kokkos C++ (codegen::generate_kokkos) compiled by Kokkos's compiler into a shared
// object linked against the Kokkos support library, cached in <options.cache_dir>/kokkos, run on
// Kokkos's default execution space with arrays in kokkos::space() (runtime/kokkos.hpp). Throws
// std::runtime_error with kokkos::available()'s reason when the build has no Kokkos.
std::unique_ptr<Backend> make_kokkos_backend(const BackendOptions& options);

// The CpuBackend below.
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options);

// Generated C++ (codegen::generate_cpp), compiled by the host compiler into a shared object,
// cached on disk and loaded with dlopen. Under a mapping it runs exactly the mapping's kernel
// partition (a loop nest per kernel, temporaries in host scratch arrays of the patch's size,
// kept between runs), so a mapper's partition can be checked without a GPU.
//
// Cache: options.cache_dir, else $XDG_CACHE_HOME/saguaro, else $HOME/.cache/saguaro. The key
// is an FNV-1a hash of the source (so of the mappings), the flags and the compiler's identity
// (its --version and what -march=native resolves to); files <key>.so (the object) and <key>.cpp
// (its source, for people to read). Concurrent processes (MPI ranks) serialise on an flock of
// <key>.lock; the object is compiled under a temporary name and renamed into place.
class CpuBackend final : public Backend {
public:
  explicit CpuBackend(BackendOptions options = {});
  std::string name() const override { return "cpu"; }
  BackendDescription description() const override;
  std::vector<std::unique_ptr<CompiledCalculation>> compile(const calc::Program& program) override;
  std::vector<std::unique_ptr<CompiledCalculation>>
  compile(const calc::Program& program, const std::vector<calc::Mapping>& mappings) override;

  // The flags generated code is compiled with (-shared and -o come on top).
  static std::vector<std::string> default_flags();

  // The cache directory in use (created on first use).
  std::string cache_dir() const;
  // The path of the shared object `program` compiles to under `mappings` (the key is computed,
  // nothing runs but the compiler identity probe).
  std::string object_path(const calc::Program& program,
                          const std::vector<calc::Mapping>& mappings = {});
  // Per calculation, whether its kernels stream their stores (streams_stores over its grid
  // functions and temporaries at BackendOptions::array_points, against this rank's share of the
  // host's last-level caches).
  std::vector<bool> streamed(const calc::Program& program,
                             const std::vector<calc::Mapping>& mappings) const;

  // Statistics of this backend object: compiler runs (compiles made here) and cache hits.
  int compiler_runs() const { return compiler_runs_; }
  int cache_hits() const { return cache_hits_; }

  // One per compiled calculation (of every compile()): name = the calculation's, mapping
  // "cpu", kernel 0, every run() timed with steady_clock, points = its last stage's region.
  std::vector<KernelTiming> kernel_timings() const override;

private:
  const std::string& compiler_identity();
  std::string key_for(const std::string& source);

  BackendOptions options_;
  std::vector<std::string> flags_;
  std::string identity_; // filled on first use
  double cache_bytes_;   // this rank's share of the host's last-level caches (automatic only)
  int compiler_runs_ = 0;
  int cache_hits_ = 0;
  std::vector<std::shared_ptr<KernelTiming>> timings_; // written by the calculations' run()
};

} // namespace saguaro::runtime
