// The lowering's pass driver: stopping after each pass leaves the state that pass makes (and
// nothing of the later ones); resuming after `parameters` with another finite-difference order
// gives what one lowering at that order gives; errors come in the order of one whole
// lowering; `saguaro inspect --after PASS` prints the state and rejects an unknown pass.

#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "calc/lowering.hpp"
#include "edl/parser.hpp"
#include "support.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace saguaro;
using namespace saguaro::test;

// Line numbers matter to the expansion test: the equations are on lines 19-21.
const std::string kSmall = "begin thorn Small\n"                       // 1
                           "begin parameters\n"                        // 2
                           "amp : real \"amplitude\", default: 2*PI\n" // 3
                           "end parameters\n"                          // 4
                           "begin variables\n"                         // 5
                           "phi v_i\n"                                 // 6
                           "end variables\n"                           // 7
                           "begin temporaries\n"                       // 8
                           "tmp\n"                                     // 9
                           "end temporaries\n"                         // 10
                           "begin derivatives\n"                       // 11
                           "Dplus u_i = (u_(i+1) - u_(i)) / h\n"       // 12
                           "end derivatives\n"                         // 13
                           "begin group fields\n"                      // 14
                           "phi : \"scalar\"\n"                        // 15
                           "v_i : \"vector\"\n"                        // 16
                           "end group\n"                               // 17
                           "begin calculation evolve\n"                // 18
                           "tmp = amp phi\n"                           // 19
                           "D_t phi = Euc^jk D_j (phi v_k)\n"          // 20
                           "D_t v_i = D_i tmp + Dplus_i phi\n"         // 21
                           "end calculation\n"                         // 22
                           "end thorn\n";                              // 23

calc::LoweringState lowered_through(const edl::Thorn& thorn, const std::string& pass,
                                    int fd_order = 4) {
  calc::LoweringState state = calc::start_lowering(thorn, calc::LowerOptions{fd_order});
  calc::run_lowering(state, pass);
  return state;
}

std::vector<std::string> store_names(const calc::CalculationLowering& work) {
  std::vector<std::string> names;
  for (const auto& [gf, value] : work.stores) names.push_back(work.calc.grid_functions[gf].name);
  return names;
}

TEST(LoweringPasses, ListedInOrderWithNames) {
  std::vector<std::string> names;
  for (const auto& pass : calc::lowering_passes()) names.push_back(pass.name);
  EXPECT_EQ(names, (std::vector<std::string>{"names", "parameters", "indices", "stencils",
                                             "staging", "races"}));
  EXPECT_EQ(calc::find_lowering_pass("stencils"), 3);
  EXPECT_EQ(calc::find_lowering_pass("typo"), -1);
  EXPECT_EQ(calc::lowering_pass_names(), "names, parameters, indices, stencils, staging, races");
}

TEST(LoweringPasses, AfterNamesTheSymbolTableOnly) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  const calc::LoweringState state = lowered_through(thorn, "names");
  EXPECT_EQ(state.passes_run, 1u);
  EXPECT_EQ(state.program.variables, (std::vector<std::string>{"phi", "v1", "v2", "v3"}));
  EXPECT_EQ(state.program.tensors.at("v"), (std::vector<std::string>{"v1", "v2", "v3"}));
  EXPECT_EQ(state.tensors.at("tmp").kind, calc::TensorSymbol::Kind::Temporary);
  EXPECT_EQ(state.component_of.at("v2"), "v");
  EXPECT_TRUE(state.program.parameters.empty());
  EXPECT_TRUE(state.parameter_index.empty());
  EXPECT_TRUE(state.operators.empty());
  EXPECT_TRUE(state.calculations.empty());
}

TEST(LoweringPasses, AfterParametersTheirValues) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  const calc::LoweringState state = lowered_through(thorn, "parameters");
  ASSERT_EQ(state.program.parameters.size(), 1u);
  EXPECT_EQ(state.program.parameters[0].name, "amp");
  EXPECT_DOUBLE_EQ(state.program.parameters[0].default_value, 2 * std::numbers::pi);
  EXPECT_TRUE(state.operators.empty());
  EXPECT_TRUE(state.program.groups.empty());
  EXPECT_TRUE(state.calculations.empty()) << "no calculation is opened before indices";
}

