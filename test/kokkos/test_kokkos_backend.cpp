// The Kokkos backend (runtime/kokkos.hpp, codegen/kokkos.hpp): in a build without Kokkos, what
// `saguaro` says; with it, every calculation of par/ against the interpreter under the default
// mapping and under the mapper's mappings, and the Kokkos array space against the host's.
#include "runtime/backend_registry.hpp"
#include "runtime/kokkos.hpp"

#include "calc/mapping.hpp"
#include "codegen/kokkos.hpp"
#include "mapper/mapper.hpp"
#include "runtime/runtime_support.hpp"
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "mapper/mapper_support.hpp"
#include "unit/support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace saguaro::test {
namespace {

::testing::Environment* const kSuiteCache = ::testing::AddGlobalTestEnvironment(new SuiteCache);

namespace kokkos = runtime::kokkos;
using runtime::ArrayBox;
using runtime::ArraySpace;
using ::testing::HasSubstr;

// Kokkos Serial and OpenMP evaluate the printed expressions as the interpreter does, to rounding
// (the compiler may contract multiply-adds); a GPU's Kokkos as well.
constexpr double kTolerance = 1e-12;

#define SAGUARO_REQUIRE_KOKKOS()                                                                   \
  do {                                                                                             \
    std::string why;                                                                               \
    if (!kokkos::available(&why)) GTEST_SKIP() << why;                                             \
  } while (0)

// What `saguaro` says for Saguaro::backend = "kokkos" where it cannot be used: the registry's
// words and the reason, which in a build without Kokkos says how to get it.
TEST(KokkosBackend, SaysWhyItCannotBeUsedAndHowToGetIt) {
  const runtime::BackendEntry* entry = runtime::find_backend("kokkos");
  ASSERT_NE(entry, nullptr);
  EXPECT_FALSE(entry->automatic) << "\"auto\" keeps choosing between cuda and cpu";
  const runtime::BackendChoice refused =
      runtime::choose_backend("kokkos", [](const runtime::BackendEntry&, std::string& why) {
        why = kokkos::kNotBuilt;
        return false;
      });
  EXPECT_EQ(refused.error, std::string("Kokkos cannot be used: ") + kokkos::kNotBuilt);
  EXPECT_THAT(refused.error, HasSubstr("apt-get install libtrilinos-kokkos-dev"));
  EXPECT_THAT(refused.error, HasSubstr("-DKokkos_ROOT="));

  // This build, as the host asks it.
  std::string why;
  const bool usable = entry->available(&why);
  if (kokkos::built_with_kokkos()) {
    EXPECT_TRUE(usable) << why;
    EXPECT_THAT(kokkos::describe(), ::testing::StartsWith("Kokkos "));
  } else {
    EXPECT_FALSE(usable);
    EXPECT_EQ(why, kokkos::kNotBuilt);
    EXPECT_THROW(runtime::make_backend("kokkos", {}), std::runtime_error);
  }
}

TEST(KokkosBackend, DescribesItself) {
  SAGUARO_REQUIRE_KOKKOS();
  auto backend = runtime::make_backend("kokkos", suite_options());
  const runtime::BackendDescription d = backend->description();
  EXPECT_EQ(d.name, "kokkos");
  EXPECT_TRUE(d.takes_mappings);
  EXPECT_FALSE(d.mapped_by_model);
  EXPECT_EQ(d.array_space, "kokkos");
  EXPECT_EQ(d.hardware,
            backend->space().on_device() ? runtime::Hardware::gpu : runtime::Hardware::host);
  EXPECT_EQ(d.device_detail, kokkos::describe());
  // scripts/test.sh builds Kokkos with OpenMP and says so here, so that CI cannot silently test
  // another execution space (or one thread) instead.
  if (const char* space = std::getenv("SAGUARO_KOKKOS_EXPECT_SPACE")) {
    EXPECT_THAT(d.device_detail, HasSubstr(std::string(", ") + space));
    const char* threads = std::getenv("OMP_NUM_THREADS");
    if (threads != nullptr && std::string(space) == "OpenMP")
      EXPECT_THAT(d.device_detail,
                  HasSubstr(std::string("(") + threads +
                            (std::string(threads) == "1" ? " thread)" : " threads)")));
  }
}

const char* const kParFiles[] = {"par/wave.edl",      "par/maxwell.edl",
                                 "par/advect.edl",    "par/microbench.edl",
                                 "par/bssn/bssn.edl", "par/wavetoy/wavetoyx.edl"};

// Every calculation of every EDL file of par/, default mapping, fd_order 4 and (not BSSN: one
// compile of it costs most of this test) 8.
TEST(KokkosBackend, EveryParCalculationMatchesTheInterpreter) {
  SAGUARO_REQUIRE_KOKKOS();
  auto backend = runtime::make_backend("kokkos", suite_options());
  for (const char* file : kParFiles)
    for (int order : {4, 8}) {
      if (order == 8 && std::strstr(file, "bssn") != nullptr) continue;
      SCOPED_TRACE(std::string(file) + " at fd_order " + std::to_string(order));
      check_backend_against_interpreter(lower_file(file, order), {}, *backend, kTolerance);
    }
}

// The mapper's mappings (its choice and a runner-up, on the H100 description: the first of three
// that passes temporaries among six, else the first), which split stages into kernels passing
// temporaries, and block configurations along y and z.
TEST(KokkosBackend, MapperMappingsMatchTheInterpreter) {
  SAGUARO_REQUIRE_KOKKOS();
  auto backend = runtime::make_backend("kokkos", suite_options());
  int split = 0;
  for (const char* file : kParFiles) {
    SCOPED_TRACE(file);
    const calc::Program program = lower_file(file);
    mapper::MapperOptions o;
    o.grid = {48, 40, 36};
    o.runners_up = 6;
    std::vector<std::vector<calc::Mapping>> per_calc;
    for (const calc::Calculation& c : program.calculations) {
      const mapper::MapResult r = mapper::map_calculation(c, device("h100"), o);
      per_calc.push_back({r.best.mapping});
      for (const auto& m : r.runners_up)
        if (!calc::temporary_arrays(m.mapping).empty()) {
          per_calc.back().push_back(m.mapping);
          break;
        }
      if (per_calc.back().size() == 1 && !r.runners_up.empty())
        per_calc.back().push_back(r.runners_up.front().mapping);
    }
    // BSSN's one compile costs most of the test: its chosen mapping only.
    const std::size_t runs = std::strstr(file, "bssn") != nullptr ? 1 : 2;
    for (std::size_t j = 0; j < runs; ++j) {
      std::vector<calc::Mapping> mappings;
      for (std::size_t c = 0; c < per_calc.size(); ++c) {
        mappings.push_back(per_calc[c][std::min(j, per_calc[c].size() - 1)]);
        if (!calc::temporary_arrays(mappings.back()).empty()) ++split;
      }
      check_backend_against_interpreter(program, mappings, *backend, kTolerance);
    }
  }
  EXPECT_GT(split, 0) << "no mapping passed values through temporaries";
}

// Other block configurations of the default partition: tiles t_x along x, t_f along the f axis
// and 1 along the iteration axis, odd sizes.
TEST(KokkosBackend, OtherBlockConfigurationsMatchTheInterpreter) {
  const calc::Program program = lower_file("par/maxwell.edl");
  const std::pair<const char*, const char*> blocks[] = {{"y 16x4x3", "{16, 1, 4}"},
                                                        {"z 7x5x2", "{7, 5, 1}"}};
  for (const auto& [block, tile] : blocks) {
    std::vector<calc::Mapping> mappings;
    for (const calc::Calculation& c : program.calculations)
      mappings.push_back(calc::strategy_mapping(c, "u", calc::parse_block_config(block)));
    EXPECT_THAT(codegen::generate_kokkos(program, mappings), HasSubstr(tile)) << block;
  }
  SAGUARO_REQUIRE_KOKKOS();
  auto backend = runtime::make_backend("kokkos", suite_options());
  for (const auto& [block, tile] : blocks) {
    SCOPED_TRACE(block);
    std::vector<calc::Mapping> mappings;
    for (const calc::Calculation& c : program.calculations)
      mappings.push_back(calc::strategy_mapping(c, "u", calc::parse_block_config(block)));
    check_backend_against_interpreter(program, mappings, *backend, kTolerance);
  }
}

} // namespace
} // namespace saguaro::test
