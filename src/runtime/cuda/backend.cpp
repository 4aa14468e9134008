// The "cuda" backend: codegen::generate_cuda's translation unit compiled by NVRTC (cached on
// disk), loaded into the process's context and launched on the driver's one stream, every
// launch timed with a pair of CUDA events whose times are collected lazily (finished pairs at
// each run(), all of them in kernel_timings()). Like the rest of the CUDA runtime it is meant to
// be driven from one host thread.
#include "codegen/cuda.hpp"
#include "codegen/cuda_time_tile.hpp"
#include "runtime/backends.hpp"
#include "runtime/check.hpp"
#include "runtime/cuda.hpp"
#include "runtime/cuda/array_space.hpp"
#include "runtime/cuda/driver.hpp"
#include "support/process.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::runtime {
namespace cuda {
namespace {

// Up to this many launches wait for their timings; beyond it the oldest are waited for.
constexpr std::size_t kMaxPendingTimings = 4096;
// Every launch of a kernel (per region) is timed until it has this many samples, then every
// kTimedEvery-th (LoadedModule::launch).
constexpr long kTimedLaunches = 16;
constexpr long kTimedEvery = 8;
// Kernels may use this much dynamic shared memory without opting in.
constexpr std::size_t kDefaultSharedLimit = 48 * 1024;

// A loaded module of generated kernels with their launch timings. Shared by the backend
// (kernel_timings()) and the calculations compiled from it.
class LoadedModule {
public:
  // `compiled` is the cubin of generated.source (unused when there are no kernels).
  LoadedModule(codegen::CudaModule generated, const CompiledModule& compiled)
      : generated_(std::move(generated)) {
    if (generated_.kernels.empty()) return;
    Driver& d = Driver::get();
    SAGUARO_CU(d, cuModuleLoadData(&module_, compiled.cubin.data()));
    for (const codegen::CudaKernel& k : generated_.kernels) {
      CUfunction fn = nullptr;
      SAGUARO_CU(d, cuModuleGetFunction(&fn, module_, k.name.c_str()));
      if (k.shared_bytes > kDefaultSharedLimit) {
        // A mapping whose tiles do not fit is the mapping's fault: say so in its words.
        int optin = 0, fixed = 0;
        SAGUARO_CU(d, cuDeviceGetAttribute(&optin,
                                           CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                           d.device()));
        SAGUARO_CU(d, cuFuncGetAttribute(&fixed, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
        if (k.shared_bytes + std::size_t(fixed) > std::size_t(optin))
          throw std::runtime_error(
              "kernel " + k.name + " (mapping " + k.mapping + ") needs " +
              std::to_string((k.shared_bytes + fixed + 1023) / 1024) +
              " KiB of shared memory per block, but this GPU allows " +
              std::to_string(optin / 1024) +
              " KiB: buffer fewer inputs in shared memory (b, p) or use a smaller block");
        SAGUARO_CU(d, cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         int(k.shared_bytes)));
      }
      functions_.push_back(fn);
      KernelTiming t;
      t.name = k.name;
      t.mapping = k.mapping;
      t.calculation = k.calculation;
      t.kernel = k.kernel;
      t.shared_bytes = k.shared_bytes;
      if (auto report = compiled.kernels.find(k.name); report != compiled.kernels.end()) {
        const PtxasReport& r = report->second;
        t.registers = r.registers;
        t.spill_stores = r.spill_stores;
        t.spill_loads = r.spill_loads;
        t.stack_bytes = r.stack_bytes;
        t.shared_bytes += std::size_t(std::max(0, r.shared_bytes));
      }
      timings_.push_back(std::move(t));
    }
  }

  ~LoadedModule() {
    // Errors are ignored here: at exit the driver may already be shut down.
    if (!Driver::usable(nullptr)) return;
    Driver& d = Driver::get();
    d.api().cuStreamSynchronize(d.stream());
    for (const Pending& p : pending_) {
      d.api().cuEventDestroy(p.start);
      d.api().cuEventDestroy(p.end);
    }
    for (CUevent e : pool_) d.api().cuEventDestroy(e);
    if (module_ != nullptr) d.api().cuModuleUnload(module_);
  }
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const codegen::CudaModule& generated() const { return generated_; }
  CUfunction function(std::size_t kernel) const { return functions_[kernel]; }

  // Launches kernel `kernel` (an index into generated().kernels), timed while its timing has
  // fewer than kTimedLaunches samples and then every kTimedEvery-th launch: two events around
  // every launch cost a small grid's step a tenth of its time (par/wave.par at 48^3 on the
  // H100, 2026-11-27), and the prediction log takes the median of the samples.
  // `points`: the grid points it computes (the region grown by its stage's extents).
  void launch(std::size_t kernel, const std::array<unsigned, 3>& grid, void** params, double points,
              const std::string& region) {
    Driver& d = Driver::get();
    const codegen::CudaKernel& k = generated_.kernels[kernel];
    const std::size_t timing = timing_of(kernel, region);
    const long launches = timings_[timing].launches;
    const bool timed = launches < kTimedLaunches || launches % kTimedEvery == 0;
    CUevent start = timed ? event() : nullptr, end = timed ? event() : nullptr;
    if (timed) SAGUARO_CU(d, cuEventRecord(start, d.stream()));
    const CUresult launched =
        d.launch(functions_[kernel], grid, {unsigned(k.block.tx), unsigned(k.block.tf), 1},
                 unsigned(k.shared_bytes), d.stream(), params, true);
    if (launched != CUDA_SUCCESS) {
      if (timed) {
        pool_.push_back(start);
        pool_.push_back(end);
      }
      throw std::runtime_error(
          "CUDA driver: launching " + k.name + " (" + k.mapping + ") with grid (" +
          std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
          std::to_string(grid[2]) + "), block (" + std::to_string(k.block.tx) + ", " +
          std::to_string(k.block.tf) + ", 1) and " + std::to_string(k.shared_bytes) +
          " bytes of dynamic shared memory failed: " + d.describe(launched));
    }
    ++timings_[timing].launches;
    timings_[timing].points = points;
    if (!timed) return;
    SAGUARO_CU(d, cuEventRecord(end, d.stream()));
    pending_.push_back({timing, start, end});
    collect(pending_.size() > kMaxPendingTimings);
  }

  // Moves the timings of finished launches into timings_; with `wait`, waits for the oldest
  // one first (so that at least one is collected).
  void collect(bool wait) {
    Driver& d = Driver::get();
    while (!pending_.empty()) {
      Pending& p = pending_.front();
      if (wait) {
        SAGUARO_CU(d, cuEventSynchronize(p.end));
        wait = false;
      } else {
        CUresult q = d.api().cuEventQuery(p.end);
        if (q == CUDA_ERROR_NOT_READY) break;
        d.check(q, "cuEventQuery(end)");
      }
      float ms = 0;
      SAGUARO_CU(d, cuEventElapsedTime(&ms, p.start, p.end));
      timings_[p.kernel].seconds.push_back(double(ms) * 1e-3);
      pool_.push_back(p.start);
      pool_.push_back(p.end);
      pending_.pop_front();
    }
  }

  // Generated kernel k's resources as ptxas reported them (no launch waited for).
  const KernelTiming& kernel_info(std::size_t k) const { return timings_.at(k); }
  // Every timing, waiting for launches still running.
  std::vector<KernelTiming> timings() {
    Driver& d = Driver::get();
    if (!pending_.empty()) SAGUARO_CU(d, cuEventSynchronize(pending_.back().end));
    collect(false);
    return timings_;
  }

private:
  // The timings_ entry of a kernel's launches over `region`: the kernel's own for the whole
  // region, a copy made on first use for each part (interior, boundary shell).
  std::size_t timing_of(std::size_t kernel, const std::string& region) {
    if (region.empty()) return kernel;
    for (std::size_t t = functions_.size(); t < timings_.size(); ++t)
      if (timings_[t].region == region && timings_[t].name == timings_[kernel].name) return t;
    KernelTiming copy = timings_[kernel];
    copy.region = region;
    copy.launches = 0;
    copy.seconds.clear();
    timings_.push_back(std::move(copy));
    return timings_.size() - 1;
  }
  struct Pending {
    std::size_t kernel;
    CUevent start, end;
  };

  CUevent event() {
    if (!pool_.empty()) {
      CUevent e = pool_.back();
      pool_.pop_back();
      return e;
    }
    Driver& d = Driver::get();
    CUevent e = nullptr;
    SAGUARO_CU(d, cuEventCreate(&e, CU_EVENT_DEFAULT));
    return e;
  }

  codegen::CudaModule generated_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
  std::vector<KernelTiming> timings_; // per generated kernel
  std::deque<Pending> pending_;
  std::vector<CUevent> pool_;
};

class CudaCalculation final : public CompiledCalculation {
public:
  CudaCalculation(std::shared_ptr<LoadedModule> module, int calculation, detail::CallShape shape)
      : module_(std::move(module)), shape_(std::move(shape)) {
    const codegen::CudaModule& g = module_->generated();
    for (std::size_t k = 0; k < g.kernels.size(); ++k)
      if (g.kernels[k].calculation == calculation) kernels_.push_back(k);
    if (std::size_t(calculation) < g.temporaries.size())
      temporary_nodes_ = g.temporaries[std::size_t(calculation)];
    // Per kernel, where each of its temporaries is in temporary_nodes_.
    for (std::size_t k : kernels_) {
      std::vector<std::size_t> slots;
      for (calc::NodeId node : g.kernels[k].temporaries) {
        auto at = std::find(temporary_nodes_.begin(), temporary_nodes_.end(), node);
        if (at == temporary_nodes_.end()) {
          temporary_nodes_.push_back(node); // not announced: give it a scratch array anyway
          at = temporary_nodes_.end() - 1;
        }
        slots.push_back(std::size_t(at - temporary_nodes_.begin()));
      }
      temporary_slots_.push_back(std::move(slots));
    }
  }

