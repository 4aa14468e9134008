// The CUDA runtime (runtime/cuda.hpp): the ptxas report parser, NVRTC compilation with its disk
// cache and error path, and driver detection; these run everywhere the build has CUDA (NVRTC
// needs no GPU). Then, on a machine with a GPU only (skipped elsewhere, saying why): every
// the "cuda" backend against the interpreter (the device ArraySpace's operations are tested in
// test_device_space.cpp).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "codegen/cuda.hpp"
#include "runtime/array_space.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime_support.hpp"
// unit/support.hpp names the saguaro executable, which this suite does not build or run.
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "unit/support.hpp"

namespace saguaro::test {
namespace {

namespace fs = std::filesystem;
namespace cuda = runtime::cuda;
using runtime::ArrayBox;
using runtime::ArraySpace;
using runtime::BoxSums;
using runtime::OuterFaces;
using ::testing::HasSubstr;

// The CUDA tests need the build's CUDA backend; the GPU tests a GPU as well.
#define SAGUARO_REQUIRE_CUDA_BUILD()                                                               \
  do {                                                                                             \
    if (!cuda::built_with_cuda()) GTEST_SKIP() << "this build has no CUDA (SAGUARO_WITH_CUDA)";    \
  } while (0)

std::string why_no_gpu() {
  std::string why;
  if (cuda::available(&why)) return "";
  return why.empty() ? "no reason given" : why;
}

#define SAGUARO_REQUIRE_GPU()                                                                      \
  do {                                                                                             \
    const std::string why = why_no_gpu();                                                          \
    if (!why.empty()) GTEST_SKIP() << "no GPU can be used here: " << why;                          \
  } while (0)

// A real ptxas report (NVRTC 13.0, -arch=sm_90 -Xptxas=-v), kernels in the order ptxas gives.
const char* const kNvrtcLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'geo' for 'sm_90'\n"
    "ptxas info    : Function properties for geo\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 10.281 ms\n"
    "ptxas info    : Compiling entry function 'big' for 'sm_90'\n"
    "ptxas info    : Function properties for big\n"
    "ptxas         .     512 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 0 barriers, 512 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 29.195 ms\n"
    "ptxas info    : Compiling entry function '_Z7mangledPdPKd' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z7mangledPdPKd\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 14 registers, used 1 barriers, 2048 bytes smem\n"
    "ptxas info    : Compile time = 2.464 ms\n"
    "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
    "ptxas info    : Function properties for k\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 8 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 1.702 ms\n";

// Kernels of known resource use (a shared-memory one with a barrier; one that spills when its
// registers are capped), extern "C" so their names are their symbols.
const char* const kSmallKernels = R"(
extern "C" __global__ void saguaro_test_scale(double* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2;
}
extern "C" __global__ void saguaro_test_reverse(double* a, const double* b) {
  __shared__ double s[256];
  s[threadIdx.x] = b[threadIdx.x];
  __syncthreads();
  a[threadIdx.x] = s[255 - threadIdx.x];
}
)";

std::size_t count_files(const fs::path& dir, const std::string& prefix, const std::string& ext) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ext && name.rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

// ============================================================== build and detection

TEST(CudaBuild, MatchesTheBuildOption) {
#if defined(SAGUARO_WITH_CUDA)
  EXPECT_TRUE(cuda::built_with_cuda());
#else
  EXPECT_FALSE(cuda::built_with_cuda());
  std::string why;
  EXPECT_FALSE(cuda::available(&why));
  EXPECT_THAT(why, HasSubstr("SAGUARO_WITH_CUDA"));
  EXPECT_THROW(cuda::compile("", "sm_90"), std::runtime_error);
#endif
}

// available() answers, never throws, and agrees with device_info() and make_backend("cuda").
// On a machine without a GPU (the CI machines: no libcuda.so.1) it is false with a reason.
TEST(CudaAvailability, AnswersWithoutThrowingAndAgreesWithTheBackend) {
  std::string why;
  bool available = false;
  EXPECT_NO_THROW(available = cuda::available(&why));
  EXPECT_EQ(cuda::available(nullptr), available) << "the answer is found once and kept";
  std::printf("[ info ] CUDA available: %s%s\n", available ? "yes" : "no, ",
              available ? "" : why.c_str());
  if (available) {
    const cuda::DeviceInfo info = cuda::device_info();
    EXPECT_FALSE(info.name.empty());
    EXPECT_GT(info.multiprocessors, 0);
    EXPECT_GT(info.memory_bytes, 0u);
    EXPECT_GE(info.driver_version, 12000);
    EXPECT_EQ(info.arch().rfind("sm_", 0), 0u) << info.arch();
    std::printf("[ info ] device %d: %s, %s, %d SMs, %.1f GiB, driver %d\n", info.ordinal,
                info.name.c_str(), info.arch().c_str(), info.multiprocessors,
                double(info.memory_bytes) / (1 << 30), info.driver_version);
    EXPECT_EQ(runtime::make_backend("cuda", {})->name(), "cuda");
  } else {
    EXPECT_FALSE(why.empty());
    EXPECT_THROW(cuda::device_info(), std::runtime_error);
    EXPECT_THROW(cuda::device_space(), std::runtime_error);
    try {
      runtime::make_backend("cuda", {});
      ADD_FAILURE() << "make_backend(\"cuda\") did not throw without a GPU";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr(why)) << "the reason is passed on";
    }
  }
}

