// The "cpu" backend: generated C++ compiled by the host compiler at run time, cached on disk.
#include "codegen/cpp.hpp"
#include "runtime/backends.hpp"
#include "runtime/check.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/native_library.hpp"
#include "runtime/process.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace saguaro::runtime {

namespace fs = std::filesystem;

CpuBackend::CpuBackend(BackendOptions options)
    : options_(std::move(options)), flags_(default_flags()),
      // sysfs is read only where the rule needs it (one file set per CPU of the host).
      cache_bytes_(options_.streaming_stores == StreamingStores::automatic &&
                           options_.array_points > 0
                       ? host_last_level_cache_bytes() / std::max(1, options_.ranks_on_host)
                       : 0) {
  if (options_.compiler.empty()) options_.compiler = "c++";
}

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

BackendDescription CpuBackend::description() const {
  BackendDescription d;
  d.name = name();
  d.hardware = Hardware::host;
  d.takes_mappings = true; // it runs a mapping's kernel partition, loop nest per kernel
  d.model = DeviceModel::host_roofline;
  d.clock = KernelClock::host_clock;
  d.array_space = host_space().name();
  return d;
}

std::vector<std::string> CpuBackend::default_flags() {
  return {"-O3", "-march=native", "-fopenmp", "-fPIC", "-std=c++17", "-fno-math-errno"};
}

std::string CpuBackend::cache_dir() const {
  return options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir;
}

const std::string& CpuBackend::compiler_identity() {
  if (!identity_.empty()) return identity_;
  const std::string& cc = options_.compiler;
  CommandResult version;
  try {
    version = run_command({cc, "--version"});
  } catch (const std::exception& e) {
    throw std::runtime_error("cpu backend: the C++ compiler '" + cc +
                             "' cannot be run (BackendOptions::compiler): " + e.what());
  }
  if (version.status != 0)
    throw std::runtime_error("cpu backend: the C++ compiler '" + cc +
                             "' failed on --version (exit status " +
                             std::to_string(version.status) + "):\n" + version.output);
  // What -march=native means on this machine: the driver's expansion of it (GCC lists the
  // resolved -march= and every -m flag, Clang the target CPU and features).
  CommandResult target =
      run_command({cc, "-march=native", "-###", "-x", "c++", "-S", "-o", "/dev/null", "/dev/null"});
  identity_ = cc + "\n" + version.output + "\n" + target.output;
  return identity_;
}

std::string CpuBackend::key_for(const std::string& source) {
  std::uint64_t h = fnv1a64("saguaro-cpu-backend\n");
  h = fnv1a64(std::to_string(codegen::kCpuAbiVersion) + "\n", h);
  for (const std::string& f : flags_) h = fnv1a64(f + "\n", h);
  h = fnv1a64(compiler_identity(), h);
  h = fnv1a64(std::string_view("\0", 1), h);
  h = fnv1a64(source, h);
  return hex_key(h);
}

std::string CpuBackend::object_path(const calc::Program& program,
                                    const std::vector<calc::Mapping>& mappings) {
  return (fs::path(cache_dir()) /
          (key_for(codegen::generate_cpp(program, mappings, streamed(program, mappings))) + ".so"))
      .string();
}

std::vector<bool> CpuBackend::streamed(const calc::Program& program,
                                       const std::vector<calc::Mapping>& mappings) const {
  std::vector<bool> out;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const std::size_t arrays =
        program.calculations[c].grid_functions.size() +
        (c < mappings.size() ? calc::temporary_arrays(mappings[c]).size() : 0);
    out.push_back(streams_stores(options_.streaming_stores,
                                 8.0 * double(options_.array_points) * double(arrays),
                                 cache_bytes_));
  }
  return out;
}

std::vector<std::unique_ptr<CompiledCalculation>>
CpuBackend::compile(const calc::Program& program) {
  return compile(program, {});
}

std::vector<std::unique_ptr<CompiledCalculation>>
CpuBackend::compile(const calc::Program& program, const std::vector<calc::Mapping>& mappings) {
  if (program.calculations.empty()) return {};
  detail::SharedObjectJob job;
  job.who = "cpu backend";
  job.label = "thorn " + program.thorn + " (" + std::to_string(program.calculations.size()) +
              " calculation" + (program.calculations.size() == 1 ? "" : "s") + ")";
  job.dir = cache_dir();
  job.source = codegen::generate_cpp(program, mappings, streamed(program, mappings));
  job.key = key_for(job.source);
  job.compile = {options_.compiler};
  job.compile.insert(job.compile.end(), flags_.begin(), flags_.end());
  job.verbose = options_.verbose;
  const detail::SharedObject object = detail::compile_shared_object(job);
  ++(object.compiled ? compiler_runs_ : cache_hits_);
  const std::string path = object.path.string();
  return detail::native_calculations(detail::load_library(path, job.who), path, job.who, program,
                                     mappings, host_space(), "cpu", timings_);
}

std::vector<KernelTiming> CpuBackend::kernel_timings() const {
  return detail::reported_timings(timings_);
}

} // namespace saguaro::runtime