  std::vector<KernelResources> kernel_resources() const override {
    const codegen::CudaModule& g = module_->generated();
    std::vector<std::pair<int, KernelResources>> found; // (the mapping's kernel, resources)
    for (std::size_t k : kernels_) {
      const KernelTiming& t = module_->kernel_info(k);
      found.push_back(
          {g.kernels[k].kernel, {t.registers, t.spill_stores + t.spill_loads, t.shared_bytes}});
    }
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<KernelResources> out;
    for (const auto& [kernel, r] : found) out.push_back(r);
    return out;
  }

  ~CudaCalculation() override {
    if (!Driver::usable(nullptr)) return;
    try {
      ArraySpace& space = CudaArraySpace::instance();
      for (double* t : temporaries_) space.release(t);
    } catch (...) {
      // At exit the driver may be gone: nothing to free then.
    }
  }
  CudaCalculation(const CudaCalculation&) = delete;
  CudaCalculation& operator=(const CudaCalculation&) = delete;

  void run(const KernelArgs& args) const override { launch(args, nullptr); }

  // One launch per kernel over every box (codegen::launch_grid over boxes), where they fit one.
  void run_boxes(const KernelArgs& args, const std::vector<calc::Region>& boxes) const override {
    std::vector<calc::Region> nonempty;
    for (const calc::Region& box : boxes)
      if (!box.empty()) nonempty.push_back(box);
    bool fit = nonempty.size() > 1;
    for (std::size_t n = 0; fit && n < kernels_.size(); ++n)
      fit = codegen::launch_boxes_fit(module_->generated().kernels[kernels_[n]], nonempty);
    if (!fit) return CompiledCalculation::run_boxes(args, nonempty);
    KernelArgs box_args = args;
    for (const calc::Region& box : nonempty) { // every box's region and margin checked
      box_args.lo = box.lo;
      box_args.hi = box.hi;
      detail::check_args(shape_, box_args);
    }
    launch(args, &nonempty);
  }

private:
  // Launches every kernel over args.lo/hi, or over `boxes` (non-empty, checked, fitting one
  // launch per kernel).
  void launch(const KernelArgs& args, const std::vector<calc::Region>* boxes) const {
    const codegen::CudaModule& g = module_->generated();
    if (g.layout && !(*g.layout == args.layout()))
      throw std::invalid_argument(fmt::format(
          "cuda backend: the kernels were compiled for arrays of row pitch {} and {} rows per "
          "plane (BackendOptions::array_layout), this launch is over arrays of {} and {}",
          g.layout->pitch, g.layout->rows, args.row_pitch(), args.alloc[1]));
    if (boxes == nullptr && !detail::check_args(shape_, args)) return;
    ensure_temporaries(args.array_points());

    codegen::CudaGeometry geometry = geometry_of(args);

    std::vector<double*> pointers;
    std::vector<double> parameters;
    std::vector<void*> params;
    for (std::size_t n = 0; n < kernels_.size(); ++n) {
      const std::size_t index = kernels_[n];
      const codegen::CudaKernel& k = g.kernels[index];
      // launch_grid grows the region by the kernel's stage extents itself.
      const std::array<unsigned, 3> grid = boxes ? codegen::launch_grid(k, *boxes, geometry)
                                                 : codegen::launch_grid(k, args.lo, args.hi);
      if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) continue;

      // The calling convention of codegen/cuda.hpp: fields, temporaries, geometry, parameters.
      // The values live in vectors sized up front, so the addresses in params stay valid.
      pointers.assign(k.fields.size() + k.temporaries.size(), nullptr);
      parameters.assign(k.parameters.size(), 0.0);
      params.clear();
      for (std::size_t f = 0; f < k.fields.size(); ++f) {
        const int gf = k.fields[f];
        if (gf < 0 || std::size_t(gf) >= args.fields.size() || args.fields[gf] == nullptr)
          throw std::invalid_argument("cuda backend: kernel " + k.name + " needs field " +
                                      std::to_string(gf) + ", which is not given");
        pointers[f] = args.fields[gf];
        params.push_back(&pointers[f]);
      }
      for (std::size_t t = 0; t < k.temporaries.size(); ++t) {
        pointers[k.fields.size() + t] = temporaries_[temporary_slots_[n][t]];
        params.push_back(&pointers[k.fields.size() + t]);
      }
      params.push_back(&geometry);
      for (std::size_t p = 0; p < k.parameters.size(); ++p) {
        const int index_p = k.parameters[p];
        if (index_p < 0 || std::size_t(index_p) >= args.parameters.size())
          throw std::invalid_argument("cuda backend: kernel " + k.name + " needs parameter " +
                                      std::to_string(index_p) + ", but " +
                                      std::to_string(args.parameters.size()) + " are given");
        parameters[p] = args.parameters[std::size_t(index_p)];
        params.push_back(&parameters[p]);
      }
      // The points it computes: its region (or boxes) grown by its stage's extents.
      auto grown_points = [&k](const std::array<int, 3>& lo, const std::array<int, 3>& hi) {
        double n = 1;
        for (int a = 0; a < 3; ++a)
          n *= std::max(0, hi[a] + k.extent_hi[a] - (lo[a] - k.extent_lo[a]));
        return n;
      };
      double points = boxes ? 0 : grown_points(args.lo, args.hi);
      if (boxes)
        for (const calc::Region& box : *boxes) points += grown_points(box.lo, box.hi);
      module_->launch(index, grid, params.data(), points, args.region);
    }
  }