TEST(CudaAvailability, DeviceInfoArch) {
  cuda::DeviceInfo info;
  info.cc_major = 9;
  info.cc_minor = 0;
  EXPECT_EQ(info.arch(), "sm_90");
  info.cc_major = 12;
  info.cc_minor = 1;
  EXPECT_EQ(info.arch(), "sm_121");
}

// ============================================================== the ptxas report

TEST(PtxasLog, ParsesARealNvrtcLog) {
  const auto r = cuda::parse_ptxas_log(kNvrtcLog);
  ASSERT_EQ(r.size(), 4u);
  ASSERT_TRUE(r.count("geo") && r.count("big") && r.count("_Z7mangledPdPKd") && r.count("k"));
  EXPECT_EQ(r.at("geo").registers, 10);
  EXPECT_EQ(r.at("k").registers, 8);
  EXPECT_EQ(r.at("big").registers, 32);
  EXPECT_EQ(r.at("big").stack_bytes, 512);
  EXPECT_EQ(r.at("big").spill_stores, 0);
  const cuda::PtxasReport& m = r.at("_Z7mangledPdPKd");
  EXPECT_EQ(m.registers, 14);
  EXPECT_EQ(m.barriers, 1);
  EXPECT_EQ(m.shared_bytes, 2048);
  EXPECT_EQ(m.constant_bytes, 0);
  EXPECT_EQ(m.stack_bytes, 0);
}

// Older ptxas versions report constant memory and spills on the same lines.
TEST(PtxasLog, ParsesSpillsAndConstantMemory) {
  const auto r = cuda::parse_ptxas_log(
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0], "
      "8 bytes cmem[2]\n"
      "ptxas info    : Compiling entry function 'plain' for 'sm_80'\n"
      "ptxas info    : Function properties for plain\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 11 registers, 352 bytes cmem[0]\n");
  ASSERT_EQ(r.size(), 2u);
  const cuda::PtxasReport& k = r.at("k");
  EXPECT_EQ(k.registers, 255);
  EXPECT_EQ(k.stack_bytes, 24);
  EXPECT_EQ(k.spill_stores, 16);
  EXPECT_EQ(k.spill_loads, 12);
  EXPECT_EQ(k.barriers, 1);
  EXPECT_EQ(k.shared_bytes, 4096);
  EXPECT_EQ(k.constant_bytes, 368);
  EXPECT_EQ(r.at("plain").registers, 11);
  EXPECT_EQ(r.at("plain").constant_bytes, 352);
  EXPECT_TRUE(cuda::parse_ptxas_log("").empty());
  EXPECT_TRUE(cuda::parse_ptxas_log("nothing to see\nhere\n").empty());
}

// ============================================================== NVRTC and its cache

