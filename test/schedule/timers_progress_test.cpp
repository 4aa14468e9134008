// The timer report and the progress line.
#include "support.hpp"

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

using namespace saguaro::schedule;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Timers, ReportSortsByTotalAndAligns) {
  Timers timers;
  timers.add("Host::small", 1.0);
  timers.add("Host::small", 1.0);
  timers.add("Wave::a_much_longer_name", 3.0);
  timers.add("Host::never_long", 0.0);
  EXPECT_EQ(timers.table().at("Host::small").first, 2);
  EXPECT_DOUBLE_EQ(timers.table().at("Host::small").second, 2.0);

  std::vector<std::string> lines = lines_of(timers.report());
  ASSERT_EQ(lines.size(), 7u); // header, rule, 3 rows, rule, total
  EXPECT_THAT(lines[0], HasSubstr("name"));
  EXPECT_THAT(lines[0], HasSubstr("calls"));
  EXPECT_THAT(lines[0], HasSubstr("total [s]"));
  EXPECT_THAT(lines[0], HasSubstr("mean [ms]"));
  EXPECT_THAT(lines[0], HasSubstr("% of all"));
  EXPECT_EQ(lines[2].rfind("Wave::a_much_longer_name", 0), 0u);
  EXPECT_EQ(lines[3].rfind("Host::small", 0), 0u);
  EXPECT_EQ(lines[4].rfind("Host::never_long", 0), 0u);
  EXPECT_EQ(lines[6].rfind("total", 0), 0u);
  // Host::small: 2 calls, 2 s, 1000 ms each, 40 %; Wave: 60 %.
  EXPECT_TRUE(std::regex_search(lines[3], std::regex(R"(\s2\s+2\.000000\s+1000\.0000\s+40\.0$)")))
      << lines[3];
  EXPECT_TRUE(std::regex_search(lines[2], std::regex(R"(\s1\s+3\.000000\s+3000\.0000\s+60\.0$)")))
      << lines[2];
  EXPECT_TRUE(std::regex_search(lines[6], std::regex(R"(\s4\s+5\.000000\s+100\.0$)"))) << lines[6];
  for (const std::string& line : lines) EXPECT_EQ(line.size(), lines[0].size()) << line;
}

TEST(Timers, EmptyReport) {
  EXPECT_THAT(Timers().report(), HasSubstr("no scheduled function"));
}

TEST(Progress, FirstCallStartsTheClock) {
  Progress progress(10, 0.0, 0.0);
  EXPECT_EQ(progress.update(0, 0.0), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::string line = progress.update(2, 0.2);
  EXPECT_THAT(line, HasSubstr("it 2/10  t = 0.2000  ("));
  EXPECT_THAT(line, HasSubstr(" steps/s)  ETA "));
}

TEST(Progress, NotDueBeforeTheInterval) {
  Progress progress(10, 0.0, 3600.0);
  EXPECT_EQ(progress.update(0, 0.0), "");
  EXPECT_EQ(progress.update(1, 0.1), "");
  EXPECT_EQ(progress.update(2, 0.2), "");
}

// One step after ~50 ms; the ETA's unit follows from how much remains.
std::string after_one_step(int itlast, double final_time, double dt) {
  Progress progress(itlast, final_time, 0.0);
  progress.update(0, 0.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return progress.update(1, dt);
}

TEST(Progress, EtaFromIterations) {
  // Remaining 1 step: well under 10 s. 12000 steps: ~10 min. 10^6 steps: ~14 h.
  EXPECT_TRUE(std::regex_search(after_one_step(2, 0, 0.1), std::regex(R"(ETA \d+\.\d s$)")))
      << after_one_step(2, 0, 0.1);
  std::string minutes = after_one_step(12001, 0, 0.1);
  EXPECT_TRUE(std::regex_search(
      minutes, std::regex(R"(^it 1/12001  t = 0\.1000  \(\d+\.\d steps/s\)  ETA \d+\.\d min$)")))
      << minutes;
  std::string hours = after_one_step(1000001, 0, 0.1);
  EXPECT_TRUE(std::regex_search(hours, std::regex(R"(ETA \d+\.\d h$)"))) << hours;
}

TEST(Progress, EtaFromSimulatedTimeAndTheSoonerOfBoth) {
  // 0.001 of simulated time in ~50 ms; 1000 remaining: ~14 h.
  std::string by_time = after_one_step(0, 1000.0, 0.001);
  EXPECT_THAT(by_time, HasSubstr("it 1  t = 0.0010"));
  EXPECT_TRUE(std::regex_search(by_time, std::regex(R"(ETA \d+\.\d h$)"))) << by_time;
  // Both given: the iterations end the run first (1 step left).
  std::string both = after_one_step(2, 1000.0, 0.001);
  EXPECT_TRUE(std::regex_search(both, std::regex(R"(ETA \d+\.\d s$)"))) << both;
}

TEST(Progress, NoEtaWithoutAnEnd) {
  std::string line = after_one_step(0, 0.0, 0.1);
  EXPECT_THAT(line, HasSubstr("it 1  t = 0.1000"));
  EXPECT_THAT(line, Not(HasSubstr("ETA")));
}

} // namespace