  // Scratch arrays for the temporaries, of the patch's size (made again when it changes).
  void ensure_temporaries(std::size_t volume) const {
    if (temporary_nodes_.empty()) return;
    if (volume == temporaries_volume_ && temporaries_.size() == temporary_nodes_.size()) return;
    ArraySpace& space = CudaArraySpace::instance();
    for (double* t : temporaries_) space.release(t);
    temporaries_.clear();
    temporaries_volume_ = 0;
    for (std::size_t t = 0; t < temporary_nodes_.size(); ++t)
      temporaries_.push_back(space.allocate(volume));
    temporaries_volume_ = volume;
  }

  std::shared_ptr<LoadedModule> module_;
  detail::CallShape shape_;
  std::vector<std::size_t> kernels_;                      // into module_->generated().kernels
  std::vector<calc::NodeId> temporary_nodes_;             // the scratch arrays' nodes
  std::vector<std::vector<std::size_t>> temporary_slots_; // per kernels_ entry
  mutable std::vector<double*> temporaries_;              // device arrays, per temporary_nodes_
  mutable std::size_t temporaries_volume_ = 0;
};

// A time-tiled step: one generated kernel (codegen/cuda_time_tile.hpp) in a module of its own,
// loaded and timed like the calculations' kernels (its timing names kernel -1 of its
// calculation, so that the prediction log prices it with the time-tiling model).
class CudaTimeTile final : public CompiledTimeTile {
public:
  CudaTimeTile(std::shared_ptr<LoadedModule> module, calc::TimeTilePlan plan,
               std::vector<int> parameters, const PtxasReport& report)
      : module_(std::move(module)), plan_(std::move(plan)), parameters_(std::move(parameters)),
        report_(report) {}

