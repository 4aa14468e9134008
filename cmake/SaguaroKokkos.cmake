# The Kokkos backend (src/runtime/kokkos/, docs/kokkos.md).
#
#   SAGUARO_KOKKOS: AUTO (on when find_package(Kokkos CONFIG) succeeds), ON (required) or OFF.
#
# With it, the support library saguaro_kokkos_support (the array space's kernels, Kokkos's
# initialisation) is built here against the configured Kokkos, with Kokkos's own compiler where
# it asks for one (kokkos_compilation: nvcc_wrapper for CUDA), and loaded by the runtime with
# dlopen. The generated kernels are compiled at run time with the same compiler and the same
# flags, recorded below in a generated header (kokkos_config_CXX.hpp) from the support library's
# transitive usage requirements, and linked against the support library, which brings Kokkos's
# libraries. So the host's own sources never include a Kokkos header.
set(SAGUARO_KOKKOS AUTO CACHE STRING "Build the Kokkos backend: AUTO, ON or OFF")
set_property(CACHE SAGUARO_KOKKOS PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SAGUARO_KOKKOS}" _saguaro_kokkos)
set(SAGUARO_KOKKOS_ENABLED OFF)
if(_saguaro_kokkos STREQUAL "ON")
  find_package(Kokkos CONFIG REQUIRED)
  set(SAGUARO_KOKKOS_ENABLED ON)
elseif(_saguaro_kokkos STREQUAL "AUTO")
  find_package(Kokkos CONFIG QUIET)
  if(Kokkos_FOUND)
    set(SAGUARO_KOKKOS_ENABLED ON)
  endif()
elseif(NOT _saguaro_kokkos STREQUAL "OFF")
  message(FATAL_ERROR "SAGUARO_KOKKOS must be AUTO, ON or OFF (not '${SAGUARO_KOKKOS}')")
endif()

if(SAGUARO_KOKKOS_ENABLED)
  # What a consumer of Kokkos links. Trilinos's packaging of Kokkos (Debian's
  # libtrilinos-kokkos-dev) names its headers and libraries in variables, and its Kokkos::kokkos
  # target points at a wrong include directory; Kokkos's own installation exports Kokkos::kokkos.
  add_library(saguaro_kokkos_usage INTERFACE)
  if(Kokkos_INCLUDE_DIRS AND Kokkos_LIBRARIES)
    target_include_directories(saguaro_kokkos_usage INTERFACE ${Kokkos_INCLUDE_DIRS})
    target_link_libraries(saguaro_kokkos_usage INTERFACE ${Kokkos_LIBRARIES})
  else()
    target_link_libraries(saguaro_kokkos_usage INTERFACE Kokkos::kokkos)
  endif()
  if(NOT Kokkos_CXX_COMPILER)
    set(Kokkos_CXX_COMPILER "${CMAKE_CXX_COMPILER}")
  endif()
  message(STATUS "Saguaro: Kokkos backend on (Kokkos ${Kokkos_VERSION}, devices ${Kokkos_DEVICES}, "
                 "compiler ${Kokkos_CXX_COMPILER})")
else()
  message(STATUS "Saguaro: Kokkos backend off (SAGUARO_KOKKOS=${SAGUARO_KOKKOS}; "
                 "install libtrilinos-kokkos-dev or set Kokkos_ROOT to a Kokkos installation)")
endif()
