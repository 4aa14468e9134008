// The CUDA code generator: every buffering strategy and a set of block configurations on
// every example calculation, checked two ways without a GPU:
//   * numbers: the generated kernels run on the CPU (cuda_emulator.hpp: real threads per
//     block, real barriers) and must match the reference interpreter to 1e-12 relative at
//     every point each kernel writes, with nothing else changed;
//   * compilation: NVRTC compiles every variant for sm_90, and ptxas reports no spills for the
//     default mappings of wave.edl and microbench.edl.
// Mappings that do not fit their calculation are rejected with the reason.
#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "calc/strategy.hpp"
#include "codegen/cuda.hpp"
#include "cuda_emulator.hpp"
#include "edl/parser.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime/runtime_support.hpp"
#include "strategy_demo.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace saguaro::test {
namespace {

::testing::Environment* const kSuiteCache = ::testing::AddGlobalTestEnvironment(new SuiteCache);

constexpr double kTolerance = 1e-12;

calc::Program load(const std::string& file, int fd_order = 4) {
  return calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/" + file),
                     calc::LowerOptions{fd_order});
}

calc::Mapping mapping_with(const calc::Calculation& c, calc::Buffering b, calc::BlockConfig block,
                           bool mixed = false) {
  return calc::strategy_mapping(c, mixed ? "mixed" : std::string(1, calc::letter(b)), block);
}

// Runs calculation `c` of `program` under `mapping` through the emulator: over the patch's
// region, or with `boxes` once per kernel over all of them (as the CUDA backend's run_boxes).
void run_emulated(CudaEmulator& emu, const codegen::CudaModule& module, int c, Patch& p,
                  const std::vector<calc::Region>* boxes = nullptr) {
  const runtime::KernelArgs& a = p.args;
  std::vector<std::vector<double>> temporaries(module.temporaries[c].size(),
                                               std::vector<double>(p.points(), 0.0));
  std::map<calc::NodeId, double*> temporary_data;
  for (std::size_t t = 0; t < module.temporaries[c].size(); ++t)
    temporary_data[module.temporaries[c][t]] = temporaries[t].data();
  codegen::CudaGeometry g = runtime::cuda::geometry_of(a);
  for (const codegen::CudaKernel& k : module.kernels) {
    if (k.calculation != c) continue;
    std::vector<double*> pointers;
    for (int f : k.fields) pointers.push_back(a.fields[f]);
    for (calc::NodeId t : k.temporaries) pointers.push_back(temporary_data.at(t));
    std::vector<double> parameters;
    for (int q : k.parameters) parameters.push_back(a.parameters[q]);
    std::vector<void*> args;
    for (double*& ptr : pointers) args.push_back(&ptr);
    args.push_back(&g);
    for (double& v : parameters) args.push_back(&v);
    const std::array<unsigned, 3> grid =
        boxes ? codegen::launch_grid(k, *boxes, g) : codegen::launch_grid(k, a.lo, a.hi);
    if (grid[0] > 0) emu.launch(k, grid, args.data());
  }
}

std::string mapping_error(const calc::Calculation& c, const calc::Mapping& m) {
  try {
    calc::plan_kernels(c, m);
  } catch (const calc::MappingError& e) {
    return e.what();
  }
  return "";
}

struct Example {
  std::string file;
  int fd_order;
};
void PrintTo(const Example& e, std::ostream* os) {
  *os << e.file << " at fd_order " << e.fd_order;
}

const calc::BlockConfig kBlocks[] = {
    {2, 8, 4, 3},  // iterate along z; partial blocks on every axis of the test patch
    {1, 16, 2, 5}, // iterate along y
    {2, 32, 8, 8}, // the default
};

// Calculation `c` of `module` run in the CUDA emulator on a copy of `initial` against
// `reference` on another: the same values at every point written, every output point written,
// nothing else touched.
void expect_emulated_matches(CudaEmulator& emu, const codegen::CudaModule& module, int c,
                             const calc::Calculation& calc,
                             const runtime::CompiledCalculation& reference, const Patch& initial) {
  Patch expected = clone(initial), actual = clone(initial);
  reference.run(expected.args);
  run_emulated(emu, module, c, actual);
  Agreement r = compare(calc, initial, expected, actual, kTolerance);
  EXPECT_EQ(r.mismatches, 0) << r.first_problem;
  EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
  EXPECT_EQ(r.not_written, 0) << r.first_problem;
  EXPECT_GT(r.written, 0);
}

