// Schedule ordering (BEFORE/AFTER, ties, cycles), validation, the tree, and the Executor.
#include "support.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

using namespace saguaro::schedule;
using namespace saguaro::schedule::test;
using saguaro::support::InputError;
using ::testing::HasSubstr;

namespace {

Schedule schedule_of(const std::string& text) {
  Schedule s;
  s.add_all(parse(text));
  return s;
}

// ---- ordering ---------------------------------------------------------------------------------

TEST(ScheduleOrder, TiesKeepInsertionOrder) {
  Schedule s = schedule_of("SCHEDULE c AT EVOL {} \"\"\nSCHEDULE a AT EVOL {} \"\"\n"
                           "SCHEDULE b AT EVOL {} \"\"\nSCHEDULE x AT POSTSTEP {} \"\"\n");
  EXPECT_EQ(names(s.ordered("EVOL")), (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_EQ(names(s.ordered("poststep")), (std::vector<std::string>{"x"}));
  EXPECT_TRUE(s.ordered("INITIAL").empty());
}

TEST(ScheduleOrder, BeforeAndAfterChains) {
  // d AFTER c, c AFTER b, a BEFORE (b d): a b c d, although added d c b a.
  Schedule s = schedule_of("SCHEDULE d AT EVOL AFTER c {} \"\"\n"
                           "SCHEDULE c AT EVOL AFTER b {} \"\"\n"
                           "SCHEDULE b AT EVOL {} \"\"\n"
                           "SCHEDULE a AT EVOL BEFORE (b d) {} \"\"\n");
  EXPECT_EQ(names(s.ordered("EVOL")), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ScheduleOrder, EarliestAddedReadyItemFirstAndUnknownNamesIgnored) {
  // Each position takes the earliest-added item whose constraints are met: `first` waits for
  // `last` and `other`, so `mid` (ready) runs first. `nowhere` is ignored.
  Schedule s = schedule_of("SCHEDULE first AT EVOL {} \"\"\nSCHEDULE mid AT EVOL {} \"\"\n"
                           "SCHEDULE last AT EVOL BEFORE first AFTER nowhere {} \"\"\n"
                           "SCHEDULE other AT EVOL BEFORE first {} \"\"\n");
  EXPECT_EQ(names(s.ordered("EVOL")), (std::vector<std::string>{"mid", "last", "other", "first"}));
}

TEST(ScheduleOrder, ConstraintsReachOnlyTheSamePlace) {
  Schedule s = schedule_of("SCHEDULE a AT EVOL AFTER b {} \"\"\nSCHEDULE b AT POSTSTEP {} \"\"\n"
                           "SCHEDULE c AT EVOL {} \"\"\n");
  EXPECT_EQ(names(s.ordered("EVOL")), (std::vector<std::string>{"a", "c"}));
}

TEST(ScheduleOrder, AliasesAndThornQualifiedNames) {
  Schedule s;
  s.add_all(parse("SCHEDULE f AT EVOL AS f_late AFTER B::g {} \"\"\n", "A"));
  s.add_all(parse("SCHEDULE f AT EVOL AS f_early {} \"\"\n"
                  "SCHEDULE g AT EVOL AFTER f_early {} \"\"\n",
                  "B"));
  EXPECT_EQ(names(s.ordered("EVOL")), (std::vector<std::string>{"f", "g", "f"}));
  auto items = s.ordered("EVOL");
  EXPECT_EQ(items[0]->alias, "f_early");
  EXPECT_EQ(items[2]->alias, "f_late");
}

TEST(ScheduleOrder, TwoCycleIsNamed) {
  Schedule s = schedule_of("SCHEDULE a AT EVOL BEFORE b {} \"\"\n"
                           "SCHEDULE b AT EVOL BEFORE a {} \"\"\nSCHEDULE c AT EVOL {} \"\"\n");
  InputError e = error_of([&] { s.ordered("EVOL"); });
  EXPECT_THAT(e.message(), HasSubstr("a -> b -> a"));
  EXPECT_THAT(e.message(), HasSubstr("the bin EVOL"));
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_EQ(e.loc().column, 10);
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.notes()[0].loc.line, 2);
  EXPECT_THROW(s.validate(), InputError);
}

TEST(ScheduleOrder, ThreeCycleInAGroupIsNamedInRunningOrder) {
  Schedule s = schedule_of("SCHEDULE GROUP G AT EVOL {} \"\"\n"
                           "SCHEDULE x IN G {} \"\"\n"
                           "SCHEDULE a IN G AFTER c {} \"\"\n"
                           "SCHEDULE b IN G AFTER a {} \"\"\n"
                           "SCHEDULE c IN G AFTER b {} \"\"\n");
  InputError e = error_of([&] { s.ordered("G"); });
  EXPECT_THAT(e.message(), HasSubstr("in 'G' form a cycle: a -> b -> c -> a"));
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_THROW(s.validate(), InputError);
}

TEST(ScheduleOrder, SelfReferenceIsACycle) {
  Schedule s = schedule_of("SCHEDULE a AT EVOL AFTER a {} \"\"\n");
  EXPECT_THAT(error_of([&] { s.ordered("EVOL"); }).message(), HasSubstr("a -> a"));
}

// ---- adding and validating --------------------------------------------------------------------

TEST(ScheduleAdd, SameNameTwiceInOnePlaceIsAnError) {
  Schedule s = schedule_of("SCHEDULE f AT EVOL {} \"\"\nSCHEDULE f AT POSTSTEP {} \"\"\n");
  InputError e = error_of([&] { s.add_all(parse("\n\nSCHEDULE F AT CCTK_EVOL {} \"again\"\n")); });
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_THAT(e.message(), HasSubstr("'F' is scheduled twice in the bin EVOL"));
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.notes()[0].message, "first scheduled here");
  EXPECT_EQ(e.notes()[0].loc.line, 1);
  // Under different aliases the same function may run twice in one place.
  EXPECT_NO_THROW(s.add_all(parse("SCHEDULE f AT EVOL AS f_again {} \"\"\n")));
}

TEST(ScheduleAdd, GroupAndFunctionMayNotShareAName) {
  Schedule s = schedule_of("SCHEDULE GROUP g AT EVOL {} \"\"\n");
  EXPECT_THAT(error_of([&] { s.add_all(parse("SCHEDULE g AT INITIAL {} \"\"\n")); }).message(),
              HasSubstr("both as a group and as a function"));
}

TEST(ScheduleAdd, ProgrammaticItemsAreNormalised) {
  Schedule s;
  ScheduleItem item;
  item.name = "calc";
  item.where = "cctk_analysis";
  s.add(item);
  EXPECT_EQ(s.items().back().where, "ANALYSIS");
  item.name = "other";
  item.where = "analysys";
  InputError e = error_of([&] { s.add(item); });
  EXPECT_THAT(notes_of(e), HasSubstr("did you mean 'ANALYSIS'?"));
}

TEST(ScheduleValidate, UnknownInTargetSuggestsTheNearest) {
  Schedule s = schedule_of("SCHEDULE GROUP MoL_CalcRHS AT EVOL {} \"\"\n"
                           "SCHEDULE rhs IN MoL_CalcRHZ {} \"\"\n");
  InputError e = error_of([&] { s.validate(); });
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_THAT(e.message(), HasSubstr("'rhs' is scheduled IN 'MoL_CalcRHZ'"));
  EXPECT_THAT(notes_of(e), HasSubstr("did you mean 'MoL_CalcRHS'?"));

  Schedule bin = schedule_of("SCHEDULE f IN analysis {} \"\"\n");
  EXPECT_THAT(notes_of(error_of([&] { bin.validate(); })), HasSubstr("schedule AT ANALYSIS"));
}

TEST(ScheduleValidate, GroupsInFunctionsAndNestedGroupsAreFine) {
  Schedule s = schedule_of("SCHEDULE evolve AT EVOL {} \"\"\n"
                           "SCHEDULE GROUP rhs IN evolve {} \"\"\n"
                           "SCHEDULE GROUP inner IN rhs {} \"\"\n"
                           "SCHEDULE f IN inner {} \"\"\n");
  EXPECT_NO_THROW(s.validate());
}

TEST(ScheduleValidate, GroupInsideItselfIsAnError) {
  Schedule s = schedule_of("SCHEDULE GROUP A AT EVOL {} \"\"\nSCHEDULE GROUP B IN A {} \"\"\n"
                           "SCHEDULE GROUP A IN B {} \"\"\n");
  InputError e = error_of([&] { s.validate(); });
  EXPECT_THAT(e.message(), HasSubstr("scheduled inside itself"));
  EXPECT_THAT(e.message(), HasSubstr("B IN A IN B"));
  // The tree stops rather than recursing forever.
  EXPECT_THAT(s.tree(), HasSubstr("not expanded"));
}

// ---- the tree ---------------------------------------------------------------------------------

TEST(ScheduleTree, ExactFormat) {
  Schedule s;
  s.add_all(parse("SCHEDULE setup AT CCTK_BASEGRID {} \"Set up\"\n"
                  "SCHEDULE evolve AT EVOL {} \"Advance one step\"\n"
                  "SCHEDULE GROUP rhs IN evolve {} \"Right-hand sides\"\n"
                  "SCHEDULE GROUP post IN evolve AFTER rhs {} \"After each substep\"\n"
                  "SCHEDULE sync IN post {} \"Ghost exchange\"\n"
                  "SCHEDULE GROUP analysis_group AT ANALYSIS {} \"Analysis\"\n"
                  "SCHEDULE norms IN analysis_group AS norms2 {} \"Norms\"\n",
                  "Host"));
  s.add_all(parse("SCHEDULE calc IN rhs {} \"The calculation\"\n", "Wave"));
  EXPECT_EQ(s.tree(), "[CCTK_BASEGRID]\n"
                      "  Host::setup: Set up\n"
                      "[CCTK_EVOL]\n"
                      "  Host::evolve: Advance one step\n"
                      "    GROUP Host::rhs: Right-hand sides\n"
                      "      Wave::calc: The calculation\n"
                      "    GROUP Host::post: After each substep\n"
                      "      Host::sync: Ghost exchange\n"
                      "[CCTK_ANALYSIS]\n"
                      "  GROUP Host::analysis_group: Analysis\n"
                      "    Host::norms AS norms2: Norms\n");
}

// ---- the executor -----------------------------------------------------------------------------

TEST(Executor, RunsFunctionsInOrderAndRecursesIntoGroups) {
  Schedule s = schedule_of("SCHEDULE b AT EVOL AFTER a {} \"\"\n"
                           "SCHEDULE GROUP g AT EVOL {} \"\"\n"
                           "SCHEDULE a AT EVOL {} \"\"\n"
                           "SCHEDULE g2 IN g AFTER g1 {} \"\"\n"
                           "SCHEDULE GROUP inner IN g {} \"\"\n"
                           "SCHEDULE g1 IN g {} \"\"\n"
                           "SCHEDULE deep IN inner {} \"\"\n"
                           "SCHEDULE other AT POSTSTEP {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  std::vector<std::string> calls;
  for (std::string name : {"a", "b", "g1", "g2", "deep", "other"})
    ex.bind(name, [&calls, name] { calls.push_back(name); });
  EXPECT_TRUE(ex.unbound().empty());
  ex.run("EVOL");
  // EVOL: g (added first among the ready), a, b;  g: inner (deep), g1, g2.
  EXPECT_EQ(calls, (std::vector<std::string>{"deep", "g1", "g2", "a", "b"}));
  calls.clear();
  ex.run("g");
  EXPECT_EQ(calls, (std::vector<std::string>{"deep", "g1", "g2"}));
  EXPECT_EQ(timers.table().at("T::a").first, 1);
  EXPECT_EQ(timers.table().at("T::deep").first, 2);
  EXPECT_EQ(timers.table().count("T::other"), 0u);
  EXPECT_THROW(ex.run("no_such_place"), std::logic_error);
}

TEST(Executor, GroupsInAFunctionRunOnlyWhenItRunsThem) {
  Schedule s = Schedule::with_builtin_components();
  ScheduleItem rhs;
  rhs.name = "wave_rhs";
  rhs.thorn = "Wave";
  rhs.at = false;
  rhs.where = "MoL_CalcRHS";
  rhs.before = {"Boundary_RHS"}; // added after the built-ins: it must say so
  s.add(rhs);
  s.validate();

  Timers timers;
  Executor ex(s, timers);
  std::vector<std::string> calls;
  auto record = [&](const std::string& name) {
    ex.bind(name, [&calls, name] { calls.push_back(name); });
  };
  for (const ScheduleItem& item : s.items())
    if (!item.is_group && item.name != "MoL_Evolution") record(item.name);
  // A 2-substep integrator: each substep runs MoL_CalcRHS, updates, runs MoL_PostStep.
  ex.bind("MoL_Evolution", [&] {
    for (int substep = 0; substep < 2; ++substep) {
      ex.run("MoL_CalcRHS");
      calls.push_back("update");
      ex.run("MoL_PostStep");
    }
  });
  EXPECT_TRUE(ex.unbound().empty());

  ex.run("EVOL");
  const std::vector<std::string> substep = {"wave_rhs", "Boundary_RHS", "update",
                                            "Driver_SyncEvolved", "Boundary_ApplyOuter"};
  std::vector<std::string> expected = substep;
  expected.insert(expected.end(), substep.begin(), substep.end());
  EXPECT_EQ(calls, expected);

  calls.clear();
  ex.run("CCTK_ANALYSIS");
  EXPECT_EQ(calls,
            (std::vector<std::string>{"IOScalar_OutputNorms", "IOHDF5_Output", "IO_Checkpoint"}));
  EXPECT_EQ(timers.table().at("MoL::MoL_Evolution").first, 1);
  EXPECT_EQ(timers.table().at("Wave::wave_rhs").first, 2);
  EXPECT_EQ(timers.table().at("Driver::Boundary_ApplyOuter").first, 2);
}

TEST(Executor, TimesAreSelfTimes) {
  Schedule s = schedule_of("SCHEDULE outer AT EVOL {} \"\"\nSCHEDULE GROUP g IN outer {} \"\"\n"
                           "SCHEDULE slow IN g {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  ex.bind("outer", [&] { ex.run("g"); });
  ex.bind("slow", [] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
  ex.run("EVOL");
  double outer = timers.table().at("T::outer").second;
  double slow = timers.table().at("T::slow").second;
  EXPECT_GE(slow, 0.029);
  EXPECT_LT(outer, slow / 2);
}

TEST(Executor, UnboundFunctionsAreListedAndRefused) {
  Schedule s = schedule_of("SCHEDULE f AT EVOL {} \"\"\nSCHEDULE GROUP g AT EVOL {} \"\"\n"
                           "SCHEDULE h IN g {} \"\"\nSCHEDULE f AT POSTSTEP {} \"\"\n"
                           "SCHEDULE k AT POSTSTEP AS k2 {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  EXPECT_EQ(ex.unbound(), (std::vector<std::string>{"f", "h", "k"}));
  ex.bind("F", [] {});  // names ignore case
  ex.bind("k2", [] {}); // an alias binds too
  EXPECT_EQ(ex.unbound(), (std::vector<std::string>{"h"}));
  try {
    ex.run("EVOL");
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("'T::h'"));
  }
  EXPECT_THROW(ex.bind("x", nullptr), std::invalid_argument);
}

// run() works out a bin's order and functions once (Executor::steps_of) and again when a
// function is bound or the schedule grows: a later binding and a later item are run.
TEST(Executor, ABindingOrAnItemAddedLaterIsRun) {
  Schedule s = schedule_of("SCHEDULE f AT EVOL {} \"\"\nSCHEDULE g AT EVOL AFTER f {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  std::string ran;
  ex.bind("f", [&] { ran += "f"; });
  ex.bind("g", [&] { ran += "g"; });
  ex.run("EVOL");
  ex.bind("g", [&] { ran += "G"; });
  ex.run("EVOL");
  s.add_all(parse("SCHEDULE e AT EVOL BEFORE f {} \"\"\n"));
  ex.bind("e", [&] { ran += "e"; });
  ex.run("EVOL");
  s.add_all(parse("SCHEDULE d AT EVOL BEFORE e {} \"\"\n")); // grown, not bound: refused
  EXPECT_THROW(ex.run("EVOL"), std::logic_error);
  EXPECT_EQ(ran, "fgfGefG");
  EXPECT_EQ(timers.table().at("T::g").first, 3);
}

TEST(Executor, ConditionalItemsAreRefused) {
  Schedule s = schedule_of("SCHEDULE f AT EVOL IF flag {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  ex.bind("f", [] {});
  EXPECT_THROW(ex.run("EVOL"), std::logic_error);
}

TEST(Executor, AnExceptionLeavesTheExecutorUsable) {
  Schedule s = schedule_of("SCHEDULE outer AT EVOL {} \"\"\nSCHEDULE GROUP g IN outer {} \"\"\n"
                           "SCHEDULE bad IN g {} \"\"\nSCHEDULE ok AT POSTSTEP {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  bool fail = true;
  ex.bind("outer", [&] { ex.run("g"); });
  ex.bind("bad", [&] {
    if (fail) throw std::runtime_error("boom");
  });
  ex.bind("ok", [] {});
  EXPECT_THROW(ex.run("EVOL"), std::runtime_error);
  fail = false;
  ex.run("EVOL");
  ex.run("POSTSTEP");
  EXPECT_EQ(timers.table().at("T::outer").first, 1);
  EXPECT_EQ(timers.table().at("T::ok").first, 1);
}

} // namespace

namespace {

// A device space whose compute queue's clock the test sets: each mark() reads `now`.
class ScriptedDevice final : public saguaro::runtime::ArraySpace {
public:
  double now = 0;
  std::vector<double> at;
  const char* name() const override { return "scripted"; }
  bool on_device() const override { return true; }
  double* allocate(std::size_t) override { return nullptr; }
  void release(double*) override {}
  void to_host(double*, const double*, std::size_t) override {}
  void from_host(double*, const double*, std::size_t) override {}
  void synchronize() override {}
  void linear_combination(double*, std::span<const Term>, std::size_t) override {}
  void pack(const std::vector<const double*>&, const saguaro::runtime::ArrayBox&,
            double*) override {}
  void unpack(const std::vector<double*>&, const saguaro::runtime::ArrayBox&,
              const double*) override {}
  void wrap_ghosts(const std::vector<double*>&, const std::array<int, 3>&, int, int,
                   const std::array<bool, 3>&) override {}
  saguaro::runtime::BoxSums reduce(const double*, const saguaro::runtime::ArrayBox&) override {
    return {};
  }
  void apply_flat(const saguaro::runtime::OuterFaces&, double*) override {}
  void apply_static_rhs(const saguaro::runtime::OuterFaces&, double*) override {}
  void apply_radiative_rhs(const saguaro::runtime::OuterFaces&, const double*, double*, double,
                           double) override {}
  int mark(Queue) override {
    at.push_back(now);
    return int(at.size()) - 1;
  }
  double seconds(int from, int to) override {
    return at.at(std::size_t(to)) - at.at(std::size_t(from));
  }
  void clear_marks() override { at.clear(); }
};

} // namespace

namespace {

// `outer` (1.0 s on the device, then the group `inner` with `work`, then 0.5 s) timed on a
// scripted device; `work` takes `work_seconds`.
struct NestedOnDevice {
  Schedule s = schedule_of("SCHEDULE outer AT EVOL {} \"\"\nSCHEDULE GROUP inner IN outer {} \"\"\n"
                           "SCHEDULE work IN inner {} \"\"\n");
  Timers timers;
  Executor ex{s, timers};
  ScriptedDevice device;
  double work_seconds = 3.0;
  NestedOnDevice() {
    ex.time_device(&device);
    ex.bind("work", [this] { device.now += work_seconds; });
    ex.bind("outer", [this] {
      device.now += 1.0;
      ex.run("inner");
      device.now += 0.5;
    });
  }
};

} // namespace

// On a device the Executor books each function's time on the compute queue too, nested
// functions taken out (as the host times are), and the report shows both columns.
TEST(Executor, DeviceTimesBesideHostTimes) {
  NestedOnDevice run;
  Timers& timers = run.timers;
  run.ex.run("EVOL");
  run.ex.run("EVOL");
  run.ex.resolve_device_times();
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::work"), 6.0);
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::outer"), 3.0);
  const std::string report = timers.report();
  EXPECT_THAT(report, HasSubstr("device [s]"));
  EXPECT_THAT(report, HasSubstr("T::work           2      6.000000     66.7"));
  EXPECT_THAT(report, HasSubstr("T::outer          2      3.000000     33.3"));
  // Nothing pending is booked twice.
  run.ex.resolve_device_times();
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::work"), 6.0);
}

// A run reads a step's device times while the next step is queued (Simulation::retire_steps):
// resolve_device_times(before) books the functions whose marks all came before mark `before`,
// callees with their callers, and keeps the later ones pending until a later call.
TEST(Executor, DeviceTimesOfAnEarlierStepAloneWhileTheNextIsInFlight) {
  NestedOnDevice run;
  Timers& timers = run.timers;
  run.ex.run("EVOL"); // step 1: work 3, outer 1.5
  const int second = run.device.mark(saguaro::runtime::ArraySpace::Queue::compute);
  run.work_seconds = 10.0;
  run.ex.run("EVOL"); // step 2: work 10, outer 1.5
  run.ex.resolve_device_times(second);
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::work"), 3.0); // step 1's alone
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::outer"), 1.5);
  run.ex.resolve_device_times();
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::work"), 13.0);
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::outer"), 3.0);
}

// Steps run unsampled record no marks; the functions' times in the sampled steps are scaled by
// the measured time of all steps over that of the sampled ones (Timers::add_step), so that the
// steps' functions add up to the steps, and the report says how many steps were measured.
TEST(Executor, UnsampledStepsAreScaledFromTheSampledOnes) {
  Schedule s = schedule_of("SCHEDULE work AT EVOL {} \"\"\nSCHEDULE other AT INITIAL {} \"\"\n");
  Timers timers;
  Executor ex(s, timers);
  ScriptedDevice device;
  ex.time_device(&device);
  ex.bind("work", [&] { device.now += 2.0; });
  ex.bind("other", [&] { device.now += 5.0; });
  ex.run("INITIAL"); // outside the steps: timed as it runs
  using Timing = Executor::DeviceTiming;
  ex.device_timing(Timing::sampled_step);
  ex.run("EVOL");
  timers.add_step(2.5, true); // the sampled step, slowed down by its marks
  const std::size_t marks = device.at.size();
  ex.device_timing(Timing::unsampled_step);
  for (int step = 0; step < 3; ++step) {
    ex.run("EVOL");
    timers.add_step(1.5, false);
  }
  EXPECT_EQ(device.at.size(), marks); // no marks in unsampled steps
  ex.device_timing(Timing::always);
  ex.resolve_device_times();
  // 2.0 of the sampled step's 2.5 s, scaled to the 7.0 s of all four steps.
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::work"), 2.0 * 7.0 / 2.5);
  EXPECT_DOUBLE_EQ(timers.device_table().at("T::other"), 5.0);
  EXPECT_EQ(timers.table().at("T::work").first, 4);
  EXPECT_THAT(timers.report(), HasSubstr("measured on 1 of 4 steps"));
}
