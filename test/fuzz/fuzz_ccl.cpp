// libFuzzer target: the CCL readers (param.ccl declared into a registry, schedule.ccl). A user
// error must be a support::InputError.
#include "param/registry.hpp"
#include "schedule/schedule.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto source = std::make_shared<const saguaro::support::SourceFile>(
      "fuzz.ccl", std::string(reinterpret_cast<const char*>(data), size));
  try {
    static const saguaro::param::Registry builtin =
        saguaro::param::Registry::with_builtin_components(); // read once: a copy per input
    saguaro::param::Registry registry = builtin;
    registry.declare_all(saguaro::param::parse_param_ccl(source, "Fuzz"));
  } catch (const saguaro::support::InputError&) {
  }
  try {
    saguaro::schedule::parse_schedule_ccl(source, "Fuzz");
  } catch (const saguaro::support::InputError&) {
  }
  return 0;
}
