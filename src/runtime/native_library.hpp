// What the backends that compile generated C++ into a shared object share (internal to
// runtime/): the cpu backend (the host compiler) and the kokkos backend (Kokkos's compiler).
// The object is compiled once into the disk cache (an flock per key, written under a temporary
// name), loaded with dlopen, and its calculations are functions taking codegen::CpuArgs
// (codegen/cpp.hpp), run and timed by NativeCalculation.
#pragma once

#include "codegen/cpp.hpp"
#include "runtime/kernel.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace saguaro::runtime::detail {

// A loaded shared object, closed when the last calculation using it goes (RTLD_NODELETE: the
// OpenMP or Kokkos runtime it pulls in keeps threads whose code must stay mapped).
struct Library {
  void* handle = nullptr;
  ~Library();
};
// `who` ("cpu backend") begins the error messages.
std::shared_ptr<Library> load_library(const std::string& path, const std::string& who,
                                      bool global = false);
void* symbol(const Library& lib, const std::string& name, const std::string& path,
             const std::string& who);

// One compile into the cache: `source` is written to <dir>/<key>.cpp, then
//   compiler flags... -shared -o <tmp> <dir>/<key>.cpp link_flags...
// makes <dir>/<key>.so, unless it is there already (or another process made it meanwhile).
struct SharedObjectJob {
  std::string who;   // "cpu backend"
  std::string label; // "thorn wave (2 calculations)", for messages
  std::filesystem::path dir;
  std::string key;
  std::string source;
  std::vector<std::string> compile; // the compiler, then its flags
  std::vector<std::string> link_flags;
  bool verbose = false;
};
struct SharedObject {
  std::filesystem::path path;
  bool compiled = false; // false: a cache hit
  double seconds = 0;    // the compiler's
};
SharedObject compile_shared_object(const SharedObjectJob& job);

// The calculations of `program` from a loaded object of codegen::generate_cpp's calling
// convention (checked: saguaro_cpu_abi, saguaro_cpu_args_size), under `mappings` (empty: the
// defaults), their temporaries in `space`, timed by steady_clock into new entries of `timings`
// (per calculation: the whole region, the interior, the boundary shell; KernelTiming::mapping
// `mapping_label`).
std::vector<std::unique_ptr<CompiledCalculation>> native_calculations(
    const std::shared_ptr<Library>& lib, const std::string& path, const std::string& who,
    const calc::Program& program, const std::vector<calc::Mapping>& mappings, ArraySpace& space,
    const std::string& mapping_label, std::vector<std::shared_ptr<KernelTiming>>& timings);

// The timings to report: every whole-region entry, the parts only when the host split a launch.
std::vector<KernelTiming>
reported_timings(const std::vector<std::shared_ptr<KernelTiming>>& timings);

} // namespace saguaro::runtime::detail
