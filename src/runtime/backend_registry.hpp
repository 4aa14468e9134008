// The backends by name: the one list the host, the CLI and the benchmarks choose from. Nothing
// outside this file compares a backend's name; decisions go by its BackendDescription.
//
// To add a backend: its folder (its Backend subclass and make function), one entry in
// kBackends (backend_registry.cpp), its make function's declaration in backends.hpp, its
// keyword in thorn/param.ccl (Saguaro::backend) and its sources in src/CMakeLists.txt.
#pragma once

#include "runtime/kernel.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace saguaro::runtime {

struct BackendEntry {
  std::string name;    // the Saguaro::backend keyword
  std::string summary; // one line, for help texts
  // A candidate of "auto", in registry order (the first usable one is taken).
  bool automatic = false;
  // Whether it can be used in this process; when not, `why` says what is missing. Null: always.
  std::function<bool(std::string* why)> available;
  // What "cannot be used" means for it, for messages: "no GPU can be used".
  std::string unavailable = "it cannot be used";
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> make;
  // Where it runs, as its BackendDescription says once made; for what only has its name (a
  // prediction log read back from a file).
  Hardware hardware = Hardware::host;
};

// Every backend, in the order "auto" prefers them.
const std::vector<BackendEntry>& backend_registry();
// The entry named `name` (exactly), or nullptr.
const BackendEntry* find_backend(const std::string& name);
// "interpreter, cpu, cuda"-style list of the names, in registry order.
std::string backend_names();

// What a Saguaro::backend word resolves to. `usable(entry, why)` says whether an entry's
// available() holds where it matters (the host asks every MPI rank, so that all decide alike);
// it is asked only of entries with an availability check. "auto" takes the first usable
// automatic entry; a name takes its entry when usable, else `error` says why (with the entry's
// `unavailable` words) and `name` stays the one asked for.
struct BackendChoice {
  std::string name;
  std::string error; // "" when name can be made
};
BackendChoice
choose_backend(const std::string& word,
               const std::function<bool(const BackendEntry&, std::string& why)>& usable);

} // namespace saguaro::runtime
