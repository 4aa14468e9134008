// The CPU backend's compile cache, its error paths and the shape of the code it generates; the
// interpreter backend against calc::run_calculation; required_margin; argument checks; the
// timing of every run.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "calc/interpreter.hpp"
#include "codegen/cpp.hpp"
#include "runtime/backends.hpp"
#include "runtime/process.hpp"
#include "runtime_support.hpp"
// unit/support.hpp names the saguaro executable, which this suite does not build or run.
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "unit/support.hpp"

namespace saguaro::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Small thorns that compile quickly.
calc::Program small_program(const std::string& name, const std::string& equation) {
  return lower_text("begin thorn " + name +
                    "\n  begin variables\n    u v\n  end variables\n"
                    "  begin calculation c\n    v = " +
                    equation + "\n  end calculation\nend thorn\n");
}

std::size_t count_files(const fs::path& dir, const std::string& extension) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == extension) ++n;
  return n;
}

// ============================================================== backends by name

TEST(MakeBackend, KnowsInterpreterAndCpu) {
  EXPECT_EQ(runtime::make_backend("interpreter", {})->name(), "interpreter");
  EXPECT_EQ(runtime::make_backend("cpu", {})->name(), "cpu");
  EXPECT_THROW(runtime::make_backend("cuda-someday", {}), std::invalid_argument);
}

// ============================================================== the compile cache

TEST(CpuCache, CompilesOnceThenLoadsFromTheCache) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  runtime::BackendOptions options;
  options.cache_dir = (dir.path / "cache").string(); // made by the backend
  calc::Program p = small_program("CacheA", "2 u + x");

  runtime::CpuBackend first(options);
  auto compiled = first.compile(p);
  ASSERT_EQ(compiled.size(), 1u);
  EXPECT_EQ(first.compiler_runs(), 1);
  EXPECT_EQ(first.cache_hits(), 0);
  const fs::path object = first.object_path(p);
  ASSERT_TRUE(fs::exists(object));
  fs::path source = object;
  source.replace_extension(".cpp");
  ASSERT_TRUE(fs::exists(source));
  EXPECT_EQ(read_file(source), codegen::generate_cpp(p)); // kept for people to read
  EXPECT_EQ(count_files(options.cache_dir, ".so"), 1u);
  const auto stamp = fs::last_write_time(object);

  // The same program again, from this backend and from a new one: nothing is compiled.
  first.compile(p);
  EXPECT_EQ(first.compiler_runs(), 1);
  EXPECT_EQ(first.cache_hits(), 1);
  runtime::CpuBackend second(options);
  auto again = second.compile(p);
  EXPECT_EQ(second.compiler_runs(), 0);
  EXPECT_EQ(second.cache_hits(), 1);
  EXPECT_EQ(fs::last_write_time(object), stamp);
  EXPECT_EQ(count_files(options.cache_dir, ".so"), 1u);

  // The cached object works.
  Patch patch = make_patch(p.calculations[0], runtime::required_margin(p.calculations[0]));
  again[0]->run(patch.args);
  const int u = p.calculations[0].find_grid_function("u");
  const int v = p.calculations[0].find_grid_function("v");
  const std::size_t at = patch.linear(patch.args.lo[0] + 1, patch.args.lo[1], patch.args.lo[2]);
  const double x = patch.args.origin[0] +
                   (patch.args.lo[0] + 1 + patch.args.index_offset[0]) * patch.args.spacing[0];
  EXPECT_DOUBLE_EQ(patch.data[v][at], 2 * patch.data[u][at] + x);

  // A different program compiles again.
  second.compile(small_program("CacheB", "3 u + y"));
  EXPECT_EQ(second.compiler_runs(), 1);
  EXPECT_EQ(count_files(options.cache_dir, ".so"), 2u);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(options.cache_dir))
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".tmp.")));
}