// Every calculation of `module` (generated under `mappings`) run in the CUDA emulator on a fresh
// test patch against `reference`, the interpreter's compile of `program`: the same values at
// every point written, every output point written, nothing else touched.
void expect_emulator_matches(
    const calc::Program& program, const codegen::CudaModule& module,
    const std::vector<calc::Mapping>& mappings,
    const std::vector<std::unique_ptr<runtime::CompiledCalculation>>& reference) {
  CudaEmulator emu(module, SuiteCache::dir() + "/emulator");
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    SCOPED_TRACE(calc.name + " " + calc::to_string(calc, mappings[c]));
    Patch initial = make_patch(calc, runtime::required_margin(calc));
    initial.args.parameters = parameter_values(program, true);
    expect_emulated_matches(emu, module, int(c), calc, *reference[c], initial);
  }
}

class StrategiesMatchInterpreter : public ::testing::TestWithParam<Example> {};

TEST_P(StrategiesMatchInterpreter, EveryStrategyAndBlockConfiguration) {
  const calc::Program program = load(GetParam().file, GetParam().fd_order);
  auto reference_backend = runtime::make_backend("interpreter", {});
  auto reference = reference_backend->compile(program);
  int checked = 0;
  for (const calc::BlockConfig& block : kBlocks)
    for (int variant = 0; variant <= calc::kBuiltinBufferings; ++variant) { // u r b p c q, mixed
      // The default block: u and mixed.
      if (block.tx == 32 && variant > 0 && variant < calc::kBuiltinBufferings) continue;
      std::vector<calc::Mapping> mappings;
      for (const calc::Calculation& c : program.calculations)
        mappings.push_back(mapping_with(c, calc::kAllBufferings[variant % calc::kBuiltinBufferings],
                                        block, variant == calc::kBuiltinBufferings));
      expect_emulator_matches(program, codegen::generate_cuda(program, mappings), mappings,
                              reference);
      ++checked;
    }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, StrategiesMatchInterpreter,
    ::testing::Values(Example{"par/wave.edl", 4}, Example{"par/wave.edl", 8},
                      Example{"par/maxwell.edl", 4}, Example{"par/microbench.edl", 4},
                      Example{"par/advect.edl", 4}, Example{"test/codegen/edl/line.edl", 4}),
    [](const auto& info) {
      std::string n = info.param.file.substr(info.param.file.rfind('/') + 1);
      return n.substr(0, n.find('.')) + "_order" + std::to_string(info.param.fd_order);
    });

// A boundary shell launched once per kernel over all its boxes (codegen::launch_grid over boxes,
// as the CUDA backend's run_boxes) computes what the interpreter computes box by box and
// touches nothing else: the z faces (2 boxes, as on ranks cut along z) and every face (6), with
// blocks streaming along z and along y, partial blocks on every axis, and points summed by input.
TEST(CudaCodegen, OneLaunchOverAShellsBoxesMatchesTheInterpreter) {
  const std::array<std::array<bool, 2>, 3> z_faces{{{false, false}, {false, false}, {true, true}}};
  const std::array<std::array<bool, 2>, 3> all_faces{{{true, true}, {true, true}, {true, true}}};
  int launches = 0;
  for (const char* file : {"par/wave.edl", "par/maxwell.edl", "par/microbench.edl"}) {
    const calc::Program program = load(file);
    auto reference = runtime::make_backend("interpreter", {})->compile(program);
    const calc::BlockConfig by_input{2, 8, 4, 3, 0, true}; // summed where it applies
    for (const calc::BlockConfig& block : {kBlocks[0], kBlocks[1], by_input})
      for (bool mixed : {false, true}) {
        std::vector<calc::Mapping> mappings;
        for (const calc::Calculation& c : program.calculations)
          mappings.push_back(mapping_with(c, calc::Buffering::Unbuffered, block, mixed));
        const codegen::CudaModule module = codegen::generate_cuda(program, mappings);
        CudaEmulator emu(module, SuiteCache::dir() + "/emulator");
        for (std::size_t c = 0; c < program.calculations.size(); ++c) {
          const calc::Calculation& calc = program.calculations[c];
          if (calc.on_boundary || calc.inputs.empty()) continue;
          for (const auto& faces : {z_faces, all_faces}) {
            SCOPED_TRACE(std::string(file) + " " + calc.name + " " +
                         calc::to_string(calc, mappings[c]) +
                         (faces == z_faces ? ", z faces" : ", every face"));
            const calc::Margin margin = runtime::required_margin(calc);
            Patch initial = make_patch(calc, margin);
            initial.args.parameters = parameter_values(program, true);
            const calc::RegionSplit split =
                calc::split_region(calc::Region{initial.args.lo, initial.args.hi}, margin, faces);
            if (split.shell.empty()) continue; // a pointwise calculation: no margin
            ASSERT_EQ(split.shell.size(), faces == z_faces ? 2u : 6u);
            Patch expected = clone(initial), actual = clone(initial);
            reference[c]->run_boxes(expected.args, split.shell);
            run_emulated(emu, module, int(c), actual, &split.shell);
            ++launches;
            long changed = 0, mismatches = 0, interior_changed = 0;
            const calc::Region& in = split.interior;
            for (std::size_t g = 0; g < initial.data.size(); ++g)
              for (int k = 0; k < initial.args.alloc[2]; ++k)
                for (int j = 0; j < initial.args.alloc[1]; ++j)
                  for (int i = 0; i < initial.args.alloc[0]; ++i) {
                    const std::size_t at = initial.linear(i, j, k);
                    const double x = expected.data[g][at], y = actual.data[g][at];
                    if (!(std::fabs(x - y) <=
                          kTolerance * std::max({1.0, std::fabs(x), std::fabs(y)})))
                      ++mismatches;
                    if (x != initial.data[g][at]) {
                      ++changed;
                      if (i >= in.lo[0] && i < in.hi[0] && j >= in.lo[1] && j < in.hi[1] &&
                          k >= in.lo[2] && k < in.hi[2])
                        ++interior_changed;
                    }
                  }
            EXPECT_EQ(mismatches, 0);
            EXPECT_GT(changed, 0);
            EXPECT_EQ(interior_changed, 0);
          }
        }
      }
  }
  EXPECT_GT(launches, 0);
}