TEST(NvrtcCompile, CompilesThenTakesTheSameCubinFromTheCache) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = (dir.path / "cuda").string();

  const cuda::CompiledModule first = cuda::compile(kSmallKernels, "sm_90", options);
  EXPECT_FALSE(first.from_cache);
  EXPECT_GT(first.compile_seconds, 0.0);
  EXPECT_FALSE(first.cubin.empty());
  EXPECT_EQ(first.key.size(), 16u);
  EXPECT_THAT(first.log, HasSubstr("saguaro_test_reverse"));
  ASSERT_TRUE(first.kernels.count("saguaro_test_scale")) << first.log;
  ASSERT_TRUE(first.kernels.count("saguaro_test_reverse")) << first.log;
  EXPECT_GT(first.kernels.at("saguaro_test_scale").registers, 0);
  EXPECT_EQ(first.kernels.at("saguaro_test_reverse").shared_bytes, 2048);
  EXPECT_EQ(first.kernels.at("saguaro_test_reverse").barriers, 1);
  const fs::path base = fs::path(options.cache_dir) / first.key;
  EXPECT_TRUE(fs::exists(base.string() + ".cubin"));
  EXPECT_TRUE(fs::exists(base.string() + ".log"));
  EXPECT_EQ(read_file(base.string() + ".cu"), kSmallKernels) << "the source is kept for people";

  const cuda::CompiledModule second = cuda::compile(kSmallKernels, "sm_90", options);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.compile_seconds, 0.0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.log, first.log) << "the ptxas report comes from the cache too";
  ASSERT_EQ(second.kernels.size(), first.kernels.size());
  EXPECT_EQ(second.kernels.at("saguaro_test_scale").registers,
            first.kernels.at("saguaro_test_scale").registers);

  // Another option, another architecture or another source: another key.
  cuda::CompileOptions capped = options;
  capped.extra_options = {"--maxrregcount=32"};
  EXPECT_NE(cuda::compile(kSmallKernels, "sm_90", capped).key, first.key);
  const cuda::CompiledModule ampere = cuda::compile(kSmallKernels, "sm_80", options);
  EXPECT_NE(ampere.key, first.key);
  EXPECT_FALSE(ampere.from_cache);
  EXPECT_NE(cuda::compile(std::string(kSmallKernels) + "\n", "sm_90", options).key, first.key);
  EXPECT_EQ(count_files(options.cache_dir, "", ".cubin"), 4u);
  EXPECT_EQ(count_files(options.cache_dir, "failed-", ".cu"), 0u);
}

// Where a driver is loaded, NVRTC 12.9+ would take a program it compiled before from the
// driver's compute cache and skip ptxas, leaving no report: compile() turns that off.
TEST(NvrtcCompile, EveryCompileHasItsPtxasReport) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  (void)cuda::available(); // loads the driver where there is one
  TempDir a, b;
  ASSERT_FALSE(a.path.empty() || b.path.empty());
  for (const fs::path& dir : {a.path, b.path}) {
    cuda::CompileOptions options;
    options.cache_dir = dir.string();
    const cuda::CompiledModule m = cuda::compile(kSmallKernels, "sm_90", options);
    EXPECT_FALSE(m.from_cache);
    ASSERT_TRUE(m.kernels.count("saguaro_test_scale")) << "log:\n" << m.log;
    EXPECT_GT(m.kernels.at("saguaro_test_scale").registers, 0);
  }
}