  void run(const KernelArgs& args, const TimeTileCall& call) const override {
    const std::size_t V = plan_.state.size();
    const bool later = plan_.first > 1, ends = plan_.ends_step();
    auto check = [&](std::size_t n, bool wanted, const char* what) {
      if (n != (wanted ? V : 0))
        throw std::invalid_argument(
            fmt::format("cuda time tile ({}): {} evolved variables, but the call gives {} {}",
                        plan_.text(), V, n, what));
    };
    check(call.state.size(), true, "states");
    check(call.next.size(), true, "results");
    check(call.stage_input.size(), later, "stage inputs");
    check(call.accumulator.size(), later, "accumulators");
    check(call.next_accumulator.size(), !ends, "accumulators to write");
    // Five arrays per variable (codegen/cuda_time_tile.hpp); a whole step's extras are null.
    std::vector<const double*> in(call.state);
    for (const auto* list : {&call.stage_input, &call.accumulator})
      if (list->empty())
        in.insert(in.end(), V, nullptr);
      else
        in.insert(in.end(), list->begin(), list->end());
    std::vector<double*> out(call.next);
    if (call.next_accumulator.empty())
      out.insert(out.end(), V, nullptr);
    else
      out.insert(out.end(), call.next_accumulator.begin(), call.next_accumulator.end());
    codegen::CudaGeometry geometry = geometry_of(args);
    codegen::TimeTileTableau tableau = codegen::time_tile_tableau(call.a, call.b);
    std::vector<double> parameters;
    for (int p : parameters_) parameters.push_back(args.parameters.at(std::size_t(p)));
    std::vector<void*> params;
    for (const double*& p : in) params.push_back(&p);
    for (double*& p : out) params.push_back(&p);
    params.push_back(&geometry);
    params.push_back(&tableau);
    for (double& p : parameters) params.push_back(&p);
    double points = 1;
    for (int a = 0; a < 3; ++a) points *= double(args.hi[a] - args.lo[a]);
    module_->launch(0, codegen::time_tile_grid(plan_, args.lo, args.hi), params.data(), points, "");
  }
  KernelResources resources() const override {
    return {report_.registers, report_.spill_stores + report_.spill_loads,
            plan_.shared_bytes() + std::size_t(std::max(0, report_.shared_bytes))};
  }

private:
  std::shared_ptr<LoadedModule> module_;
  calc::TimeTilePlan plan_;
  std::vector<int> parameters_;
  PtxasReport report_;
};

// The generated time-tiled kernel of `plan`, named after its calculation, tile and stages.
codegen::TimeTileKernel time_tile_kernel(const calc::Calculation& calc,
                                         const calc::TimeTilePlan& plan) {
  const std::string part = plan.stages == plan.step_stages()
                               ? std::string()
                               : fmt::format("_stages_{}_{}", plan.first, plan.last());
  const std::string name = fmt::format("saguaro_{}_time_tile_{}x{}x{}{}", support::lower(calc.name),
                                       plan.tile.tx, plan.tile.ty, plan.tile.nz, part);
  return codegen::generate_time_tile_cuda(calc, plan, name);
}

// Runs every job on a thread of its own and waits for all: compiles into the cache ahead of
// the compile that loads them, which reports what failed (so errors are dropped here).
void compile_ahead(const std::vector<std::function<void()>>& jobs) {
  std::vector<std::future<void>> pending;
  for (const std::function<void()>& job : jobs)
    pending.push_back(std::async(std::launch::async, job));
  for (auto& p : pending) try {
      p.get();
    } catch (const std::exception&) {
    }
}

class CudaBackend final : public Backend {
public:
  explicit CudaBackend(BackendOptions options) : options_(std::move(options)) {
    std::string why;
    if (!available(&why)) throw std::runtime_error("the cuda backend cannot be used: " + why);
    Driver& d = Driver::get();
    info_ = d.info();
    // Process-wide: the support kernels of the array space launch through the same driver.
    d.set_programmatic_launch(options_.programmatic_launch);
    programmatic_ = d.programmatic_launch();
  }