// Kernels printed for the layout of the arrays they run over (a run's: BackendOptions::
// array_layout) take the strides as constants and compute the same numbers; each calculation's
// module is printed for its own test patch, as the backend compiles a module per calculation.
TEST(CudaCodegen, KernelsForAnArrayLayoutMatchTheInterpreter) {
  for (const char* file : {"par/wave.edl", "par/maxwell.edl", "test/codegen/edl/line.edl"}) {
    const calc::Program program = load(file);
    auto reference_backend = runtime::make_backend("interpreter", {});
    auto reference = reference_backend->compile(program);
    for (const calc::BlockConfig& block : {kBlocks[0], kBlocks[1]}) {
      std::vector<calc::Mapping> mappings; // strategies mixed: every buffer kind addresses
      for (const calc::Calculation& c : program.calculations)
        mappings.push_back(mapping_with(c, calc::Buffering::Unbuffered, block, true));
      for (std::size_t c = 0; c < program.calculations.size(); ++c) {
        const calc::Calculation& calc = program.calculations[c];
        SCOPED_TRACE(std::string(file) + " " + calc.name + " " +
                     calc::to_string(calc, mappings[c]));
        Patch initial = make_patch(calc, runtime::required_margin(calc));
        initial.args.parameters = parameter_values(program, true);
        const calc::ArrayLayout layout = initial.args.layout();
        const codegen::CudaModule module =
            codegen::generate_cuda(program, mappings, {}, int(c), layout);
        ASSERT_TRUE(module.layout && *module.layout == layout);
        EXPECT_NE(
            module.source.find("constexpr long long sy = " + std::to_string(layout.pitch) + ";"),
            std::string::npos);
        EXPECT_EQ(module.source.find("sy = g.pitch"), std::string::npos);
        CudaEmulator emu(module, SuiteCache::dir() + "/emulator");
        expect_emulated_matches(emu, module, int(c), calc, *reference[c], initial);
      }
    }
  }
  // Without a layout the strides come from the geometry argument, as before.
  const codegen::CudaModule any = codegen::generate_cuda(load("par/wave.edl"));
  EXPECT_FALSE(any.layout);
  EXPECT_NE(any.source.find("const long long sy = g.pitch;"), std::string::npos);
  EXPECT_EQ(any.source.find("constexpr long long sy"), std::string::npos);
}

// line.edl is there so that the register strategy is exercised: it applies to u and w when
// iterating along z.
TEST(CudaCodegen, RegisterStrategyAppliesToLineStencils) {
  const calc::Program program = load("test/codegen/edl/line.edl");
  const calc::Calculation& c = program.calculations[0];
  const calc::Mapping m = calc::buffered_mapping(c, calc::Buffering::Register, {2, 32, 8, 8});
  EXPECT_EQ(m.kernels[0].buffering.size(), 2u);
  EXPECT_EQ(m.kernels[0].buffering.at(c.find_grid_function("u")), calc::Buffering::Register);
  EXPECT_EQ(m.kernels[0].buffering.at(c.find_grid_function("w")), calc::Buffering::Register);
  const std::string source = codegen::generate_cuda(program, {m}).source;
  EXPECT_NE(source.find("registers along z"), std::string::npos);
}

