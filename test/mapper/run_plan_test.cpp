// The run plan (mapper/run_plan.hpp) without MPI or a runtime: a fake broadcast (the root's bytes
// recorded, or replaced by another rank's view) and a fake timer decide what a run would.
#include "mapper/run_plan.hpp"

#include "calc/fold.hpp"

#include "mapper/mapping_file.hpp"
#include "mapper_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace saguaro::mapper {
namespace {

using ::testing::HasSubstr;

const calc::Program& wave() {
  static const calc::Program program = test::lower_file("par/wave.edl", 4);
  return program;
}

std::vector<calc::Mapping> defaults(const calc::Program& p) {
  std::vector<calc::Mapping> out;
  for (const calc::Calculation& c : p.calculations)
    out.push_back(calc::strategy_mapping(c, "u", calc::BlockConfig{}));
  return out;
}

// Records what passes through, as MPI_Bcast at one rank would.
struct FakeBroadcast {
  std::vector<std::string> seen;
  Broadcast fn() {
    return [this](std::string& s) { seen.push_back(s); };
  }
};

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("saguaro-run-plan-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(RunPlan, DefaultTakesTheSettingsMappingsAndBroadcastsNothing) {
  MappingRequest r;
  r.defaults = defaults(wave());
  FakeBroadcast b;
  const RunPlan plan = plan_mappings(wave(), r, b.fn());
  EXPECT_TRUE(b.seen.empty());
  ASSERT_EQ(plan.calculations.size(), wave().calculations.size());
  EXPECT_EQ(plan.mappings(), r.defaults);
  for (const auto& c : plan.candidates()) EXPECT_TRUE(c.empty());
  EXPECT_TRUE(plan.log.empty());
  EXPECT_EQ(plan.calculations[1].name, "wave_rhs");
}

TEST(RunPlan, FixedTakesTheFilesMappingsAndSaysHowMany) {
  MappingRequest r;
  r.method = "fixed";
  r.defaults = defaults(wave());
  r.fixed.assign(wave().calculations.size(), std::nullopt);
  calc::Mapping m = calc::default_mapping(wave().calculations[1]);
  m.kernels[0].block.tx = 64;
  r.fixed[1] = m;
  r.fixed_path = "wave.mappings";
  FakeBroadcast b;
  const RunPlan plan = plan_mappings(wave(), r, b.fn());
  EXPECT_EQ(plan.calculations[1].mapping, m);
  EXPECT_EQ(plan.calculations[0].mapping, r.defaults[0]);
  ASSERT_EQ(plan.log.size(), 1u);
  EXPECT_EQ(plan.log[0], "mapper: fixed, 1 of 3 calculation(s) from wave.mappings");
}

TEST(RunPlan, ModelOnABackendTheModelDoesNotMapRunsTheDefaultPartition) {
  MappingRequest r;
  r.method = "model";
  r.defaults = defaults(wave());
  r.mapped_by_model = false;
  FakeBroadcast b;
  const RunPlan plan = plan_mappings(wave(), r, b.fn());
  EXPECT_TRUE(b.seen.empty());
  for (std::size_t i = 0; i < plan.calculations.size(); ++i)
    EXPECT_EQ(plan.calculations[i].mapping, calc::default_mapping(wave().calculations[i]));
}

// Rank 0's request for the model's mappings of par/wave.edl on the H100's description, 64^3.
MappingRequest model_request() {
  MappingRequest r;
  r.method = "model";
  r.defaults = defaults(wave());
  r.mapped_by_model = true;
  r.device = test::device("h100");
  r.device_origin = "from h100.yaml";
  r.grid = {64, 64, 64};
  return r;
}

TEST(RunPlan, TheRootMapsAndEveryRankTakesItsChoiceWithTheCandidates) {
  MappingRequest r = model_request();
  r.verify = 3;
  r.cache_dir = temp_dir("root");
  FakeBroadcast root;
  const RunPlan plan = plan_mappings(wave(), r, root.fn());
  ASSERT_EQ(root.seen.size(), 2u); // the error (none), then the mapping files
  EXPECT_EQ(root.seen[0], "");
  EXPECT_FALSE(root.seen[1].empty());
  ASSERT_FALSE(plan.log.empty());
  EXPECT_EQ(plan.log[0],
            "mapper: model on " + r.device->name + " (from h100.yaml), 64x64x64 points per patch");
  const CalculationPlan& rhs = plan.calculations[1];
  ASSERT_GE(rhs.candidates.size(), 3u);
  // 3 of the model's, the default, one thread per point and the same at full occupancy (8/SM),
  // two with register queues and four with sums by input
  EXPECT_LE(rhs.candidates.size(), 12u);
  EXPECT_EQ(rhs.candidates[0], rhs.mapping); // the mapper's choice first
  const calc::Calculation& c = wave().calculations[1];
  auto has = [&](const calc::Mapping& m) {
    return std::find(rhs.candidates.begin(), rhs.candidates.end(), m) != rhs.candidates.end();
  };
  EXPECT_TRUE(has(r.defaults[1]));
  EXPECT_TRUE(has(calc::one_thread_per_point(c)));

  // Another rank searches nothing and takes the root's bytes.
  MappingRequest other = r;
  other.root = false;
  other.device.reset();
  std::size_t call = 0;
  const RunPlan taken = plan_mappings(wave(), other, [&](std::string& s) {
    EXPECT_TRUE(s.empty()); // nothing of its own
    s = root.seen[call++];
  });
  EXPECT_EQ(call, 2u);
  EXPECT_EQ(taken.mappings(), plan.mappings());
  EXPECT_EQ(taken.candidates(), plan.candidates());
  EXPECT_TRUE(taken.log.empty()); // the banner is the root's
}

TEST(RunPlan, TheRootsFailureIsEveryRanksError) {
  MappingRequest r;
  r.method = "model";
  r.defaults = defaults(wave());
  r.mapped_by_model = true;
  r.root = false;
  EXPECT_THROW(plan_mappings(wave(), r,
                             [](std::string& s) {
                               if (s.empty()) s = "the root's search failed";
                             }),
               calc::MappingError);
}

TEST(RunPlan, NoDescriptionOfTheGpuMeansDefaultMappingsAndALine) {
  MappingRequest r;
  r.method = "model";
  r.defaults = defaults(wave());
  r.mapped_by_model = true;
  r.device_name = "Some GPU nobody described";
  FakeBroadcast b;
  const RunPlan plan = plan_mappings(wave(), r, b.fn());
  EXPECT_EQ(plan.mappings(), r.defaults);
  ASSERT_EQ(plan.log.size(), 1u);
  EXPECT_THAT(plan.log[0], HasSubstr("no device description in configs/devices/ is for Some GPU"));
}

// Gives `rhs` two candidates, its mapping and the same with 64-thread rows (returned), and
// `timer` a timer that records which calculations it times and finds the second faster (2 ms
// against 1).
calc::Mapping second_is_faster(CalculationPlan& rhs, std::vector<std::size_t>& timed,
                               TimeCandidates& timer) {
  calc::Mapping faster = rhs.mapping;
  faster.kernels[0].block.tx = 64;
  rhs.candidates = {rhs.mapping, faster};
  timer = [&timed](std::size_t i, const std::vector<calc::Mapping>& list) {
    timed.push_back(i);
    EXPECT_EQ(list.size(), 2u);
    return std::vector<double>{2e-3, 1e-3};
  };
  return faster;
}

TEST(RunPlan, VerificationKeepsTheFastestCandidate) {
  RunPlan plan;
  for (const calc::Calculation& c : wave().calculations)
    plan.calculations.push_back({c.name, calc::default_mapping(c)});
  CalculationPlan& rhs = plan.calculations[1];
  std::vector<std::size_t> timed;
  TimeCandidates timer;
  const calc::Mapping faster = second_is_faster(rhs, timed, timer);
  const std::vector<std::string> lines = verify_candidates(wave(), timer, plan);
  EXPECT_EQ(timed, std::vector<std::size_t>{1}); // only where there is a choice
  EXPECT_EQ(rhs.mapping, faster);
  EXPECT_EQ(rhs.kept, 1u);
  EXPECT_EQ(rhs.candidate_seconds, (std::vector<double>{2e-3, 1e-3}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "mapper_verify: wave_rhs: 2.000 ms model's pick, 1.000 ms; kept " +
                          calc::to_string(wave().calculations[1], faster));
  EXPECT_EQ(plan.log.back(), lines[0]);
  // Timed in another form (a folded right-hand side's), the line names it.
  RunPlan again = plan;
  again.calculations[1].mapping = again.calculations[1].candidates[0];
  const std::vector<std::string> folded = verify_candidates(
      wave(), timer, again, [](std::size_t i) { return i == 1 ? "wave_rhs (stages 2, 3)" : ""; });
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_THAT(folded[0], testing::StartsWith("mapper_verify: wave_rhs, timed as wave_rhs "
                                             "(stages 2, 3): 2.000 ms model's pick, 1.000 ms"));
  EXPECT_THAT(to_string(wave(), plan), HasSubstr("candidate 1: "));
  EXPECT_THAT(to_string(wave(), plan), HasSubstr("1.000 ms (kept)"));

  // Re-priced with the compiler's resources before the timing: the line says which candidate
  // the model then picks and how it measured; priced before the timing (which releases the
  // candidates' kernels), not after.
  RunPlan priced = plan;
  priced.calculations[1].mapping = priced.calculations[1].candidates[0];
  bool timed_yet = false;
  TimeCandidates timing = [&](std::size_t i, const std::vector<calc::Mapping>& list) {
    timed_yet = true;
    return timer(i, list);
  };
  const std::vector<std::string> with_ptxas = verify_candidates(
      wave(), timing, priced, {}, [&](std::size_t, const std::vector<calc::Mapping>& list) {
        EXPECT_FALSE(timed_yet);
        std::vector<double> out(list.size(), 5e-3);
        out[1] = 1.5e-3;
        return out;
      });
  ASSERT_EQ(with_ptxas.size(), 1u);
  EXPECT_THAT(with_ptxas[0], HasSubstr("; with ptxas's registers the model picks candidate 1 "
                                       "(predicted 1.500 ms, measured 1.000 ms: 1.00 of the "
                                       "fastest)"));
  EXPECT_EQ(priced.calculations[1].priced_pick, 1u);
  // Nothing the compiler reported (NaN everywhere): no such words.
  RunPlan unknown = plan;
  unknown.calculations[1].mapping = unknown.calculations[1].candidates[0];
  const std::vector<std::string> no_price = verify_candidates(
      wave(), timer, unknown, {}, [](std::size_t, const std::vector<calc::Mapping>& list) {
        return std::vector<double>(list.size(), std::nan(""));
      });
  EXPECT_THAT(no_price[0], testing::Not(HasSubstr("ptxas")));
  EXPECT_TRUE(unknown.calculations[1].candidate_priced.empty());
}

// wave() with wave_rhs's pirhs folded into a stage combination (as schedule::fold_step does).
calc::Program wave_with_a_folded_form() {
  calc::Program p = wave();
  const std::size_t plain = 1;
  const calc::Calculation rhs = p.calculations[plain];
  calc::FoldedStore fold;
  fold.replaced = "pirhs";
  const int c0 = int(p.parameters.size());
  fold.targets = {{"pi_acc", {{c0, "pi_acc"}, {c0 + 1, ""}}}};
  p.calculations.push_back(calc::fold_stores(rhs, {fold}, "wave_rhs (stage 2)"));
  p.folded_forms[p.calculations.size() - 1] =
      calc::folded_form(plain, rhs, p.calculations.back(), {fold});
  p.parameters.resize(p.parameters.size() + 2);
  return p;
}

// Timed in a folded form whose stores do not allow sums by input (a term of u's right-hand side
// reads v and w), the candidates with them would be timed as other kernels than their label
// says, and one folds to the kernels of another: both are left out; where the folded form
// allows them (the wave equation's) they stay.
TEST(RunPlan, CandidatesAlikeWhenFoldedAreTimedOnce) {
  calc::Program p = test::lower_file("test/codegen/edl/two_inputs.edl");
  const calc::Calculation rhs = p.calculations.at(0);
  calc::FoldedStore fold;
  fold.replaced = "urhs";
  const int c0 = int(p.parameters.size());
  fold.targets = {{"u_y1", {{c0, "u_y0"}, {c0 + 1, ""}}}};
  p.calculations.push_back(calc::fold_stores(rhs, {fold}, "rhs (stage 2)"));
  p.folded_forms[1] = calc::folded_form(0, rhs, p.calculations.back(), {fold});
  p.parameters.resize(p.parameters.size() + 2);
  const calc::Mapping plain = calc::buffered_mapping(rhs, calc::Buffering::Unbuffered, {});
  calc::Mapping summed = plain;
  summed.kernels[0].block.sums_by_input = true;
  ASSERT_NO_THROW(calc::plan_kernels(rhs, summed));
  calc::Mapping other = plain, summed_other = summed;
  other.kernels[0].block.tee = 4;
  summed_other.kernels[0].block.tee = 2;
  RunPlan plan;
  plan.calculations.push_back({rhs.name, plain});
  plan.calculations.push_back({"rhs (stage 2)", plain});
  plan.calculations[0].candidates = {plain, summed, other, summed_other, other};
  drop_candidates_changed_by_folding(p, 0, 1, plan);
  EXPECT_EQ(plan.calculations[0].candidates, (std::vector<calc::Mapping>{plain, other}));
  // The model's pick itself with sums by input the folding drops: the next candidate becomes the
  // choice, and the folded form takes its kernels.
  RunPlan picked;
  picked.calculations.push_back({rhs.name, summed});
  picked.calculations.push_back({"rhs (stage 2)", summed});
  picked.calculations[0].candidates = {summed, other, plain};
  drop_candidates_changed_by_folding(p, 0, 1, picked);
  EXPECT_EQ(picked.calculations[0].candidates, (std::vector<calc::Mapping>{other, plain}));
  EXPECT_EQ(picked.calculations[0].mapping, other);
  EXPECT_EQ(picked.calculations[1].mapping,
            calc::fold_mapping(p.folded_forms.at(1), rhs, p.calculations.at(1), other));

  const calc::Program wave = wave_with_a_folded_form();
  const calc::Calculation& wave_rhs = wave.calculations[1];
  RunPlan waves;
  for (const calc::Calculation& c : wave.calculations) waves.calculations.push_back({c.name, {}});
  const calc::Mapping q = calc::buffered_mapping(wave_rhs, calc::Buffering::Queue, {});
  const calc::Mapping q_summed = calc::buffered_mapping(
      wave_rhs, calc::Buffering::Queue, calc::parse_block_config("z 32x8x8 by-input"));
  waves.calculations[1].candidates = {q, q_summed};
  drop_candidates_changed_by_folding(wave, 1, wave.calculations.size() - 1, waves);
  EXPECT_EQ(waves.calculations[1].candidates.size(), 2u);
}

TEST(RunPlan, AFoldedFormFollowsItsPlainFormThroughTheFinish) {
  const calc::Program program = wave_with_a_folded_form();
  const std::size_t folded = program.calculations.size() - 1;
  const calc::FoldedForm& form = program.folded_forms.at(folded);
  const calc::Calculation& rhs = program.calculations[1];
  MappingRequest r;
  r.defaults = defaults(program);
  FakeBroadcast b;
  RunPlan plan = plan_mappings(program, r, b.fn());
  EXPECT_EQ(
      plan.calculations[folded].mapping,
      calc::fold_mapping(form, rhs, program.calculations[folded], plan.calculations[1].mapping));

  std::vector<std::size_t> timed;
  TimeCandidates timer;
  const calc::Mapping faster = second_is_faster(plan.calculations[1], timed, timer);
  verify_candidates(program, timer, plan);
  EXPECT_EQ(timed, std::vector<std::size_t>{1}); // the folded form is not timed
  const calc::Mapping& kept = plan.calculations[1].mapping;
  EXPECT_EQ(kept, faster);
  EXPECT_EQ(plan.calculations[folded].mapping,
            calc::fold_mapping(form, rhs, program.calculations[folded], kept));
  EXPECT_EQ(plan.calculations[folded].mapping.kernels[0].block, kept.kernels[0].block);
  EXPECT_NO_THROW(
      calc::plan_kernels(program.calculations[folded], plan.calculations[folded].mapping));
}

TEST(RunPlan, FinishCandidatesHoldAnotherStructureTheDefaultAndOnePerPoint) {
  const calc::Calculation& c = wave().calculations[1];
  MapperOptions options;
  options.grid = {64, 64, 64};
  options.runners_up = 8;
  const MapResult r = map_calculation(c, test::device("h100"), options);
  const calc::Mapping def = calc::default_mapping(c);
  const std::vector<calc::Mapping> list = finish_candidates(c, r, def, 4);
  ASSERT_GE(list.size(), 3u);
  EXPECT_EQ(list[0], r.best.mapping);
  EXPECT_EQ(std::count(list.begin(), list.end(), def), 1);
  EXPECT_EQ(std::count(list.begin(), list.end(), calc::one_thread_per_point(c)), 1);
  for (std::size_t a = 0; a < list.size(); ++a) // no duplicates
    for (std::size_t b = a + 1; b < list.size(); ++b) EXPECT_FALSE(list[a] == list[b]);
  // The second is the first runner-up of another partition where there is one.
  for (const PricedMapping& p : r.runners_up)
    if (p.mapping.kernels.size() != r.best.mapping.kernels.size()) {
      EXPECT_EQ(list[1], p.mapping);
      break;
    }
  EXPECT_EQ(calc::one_thread_per_point(c).kernels[0].block, (calc::BlockConfig{2, 32, 8, 1}));
  // verify = 1: the model's pick and the two fixed ones only.
  EXPECT_LE(finish_candidates(c, r, def, 1).size(), 3u);
}

// The candidate the model picks with the compiler's resources: the lowest number, never NaN
// (not priced) or +inf (invalid); none of them: the list's size.
TEST(RunPlan, TheCheapestPriceIsANumber) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cheapest_price({nan, 3e-3, 2e-3, inf, 2.5e-3}), 2u);
  EXPECT_EQ(cheapest_price({1e-3, nan, 1e-3}), 0u); // ties: the first
  EXPECT_EQ(cheapest_price({nan, inf}), 2u);
  EXPECT_EQ(cheapest_price({}), 0u);
}

