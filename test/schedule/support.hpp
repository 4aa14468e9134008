// Helpers shared by the schedule tests.
#pragma once

#include "schedule/schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace saguaro::schedule::test {

inline std::vector<ScheduleItem> parse(const std::string& text, const std::string& thorn = "T") {
  return parse_schedule_ccl(std::make_shared<const edl::SourceFile>("test.ccl", text), thorn);
}

// The EdlError `fn` throws; fails the test when it throws none.
inline edl::EdlError error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const edl::EdlError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an EdlError";
  return edl::EdlError({}, "(none thrown)");
}

inline std::string notes_of(const edl::EdlError& e) {
  std::string out;
  for (const edl::Note& note : e.notes()) out += note.message + "\n";
  return out;
}

inline std::vector<std::string> names(const std::vector<const ScheduleItem*>& items) {
  std::vector<std::string> out;
  for (const ScheduleItem* item : items) out.push_back(item->name);
  return out;
}

} // namespace saguaro::schedule::test