// Concurrent compiles of one source (MPI ranks starting together) compile it once.
TEST(NvrtcCompile, ConcurrentCompilesOfOneSourceCompileOnce) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = dir.path.string();
  constexpr int kThreads = 4;
  std::vector<cuda::CompiledModule> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        results[t] = cuda::compile(kSmallKernels, "sm_90", options);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  int compiled = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "");
    if (!results[t].from_cache) ++compiled;
    EXPECT_EQ(results[t].cubin, results[0].cubin);
  }
  EXPECT_EQ(compiled, 1);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(NvrtcCompile, ASyntaxErrorThrowsCompileErrorWithTheLogAndTheSavedSource) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = dir.path.string();
  const std::string source =
      "extern \"C\" __global__ void saguaro_broken(double* a) {\n  a[0] = 1 +;\n}\n";
  try {
    cuda::compile(source, "sm_90", options);
    FAIL() << "a syntax error compiled";
  } catch (const cuda::CompileError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("expected an expression")) << what;
    EXPECT_THAT(what, HasSubstr(e.source_path())) << what;
    EXPECT_THAT(what, HasSubstr("sm_90"));
    EXPECT_THAT(e.log(), HasSubstr("error"));
    EXPECT_THAT(fs::path(e.source_path()).filename().string(), ::testing::StartsWith("failed-"));
    ASSERT_TRUE(fs::exists(e.source_path())) << e.source_path();
    EXPECT_EQ(read_file(e.source_path()), source);
    fs::path log = e.source_path();
    log.replace_extension(".log");
    EXPECT_TRUE(fs::exists(log)) << log;
    std::printf("[ info ] the error as users see it:\n%s\n", what.c_str());
  }
  EXPECT_EQ(count_files(dir.path, "", ".cubin"), 0u) << "nothing is cached for a failure";
}

// A long log is cut in what(): its first 40 lines, and where the rest is.
TEST(NvrtcCompile, ALongErrorLogIsCutInTheMessage) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = dir.path.string();
  std::string source = "extern \"C\" __global__ void saguaro_many_errors(double* a) {\n";
  for (int i = 0; i < 30; ++i)
    source += "  a[" + std::to_string(i) + "] = undefined_" + std::to_string(i) + ";\n";
  source += "}\n";
  try {
    cuda::compile(source, "sm_90", options);
    FAIL() << "undefined names compiled";
  } catch (const cuda::CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("more lines in"));
    EXPECT_THAT(e.log(), HasSubstr("undefined_29"));
    EXPECT_THAT(std::string(e.what()), ::testing::Not(HasSubstr("undefined_29")));
  }
}

// The device space's support module (boundary formulas + support.cu) compiles for the H100's
// architecture here, with every kernel the space loads, and nothing spills.
TEST(NvrtcCompile, TheSupportModuleCompiles) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = dir.path.string();
  options.extra_options = {"--fmad=false"};
  const std::string source = cuda::support_source();
  EXPECT_THAT(source, HasSubstr("radiative_rhs"));
  const cuda::CompiledModule m = cuda::compile(source, "sm_90", options);
  std::vector<std::string> names = {
      "saguaro_pack",        "saguaro_unpack",      "saguaro_copy_box",
      "saguaro_wrap_ghosts", "saguaro_wrap_x_gaps", "saguaro_wrap_periodic",
      "saguaro_reduce",      "saguaro_boundary",    "saguaro_outer_faces_layout"};
  for (std::size_t terms = 1; terms <= ArraySpace::max_terms; ++terms)
    names.push_back("saguaro_linear_combination_" + std::to_string(terms));
  for (const std::string& name : names) {
    ASSERT_TRUE(m.kernels.count(name)) << name << " missing from\n" << m.log;
    EXPECT_GT(m.kernels.at(name).registers, 0) << name;
    if (name.find("reduce") == std::string::npos) // 16 bytes; norms and output, not the step
      EXPECT_EQ(m.kernels.at(name).spill_stores, 0) << name;
    // The combinations index their terms with constants: no copy of them in local memory
    // (one made the whole RK4 step of wave2 at 256^3 15% slower on the H100).
    if (name.find("combination") != std::string::npos)
      EXPECT_EQ(m.kernels.at(name).stack_bytes, 0) << name;
  }
}

// The code generator's kernels for an example thorn compile with NVRTC, and every kernel of
// the module has a ptxas report (what the CUDA backend compiles, short of loading it).
TEST(NvrtcCompile, GeneratedKernelsCompile) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = dir.path.string();
  const calc::Program program = lower_file("par/wave.edl");
  const codegen::CudaModule module = codegen::generate_cuda(program);
  ASSERT_FALSE(module.kernels.empty());
  const cuda::CompiledModule m = cuda::compile(module.source, "sm_90", options);
  for (const codegen::CudaKernel& k : module.kernels) {
    ASSERT_TRUE(m.kernels.count(k.name)) << k.name << " missing from\n" << m.log;
    EXPECT_GT(m.kernels.at(k.name).registers, 0);
  }
}

