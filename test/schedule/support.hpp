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
  return parse_schedule_ccl(std::make_shared<const support::SourceFile>("test.ccl", text), thorn);
}

// The InputError `fn` throws; fails the test when it throws none.
inline support::InputError error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const support::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return support::InputError({}, "(none thrown)");
}

inline std::string notes_of(const support::InputError& e) {
  std::string out;
  for (const support::Note& note : e.notes()) out += note.message + "\n";
  return out;
}

inline std::vector<std::string> names(const std::vector<const ScheduleItem*>& items) {
  std::vector<std::string> out;
  for (const ScheduleItem* item : items) out.push_back(item->name);
  return out;
}

} // namespace saguaro::schedule::test
