// Mapping files (format -> parse round trips, diagnostics with file:line:col and a caret),
// the calculation and device hashes, and the mapping cache.
#include "mapper/mapping_file.hpp"
#include "mapper_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace saguaro;
using namespace saguaro::mapper;
using test::device;

namespace {

namespace fs = std::filesystem;

void expect_same(const calc::Mapping& want, const calc::Mapping& got) {
  ASSERT_EQ(want.kernels.size(), got.kernels.size());
  for (std::size_t k = 0; k < want.kernels.size(); ++k) {
    SCOPED_TRACE("kernel " + std::to_string(k));
    const calc::KernelMapping &a = want.kernels[k], &b = got.kernels[k];
    EXPECT_EQ(a.stage, b.stage);
    EXPECT_EQ(a.stores, b.stores);
    EXPECT_EQ(a.temporaries, b.temporaries);
    EXPECT_EQ(a.block, b.block);
    EXPECT_EQ(a.buffering, b.buffering);
  }
}

// One kernel per store of every stage.
calc::Mapping per_store_mapping(const calc::Calculation& c) {
  calc::Mapping m;
  for (std::size_t s = 0; s < c.stages.size(); ++s)
    for (std::size_t st = 0; st < c.stages[s].stores.size(); ++st) {
      calc::KernelMapping k;
      k.stage = int(s);
      k.stores = {int(st)};
      k.block = {1, 16, 4, 2};
      m.kernels.push_back(k);
    }
  return m;
}

// For the first stage with two stores or more: kernel 0 makes every store but the last and
// also stores a node the last store needs as a temporary; kernel 1 makes the last store.
std::optional<calc::Mapping> temporaries_mapping(const calc::Calculation& c) {
  for (std::size_t s = 0; s < c.stages.size(); ++s) {
    const calc::Stage& stage = c.stages[s];
    if (stage.stores.size() < 2) continue;
    calc::KernelMapping k0, k1;
    k0.stage = k1.stage = int(s);
    for (std::size_t st = 0; st + 1 < stage.stores.size(); ++st) k0.stores.push_back(int(st));
    k1.stores = {int(stage.stores.size() - 1)};
    k0.block = {2, 8, 4, 3};
    for (calc::NodeId id : c.dag.reachable({stage.stores.back().value})) {
      const calc::Node& n = c.dag.node(id);
      if (!n.uniform && n.op != calc::Op::Load && n.op != calc::Op::Constant) k0.temporaries = {id};
    }
    if (k0.temporaries.empty()) continue;
    calc::Mapping m;
    m.kernels = {k0, k1};
    for (std::size_t k = s + 1; k < c.stages.size(); ++k) { // the later stages as they are
      calc::KernelMapping rest;
      rest.stage = int(k);
      for (std::size_t st = 0; st < c.stages[k].stores.size(); ++st) rest.stores.push_back(int(st));
      m.kernels.push_back(rest);
    }
    if (s > 0) { // and the earlier ones
      calc::Mapping head;
      for (std::size_t k = 0; k < s; ++k) {
        calc::KernelMapping before;
        before.stage = int(k);
        for (std::size_t st = 0; st < c.stages[k].stores.size(); ++st)
          before.stores.push_back(int(st));
        head.kernels.push_back(before);
      }
      m.kernels.insert(m.kernels.begin(), head.kernels.begin(), head.kernels.end());
    }
    try {
      calc::plan_kernels(c, m);
      return m;
    } catch (const calc::MappingError&) {
    }
  }
  return std::nullopt;
}

calc::Mapping round_trip(const calc::Program& program, const calc::Calculation& c,
                         const calc::Mapping& m) {
  MappingFile file;
  file.device = device("h100").name;
  file.grid = {256, 128, 64};
  file.entries.push_back({c.name, "", 1.5e-3, m});
  const std::string text = format_mapping_file(program, file, "written by: the test\nline two");
  const MappingFile back = parse_mapping_file(text, "round.yaml", program);
  EXPECT_EQ(back.device, file.device) << text;
  EXPECT_EQ(back.grid, file.grid);
  EXPECT_TRUE(back.warnings.empty());
  EXPECT_EQ(back.entries.size(), 1u);
  if (back.entries.size() != 1) return {};
  EXPECT_EQ(back.entries[0].calculation, c.name);
  EXPECT_EQ(back.entries[0].hash, calculation_hash(c));
  EXPECT_DOUBLE_EQ(back.entries[0].predicted_seconds, 1.5e-3);
  // Formatting again gives the same text: the file is a fixed point.
  MappingFile again = back;
  EXPECT_EQ(format_mapping_file(program, again, "written by: the test\nline two"), text);
  return back.entries[0].mapping;
}

const char* kWave = R"(# a mapping for the wave example
device: NVIDIA H100 80GB HBM3
grid: [256, 256, 256]
calculations:
  wave_rhs:
    kernels:
      - stage: 0
        stores: [phirhs, pirhs]
        block: z 32x8x8
        buffering: {phi: b}
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// 1-based line and column of the `occurrence`th `needle` in `text`.
std::pair<int, int> position(const std::string& text, const std::string& needle,
                             int occurrence = 1) {
  std::size_t at = std::string::npos, from = 0;
  for (int i = 0; i < occurrence; ++i) {
    at = text.find(needle, from);
    if (at == std::string::npos) return {0, 0};
    from = at + 1;
  }
  const std::size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  const int line = 1 + int(std::count(text.begin(), text.begin() + long(at), '\n'));
  const int column = int(at - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
  return {line, column};
}

// Parsing `text` fails at (the `occurrence`th) `needle` with a message containing `message`;
// the diagnostic quotes the line and puts the caret under the needle.
void expect_error(const std::string& text, const std::string& needle, const std::string& message,
                  int occurrence = 1) {
  const calc::Program program = test::lower_file("par/wave.edl");
  const auto [line, column] = position(text, needle, occurrence);
  ASSERT_GT(line, 0) << needle;
  try {
    parse_mapping_file(text, "m.yaml", program);
    ADD_FAILURE() << "no error for\n" << text;
  } catch (const MappingFileError& e) {
    const std::string what = e.what();
    SCOPED_TRACE(what);
    EXPECT_EQ(e.file(), "m.yaml");
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.column(), column);
    EXPECT_NE(what.find(fmt::format("m.yaml:{}:{}: error: ", line, column)), std::string::npos);
    EXPECT_NE(what.find(message), std::string::npos);
    std::istringstream lines(text);
    std::string quoted;
    for (int i = 0; i < line; ++i) std::getline(lines, quoted);
    const std::string caret = "  " + std::string(std::size_t(column - 1), ' ') + "^";
    EXPECT_NE(what.find("\n  " + quoted + "\n" + caret), std::string::npos);
  }
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("saguaro-mapping-cache-test-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  return dir;
}

} // namespace

// --- round trips --------------------------------------------------------------------------

TEST(MappingFile, RoundTripsEveryKindOfMapping) {
  int with_temporaries = 0, per_store = 0, with_sums_by_input = 0;
  for (const char* example : {"par/wave.edl", "par/maxwell.edl", "par/microbench.edl"}) {
    const calc::Program program = test::lower_file(example);
    for (const calc::Calculation& c : program.calculations) {
      SCOPED_TRACE(std::string(example) + " " + c.name);
      const calc::Mapping plain = calc::default_mapping(c);
      expect_same(plain, round_trip(program, c, plain));
      for (const char* strategy : {"u", "r", "b", "p", "c", "q", "mixed"}) {
        SCOPED_TRACE(strategy);
        const calc::Mapping m = calc::strategy_mapping(c, strategy, {1, 64, 4, 16});
        expect_same(m, round_trip(program, c, m));
      }
      // Blocks per SM and sums by input (where they apply) in the block's short form.
      const calc::Mapping summed =
          calc::strategy_mapping(c, "q", calc::parse_block_config("z 32x8x8 4/SM by-input"));
      with_sums_by_input += summed.kernels.front().block.sums_by_input;
      expect_same(summed, round_trip(program, c, summed));
      const calc::Mapping split = per_store_mapping(c);
      bool fits = true;
      try {
        calc::plan_kernels(c, split);
      } catch (const calc::MappingError&) {
        fits = false; // a later kernel would read what an earlier one writes
      }
      if (fits) {
        expect_same(split, round_trip(program, c, split));
        ++per_store;
      }
      if (auto m = temporaries_mapping(c)) {
        expect_same(*m, round_trip(program, c, *m));
        ++with_temporaries;
      }
    }
  }
  EXPECT_GE(per_store, 5);
  EXPECT_GE(with_temporaries, 2);
  EXPECT_GE(with_sums_by_input, 3);
}

// The split of test_cuda_codegen.cpp: a shared Laplacian passed through a temporary, with a
// buffered input in the kernel that computes it.
TEST(MappingFile, RoundTripsSplitKernelsWithTemporaries) {
  const calc::Program program = test::lower_file("test/codegen/edl/split.edl");
  const calc::Calculation& c = program.calculations[0];
  const calc::Stage& stage = c.stages[0];
  ASSERT_EQ(stage.stores.size(), 2u);
  auto first = c.dag.reachable({stage.stores[0].value});
  auto second = c.dag.reachable({stage.stores[1].value});
  calc::KernelMapping k0, k1;
  k0.block = {2, 8, 4, 3};
  k1.block = {1, 16, 2, 2};
  k0.stores = {0};
  k1.stores = {1};
  for (calc::NodeId id : first) {
    const calc::Node& n = c.dag.node(id);
    if (!n.uniform && n.op == calc::Op::Add && std::binary_search(second.begin(), second.end(), id))
      k0.temporaries = {id};
  }
  ASSERT_FALSE(k0.temporaries.empty());
  k0.buffering[c.find_grid_function("u")] = calc::Buffering::Shared;
  k1.buffering[c.find_grid_function("w")] = calc::Buffering::Unbuffered; // kept as written
  calc::Mapping m;
  m.kernels = {k0, k1};
  ASSERT_NO_THROW(calc::plan_kernels(c, m));
  expect_same(m, round_trip(program, c, m));

  MappingFile file;
  file.entries.push_back({c.name, "", 0, m});
  const std::string text = format_mapping_file(program, file);
  EXPECT_NE(text.find(fmt::format("temporaries: [{}]", k0.temporaries[0])), std::string::npos)
      << text;
  EXPECT_NE(text.find("buffering: {u: b}"), std::string::npos) << text;
  EXPECT_NE(text.find("block: z 8x4x3"), std::string::npos) << text;
  EXPECT_EQ(text.find("predicted_seconds"), std::string::npos) << text;
}

TEST(MappingFile, HandWrittenFileWithDefaultsAndOmittedCalculations) {
  const calc::Program program = test::lower_file("par/wave.edl");
  const std::string text = "calculations:\n  wave_rhs:\n    kernels:\n"
                           "      - stores: phirhs\n"
                           "      - stores: [pirhs]\n        buffering: {phi: c}\n";
  const MappingFile f = parse_mapping_file(text, "hand.yaml", program);
  EXPECT_EQ(f.device, "");
  EXPECT_EQ(f.grid, (std::array<long, 3>{0, 0, 0}));
  ASSERT_EQ(f.entries.size(), 1u); // wave_init and wave_energy: the caller's default
  const calc::Calculation& rhs = program.calculations[1];
  const calc::Mapping& m = f.entries[0].mapping;
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].stage, 0);
  EXPECT_EQ(m.kernels[0].block, calc::BlockConfig{});
  EXPECT_EQ(rhs.grid_functions[rhs.stages[0].stores[m.kernels[0].stores[0]].grid_function].name,
            "phirhs");
  EXPECT_EQ(m.kernels[1].buffering.at(rhs.find_grid_function("phi")), calc::Buffering::ReadOnly);
  EXPECT_TRUE(f.entries[0].hash.empty());
  EXPECT_TRUE(f.warnings.empty());

  EXPECT_TRUE(parse_mapping_file("", "empty.yaml", program).entries.empty());
  EXPECT_TRUE(parse_mapping_file("# nothing\n", "empty.yaml", program).entries.empty());
}