  std::string name() const override { return "cuda"; }
  BackendDescription description() const override {
    BackendDescription d;
    d.name = name();
    d.hardware = Hardware::gpu;
    d.device = info_.name;
    d.device_detail =
        info_.name + ", " + info_.arch() + (programmatic_ ? ", programmatic dependent launch" : "");
    d.takes_mappings = true;
    d.mapped_by_model = true;
    d.model = DeviceModel::gpu_description;
    d.clock = KernelClock::gpu_events;
    d.array_space = CudaArraySpace::instance().name();
    d.time_tiles = true;
    return d;
  }

  std::future<void> precompile(const calc::Program& program, std::vector<calc::Mapping> mappings,
                               std::vector<bool> wanted) override {
    return std::async(std::launch::async, [&program, mappings = std::move(mappings),
                                           wanted = std::move(wanted), options = compile_options(),
                                           arch = info_.arch(), layout = options_.array_layout] {
      std::vector<std::function<void()>> jobs;
      for (std::size_t c = 0; c < wanted.size() && c < program.calculations.size(); ++c)
        if (wanted[c])
          jobs.push_back(
              [&, c] { compile_generated(program, mappings, arch, options, int(c), layout); });
      compile_ahead(jobs);
    });
  }

  void precompile_time_tiles(const calc::Program& program, int calculation,
                             const std::vector<calc::TimeTilePlan>& plans) override {
    const calc::Calculation& calc = program.calculations.at(std::size_t(calculation));
    const CompileOptions options = compile_options();
    const std::string arch = info_.arch();
    std::vector<std::function<void()>> jobs;
    for (const calc::TimeTilePlan& plan : plans) // compile_time_tile reports errors per plan
      jobs.push_back([&calc, &options, &arch, plan] {
        cuda::compile(time_tile_kernel(calc, plan).source, arch, options);
      });
    compile_ahead(jobs);
  }

