// The CPU backend under mappings: it must run exactly a mapping's kernel partition (stores
// split across kernels, temporaries passed through scratch arrays to later kernels of the
// same stage), so that a mapper's partition can be checked without a GPU. Every example
// calculation under four partitions is compared with the interpreter backend (which ignores
// mappings) to 1e-13 relative. (Not bit for bit with the default partition: the host compiler
// contracts a multiplication and an addition into an FMA where the product has one use, and a
// split changes which products have one use.)
#include <algorithm>
#include <array>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "calc/mapping.hpp"
#include "codegen/cpp.hpp"
#include "runtime/backends.hpp"
#include "runtime_support.hpp"
// unit/support.hpp names the saguaro executable, which this suite does not build or run.
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "unit/support.hpp"

namespace saguaro::test {
namespace {

constexpr double kTolerance = 1e-13;
constexpr std::size_t kMaxTemporaries = 3; // per stage

enum class Partition {
  Default,             // one kernel per stage
  PerStore,            // one kernel per store
  Temporaries,         // per stage: a kernel storing the first store and shared values as
                       // temporaries, then one kernel storing the rest
  PerStoreTemporaries, // one kernel per store, the first also storing shared values
};

const char* partition_name(Partition p) {
  switch (p) {
  case Partition::Default: return "Default";
  case Partition::PerStore: return "PerStore";
  case Partition::Temporaries: return "Temporaries";
  case Partition::PerStoreTemporaries: return "PerStoreTemporaries";
  }
  return "?";
}

// Nodes of stage `s` worth passing through a temporary, best first: non-uniform arithmetic
// nodes used by more than one of its stores (a Laplacian, a derivative), then those used by
// one store, then the stores' values themselves; larger expressions first in each group.
std::vector<calc::NodeId> temporary_candidates(const calc::Calculation& c, int s) {
  const calc::Dag& dag = c.dag;
  const calc::Stage& stage = c.stages[s];
  std::vector<int> uses(dag.size(), 0);
  std::vector<char> stored(dag.size(), 0);
  for (const calc::Store& st : stage.stores) {
    stored[st.value] = 1;
    for (calc::NodeId id : dag.reachable({st.value})) ++uses[id];
  }
  std::vector<calc::NodeId> out;
  std::vector<std::pair<int, std::size_t>> rank(dag.size()); // (group, nodes reachable)
  for (calc::NodeId id = 0; id < dag.size(); ++id) {
    const calc::Node& n = dag.node(id);
    if (uses[id] == 0 || n.uniform || n.op == calc::Op::Load || n.op == calc::Op::Constant)
      continue;
    out.push_back(id);
    rank[id] = {uses[id] > 1 ? 0 : stored[id] ? 2 : 1, dag.reachable({id}).size()};
  }
  std::stable_sort(out.begin(), out.end(), [&rank](calc::NodeId a, calc::NodeId b) {
    if (rank[a].first != rank[b].first) return rank[a].first < rank[b].first;
    return rank[a].second != rank[b].second ? rank[a].second > rank[b].second : a > b;
  });
  return out;
}

// The partition `p` of `c` (block configurations and buffering stay default: the CPU ignores
// them).
calc::Mapping partition(const calc::Calculation& c, Partition p) {
  if (p == Partition::Default) return calc::default_mapping(c);
  const bool split = p == Partition::PerStore || p == Partition::PerStoreTemporaries;
  const bool temporaries = p == Partition::Temporaries || p == Partition::PerStoreTemporaries;
  calc::Mapping m;
  std::vector<std::size_t> first_of_stage; // the kernel that stores the stage's temporaries
  for (std::size_t s = 0; s < c.stages.size(); ++s) {
    const int stores = int(c.stages[s].stores.size());
    first_of_stage.push_back(m.kernels.size());
    auto add = [&m, s](std::vector<int> kernel_stores) {
      calc::KernelMapping k;
      k.stage = int(s);
      k.stores = std::move(kernel_stores);
      m.kernels.push_back(std::move(k));
    };
    // With temporaries, a stage of one store gets a first kernel that stores temporaries only.
    if (temporaries && stores == 1) add({});
    for (int st = 0; st < stores; ++st) {
      if (split || st <= 1)
        add({st});
      else
        m.kernels.back().stores.push_back(st);
    }
  }
  if (temporaries) {
    for (std::size_t s = 0; s < c.stages.size(); ++s) {
      calc::KernelMapping& first = m.kernels[first_of_stage[s]];
      // Keep a candidate only where the mapping stays valid: a later kernel must use it (not
      // only through another temporary).
      for (calc::NodeId id : temporary_candidates(c, int(s))) {
        if (first.temporaries.size() == kMaxTemporaries) break;
        first.temporaries.push_back(id);
        try {
          calc::plan_kernels(c, m);
        } catch (const calc::MappingError&) {
          first.temporaries.pop_back();
        }
      }
    }
    // A first kernel that found nothing to store goes.
    std::erase_if(m.kernels, [](const calc::KernelMapping& k) {
      return k.stores.empty() && k.temporaries.empty();
    });
  }
  return m;
}

std::vector<calc::Mapping> partitions(const calc::Program& program, Partition p) {
  std::vector<calc::Mapping> out;
  for (const calc::Calculation& c : program.calculations) out.push_back(partition(c, p));
  return out;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Case {
  std::string file;
  Partition partition;
  bool streamed = false; // every calculation's stores streaming (non-temporal) stores
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.file << " under " << partition_name(c.partition) << (c.streamed ? ", streamed" : "");
}

class CpuUnderMapping : public ::testing::TestWithParam<Case> {};

// Every calculation of the example under the partition: the same results as the interpreter
// (to 1e-13) at the points each stage writes, nothing else changed, with default and perturbed
// parameters. Streamed, also on rows of several chunks and a part of one (kRowChunk is 128),
// there bit for bit the plain stores' results (the interpreter's differ by rounding beyond the
// tolerance on rows that long).
TEST_P(CpuUnderMapping, MatchesTheInterpreter) {
  const calc::Program program = lower_file(GetParam().file);
  const std::vector<calc::Mapping> mappings = partitions(program, GetParam().partition);
  const std::vector<bool> streamed(program.calculations.size(), GetParam().streamed);
  std::size_t kernels = 0, stages = 0, stores = 0, temporaries = 0, outputs = 0;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    ASSERT_NO_THROW(calc::plan_kernels(program.calculations[c], mappings[c]))
        << program.calculations[c].name;
    kernels += mappings[c].kernels.size();
    stages += program.calculations[c].stages.size();
    for (const calc::Stage& stage : program.calculations[c].stages) stores += stage.stores.size();
    temporaries += calc::temporary_arrays(mappings[c]).size();
    for (const calc::KernelMapping& k : mappings[c].kernels)
      outputs += k.stores.size() + k.temporaries.size();
  }
  // The partition is what it says: the comparison below would pass whatever was run.
  const std::string source = codegen::generate_cpp(program, mappings, streamed);
  EXPECT_EQ(count_of(source, "#pragma omp for collapse(2)"), kernels);
  // Streamed: every output of every kernel written out by the streaming copy, and every kernel's
  // streaming stores fenced before its barrier (the helpers' definitions count one each).
  EXPECT_EQ(count_of(source, "saguaro_stream_row("), GetParam().streamed ? outputs + 1 : 0);
  EXPECT_EQ(count_of(source, "saguaro_stream_fence();"), GetParam().streamed ? kernels : 0);
  EXPECT_EQ(count_of(source, "schedule(static) nowait"), GetParam().streamed ? kernels : 0);
  EXPECT_EQ(count_of(source, "    // Kernel "), kernels);
  EXPECT_EQ(count_of(source, "= args->temporaries["), temporaries);
  switch (GetParam().partition) {
  case Partition::Default:
    EXPECT_EQ(kernels, stages);
    EXPECT_EQ(source, codegen::generate_cpp(program, {}, streamed));
    break;
  case Partition::PerStore:
    EXPECT_EQ(kernels, stores);
    EXPECT_EQ(temporaries, 0u);
    break;
  case Partition::Temporaries:
  case Partition::PerStoreTemporaries:
    EXPECT_GT(kernels, stages);
    EXPECT_GT(temporaries, 0u) << "no value found to pass through a temporary";
    EXPECT_GT(count_of(source, ", reads temporaries t"), 0u);
    break;
  }

  auto reference = runtime::make_backend("interpreter", {})->compile(program);
  runtime::BackendOptions options = suite_options();
  if (GetParam().streamed) options.streaming_stores = runtime::StreamingStores::always;
  runtime::CpuBackend cpu(options);
  EXPECT_EQ(cpu.streamed(program, mappings), streamed);
  auto mapped = cpu.compile(program, mappings);
  ASSERT_EQ(mapped.size(), program.calculations.size());
  std::vector<std::array<int, 3>> interiors{{12, 10, 9}};
  std::vector<std::unique_ptr<runtime::CompiledCalculation>> plain;
  if (GetParam().streamed) {
    interiors.push_back({300, 3, 2});
    plain = runtime::CpuBackend(suite_options()).compile(program, mappings);
  }
  for (std::size_t ci = 0; ci < program.calculations.size(); ++ci) {
    const calc::Calculation& c = program.calculations[ci];
    for (bool perturbed : {false, true})
      for (const std::array<int, 3>& interior : interiors) {
        SCOPED_TRACE(c.name + " (" + calc::to_string(c, mappings[ci]) + ")" +
                     (perturbed ? ", perturbed parameters" : ", default parameters") + ", " +
                     std::to_string(interior[0]) + " points a row");
        Patch initial = make_patch(c, runtime::required_margin(c), interior);
        initial.args.parameters = parameter_values(program, perturbed);
        Patch expected = clone(initial), actual = clone(initial);
        const bool long_rows = interior[0] > 128;
        (long_rows ? plain : reference)[ci]->run(expected.args);
        mapped[ci]->run(actual.args);
        Agreement r = compare(c, initial, expected, actual, long_rows ? 0.0 : kTolerance);
        EXPECT_GT(r.written, 0);
        EXPECT_EQ(r.mismatches, 0) << r.first_problem;
        EXPECT_EQ(r.not_written, 0) << r.first_problem;
        EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
        std::printf("[ info ] %-14s %-9s %zu kernels, %zu temporaries: max relative difference "
                    "%.3g\n",
                    c.name.c_str(), perturbed ? "perturbed" : "defaults",
                    mappings[ci].kernels.size(), calc::temporary_arrays(mappings[ci]).size(),
                    r.max_relative);
      }
  }
  // Still one timing per calculation, whatever its kernels.
  EXPECT_EQ(cpu.kernel_timings().size(), program.calculations.size());
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* file : {"par/wave.edl", "par/maxwell.edl", "par/advect.edl",
                           "par/microbench.edl", "test/codegen/edl/split.edl"})
    for (Partition p : {Partition::Default, Partition::PerStore, Partition::Temporaries,
                        Partition::PerStoreTemporaries}) {
      out.push_back({file, p});
      if (p == Partition::Default || p == Partition::PerStoreTemporaries)
        out.push_back({file, p, true});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Examples, CpuUnderMapping, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.file;
                           name = name.substr(name.rfind('/') + 1);
                           name = name.substr(0, name.find('.'));
                           return name + "_" + partition_name(info.param.partition) +
                                  (info.param.streamed ? "_Streamed" : "");
                         });

// A calculation of several stages (the derivative of an expression) whose stages are split
// and pass values through temporaries: the scratch arrays follow the patch's size from run to
// run (made again when it changes, reused while it does not).
TEST(CpuUnderMappingOn, PatchesOfChangingSize) {
  const calc::Program program = lower_text(R"(
begin thorn Stages
  begin variables
    a b c r1 r2 r3
  end variables
  begin calculation stages
    r1 = D_1 (a b) + D_2 (a**2) + D_11 a
    r2 = D_1 (a b) - D_22 a + sin(D_2 (a**2))
    r3 = D_1 (a b) * c + D_11 a
  end calculation
end thorn
)");
  const calc::Calculation& c = program.calculations[0];
  ASSERT_GE(c.stages.size(), 2u) << "the derivative of an expression makes an intermediate";
  const calc::Mapping m = partition(c, Partition::PerStoreTemporaries);
  // The last stage's temporaries are derivatives that more than one of its stores use.
  const calc::Stage& last = c.stages.back();
  const calc::KernelMapping& first =
      *std::find_if(m.kernels.begin(), m.kernels.end(), [&c](const calc::KernelMapping& k) {
        return k.stage == int(c.stages.size()) - 1;
      });
  ASSERT_FALSE(first.temporaries.empty());
  for (calc::NodeId t : first.temporaries) {
    int users = 0;
    for (const calc::Store& st : last.stores) {
      const std::vector<calc::NodeId> used = c.dag.reachable({st.value});
      users += std::binary_search(used.begin(), used.end(), t) ? 1 : 0;
    }
    EXPECT_GT(users, 1) << "temporary node " << t;
  }
  auto reference = runtime::make_backend("interpreter", {})->compile(program);
  auto mapped = runtime::make_backend("cpu", suite_options())->compile(program, {m});
  const runtime::Margin margin = runtime::required_margin(c);
  for (std::array<int, 3> interior : {std::array<int, 3>{12, 10, 9}, std::array<int, 3>{20, 7, 11},
                                      std::array<int, 3>{20, 7, 11}, std::array<int, 3>{5, 6, 4}}) {
    SCOPED_TRACE(std::to_string(interior[0]) + "x" + std::to_string(interior[1]) + "x" +
                 std::to_string(interior[2]));
    Patch initial = make_patch(c, margin, interior);
    Patch expected = clone(initial), actual = clone(initial);
    reference[0]->run(expected.args);
    mapped[0]->run(actual.args);
    Agreement r = compare(c, initial, expected, actual, kTolerance);
    EXPECT_GT(r.written, 0);
    EXPECT_EQ(r.mismatches, 0) << r.first_problem;
    EXPECT_EQ(r.not_written, 0) << r.first_problem;
    EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
  }
}

// The CPU ignores what only a GPU uses (block configurations, buffering strategies): under
// the default partition with any of them the source, and so the compiled object, is the
// default's. A different partition is a different object.
TEST(CpuUnderMappingOn, BlocksAndBufferingDoNotChangeTheCode) {
  const calc::Program program = lower_file("par/wave.edl");
  std::vector<calc::Mapping> gpu;
  for (const calc::Calculation& c : program.calculations)
    gpu.push_back(calc::mixed_mapping(c, calc::parse_block_config("y 16x4x2")));
  EXPECT_EQ(codegen::generate_cpp(program, gpu), codegen::generate_cpp(program));
  runtime::CpuBackend cpu(suite_options());
  EXPECT_EQ(cpu.object_path(program, gpu), cpu.object_path(program));
  EXPECT_NE(cpu.object_path(program, partitions(program, Partition::PerStore)),
            cpu.object_path(program));
}

TEST(CpuUnderMappingOn, MappingsThatDoNotFitAreRejected) {
  const calc::Program program = lower_file("par/wave.edl");
  runtime::CpuBackend cpu(suite_options());
  EXPECT_THROW(cpu.compile(program, {calc::default_mapping(program.calculations[0])}),
               calc::MappingError); // one mapping for two calculations
  std::vector<calc::Mapping> m = partitions(program, Partition::Default);
  m[1].kernels[0].stores.pop_back();
  try {
    cpu.compile(program, m);
    FAIL() << "expected calc::MappingError";
  } catch (const calc::MappingError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no kernel stores"));
  }
  EXPECT_EQ(cpu.compiler_runs(), 0);
}

} // namespace
} // namespace saguaro::test
