// The version of the code that makes and launches kernels: Saguaro's version and a hash of the
// sources of calc/, model/, mapper/, codegen/ and runtime/ (cmake/CodeVersion.cmake, computed at
// build time). The empirical finish's cached verdicts are keyed on it.
#pragma once

namespace saguaro::mapper {

const char* code_version(); // e.g. "0.9.0+3f2a9c0d1e4b5a6f"

} // namespace saguaro::mapper