// The 8th-order wave's finish on an H200 (us): two candidates within 1% in stage 1's form, apart
// over the step's four forms; a third, 10% slower in stage 1, scaled like the fastest of the two.
TEST(StepWeightedTimes, CloseCandidatesCountTheWholeStep) {
  const std::vector<double> timed = {175e-6, 174e-6, 192e-6};
  const std::vector<double> weighted = step_weighted_times(
      timed, {0, 1}, {(175 + 310 + 214 + 226) * 1e-6, (174 + 320 + 239 + 234) * 1e-6}, 4);
  ASSERT_EQ(weighted.size(), 3u);
  EXPECT_DOUBLE_EQ(weighted[0], 925e-6 / 4);
  EXPECT_DOUBLE_EQ(weighted[1], 967e-6 / 4);
  EXPECT_LT(weighted[0], weighted[1]); // the step's order, not stage 1's
  // The third: its stage-1 time times candidate 1's ratio (the close one fastest in stage 1).
  EXPECT_DOUBLE_EQ(weighted[2], 192e-6 * (967e-6 / 4 / 174e-6));
  // Fewer than two close candidates, or no step: the timed form's times.
  EXPECT_EQ(step_weighted_times(timed, {1}, {967e-6}, 4), timed);
  EXPECT_EQ(step_weighted_times(timed, {0, 1}, {925e-6}, 4), timed);
}