// A strategy defined and registered by a test (strategy_demo.hpp: registers along e, the
// read-only cache elsewhere) is printed from the buffer kinds it asks for, with no change to
// the printer, and computes what the interpreter computes.
TEST(CudaCodegen, ATestOnlyStrategyIsPrintedAndMatchesTheInterpreter) {
  const calc::ScopedStrategy demo(line_cached_strategy());
  const calc::Program program = load("par/maxwell.edl");
  auto reference_backend = runtime::make_backend("interpreter", {});
  auto reference = reference_backend->compile(program);
  for (const calc::BlockConfig& block : kBlocks) {
    std::vector<calc::Mapping> mappings;
    int buffered = 0;
    for (const calc::Calculation& c : program.calculations) {
      mappings.push_back(calc::strategy_mapping(c, "l", block));
      for (const calc::KernelMapping& k : mappings.back().kernels)
        buffered += int(k.buffering.size());
    }
    EXPECT_GT(buffered, 0) << "the demo strategy applies to none of maxwell's inputs";
    const codegen::CudaModule module = codegen::generate_cuda(program, mappings);
    EXPECT_NE(module.source.find("__ldg("), std::string::npos);
    EXPECT_NE(module.source.find("registers along"), std::string::npos);
    EXPECT_NE(module.source.find(": line-cached, "), std::string::npos);
    expect_emulator_matches(program, module, mappings, reference);
  }
}

// Kernels named in `whole_register_file` get a minimum of one block per SM in their launch
// bounds; the others only the block size.
TEST(CudaCodegen, WholeRegisterFileSetsTheMinimumBlocks) {
  const calc::Program program = load("par/wave.edl");
  const codegen::CudaModule plain = codegen::generate_cuda(program);
  ASSERT_EQ(plain.kernels.size(), 3u);
  const std::string rhs = plain.kernels[1].name;
  const codegen::CudaModule whole = codegen::generate_cuda(program, {}, std::set<std::string>{rhs});
  EXPECT_EQ(plain.source.find(", 1) saguaro_"), std::string::npos);
  EXPECT_NE(whole.source.find(", 1) " + rhs + "("), std::string::npos);
  EXPECT_EQ(whole.source.find(", 1) " + plain.kernels[0].name + "("), std::string::npos);
  EXPECT_TRUE(whole.kernels[1].whole_register_file);
  EXPECT_FALSE(whole.kernels[0].whole_register_file);
}

// One point per thread is straight-line code up to 32 loads a point, and up to 64 when blocks
// per SM cap the registers (KernelPrinter::print_loop): Maxwell's right-hand side (48 loads) is
// a loop of one trip unbounded and straight-line at 8/SM, the micro-benchmark's (90) a loop
// either way; the capped forms compute what the interpreter does.
TEST(CudaCodegen, CappedKernelsAreStraightLineUpTo64Loads) {
  auto rhs_text = [](const std::string& source, const std::string& name) {
    const std::size_t at = source.find(name + "(");
    return source.substr(at, source.find("\n}\n", at) - at);
  };
  struct Case {
    std::string file, kernel; // the right-hand side's kernel: its name contains `kernel`
    bool straight_when_capped;
  };
  for (const auto& [file, kernel, straight_when_capped] :
       {Case{"par/maxwell.edl", "_maxwell_rhs_", true},
        Case{"par/microbench.edl", "_microbench_", false}}) {
    const calc::Program program = load(file);
    std::vector<calc::Mapping> plain, capped;
    for (const calc::Calculation& c : program.calculations) {
      plain.push_back(calc::one_thread_per_point(c));
      capped.push_back(plain.back());
      for (calc::KernelMapping& k : capped.back().kernels) k.block.min_blocks = 8;
    }
    const codegen::CudaModule unbounded = codegen::generate_cuda(program, plain);
    const codegen::CudaModule bounded = codegen::generate_cuda(program, capped);
    const auto rhs =
        std::find_if(bounded.kernels.begin(), bounded.kernels.end(),
                     [&](const auto& k) { return k.name.find(kernel) != std::string::npos; });
    ASSERT_NE(rhs, bounded.kernels.end()) << file;
    const std::string loop = "for (int zi = z_begin; zi < z_stop; ++zi)";
    const std::string straight = "if (z_begin < z_stop) {";
    EXPECT_NE(rhs_text(unbounded.source, rhs->name).find(loop), std::string::npos) << file;
    const std::string text = rhs_text(bounded.source, rhs->name);
    EXPECT_EQ(text.find(straight_when_capped ? straight : loop) != std::string::npos, true) << file;
    EXPECT_EQ(text.find(straight_when_capped ? loop : straight), std::string::npos) << file;
    auto reference_backend = runtime::make_backend("interpreter", {});
    expect_emulator_matches(program, bounded, capped, reference_backend->compile(program));
  }
}

