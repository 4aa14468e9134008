// libFuzzer target: the .par reader and the parameter checks against every built-in
// component's declarations. A user error must be a support::InputError.
#include "param/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const saguaro::param::ParFile par = saguaro::param::parse_par_text("fuzz.par", text);
    static const saguaro::param::Registry builtin =
        saguaro::param::Registry::with_builtin_components(); // read once: a copy per input
    saguaro::param::Registry registry = builtin;
    registry.apply(par);
  } catch (const saguaro::support::InputError&) {
  }
  return 0;
}