TEST(RunPlan, AVerdictIsCachedAndTheNextRunTimesNothing) {
  MappingRequest r = model_request();
  r.device_name = "NVIDIA H100 80GB HBM3";
  r.verify = 4;
  r.mapping_cache = true;
  r.cache_dir = temp_dir("verdict");
  FakeBroadcast b;
  RunPlan first = plan_mappings(wave(), r, b.fn());
  ASSERT_TRUE(first.verdicts.has_value());
  const std::vector<calc::Mapping> list = first.calculations[1].candidates;
  ASSERT_GE(list.size(), 3u);
  // The fake timer makes the last candidate the fastest.
  int timed = 0;
  auto time = [&](std::size_t, const std::vector<calc::Mapping>& candidates) {
    ++timed;
    std::vector<double> s;
    for (std::size_t j = 0; j < candidates.size(); ++j)
      s.push_back(1e-3 * double(candidates.size() - j));
    return s;
  };
  verify_candidates(wave(), time, first);
  EXPECT_GE(timed, 1);
  EXPECT_EQ(first.calculations[1].mapping, list.back());

  // The second run: the verdict from the cache, one candidate, nothing to time.
  FakeBroadcast b2;
  RunPlan second = plan_mappings(wave(), r, b2.fn());
  EXPECT_EQ(second.calculations[1].mapping, list.back());
  EXPECT_LE(second.calculations[1].candidates.size(), 1u);
  timed = 0;
  EXPECT_TRUE(verify_candidates(wave(), time, second).empty());
  EXPECT_EQ(timed, 0);
  bool said = false;
  for (const std::string& line : second.log)
    said = said ||
           line.find("empirical finish's verdict, from the mapping cache") != std::string::npos;
  EXPECT_TRUE(said);

  // Another patch size is another verdict: timed again.
  r.grid = {64, 64, 48};
  FakeBroadcast b3;
  const RunPlan third = plan_mappings(wave(), r, b3.fn());
  EXPECT_GE(third.calculations[1].candidates.size(), 3u);
}

