// libFuzzer target: the EDL front end (parse, then every lowering pass). A user error must be
// a support::InputError (exit status 2 in the CLI); anything else escaping, a crash, a hang or
// unbounded memory is a finding.
#include "calc/lower.hpp"
#include "edl/parser.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const saguaro::edl::Thorn thorn = saguaro::edl::parse_string(text, "fuzz.edl");
    saguaro::calc::lower(thorn, saguaro::calc::LowerOptions{4});
  } catch (const saguaro::support::InputError&) {
  }
  return 0;
}
