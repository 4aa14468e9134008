// NVRTC compilation to cubin with the on-disk cache, and the ptxas report it gives.
#include "runtime/cuda.hpp"
#include "runtime/disk_cache.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace saguaro::runtime::cuda {
namespace {

namespace fs = std::filesystem;

const char* const kWho = "cuda backend";

void check_nvrtc(nvrtcResult result, const char* call) {
  if (result == NVRTC_SUCCESS) return;
  throw std::runtime_error(std::string("NVRTC: ") + call +
                           " failed: " + nvrtcGetErrorString(result));
}
#define SAGUARO_NVRTC(call) check_nvrtc(call, #call)

// An NVRTC program, destroyed with the object.
class Program {
public:
  Program(const std::string& source, const std::string& name) {
    SAGUARO_NVRTC(nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

  std::string log() const {
    std::size_t size = 0;
    SAGUARO_NVRTC(nvrtcGetProgramLogSize(program_, &size));
    std::string text(size, '\0');
    if (size > 0) SAGUARO_NVRTC(nvrtcGetProgramLog(program_, text.data()));
    while (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }
  std::vector<char> cubin() const {
    std::size_t size = 0;
    SAGUARO_NVRTC(nvrtcGetCUBINSize(program_, &size));
    std::vector<char> bytes(size);
    if (size > 0) SAGUARO_NVRTC(nvrtcGetCUBIN(program_, bytes.data()));
    return bytes;
  }

private:
  nvrtcProgram program_ = nullptr;
};

// The first `n` lines of `text`, with a note on how many more there are.
std::string first_lines(const std::string& text, int n, const std::string& rest_where) {
  std::istringstream in(text);
  std::string line, out;
  int shown = 0, total = 0;
  while (std::getline(in, line)) {
    ++total;
    if (shown < n) {
      out += line + "\n";
      ++shown;
    }
  }
  if (total > shown)
    out += "... (" + std::to_string(total - shown) + " more lines in " + rest_where + ")\n";
  return out;
}

// --no-cache: NVRTC (12.9+) would otherwise take a cubin it compiled before from the driver's
// compute cache when the driver is loaded, and then runs no ptxas and writes no ptxas report.
// Saguaro keeps its own cache, with the report beside the cubin.
std::vector<std::string> nvrtc_options(const std::string& arch, const CompileOptions& options) {
  // -split-compile=0: the module's kernels optimised in parallel on every core (a BSSN
  // right-hand side's three folded forms and its constraints compile in the time of the largest).
  std::vector<std::string> o = {"-arch=" + arch,   "--std=c++17", "-Xptxas=-v",
                                "-default-device", "--no-cache",  "-split-compile=0"};
  o.insert(o.end(), options.extra_options.begin(), options.extra_options.end());
  return o;
}

std::string cache_dir_for(const CompileOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  return (fs::path(default_cache_dir()) / "cuda").string();
}

// The cached module of `key`, when its cubin is there.
std::optional<CompiledModule> from_cache(const fs::path& dir, const std::string& key) {
  std::error_code ec;
  const fs::path cubin = dir / (key + ".cubin");
  if (!fs::exists(cubin, ec)) return std::nullopt;
  CompiledModule m;
  const std::string bytes = read_file_bytes(cubin, kWho);
  m.cubin.assign(bytes.begin(), bytes.end());
  const fs::path log = dir / (key + ".log");
  if (fs::exists(log, ec)) m.log = read_file_bytes(log, kWho);
  m.kernels = parse_ptxas_log(m.log);
  m.from_cache = true;
  m.key = key;
  return m;
}

} // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  SAGUARO_NVRTC(nvrtcVersion(&major, &minor));
  return std::to_string(major) + "." + std::to_string(minor);
}

CompiledModule compile(const std::string& source, const std::string& arch,
                       const CompileOptions& options) {
  const std::vector<std::string> opts = nvrtc_options(arch, options);
  const std::string version = nvrtc_version();
  std::uint64_t h = fnv1a64("saguaro-cuda-module\n");
  for (const std::string& o : opts) h = fnv1a64(o + "\n", h);
  h = fnv1a64("arch " + arch + "\nnvrtc " + version + "\n", h);
  h = fnv1a64(std::string_view("\0", 1), h);
  h = fnv1a64(source, h);
  const std::string key = hex_key(h);

  const fs::path dir = cache_dir_for(options);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(std::string(kWho) + ": cannot make the cache directory " +
                             dir.string() + ": " + ec.message());
  const fs::path cubin_path = dir / (key + ".cubin");

  if (auto cached = from_cache(dir, key)) {
    if (options.verbose)
      std::fprintf(stderr, "saguaro: cuda backend: cache hit: %s\n", cubin_path.c_str());
    return *cached;
  }
  FileLock lock(dir / (key + ".lock"), kWho);
  if (auto cached = from_cache(dir, key)) { // another process compiled it while we waited
    if (options.verbose)
      std::fprintf(stderr, "saguaro: cuda backend: cache hit (compiled by another process): %s\n",
                   cubin_path.c_str());
    return *cached;
  }

  const fs::path source_path = dir / (key + ".cu");
  write_atomically(source_path, source, kWho);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  const auto start = std::chrono::steady_clock::now();
  Program program(source, "saguaro_" + key + ".cu");
  const nvrtcResult result = nvrtcCompileProgram(program.get(), int(argv.size()), argv.data());
  const std::string log = program.log();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result != NVRTC_SUCCESS) {
    const fs::path failed_source = dir / ("failed-" + key + ".cu");
    const fs::path failed_log = dir / ("failed-" + key + ".log");
    std::string saved = failed_source.string();
    try {
      write_atomically(failed_source, source, kWho);
      write_atomically(failed_log, log, kWho);
    } catch (const std::exception&) {
      saved = source_path.string(); // written above
    }
    std::string options_text;
    for (const std::string& o : opts) options_text += " " + o;
    std::string message = "NVRTC " + version + " could not compile for " + arch + ": " +
                          nvrtcGetErrorString(result) + "\nsource saved in " + saved +
                          "\nlog saved in " + failed_log.string() + "\noptions:" + options_text +
                          "\n" + first_lines(log, 40, failed_log.string());
    throw CompileError(message, saved, log);
  }

  CompiledModule m;
  m.cubin = program.cubin();
  m.log = log;
  m.kernels = parse_ptxas_log(log);
  m.key = key;
  m.compile_seconds = seconds;
  // The log first: a cubin in the cache always has its report beside it.
  write_atomically(dir / (key + ".log"), log, kWho);
  write_atomically(cubin_path, std::string_view(m.cubin.data(), m.cubin.size()), kWho);
  if (options.verbose)
    std::fprintf(stderr, "saguaro: cuda backend: NVRTC %s compiled %s for %s in %.2f s\n",
                 version.c_str(), source_path.c_str(), arch.c_str(), seconds);
  return m;
}

} // namespace saguaro::runtime::cuda