// BSSN's default mappings with the right-hand side's blocks per SM set (1/SM): a kernel whose
// mapping asks for a cap of its own, which the register-estimate rules leave alone.
std::vector<calc::Mapping> with_rhs_capped(const calc::Program& bssn) {
  std::vector<calc::Mapping> capped;
  for (const calc::Calculation& c : bssn.calculations) capped.push_back(calc::default_mapping(c));
  capped[1].kernels[0].block.min_blocks = 1;
  return capped;
}

// Which kernels start with the whole register file: those whose register estimate holds one
// block per SM anyway (BSSN's right-hand side and constraints in one kernel each), not small
// ones (the wave's, BSSN's ADM variables), nor a kernel whose mapping caps its registers.
TEST(NvrtcCompile, KernelsAtOneBlockPerSmStartWithTheWholeRegisterFile) {
  const calc::Program wave = lower_file("par/wave.edl");
  EXPECT_TRUE(cuda::one_block_per_sm(wave, {}, codegen::generate_cuda(wave)).empty());
  const calc::Program bssn = lower_file("par/bssn/bssn.edl");
  const std::set<std::string> chosen =
      cuda::one_block_per_sm(bssn, {}, codegen::generate_cuda(bssn));
  EXPECT_EQ(chosen,
            (std::set<std::string>{"saguaro_1_bssn_rhs_k0", "saguaro_2_bssn_constraints_k0"}));
  const std::vector<calc::Mapping> capped = with_rhs_capped(bssn);
  EXPECT_EQ(cuda::one_block_per_sm(bssn, capped, codegen::generate_cuda(bssn, capped)),
            (std::set<std::string>{"saguaro_2_bssn_constraints_k0"}));
}

// Grouped tiles for the kernels whose register estimate exceeds what a thread can have:
// BSSN's one-kernel right-hand side and constraints, not the wave equation's; not a kernel
// whose mapping sets blocks per SM. The compile gives them that form.
TEST(NvrtcCompile, KernelsPastTheRegisterFileWalkTheirTilesInGroups) {
  const calc::Program wave = lower_file("par/wave.edl");
  EXPECT_TRUE(cuda::grouped_tiles(wave, {}, codegen::generate_cuda(wave)).empty());
  const calc::Program bssn = lower_file("par/bssn/bssn.edl");
  const codegen::CudaModule module = codegen::generate_cuda(bssn);
  const std::set<std::string> chosen = cuda::grouped_tiles(bssn, {}, module);
  EXPECT_EQ(chosen,
            (std::set<std::string>{"saguaro_1_bssn_rhs_k0", "saguaro_2_bssn_constraints_k0"}));
  const std::vector<calc::Mapping> capped = with_rhs_capped(bssn);
  EXPECT_EQ(cuda::grouped_tiles(bssn, capped, codegen::generate_cuda(bssn, capped)),
            (std::set<std::string>{"saguaro_2_bssn_constraints_k0"}));
  const codegen::CudaModule grouped = codegen::generate_cuda(bssn, {}, {{}, chosen});
  for (const codegen::CudaKernel& k : grouped.kernels)
    EXPECT_EQ(k.grouped_tiles, chosen.count(k.name) > 0) << k.name;
}

