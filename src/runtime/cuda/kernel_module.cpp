// Hand-written kernels on the CUDA backend's stream (runtime/cuda.hpp: KernelModule).
#include "runtime/cuda.hpp"
#include "runtime/cuda/driver.hpp"

#include <stdexcept>

namespace saguaro::runtime::cuda {

struct KernelModule::Loaded {
  CompiledModule compiled;
  CUmodule module = nullptr;
  CUevent start = nullptr, end = nullptr;
  std::map<std::string, CUfunction> functions;

  CUfunction function(const std::string& name) {
    auto it = functions.find(name);
    if (it != functions.end()) return it->second;
    Driver& d = Driver::get();
    CUfunction f = nullptr;
    const CUresult r = d.api().cuModuleGetFunction(&f, module, name.c_str());
    if (r != CUDA_SUCCESS)
      throw std::runtime_error("KernelModule: no kernel '" + name +
                               "' in the module: " + d.describe(r));
    return functions[name] = f;
  }
};

KernelModule::KernelModule(const std::string& source, const CompileOptions& options)
    : loaded_(std::make_unique<Loaded>()) {
  Driver& d = Driver::get();
  loaded_->compiled = compile(source, d.info().arch(), options);
  SAGUARO_CU(d, cuModuleLoadData(&loaded_->module, loaded_->compiled.cubin.data()));
  SAGUARO_CU(d, cuEventCreate(&loaded_->start, CU_EVENT_DEFAULT));
  SAGUARO_CU(d, cuEventCreate(&loaded_->end, CU_EVENT_DEFAULT));
}

KernelModule::~KernelModule() {
  if (!loaded_) return;
  Driver& d = Driver::get();
  d.api().cuStreamSynchronize(d.stream());
  if (loaded_->start != nullptr) d.api().cuEventDestroy(loaded_->start);
  if (loaded_->end != nullptr) d.api().cuEventDestroy(loaded_->end);
  if (loaded_->module != nullptr) d.api().cuModuleUnload(loaded_->module);
}

void KernelModule::launch(const std::string& name, const std::array<unsigned, 3>& grid,
                          const std::array<unsigned, 3>& block, void** params,
                          std::size_t shared_bytes) {
  Driver& d = Driver::get();
  CUfunction fn = loaded_->function(name);
  if (shared_bytes > 48 * 1024) // above the default, a kernel opts in
    SAGUARO_CU(d, cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     int(shared_bytes)));
  const CUresult r =
      d.api().cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                             unsigned(shared_bytes), d.stream(), params, nullptr);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("KernelModule: launching " + name + " failed: " + d.describe(r));
}

double KernelModule::time(const std::string& name, const std::array<unsigned, 3>& grid,
                          const std::array<unsigned, 3>& block, void** params, int count,
                          std::size_t shared_bytes) {
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuEventRecord(loaded_->start, d.stream()));
  for (int i = 0; i < count; ++i) launch(name, grid, block, params, shared_bytes);
  SAGUARO_CU(d, cuEventRecord(loaded_->end, d.stream()));
  SAGUARO_CU(d, cuEventSynchronize(loaded_->end));
  float ms = 0;
  SAGUARO_CU(d, cuEventElapsedTime(&ms, loaded_->start, loaded_->end));
  return double(ms) * 1e-3;
}

const std::map<std::string, PtxasReport>& KernelModule::resources() const {
  return loaded_->compiled.kernels;
}

} // namespace saguaro::runtime::cuda