TEST(MappingFile, HashMismatchIsAWarning) {
  const calc::Program program = test::lower_file("par/wave.edl");
  const std::string text =
      replace(kWave, "    kernels:", "    hash: 0123456789abcdef\n    kernels:");
  const MappingFile f = parse_mapping_file(text, "old.yaml", program);
  ASSERT_EQ(f.entries.size(), 1u);
  ASSERT_EQ(f.warnings.size(), 1u);
  const auto [line, column] = position(text, "0123456789abcdef");
  EXPECT_NE(f.warnings[0].find(fmt::format("old.yaml:{}:{}: warning: ", line, column)),
            std::string::npos)
      << f.warnings[0];
  EXPECT_NE(f.warnings[0].find("has changed"), std::string::npos);
  // The current hash: no warning.
  const std::string good = replace(
      kWave,
      "    kernels:", "    hash: " + calculation_hash(program.calculations[1]) + "\n    kernels:");
  EXPECT_TRUE(parse_mapping_file(good, "new.yaml", program).warnings.empty());
}

// --- diagnostics --------------------------------------------------------------------------

TEST(MappingFile, TheExampleTextParses) {
  const calc::Program program = test::lower_file("par/wave.edl");
  const MappingFile f = parse_mapping_file(kWave, "m.yaml", program);
  EXPECT_EQ(f.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(f.grid, (std::array<long, 3>{256, 256, 256}));
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_EQ(f.entries[0].mapping.kernels[0].buffering.at(
                program.calculations[1].find_grid_function("phi")),
            calc::Buffering::Shared);
}

TEST(MappingFile, UnknownCalculationSuggestsTheNearest) {
  expect_error(replace(kWave, "wave_rhs:", "wave_rsh:"), "wave_rsh",
               "unknown calculation 'wave_rsh'; did you mean 'wave_rhs'?");
  expect_error(replace(kWave, "wave_rhs:", "nothing_like_it:"), "nothing_like_it",
               "wave_init, wave_rhs, wave_energy");
}

TEST(MappingFile, UnknownGridFunction) {
  expect_error(replace(kWave, "[phirhs, pirhs]", "[phirhs, pirsh]"), "pirsh",
               "unknown grid function 'pirsh' in calculation 'wave_rhs'; did you mean 'pirhs'?");
  expect_error(replace(kWave, "{phi: b}", "{phj: b}"), "phj", "unknown grid function 'phj'");
}

TEST(MappingFile, StoreTheStageDoesNotMake) {
  expect_error(replace(kWave, "[phirhs, pirhs]", "[phirhs, pirhs, phi]"), "phi]",
               "stage 0 of calculation 'wave_rhs' does not store 'phi'");
  expect_error(replace(kWave, "- stage: 0", "- stage: 2"), "2\n",
               "stage 2 does not exist: calculation 'wave_rhs' has 1 stage");
}

TEST(MappingFile, BadStrategyLetter) {
  expect_error(replace(kWave, "{phi: b}", "{phi: w}"), "w}",
               "unknown buffering strategy 'w' for phi: expected u (unbuffered), r");
  expect_error(replace(kWave, "{phi: b}", "{phi: rb}"), "rb}", "unknown buffering strategy 'rb'");
}

TEST(MappingFile, BadBlockConfiguration) {
  expect_error(replace(kWave, "z 32x8x8", "q 32x8"), "q 32x8",
               "block configuration 'q 32x8': expected the iteration axis (y or z)");
  expect_error(replace(kWave, "z 32x8x8", "z 64x32x8"), "z 64x32x8", "t_x * t_f <= 1024");
}

TEST(MappingFile, StoreMadeTwice) {
  const std::string twice = replace(kWave, "        buffering: {phi: b}\n",
                                    "        buffering: {phi: b}\n"
                                    "      - stores: [phirhs]\n");
  expect_error(twice, "phirhs", "'phirhs' is stored twice: kernel 0 already stores it", 2);
  try {
    parse_mapping_file(twice, "m.yaml", test::lower_file("par/wave.edl"));
  } catch (const MappingFileError& e) {
    const auto [line, column] = position(twice, "phirhs", 1);
    EXPECT_NE(std::string(e.what()).find(
                  fmt::format("m.yaml:{}:{}: note: first stored here", line, column)),
              std::string::npos)
        << e.what();
  }
  expect_error(replace(kWave, "[phirhs, pirhs]", "[phirhs, pirhs, phirhs]"), "phirhs",
               "stored twice", 2);
}

TEST(MappingFile, MissingStoreIsReportedAtTheCalculation) {
  expect_error(replace(kWave, "[phirhs, pirhs]", "[phirhs]"), "wave_rhs", "no kernel stores pirhs");
  // A strategy that does not apply (plan_kernels) is reported there too, with the kernel.
  const std::string text = replace(kWave, "{phi: b}", "{phi: r}");
  expect_error(text, "wave_rhs", "strategy r (register) does not apply to phi");
  try {
    parse_mapping_file(text, "m.yaml", test::lower_file("par/wave.edl"));
  } catch (const MappingFileError& e) {
    const auto [line, column] = position(text, "stage: 0");
    EXPECT_NE(std::string(e.what()).find(
                  fmt::format("m.yaml:{}:{}: note: kernel 0 is here", line, column)),
              std::string::npos)
        << e.what();
  }
}

TEST(MappingFile, YamlSyntaxError) {
  // An unclosed flow map: yaml-cpp reports where the map began.
  const std::string text = replace(kWave, "{phi: b}", "{phi: b");
  const calc::Program program = test::lower_file("par/wave.edl");
  try {
    parse_mapping_file(text, "m.yaml", program);
    ADD_FAILURE() << "no error";
  } catch (const MappingFileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("error: not valid YAML"), std::string::npos) << what;
    EXPECT_NE(what.find(fmt::format("m.yaml:{}:{}: ", e.line(), e.column())), std::string::npos);
    EXPECT_GT(e.line(), 0) << what;
  }
  // Where yaml-cpp knows the culprit exactly, the caret is under it.
  expect_error(replace(kWave, "[phirhs, pirhs]", "[phirhs, pirhs]]"), "]\n        block",
               "not valid YAML: illegal flow end");
  expect_error(replace(kWave, "z 32x8x8", "z 32x8x8: x"), ": x",
               "not valid YAML: illegal map value");
}

