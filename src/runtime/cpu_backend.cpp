// The "cpu" backend: generated C++ compiled by the host compiler at run time, cached on disk.
#include "codegen/cpp.hpp"
#include "runtime/backends.hpp"
#include "runtime/check.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/process.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <stdexcept>

namespace saguaro::runtime {
namespace {

namespace fs = std::filesystem;

// A loaded shared object, closed when the last calculation using it goes. It is opened with
// RTLD_NODELETE, so closing it never unmaps it: the OpenMP runtime it pulls in (libgomp, when
// the host program does not link it itself) keeps worker threads whose code must stay mapped.
struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle != nullptr) dlclose(handle);
  }
};

std::shared_ptr<Library> load_library(const std::string& path) {
  auto lib = std::make_shared<Library>();
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib->handle == nullptr) {
    const char* err = dlerror();
    throw std::runtime_error("cpu backend: cannot load " + path + ": " +
                             (err != nullptr ? err : "unknown error"));
  }
  return lib;
}

void* symbol(const Library& lib, const std::string& name, const std::string& path) {
  dlerror();
  void* sym = dlsym(lib.handle, name.c_str());
  if (sym == nullptr) throw std::runtime_error("cpu backend: " + path + " has no symbol " + name);
  return sym;
}

// A calculation's generated function, timed at every run() for the prediction log: two
// steady_clock reads and one push_back against a loop nest over the grid.
// A calculation's timings: over the whole region, the interior, the boundary shell.
using RegionTimings = std::array<std::shared_ptr<KernelTiming>, 3>;

class NativeCalculation final : public CompiledCalculation {
public:
  // `temporaries`: how many scratch arrays its mapping's kernels use.
  NativeCalculation(std::shared_ptr<Library> lib, codegen::CpuKernel kernel,
                    detail::CallShape shape, RegionTimings timing, std::size_t temporaries)
      : lib_(std::move(lib)), kernel_(kernel), shape_(std::move(shape)), timing_(std::move(timing)),
        temporaries_(temporaries, nullptr) {}

  ~NativeCalculation() override {
    for (double* t : temporaries_) host_space().release(t);
  }
  NativeCalculation(const NativeCalculation&) = delete;
  NativeCalculation& operator=(const NativeCalculation&) = delete;

  void run(const KernelArgs& args) const override {
    if (!detail::check_args(shape_, args)) return;
    ensure_temporaries(args.array_points()); // outside the timing: allocates only on a change
    const auto start = std::chrono::steady_clock::now();
    codegen::CpuArgs a{};
    a.fields = args.fields.data();
    a.pitch = args.row_pitch();
    for (int d = 0; d < 3; ++d) {
      a.alloc[d] = args.alloc[d];
      a.lo[d] = args.lo[d];
      a.hi[d] = args.hi[d];
      a.origin[d] = args.origin[d];
      a.index_offset[d] = args.index_offset[d];
      a.spacing[d] = args.spacing[d];
    }
    a.time = args.time;
    a.parameters = args.parameters.data();
    a.temporaries = temporaries_.data();
    kernel_(&a);
    KernelTiming& timing = *timing_[args.region.empty() ? 0 : args.region == "interior" ? 1 : 2];
    timing.seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ++timing.launches;
    // The last stage's region: what the roofline prices (earlier stages' extents are a
    // surface term it leaves out).
    timing.points = double(args.hi[0] - args.lo[0]) * double(args.hi[1] - args.lo[1]) *
                    double(args.hi[2] - args.lo[2]);
  }

private:
  // Scratch arrays of the patch's size, made again when it changes.
  void ensure_temporaries(std::size_t volume) const {
    if (temporaries_.empty()) return;
    if (volume == temporaries_volume_ && temporaries_.front() != nullptr) return;
    for (double*& t : temporaries_) {
      host_space().release(t);
      t = nullptr;
    }
    temporaries_volume_ = 0;
    for (double*& t : temporaries_) t = host_space().allocate(volume);
    temporaries_volume_ = volume;
  }

  std::shared_ptr<Library> lib_;
  codegen::CpuKernel kernel_;
  detail::CallShape shape_;
  RegionTimings timing_;                     // shared with the backend's kernel_timings()
  mutable std::vector<double*> temporaries_; // calc::temporary_arrays order
  mutable std::size_t temporaries_volume_ = 0;
};

std::string quote_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    s += plain ? a : "'" + a + "'";
  }
  return s;
}

} // namespace

CpuBackend::CpuBackend(BackendOptions options)
    : options_(std::move(options)), flags_(default_flags()) {
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
  return (fs::path(cache_dir()) / (key_for(codegen::generate_cpp(program, mappings)) + ".so"))
      .string();
}