  std::unique_ptr<CompiledTimeTile> compile_time_tile(const calc::Program& program, int calculation,
                                                      const calc::TimeTilePlan& plan) override {
    const codegen::TimeTileKernel k =
        time_tile_kernel(program.calculations.at(std::size_t(calculation)), plan);
    const CompileOptions options = compile_options();
    const CompiledModule compiled = cuda::compile(k.source, info_.arch(), options);
    // As a module of one kernel the loader and the timings know: a block of `threads` threads.
    codegen::CudaModule module;
    module.source = k.source;
    codegen::CudaKernel kernel;
    kernel.name = k.name;
    kernel.calculation = calculation;
    kernel.kernel = -plan.first; // a time-tiled kernel: -(its first stage), see kernel.hpp
    kernel.block.tx = k.threads;
    kernel.block.tf = 1;
    kernel.parameters = k.parameters;
    kernel.shared_bytes = k.shared_bytes;
    kernel.mapping = plan.text();
    module.kernels.push_back(kernel);
    auto loaded = std::make_shared<LoadedModule>(std::move(module), compiled);
    modules_.push_back(loaded);
    PtxasReport report;
    if (auto r = compiled.kernels.find(k.name); r != compiled.kernels.end()) report = r->second;
    return std::make_unique<CudaTimeTile>(std::move(loaded), plan, k.parameters, report);
  }

  std::vector<std::unique_ptr<CompiledCalculation>> compile(const calc::Program& program) override {
    return compile(program, {});
  }

  std::vector<std::unique_ptr<CompiledCalculation>>
  compile(const calc::Program& program, const std::vector<calc::Mapping>& mappings) override {
    return std::move(compile_sets(program, {mappings}).front());
  }