// Every kernel Saguaro launches waits for the kernel ahead of it first thing (launches use
// programmatic dependent launch on sm_90, runtime::cuda::Driver::launch): the generated kernels
// of every example under every strategy, the support kernels, and the macro defined in each unit.
TEST(CudaCodegen, EveryKernelWaitsForThePreviousKernelFirst) {
  for (const Example& ex :
       {Example{"par/wave.edl", 4}, Example{"par/maxwell.edl", 4}, Example{"par/microbench.edl", 4},
        Example{"par/bssn/bssn.edl", 4}, Example{"test/codegen/edl/split.edl", 4}}) {
    const calc::Program program = load(ex.file, ex.fd_order);
    for (int variant = 0; variant <= calc::kBuiltinBufferings; ++variant) {
      std::vector<calc::Mapping> mappings;
      for (const calc::Calculation& c : program.calculations)
        mappings.push_back(mapping_with(c, calc::kAllBufferings[variant % calc::kBuiltinBufferings],
                                        kBlocks[0], variant == calc::kBuiltinBufferings));
      const codegen::CudaModule module = codegen::generate_cuda(program, mappings);
      EXPECT_NE(module.source.find(codegen::kAfterPreviousKernel), std::string::npos);
      EXPECT_EQ(kernels_not_waiting_first(module.source), std::vector<std::string>{})
          << ex.file << " variant " << variant;
      std::size_t kernels = 0;
      for (std::size_t at = module.source.find("__global__"); at != std::string::npos;
           at = module.source.find("__global__", at + 1))
        ++kernels;
      EXPECT_EQ(kernels, module.kernels.size()) << ex.file;
    }
  }
  if (!runtime::cuda::built_with_cuda()) return;
  const std::string support = runtime::cuda::support_source();
  EXPECT_EQ(support.rfind(codegen::kAfterPreviousKernel, 0), 0u);
  EXPECT_EQ(kernels_not_waiting_first(support), std::vector<std::string>{});
}

// The check itself finds a kernel that touches memory before it waits.
TEST(CudaCodegen, AKernelThatDoesNotWaitFirstIsFound) {
  const std::string source = "extern \"C\" __global__ void k(double* a) {\n  a[0] = 1;\n"
                             "  SAGUARO_AFTER_PREVIOUS_KERNEL();\n}\n"
                             "extern \"C\" __global__ void j(double* a) {\n"
                             "  SAGUARO_AFTER_PREVIOUS_KERNEL();\n  a[0] = 1;\n}\n";
  EXPECT_EQ(kernels_not_waiting_first(source),
            std::vector<std::string>{"__global__ void k(double* a) "});
}

// A calculation split into two kernels that pass a shared value (the Laplacian of u)
// through a temporary grid function: kernel 0 stores a and the temporary, kernel 1 loads it
// and stores b.
TEST(CudaCodegen, SplitKernelsShareTemporaries) {
  const calc::Program program = load("test/codegen/edl/split.edl");
  const calc::Calculation& calc = program.calculations[0];
  const calc::Stage& stage = calc.stages[0];
  ASSERT_EQ(stage.stores.size(), 2u);
  auto first = calc.dag.reachable({stage.stores[0].value});
  auto second = calc.dag.reachable({stage.stores[1].value});
  calc::KernelMapping k0, k1;
  k0.block = {2, 8, 4, 3};
  k1.block = {1, 16, 2, 2};
  k0.stores = {0};
  k1.stores = {1};
  // The largest shared sum is the Laplacian (its parts are then needed by kernel 0 alone).
  for (calc::NodeId id : first) {
    const calc::Node& n = calc.dag.node(id);
    if (!n.uniform && n.op == calc::Op::Add && std::binary_search(second.begin(), second.end(), id))
      k0.temporaries = {id};
  }
  ASSERT_FALSE(k0.temporaries.empty()) << "the Laplacian should be shared";
  k0.buffering[calc.find_grid_function("u")] = calc::Buffering::Shared;
  calc::Mapping m;
  m.kernels = {k0, k1};
  const auto plans = calc::plan_kernels(calc, m);
  EXPECT_EQ(plans[1].temporaries_in, k0.temporaries);
  // Kernel 1 reads no u at all: the stencil stays in kernel 0.
  for (const calc::InputStencil& in : plans[1].inputs)
    EXPECT_NE(calc.grid_functions[in.grid_function].name, "u");

  const codegen::CudaModule module = codegen::generate_cuda(program, {m});
  ASSERT_EQ(module.temporaries[0].size(), k0.temporaries.size());
  CudaEmulator emu(module, SuiteCache::dir() + "/emulator");
  auto reference = runtime::make_backend("interpreter", {})->compile(program);
  Patch initial = make_patch(calc, runtime::required_margin(calc));
  Patch expected = clone(initial), actual = clone(initial);
  reference[0]->run(expected.args);
  run_emulated(emu, module, 0, actual);
  Agreement r = compare(calc, initial, expected, actual, kTolerance);
  EXPECT_EQ(r.mismatches, 0) << r.first_problem;
  EXPECT_EQ(r.not_written, 0) << r.first_problem;
  EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
  EXPECT_GT(r.written, 0);

  // The temporary must be used by a later kernel: alone, kernel 0's temporary is rejected.
  calc::Mapping alone;
  k0.stores = {0, 1};
  alone.kernels = {k0};
  EXPECT_NE(mapping_error(calc, alone).find("not used by any later kernel"), std::string::npos);
}

