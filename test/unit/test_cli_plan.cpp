// `saguaro inspect --plan`, `saguaro map --plan` and --buffering's choices and help, which
// come from the list of strategies.
#include "support.hpp"

#include "calc/strategy.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace saguaro::test {
namespace {

std::string wave() {
  return "\"" + source_dir() + "/par/wave.edl\"";
}

TEST(CliPlan, InspectPrintsTheKernelPlansAsText) {
  const CliRun r = run_saguaro("inspect " + wave() + " --plan --buffering b");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("calculation wave_rhs: k0[s0 z 32x8x8 phi:b]"), std::string::npos) << r.out;
  // phi at fourth order: +-2 along every axis, so its tile is (32+4) x (8+4) x (8+4).
  EXPECT_NE(r.out.find("shared tile phi: 36 x 12 x 12 (x, y, z)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shared memory: 41472 bytes per block, barriers"), std::string::npos)
      << r.out;
}

TEST(CliPlan, InspectPrintsTheKernelPlansAsJson) {
  const CliRun r = run_saguaro("inspect " + wave() + " --plan --buffering p --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  const nlohmann::json& rhs = j.at(1);
  EXPECT_EQ(rhs.at("calculation"), "wave_rhs");
  const nlohmann::json& k = rhs.at("kernels").at(0);
  EXPECT_EQ(k.at("block"), "z 32x8x8");
  EXPECT_EQ(k.at("shared_planes").size(), 1u);
  EXPECT_EQ(k.at("register_pipelines").at(0).at("lo"), -2);
  int plane_loads = 0, register_loads = 0;
  for (const auto& in : k.at("inputs"))
    for (const auto& l : in.at("loads")) {
      plane_loads += l.at("buffer") == "shared plane";
      register_loads += l.at("buffer") == "register";
    }
  EXPECT_EQ(plane_loads, 8);
  EXPECT_EQ(register_loads, 5);
  EXPECT_EQ(k.at("shared_bytes"), 36 * 12 * 8);
  EXPECT_TRUE(k.at("sums_by_input").empty());
}

// A block with sums by input: the short form says so, and the right-hand side's plan has a phase
// per input (pi's one term; phi's Laplacian at fourth order: 13 loads and three second
// derivatives, each a sum times 1/h^2, 19 values in 3 terms), the text a line.
TEST(CliPlan, InspectPrintsSumsByInput) {
  const std::string args = " --plan --buffering q --block \"z 32x8x8 4/SM by-input\"";
  const CliRun r = run_saguaro("inspect " + wave() + args + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& k = j.at(1).at("kernels").at(0);
  EXPECT_EQ(k.at("block"), "z 32x8x8 4/SM by-input");
  const nlohmann::json& phases = k.at("sums_by_input");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases.at(0).at("input"), "pi");
  EXPECT_EQ(phases.at(0).at("terms"), 1);
  EXPECT_EQ(phases.at(1).at("input"), "phi");
  EXPECT_EQ(phases.at(1).at("values"), 19);
  EXPECT_EQ(phases.at(1).at("terms"), 3);
  const CliRun text = run_saguaro("inspect " + wave() + args);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("sums by input: 2 sums over 8 points, in phases pi"), std::string::npos)
      << text.out;
}

TEST(CliPlan, BufferingChoicesAndHelpComeFromTheList) {
  const CliRun help = run_saguaro("inspect --help");
  ASSERT_EQ(help.status, 0);
  for (const calc::Strategy* s : calc::strategies()) {
    std::string line(1, s->letter);
    line += "  ";
    line += s->summary;
    EXPECT_NE(help.out.find(line), std::string::npos) << s->name << "\n" << help.out;
  }
  const CliRun bad = run_saguaro("inspect " + wave() + " --plan --buffering x");
  EXPECT_NE(bad.status, 0);
}

TEST(CliPlan, MapPrintsTheChosenMappingsPlans) {
  const CliRun r = run_saguaro("map " + wave() + " --device \"" + source_dir() +
                               "/configs/devices/h100.yaml\" --grid 32 --plan --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const auto& c : j.at("calculations")) {
    const nlohmann::json& chosen = c.at("chosen");
    EXPECT_EQ(chosen.at("plans").size(), chosen.at("kernels").size()) << c.at("name");
  }
}

} // namespace
} // namespace saguaro::test