TEST(LoweringPasses, AfterIndicesEquationsExpandedNoDag) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  const calc::LoweringState state = lowered_through(thorn, "indices");
  EXPECT_EQ(state.operators.count("Dplus"), 1u);
  EXPECT_EQ(state.program.groups.at("fields"), (std::vector<std::string>{"phi", "v1", "v2", "v3"}));
  ASSERT_EQ(state.calculations.size(), 1u);
  const calc::CalculationLowering& work = state.calculations[0];
  EXPECT_EQ(work.calc.schedule_bin, "MoL_CalcRHS");
  ASSERT_EQ(work.equations.size(), 3u);

  const calc::ExpandedEquation& temp = work.equations[0];
  EXPECT_TRUE(temp.temporary);
  EXPECT_EQ(temp.equation->loc.line, 19);
  ASSERT_EQ(temp.components.size(), 1u);
  EXPECT_EQ(temp.components[0].name, "tmp");

  const calc::ExpandedEquation& divergence = work.equations[1];
  ASSERT_EQ(divergence.summed.size(), 2u);
  EXPECT_EQ(divergence.summed[0].symbol, "j");
  EXPECT_EQ(divergence.summed[1].symbol, "k");
  ASSERT_EQ(divergence.components.size(), 1u);
  EXPECT_EQ(divergence.components[0].name, "phi");

  const calc::ExpandedEquation& vector = work.equations[2];
  ASSERT_EQ(vector.free.size(), 1u);
  EXPECT_EQ(vector.free[0].symbol, "i");
  ASSERT_EQ(vector.components.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(vector.components[c].name, "v" + std::to_string(c + 1));
    EXPECT_EQ(vector.components[c].env.at("i"), c + 1);
  }
  EXPECT_EQ(work.calc.dag.size(), 0u) << "no values before stencils";
  EXPECT_TRUE(work.stores.empty());
}

TEST(LoweringPasses, AfterStencilsValuesWithoutStages) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  const calc::LoweringState state = lowered_through(thorn, "stencils");
  const calc::CalculationLowering& work = state.calculations.at(0);
  EXPECT_EQ(store_names(work), (std::vector<std::string>{"phirhs", "v1rhs", "v2rhs", "v3rhs"}));
  ASSERT_EQ(work.intermediate_of.size(), 3u) << "D_j (phi v_k) needs phi v_k first, per k";
  EXPECT_GT(work.calc.dag.size(), 0u);
  EXPECT_TRUE(work.calc.stages.empty());
  EXPECT_TRUE(work.calc.inputs.empty()) << "derived fields come with staging";
  EXPECT_EQ(state.evolved_at.size(), 4u);
}

TEST(LoweringPasses, AfterStagingAndRacesTheWholeCalculation) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  const calc::LoweringState staged = lowered_through(thorn, "staging");
  const calc::Calculation& calc = staged.calculations.at(0).calc;
  ASSERT_EQ(calc.stages.size(), 2u);
  EXPECT_EQ(calc.stages[0].extent_lo, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(calc.stages[1].stores.size(), 4u);
  EXPECT_FALSE(calc.inputs.empty());

  const calc::Program whole = calc::lower(thorn);
  ASSERT_EQ(whole.calculations.size(), 1u);
  EXPECT_EQ(whole.calculations[0].node_count, calc.node_count);
  EXPECT_EQ(whole.calculations[0].flops.total(), calc.flops.total());
  EXPECT_EQ(whole.evolved, (std::vector<std::string>{"phi", "v1", "v2", "v3"}));
}

TEST(LoweringPasses, RaceFoundOnlyByTheRacePass) {
  const edl::Thorn thorn = edl::parse_string("begin thorn R\n"
                                             "begin variables\nphi psi\nend variables\n"
                                             "begin calculation c\n"
                                             "phi = psi\n"
                                             "psi = D_1 phi\n"
                                             "end calculation\n"
                                             "end thorn\n");
  calc::LoweringState state = lowered_through(thorn, "staging");
  EXPECT_EQ(state.calculations.at(0).calc.stages.size(), 1u);
  try {
    calc::run_lowering(state, "races");
    FAIL() << "the race is not found";
  } catch (const edl::EdlError& e) {
    EXPECT_NE(e.message().find("grid function 'psi' is written by calculation 'c'"),
              std::string::npos)
        << e.message();
  }
}