// --- Mappings that do not fit -------------------------------------------------------------

TEST(CudaMapping, InapplicableStrategiesAreRejectedWithTheReason) {
  const calc::Program program = load("par/wave.edl");
  const calc::Calculation& rhs = program.calculations[1];
  const int phi = rhs.find_grid_function("phi"), pi = rhs.find_grid_function("pi");
  const int pirhs = rhs.find_grid_function("pirhs");
  calc::Mapping m = calc::default_mapping(rhs);
  m.kernels[0].buffering[phi] = calc::Buffering::Register; // phi has x and y offsets
  EXPECT_NE(mapping_error(rhs, m).find("off the iteration axis z"), std::string::npos)
      << mapping_error(rhs, m);
  m.kernels[0].buffering = {{pi, calc::Buffering::Shared}}; // pi is read at one point
  EXPECT_NE(mapping_error(rhs, m).find("nothing to reuse"), std::string::npos);
  m.kernels[0].buffering = {{pirhs, calc::Buffering::ReadOnly}}; // not read at all
  EXPECT_NE(mapping_error(rhs, m).find("does not read"), std::string::npos);
  m.kernels[0].buffering = {};
  m.kernels[0].block.tx = 64;
  m.kernels[0].block.tf = 32;
  EXPECT_NE(mapping_error(rhs, m).find("1024"), std::string::npos);
  m.kernels[0].block = {3, 32, 8, 8};
  EXPECT_NE(mapping_error(rhs, m).find("iteration axis"), std::string::npos);
  EXPECT_EQ(calc::parse_block_config("y 64x4x16"), (calc::BlockConfig{1, 64, 4, 16}));
  EXPECT_THROW(calc::parse_block_config("x 32x8x8"), calc::MappingError);
  EXPECT_THROW(calc::parse_block_config("z 32x8"), calc::MappingError);
  EXPECT_THROW(calc::parse_block_config("z 64x32x1"), calc::MappingError);

  // A stencil along z only: r applies when iterating along z, not along y; p needs in-plane
  // offsets.
  std::vector<calc::Offset> line = {{0, 0, -1}, {0, 0, 0}, {0, 0, 1}};
  std::string why;
  EXPECT_TRUE(calc::buffering_applies(calc::Buffering::Register, line, 2, false));
  EXPECT_FALSE(calc::buffering_applies(calc::Buffering::Register, line, 1, false, &why));
  EXPECT_FALSE(calc::buffering_applies(calc::Buffering::Plus, line, 2, false, &why));
  EXPECT_NE(why.find("plane"), std::string::npos);
  EXPECT_TRUE(calc::buffering_applies(calc::Buffering::Plus, line, 1, false));
  EXPECT_FALSE(calc::buffering_applies(calc::Buffering::ReadOnly, {{0, 0, 0}}, 2, true, &why));
  EXPECT_NE(why.find("coherent"), std::string::npos);
}

TEST(CudaMapping, StoresMustBeMadeOnceAndReadsMustNotSeeNewValues) {
  const calc::Program program = load("par/wave.edl");
  const calc::Calculation& rhs = program.calculations[1];
  calc::Mapping m = calc::default_mapping(rhs);
  m.kernels.push_back(m.kernels[0]);
  EXPECT_NE(mapping_error(rhs, m).find("already stores"), std::string::npos);
  m.kernels.resize(1);
  m.kernels[0].stores = {0};
  EXPECT_NE(mapping_error(rhs, m).find("no kernel stores"), std::string::npos);

  // microbench updates B in place: a kernel after the one writing B may not read B.
  const calc::Program mb = load("par/microbench.edl");
  const calc::Calculation& c = mb.calculations[0];
  calc::Mapping split = calc::default_mapping(c);
  ASSERT_EQ(c.stages[0].stores.size(), 1u);
  EXPECT_EQ(mapping_error(c, split), "");
  EXPECT_EQ(calc::plan_kernels(c, split)[0].inputs.size(), 11u); // B and A0..A9
}

// --- NVRTC ----------------------------------------------------------------------------------