TEST(CpuCache, ConcurrentCompilesOfOneProgramCompileOnce) {
  TempDir dir;
  runtime::BackendOptions options;
  options.cache_dir = dir.path.string();
  calc::Program p = small_program("Concurrent", "u**2 - z");
  runtime::CpuBackend a(options), b(options);
  std::string error_a, error_b;
  auto work = [&p](runtime::CpuBackend& backend, std::string& error) {
    try {
      backend.compile(p);
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  std::thread ta(work, std::ref(a), std::ref(error_a));
  std::thread tb(work, std::ref(b), std::ref(error_b));
  ta.join();
  tb.join();
  EXPECT_EQ(error_a, "");
  EXPECT_EQ(error_b, "");
  EXPECT_EQ(a.compiler_runs() + b.compiler_runs(), 1);
  EXPECT_EQ(a.cache_hits() + b.cache_hits(), 1);
}

TEST(CpuCache, VerboseReportsCompilesAndHits) {
  TempDir dir;
  runtime::BackendOptions options;
  options.cache_dir = dir.path.string();
  options.verbose = true;
  calc::Program p = small_program("Verbose", "u + 1");
  runtime::CpuBackend backend(options);
  ::testing::internal::CaptureStderr();
  backend.compile(p);
  backend.compile(p);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::ContainsRegex("cpu backend: compiled thorn Verbose \\(1 "
                                            "calculation\\) in [0-9.]+ s: .*\\.so\n"));
  EXPECT_THAT(err, HasSubstr("cpu backend: cache hit for thorn Verbose"));
}

TEST(CpuCache, KeyDependsOnTheCompiler) {
  TempDir dir;
  // A wrapper script that is a different compiler as far as the key is concerned.
  fs::path wrapper = dir.path / "other-c++";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'wrapped'; fi\nexec c++ \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  runtime::BackendOptions options;
  options.cache_dir = (dir.path / "cache").string();
  calc::Program p = small_program("Key", "u");
  runtime::CpuBackend plain(options);
  options.compiler = wrapper.string();
  runtime::CpuBackend wrapped(options);
  EXPECT_NE(plain.object_path(p), wrapped.object_path(p));
}

// ============================================================== errors

TEST(CpuErrors, AnUnusableCompilerIsAClearError) {
  TempDir dir;
  runtime::BackendOptions options;
  options.cache_dir = dir.path.string();
  options.compiler = "saguaro-no-such-compiler";
  auto backend = runtime::make_backend("cpu", options);
  try {
    backend->compile(small_program("NoCompiler", "u"));
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("saguaro-no-such-compiler"));
    EXPECT_THAT(e.what(), HasSubstr("cannot be run"));
  }
}

TEST(CpuErrors, ACompileFailureReportsTheCompilerOutputAndKeepsTheSource) {
  TempDir dir;
  fs::path fake = dir.path / "broken-c++";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
           "case \"$1\" in --version) echo 'broken 1.0'; exit 0;; esac\n"
           "for a; do case \"$a\" in -###) exit 0;; esac; done\n"
           "echo 'broken-c++: error: the optimiser is on strike' >&2\nexit 3\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  runtime::BackendOptions options;
  options.cache_dir = (dir.path / "cache").string();
  options.compiler = fake.string();
  runtime::CpuBackend backend(options);
  calc::Program p = small_program("Broken", "u");
  try {
    backend.compile(p);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("the optimiser is on strike"));
    EXPECT_THAT(what, HasSubstr("exit status 3"));
    fs::path source = backend.object_path(p);
    source.replace_extension(".cpp");
    EXPECT_THAT(what, HasSubstr(source.string()));
    EXPECT_TRUE(fs::exists(source));
    EXPECT_FALSE(fs::exists(backend.object_path(p)));
  }
  EXPECT_EQ(count_files(options.cache_dir, ".so"), 0u);
}

TEST(RunCommand, CapturesOutputAndStatus) {
  runtime::CommandResult r = runtime::run_command({"sh", "-c", "echo out; echo err >&2; exit 7"});
  EXPECT_EQ(r.status, 7);
  EXPECT_THAT(r.output, HasSubstr("out\n"));
  EXPECT_THAT(r.output, HasSubstr("err\n"));
  EXPECT_THROW(runtime::run_command({"saguaro-no-such-program"}), std::runtime_error);
}