TEST(LoweringPasses, ResumedAtAnotherOrderEqualsOneLowering) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  calc::LoweringState state = lowered_through(thorn, "parameters");
  calc::set_fd_order(state, 8);
  const calc::Program resumed = calc::finish_lowering(std::move(state));
  const calc::Program direct = calc::lower(thorn, calc::LowerOptions{8});
  EXPECT_EQ(resumed.fd_order, 8);
  ASSERT_EQ(resumed.calculations.size(), direct.calculations.size());
  const calc::Calculation &a = resumed.calculations[0], &b = direct.calculations[0];
  EXPECT_EQ(a.radius, b.radius);
  EXPECT_EQ(a.radius[0], 4) << "order 8's centered stencil";
  EXPECT_EQ(a.dag.size(), b.dag.size());
  EXPECT_EQ(a.flops.total(), b.flops.total());
  ASSERT_EQ(a.stages.size(), b.stages.size());
  EXPECT_EQ(a.stages[0].extent_lo, b.stages[0].extent_lo);
}

TEST(LoweringPasses, OrderIsFixedOnceStencilsAreBuilt) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  calc::LoweringState state = lowered_through(thorn, "stencils");
  EXPECT_THROW(calc::set_fd_order(state, 2), std::logic_error);
  calc::LoweringState early = lowered_through(thorn, "names");
  EXPECT_THROW(calc::set_fd_order(early, 3), edl::EdlError);
}

TEST(LoweringPasses, UnknownPassIsRejected) {
  const edl::Thorn thorn = edl::parse_string(kSmall);
  calc::LoweringState state = calc::start_lowering(thorn, {});
  EXPECT_THROW(calc::run_lowering(state, "stencil"), std::invalid_argument);
  EXPECT_EQ(state.passes_run, 0u);
}

// The first error is the one a whole lowering finds, however the passes were split: here the
// race in the first calculation comes before the second one's unknown name.
TEST(LoweringPasses, ErrorsInTheOrderOfOneLowering) {
  const edl::Thorn thorn = edl::parse_string("begin thorn R\n"
                                             "begin variables\nphi psi\nend variables\n"
                                             "begin calculation c\n"
                                             "phi = psi\n"
                                             "psi = D_1 phi\n"
                                             "end calculation\n"
                                             "begin calculation d\n"
                                             "phi = nope\n"
                                             "end calculation\n"
                                             "end thorn\n");
  std::string whole, split;
  try {
    calc::lower(thorn);
  } catch (const edl::EdlError& e) {
    whole = e.message();
  }
  try {
    calc::finish_lowering(lowered_through(thorn, "parameters"));
  } catch (const edl::EdlError& e) {
    split = e.message();
  }
  EXPECT_NE(whole.find("is written by calculation 'c'"), std::string::npos) << whole;
  EXPECT_EQ(split, whole);
}

TEST(LoweringPassesCli, InspectAfterPrintsTheState) {
  const std::string wave = "\"" + source_dir() + "/par/wave.edl\"";
  CliRun names = run_saguaro("inspect --after names " + wave);
  EXPECT_EQ(names.status, 0) << names.err;
  EXPECT_NE(names.out.find("after pass 'names' (1 of 6 lowering passes: names)"), std::string::npos)
      << names.out;
  EXPECT_EQ(names.out.find("calculation "), std::string::npos) << names.out;

  CliRun indices = run_saguaro("inspect --after indices " + wave);
  EXPECT_EQ(indices.status, 0) << indices.err;
  EXPECT_NE(indices.out.find("component"), std::string::npos) << indices.out;

  CliRun json = run_saguaro("inspect --after stencils --format json " + wave);
  EXPECT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"after\": \"stencils\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"dag_nodes\""), std::string::npos) << json.out;

  // After the last pass: what `saguaro inspect` prints, under a heading.
  CliRun last = run_saguaro("inspect --after races " + wave);
  CliRun plain = run_saguaro("inspect " + wave);
  EXPECT_EQ(last.status, 0) << last.err;
  const std::string heading =
      "after pass 'races' (6 of 6 lowering passes: names, parameters, indices, stencils, "
      "staging, races)\n"
      "  the race check: a grid function a calculation writes is read by it only at the point "
      "itself\n";
  EXPECT_EQ(last.out, heading + plain.out);
}

TEST(LoweringPassesCli, UnknownPassExitsTwoAndNamesThePasses) {
  CliRun run = run_saguaro("inspect --after stencil \"" + source_dir() + "/par/wave.edl\"");
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("unknown lowering pass 'stencil': expected one of names, parameters, "
                         "indices, stencils, staging, races"),
            std::string::npos)
      << run.err;
  CliRun help = run_saguaro("inspect --help");
  EXPECT_NE(help.out.find("names, parameters, indices, stencils, staging, races"),
            std::string::npos)
      << help.out;
}

} // namespace