  // One module per calculation and distinct mapping, compiled by NVRTC in parallel threads
  // (NVRTC compiles separate programs concurrently) and cached each on its own: a calculation
  // whose mapping did not change is a cache hit when another's did, and a program of several
  // large calculations (or the empirical finish's candidates of one) compiles in the time of
  // its largest module. Modules are loaded on this thread, which holds the context.
  std::vector<std::vector<std::unique_ptr<CompiledCalculation>>>
  compile_sets(const calc::Program& program, const std::vector<std::vector<calc::Mapping>>& sets,
               const std::vector<bool>& wanted = {}) override {
    summary_.clear();
    std::vector<std::vector<std::unique_ptr<CompiledCalculation>>> out(sets.size());
    if (program.calculations.empty()) return out;
    const CompileOptions options = compile_options();
    const std::string arch = info_.arch();
    const std::size_t calculations = program.calculations.size();
    // The distinct (calculation, mapping) modules; job[s][c] says which one set s uses. A job
    // compiles from the first set that asked for it (generate_cuda reads only its own
    // calculation's mapping there).
    struct Job {
      std::size_t calculation, set;
      calc::Mapping mapping;
    };
    std::vector<Job> jobs;
    constexpr std::size_t kNotWanted = std::size_t(-1);
    std::vector<std::vector<std::size_t>> job(sets.size(),
                                              std::vector<std::size_t>(calculations, kNotWanted));
    for (std::size_t s = 0; s < sets.size(); ++s)
      for (std::size_t c = 0; c < calculations; ++c) {
        if (c < wanted.size() && !wanted[c]) continue;
        calc::Mapping mine =
            sets[s].empty() ? calc::default_mapping(program.calculations[c]) : sets[s].at(c);
        auto same = [&](const Job& j) { return j.calculation == c && j.mapping == mine; };
        const std::size_t j =
            std::size_t(std::find_if(jobs.begin(), jobs.end(), same) - jobs.begin());
        if (j == jobs.size()) jobs.push_back({c, s, std::move(mine)});
        job[s][c] = j;
      }
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::future<CompiledProgram>> pending;
    for (const Job& j : jobs)
      pending.push_back(std::async(std::launch::async, [&, c = j.calculation, s = j.set] {
        return compile_generated(program, sets[s], arch, options, int(c), options_.array_layout);
      }));
    std::vector<CompiledProgram> compiled;
    std::exception_ptr failure;
    for (auto& p : pending) try { // every thread is waited for before anything is rethrown
        compiled.push_back(p.get());
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    if (failure) std::rethrow_exception(failure);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::size_t kernels = 0, from_cache = 0;
    std::vector<std::shared_ptr<LoadedModule>> loaded;
    for (CompiledProgram& both : compiled) {
      const std::size_t n = both.generated.kernels.size();
      kernels += n;
      if (n > 0 && both.compiled.from_cache) from_cache += n;
      loaded.push_back(std::make_shared<LoadedModule>(std::move(both.generated),
                                                      n > 0 ? both.compiled : CompiledModule{}));
      if (n > 0) modules_.push_back(loaded.back());
    }
    for (std::size_t s = 0; s < sets.size(); ++s)
      for (std::size_t c = 0; c < calculations; ++c)
        out[s].push_back(
            job[s][c] == kNotWanted
                ? nullptr
                : std::make_unique<CudaCalculation>(loaded[job[s][c]], int(c),
                                                    detail::call_shape(program.calculations[c])));
    if (kernels > 0) {
      char line[256];
      if (from_cache == kernels)
        std::snprintf(line, sizeof line, "%zu kernel%s from the cache (no NVRTC compilation)",
                      kernels, kernels == 1 ? "" : "s");
      else
        std::snprintf(line, sizeof line,
                      "%zu kernel%s compiled by NVRTC %s for %s in %.2f s (%zu from the cache; "
                      "%zu modules in parallel on %d cores)",
                      kernels, kernels == 1 ? "" : "s", nvrtc_version().c_str(), arch.c_str(),
                      seconds, from_cache, jobs.size(), support::usable_cores());
      summary_ = line;
      if (options_.array_layout)
        summary_ += fmt::format("; strides of arrays {} x {} (pitch x rows) as constants",
                                options_.array_layout->pitch, options_.array_layout->rows);
    }
    return out;
  }

  ArraySpace& space() override { return CudaArraySpace::instance(); }
  std::string compile_summary() const override { return summary_; }

  std::vector<KernelTiming> kernel_timings() const override {
    std::vector<KernelTiming> all;
    for (const auto& m : modules_) {
      std::vector<KernelTiming> t = m->timings();
      all.insert(all.end(), t.begin(), t.end());
    }
    return all;
  }

private:
  // NVRTC's options for this backend: its cache under <cache_dir>/cuda, its verbosity.
  CompileOptions compile_options() const {
    CompileOptions options;
    if (!options_.cache_dir.empty())
      options.cache_dir = (std::filesystem::path(options_.cache_dir) / "cuda").string();
    options.verbose = options_.verbose;
    return options;
  }

  BackendOptions options_;
  bool programmatic_ = false; // launches use programmatic dependent launch
  DeviceInfo info_;
  std::string summary_;
  std::vector<std::shared_ptr<LoadedModule>> modules_;
};

} // namespace
} // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<cuda::CudaBackend>(options);
}

} // namespace saguaro::runtime
