// The mapper's partitions are correct: every mapping it returns (the chosen one and the
// runners-up, from move proposals and ILP covers), run by the CPU backend, which executes
// exactly a mapping's kernel partition, equals the interpreter (the reference) to 1e-13
// relative, for the examples (wave, Maxwell, advection, the micro-benchmark, a multi-stage
// calculation) and random calculations with several outputs, on
// the K20xm and H100 descriptions.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calc/mapping.hpp"
#include "mapper/mapper.hpp"
#include "runtime/backends.hpp"
#include "runtime_support.hpp"
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "unit/support.hpp"
#include "mapper/mapper_support.hpp"

namespace saguaro::test {
namespace {

// Runs every mapping in `per_calc[c]` of every calculation and compares with the interpreter.
// Returns how many mappings had more kernels than stages (a real partition).
int with_temporaries = 0; // mappings checked that pass values through temporaries

int check_program(const calc::Program& program,
                  const std::vector<std::vector<calc::Mapping>>& per_calc) {
  auto reference = runtime::make_backend("interpreter", {})->compile(program);
  int split = 0;
  std::size_t most = 0;
  for (const auto& list : per_calc) most = std::max(most, list.size());
  runtime::CpuBackend cpu(suite_options());
  for (std::size_t j = 0; j < most; ++j) {
    std::vector<calc::Mapping> mappings;
    for (std::size_t c = 0; c < program.calculations.size(); ++c)
      mappings.push_back(j < per_calc[c].size() ? per_calc[c][j] : per_calc[c].front());
    auto mapped = cpu.compile(program, mappings);
    for (std::size_t c = 0; c < program.calculations.size(); ++c) {
      if (j >= per_calc[c].size()) continue;
      const calc::Calculation& calc = program.calculations[c];
      if (mappings[c].kernels.size() > calc.stages.size()) ++split;
      if (!calc::temporary_arrays(mappings[c]).empty()) ++with_temporaries;
      SCOPED_TRACE(calc.name + " under " + calc::to_string(calc, mappings[c]));
      Patch initial = make_patch(calc, runtime::required_margin(calc));
      initial.args.parameters = parameter_values(program, true);
      Patch expected = clone(initial), actual = clone(initial);
      reference[c]->run(expected.args);
      mapped[c]->run(actual.args);
      Agreement r = compare(calc, initial, expected, actual, 1e-13);
      EXPECT_GT(r.written, 0);
      EXPECT_EQ(r.mismatches, 0) << r.first_problem;
      EXPECT_EQ(r.not_written, 0) << r.first_problem;
      EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
    }
  }
  return split;
}

std::vector<std::vector<calc::Mapping>> mapper_mappings(const calc::Program& program,
                                                        const model::Device& device) {
  std::vector<std::vector<calc::Mapping>> out;
  mapper::MapperOptions o;
  o.grid = {48, 40, 36};
  o.runners_up = 8;
  for (const calc::Calculation& c : program.calculations) {
    const mapper::MapResult r = mapper::map_calculation(c, device, o);
    std::vector<calc::Mapping> list{r.best.mapping};
    for (const auto& m : r.runners_up) list.push_back(m.mapping);
    out.push_back(std::move(list));
  }
  return out;
}

} // namespace

TEST(MapperMappings, ExamplesEqualTheInterpreter) {
  int split = 0;
  for (const char* file : {"par/wave.edl", "par/maxwell.edl", "par/advect.edl",
                           "par/microbench.edl", "test/codegen/edl/split.edl"})
    for (const char* dev : {"k20xm", "h100"}) {
      const calc::Program program = lower_file(file);
      split += check_program(program, mapper_mappings(program, device(dev)));
    }
  std::printf("[ info ] %d of the mappings checked split a stage into several kernels, %d pass "
              "values through temporaries\n",
              split, with_temporaries);
  EXPECT_GT(split, 0) << "no partition was exercised";
}

TEST(MapperMappings, RandomCalculationsEqualTheInterpreter) {
  std::mt19937 rng(5);
  int split = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const calc::Program program = lower_text(random_edl(rng, 3 + trial % 5, 2 + trial % 3));
    split += check_program(program, mapper_mappings(program, device(trial % 2 ? "h100" : "k20xm")));
  }
  EXPECT_GT(split, 0) << "no partition was exercised";
}

} // namespace saguaro::test