// The multi-pass compile: a kernel that spills is compiled again in the other form (the whole
// register file or ptxas's choice) and keeps whichever spills less; one that does not spill
// keeps its first form. BSSN's kernels spill, so the passes run.
TEST(NvrtcCompile, SpillingKernelsEndInTheFormThatSpillsLess) {
  SAGUARO_REQUIRE_CUDA_BUILD();
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  cuda::CompileOptions options;
  options.cache_dir = dir.path.string();
  const calc::Program wave = lower_file("par/wave.edl");
  const cuda::CompiledProgram small = cuda::compile_generated(wave, {}, "sm_90", options);
  for (const codegen::CudaKernel& k : small.generated.kernels) {
    EXPECT_FALSE(k.whole_register_file) << k.name;
    EXPECT_EQ(small.compiled.kernels.at(k.name).spill_stores, 0) << k.name;
  }
  const calc::Program bssn = lower_file("par/bssn/bssn.edl");
  const cuda::CompiledProgram both = cuda::compile_generated(bssn, {}, "sm_90", options);
  const codegen::CudaModule plain_module = codegen::generate_cuda(bssn);
  std::set<std::string> every;
  for (const codegen::CudaKernel& k : plain_module.kernels) every.insert(k.name);
  const std::set<std::string> at_first = cuda::one_block_per_sm(bssn, {}, plain_module);
  const std::set<std::string> grouped = cuda::grouped_tiles(bssn, {}, plain_module);
  const cuda::CompiledModule plain =
      cuda::compile(codegen::generate_cuda(bssn, {}, {{}, grouped}).source, "sm_90", options);
  const cuda::CompiledModule whole =
      cuda::compile(codegen::generate_cuda(bssn, {}, {every, grouped}).source, "sm_90", options);
  int spilled = 0;
  for (const codegen::CudaKernel& k : both.generated.kernels) {
    const int in_plain = plain.kernels.at(k.name).spill_stores;
    const int in_whole = whole.kernels.at(k.name).spill_stores;
    const bool first_whole = at_first.count(k.name) > 0;
    const int first = first_whole ? in_whole : in_plain, other = first_whole ? in_plain : in_whole;
    spilled += first > 0;
    const bool expect_whole = first > 0 && other < first ? !first_whole : first_whole;
    EXPECT_EQ(k.whole_register_file, expect_whole) << k.name;
    EXPECT_EQ(both.compiled.kernels.at(k.name).spill_stores, first > 0 ? std::min(first, other) : 0)
        << k.name;
    EXPECT_EQ(both.generated.source.find(", 1) " + k.name + "(") != std::string::npos, expect_whole)
        << k.name;
    EXPECT_EQ(k.grouped_tiles, grouped.count(k.name) > 0) << k.name;
  }
  EXPECT_GT(spilled, 0) << "BSSN's kernels no longer spill: this test needs another example";
}

// ============================================================== GPU: the "cuda" backend

// The interpreter on host arrays against the generated kernels on device arrays. The kernels
// contract multiply-adds (NVRTC's default), so agreement is to rounding, not bits.
constexpr double kBackendTolerance = 1e-11;

void check_backend_on(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                      runtime::Backend& gpu_backend) {
  check_backend_against_interpreter(program, mappings, gpu_backend, kBackendTolerance);
}

class CudaBackendTest : public ::testing::Test {
protected:
  void SetUp() override { SAGUARO_REQUIRE_GPU(); }
};

TEST_F(CudaBackendTest, ExampleThornsMatchTheInterpreter) {
  auto backend = runtime::make_backend("cuda", suite_options());
  ASSERT_EQ(backend->name(), "cuda");
  EXPECT_TRUE(backend->space().on_device());
  for (const char* file : {"par/wave.edl", "par/maxwell.edl", "par/advect.edl"}) {
    SCOPED_TRACE(file);
    check_backend_on(lower_file(file), {}, *backend);
  }
}

// Other block configurations (iteration along y, odd sizes, several points per thread): the
// launch grid and the kernels' region bounds at every edge of the region.
TEST_F(CudaBackendTest, OtherBlockConfigurationsMatchTheInterpreter) {
  auto backend = runtime::make_backend("cuda", suite_options());
  const calc::Program program = lower_file("par/wave.edl");
  for (calc::BlockConfig block : {calc::BlockConfig{1, 16, 4, 3}, calc::BlockConfig{2, 8, 3, 5},
                                  calc::BlockConfig{2, 64, 2, 1}}) {
    SCOPED_TRACE("block e=" + std::to_string(block.iteration_axis) + " " +
                 std::to_string(block.tx) + "x" + std::to_string(block.tf) + "x" +
                 std::to_string(block.tee));
    std::vector<calc::Mapping> mappings;
    for (const calc::Calculation& c : program.calculations) {
      calc::Mapping m = calc::default_mapping(c);
      for (calc::KernelMapping& k : m.kernels) k.block = block;
      mappings.push_back(m);
    }
    check_backend_on(program, mappings, *backend);
  }
}

