// The integrators' table: its entries read back in their notation, the registers each needs,
// the coefficients' rounding, the reader's errors, agreement with MoL::ODE_Method's keyword
// list, and a low-storage Runge-Kutta method written as a table entry of its own that
// integrates to fourth order.
#include "support.hpp"

#include "param/registry.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

using namespace saguaro::schedule;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

std::vector<std::string> texts(const Integrator& i, const std::vector<Combination>& list) {
  std::vector<std::string> out;
  for (const Combination& c : list) out.push_back(i.text(c));
  return out;
}

TEST(Integrators, TheTableReadsBackInItsNotation) {
  std::vector<std::string> names;
  for (const Integrator& i : integrators()) names.push_back(i.name);
  EXPECT_THAT(names, ElementsAre("ICN", "RK2", "RK3", "RK3-Kutta", "RK2-midpoint", "Euler", "RK4"));

  const Integrator& rk4 = find_integrator("rk4");
  EXPECT_EQ(rk4.order, 4);
  // y1 takes each stage's new state, which then swaps with y: no stage writes the array its
  // right-hand side reads (so that the right-hand side can compute the stage: step_fold.hpp).
  EXPECT_THAT(rk4.scratch, ElementsAre("y1", "y0", "acc"));
  EXPECT_TRUE(rk4.start.empty());
  ASSERT_EQ(rk4.stages.size(), 4u);
  EXPECT_THAT(texts(rk4, rk4.stages[0].updates), ElementsAre("y1 = y + 1/2 dt k"));
  EXPECT_THAT(rk4.stages[0].swaps, ElementsAre(std::array<int, 2>{3, 0}, std::array<int, 2>{0, 2}));
  EXPECT_EQ(rk4.text(rk4.stages[0].swaps[0]), "swap y0 y");
  EXPECT_THAT(texts(rk4, rk4.stages[1].updates),
              ElementsAre("acc = 1/3 y0 + 1/3 y + 1/3 dt k", "y1 = y0 + 1/2 dt k"));
  EXPECT_THAT(texts(rk4, rk4.stages[2].updates), ElementsAre("y1 = y0 + dt k"));
  EXPECT_THAT(texts(rk4, rk4.stages[3].updates), ElementsAre("y1 = acc + 1/3 y + 1/6 dt k"));
  for (const Integrator& i : integrators())
    for (const Stage& stage : i.stages) EXPECT_FALSE(stage.writes_state()) << i.name;
  EXPECT_EQ(rk4.stages[1].rhs_time, (Rational{1, 2}));
  EXPECT_EQ(rk4.stages[2].state_time, (Rational{1, 1}));

  const Integrator& rk3 = find_integrator("RK3");
  EXPECT_THAT(rk3.scratch, ElementsAre("y1", "y0"));
  EXPECT_THAT(texts(rk3, rk3.stages[2].updates), ElementsAre("y1 = 1/3 y0 + 2/3 y + 2/3 dt k"));
  EXPECT_EQ(find_integrator("ICN").stages.size(), 3u);
  EXPECT_EQ(find_integrator("RK2").order, 2);
}

// What a folded RK4 step moves beyond its four right-hand sides' own arrays (each reads its
// stage's state and would write k): per stage the scratch registers its combinations read and
// the registers they write, k's store replaced by the first. The state y is read at the point,
// where a right-hand side reads it anyway. Accumulating y + dt/6 (k1 + 2 k2 + 2 k3) as the
// stages go (acc = y + 1/6 dt k, then acc = acc + 1/3 dt k twice) moved 8 arrays more; the
// table's entry moves 4 (stage 1 writes y1 alone, stage 3 reads y0, stages 2 and 4 one more).
TEST(Integrators, FoldedRK4MovesFourArraysBeyondItsRightHandSides) {
  const Integrator& rk4 = find_integrator("RK4");
  std::vector<int> per_stage;
  for (const Stage& stage : rk4.stages) {
    std::set<int> read, written;
    for (const Combination& c : stage.updates) {
      written.insert(c.target);
      for (const Combination::Term& t : c.terms)
        if (t.x >= kFirstScratchRegister) read.insert(t.x);
    }
    per_stage.push_back(int(read.size() + written.size()) - 1);
  }
  EXPECT_THAT(per_stage, ElementsAre(0, 2, 1, 1));
}