TEST(Fnv1a, KnownValues) {
  EXPECT_EQ(runtime::fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(runtime::fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(runtime::fnv1a64("foobar"), 0x85944171f73967e8ull);
}

// ============================================================== generated code

TEST(Codegen, LiteralsReadBackExactly) {
  for (double v : {0.0, 1.0, -2.0, 0.1, 1.0 / 3.0, 1e-300, 6.02214076e23, -0.08333333333333333})
    EXPECT_EQ(std::strtod(codegen::cpp_literal(v).c_str(), nullptr), v) << v;
  EXPECT_EQ(codegen::cpp_literal(2.0), "2.0");
  EXPECT_EQ(codegen::cpp_literal(0.5), "0.5");
  EXPECT_THROW(codegen::cpp_literal(1.0 / 0.0), std::invalid_argument);
}

TEST(Codegen, ShapeOfTheWaveRightHandSide) {
  calc::Program p = lower_file("par/wave.edl", 4);
  std::string src = codegen::generate_cpp(p);
  EXPECT_EQ(codegen::cpu_function_name(p, 1), "saguaro_calc_1_wave_rhs");
  EXPECT_THAT(src,
              HasSubstr("extern \"C\" void saguaro_calc_1_wave_rhs(const saguaro_cpu_args* args)"));
  EXPECT_THAT(src, HasSubstr("#pragma omp for collapse(2) schedule(static)"));
  EXPECT_THAT(src, HasSubstr("#pragma omp simd"));
  EXPECT_THAT(src, HasSubstr("__restrict__"));
  // The inner loops divide by nothing: 1/h^2 is hoisted; x^2 is a multiplication.
  std::size_t pos = 0;
  while ((pos = src.find("#pragma omp simd\n", pos)) != std::string::npos) {
    std::size_t end = src.find("\n          }\n", pos);
    std::string loop = src.substr(pos, end - pos);
    EXPECT_EQ(loop.find(" / "), std::string::npos) << loop;
    EXPECT_EQ(loop.find("pow"), std::string::npos) << loop;
    pos = end;
  }
  EXPECT_THAT(src, HasSubstr("1.0 / ("));
  // Exact literals of the stencil weights.
  EXPECT_THAT(src, HasSubstr("0.08333333333333333"));
}

// ============================================================== required_margin

TEST(RequiredMargin, IsStencilReachPlusStageExtent) {
  auto margin_of = [](const std::string& file, int order, const std::string& calc) {
    calc::Program p = lower_file(file, order);
    return runtime::required_margin(calc_named(p, calc));
  };
  runtime::Margin m = margin_of("par/wave.edl", 4, "wave_rhs");
  EXPECT_EQ(m.lo, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(m.hi, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(margin_of("par/wave.edl", 8, "wave_rhs").max(), 4);
  EXPECT_EQ(margin_of("par/wave.edl", 4, "wave_init").max(), 0);
  m = margin_of("par/microbench.edl", 4, "microbench");
  EXPECT_EQ(m.lo, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(m.hi, (std::array<int, 3>{1, 1, 1}));
  // advect_rhs: Dcen of the flux rho vel^j, an intermediate over one extra point, read at +-1.
  calc::Program advect = lower_file("par/advect.edl", 4);
  const calc::Calculation& rhs = calc_named(advect, "advect_rhs");
  ASSERT_EQ(rhs.stages.size(), 2u);
  m = runtime::required_margin(rhs);
  EXPECT_EQ(m.lo, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(m.hi, (std::array<int, 3>{1, 1, 1}));
}

// ============================================================== the interpreter backend

TEST(InterpreterBackend, MatchesRunCalculationExactly) {
  calc::Program p = lower_file("par/advect.edl", 4);
  const calc::Calculation& c = calc_named(p, "advect_rhs");
  const int ghost = runtime::required_margin(c).max();
  calc::GridBlock block({6, 5, 4}, ghost, c.grid_functions.size());
  block.origin = {0.1, -0.2, 0.3};
  block.spacing = {0.05, 0.07, 0.09};
  block.time = 1.5;
  for (std::size_t g = 0; g < block.data.size(); ++g)
    for (std::size_t n = 0; n < block.data[g].size(); ++n)
      block.data[g][n] = std::sin(0.01 * double(n) + double(g)) + 0.5;
  // The same arrays as KernelArgs: local index 0 is the block's index -ghost.
  std::vector<std::vector<double>> data = block.data;
  runtime::KernelArgs args;
  for (auto& d : data) args.fields.push_back(d.data());
  for (int a = 0; a < 3; ++a) {
    args.alloc[a] = block.size[a] + 2 * ghost;
    args.lo[a] = ghost;
    args.hi[a] = ghost + block.size[a];
    args.origin[a] = block.origin[a] - ghost * block.spacing[a];
    args.spacing[a] = block.spacing[a];
  }
  args.time = block.time;
  args.parameters = parameter_values(p, true);
  calc::run_calculation(c, block, args.parameters);
  runtime::make_backend("interpreter", {})->compile(p)[1]->run(args);
  ASSERT_EQ(&calc_named(p, "advect_rhs"), &p.calculations[1]);
  for (std::size_t g = 0; g < data.size(); ++g)
    for (std::size_t n = 0; n < data[g].size(); ++n)
      ASSERT_NEAR(data[g][n], block.data[g][n], 1e-15 * (1 + std::fabs(data[g][n])))
          << c.grid_functions[g].name << " at " << n;
}

// Backend::compile_sets: one result per set, each with every calculation, except those
// `wanted` leaves out (null: the simulation compiles a timed right-hand side's folded forms
// only after the empirical finish's verdict).
TEST(CompileSets, LeavesOutTheCalculationsNotWanted) {
  const calc::Program p = lower_file("par/advect.edl", 4);
  ASSERT_GE(p.calculations.size(), 2u);
  auto backend = runtime::make_backend("interpreter", {});
  const std::vector<std::vector<calc::Mapping>> sets(2); // empty: default mappings
  for (const auto& set : backend->compile_sets(p, sets)) {
    ASSERT_EQ(set.size(), p.calculations.size());
    for (const auto& k : set) EXPECT_NE(k, nullptr);
  }
  std::vector<bool> wanted(p.calculations.size(), true);
  wanted[1] = false;
  const auto compiled = backend->compile_sets(p, sets, wanted);
  ASSERT_EQ(compiled.size(), sets.size());
  for (const auto& set : compiled) {
    ASSERT_EQ(set.size(), p.calculations.size());
    for (std::size_t c = 0; c < set.size(); ++c)
      EXPECT_EQ(set[c] == nullptr, !wanted[c]) << p.calculations[c].name;
  }
}

// ============================================================== argument checks

TEST(RunChecks, RegionsThatDoNotFitAndMissingArgumentsAreRejected) {
  calc::Program p = lower_file("par/wave.edl", 4);
  const calc::Calculation& c = calc_named(p, "wave_rhs");
  runtime::BackendOptions options = suite_options();
  for (const std::string name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(name);
    auto compiled = runtime::make_backend(name, options)->compile(p);
    Patch patch = make_patch(c, runtime::required_margin(c));
    Patch bad = clone(patch);
    bad.args.lo[1] = 1; // margin 2
    EXPECT_THROW(compiled[1]->run(bad.args), std::invalid_argument);
    bad = clone(patch);
    bad.args.hi[2] = bad.args.alloc[2] - 1;
    EXPECT_THROW(compiled[1]->run(bad.args), std::invalid_argument);
    bad = clone(patch);
    bad.args.fields.pop_back();
    EXPECT_THROW(compiled[1]->run(bad.args), std::invalid_argument);
    bad = clone(patch);
    bad.args.fields[0] = nullptr;
    EXPECT_THROW(compiled[1]->run(bad.args), std::invalid_argument);
    // wave_init needs both parameters.
    bad = clone(make_patch(p.calculations[0], {}));
    bad.args.parameters = {1.0};
    EXPECT_THROW(compiled[0]->run(bad.args), std::invalid_argument);
    // An empty region computes nothing and is fine at the very edge.
    Patch empty = clone(patch);
    empty.args.lo = {0, 0, 0};
    empty.args.hi = {0, 0, 0};
    EXPECT_NO_THROW(compiled[1]->run(empty.args));
    EXPECT_EQ(empty.data, patch.data);
  }
}

// ============================================================== timings

// Every run() of a compiled calculation is timed, one KernelTiming per calculation (the
// prediction log's measured side); calls over an empty region compute nothing and count not.
TEST(CpuTimings, EveryRunOfEveryCalculationIsTimed) {
  calc::Program p = lower_file("par/wave.edl", 4);
  runtime::CpuBackend backend(suite_options());
  EXPECT_TRUE(backend.kernel_timings().empty());
  auto compiled = backend.compile(p);
  const calc::Calculation& c = p.calculations[1];
  Patch patch = make_patch(c, runtime::required_margin(c));
  patch.args.parameters = parameter_values(p, false);
  compiled[1]->run(patch.args);
  compiled[1]->run(patch.args);
  Patch empty = clone(patch);
  empty.args.hi = empty.args.lo;
  compiled[1]->run(empty.args);

  const std::vector<runtime::KernelTiming> timings = backend.kernel_timings();
  ASSERT_EQ(timings.size(), p.calculations.size());
  for (std::size_t i = 0; i < timings.size(); ++i) {
    EXPECT_EQ(timings[i].name, p.calculations[i].name);
    EXPECT_EQ(timings[i].mapping, "cpu");
    EXPECT_EQ(timings[i].calculation, int(i));
    EXPECT_EQ(timings[i].kernel, 0);
    EXPECT_EQ(timings[i].registers, -1);
  }
  const runtime::KernelTiming& t = timings[1];
  EXPECT_EQ(t.launches, 2);
  ASSERT_EQ(t.seconds.size(), 2u);
  EXPECT_GT(t.seconds[0], 0);
  EXPECT_EQ(t.points, 12.0 * 10 * 9); // make_patch's interior: the last stage's region
  EXPECT_EQ(timings[0].launches, 0);
}

// Streaming stores (Saguaro::streaming_stores): automatic streams where a launch's arrays are
// larger than the host's last-level cache and keeps plain stores below it; the backend decides per
// calculation at compile, from the run's array size and each calculation's arrays.
TEST(StreamingStores, AutomaticStreamsWhereTheArraysOutrunTheCache) {
  using runtime::StreamingStores;
  EXPECT_TRUE(runtime::streams_stores(StreamingStores::automatic, 33e6, 32e6));
  EXPECT_FALSE(runtime::streams_stores(StreamingStores::automatic, 31e6, 32e6));
  EXPECT_FALSE(runtime::streams_stores(StreamingStores::automatic, 0, 32e6)); // size unknown
  EXPECT_TRUE(runtime::streams_stores(StreamingStores::always, 0, 32e6));
  EXPECT_FALSE(runtime::streams_stores(StreamingStores::never, 1e12, 32e6));
  const double cache = runtime::host_last_level_cache_bytes();
  EXPECT_GE(cache, 64.0 * 1024); // no host has a last-level cache smaller
  EXPECT_LE(cache, 4.0 * 1024 * 1024 * 1024);

  const calc::Program p = lower_file("par/wave.edl");
  runtime::BackendOptions options;
  runtime::CpuBackend unknown(options); // no array size: nothing streams
  EXPECT_EQ(unknown.streamed(p, {}), std::vector<bool>(p.calculations.size(), false));
  // Arrays as large as the cache each: every calculation (two arrays or more) streams; arrays a
  // thousandth of it: none does.
  options.array_points = std::size_t(cache / 8);
  EXPECT_EQ(runtime::CpuBackend(options).streamed(p, {}),
            std::vector<bool>(p.calculations.size(), true));
  options.array_points = std::size_t(cache / 8000);
  EXPECT_EQ(runtime::CpuBackend(options).streamed(p, {}),
            std::vector<bool>(p.calculations.size(), false));
  // Ranks on one host share its caches: 64 of them, each with arrays of 1/64 of the cache,
  // stream every calculation of two arrays or more.
  options.ranks_on_host = 64;
  options.array_points = std::size_t(cache / 8 / 64);
  EXPECT_EQ(runtime::CpuBackend(options).streamed(p, {}),
            std::vector<bool>(p.calculations.size(), true));
  options.streaming_stores = StreamingStores::always;
  options.ranks_on_host = 1;
  options.array_points = 0;
  EXPECT_EQ(runtime::CpuBackend(options).streamed(p, {}),
            std::vector<bool>(p.calculations.size(), true));
  EXPECT_NE(runtime::CpuBackend(options).object_path(p), unknown.object_path(p));
}

} // namespace
} // namespace saguaro::test
