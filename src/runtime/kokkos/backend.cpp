// The "kokkos" backend: generated Kokkos C++ (codegen::generate_kokkos) compiled at run time by
// Kokkos's compiler with Kokkos's flags (kokkos::compile_command), linked against the support
// library, cached on disk like the cpu backend's objects, loaded with dlopen; arrays in the
// Kokkos array space, so that a run never leaves Kokkos's execution space.
#include "codegen/kokkos.hpp"
#include "runtime/backends.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/kokkos.hpp"
#include "runtime/native_library.hpp"
#include "runtime/process.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace saguaro::runtime {
namespace {

namespace fs = std::filesystem;

class KokkosBackend final : public Backend {
public:
  explicit KokkosBackend(BackendOptions options)
      : options_(std::move(options)), space_(kokkos::space()), kokkos_(kokkos::describe()) {}

  std::string name() const override { return "kokkos"; }

  BackendDescription description() const override {
    BackendDescription d;
    d.name = name();
    // A device execution space (CUDA, HIP, SYCL) keeps its arrays off the host.
    d.hardware = space_.on_device() ? Hardware::gpu : Hardware::host;
    d.device_detail = kokkos_;
    d.takes_mappings = true; // it runs a mapping's kernel partition, one parallel_for per kernel
    d.model = DeviceModel::none;
    d.clock = KernelClock::host_clock;
    d.array_space = space_.name();
    return d;
  }

  std::vector<std::unique_ptr<CompiledCalculation>> compile(const calc::Program& program) override {
    return compile(program, {});
  }

  std::vector<std::unique_ptr<CompiledCalculation>>
  compile(const calc::Program& program, const std::vector<calc::Mapping>& mappings) override {
    if (program.calculations.empty()) return {};
    detail::SharedObjectJob job;
    job.who = "kokkos backend";
    job.label = "thorn " + program.thorn + " (" + std::to_string(program.calculations.size()) +
                " calculation" + (program.calculations.size() == 1 ? "" : "s") + ")";
    job.dir =
        fs::path(options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir) / "kokkos";
    job.source = codegen::generate_kokkos(program, mappings);
    job.compile = kokkos::compile_command();
    job.link_flags = kokkos::link_flags();
    job.key = key_for(job);
    job.verbose = options_.verbose;
    const detail::SharedObject object = detail::compile_shared_object(job);
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", object.seconds);
    summary_ = std::to_string(program.calculations.size()) + " calculations " +
               (object.compiled ? "compiled by " + job.compile.front() + " in " + seconds + " s"
                                : "from the cache (no compilation)");
    const std::string path = object.path.string();
    return detail::native_calculations(detail::load_library(path, job.who), path, job.who, program,
                                       mappings, space_, "kokkos", timings_);
  }

  ArraySpace& space() override { return space_; }
  std::string compile_summary() const override { return summary_; }
  std::vector<KernelTiming> kernel_timings() const override {
    return detail::reported_timings(timings_);
  }

private:
  // The source, the command and the compiler's identity (its --version), so that another
  // Kokkos, compiler or flag set compiles again.
  std::string key_for(const detail::SharedObjectJob& job) {
    if (identity_.empty()) {
      CommandResult version;
      try {
        version = run_command({job.compile.front(), "--version"});
      } catch (const std::exception& e) {
        throw std::runtime_error("kokkos backend: Kokkos's C++ compiler '" + job.compile.front() +
                                 "' cannot be run: " + e.what());
      }
      identity_ = version.output + "\n" + kokkos_;
    }
    std::uint64_t h = fnv1a64("saguaro-kokkos-backend\n");
    for (const std::string& a : job.compile) h = fnv1a64(a + "\n", h);
    for (const std::string& a : job.link_flags) h = fnv1a64(a + "\n", h);
    h = fnv1a64(identity_, h);
    h = fnv1a64(std::string_view("\0", 1), h);
    h = fnv1a64(job.source, h);
    return hex_key(h);
  }

  BackendOptions options_;
  ArraySpace& space_;
  std::string kokkos_; // "Kokkos 3.4.1, Serial"
  std::string identity_;
  std::string summary_;
  std::vector<std::shared_ptr<KernelTiming>> timings_;
};

} // namespace

std::unique_ptr<Backend> make_kokkos_backend(const BackendOptions& options) {
  return std::make_unique<KokkosBackend>(options);
}

} // namespace saguaro::runtime
