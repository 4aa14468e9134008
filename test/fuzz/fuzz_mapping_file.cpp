// libFuzzer target: the mapping-file reader, resolved against par/advect.edl (stencils, two
// stages, temporaries). A user error must be a support::InputError (MappingFileError).
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "mapper/mapping_file.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {
const saguaro::calc::Program& program() {
  static const saguaro::calc::Program p =
      saguaro::calc::lower(saguaro::edl::parse_file(SAGUARO_SOURCE_DIR "/par/advect.edl"),
                           saguaro::calc::LowerOptions{4});
  return p;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    saguaro::mapper::parse_mapping_file(text, "fuzz.yaml", program());
  } catch (const saguaro::support::InputError&) {
  }
  return 0;
}
