// Compiling generated C++ into a cached shared object and running its calculations: shared by
// the cpu and kokkos backends (native_library.hpp).
#include "runtime/native_library.hpp"

#include "runtime/check.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/process.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <dlfcn.h>
#include <stdexcept>

namespace saguaro::runtime::detail {
namespace {

namespace fs = std::filesystem;

// A calculation's timings: over the whole region, the interior, the boundary shell.
using RegionTimings = std::array<std::shared_ptr<KernelTiming>, 3>;

// A calculation's generated function, timed at every run() for the prediction log: two
// steady_clock reads and one push_back against a loop nest over the grid. (Kokkos's generated
// functions fence before they return, so the time is the kernels'.)
class NativeCalculation final : public CompiledCalculation {
public:
  // `temporaries`: how many scratch arrays its mapping's kernels use, allocated in `space`.
  NativeCalculation(std::shared_ptr<Library> lib, codegen::CpuKernel kernel, CallShape shape,
                    RegionTimings timing, std::size_t temporaries, ArraySpace& space)
      : lib_(std::move(lib)), kernel_(kernel), shape_(std::move(shape)), timing_(std::move(timing)),
        space_(space), temporaries_(temporaries, nullptr) {}

  ~NativeCalculation() override {
    for (double* t : temporaries_) space_.release(t);
  }
  NativeCalculation(const NativeCalculation&) = delete;
  NativeCalculation& operator=(const NativeCalculation&) = delete;

  void run(const KernelArgs& args) const override {
    if (!check_args(shape_, args)) return;
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
      space_.release(t);
      t = nullptr;
    }
    temporaries_volume_ = 0;
    for (double*& t : temporaries_) t = space_.allocate(volume);
    temporaries_volume_ = volume;
  }

  std::shared_ptr<Library> lib_;
  codegen::CpuKernel kernel_;
  CallShape shape_;
  RegionTimings timing_; // shared with the backend's kernel_timings()
  ArraySpace& space_;
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

Library::~Library() {
  if (handle != nullptr) dlclose(handle);
}

std::shared_ptr<Library> load_library(const std::string& path, const std::string& who,
                                      bool global) {
  auto lib = std::make_shared<Library>();
  lib->handle =
      dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL) | RTLD_NODELETE);
  if (lib->handle == nullptr) {
    const char* err = dlerror();
    throw std::runtime_error(who + ": cannot load " + path + ": " +
                             (err != nullptr ? err : "unknown error"));
  }
  return lib;
}

void* symbol(const Library& lib, const std::string& name, const std::string& path,
             const std::string& who) {
  dlerror();
  void* sym = dlsym(lib.handle, name.c_str());
  if (sym == nullptr) throw std::runtime_error(who + ": " + path + " has no symbol " + name);
  return sym;
}

SharedObject compile_shared_object(const SharedObjectJob& job) {
  const std::string& who = job.who;
  std::error_code ec;
  fs::create_directories(job.dir, ec);
  if (ec)
    throw std::runtime_error(who + ": cannot make the cache directory " + job.dir.string() + ": " +
                             ec.message());
  SharedObject out;
  out.path = job.dir / (job.key + ".so");
  const fs::path source_path = job.dir / (job.key + ".cpp");
  const char* label = job.label.c_str();
  if (fs::exists(out.path, ec)) {
    if (job.verbose)
      std::fprintf(stderr, "saguaro: %s: cache hit for %s: %s\n", who.c_str(), label,
                   out.path.c_str());
    return out;
  }
  FileLock lock(job.dir / (job.key + ".lock"), who);
  if (fs::exists(out.path, ec)) { // another process compiled it while we waited
    if (job.verbose)
      std::fprintf(stderr, "saguaro: %s: cache hit for %s (compiled by another process): %s\n",
                   who.c_str(), label, out.path.c_str());
    return out;
  }
  write_atomically(source_path, job.source, who);
  auto start = std::chrono::steady_clock::now();
  // The compiler writes the object under a temporary name; it appears whole.
  write_atomically(
      out.path,
      [&](const fs::path& tmp) {
        std::vector<std::string> argv = job.compile;
        argv.insert(argv.end(), {"-shared", "-o", tmp.string(), source_path.string()});
        argv.insert(argv.end(), job.link_flags.begin(), job.link_flags.end());
        CommandResult result;
        try {
          result = run_command(argv);
        } catch (const std::exception& e) {
          throw std::runtime_error(who + ": the C++ compiler '" + job.compile.front() +
                                   "' cannot be run: " + e.what() + " (source kept in " +
                                   source_path.string() + ")");
        }
        if (result.status != 0)
          throw std::runtime_error(who + ": compiling " + job.label + " failed (exit status " +
                                   std::to_string(result.status) + "); source kept in " +
                                   source_path.string() + "\ncommand: " + quote_command(argv) +
                                   "\n" + result.output);
      },
      support::AtomicWrite{who});
  out.compiled = true;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (job.verbose)
    std::fprintf(stderr, "saguaro: %s: compiled %s in %.2f s: %s\n", who.c_str(), label,
                 out.seconds, out.path.c_str());
  return out;
}

std::vector<std::unique_ptr<CompiledCalculation>> native_calculations(
    const std::shared_ptr<Library>& lib, const std::string& path, const std::string& who,
    const calc::Program& program, const std::vector<calc::Mapping>& mappings, ArraySpace& space,
    const std::string& mapping_label, std::vector<std::shared_ptr<KernelTiming>>& timings) {
  auto abi = reinterpret_cast<int (*)()>(symbol(*lib, "saguaro_cpu_abi", path, who));
  auto size =
      reinterpret_cast<unsigned long (*)()>(symbol(*lib, "saguaro_cpu_args_size", path, who));
  if (abi() != codegen::kCpuAbiVersion || size() != sizeof(codegen::CpuArgs))
    throw std::runtime_error(who + ": " + path + " was built for another calling convention");
  std::vector<std::unique_ptr<CompiledCalculation>> out;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    std::string fn = codegen::cpu_function_name(program, c);
    auto kernel = reinterpret_cast<codegen::CpuKernel>(symbol(*lib, fn, path, who));
    // Launches over the whole region, and over the interior and the boundary shell when the
    // host splits the calculation around a ghost exchange, are timed apart.
    RegionTimings timing;
    for (std::size_t r = 0; r < timing.size(); ++r) {
      timing[r] = std::make_shared<KernelTiming>();
      timing[r]->name = program.calculations[c].name;
      timing[r]->mapping = mapping_label;
      timing[r]->calculation = int(c);
      timing[r]->region = r == 0 ? "" : r == 1 ? "interior" : "boundary shell";
      timings.push_back(timing[r]);
    }
    const std::size_t temporaries =
        mappings.empty() ? 0 : calc::temporary_arrays(mappings[c]).size();
    out.push_back(std::make_unique<NativeCalculation>(
        lib, kernel, call_shape(program.calculations[c]), std::move(timing), temporaries, space));
  }
  return out;
}

std::vector<KernelTiming>
reported_timings(const std::vector<std::shared_ptr<KernelTiming>>& timings) {
  std::vector<KernelTiming> out;
  for (const auto& t : timings)
    if (t->region.empty() || t->launches > 0) out.push_back(*t); // parts only when split
  return out;
}

} // namespace saguaro::runtime::detail