// Control bytes make yaml-cpp count lines and columns unlike the file's lines: a mark past the
// end of the line it names is an error at that line, not a crash (fuzz_mapping_file's finding,
// test/fuzz/regressions/mapping_file/crash-45639e8c...).
TEST(MappingFile, AMarkPastItsLineIsStillAnError) {
  std::ifstream in(std::string(SAGUARO_SOURCE_DIR) +
                       "/test/fuzz/regressions/mapping_file/"
                       "crash-45639e8cecaa157675bfae798d03e2ffd184d763",
                   std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_FALSE(bytes.str().empty());
  const calc::Program program = test::lower_file("par/advect.edl", 4);
  EXPECT_THROW(parse_mapping_file(bytes.str(), "fuzz.yaml", program), MappingFileError);
}

TEST(MappingFile, OtherMistakes) {
  expect_error(replace(kWave, "grid:", "gird:"), "gird",
               "unknown key 'gird' at the top level; did you mean 'grid'?");
  expect_error(replace(kWave, "block:", "blokc:"), "blokc",
               "unknown key 'blokc' in a kernel; did you mean 'block'?");
  expect_error(replace(kWave, "[256, 256, 256]", "[256, 256]"), "[256", "grid is three sizes");
  expect_error(replace(kWave, "stage: 0", "stage: zero"), "zero", "stage must be an integer");
  expect_error(replace(kWave, "    kernels:", "    kernel:"), "kernel:",
               "unknown key 'kernel' in calculation 'wave_rhs'; did you mean 'kernels'?");
  expect_error(replace(kWave, "block: z 32x8x8\n", "temporaries: [99999]\n"), "99999",
               "temporary node 99999 does not exist");
}

TEST(MappingFile, LoadReportsAMissingFile) {
  const calc::Program program = test::lower_file("par/wave.edl");
  EXPECT_THROW(load_mapping_file("/nonexistent/mapping.yaml", program), MappingFileError);
  const fs::path dir = fresh_dir("load");
  fs::create_directories(dir);
  std::ofstream(dir / "m.yaml") << kWave;
  EXPECT_EQ(load_mapping_file((dir / "m.yaml").string(), program).entries.size(), 1u);
  fs::remove_all(dir);
}

TEST(MappingFile, FormatRefusesMappingsThatDoNotFit) {
  const calc::Program program = test::lower_file("par/wave.edl");
  MappingFile file;
  file.entries.push_back({"wave_rhs", "", 0, calc::Mapping{}});
  EXPECT_THROW(format_mapping_file(program, file), calc::MappingError);
  file.entries[0] = {"no_such", "", 0, calc::default_mapping(program.calculations[1])};
  EXPECT_THROW(format_mapping_file(program, file), calc::MappingError);
}

// --- hashes -------------------------------------------------------------------------------

TEST(MappingFile, CalculationHashIsStable) {
  const calc::Program a = test::lower_file("par/wave.edl");
  const calc::Program b = test::lower_file("par/wave.edl");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a.calculations.size(); ++i) {
    const std::string h = calculation_hash(a.calculations[i]);
    EXPECT_EQ(h.size(), 16u);
    EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(h, calculation_hash(b.calculations[i]));
    EXPECT_TRUE(seen.insert(h).second) << "two calculations with one hash";
  }
  // Another finite-difference order changes the stencils, so the hash.
  EXPECT_NE(calculation_hash(test::lower_file("par/wave.edl", 2).calculations[1]),
            calculation_hash(a.calculations[1]));

  // One coefficient changed in the EDL text.
  std::ifstream in(test::source_dir() + "/par/microbench.edl");
  std::stringstream text;
  text << in.rdbuf();
  const std::string original = text.str();
  const std::string changed = replace(original, "0.01*A0", "0.011*A0");
  const calc::Program p = test::lower_text(original), q = test::lower_text(changed);
  EXPECT_EQ(calculation_hash(p.calculations[0]), calculation_hash(p.calculations[0]));
  EXPECT_NE(calculation_hash(p.calculations[0]), calculation_hash(q.calculations[0]));
  EXPECT_EQ(calculation_hash(p.calculations[1]), calculation_hash(q.calculations[1]));
}