// A backend told the layout of the arrays (BackendOptions::array_layout, as a run tells it its
// patch's) prints kernels with constant strides: they match the interpreter over arrays of
// that layout and refuse, with the two layouts named, a launch over arrays of another.
TEST_F(CudaBackendTest, KernelsForAnArrayLayoutMatchTheInterpreterAndRefuseAnother) {
  const calc::Program program = lower_file("par/maxwell.edl");
  auto interpreter = runtime::make_backend("interpreter", {});
  auto reference = interpreter->compile(program);
  const std::size_t rhs = program.calculations.size() - 1;
  const calc::Calculation& c = program.calculations[rhs];
  Patch initial = make_patch(c, runtime::required_margin(c), {19, 14, 11});
  initial.args.parameters = parameter_values(program, true);
  runtime::BackendOptions options = suite_options();
  options.array_layout = initial.args.layout();
  auto backend = runtime::make_backend("cuda", options);
  auto compiled = backend->compile(program);
  Patch a = clone(initial), b = clone(initial);
  reference[rhs]->run(a.args);
  run_on_device(*compiled[rhs], b, backend->space());
  Agreement r = compare(c, initial, a, b, kBackendTolerance);
  EXPECT_GT(r.written, 0);
  EXPECT_EQ(r.mismatches, 0) << r.first_problem;
  EXPECT_EQ(r.not_written, 0) << r.first_problem;

  runtime::KernelArgs other = initial.args;
  other.pitch = other.row_pitch() + 8; // wider rows: refused before anything is launched
  try {
    compiled[rhs]->run(other);
    ADD_FAILURE() << "a launch over arrays of another layout ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("row pitch " + std::to_string(initial.args.row_pitch())));
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(other.pitch)));
  }
}

// A stage split into two kernels, the first handing the second a value through a scratch
// array (a temporary): the backend's scratch arrays and the calling convention's temporaries.
TEST_F(CudaBackendTest, KernelsSharingTemporariesMatchTheInterpreter) {
  auto backend = runtime::make_backend("cuda", suite_options());
  int split = 0;
  for (const char* file : {"par/wave.edl", "par/maxwell.edl"}) {
    SCOPED_TRACE(file);
    const calc::Program program = lower_file(file);
    std::vector<calc::Mapping> mappings;
    for (const calc::Calculation& c : program.calculations) {
      calc::Mapping m = calc::default_mapping(c);
      for (std::size_t s = 0; s < c.stages.size(); ++s) {
        const calc::Stage& stage = c.stages[s];
        if (stage.stores.size() < 2) continue;
        calc::Mapping candidate;
        for (const calc::KernelMapping& k : m.kernels) {
          if (k.stage != int(s)) {
            candidate.kernels.push_back(k);
            continue;
          }
          calc::KernelMapping first = k, second = k;
          first.stores.clear();
          for (std::size_t st = 0; st + 1 < stage.stores.size(); ++st)
            first.stores.push_back(int(st));
          first.temporaries = {stage.stores.back().value};
          second.stores = {int(stage.stores.size()) - 1};
          second.buffering.clear();
          candidate.kernels.push_back(first);
          candidate.kernels.push_back(second);
        }
        try {
          calc::plan_kernels(c, candidate);
        } catch (const calc::MappingError& e) {
          std::printf("[ info ] %s stage %zu: no split (%s)\n", c.name.c_str(), s, e.what());
          continue;
        }
        m = candidate;
        ++split;
        break;
      }
      mappings.push_back(m);
    }
    check_backend_on(program, mappings, *backend);
  }
  EXPECT_GT(split, 0) << "no calculation could be split with a temporary";
}