std::vector<std::unique_ptr<CompiledCalculation>>
CpuBackend::compile(const calc::Program& program) {
  return compile(program, {});
}

std::vector<std::unique_ptr<CompiledCalculation>>
CpuBackend::compile(const calc::Program& program, const std::vector<calc::Mapping>& mappings) {
  if (program.calculations.empty()) return {};
  const std::string source = codegen::generate_cpp(program, mappings);
  const std::string key = key_for(source);
  const fs::path dir = cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error("cpu backend: cannot make the cache directory " + dir.string() + ": " +
                             ec.message());
  const fs::path object = dir / (key + ".so");
  const fs::path source_path = dir / (key + ".cpp");
  const std::string label = "thorn " + program.thorn + " (" +
                            std::to_string(program.calculations.size()) + " calculation" +
                            (program.calculations.size() == 1 ? "" : "s") + ")";

  if (fs::exists(object, ec)) {
    ++cache_hits_;
    if (options_.verbose)
      std::fprintf(stderr, "saguaro: cpu backend: cache hit for %s: %s\n", label.c_str(),
                   object.c_str());
  } else {
    FileLock lock(dir / (key + ".lock"), "cpu backend");
    if (fs::exists(object, ec)) { // another process compiled it while we waited
      ++cache_hits_;
      if (options_.verbose)
        std::fprintf(stderr,
                     "saguaro: cpu backend: cache hit for %s (compiled by another "
                     "process): %s\n",
                     label.c_str(), object.c_str());
    } else {
      write_atomically(source_path, source, "cpu backend");
      auto start = std::chrono::steady_clock::now();
      // The compiler writes the object under a temporary name; it appears whole.
      write_atomically(
          object,
          [&](const fs::path& tmp) {
            std::vector<std::string> argv{options_.compiler};
            argv.insert(argv.end(), flags_.begin(), flags_.end());
            argv.insert(argv.end(), {"-shared", "-o", tmp.string(), source_path.string()});
            CommandResult result;
            try {
              result = run_command(argv);
            } catch (const std::exception& e) {
              throw std::runtime_error("cpu backend: the C++ compiler '" + options_.compiler +
                                       "' cannot be run: " + e.what() + " (source kept in " +
                                       source_path.string() + ")");
            }
            ++compiler_runs_;
            if (result.status != 0)
              throw std::runtime_error("cpu backend: compiling " + label + " failed (exit status " +
                                       std::to_string(result.status) + "); source kept in " +
                                       source_path.string() + "\ncommand: " + quote_command(argv) +
                                       "\n" + result.output);
          },
          support::AtomicWrite{"cpu backend"});
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (options_.verbose)
        std::fprintf(stderr, "saguaro: cpu backend: compiled %s in %.2f s: %s\n", label.c_str(),
                     seconds, object.c_str());
    }
  }

  std::shared_ptr<Library> lib = load_library(object.string());
  auto abi = reinterpret_cast<int (*)()>(symbol(*lib, "saguaro_cpu_abi", object.string()));
  auto size =
      reinterpret_cast<unsigned long (*)()>(symbol(*lib, "saguaro_cpu_args_size", object.string()));
  if (abi() != codegen::kCpuAbiVersion || size() != sizeof(codegen::CpuArgs))
    throw std::runtime_error("cpu backend: " + object.string() +
                             " was built for another calling convention");
  std::vector<std::unique_ptr<CompiledCalculation>> out;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    std::string fn = codegen::cpu_function_name(program, c);
    auto kernel = reinterpret_cast<codegen::CpuKernel>(symbol(*lib, fn, object.string()));
    // Launches over the whole region, and over the interior and the boundary shell when the
    // host splits the calculation around a ghost exchange, are timed apart.
    RegionTimings timing;
    for (std::size_t r = 0; r < timing.size(); ++r) {
      timing[r] = std::make_shared<KernelTiming>();
      timing[r]->name = program.calculations[c].name;
      timing[r]->mapping = "cpu";
      timing[r]->calculation = int(c);
      timing[r]->region = r == 0 ? "" : r == 1 ? "interior" : "boundary shell";
      timings_.push_back(timing[r]);
    }
    const std::size_t temporaries =
        mappings.empty() ? 0 : calc::temporary_arrays(mappings[c]).size();
    out.push_back(std::make_unique<NativeCalculation>(
        lib, kernel, detail::call_shape(program.calculations[c]), std::move(timing), temporaries));
  }
  return out;
}

std::vector<KernelTiming> CpuBackend::kernel_timings() const {
  std::vector<KernelTiming> out;
  for (const auto& t : timings_)
    if (t->region.empty() || t->launches > 0) out.push_back(*t); // parts only when split
  return out;
}

} // namespace saguaro::runtime
