// libFuzzer target: the EDL front end (parse, then every lowering pass). A user error must be
// a support::InputError (exit status 2 in the CLI); anything else escaping, a crash, a hang or
// unbounded memory is a finding.
//
// Each input runs on a thread with a 64 MiB stack, 8 times a main thread's 8 MiB: the parser
// bounds every tree's height (4000), and the recursive passes then need about 0.3 KB a level
// in an optimised build but up to 2 KB under AddressSanitizer, whose frames carry red zones.
// The bound is what is tested; a finding here is recursion the bound does not cover.
#include "calc/lower.hpp"
#include "edl/parser.hpp"

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

struct Input {
  const std::uint8_t* data;
  std::size_t size;
};

void* front_end(void* arg) {
  const Input& in = *static_cast<const Input*>(arg);
  const std::string text(reinterpret_cast<const char*>(in.data), in.size);
  try {
    const saguaro::edl::Thorn thorn = saguaro::edl::parse_string(text, "fuzz.edl");
    saguaro::calc::lower(thorn, saguaro::calc::LowerOptions{4});
  } catch (const saguaro::support::InputError&) {
  }
  return nullptr;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{data, size};
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 64u << 20) != 0 ||
      pthread_create(&thread, &attr, front_end, &in) != 0)
    std::abort();
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  return 0;
}