// What precompile compiles in the background, a later compile loads from the cache; what it was
// not asked for, NVRTC compiles.
TEST_F(CudaBackendTest, PrecompiledModulesLoadFromTheCache) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  runtime::BackendOptions options;
  options.cache_dir = dir.path.string();
  const calc::Program program = lower_file("par/wave.edl");
  std::vector<calc::Mapping> mappings;
  for (const calc::Calculation& c : program.calculations)
    mappings.push_back(calc::one_thread_per_point(c));
  auto backend = runtime::make_backend("cuda", options);
  std::vector<bool> wanted(program.calculations.size(), true);
  wanted.back() = false;
  std::future<void> done = backend->precompile(program, mappings, wanted);
  ASSERT_EQ(done.wait_for(std::chrono::minutes(5)), std::future_status::ready);
  done.get();
  std::vector<bool> only_wanted = wanted, only_last(wanted.size(), false);
  only_last.back() = true;
  backend->compile_sets(program, {mappings}, only_wanted);
  EXPECT_THAT(backend->compile_summary(), HasSubstr("from the cache (no NVRTC compilation)"));
  backend->compile_sets(program, {mappings}, only_last);
  EXPECT_THAT(backend->compile_summary(), HasSubstr("compiled by NVRTC"));
}

TEST_F(CudaBackendTest, SecondCompileIsFromTheCacheAndLaunchesAreTimed) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  runtime::BackendOptions options;
  options.cache_dir = dir.path.string();
  const calc::Program program = lower_file("par/wave.edl");
  {
    auto first = runtime::make_backend("cuda", options);
    first->compile(program);
    EXPECT_THAT(first->compile_summary(), HasSubstr("compiled by NVRTC"));
    EXPECT_THAT(first->compile_summary(), HasSubstr(cuda::device_info().arch()));
    EXPECT_TRUE(fs::exists(dir.path / "cuda")) << "CUDA code is kept in <cache_dir>/cuda";
  }
  auto backend = runtime::make_backend("cuda", options);
  auto compiled = backend->compile(program);
  EXPECT_THAT(backend->compile_summary(), HasSubstr("from the cache"));

  const calc::Calculation& c = program.calculations[0];
  Patch p = make_patch(c, runtime::required_margin(c));
  p.args.parameters = parameter_values(program, false);
  ArraySpace& space = backend->space();
  std::vector<std::unique_ptr<DeviceArray>> dev;
  runtime::KernelArgs args = p.args;
  for (std::size_t g = 0; g < p.data.size(); ++g) {
    dev.push_back(std::make_unique<DeviceArray>(space, p.data[g]));
    args.fields[g] = dev.back()->get();
  }
  constexpr int kRuns = 5;
  for (int i = 0; i < kRuns; ++i) compiled[0]->run(args);
  // An empty region launches nothing.
  runtime::KernelArgs empty = args;
  empty.hi = empty.lo;
  compiled[0]->run(empty);

  const std::vector<runtime::KernelTiming> timings = backend->kernel_timings();
  ASSERT_FALSE(timings.empty());
  long launched = 0;
  for (const runtime::KernelTiming& t : timings) {
    std::printf("[ info ] %-26s %s: %ld launches, %d registers, %zu bytes shared\n", t.name.c_str(),
                t.mapping.c_str(), t.launches, t.registers, t.shared_bytes);
    EXPECT_FALSE(t.name.empty());
    EXPECT_FALSE(t.mapping.empty());
    EXPECT_GT(t.registers, 0) << t.name << ": ptxas's report, also from the cache";
    EXPECT_EQ(t.spill_stores, 0) << t.name;
    EXPECT_GE(t.calculation, 0);
    EXPECT_LT(t.calculation, int(program.calculations.size()));
    EXPECT_EQ(t.seconds.size(), std::size_t(t.launches)) << t.name;
    for (double s : t.seconds) {
      EXPECT_GT(s, 0.0);
      EXPECT_LT(s, 10.0);
    }
    launched += t.launches;
  }
  EXPECT_GE(launched, kRuns);
}

} // namespace
} // namespace saguaro::test