TEST(Integrators, CoefficientsRoundAsTheHandWrittenForms) {
  const double dt = 0.0123456789;
  EXPECT_EQ((Coefficient{{1, 2}, true}.value(dt)), 0.5 * dt);
  EXPECT_EQ((Coefficient{{1, 6}, true}.value(dt)), dt / 6.0);
  EXPECT_EQ((Coefficient{{1, 1}, true}.value(dt)), dt);
  EXPECT_EQ((Coefficient{{1, 3}, false}.value(dt)), 1.0 / 3.0);
  EXPECT_EQ((Coefficient{{-3, 4}, false}.value(dt)), -0.75);
  EXPECT_EQ(time_at(2.0, 0.5, {0, 1}), 2.0);
  EXPECT_EQ(time_at(2.0, 0.5, {1, 2}), 2.25);
  EXPECT_EQ((Coefficient{{-2, 3}, true}.text()), "-2/3 dt");
}

TEST(Integrators, TheReaderRefusesMistakes) {
  auto error = [](const char* start, const char* updates) {
    try {
      parse_integrator({"T", 1, "test", start, {{"0", updates, "1"}}});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_THAT(error("", "acc = acc + dt k; y = y + acc"), HasSubstr("acc is read before"));
  EXPECT_THAT(error("y0 = k", "y = y0"), HasSubstr("k is read before"));
  EXPECT_THAT(error("", "k = y"), HasSubstr("right-hand side k is computed"));
  EXPECT_THAT(error("", "y = y + dt * k"), HasSubstr("expected a register name"));
  EXPECT_THAT(error("", "y = y k"), HasSubstr("expected '+' or '-'"));
  EXPECT_THAT(error("", "y = 1/0 y"), HasSubstr("division by zero"));
  EXPECT_THAT(error("", "y = y + a + b + c + d + e + f + g + k"), HasSubstr("read before"));
  EXPECT_THAT(error("a = y; b = y; c = y; d = y; e = y; f = y; g = y",
                    "y = y + a + b + c + d + e + f + g + k"),
              HasSubstr("9 terms (at most 8)"));
  EXPECT_EQ(error("y0 = y", "y = y0 - 1/2 dt k"), "(accepted)");
  EXPECT_THAT(error("", "y1 = y + dt k; swap y y"), HasSubstr("two different registers"));
  EXPECT_THAT(error("", "y1 = y + dt k; swap y k"), HasSubstr("k is computed"));
  EXPECT_THAT(error("swap y y1", "y = y + dt k"), HasSubstr("a swap belongs to a stage"));
  EXPECT_THAT(error("", "y1 = y + dt k; swap y y1; y = y1"), HasSubstr("a combination after"));
  // A swap carries what is written: y0 holds the old state after "swap y0 y".
  EXPECT_EQ(error("", "y1 = y + dt k; swap y0 y; swap y y1; y1 = y0"),
            "integrator T: a combination after a swap in \" y1 = y0\" at column 4");
  const Integrator minus = parse_integrator({"T", 1, "test", "", {{"0", "y = -y - dt k", "1"}}});
  EXPECT_EQ(minus.text(minus.stages[0].updates[0]), "y = - y - dt k");

  saguaro::support::InputError e = test::error_of([] { find_integrator("RK5"); });
  EXPECT_THAT(e.message(),
              HasSubstr("expected ICN, RK2, RK3, RK3-Kutta, RK2-midpoint, Euler or RK4"));
}

// Adding an integrator is one table entry and its keyword in param/builtin/MoL.ccl: the two
// lists agree, description for description.
TEST(Integrators, MoLKeywordsAreTheTable) {
  const saguaro::param::Registry r = saguaro::param::Registry::with_builtin_components();
  const saguaro::param::Declaration* decl = r.find("MoL", "ODE_Method");
  ASSERT_NE(decl, nullptr);
  ASSERT_EQ(decl->ranges.size(), integrators().size());
  for (std::size_t i = 0; i < integrators().size(); ++i) {
    EXPECT_EQ(decl->ranges[i].text, integrators()[i].name);
    EXPECT_EQ(decl->ranges[i].description, integrators()[i].description);
  }
}

// Carpenter & Kennedy's five-stage fourth-order 2N-storage method (NASA TM-109112, 1994):
// one scratch register dk, each stage dk = A dk + dt k; y = y + B dk.
Integrator low_storage_rk4() {
  return parse_integrator(
      {"LSRK4",
       4,
       "Carpenter-Kennedy 2N-storage fourth-order Runge-Kutta",
       "",
       {{"0", "dk = dt k; y = y + 1432997174477/9575080441755 dk", "1432997174477/9575080441755"},
        {"1432997174477/9575080441755",
         "dk = -567301805773/1357537059087 dk + dt k; y = y + 5161836677717/13612068292357 dk",
         "2526269341429/6820363962896"},
        {"2526269341429/6820363962896",
         "dk = -2404267990393/2016746695238 dk + dt k; y = y + 1720146321549/2090206949498 dk",
         "2006345519317/3224310063776"},
        {"2006345519317/3224310063776",
         "dk = -3550918686646/2091501179385 dk + dt k; y = y + 3134564353537/4481467310338 dk",
         "2802321613138/2924317926251"},
        {"2802321613138/2924317926251",
         "dk = -1275806237668/842570457699 dk + dt k; y = y + 2277821191437/14882151754819 dk",
         "1"}}});
}

// The largest error at t = 1 of y' = cos(t) y (y = exp(sin t)) with `steps` steps.
double error_at_one(const Integrator& integrator, int steps) {
  double y = 1, f = 0;
  MethodOfLines::System sys;
  sys.state = {&y};
  sys.rhs = {&f};
  sys.points = 1;
  sys.calc_rhs = [&](double t) { f = std::cos(t) * y; };
  MethodOfLines mol(integrator, sys);
  const double dt = 1.0 / steps;
  for (int n = 0; n < steps; ++n) mol.step(n * dt, dt);
  return std::abs(y - std::exp(std::sin(1.0)));
}

std::vector<std::string> rationals(const std::vector<Rational>& list) {
  std::vector<std::string> out;
  for (const Rational& r : list) out.push_back(r.text());
  return out;
}

// The tableaus are read off the table by running its combinations symbolically; each is the
// textbook one, consistent (c_s = sum_j a_sj, sum b = 1), and the sub-diagonal ones are those a
// time-tiled step can take.
TEST(Integrators, ButcherTableausAreReadOffTheTable) {
  auto tableau = [](const char* name) {
    std::string why;
    std::optional<ButcherTableau> t = butcher_tableau(find_integrator(name), &why);
    EXPECT_TRUE(t) << why;
    return t.value_or(ButcherTableau{});
  };
  const ButcherTableau rk4 = tableau("RK4");
  EXPECT_THAT(rationals(rk4.b), ElementsAre("1/6", "1/3", "1/3", "1/6"));
  ASSERT_EQ(rk4.a.size(), 4u);
  EXPECT_TRUE(rk4.a[0].empty());
  EXPECT_THAT(rationals(rk4.a[1]), ElementsAre("1/2"));
  EXPECT_THAT(rationals(rk4.a[2]), ElementsAre("0", "1/2"));
  EXPECT_THAT(rationals(rk4.a[3]), ElementsAre("0", "0", "1"));
  EXPECT_TRUE(rk4.sub_diagonal());
  EXPECT_EQ(rk4.sub(3).text(), "1");

  const ButcherTableau heun = tableau("RK2");
  EXPECT_THAT(rationals(heun.b), ElementsAre("1/2", "1/2"));
  EXPECT_THAT(rationals(heun.a[1]), ElementsAre("1"));
  const ButcherTableau midpoint = tableau("RK2-midpoint");
  EXPECT_THAT(rationals(midpoint.b), ElementsAre("0", "1"));
  EXPECT_THAT(rationals(midpoint.a[1]), ElementsAre("1/2"));
  const ButcherTableau icn = tableau("ICN");
  EXPECT_THAT(rationals(icn.b), ElementsAre("0", "0", "1"));
  EXPECT_THAT(rationals(icn.a[2]), ElementsAre("0", "1/2"));
  EXPECT_THAT(rationals(tableau("Euler").b), ElementsAre("1"));
  for (const char* name : {"RK4", "RK2", "RK2-midpoint", "ICN", "Euler"})
    EXPECT_TRUE(tableau(name).sub_diagonal()) << name;

  // Shu-Osher's convex form: stage 3 reads y_n + 1/4 dt k1 + 1/4 dt k2.
  const ButcherTableau ssp = tableau("RK3");
  EXPECT_THAT(rationals(ssp.a[2]), ElementsAre("1/4", "1/4"));
  EXPECT_THAT(rationals(ssp.b), ElementsAre("1/6", "1/6", "2/3"));
  EXPECT_FALSE(ssp.sub_diagonal());
  const ButcherTableau kutta = tableau("RK3-Kutta");
  EXPECT_THAT(rationals(kutta.a[2]), ElementsAre("-1", "2"));
  EXPECT_FALSE(kutta.sub_diagonal());

  for (const Integrator& i : integrators()) {
    const ButcherTableau t = tableau(i.name.c_str());
    double sum_b = 0;
    for (std::size_t s = 0; s < t.b.size(); ++s) {
      double row = 0;
      for (const Rational& a : t.a[s]) row += double(a.num) / double(a.den);
      EXPECT_DOUBLE_EQ(row, double(t.c[s].num) / double(t.c[s].den)) << i.name << " stage " << s;
      sum_b += double(t.b[s].num) / double(t.b[s].den);
    }
    EXPECT_DOUBLE_EQ(sum_b, 1.0) << i.name;
  }
}

TEST(Integrators, ButcherTableauRefusesWhatIsNotAStep) {
  // Stage 2 reads 2 y_n: not y_n plus dt k terms.
  const Integrator odd = parse_integrator(
      {"odd",
       1,
       "",
       "",
       {{"0", "y1 = y + dt k; swap y0 y; swap y y1", "1"}, {"1", "y1 = y0 + y0; swap y y1", "1"}}});
  std::string why;
  EXPECT_FALSE(butcher_tableau(odd, &why));
  EXPECT_THAT(why, HasSubstr("the new state is not y_n plus dt k terms"));
}

TEST(Integrators, LowStorageRungeKuttaIsOneTableEntry) {
  const Integrator lsrk = low_storage_rk4();
  EXPECT_THAT(lsrk.scratch, ElementsAre("dk")); // one register per variable
  const double e1 = error_at_one(lsrk, 10), e2 = error_at_one(lsrk, 20),
               e3 = error_at_one(lsrk, 40);
  EXPECT_NEAR(std::log2(e1 / e2), 4.0, 0.2) << e1 << " " << e2 << " " << e3;
  EXPECT_NEAR(std::log2(e2 / e3), 4.0, 0.2) << e1 << " " << e2 << " " << e3;
  // Its post-steps see the stages' states at their times, the last at t + dt.
  double y = 1, f = 0;
  std::vector<double> post;
  MethodOfLines::System sys;
  sys.state = {&y};
  sys.rhs = {&f};
  sys.points = 1;
  sys.calc_rhs = [&](double) { f = -y; };
  sys.post_step = [&](double t) { post.push_back(t); };
  MethodOfLines mol(lsrk, sys);
  mol.step(0.0, 1.0);
  ASSERT_EQ(post.size(), 5u);
  EXPECT_DOUBLE_EQ(post[0], 1432997174477.0 / 9575080441755.0);
  EXPECT_EQ(post[4], 1.0);
}

} // namespace
