// The Kokkos backend's public face (docs/kokkos.md). No Kokkos header is needed to use it: the
// support library (runtime/kokkos/support.cpp, built against Kokkos) is loaded at run time, and
// generated kernels are compiled at run time by Kokkos's compiler with Kokkos's flags, recorded
// when the build was configured (cmake/SaguaroKokkos.cmake).
#pragma once

#include "runtime/array_space.hpp"
#include "runtime/kernel.hpp"

#include <memory>
#include <string>
#include <vector>

namespace saguaro::runtime::kokkos {

// Why a build without Kokkos cannot use the backend, and how to get it (available()'s reason).
inline constexpr const char* kNotBuilt =
    "this build has no Kokkos (SAGUARO_KOKKOS): install Kokkos (Debian: apt-get install "
    "libtrilinos-kokkos-dev; or build Kokkos from its source, docs/kokkos.md) and configure "
    "Saguaro again, with -DKokkos_ROOT=DIR where CMake does not find it";

// Whether this build has the Kokkos backend (SAGUARO_KOKKOS).
bool built_with_kokkos();

// Whether the backend can be used: the build has it and its support library loads. When not,
// `why` says what is missing and how to get it.
bool available(std::string* why = nullptr);

// What this build's Kokkos is: "Kokkos 3.4.1, Serial" (initialises Kokkos). Throws when
// unavailable.
std::string describe();

// The array space whose arrays are Kokkos memory of the default execution space (initialises
// Kokkos on first use). Throws std::runtime_error when unavailable.
ArraySpace& space();

// The compile command of generated kernels: Kokkos's compiler, then its flags ("-shared", the
// output and the source come after), then what links the object to the support library.
std::vector<std::string> compile_command();
std::vector<std::string> link_flags();

} // namespace saguaro::runtime::kokkos