TEST(CudaNvrtc, EveryVariantCompilesForSm90) {
  if (!runtime::cuda::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  runtime::cuda::CompileOptions options;
  options.cache_dir = SuiteCache::dir();
  for (const Example& ex :
       {Example{"par/wave.edl", 4}, Example{"par/wave.edl", 8}, Example{"par/maxwell.edl", 4},
        Example{"par/microbench.edl", 4}, Example{"par/advect.edl", 4},
        Example{"test/codegen/edl/line.edl", 4}}) {
    const calc::Program program = load(ex.file, ex.fd_order);
    for (const calc::BlockConfig& block : kBlocks)
      for (int variant = 0; variant <= calc::kBuiltinBufferings; ++variant) {
        std::vector<calc::Mapping> mappings;
        for (const calc::Calculation& c : program.calculations)
          mappings.push_back(mapping_with(c,
                                          calc::kAllBufferings[variant % calc::kBuiltinBufferings],
                                          block, variant == calc::kBuiltinBufferings));
        const codegen::CudaModule module = codegen::generate_cuda(program, mappings);
        runtime::cuda::CompiledModule compiled;
        ASSERT_NO_THROW(compiled = runtime::cuda::compile(module.source, "sm_90", options))
            << ex.file << " variant " << variant;
        EXPECT_FALSE(compiled.cubin.empty());
        for (const codegen::CudaKernel& k : module.kernels) {
          ASSERT_TRUE(compiled.kernels.count(k.name)) << k.name << " missing from ptxas's report";
          EXPECT_GT(compiled.kernels.at(k.name).registers, 0);
        }
      }
  }
}

TEST(CudaNvrtc, DefaultMappingsOfWaveAndMicrobenchDoNotSpill) {
  if (!runtime::cuda::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  runtime::cuda::CompileOptions options;
  options.cache_dir = SuiteCache::dir();
  for (const Example& ex : {Example{"par/wave.edl", 2}, Example{"par/wave.edl", 4},
                            Example{"par/wave.edl", 8}, Example{"par/microbench.edl", 4}}) {
    const calc::Program program = load(ex.file, ex.fd_order);
    const codegen::CudaModule module = codegen::generate_cuda(program);
    const auto compiled = runtime::cuda::compile(module.source, "sm_90", options);
    for (const codegen::CudaKernel& k : module.kernels) {
      const calc::Calculation& c = program.calculations[k.calculation];
      if (c.schedule_bin != "MoL_CalcRHS" && c.schedule_bin != "evol") continue; // the RHS kernels
      const runtime::cuda::PtxasReport& r = compiled.kernels.at(k.name);
      EXPECT_EQ(r.spill_stores, 0) << ex.file << " " << k.name;
      EXPECT_EQ(r.spill_loads, 0) << ex.file << " " << k.name;
      std::printf("[ info ] %s fd %d %s: %d registers, %d bytes spilled\n", ex.file.c_str(),
                  ex.fd_order, k.name.c_str(), r.registers, r.spill_stores);
    }
  }
}

// Kernels whose (f, e) tiles are walked in groups (codegen::KernelForms::grouped_tiles) compute
// what the interpreter computes: on a patch whose grid is 2 x 16 x 16 blocks (2 x 2 groups of
// 8 x 8) the blocks' order changes and every point is still computed once; on the usual test
// patch (grids that do not divide by 8) the kernels fall back to the launch order.
TEST(CudaCodegen, GroupedTilesMatchTheInterpreter) {
  for (const Example& ex : {Example{"par/wave.edl", 4}, Example{"par/maxwell.edl", 4}}) {
    const calc::Program program = load(ex.file, ex.fd_order);
    auto reference_backend = runtime::make_backend("interpreter", {});
    auto reference = reference_backend->compile(program);
    const calc::BlockConfig block{2, 8, 2, 2};
    std::vector<calc::Mapping> mappings;
    for (const calc::Calculation& c : program.calculations)
      mappings.push_back(mapping_with(c, calc::Buffering::Unbuffered, block));
    std::set<std::string> every;
    for (const codegen::CudaKernel& k : codegen::generate_cuda(program, mappings).kernels)
      every.insert(k.name);
    const codegen::CudaModule module = codegen::generate_cuda(program, mappings, {{}, every});
    for (const codegen::CudaKernel& k : module.kernels) EXPECT_TRUE(k.grouped_tiles) << k.name;
    const std::string G = std::to_string(codegen::kTileGroup);
    EXPECT_NE(module.source.find("gridDim.y % " + G + " == 0 && gridDim.z % " + G + " == 0"),
              std::string::npos);
    CudaEmulator emu(module, SuiteCache::dir() + "/emulator");
    int grouped = 0;
    for (std::size_t c = 0; c < program.calculations.size(); ++c) {
      const calc::Calculation& calc = program.calculations[c];
      SCOPED_TRACE(ex.file + " " + calc.name);
      for (const std::array<int, 3> interior :
           {std::array<int, 3>{12, 32, 32}, std::array<int, 3>{12, 10, 9}}) {
        Patch initial = make_patch(calc, runtime::required_margin(calc), interior);
        initial.args.parameters = parameter_values(program, true);
        expect_emulated_matches(emu, module, int(c), calc, *reference[c], initial);
        for (const codegen::CudaKernel& k : module.kernels) {
          const std::array<unsigned, 3> grid =
              codegen::launch_grid(k, initial.args.lo, initial.args.hi);
          const unsigned g = codegen::kTileGroup;
          grouped += k.calculation == int(c) && grid[1] % g == 0 && grid[2] % g == 0 &&
                     grid[1] * grid[2] > g * g;
        }
      }
    }
    EXPECT_GT(grouped, 0) << "no launch of " << ex.file << " took more than one group";
  }
}

// A thread's points summed by input (calc/sums_by_input.hpp) compute what the interpreter
// computes, for every calculation the rule admits, with register queues and without: threads
// with all their points take the phases, threads the region's end cuts short the loop (patches
// whose e extent the points per thread divide, and ones they do not).
TEST(CudaCodegen, SumsByInputMatchTheInterpreter) {
  int summed = 0;
  for (const char* file : {"par/microbench.edl", "par/maxwell.edl", "par/wave.edl"}) {
    const calc::Program program = load(file);
    auto reference = runtime::make_backend("interpreter", {})->compile(program);
    for (const calc::BlockConfig block :
         {calc::BlockConfig{2, 8, 4, 3, 0, true}, calc::BlockConfig{1, 16, 2, 4, 0, true}})
      for (calc::Buffering b : {calc::Buffering::Queue, calc::Buffering::Unbuffered}) {
        std::vector<calc::Mapping> mappings;
        for (const calc::Calculation& c : program.calculations) {
          mappings.push_back(mapping_with(c, b, block)); // summed where the rule admits it
          summed += mappings.back().kernels.front().block.sums_by_input;
        }
        const codegen::CudaModule module = codegen::generate_cuda(program, mappings);
        EXPECT_NE(module.source.find("one input at a time (sums by input)"), std::string::npos);
        CudaEmulator emu(module, SuiteCache::dir() + "/emulator");
        for (std::size_t c = 0; c < program.calculations.size(); ++c) {
          const calc::Calculation& calc = program.calculations[c];
          for (const std::array<int, 3> interior :
               {std::array<int, 3>{12, 10, 9}, std::array<int, 3>{12, 12, 10}}) {
            SCOPED_TRACE(std::string(file) + " " + calc::to_string(calc, mappings[c]));
            Patch initial = make_patch(calc, runtime::required_margin(calc), interior);
            initial.args.parameters = parameter_values(program, true);
            expect_emulated_matches(emu, module, int(c), calc, *reference[c], initial);
          }
        }
      }
  }
  EXPECT_GE(summed, 12);
}

// Blocks per SM (calc::BlockConfig::min_blocks) reach ptxas as __launch_bounds__'s minimum: at
// 8 blocks of 256 threads every kernel keeps within the 32 registers that leaves. Maxwell's
// right-hand side, printed for its 256^3 patch as a run prints it (constant strides), takes 64
// unbounded and fits 32 without a spill; the micro-benchmark's spills a little (the finish
// times it, mapper/occupancy.hpp).
TEST(CudaNvrtc, BlocksPerSmCapTheRegisters) {
  if (!runtime::cuda::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  runtime::cuda::CompileOptions options;
  options.cache_dir = SuiteCache::dir();
  for (const Example& ex : {Example{"par/maxwell.edl", 4}, Example{"par/wave.edl", 8},
                            Example{"par/microbench.edl", 4}}) {
    const calc::Program program = load(ex.file, ex.fd_order);
    std::vector<calc::Mapping> plain, capped;
    for (const calc::Calculation& c : program.calculations) {
      plain.push_back(calc::one_thread_per_point(c));
      capped.push_back(plain.back());
      for (calc::KernelMapping& k : capped.back().kernels) k.block.min_blocks = 8;
    }
    const int ghost = ex.fd_order / 2;
    const calc::ArrayLayout layout{264, 256 + 2 * ghost}; // 256^3, rows aligned
    const codegen::CudaModule module = codegen::generate_cuda(program, capped, {}, -1, layout);
    EXPECT_NE(module.source.find("__launch_bounds__(256, 8)"), std::string::npos);
    EXPECT_NE(module.source.find("8 blocks per SM"), std::string::npos);
    const auto compiled = runtime::cuda::compile(module.source, "sm_90", options);
    const auto unbounded = runtime::cuda::compile(
        codegen::generate_cuda(program, plain, {}, -1, layout).source, "sm_90", options);
    for (const codegen::CudaKernel& k : module.kernels) {
      const runtime::cuda::PtxasReport& r = compiled.kernels.at(k.name);
      EXPECT_LE(r.registers, 32) << ex.file << " " << k.name;
      std::printf("[ info ] %s fd %d %s: %d registers, %d bytes spilled at 8 blocks/SM; %d "
                  "registers unbounded\n",
                  ex.file.c_str(), ex.fd_order, k.name.c_str(), r.registers, r.spill_stores,
                  unbounded.kernels.at(k.name).registers);
      if (k.name.find("maxwell_rhs") != std::string::npos) {
        EXPECT_EQ(r.spill_stores, 0);
        EXPECT_GT(unbounded.kernels.at(k.name).registers, 32) << "the cap changes nothing";
      }
    }
  }
}

} // namespace
} // namespace saguaro::test