TEST(MappingFile, DeviceHash) {
  EXPECT_EQ(device_hash(device("h100")), device_hash(device("h100")));
  EXPECT_NE(device_hash(device("h100")), device_hash(device("a100")));
  model::Device d = device("h100");
  d.dram_bandwidth *= 1.1;
  EXPECT_NE(device_hash(d), device_hash(device("h100")));
  EXPECT_EQ(device_hash(d).size(), 16u);
}

// --- the cache ----------------------------------------------------------------------------

TEST(MappingCache, GridClass) {
  EXPECT_EQ(grid_class({200, 256, 257}), (std::array<long, 3>{256, 256, 512}));
  EXPECT_EQ(grid_class({1, 2, 3}), (std::array<long, 3>{1, 2, 4}));
  EXPECT_EQ(grid_class({0, 100, 1000}), (std::array<long, 3>{1, 128, 1024}));
  EXPECT_EQ(grid_class({64, 64, 64}), (std::array<long, 3>{64, 64, 64}));
}

TEST(MappingCache, StoreThenLookup) {
  const calc::Program program = test::lower_file("par/wave.edl");
  const calc::Calculation& rhs = program.calculations[1];
  const fs::path dir = fresh_dir("store");
  MappingCache cache(dir.string());
  const std::array<long, 3> grid{200, 200, 200};
  EXPECT_FALSE(cache.lookup(program, rhs, device("h100"), grid, "model"));

  const calc::Mapping m = calc::strategy_mapping(rhs, "mixed", {1, 64, 4, 16});
  cache.store(program, rhs, device("h100"), grid, "model", m, 2.5e-4);
  const std::string path = cache.path_for(rhs, device("h100"), grid, "model");
  EXPECT_EQ(fs::path(path).parent_path(), dir);
  EXPECT_EQ(fs::path(path).extension(), ".yaml");
  ASSERT_TRUE(fs::exists(path));
  // Only the file itself: no temporaries left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  // What is stored is a mapping file people can read.
  EXPECT_EQ(load_mapping_file(path, program).entries.at(0).predicted_seconds, 2.5e-4);

  auto hit = cache.lookup(program, rhs, device("h100"), grid, "model");
  ASSERT_TRUE(hit);
  expect_same(m, *hit);
  // The same grid class hits; another class, device, method or calculation misses.
  EXPECT_TRUE(cache.lookup(program, rhs, device("h100"), {256, 129, 255}, "model"));
  EXPECT_FALSE(cache.lookup(program, rhs, device("h100"), {512, 256, 256}, "model"));
  EXPECT_FALSE(cache.lookup(program, rhs, device("a100"), grid, "model"));
  EXPECT_FALSE(cache.lookup(program, rhs, device("h100"), grid, "exhaustive"));
  EXPECT_FALSE(cache.lookup(program, program.calculations[2], device("h100"), grid, "model"));
  // Another lowering of the same calculation (fd order 2) is another calculation.
  const calc::Program order2 = test::lower_file("par/wave.edl", 2);
  EXPECT_FALSE(cache.lookup(order2, order2.calculations[1], device("h100"), grid, "model"));
  // Storing again replaces.
  const calc::Mapping plain = calc::default_mapping(rhs);
  cache.store(program, rhs, device("h100"), grid, "model", plain, 3e-4);
  expect_same(plain, *cache.lookup(program, rhs, device("h100"), grid, "model"));
  fs::remove_all(dir);
}