ExchangeRequest exchange(const calc::Program& p) {
  ExchangeRequest x;
  x.evolved = 2;
  x.phase_bytes = {1.5e6};
  x.transport = "host-staged MPI";
  x.shell_faces[2] = {true, true};
  x.owned = {{2, 2, 2}, {34, 34, 34}};
  x.grid = {32, 32, 32};
  for (const calc::Calculation& c : p.calculations) x.splittable.push_back(c.name == "wave_rhs");
  return x;
}

TEST(RunPlan, LaunchesSplitWithoutAnInterconnectDescription) {
  RunPlan plan;
  for (const calc::Calculation& c : wave().calculations) plan.calculations.push_back({c.name, {}});
  FakeBroadcast b;
  plan_launches(wave(), exchange(wave()), b.fn(), plan);
  ASSERT_EQ(b.seen.size(), 1u);
  EXPECT_EQ(b.seen[0], "1"); // one decision, the right-hand side's
  EXPECT_TRUE(plan.calculations[1].split);
  EXPECT_FALSE(plan.calculations[0].split);
  EXPECT_TRUE(plan.any_split());
  EXPECT_FALSE(plan.calculations[1].regions.interior.empty());
  EXPECT_TRUE(std::isnan(plan.exchange_predicted));
  EXPECT_EQ(plan.exchange_words,
            "2 evolved variables, 1 phase of 2 messages (1.5 MB), host-staged MPI");
  EXPECT_THAT(plan.log, ::testing::ElementsAre(
                            HasSubstr("; no interconnect description to predict it"),
                            "wave_rhs: split (no interconnect description to price the exchange)"));
}

