// Runs generated CUDA kernels on the CPU, for tests on machines without a GPU.
//
// The generated translation unit is compiled by the host compiler with a small shim in
// front: blockIdx and gridDim are globals (blocks run one after the other), threadIdx is
// thread_local (a block's threads are real std::threads, so every thread of a block is live at
// once),
// __syncthreads() is a std::barrier over the block, dynamic shared memory is one global
// array used by the running block. Threads that return early drop out of the barrier, as
// exited threads do on the GPU. The arithmetic is the host's; the point is the indexing,
// the buffering strategies and the barriers, which it checks exactly.
#pragma once

#include "codegen/cuda.hpp"
#include "codegen/cuda_time_tile.hpp"

#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::test {

inline const char* kEmulatorShim = R"(// Saguaro's CUDA-on-CPU test shim.
#include <algorithm>
#include <barrier>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>
struct saguaro_emu_dim3 { unsigned x = 0, y = 0, z = 0; };
thread_local saguaro_emu_dim3 threadIdx;
saguaro_emu_dim3 blockIdx, gridDim;
std::barrier<>* saguaro_emu_barrier = nullptr;
double saguaro_smem[1 << 17];
inline void __syncthreads() { saguaro_emu_barrier->arrive_and_wait(); }
inline double __ldg(const double* p) { return *p; }
using std::max;
using std::min;
#define __global__
#define __device__
#define __launch_bounds__(...)
#define __shared__
static void saguaro_emu_run(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            const std::function<void()>& body) {
  gridDim = {gx, gy, gz};
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x) {
        blockIdx = {x, y, z};
        std::barrier<> bar(bx * by);
        saguaro_emu_barrier = &bar;
        std::vector<std::thread> threads;
        for (unsigned ty = 0; ty < by; ++ty)
          for (unsigned tx = 0; tx < bx; ++tx)
            threads.emplace_back([&, tx, ty] {
              threadIdx = {tx, ty, 0};
              body();
              bar.arrive_and_drop();
            });
        for (auto& t : threads) t.join();
      }
}
)";

class CudaEmulator {
public:
  // Compiles `module` with the host compiler into a shared object under `dir`.
  CudaEmulator(const codegen::CudaModule& module, const std::string& dir) {
    std::ostringstream src;
    src << kEmulatorShim << "\n" << module.source << "\n";
    for (const codegen::CudaKernel& k : module.kernels)
      src << wrapper(k.name, k.fields.size() + k.temporaries.size(), {"saguaro_cuda_geometry"},
                     k.parameters.size());
    build(src.str(), dir);
  }
  // A time-tiled step's kernel of `variables` evolved variables (codegen/cuda_time_tile.hpp's
  // calling convention: the tableau's pointer after the geometry's).
  CudaEmulator(const codegen::TimeTileKernel& k, int variables, const std::string& dir) {
    build(std::string(kEmulatorShim) + "\n" + k.source + "\n" +
              wrapper(k.name, std::size_t(codegen::kTimeTileArraysPerVariable * variables),
                      {"saguaro_cuda_geometry", "saguaro_tableau"}, k.parameters.size()),
          dir);
  }
  ~CudaEmulator() {
    if (handle_) dlclose(handle_);
  }
  CudaEmulator(const CudaEmulator&) = delete;
  CudaEmulator& operator=(const CudaEmulator&) = delete;

  void launch(const codegen::CudaKernel& k, const std::array<unsigned, 3>& grid, void** args) {
    launch(k.name, grid, {unsigned(k.block.tx), unsigned(k.block.tf)}, args);
  }
  void launch(const std::string& name, const std::array<unsigned, 3>& grid,
              const std::array<unsigned, 2>& block, void** args) {
    using Fn = void (*)(void**, unsigned, unsigned, unsigned, unsigned, unsigned);
    auto fn = reinterpret_cast<Fn>(dlsym(handle_, ("emu_" + name).c_str()));
    if (!fn) throw std::runtime_error("emulator: no kernel " + name);
    fn(args, grid[0], grid[1], grid[2], block[0], block[1]);
  }

private:
  // emu_NAME(args, grid, block): runs kernel NAME over the grid, its arguments `pointers`
  // arrays, then structs of the types `by_value`, then `parameters` doubles, each a[i] pointing
  // at its value.
  static std::string wrapper(const std::string& name, std::size_t pointers,
                             const std::vector<std::string>& by_value, std::size_t parameters) {
    std::ostringstream src;
    src << "extern \"C\" void emu_" << name
        << "(void** a, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by) {\n"
        << "  saguaro_emu_run(gx, gy, gz, bx, by, [&] {\n    " << name << "(";
    std::vector<std::string> args;
    for (std::size_t i = 0; i < pointers; ++i)
      args.push_back("*(double**)a[" + std::to_string(args.size()) + "]");
    for (const std::string& type : by_value)
      args.push_back("*(const " + type + "*)a[" + std::to_string(args.size()) + "]");
    for (std::size_t i = 0; i < parameters; ++i)
      args.push_back("*(const double*)a[" + std::to_string(args.size()) + "]");
    for (std::size_t i = 0; i < args.size(); ++i) src << (i ? ", " : "") << args[i];
    src << ");\n  });\n}\n";
    return src.str();
  }

  void build(const std::string& source, const std::string& dir) {
    std::filesystem::create_directories(dir);
    static int counter = 0;
    std::string base = dir + "/emulated_" + std::to_string(counter++);
    std::ofstream(base + ".cpp") << source;
    std::string cmd = "c++ -std=c++20 -O1 -fPIC -shared -pthread -w -o " + base + ".so " + base +
                      ".cpp 2> " + base + ".log";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(base + ".log");
      std::stringstream text;
      text << log.rdbuf();
      throw std::runtime_error("emulator: the host compiler rejected " + base + ".cpp:\n" +
                               text.str().substr(0, 4000));
    }
    handle_ = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("emulator: dlopen: ") + dlerror());
  }

  void* handle_ = nullptr;
};

// The kernels of a CUDA translation unit whose first statement is not
// SAGUARO_AFTER_PREVIOUS_KERNEL() (codegen::kAfterPreviousKernel): a kernel launched with
// programmatic dependent launch may start before the kernel ahead of it ends, and must wait for
// that kernel's results before it touches memory. Each is named by its text up to its `{`.
inline std::vector<std::string> kernels_not_waiting_first(const std::string& source) {
  std::vector<std::string> late;
  const std::string wait = "SAGUARO_AFTER_PREVIOUS_KERNEL();";
  for (std::size_t at = source.find("__global__"); at != std::string::npos;
       at = source.find("__global__", at + 1)) {
    const std::size_t open = source.find('{', at);
    std::size_t first = source.find_first_not_of(" \t\r\n\\", open + 1);
    if (open == std::string::npos || source.compare(first, wait.size(), wait) != 0)
      late.push_back(source.substr(at, open == std::string::npos ? 80 : open - at));
  }
  return late;
}

} // namespace saguaro::test