TEST(MappingCache, CorruptOrMismatchingFilesMiss) {
  const calc::Program program = test::lower_file("par/wave.edl");
  const calc::Calculation& rhs = program.calculations[1];
  const fs::path dir = fresh_dir("corrupt");
  MappingCache cache(dir.string());
  const std::array<long, 3> grid{128, 128, 128};
  cache.store(program, rhs, device("h100"), grid, "model", calc::default_mapping(rhs), 1e-4);
  const std::string path = cache.path_for(rhs, device("h100"), grid, "model");
  std::string good;
  {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    good = s.str();
  }
  ASSERT_TRUE(cache.lookup(program, rhs, device("h100"), grid, "model"));
  auto write = [&](const std::string& text) { std::ofstream(path, std::ios::trunc) << text; };
  auto misses = [&](const std::string& text) {
    write(text);
    SCOPED_TRACE(text);
    std::optional<calc::Mapping> got;
    EXPECT_NO_THROW(got = cache.lookup(program, rhs, device("h100"), grid, "model"));
    EXPECT_FALSE(got);
  };
  misses("\x01\x02 garbage {[\n");
  misses(good.substr(0, good.size() / 2) + "{");        // a torn write
  misses("");                                           // empty
  misses(replace(good, "z 32x8x8", "q 32x8"));          // a bad block
  misses(replace(good, "[phirhs, pirhs]", "[phirhs]")); // does not fit
  misses(replace(good, "grid: [128, 128, 128]", "grid: [256, 128, 128]"));
  misses(replace(good, "device: \"NVIDIA H100", "device: \"NVIDIA A100"));
  misses(replace(good, "hash: ", "hash: 0"));
  write(good);
  EXPECT_TRUE(cache.lookup(program, rhs, device("h100"), grid, "model"));
  // A directory where the file should be.
  fs::remove(path);
  fs::create_directories(path);
  EXPECT_FALSE(cache.lookup(program, rhs, device("h100"), grid, "model"));
  fs::remove_all(dir);
}

TEST(MappingCache, ConcurrentStoresOfOneKey) {
  const calc::Program program = test::lower_file("par/microbench.edl");
  const calc::Calculation& c = program.calculations[0];
  const fs::path dir = fresh_dir("concurrent");
  const std::array<long, 3> grid{256, 256, 256};
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] {
      MappingCache cache(dir.string());
      for (int i = 0; i < 20; ++i) {
        cache.store(program, c, device("h100"), grid, "model",
                    calc::strategy_mapping(c, (t + i) % 2 ? "c" : "b", {2, 32, 8, 8}), 1e-3);
        EXPECT_TRUE(cache.lookup(program, c, device("h100"), grid, "model"));
      }
    });
  for (std::thread& w : writers) w.join();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(MappingCache, DefaultDirectoryFollowsXdg) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", "/some/cache", 1);
  EXPECT_EQ(MappingCache("").dir(), "/some/cache/saguaro/mappings");
  if (old)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(MappingCache("/x/y").dir(), "/x/y");
}