TEST(RunPlan, LaunchesFollowTheRootAndTheSettings) {
  RunPlan plan;
  for (const calc::Calculation& c : wave().calculations) plan.calculations.push_back({c.name, {}});
  // The root decided whole: this rank follows, whatever its own prices.
  plan_launches(
      wave(), exchange(wave()), [](std::string& s) { s = "0"; }, plan);
  EXPECT_FALSE(plan.calculations[1].split);
  EXPECT_FALSE(plan.any_split());

  RunPlan off;
  for (const calc::Calculation& c : wave().calculations) off.calculations.push_back({c.name, {}});
  ExchangeRequest x = exchange(wave());
  x.overlap = "no";
  FakeBroadcast b;
  plan_launches(wave(), x, b.fn(), off);
  EXPECT_FALSE(off.any_split());
  EXPECT_EQ(b.seen, std::vector<std::string>{""});
}

TEST(RunPlan, AnInterconnectDescriptionPricesTheExchange) {
  RunPlan plan;
  for (const calc::Calculation& c : wave().calculations) plan.calculations.push_back({c.name, {}});
  ExchangeRequest x = exchange(wave());
  x.device = test::device("h200");
  FakeBroadcast b;
  plan_launches(wave(), x, b.fn(), plan);
  EXPECT_GT(plan.exchange_predicted, 0);
  EXPECT_THAT(plan.log[0], HasSubstr("; predicted "));
  EXPECT_FALSE(plan.calculations[1].launch_reason.empty());
  EXPECT_EQ(b.seen[0], plan.calculations[1].split ? "1" : "0");
}

} // namespace
} // namespace saguaro::mapper
